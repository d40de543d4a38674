"""Hard-wrapped pastes of training logs: a line broken at a fixed width is read whole; a normal log is left as it is."""

from __future__ import annotations

import json
from unittest.mock import patch

import polars as pl
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import rca
from rca.sources import _pipeline_records
from tests.conftest import FIXED_MTIME, fixture_path


def _parse(text: str, name: str = "paste.log") -> pl.DataFrame:
    return rca.parse_text(text, file=name, reference_time=FIXED_MTIME)


def _fixture(name: str) -> pl.DataFrame:
    return _parse(fixture_path(name).read_bytes().decode("utf-8", errors="replace"), name)


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


def test_watchdog_message_wrapped_in_a_c10_stack_gets_its_op_and_times_back() -> None:
    events = _fixture("nccl_watchdog_what_wrapped_140_frames_01.log")
    [timeout] = events.filter(pl.col("kind") == "nccl_timeout").to_dicts()
    assert timeout["line"] == 1
    assert "ran for 1800010 milliseconds before timing out." in timeout["message"]
    assert "/lib/python3.11/site-packages/torch/lib/libc10.so)" in timeout["message"]
    assert {k: _attrs(timeout)[k] for k in ("rank", "op", "timeout_ms", "ran_for_ms")} == {
        "rank": 2, "op": "BROADCAST", "timeout_ms": 1800000, "ran_for_ms": 1800010,
    }
    # no event is a piece of a path or of a sentence
    assert not events.filter(pl.col("message").str.contains(r"^(?:or |3\.11/|ibtorch|libtorch_cuda)")).height


def test_interleaved_terminate_lines_keep_the_watchdog_message_whole() -> None:
    events = _fixture("nccl_terminate_interleaved_what_wrapped_140_01.log")
    [timeout] = events.filter(pl.col("kind") == "nccl_timeout").to_dicts()
    assert (timeout["line"], timeout["n_lines"], timeout["severity"]) == (7, 5, "error")
    assert "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4," in timeout["message"]
    assert _attrs(timeout)["ran_for_ms"] == 1800011
    # "…an instan" + "ce of 'c10::DistBackendError…'" is one line again
    assert events.filter(pl.col("message").str.contains("throwing an instance of 'c10::DistBackendErrorc10::", literal=True)).height == 2
    assert 3 not in events["line"].to_list()


def test_terminal_padded_rows_join_until_the_padded_end() -> None:
    events = _fixture("nccl_heartbeat_watchdog_stuck_padded_wrap_116_01.log")
    assert events.select("line", "kind", "severity").rows() == [(1, "nccl_timeout", "error"), (9, "log", "error")]
    stuck = events.row(0, named=True)["message"]
    assert "This typically indicates a NCCL/CUDA API" in stuck and "(TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC)" in stuck
    assert stuck.rstrip().endswith("otherwise, please attempt to debug the hang.")
    assert events.row(1, named=True)["message"].startswith("[PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL preparing to dump")


def test_a_fixed_width_table_is_not_a_wrapped_paste() -> None:
    # sacct's rows are all as wide as each other, and bare: its columns tell it apart
    events = _fixture("slurm_sacct_maxrss_step_rows_01.log")
    assert events["line"].to_list() == list(range(1, events.height + 1))


# Whole lines as a training log prints them (torch's c10d watchdog, stamped; a traceback; a bare progress line).
_LINES = [
    ("[rank7]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607] [Rank 7] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=80078, OpType=BROADCAST, NumelIn=5056, NumelOut=5056, Timeout(ms)=600000) ran for 600026 milliseconds before timing out."),
    ("[rank3]:[E816 01:45:40.212150935 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=80078, OpType=ALLREDUCE, NumelIn=2106881, NumelOut=2106881, Timeout(ms)=600000) ran for 600013 milliseconds before timing out."),
    ("[rank1]:[E816 01:45:41.001000000 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 1] Exception (either an error or timeout) "
    "detected by watchdog at work: 80078, last enqueued NCCL work: 80078, last completed NCCL work: 80077."),
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 883, in run',
    "    elastic_launch(",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of 31.47 GiB of which 12.73 GiB is free.",
    "Epoch 3: 100 steps done",
]


def _facts(events: pl.DataFrame) -> list[tuple]:
    return events.select("kind", "severity", "attrs", pl.col("message").str.replace_all(r"\s+", " ")).rows()


def _wrapped(lines: list[str], width: int) -> str:
    return "".join("".join(line[i:i + width] + "\n" for i in range(0, max(len(line), 1), width)) for line in lines)


_PREFIXES = ["", "[rank0]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607] ", "2024-05-08 08:47:31,261 - INFO - ", "  ", " "]
_WORDS = st.text(alphabet="abcdefghij (),.:=0123456789", min_size=0, max_size=160)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PREFIXES), _WORDS), min_size=1, max_size=14, unique_by=lambda pair: len("".join(pair))))
def test_a_log_of_varied_line_lengths_is_parsed_as_without_joining(pairs: list[tuple[str, str]]) -> None:
    # a normal log has no wrap width: whatever its lines say, none is joined to another
    text = "".join(prefix + words + "\n" for prefix, words in pairs)
    with patch.object(_pipeline_records, "_MIN_BREAKS", 10**9):
        unjoined = _parse(text)
    assert_frame_equal(_parse(text), unjoined)


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=80, max_value=132), st.permutations(_LINES[:3]))
def test_a_log_wrapped_at_any_terminal_width_reads_as_the_log(width: int, watchdog: list[str]) -> None:
    lines = [*watchdog, _LINES[6], _LINES[7]]
    # A line exactly as long as a multiple of the width ends where a row ends: no paste tells it from a wrapped one.
    assume(all(len(line) % width for line in lines))
    assert _facts(_parse(_wrapped(lines, width))) == _facts(_parse("\n".join(lines) + "\n"))


def test_a_log_cut_to_a_fixed_width_keeps_its_lines_and_its_traceback() -> None:
    # every line of a logger's output cut at 100 columns (a "%(message).100s" format, `cut -c1-100`): as wide as each
    # other and bare, but each the logger's next line, and the traceback under them one of its own
    metrics = ", ".join(f"m{field}=0.{field:04d}" for field in range(20))
    lines = [f"step {step} metrics: {metrics}"[:100] for step in range(6)]
    traceback = [
        "Traceback (most recent call last):", '  File "train.py", line 10, in <module>', "    loss.backward()",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
    ]
    events = _parse("\n".join(lines + traceback) + "\n")
    assert events.select("line", "kind", "n_lines").rows() == [*((line, "log", 1) for line in range(1, 7)), (7, "cuda_oom", 4)]
