"""Kernel lines around a dead multi-node job's infrastructure: a Mellanox NIC's firmware health report and pulled cable,
its firmware command timeouts, an AMD GPU's reset. The device a driver's line is about (dev_printk / netdev_printk prefix)
lands in pci_bus; a driver's "(pid 0)" (timer or interrupt context) names no process."""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import event_on_line, parse_fixture, parse_log


def test_mlx5_health_report_is_an_error_on_each_function_without_a_pid() -> None:
    events = parse_fixture("dmesg_mlx5_health_compromised_fw_internal_error_vdpa_01.log")
    assert events.height == 23
    head = event_on_line(events, 1)
    assert (head["severity"], head["pci_bus"], head["pid"]) == ("error", "0000:0d:00.0", None)
    assert event_on_line(events, 2)["severity"] == "error"
    # the dump's plain register lines stay unrated
    assert event_on_line(events, 3)["severity"] is None
    heads = events.filter(pl.col("message").str.contains("health compromised"))
    assert heads["pci_bus"].to_list() == ["0000:0d:00.0", "0000:0d:00.2", "0000:0d:00.3", "0000:0d:00.4", "0000:0d:00.1"]
    assert set(heads["severity"].to_list()) == {"error"}
    assert events["pid"].null_count() == events.height


def test_mlx5_cable_unplugged_is_a_warning_and_the_netdev_form_names_the_device() -> None:
    events = parse_fixture("dmesg_mlx5_cable_unplugged_at_boot_amdgpu_vega_01.log")
    unplugged = event_on_line(events, 2)
    assert (unplugged["severity"], unplugged["pci_bus"]) == ("warning", "0000:08:00.0")
    renamed = event_on_line(events, 8)
    assert (renamed["severity"], renamed["pci_bus"]) == (None, "0000:08:00.0")
    # lines that name no PCI device
    assert event_on_line(events, 9)["pci_bus"] is None
    assert event_on_line(events, 3)["pci_bus"] is None


def test_mlx5_command_timeout_keeps_the_issuing_task_and_the_oops_after_it() -> None:
    events = parse_fixture("dmesg_bare_mlx5_teardown_hca_timeout_poll_health_oops_01.log")
    timeout = event_on_line(events, 5)
    assert (timeout["severity"], timeout["pid"], timeout["pci_bus"]) == ("warning", 1967079, "0000:18:00.0")
    failed = event_on_line(events, 6)
    assert (failed["severity"], failed["pid"]) == ("error", 1967079)
    oops = event_on_line(events, 9)
    assert (oops["severity"], oops["pid"], oops["process"], oops["pci_bus"]) == ("critical", 0, "swapper/0", None)


def test_amdgpu_reset_begin_is_a_warning_and_lost_vram_an_error() -> None:
    events = parse_fixture("dmesg_amdgpu_ring_reset_failed_gpu_reset_source_7_0_01.log")
    assert event_on_line(events, 5)["process"] == "cosmic-comp"
    assert [event_on_line(events, line)["severity"] for line in (8, 9, 10, 11, 13)] == ["error", "warning", None, None, "error"]
    assert set(events["pci_bus"].to_list()) == {"0000:28:00.0"}


def test_pcieport_lines_name_no_device() -> None:
    text = "[68185.875052] pcieport 0000:00:03.1: AER: Multiple Correctable error message received from 0000:00:00.0\n"
    assert parse_log(text)["pci_bus"].to_list() == [None]


_HEX = "0123456789abcdef"


@given(
    driver=st.sampled_from(["mlx5_core", "nvme", "ixgbe", "bnxt_en", "ice", "megaraid_sas", "xhci_hcd"]),
    domain=st.text(_HEX, min_size=4, max_size=4),
    bus=st.text(_HEX, min_size=2, max_size=2),
    slot=st.text(_HEX, min_size=2, max_size=2),
    function=st.integers(0, 7),
    netdev=st.sampled_from(["", " ens1f0", " ib0", " enp8s0np0"]),
    tail=st.sampled_from(["Link down", "Port module event: module 1, Cable unplugged", "I/O 12 QID 3 timeout, aborting"]),
)
def test_any_driver_line_names_its_device(driver: str, domain: str, bus: str, slot: str, function: int, netdev: str, tail: str) -> None:
    address = f"{domain}:{bus}:{slot}.{function}"
    events = parse_log(f"[  100.000001] {driver} {address}{netdev}: {tail}\n")
    assert events["pci_bus"].to_list() == [address]
