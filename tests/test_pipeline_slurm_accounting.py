"""Slurm's accounting after a job (sacct rows, seff's and scontrol's job state) read by the pipeline source's Slurm rules."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rca
from tests.conftest import fixture_path


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def _attrs(events: pl.DataFrame, line: int) -> dict:
    raw = events.filter(pl.col("line") == line)["attrs"].item()
    return json.loads(raw) if raw else {}


def test_sacct_default_table_out_of_memory_rows_are_the_cgroup_oom_kill() -> None:
    events = _events(fixture_path("slurm_sacct_out_of_memory_batch_extern_01.log").read_text())
    kinds = dict(zip(events["line"], events["kind"]))
    assert kinds == {1: "log", 2: "log", 3: "oom_kill", 4: "oom_kill", 5: "log", 6: "process_killed", 7: "oom_kill"}
    assert _attrs(events, 3)["slurm_step"] == "3801897"
    assert _attrs(events, 4)["slurm_step"] == "3801897.bat+"
    assert _attrs(events, 4)["oom"] == "slurm_cgroup"


def test_seff_out_of_memory_state_is_the_cgroup_oom_kill() -> None:
    events = _events(fixture_path("slurm_seff_out_of_memory_01.log").read_text())
    row = events.filter(pl.col("line") == 4).row(0, named=True)
    assert (row["kind"], row["severity"], row["exit_code"]) == ("oom_kill", "error", 0)
    assert events.filter(pl.col("kind") != "log")["line"].to_list() == [4, 12]


@pytest.mark.parametrize(
    ("line", "kind", "step", "reason"),
    [
        # --parsable2 ("|"-separated, whole state names)
        ("1234.batch|OUT_OF_MEMORY|0:125|16000M|00:01:02|node01", "oom_kill", "1234.batch", None),
        ("1234|TIMEOUT|0:0|00:10:00", "process_killed", "1234", "time_limit"),
        # default columns: a step's NODE_FAIL, an array task's OOM
        ("829110.0          bash                arcadm          1  NODE_FAIL      0:0", "process_killed", "829110.0", "node_failure"),
        ("4574632_7    hello-wor+   normal_q     arcadm          1 OUT_OF_ME+    0:125", "oom_kill", "4574632_7", None),
    ],
)
def test_sacct_rows_of_other_shapes(line: str, kind: str, step: str, reason: str | None) -> None:
    events = _events(line + "\n")
    assert events["kind"].to_list() == [kind]
    attrs = _attrs(events, 1)
    assert attrs.get("slurm_step") == step and attrs.get("cancel_reason") == reason


@pytest.mark.parametrize(
    "line",
    [
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode",
        "829110.batch      batch                system          2     FAILED      1:0",
        "3802007.ext+     extern              rc_admin          1  COMPLETED      0:0",
        "   JobState=OUT_OF_MEMORY_IS_NOT_A_STATE Reason=None",
        "TIMEOUT waiting for the rendezvous at 12:30",
    ],
)
def test_other_lines_are_no_kill(line: str) -> None:
    assert _events(line + "\n")["kind"].to_list() == ["log"]


def test_scontrol_job_state_out_of_memory() -> None:
    events = _events("   JobState=OUT_OF_MEMORY Reason=OutOfMemory Dependency=(null)\n")
    assert events["kind"].to_list() == ["oom_kill"]


# (a short id's step, "1234.0 ", is taken for a time prefix by the line framing: see the report; real job ids run longer)
@given(
    job=st.integers(10**5, 10**9),
    step=st.sampled_from(["", ".batch", ".bat+", ".extern", ".ext+", ".0", ".12"]),
    gap=st.integers(1, 12),
    code=st.integers(0, 255),
    signal=st.integers(0, 255),
)
def test_any_out_of_memory_row_is_an_oom_kill_of_its_step(job: int, step: str, gap: int, code: int, signal: int) -> None:
    line = f"{job}{step}{' ' * gap}batch   acct   1 OUT_OF_ME+ {' ' * gap}{code}:{signal} "
    events = _events(line + "\n")
    assert events["kind"].to_list() == ["oom_kill"]
    assert _attrs(events, 1)["slurm_step"] == f"{job}{step}"


def test_a_failed_rows_state_and_exit_code_are_read() -> None:
    text = "JobID|JobName|State|ExitCode\n4242|train|FAILED|1:0\n4242.batch|batch|FAILED|1:0\n4243|train|OUT_OF_MEMORY|0:125\n"
    rows = rca.parse_text(text, file="sacct.txt").sort("line").to_dicts()[1:]
    assert [(row["kind"], row["severity"], row["exit_code"]) for row in rows] == [
        ("log", "error", 1), ("log", "error", 1), ("oom_kill", "error", 0),
    ]
    assert [json.loads(row["attrs"])["slurm_state"] for row in rows] == ["FAILED", "FAILED", "OUT_OF_MEMORY"]
