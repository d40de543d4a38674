"""Pipeline source: distributed-training failures (Megatron/FlagScale, LLaMA-Factory on DeepSpeed, NCCL, ECC) and a
traceback printed as a Python list's repr, whose frames all sit on one line."""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_source_pipeline import _parse, events_of


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).row(0, named=True)


def test_megatron_oom_printed_as_a_list_repr_names_its_last_frame_only() -> None:
    # mngeyuu/memrift-flagscale live_status.md: grep -n hits of a `[default0]:` (torchrun --tee) host log.
    events = events_of("pytorch_megatron_grep_n_default0_rank0_cuda_oom_flagscale_01.log")
    # one OOM of local rank 0 told three times: the uncaught exception (lines 4-5, torch's "[rank0]:") is the cuda_oom
    listed = _row(events, 6)
    assert (listed["kind"], listed["gpu_index"], listed["mem_requested_bytes"]) == ("traceback", None, None)
    attrs = json.loads(listed["attrs"])
    assert attrs["last_frame"] == "/opt/conda/lib/python3.10/site-packages/megatron/core/tensor_parallel/layers.py:336 in forward"
    assert (attrs["local_rank"], "rank" in attrs) == (0, False)
    raised = _row(events, 4)
    assert (raised["kind"], raised["severity"], raised["n_lines"], json.loads(raised["attrs"])["rank"]) == ("cuda_oom", "error", 2, 0)
    warned = _row(events, 3)  # megatron.core.utils logs the same OOM at WARNING before raising it
    assert (warned["kind"], warned["severity"], warned["mem_total_bytes"]) == ("log", "warning", None)


def test_rank_prefixed_oom_keeps_rank_gpu_and_the_other_process_holding_memory() -> None:
    events = events_of("pytorch_llamafactory_rank5_cuda_oom_in_use_pid_rank6_traceback_01.log")
    oom = _row(events, 1)
    attrs = json.loads(oom["attrs"])
    assert (oom["kind"], oom["gpu_index"], oom["mem_requested_bytes"]) == ("cuda_oom", 5, 56 * 2**20)
    assert (attrs["rank"], attrs["in_use_pid"], oom["pid"]) == (5, 415557, None)
    other_rank = _row(events, 2)
    assert (other_rank["kind"], other_rank["n_lines"], json.loads(other_rank["attrs"])["rank"]) == ("traceback", 9, 6)


def test_ecc_error_and_the_nccl_watchdog_that_reports_it_are_two_tracebacks() -> None:
    events = events_of("pytorch_sd_scripts_ecc_uncorrectable_nccl_watchdog_rank1_01.log")
    raised, watchdog = _row(events, 1), _row(events, 8)
    assert json.loads(raised["attrs"])["cuda_error"] == "uncorrectable ECC error encountered"
    assert (watchdog["format"], watchdog["n_lines"]) == ("torch_c10d", 5)
    assert json.loads(watchdog["attrs"]) == {"rank": 1, "cuda_error": "uncorrectable ECC error encountered"}


def test_megatron_illegal_memory_access_is_one_traceback() -> None:
    (event,) = events_of("pytorch_megatron_accelerator_error_illegal_memory_access_01.log").iter_rows(named=True)
    attrs = json.loads(event["attrs"])
    assert (event["kind"], event["n_lines"], attrs["exc_type"]) == ("traceback", 17, "torch.AcceleratorError")
    assert attrs["last_frame"] == "/usr/local/lib/python3.12/dist-packages/torch/cuda/random.py:43 in get_rng_state"


_NAMES = st.sampled_from(["forward", "_call_impl", "<module>", "train_step", "get_rng_state"])
_FRAMES = st.lists(st.tuples(st.lists(_NAMES, min_size=1, max_size=3), st.integers(1, 5000), _NAMES), min_size=1, max_size=5)


@settings(max_examples=4, deadline=None)
@given(frames=_FRAMES)
def test_list_repr_traceback_last_frame_is_the_last_listed_frame(frames: list[tuple[list[str], int, str]]) -> None:
    # what `print(traceback.format_exception(...))` writes: one line, each frame's "\n" written out
    entries = ["Traceback (most recent call last):\n"]
    entries += [f'  File "/{"/".join(dirs)}.py", line {line}, in {func}\n    {func}(x)\n' for dirs, line, func in frames]
    entries.append("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    events, _, _ = _parse(f"[rank0]: {entries!r}\n")
    dirs, line, func = frames[-1]
    assert json.loads(events.row(0, named=True)["attrs"])["last_frame"] == f"/{'/'.join(dirs)}.py:{line} in {func}"
