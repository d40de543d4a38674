"""Hostile inputs for the parsers, and the checks every parse result must pass.

The strategies build documents out of real lines (every fixture under ``tests/data`` and
the public samples in ``/work/shared/real_logs``), cut, spliced, re-encoded and salted with
extreme numbers, so the parsers meet what a damaged or odd log really looks like rather
than only uniform noise.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from rca import schema

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]}
settings.register_profile("reliability", max_examples=15, **_COMMON)
settings.register_profile("thorough", max_examples=150, **_COMMON)
PROFILE = settings.get_profile(os.environ.get("RCA_HYPOTHESIS_PROFILE", "reliability"))
"""Settings of every property test here; ``RCA_HYPOTHESIS_PROFILE=thorough`` runs ten times the examples."""

TESTS = Path(__file__).resolve().parents[1]
SHARED_REAL_LOGS = Path("/work/shared/real_logs")


def _fixture_files() -> list[Path]:
    """Every text fixture (binary ones, such as pickled snapshots, hold NUL bytes and are left out)."""
    roots = [TESTS / "data", SHARED_REAL_LOGS]
    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*")) if p.is_file() and p.name != "expected.jsonl"]
    return [p for p in files if b"\x00" not in p.read_bytes()[:8192]]


def _lines(files: list[Path]) -> list[str]:
    seen: dict[str, None] = {}
    for path in files:
        for line in path.read_bytes().decode("utf-8", errors="replace").splitlines():
            if line.strip():
                seen.setdefault(line, None)
    return list(seen)


REAL_LINES: list[str] = _lines(_fixture_files())

# Numbers a parser converts: pids, byte counts, percentages, Xid codes, boot seconds, exit codes.
EXTREME_NUMBERS = [
    "0", "-1", "-0", "00000000000000000001", str(2**31), str(2**31 - 1), str(2**32), str(2**63 - 1), str(2**63), str(2**64),
    str(-(2**63)), "9" * 40, "1e308", "1e309", "-1e309", "NaN", "nan", "inf", "-inf", "Infinity", "0x7fffffffffffffff",
    "1.7976931348623157e308", "4.9e-324", "99999999999999999999.5", "1_000", "١٢٣", "٣",
]
_NUMBER = re.compile(r"\d+(?:\.\d+)?")

WHITESPACE = ["", " ", "\t", "   \t ", "\r", "\u00a0", "\u2028", "\u3000", "\f", "\v", "\u200b"]


@st.composite
def salted_line(draw: st.DrawFn) -> str:
    """A real line with some of its numbers replaced by extreme ones."""
    line = draw(st.sampled_from(REAL_LINES))
    numbers = list(_NUMBER.finditer(line))
    if not numbers:
        return line
    picks = draw(st.sets(st.integers(0, len(numbers) - 1), min_size=1, max_size=min(4, len(numbers))))
    out, last = [], 0
    for index, match in enumerate(numbers):
        if index in picks:
            out += [line[last : match.start()], draw(st.sampled_from(EXTREME_NUMBERS))]
            last = match.end()
    return "".join(out) + line[last:]


@st.composite
def cut_or_spliced_line(draw: st.DrawFn) -> str:
    """A real line cut short, or the head of one glued to the tail of another."""
    first = draw(st.sampled_from(REAL_LINES))
    cut = draw(st.integers(0, len(first)))
    if draw(st.booleans()):
        return first[:cut]
    second = draw(st.sampled_from(REAL_LINES))
    return first[:cut] + second[draw(st.integers(0, len(second))) :]


TEXT_LINE = st.one_of(
    st.sampled_from(REAL_LINES),
    salted_line(),
    cut_or_spliced_line(),
    st.sampled_from(WHITESPACE),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=120),
)
"""One line of text, never holding a newline (a line break would make it two lines)."""


@st.composite
def encoded_line(draw: st.DrawFn) -> bytes:
    """A line as bytes: UTF-8, latin-1, a UTF-16 fragment, or invalid UTF-8 spliced in."""
    text = draw(TEXT_LINE)
    how = draw(st.sampled_from(["utf-8", "latin-1", "utf-16", "invalid", "raw"]))
    if how == "utf-8":
        return text.encode("utf-8")
    if how == "latin-1":
        return text.encode("latin-1", errors="replace")
    if how == "utf-16":
        return text.encode("utf-16-le")[: draw(st.integers(0, 2 * len(text) + 2))].replace(b"\n", b"").replace(b"\x00", b" ")
    if how == "invalid":
        raw = text.encode("utf-8")
        at = draw(st.integers(0, len(raw)))
        junk = draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80\x80", b"\xc0\xaf"]))
        return raw[:at] + junk + raw[at:]
    return draw(st.binary(max_size=80)).replace(b"\n", b"").replace(b"\x00", b"")


DOCUMENT_TEXT = st.lists(TEXT_LINE, min_size=0, max_size=30).map("\n".join)
"""A document of hostile lines as text."""


@st.composite
def document_bytes(draw: st.DrawFn) -> bytes:
    """A document of hostile lines as bytes, in any mix of encodings and line endings."""
    lines = draw(st.lists(encoded_line(), min_size=0, max_size=30))
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    body = ending.join(lines)
    return body + (ending if draw(st.booleans()) else b"")


RANDOM_BYTES = st.binary(max_size=2000).map(lambda raw: raw.replace(b"\x00", b""))
"""Uniform random bytes without NUL (a NUL makes a file binary, which the reader refuses by design)."""


# --- checks --------------------------------------------------------------------------------------


def accounting(lines: int, events: pl.DataFrame, skipped: dict[str, int]) -> dict[str, int]:
    """The manifest's line accounting for one parse, as the driver computes it."""
    covering = events.filter(pl.col("n_lines") > 0)
    return {
        "lines": lines,
        "events": events.height,
        "derived_events": events.height - covering.height,
        "merged_lines": int(covering["n_lines"].sum() or 0) - covering.height,
        "skipped_lines": sum(skipped.values()),
    }


def reconciles(row: dict) -> bool:
    """``lines == events - derived_events + merged_lines + skipped_lines`` (rca.schema.MANIFEST_SCHEMA)."""
    return row["lines"] == row["events"] - row["derived_events"] + row["merged_lines"] + row["skipped_lines"]


def event_problems(events: pl.DataFrame, total_lines: int) -> list[str]:
    """Every way ``events`` breaks the event schema's contract; empty when they are valid."""
    schema.validate(events, schema.EVENT_SCHEMA, "events")
    problems = []
    domains = {"kind": schema.KINDS, "severity": schema.SEVERITIES, "ts_quality": schema.TS_QUALITIES, "source": schema.SOURCES}
    for column, allowed in domains.items():
        bad = set(events[column].drop_nulls().unique()) - set(allowed)
        if bad:
            problems.append(f"{column} outside its vocabulary: {sorted(bad)}")
    for column in ("kind", "source", "format", "ts_quality", "event_id", "file", "line", "n_lines", "template_id"):
        if events[column].null_count():
            problems.append(f"{column} is null in {events[column].null_count()} events")
    if events.height:
        if events["event_id"].n_unique() != events.height:
            problems.append("event ids repeat")
        if events["line"].min() < 1 or events["line"].max() > total_lines:
            problems.append(f"line outside 1..{total_lines}: {events['line'].min()}..{events['line'].max()}")
        if events["n_lines"].min() < 0:
            problems.append("negative n_lines")
        if events.filter(pl.col("ts").is_null() & ~pl.col("ts_quality").is_in(["boot_relative", "missing"])).height:
            problems.append("an event without a time claims a resolved time quality")
        problems += _number_problems(events)
        problems += _attrs_problems(events["attrs"])
    return problems


def _number_problems(events: pl.DataFrame) -> list[str]:
    problems = []
    for column in ("boot_seconds", "gpu_util_pct"):
        values = [v for v in events[column].drop_nulls().to_list() if not math.isfinite(v)]
        if values:
            problems.append(f"{column} not finite: {values[:3]}")
    for column in ("mem_used_bytes", "mem_total_bytes", "mem_requested_bytes", "rss_bytes"):
        if (events[column].drop_nulls() < 0).any():
            problems.append(f"{column} negative")
    return problems


def _attrs_problems(attrs: pl.Series) -> list[str]:
    for text in attrs.drop_nulls().unique().to_list():
        try:
            value = json.loads(text)
        except ValueError:
            return [f"attrs is not JSON: {text[:80]!r}"]
        if not isinstance(value, dict):
            return [f"attrs is not a JSON object: {text[:80]!r}"]
    return []
