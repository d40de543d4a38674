"""The figures an engineer wants right after an ingest: what came in, and what looks wrong."""

from __future__ import annotations

import polars as pl

from rca import schema


def summarize(events: pl.LazyFrame, files: pl.DataFrame) -> dict:
    """Summary of ``events`` (one run's new parts, rca.schema.EVENT_SCHEMA) and the run's manifest rows.

    Aggregated by the streaming engine: a run of tens of millions of events is summed up part by
    part, never held whole (its four columns alone were 5 GB for a 10 GB corpus).
    """
    by_kind, times, hosts, hostless = pl.collect_all(
        [
            events.group_by("source", "kind").len().sort("source", "len", "kind", descending=[False, True, False]),
            events.select(first=pl.col("ts").min(), last=pl.col("ts").max(), without_time=pl.col("ts").null_count()),
            events.select(pl.col("host").drop_nulls().unique()),
            events.filter(pl.col("host").is_null()).select(pl.col("file").n_unique()),
        ],
        engine="streaming",
    )
    first, last, without_time = times.row(0) if times.height else (None, None, 0)
    problems = files.filter(pl.col("status") != "ok").select("path", "status", "error")
    return {
        "files": files.height,
        "lines": int(files["lines"].sum() or 0),
        "events": int(by_kind["len"].sum()),
        "by_source_kind": [{"source": s, "kind": k, "events": n} for s, k, n in by_kind.iter_rows()],
        "hosts": sorted(hosts["host"].to_list()),
        "files_without_host": int(hostless.item()) if hostless.height else 0,  # files with events that name no host
        "time_range": [first.isoformat(), last.isoformat()] if first is not None else None,
        "events_without_time": int(without_time),
        "oom_class_events": int(by_kind.filter(pl.col("kind").is_in(schema.OOM_CLASS_KINDS))["len"].sum()),
        "unparsed_lines": int(files["unparsed_lines"].sum() or 0),
        "problem_files": problems.to_dicts(),
    }
