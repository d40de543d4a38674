"""A job platform's log viewer numbers each line ("[80746] [rank0]:[E321 …") when a log is copied from it.

The number is peeled as the outermost layer, only in a file most of whose lines wear it; elsewhere
"[1] " at a line's start is the line's own text.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca

REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BODY = (
    "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 "
    "milliseconds before timing out.",
    "",
    "[rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] Exception (either an error or timeout) "
    "detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.",
    "{'loss': 0.0, 'grad_norm': 1.4142135381698608, 'learning_rate': 4.3181818181818185e-06, 'epoch': 0.01}",
)
FACTS = ["line", "kind", "severity", "format", "ts", "ts_quality", "message", "n_lines"]


def _parse(lines: list[str]) -> pl.DataFrame:
    return rca.parse_text("\n".join(lines) + "\n", file="job.log", reference_time=REFERENCE)


def test_numbered_watchdog_lines_keep_their_c10d_time_and_severity() -> None:
    events = _parse([f"[{80746 + n}] {line}".rstrip(" ") + (" " if not line else "") for n, line in enumerate(BODY)])
    assert events["kind"].to_list() == ["nccl_timeout", "log", "log"]
    assert events["line"].to_list() == [1, 3, 4]  # "[80747] " alone is an empty line
    assert events["format"].to_list()[:2] == ["torch_c10d", "torch_c10d"]
    assert events["severity"].to_list()[:2] == ["error", "error"]
    assert events["ts"][0] == datetime(2026, 3, 21, 2, 7, 8, 408271, tzinfo=UTC)
    assert events["message"][2].startswith("{'loss': 0.0,")


def test_a_few_bracketed_numbers_in_a_plain_log_stay_text() -> None:
    lines = ["epoch 1 done", "[1] first checkpoint kept", "epoch 2 done", "saving model", "epoch 3 done"]
    events = _parse(lines)
    assert events.filter(pl.col("line") == 2)["message"].item() == "[1] first checkpoint kept"


@settings(max_examples=25, deadline=None)
@given(start=st.integers(min_value=0, max_value=10**8))
def test_numbering_changes_no_fact(start: int) -> None:
    numbered = [f"[{start + n}] {line}" for n, line in enumerate(BODY)]
    got = _parse(numbered).select(FACTS)
    want = _parse(list(BODY)).select(FACTS)
    assert got.to_dicts() == want.to_dicts()


def test_rank_labels_that_do_not_count_lines_stay_text() -> None:
    # MPICH's -prepend-rank and Intel MPI's -l label each line with its rank, not its number in the file
    lines = [f"[{rank}] epoch {epoch} loss 0.{epoch}" for epoch in range(3) for rank in range(4)]
    events = _parse(lines)
    assert events["message"].to_list() == lines
