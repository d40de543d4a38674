"""sacct's saved tables read by their header's columns (rca.sources._pipeline_slurm)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca.sources._pipeline_slurm import table_cells

DATA = Path(__file__).parent / "data" / "pipeline"


def _events(text: str):
    return rca.parse_text(text, file="x").sort("line")


def _attrs(value: str | None) -> dict:
    return json.loads(value) if value else {}


def test_maxrss_and_state_of_each_row_by_its_column():
    events = _events((DATA / "slurm_sacct_maxrss_step_rows_01.log").read_text())
    rows = events.filter(events["line"] >= 3)
    assert rows["kind"].to_list() == ["log"] * 7
    assert rows["rss_bytes"].to_list() == [6040 * 1024, None, 5872 * 1024, None, 5868 * 1024, None, 6036 * 1024]
    assert rows["severity"].to_list() == [None, "error", "error", "error", "error", None, None]
    first = _attrs(rows["attrs"][0])
    assert first == {"slurm_step": "19.0", "slurm_state": "COMPLETED", "slurm_job_name": "sleep", "slurm_max_vmsize": 0}


def test_reqmem_per_node_and_maxrss_without_a_jobid_column():
    events = _events((DATA / "slurm_sacct_reqmem_per_node_01.log").read_text())
    rows = events.filter(events["line"] >= 3)
    assert rows["mem_requested_bytes"].to_list() == [10000 * 1024**2] * 3
    assert rows["rss_bytes"].to_list() == [None, 0, 412420 * 1024]
    assert _attrs(rows["attrs"][0]) == {"slurm_req_mem": "10000Mn"}


def test_step_ids_are_no_buildkit_seconds():
    # the real table's step rows alone: most lines then start with "NN.0 ", BuildKit's prefix shape
    lines = (DATA / "slurm_sacct_maxrss_step_rows_01.log").read_text().splitlines()
    text = "\n".join(lines[:2] + [line for line in lines[2:] if line.split()[0].endswith(".0")]) + "\n"
    events = _events(text)
    assert events["message"][2].startswith("19.0 ")
    assert _attrs(events["attrs"][3])["slurm_step"] == "20.0"
    assert events["rss_bytes"][3] == 5872 * 1024


def test_existing_row_rules_keep_their_reading():
    events = _events((DATA / "slurm_sacct_out_of_memory_batch_extern_01.log").read_text())
    assert events["kind"].to_list()[:5] == ["log", "log", "oom_kill", "oom_kill", "log"]
    assert _attrs(events["attrs"][3])["slurm_step"] == "3801897.bat+"
    assert _attrs(events["attrs"][3])["slurm_job_name"] == "batch"
    assert events["kind"][5] == "process_killed"


# The parsable layout as sacct's man page describes it (-P: "|" between fields; -p: one after the last too); the values
# are shaped as sacct prints them.
_PARSABLE = (
    "JobID|JobName|ReqMem|AllocCPUS|MaxRSS|NodeList|Start|End|Elapsed|State|ExitCode{tail}\n"
    "494583|train|4000Mc|4||node17|2024-04-20T08:09:37|2024-04-20T09:09:37|01:00:00|OUT_OF_MEMORY|0:125{tail}\n"
    "494583.batch|batch||4|15.50G|node17|2024-04-20T08:09:37|2024-04-20T09:09:37|01:00:00|OUT_OF_MEMORY|0:125{tail}\n"
    "494584|eval|16G|8||node[01-04]|2024-04-20T08:10:00|Unknown|00:59:37|RUNNING|0:0{tail}\n"
)


def test_parsable_rows_by_header():
    for tail in ("", "|"):
        events = _events(_PARSABLE.format(tail=tail))
        job, batch, running = (events.filter(events["line"] == n).row(0, named=True) for n in (2, 3, 4))
        assert job["kind"] == batch["kind"] == "oom_kill"
        assert job["mem_requested_bytes"] == 4 * 4000 * 1024**2
        assert batch["rss_bytes"] == round(15.5 * 1024**3)
        assert job["host"] == batch["host"] == "node17"
        assert job["ts_raw"] == "2024-04-20T09:09:37" and job["ts_quality"] == "exact"
        assert _attrs(job["attrs"])["slurm_elapsed"] == "01:00:00"
        # a range of nodes is no host; a running job has no End: its Start is its time
        assert running["host"] is None
        assert running["ts_raw"] == "2024-04-20T08:10:00"
        assert running["mem_requested_bytes"] == 16 * 1024**3


def test_a_line_whose_gap_holds_text_ends_the_table():
    events = _events((DATA / "slurm_sacct_out_of_memory_batch_extern_01.log").read_text())
    assert events["rss_bytes"].is_null().all()
    assert "slurm_job_name" not in _attrs(events["attrs"][5])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**8), st.sampled_from(["K", "M", "G"])), min_size=1, max_size=5))
def test_maxrss_sizes_are_1024_based(sizes):
    header = "JobID            MaxRSS \n------------ ---------- \n"
    rows = "".join(f"{100 + n:<12} {f'{value}{unit}':>10} \n" for n, (value, unit) in enumerate(sizes))
    events = _events(header + rows)
    got = events.filter(events["line"] >= 3)["rss_bytes"].to_list()
    assert got == [value * {"K": 1024, "M": 1024**2, "G": 1024**3}[unit] for value, unit in sizes]


def test_a_table_ends_with_its_file_in_a_batch_of_files() -> None:
    """Files read together are numbered on (``batch_file``): a header and rule ending one file take no rows from the next."""
    lines = pl.DataFrame({
        "line": [1, 2, 3, 4, 5],
        "text": ["    ReqMem     MaxRSS", "---------- ----------", "   10000Mn    412420K", "    ReqMem     MaxRSS", "---------- ----------"],
        "batch_file": [0, 0, 0, 1, 1],
    }).vstack(pl.DataFrame({"line": [6], "text": ["   20000Mn      1024K"], "batch_file": [2]}))
    cells = table_cells(lines.with_columns(pl.col("batch_file").cast(pl.Int32)))
    assert cells.select("line", "reqmem", "maxrss").rows() == [(3, "10000Mn", "412420K")]
