"""``dcgmi dmon`` read in batches reads as it does whole: rows after a batch's cut keep their table's tags.

dcgmi prints the ``#Entity`` header and its ``ID`` line again every so many rows; a batch that starts inside a table
is read below the header (and units line) of the table the batch before ended in (``dcgm.carried_lines``), and
below each entity's last row when the table has ``XIDER``, so an Xid still seen is no new one.

``attrs.sample`` (a row's number for its entity, counted per parse) restarts at each batch: making it batch-independent
would take a count carried from batch to batch, which carried lines cannot hold. Batched and whole reads are compared
without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from rca import sources
from rca.ingest import IngestOptions, parse_rows
from rca.sources import dcgm
from rca.sources._base import ParseContext
from tests.conftest import DATA, ingested, numbered_lines, parse_in_batches

CTX = ParseContext(file="dmon.log", host="gpu-node-1", tz="UTC", year=2026)
USER_GUIDE = "dcgm_dmon_e_1001_1004_1005_userguide_01.txt"  # the command line, "# Entity" over "Id", 15 rows of GPU 0
MIG = "dcgm_dmon_e_1001_1004_gpu_i_entities_01.txt"  # "#Entity" over "ID", a row for each of 7 GPU instances
# the table of test_source_dcgm's dmon test: XIDER 79 on GPU 0's second and third rows, one Xid event; a row cut short
XIDER_TABLE = [
    "#Entity   GPUTL  FBUSD  FBFRE  XIDER  SMACT",
    "ID",
    "GPU 0     34     15640  33022  0      0.512",
    "GPU 1     0      0      48662  N/A    N/A",
    "GPU 0     35     15700  32962  79     0.500",
    "GPU-I 3   N/A    N/A    N/A    N/A    0.100",
    "GPU 0     36     15700  32962  79     0.490",
    "GPU 1     0",
]


def _loop(name: str, repeats: int) -> list[str]:
    """The fixture's table printed ``repeats`` times, its header again above each (as dcgmi does), its command line once."""
    lines = (DATA / "dcgm" / name).read_text().splitlines()
    command, table = (lines[:1], lines[1:]) if lines[0].strip().startswith("$") else ([], lines)
    return command + table * repeats


def _without_sample(rows: pl.DataFrame) -> pl.DataFrame:
    def dropped(attrs: str | None) -> str | None:
        kept = {key: value for key, value in json.loads(attrs).items() if key != "sample"} if attrs else None
        return json.dumps(kept, sort_keys=True) if kept else None

    return rows.with_columns(attrs=pl.Series([dropped(attrs) for attrs in rows["attrs"]], dtype=pl.String))


def _whole(texts: list[str]) -> tuple[pl.DataFrame, dict[str, int]]:
    rows, skipped, _ = parse_rows(numbered_lines(texts), CTX, sources.get("dcgm"))
    return rows.sort("line"), {reason: count for reason, count in skipped.items() if count}


def _assert_reads_as_whole(texts: list[str], cuts: list[int]) -> pl.DataFrame:
    rows, skipped = parse_in_batches(texts, cuts, sources.get("dcgm"), CTX)
    whole, whole_skipped = _whole(texts)
    assert_frame_equal(_without_sample(rows), _without_sample(whole), check_column_order=False)
    assert skipped == whole_skipped
    return rows


# (a cut above the first header, under the user guide's command line, is left out: a batch of lines above any dmon table
# is no dmon, and its lines are kept as the source's other lines, without the dmon format)
@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(min_value=2, max_value=59), min_size=1, max_size=4, unique=True), name=st.sampled_from([USER_GUIDE, MIG]))
def test_any_cut_of_a_dmon_loop_reads_as_the_whole(cuts: list[int], name: str) -> None:
    texts = _loop(name, 7)[:60]
    rows = _assert_reads_as_whole(texts, cuts)
    assert rows.filter(pl.col("kind") == "gpu_sample")["format"].eq("dmon").all()


def test_rows_after_the_cut_keep_their_tags_gpu_and_readings() -> None:
    texts = _loop(USER_GUIDE, 3)
    cut = 23  # the second table's header on line 19: its first three rows above the cut, the fourth (0.552) below
    rows = _assert_reads_as_whole(texts, [cut])
    samples = rows.filter(pl.col("kind") == "gpu_sample")
    assert samples.height == 45 and samples["gpu_index"].eq(0).all() and samples["severity"].eq("info").all()
    after = samples.filter(pl.col("line") == cut + 1).row(0, named=True)
    assert (after["format"], after["ts_quality"]) == ("dmon", "missing")
    # its sample number the batch's (the row above it held back and read again there): 18 read whole
    assert json.loads(after["attrs"]) == {"sample": 1, "GRACT": 0.552, "TENSO": 0.527, "DRAMA": 0.0}
    # besides the samples only the command line: the reprinted headers skipped
    assert rows.filter(pl.col("kind").ne_missing("gpu_sample"))["line"].to_list() == [1]


@pytest.mark.parametrize("cut", range(1, len(XIDER_TABLE)))
def test_an_xid_still_seen_after_the_cut_is_no_new_one(cut: int) -> None:
    rows = _assert_reads_as_whole(XIDER_TABLE, [cut])
    xid = rows.filter(pl.col("kind") == "xid")
    assert (xid["line"].to_list(), xid["xid"].to_list(), xid["gpu_index"].to_list()) == ([5], [79], [0])


def test_carried_lines_are_those_of_the_dmon_table_the_lines_end_in() -> None:
    def carried(texts: list[str]) -> list[str]:
        return dcgm.carried_lines(numbered_lines(texts))["text"].to_list()

    guide = _loop(USER_GUIDE, 2)
    assert carried(guide[:1]) == []  # the command line: no table yet
    assert carried(guide[:2]) == [guide[1]]  # the header alone (its "Id" line opens the next batch)
    assert carried(guide[:7]) == carried(guide[:22]) == guide[1:3]  # the reprinted header's, the same
    assert carried([*XIDER_TABLE[:5], ""]) == [*XIDER_TABLE[:2], XIDER_TABLE[3], XIDER_TABLE[4]]  # blank lines aside
    assert carried(XIDER_TABLE) == [*XIDER_TABLE[:2], XIDER_TABLE[3], XIDER_TABLE[5], XIDER_TABLE[6]]  # the cut row pairs with no tags
    error = (DATA / "dcgm" / "dcgm_dmon_e_1004_profiling_module_error_01.txt").read_text().splitlines()
    assert carried(error) == []  # dcgmi stopped: no table runs on
    scrape = (DATA / "dcgm" / "dcgm_exporter_scrape_h100_2gpu.txt").read_text().splitlines()
    assert carried(scrape) == []


@pytest.mark.usefixtures("small_reads")
def test_a_dmon_loop_ingested_in_batches_reads_as_whole(tmp_path: Path) -> None:
    host = tmp_path / "logs" / "gpu-node-1"
    host.mkdir(parents=True)
    (host / "dcgmi-dmon.log").write_text("\n".join(_loop(USER_GUIDE, 80)) + "\n")
    whole, whole_manifest = ingested(tmp_path / "logs", tmp_path / "whole", IngestOptions(batch_bytes=1 << 30, year=2026))
    batched, manifest = ingested(tmp_path / "logs", tmp_path / "batched", IngestOptions(batch_bytes=4096, year=2026))
    assert manifest["bytes"][0] > 8 * 4096
    assert_frame_equal(_without_sample(batched), _without_sample(whole))
    assert_frame_equal(manifest, whole_manifest)
    samples = batched.filter(pl.col("kind") == "gpu_sample")
    assert samples.height == 15 * 80 and samples["format"].eq("dmon").all() and samples["source"].eq("dcgm").all()
