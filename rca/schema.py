"""The fixed schemas that every stage reads and writes.

Columns are defined once here; stages call :func:`conform` on what they produce and
:func:`validate` on what they read, so a missing or mistyped column fails loudly at the
boundary instead of deep inside a later stage.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from rca.errors import SchemaError

SCHEMA_VERSION = 1

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

SOURCES = ("kernel", "kubelet", "k8s", "nvidia_smi", "pipeline")

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
    "status": pl.String(),  # ok / warning / error / skipped
    "error": pl.String(),
    "run_id": pl.String(),  # the run that last changed this file's events
    "parts": pl.List(pl.String()),  # event part files (under events.parquet/) holding this file's events
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
    return frame.select(
        [
            (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
            for name, dtype in schema.items()
        ]
    )


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
