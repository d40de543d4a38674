"""The kernel parser on a firmware-first PCIe error record's device and on a cgroup v1 memcg's figures.

A CPER PCIe error section names the failed function on its ``device_id:`` line: that is the record's ``pci_bus`` (its
``vendor_id: …, device_id: 0x…`` line names no bus). A cgroup v1 OOM report prints ``memory:``, ``memory+swap:`` and
``kmem:`` figures: only the ``memory:`` ones are the memcg's usage and limit.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import DATA


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def _record(bus: str, number: int = 1) -> str:
    tag = f"{{{number}}}[Hardware Error]:"
    return "\n".join(
        f"[11219.19{i:04d}] {tag}{body}"
        for i, body in enumerate((
            " Hardware error from APEI Generic Hardware Error Source: 1", " event severity: recoverable",
            "  Error 0, type: recoverable", "   section_type: PCIe error", "   port_type: 0, PCIe end point",
            f"   device_id: {bus}", "   vendor_id: 0x10de, device_id: 0x2330",
        ))
    ) + "\n"


def test_ghes_pcie_record_names_its_device_across_an_interleaved_mce_line() -> None:
    events = _events((DATA / "kernel" / "dmesg_edac_skx_ue_apei_pcie_recoverable_gpu_node_01.log").read_text())
    record = events.filter(pl.col("line") == 2).row(0, named=True)
    assert (record["n_lines"], record["severity"], record["pci_bus"]) == (11, "error", "0000:5e:00.0")
    assert events.filter(pl.col("line") == 1)["severity"].to_list() == ["critical"]


def test_vendor_line_device_id_is_no_bus() -> None:
    text = "[1.000000] {2}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 2\n" \
           "[1.000001] {2}[Hardware Error]:   vendor_id: 0x10de, device_id: 0x2330\n"
    assert _events(text)["pci_bus"].to_list() == [None]


@settings(max_examples=30, deadline=None)
@given(
    domain=st.integers(0, 0xFFFF), bus=st.integers(0, 0xFF), device=st.integers(0, 0x1F), function=st.integers(0, 7),
    number=st.integers(0, 999),
)
def test_ghes_device_id_is_read_for_any_bdf(domain: int, bus: int, device: int, function: int, number: int) -> None:
    bdf = f"{domain:04x}:{bus:02x}:{device:02x}.{function}"
    events = _events(_record(bdf, number))
    assert events.height == 1
    assert events["pci_bus"].to_list() == [bdf]


def test_memcg_v1_memory_figures_not_overwritten_by_memsw_or_kmem() -> None:
    events = _events((DATA / "kernel" / "dmesg_oom_kubepods_v1_memsw_kmem_wrapped_paste_01.log").read_text())
    kill = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["pid"], kill["process"]) == (62685, "bash")
    assert kill["mem_used_bytes"] == kill["mem_total_bytes"] == 524288 * 1024
    assert kill["pod_uid"] == "951f6bc5-c5a5-11ea-8707-80e455f266a2"
    assert kill["container_id"].startswith("024952d653ef")
    assert json.loads(kill["attrs"])["memcg_failcnt"] == 0


def test_hung_task_in_nvidia_driver_names_its_task() -> None:
    events = _events((DATA / "kernel" / "dmesg_hung_task_gdscheck_nvidia_rwsem_5_15_01.log").read_text())
    assert events.height == 1
    row = events.row(0, named=True)
    assert (row["pid"], row["process"], row["severity"], row["n_lines"]) == (509579, "gdscheck", "error", 19)
