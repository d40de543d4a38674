"""Xid 154's recovery action across driver wordings, and OOM report pieces from public kernel logs (tests/data/kernel)."""

from pathlib import Path

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

import rca

DATA = Path(__file__).parent / "data" / "kernel"


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def _xid154(action_code: str, action_name: str) -> dict:
    line = f"NVRM: Xid (PCI:0000:0d:00): 154, GPU recovery action changed from 0x0 (None) to {action_code} ({action_name})\n"
    return _parse(line).row(0, named=True)


def test_pf_flr_wording_is_a_reset_and_critical() -> None:
    events = _parse((DATA / "journalctl_k_xid51_xid154_pf_flr_reset_required_01.log").read_text())
    xid154 = events.filter(pl.col("xid") == 154).row(0, named=True)
    assert xid154["severity"] == "critical"
    assert xid154["pci_bus"] == "0000:0d:00"
    assert '"xid_recovery_action":"PF FLR"' in xid154["attrs"]


def test_610_os_reboot_wording_is_critical() -> None:
    events = _parse((DATA / "journalctl_k_xid79_xid154_os_reboot_610_01.log").read_text())
    assert events.filter(pl.col("xid") == 154)["severity"].to_list() == ["critical"]
    assert events.filter(pl.col("xid") == 79)["severity"].to_list() == ["critical"]


def test_known_names_keep_their_severity() -> None:
    assert _xid154("0x3", "Drain P2P")["severity"] == "warning"
    assert _xid154("0x0", "None")["severity"] == "info"
    assert _xid154("0x2", "Node Reboot Required")["severity"] == "critical"


@given(code=st.sampled_from(["0x1", "0x2", "0x4", "0X1"]), name=st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=20))
def test_unknown_wording_takes_its_severity_from_the_nvml_code(code: str, name: str) -> None:
    row = _xid154(code, name.strip() or "x")
    assert row["kind"] == "xid"
    assert row["xid"] == 154
    assert row["severity"] == "critical"


def test_unlimited_swap_limit_is_not_read_as_a_memory_size() -> None:
    events = _parse((DATA / "kern_log_oom_memcg_swap_usage_dpservice_01.log").read_text())
    usage = events.filter(pl.col("line") == 12).row(0, named=True)
    assert (usage["mem_used_bytes"], usage["mem_total_bytes"]) == (1048576 * 1024, 1048576 * 1024)
    swap = events.filter(pl.col("line") == 13).row(0, named=True)
    assert swap["mem_total_bytes"] is None and swap["mem_used_bytes"] is None


def test_no_killable_processes_line_is_an_error_before_the_next_report() -> None:
    events = _parse((DATA / "journalctl_k_oom_no_killable_processes_6_17_01.log").read_text())
    assert events.filter(pl.col("line") == 2)["severity"].to_list() == ["error"]
    header = events.filter(pl.col("kind") == "oom_invoked").row(0, named=True)
    assert (header["pid"], header["process"], header["n_lines"], header["ts_quality"]) == (20957, "systemd", 10, "missing")


def test_gfp_mask_0x0_header_keeps_mem_info_continuations() -> None:
    events = _parse((DATA / "dmesg_T_oom_gfp_mask_0x0_slub_unable_fork_bomb_01.log").read_text())
    header = events.filter(pl.col("kind") == "oom_invoked").row(0, named=True)
    assert (header["pid"], header["process"], header["line"], header["n_lines"]) == (3143648, "python3", 6, 8)
    assert '"gfp_mask":"0x0()"' in header["attrs"]


def test_gsp_rpc_history_table_is_one_record() -> None:
    events = _parse((DATA / "dmesg_nvrm_gsp_rpc_event_history_table_gpu6_01.log").read_text())
    assert events.select("line", "n_lines").rows() == [(1, 1), (2, 1), (3, 7)]
