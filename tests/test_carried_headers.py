"""A table read in batches reads as it does whole: the rows after the first batch keep their header's columns.

A week of ``nvidia-smi --query-gpu … -l 1`` is hundreds of megabytes of CSV under one header,
and ``sacct -a`` dumps a table of every job; ingest reads such files in batches (and appends to
them), so each batch is read below the header lines its source carries (rca._carry).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import rca
from rca import sources
from rca.ingest import FileTask, IngestOptions, parse_rows, plan, split_plan
from rca.sources import _pipeline_slurm, nvidia_smi
from rca.sources._base import ParseContext
from rca.store import Store
from tests.conftest import DATA, ingested, numbered_lines, parse_in_batches

SMALL_BATCHES = IngestOptions(batch_bytes=4096, year=2026)
WHOLE = IngestOptions(batch_bytes=1 << 30, year=2026)
SACCT = (DATA / "pipeline/slurm_sacct_maxrss_step_rows_01.log").read_text().splitlines()
# The same table as `sacct --parsable2` prints it: each cell of the fixed-width one (under its rule's dash run) joined by "|".
_COLUMNS = [(match.start(), match.end()) for match in re.finditer("-+", SACCT[1])]
SACCT_PIPED = ["|".join(line[start:end].strip() for start, end in _COLUMNS) for at, line in enumerate(SACCT) if at != 1]


def _table(header: list[str], rows: list[str], repeats: int) -> str:
    return "\n".join(header + rows * repeats) + "\n"


def _csv_loop() -> str:
    header, *rows = (DATA / "nvidia_smi/query_gpu_loop_memory_growth.csv").read_text().splitlines()
    return _table([header], rows, 8)


def _dmon_loop() -> str:
    lines = (DATA / "nvidia_smi/dmon_dt_memory.txt").read_text().splitlines()
    return _table(lines[:2], lines[2:], 60)


def _sacct_table() -> str:
    return _table(SACCT[:2], SACCT[2:], 150)


def _sacct_piped() -> str:
    return _table(SACCT_PIPED[:1], SACCT_PIPED[1:], 150)


TABLES = {"nvidia-smi-query.csv": _csv_loop, "nvidia-smi-dmon.log": _dmon_loop, "sacct.txt": _sacct_table, "sacct-parsable.txt": _sacct_piped}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("carried") / "logs" / "gpu-node-1"
    root.mkdir(parents=True)
    for name, text in TABLES.items():
        (root / name).write_text(text())
        (root / f"{name}.1.gz").write_bytes(gzip.compress(text().encode()))
    return root.parent


@pytest.mark.usefixtures("small_reads")
def test_tables_read_in_batches_read_as_whole(tables: Path, tmp_path: Path) -> None:
    whole_events, whole_manifest = ingested(tables, tmp_path / "whole", WHOLE)
    events, manifest = ingested(tables, tmp_path / "batched", SMALL_BATCHES)
    assert_frame_equal(events, whole_events)
    assert_frame_equal(manifest, whole_manifest)
    plain = manifest.filter(~pl.col("path").str.ends_with(".gz"))
    assert (plain["bytes"] > 4 * SMALL_BATCHES.batch_bytes).all()  # every file is several batches (the gzip copies too, inflated)
    by_file = events.group_by("file").agg(
        samples=(pl.col("kind") == "gpu_sample").sum(), rss=pl.col("rss_bytes").is_not_null().sum(), rows=pl.len()
    ).sort("file")
    counts = {Path(file).name: (samples, rss, rows) for file, samples, rss, rows in by_file.iter_rows()}
    one_copy = rca.parse_text((DATA / "nvidia_smi/query_gpu_loop_memory_growth.csv").read_text(), file="one.csv").height
    assert counts["nvidia-smi-query.csv"] == (8 * one_copy, 0, 8 * one_copy)  # every row a GPU sample, not only the first batch's
    dmon_rows = len([line for line in _dmon_loop().splitlines() if line.strip() and not line.startswith("#")])
    assert counts["nvidia-smi-dmon.log"][0] == dmon_rows
    # the steps' MaxRSS: four of the seven rows of each copy carry one
    assert counts["sacct.txt"][1] == counts["sacct-parsable.txt"][1] == 4 * 150


@pytest.mark.usefixtures("small_reads")
def test_header_lines_are_counted_once(tables: Path, tmp_path: Path) -> None:
    _, manifest = ingested(tables, tmp_path / "batched", SMALL_BATCHES)
    row = manifest.filter(pl.col("path").str.ends_with("nvidia-smi-query.csv")).row(0, named=True)
    assert row["lines"] == len(_csv_loop().splitlines())
    headers = sum(line.startswith("timestamp, ") for line in _csv_loop().splitlines())  # the fixture's loop restarts once
    assert json.loads(row["skipped_reasons"])["header"] == headers
    assert (manifest["lines"] == manifest["events"] + manifest["merged_lines"] + manifest["skipped_lines"]).all()


def test_a_file_that_opens_with_a_table_is_not_cut_into_ranges(tables: Path) -> None:
    task = next(task for task in _tasks(tables) if task.path.endswith("/sacct.txt"))
    assert split_plan(task) is None


def test_rows_appended_to_a_table_read_by_its_header(tmp_path: Path) -> None:
    host = tmp_path / "logs" / "gpu-node-1"
    host.mkdir(parents=True)
    text = _sacct_table()
    half = text.index("\n", len(text) // 2) + 1
    (host / "sacct.txt").write_text(text[:half])
    options = IngestOptions(batch_bytes=1 << 30, year=2026)
    rca.ingest(tmp_path / "logs", tmp_path / "store", options, workers=1)
    with (host / "sacct.txt").open("a") as appended:
        appended.write(text[half:])
    rca.ingest(tmp_path / "logs", tmp_path / "store", options, workers=1)
    fresh, _ = ingested(tmp_path / "logs", tmp_path / "fresh", options)
    again = rca.open_store(tmp_path / "store").events().sort("file", "line")
    assert_frame_equal(again, fresh)
    assert again["rss_bytes"].is_not_null().sum() == 4 * 150


def _tasks(root: Path) -> list[FileTask]:
    return plan(root, Store(root.parent / "plan-store"), str(root.parent / "staging"), "run", SMALL_BATCHES)


_lines = numbered_lines


def test_only_a_table_that_runs_to_the_last_line_is_carried() -> None:
    running = _lines(SACCT)
    assert _pipeline_slurm.carried_lines(running)["text"].to_list() == SACCT[:2]
    ended = _lines([*SACCT, "srun: error: gpu01: task 0: Out Of Memory"])
    assert _pipeline_slurm.carried_lines(ended).is_empty()
    csv = _csv_loop().splitlines()
    assert nvidia_smi.carried_lines(_lines(csv[:40]))["text"].to_list() == csv[:1]
    assert nvidia_smi.carried_lines(_lines([*csv[:40], "==============NVSMI LOG=============="])).is_empty()
    dmon = _dmon_loop().splitlines()
    assert nvidia_smi.carried_lines(_lines(dmon[:30]))["text"].to_list() == dmon[:1]


@settings(max_examples=20, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=200), min_size=1, max_size=6, unique=True), table=st.sampled_from(sorted(TABLES)))
def test_any_cut_of_a_table_reads_as_the_whole(cuts: list[int], table: str) -> None:
    texts = TABLES[table]().splitlines()[:201]
    source = sources.get("nvidia_smi" if table.startswith("nvidia") else "pipeline")
    ctx = ParseContext(file=table, host="gpu-node-1", tz="UTC", year=2026)
    whole, whole_skipped, _ = parse_rows(_lines(texts), ctx, source)
    rows, skipped = parse_in_batches(texts, cuts, source, ctx)
    assert_frame_equal(rows, whole.sort("line"), check_column_order=False)
    assert skipped == {reason: count for reason, count in whole_skipped.items() if count}
