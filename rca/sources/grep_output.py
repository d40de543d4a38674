"""grep's output of a log, read as that log: ``grep -n``, ``grep -rn``, ``grep -C3`` of kern.log, dmesg, kubelet's log.

An SRE pastes "/var/log/kern.log:1234:Dec  1 03:17:05 node1 kernel: Out of memory: Killed process …" or
"2297:I0712 15:54:56.488085 5711 eviction_manager.go:…" into the folder. Under grep's prefix (the rule the pipeline
source peels it by: :mod:`rca.sources._grep`) is a kernel's or kubelet's line, whose source reads it as its own:
a kernel OOM kill stays one. The pipeline source keeps the grep output of the logs it reads itself (a training log's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import polars as pl

from rca import sources
from rca.sources import register
from rca.sources._base import HEAD_LINES, ParseContext, Parsed, Source, add_skipped, one_head
from rca.sources._grep import without_grep_prefix, without_line_numbers

# Above the score of the source of the lines under grep's prefix, so that a sniffer that half reads the prefixed
# lines does not take them.
_ABOVE_INNER = 0.01
# grep's line between the groups of lines it prints with context (-A, -B, -C): no line of the log.
_SEPARATOR = "--"


def _peeled(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` without grep's prefix or a viewer's line numbers, and without the indent all their lines share (a CI log's
    build steps indent theirs; a markdown code block, by a tab)."""
    peeled = without_line_numbers(without_grep_prefix(lines))
    text = pl.col("text")
    indent = text.str.len_chars() - text.str.strip_chars_start(" \t").str.len_chars()
    counted = pl.when((text.str.strip_chars() != "") & (text != _SEPARATOR)).then(indent)
    shared = counted.min().over("batch_file") if "batch_file" in lines.columns else counted.min()
    return peeled.with_columns(text.str.slice(shared.fill_null(0)))


def _reads_under(source: Source | None) -> bool:
    """Whether the lines under grep's prefix are ``source``'s to read: a line-by-line format other than the pipeline's."""
    return source is not None and source.line_local and source.name not in ("pipeline", SOURCE_NAME)


def _inner_sources(peeled: pl.DataFrame) -> list[Source | None]:
    """The source of the peeled lines of each file (``batch_file``, where there are several), sniffed from its head."""
    numbered = peeled if "batch_file" in peeled.columns else peeled.with_columns(batch_file=pl.lit(0, pl.Int32))
    return [_chosen(source) for source, _ in _sniffed(numbered, list(range(numbered["batch_file"].max() + 1)))]


def _sniffed(peeled: pl.DataFrame, numbers: list[int]) -> list[tuple[Source | None, float]]:
    """The best source and its score for the first non-blank peeled lines of each of the files ``numbers`` (``batch_file``)."""
    content = peeled.filter(pl.col("batch_file").is_in(numbers) & (pl.col("text").str.strip_chars() != ""))
    heads = content.group_by("batch_file", maintain_order=True).head(HEAD_LINES)
    texts = dict(heads.group_by("batch_file").agg("text").iter_rows())
    return sources.sniff_many([texts.get(number, []) for number in numbers])


def _chosen(source: Source | None) -> Source | None:
    return source if _reads_under(source) else None


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """Just above the score of the source of the lines under grep's prefix, for heads most of whose lines wear it."""
    framed = heads.rename({"head": "batch_file"})
    peeled = _peeled(framed)
    changed = peeled.filter(pl.col("text") != framed["text"])["batch_file"].unique().sort().to_list()
    if not changed:
        return {}
    sniffed = _sniffed(peeled, changed)
    return {
        number: min(1.0, score + _ABOVE_INNER) for number, (source, score) in zip(changed, sniffed, strict=True) if _reads_under(source)
    }


def sniff(head: Sequence[str]) -> float:
    """:func:`sniff_heads` of one head."""
    return one_head(sniff_heads, head)


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Each file's lines without grep's prefix, read by the source of what is under it (the pipeline's, where none is)."""
    peeled = _peeled(lines)
    inner = _inner_sources(peeled)
    files = _files_by_source(inner)
    pipeline = sources.get("pipeline")
    if list(files) == [None]:  # the pipeline reads its grep files as it always has
        parsed = pipeline.parse(lines, ctx)
        return dataclasses.replace(parsed, events=_as_source(parsed.events, pipeline))
    parts = [_parse_files(source or pipeline, lines if source is None else peeled, numbers, ctx) for source, numbers in files.items()]
    events = pl.concat([part.events for part in parts], how="diagonal_relaxed")
    skipped: dict[str, int] = {}
    for part in parts:
        add_skipped(skipped, part.skipped)
    by_file = None
    if "batch_file" in lines.columns and all(part.skipped_by_file is not None for part in parts):
        by_file = {number: counts for part in parts for number, counts in (part.skipped_by_file or {}).items()}
    return Parsed(events, skipped, by_file)


def _files_by_source(inner: list[Source | None]) -> dict[Source | None, list[int]]:
    grouped: dict[Source | None, list[int]] = {}
    for number, source in enumerate(inner):
        grouped.setdefault(source, []).append(number)
    return grouped


def _parse_files(source: Source, lines: pl.DataFrame, numbers: list[int], ctx: ParseContext) -> Parsed:
    """``source``'s parse of the lines of the files ``numbers`` (all of them, for one file), grep's separators
    counted as blank; the events are the source's, its skipped lines by their file's number in the batch."""
    batch = "batch_file" in lines.columns
    own = lines.filter(pl.col("batch_file").is_in(numbers)) if batch else lines
    separator = (pl.col("text") == _SEPARATOR) if source.name != "pipeline" else pl.lit(False)
    read = own.filter(~separator)
    counted = dict(own.filter(separator).group_by(pl.col("batch_file") if batch else pl.lit(0).alias("batch_file")).len().iter_rows())
    blanks = {number: count for number, count in counted.items() if count}  # a literal key counts an empty frame as 0
    parsed = source.parse(_renumbered(read, numbers), _files_context(ctx, numbers)) if read.height else Parsed(pl.DataFrame())
    events = _as_source(parsed.events.drop("batch_file", strict=False), source)
    skipped = dict(parsed.skipped)
    add_skipped(skipped, {"blank": sum(blanks.values())} if blanks else {})
    return Parsed(events, skipped, _skipped_by_file(parsed, numbers, blanks) if batch else None)


def _as_source(events: pl.DataFrame, source: Source) -> pl.DataFrame:
    """``source``'s events named as its own (the driver would otherwise name them grep_output's, no source of the vocabulary)."""
    if not events.height:
        return events
    return events.with_columns(
        pl.col(name).fill_null(source.name) if name in events.columns else pl.lit(source.name).alias(name) for name in ("source", "format")
    )


def _renumbered(lines: pl.DataFrame, numbers: list[int]) -> pl.DataFrame:
    """The lines of the files ``numbers`` of a batch numbered as a batch of those files alone."""
    if "batch_file" not in lines.columns:
        return lines
    return lines.with_columns(pl.col("batch_file").replace_strict(numbers, list(range(len(numbers))), return_dtype=pl.Int32))


def _files_context(ctx: ParseContext, numbers: list[int]) -> ParseContext:
    """The context of a batch of the files ``numbers`` alone."""
    if not ctx.files:
        return ctx
    years = tuple(ctx.file_years[n] for n in numbers) if ctx.file_years else ()
    return dataclasses.replace(
        ctx, file=ctx.files[numbers[0]][0], files=tuple(ctx.files[n] for n in numbers), file_years=years if len(set(years)) > 1 else ()
    )


def _skipped_by_file(parsed: Parsed, numbers: list[int], blanks: dict[int, int]) -> dict[int, dict[str, int]] | None:
    """The skipped lines of each of the files ``numbers``, by its number in the whole batch; None where they cannot be told apart."""
    if parsed.skipped_by_file is not None:
        by_file = {numbers[sub]: dict(counts) for sub, counts in parsed.skipped_by_file.items()}
    elif len(numbers) == 1:
        by_file = {numbers[0]: dict(parsed.skipped)}
    else:
        return None
    for number, count in blanks.items():
        add_skipped(by_file.setdefault(number, {}), {"blank": count})
    return by_file


SOURCE_NAME = "grep_output"
SOURCE = register(Source(name=SOURCE_NAME, sniff=sniff, sniff_heads=sniff_heads, parse=parse, line_local=True, segmented=True))
