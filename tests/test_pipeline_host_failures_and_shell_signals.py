"""Pipeline source: what a job's own output says when the host, not the GPU, failed it — C++'s allocation failure and the
kernel's ENOMEM (host memory, OOM-class), a full disk — and the shell's report of a job a signal ended besides "Killed"."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rca


def _only(text: str) -> dict:
    events = rca.parse_text(text, file="x.log")
    assert events.height == 1, events
    return events.row(0, named=True)


def test_cpp_bad_alloc_is_a_host_memory_oom_in_one_record() -> None:
    event = _only("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n")
    assert (event["n_lines"], event["severity"], json.loads(event["attrs"])["oom"]) == (2, "critical", "cpp_bad_alloc")


def test_enomem_is_a_host_memory_oom() -> None:
    event = _only("OSError: [Errno 12] Cannot allocate memory\n")
    assert (event["severity"], json.loads(event["attrs"])["oom"]) == ("critical", "enomem")


def test_a_full_disk_is_an_error() -> None:
    event = _only("OSError: [Errno 28] No space left on device: '/checkpoints/step_1200/model.safetensors'\n")
    assert (event["kind"], event["severity"]) == ("log", "error")


@pytest.mark.parametrize(
    ("word", "signal"),
    [("Segmentation fault", "SIGSEGV"), ("Bus error", "SIGBUS"), ("Aborted", "SIGABRT"), ("Illegal instruction", "SIGILL"),
     ("Floating point exception", "SIGFPE"), ("Killed", "SIGKILL")],
)
@given(core=st.booleans())
def test_the_shells_lone_signal_report_is_a_kill(word: str, signal: str, core: bool) -> None:
    event = _only(f"{word}{' (core dumped)' if core else ''}\n")
    assert (event["kind"], event["severity"], json.loads(event["attrs"])["signal"]) == ("process_killed", "error", signal)


@pytest.mark.parametrize("line", ["Aborted by user", "Segmentation fault in module foo, retrying", "Bus error rate: 0.1%"])
def test_a_sentence_starting_so_is_no_kill(line: str) -> None:
    assert _only(line + "\n")["kind"] == "log"
