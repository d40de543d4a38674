"""PBS Pro / Torque, IBM Spectrum LSF and Grid Engine: their kills of a job over a limit and their accounting of its end.

Every line below is a real one, from public job logs (the fixtures' rows in tests/data/real_logs/SOURCES.md name most;
the Torque vmem line is from https://github.com/veg/hyphy/issues/500, the walltime lines from public PBS job logs).
All are parsed in one call; each assertion reads its own line's event.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca

LINES = [
    "=>> PBS: job killed: mem 38427376kb exceeded limit 33554432kb",  # 1
    "dask-worker.o1838772:=>> PBS: job killed: mem job total 115343360 kb exceeded limit 115343360 kb",  # 2
    "=>> PBS: job killed: vmem 3372163072 exceeded limit 2147483648",  # 3
    "=>> PBS: job killed: walltime 3611 exceeded limit 3600",  # 4
    "user123@elmo3-1:~$ =>> PBS: job killed: walltime 7230 exceeded limit 7200",  # 5
    "Exit_status=271",  # 6
    "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",  # 7
    "TERM_RUNLIMIT: job killed after reaching LSF run time limit.",  # 8
    "failed: 100 : assumedly after job",  # 9
    "exit_status  1                   ",  # 10
    "failed       0    ",  # 11
    "failed execd enforced h_vmem limit because:",  # 12
    "job 7921630.1 died through signal KILL (9).",  # 13
]


def _events() -> dict[int, dict]:
    frame = rca.parse_text("\n".join(LINES) + "\n", file="pbs_lsf_sge.log")
    rows = frame.with_columns(pl.col("attrs").fill_null("{}")).to_dicts()
    return {row["line"]: {**row, "attrs": json.loads(row["attrs"])} for row in rows}


EVENTS = _events()


def test_pbs_memory_kill_reads_used_and_limit_in_kib_or_bytes() -> None:
    for line, used, limit in ((1, 38427376 * 1024, 33554432 * 1024), (2, 115343360 * 1024, 115343360 * 1024), (3, 3372163072, 2147483648)):
        event = EVENTS[line]
        assert (event["kind"], event["severity"], event["attrs"]["oom"]) == ("process_killed", "error", "pbs_memory_limit"), line
        assert (event["mem_used_bytes"], event["mem_total_bytes"]) == (used, limit), line
    assert EVENTS[3]["attrs"]["pbs_limit"] == "vmem"


def test_pbs_walltime_kill_is_a_time_limit_kill_without_memory() -> None:
    for line in (4, 5):
        event = EVENTS[line]
        assert (event["kind"], event["attrs"]["cancel_reason"], event["attrs"]["pbs_limit"]) == ("process_killed", "time_limit", "walltime")
        assert event["mem_used_bytes"] is None and "oom" not in event["attrs"]


def test_pbs_exit_status_over_256_is_the_signal_that_killed_the_job() -> None:
    event = EVENTS[6]
    assert (event["kind"], event["exit_code"], event["attrs"]["signal"]) == ("process_killed", 271, "SIGTERM")


def test_lsf_term_reasons() -> None:
    assert (EVENTS[7]["kind"], EVENTS[7]["attrs"]["oom"]) == ("process_killed", "lsf_memory_limit")
    assert (EVENTS[8]["kind"], EVENTS[8]["attrs"]["cancel_reason"]) == ("process_killed", "time_limit")
    assert "oom" not in EVENTS[8]["attrs"]


def test_sge_accounting_and_mail() -> None:
    assert (EVENTS[9]["kind"], EVENTS[9]["severity"], EVENTS[9]["attrs"]["sge_failed"]) == ("log", "error", 100)
    assert (EVENTS[10]["exit_code"], EVENTS[10]["severity"]) == (1, "error")
    assert EVENTS[11]["severity"] != "error"
    assert (EVENTS[12]["kind"], EVENTS[12]["attrs"]["oom"], EVENTS[12]["attrs"]["sge_limit"]) == ("process_killed", "sge_memory_limit", "h_vmem")
    assert (EVENTS[13]["kind"], EVENTS[13]["attrs"]["signal"]) == ("process_killed", "SIGKILL")


@settings(max_examples=10, deadline=None)
@given(
    resource=st.sampled_from(["mem", "vmem", "pmem", "walltime", "cput"]),
    used=st.integers(0, 2**32), limit=st.integers(0, 2**32), unit=st.sampled_from(["", "b", "kb", "mb", "gb", " kb"]),
)
def test_pbs_kill_line_shape(resource: str, used: int, limit: int, unit: str) -> None:
    line = f"=>> PBS: job killed: {resource} {used}{unit} exceeded limit {limit}{unit}"
    event = rca.parse_text(line + "\n", file="pbs.log").row(0, named=True)
    attrs = json.loads(event["attrs"])
    assert event["kind"] == "process_killed" and attrs["pbs_limit"] == resource
    factor = {"": 1, "b": 1, "kb": 1024, " kb": 1024, "mb": 1024**2, "gb": 1024**3}[unit]
    memory = resource in ("mem", "vmem", "pmem")
    assert event["mem_used_bytes"] == (used * factor if memory else None)
    assert event["mem_total_bytes"] == (limit * factor if memory else None)
