"""Lines one batch of a large file needs from the batches before it: a table's header.

A file read in batches is parsed a batch at a time, and a CSV row or a sacct row means
nothing without its header, which only the first batch holds. A source that knows which of
its lines later lines need declares ``carried_lines``; the lines it names are set above the
next batch, numbered just before its first line (so the rows below them run on from them,
as in the file), and whatever the parser makes of them there is dropped: their events (the
batch that held them counted those) and their skipped lines (their parse alone tells how
many, once per distinct header).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from rca.sources._base import LINES_SCHEMA, Source

ParseLines = Callable[[pl.DataFrame], tuple[pl.DataFrame, dict[str, int]]]


class Carry:
    """The lines a source carries from one batch of a file to the next."""

    def __init__(self, source: Source, parse: ParseLines) -> None:
        """``parse`` is the source's parse of a frame of lines: its rows and skipped lines by reason."""
        self._source, self._parse = source, parse
        self._texts: list[str] = []
        self._read: pl.DataFrame | None = None  # the lines before the next batch, until it comes (most files are one batch)
        self._skipped_alone: dict[tuple[str, ...], dict[str, int]] = {}

    def above(self, batch: pl.DataFrame) -> pl.DataFrame:
        """``batch`` (``line``, ``text``) with the carried lines set just above its first line."""
        if self._read is not None:
            self._texts = self._source.carried_lines(self._read)["text"].to_list()
            self._read = None
        if not self._texts or batch.height == 0:
            return batch
        first = batch["line"][0]
        return pl.concat([_numbered_from(first - len(self._texts), self._texts), batch])

    def without_carried(
        self, rows: pl.DataFrame, skipped: dict[str, int], first_line: int
    ) -> tuple[pl.DataFrame, dict[str, int]]:
        """The rows and skipped lines of a parse of :meth:`above`'s lines, less what the carried lines gave."""
        if not self._texts:
            return rows, skipped
        key = tuple(self._texts)
        if key not in self._skipped_alone:
            self._skipped_alone[key] = self._parse(_numbered_from(1, self._texts))[1]
        own = self._skipped_alone[key]
        left = {reason: count - own.get(reason, 0) for reason, count in skipped.items()}
        return rows.filter(pl.col("line") >= first_line), {reason: count for reason, count in left.items() if count > 0}

    def take(self, lines: pl.DataFrame) -> None:
        """Keep the lines read so far (the carried ones and a batch's): what they hand on is found if a batch follows."""
        if self._source.carried_lines is not None and lines.height:
            self._read = lines


def _numbered_from(first: int, texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"line": range(first, first + len(texts)), "text": texts}, schema=LINES_SCHEMA)
