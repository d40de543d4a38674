"""Pipeline source: NCCL's RAS report (2.24+, `ncclras`), Ray's pre-2.0 RayOutOfMemoryError, a bare DeepSpeed launcher line."""

from __future__ import annotations

import json

import polars as pl

from tests.test_source_pipeline import _parse, events_of


def _row(events: pl.DataFrame, line: int) -> dict:
    row = events.filter(pl.col("line") == line).row(0, named=True)
    row["attrs"] = json.loads(row["attrs"]) if row["attrs"] else {}
    return row


def _facts(row: dict) -> tuple:
    return row["kind"], row["severity"], row["pid"], row["gpu_index"], row["attrs"]


def test_ras_mismatch_report_names_each_outlier_rank_its_gpu_process_and_node() -> None:
    # NVIDIA/nccl#1911: 30 ranks launched up to AllGather 640, ranks 12 and 13 up to 641.
    events = events_of("nccl_ras_mismatch_rank_gpu_process_node_01.log")
    assert _facts(_row(events, 24)) == ("log", "warning", None, None, {"ras_finding": "MISMATCH", "comm_hash": "fa93daea854b060b"})
    assert _facts(_row(events, 28)) == ("log", "warning", 323032, 4, {"rank": 12, "node_ip": "10.137.190.124"})
    assert _facts(_row(events, 29)) == ("log", "warning", 323033, 5, {"rank": 13, "node_ip": "10.137.190.124"})
    # the counts, the summary table and the section titles are what they were: plain lines
    for line in (1, 4, 9, 16, 18, 21, 25, 26, 27):
        assert _facts(_row(events, line)) == ("log", None, None, None, {}), line


def test_ras_report_that_finds_nothing_leaves_torchs_watchdog_lines_as_they_are() -> None:
    # NVIDIA/nccl#1730: RAS said RUNNING OK while PyTorch's watchdog timed out on rank 118.
    events = events_of("nccl_ras_report_ok_then_torch_watchdog_timeout_01.log")
    assert _facts(_row(events, 16)) == ("log", None, None, None, {})
    timeout = _row(events, 24)
    assert (timeout["kind"], timeout["severity"]) == ("nccl_timeout", "error")
    assert (timeout["attrs"]["rank"], timeout["attrs"]["seq"]) == (118, 2398459)
    assert _row(events, 25)["attrs"]["failed_seq"] == 2398459
    assert events.filter(pl.col("kind") != "log").height == 1


def test_ras_detail_line_shapes() -> None:
    # each line as NCCL's client_support.cc prints it (rasOutAppend's formats), under its finding
    text = "\n".join([
        "#0-1 (00a1b2c3d4e5f607) ERROR",
        "  Asynchronous error on 1 rank",
        "  Rank 3 reported Remote process error -- GPU 1 (NVML 5) managed by process 4242 on node 10.0.0.2",
        "#0-2 (00a1b2c3d4e5f608) MISMATCH",
        "  Communicator ranks have different status",
        "  Rank 7 has status ABORT -- GPU 7 managed by process 4250 on node fe80::1",
        "  Rank 5 has launched up to operation 641 -- GPU 5 managed by process 4248 on node 10.0.0.3",
        "  Rank 6 has not launched any operations -- GPU 6 managed by process 4249 on node 10.0.0.3",
        "  Rank 9 -- [process information not found]",
        "#0-3 (00a1b2c3d4e5f609) INCOMPLETE",
        "  Missing communicator data from 2 ranks",
        "DEAD",
        "  2 job processes are considered dead (unreachable via the RAS network)",
        "  Process 4300 on node 10.0.0.4 managing GPU 3",
        "  Process 4301 on node 10.0.0.4 managing GPUs 0,1",
    ])
    events = _parse(text)[0]
    assert _facts(_row(events, 1)) == ("log", "error", None, None, {"ras_finding": "ERROR", "comm_hash": "00a1b2c3d4e5f607"})
    assert _facts(_row(events, 3)) == (
        "log", "error", 4242, 1, {"rank": 3, "node_ip": "10.0.0.2", "nccl_error": "Remote process error"}
    )
    assert _facts(_row(events, 6)) == ("log", "warning", 4250, 7, {"rank": 7, "node_ip": "fe80::1", "ras_status": "ABORT"})
    assert _facts(_row(events, 7)) == ("log", "warning", 4248, 5, {"rank": 5, "node_ip": "10.0.0.3", "ras_last_op": 641})
    assert _facts(_row(events, 8)) == ("log", "warning", 4249, 6, {"rank": 6, "node_ip": "10.0.0.3"})
    assert _facts(_row(events, 9)) == ("log", "warning", None, None, {"rank": 9})
    assert _facts(_row(events, 10))[:2] == ("log", "warning")
    assert _facts(_row(events, 11)) == ("log", "warning", None, None, {})
    assert _facts(_row(events, 13)) == ("log", "error", None, None, {"ras_finding": "DEAD"})
    assert _facts(_row(events, 14)) == ("log", "warning", 4300, 3, {"node_ip": "10.0.0.4"})
    # a process managing two GPUs names no one device
    assert _facts(_row(events, 15)) == ("log", "warning", 4301, None, {"node_ip": "10.0.0.4"})
    # the plain lines of the report stay plain
    for line in (2, 4, 5, 12):
        assert _row(events, line)["kind"] == "log"
    assert _row(events, 12)["severity"] is None


def test_lines_that_only_look_like_ras_lines_are_left_alone() -> None:
    text = "\n".join([
        "Rank 3 -- GPU 1 managed by process 4242 on node 10.0.0.2",  # not indented: no RAS report line
        "  Rank 3 -- GPU 1 is busy",
        "Process 4300 on node n1 managing GPU 3",
        "#1 (abc) ERROR",
    ])
    events = _parse(text)[0]
    for line in range(1, 5):
        assert _facts(_row(events, line)) == ("log", None, None, None, {}), line


def test_legacy_ray_out_of_memory_error_carries_the_nodes_memory() -> None:
    # Ray 0.8/1.0: Tune's RayTaskError(RayOutOfMemoryError) traceback, the task's pid in its header.
    events = events_of("ray_tune_task_error_legacy_ray_out_of_memory_error_01.log")
    row = _row(events, 2)
    assert (row["kind"], row["severity"], row["n_lines"], row["pid"]) == ("traceback", "error", 12, 11474)
    assert (row["mem_used_bytes"], row["mem_total_bytes"]) == (round(30.47 * 1024**3), round(31.3 * 1024**3))
    assert (row["attrs"]["exc_type"], row["attrs"]["oom"]) == ("ray.memory_monitor.RayOutOfMemoryError", "ray_memory_monitor")
    # the top-consumers table under it stays lines of their own
    assert _row(events, 16)["kind"] == "log"


def test_legacy_ray_out_of_memory_error_line_alone_and_without_figures() -> None:
    text = "\n".join([
        "ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node newton is used (60.21 / 63.32 GB)."
        " The top 5 memory consumers are:",
        "You may run into errors such as `RayOutOfMemoryError: More than 95% of the memory on node rayvens-cluster-head-xxxxx is used`.",
    ])
    events = _parse(text)[0]
    alone = _row(events, 1)
    assert (alone["kind"], alone["severity"], alone["attrs"]["oom"]) == ("log", "critical", "ray_memory_monitor")
    assert (alone["mem_used_bytes"], alone["mem_total_bytes"]) == (round(60.21 * 1024**3), round(63.32 * 1024**3))
    mention = _row(events, 2)
    assert (mention["mem_used_bytes"], mention["mem_total_bytes"], mention["attrs"].get("oom")) == (None, None, None)


def test_deepspeed_launcher_line_with_a_bare_prefix_is_the_ranks_kill() -> None:
    events = events_of("pytorch_deepspeed_launcher_bare_prefix_return_code_minus7_sigbus_01.log")
    row = _row(events, 1)
    assert (row["kind"], row["severity"], row["exit_code"]) == ("process_killed", "error", -7)
    assert row["attrs"] == {"rank": 7, "signal": "SIGBUS"}
