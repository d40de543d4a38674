"""slurmctld's own lines about a job's end (its log read by the pipeline source's Slurm rules): the cgroup OOM kill it
learnt of, the batch script's exit status, and the kills it made itself (time limit, failed node)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import fixture_path


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def _row(events: pl.DataFrame, line: int) -> dict:
    row = events.filter(pl.col("line") == line).row(0, named=True)
    row["attrs"] = json.loads(row["attrs"]) if row["attrs"] else {}
    return row


def test_job_complete_oom_failure_is_the_cgroup_oom_kill_of_that_job() -> None:
    events = _events(fixture_path("slurm_slurmctld_oom_failure_kill_task_failed_01.log").read_text())
    oom = _row(events, 4)
    assert (oom["kind"], oom["severity"], oom["ts_quality"]) == ("oom_kill", "error", "exact")
    assert oom["ts"] == datetime(2022, 8, 23, 19, 38, 53, 448000, tzinfo=UTC)
    assert oom["attrs"] == {"slurm_step": "48296", "oom": "slurm_cgroup"}
    # the job's "done" after it, the node drained for an unkillable task and scancel's request stay log lines
    assert events.filter(pl.col("kind") != "log")["line"].to_list() == [4]
    failed = _row(events, 9)
    assert (failed["severity"], failed["attrs"]["slurm_step"]) == ("error", "48294")
    assert _row(events, 1)["attrs"] == {"slurm_step": "48294"}


def test_time_limit_exhausted_is_slurmctld_killing_the_job() -> None:
    events = _events(fixture_path("slurm_slurmctld_time_limit_exhausted_wexitstatus_01.log").read_text())
    killed = _row(events, 4)
    assert (killed["kind"], killed["severity"]) == ("process_killed", "error")
    assert killed["attrs"] == {"slurm_step": "41981", "cancel_reason": "time_limit"}
    status = _row(events, 8)
    assert (status["kind"], status["severity"], status["exit_code"]) == ("log", "error", 1)


def test_requeue_after_node_failure_is_a_kill_on_that_node() -> None:
    events = _events(fixture_path("slurm_slurmctld_node_failure_requeue_01.log").read_text())
    assert events.filter(pl.col("kind") == "process_killed")["line"].to_list() == [6, 8]
    killed = _row(events, 8)
    assert killed["host"] == "cpu15"
    assert killed["attrs"] == {"slurm_step": "44859", "cancel_reason": "node_failure"}
    assert _row(events, 10)["severity"] == "error"  # "error: Nodes cpu15 not responding, setting DOWN"


def test_killing_on_failed_node_every_spelling() -> None:
    text = "\n".join([
        "[2024-05-01T10:00:00.123] error: Killing JobId=1234 on failed node gpu01",
        "[2024-05-01T10:00:00.124] Killing job_id 77 on failed node n-3.cluster",
        "[2024-05-01T10:00:00.125] Killing StepId=1234.0 due to failed node gpu02",
    ])
    events = _events(text)
    assert events["kind"].to_list() == ["process_killed"] * 3
    assert events["host"].to_list() == ["gpu01", "n-3.cluster", "gpu02"]
    assert [json.loads(a)["slurm_step"] for a in events["attrs"]] == ["1234", "77", "1234.0"]


def test_a_successful_exit_status_and_the_wtermsig_line_are_no_failure() -> None:
    text = "\n".join([
        "[2022-06-01T01:17:06.607] _job_complete: JobId=42784 WEXITSTATUS 0",
        "[2022-06-01T13:50:21.917] _job_complete: JobId=42825 WTERMSIG 126",
        "[2022-06-01T13:50:21.917] _job_complete: JobId=42825 cancelled by interactive user",
    ])
    events = _events(text)
    assert events["kind"].to_list() == ["log"] * 3
    assert events["exit_code"].to_list() == [0, None, None]
    assert events["severity"].to_list() == [None, None, None]


@settings(max_examples=40, deadline=None)
@given(job=st.integers(1, 10**9), status=st.integers(0, 255), array=st.one_of(st.none(), st.integers(0, 9999)))
def test_wexitstatus_is_the_exit_code_of_its_job(job: int, status: int, array: int | None) -> None:
    job_id = f"{job}_{array}({job + 1})" if array is not None else str(job)
    row = _row(_events(f"[2024-05-01T10:00:00.000] _job_complete: JobId={job_id} WEXITSTATUS {status}"), 1)
    assert row["exit_code"] == status
    assert row["attrs"]["slurm_step"] == (f"{job}_{array}" if array is not None else str(job))
    assert row["severity"] == ("error" if status else None)
