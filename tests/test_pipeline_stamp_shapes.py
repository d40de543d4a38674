"""Pipeline source: stamp and level shapes of C++ and Go loggers — glog's year (0.5+), a bracketed stamp with the next tag
glued to it, spdlog's lower-case levels, a lower-case diagnostic title, ctime stamps to the microsecond, a month-first
stamp on the 12-hour clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca

REFERENCE = datetime(2024, 6, 1, tzinfo=UTC)


def _first(line: str) -> dict:
    return rca.parse_text(f"{line}\n{line}\n", file="x.log", reference_time=REFERENCE).row(0, named=True)


@pytest.mark.parametrize(
    ("line", "stamp", "severity", "message"),
    [
        ("I20211221 20:18:47.295809  6740 config.cc:27] Loading config", "2021-12-21 20:18:47.295809", "info", "Loading config"),
        ("E20240501 12:00:00.123456 1234 train.cc:12] worker crashed", "2024-05-01 12:00:00.123456", "error", "worker crashed"),
        ("[2024-05-01 12:00:00][ERROR] worker crashed", "2024-05-01 12:00:00", "error", "[ERROR] worker crashed"),
        ("[2024-05-01 12:00:00.123][error][1234] worker crashed", "2024-05-01 12:00:00.123", "error", "[error][1234] worker crashed"),
        ("[2024-05-01 12:00:00.123] [trainer] [critical] worker crashed", "2024-05-01 12:00:00.123", "critical", "[trainer] [critical] worker crashed"),
        ("[2024-05-01 12:00:00.123] [warning] disk almost full", "2024-05-01 12:00:00.123", "warning", "[warning] disk almost full"),
        ("2024-05-01 12:00:00 error: could not compile", "2024-05-01 12:00:00", "error", "error: could not compile"),
        ("[Wed May 01 12:00:00.123456 2024] [error] worker crashed", "2024-05-01 12:00:00.123456", "error", "[error] worker crashed"),
        ("Wed May  1 12:00:00.123 UTC 2024 ERROR worker crashed", "2024-05-01 12:00:00.123", "error", "ERROR worker crashed"),
        ("05/01/2024 01:30:00 PM ERROR worker crashed", "2024-05-01 13:30:00", "error", "ERROR worker crashed"),
        ("05/01/2024 12:10:00 AM ERROR worker crashed", "2024-05-01 00:10:00", "error", "ERROR worker crashed"),
    ],
)
def test_stamp_level_and_message(line: str, stamp: str, severity: str, message: str) -> None:
    event = _first(line)
    assert event["ts"] == datetime.fromisoformat(stamp).replace(tzinfo=UTC)
    assert (event["ts_quality"], event["severity"], event["message"]) == ("exact", severity, message)


def test_yearless_glog_still_takes_its_year_from_the_file() -> None:
    event = _first("E0501 12:00:00.123456 1234 train.cc:12] worker crashed")
    assert (event["ts"], event["ts_quality"]) == (datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC), "year_from_mtime")


@pytest.mark.parametrize("line", ["[2024-05-01 12:00:00] [errors] 3 retries left", "[trainer] [information] ready"])
def test_a_bracketed_word_that_is_no_level_gives_no_severity(line: str) -> None:
    assert _first(line)["severity"] is None


@settings(max_examples=40, deadline=None)
@given(
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2099, 12, 31)),
    st.sampled_from("IWEF"),
    st.integers(1, 999999),
)
def test_glog_with_year_reads_any_date(moment: datetime, letter: str, thread: int) -> None:
    stamp = moment.strftime("%Y%m%d %H:%M:%S.%f")
    event = _first(f"{letter}{stamp} {thread} main.cc:10] hello")
    assert event["ts"] == moment.replace(tzinfo=UTC)
    assert (event["ts_quality"], event["message"]) == ("exact", "hello")
