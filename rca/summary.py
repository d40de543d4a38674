"""The figures an engineer wants right after an ingest: what came in, and what looks wrong."""

from __future__ import annotations

import polars as pl

from rca import schema


def summarize(events: pl.LazyFrame, files: pl.DataFrame) -> dict:
    """Summary of ``events`` (one run's new parts, rca.schema.EVENT_SCHEMA) and the run's manifest rows."""
    events = events.select("ts", "host", "source", "kind").collect()
    by_kind = events.group_by("source", "kind").len().sort("source", "len", descending=[False, True])
    ts = events["ts"].drop_nulls()
    problems = files.filter(pl.col("status") != "ok").select("path", "status", "error")
    return {
        "files": files.height,
        "lines": int(files["lines"].sum() or 0),
        "events": events.height,
        "by_source_kind": [{"source": s, "kind": k, "events": n} for s, k, n in by_kind.iter_rows()],
        "hosts": sorted(h for h in events["host"].unique().to_list() if h is not None),
        "time_range": [ts.min().isoformat(), ts.max().isoformat()] if ts.len() else None,
        "events_without_time": int(events["ts"].null_count()),
        "oom_class_events": int(events["kind"].is_in(schema.OOM_CLASS_KINDS).sum()),
        "unparsed_lines": int(files["unparsed_lines"].sum() or 0),
        "problem_files": problems.to_dicts(),
    }
