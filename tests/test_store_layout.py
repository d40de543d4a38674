"""The partitioned event store: hive folders by day and host, direct readers, incremental runs, migration."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow.dataset as ds
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

import rca
from rca import schema
from rca.cli import app
from rca.errors import StoreVersionError
from rca.ingest import IngestOptions
from rca.store import LEGACY_EVENTS_DIR, Store, arrow_partitioning

KLOG_DAY_1 = 'I1201 03:17:05.123456    2345 kubelet.go:2404] "SyncLoop (probe)" pod="ml/trainer-0"\n'
KLOG_DAY_2 = 'I1202 09:00:00.000001    2345 kubelet.go:2404] "SyncLoop (probe)" pod="ml/trainer-0"\n'
UNTIMED = "[    5.000000] Linux version 6.5.0\n"


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    (root / "gpu-node-1").mkdir(parents=True)
    (root / "gpu-node-2").mkdir()
    (root / "gpu-node-1" / "kubelet.log").write_text(KLOG_DAY_1 * 2 + KLOG_DAY_2)
    (root / "gpu-node-2" / "kubelet.log").write_text(KLOG_DAY_2)
    (root / "gpu-node-2" / "dmesg.log").write_text(UNTIMED)
    for path in root.rglob("*.log"):
        os.utime(path, (1_796_000_000, 1_796_000_000))  # 2026-11-30: the klog lines are of December 2025
    return root


def _partitions(store: Path) -> set[str]:
    return {str(part.parent.relative_to(store / "events")) for part in (store / "events").glob("*/*/*.parquet")}


def _by_id(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(schema.EVENT_SCHEMA.keys()).sort("event_id")


def test_events_are_partitioned_by_utc_day_and_host(logs: Path, tmp_path: Path) -> None:
    rca.ingest(logs, tmp_path / "store", workers=1)
    assert _partitions(tmp_path / "store") == {
        "date=2025-12-01/host=gpu-node-1",
        "date=2025-12-02/host=gpu-node-1",
        "date=2025-12-02/host=gpu-node-2",
        "date=__HIVE_DEFAULT_PARTITION__/host=gpu-node-2",
    }
    manifest = rca.open_store(tmp_path / "store").manifest()
    parts = dict(manifest.select("path", "parts").iter_rows())
    assert [name.rsplit("/", 1)[0] for name in parts["gpu-node-1/kubelet.log"]] == ["date=2025-12-01/host=gpu-node-1", "date=2025-12-02/host=gpu-node-1"]


def test_a_missing_host_goes_to_the_null_partition_and_odd_hosts_are_encoded(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(KLOG_DAY_1)
    rca.ingest(tmp_path / "a.log", tmp_path / "bare", IngestOptions(year=2026), workers=1)
    rca.ingest(tmp_path / "a.log", tmp_path / "odd", IngestOptions(year=2026, host="rack 3/gpu=1"), workers=1)
    assert _partitions(tmp_path / "bare") == {"date=2026-12-01/host=__HIVE_DEFAULT_PARTITION__"}
    assert _partitions(tmp_path / "odd") == {"date=2026-12-01/host=rack%203%2Fgpu%3D1"}
    direct = pl.scan_parquet(tmp_path / "odd" / "events", hive_partitioning=True).collect()
    assert direct["host"].to_list() == ["rack 3/gpu=1"]


def test_polars_pyarrow_pandas_read_the_partitions_directly(logs: Path, tmp_path: Path) -> None:
    rca.ingest(logs, tmp_path / "store", workers=1)
    events = _by_id(rca.open_store(tmp_path / "store").events())
    folder = tmp_path / "store" / "events"

    with_polars = pl.scan_parquet(folder, hive_partitioning=True).collect()
    assert with_polars.schema == pl.Schema({**schema.EVENT_SCHEMA, "date": pl.Date()})
    assert_frame_equal(_by_id(with_polars), events)
    assert with_polars.filter(pl.col("date").is_null())["kind"].to_list() == ["log"]

    with_arrow = pl.from_arrow(ds.dataset(folder, partitioning=arrow_partitioning()).to_table())
    assert_frame_equal(_by_id(with_arrow), events)
    assert with_arrow.schema["date"] == pl.Date()

    with_pandas = pd.read_parquet(folder, partitioning=arrow_partitioning())
    assert sorted(with_pandas["event_id"]) == events["event_id"].to_list()
    assert with_pandas["host"].dropna().map(type).eq(str).all()

    pruned = pl.scan_parquet(folder, hive_partitioning=True).filter(pl.col("host") == "gpu-node-2", pl.col("date").is_not_null()).collect()
    assert pruned["file"].to_list() == ["gpu-node-2/kubelet.log"]


def test_incremental_runs_add_parts_and_replace_only_a_changed_file(logs: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    rca.ingest(logs, store, workers=1)

    def stamps() -> dict[str, tuple[int, int]]:
        return {str(p.relative_to(store / "events")): (p.stat().st_ino, p.stat().st_mtime_ns) for p in (store / "events").glob("*/*/*.parquet")}

    before = stamps()
    parts = dict(rca.open_store(store).manifest().select("path", "parts").iter_rows())
    (logs / "gpu-node-3").mkdir()
    (logs / "gpu-node-3" / "kubelet.log").write_text(KLOG_DAY_1)
    (logs / "gpu-node-2" / "dmesg.log").write_text("[    6.000000] Linux version 6.6.0\n")
    rca.ingest(logs, store, workers=1)

    after = stamps()
    untouched = [name for path, names in parts.items() if path != "gpu-node-2/dmesg.log" for name in names]
    assert {name: after[name] for name in untouched} == {name: before[name] for name in untouched}
    assert not set(parts["gpu-node-2/dmesg.log"]) & set(after)
    new_parts = dict(rca.open_store(store).manifest().select("path", "parts").iter_rows())
    assert set(after) == set(untouched) | set(new_parts["gpu-node-2/dmesg.log"]) | set(new_parts["gpu-node-3/kubelet.log"])
    assert rca.open_store(store).events().filter(pl.col("file") == "gpu-node-2/dmesg.log")["message"].to_list() == ["Linux version 6.6.0"]


def test_removing_a_files_last_part_removes_its_empty_partition(logs: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    rca.ingest(logs, store, workers=1)
    (logs / "gpu-node-2" / "dmesg.log").write_text("")
    rca.ingest(logs, store, workers=1)
    assert not (store / "events" / "date=__HIVE_DEFAULT_PARTITION__").exists()


def _schema_1_store(path: Path, events: pl.DataFrame) -> None:
    """A store as rca wrote it with schema 1: every part flat under events.parquet/."""
    (path / LEGACY_EVENTS_DIR).mkdir(parents=True)
    events.write_parquet(path / LEGACY_EVENTS_DIR / "0123456789ab-run1-00000.parquet")
    row = {name: None for name in schema.MANIFEST_SCHEMA}
    row.update(path="gpu-node-1/kubelet.log", file_key="0123456789ab", status="ok", run_id="run1", parts=["0123456789ab-run1-00000.parquet"])
    for count in ("bytes", "lines", "events", "derived_events", "merged_lines", "skipped_lines", "unparsed_lines", "decode_errors", "truncated_lines"):
        row[count] = 0
    row.update(lines=events.height, events=events.height)
    pl.DataFrame([row], schema=schema.MANIFEST_SCHEMA).write_parquet(path / "files.parquet")
    (path / "store.json").write_text(json.dumps({"schema_version": 1, "created": "2026-11-30T00:00:00+00:00", "runs": []}))


def test_a_schema_1_store_is_refused_with_the_way_out_and_migrates_in_place(tmp_path: Path) -> None:
    events = rca.parse_text(KLOG_DAY_1 + KLOG_DAY_2, file="gpu-node-1/kubelet.log", host="gpu-node-1", year=2026)
    store = tmp_path / "store"
    _schema_1_store(store, events)
    with pytest.raises(StoreVersionError, match=f"rca migrate --store {store}"):
        rca.open_store(store).events()

    result = CliRunner().invoke(app, ["migrate", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "converted from store schema 1" in " ".join(result.output.split())
    assert json.loads((store / "store.json").read_text())["schema_version"] == schema.SCHEMA_VERSION
    assert not (store / LEGACY_EVENTS_DIR).exists()
    assert _partitions(store) == {"date=2026-12-01/host=gpu-node-1", "date=2026-12-02/host=gpu-node-1"}
    assert_frame_equal(_by_id(rca.open_store(store).events()), _by_id(events))
    assert Store(store).migrate() is None
