"""BusyBox syslogd's priority by name between host and tag ("ccgx user.err kernel: …"), and a runtime's bare logrus line under
a log shipper's stamp ("2022-03-18T10:01:17+00:00<TAB>time="…" level=info msg=…")."""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.sources import _syslog
from tests.conftest import FIXED_MTIME, fixture_path

_BUSYBOX = "kern_log_busybox_facility_level_hung_task_arm_01.log"
_SHIPPED = "journal_shipper_iso_tab_containerd_logrus_stop_sandbox_01.log"


def _parsed(text: str, name: str | None = None) -> pl.DataFrame:
    return rca.parse_text(text, file=name or "messages", reference_time=FIXED_MTIME)


def _fixture(name: str) -> pl.DataFrame:
    return _parsed(fixture_path(name).read_text(), name)


def test_busybox_messages_of_kernel_lines_are_the_kernels_with_host_time_and_hung_task() -> None:
    text = fixture_path(_BUSYBOX).read_text()
    assert sources.sniff(text.splitlines()[:20])[0].name == "kernel"
    events = _fixture(_BUSYBOX)
    assert events.select("line", "n_lines", "severity", "pid", "process", "host", "ts_raw").rows() == [
        (1, 1, "warning", None, None, "ccgx", "Sep 13 14:28:02"),
        (2, 1, "warning", None, None, "ccgx", "Sep 13 14:28:02"),
        (3, 9, "error", 1339, "vedirect-dbus", "ccgx", "Sep 13 14:28:02"),
    ]
    assert json.loads(events["attrs"][2]) == {"blocked_seconds": 120, "facility": "user"}
    assert events["ts_quality"].to_list() == ["year_from_mtime"] * 3


def test_busybox_level_is_the_severity_of_a_program_without_rules_unless_its_message_names_one() -> None:
    events = _parsed(
        "Nov 10 20:20:00 router cron.err crond[2507]: USER root pid 25593 cmd /root/wg-watchdog.sh\n"
        "Nov 10 20:20:01 router daemon.info app[7]: ERROR: disk full\n"
    )
    assert events.select("process", "pid", "host", "severity").rows() == [("crond", 2507, "router", "error"), ("app", 7, "router", "error")]
    assert [json.loads(attrs)["facility"] for attrs in events["attrs"]] == ["cron", "daemon"]


def test_a_tag_spelled_like_a_priority_is_still_the_tag() -> None:
    # Only "facility.level" followed by a space is the priority: "user.err:" is a program's tag, as before.
    events = _parsed("Sep 13 14:28:02 ccgx user.err: something\nSep 13 14:28:03 ccgx user.err kernel.x: other\n")
    assert events.select("process", "host").rows() == [("user.err", "ccgx"), ("kernel.x", "ccgx")]


_LEVELS = {
    "emerg": "critical", "panic": "critical", "alert": "critical", "crit": "critical", "err": "error", "error": "error",
    "warn": "warning", "warning": "warning", "notice": "notice", "info": "info", "debug": "debug",
}
_FACILITY_NAMES = {"security": "auth", **{name: name for name in _syslog._NAMED_FACILITIES if name != "security"}}


@settings(max_examples=40, deadline=None)
@given(
    facility=st.sampled_from(sorted(_FACILITY_NAMES)), level=st.sampled_from(sorted(_LEVELS)),
    host=st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True), pid=st.integers(1, 4_000_000),
)
def test_any_busybox_priority_frames_as_the_same_line_without_it(facility: str, level: str, host: str, pid: int) -> None:
    events = _parsed(f"Jan  5 06:43:16 {host} {facility}.{level} prog[{pid}]: hello world\n")
    row = events.row(0, named=True)
    assert (row["host"], row["process"], row["pid"], row["message"], row["ts_raw"]) == (host, "prog", pid, "hello world", "Jan  5 06:43:16")
    assert (row["severity"], json.loads(row["attrs"])["facility"]) == (_LEVELS[level], _FACILITY_NAMES[facility])


def test_shipped_logrus_lines_are_the_runtimes_with_their_own_time_and_container() -> None:
    text = fixture_path(_SHIPPED).read_text()
    assert sources.sniff(text.splitlines())[0].name == "syslog"
    events = _fixture(_SHIPPED)
    assert events.select("process", "format", "severity", "ts_quality").rows() == [("containerd", "logrus", "info", "exact")] * 2 + [
        ("containerd", "logrus", "error", "exact")
    ]
    assert events["ts_raw"].to_list() == ["2022-03-18T10:01:17.056016241Z", "2022-03-18T10:01:17.055464685Z", "2022-03-18T10:01:16.158859192Z"]
    assert events["container_id"].str.slice(0, 8).to_list() == ["60228bff", "60228bff", "f293dadd"]
    assert events["message"][1].startswith('time="2022-03-18T10:01:17.055464685Z" level=info msg="StopContainer for')


def test_a_syslog_stamp_alone_before_a_logrus_line_is_a_shippers_too() -> None:
    # (The shape of containerd#10636's paste: the host and tag gone, the syslog stamp kept.)
    events = _parsed(
        'Aug  7 19:07:50 time="2024-08-07T19:07:50.123Z" level=error msg="StopContainer for \\"'
        + "a" * 64 + '\\" failed" error="failed to kill"\n'
    )
    assert events.select("process", "severity", "ts_raw", "ts_quality", "container_id").row(0) == (
        "containerd", "error", "2024-08-07T19:07:50.123Z", "exact", "a" * 64
    )


def test_a_shipped_logrus_line_of_no_runtime_is_not_the_runtimes() -> None:
    # A generic Go program's logrus line names no runtime: under a stamp as bare, it is no container runtime's line.
    events = _parsed('2022-03-18T10:01:17+00:00\ttime="2022-03-18T10:01:17Z" level=info msg="listening on :8080"\n')
    assert events["process"].to_list() != ["containerd"]
