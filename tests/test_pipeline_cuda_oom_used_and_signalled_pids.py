"""The pipeline's reading of a CUDA OOM's memory in use (capacity less free), a torch shared memory segment's maker, and
the workers torchrun's agent signals."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca

_UNIT = {"MiB": 1024**2, "GiB": 1024**3}


def _bytes(hundredths: int, unit: str) -> int:
    return round(hundredths / 100 * _UNIT[unit])


def _figure(hundredths: int, unit: str) -> str:
    return f"{hundredths // 100}.{hundredths % 100:02d} {unit}"


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="train.log", reference_time=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))


# Both generations of PyTorch's message; the old one's "already allocated" is PyTorch's share, not the device's use.
_WORDINGS = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of {total} "
    "of which {free} is free. Process 12345 has 78.08 GiB memory in use. Of the allocated memory 75.50 GiB "
    "is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.",
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; {total} total capacity; "
    "14.50 GiB already allocated; {free} free; 14.60 GiB reserved in total by PyTorch)",
)
_HUNDREDTHS = st.integers(min_value=1, max_value=20_000)


@pytest.mark.parametrize("wording", _WORDINGS, ids=["new", "old"])
@settings(max_examples=15, deadline=None)
@given(total=_HUNDREDTHS, free=_HUNDREDTHS, free_unit=st.sampled_from(list(_UNIT)))
def test_used_is_capacity_less_free(wording: str, total: int, free: int, free_unit: str) -> None:
    event = _events(wording.format(total=_figure(total, "GiB"), free=_figure(free, free_unit)) + "\n")
    assert event.select("kind", "mem_used_bytes").row(0) == ("cuda_oom", _bytes(total, "GiB") - _bytes(free, free_unit))


def test_used_from_vllm_startup_figures() -> None:
    event = _events(
        "ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization "
        "(0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n"
    )
    assert event.select("kind", "mem_used_bytes").row(0) == ("cuda_oom", _bytes(2205, "GiB") - _bytes(1977, "GiB"))


def test_no_used_where_the_text_states_no_free_figure() -> None:
    events = _events(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 15.11 GiB.\n"
        "RuntimeError: MPS backend out of memory (MPS allocated: 1.76 GB, other allocations: 7.36 GB, max allowed: 9.07 GB). "
        "Tried to allocate 256 bytes on shared pool.\n"
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.\n"
    )
    assert events.select("kind", "mem_used_bytes").rows() == [("cuda_oom", None)] * 3


def test_torch_segment_names_its_maker_pid() -> None:
    events = _events(
        "RuntimeError: unable to open shared memory object </torch_4177_1881262496> in read-write mode\n"
        "RuntimeError: unable to write to file </torch_18_2397329218>: No space left on device (28)\n"
        "RuntimeError: unable to write to file </torch_8289_606636967_0>: No space left on device (28)\n"
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
    )
    assert events.select("kind", "pid").rows() == [("shm_error", 4177), ("shm_error", 18), ("shm_error", 8289), ("shm_error", None)]


def test_torchrun_agent_closing_its_workers_names_each_signalled_pid_and_stays_a_warning_line() -> None:
    events = _events(
        "[2023-10-13 17:40:02,544] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 62499 closing signal SIGTERM\n"
        "W0227 17:39:41.936000 293814 site-packages/torch/distributed/elastic/multiprocessing/api.py:766] Closing process 293866 via signal SIGTERM\n"
    )
    assert events.select("kind", "severity", "pid").rows() == [("log", "warning", 62499), ("log", "warning", 293866)]


def test_signal_a_worker_died_of_still_wins_over_no_pid_lines() -> None:
    events = _events("torch.distributed.elastic.multiprocessing.api.SignalException: Process 2349 got signal: 15\n")
    assert events.select("kind", "pid").rows() == [("process_killed", 2349)]
