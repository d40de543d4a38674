"""The ingest summary: counts, hosts and time range of one run's events, from the parts as written."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from rca import schema
from rca.summary import summarize


def _files() -> pl.DataFrame:
    return pl.DataFrame({"path": ["a.log", "b.bin"], "lines": [6, 0], "unparsed_lines": [2, 0], "status": ["ok", "skipped"],
                         "error": [None, "binary content"]})


def test_the_summary_of_parts_on_disk(tmp_path: Path) -> None:
    at = datetime(2026, 12, 1, 3, 17, tzinfo=UTC)
    rows = [("h2", "kernel", "oom_kill", at, "h2/kern.log"), ("h1", "kernel", "log", None, "h1/kern.log"),
            ("h1", "kubelet", "container_oomkilled", at, "h1/kubelet.log"), ("h1", "kernel", "oom_invoked", at.replace(minute=10), "h1/kern.log"),
            ("h1", "kubelet", "log", at.replace(hour=5), "h1/kubelet.log"), (None, "pipeline", "log", None, "train.log")]
    columns = {"host": pl.String, "source": pl.String, "kind": pl.String, "ts": schema.UTC_MICROS, "file": pl.String}
    frame = pl.DataFrame(rows, schema=columns, orient="row")
    # Two parts, as a run writes them: the summary reads them as they lie.
    frame.head(3).write_parquet(tmp_path / "one.parquet")
    frame.tail(3).write_parquet(tmp_path / "two.parquet")
    summary = summarize(pl.scan_parquet(tmp_path / "*.parquet"), _files())
    assert (summary["files"], summary["lines"], summary["events"], summary["unparsed_lines"]) == (2, 6, 6, 2)
    assert summary["by_source_kind"] == [
        {"source": "kernel", "kind": "log", "events": 1}, {"source": "kernel", "kind": "oom_invoked", "events": 1},
        {"source": "kernel", "kind": "oom_kill", "events": 1}, {"source": "kubelet", "kind": "container_oomkilled", "events": 1},
        {"source": "kubelet", "kind": "log", "events": 1}, {"source": "pipeline", "kind": "log", "events": 1},
    ]
    assert (summary["hosts"], summary["files_without_host"]) == (["h1", "h2"], 1)
    assert summary["time_range"] == ["2026-12-01T03:10:00+00:00", "2026-12-01T05:17:00+00:00"]
    # The kill and the OOMKilled container; the OOM killer's invocation is not a kill.
    assert (summary["events_without_time"], summary["oom_class_events"]) == (2, 2)
    assert summary["problem_files"] == [{"path": "b.bin", "status": "skipped", "error": "binary content"}]


def test_the_summary_of_a_run_that_found_nothing(tmp_path: Path) -> None:
    empty = pl.DataFrame(schema={"host": pl.String, "source": pl.String, "kind": pl.String, "ts": schema.UTC_MICROS, "file": pl.String})
    summary = summarize(empty.lazy(), _files().head(0))
    assert (summary["events"], summary["by_source_kind"], summary["hosts"], summary["time_range"]) == (0, [], [], None)
    assert summary["events_without_time"] == 0 and summary["oom_class_events"] == 0 and summary["files_without_host"] == 0
