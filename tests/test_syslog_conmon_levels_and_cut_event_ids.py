"""conmon's and podman's journal lines on a container node: conmon's level tag and the container id it cuts to 20
characters, a podman event whose id a pager cut at the terminal's width; node-problem-detector's klog lines in the
journal stay its own log lines."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import polars as pl
import pytest

import rca
from tests.conftest import DATA, FIXED_MTIME

FULL_ID = "0644511bc2734f5ff9f9532fdecddb9f1b92597fe269168b137ada040c3a3118"
ENVELOPE = "Jan 09 10:07:46 ceasphere23-node-3 "


def _one(line: str) -> dict:
    events = rca.parse_text(ENVELOPE + line + "\n", file="messages", reference_time=FIXED_MTIME)
    assert events.height == 1
    return events.row(0, named=True)


def _fixture(name: str) -> pl.DataFrame:
    return rca.parse_text((DATA / "syslog" / name).read_text(), file=name, reference_time=FIXED_MTIME).sort("line")


def _attrs(row: dict) -> dict:
    return json.loads(row["attrs"]) if row["attrs"] else {}


@pytest.mark.parametrize(
    ("tag", "severity"),
    [("ninfo", "info"), ("nwarn", "warning"), ("pwarn", "warning"), ("error", "error"), ("ndebug", "debug"), ("ntrace", "debug")],
)
def test_conmon_tag_is_the_level_and_the_cut_id_is_kept(tag: str, severity: str) -> None:
    row = _one(f"conmon[330022]: conmon 0644511bc2734f5ff9f9 <{tag}>: terminal_ctrl_fd: 12")
    assert row["kind"] == "log"
    assert row["severity"] == severity
    # conmon's own line: its process and pid stay, the container is named by the prefix alone.
    assert (row["process"], row["pid"], row["host"]) == ("conmon", 330022, "ceasphere23-node-3")
    assert row["container_id"] is None
    assert _attrs(row) == {"container_id_prefix": "0644511bc2734f5ff9f9"}


def test_conmon_exit_line_unchanged() -> None:
    row = _one("conmon[258200]: conmon f1ee30489db2a0242ef1 <ninfo>: container 258213 exited with status 137")
    assert (row["kind"], row["severity"], row["pid"], row["exit_code"]) == ("process_killed", "error", 258213, 137)
    assert _attrs(row)["container_id_prefix"] == "f1ee30489db2a0242ef1"


def test_conmon_oom_line_unchanged() -> None:
    row = _one("conmon[258200]: conmon f1ee30489db2a0242ef1 <ninfo>: OOM received")
    assert (row["kind"], row["severity"]) == ("oom_kill", "error")
    assert _attrs(row)["container_id_prefix"] == "f1ee30489db2a0242ef1"


def test_other_program_conmon_like_text_is_not_read() -> None:
    row = _one("myapp[42]: conmon 0644511bc2734f5ff9f9 <nwarn>: quoted in an app's line")
    assert (row["process"], row["pid"], row["severity"], row["attrs"]) == ("myapp", 42, None, None)


PODMAN = "podman[10188]: 2022-06-04 16:50:48.432954886 +0300 +03 m=+0.051598633 container {event} {id}"


@pytest.mark.parametrize(
    ("event", "cut", "process", "pid"),
    [("died", "1212e13e1fb1032d49e32>", None, None), ("remove", "1212e13e1fb1032d49e>", "podman", 10188)],
)
def test_podman_event_id_cut_by_the_pager(event: str, cut: str, process: str | None, pid: int | None) -> None:
    row = _one(PODMAN.format(event=event, id=cut))
    assert row["kind"] == "log"
    assert row["container_id"] is None
    attrs = _attrs(row)
    assert attrs["runtime_event"] == event and attrs["container_id_prefix"] == cut.rstrip(">")
    # A death is about the container (as with a full id); a removal stays podman's own line.
    assert (row["process"], row["pid"]) == (process, pid)


def test_podman_full_id_event_unchanged() -> None:
    full = "1212e13e1fb1032d49e32" + "0" * 43
    row = _one(PODMAN.format(event="died", id=full) + " (image=x, name=syncthing)")
    assert (row["container_id"], row["container"], row["process"]) == (full, "syncthing", None)


def test_crio_journal_conmon_lines_and_created_container() -> None:
    events = _fixture("journal_crio_conmon_ninfo_created_container_01.log")
    conmon = events.filter(pl.col("process") == "conmon")
    assert conmon["line"].to_list() == [2, 3, 4]
    assert conmon["severity"].to_list() == ["info"] * 3
    assert conmon["pid"].to_list() == [330022] * 3
    assert {json.loads(a)["container_id_prefix"] for a in conmon["attrs"]} == {FULL_ID[:20]}
    created = events.filter(pl.col("line") == 6).row(0, named=True)
    assert (created["process"], created["pid"], created["container_id"]) == ("crio", 27514, FULL_ID)
    assert (created["namespace"], created["pod"], created["container"]) == ("ccos-monitoring", "prometheus-agent-0-0", "prometheus")


def test_npd_journal_lines_keep_pid_process_and_level() -> None:
    events = _fixture("journal_npd_klog_startup_monitors_utc_01.log")
    npd = events.filter(pl.col("process") == "node-problem-detector")
    assert npd.height == 17
    assert set(npd["kind"]) == {"log"} and set(npd["severity"]) == {"info"}
    assert set(npd["pid"]) == {13978} and set(npd["host"]) == {"abm-user-w2"}
    # (the year from journalctl's banner, its zone UTC)
    assert npd["ts"][0] == datetime(2024, 7, 28, 7, 15, 55, tzinfo=timezone.utc)
