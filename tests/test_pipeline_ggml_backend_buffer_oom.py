"""ggml's allocators (llama.cpp, Ollama) naming the device buffer they could not allocate.

After CUDA's own "cudaMalloc failed: out of memory", ggml's graph and tensor allocators print the backend device and the
full byte count ("ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 838447104"); Ollama's CLI error quotes
that line without the cudaMalloc one, so it is the only place the device and the size are given. Right after the cudaMalloc
line it is the same failure told twice: a log line (an error), not a second OOM.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="ggml.log")


def test_ollama_cli_echo_of_the_graph_allocator_gives_device_and_bytes() -> None:
    text = (
        "Error: llama runner process has terminated: cudaMalloc failed: out of memory\n"
        "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 838447104\n"
    )
    events = _events(text)
    assert events["kind"].to_list() == ["cuda_oom", "cuda_oom"]
    second = events.row(1, named=True)
    assert (second["severity"], second["gpu_index"], second["mem_requested_bytes"]) == ("error", 0, 838447104)


def test_echo_right_after_cuda_malloc_line_is_an_error_line_not_a_second_oom() -> None:
    text = (
        "deep-seek-1  | ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory\n"
        "deep-seek-1  | ggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 10345253120\n"
        "deep-seek-1  | llama_kv_cache_update_impl: failed to allocate compute buffers\n"
    )
    rows = _events(text).select("kind", "severity", "gpu_index", "mem_requested_bytes").rows()
    # (the loader's "failed to allocate compute buffers" after them is the failure it ends in: an error line too)
    assert rows == [("cuda_oom", "error", 1, 9866 * 2**20), ("log", "error", None, None), ("log", "error", None, None)]


def test_rocm_device_is_read_from_the_backend_name() -> None:
    events = _events("ggml_gallocr_reserve_n: failed to allocate ROCm0 buffer of size 14822711296\n")
    assert events.select("kind", "gpu_index", "mem_requested_bytes").row(0) == ("cuda_oom", 0, 14822711296)


def test_tensor_range_allocator_without_size_is_still_an_oom_on_its_device() -> None:
    events = _events("alloc_tensor_range: failed to allocate CUDA1 buffer\n")
    assert events.select("kind", "gpu_index", "mem_requested_bytes").row(0) == ("cuda_oom", 1, None)


def test_host_buffers_and_buffer_size_reports_are_no_device_oom() -> None:
    text = (
        "ggml_gallocr_reserve_n: failed to allocate CUDA_Host buffer of size 838447104\n"
        "llm_load_tensors:      CUDA0 buffer size = 16192.69 MiB\n"
        "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n"
    )
    assert _events(text)["kind"].to_list() == ["log", "log", "log"]


@settings(max_examples=40, deadline=None)
@given(
    backend=st.sampled_from(["CUDA", "ROCm", "Vulkan"]),
    device=st.integers(min_value=0, max_value=15),
    size=st.integers(min_value=1, max_value=2**44),
    caller=st.sampled_from(["ggml_gallocr_reserve_n", "alloc_tensor_range", "ggml_backend_alloc_ctx_tensors_from_buft"]),
)
def test_any_backend_device_and_size_are_read_exactly(backend: str, device: int, size: int, caller: str) -> None:
    events = _events(f"{caller}: failed to allocate {backend}{device} buffer of size {size}\n")
    assert events.select("kind", "severity", "gpu_index", "mem_requested_bytes").row(0) == ("cuda_oom", "error", device, size)
