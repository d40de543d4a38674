"""Error lines of the GPU stack that print no level of their own: PyTorch's THC CUDA check, nccl-tests' failure checks,
the driver container's installer, nv-hostengine as dcgm-exporter 1.x's script starts it, and the level a program run by a
daemon (kmod's rmmod) or the daemon's own uptime-stamped line (bumblebeed) names in the journal."""

from __future__ import annotations

import json

import polars as pl

from tests.conftest import parse_fixture, parse_log


def _rows(events: pl.DataFrame, *columns: str) -> dict[int, tuple]:
    return {row[0]: row[1:] for row in events.sort("line").select("line", *columns).rows()}


def _attrs(events: pl.DataFrame, line: int) -> dict:
    text = events.filter(pl.col("line") == line)["attrs"].item()
    return json.loads(text) if text else {}


def test_thc_check_is_a_cuda_error_up_to_the_terminal_padding() -> None:
    events = parse_fixture("pytorch_thc_unspecified_launch_failure_py27_01.log")
    assert _rows(events, "kind", "severity", "n_lines") == {
        1: ("log", "error", 1), 2: ("log", "error", 1), 3: ("traceback", "error", 5),
    }
    # the paste keeps a terminal's border ("       x") after the runtime's text
    assert _attrs(events, 1) == {"cuda_error": "unspecified launch failure"}
    assert _attrs(events, 2) == {"cuda_error": "unspecified launch failure"}


def test_thc_check_shapes() -> None:
    events = parse_log(
        "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1502009910772/work/torch/lib/THC/generic/THCStorage.c line=32 error=4 : unspecified launch failure\n"
        "THCudaCheck FAIL file=..\\aten\\src\\THC\\THCGeneral.cpp line=87 error=30 : unknown error\n"
        "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
        "THCudaCheck warning: the check failed earlier\n"
    )
    assert _rows(events, "kind", "severity") == {
        1: ("log", "error"), 2: ("log", "error"), 3: ("cuda_oom", "error"), 4: ("log", None),
    }
    assert _attrs(events, 1)["cuda_error"] == "unspecified launch failure"
    assert _attrs(events, 2)["cuda_error"] == "unknown error"
    assert "cuda_error" not in _attrs(events, 3)  # an OOM is its kind, not a cuda_error
    assert _attrs(events, 4) == {}


def test_nccl_tests_failure_checks() -> None:
    events = parse_fixture("nccl_tests_ib_error12_illegal_access_01.log")
    rows = _rows(events, "format", "severity", "host")
    assert rows[13] == ("nccl", "warning", "gpu5")  # NCCL's own WARN stays a warning
    # nccl-tests' check: an error; "gpu5:" is no host the pipeline reads (a "gpuN:" label is a training script's too)
    assert rows[15] == ("text", "error", None)
    assert _attrs(events, 15) == {"cuda_error": "unhandled cuda error"}
    # the checks' trail up the test's stack carries no result of its own
    assert rows[16] == ("text", None, None)
    assert _attrs(events, 16) == {}


def test_nccl_tests_newer_and_cuda_checks() -> None:
    events = parse_log(
        "node-a12: Test NCCL failure common.cu:1005 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '\n"
        "node-a12: Test CUDA failure common.cu:892 'an illegal memory access was encountered'\n"
        "node-a12: Test CUDA failure common.cu:892 'out of memory'\n"
        "Test NCCL results summary follows\n"
    )
    assert _rows(events, "kind", "severity") == {1: ("log", "error"), 2: ("log", "error"), 3: ("cuda_oom", "error"), 4: ("log", None)}
    assert _attrs(events, 1)["cuda_error"] == "unhandled system error"
    assert _attrs(events, 2)["cuda_error"] == "an illegal memory access was encountered"


def test_driver_container_cannot_unload_modules() -> None:
    events = parse_fixture("gpu_operator_driver_container_unload_in_use_01.log")
    severities = {line: severity for line, (severity,) in _rows(events, "severity").items()}
    assert severities == {1: None, 2: None, 3: None, 4: None, 5: "error", 6: None, 7: None, 8: "error"}


def test_legacy_dcgm_exporter_host_engine_lines() -> None:
    events = parse_fixture("gpu_operator_dcgm_exporter_legacy_hostengine_failed_01.log")
    severities = {line: severity for line, (severity,) in _rows(events, "severity").items()}
    assert severities == {1: None, 2: "error", 3: None, 4: None, 5: "warning", 6: None, 7: None}


def test_unlevelled_wordings_are_exact() -> None:
    events = parse_log(
        "Unloading NVIDIA driver kernel modules...\n"
        "Could not find the NVIDIA driver kernel modules to unload\n"
        "Got error while loading config\n"
        "Unable to terminate the job cleanly\n"
    )
    assert events.sort("line")["severity"].to_list() == [None, None, None, None]


def test_journal_program_lines_name_their_level() -> None:
    events = parse_fixture("journal_bumblebeed_unload_timeout_01.log")
    assert _rows(events, "severity", "process", "pid") == {
        1: (None, "systemd", 1),
        2: ("info", "bumblebeed", 489),  # "[    1.590676] [INFO]/usr/bin/bumblebeed 3.2.1 started"
        3: ("error", "bumblebeed", 489),  # "rmmod: ERROR: Module nvidia is in use by: nvidia_modeset"
        4: ("error", "bumblebeed", 489),  # "[    4.694684] [ERROR]Unloading nvidia driver timed out."
    }


def test_journal_level_words_only_where_marked() -> None:
    events = parse_log(
        "Apr 14 22:14:00 ultilux bumblebeed[489]: modprobe: FATAL: Module nvidia not found in directory /lib/modules/4.5.0\n"
        "Apr 14 22:14:00 ultilux bumblebeed[489]: the rmmod run said ERROR: Module nvidia is in use\n"
        "Apr 14 22:14:00 ultilux bumblebeed[489]: Module nvidia: ERROR in use\n"
        "Apr 14 22:14:03 ultilux bumblebeed[489]: [    4.694684] Unloading nvidia [ERROR] timed out.\n"
    )
    assert events.sort("line")["severity"].to_list() == ["critical", None, None, None]
