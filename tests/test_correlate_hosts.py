"""Correlation host by host: the per-host stage gives what all hosts at once give, and runs in parallel."""

from __future__ import annotations

import importlib
import tempfile
import weakref
from concurrent.futures import ProcessPoolExecutor
from datetime import timedelta
from multiprocessing import get_context
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rca
from rca import align, datasets
from rca.correlate import DEFAULT_DEDUP, correlate, host_frames, host_stage, joined_stages, prepared


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    root = tmp_path_factory.mktemp("hosts")
    datasets.generate(root / "corpus", seed=2, days=2, hosts=4, incidents_per_mode=1, size="1MB")
    rca.ingest(root / "corpus" / "logs", root / "store", workers=1)
    return rca.open_store(root / "store").events()


def _staged(ready: pl.DataFrame, parts: list[pl.DataFrame]) -> tuple[align.Alignment, pl.DataFrame]:
    reference = align.exact_reference(ready)
    return joined_stages([host_stage(part, dedup=DEFAULT_DEDUP, reference=reference) for part in parts])


def test_hosts_staged_apart_give_what_all_hosts_staged_together_give(events: pl.DataFrame) -> None:
    ready = prepared(events.lazy()).collect()
    hosts = ready.partition_by("host", maintain_order=True)
    assert len(hosts) == 4
    together, together_anchors = _staged(ready, [ready])
    apart, apart_anchors = _staged(ready, hosts)
    assert_frame_equal(apart.events.sort("event_id"), together.events.sort("event_id"))
    for table in ("report", "year_shifts", "inherited"):
        assert_frame_equal(getattr(apart, table), getattr(together, table))
    assert apart_anchors.height > 10
    # Rows index the joined events: compare the anchors by what they point at, not where.
    apart_rows = apart_anchors.with_columns(apart.events["event_id"].gather(apart_anchors["row"]).alias("row_event")).drop("row")
    together_rows = together_anchors.with_columns(together.events["event_id"].gather(together_anchors["row"]).alias("row_event")).drop("row")
    assert (apart_rows["row_event"] == apart_rows["event_id"]).all()
    assert_frame_equal(apart_rows, together_rows)


def test_host_frames_are_the_hosts_partitions_in_order_of_first_appearance(events: pl.DataFrame) -> None:
    hostless = events.head(3).with_columns(host=pl.lit(None, pl.String))
    mixed = pl.concat([events.slice(3), hostless])  # the hostless rows come last, as their own host
    expected = prepared(mixed.lazy()).collect().partition_by("host", maintain_order=True)
    got = list(host_frames(mixed.lazy()))
    assert [f["host"][0] for f in got] == [f["host"][0] for f in expected] and len(got) == 5
    for frame, want in zip(got, expected, strict=True):
        assert_frame_equal(frame, want)
    assert_frame_equal(next(host_frames(events.clear().lazy())), prepared(events.clear().lazy()).collect())


def test_host_frames_hold_no_host_while_reading_the_next(events: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    # A stage that spills its host lets the frame go: were the generator to hold it while it reads the next host,
    # two hosts would be in memory at once (the 1 GB corpus: 1.4 → 1.9 GB peak).
    held_while_reading: list[bool] = []
    first: list[weakref.ref] = []

    def reading(frame: pl.LazyFrame) -> pl.LazyFrame:
        held_while_reading.append(bool(first) and first[0]() is not None)
        return prepared(frame)

    monkeypatch.setattr(importlib.import_module("rca.correlate"), "prepared", reading)
    frames = host_frames(events.lazy())
    first.append(weakref.ref(next(frames)))
    next(frames)
    assert held_while_reading == [False, False]


def test_a_process_pool_runs_the_host_stages_with_the_same_result(events: pl.DataFrame) -> None:
    serial = correlate(events, window=timedelta(minutes=15))
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool:
        parallel = correlate(events, window=timedelta(minutes=15), map_hosts=pool.map)
    assert serial.report["multi_host_incidents"] > 0  # the cross-host NCCL rule had work to do
    assert_frame_equal(parallel.incidents, serial.incidents)
    assert_frame_equal(parallel.links, serial.links)
    assert {k: v for k, v in parallel.report.items() if k != "seconds"} == {k: v for k, v in serial.report.items() if k != "seconds"}


def test_hosts_spilled_to_parquet_give_what_hosts_kept_in_memory_give(events: pl.DataFrame, monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    kept = correlate(events, window=timedelta(minutes=15))
    correlate_module = importlib.import_module("rca.correlate")  # the package's rca.correlate is the function
    monkeypatch.setattr(correlate_module, "_SPILL_ABOVE_ROWS", 0)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    spilled = correlate(events, window=timedelta(minutes=15))
    assert kept.incidents.height > 10
    assert_frame_equal(spilled.incidents, kept.incidents)
    assert_frame_equal(spilled.links, kept.links)
    assert {k: v for k, v in spilled.report.items() if k != "seconds"} == {k: v for k, v in kept.report.items() if k != "seconds"}
    assert list(tmp_path.iterdir()) == []  # the spill is gone once correlation is done


def test_a_spilled_host_stage_reads_its_events_back_lazily(events: pl.DataFrame, tmp_path: Path) -> None:
    ready = prepared(events.lazy()).collect()
    host = next(host_frames(events.lazy()))
    in_memory = host_stage(host, dedup=DEFAULT_DEDUP, reference=align.exact_reference(ready))
    spilled = host_stage(host, dedup=DEFAULT_DEDUP, reference=align.exact_reference(ready), spill=tmp_path)
    assert isinstance(spilled.alignment.events, pl.LazyFrame) and len(list(tmp_path.glob("*.parquet"))) == 1
    assert spilled.rows == in_memory.rows == in_memory.alignment.events.height
    assert_frame_equal(spilled.alignment.events.collect(), in_memory.alignment.events)
    assert_frame_equal(spilled.anchors, in_memory.anchors)
