"""A PCIe port's AER report names the device below it that failed: that device is the event's ``pci_bus`` (kernel source)."""

from __future__ import annotations

import rca


def _pci_bus_by_line(text: str) -> dict[int, str | None]:
    events = rca.parse_text(text, file="dmesg")
    return dict(events.select("line", "pci_bus").iter_rows())


def test_the_device_a_port_received_an_error_from_is_the_events_device() -> None:
    text = (
        "[ 1234.567890] pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0\n"
        "[ 1240.100000] pcieport 0000:00:03.1: AER: Multiple Correctable error message received from 0000:3b:00.0\n"
        "[ 1250.100000] pcieport 0000:00:1c.0: AER: Corrected error received: 0000:00:1c.0\n"
    )
    assert _pci_bus_by_line(text) == {1: "0000:01:00.0", 2: "0000:3b:00.0", 3: "0000:00:1c.0"}


def test_a_source_id_of_zero_or_none_names_no_device() -> None:
    text = (
        "[ 1234.567890] pcieport 0000:00:02.0: AER: Corrected error received: id=0010\n"
        "[ 1240.100000] pcieport 0000:00:03.1: AER: Multiple Correctable error message received from 0000:00:00.0\n"
        "[ 1250.100000] pcieport 0000:00:1c.0: pciehp: Slot(2): Link Down\n"
    )
    assert _pci_bus_by_line(text) == {1: None, 2: None, 3: None}


def test_a_driver_line_keeps_its_own_device() -> None:
    text = "[ 1234.567900] nvidia 0000:01:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)\n"
    assert _pci_bus_by_line(text) == {1: "0000:01:00.0"}
