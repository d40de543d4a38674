"""The pipeline's reading of a CUDA OOM's memory in use (capacity less free), a torch shared memory segment's maker, and
the workers torchrun's agent signals.

The OOM's and the segment's facts are read here from the rules (``_pipeline_rules``); the event columns they feed
(``mem_used_bytes``, ``pid``) are chosen in ``pipeline._OUTPUT``.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca.sources._pipeline_rules import INCIDENTS, extract, gate_families

_UNIT = {"MiB": 1024**2, "GiB": 1024**3}


def _facts(*messages: str) -> pl.DataFrame:
    records, present = gate_families(pl.DataFrame({"message": list(messages)}), INCIDENTS)
    return extract(records, present)


def _bytes(hundredths: int, unit: str) -> int:
    return round(hundredths / 100 * _UNIT[unit])


def _figure(hundredths: int, unit: str) -> str:
    return f"{hundredths // 100}.{hundredths % 100:02d} {unit}"


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="train.log", reference_time=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))


_HUNDREDTHS = st.integers(min_value=1, max_value=20_000)


@settings(max_examples=15, deadline=None)
@given(total=_HUNDREDTHS, free=_HUNDREDTHS, free_unit=st.sampled_from(list(_UNIT)))
def test_new_message_used_is_capacity_less_free(total: int, free: int, free_unit: str) -> None:
    message = (
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of {_figure(total, 'GiB')} "
        f"of which {_figure(free, free_unit)} is free. Process 12345 has 78.08 GiB memory in use. Of the allocated memory 75.50 GiB "
        "is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated."
    )
    assert _facts(message)["f_used"].item() == _bytes(total, "GiB") - _bytes(free, free_unit)


@settings(max_examples=15, deadline=None)
@given(total=_HUNDREDTHS, free=_HUNDREDTHS, free_unit=st.sampled_from(list(_UNIT)))
def test_old_message_used_is_capacity_less_free_not_what_torch_allocated(total: int, free: int, free_unit: str) -> None:
    message = (
        f"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; {_figure(total, 'GiB')} total capacity; "
        f"14.50 GiB already allocated; {_figure(free, free_unit)} free; 14.60 GiB reserved in total by PyTorch)"
    )
    assert _facts(message)["f_used"].item() == _bytes(total, "GiB") - _bytes(free, free_unit)


def test_used_from_vllm_startup_and_xla_figures() -> None:
    vllm = (
        "ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization "
        "(0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )
    xla = (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 3.39GiB (3640655872B) on device "
        "ordinal 0\nReported by CUDA: Free memory/Total memory: 22635544576/85095874560"
    )
    assert _facts(vllm, xla)["f_used"].to_list() == [_bytes(2205, "GiB") - _bytes(1977, "GiB"), 85095874560 - 22635544576]


def test_no_used_where_the_text_states_no_free_figure() -> None:
    facts = _facts(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 15.11 GiB.",
        "RuntimeError: MPS backend out of memory (MPS allocated: 1.76 GB, other allocations: 7.36 GB, max allowed: 9.07 GB). "
        "Tried to allocate 256 bytes on shared pool.",
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.",
    )
    assert facts["f_cuda_oom"].to_list() == [True, True, True]
    assert facts["f_used"].to_list() == [None, None, None]


def test_torch_segment_names_its_maker_pid() -> None:
    facts = _facts(
        "RuntimeError: unable to open shared memory object </torch_4177_1881262496> in read-write mode",
        "RuntimeError: unable to write to file </torch_18_2397329218>: No space left on device (28)",
        "RuntimeError: unable to write to file </torch_8289_606636967_0>: No space left on device (28)",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    )
    assert facts["f_shm"].to_list() == [True, True, True, True]
    assert facts["f_shm_pid"].to_list() == [4177, 18, 8289, None]


def test_torchrun_agent_closing_its_workers_names_each_signalled_pid_and_stays_a_warning_line() -> None:
    events = _events(
        "[2023-10-13 17:40:02,544] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 62499 closing signal SIGTERM\n"
        "W0227 17:39:41.936000 293814 site-packages/torch/distributed/elastic/multiprocessing/api.py:766] Closing process 293866 via signal SIGTERM\n"
    )
    assert events.select("kind", "severity", "pid").rows() == [("log", "warning", 62499), ("log", "warning", 293866)]


def test_signal_a_worker_died_of_still_wins_over_no_pid_lines() -> None:
    events = _events("torch.distributed.elastic.multiprocessing.api.SignalException: Process 2349 got signal: 15\n")
    assert events.select("kind", "pid").rows() == [("process_killed", 2349)]
