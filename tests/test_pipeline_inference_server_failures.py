"""Inference servers' failure lines that carry no level of their own, and ONNX Runtime's CUDA OOM.

ggml's loader (llama.cpp, Ollama's runner) follows a buffer it could not get with bare lines ("error loading model:
unable to allocate CUDA0 buffer", "failed to load model", "failed to allocate compute buffers"); ONNX Runtime's CUDA
check reports cudaErrorMemoryAllocation as "CUDA failure 2: out of memory ; GPU=N ; …". Lines are from the real
samples under tests/data (see tests/data/real_logs/SOURCES.md).
"""

from __future__ import annotations

import polars as pl
from conftest import FIXED_MTIME, fixture_path
from hypothesis import given, settings
from hypothesis import strategies as st

import rca


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="sample.log", reference_time=FIXED_MTIME)


def _sample(name: str) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_text(encoding="utf-8"), file=name, reference_time=FIXED_MTIME)


def test_ggml_follow_up_lines_are_errors_not_more_ooms() -> None:
    events = _sample("pytorch_ollama_gallocr_compute_buffers_json_err_01.log")
    assert events.filter(pl.col("kind") == "cuda_oom")["line"].to_list() == [4]
    oom = events.filter(pl.col("line") == 4).row(0, named=True)
    assert (oom["gpu_index"], oom["mem_requested_bytes"]) == (0, 4507 * 1024**2)
    for line in (5, 6, 7, 8):
        assert events.filter(pl.col("line") == line)["severity"].to_list() == ["error"], line
    # the KV-cache sizes before the failure are no failure
    assert events.filter(pl.col("line") <= 3)["severity"].null_count() == 3


def test_ollama_journal_loader_lines_keep_the_unit_pid() -> None:
    events = _sample("journal_ollama_cudamalloc_unable_to_allocate_cuda0_failed_to_load_01.log")
    rows = events.filter(pl.col("line").is_in([3, 4]))
    assert rows["severity"].to_list() == ["error", "error"]
    assert rows["pid"].to_list() == [1418, 1418]
    assert rows["kind"].to_list() == ["log", "log"]


def test_onnxruntime_status_lines_are_errors() -> None:
    # microsoft/onnxruntime issue #22702 (the two quoted lines)
    text = (
        "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code"
        " returned while running Conv node. Name:'/patch_embed/stages/stages.0/blocks/blocks.0/mlp/fc1/Conv' Status Message: \n"
        "/onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool,"
        " onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size"
        " 4585490524328388608\n"
    )
    events = _parse(text)
    assert events["severity"].to_list() == ["error", "error"]
    assert events.filter(pl.col("kind") == "cuda_oom").height == 0


@settings(max_examples=40, deadline=None)
@given(device=st.integers(0, 15), backend=st.sampled_from(["CUDA", "ROCm", "Vulkan", "CPU", "CUDA_Host", "Metal"]))
def test_unable_to_allocate_any_backend_buffer_is_an_error(device: int, backend: str) -> None:
    name = backend if backend in ("CPU", "CUDA_Host") else f"{backend}{device}"
    events = _parse(f"llama_model_load: error loading model: unable to allocate {name} buffer\n")
    assert events["severity"].to_list() == ["error"]
    assert events["kind"].to_list() == ["log"]


@settings(max_examples=40, deadline=None)
@given(gpu=st.integers(0, 63), host=st.from_regex(r"[A-Za-z][A-Za-z0-9\-]{0,14}", fullmatch=True))
def test_onnxruntime_oom_names_any_gpu(gpu: int, host: str) -> None:
    line = (
        "[ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:121 onnxruntime::CudaCall"
        f" CUDA failure 2: out of memory ; GPU={gpu} ; hostname={host} ; expr=cudaMalloc((void**)&p, size);\n"
    )
    events = _parse(line)
    assert events["kind"].to_list() == ["cuda_oom"]
    assert events["gpu_index"].to_list() == [gpu]
