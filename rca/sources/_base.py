"""What a source module declares, what it is given, and what it returns.

A source turns a batch of raw lines into rows of the event schema. It never touches the
disk and never reads the clock: the file name, host, zone, year hint and boot time come in
the :class:`ParseContext` the driver builds (and records in the manifest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

LINES_SCHEMA = {"line": pl.Int64(), "text": pl.String()}


@dataclass(frozen=True)
class ParseContext:
    """Everything a parser may know about the file besides its lines.

    ``year`` is the year for lines that carry none, with ``year_quality`` saying where it
    came from ("year_inferred" from --year or the file's own dated lines,
    "year_from_mtime" from the file's modification time). ``reference_time`` is the
    latest moment the file can describe (its mtime): a yearless line that would land
    after it belongs to the previous year.
    """

    file: str
    host: str | None = None
    tz: str = "UTC"
    year: int | None = None
    year_quality: str = "year_inferred"
    reference_time: datetime | None = None
    boot_time: datetime | None = None


@dataclass
class Parsed:
    """A parser's answer: event rows (any subset of the event columns) and skipped lines.

    Every input line is either counted by exactly one event's ``n_lines`` or counted in
    ``skipped`` under a reason ("blank", "header", "table border", ...), so the manifest's
    totals reconcile.
    """

    events: pl.DataFrame
    skipped: dict[str, int] = field(default_factory=dict)


SniffFn = Callable[[Sequence[str]], float]
ParseFn = Callable[[pl.DataFrame, ParseContext], Parsed]


@dataclass(frozen=True)
class Source:
    """A registered source format family.

    ``sniff`` gets the first non-blank lines of a file and returns a confidence in
    [0, 1]: 0 means "not mine". The driver picks the highest score; a file nobody claims
    goes to the generic fallback. ``sniff_literals`` are cheap substrings, one of which
    must occur in the head before ``sniff`` is even called.
    """

    name: str
    sniff: SniffFn
    parse: ParseFn
    sniff_literals: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()


def lines_frame(text: str, first_line: int = 1) -> pl.DataFrame:
    """Split ``text`` into the frame a parser receives (used by tests and the driver)."""
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    return pl.DataFrame(
        {"line": pl.int_range(first_line, first_line + len(rows), eager=True), "text": rows},
        schema=LINES_SCHEMA,
    ).with_columns(pl.col("text").str.strip_suffix("\r"))
