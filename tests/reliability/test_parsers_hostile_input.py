"""Every registered source survives hostile input: no exception escapes, every line is accounted for,
every event keeps the event schema's contract.

Three ways in, as the driver uses them: :func:`rca.ingest.parse_lines` on a lines frame,
:func:`rca.parse_text` with the format sniffed, and :func:`rca.ingest.parse_file` on bytes
written to a file (the reader's decoding, batching and manifest row included).
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hostile_inputs import (
    DOCUMENT_TEXT,
    PROFILE,
    RANDOM_BYTES,
    REAL_LINES,
    WHITESPACE,
    accounting,
    document_bytes,
    event_problems,
    reconciles,
)
from hypothesis import given
from hypothesis import strategies as st

import rca
from rca import schema, sources
from rca.ingest import FileTask, IngestOptions, parse_file, parse_lines
from rca.sources import ParseContext, lines_frame

SOURCE_NAMES = [source.name for source in sources.all_sources()]
MTIME = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CONTEXTS = st.sampled_from([
    ParseContext(file="n1/hostile.log"),
    ParseContext(file="n1/hostile.log", host="n1", year=2024, boot_time=datetime(2024, 1, 1, tzinfo=UTC), reference_time=MTIME),
    ParseContext(file="n1/hostile.log", tz="Asia/Kolkata", year=2026, year_quality="year_from_mtime", reference_time=MTIME),
    ParseContext(file="n1/hostile.log", tz="America/St_Johns", year=1970),
])


def _check_lines(text: str, ctx: ParseContext, source_name: str) -> None:
    lines = lines_frame(text)
    events, skipped = parse_lines(lines, ctx, sources.get(source_name))
    assert event_problems(events, lines.height) == []
    counts = accounting(lines.height, events, skipped)
    assert reconciles(counts), counts


def _parse_file(raw: bytes, source_name: str | None, batch_bytes: int) -> tuple[dict, pl.DataFrame]:
    with tempfile.TemporaryDirectory() as folder:
        path, staging = Path(folder) / "hostile.log", Path(folder) / "staging"
        path.write_bytes(raw)
        staging.mkdir()
        options = IngestOptions(format=source_name, batch_bytes=batch_bytes, max_line_chars=512)
        result = parse_file(FileTask(str(path), "n1/hostile.log", "n1", str(staging), "run0", options))
        parts = [pl.read_parquet(staging / name) for name in result.new_parts]
        return result.manifest, pl.concat(parts) if parts else schema.empty(schema.EVENT_SCHEMA)


def _check_file(raw: bytes, source_name: str | None, batch_bytes: int) -> None:
    row, events = _parse_file(raw, source_name, batch_bytes)
    # A binary format's file too short to read (a journal's signature without its header) is an error its format names;
    # a parser that fails on what it was given is not.
    named_damage = row["status"] == "error" and not row["error"].startswith("the ")
    assert row["status"] in ("ok", "warning", "skipped") or named_damage, row
    assert reconciles(row), row
    assert row["events"] == events.height
    assert event_problems(events, row["lines"]) == []
    pl.DataFrame([row], schema=schema.MANIFEST_SCHEMA)  # the row fits the manifest's columns


BATCH_BYTES = st.sampled_from([64, 700, 32 * 1024 * 1024])


@pytest.mark.parametrize("source_name", SOURCE_NAMES)
@PROFILE
@given(text=DOCUMENT_TEXT, ctx=CONTEXTS)
def test_hostile_text_is_accounted_for(source_name: str, text: str, ctx: ParseContext) -> None:
    _check_lines(text, ctx, source_name)


HOSTILE_BYTES = st.one_of(document_bytes(), RANDOM_BYTES)


@pytest.mark.parametrize("source_name", [*SOURCE_NAMES, None], ids=[*SOURCE_NAMES, "sniffed"])
@PROFILE
@given(raw=HOSTILE_BYTES, batch_bytes=BATCH_BYTES)
def test_hostile_bytes_through_the_file_path(source_name: str | None, raw: bytes, batch_bytes: int) -> None:
    _check_file(raw, source_name, batch_bytes)


@PROFILE
@given(text=DOCUMENT_TEXT)
def test_parse_text_sniffs_and_parses_hostile_text(text: str) -> None:
    events = rca.parse_text(text, file="n1/hostile.log", reference_time=MTIME)
    assert event_problems(events, max(len(lines_frame(text)), 1)) == []


@pytest.mark.parametrize("source_name", SOURCE_NAMES)
@pytest.mark.parametrize("blank", ["", "\n\n\n", " \t \n\r\n   \n", "\u00a0\n\u3000\n"], ids=["empty", "newlines", "spaces", "unicode-spaces"])
def test_blank_documents_are_all_skipped_as_blank(source_name: str, blank: str) -> None:
    lines = lines_frame(blank)
    events, skipped = parse_lines(lines, ParseContext(file="blank.log"), sources.get(source_name))
    assert (events.height, skipped) == (0, {"blank": lines.height} if lines.height else {})


@pytest.mark.parametrize("source_name", SOURCE_NAMES)
def test_whitespace_only_lines_among_real_ones_are_skipped_not_parsed(source_name: str) -> None:
    real = REAL_LINES[:: max(len(REAL_LINES) // 40, 1)]
    text = "\n".join(line for pair in zip(real, WHITESPACE * len(real)) for line in pair)
    events, skipped = parse_lines(lines_frame(text), ParseContext(file="mixed.log"), sources.get(source_name))
    # A real line that holds nothing but its envelope (Ray's "(raylet) " prefix alone) is blank to its source too, and
    # whether it is may depend on the lines around it (a lone "129.5" is a BuildKit step's time where most lines wear
    # one): the real lines read without the whitespace are the measure, to which the whitespace adds its own lines only.
    enveloped_blank = parse_lines(lines_frame("\n".join(real)), ParseContext(file="real.log"), sources.get(source_name))[1].get("blank", 0)
    assert skipped.get("blank", 0) == sum(1 for space in (WHITESPACE * len(real))[: len(real)] if not space.strip()) + enveloped_blank
    assert event_problems(events, 2 * len(real)) == []
