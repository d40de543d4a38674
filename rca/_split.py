"""Cutting a large plain-text log into byte ranges that parse as the whole file does.

A cut is wanted about every ``batch_bytes``. Near each target offset a window of whole
lines is parsed three times: whole, and as the two halves either side of a candidate line.
The candidate is a cut only when the halves give exactly the events the whole window gives,
so no multi-line record (a Python traceback, the kernel's OOM-killer block, an interleaved
rank's stack dump) and no state carried from line to line within the window is broken. The
candidates are the lines at or after the target that no multi-line event of the whole
window covers beyond its first line; after a failed candidate the next one is taken past
every event the cut changed. Where no candidate holds, there is no cut near that target
and the range runs on to the next one.

Only sources that declare themselves ``line_local`` are cut: what their lines mean comes
from the lines themselves and their neighbours, never from a header or a document opened
far above (a CSV header, a ``kubectl describe`` document), which no window would show.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import polars as pl

from rca import _reader

WINDOW_BYTES = 64 * 1024
"""Bytes of whole lines either side of a target offset that a cut is checked on (at most half a batch)."""
_TRIES = 4
_READ_SIZE = 1 << 20

ParseWindow = Callable[[pl.DataFrame], pl.DataFrame]


@dataclass(frozen=True)
class ByteRange:
    """Bytes ``[start, end)`` of a file, whose first line is line ``first_line`` of the file."""

    start: int
    end: int
    first_line: int


def find_cuts(path: str, start: int, size: int, batch_bytes: int, max_line_chars: int, parse: ParseWindow) -> list[int]:
    """Offsets of line starts in ``(start, size)`` where the file can be cut, about ``batch_bytes`` apart.

    ``parse`` turns a lines frame into finished events. The last range is never shorter
    than a quarter of a batch. The cuts depend only on the file's bytes and the arguments.
    """
    cuts: list[int] = []
    target = start + batch_bytes
    window = min(WINDOW_BYTES, batch_bytes // 2)
    with open(path, "rb") as handle:
        while size - target > batch_bytes // 4:
            cut = _cut_near(handle, target, size, window, max_line_chars, parse)
            if cut is None:
                target += batch_bytes
            else:
                cuts.append(cut)
                target = cut + batch_bytes
    return cuts


def ranges(start: int, size: int, first_line: int, cuts: list[int], lines_before: list[int]) -> list[ByteRange]:
    """The byte ranges between the cuts; ``lines_before[k]`` counts the lines from ``start`` to ``cuts[k]``."""
    bounds = [start, *cuts, size]
    firsts = [first_line, *(first_line + count for count in lines_before)]
    return [ByteRange(bounds[k], bounds[k + 1], firsts[k]) for k in range(len(bounds) - 1)]


def digest_and_line_counts(path: str, size: int, start: int, cuts: list[int]) -> tuple[str, list[int]]:
    """sha256 of the file's first ``size`` bytes, and the number of lines between ``start`` and each cut.

    One sequential read: the digest is of the whole file, as the manifest records it, and
    the counts give each range the number of its first line.
    """
    digest = hashlib.sha256()
    counts: list[int] = []
    pending = list(cuts)
    newlines = 0
    position = 0
    with open(path, "rb") as handle:
        while position < size and (block := handle.read(min(_READ_SIZE, size - position))):
            digest.update(block)
            low = max(start - position, 0)
            while pending and pending[0] <= position + len(block):
                high = pending.pop(0) - position
                newlines += block.count(b"\n", low, high)
                counts.append(newlines)
                low = high
            newlines += block.count(b"\n", low) if low < len(block) else 0
            position += len(block)
    return digest.hexdigest(), counts


@dataclass(frozen=True)
class Seam:
    """The whole lines around a file's old end (numbered from 1) and the number of the first line past it."""

    lines: pl.DataFrame
    cut: int

    def after(self) -> pl.DataFrame:
        return self.lines.filter(pl.col("line") >= self.cut)

    def trivial(self) -> bool:
        """Whether one side holds no line, so nothing can run on across the seam."""
        return self.cut <= 1 or self.cut > self.lines.height

    def holds(self, whole: pl.DataFrame, after: pl.DataFrame) -> bool:
        """Whether, given the events of the window and of the lines past the old end, those lines read alone as after the old ones.

        No event that starts before the old end may run on past it (a traceback the earlier run
        saw cut), and the events past it must be the same either way (a time or a GPU's UUID
        that unstamped lines take from the lines above).
        """
        ends = pl.col("line") + pl.col("n_lines").fill_null(1) - 1
        if not whole.filter((pl.col("line") < self.cut) & (ends >= self.cut)).is_empty():
            return False
        return whole.filter(pl.col("line") >= self.cut).equals(after)


def seam(path: str, offset: int, size: int, max_line_chars: int) -> Seam | None:
    """The window of :data:`WINDOW_BYTES` either side of ``offset`` (a file's old end); None where the bytes before it end inside a line.

    What was appended after ``offset`` reads on its own only where :meth:`Seam.holds` (a
    group of small files checks many seams in one parse of each side: rca._small_files).
    """
    with open(path, "rb") as handle:
        low = max(offset - WINDOW_BYTES, 0)
        handle.seek(low)
        data = handle.read(min(offset + WINDOW_BYTES, size) - low)
    if data[offset - low - 1 : offset - low] != b"\n":
        return None
    window = _window_lines(data, low, size, max_line_chars)
    if window is None:
        return Seam(pl.DataFrame(schema=_reader.LINES_SCHEMA), 1)
    lines, offsets = window
    return Seam(lines, int((offsets < offset).sum()) + 1)


def holds_cut(path: str, offset: int, size: int, max_line_chars: int, parse: ParseWindow) -> bool:
    """Whether what was appended to a file after ``offset`` reads on its own as after the lines before it (:meth:`Seam.holds`)."""
    found = seam(path, offset, size, max_line_chars)
    if found is None:
        return False
    return found.trivial() or found.holds(parse(found.lines), parse(found.after()))


def _window_lines(data: bytes, low: int, size: int, max_line_chars: int) -> tuple[pl.DataFrame, pl.Series] | None:
    """The whole lines of ``data`` (the file's bytes from ``low``) and the offset of each, or None where it holds no whole line.

    A window reaching the end of the file keeps its last line even without a newline.
    """
    begin = data.find(b"\n") + 1 if low else 0
    end = len(data) if low + len(data) == size else data.rfind(b"\n") + 1
    if (low and begin == 0) or end <= begin:
        return None
    body = data[begin:end]
    newlines = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == ord("\n"))
    starts = np.concatenate([[0], newlines[newlines < len(body) - 1] + 1])
    return _reader.decode_lines(body, max_line_chars), pl.Series(starts + low + begin, dtype=pl.Int64)


def _cut_near(handle: BinaryIO, target: int, size: int, window: int, max_line_chars: int, parse: ParseWindow) -> int | None:
    """The first line start at or after ``target`` where cutting leaves the parse of its window unchanged."""
    low = max(target - window, 0)
    handle.seek(low)
    data = handle.read(min(2 * window, size - low))
    found = _window_lines(data, low, size, max_line_chars)
    if found is None:
        return None
    lines, offsets = found
    whole = parse(lines)
    covered = _covered_lines(whole)
    # Candidates lie in the first half of the window after the target, so the second half of each check has lines to parse.
    candidates = (
        lines.select("line")
        .with_columns(offset=offsets)
        .filter((pl.col("offset") >= target) & (pl.col("offset") < target + window // 2) & (pl.col("line") > 1))
        .filter(~pl.col("line").is_in(covered.implode()))
    )
    after = 0
    for _ in range(_TRIES):
        choice = candidates.filter(pl.col("line") > after).head(1)
        if choice.height == 0:
            return None
        line, offset = choice.row(0)
        halves = pl.concat([parse(lines.filter(pl.col("line") < line)), parse(lines.filter(pl.col("line") >= line))])
        if halves.equals(whole):
            return int(offset)
        after = max(line, _last_changed_line(whole, halves))
    return None


def _covered_lines(events: pl.DataFrame) -> pl.Series:
    """Lines a multi-line event covers beyond its first: a cut before one would break the event."""
    multi = events.filter(pl.col("n_lines") > 1).select(covered=pl.int_ranges(pl.col("line") + 1, pl.col("line") + pl.col("n_lines")))
    return multi.explode("covered")["covered"].drop_nulls().unique()


def _last_changed_line(whole: pl.DataFrame, halves: pl.DataFrame) -> int:
    """The last line of any event that cutting changed (on either side of the comparison)."""
    columns = [name for name in whole.columns if whole[name].dtype != pl.Null]
    changed = pl.concat([
        whole.join(halves, on=columns, how="anti", nulls_equal=True),
        halves.join(whole, on=columns, how="anti", nulls_equal=True),
    ])
    if changed.height == 0:
        return 0
    return int(changed.select((pl.col("line") + pl.col("n_lines").clip(lower_bound=1) - 1).max()).item())
