"""Correlation: dedup across sources, clock alignment, the NCCL root rule, evidence windows, stable ids, views."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import polars.testing
import pytest
from typer.testing import CliRunner

import rca
from rca import schema
from rca.cli import app
from rca.correlate import correlate, correlate_store, parse_window
from rca.ingest import IngestOptions, parse_text
from tests.conftest import FIXED_MTIME, at, event_frame, fixture_path

DATA = Path(__file__).parent / "data" / "correlate"
CID = "c" * 64
UID = "1b2c3d4e-0000-4000-8000-000000000001"


def samples(gpu: int, start: float, end: float, step: float = 10, host: str = "node-a") -> list[dict]:
    return [
        {"ts": at(t), "kind": "gpu_sample", "source": "nvidia_smi", "file": f"{host}/smi.csv", "line": 1000 + gpu * 1000 + i, "host": host,
         "gpu_index": gpu, "mem_used_bytes": 10**9, "mem_total_bytes": 8 * 10**10}
        for i, t in enumerate(range(int(start), int(end) + 1, int(step)))
    ]


def roles(result, incident_id: str) -> dict[str, str]:
    links = result.links.filter(pl.col("incident_id") == incident_id)
    return dict(zip(links["event_id"].to_list(), links["role"].to_list(), strict=True))


# --- dedup -----------------------------------------------------------------------------


def test_a_real_dataloader_worker_oom_kill_seen_by_the_kernel_and_the_trainer_is_one_incident(tmp_path: Path) -> None:
    # Captured on an H200 (datasets/captures/h200/capture4.sh): the kernel killed a DataLoader
    # worker (torch names it pt_data_worker) in the job's 4 GiB cgroup; the trainer reported it.
    rca.ingest(DATA / "h200_dataloader_worker_oom", tmp_path / "store", workers=1)
    store = rca.open_store(tmp_path / "store")
    correlate_store(store)
    (row,) = store.incidents().to_dicts()
    assert (row["anchor_kind"], row["host"], row["pid"], row["sources"]) == ("dataloader_killed", "gpu-node-7", 575, ["kernel", "pipeline"])
    assert row["start"] == datetime(2026, 12, 4, 18, 4, 46, 836254, tzinfo=UTC)  # the kernel's kill
    assert row["killed_rss_bytes"] == 2244092 * 1024
    anchors = store.incident_events().filter(pl.col("role") == "anchor").join(store.events(), on="event_id")
    assert sorted(anchors["kind"].to_list()) == ["dataloader_killed", "oom_kill"]
    assert anchors.filter(pl.col("kind") == "oom_kill")["process"].to_list() == ["pt_data_worker"]


def test_four_sources_of_one_failure_are_one_incident(tmp_path: Path) -> None:
    rca.ingest(DATA / "one_failure", tmp_path / "store", IngestOptions(year=2026), workers=1)
    store = rca.open_store(tmp_path / "store")
    report = correlate_store(store)
    incidents = store.incidents()
    assert report["incidents"] == incidents.height == 1
    row = incidents.row(0, named=True)
    assert row["anchor_kind"] == "cuda_oom"
    assert (row["host"], row["hosts"], row["pid"], row["pod"], row["namespace"], row["container"], row["gpu_index"]) == (
        "node-a", ["node-a"], 4242, "trainer-0", "ml", "trainer", 0
    )
    assert row["sources"] == ["kernel", "kubelet", "nvidia_smi", "pipeline"]
    assert (row["start"], row["end"]) == (at(0), at(9))
    anchors = store.incident_events().filter(pl.col("role") == "anchor").join(store.events(), on="event_id")
    assert sorted(anchors["kind"].to_list()) == ["container_oomkilled", "cuda_oom", "oom_kill", "process_killed"]
    assert anchors["file"].n_unique() == 4
    evidence = store.incident_events().filter(pl.col("role") == "evidence").join(store.events(), on="event_id")
    # The GPU 1 samples are not evidence: only GPU 0, where pid 4242 ran (known from compute-apps).
    assert set(evidence.filter(pl.col("kind") == "gpu_sample")["gpu_index"].to_list()) == {0}
    assert "oom_invoked" in evidence["kind"].to_list()
    assert "<NUM>" in row["signature"] and "4242" not in row["signature"]
    # Each event by its headline: the OOM report by its first line, not by the process table's header it ends with.
    assert "oom_invoked: python invoked oom-killer: gfp_mask=<HEX>(GFP_KERNEL)" in row["signature"].splitlines()[-1]
    correlate_store(store)  # a re-run over the same store: same ids, same rows
    polars.testing.assert_frame_equal(store.incidents(), incidents)


def test_sightings_of_different_pods_stay_apart() -> None:
    events = event_frame(
        {"ts": at(0), "kind": "container_oomkilled", "source": "kubelet", "pod": "a-0", "namespace": "ml", "container_id": "a" * 64,
         "pid": 2345, "process": "kubelet"},
        {"ts": at(20), "kind": "container_oomkilled", "source": "kubelet", "pod": "b-0", "namespace": "ml", "container_id": "b" * 64,
         "pid": 2345, "process": "kubelet"},
        {"ts": at(1), "kind": "oom_kill", "source": "kernel", "pid": 100, "container_id": "a" * 64},
    )
    result = correlate(events)
    assert sorted(result.incidents["pod"].to_list()) == ["a-0", "b-0"]
    assert sorted(result.incidents["n_anchors"].to_list()) == [1, 2]
    # the kubelet's own pid (2345) is the logger's, not an identity shared by the two pods
    assert result.incidents["pid"].to_list() == [100, None]


def test_a_traceback_copied_alone_with_no_host_or_time_is_an_incident(tmp_path: Path) -> None:
    # The 3 a.m. case: one training log pasted off a node, whose lines name no host and carry no time.
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(Path(__file__).parent / "data" / "pipeline" / "pytorch_cuda_oom_new_01.log", logs / "train.log")
    assert rca.ingest(logs, tmp_path / "store", workers=1).summary["files_without_host"] == 1
    store = rca.open_store(tmp_path / "store")
    report = correlate_store(store)
    (row,) = store.incidents().to_dicts()
    assert (row["anchor_kind"], row["host"], row["hosts"], row["start"]) == ("cuda_oom", None, [], None)
    assert report["incidents"] == 1 and store.incident_events()["host"].to_list() == [None]
    cli = CliRunner()
    table = cli.invoke(app, ["incidents", "--store", str(tmp_path / "store")], env={"COLUMNS": "250"})
    assert table.exit_code == 0 and row["incident_id"] in table.output
    explained = cli.invoke(app, ["explain", row["incident_id"], "--store", str(tmp_path / "store")], env={"COLUMNS": "250"})
    assert explained.exit_code == 0 and "cuda_oom on an unknown host at an unknown time" in explained.output
    assert "fragmentation: 9.3 GiB (51% of the cache) was reserved but unallocated" in explained.output  # read off the traceback


def test_files_of_no_known_host_are_each_correlated_alone() -> None:
    events = event_frame(
        # the same pid in two files of no known host: two machines' processes, not one
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "host": None, "file": "a/kern.log", "pid": 4242},
        {"ts": at(5), "kind": "process_killed", "source": "pipeline", "host": None, "file": "b/train.log", "pid": 4242},
        # within one such file, a process's exit 137 and its DataLoader's untimed report are one failure
        {"ts": at(900), "kind": "process_killed", "source": "pipeline", "host": None, "file": "c/train.log", "pid": 77, "exit_code": 137},
        {"ts": None, "ts_quality": "missing", "kind": "dataloader_killed", "source": "pipeline", "host": None, "file": "c/train.log", "pid": 77},
    )
    result = correlate(events)
    incidents = result.incidents.sort("start", "anchor_kind")
    assert incidents.select("anchor_kind", "n_anchors", "host").rows() == [
        ("oom_kill", 1, None), ("process_killed", 1, None), ("dataloader_killed", 2, None),
    ]
    assert result.links["host"].null_count() == result.links.height
    assert {row["host"] for row in result.report["alignment"] + result.report["inherited_times"]} <= {None}


def test_a_nodes_logs_copied_flat_into_one_folder_are_one_incident_on_the_node_kern_log_names(tmp_path: Path) -> None:
    # No DIR/<host>/ layout: only kern.log's lines name the node; the kubelet's, the trainer's and the CI's name none.
    flat = tmp_path / "flat"
    shutil.copytree(DATA / "one_failure" / "node-a", flat)
    rca.ingest(flat, tmp_path / "store", IngestOptions(year=2026), workers=1)
    store = rca.open_store(tmp_path / "store")
    report = correlate_store(store)
    (row,) = store.incidents().to_dicts()
    assert (row["anchor_kind"], row["host"], row["pid"], row["pod"], row["start"]) == ("cuda_oom", "node-a", 4242, "trainer-0", at(0))
    assert row["sources"] == ["kernel", "kubelet", "nvidia_smi", "pipeline"]
    assert {taken["file"] for taken in report["hosts_of_folders"]} >= {"train.log", "ci.log", "kubelet.log"}
    assert {taken["host"] for taken in report["hosts_of_folders"]} == {"node-a"}
    assert store.events().filter(pl.col("file") == "train.log")["host"].null_count() > 0  # the store keeps what the lines say


def test_a_nodes_var_log_copied_whole_puts_its_pod_logs_on_the_node_its_kern_log_names(tmp_path: Path) -> None:
    # `rca ingest ./node-a-varlog`: its kern.log names the node; pods/ and containers/ are kubelet's folders, not hosts, and
    # the pod log's folder names no host, so the nearest folder above that names one decides.
    varlog = tmp_path / "node-a-varlog"
    pod_log = varlog / "pods" / "ml_trainer-0_1b2c3d4e-0000-4000-8000-000000000001" / "trainer" / "0.log"  # the uid kern.log gives
    pod_log.parent.mkdir(parents=True)
    shutil.copy(DATA / "one_failure" / "node-a" / "kern.log", varlog / "kern.log")
    pod_log.write_text((DATA / "one_failure" / "node-a" / "train.log").read_text())
    rca.ingest(varlog, tmp_path / "store", IngestOptions(year=2026), workers=1)
    store = rca.open_store(tmp_path / "store")
    assert store.events().filter(pl.col("file").str.starts_with("pods/"))["host"].drop_nulls().is_empty()  # "pods" is no host
    report = correlate_store(store)
    assert report["hosts_of_folders"] == [{"file": str(pod_log.relative_to(varlog)), "host": "node-a"}]
    incident = store.incidents().filter(pl.col("anchor_kind") == "cuda_oom").row(0, named=True)
    assert (incident["host"], incident["namespace"], incident["pod"]) == ("node-a", "ml", "trainer-0")
    assert incident["sources"] == ["kernel", "pipeline"]


def test_a_folder_whose_files_name_several_hosts_puts_its_files_of_no_host_on_none() -> None:
    events = event_frame(
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "host": "gpu-node-3", "file": "node/kern.log", "pid": 4242},
        {"ts": at(2), "kind": "cuda_oom", "source": "pipeline", "host": None, "file": "node/train.log", "pid": 4242},
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "host": "gpu-node-4", "file": "mixed/a/kern.log", "pid": 99},
        {"ts": at(0), "kind": "log", "source": "kernel", "host": "gpu-node-4", "file": "mixed/kern-4.log"},
        {"ts": at(0), "kind": "log", "source": "kernel", "host": "gpu-node-5", "file": "mixed/kern-5.log"},
        {"ts": at(1), "kind": "process_killed", "source": "pipeline", "host": None, "file": "mixed/train.log", "pid": 99, "exit_code": 137},
    )
    result = correlate(events)
    assert result.report["hosts_of_folders"] == [{"file": "node/train.log", "host": "gpu-node-3"}]
    rows = result.incidents.sort("anchor_kind", "host", nulls_last=True).select("anchor_kind", "host", "n_anchors").rows()
    assert rows == [("cuda_oom", "gpu-node-3", 2), ("oom_kill", "gpu-node-4", 1), ("process_killed", None, 1)]


def test_anchor_without_identity_joins_the_nearest_failure_of_its_host() -> None:
    events = event_frame(
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "pid": 100},
        {"ts": at(600), "kind": "oom_kill", "source": "kernel", "pid": 200},
        {"ts": at(590), "kind": "process_killed", "source": "pipeline", "exit_code": 137, "file": "node-a/ci.log"},
        {"ts": at(5), "kind": "process_killed", "source": "pipeline", "exit_code": 137, "host": "node-b", "file": "node-b/ci.log"},
    )
    result = correlate(events)
    by_pid = {row["pid"]: row for row in result.incidents.to_dicts()}
    assert by_pid[200]["n_anchors"] == 2 and by_pid[100]["n_anchors"] == 1
    assert by_pid[None]["host"] == "node-b"


def test_far_apart_kills_of_one_pod_are_two_incidents() -> None:
    events = event_frame(
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "pid": 100, "pod_uid": UID},
        {"ts": at(3600), "kind": "oom_kill", "source": "kernel", "pid": 300, "pod_uid": UID},
    )
    assert correlate(events).incidents.height == 2


def test_fatal_xids_and_runtime_ooms_are_anchors_but_app_xids_are_not() -> None:
    events = event_frame(
        {"ts": at(0), "kind": "xid", "source": "kernel", "xid": 13, "severity": "error", "pci_bus": "0000:3b:00", "attrs": {"xid_resolution": "RESTART_APP"}},
        {"ts": at(100), "kind": "xid", "source": "kernel", "xid": 79, "severity": "critical", "pci_bus": "0000:3b:00"},
        {"ts": at(200), "kind": "xid", "source": "kernel", "xid": 46, "severity": "critical", "pci_bus": "0000:5d:00", "attrs": {"xid_resolution": "RESET_GPU"}},
        {"ts": at(900), "kind": "log", "source": "pipeline", "attrs": {"oom": "jvm_heap"}, "message": "java.lang.OutOfMemoryError: Java heap space"},
        {"ts": at(950), "kind": "log", "source": "pipeline", "attrs": {"oom": None}, "message": "fine"},
    )
    incidents = correlate(events).incidents
    assert incidents["anchor_kind"].to_list() == ["xid", "xid", "log"]
    assert incidents["xid_codes"].to_list()[:2] == [[13, 79], [13, 46, 79]]
    assert incidents["runtime_oom"].to_list() == [None, None, "jvm_heap"]


# --- clock alignment ---------------------------------------------------------------------


def _ingested(tmp_path: Path, files: dict[str, str]) -> rca.Store:
    for name, text in files.items():
        (tmp_path / "logs" / "node-a").mkdir(parents=True, exist_ok=True)
        (tmp_path / "logs" / "node-a" / name).write_text(text)
    rca.ingest(tmp_path / "logs", tmp_path / "store", IngestOptions(year=2026), workers=1)
    return rca.open_store(tmp_path / "store")


def test_dmesg_is_aligned_exactly_through_the_same_line_in_kern_log(tmp_path: Path) -> None:
    store = _ingested(tmp_path, {
        "dmesg.txt": (DATA / "aligned" / "dmesg.txt").read_text(),
        "kern.log": (DATA / "aligned" / "kern.log").read_text(),
    })
    report = correlate_store(store)
    rows = {row["file"]: row for row in report["alignment"]}
    assert rows["node-a/dmesg.txt"]["method"] == "kernel_line"
    assert rows["node-a/dmesg.txt"]["matches"] == 2
    assert rows["node-a/dmesg.txt"]["residual_skew_s"] == 0.0
    # kern.log's whole seconds leave the boot somewhere in one second: its middle is taken
    boot = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC) - timedelta(seconds=5.5) + timedelta(seconds=0.5)
    assert rows["node-a/dmesg.txt"]["boot_time"] == boot.isoformat()
    kill = store.incidents().row(0, named=True)
    assert kill["anchor_kind"] == "oom_kill" and kill["pid"] == 63214
    assert kill["start"] == boot + timedelta(seconds=7063.247407)
    link = store.incident_events().filter(pl.col("role") == "anchor").row(0, named=True)
    assert link["ts_quality"] == "boot_aligned"


def test_dmesg_is_aligned_by_the_same_kill_in_another_source_and_the_skew_is_reported() -> None:
    boot = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    events = event_frame(
        {"ts": None, "boot_seconds": 7063.25, "kind": "oom_kill", "source": "kernel", "pid": 4242, "file": "node-a/dmesg"},
        {"ts": None, "boot_seconds": 9000.0, "kind": "oom_kill", "source": "kernel", "pid": 5555, "file": "node-a/dmesg"},
        {"ts": None, "boot_seconds": 9500.0, "kind": "log", "source": "kernel", "file": "node-a/dmesg"},
        {"ts": boot + timedelta(seconds=7063.25 + 3), "kind": "process_killed", "source": "pipeline", "pid": 4242, "file": "node-a/ci1.log"},
        {"ts": boot + timedelta(seconds=9000.0 + 1), "kind": "dataloader_killed", "source": "pipeline", "pid": 5555, "file": "node-a/train.log"},
        # the same pid, reused a day later, must not pull the offset away
        {"ts": boot + timedelta(days=1), "kind": "process_killed", "source": "pipeline", "pid": 4242, "file": "node-a/ci2.log"},
    )
    result = correlate(events)
    (row,) = result.report["alignment"]
    assert (row["file"], row["method"], row["matches"]) == ("node-a/dmesg", "kill_match", 2)
    assert row["residual_skew_s"] == pytest.approx(1.0)
    assert row["boot_time"] == (boot + timedelta(seconds=2)).isoformat()
    assert result.report["events_without_time"] == 0
    assert result.incidents.height == 3
    assert result.incidents.filter(pl.col("pid") == 5555)["n_anchors"].to_list() == [2]


def test_events_without_any_time_are_kept_and_join_by_identity() -> None:
    events = event_frame(
        {"ts": None, "boot_seconds": 50.0, "kind": "oom_kill", "source": "kernel", "pid": 7, "pod_uid": UID, "file": "node-a/dmesg"},
        {"ts": None, "boot_seconds": 60.0, "kind": "log", "source": "kernel", "file": "node-a/dmesg"},
        {"ts": at(0), "kind": "eviction", "source": "k8s", "pod": "web-0", "pod_uid": UID},
    )
    result = correlate(events)
    assert result.report["events_without_time"] == 2
    assert result.report["alignment"][0]["method"] == "unaligned"
    (incident,) = result.incidents.to_dicts()
    assert incident["n_anchors"] == 2 and incident["start"] == at(0)
    assert result.links.filter(pl.col("ts").is_null())["event_id"].to_list() == ["node-a/dmesg:1:0"]


def test_boots_inside_one_file_are_aligned_separately() -> None:
    first, second = datetime(2026, 11, 30, 1, tzinfo=UTC), datetime(2026, 11, 30, 9, tzinfo=UTC)
    events = event_frame(
        {"ts": None, "boot_seconds": 100.0, "kind": "oom_kill", "source": "kernel", "pid": 11, "file": "node-a/dmesg"},
        {"ts": None, "boot_seconds": 20.0, "kind": "oom_kill", "source": "kernel", "pid": 22, "file": "node-a/dmesg"},
        {"ts": first + timedelta(seconds=100), "kind": "process_killed", "source": "pipeline", "pid": 11},
        {"ts": second + timedelta(seconds=20), "kind": "process_killed", "source": "pipeline", "pid": 22},
    )
    result = correlate(events)
    assert [(r["boot"], r["boot_time"]) for r in result.report["alignment"]] == [(0, first.isoformat()), (1, second.isoformat())]


def test_a_klog_year_that_disagrees_with_the_hosts_dated_logs_is_corrected() -> None:
    events = event_frame(
        {"ts": at(0) - timedelta(days=365), "ts_quality": "year_inferred", "kind": "container_oomkilled", "source": "kubelet",
         "file": "node-a/kubelet.log", "container_id": CID},
        {"ts": at(3), "kind": "process_killed", "source": "pipeline", "container_id": CID},
    )
    result = correlate(events)
    assert result.report["year_shifts"] == [{"host": "node-a", "file": "node-a/kubelet.log", "shifted_years": 1}]
    assert result.incidents.height == 1 and result.incidents["start"][0] == at(0)


def test_a_host_without_dated_logs_takes_its_year_from_the_other_hosts_when_they_agree() -> None:
    events = event_frame(
        {"ts": at(0) - timedelta(days=365), "ts_quality": "year_from_mtime", "kind": "oom_kill", "source": "kernel",
         "host": "node-b", "file": "node-b/kern.log"},
        {"ts": at(3), "kind": "process_killed", "source": "pipeline"},
        {"ts": at(86400 * 5), "kind": "log", "source": "pipeline"},
    )
    result = correlate(events)
    assert result.report["year_shifts"] == [{"host": "node-b", "file": "node-b/kern.log", "shifted_years": 1}]


def test_yearless_files_stay_put_when_the_dated_logs_span_years() -> None:
    """A folder of unrelated samples: their dated logs agree on no period, so no year is borrowed."""
    events = event_frame(
        {"ts": at(0) - timedelta(days=365), "ts_quality": "year_inferred", "kind": "oom_kill", "source": "kernel",
         "host": "node-b", "file": "node-b/kern.log"},
        {"ts": at(0) - timedelta(days=3 * 365), "kind": "log", "source": "pipeline", "host": "node-c"},
        {"ts": at(3), "kind": "log", "source": "pipeline", "host": "node-d"},
        {"ts": at(0) + timedelta(days=400), "kind": "log", "source": "pipeline", "host": "node-e"},
    )
    result = correlate(events)
    assert result.report["year_shifts"] == []
    assert result.incidents.filter(pl.col("anchor_kind") == "oom_kill")["start"].to_list() == [at(0) - timedelta(days=365)]


def test_files_of_no_known_host_do_not_take_each_others_year() -> None:
    cluster = [{"ts": at(60 * minute), "kind": "log", "source": "pipeline"} for minute in range(10)]
    events = event_frame(
        {"ts": at(0), "ts_quality": "year_from_mtime", "kind": "oom_kill", "source": "kernel", "host": None, "file": "kern.log"},
        {"ts": at(0) - timedelta(days=2 * 365), "kind": "log", "source": "pipeline", "host": None, "file": "train.log"},
        *cluster,
    )
    assert correlate(events).report["year_shifts"] == []


def test_an_untimed_crash_report_takes_the_time_of_the_kill_that_ended_it() -> None:
    events = event_frame(
        {"ts": at(-600), "kind": "log", "source": "pipeline", "file": "node-a/train.log", "line": 1, "message": "step 10"},
        {"ts": None, "ts_quality": "missing", "kind": "dataloader_killed", "source": "pipeline", "file": "node-a/train.log", "line": 2, "pid": 4242},
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "file": "node-a/kern.log", "line": 1, "pid": 4242},
        {"ts": at(-86400), "kind": "oom_kill", "source": "kernel", "file": "node-a/kern.log", "line": 0, "pid": 4242},  # the pid's earlier life
    )
    result = correlate(events)
    assert result.incidents.filter(pl.col("anchor_kind") == "dataloader_killed").select("start", "n_anchors").row(0) == (at(0), 2)
    assert result.report["inherited_times"] == [{"host": "node-a", "file": "node-a/train.log", "inherited": 1, "matched": 1, "untimed": 0}]
    link = result.links.filter(pl.col("kind") == "dataloader_killed").row(0, named=True)
    assert (link["ts"], link["ts_quality"]) == (at(0), "inherited")


def test_untimed_lines_take_their_neighbours_time() -> None:
    events = event_frame(
        {"ts": None, "ts_quality": "missing", "kind": "log", "source": "pipeline", "file": "node-a/app.log", "line": 1},
        {"ts": at(-300), "kind": "log", "source": "pipeline", "file": "node-a/app.log", "line": 2},
        {"ts": None, "ts_quality": "missing", "kind": "log", "source": "pipeline", "file": "node-a/app.log", "line": 3},
        {"ts": None, "ts_quality": "missing", "kind": "cuda_oom", "source": "pipeline", "file": "node-a/app.log", "line": 4, "gpu_index": 0},
        {"ts": at(2), "kind": "log", "source": "pipeline", "file": "node-a/app.log", "line": 5, "message": "launcher: rank 0 failed"},
    )
    result = correlate(events)
    # a plain line takes the time before it (the first line the one after); a crash report the time after it
    (incident,) = result.incidents.to_dicts()
    assert incident["start"] == at(2)
    assert result.report["inherited_times"][0] == {"host": "node-a", "file": "node-a/app.log", "inherited": 3, "matched": 0, "untimed": 0}
    assert dict(result.links.select("event_id", "ts").iter_rows())["node-a/app.log:3:0"] == at(-300)


def test_the_container_log_folder_names_the_pod() -> None:
    log = f"node-a/var/log/pods/ml_trainer-0_{UID}/trainer/0.log"
    events = event_frame(
        {"ts": at(0), "kind": "log", "source": "pipeline", "file": log, "line": 9, "attrs": {"oom": "jvm_metaspace"}},
        {"ts": at(480), "kind": "log", "source": "kubelet", "file": "node-a/kubelet.log", "line": 1, "pod": "trainer-0", "exit_code": 1,
         "attrs": {"pleg_event": "ContainerDied"}},
        {"ts": at(1500), "kind": "log", "source": "kubelet", "file": "node-a/kubelet.log", "line": 2, "pod": "trainer-0", "exit_code": 1},
    )
    result = correlate(events)
    (incident,) = result.incidents.to_dicts()
    assert (incident["pod"], incident["namespace"], incident["container"], incident["runtime_oom"]) == ("trainer-0", "ml", "trainer", "jvm_metaspace")
    # the container's death 8 minutes later belongs to the failure; one 25 minutes later does not
    assert roles(result, incident["incident_id"]) == {f"{log}:9:0": "anchor", "node-a/kubelet.log:1:0": "evidence"}


def test_a_remapped_row_is_a_precursor_not_a_failure() -> None:
    events = event_frame(
        {"ts": at(0), "kind": "xid", "source": "kernel", "xid": 63, "severity": "notice", "pci_bus": "0000:10:00", "attrs": {"xid_resolution": "IGNORE"}},
        {"ts": at(180), "kind": "xid", "source": "kernel", "xid": 94, "severity": "error", "pci_bus": "0000:10:00", "pid": 77},
        {"ts": at(181), "kind": "eviction", "source": "kubelet", "pod": "web-0"},
        {"ts": at(182), "kind": "container_oomkilled", "source": "kubelet", "pod": "web-0"},
    )
    incidents = correlate(events).incidents
    assert incidents.select("start", "anchor_kind", "xid_codes").to_dicts() == [
        {"start": at(180), "anchor_kind": "xid", "xid_codes": [63, 94]},
        {"start": at(181), "anchor_kind": "eviction", "xid_codes": [63, 94]},  # the eviction explains the container kill
    ]


# --- multi-host NCCL ---------------------------------------------------------------------


def test_nccl_timeouts_on_other_hosts_belong_to_the_first_failure() -> None:
    timeout = {"timeout_ms": 600000, "rank": 1}
    events = event_frame(
        {"ts": at(0), "kind": "cuda_oom", "source": "pipeline", "host": "node-a", "gpu_index": 3},
        {"ts": at(540), "kind": "oom_kill", "source": "kernel", "host": "node-d", "pid": 9},  # unrelated, later
        {"ts": at(603), "kind": "nccl_timeout", "source": "pipeline", "host": "node-b", "attrs": timeout},
        {"ts": at(603.5), "kind": "nccl_timeout", "source": "pipeline", "host": "node-b", "attrs": timeout, "file": "node-b/rank2.log"},
        {"ts": at(604), "kind": "nccl_timeout", "source": "pipeline", "host": "node-c", "attrs": timeout},
    )
    incidents = correlate(events).incidents
    assert incidents.height == 2
    root = incidents.filter(pl.col("host") == "node-a").row(0, named=True)
    assert (root["hosts"], root["anchor_kind"], root["n_anchors"], root["start"], root["end"]) == (
        ["node-a", "node-b", "node-c"], "cuda_oom", 4, at(0), at(604)
    )


def test_nccl_timeouts_without_a_timeout_value_join_the_latest_failure_before_them() -> None:
    events = event_frame(
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "host": "node-a", "pid": 1},
        {"ts": at(300), "kind": "nccl_timeout", "source": "pipeline", "host": "node-b"},
        {"ts": at(7200), "kind": "nccl_timeout", "source": "pipeline", "host": "node-b"},
        {"ts": at(7201), "kind": "nccl_timeout", "source": "pipeline", "host": "node-c"},
    )
    incidents = correlate(events).incidents
    assert incidents.select("host", "hosts").to_dicts() == [
        {"host": "node-a", "hosts": ["node-a", "node-b"]},
        {"host": "node-b", "hosts": ["node-b", "node-c"]},
    ]


# --- evidence, context, ids ---------------------------------------------------------------


def test_evidence_is_the_same_gpu_within_the_window_and_context_the_rest_of_the_host() -> None:
    events = event_frame(
        *samples(0, -1200, 120),
        *samples(1, -300, 0),
        {"ts": at(-100), "kind": "memory_pressure", "source": "kubelet", "severity": "warning", "file": "node-a/kubelet.log", "line": 1},
        {"ts": at(-50), "kind": "memory_pressure", "source": "kubelet", "severity": "warning", "host": "node-b", "file": "node-b/kubelet.log", "line": 1},
        {"ts": at(-60), "kind": "log", "source": "pipeline", "file": "node-a/train.log", "line": 1, "message": "step 10"},
        {"ts": at(-60), "kind": "log", "source": "pipeline", "file": "node-a/other.log", "line": 1, "message": "unrelated"},
        {"ts": at(0), "kind": "cuda_oom", "source": "pipeline", "file": "node-a/train.log", "line": 2, "gpu_index": 0},
    )
    result = correlate(events)
    (incident_id,) = result.incidents["incident_id"].to_list()
    linked = roles(result, incident_id)
    gpu0 = {e for e in linked if e.startswith("node-a/smi.csv:") and int(e.split(":")[1]) < 2000}
    expected_gpu0 = {f"node-a/smi.csv:{1000 + i}:0" for i, t in enumerate(range(-1200, 121, 10)) if -900 <= t <= 120}
    assert gpu0 == expected_gpu0
    assert not any(e.startswith("node-a/smi.csv:2") for e in linked)  # GPU 1 is another device
    assert linked["node-a/train.log:1:0"] == "evidence"  # the training steps before the OOM
    assert linked["node-a/kubelet.log:1:0"] == "context"
    assert "node-a/other.log:1:0" not in linked and "node-b/kubelet.log:1:0" not in linked
    assert result.incidents["gpu_mem_peak_pct"][0] == pytest.approx(1.25)


def test_window_option_widens_the_evidence() -> None:
    events = event_frame(*samples(0, -1800, 0, step=60), {"ts": at(0), "kind": "cuda_oom", "source": "pipeline", "gpu_index": 0})
    narrow = correlate(events).links.filter(pl.col("kind") == "gpu_sample").height
    wide = correlate(events, window=parse_window("30m")).links.filter(pl.col("kind") == "gpu_sample").height
    assert (narrow, wide) == (16, 31)


def test_incident_ids_are_stable_across_runs_and_input_order(tmp_path: Path) -> None:
    events = event_frame(
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "pid": 1},
        {"ts": at(5000), "kind": "cuda_oom", "source": "pipeline", "gpu_index": 2, "host": "node-b"},
        {"ts": at(5600), "kind": "nccl_timeout", "source": "pipeline", "host": "node-c"},
    )
    first = correlate(events)
    again = correlate(events.sample(fraction=1.0, shuffle=True, seed=3))
    assert first.incidents["incident_id"].to_list() == again.incidents["incident_id"].to_list()
    assert first.incidents["incident_id"].str.contains(r"^inc-[0-9a-f]{12}$").all()
    pl.testing.assert_frame_equal(first.links, again.links)


def test_parse_window() -> None:
    assert [parse_window(t) for t in ("15m", "90s", "1h30m", "2h", "10")] == [
        timedelta(minutes=15), timedelta(seconds=90), timedelta(minutes=90), timedelta(hours=2), timedelta(minutes=10)
    ]
    with pytest.raises(ValueError, match="not a duration"):
        parse_window("soon")


def test_no_events_gives_no_incidents() -> None:
    result = correlate(schema.empty(schema.EVENT_SCHEMA))
    schema.validate(result.incidents, schema.INCIDENT_SCHEMA, "incidents")
    schema.validate(result.links, schema.INCIDENT_EVENTS_SCHEMA, "links")
    assert result.incidents.height == 0 and result.report["incidents"] == 0


def test_parsed_real_lines_correlate(tmp_path: Path) -> None:
    """Real-format snippets through the parsers: a CUDA OOM and the DataLoader death of its worker."""
    train = parse_text(
        "2026-11-30 12:00:00,000 ERROR DataLoader worker (pid 4242) is killed by signal: Killed.\n", file="node-a/train.log", host="node-a",
        format="pipeline",
    )
    kernel = parse_text(
        "Nov 30 11:59:59 node-a kernel: [ 7063.100300] Out of memory: Killed process 4242 (pt_data_worker) total-vm:8000000kB, "
        "anon-rss:4000000kB, file-rss:100kB, shmem-rss:0kB, UID:0 pgtables:9000kB oom_score_adj:0\n",
        file="node-a/kern.log", host="node-a", year=2026, format="kernel",
    )
    incidents = correlate(pl.concat([train, kernel])).incidents
    assert incidents.select("anchor_kind", "pid", "n_anchors", "oom_constraint").to_dicts() == [
        {"anchor_kind": "dataloader_killed", "pid": 4242, "n_anchors": 2, "oom_constraint": "system"}
    ]


def test_generated_corpus_incidents_are_found_once_each_with_their_evidence(tmp_path: Path) -> None:
    """End to end on a small generated corpus: every injected incident found once, its injected lines linked to it."""
    from rca import datasets, evaluate

    datasets.generate(tmp_path / "corpus", seed=2, days=2, hosts=4, incidents_per_mode=2, size="3MB")
    rca.ingest(tmp_path / "corpus" / "logs", tmp_path / "store", workers=2)
    store = rca.open_store(tmp_path / "store")
    correlate_store(store)
    incidents, truth = store.incidents(), evaluate.load_truth(tmp_path / "corpus" / "ground_truth.csv")
    scores = evaluate.score(incidents, truth)
    assert scores.recall >= 0.95 and scores.precision >= 0.95, scores.unmatched_truth
    pairs = evaluate.match(incidents, truth).select(
        incident_key=pl.col("truth_row").replace_strict(dict(enumerate(truth["incident_key"]))),
        incident_id=pl.col("incident_row").replace_strict(dict(enumerate(incidents["incident_id"]))),
    )
    injected = (
        pl.read_ndjson(tmp_path / "corpus" / "evidence.jsonl", infer_schema_length=None)
        .with_columns(pl.col("file").str.strip_prefix("logs/"))
        .join(pairs, on="incident_key")
        .with_row_index("injected")
    )
    spans = store.events().select("event_id", "file", first=pl.col("line"), last=pl.col("line") + pl.col("n_lines").clip(1) - 1)
    linked = store.incident_events().join(spans, on="event_id")
    hits = injected.join(linked, on=["incident_id", "file"]).filter(pl.col("line").is_between(pl.col("first"), pl.col("last")))
    failures = injected.filter(pl.col("kind").is_in(["oom_kill", "cuda_oom", "dataloader_killed", "shm_error", "nccl_timeout", "xid"]))
    anchored = hits.filter(pl.col("role") == "anchor")["injected"].unique()
    assert failures["injected"].is_in(anchored.implode()).all()
    assert hits["injected"].n_unique() >= 0.9 * injected.height


# --- views ---------------------------------------------------------------------------------


@pytest.fixture
def correlated_store(tmp_path: Path) -> Path:
    shutil.copytree(DATA / "one_failure", tmp_path / "logs")
    rca.ingest(tmp_path / "logs", tmp_path / "store", IngestOptions(year=2026), workers=1)
    return tmp_path / "store"


runner = CliRunner()


def test_cli_correlate_incidents_and_timeline(correlated_store: Path) -> None:
    result = runner.invoke(app, ["correlate", "--store", str(correlated_store), "--window", "20m", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["incidents"] == 1
    listed = runner.invoke(app, ["incidents", "--store", str(correlated_store), "--kind", "cuda_oom", "--json"], env={"COLUMNS": "200"})
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["pod"] == "trainer-0"
    none = runner.invoke(app, ["incidents", "--store", str(correlated_store), "--host", "node-z", "--json"])
    assert none.exit_code == 0 and none.stdout == ""
    table = runner.invoke(app, ["incidents", "--store", str(correlated_store)], env={"COLUMNS": "250"})
    assert row["incident_id"] in table.stdout and "frag 8%" in table.stdout
    drawn = runner.invoke(app, ["timeline", row["incident_id"], "--store", str(correlated_store)], env={"COLUMNS": "200"})
    assert drawn.exit_code == 0, drawn.output
    lanes = [line.split()[0] for line in drawn.stdout.splitlines() if "▲" in line or "●" in line][:4]
    assert lanes == ["kernel", "kubelet", "nvidia_smi", "pipeline"]
    assert "+00:00" in drawn.stdout and "-01:00" in drawn.stdout  # relative to the first anchor
    window = runner.invoke(app, ["timeline", "--host", "node-a", "--since", "2026-11-30T11:59:00", "--until", "2026-11-30T12:01:00",
                                 "--store", str(correlated_store)], env={"COLUMNS": "200"})
    assert window.exit_code == 0 and "Container exited" in window.stdout
    missing = runner.invoke(app, ["timeline", "inc-000000000000", "--store", str(correlated_store)])
    assert missing.exit_code == 2 and "no incident" in missing.output


def test_cli_export_timesketch_csv_and_parquet(correlated_store: Path, tmp_path: Path) -> None:
    runner.invoke(app, ["correlate", "--store", str(correlated_store)])
    jsonl = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["export", "--store", str(correlated_store), "--format", "timesketch", "--out", str(jsonl)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert {"message", "datetime", "timestamp_desc", "timestamp", "incident_id", "role", "host", "source", "kind"} <= set(rows[0])
    assert rows[0]["datetime"] == "2026-11-30T11:59:00.000000+00:00"
    assert sum(r["role"] == "anchor" for r in rows) == 4
    sketch_csv = tmp_path / "out.csv"
    runner.invoke(app, ["export", "--store", str(correlated_store), "--out", str(sketch_csv)])
    assert pl.read_csv(sketch_csv).columns[:4] == ["message", "datetime", "timestamp", "timestamp_desc"]
    parquet = tmp_path / "out.parquet"
    runner.invoke(app, ["export", "--store", str(correlated_store), "--format", "parquet", "--out", str(parquet)])
    assert pl.read_parquet(parquet).height == len(rows)
    plain = tmp_path / "plain.csv"
    runner.invoke(app, ["export", "--store", str(correlated_store), "--format", "csv", "--out", str(plain)])
    assert pl.read_csv(plain)["ts"][0] == "2026-11-30T11:59:00.000000Z"
    bad = runner.invoke(app, ["export", "--store", str(correlated_store), "--format", "xml", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2


_BOOT = datetime(2026, 11, 30, 9, 58, 0, 400000, tzinfo=UTC)
_KERNEL_MESSAGES = [  # (boot seconds, message) of one boot
    (0.0, "Linux version 6.8.0-1015-nvidia (buildd@lcy02-amd64-089) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0) #16-Ubuntu SMP"),
    (2.104511, "nvidia: loading out-of-tree module taints kernel."),
    (2.311902, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024"),
    (1811.52, "mlx5_core 0000:0c:00.0: Port module event: module 0, Cable plugged"),
    (3620.118204, "NVRM: Xid (PCI:0000:3b:00): 79, pid=2207, name=python3, GPU has fallen off the bus."),
]


def _raw_dmesg(messages: list[tuple[float, str]]) -> str:
    return "".join(f"[{seconds:12.6f}] {message}\n" for seconds, message in messages)


def _dmesg_t(boot: datetime, messages: list[tuple[float, str]]) -> str:
    return "".join(f"[{(boot + timedelta(seconds=s)).strftime('%a %b %e %H:%M:%S %Y')}] {m}\n" for s, m in messages)


def test_dmesg_is_aligned_through_the_same_messages_in_dmesg_minus_t(tmp_path: Path) -> None:
    store = _ingested(tmp_path, {"dmesg.txt": _raw_dmesg(_KERNEL_MESSAGES), "dmesg-T.txt": _dmesg_t(_BOOT, _KERNEL_MESSAGES)})
    (row,) = [row for row in correlate_store(store)["alignment"] if row["file"] == "node-a/dmesg.txt"]
    assert (row["method"], row["matches"]) == ("kernel_message", 5)
    # dmesg -T writes whole seconds: each match puts the boot within one second, their median closer
    assert abs(datetime.fromisoformat(row["boot_time"]) - _BOOT) < timedelta(seconds=0.5)
    xid = store.incident_events().filter((pl.col("role") == "anchor") & (pl.col("ts_quality") == "boot_aligned")).row(0, named=True)
    assert abs(xid["ts"] - (_BOOT + timedelta(seconds=3620.118204))) < timedelta(seconds=0.5)


def test_a_previous_boots_kernel_log_does_not_date_this_boots_dmesg(tmp_path: Path) -> None:
    # Boot messages read alike in every boot; only this boot's later messages could date it.
    previous = [*_KERNEL_MESSAGES[:3], (5000.0, "EXT4-fs (nvme0n1p1): re-mounted. Quota mode: none.")]
    store = _ingested(tmp_path, {
        "dmesg.txt": _raw_dmesg(_KERNEL_MESSAGES),
        "kern-previous-boot.txt": _dmesg_t(_BOOT - timedelta(days=2), previous),
    })
    (row,) = [row for row in correlate_store(store)["alignment"] if row["file"] == "node-a/dmesg.txt"]
    assert row["method"] == "unaligned"


def test_a_rank_torchrun_stopped_after_another_failed_is_not_an_incident_of_its_own() -> None:
    events = event_frame(
        {"ts": at(0), "kind": "process_killed", "source": "pipeline", "pid": 679, "exit_code": -9,
         "attrs": {"signal": "SIGKILL", "rank": 1, "local_rank": 1, "root_cause": True}},
        {"ts": at(0), "kind": "process_killed", "source": "pipeline", "pid": 678, "exit_code": -15, "severity": "warning",
         "attrs": {"signal": "SIGTERM", "rank": 0, "local_rank": 0, "root_cause": False}},
        # a rank that failed on its own is one, whatever the table calls the root cause
        {"ts": at(1), "kind": "process_killed", "source": "pipeline", "pid": 680, "exit_code": -9,
         "attrs": {"signal": "SIGKILL", "rank": 2, "local_rank": 2, "root_cause": False}},
    )
    result = correlate(events)
    anchors = result.links.filter(pl.col("role") == "anchor")
    assert sorted(result.incidents["pid"].to_list()) == [679, 680]
    assert 678 not in anchors.join(events.select("event_id", "pid"), on="event_id")["pid"].to_list()


def test_kills_of_one_out_of_memory_condition_moments_apart_are_one_incident() -> None:
    # docker/for-linux#1001: one container's four python3 workers killed within 33 ms, no cgroup printed.
    events = parse_text(fixture_path("kern_log_oom_cgroup_01.log").read_text(), file="node-a/kern.log", reference_time=FIXED_MTIME)
    incidents = correlate(events.with_columns(host=pl.lit("node-a"))).incidents
    assert incidents.select("n_anchors", "pid").rows() == [(4, 15617)]


def test_kills_under_different_limits_or_far_apart_stay_apart() -> None:
    memcg = {"constraint": "CONSTRAINT_MEMCG"}
    events = event_frame(
        # two containers' own limits, the same second
        {"ts": at(0), "kind": "oom_kill", "source": "kernel", "pid": 100, "process": "python", "attrs": {**memcg, "oom_memcg": "/kubepods/pod-a"}},
        {"ts": at(0.5), "kind": "oom_kill", "source": "kernel", "pid": 200, "process": "python", "attrs": {**memcg, "oom_memcg": "/kubepods/pod-b"}},
        # no cgroup known: different programs under memory cgroups
        {"ts": at(100), "kind": "oom_kill", "source": "kernel", "pid": 300, "process": "java", "attrs": memcg},
        {"ts": at(101), "kind": "oom_kill", "source": "kernel", "pid": 400, "process": "python", "attrs": memcg},
        # the node out of memory: its biggest processes in turn are one failure
        {"ts": at(200), "kind": "oom_kill", "source": "kernel", "pid": 500, "process": "python", "attrs": {"constraint": "CONSTRAINT_NONE"}},
        {"ts": at(202), "kind": "oom_kill", "source": "kernel", "pid": 600, "process": "java", "attrs": {"constraint": "CONSTRAINT_NONE"}},
        {"ts": at(300), "kind": "oom_kill", "source": "kernel", "pid": 700, "process": "java", "attrs": {"constraint": "CONSTRAINT_NONE"}},
        # the same pod's limit (named by the memcg), two of its containers
        {"ts": at(400), "kind": "oom_kill", "source": "kernel", "pid": 800, "container_id": "a" * 64, "attrs": {**memcg, "oom_memcg": "/kubepods/pod-c"}},
        {"ts": at(401), "kind": "oom_kill", "source": "kernel", "pid": 900, "container_id": "b" * 64, "attrs": {**memcg, "oom_memcg": "/kubepods/pod-c"}},
    )
    incidents = correlate(events).incidents.sort("start")
    assert incidents["n_anchors"].to_list() == [1, 1, 1, 1, 2, 1, 2]
