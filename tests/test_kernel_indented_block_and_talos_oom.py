"""A `journalctl -k` block pasted indented under a heading line, and Talos' user-space OOM controller's kill of a cgroup."""

from __future__ import annotations

import json

import polars as pl

from tests.conftest import event_on_line, fixture_path, parse_fixture, parse_log, sniffed

INDENTED = "journalctl_k_no_hostname_indented_under_heading_nvrm_gsp_01.log"
TALOS = "dmesg_talos_oom_controller_sigkill_cgroup_01.log"


def test_indented_block_under_a_heading_is_sniffed_as_kernel():
    source, score = sniffed(fixture_path(INDENTED))
    assert source is not None and source.name == "kernel"
    assert score == 0.9  # nine kernel lines of ten: the heading is no kernel line


def test_indented_block_under_a_heading_reads_as_journal_kernel_lines():
    events = parse_fixture(INDENTED)
    assert events.height == 10
    heading = event_on_line(events, 1)
    assert heading["message"] == "* Kernel buffer tail (journalctl --no-hostname -k --lines 50):"
    assert heading["ts"] is None
    assert events.filter(pl.col("line") > 1)["format"].unique().to_list() == ["syslog"]
    assert events.filter(pl.col("line") > 1)["ts"].null_count() == 0
    assertion = event_on_line(events, 3)
    assert (assertion["severity"], assertion["message"]) == ("error", "NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: 0 @ kernel_gsp.c:1446")
    assert str(assertion["ts"]) == "2026-03-21 21:42:01+00:00"
    assert event_on_line(events, 5)["severity"] == "warning"
    hda = event_on_line(events, 6)
    assert (hda["pci_bus"], hda["message"]) == ("0000:05:00.0", "nvidia 0000:05:00.0: Enabling HDA controller")


def test_indent_is_taken_off_the_same_with_or_without_the_heading():
    lines = fixture_path(INDENTED).read_text().splitlines()
    under_heading = parse_log("\n".join(lines) + "\n").filter(pl.col("line") > 1)
    bare = parse_log("\n".join(lines[1:]) + "\n")
    columns = ["ts", "severity", "format", "pci_bus", "message"]
    assert under_heading.select(columns).equals(bare.select(columns))


def test_indented_lines_that_are_no_kernel_lines_keep_their_indent():
    # A call trace under its head: the indented frames are no stamped lines, so nothing is taken off them.
    text = "Call Trace:\n  dump_stack+0x57/0x75\n  dump_header+0x4f/0x200\n"
    assert parse_log(text)["message"].to_list() == ["Call Trace:", "  dump_stack+0x57/0x75", "  dump_header+0x4f/0x200"]


def test_a_tab_indented_dmesg_block_under_a_heading():
    text = "Output:\n\t[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n"
    events = parse_log(text)
    xid = events.filter(pl.col("kind") == "xid").row(0, named=True)
    assert (xid["line"], xid["xid"], xid["boot_seconds"], xid["pci_bus"]) == (2, 79, 123.456789, "0000:3b:00")


def test_talos_oom_controller_kill_is_an_oom_kill_of_the_pod_cgroup():
    kill = event_on_line(parse_fixture(TALOS), 1)
    assert (kill["kind"], kill["severity"], kill["source"], kill["format"]) == ("oom_kill", "error", "kernel", "dmesg_iso")
    assert kill["cgroup"] == "/kubepods/burstable/pod77f06c5c-4593-43e9-b970-987f6ecb825b"
    assert kill["pod_uid"] == "77f06c5c-4593-43e9-b970-987f6ecb825b"
    assert kill["pid"] is None and kill["process"] is None
    assert json.loads(kill["attrs"]) == {"oom": "talos", "signal": "SIGKILL", "controller": "runtime.OOMController"}
    assert str(kill["ts"]) == "2026-01-12 20:27:31.913975+00:00"


def test_talos_oom_controller_trigger_is_memory_pressure_and_other_talos_lines_stay_logs():
    text = (
        'user: warning: [2026-01-12T20:27:30.100000000Z]: [talos] OOM controller triggered {"component": "controller-runtime", '
        '"controller": "runtime.OOMController"}\n'
        'user: warning: [2026-01-12T20:27:31.915094631Z]: [talos] victim processes: {"component": "controller-runtime", '
        '"controller": "runtime.OOMController", "processes": []}\n'
    )
    events = parse_log(text)
    assert events["kind"].to_list() == ["memory_pressure", "log"]
    assert events["severity"].to_list() == ["warning", "warning"]
    assert json.loads(events["attrs"][0]) == {"controller": "runtime.OOMController"}
    assert events["attrs"][1] is None and events["cgroup"].null_count() == 2
