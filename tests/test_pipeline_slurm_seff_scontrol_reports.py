"""seff's and scontrol show job's reports of one job, read onto the line stating its state (rca.sources._pipeline_slurm)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import rca

DATA = Path(__file__).parent / "data" / "pipeline"


def _row(name: str, line: int) -> dict:
    events = rca.parse_text((DATA / name).read_text(), file=name)
    return events.filter(events["line"] == line).row(0, named=True)


def test_seff_report_facts_on_its_state_line() -> None:
    row = _row("slurm_seff_completed_over_request_01.log", 4)
    assert row["kind"] == "log"
    assert row["rss_bytes"] == round(361.24 * 1024**3)
    assert row["mem_requested_bytes"] == round(195.31 * 1024**3)
    assert row["exit_code"] == 0
    attrs = json.loads(row["attrs"])
    assert attrs["slurm_mem_efficiency_pct"] == 184.95
    assert (attrs["slurm_step"], attrs["slurm_cluster"], attrs["slurm_nodes"]) == ("3442673", "cluster1", 1)


def test_seff_out_of_memory_keeps_its_kill_and_gains_the_request() -> None:
    row = _row("slurm_seff_out_of_memory_01.log", 4)
    assert (row["kind"], row["severity"], row["exit_code"]) == ("oom_kill", "error", 0)
    assert row["mem_requested_bytes"] == 20 * 1024**2
    assert row["rss_bytes"] == 0


def test_scontrol_block_facts_on_its_job_state_line() -> None:
    row = _row("slurm_scontrol_out_of_memory_sacct_01.log", 9)
    assert (row["kind"], row["severity"], row["host"]) == ("oom_kill", "error", "gnode009")
    assert row["mem_requested_bytes"] == 1024**2
    assert (row["ts_raw"], row["ts_quality"], str(row["ts"])) == ("2023-07-19T15:54:42", "exact", "2023-07-19 15:54:42+00:00")
    assert row["exit_code"] == 0


def test_scontrol_of_a_running_job_is_dated_by_its_start_not_its_limit() -> None:
    row = _row("slurm_scontrol_general_summary_tgcc_01.log", 44)
    assert row["ts_raw"] == "2023-05-17T11:19:17"
    assert (row["host"], row["mem_requested_bytes"]) == ("inti6015", 15000 * 1024**2)


def test_sacct_max_rss_node_names_the_host() -> None:
    assert _row("slurm_scontrol_general_summary_tgcc_01.log", 80)["host"] == "inti6015"


@settings(max_examples=30, deadline=None)
@given(gib=st.integers(min_value=1, max_value=4096), hundredths=st.integers(min_value=0, max_value=99), unit=st.sampled_from("KMGT"))
def test_seff_sizes_are_1024_based(gib: int, hundredths: int, unit: str) -> None:
    size = f"{gib}.{hundredths:02d}"
    text = f"Job ID: 1\nState: FAILED (exit code 1)\nMemory Utilized: {size} {unit}B\nMemory Efficiency: 50.00% of {size} {unit}B\n"
    row = rca.parse_text(text, file="x").filter(rca.parse_text(text, file="x")["line"] == 2).row(0, named=True)
    expected = round(float(size) * 1024 ** ("KMGT".index(unit) + 1))
    assert (row["rss_bytes"], row["mem_requested_bytes"], row["exit_code"]) == (expected, expected, 1)
