"""OpenWrt's `logread` lines: ctime stamp with its year, no host, the priority by name, `-t`'s epoch (real samples in
tests/data/syslog/journal_openwrt_logread_*)."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

import rca
from rca.sources import _syslog, sniff
from tests.conftest import fixture_path


def _parse(name: str, **kwargs) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_text(), file=name, **kwargs)


def test_logread_lines_take_their_stated_year_priority_and_tag() -> None:
    events = _parse("journal_openwrt_logread_hostapd_netifd_kern_01.log", year=2019)
    assert events.height == 11 and set(events["ts_quality"]) == {"exact"}
    first = events.row(0, named=True)
    # The line's own year, not the one given for yearless lines.
    assert first["ts"] == datetime(2023, 11, 28, 23, 33, 46, tzinfo=UTC)
    assert (first["host"], first["process"], first["pid"], first["severity"]) == (None, "hostapd", None, "notice")
    assert first["message"] == "wl1-ap0: AP-DISABLED"
    uhttpd = events.row(10, named=True)
    assert (uhttpd["process"], uhttpd["pid"], uhttpd["severity"]) == ("uhttpd", 1632, "error")
    kernel = events.row(4, named=True)
    assert (kernel["source"], kernel["severity"], kernel["boot_seconds"]) == ("kernel", "info", 783707.226626)


def test_logread_stamp_is_read_in_the_given_zone() -> None:
    events = _parse("journal_openwrt_logread_hostapd_netifd_kern_01.log", tz="Europe/Berlin")
    assert events["ts"][0] == datetime(2023, 11, 28, 22, 33, 46, tzinfo=UTC)


def test_logread_t_epoch_is_the_moment_whatever_the_local_clock() -> None:
    events = _parse("journal_openwrt_logread_t_epoch_ath10k_01.log")
    assert events["ts"].to_list() == [
        datetime(2025, 4, 29, 3, 8, 24, 164000, tzinfo=UTC), datetime(2025, 4, 29, 3, 16, 9, 734000, tzinfo=UTC)
    ]
    assert events["ts_raw"][0] == "Tue Apr 29 07:08:24 2025" and events["boot_seconds"][0] == 1523164.641079


def test_empty_tag_is_no_process() -> None:
    events = _parse("journal_openwrt_logread_empty_tag_netifd_01.log")
    assert events.height == 9 and events["process"].is_null().all()
    assert events["message"][0] == "Added device handler type: 8021q"
    assert set(events["severity"]) == {"notice"} and events["ts"][0] == datetime(2026, 2, 1, 12, 5, 13, tzinfo=UTC)


def test_logread_files_are_the_syslog_source() -> None:
    for name in ("journal_openwrt_logread_empty_tag_netifd_01.log", "journal_openwrt_logread_t_epoch_ath10k_01.log"):
        source, _ = sniff(fixture_path(name).read_text().splitlines())
        assert source is not None and source.name == "syslog"


_LEVELS = ["emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"]
_SEVERITY = ["critical", "critical", "critical", "error", "warning", "notice", "info", "debug"]


@given(
    when=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2037, 1, 1)),
    facility=st.sampled_from(["kern", "user", "daemon", "authpriv", "local7"]),
    level=st.integers(0, 7),
    pid=st.one_of(st.none(), st.integers(1, 4194304)),
)
def test_any_logread_line_is_framed(when: datetime, facility: str, level: int, pid: int | None) -> None:
    stamp = when.replace(microsecond=0).strftime("%a %b ") + f"{when.day:2d}" + when.strftime(" %H:%M:%S %Y")
    tag = "dropbear" + (f"[{pid}]" if pid is not None else "")
    line = f"{stamp} {facility}.{_LEVELS[level]} {tag}: Exit before auth from <192.168.1.2:51234>"
    assert pl.select(_syslog.is_logread_line(pl.lit(line))).item()
    event = rca.parse_text(line + "\n", file="x").row(0, named=True)
    assert event["ts"] == when.replace(microsecond=0, tzinfo=UTC) and event["ts_raw"] == stamp
    assert (event["process"], event["pid"], event["severity"]) == ("dropbear", pid, _SEVERITY[level])
