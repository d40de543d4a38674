"""NVRM dump lines tied to their GPU's bus, and hardware-error lines of GPU nodes (PCIe AER, NVSwitch SXid, soft lockup)."""

from pathlib import Path

import polars as pl

import rca

DATA = Path(__file__).parent / "data" / "kernel"
GPU_AT = "NVRM: GPU at PCI:0000:01:00: GPU-02187fd8-22a1-3f71-cd52-22af54f42481"
UUID = "GPU-02187fd8-22a1-3f71-cd52-22af54f42481"


def _events(text: str, name: str = "dmesg_h220.log") -> pl.DataFrame:
    return rca.parse_text(text, file=name)


def _buses(text: str) -> list[str | None]:
    return _events(text)["pci_bus"].to_list()


def _fixture(name: str) -> dict[int, dict]:
    return {row["line"]: row for row in _events((DATA / name).read_text(), name).iter_rows(named=True)}


def test_fsp_dump_lines_take_the_bus_of_their_header() -> None:
    by_line = _fixture("dmesg_nvrm_fsp_boot_timeout_rminitadapter_h100_cc_01.log")
    assert [by_line[line]["pci_bus"] for line in range(1, 9)] == ["0000:01:00"] * 8
    # the FSP queue timeout comes 5 s after the adapter failure: another report, whose lines name no GPU
    assert [by_line[line]["pci_bus"] for line in (11, 12, 13)] == [None, None, None]


def test_gsp_rpc_history_after_an_xid_takes_its_bus_and_uuid() -> None:
    by_line = _fixture("journalctl_k_xid119_gsp_rpc_history_table_rtx4070_01.log")
    assert [(by_line[line]["pci_bus"], by_line[line]["gpu_uuid"]) for line in (6, 7)] == [("0000:01:00", UUID)] * 2
    # the lines before the GPU is named stay unattributed
    assert [by_line[line]["pci_bus"] for line in (1, 2, 3)] == [None, None, None]


def test_another_line_ends_the_dump() -> None:
    text = (
        f"[  10.000001] {GPU_AT}\n"
        "[  10.000002] NVRM: GPU0 GSP RPC buffer contains function 78 (DUMP_PROTOBUF_COMPONENT) and data 0x0 0x0.\n"
        "[  10.000003] nvidia-modeset: ERROR: GPU:0: Idling display engine timed out\n"
        "[  10.000004] NVRM: GPU0 RPC history (CPU -> GSP):\n"
    )
    assert _buses(text) == ["0000:01:00", "0000:01:00", None, None]


def test_another_gpus_line_ends_the_dump() -> None:
    text = (
        "[  10.000001] NVRM: Xid (PCI:0000:01:00): 119, pid=1, name=python, Timeout after 45s of waiting for RPC response from GPU0 GSP!\n"
        "[  10.000002] NVRM: GPU0 GSP RPC buffer contains function 76 (GSP_RM_CONTROL) and data 0x0 0x0.\n"
        "[  10.000003] NVRM: GPU6 RmInitAdapter: Cannot initialize GSP firmware RM\n"
        "[  10.000004] NVRM: GPU0 RPC history (CPU -> GSP):\n"
    )
    assert _buses(text) == ["0000:01:00", "0000:01:00", None, None]


def test_a_line_naming_another_bus_ends_the_dump() -> None:
    text = (
        f"[  10.000001] {GPU_AT}\n"
        "[  10.000002] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x40:2404)\n"
        "[  10.000003] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM\n"
    )
    assert _buses(text) == ["0000:01:00", "0000:41:00.0", None]


def test_a_reboot_or_a_pause_ends_the_dump() -> None:
    rebooted = f"[  10.000001] {GPU_AT}\n[   2.000000] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM\n"
    paused = f"[  10.000001] {GPU_AT}\n[  12.500000] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM\n"
    assert _buses(rebooted) == ["0000:01:00", None]
    assert _buses(paused) == ["0000:01:00", None]


def test_same_gpus_line_keeps_the_dump_going() -> None:
    text = (
        "[  10.000001] NVRM: kfspDumpDebugState_GH100: GPU 0000:01:00\n"
        "[  10.000002] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x1a:1792)\n"
        "[  10.000003] NVRM: kfspSendBootCommands_GH100: Sent following content to FSP:\n"
    )
    assert _buses(text) == ["0000:01:00", "0000:01:00.0", "0000:01:00"]


def test_files_do_not_share_a_dump(tmp_path: Path) -> None:
    node = tmp_path / "logs" / "node-a"
    node.mkdir(parents=True)
    (node / "dmesg_a.log").write_text(f"[  10.000001] {GPU_AT}\n")
    (node / "dmesg_b.log").write_text("[  10.000002] NVRM: GPU0 RPC history (CPU -> GSP):\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    events = rca.open_store(tmp_path / "store").events()
    rpc = events.filter(pl.col("message").str.contains("RPC history", literal=True))
    assert rpc["pci_bus"].to_list() == [None]


# Public excerpts this red-team round found already read right (kept so that they stay so).


def test_aer_on_the_gpu_names_the_failing_device() -> None:
    # dmesg -T | grep -i aer on an H100 node (10de:2330): the GPU's bus, not the root port's
    text = (
        "[Mon Aug 17 04:12:33 2026] pcieport 0000:e0:01.1: AER: Corrected error received: 0000:e3:00.0\n"
        "[Mon Aug 17 04:12:33 2026] nvidia 0000:e3:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
        "[Mon Aug 17 04:12:33 2026] nvidia 0000:e3:00.0:   device [10de:2330] error status/mask=00000001/0000e000\n"
        "[Mon Aug 17 04:12:33 2026] nvidia 0000:e3:00.0:    [ 0] RxErr                  (First)\n"
    )
    events = _events(text)
    assert events.select("line", "n_lines", "pci_bus", "severity", "ts_quality").rows() == [
        (1, 1, "0000:e3:00.0", "warning", "exact"),
        (2, 3, "0000:e3:00.0", "warning", "exact"),
    ]


def test_sxid_data_line_alone_in_decoded_iso_dmesg() -> None:
    text = (
        "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x000001c0, "
        "0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, 0x5a001100, 0x00000000, 0x00000000}\n"
    )
    row = _events(text).row(0, named=True)
    assert (row["pci_bus"], row["xid"], row["severity"], row["ts_quality"]) == ("0000:84:00.0", None, "error", "exact")
    assert row["attrs"] == '{"sxid":12028}'


def test_soft_lockup_task_whose_name_holds_a_colon() -> None:
    row = _events("[   80.221608] NMI watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [kworker/0:4:4202]\n").row(0, named=True)
    assert (row["pid"], row["process"], row["severity"], row["attrs"]) == (4202, "kworker/0:4", "critical", '{"stuck_seconds":22}')
