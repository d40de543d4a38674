"""Kernel lines of a GPU node's fabric: an NVSwitch's SXid reports, an NVLink discovery failure, a GPU's GSP heartbeat
lost, and a RoCE NIC's port flapping under a bond. A network port going down (netdev carrier, InfiniBand port state, a
bond dropping its slave) is a warning; its coming back up is not."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
import pytest

from tests.conftest import event_on_line, parse_fixture, parse_log


def test_sxid_22013_reports_are_grouped_with_the_data_line_after_them() -> None:
    # nvswitch prints "Non-fatal, Link N …", "Severity 0 Engine instance N …", then "Data {0x…N, …}" (Data's first word
    # is the link): the Data line on line 2 is the tail of a report cut above the sample
    events = parse_fixture("dmesg_sxid_22013_minion_dlreq_tdx_h100_01.log")
    assert events.select("line", "n_lines", "severity", "pci_bus").rows() == [
        (1, 1, None, None),
        (2, 1, None, "0000:04:00.0"),
        (3, 3, "warning", "0000:04:00.0"),
        (6, 3, "warning", "0000:04:00.0"),
        (9, 1, "warning", "0000:04:00.0"),
    ]
    assert events["kind"].unique().to_list() == ["log"]
    assert events["xid"].null_count() == events.height  # an SXid is no GPU Xid
    assert [json.loads(a) for a in events["attrs"].to_list()[1:]] == [{"sxid": 22013}] * 4
    assert json.loads(events["attrs"][0]) == {"nvidia_driver": "570.195.03"}
    assert event_on_line(events, 6)["message"].splitlines()[0].endswith("Non-fatal, Link 45 Minion Link DLREQ interrupt")
    assert event_on_line(events, 3)["boot_seconds"] == 38.17872


def test_nvlink_post_rx_detect_failure_is_an_error_of_its_host() -> None:
    events = parse_fixture("journalctl_k_nvlink_postrxdet_linkmask_failed_gh100_01.log")
    row = events.row(0, named=True)
    assert events.height == 1
    assert (row["source"], row["format"], row["kind"], row["severity"], row["host"]) == ("kernel", "syslog", "log", "error", "pool0-0082")
    assert (row["ts"], row["ts_quality"]) == (datetime(2026, 7, 9, 10, 42, 47, tzinfo=UTC), "year_from_mtime")
    assert row["message"] == "NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!"


def test_gsp_heartbeat_lost_and_memory_subsystem_error_lines() -> None:
    events = parse_fixture("dmesg_gsp_heartbeat_timeout_memsys_error_gpu6_01.log")
    assert events.select("line", "severity").rows() == [
        (1, None), (2, None), (3, "warning"), (4, "warning"), (5, None), (6, "warning"),
        (7, "error"), (8, "error"), (9, "error"), (10, "warning"),
    ]
    assert events["kind"].unique().to_list() == ["log"]
    assert json.loads(events["attrs"][0]) == {"nvidia_driver": "595.71.05"}
    # the driver's "GPU6" is its own instance number, no nvidia-smi index, and the lines name no bus
    assert events["gpu_index"].null_count() == events["pci_bus"].null_count() == events.height
    assert (events["ts_quality"].unique().to_list(), events["boot_seconds"][7]) == (["boot_relative"], 84.30048)


def test_roce_port_flap_the_downs_are_warnings_the_ups_are_not() -> None:
    events = parse_fixture("dmesg_mlx5_roce_link_flap_bond_slave_down_01.log")
    assert events.height == 17
    down = [2, 7, 14]  # "mlx5_core 0000:53:00.0 enp83s0f0np0: Link down"
    ib_down = [8, 15]  # "mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link DOWN"
    bond_down = [1, 3, 10, 17]  # "bond0: (slave enp83s0f0np0): link status definitely down, disabling slave"
    warnings = events.filter(pl.col("severity") == "warning")
    assert sorted(warnings["line"].to_list()) == sorted(down + ib_down + bond_down)
    assert events.filter(pl.col("severity").is_null())["line"].to_list() == [4, 5, 6, 9, 11, 12, 13, 16]
    assert events.filter(pl.col("line").is_in(down + ib_down))["pci_bus"].unique().to_list() == ["0000:53:00.0"]
    assert events.filter(pl.col("line").is_in(bond_down))["pci_bus"].null_count() == len(bond_down)


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        ("[ 10.000000] mlx5_core 0000:08:00.0 ens1f0np0: Link down", "warning"),
        ("[ 10.000000] e1000e 0000:00:19.0 eth0: NIC Link is Down", "warning"),
        ("[ 10.000000] ixgbe 0000:3b:00.1 eno2: NIC Link is Down", "warning"),
        ("[ 10.000000] realtek-smi switch eth5: Link is Down", "warning"),
        ("[ 10.000000] mlx5_core 0000:08:00.0 rdmap8s0f0: Port: 2 Link DOWN", "warning"),
        ("[ 10.000000] bond0: (slave ens1f0np0): link status definitely down, disabling slave", "warning"),
        ("[ 10.000000] mlx5_core 0000:08:00.0 ens1f0np0: Link up", None),
        ("[ 10.000000] e1000e 0000:00:19.0 eth0: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: None", None),
        ("[ 10.000000] mlx5_core 0000:08:00.0 mlx5_0: Port: 1 Link INIT", None),
        ("[ 10.000000] mlx5_core 0000:08:00.0 mlx5_0: Port: 1 Link ACTIVE", None),
        ("[ 10.000000] bond0: (slave ens1f0np0): link status down for interface, disabling it in 200 ms", None),
        ("[ 10.000000] IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready", None),
    ],
)
def test_port_down_wording_across_drivers(line: str, severity: str | None) -> None:
    assert parse_log(line + "\n").row(0, named=True)["severity"] == severity


@pytest.mark.parametrize(
    ("message", "severity"),
    [
        ("igb 0000:01:00.0 eno1: igb: eno1 NIC Link is Down", "warning"),  # igb and e1000e name the interface again
        ("ixgbe 0000:01:00.0 eth0: NIC Link is Down", "warning"),
        ("ata3: SATA link down (SStatus 0 SControl 300)", None),  # an empty SATA port, at every boot
        ("igb 0000:01:00.0 eno1: igb: eno1 NIC Link is Up 1000 Mbps Full Duplex, Flow Control: RX", None),
    ],
)
def test_a_nic_that_names_its_interface_again_going_down_is_a_warning(message: str, severity: str | None) -> None:
    (event,) = parse_log(f"[  12.345678] {message}\n").to_dicts()
    assert event["severity"] == severity
