"""The pipeline source on an XLA CUDA report that lost its indentation, vLLM V1's dead worker, torch's glog-prefixed tracebacks."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca.sources import pipeline
from rca.sources._base import ParseContext, lines_frame

_REFERENCE = datetime(2026, 1, 1, tzinfo=UTC)
_ALLOCATOR = (
    "E1103 18:23:55.103160 3413767 gpu_cudamallocasync_allocator.cc:361] gpu_async_{gpu} cuMemAllocAsync failed to allocate "
    "{requested} bytes: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory"
)
_REPORT = "Reported by CUDA: Free memory/Total memory: {free}/{total}"
_STATS = "E1103 18:23:55.103186 3413767 gpu_cudamallocasync_allocator.cc:366] Stats: Limit:                               0"


def _parse(text: str, name: str) -> pl.DataFrame:
    return rca.parse_text(text, file=name, reference_time=_REFERENCE)


@settings(max_examples=10, deadline=None)
@given(
    gpu=st.integers(0, 7),
    total=st.integers(10**9, 2 * 10**11),
    free_share=st.floats(0.0, 1.0),
    requested=st.integers(1, 10**13),
    indent=st.sampled_from(["", " "]),
)
def test_cuda_report_gives_total_and_used_memory_indented_or_not(
    gpu: int, total: int, free_share: float, requested: int, indent: str
) -> None:
    free = int(total * free_share)
    lines = [_ALLOCATOR.format(gpu=gpu, requested=requested), indent + _REPORT.format(free=free, total=total), _STATS]
    events = _parse("\n".join(lines) + "\n", "jax_x.log")
    oom = events.filter(pl.col("kind") == "cuda_oom").row(0, named=True)
    assert (oom["line"], oom["n_lines"], oom["gpu_index"]) == (1, 2, gpu)
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"], oom["mem_used_bytes"]) == (requested, total, total - free)
    assert events["line"].to_list() == [1, 3]


def test_cuda_report_under_jax_error_line_is_folded_into_it() -> None:
    text = (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1225195446464 bytes.\n"
        + _REPORT.format(free=22635544576, total=85095874560)
        + "\n"
    )
    oom = _parse(text, "jax_x.log").row(0, named=True)
    assert (oom["kind"], oom["n_lines"], oom["mem_requested_bytes"]) == ("cuda_oom", 2, 1225195446464)
    assert (oom["mem_total_bytes"], oom["mem_used_bytes"]) == (85095874560, 85095874560 - 22635544576)


def test_cuda_report_after_an_unrelated_line_stays_a_line_of_its_own() -> None:
    text = "INFO starting step 12\n" + _REPORT.format(free=1, total=2) + "\n"
    events = _parse(text, "jax_x.log")
    assert events["kind"].to_list() == ["log", "log"]
    assert events["mem_total_bytes"].to_list() == [None, None]


def test_vllm_v1_dead_worker_is_a_worker_death_not_a_kill() -> None:
    line = (
        "(EngineCore pid=58154) ERROR 07-31 09:09:51 [multiproc_executor.py:284] Worker proc VllmWorker-2 died unexpectedly "
        "(exit code: None), shutting down executor."
    )
    event = _parse(line + "\n", "vllm_x.log").row(0, named=True)
    assert (event["kind"], event["severity"], event["pid"]) == ("log", "error", 58154)
    assert json.loads(event["attrs"])["vllm_error"] == "worker_died"


def test_torch_glog_prefixed_traceback_is_one_event() -> None:
    # torch's own glog header ("[E…]", c10d's) and glog's bare one (torch.distributed.elastic's Python logging) alike
    prefix = "{open}E1203 04:05:06.789012 1234 torch/csrc/utils/python_arg_parser.cpp:45] "
    body = [
        "Traceback (most recent call last):",
        '  File "/x/train.py", line 12, in <module>',
        "    main()",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ]
    for bracket, label in (("", "klog"), ("[", "torch_c10d")):
        text = "".join(prefix.format(open=bracket) + line + "\n" for line in body)
        events = _parse(text, "pytorch_x.log")
        assert events.select("line", "n_lines", "kind", "severity", "format").rows() == [(1, 4, "traceback", "error", label)]



def test_cuda_report_opening_the_next_file_of_a_batch_is_not_folded_into_the_file_above() -> None:
    first = lines_frame(_ALLOCATOR.format(gpu=0, requested=4096) + "\n").with_columns(batch_file=pl.lit(0, pl.Int32))
    second = lines_frame(_REPORT.format(free=1, total=2) + "\n", first_line=2).with_columns(batch_file=pl.lit(1, pl.Int32))
    ctx = ParseContext(file="job-1.log", files=(("job-1.log", _REFERENCE), ("job-2.log", _REFERENCE)))
    events = pipeline.parse(pl.concat([first, second]), ctx).events
    assert events.select("line", "n_lines", "mem_total_bytes").rows() == [(1, 1, None), (2, 1, None)]
