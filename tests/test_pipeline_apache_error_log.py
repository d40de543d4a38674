"""Apache httpd's error log wears dmesg -T's stamp: its bracketed level after the stamp makes it an application's log,
with that level as the severity, not a kernel ring buffer."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import rca
from tests.conftest import parse_fixture


def test_the_loghub_sample_is_an_application_log_with_its_levels() -> None:
    events = parse_fixture("loghub_app_apache_2k_head.log")
    assert events.select("source", "format").unique().rows() == [("pipeline", "ctime")]
    assert events.filter(events["severity"] == "error")["line"].to_list() == [2, 9, 10, 11, 17, 25, 26, 27]
    assert set(events["severity"]) == {"notice", "error"}
    assert events.row(0, named=True)["ts"] == datetime(2005, 12, 4, 4, 47, 44, tzinfo=UTC)


@pytest.mark.parametrize(
    ("bracket", "severity"),
    [("[core:error]", "error"), ("[ssl:warn]", "warning"), ("[mpm_event:notice]", "notice"), ("[authz_core:debug]", "debug"),
     ("[http:trace3]", "debug"), ("[core:emerg]", "critical"), ("[crit]", "critical")],
)
def test_httpd_24_levels_after_the_module(bracket: str, severity: str) -> None:
    line = f"[Wed Oct 11 14:32:52.123456 2000] {bracket} [pid 35708:tid 4328636416] [client 72.15.99.187] File does not exist\n"
    row = rca.parse_text(line, file="error_log").row(0, named=True)
    assert (row["source"], row["severity"]) == ("pipeline", severity)
    assert row["ts"] == datetime(2000, 10, 11, 14, 32, 52, 123456, tzinfo=UTC)


def test_dmesg_t_lines_with_a_bracketed_driver_tag_stay_kernel() -> None:
    text = "[Sun Dec  4 04:47:44 2005] [drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:3b:00.0 on minor 1\n" \
           "[Sun Dec  4 04:47:45 2005] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    events = rca.parse_text(text, file="dmesg.txt")
    assert events["source"].unique().to_list() == ["kernel"]
    assert events.filter(events["kind"] == "xid")["xid"].to_list() == [79]
