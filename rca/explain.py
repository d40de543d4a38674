"""``rca explain``: walk one incident through the three stages GPU SREs use to localise an OOM.

1. **cgroup** — did the container or pod hit its cgroup memory limit? The peak against the
   limit and the OOM counts of its cgroup files (``cgroup_memory`` events); without them the
   kernel's OOM-killer report (memcg or global constraint, usage and anon-rss against the
   memcg limit), the kubelet's OOMKilled, or its memory eviction. The pod spec's memory limit
   and request (kubectl describe / get -o yaml) are added when the store has them.
2. **gpu_processes** — which processes held the GPU's memory at that moment? nvidia-smi's
   compute-apps rows of the incident's GPU (the job's own process, other live ones, stale ones
   that log nothing: :func:`rca.signals.gpu_holders`), DCGM samples labelled with other pods,
   or the processes the CUDA OOM message lists.
3. **allocator** — what inside the process held it? The CUDA OOM's allocator figures
   (allocated vs reserved; reserved but unallocated is fragmentation) and PyTorch memory
   snapshots (``memory_snapshot`` events of the incident's host, pod and pid around it:
   :func:`rca.signals.incident_snapshots`): the top allocation sites, and the sites that grew
   between the first and the last snapshot (:func:`rca.signals.site_growth`).

Then the incident's failure mode and its knowledge-base checklist: the entry ``rca cluster``
matched, else the best rule match of the knowledge base (``rca.kb.rule_scores``).

**The deciding stage** is the first stage, in that order, whose verdict explains the failure:

- cgroup: ``limit_hit`` (the cgroup files count an OOM at the limit — v2 ``memory.events oom``,
  v1 ``under_oom`` — or a peak at 98 % of the limit or more; else a memory-cgroup kill in the
  kernel log, or OOMKilled) or ``node_exhausted`` (the kernel's global OOM killer, a kubelet
  memory eviction: the node ran out, not the container's limit; it wins over the files, whose
  ``oom_kill`` counts the kills of any OOM killer). ``below_limit`` and ``unlimited`` do not
  explain.
- gpu_processes: ``shared`` or ``stale_holders`` — processes other than the job's own held at
  least the failed request (10 % of the GPU when the request is unknown), or DCGM shows another
  pod on the GPU. ``sole_holder`` does not explain.
- allocator: ``leak`` (a site grew by 256 MiB or more between two snapshots),
  ``fragmentation`` (reserved-but-unallocated ≥ 25 % of the cache, or ≥ 8 % and more than the
  failed request) or ``live_tensors`` (PyTorch had ≥ 85 % of the GPU allocated).
  ``outside_allocator`` does not explain.

The order is the order of the walk: a container killed at its limit needs no look at the GPU,
and memory held by other processes is outside anything the job's allocator can show. An
incident anchored on a fatal Xid is a hardware failure: no stage decides it. A stage without
evidence has verdict ``no_data`` and says what data would have answered it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from rca._explain_stages import Evidence, Stage, Walk, allocator_stage, cgroup_stage, gpu_stage, size
from rca.correlate import DEFAULT_WINDOW, FATAL_XIDS
from rca.errors import InputError
from rca.kb import UNKNOWN, KnowledgeBase, Step, best_matches, load_kb, rule_scores
from rca.messages import headline, headline_of
from rca.store import Store
from rca.timeline import duration

__all__ = ["STAGES", "Evidence", "Explanation", "Frames", "Stage", "explain", "format_figure", "headline", "headline_of", "size"]

STAGES = ("cgroup", "gpu_processes", "allocator")
"""The stages of the walk, in the order they are asked."""


@dataclass(frozen=True)
class Frames:
    """Correlated tables held in memory instead of a store: events, incidents and their links."""

    events: pl.DataFrame | pl.LazyFrame  # rca.schema.EVENT_SCHEMA
    incidents: pl.DataFrame  # rca.schema.INCIDENT_SCHEMA (+ CLUSTER_COLUMNS after clustering)
    links: pl.DataFrame  # rca.schema.INCIDENT_EVENTS_SCHEMA


@dataclass(frozen=True)
class Explanation:
    """The walk of one incident: three stages, the one that decides, its failure mode and checklist."""

    incident_id: str
    host: str | None
    start: datetime | None
    anchor_kind: str | None
    runtime_oom: str | None  # the runtime that reported running out of memory itself (jvm_heap, go_runtime, …)
    stages: tuple[Stage, ...]
    deciding_stage: str | None  # one of STAGES, or None when no stage explains the failure
    reason: str  # the deciding stage's verdict in words, or why no stage decides
    failure_mode: str | None  # the incident's mode (fm-…) after `rca cluster`
    kb_id: str  # its knowledge-base entry, or "unknown"
    kb_title: str | None
    kb_confidence: float | None
    kb_basis: str  # "cluster" (the entry rca cluster matched) or "rules" (the best rule match, before clustering)
    checklist: tuple[Step, ...]

    def stage(self, name: str) -> Stage:
        """The stage called ``name`` (one of STAGES)."""
        return next(stage for stage in self.stages if stage.name == name)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: times as ISO 8601, checklist steps as mappings."""
        data = asdict(self)
        data["start"] = self.start.isoformat() if self.start else None
        data["checklist"] = [step.model_dump() for step in self.checklist]
        for stage, source in zip(data["stages"], self.stages, strict=True):
            stage["evidence"] = [{**asdict(line), "location": line.location} for line in source.evidence]
        return data


def explain(source: Store | Frames, incident_id: str, *, kb: KnowledgeBase | str | Path | None = None,
            window: timedelta = DEFAULT_WINDOW) -> Explanation:
    """Walk ``incident_id`` of a store (or of correlated frames) through the three stages.

    ``kb`` is a loaded knowledge base or its folder (default: the bundled one); ``window`` is
    how far before the failure GPU processes count (the correlation's evidence window).
    Raises :class:`InputError` for an incident the store does not hold.
    """
    incidents, links, events = _tables(source)
    incident = incidents.filter(pl.col("incident_id") == incident_id)
    if incident.is_empty():
        where = source.path if isinstance(source, Store) else "these incidents"
        raise InputError(f"no incident {incident_id!r} in {where}; 'rca incidents' lists them")
    row = incident.row(0, named=True)
    linked = _linked(links, events, incident_id)
    walk = Walk(row, incident, linked, _host_events(events, row["host"], linked), window)
    stages = (cgroup_stage(walk), gpu_stage(walk), allocator_stage(walk))
    deciding, reason = _decide(walk, stages)
    knowledge = kb if isinstance(kb, KnowledgeBase) else load_kb(kb)
    failure_mode, kb_id, confidence, basis = _knowledge(incident, knowledge)
    known = kb_id in knowledge
    return Explanation(
        incident_id=incident_id, host=row["host"], start=row["start"], anchor_kind=row["anchor_kind"], runtime_oom=row.get("runtime_oom"),
        stages=stages,
        deciding_stage=deciding, reason=reason, failure_mode=failure_mode, kb_id=kb_id,
        kb_title=knowledge[kb_id].title if known else None, kb_confidence=confidence, kb_basis=basis,
        checklist=tuple(knowledge.checklist(kb_id)) if known else (),
    )


def runtime_label(runtime_oom: str) -> str:
    """An incident's ``runtime_oom`` in words: "jvm_heap" → "the JVM heap", "go_runtime" → "the Go runtime"."""
    words = runtime_oom.split("_")
    return "the " + " ".join(_RUNTIME_WORDS.get(word, word) for word in words)


_RUNTIME_WORDS = {"jvm": "JVM", "go": "Go", "node": "Node.js", "python": "Python", "slurm": "Slurm", "ray": "Ray"}


def format_figure(name: str, value: Any) -> str:
    """A figure (or an incident's signal) as a person reads it: bytes in binary units, ratios as percents, rates per
    second, durations, allocation sites one per line, other lists comma-separated; never a bare 17-digit float."""
    if value is None:
        return "-"
    if isinstance(value, list):
        if all(isinstance(item, dict) for item in value):
            return "\n".join(_site_text(site) for site in value) or "-"
        return ", ".join(str(item) for item in value) or "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if name.endswith("_bytes_per_s"):
        return f"{value / 1e6:+.1f} MB/s"
    if name.endswith("_bytes"):
        return size(value)
    if name.endswith(("_over_limit", "_frac")):
        return f"{value:.1%}"
    if name.endswith("_pct"):
        return f"{value:.1f}%"
    if name.endswith("_over_free"):
        return f"{value:.2f}× the free memory"
    if name.endswith("_s"):
        return duration(value)
    return str(value) if isinstance(value, int) else f"{value:.4g}"


def _site_text(site: dict[str, Any]) -> str:
    if "bytes_growth" in site:
        return f"+{size(site['bytes_growth'])} ({size(site['bytes_before'])} → {size(site['bytes_after'])})  {site['frame']}"
    return f"{size(site.get('bytes'))} in {site.get('count')} block(s)  {site.get('frame')}"


def _tables(source: Store | Frames) -> tuple[pl.DataFrame, pl.DataFrame, pl.LazyFrame]:
    if isinstance(source, Store):
        return source.incidents(), source.incident_events(), source.scan_events()
    return source.incidents, source.links, source.events.lazy()


def _host_events(events: pl.LazyFrame, host: str | None, linked: pl.DataFrame) -> pl.LazyFrame:
    """Every event of the incident's root host; for an incident of no known host, those of its own files
    (correlation takes each file of no known host as a host of its own)."""
    if host is not None:
        return events.filter(pl.col("host") == host)
    return events.filter(pl.col("host").is_null() & pl.col("file").is_in(linked["file"].drop_nulls().unique().implode()))


def _linked(links: pl.DataFrame, events: pl.LazyFrame, incident_id: str) -> pl.DataFrame:
    """The incident's linked events with every event column; ``ts`` is the link's (clock-aligned) time."""
    mine = links.filter(pl.col("incident_id") == incident_id)
    details = events.filter(pl.col("event_id").is_in(mine["event_id"].implode())).drop("ts", "host", "ts_quality", "source", "kind")
    return mine.join(details.collect(), on="event_id", how="left")


def _decide(walk: Walk, stages: tuple[Stage, ...]) -> tuple[str | None, str]:
    fatal = walk.kinds("xid").filter(pl.col("xid").is_in(FATAL_XIDS))
    if walk.incident["anchor_kind"] == "xid":
        codes = ", ".join(str(code) for code in fatal["xid"].unique().sort()) or "?"
        return None, f"the failure is a GPU fault (Xid {codes}), not memory running out"
    deciding = next((stage for stage in stages if stage.explains), None)
    if deciding is not None:
        return deciding.name, deciding.summary
    asked = [stage.name for stage in stages if stage.verdict != "no_data"]
    runtime = walk.incident.get("runtime_oom")
    if not asked:
        told = f"; the failure is {runtime_label(runtime)}'s own account of running out of memory" if runtime else ""
        return None, f"none of the three stages had evidence (each says what to collect next time){told}"
    if runtime:
        return None, f"{runtime_label(runtime)} ran out of its own memory limit, inside the process and below the cgroup's"
    return None, f"{', '.join(asked)} had evidence, and it rules {'that stage' if len(asked) == 1 else 'them'} out"


def _knowledge(incident: pl.DataFrame, kb: KnowledgeBase) -> tuple[str | None, str, float | None, str]:
    """(failure mode, kb_id, confidence, basis): the clustering's, else the best rule match of the knowledge base."""
    row = incident.row(0, named=True)
    if row.get("kb_id") is not None:
        return row.get("failure_mode"), row["kb_id"], row.get("kb_confidence"), "cluster"
    best = best_matches(rule_scores(incident, kb))
    if best.is_empty():
        return None, UNKNOWN, None, "rules"
    match = best.row(0, named=True)
    return None, match["kb_id"], match["kb_confidence"], "rules"
