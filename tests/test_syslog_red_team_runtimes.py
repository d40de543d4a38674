"""Container runtimes' journal lines found wanting on real logs: a wrapper script's containerd, a task event containerd failed
to handle, Docker 23's stop-timeout wording (fixtures in tests/data/syslog, listed in tests/data/real_logs/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import rca

DATA = Path(__file__).parent / "data" / "syslog"
_ID = "b2a64510fa15a5027f06e0c1bec3f798e5d19a65fd13e3ae1d91e2f246b7d3ae"


def _events(name: str) -> pl.DataFrame:
    return rca.parse_text((DATA / name).read_text(), file=name).sort("line")


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).row(0, named=True)


def test_a_wrapper_scripts_containerd_lines_take_containerds_rules() -> None:
    row = _row(_events("journal_start_containerd_sh_taskexit_struct_01.log"), 1)
    assert (row["pid"], row["exit_code"], row["container_id"], row["process"]) == (2803, 0, _ID, None)
    assert json.loads(row["attrs"]) == {"runtime": "containerd"}


def test_a_script_without_a_runtimes_wordings_keeps_its_name() -> None:
    text = 'Apr 09 06:30:50 node1 start-app.sh[1562]: time="2025-04-09T06:30:50Z" level=info msg="listening on :8080"\n'
    row = rca.parse_text(text, file="x.log").row(0, named=True)
    assert (row["process"], row["pid"], row["container_id"]) == ("start-app.sh", 1562, None)


def test_a_task_event_containerd_failed_to_handle_names_the_container_not_its_exit() -> None:
    row = _row(_events("journal_k3s_containerd_log_bare_failed_taskexit_struct_01.log"), 5)
    assert row["container_id"] == "1b1524c02bb058e9c817ddf7383c3b5455cd57206d5f3ce5cc06863fc4107cb8"
    assert (row["kind"], row["process"], row["pid"], row["exit_code"], row["severity"]) == ("log", "containerd", None, None, "error")


def test_a_backoff_of_the_protobuf_text_event_keeps_containerds_pid() -> None:
    container = "a8281e795e3a733d6388092b55855a99f39190019af6ed021c535e9504cabe76"
    text = (
        f'Nov 06 06:08:50 myhost containerd[31892]: time="2023-11-06T06:08:50.485143769Z" level=error msg="Failed to handle backOff event '
        f'container_id:\\"{container}\\" id:\\"{container}\\" pid:12930 exit_status:137 exited_at:{{seconds:1699250901 nanos:264293162}} '
        f'for {container}" error="failed to handle container TaskExit event: failed precondition"\n'
    )
    row = rca.parse_text(text, file="x.log").row(0, named=True)
    assert (row["kind"], row["process"], row["pid"], row["exit_code"], row["container_id"]) == ("log", "containerd", 31892, None, container)


def test_docker_23s_stop_timeout_wording_is_the_runtimes_sigkill() -> None:
    events = _events("journal_dockerd_force_kill_container_field_swarm_01.log")
    forced, ignored = _row(events, 1), _row(events, 2)
    assert forced["container_id"] == ignored["container_id"] == "37db2b706a7db19d866f70b9d150e396a2fd1629d530bd44d678332b646dfc74"
    assert (forced["kind"], forced["process"], forced["pid"]) == ("log", None, None)
    assert json.loads(forced["attrs"]) == {"signal": "SIGKILL", "runtime": "dockerd"}
    assert (ignored["process"], ignored["pid"]) == ("dockerd", 750)


def test_a_units_oom_kill_result_is_no_second_kill() -> None:
    events = _events("journal_unit_oom_kill_result_stress_exit_1_01.log")
    assert events.filter(pl.col("kind") == "oom_kill")["line"].to_list() == [6]
    assert json.loads(_row(events, 8)["attrs"])["result"] == "oom-kill"
    assert _row(events, 7)["exit_code"] == 1
