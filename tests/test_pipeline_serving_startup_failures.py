"""Serving and training frameworks' startup failures: TensorRT-LLM, Triton's TensorRT-LLM backend, vLLM V1, torchrun ranks.

TensorRT-LLM's PyTorch executor reports a GPU too full for its KV cache as "Executor creation failed due to insufficient
GPU memory." (a cuda_oom); its C++ CUDA check names the failed call and then the runtime's text ("CUDA runtime error in
cudaDeviceGetDefaultMemPool(&memPool, device): operation not supported (…:170)"); vLLM V1's engine core raises
"WorkerProc initialization failed …" when a worker dies starting. Lines are from the real samples under tests/data
(see tests/data/real_logs/SOURCES.md).
"""

from __future__ import annotations

import json

import polars as pl
from conftest import attrs_of, event_on_line, parse_fixture, parse_log
from hypothesis import given, settings
from hypothesis import strategies as st


def test_trtllm_executor_shortage_is_a_cuda_oom_with_its_rank() -> None:
    # one parse: the logger's line (TensorRT-LLM 1.0, #5872) and the exception as raised to the caller (mlcommons #2501)
    events = parse_log(
        "[07/08/2025-19:47:15] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed"
        " due to insufficient GPU memory.\n"
        "The following component could not be created: KV cache\n"
        "RuntimeError: Executor creation failed due to insufficient GPU memory.\n"
    )
    logged, table, raised = (event_on_line(events, line) for line in (1, 2, 3))
    assert (logged["kind"], logged["severity"], logged["format"], logged["ts_raw"]) == ("cuda_oom", "error", "tensorrt", "2025-07-08 19:47:15")
    assert json.loads(logged["attrs"])["rank"] == 1
    assert table["kind"] == "log"
    assert (raised["kind"], raised["severity"]) == ("cuda_oom", "error")


def test_triton_trtllm_backend_cuda_check_keeps_the_runtime_text() -> None:
    events = parse_fixture("pytorch_triton_trtllm_backend_cuda_runtime_error_mempool_01.log")
    failure = event_on_line(events, 9)
    assert (failure["kind"], failure["n_lines"], failure["severity"]) == ("traceback", 4, "error")
    assert json.loads(failure["attrs"])["cuda_error"] == "operation not supported"
    assert events.filter(pl.col("line") < 9)["severity"].to_list() == ["info"] * 8


def test_vllm_workerproc_initialization_failure_is_an_engine_start_failure() -> None:
    events = parse_fixture("vllm_v1_workerproc_initialization_failed_engine_core_01.log")
    core = event_on_line(events, 1)
    assert (core["kind"], core["n_lines"], core["pid"], core["process"]) == ("traceback", 5, 33630, "EngineCore_DP0")
    assert json.loads(core["attrs"])["vllm_error"] == "engine_start_failed"
    assert event_on_line(events, 7)["n_lines"] == 6


def test_rank_prefixed_ncclremoteerror_and_new_oom_wording_stay_one_event_per_rank() -> None:
    nccl = parse_fixture("nccl_rank_prefixed_dist_backend_error_ncclremoteerror_ofi_01.log")
    assert nccl.select("line", "n_lines", "kind").rows() == [(1, 8, "traceback"), (9, 6, "traceback")]
    assert [a["rank"] for a in attrs_of(nccl)] == [3, 2]
    assert "NET/OFI Request" in nccl["message"][0]
    oom = event_on_line(parse_fixture("pytorch_rank_prefixed_torch_oom_private_pools_ms_swift_01.log"), 1)
    assert (oom["kind"], oom["gpu_index"], oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (
        "cuda_oom", 7, round(2.63 * 1024**3), round(79.11 * 1024**3))
    assert json.loads(oom["attrs"])["rank"] == 15


_CALL = st.from_regex(r"\A(::)?cuda[A-Z][A-Za-z]{2,12}\((&?[a-z][A-Za-z]{0,6}(, [a-z][A-Za-z]{0,6}(->get\(\))?){0,2})?\)\Z")
_TEXT = st.from_regex(r"\A[a-z]{3,10}( [a-z]{2,10}){0,3}\Z")


@settings(max_examples=10, deadline=None)
@given(call=_CALL, text=_TEXT)
def test_trtllm_cuda_check_reads_the_text_after_any_call(call: str, text: str) -> None:
    line = f"[TensorRT-LLM][ERROR] CUDA runtime error in {call}: {text} (/app/tensorrt_llm/cpp/x/bufferManager.cpp:170)\n"
    event = event_on_line(parse_log(line), 1)
    if "out of memory" in text:
        assert event["kind"] == "cuda_oom"
    else:
        assert json.loads(event["attrs"])["cuda_error"] == text
