"""PyTorch's torch._logging glog-style lines (torchrun's and torch.distributed's log since 2.4) in the pipeline source."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

import rca
from rca import sources

REFERENCE = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
AGENT_LINES = [
    "W0227 10:15:01.123000 4242 torch/distributed/run.py:793] *****************************************",
    "W0227 10:17:45.700000 4242 torch/distributed/elastic/agent/server/api.py:719] Received 15 death signal, shutting down workers",
    "E0227 10:17:45.789000 4242 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 4322) of binary: /usr/bin/python",
    "[rank3]:E0227 10:17:44.100000 4325 torch/distributed/distributed_c10d.py:100] store timed out",
    "V0227 10:17:46.000000 4242 torch/_dynamo/convert_frame.py:1000] skipping a frame",
    "C0227 10:17:47.000000 4242 torch/distributed/run.py:800] giving up",
]


def _events(lines: list[str]) -> pl.DataFrame:
    return rca.parse_text("\n".join(lines) + "\n", file="agent.log", reference_time=REFERENCE).sort("line")


def test_a_head_of_torch_glog_lines_alone_is_the_pipelines() -> None:
    source, score = sources.sniff(AGENT_LINES[:2])
    assert source is not None and source.name == "pipeline" and score >= 0.5


def test_klog_lines_naming_go_files_are_not_claimed_by_the_torch_marker() -> None:
    klog = ['I0227 10:15:01.123456    4242 kubelet.go:2404] "SyncLoop ADD" source="api" pods=["default/pod-1"]'] * 3
    source, _ = sources.sniff(klog)
    assert source is not None and source.name == "kubelet"


def test_each_line_has_its_time_with_the_year_inferred_and_its_letters_severity() -> None:
    events = _events(AGENT_LINES)
    assert events["ts"].to_list()[0] == datetime(2025, 2, 27, 10, 15, 1, 123000, tzinfo=UTC)
    assert events["severity"].to_list() == ["warning", "warning", "error", "error", "debug", "critical"]


def test_the_number_is_the_loggers_pid_unless_the_line_names_another() -> None:
    assert _events(AGENT_LINES)["pid"].to_list() == [4242, 4242, 4322, 4325, 4242, 4242]


def test_torch_2_4s_thread_id_is_no_pid() -> None:
    line = "W0219 09:17:03.837000 140066961602368 torch/distributed/elastic/agent/server/api.py:719] Received 15 death signal, shutting down workers"
    assert _events([line])["pid"].to_list() == [None]


def test_a_glog_line_of_a_cc_file_keeps_its_number_out_of_the_pid() -> None:
    # (glog's C++ number is the thread's id: only torch's Python module lines give a pid)
    line = "E0227 10:17:45.789000 4242 tensorflow/core/common_runtime/bfc_allocator.cc:1101] Allocator ran out of memory"
    assert _events([line])["pid"].to_list() == [None]


def test_the_rank_prefix_still_gives_the_rank() -> None:
    events = _events(AGENT_LINES).filter(pl.col("line") == 4)
    assert events["attrs"].str.json_path_match("$.rank").to_list() == ["3"]
