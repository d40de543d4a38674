"""Schema enforcement, the public API surface, and store versioning."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import rca
from rca import schema, sources
from rca.errors import SchemaError, StoreError, StoreVersionError
from rca.ingest import parse_lines
from rca.sources import lines_frame
from rca.sources._base import ParseContext


def test_public_api_matches_all() -> None:
    public = {name for name in dir(rca) if not name.startswith("_") and name not in {"annotations"}}
    modules = {name for name in public if type(getattr(rca, name)).__name__ == "module"}
    assert public - modules == set(rca.__all__) - {"__version__"}


def test_conform_fills_casts_and_orders() -> None:
    frame = pl.DataFrame({"kind": ["log"], "pid": ["12"], "line": [3]})
    conformed = schema.conform(frame, schema.EVENT_SCHEMA)
    assert list(conformed.schema.items()) == list(schema.EVENT_SCHEMA.items())
    assert conformed.row(0, named=True)["pid"] == 12 and conformed.row(0, named=True)["ts"] is None


def test_conform_of_a_frame_without_columns_has_no_rows() -> None:
    """A parser with nothing to say returns pl.DataFrame(); it must not become one event of nulls."""
    conformed = schema.conform(pl.DataFrame(), schema.EVENT_SCHEMA)
    assert conformed.height == 0 and list(conformed.schema.items()) == list(schema.EVENT_SCHEMA.items())


def test_a_journal_header_alone_is_skipped_and_makes_no_event() -> None:
    """Found by the kernel parser's splicing property test: the header was skipped and also made an empty event."""
    events, skipped = parse_lines(lines_frame("-- Logs begin at Mon 2024-09-02 08:00:11 UTC, end at Tue 2024-09-03 14:22:09 UTC. --"),
                                  ParseContext(file="t"), sources.get("kernel"))
    assert (events.height, skipped) == (0, {"header": 1})


def test_conform_rejects_unknown_columns() -> None:
    with pytest.raises(SchemaError, match="not in the schema: bogus"):
        schema.conform(pl.DataFrame({"bogus": [1]}), schema.EVENT_SCHEMA)


def test_validate_names_every_problem() -> None:
    frame = schema.empty(schema.EVENT_SCHEMA).drop("ts").with_columns(pl.col("pid").cast(pl.String))
    with pytest.raises(SchemaError, match=r"missing column 'ts'.*column 'pid' is String"):
        schema.validate(frame, schema.EVENT_SCHEMA, "events")


def test_open_store_on_a_plain_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not an rca store"):
        rca.open_store(tmp_path)


def test_store_from_another_schema_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("hello\n")
    rca.ingest(tmp_path / "a.log", tmp_path / "store", workers=1)
    meta_path = tmp_path / "store" / "store.json"
    meta = json.loads(meta_path.read_text())
    meta["schema_version"] = schema.SCHEMA_VERSION + 1
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(StoreVersionError, match="newer rca"):
        rca.open_store(tmp_path / "store")


def test_store_is_readable_by_any_parquet_reader(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("2026-12-01T10:00:00Z hello\n2026-12-02T10:00:00Z world\n")
    rca.ingest(tmp_path / "a.log", tmp_path / "store", workers=1)
    direct = pl.scan_parquet(tmp_path / "store" / "events", hive_partitioning=True).collect()
    assert direct.height == 2 and direct.schema == pl.Schema({**schema.EVENT_SCHEMA, "date": pl.Date()})
