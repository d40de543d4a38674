"""GPU failures of LLM serving engines (pipeline source): vLLM's and NCCL's CUDA checks, SGLang's scheduler watchdog.

vLLM's kernels print "Failed: Cuda error <file>:<line> '<text>'" before the worker dies, NCCL "NCCL WARN Cuda failure
'<text>'"; SGLang logs its watchdog's timeout and the parent's SIGQUIT at error under a format with no level.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca

DATA = Path(__file__).parent / "data" / "pipeline"
CUDA_TEXTS = ("an illegal memory access was encountered", "unspecified launch failure", "misaligned address")


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def _only(text: str) -> dict:
    events = _events(text).to_dicts()
    assert len(events) == 1
    return events[0]


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"]) if event["attrs"] else {}


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(CUDA_TEXTS), st.sampled_from(("custom_all_reduce.cuh", "quick_all_reduce.cuh")), st.integers(1, 9999))
def test_vllm_cuda_check_is_a_cuda_error(text: str, source: str, line: int) -> None:
    event = _only(f"Failed: Cuda error /workspace/csrc/{source}:{line} '{text}'\n")
    assert (event["kind"], event["severity"]) == ("log", "error")
    assert _attrs(event)["cuda_error"] == text


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(CUDA_TEXTS), st.sampled_from(("", "1 ", "700 ")))
def test_nccl_cuda_failure_names_the_error(text: str, number: str) -> None:
    event = _only(f"misc/strongstream.cc:343 NCCL WARN Cuda failure {number}'{text}'\n")
    assert _attrs(event)["cuda_error"] == text
    assert event["kind"] == "log"


def test_nccl_cuda_out_of_memory_stays_a_cuda_oom() -> None:
    assert _only("include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n")["kind"] == "cuda_oom"


def test_cuda_error_wording_needs_its_file_and_quote() -> None:
    event = _only("Failed: Cuda error somewhere in the kernel\n")
    assert event["severity"] is None
    assert "cuda_error" not in _attrs(event)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 63), st.integers(1, 3600))
def test_sglang_watchdog_timeout_is_an_error_of_its_rank(rank: int, timeout: int) -> None:
    event = _only(f"[2025-03-09 00:57:15 TP{rank}] Watchdog timeout (self.watchdog_timeout={timeout})\n")
    assert (event["kind"], event["severity"]) == ("log", "error")
    assert _attrs(event)["rank"] == rank


def test_sglang_parent_sigquit_is_an_error() -> None:
    event = _only("[2025-03-09 00:57:20] Received sigquit from a child process. It usually means the child failed.\n")
    assert (event["kind"], event["severity"]) == ("log", "error")


def test_sglang_watchdog_fixture_ends_in_a_kill() -> None:
    events = _events((DATA / "sglang_scheduler_watchdog_timeout_sigquit_killed_01.log").read_text())
    assert events.filter(pl.col("severity") == "error").height == 10
    assert events.filter(pl.col("kind") == "process_killed")["line"].to_list() == [10]


def test_vllm_custom_all_reduce_fixture() -> None:
    events = _events((DATA / "vllm_v1_custom_all_reduce_cuda_error_illegal_access_worker_died_01.log").read_text())
    cuda = events.filter(pl.col("attrs").str.contains("illegal memory access", literal=True))
    assert cuda["line"].to_list() == [3, 5, 6, 7]
    assert set(cuda["severity"]) == {"error"}
