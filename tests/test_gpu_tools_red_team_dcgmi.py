"""Red-team checks of GPU tool outputs: nvidia-smi CSV clock/power readings, NVVS' log beside nv-hostengine's, a DCGM 4
diag whose test fails while every GPU passes."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import rca

DCGM = Path(__file__).parent / "data" / "dcgm"


def _attrs(events: pl.DataFrame) -> list[dict]:
    return [json.loads(text) for text in events["attrs"]]


def test_query_gpu_clock_power_and_temperature_cells_are_numbers_under_unit_named_keys() -> None:
    capture = (
        "timestamp, index, clocks.sm [MHz], clocks.mem [MHz], clocks.max.sm [MHz], power.draw [W], temperature.gpu\n"
        "2024/05/01 12:00:00.123, 0, 1410 MHz, 1215 MHz, 1410 MHz, 250.12 W, 64\n"
    )
    (sample,) = _attrs(rca.parse_text(capture, file="gpu.csv"))
    assert sample == {"pclk_mhz": 1410.0, "mclk_mhz": 1215.0, "max_pclk_mhz": 1410.0, "power_w": 250.12, "temp_c": 64.0}


def test_query_gpu_nounits_clocks_and_a_later_power_spelling_are_read_too() -> None:
    capture = (
        "index, clocks.current.graphics [MHz], clocks.applications.memory [MHz], power.draw.instant [W], enforced.power.limit [W]\n"
        "3, 1980, 2619, 612.4, 700.00\n"
    )
    (sample,) = _attrs(rca.parse_text(capture, file="gpu.csv"))
    assert sample == {"gr_clock_mhz": 1980.0, "app_clocks_mem_mhz": 2619.0, "power_w": 612.4, "power_cap_w": 700.0}


def test_query_gpu_first_power_column_wins_and_not_available_is_no_reading() -> None:
    capture = "index, power.draw [W], power.draw.instant [W], clocks.max.memory [MHz]\n0, [N/A], 88.10 W, [N/A]\n"
    (sample,) = _attrs(rca.parse_text(capture, file="gpu.csv"))
    assert sample == {"power_w": 88.1}


def test_nvvs_log_is_named_nvvs_not_nv_hostengine() -> None:
    name = "dcgm_nvvs_log_pulse_test_cc12_rtx5090_01.log"
    events = rca.parse_text((DCGM / name).read_text(), file=name)
    assert set(events.select("source", "format", "process").rows()) == {("dcgm", "nvvs_log", "nvvs")}
    error = events.filter(pl.col("severity") == "error")
    assert error.select("line", "pid", "message").rows() == [(2, 71830, "Incompatible CUDA compute capability major version: 12")]
    assert _attrs(error)[0]["module"] == "pulse_test"


def test_hostengine_log_keeps_its_process() -> None:
    line = (
        "2024-05-24 10:11:29.243 ERROR [5231:5273] [[NvSwitch]] ReadNvSwitchStatusAllSwitches() returned Object is in an "
        "undefined state [/workspaces/dcgm-rel_dcgm_2_2-postmerge/modules/nvswitch/DcgmModuleNvSwitch.cpp:388] "
        "[DcgmNs::DcgmModuleNvSwitch::RunOnce]\n"
    )
    events = rca.parse_text(line * 3, file="he.log")
    assert set(events.select("format", "process").rows()) == {("hostengine_log", "nv-hostengine")}


def test_plog_default_layout_of_another_daemon_is_not_read_as_dcgm() -> None:
    text = "".join(f"2024-05-01 12:00:0{n}.123 {level} [1234] [main@{n}] step {n}\n" for n, level in enumerate(("INFO ", "WARN ", "ERROR")))
    events = rca.parse_text(text, file="daemon.log")
    assert events.select("source", "severity").rows() == [("pipeline", "info"), ("pipeline", "warning"), ("pipeline", "error")]


def test_diag_test_fail_with_every_gpu_passing_keeps_the_fail_and_its_warnings() -> None:
    name = "dcgm_diag_r2_423_pcie_fail_child_process_warnings_01.txt"
    events = rca.parse_text((DCGM / name).read_text(), file=name).filter(pl.col("format") == "diag")
    pcie = events.filter(pl.col("message").str.starts_with("pcie: "))
    assert pcie.filter(pl.col("severity") == "error").select("line", "gpu_index").rows() == [(23, None)]
    warnings = pcie.filter(pl.col("severity") == "warning")
    assert warnings.select("line", "n_lines").rows() == [(24, 5), (29, 5), (34, 6), (40, 6)]
    assert "(153) exited with non-zero status 1'" in warnings["message"][1]
    passed = pcie.filter(pl.col("gpu_index").is_not_null())
    assert passed.select("gpu_index", "severity").rows() == [(n, "info") for n in range(4)]
