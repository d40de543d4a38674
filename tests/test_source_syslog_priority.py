"""Syslog lines that carry their priority (RFC 3164 and 5424 on the wire), `journalctl -o with-unit`'s snap units, and XFS's
forced shutdown."""

from __future__ import annotations

import json

import polars as pl

import rca
from tests.conftest import FIXED_MTIME, fixture_path


def _parsed(text: str) -> pl.DataFrame:
    return rca.parse_text(text, reference_time=FIXED_MTIME)


def _facilities(events: pl.DataFrame) -> list[str | None]:
    return [json.loads(attrs).get("facility") if attrs else None for attrs in events["attrs"]]


def test_rfc3164_priority_gives_severity_and_facility_and_a_kernel_line_goes_to_the_kernel_rules() -> None:
    name = "journal_nc_pri_prefix_rsyslog_kernel_ufw_dhclient_01.log"
    events = rca.parse_text(fixture_path(name).read_text(), file=name, reference_time=FIXED_MTIME)
    assert events.select("source", "severity", "process", "pid").rows() == [
        ("kernel", "warning", None, None), ("syslog", "info", "dhclient", 7445), ("syslog", "notice", "dbus", 775),
        ("syslog", "info", "compiz", None),
    ]
    assert _facilities(events) == ["kern", "daemon", "daemon", "authpriv"]
    assert events["ts_raw"].to_list()[0] == "Jun 20 11:59:57"


def test_a_priority_before_a_short_stamp_keeps_the_kernel_rules_and_their_kinds() -> None:
    # A kernel line's priority is its printk level: the OOM killer's kill is still read as one.
    events = _parsed(
        "<3>Dec  1 03:17:05 node kernel: Out of memory: Killed process 1234 (python) total-vm:100kB, anon-rss:50kB, file-rss:0kB, "
        "shmem-rss:0kB\n"
    )
    assert events.select("source", "kind", "pid", "host").row(0) == ("kernel", "oom_kill", 1234, "node")
    assert json.loads(events["attrs"][0])["facility"] == "kern"


def test_rfc5424_nil_app_name_is_the_kernels_under_the_kernel_facility_and_none_otherwise() -> None:
    # RFC 5424 section 6.2.5: APP-NAME is "-" when unknown; only the kernel logs with facility 0.
    events = _parsed(
        "<6>1 2023-04-03T16:24:41.390796-06:00 box - - - - [849085.223282] restoring control\n"
        "<14>1 2023-04-03T16:24:42.000000-06:00 box - - - - hello\n"
    )
    assert events.select("source", "process", "severity").rows() == [("kernel", None, "info"), ("syslog", None, "info")]
    assert events["boot_seconds"][0] == 849085.223282


def test_a_kernel_facility_does_not_make_another_programs_line_the_kernels() -> None:
    name = "journal_rfc5424_nil_fields_kern_facility_networkmanager_01.log"
    events = rca.parse_text(fixture_path(name).read_text(), file=name, reference_time=FIXED_MTIME)
    assert events.select("source", "process", "pid").rows() == [
        ("kernel", None, None), ("syslog", "dhclient", 1641), ("syslog", "NetworkManager", 810)
    ]
    assert _facilities(events) == ["kern", "daemon", "kern"]


def test_a_lines_own_level_goes_before_its_priority() -> None:
    # Docker's syslog driver sends every stdout line at daemon.info (PRI 30), whatever it says.
    events = _parsed(
        "<30>Jun 21 00:35:33 node app[7]: ERROR: connection refused\n"
        "<27>Jun 21 00:35:34 node app[7]: retrying\n"
    )
    assert events["severity"].to_list() == ["error", "error"]


def test_a_relays_priority_before_a_relayed_rfc5424_message_is_no_obstacle() -> None:
    # FreeBSD's syslogd relaying (Graylog2/graylog2-server#17062): RFC 3164 wrapped round an RFC 5424 message.
    events = _parsed(
        "<78>Jan 1 12:15:00 nas.example 1 1970-01-01T12:15:00.005048-00:00 nas.example /usr/sbin/cron 61898 - - (root) CMD "
        "(/usr/libexec/atrun)\n"
    )
    assert events.select("host", "process", "pid", "ts_quality").row(0) == ("nas.example", "/usr/sbin/cron", 61898, "exact")


def test_with_unit_snap_services_are_named_as_their_snap_tags_them() -> None:
    # journalctl -o with-unit prints the unit; snapd tags a service's lines "<snap>.<app>" (SyslogIdentifier=).
    events = _parsed(
        "Thu 2023-10-12 19:34:45 UTC node snap.microk8s.daemon-kubelite.service[2480]: E1012 19:34:45.445172    2480 kubelet.go:2404] "
        '"Error syncing pod"\n'
        "Thu 2023-10-12 19:34:47 UTC node snap.lxd.daemon.service[99]: hello\n"
    )
    assert events.select("source", "process", "severity").rows() == [
        ("kubelet", "microk8s.daemon-kubelite", "error"), ("syslog", "lxd.daemon", None)
    ]


def test_xfs_forced_shutdown_is_critical() -> None:
    name = "kern_log_xfs_internal_error_forced_shutdown_el7_01.log"
    events = rca.parse_text(fixture_path(name).read_text(), file=name, reference_time=FIXED_MTIME)
    assert events.filter(pl.col("line") >= 26)["severity"].to_list() == ["critical", "critical"]
    # Newer kernels name where the reason was detected, and write "unmount".
    newer = _parsed(
        "[ 8.182008] XFS (dm-4): Corruption of in-memory data (0x8) detected at xfs_trans_cancel+0x15e/0x180 "
        "(fs/xfs/xfs_trans.c:1097).  Shutting down filesystem.\n"
        "[ 8.182010] XFS (dm-4): Please unmount the filesystem and rectify the problem(s)\n"
    )
    assert newer["severity"].to_list() == ["critical", "critical"]
