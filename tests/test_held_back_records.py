"""A record cut by a batch's end is read whole: its lines are held back and read again at the next batch's top.

A file read in order (a rotated ``kern.log.2.gz``, a kubelet log read in 32 MiB batches) is
cut wherever a batch fills, so an OOM-killer report could be cut from its ``invoked
oom-killer`` line: two events, the kill's facts apart from its head. rca._carry holds back
the record a batch ends in when its first line states its own time.
"""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import rca
from rca import _reader, sources
from rca._carry import MOST_HELD_LINES, Carry
from rca.ingest import IngestOptions, parse_rows
from rca.sources._base import LINES_SCHEMA, ParseContext
from tests.conftest import DATA

# Fixtures whose records are several lines each, every line stamped (journalctl -k, dmesg, klog).
RECORDS = ["kernel/journalctl_k_oom_memcg_invoked_01.log", "kernel/dmesg_oom_cgroup_01.log", "kubelet/kubelet_klog_eviction_01.log"]
PER_RUN = ("run_id", "parts")


def _read(root: Path, store: Path, batch_bytes: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rca.ingest(root, store, IngestOptions(batch_bytes=batch_bytes, year=2026), workers=1)
    opened = rca.open_store(store)
    return opened.events().sort("file", "line"), opened.manifest().drop(*PER_RUN).sort("path")


def test_records_cut_by_batches_read_as_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = tmp_path / "logs" / "gpu-node-1"
    host.mkdir(parents=True)
    for name in RECORDS:
        text = (DATA / name).read_text()
        (host / f"{Path(name).name}.1.gz").write_bytes(gzip.compress((text * (60_000 // len(text) + 1)).encode()))
    # a batch is at least one read (1 MiB): small reads make these files many batches, cut at arbitrary lines
    monkeypatch.setattr(_reader, "_READ_SIZE", 2048)
    whole, whole_manifest = _read(tmp_path / "logs", tmp_path / "whole", 1 << 30)
    batched, manifest = _read(tmp_path / "logs", tmp_path / "batched", 4096)
    assert_frame_equal(batched, whole)
    assert_frame_equal(manifest, whole_manifest)
    oom_heads = batched.filter(pl.col("kind") == "oom_invoked")
    assert oom_heads.height > 10
    assert (oom_heads["n_lines"] > 1).all()  # no report cut from its head


def _lines(texts: list[str], first: int = 1) -> pl.DataFrame:
    return pl.DataFrame({"line": range(first, first + len(texts)), "text": texts}, schema=LINES_SCHEMA)


def _in_batches(texts: list[str], cuts: list[int], source_name: str) -> tuple[pl.DataFrame, int]:
    """The rows of ``texts`` parsed in batches cut before the given line indexes, as ingest reads them, and the lines counted."""
    source, ctx = sources.get(source_name), ParseContext(file="kern.log", host="gpu-node-1", tz="UTC", year=2026)
    carry = Carry(source, lambda lines: parse_rows(lines, ctx, source)[:2])
    rows, counted = [], 0
    bounds = [0, *sorted(cuts), len(texts)]
    for start, end in itertools.pairwise(bounds):
        above = carry.above(_lines(texts[start:end], start + 1))
        batch_rows, skipped, _ = parse_rows(above, ctx, source)
        batch_rows, skipped = carry.without_carried(batch_rows, skipped)
        held = 0
        if end < len(texts):
            batch_rows, held = carry.hold_back(batch_rows, above)
            carry.take(above)
        rows.append(batch_rows)
        counted += carry.own_lines - held
    return pl.concat(rows), counted


@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=59), min_size=1, max_size=5, unique=True))
def test_any_cut_of_stamped_records_reads_as_the_whole(cuts: list[int]) -> None:
    texts = (DATA / RECORDS[0]).read_text().splitlines() * 3
    ctx = ParseContext(file="kern.log", host="gpu-node-1", tz="UTC", year=2026)
    whole, _, _ = parse_rows(_lines(texts), ctx, sources.get("kernel"))
    rows, counted = _in_batches(texts, cuts, "kernel")
    assert_frame_equal(rows.sort("line"), whole.sort("line"))
    assert counted == len(texts)  # a held line is counted once, in the batch that reads it


def test_an_undated_record_or_one_too_long_is_not_held_back() -> None:
    source, ctx = sources.get("pipeline"), ParseContext(file="train.log", tz="UTC", year=2026)
    carry = Carry(source, lambda lines: parse_rows(lines, ctx, source)[:2])
    stamped_then_traceback = _lines([
        "2026-03-02 14:00:00,123 INFO step 10", "Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
    ])
    rows, _, _ = parse_rows(carry.above(stamped_then_traceback), ctx, source)
    kept, held = carry.hold_back(rows, stamped_then_traceback)
    assert held == 0  # the traceback takes its time from the line above it
    assert_frame_equal(kept, rows)
    long_record = _lines(["2026-03-02 14:00:00,123 ERROR failed:", *(f"    detail {n}" for n in range(MOST_HELD_LINES + 1))])
    rows, _, _ = parse_rows(carry.above(long_record), ctx, source)
    assert rows.height == 1 and rows["n_lines"][0] == long_record.height
    assert carry.hold_back(rows, long_record)[1] == 0
