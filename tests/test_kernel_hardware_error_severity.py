"""Kernel hardware-error and GPU-init messages: PCIe AER in both spellings of its severities, EDAC memory errors in the old
and the new wording, the NVIDIA driver's adapter-init failures (their status code in attrs)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import event_on_line, parse_fixture, parse_log


def test_aer_correctable_spelling_is_a_warning_and_the_gpu_record_names_its_bus() -> None:
    events = parse_fixture("kern_log_aer_correctable_nvidia_gpu_pcieport_01.log")
    assert events.height == 3
    assert events["severity"].to_list() == ["warning", "warning", "warning"]
    assert events["n_lines"].to_list() == [1, 6, 3]
    gpu = event_on_line(events, 8)
    assert gpu["pci_bus"] == "0000:07:00.0"
    assert gpu["kind"] == "log"
    # the root port's record is no GPU's
    assert event_on_line(events, 2)["pci_bus"] is None


def test_aer_uncorrectable_non_fatal_is_an_error_and_cant_recover_too() -> None:
    events = parse_fixture("journalctl_k_aer_uncorrectable_nonfatal_acsviol_thunderbolt_01.log")
    assert event_on_line(events, 3)["severity"] == "warning"
    assert event_on_line(events, 4)["severity"] == "error"
    record = event_on_line(events, 5)
    assert (record["n_lines"], record["severity"]) == (4, "error")
    assert event_on_line(events, 9)["severity"] == "error"


@given(
    spelling=st.sampled_from(["Uncorrected", "Uncorrectable"]),
    layer=st.sampled_from(["Transaction Layer", "Data Link Layer", "Physical Layer"]),
    agent=st.sampled_from(["(Receiver ID)", "(Requester ID)", "id=0010(Receiver ID)"]),
    bus=st.from_regex(r"\A0000:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z"),
)
def test_aer_fatal_is_critical_in_either_spelling(spelling: str, layer: str, agent: str, bus: str) -> None:
    text = f"[  12.000001] nvidia {bus}: PCIe Bus Error: severity={spelling} (Fatal), type={layer}, {agent}\n"
    event = parse_log(text).row(0, named=True)
    assert event["severity"] == "critical"
    assert event["pci_bus"] == bus


@given(count=st.integers(1, 9999), kind=st.sampled_from(["CE", "UE"]), wording=st.sampled_from(["error on", "memory read error on"]))
def test_edac_counts_read_by_their_kind_old_and_new_wording(count: int, kind: str, wording: str) -> None:
    text = f"[  5.000001] EDAC MC0: {count} {kind} {wording} CPU#0Channel#2_DIMM#0 (channel:2 slot:0 page:0x0 offset:0x0)\n"
    assert parse_log(text)["severity"].to_list() == ["warning" if kind == "CE" else "critical"]


def test_edac_old_wording_fixture_reads_warnings() -> None:
    events = parse_fixture("kern_log_edac_mc0_ce_error_old_format_01.log")
    assert events.height == 8
    assert set(events["severity"]) == {"warning"}


def test_machine_check_status_with_uc_bit_is_critical() -> None:
    events = parse_fixture("dmesg_H_cmci_storm_edac_skx_uc_status_01.log")
    record = event_on_line(events, 3)
    assert (record["n_lines"], record["severity"]) == (6, "critical")
    assert event_on_line(events, 2)["severity"] == "warning"


def test_rm_init_adapter_failure_keeps_its_code_and_cannot_attach_is_an_error() -> None:
    events = parse_fixture("dmesg_nvrm_rminitadapter_osinitnvmapping_cannot_attach_01.log")
    first = event_on_line(events, 1)
    assert first["pci_bus"] == "0000:01:00.0"
    assert json.loads(first["attrs"]) == {"rm_init_error": "0x22:0x56:894"}
    assert event_on_line(events, 3)["severity"] == "error"
    assert set(events["severity"]) == {"error"}


def test_rm_init_adapter_failure_without_a_bus_keeps_its_code() -> None:
    event = parse_log("[87669.726564] NVRM: RmInitAdapter failed! (0x26:0xffff:1375)\n").row(0, named=True)
    assert event["severity"] == "error"
    assert json.loads(event["attrs"]) == {"rm_init_error": "0x26:0xffff:1375"}


def test_rcu_stall_names_the_task_its_nmi_backtrace_shows() -> None:
    record = event_on_line(parse_fixture("dmesg_rcu_stall_nmi_backtrace_python3_uid_arm64_01.log"), 4)
    assert (record["n_lines"], record["severity"], record["pid"], record["process"]) == (15, "error", 24017, "python3")
