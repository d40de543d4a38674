"""The ingest summary: counts, hosts and time range of one run's events, from the tallies its tasks made of them."""

from __future__ import annotations

import gzip
import shutil
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

import rca
from rca import schema
from rca.ingest import IngestOptions, IngestReport
from rca.summary import event_groups, summarize
from tests.conftest import DATA


def _files() -> pl.DataFrame:
    return pl.DataFrame({"path": ["a.log", "b.bin"], "lines": [6, 0], "unparsed_lines": [2, 0], "status": ["ok", "skipped"],
                         "error": [None, "binary content"]})


def test_the_summary_of_events_tallied_in_pieces() -> None:
    at = datetime(2026, 12, 1, 3, 17, tzinfo=UTC)
    rows = [("h2", "kernel", "oom_kill", at, "h2/kern.log"), ("h1", "kernel", "log", None, "h1/kern.log"),
            ("h1", "kubelet", "container_oomkilled", at, "h1/kubelet.log"), ("h1", "kernel", "oom_invoked", at.replace(minute=10), "h1/kern.log"),
            ("h1", "kubelet", "log", at.replace(hour=5), "h1/kubelet.log"), (None, "pipeline", "log", None, "train.log")]
    columns = {"host": pl.String, "source": pl.String, "kind": pl.String, "ts": schema.UTC_MICROS, "file": pl.String}
    frame = pl.DataFrame(rows, schema=columns, orient="row").with_columns(ts_raw=pl.lit(None, pl.String), ts_quality=pl.lit("exact"))
    # Tallied in two pieces, as two tasks make them: a file's events in both count once each.
    summary = summarize([event_groups(frame.head(3)), event_groups(frame.tail(3))], _files())
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


def test_the_summary_of_a_run_that_found_nothing() -> None:
    summary = summarize([], _files().head(0))
    assert (summary["events"], summary["by_source_kind"], summary["hosts"], summary["time_range"]) == (0, [], [], None)
    assert summary["events_without_time"] == 0 and summary["oom_class_events"] == 0 and summary["files_without_host"] == 0
    assert summary["zone_hints"] == []


def test_a_host_that_states_a_zone_other_than_tz_is_named_until_read_at_it(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "gpu-eu-1"
    logs.mkdir(parents=True)
    # journalctl -o short-iso states the host's zone; kern.log (rsyslog's traditional format) and the trainer's log do not.
    (logs / "journal.log").write_text(
        "2026-12-01T03:17:05+0100 gpu-eu-1 systemd[1]: Started Session 5 of User root.\n"
        "2026-12-01T03:17:09+0100 gpu-eu-1 systemd[1]: Started Session 6 of User root.\n"
        'time="2026-12-01T03:17:10Z" level=info msg="a Go program writes UTC whatever the host\'s zone"\n'
    )
    (logs / "kern.log").write_text("Dec  1 03:18:01 gpu-eu-1 kernel: Memory cgroup out of memory: Killed process 63214 (python)\n")
    (logs / "train.log").write_text("2026-12-01 03:18:00,123 ERROR torch.OutOfMemoryError: CUDA out of memory.\n")
    report = rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    assert report.summary["zone_hints"] == [{
        "host": "gpu-eu-1", "stated_zone": "+01:00", "stated_in": "gpu-eu-1/journal.log", "stated_events": 2,
        "zoneless_events": 2, "zoneless_files": 2, "zoneless_example": "gpu-eu-1/kern.log",
    }]
    again = rca.ingest(tmp_path / "logs", tmp_path / "store", rca.IngestOptions(tz="Europe/Paris"), workers=1)
    assert again.summary["zone_hints"] == []
    kill = rca.open_store(tmp_path / "store").events().filter(pl.col("kind") == "oom_kill")
    assert kill["ts"].to_list() == [datetime(2026, 12, 1, 2, 18, 1, tzinfo=UTC)]
    # A zone that agrees with --tz is no news.
    assert rca.ingest(tmp_path / "logs", tmp_path / "other", rca.IngestOptions(tz="+01:00"), workers=1).summary["zone_hints"] == []


def _read_back(report: IngestReport) -> dict:
    """The summary of the events a run staged, read back from its own parts (copies of older parts are named ``…~RUN``)."""
    opened = rca.open_store(report.store)
    own = [path for path in opened.part_paths() if f"-{report.run_id}-" in path and "~" not in path]
    return summarize([event_groups(opened.scan_parts(own).collect())], report.files)


def test_a_run_s_summary_is_that_of_the_events_it_wrote(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    for host, source, name in [("node-a", "kernel", "dmesg_T_edac_sbridge_ce_01.log"), ("node-a", "pipeline", "airflow_task_failed_01.log"),
                               ("node-b", "kubelet", "kubelet_e2e_framework_event_dump_evicted_jenkins_01.log")]:
        (root / host).mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / source / name, root / host / name)
    # Small files read together, a file read in byte ranges, and one in gzip.
    klog = "".join(f"I1201 03:{n // 60:02d}:{n % 60:02d}.000001    2345 kubelet.go:{n}] \"SyncLoop ADD\" pod=\"ns/p-{n}\"\n" for n in range(3000))
    (root / "node-b" / "kubelet.log").write_text(klog)
    (root / "node-a" / "kern.log.1.gz").write_bytes(gzip.compress((DATA / "kernel" / "dmesg_T_edac_sbridge_ce_01.log").read_bytes()))
    options = IngestOptions(batch_bytes=64 * 1024)
    first = rca.ingest(root, tmp_path / "store", options, workers=1)
    assert first.summary == _read_back(first)
    assert first.summary["events"] > 3000 and first.summary["hosts"] == ["node-a", "node-b"]
    # Appended lines: the next run's summary is of them alone.
    with (root / "node-b" / "kubelet.log").open("a") as log:
        log.write('E1201 05:00:00.000001    2345 kubelet.go:1] "Killing container with a grace period" pod="ns/p-1"\n')
    second = rca.ingest(root, tmp_path / "store", options, workers=1)
    assert second.summary == _read_back(second)
    assert second.summary["events"] == 1
