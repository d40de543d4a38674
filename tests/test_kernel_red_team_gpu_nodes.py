"""Kernel lines from GPU nodes that public reports showed the parser misreading (red-team round on real logs)."""

from pathlib import Path

import polars as pl

import rca

DATA = Path(__file__).parent / "data"


def _events(text: str, name: str) -> pl.DataFrame:
    return rca.parse_text(text, file=name)


def test_fsp_boot_dump_names_the_gpu_after_the_function_name() -> None:
    events = _events("[  279.949533] NVRM: kfspDumpDebugState_GH100: GPU 0000:01:00\n", "dmesg_fsp.log")
    assert events.select("source", "pci_bus", "boot_seconds").row(0) == ("kernel", "0000:01:00", 279.949533)


def test_gpu_instance_prefix_is_not_read_as_a_bus() -> None:
    # "GPU0" is the driver's instance number, not a PCI address: no bus is named on these lines
    text = (
        "[  101.287612] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP\n"
        "[  101.287650] NVRM: GPU6 RmInitAdapter: Cannot initialize GSP firmware RM\n"
    )
    assert _events(text, "dmesg_gsp.log")["pci_bus"].to_list() == [None, None]


def test_fsp_sample_reports_status_and_failed_adapter() -> None:
    name = "dmesg_nvrm_fsp_boot_timeout_rminitadapter_h100_cc_01.log"
    events = _events((DATA / "kernel" / name).read_text(), name)
    by_line = {row["line"]: row for row in events.iter_rows(named=True)}
    assert by_line[1]["pci_bus"] == "0000:01:00"
    assert '"nvrm_status":"NV_ERR_INSUFFICIENT_RESOURCES"' in by_line[6]["attrs"]
    assert (by_line[9]["pci_bus"], by_line[9]["severity"]) == ("0000:01:00.0", "error")
    assert '"rm_init_error":"0x62:0x1a:1792"' in by_line[9]["attrs"]


def test_journal_host_of_digits_and_dashes_is_kept() -> None:
    name = "journal_gpu_node_digit_host_mlx5_systemd_01.log"
    events = _events((DATA / "syslog" / name).read_text(), name)
    assert set(events["host"]) == {"000-000-00000-1-gpu-1"}
    mlx5 = events.filter(pl.col("message").str.starts_with("mlx5_core"))
    assert mlx5.select("source", "pci_bus").unique().rows() == [("kernel", "0000:ab:00.0")]
    systemd = events.filter(pl.col("process") == "systemd")
    assert systemd.select("source", "pid").unique().rows() == [("syslog", 1)]
