"""What ``nvidia-smi --gpu-reset [-i N]`` and the setting commands (``-pm``, ``-pl``, ``-ac``, ``-acp``) answer per GPU.

A reset ends every CUDA context on its GPU, so the answers belong on the timeline with the GPU they name:
"GPU 00000000:18:00.0 was successfully reset." is a notice, "Unable to reset GPU … because it's being used …",
"GPU Reset couldn't run because GPU … is the primary GPU.", "Some GPUs could not be reset." and the old
"Unable to reset this GPU because …" / "Terminating early due to previous errors." are errors. A file of the
answers alone (an epilog's log, a runbook's console block) is nvidia-smi's. So is a setup script's settings: each
answer keeps its GPU's bus id and the value set; a changed power limit (the cap GPUs throttle under) is a notice.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from tests.conftest import fixture_path, head_lines

BUSY_THEN_DONE = "nvidia_smi_gpu_reset_busy_then_done_4gpu_01.txt"
PRIMARY = "nvidia_smi_gpu_reset_primary_gpu_refused_01.txt"
TABLE_THEN_IN_USE = "nvidia_smi_table_418_p100_then_gpu_reset_in_use_01.txt"
PM_PL = "nvidia_smi_pm_pl_answers_gtx_rig_01.txt"
PM_ACP_AC = "nvidia_smi_pm_acp_ac_answers_352_aws_01.txt"


def _parse(name: str) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_text(encoding="utf-8"), file=name)


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).to_dicts()[0]


def test_answer_only_files_are_sniffed_as_nvidia_smi() -> None:
    for name in (BUSY_THEN_DONE, PRIMARY, PM_PL, PM_ACP_AC):
        source, _ = sources.sniff(head_lines(fixture_path(name)))
        assert source is not None and source.name == "nvidia_smi"


def test_refused_reset_names_the_busy_gpu_and_done_resets_each_theirs() -> None:
    events = _parse(BUSY_THEN_DONE)
    refused = _row(events, 4)
    assert (refused["severity"], refused["pci_bus"]) == ("error", "00000000:18:00.0")
    assert json.loads(refused["attrs"]) == {"gpu_reset": "failed"}
    assert _row(events, 5)["severity"] == "error"  # "Some GPUs could not be reset."
    done = events.filter(pl.col("attrs").str.contains('"gpu_reset":"done"'))
    assert done["line"].to_list() == [7, 8, 9, 10]
    assert done["pci_bus"].to_list() == ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0"]
    assert set(done["severity"]) == {"notice"}
    # the compute-apps query before it is still read as such
    process = _row(events, 2)
    assert (process["kind"], process["pid"], process["mem_used_bytes"]) == ("gpu_process", 1860, 20 * 2**20)


def test_primary_gpu_refusal_is_an_error_of_that_gpu() -> None:
    row = _row(_parse(PRIMARY), 1)
    assert (row["source"], row["severity"], row["pci_bus"]) == ("nvidia_smi", "error", "00000000:01:00.0")


def test_old_driver_refusal_after_a_table_is_an_error_and_the_table_still_reads() -> None:
    events = _parse(TABLE_THEN_IN_USE)
    gpu = _row(events, 7)
    assert (gpu["kind"], gpu["mem_used_bytes"], gpu["gpu_util_pct"]) == ("gpu_sample", 15849 * 2**20, 87.0)
    assert _row(events, 18)["severity"] == "error" and _row(events, 18)["pci_bus"] is None
    assert _row(events, 22)["severity"] == "error"  # "Terminating early due to previous errors."
    assert _row(events, 19)["severity"] is None  # the message's own continuation is no answer


def test_other_reset_wordings_are_not_answers() -> None:
    text = "Reset Required : No\nGPU 00000000:18:00.0 reset pending\n"
    events = rca.parse_text("+---+\n| NVIDIA-SMI 580.65.06 |\n" + text, file="x")
    assert not events["attrs"].drop_nulls().str.contains("gpu_reset").any()


@settings(max_examples=40, deadline=None)
@given(
    domain=st.sampled_from(["00000000", "0000", "00000001"]),
    bus=st.integers(0, 255), device=st.integers(0, 31), function=st.integers(0, 7),
    done=st.booleans(), upper=st.booleans(),
)
def test_any_bus_id_is_kept_as_printed(domain: str, bus: int, device: int, function: int, done: bool, upper: bool) -> None:
    digits = f"{bus:02X}:{device:02X}.{function}"
    pci = f"{domain}:{digits if upper else digits.lower()}"
    line = (
        f"GPU {pci} was successfully reset."
        if done
        else f"Unable to reset GPU {pci} because it's being used by some other process (e.g. CUDA application)."
        " Please first kill all processes using this GPU."
    )
    row = rca.parse_text(line + "\n", file="x").to_dicts()[0]
    assert row["source"] == "nvidia_smi" and row["pci_bus"] == pci
    assert row["severity"] == ("notice" if done else "error")
    assert json.loads(row["attrs"])["gpu_reset"] == ("done" if done else "failed")


def test_power_limit_change_is_a_notice_with_both_caps() -> None:
    events = _parse(PM_PL)
    persistence, limit = _row(events, 1), _row(events, 3)
    assert (persistence["severity"], persistence["pci_bus"], persistence["attrs"]) == ("info", "00000000:05:00.0", None)
    assert (limit["severity"], limit["pci_bus"]) == ("notice", "00000000:05:00.0")
    assert json.loads(limit["attrs"]) == {"power_cap_w": 110.0, "prev_power_cap_w": 180.0}
    assert _row(events, 2)["severity"] is None  # "All done."


def test_application_clocks_keep_their_values_and_gpu() -> None:
    events = _parse(PM_ACP_AC)
    assert events.filter(pl.col("pci_bus") == "0000:00:1E.0")["line"].to_list() == [1, 4, 8]
    assert json.loads(_row(events, 8)["attrs"]) == {"app_clocks_mem_mhz": 2505, "app_clocks_sm_mhz": 875}


@settings(max_examples=40, deadline=None)
@given(cap=st.integers(50, 1200), prev=st.integers(50, 1200), lo=st.integers(200, 2100), hi=st.integers(200, 3300))
def test_setting_values_are_read_from_any_answer(cap: int, prev: int, lo: int, hi: int) -> None:
    pci = "00000000:9D:00.0"
    text = (
        f"Power limit for GPU {pci} was set to {cap}.00 W from {prev}.00 W.\nAll done.\n"
        f'GPU clocks set to "(gpuClkMin {lo}, gpuClkMax {hi})" for GPU {pci}\nAll done.\n'
        f"Set compute mode to EXCLUSIVE_PROCESS for GPU {pci}.\nAll done.\n"
    )
    events = rca.parse_text(text, file="x")
    assert set(events["source"]) == {"nvidia_smi"}
    assert events.filter(pl.col("pci_bus") == pci)["line"].to_list() == [1, 3, 5]
    assert json.loads(_row(events, 1)["attrs"]) == {"power_cap_w": float(cap), "prev_power_cap_w": float(prev)}
    assert json.loads(_row(events, 3)["attrs"]) == {"locked_clocks_min_mhz": lo, "locked_clocks_max_mhz": hi}
    assert json.loads(_row(events, 5)["attrs"]) == {"compute_mode": "EXCLUSIVE_PROCESS"}
