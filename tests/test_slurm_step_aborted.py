"""srun's "Job step aborted" line: a warning, the step's teardown, while the kill and the cancel keep lines of their own."""

from __future__ import annotations

import json

import pytest

from tests.conftest import event_on_line, parse_fixture, parse_log


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("slurm_step_exceeded_memory_limit_being_killed_01.log", 8),
        ("lightning_slurm_time_limit_received_sigterm_bypassing_01.log", 2),
        ("slurm_job_step_cancelled_time_limit_01.log", 1),
    ],
)
def test_real_step_aborted_line_is_a_warning(name: str, line: int) -> None:
    row = event_on_line(parse_fixture(name), line)
    assert row["message"].startswith("srun: Job step aborted: Waiting up to ")
    assert (row["source"], row["kind"], row["severity"]) == ("pipeline", "log", "warning")


def test_the_kill_and_the_cancel_around_it_keep_their_own_reading() -> None:
    events = parse_fixture("slurm_step_exceeded_memory_limit_being_killed_01.log")
    cancelled, aborted, killed = (event_on_line(events, line) for line in (7, 8, 9))
    # a cancel with no reason of its own follows the limit kill: an error, no kill of its own
    assert (cancelled["kind"], cancelled["severity"]) == ("log", "error")
    assert (aborted["kind"], aborted["severity"]) == ("log", "warning")
    assert (killed["kind"], killed["severity"], json.loads(killed["attrs"])["signal"]) == ("process_killed", "error", "SIGKILL")


def test_a_printed_level_wins_and_a_quote_is_no_step_abort() -> None:
    events = parse_log(
        "ERROR: srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
        "the job printed 'srun: Job step aborted: Waiting up to 32 seconds' earlier\n"
    )
    assert events["severity"].to_list() == ["error", None]
