"""The fixed schemas that every stage reads and writes.

Columns are defined once here; stages call :func:`conform` on what they produce and
:func:`validate` on what they read, so a missing or mistyped column fails loudly at the
boundary instead of deep inside a later stage.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import polars as pl

from rca.errors import SchemaError

SCHEMA_VERSION = 2
"""Version of the store layout and tables; rca.store refuses other versions (schema 1 kept the event parts
flat in ``events.parquet/``; ``rca migrate`` converts such a store to the partitioned ``events/``)."""

UTC_MICROS = pl.Datetime("us", "UTC")

EVENT_SCHEMA: dict[str, pl.DataType] = {
    "event_id": pl.String(),  # "<file key>:<line>:<ordinal>", stable across runs and stores
    "ts": UTC_MICROS,  # resolved time; null only when it truly cannot be known
    "ts_raw": pl.String(),  # the time exactly as written in the log
    "ts_quality": pl.String(),  # one of TS_QUALITIES
    "boot_seconds": pl.Float64(),  # kernel seconds since boot, when the line carries them
    "host": pl.String(),
    "source": pl.String(),  # one of SOURCES
    "format": pl.String(),  # detected format inside the source family, e.g. "dmesg_raw"
    "kind": pl.String(),  # one of KINDS
    "severity": pl.String(),  # one of SEVERITIES
    "pid": pl.Int64(),
    "process": pl.String(),
    "pod": pl.String(),
    "namespace": pl.String(),
    "container": pl.String(),
    "container_id": pl.String(),
    "pod_uid": pl.String(),
    "cgroup": pl.String(),
    "gpu_index": pl.Int32(),
    "gpu_uuid": pl.String(),
    "pci_bus": pl.String(),
    "xid": pl.Int32(),
    "exit_code": pl.Int32(),
    "mem_used_bytes": pl.Int64(),
    "mem_total_bytes": pl.Int64(),
    "mem_requested_bytes": pl.Int64(),
    "rss_bytes": pl.Int64(),
    "gpu_util_pct": pl.Float64(),
    "message": pl.String(),
    "attrs": pl.String(),  # JSON object of format-specific fields (NCCL rank, Xid mnemonic, ...)
    "template_id": pl.String(),
    "file": pl.String(),
    "line": pl.Int64(),  # 1-based line of the event's first line in `file`
    "n_lines": pl.Int32(),  # input lines this event covers (0 for events derived from another's lines)
}

SOURCES = ("kernel", "kubelet", "k8s", "nvidia_smi", "pipeline", "syslog", "cgroup", "dcgm", "torch_memory")

KINDS = (
    "oom_invoked",
    "oom_kill",
    "xid",
    "container_oomkilled",
    "eviction",
    "memory_pressure",
    "gpu_sample",
    "gpu_process",
    "cuda_oom",
    "dataloader_killed",
    "nccl_timeout",
    "shm_error",
    "process_killed",
    "traceback",
    "cgroup_memory",  # one reading of a cgroup's memory files: usage, peak, limit, OOM counts
    "memory_snapshot",  # a PyTorch allocator snapshot or memory_summary(): allocated vs reserved, top sites
    "log",
)

OOM_CLASS_KINDS = (
    "oom_kill",
    "container_oomkilled",
    "cuda_oom",
    "dataloader_killed",
    "eviction",
    "process_killed",
    "shm_error",
    "nccl_timeout",
)

SEVERITIES = ("debug", "info", "notice", "warning", "error", "critical")

TS_QUALITIES = (
    "exact",  # the line carries a full date and a zone (or a zone given by --tz)
    "year_inferred",  # no year in the line; taken from other dated lines of the file or --year
    "year_from_mtime",  # no year in the line nor the file; taken from the file's mtime
    "boot_aligned",  # boot-relative kernel time converted with a known boot time
    "boot_relative",  # boot-relative kernel time, boot time unknown: ts is null, boot_seconds set
    "inherited",  # no time on the line; taken from the record it belongs to
    "file_mtime",  # the file carries no time at all (cgroup files, snapshots): its modification time
    "missing",  # no time anywhere: ts is null
)

MANIFEST_SCHEMA: dict[str, pl.DataType] = {
    "path": pl.String(),  # as given relative to the ingested root, or absolute for a single file
    "file_key": pl.String(),
    "sha256": pl.String(),
    "host": pl.String(),
    "source": pl.String(),
    "format": pl.String(),
    "bytes": pl.Int64(),
    "mtime": UTC_MICROS,
    "lines": pl.Int64(),
    "events": pl.Int64(),
    "derived_events": pl.Int64(),  # events that cover no line of their own (n_lines == 0)
    "merged_lines": pl.Int64(),  # lines folded into a multi-line event beyond its first
    "skipped_lines": pl.Int64(),
    "skipped_reasons": pl.String(),  # JSON {reason: count}
    "unparsed_lines": pl.Int64(),  # lines kept as kind=log
    "decode_errors": pl.Int64(),  # lines holding bytes that were not valid UTF-8
    "truncated_lines": pl.Int64(),  # lines cut to the maximum line length
    "status": pl.String(),  # ok / warning / error / skipped / ignored (never a log: .DS_Store, __MACOSX/…, wtmp)
    "error": pl.String(),
    "run_id": pl.String(),  # the run that last changed this file's events
    "parts": pl.List(pl.String()),  # event parts holding this file's events, as date=…/host=…/NAME.parquet under events/
}
"""One row per input path. Totals reconcile per file:
``lines == events - derived_events + merged_lines + skipped_lines``."""


def empty(schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    """An empty frame with exactly ``schema``."""
    return pl.DataFrame(schema=dict(schema))


def conform(frame: pl.DataFrame, schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    """Add missing columns as nulls, cast, and order columns as ``schema`` says.

    Columns not in the schema are an error: a stage that wants to keep extra facts puts
    them in ``attrs``.
    """
    extra = [name for name in frame.columns if name not in schema]
    if extra:
        raise SchemaError(f"columns not in the schema: {', '.join(extra)}")
    if not frame.columns:  # a frame of no columns has no rows; a select of literals alone would make one
        return empty(schema)
    return frame.select(_conforming(tuple(frame.columns), tuple(schema.items())))


@functools.lru_cache(maxsize=256)
def _conforming(columns: tuple[str, ...], schema: tuple[tuple[str, pl.DataType], ...]) -> list[pl.Expr]:
    # Building the expressions costs about a millisecond of Python, more than selecting a small
    # frame with them; a parser hands over the same few column sets again and again.
    return [(pl.col(name) if name in columns else pl.lit(None)).cast(dtype).alias(name) for name, dtype in schema]


def validate(frame: pl.DataFrame | pl.LazyFrame, schema: Mapping[str, pl.DataType], what: str) -> None:
    """Raise :class:`SchemaError` unless ``frame`` has exactly the columns and dtypes of ``schema``."""
    actual = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    problems = []
    for name, dtype in schema.items():
        if name not in actual:
            problems.append(f"missing column {name!r}")
        elif actual[name] != dtype:
            problems.append(f"column {name!r} is {actual[name]}, expected {dtype}")
    problems += [f"unexpected column {name!r}" for name in actual if name not in schema]
    if problems:
        raise SchemaError(f"{what}: " + "; ".join(problems))


INCIDENT_SCHEMA: dict[str, pl.DataType] = {
    "incident_id": pl.String(),  # "inc-" + hash of the root host and the earliest anchor's event_id: stable across runs
    "host": pl.String(),  # root host: where the first failure happened
    "hosts": pl.List(pl.String()),  # every host with an anchor of this incident (NCCL peers included), sorted
    "start": UTC_MICROS,  # first anchor
    "end": UTC_MICROS,  # last anchor
    "anchor_kind": pl.String(),  # kind of the incident's most specific anchor on the root host (one of KINDS)
    "pid": pl.Int64(),
    "process": pl.String(),
    "pod": pl.String(),
    "namespace": pl.String(),
    "container": pl.String(),
    "gpu_index": pl.Int32(),
    "gpu_uuid": pl.String(),
    "n_anchors": pl.Int32(),
    "n_events": pl.Int32(),  # linked events of every role
    "sources": pl.List(pl.String()),  # sources of the linked anchor and evidence events, sorted
    "signature": pl.String(),  # masked key evidence, one line each: the embedding stage's input text
    # --- signals (rca.signals); null when the evidence to compute them is absent ---
    "gpu_mem_peak_pct": pl.Float64(),  # highest used/total of the incident's GPU in the window before the anchor
    "gpu_mem_headroom_bytes": pl.Int64(),  # total - used at the last sample at or before the anchor
    "gpu_mem_growth_bytes_per_s": pl.Float64(),  # least-squares slope of used memory over the window
    "gpu_mem_growth_sustained_s": pl.Float64(),  # longest run of sample intervals growing faster than 5 MB/s
    "gpu_mem_growth_shape": pl.String(),  # flat / steady_leak / single_step / sawtooth / irregular
    "gpu_util_period_s": pl.Float64(),  # period of the utilization cycle (autocorrelation peak)
    "reserved_unallocated_bytes": pl.Int64(),  # CUDA OOM: reserved by the caching allocator but not allocated
    "reserved_unallocated_frac": pl.Float64(),  # ... as a fraction of everything the allocator reserved
    "requested_bytes": pl.Int64(),  # CUDA OOM: the allocation that failed
    "free_bytes": pl.Int64(),  # CUDA OOM: free GPU memory at that moment
    "requested_over_free": pl.Float64(),
    "gpu_processes": pl.Int32(),  # distinct processes on the incident's GPU in the window
    "gpu_pods": pl.Int32(),  # distinct pods among them, where the pid is known to belong to a pod
    "stale_gpu_bytes": pl.Int64(),  # GPU memory held by other processes that log nothing in the window
    "killed_rss_bytes": pl.Int64(),  # RSS of the process the kernel killed
    "cgroup_limit_bytes": pl.Int64(),  # memory limit of its cgroup (the kernel's report, else the cgroup files)
    "cgroup_peak_bytes": pl.Int64(),  # cgroup files: peak usage of the incident's cgroup (memory.peak / max_usage_in_bytes)
    "cgroup_peak_over_limit": pl.Float64(),  # ... over that cgroup's limit
    "cgroup_oom_kills": pl.Int32(),  # ... and its OOM kills (memory.events / memory.oom_control oom_kill)
    "rss_over_limit": pl.Float64(),
    "oom_constraint": pl.String(),  # memcg / system / cpuset / mempolicy
    "snapshot_growth_site": pl.String(),  # PyTorch snapshots: the allocation site that grew most between the first and the last
    "snapshot_growth_bytes": pl.Int64(),  # ... and by how much
    "victim_was_grower": pl.Boolean(),  # the failing process is the one whose memory grew most
    "xid_codes": pl.List(pl.Int32()),  # Xid codes on the host from a day before the incident to its end
    "restart_count": pl.Int32(),  # highest container restart count reported for the pod
    "runtime_oom": pl.String(),  # jvm_heap / jvm_metaspace / go_runtime / ... from the runtime's own error
}
"""One row per incident (``STORE/incidents.parquet``), written by rca.correlate."""

INCIDENT_ROLES = ("anchor", "evidence", "context")

INCIDENT_EVENTS_SCHEMA: dict[str, pl.DataType] = {
    "incident_id": pl.String(),
    "event_id": pl.String(),  # EVENT_SCHEMA.event_id
    "role": pl.String(),  # anchor (a sighting of the failure), evidence (same process/pod/GPU), context (same host)
    "host": pl.String(),
    "ts": UTC_MICROS,  # the event's time after clock alignment (the event table keeps the time as parsed)
    "ts_quality": pl.String(),
    "source": pl.String(),
    "kind": pl.String(),
}
"""Links between incidents and events (``STORE/incident_events.parquet``); an event may
support several incidents, an anchor belongs to one."""


# --- the clustering stage (rca.embed, rca.cluster) ---------------------------------------------

CLUSTER_COLUMNS: dict[str, pl.DataType] = {
    "failure_mode": pl.String(),  # FAILURE_MODE_SCHEMA.mode_id of the incident's mode
    "kb_id": pl.String(),  # the incident's own best knowledge-base entry, or "unknown"
    "kb_confidence": pl.Float64(),  # that entry's combined rule + similarity score in [0, 1]
}
"""The columns ``rca cluster`` adds to ``incidents.parquet``."""

CLUSTERED_INCIDENT_SCHEMA: dict[str, pl.DataType] = {**INCIDENT_SCHEMA, **CLUSTER_COLUMNS}
"""``STORE/incidents.parquet`` after ``rca cluster``: INCIDENT_SCHEMA, then CLUSTER_COLUMNS."""

MODE_STATUSES = ("new", "recurring", "dormant")

FAILURE_MODE_SCHEMA: dict[str, pl.DataType] = {
    "mode_id": pl.String(),  # "fm-001", … in order of creation; never reused nor renumbered
    "status": pl.String(),  # last run: new (made by it), recurring (got new incidents), dormant (got none)
    "size": pl.Int32(),  # distinct incidents ever assigned to the mode
    "new_incidents": pl.Int32(),  # incidents the last run added to it
    "label": pl.String(),  # what tells the mode apart: its anchor kind, signals and top terms
    "terms": pl.List(pl.String()),  # the signature words most specific to the mode
    "medoid_incident": pl.String(),  # the member closest to the centroid
    "hosts": pl.List(pl.String()),  # every host any member involved, sorted
    "first_seen": UTC_MICROS,  # earliest start of a member
    "last_seen": UTC_MICROS,  # latest end of a member
    "kb_id": pl.String(),  # the mode's knowledge-base entry, or "unknown" (a draft is in STORE/kb_drafts/)
    "kb_confidence": pl.Float64(),
    "kb_runner_up": pl.String(),  # the second-best entry, when it scored at all
    "space": pl.String(),  # the feature space of the centroid: embedder name and feature version
    "centroid": pl.List(pl.Float32()),
    "incident_ids": pl.List(pl.String()),  # every incident ever assigned, sorted
}
"""One row per failure mode (``STORE/failure_modes.parquet``), written by rca.cluster."""

EMBEDDING_SCHEMA: dict[str, pl.DataType] = {
    "embedder": pl.String(),  # the embedder's name: vectors of different embedders never mix
    "text_hash": pl.String(),  # rca.embed.text_hash of the embedded text (a signature or a KB symptom)
    "vector": pl.List(pl.Float32()),  # L2-normalised
}
"""The embedding cache (``STORE/embeddings.parquet``): a text once embedded is never embedded again."""
