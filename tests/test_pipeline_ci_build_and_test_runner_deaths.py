"""CI jobs that died in their build or test runner: nvcc's compiler passes killed by a signal, Bazel's build server
lost, pytest-xdist workers that crashed mid-test."""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="job.log")


def _only(text: str) -> dict:
    rows = _events(text).filter(pl.col("severity").is_not_null()).to_dicts()
    assert len(rows) == 1, rows
    return rows[0]


def test_nvcc_pass_killed_by_sigkill_is_a_process_kill_naming_the_pass() -> None:
    row = _only("nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n")
    assert (row["kind"], row["severity"], row["process"]) == ("process_killed", "error", "cicc")
    assert json.loads(row["attrs"])["signal"] == "SIGKILL"


def test_nvcc_pass_name_with_plus_signs_and_buildkit_prefix() -> None:
    row = _only("31.55 nvcc error   : 'cudafe++' died due to signal 9 (Kill signal)\n")
    assert (row["kind"], row["process"]) == ("process_killed", "cudafe++")


@settings(max_examples=30, deadline=None)
@given(
    program=st.sampled_from(["cicc", "cudafe++", "ptxas", "fatbinary", "nvlink"]),
    signal=st.sampled_from([(9, "SIGKILL"), (11, "SIGSEGV"), (6, "SIGABRT"), (15, "SIGTERM")]),
    pad=st.integers(min_value=1, max_value=4),
)
def test_nvcc_died_due_to_signal_any_pass_any_signal(program: str, signal: tuple[int, str], pad: int) -> None:
    number, name = signal
    row = _only(f"nvcc error{' ' * pad}: '{program}' died due to signal {number}\n")
    assert (row["kind"], row["process"]) == ("process_killed", program)
    assert json.loads(row["attrs"])["signal"] == name


def test_bazel_server_terminated_abruptly_is_an_error_ci_event() -> None:
    text = (
        "Server terminated abruptly (error code: 14, error message: 'Socket closed', log file: "
        "'/root/.cache/bazel/_bazel_root/0123/server/jvm.out')\n"
    )
    row = _only(text)
    assert (row["kind"], row["severity"]) == ("log", "error")
    assert json.loads(row["attrs"]) == {"ci_event": "build_server_lost"}


def test_xdist_node_down_and_crashed_while_running_are_errors() -> None:
    events = _events(
        "[gw2] node down: Not properly terminated\n"
        "replacing crashed worker gw2\n"
        "worker 'gw3' crashed while running 'tests/test_a.py::test_b'\n"
    )
    flagged = events.filter(pl.col("severity") == "error")
    assert flagged["line"].to_list() == [1, 3]
    assert {json.loads(a)["ci_event"] for a in flagged["attrs"]} == {"test_worker_crashed"}


def test_a_test_named_crashed_is_no_worker_crash() -> None:
    # only xdist's wording counts, not a test whose name says so
    events = _events("PASSED tests/test_worker.py::test_worker_crashed_while_running_is_reported\n")
    assert events["severity"].is_null().all()
