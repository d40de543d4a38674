"""Generic application-log headers checked on Loghub's public 2k samples: Android logcat, oslo.log (OpenStack), Windows CBS,
Hadoop 0.x log4j, and macOS syslog programs whose names hold spaces."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import FIXED_MTIME, fixture_path


def _parse(text: str, file: str = "app.log") -> pl.DataFrame:
    return rca.parse_text(text, file=file, reference_time=FIXED_MTIME)


def _fixture(name: str) -> pl.DataFrame:
    return _parse(fixture_path(name).read_text(), file=name)


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).row(0, named=True)


def test_logcat_threadtime_gives_time_pid_and_priority() -> None:
    events = _fixture("loghub_app_android_2k_head.log")
    assert events.height == 30 and set(events["format"]) == {"logcat"}
    first = _row(events, 1)
    assert first["ts"] == datetime(2026, 3, 17, 16, 13, 38, 811000, tzinfo=UTC)
    assert (first["ts_quality"], first["pid"], first["severity"]) == ("year_from_mtime", 1702, "debug")
    assert first["message"].startswith("WindowManager: printFreezingDisplayLogs")
    assert (_row(events, 4)["severity"], _row(events, 18)["severity"], _row(events, 20)["severity"]) == ("debug", "info", "warning")
    assert events["host"].null_count() == events["pod"].null_count() == events["gpu_index"].null_count() == 30


def test_logcat_assert_and_error_priorities() -> None:
    events = _parse("03-17 16:13:38.811  1702  2395 E AndroidRuntime: FATAL EXCEPTION: main\n03-17 16:13:38.812  1702  2395 A libc: abort\n")
    assert events["severity"].to_list() == ["error", "critical"]
    assert events["pid"].to_list() == [1702, 1702]


@settings(max_examples=40, deadline=None)
@given(
    # days before the file's mtime (FIXED_MTIME, 30 November): a stamp just after a file's mtime is read in that year, within the
    # clock skew timeutil.yearless_to_utc allows, which is that function's own test's subject
    month=st.integers(1, 11), day=st.integers(1, 28), hour=st.integers(0, 23), minute=st.integers(0, 59), ms=st.integers(0, 999),
    pid=st.integers(1, 99999), tid=st.integers(1, 99999), letter=st.sampled_from("VDIWEF"),
)
def test_logcat_header_round_trips(month: int, day: int, hour: int, minute: int, ms: int, pid: int, tid: int, letter: str) -> None:
    line = f"{month:02d}-{day:02d} {hour:02d}:{minute:02d}:07.{ms:03d} {pid:5d} {tid:5d} {letter} Tag: message\n"
    row = _parse(line).row(0, named=True)
    want = datetime(2026, month, day, hour, minute, 7, ms * 1000, tzinfo=UTC)
    assert (row["ts"], row["pid"], row["format"]) == (want, pid, "logcat")
    assert row["severity"] == {"V": "debug", "D": "debug", "I": "info", "W": "warning", "E": "error", "F": "critical"}[letter]
    assert row["message"] == "Tag: message"


def test_oslo_log_behind_its_file_name() -> None:
    events = _fixture("loghub_app_openstack_2k_head.log")
    assert set(events["format"]) == {"oslo"} and events["ts_quality"].unique().to_list() == ["exact"]
    first = _row(events, 1)
    assert first["ts"] == datetime(2017, 5, 16, 0, 0, 0, 8000, tzinfo=UTC)
    assert (first["pid"], first["severity"]) == (25746, "info")
    assert first["message"].startswith("[req-38101a0b-2096-447d-96ea-a692162415ae ")
    assert _row(events, 23)["pid"] == 2931


def test_oslo_levels_and_grep_file_prefix() -> None:
    events = _parse(
        "nova-api.log:2017-05-16 00:00:00.008 25746 WARNING nova.x [-] slow\n"
        "2017-05-16 00:00:01.000 25 AUDIT nova.compute.resource_tracker [req-1 - - - - -] Auditing\n"
    )
    assert events["severity"].to_list() == ["warning", "notice"]
    assert events["pid"].to_list() == [25746, 25]
    assert events["message"].to_list() == ["[-] slow", "[req-1 - - - - -] Auditing"]


def test_words_that_look_like_a_file_name_or_oslo_stay_text() -> None:
    events = _parse("train.log saved to disk\n3 ERROR tests failed\n")
    assert events["message"].to_list() == ["train.log saved to disk", "3 ERROR tests failed"]
    assert events["pid"].null_count() == 2 and events["ts"].null_count() == 2


def test_windows_cbs_stamp_and_level() -> None:
    events = _fixture("loghub_app_windows_2k_head.log")
    assert set(events["format"]) == {"windows_cbs"} and set(events["severity"]) == {"info"}
    assert _row(events, 1)["ts"] == datetime(2016, 9, 28, 4, 30, 30, tzinfo=UTC)
    assert events["pid"].null_count() == 30
    other = _parse("2016-09-29 02:04:38, Error                 CBS    Failed to process single phase execution. [HRESULT = 0x800f0816]\n")
    assert other["severity"].to_list() == ["error"]


def test_hadoop_compact_log4j_stamp() -> None:
    events = _fixture("loghub_app_hdfs_2k_head.log")
    first = _row(events, 1)
    assert (first["ts"], first["ts_raw"], first["severity"]) == (datetime(2008, 11, 9, 20, 36, 15, tzinfo=UTC), "081109 203615", "info")
    assert first["message"].startswith("dfs.DataNode$PacketResponder: ")
    assert events["pid"].null_count() == events.height  # the number after the stamp is a thread
    assert _parse("081109 214043 2561 WARN dfs.DataNode: x\n")["severity"].to_list() == ["warning"]


def test_mac_programs_with_spaces_are_their_own_lines() -> None:
    events = _fixture("loghub_syslog_mac_2k_lines1140_1169.log")
    assert events.height == 30 and set(events["n_lines"]) == {1}
    chrome = _row(events, 12)
    assert (chrome["process"], chrome["pid"], chrome["host"]) == ("Google Chrome", 35628, "authorMacBook-Pro")
    assert chrome["ts"] == datetime(2026, 7, 5, 0, 21, 7, tzinfo=UTC)
    assert chrome["message"].startswith("-_continuousScroll is deprecated")


def test_spaced_program_needs_its_pid() -> None:
    events = _parse(
        "Jul  5 00:21:07 mac Google Chrome[35628]: first\n"
        "Jul  5 00:21:08 mac BezelServices 255.10[94]: second\n"
        "Jul  5 00:21:09 mac sshd[1]: third\n"
        "Jul  5 00:21:10 mac some words: not a tag\n"
    )
    assert events.filter(pl.col("line") <= 3)["process"].to_list() == ["Google Chrome", "BezelServices 255.10", "sshd"]
    assert "some words" not in events["process"].to_list()
