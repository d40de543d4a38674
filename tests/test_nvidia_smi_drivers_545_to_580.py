"""Real nvidia-smi shapes of drivers 545-580: GB10 / GB200, a MIG GPU seen from a container, WSL 2, pmon.

What expected.jsonl cannot say (a reading that must be null, not 0; how many samples a capture holds) is asserted here,
and the header-less GB10 rows, which no literal of the source's sniffer used to catch, are generated.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import FIXED_MTIME, fixture_path, of_kind


def _parse(name: str) -> pl.DataFrame:
    text = fixture_path(name).read_bytes().decode("utf-8")
    return rca.parse_text(text, file=name, reference_time=FIXED_MTIME)


def test_gb10_memory_not_supported_is_null_not_zero() -> None:
    events = _parse("nvidia_smi_table_gb10_580_memory_not_supported_01.txt")
    sample = of_kind(events, "gpu_sample").row(0, named=True)
    assert (sample["mem_used_bytes"], sample["mem_total_bytes"], sample["gpu_util_pct"]) == (None, None, 10.0)
    assert of_kind(events, "gpu_process")["mem_used_bytes"].to_list() == [84 * 2**20, 125 * 2**20, 273 * 2**20]


def test_wsl2_process_memory_na_is_null() -> None:
    process = of_kind(_parse("nvidia_smi_table_545_wsl2_process_memory_na_01.txt"), "gpu_process").row(0, named=True)
    assert (process["pid"], process["process"], process["mem_used_bytes"]) == (23, "/Xwayland", None)


def test_mig_gpu_row_memory_na_while_its_mig_devices_carry_theirs() -> None:
    samples = of_kind(_parse("nvidia_smi_table_h200_mig_570_container_memory_na_01.txt"), "gpu_sample")
    gpu_row = samples.filter(~pl.col("attrs").str.contains('"mig_device"'))
    assert gpu_row.height == 1 and gpu_row["mem_used_bytes"].to_list() == [None]
    mig_rows = samples.filter(pl.col("attrs").str.contains('"mig_device"'))
    assert [json.loads(a)["gi"] for a in mig_rows["attrs"]] == [5, 7]


def test_gb200_table_then_topo_keeps_four_gpus_and_the_matrix_as_lines() -> None:
    events = _parse("nvidia_smi_table_gb200_580_then_topo_m_openshift_01.txt")
    assert of_kind(events, "gpu_sample")["pci_bus"].to_list() == [
        "00000008:01:00.0",
        "00000009:01:00.0",
        "00000018:01:00.0",
        "00000019:01:00.0",
    ]
    matrix_rows = events.filter(pl.col("message").str.contains(r"^\s*GPU[0-3]\s+(?:X|NV18)\s"))  # not the column header
    assert matrix_rows["kind"].unique().to_list() == ["log"] and matrix_rows.height == 4


def test_pmon_rows_have_no_time_of_their_own() -> None:
    processes = of_kind(_parse("nvidia_smi_pmon_c3_python_sm_mem_zero_01.txt"), "gpu_process")
    assert processes.height == 3 and processes["ts"].null_count() == 3
    assert processes["ts_quality"].unique().to_list() == ["missing"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(0, 7),
    domain=st.integers(1, 0xFF),
    temp=st.integers(20, 95),
    power=st.integers(1, 140),
    util=st.integers(0, 100),
)
def test_headerless_unified_memory_rows_are_read_as_nvidia_smi(index: int, domain: int, temp: int, power: int, util: int) -> None:
    # GB10's rows as a report pastes them: no header, no MiB, a bus id outside PCI domain 0
    bus = f"{domain:08X}:01:00.0"
    border = "+-----------------------------------------+------------------------+----------------------+"
    text = "\n".join(
        [
            border,
            f"|{index:>4}  NVIDIA GB10                    On  | {bus}   Off |                  N/A |",
            f"| N/A   {temp}C    P0 {power:>14}W /  N/A  |     Not Supported      | {util:>6}%      Default |",
            border,
        ]
    )
    sample = of_kind(rca.parse_text(text, file="report.md", reference_time=FIXED_MTIME), "gpu_sample")
    assert sample.select("source", "gpu_index", "pci_bus", "gpu_util_pct", "mem_used_bytes").rows() == [
        ("nvidia_smi", index, bus, float(util), None)
    ]
    assert json.loads(sample["attrs"][0])["temp_c"] == temp
