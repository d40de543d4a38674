"""--query-gpu CSV: the health columns a script may ask for instead of the ones -q prints together.

A query may name a hardware slowdown's cause alone (``clocks_throttle_reasons.hw_thermal_slowdown``), the reasons as
one bitmask (``clocks_event_reasons.active``) or an uncorrected ECC count per location (``….volatile.dram``) without
the total: each makes the GPU's sample a warning, as -q's "HW Slowdown : Active" and "DRAM Uncorrectable" do.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca

DATA = Path(__file__).parent / "data" / "nvidia_smi"


def _severities(text: str) -> dict[int, str]:
    events = rca.parse_text(text, file="gpu.csv").filter(pl.col("kind") == "gpu_sample")
    return dict(zip(events["gpu_index"].to_list(), events["severity"].to_list(), strict=True))


@pytest.mark.parametrize("prefix", ["clocks_throttle_reasons", "clocks_event_reasons"])
@pytest.mark.parametrize("reason", ["hw_thermal_slowdown", "hw_power_brake_slowdown", "hw_slowdown"])
def test_an_active_hardware_slowdown_cause_is_a_warning(prefix: str, reason: str) -> None:
    text = f"index, temperature.gpu, {prefix}.{reason}, {prefix}.sw_thermal_slowdown\n0, 91, Active, Active\n1, 60, Not Active, Active\n"
    assert _severities(text) == {0: "warning", 1: "info"}


def test_a_software_reason_alone_stays_info() -> None:
    text = "index, clocks_throttle_reasons.sw_power_cap, clocks_throttle_reasons.gpu_idle\n0, Active, Active\n"
    assert _severities(text) == {0: "info"}


@given(bits=st.integers(min_value=0, max_value=0x1FF))
@settings(max_examples=15, deadline=None)
def test_the_reasons_mask_is_a_warning_exactly_when_a_hardware_bit_is_set(bits: int) -> None:
    text = f"index, clocks_event_reasons.active\n0, 0x{bits:016X}\n"
    expected = "warning" if bits & 0xC8 else "info"  # nvml.h: HW Slowdown 0x8, HW Thermal 0x40, HW Power Brake 0x80
    assert _severities(text) == {0: expected}


def test_an_unreadable_mask_is_no_warning() -> None:
    assert _severities("index, clocks_throttle_reasons.active\n0, [N/A]\n") == {0: "info"}


@pytest.mark.parametrize("location", ["dram", "sram", "device_memory", "l2_cache", "total"])
def test_an_uncorrected_volatile_count_at_any_location_is_a_warning(location: str) -> None:
    text = (
        f"index, pci.bus_id, ecc.errors.uncorrected.volatile.{location}, ecc.errors.uncorrected.aggregate.total\n"
        "0, 00000000:07:00.0, 2, 5\n1, 00000000:0F:00.0, 0, 3\n2, 00000000:47:00.0, [N/A], [N/A]\n"
    )
    # an aggregate count alone is history (errors before this driver load), not this GPU's state now
    assert _severities(text) == {0: "warning", 1: "info", 2: "info"}


def test_real_idle_throttle_reasons_loop_stays_info() -> None:
    events = rca.parse_text((DATA / "nvidia_smi_query_gpu_throttle_reasons_lms_idle_01.csv").read_text(), file="x.csv")
    assert events["kind"].to_list() == ["gpu_sample"] * 6
    assert set(events["severity"]) == {"info"}
    assert events["line"].to_list() == [2, 3, 4, 5, 6, 7]
    assert set(events["gpu_index"]) == {0}
    assert set(events["gpu_util_pct"]) == {0.0}
