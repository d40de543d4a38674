"""What a digest says, read from the store: plain values the templates lay out.

Incidents belong to the window their ``start`` falls in. The grouping is the failure mode
when the store has been clustered (``rca cluster`` added ``failure_mode``, ``kb_id`` and
``kb_confidence`` to incidents.parquet) and the anchor kind otherwise; a section that needs
clustering is then listed in ``missing`` with the reason, instead of being left out silently.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from rca import schema
from rca.kb import UNKNOWN, KnowledgeBase
from rca.report._window import Window
from rca.store import Store

TOP_ROWS = 10
CURVE_GROUPS = 3
SKEW_NOTE_S = 1.0  # a residual clock skew above this is worth a reader's attention
UNGROUPED = "(none)"
EXAMPLE_CHARS = 160
NEEDS_CLUSTERING = ("failure modes (incidents are grouped by anchor kind instead)", "knowledge-base entries and their checklists",
                    "incidents the knowledge base could not explain")
UNTIMED = {"boot_relative": "boot-relative kernel time whose boot time is unknown", "missing": "no time on the line nor around it"}


@dataclass(frozen=True)
class Facts:
    """Everything one digest shows; lists of dicts are table rows."""

    store: Path | str
    window: Window
    previous: Window
    clustered: bool
    group_by: str  # "failure_mode" or "anchor_kind"
    incidents: int  # incidents in the window
    headline: list[dict[str, Any]]
    days: list[date]
    daily: dict[str, list[int]]  # group → incidents per day, biggest group first
    daily_totals: list[int]  # incidents per day, all groups
    groups: list[dict[str, Any]]
    checklists: list[dict[str, Any]]
    hosts: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    gpus: list[dict[str, Any]]
    curves: list[dict[str, Any]]
    unexplained: dict[str, list[dict[str, Any]]] | None  # None when the store is not clustered
    quality: dict[str, Any]
    missing: list[str]  # sections this store cannot fill (the store is not clustered)
    missing_reason: str | None
    elsewhere: dict[str, Any] | None  # where the store's incidents are, when none is in the window


def gather(store: Store, window: Window, kb: KnowledgeBase) -> Facts:
    """The digest's facts for ``window`` (compared with the window of the same length before it)."""
    previous = window.previous()
    raw = store.incidents()
    clustered = all(column in raw.columns for column in schema.CLUSTER_COLUMNS) and raw["failure_mode"].drop_nulls().len() > 0
    group_by = "failure_mode" if clustered else "anchor_kind"
    incidents = raw.with_columns(group=pl.col(group_by).fill_null(UNGROUPED))
    this, before = incidents.filter(window.holds("start")), incidents.filter(previous.holds("start"))
    modes = store.failure_modes() if clustered else schema.empty(schema.FAILURE_MODE_SCHEMA)
    drafts = _drafts(store.kb_drafts())
    groups = _groups(incidents, this, before, window, modes, kb, drafts)
    daily = _daily(this, window.days(), [row["group"] for row in groups])
    return Facts(
        store=store.path,
        window=window,
        previous=previous,
        clustered=clustered,
        group_by=group_by,
        incidents=this.height,
        headline=_headline(store, incidents, this, before, window, previous, clustered),
        days=window.days(),
        daily=daily,
        daily_totals=[sum(day) for day in zip(*daily.values())] if daily else [0] * len(window.days()),
        groups=groups,
        checklists=_checklists(groups, kb) if clustered else [],
        hosts=_top_hosts(this),
        pods=_top_pods(this),
        gpus=_top_gpus(this),
        curves=_curves(store, this, groups, modes),
        unexplained=_unexplained(this, modes, groups, drafts) if clustered else None,
        quality=_quality(store, raw),
        missing=[] if clustered else list(NEEDS_CLUSTERING),
        missing_reason=None if clustered else _not_clustered(store),
        elsewhere=None if this.height else _elsewhere(incidents),
    )


def _elsewhere(incidents: pl.DataFrame) -> dict[str, Any] | None:
    """The span of the store's timed incidents and its busiest ISO week, for a window that holds none of them."""
    timed = incidents.filter(pl.col("start").is_not_null())
    if timed.is_empty():
        return None
    weeks = timed.group_by(week=pl.col("start").dt.strftime("%G-W%V")).len().sort(["len", "week"], descending=[True, False])
    return {"incidents": timed.height, "first": timed["start"].min(), "last": timed["start"].max(),
            "busiest_week": weeks["week"][0], "busiest_incidents": int(weeks["len"][0])}


def _not_clustered(store: Store) -> str:
    if not store.correlation_report():
        return f"the store has not been correlated into incidents nor clustered; run: rca correlate --store {store.path}, then rca cluster"
    return ("incidents.parquet has no failure_mode / kb_id columns, so the store has not been clustered; "
            f"run: rca cluster --store {store.path}")


# --- headline ---------------------------------------------------------------------------------


def _headline(store: Store, incidents: pl.DataFrame, this: pl.DataFrame, before: pl.DataFrame, window: Window,
              previous: Window, clustered: bool) -> list[dict[str, Any]]:
    first_seen = incidents.filter(pl.col("start").is_not_null()).group_by("group").agg(first=pl.col("start").min())
    events = store.scan_events().select(
        this=window.holds("ts").sum(), before=previous.holds("ts").sum()
    ).collect().row(0)
    rows = [
        ("incidents", this.height, before.height),
        ("multi-host incidents", _multi_host(this), _multi_host(before)),
        ("hosts affected", _distinct_hosts(this), _distinct_hosts(before)),
        ("pods affected", _distinct(this, ["namespace", "pod"], "pod"), _distinct(before, ["namespace", "pod"], "pod")),
        ("GPUs affected", _distinct(this, ["host", "gpu_index", "gpu_uuid"], "gpu_index", "gpu_uuid"),
         _distinct(before, ["host", "gpu_index", "gpu_uuid"], "gpu_index", "gpu_uuid")),
        ("failure modes seen" if clustered else "anchor kinds seen", this["group"].n_unique(), before["group"].n_unique()),
    ]
    if clustered:
        rows += [
            ("new failure modes", first_seen.filter(window.holds("first")).height, first_seen.filter(previous.holds("first")).height),
            ("incidents the KB could not explain", _unknown(this), _unknown(before)),
        ]
    rows.append(("events logged", int(events[0] or 0), int(events[1] or 0)))
    return [{"name": name, "this": now, "previous": then, "delta": now - then} for name, now, then in rows]


def _multi_host(frame: pl.DataFrame) -> int:
    return int((frame["hosts"].list.len() > 1).sum())


def _distinct_hosts(frame: pl.DataFrame) -> int:
    return frame.select(pl.col("hosts").explode().drop_nulls().n_unique()).item()


def _distinct(frame: pl.DataFrame, key: list[str], *required: str) -> int:
    present = pl.any_horizontal([pl.col(column).is_not_null() for column in required])
    return frame.filter(present).select(key).unique().height


def _unknown(frame: pl.DataFrame) -> int:
    return int((frame["kb_id"] == UNKNOWN).sum())


# --- incidents per day and the group table ------------------------------------------------------


def _daily(this: pl.DataFrame, days: list[date], order: list[str]) -> dict[str, list[int]]:
    counts = this.group_by("group", day=pl.col("start").dt.date()).len()
    lookup = {(row["group"], row["day"]): row["len"] for row in counts.iter_rows(named=True)}
    active = [group for group in order if any(lookup.get((group, day)) for day in days)]
    return {group: [lookup.get((group, day), 0) for day in days] for group in active}


def _groups(incidents: pl.DataFrame, this: pl.DataFrame, before: pl.DataFrame, window: Window, modes: pl.DataFrame,
            kb: KnowledgeBase, drafts: dict[str, Path | str]) -> list[dict[str, Any]]:
    """One row per group active in the window or the one before: status, counts, hosts, example, KB entry."""
    earlier = set(incidents.filter(pl.col("start") < window.since)["group"].to_list())
    now = _group_counts(this)
    then = _group_counts(before)
    mode_rows = {row["mode_id"]: row for row in modes.iter_rows(named=True)}
    rows = []
    for group in sorted(set(now) | set(then), key=lambda g: (-now.get(g, {}).get("n", 0), -then.get(g, {}).get("n", 0), g)):
        current, past = now.get(group), then.get(group)
        status = ("recurring" if group in earlier else "new") if current else "gone quiet"
        members = this if current else before
        mode = mode_rows.get(group, {})
        example = _example(members.filter(pl.col("group") == group), mode.get("medoid_incident"), latest=current is None)
        rows.append({
            "group": group,
            "label": mode.get("label") or "",
            "status": status,
            "count": current["n"] if current else 0,
            "previous": past["n"] if past else 0,
            "hosts": (current or past or {}).get("hosts", []),
            "example": example,
            **_kb_fields(group, mode, members, kb, drafts),
        })
    return rows


def _group_counts(frame: pl.DataFrame) -> dict[str, dict[str, Any]]:
    counts = frame.group_by("group").agg(n=pl.len(), hosts=pl.col("hosts").explode().drop_nulls().unique().sort())
    return {row["group"]: row for row in counts.iter_rows(named=True)}


def _example(members: pl.DataFrame, medoid: str | None, *, latest: bool) -> dict[str, Any]:
    """The mode's medoid when it is among ``members``, else the earliest member (the latest for a mode gone quiet)."""
    ordered = members.sort("start", descending=latest, nulls_last=True)
    chosen = ordered.filter(pl.col("incident_id") == medoid) if medoid else ordered.clear()
    row = (chosen if chosen.height else ordered).row(0, named=True)
    return {"incident_id": row["incident_id"], "start": row["start"], "host": row["host"], "text": first_line(row["signature"])}


def first_line(text: str | None, limit: int = EXAMPLE_CHARS) -> str:
    """The first non-blank line of a signature (its most specific anchor), cut to ``limit`` characters, or ''."""
    line = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _kb_fields(group: str, mode: dict[str, Any], members: pl.DataFrame, kb: KnowledgeBase, drafts: dict[str, Path | str]) -> dict[str, Any]:
    if "kb_id" not in members.columns:
        return {"kb_id": None, "kb_title": None, "kb_confidence": None, "kb_known": False, "draft": None}
    kb_id = mode.get("kb_id")
    confidence = mode.get("kb_confidence")
    if kb_id is None:
        votes = Counter(members.filter(pl.col("group") == group)["kb_id"].drop_nulls().to_list())
        kb_id = votes.most_common(1)[0][0] if votes else None
        confidence = members.filter((pl.col("group") == group) & (pl.col("kb_id") == kb_id))["kb_confidence"].mean() if kb_id else None
    known = kb_id is not None and kb_id != UNKNOWN and kb_id in kb
    draft = drafts.get(mode.get("medoid_incident") or "") if kb_id == UNKNOWN else None
    return {"kb_id": kb_id, "kb_title": kb[kb_id].title if known else None, "kb_confidence": confidence, "kb_known": known,
            "draft": str(draft) if draft else None}


def _checklists(groups: list[dict[str, Any]], kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Each knowledge-base entry of the window's modes once, with its full checklist and the modes it explains."""
    entries: dict[str, list[str]] = {}
    for row in groups:
        if row["count"] and row["kb_known"]:
            entries.setdefault(row["kb_id"], []).append(row["group"])
    return [
        {
            "kb_id": kb_id,
            "title": kb[kb_id].title,
            "summary": kb[kb_id].summary,
            "modes": modes,
            "steps": [{"check": step.check, "expect": step.expect, "fix": step.fix} for step in kb.checklist(kb_id)],
        }
        for kb_id, modes in entries.items()
    ]


# --- top hosts, pods, GPUs ------------------------------------------------------------------------


def _top_hosts(this: pl.DataFrame) -> list[dict[str, Any]]:
    table = (
        this.explode("hosts")
        .filter(pl.col("hosts").is_not_null())
        .group_by(host=pl.col("hosts"))
        .agg(incidents=pl.len(), as_root=(pl.col("host") == pl.col("hosts")).sum(), groups=pl.col("group").unique().sort())
        .sort(["incidents", "host"], descending=[True, False])
    )
    return table.head(TOP_ROWS).to_dicts()


def _top_pods(this: pl.DataFrame) -> list[dict[str, Any]]:
    table = (
        this.filter(pl.col("pod").is_not_null())
        .group_by("namespace", "pod")
        .agg(incidents=pl.len(), hosts=pl.col("host").unique().sort(), groups=pl.col("group").unique().sort())
        .sort(["incidents", "namespace", "pod"], descending=[True, False, False], nulls_last=True)
    )
    return table.head(TOP_ROWS).to_dicts()


def _top_gpus(this: pl.DataFrame) -> list[dict[str, Any]]:
    table = (
        this.filter(pl.col("gpu_index").is_not_null() | pl.col("gpu_uuid").is_not_null())
        .group_by("host", "gpu_index", "gpu_uuid")
        .agg(incidents=pl.len(), groups=pl.col("group").unique().sort())
        .sort(["incidents", "host", "gpu_index"], descending=[True, False, False], nulls_last=True)
    )
    return table.head(TOP_ROWS).to_dicts()


# --- GPU memory before the failure ----------------------------------------------------------------


def gpu_samples(store: Store, incidents: pl.DataFrame) -> pl.DataFrame:
    """The linked nvidia-smi samples of each incident's own GPU on its root host, up to the failure.

    Columns: incident_id, ts (aligned), rel_min (minutes relative to the incident's start),
    mem_used_bytes, mem_total_bytes, gpu_util_pct.
    """
    named_gpu = pl.col("gpu_index").is_not_null() | pl.col("gpu_uuid").is_not_null()
    owners = incidents.filter(pl.col("start").is_not_null() & named_gpu).select(
        "incident_id", "start", root=pl.col("host"), own_index=pl.col("gpu_index"), own_uuid=pl.col("gpu_uuid")
    )
    links = store.incident_events().filter((pl.col("kind") == "gpu_sample") & pl.col("incident_id").is_in(owners["incident_id"].implode()))
    details = store.scan_events().filter(pl.col("event_id").is_in(links["event_id"].unique().implode())).select(
        "event_id", "host", "gpu_index", "gpu_uuid", "mem_used_bytes", "mem_total_bytes", "gpu_util_pct"
    ).collect()
    same_gpu = (pl.col("gpu_index") == pl.col("own_index")).fill_null(False) | (pl.col("gpu_uuid") == pl.col("own_uuid")).fill_null(False)
    return (
        links.select("incident_id", "event_id", "ts")
        .join(details, on="event_id")
        .join(owners, on="incident_id")
        .filter(same_gpu & (pl.col("host") == pl.col("root")) & (pl.col("ts") <= pl.col("start")))
        .with_columns(rel_min=(pl.col("ts") - pl.col("start")).dt.total_microseconds() / 60e6)
        .sort("incident_id", "ts")
        .select("incident_id", "ts", "rel_min", "mem_used_bytes", "mem_total_bytes", "gpu_util_pct")
    )


def _curves(store: Store, this: pl.DataFrame, groups: list[dict[str, Any]], modes: pl.DataFrame) -> list[dict[str, Any]]:
    """For the biggest groups of the window, the GPU-memory curve of a representative incident.

    Among groups of equal size, those with GPU samples come first: a curve says more than a note that there is none.
    """
    if this.is_empty():
        return []
    samples = gpu_samples(store, this).filter(pl.col("mem_used_bytes").is_not_null())
    counts = dict(samples.group_by("incident_id").len().iter_rows())
    sampled = set(this.filter(pl.col("incident_id").is_in(list(counts)))["group"].to_list())
    active = [row for row in groups if row["count"]]
    biggest = [row["group"] for row in sorted(active, key=lambda row: (-row["count"], row["group"] not in sampled))][:CURVE_GROUPS]
    members = this.filter(pl.col("group").is_in(biggest))
    medoids = dict(modes.select("mode_id", "medoid_incident").iter_rows())
    curves = []
    for group in biggest:
        mine = members.filter(pl.col("group") == group).sort("start", "incident_id")
        candidates = [(incident_id, counts.get(incident_id, 0)) for incident_id in mine["incident_id"].to_list()]
        medoid = medoids.get(group)
        ranked = sorted(candidates, key=lambda item: (item[0] != medoid or item[1] < 2, -item[1]))
        chosen, n = ranked[0]
        row = mine.filter(pl.col("incident_id") == chosen).row(0, named=True)
        curve = samples.filter(pl.col("incident_id") == chosen)
        curves.append({
            "group": group,
            "incident_id": chosen,
            "host": row["host"],
            "gpu": row["gpu_index"] if row["gpu_index"] is not None else row["gpu_uuid"],
            "samples": n,
            "minutes": curve["rel_min"].to_list(),
            "used": curve["mem_used_bytes"].to_list(),
            "total": curve["mem_total_bytes"].max() if n else None,
            "peak_pct": row["gpu_mem_peak_pct"],
            "growth_bytes_per_s": row["gpu_mem_growth_bytes_per_s"],
            "shape": row["gpu_mem_growth_shape"],
            "headroom_bytes": row["gpu_mem_headroom_bytes"],
        })
    return curves


# --- what the knowledge base could not explain ------------------------------------------------------


def _drafts(entries: dict[Path | str, str]) -> dict[str, Path | str]:
    """incident_id → where the draft entry written for it lies (the draft's ``evidence.incident_id``)."""
    found: dict[str, Path | str] = {}
    for where, text in sorted(entries.items(), key=lambda item: str(item[0])):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        incident_id = (data.get("evidence") or {}).get("incident_id") if isinstance(data, dict) else None
        if isinstance(incident_id, str):
            found.setdefault(incident_id, where)
    return found


def _unexplained(this: pl.DataFrame, modes: pl.DataFrame, groups: list[dict[str, Any]],
                 drafts: dict[str, Path | str]) -> dict[str, list[dict[str, Any]]]:
    medoids = dict(modes.select("mode_id", "medoid_incident").iter_rows())
    mode_rows = [
        {"group": row["group"], "label": row["label"], "count": row["count"], "draft": row["draft"]}
        for row in groups if row["count"] and row["kb_id"] == UNKNOWN
    ]
    incidents = []
    for row in this.filter(pl.col("kb_id") == UNKNOWN).sort("start", "incident_id").iter_rows(named=True):
        draft = drafts.get(row["incident_id"]) or drafts.get(medoids.get(row["group"]) or "")
        incidents.append({
            "incident_id": row["incident_id"], "start": row["start"], "host": row["host"], "group": row["group"],
            "kb_confidence": row["kb_confidence"], "text": first_line(row["signature"]), "draft": str(draft) if draft else None,
        })
    return {"modes": mode_rows, "incidents": incidents}


# --- data quality -------------------------------------------------------------------------------------


def _quality(store: Store, incidents: pl.DataFrame) -> dict[str, Any]:
    """Store-wide notes: files that failed, lines no rule matched, events and clocks without a wall time."""
    manifest = store.manifest()
    totals = manifest.select(
        files=pl.len(), lines=pl.col("lines").sum(), unparsed=pl.col("unparsed_lines").sum(), skipped=pl.col("skipped_lines").sum(),
        decode_errors=pl.col("decode_errors").sum(), truncated=pl.col("truncated_lines").sum(),
    ).row(0, named=True)
    problems = manifest.filter(pl.col("status") != "ok").select("path", "status", "error", "source").sort("status", "path").to_dicts()
    unparsed = (
        manifest.filter(pl.col("unparsed_lines") > 0)
        .select("path", "source", "lines", "unparsed_lines")
        .sort(["unparsed_lines", "path"], descending=[True, False])
        .head(5)
        .to_dicts()
    )
    untimed = (
        store.scan_events().filter(pl.col("ts").is_null()).group_by("ts_quality").len().sort("len", descending=True).collect()
    )
    report = store.correlation_report()
    alignment = report.get("alignment", [])
    return {
        "totals": {key: int(value or 0) for key, value in totals.items()},
        "problem_files": problems,
        "unparsed_files": unparsed,
        "events_without_time": [
            {"ts_quality": quality, "why": UNTIMED.get(quality, quality), "events": n} for quality, n in untimed.iter_rows()
        ],
        "correlated": bool(report),
        "unaligned": [row for row in alignment if row.get("method") == "unaligned"],
        "skewed": [row for row in alignment if (row.get("residual_skew_s") or 0) > SKEW_NOTE_S],
        "year_shifts": report.get("year_shifts", []),
        "incidents_without_time": int(incidents["start"].null_count()),
    }
