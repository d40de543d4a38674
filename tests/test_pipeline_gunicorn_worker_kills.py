"""Pipeline source: gunicorn's arbiter log (MLflow's and other model servers' front): its header's pid and level, and its
reports of a worker a signal ended, with the worker's pid."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import FIXED_MTIME, fixture_path


def _events(text: str):
    return rca.parse_text(text, file="x.log", reference_time=FIXED_MTIME)


def test_the_sample_kills_are_the_workers_and_the_header_is_peeled() -> None:
    events = _events(fixture_path("gunicorn_worker_sent_sigkill_perhaps_oom_pr2419_01.log").read_text())
    kills = events.filter(events["kind"] == "process_killed")
    assert kills["pid"].to_list() == [21, 22]
    assert kills["line"].to_list() == [6, 9]
    assert {json.loads(attrs)["signal"] for attrs in kills["attrs"]} == {"SIGKILL"}
    booting = events.filter(events["line"] == 4).row(0, named=True)
    assert (booting["pid"], booting["severity"], booting["format"], booting["message"]) == (21, "info", "gunicorn", "Booting worker with pid: 21")


def test_a_timeout_is_the_arbiters_line_and_the_kill_the_workers() -> None:
    events = _events(
        "[2025-09-22 00:34:38 +0000] [1] [CRITICAL] WORKER TIMEOUT (pid:25)\n"
        "[2025-09-22 00:34:39 +0000] [1] [ERROR] Worker (pid:25) was sent SIGKILL! Perhaps out of memory?\n"
    )
    assert events.select("kind", "pid", "severity").rows() == [("log", 1, "critical"), ("process_killed", 25, "error")]


def test_an_exit_code_is_no_kill() -> None:
    (event,) = _events("[2024-01-19 00:49:02 +0000] [2973] [ERROR] Worker (pid:3005) was sent code 134!\n").to_dicts()
    assert (event["kind"], event["severity"], event["pid"]) == ("log", "error", 2973)


@settings(max_examples=40, deadline=None)
@given(
    arbiter=st.integers(1, 4_194_304), worker=st.integers(1, 4_194_304),
    signal=st.sampled_from([("SIGKILL", 9), ("SIGTERM", 15), ("SIGSEGV", 11), ("SIGABRT", 6)]), new_wording=st.booleans(),
)
def test_either_wording_names_the_worker_and_its_signal(arbiter: int, worker: int, signal: tuple[str, int], new_wording: bool) -> None:
    name, number = signal
    report = f"Worker (pid:{worker}) was sent {name}!" if new_wording else f"Worker with pid {worker} was terminated due to signal {number}"
    (event,) = _events(f"[2024-03-05 10:00:00 +0000] [{arbiter}] [ERROR] {report}\n").to_dicts()
    assert (event["kind"], event["pid"], json.loads(event["attrs"])["signal"]) == ("process_killed", worker, name)
