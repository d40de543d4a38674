"""What the fuzz targets share: turning fuzzer bytes into the reader's lines, and the checks on a parse.

The checks are those of the property tests (``tests/reliability/hostile_inputs.py``), so a
fuzzer finding and a failing property test mean the same thing.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reliability"))

with atheris.instrument_imports(include=["rca"]):
    from rca import _reader, sources
    from rca.ingest import HEAD_LINES, MAX_LINE_CHARS, parse_lines
    from rca.sources import ParseContext

from hostile_inputs import accounting, event_problems, reconciles

MTIME = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CONTEXTS = [
    ParseContext(file="n1/fuzz.log"),
    ParseContext(file="n1/fuzz.log", host="n1", year=2024, boot_time=datetime(2024, 1, 1, tzinfo=UTC), reference_time=MTIME),
    ParseContext(file="n1/fuzz.log", tz="Asia/Kolkata", year=2026, year_quality="year_from_mtime", reference_time=MTIME),
]


def split(data: bytes) -> tuple[ParseContext, bytes]:
    """A parse context chosen by the input's first byte, and the rest of the input as the file's content."""
    provider = atheris.FuzzedDataProvider(data)
    ctx = CONTEXTS[provider.ConsumeIntInRange(0, len(CONTEXTS) - 1)]
    return ctx, provider.ConsumeBytes(provider.remaining_bytes())


def read_lines(content: bytes):  # -> polars.DataFrame in rca.sources._base.LINES_SCHEMA
    """The lines the reader would hand the parser for a file holding ``content`` (one batch)."""
    return _reader._decode(content, _reader.ReadState(), 1, MAX_LINE_CHARS).lines


def head(lines) -> list[str]:
    """The sniffer's input: the first non-blank lines, as the driver picks them."""
    return [text for text in lines["text"].head(HEAD_LINES * 4).to_list() if text.strip()][:HEAD_LINES]


def check_parse(source_name: str, data: bytes) -> None:
    """Parse fuzzer bytes with one source; raise on an escaped exception, a broken line count or a bad event."""
    ctx, content = split(data)
    if b"\x00" in content[:8192]:
        return  # the reader refuses files with NUL bytes before any parser sees them
    lines = read_lines(content)
    events, skipped = parse_lines(lines, ctx, sources.get(source_name))
    counts = accounting(lines.height, events, skipped)
    if not reconciles(counts):
        raise AssertionError(f"{source_name}: lines not accounted for: {counts}")
    problems = event_problems(events, lines.height)
    if problems:
        raise AssertionError(f"{source_name}: {problems}")


def main(test_one_input) -> None:
    """Run ``test_one_input`` under libFuzzer with this process's command-line flags."""
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
