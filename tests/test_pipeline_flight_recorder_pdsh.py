"""ProcessGroupNCCL's "Stack trace of the failed collective:" frames, and pdsh's host prefix (DeepSpeed's multi-node runner)."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.test_source_pipeline import _parse, attrs_of, events_of

FLIGHT = "nccl_torch_flight_recorder_failed_collective_stack_01.log"
PDSH = "pytorch_deepspeed_pdsh_host_prefix_megatron_traceback_01.log"


def test_failed_collective_frames_are_one_record_with_the_line_that_introduces_them() -> None:
    events = events_of(FLIGHT)
    stack = events.filter(pl.col("line") == 4).row(0, named=True)
    # the watchdog's line and its 20 frames, "#18 _run_code from <frozen runpy>:88" (a frozen module's file has a space) included
    assert (stack["n_lines"], stack["kind"], stack["severity"], stack["ts_quality"]) == (21, "traceback", "error", "year_inferred")
    assert stack["message"].splitlines()[-1] == "#19 _run_module_as_main from <frozen runpy>:198"
    assert attrs_of(events.filter(pl.col("line") == 4))[0]["rank"] == 3
    # no frame is an event of its own; the next rank-3 line is
    assert events.filter(pl.col("message").str.starts_with("#")).height == 0
    assert events.filter(pl.col("line") == 26)["message"].item().endswith("First PG on this rank to signal dumping.")
    # the timeout itself stays the one nccl_timeout
    assert events.filter(pl.col("kind") == "nccl_timeout")["line"].to_list() == [2]


def test_captured_h200_flight_recorder_frames_join_their_record() -> None:
    events = events_of("nccl_torch211_watchdog_timeout_h200_01.log")
    assert events.filter(pl.col("line") == 10).select("n_lines", "kind").row(0) == (4, "traceback")
    assert events.filter(pl.col("line").is_between(11, 13)).height == 0


def test_torch_cpp_python_trace_frames_join_the_line_above() -> None:
    # torch's get_python_cpp_trace() (c10d's LOG(INFO) of a collective's stack): the first frame on the message's line, a
    # C++ frame without its file ("from :0", "from ??:0"), the Python frames after
    text = (
        "ProcessGroupNCCL::_allgather_base stacktrace: #0 torch::unwind::unwind() from ??:0\n"
        "#1 torch::CapturedTraceback::gather(bool, bool, bool) from ??:0\n"
        "#2 c10d::get_python_cpp_trace[abi:cxx11]() from :0\n"
        "#3 all_gather_into_tensor from /data/users/weif/pytorch/torch/distributed/distributed_c10d.py:2838\n"
        "step 4\n"
    )
    events, _, _ = _parse(text)
    assert events.select("line", "n_lines").rows() == [(1, 4), (5, 1)]


def test_a_frame_line_a_file_starts_with_stays_a_line() -> None:
    events, _, _ = _parse("#0 all_reduce from /x/distributed_c10d.py:3068\nrank 0 step 3\n")
    assert events.select("line", "kind").rows() == [(1, "log"), (2, "log")]


def test_pdsh_host_prefix_names_the_host_and_keeps_the_traceback_whole() -> None:
    events = events_of(PDSH)
    assert events.select("line", "n_lines", "host", "kind").rows() == [
        (1, 1, "10.140.219.185", "log"), (2, 1, "10.140.219.185", "log"), (3, 9, "10.141.250.231", "traceback"),
    ]
    first = events.row(0, named=True)
    # TensorFlow's stamp and level under the prefix
    assert (first["ts_quality"], first["severity"], first["message"]) == (
        "exact", "info", "Ignore above cudart dlerror if you do not have a GPU set up on your machine.",
    )
    assert attrs_of(events.filter(pl.col("line") == 3))[0]["last_frame"] == "/home/mchorse/gpt-neox/megatron/initialize.py:59 in finish_mpu_init"


def test_two_hosts_tracebacks_printed_at_once_stay_apart() -> None:
    text = (
        "node-1: Traceback (most recent call last):\n"
        "node-2: Traceback (most recent call last):\n"
        'node-1:   File "train.py", line 3, in <module>\n'
        'node-2:   File "train.py", line 3, in <module>\n'
        "node-1: RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 10.76 GiB total capacity)\n"
        "node-2: ValueError: bad batch\n"
    )
    events, _, _ = _parse(text)
    assert events.select("line", "n_lines", "host", "kind", "gpu_index").rows() == [
        (1, 3, "node-1", "cuda_oom", 1), (2, 3, "node-2", "traceback", None),
    ]


def test_a_few_lines_that_look_like_a_host_prefix_are_text() -> None:
    text = "step 1 loss 0.5\nsha256: 0f3a\nstep 2 loss 0.4\nstep 3 loss 0.3\n"
    events, _, _ = _parse(text)
    assert events["host"].to_list() == [None] * 4
    assert events.filter(pl.col("line") == 2)["message"].item() == "sha256: 0f3a"


@settings(max_examples=40, deadline=None)
@given(word=st.from_regex(r"[A-Za-z][a-z]{1,10}", fullmatch=True), n=st.integers(min_value=2, max_value=6))
def test_a_word_without_a_digit_is_never_a_host(word: str, n: int) -> None:
    # "Error: …", "WARNING: …" on every line of a file: a level or a label, never pdsh's host
    events, _, _ = _parse("".join(f"{word}: message {i}\n" for i in range(n)))
    assert events["host"].null_count() == n
    assert all(message.startswith((f"{word}: ", "message")) for message in events["message"])


@settings(max_examples=40, deadline=None)
@given(
    host=st.from_regex(r"(?:[a-z]{1,6}-)?[a-z]{1,6}[0-9]{1,3}|(?:[0-9]{1,3}\.){3}[0-9]{1,3}", fullmatch=True),
    n=st.integers(min_value=2, max_value=6),
)
def test_every_line_of_one_host_gets_it(host: str, n: int) -> None:
    events, _, _ = _parse("".join(f"{host}: step {i} done\n" for i in range(n)))
    assert events["host"].to_list() == [host] * n
    assert events["message"].to_list() == [f"step {i} done" for i in range(n)]


@pytest.mark.parametrize("label", ["rank0", "epoch3", "step_120", "Iter7", "gpu1"])
def test_a_numbered_label_that_most_lines_start_with_is_text_not_a_pdsh_host(label: str) -> None:
    text = "".join(f"{label}: step {i} loss 0.{i}\n" for i in range(10))
    events = rca.parse_text(text, file="train.log")
    assert events["host"].is_null().all()
    assert events["message"].str.starts_with(f"{label}: ").all()
