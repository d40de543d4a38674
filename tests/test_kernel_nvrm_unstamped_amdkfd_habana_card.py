"""Kernel follow-ups: an NVRM message's unstamped lines, amdkfd's "amdgpu: … pid N" lines, a Habana card's hlN name."""

from __future__ import annotations

from pathlib import Path

import rca

DATA = Path(__file__).parent / "data" / "kernel"


def _events(name: str):
    return rca.parse_text((DATA / name).read_text(), file=name).to_pandas().set_index("line")


def test_unstamped_nvrm_lines_join_the_stamped_line_above():
    events = _events("dmesg_nvrm_probe_routine_not_called_nouveau_01.log")
    assert list(events.index) == [1, 2, 3, 4, 5, 8]
    assert events.loc[5, "n_lines"] == 3 and events.loc[8, "n_lines"] == 4
    assert events.loc[5, "message"].splitlines()[1] == "NVRM: nouveau, rivafb, nvidiafb or rivatv"
    assert events.loc[4, "n_lines"] == 1 and events.loc[4, "severity"] == "error"


def test_amdkfd_pid_and_habana_card_bus_in_one_parse():
    text = "\n".join((
        "[  100.000001] habanalabs hl0: Successfully added device 0000:19:00.0 to habanalabs driver",
        "[  100.000002] amdgpu: Failed to evict queues of process pid 2439413",
        "[  100.000003] amdgpu: Failed to suspend process pid 77",
        "[  100.000004] habanalabs hl0: Device is going to be reset",
        "[  100.000005] habanalabs hl3: Device is going to be reset",
        "[  100.000006] NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
        "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
    )) + "\n"
    events = rca.parse_text(text, file="dmesg_x.log").to_pandas().set_index("line")
    assert events.loc[2, "pid"] == 2439413 and events.loc[2, "severity"] == "error"
    assert events.loc[3, "pid"] == 77
    assert events.loc[1, "pci_bus"] == "0000:19:00.0" and events.loc[4, "pci_bus"] == "0000:19:00.0"
    assert not isinstance(events.loc[5, "pci_bus"], str)  # no line pairs hl3 with its address
    assert events.loc[6, "n_lines"] == 1 and 7 in events.index  # an Xid is its own event, stamped or not


def test_habana_card_named_before_its_pairing_line_gets_its_bus():
    events = _events("dmesg_habanalabs_cpu_cp_timeout_device_not_usable_01.log")
    assert set(events.loc[[4, 5, 6, 7], "pci_bus"]) == {"0000:1a:00.0"}
    assert set(events.loc[[12, 13, 14], "pci_bus"]) == {"0000:33:00.0"}
    assert events.loc[[16, 17, 18], "pci_bus"].isna().all()  # hl7's pairing line is cut off the sample
