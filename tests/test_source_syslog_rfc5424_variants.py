"""RFC 5424-like heads beyond version 1: rsyslog 7's version 0, a template's "<facility.severity>", and the space rsyslog
keeps at the start of a message after the structured data."""

from __future__ import annotations

import json

import polars as pl

import rca
from tests.conftest import FIXED_MTIME


def _parsed(text: str) -> pl.DataFrame:
    return rca.parse_text(text, reference_time=FIXED_MTIME)


def test_a_version_0_line_is_framed_and_not_joined_to_the_line_above() -> None:
    # Graylog2/graylog2-server#3502 (rsyslog 7.6.7's RSYSLOG_SyslogProtocol23Format).
    events = _parsed(
        "May  1 10:00:00 h sshd[1]: Accepted publickey for root\n"
        "<12>0 2017-02-15T16:01:07.614260+01:00 vmlsfw test - - -  test 4\n"
    )
    assert events.select("line", "format", "host", "process", "severity", "message").rows() == [
        (1, "syslog", "h", "sshd", None, "Accepted publickey for root"),
        (2, "syslog_iso", "vmlsfw", "test", "warning", "test 4"),
    ]
    assert json.loads(events["attrs"][1]) == {"facility": "user"}
    assert events["ts"][1].isoformat() == "2017-02-15T15:01:07.614260+00:00"


def test_facility_dot_severity_in_the_brackets_gives_both_and_a_kernel_line_goes_to_the_kernel_rules() -> None:
    # The line of a linux-xfs mail (Carlos E. R., 2019-07-25; its quoted-printable soft line break joined).
    events = _parsed(
        "May  1 10:00:00 h sshd[1]: Accepted publickey for root\n"
        "<0.4> 2019-07-25 18:19:19 Telcontar kernel - - - [127181.795181] XFS (dm-2): device supports 2048 byte sectors (not 512)\n"
        "<3.6> 2019-07-25 18:19:20 Telcontar systemd - - - Started Session 2.\n"
    )
    assert events.select("line", "source", "host", "process", "severity", "boot_seconds").rows() == [
        (1, "syslog", "h", "sshd", None, None),
        (2, "kernel", "Telcontar", None, "warning", 127181.795181),
        (3, "syslog", "Telcontar", "systemd", "info", None),
    ]
    assert [json.loads(attrs)["facility"] for attrs in events["attrs"][1:]] == ["kern", "daemon"]
    assert events["message"][2] == "Started Session 2."


def test_only_the_one_space_rsyslog_keeps_after_the_separator_is_taken_off() -> None:
    # sudo indents its own message ("sudo:   nagios : TTY=…" in RFC 3164): that indent stays, as it does there.
    events = _parsed(
        "<85>1 2020-02-05T12:30:24.849717+01:00 system.xxxx.local sudo - - -    nagios : TTY=unknown ; PWD=/ ; USER=xyz\n"
        "<6>1 2016-06-21T15:27:15.771223+08:00 box kernel - - - [ 3132.531409] [UFW BLOCK] IN=enp9s0 OUT=\n"
        "<14>1 2016-06-21T15:27:16.000000+08:00 box app - - - no extra space\n"
    )
    assert events["message"].to_list() == ["  nagios : TTY=unknown ; PWD=/ ; USER=xyz", "[UFW BLOCK] IN=enp9s0 OUT=", "no extra space"]
