"""Lines one batch of a large file needs from the batches before it: a table's header, a record cut in two.

A file read in batches is parsed a batch at a time, and a CSV row or a sacct row means
nothing without its header, which only the first batch holds. A source that knows which of
its lines later lines need declares ``carried_lines``; the lines it names are set above the
next batch, numbered just before its first line (so the rows below them run on from them,
as in the file), and whatever the parser makes of them there is dropped: their events (the
batch that held them counted those) and their skipped lines (their parse alone tells how
many, once per distinct header).

The record a batch ends in (an OOM-killer report, a klog record with its continuation lines,
or the first line of either) may run on into the next batch. When its first line states its own
time, it is held back: its events are dropped from this batch and its lines read again at the
top of the next one, as lines of that batch, so the record is read whole. (An undated record
takes its time from the event above it, which the next batch does not hold: it stays cut, unless
the source carries that time there, as a ``-q`` report's head.)
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from rca.sources._base import LINES_SCHEMA, Source

ParseLines = Callable[[pl.DataFrame], tuple[pl.DataFrame, dict[str, int]]]
MOST_HELD_LINES = 10_000
"""The longest record held back for the next batch (so a file that is one endless record still goes batch by batch)."""


class Carry:
    """The lines a source carries from one batch of a file to the next."""

    def __init__(self, source: Source, parse: ParseLines) -> None:
        """``parse`` is the source's parse of a frame of lines: its rows and skipped lines by reason."""
        self._source, self._parse = source, parse
        self._texts: list[str] = []
        self._skipped_alone: dict[tuple[str, ...], dict[str, int]] = {}
        self._held = pl.DataFrame(schema=LINES_SCHEMA)  # the lines of a record held back for the next batch
        self.own_lines = 0  # the lines of the file in :meth:`above`'s last frame (held back ones and the batch's)
        self._carried_of: tuple[tuple[int, int, int], pl.DataFrame] | None = None  # the last lines' carried lines, by their extent
        self._first_own = 0

    def above(self, batch: pl.DataFrame) -> pl.DataFrame:
        """``batch`` (``line``, ``text``) below the lines held back for it, and the carried lines set just above them."""
        own = pl.concat([self._held, batch]) if self._held.height else batch
        self._held = self._held.clear()
        self.own_lines, self._first_own = own.height, (own["line"][0] if own.height else 0)
        if not self._texts or own.height == 0:
            return own
        return pl.concat([_numbered_from(self._first_own - len(self._texts), self._texts), own])

    def without_carried(self, rows: pl.DataFrame, skipped: dict[str, int]) -> tuple[pl.DataFrame, dict[str, int]]:
        """The rows and skipped lines of a parse of :meth:`above`'s lines, less what the carried lines gave."""
        if not self._texts:
            return rows, skipped
        key = tuple(self._texts)
        if key not in self._skipped_alone:
            self._skipped_alone[key] = self._parse(_numbered_from(1, self._texts))[1]
        own = self._skipped_alone[key]
        left = {reason: count - own.get(reason, 0) for reason, count in skipped.items()}
        return rows.filter(pl.col("line") >= self._first_own), {reason: count for reason, count in left.items() if count > 0}

    def hold_back(self, rows: pl.DataFrame, lines: pl.DataFrame) -> tuple[pl.DataFrame, int]:
        """The rows less those of a record that runs to the last of ``lines`` and states its own time (or takes it from
        lines its source carries to the next batch, all above it), and how many lines of it are held back for the next
        batch (0 when none: another undated record, or one too long)."""
        if lines.is_empty():
            return rows, 0
        last = lines["line"][-1]
        spans = pl.col("n_lines").fill_null(1)
        # (its time its own: an undated record takes the time of the event above it, which the next batch does not hold,
        # unless the source carries what the record takes its time from there: a -q report's head)
        dated_alone = pl.col("ts_raw").is_not_null() & pl.col("ts_quality").ne_missing("inherited")
        reaching = rows.filter((spans > 0) & (pl.col("line") + spans - 1 == last))
        if not reaching.select(dated_alone.all()).item():
            # an undated one only below all the lines carried for it (a line it would be read again with is no line of it)
            carried = self._carried(lines)["line"]
            below_carried = pl.col("line") > carried.max() if carried.len() else pl.lit(False)
            reaching = reaching.filter(dated_alone | below_carried)
        if reaching.is_empty():
            return rows, 0
        start = reaching["line"].min()
        held = lines.filter(pl.col("line") >= start)
        # every held line one of the dropped events' own (none skipped, none of a record that began above)
        covered = rows.filter(pl.col("line") >= start).select(spans.sum()).item()
        if held.height > MOST_HELD_LINES or covered != held.height:
            return rows, 0
        self._held = held
        return rows.filter(pl.col("line") < start), held.height

    def take(self, lines: pl.DataFrame) -> None:
        """Keep what the lines read so far (the carried ones and a batch's) hand on to the batch that follows them."""
        if self._source.carried_lines is not None and lines.height:
            self._texts = self._carried(lines)["text"].to_list()

    def _carried(self, lines: pl.DataFrame) -> pl.DataFrame:
        """The source's carried lines of ``lines``, asked once for a batch's lines (:meth:`hold_back` and :meth:`take` both need them)."""
        if self._source.carried_lines is None:
            return lines.clear()
        key = (lines.height, lines["line"][0], lines["line"][-1]) if lines.height else (0, 0, 0)
        if self._carried_of is None or self._carried_of[0] != key:
            self._carried_of = (key, self._source.carried_lines(lines))
        return self._carried_of[1]


def _numbered_from(first: int, texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"line": range(first, first + len(texts)), "text": texts}, schema=LINES_SCHEMA)
