"""Turning rows into files: merge noise with injected records, frame, rotate, compress, date.

Noise never lands inside an injected multi-line record; rotated parts are split by time;
gzip headers carry the part's end time instead of the clock, and every file's mtime is the
time of its last line, so year inference from mtime is right and the bytes are reproducible.
"""

from __future__ import annotations

import gzip
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from rca.datasets._formats import ROW_SCHEMA, Style, format_lines, moment
from rca.datasets._model import US
from rca.datasets._sink import Evidence


@dataclass(frozen=True)
class Part:
    """One file of a stream: rows with ``start <= ts < end`` go to ``path``."""

    path: str  # relative to the output folder
    start: int
    end: int
    gzip: bool = False


@dataclass
class Tally:
    files: int = 0
    bytes: int = 0
    lines: int = 0
    incident_lines: int = 0
    written: set[str] = field(default_factory=set)


def merge(noise: pl.DataFrame, fixed: pl.DataFrame, blocks: list[tuple[int, int]]) -> pl.DataFrame:
    """Noise and injected rows in file order, with noise dropped from inside injected records."""
    if blocks and noise.height:
        windows = pl.DataFrame(sorted(blocks), schema={"b_start": pl.Int64, "b_end": pl.Int64}, orient="row").with_columns(
            b_end=pl.col("b_end").cum_max()
        )
        noise = (
            noise.sort("ts")
            .join_asof(windows, left_on="ts", right_on="b_start", strategy="backward")
            .filter(pl.col("b_end").is_null() | (pl.col("ts") > pl.col("b_end")))
            .drop("b_start", "b_end")
        )
    rows = pl.concat([noise.select(list(ROW_SCHEMA)), fixed.select(list(ROW_SCHEMA))])
    return rows.sort("ts", "sub", maintain_order=True)


def write(out: Path, parts: list[Part], rows: pl.DataFrame, style: Style, evidence: list[Evidence], tally: Tally) -> None:
    """Frame ``rows`` with ``style`` and write them into ``parts``; fill in the evidence lines' places."""
    framed = rows.select("ts", "inc", "ev").with_columns(text=format_lines(rows, style))
    for part in parts:
        chunk = framed.filter((pl.col("ts") >= part.start) & (pl.col("ts") < part.end))
        if chunk.height == 0:
            continue
        if part.path in tally.written:
            raise RuntimeError(f"two streams were written to {part.path}")
        tally.written.add(part.path)
        path = out / part.path
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        chunk.select("text").write_csv(buffer, include_header=False, quote_style="never")
        data = buffer.getvalue()
        last = int(chunk["ts"].max())  # type: ignore[arg-type]
        if part.gzip:
            packed = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=last // US, compresslevel=1) as stream:
                stream.write(data)
            data = packed.getvalue()
        path.write_bytes(data)
        os.utime(path, (last / US, last / US))
        tally.files += 1
        tally.bytes += len(data)
        tally.lines += chunk.height
        tally.incident_lines += int(chunk["inc"].sum())
        marked = chunk.with_row_index("position").filter(pl.col("ev").is_not_null())
        for position, ev, ts in marked.select("position", "ev", "ts").iter_rows():
            entry = evidence[ev]
            entry.file, entry.line, entry.ts_utc = part.path, position + 1, utc_text(ts)


def utc_text(ts: int) -> str:
    return f"{moment(ts):%Y-%m-%dT%H:%M:%S.%f}Z"


def rotation(base: str, start: int, end: int, compress: bool) -> list[Part]:
    """logrotate's daily parts of ``base`` (base, base.1, base.2.gz, ...) over ``[start, end)``."""
    cuts = []
    day = 86_400 * US
    first = start - start % day + 6 * 3600 * US + 25 * 60 * US
    at = first if first > start else first + day
    while at < end:
        cuts.append(at)
        at += day
    if len(cuts) < 2:
        span = end - start
        cuts = [start + span * 2 // 5, start + span * 3 // 4]
    cuts = cuts[-3:]
    bounds = [start - 400 * day] + cuts + [end + 400 * day]
    count = len(bounds) - 1
    parts = []
    for number in range(count):
        age = count - 1 - number
        name = base if age == 0 else f"{base}.{age}" + (".gz" if compress and age >= 2 else "")
        parts.append(Part(name, bounds[number], bounds[number + 1], compress and age >= 2))
    return parts
