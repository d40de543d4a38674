"""Shared fixtures: where test data lives and how to find a fixture file by name."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import settings

import rca
from rca import _reader, schema, sources
from rca._carry import Carry
from rca.ingest import IngestOptions, parse_rows
from rca.sources._base import LINES_SCHEMA, ParseContext, Source

DATA = Path(__file__).parent / "data"

# No test asserts a time: Hypothesis' per-example deadline would fail a parse that a busy machine (or its first call's
# regex compiles) slowed down. A parse costs 50-100 ms however few its lines, so a property test without its own count
# draws 30 examples in `make test` (Hypothesis' default, 100, made a few dozen such tests a sixth of the suite);
# HYPOTHESIS_PROFILE=thorough draws 300 for a longer search.
settings.register_profile("rca", deadline=None, max_examples=30)
settings.register_profile("thorough", deadline=None, max_examples=300)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rca"))

# The CLI's output width must not depend on who runs the tests: pytest-xdist's workers inherit COLUMNS=80.
os.environ.pop("COLUMNS", None)

# Copied logs get a fixed mtime so year inference in tests never depends on the checkout date.
FIXED_MTIME = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


# The moment hand-made events in tests are placed around.
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    """``seconds`` after (or before, when negative) :data:`T0`."""
    return T0 + timedelta(seconds=seconds)


def event_frame(*rows: dict) -> pl.DataFrame:
    """Events in the event schema from dicts that need little more than kind, source and ts.

    Host, file, line, event id, time quality, message and n_lines get plausible defaults;
    an ``attrs`` dict is written as the JSON string the schema stores.
    """
    filled = []
    for number, row in enumerate(rows, 1):
        row = dict(row)
        row.setdefault("host", "node-a")
        row.setdefault("file", f"{row['host']}/{row.get('source', 'pipeline')}.log")
        row.setdefault("line", number)
        row.setdefault("event_id", f"{row['file']}:{row['line']}:0")
        row.setdefault("ts_quality", "exact" if row.get("ts") else "boot_relative")
        row.setdefault("message", row.get("kind", "log"))
        row.setdefault("n_lines", 1)
        if isinstance(row.get("attrs"), dict):
            row["attrs"] = json.dumps(row["attrs"])
        filled.append(row)
    return schema.conform(pl.DataFrame(filled, infer_schema_length=None), schema.EVENT_SCHEMA)


def attrs_of(events: pl.DataFrame) -> list[dict]:
    """Each event's ``attrs`` as a dict (``{}`` where it is null)."""
    return [json.loads(a) if a else {} for a in events["attrs"].to_list()]


def of_kind(events: pl.DataFrame, kind: str) -> pl.DataFrame:
    return events.filter(pl.col("kind") == kind)


def head_lines(path: Path) -> list[str]:
    """The first 60 non-blank lines of ``path``: what the sniffers are shown."""
    return [line for line in path.read_bytes().decode("utf-8", errors="replace").splitlines() if line.strip()][:60]


@functools.cache
def _fixtures_sniffed() -> dict[Path, tuple[Source | None, float]]:
    paths = sorted(p for p in DATA.glob("*/*") if p.is_file())
    return dict(zip(paths, sources.sniff_many([head_lines(p) for p in paths]), strict=True))


def sniffed(path: Path) -> tuple[Source | None, float]:
    """``sources.sniff`` of a fixture's head. Every fixture's head is sniffed in one ``sniff_many``, once per test
    process: a sniff costs ~30 ms a head alone, ~1.3 ms among hundreds, and thousands of tests ask (that heads sniffed
    together score as each alone is tests/test_ingest.py's to check)."""
    found = _fixtures_sniffed().get(path)
    return found if found is not None else sources.sniff(head_lines(path))


def parse_log(text: str) -> pl.DataFrame:
    """``text`` parsed as a copied log whose mtime is :data:`FIXED_MTIME`."""
    return rca.parse_text(text, file="x.log", reference_time=FIXED_MTIME)


def parse_fixture(name: str) -> pl.DataFrame:
    """The fixture file ``name`` parsed as :func:`parse_log` does (its bytes decoded with replacement characters)."""
    return parse_log(fixture_path(name).read_bytes().decode("utf-8", errors="replace"))


def event_on_line(events: pl.DataFrame, line: int) -> dict:
    """The first event of ``events`` on line ``line``."""
    return events.filter(pl.col("line") == line).row(0, named=True)


def numbered_lines(texts: list[str], first: int = 1) -> pl.DataFrame:
    """The frame of lines a parser receives, numbered from ``first``."""
    return pl.DataFrame({"line": range(first, first + len(texts)), "text": texts}, schema=LINES_SCHEMA)


def parse_in_batches(texts: list[str], cuts: list[int], source: Source, ctx: ParseContext) -> tuple[pl.DataFrame, dict[str, int]]:
    """The lines parsed as the driver reads a large file: a batch between cuts, carried lines above each, records held back."""
    carry = Carry(source, lambda lines: parse_rows(lines, ctx, source)[:2])
    rows, skipped = [], {}
    bounds = [0, *sorted(cuts), len(texts)]
    for start, end in itertools.pairwise(bounds):
        above = carry.above(numbered_lines(texts[start:end], start + 1))
        batch_rows, batch_skipped, _ = parse_rows(above, ctx, source)
        batch_rows, batch_skipped = carry.without_carried(batch_rows, batch_skipped)
        if end < len(texts):
            batch_rows, _ = carry.hold_back(batch_rows, above)
            carry.take(above)
        rows.append(batch_rows)
        skipped = {reason: skipped.get(reason, 0) + batch_skipped.get(reason, 0) for reason in {*skipped, *batch_skipped}}
    return pl.concat(rows).sort("line"), skipped


@pytest.fixture
def small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads of 2 KiB: a batch is at least one read of the file (1 MiB), so files of tens of KiB become many batches."""
    monkeypatch.setattr(_reader, "_READ_SIZE", 2048)


def ingested(root: Path, store: Path, options: IngestOptions) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``root`` ingested by one worker: the events by file and line, the manifest by path less what differs per run."""
    rca.ingest(root, store, options, workers=1)
    opened = rca.open_store(store)
    return opened.events().sort("file", "line"), opened.manifest().drop("run_id", "parts").sort("path")


def fixture_path(name: str) -> Path:
    """The fixture file called ``name`` anywhere under tests/data (each real sample lives in its source's folder)."""
    matches = sorted(p for p in DATA.rglob(name) if p.is_file())
    if not matches:
        raise FileNotFoundError(f"no fixture named {name} under {DATA}")
    return matches[0]


@pytest.fixture
def data_dir() -> Path:
    return DATA


def fail_parsing_on(monkeypatch: pytest.MonkeyPatch, source: str, marker: str, error: Exception) -> None:
    """Make the registered source ``source`` raise ``error`` on any batch of lines holding ``marker``."""
    real = sources.get(source)

    def parse(lines: pl.DataFrame, ctx: sources.ParseContext) -> sources.Parsed:
        if lines["text"].str.contains(marker, literal=True).any():
            raise error
        return real.parse(lines, ctx)

    monkeypatch.setitem(sources._REGISTRY, source, dataclasses.replace(real, parse=parse))
