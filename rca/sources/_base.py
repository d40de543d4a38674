"""What a source module declares, what it is given, and what it returns.

A source turns a batch of raw lines into rows of the event schema. It never touches the
disk and never reads the clock: the file name, host, zone, year hint and boot time come in
the :class:`ParseContext` the driver builds (and records in the manifest).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl
from polars.exceptions import PanicException

LINES_SCHEMA = {"line": pl.Int64(), "text": pl.String()}

# What a sniffer or parser may raise on input its author never saw: any error, and a panic
# inside polars (pyo3 raises those as a BaseException). The driver keeps such a file's lines
# as kind=log events and says so in the manifest instead of stopping the ingest.
SOURCE_FAILURES: tuple[type[BaseException], ...] = (Exception, PanicException)

HEAD_LINES = 60
"""A file's first non-blank lines a sniffer is shown."""


@dataclass(frozen=True)
class ParseContext:
    """Everything a parser may know about the file besides its lines.

    ``year`` is the year for lines that carry none, with ``year_quality`` saying where it
    came from ("year_inferred" from --year or the file's own dated lines,
    "year_from_mtime" from the file's modification time). ``reference_time`` is the
    latest moment the file can describe (its mtime, or the end of the journal its banner
    names, as ``reference_quality`` says): a yearless line that would land after it
    belongs to the previous year. ``pod``, ``namespace``, ``container`` and ``container_id`` are
    named by the layout (a ``kubectl cluster-info dump`` pod log) and fill events that
    carry none of their own. Of the lines of several files (a ``batch_file`` column) whose
    years come from different places, ``file_years`` holds each file's ``(year,
    year_quality, None)`` or ``(None, reference_quality, reference_time)`` in batch-file order; ``files`` holds each file's
    ``(file, reference_time)`` whenever a batch has several files.
    """

    file: str
    host: str | None = None
    tz: str = "UTC"
    year: int | None = None
    year_quality: str = "year_inferred"
    reference_time: datetime | None = None
    reference_quality: str = "year_from_mtime"
    boot_time: datetime | None = None
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None
    container_id: str | None = None
    file_years: tuple[tuple[int | None, str, datetime | None], ...] = ()
    files: tuple[tuple[str, datetime | None], ...] = ()

    def scope(self) -> dict[str, str]:
        """The pod, namespace, container and container id the layout names, for the events that lack them."""
        return {name: value for name in ("pod", "namespace", "container", "container_id") if (value := getattr(self, name))}


@dataclass
class Parsed:
    """A parser's answer: event rows (any subset of the event columns) and skipped lines.

    Every input line is either counted by exactly one event's ``n_lines`` or counted in
    ``skipped`` under a reason ("blank", "header", "table border", ...), so the manifest's
    totals reconcile. Of the lines of several files (a ``batch_file`` column), a parser that
    can tell whose skipped lines are whose says so in ``skipped_by_file`` (batch file → reason
    → lines), which lets each file's manifest row be told without reading it alone.
    """

    events: pl.DataFrame
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_by_file: dict[int, dict[str, int]] | None = None
    lines: int | None = None  # the records a whole-file parse read (a journal's entries); None: the file counts as one line


def add_skipped(total: dict[str, int], more: dict[str, int]) -> None:
    """Add the counts of ``more`` into ``total``."""
    for reason, count in more.items():
        total[reason] = total.get(reason, 0) + count


SniffFn = Callable[[Sequence[str]], float]
SniffHeadsFn = Callable[[pl.DataFrame], dict[int, float]]
ParseFn = Callable[[pl.DataFrame, ParseContext], Parsed]
NameClaimFn = Callable[[str, Sequence[str]], float]
SniffBytesFn = Callable[[bytes], float]
ParseBytesFn = Callable[[bytes, ParseContext], Parsed]
CarryFn = Callable[[pl.DataFrame], pl.DataFrame]


@dataclass(frozen=True)
class Source:
    """A registered source format family.

    ``sniff`` gets the first non-blank lines of a file and returns a confidence in
    [0, 1]: 0 means "not mine". The driver picks the highest score; a file nobody claims
    goes to the generic fallback. ``sniff_literals`` are cheap substrings, one of which
    must occur in the head before ``sniff`` is even called.

    ``claims_name`` (file path, head) -> confidence is for formats that carry nothing to
    sniff, like a cgroup file holding one number: the driver takes it over a lower content
    score (the catch-all's weak claim on any text). ``host_in_content`` makes a host written in the content (a Prometheus export
    covering many nodes) win over the host of the folder layout. Formats read whole (binary
    ones, or one JSON document whose size is no line length) declare ``sniff_bytes`` (the
    file's first bytes -> confidence) and ``parse_bytes`` (the whole file's bytes -> events,
    raising :class:`rca.errors.FileFormatError` for a file it cannot read); the driver hands
    such files over whole instead of as lines, counting each as one line.

    ``line_local`` says that what a line means comes from itself and the lines near it,
    never from a header or a document opened far above it (a CSV header, a ``kubectl
    describe`` document): the driver may then cut a large file into byte ranges parsed in
    parallel (rca._split checks every cut on the lines around it).

    ``segmented`` says that ``parse`` also takes the lines of several small files at once,
    numbered on from one file to the next, with a ``batch_file`` column (Int32) telling the
    files apart: no record spans two files and nothing a line means comes from another
    file's lines. The context given is the first file's (``tz`` and ``boot_time`` are the
    same for all) with each file's year in ``file_years`` and its name and mtime in ``files``.
    Whatever a parser carries from line to line must stop where a file starts
    (:func:`starts_file`, :func:`inherit_frame`, ``timeutil.yearless_to_utc(..., within=within_file(lines))``), and whatever it decides
    for a batch (a sub-format, a framing) it decides per file. tests/test_small_files.py
    holds each such source to reading the same together as alone.

    ``carried_lines`` takes the lines of one file read so far (``line``, ``text``) and returns
    those of them that the lines after the last need to be read (a CSV header whose rows run
    to the last line). The driver reads a large file in batches and sets these lines above
    the next batch, numbered just before its first line, and counts them there as nothing:
    so a table cut by a batch reads as it does whole. A ``line_local`` source with one is cut
    into byte ranges only where its file's first lines carry none.

    ``sniff_heads`` is ``sniff`` of many heads at once (a polars query costs ~0.2 ms however
    few its rows, and a folder of small files has a head per file): it takes
    :func:`heads_frame` of them and returns each head's score by its number (a head left
    out scores 0).
    """

    name: str
    sniff: SniffFn
    parse: ParseFn
    sniff_literals: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    claims_name: NameClaimFn | None = None
    host_in_content: bool = False
    sniff_bytes: SniffBytesFn | None = None
    parse_bytes: ParseBytesFn | None = None
    line_local: bool = False
    segmented: bool = False
    sniff_heads: SniffHeadsFn | None = None
    carried_lines: CarryFn | None = None


def heads_frame(heads: Sequence[Sequence[str]]) -> pl.DataFrame:
    """The lines of several heads in one frame: ``head`` (the head's place in ``heads``) and ``text``."""
    numbers = [number for number, head in enumerate(heads) for _ in head]
    return pl.DataFrame({"head": numbers, "text": [line for head in heads for line in head]}, schema={"head": pl.Int32, "text": pl.String})


def one_head(sniff_heads: SniffHeadsFn, head: Sequence[str]) -> float:
    """A ``sniff_heads`` function's score of a single head."""
    return sniff_heads(heads_frame([head])).get(0, 0.0)


def by_head(frame: pl.DataFrame, **aggregates: pl.Expr) -> dict[int, dict]:
    """Each head's ``aggregates`` of ``frame``'s rows, by head number."""
    if frame.height == 0:
        return {}
    heads = frame["head"]
    if heads[0] == heads[-1]:  # one head (numbers ascend): a plain select, cheaper than grouping
        return {heads[0]: frame.select(**aggregates).row(0, named=True)}
    return {row.pop("head"): row for row in frame.group_by("head").agg(**aggregates).iter_rows(named=True)}


def lines_frame(text: str, first_line: int = 1) -> pl.DataFrame:
    """Split ``text`` into the frame a parser receives (used by tests and the driver)."""
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    return pl.DataFrame(
        {"line": pl.int_range(first_line, first_line + len(rows), eager=True), "text": rows},
        schema=LINES_SCHEMA,
    ).with_columns(pl.col("text").str.strip_suffix("\r"))


def forward_fill_within(value: pl.Expr, group: pl.Expr) -> pl.Expr:
    """``value.forward_fill().over(group)`` for a ``group`` key whose rows are contiguous (a ``cum_sum``), in O(n).

    ``over`` hashes every key, which is slow when most groups are a single line. A contiguous
    group starts where its key changes, and a forward-filled value belongs to the row's own
    group only when it was set at or after that start.
    """
    row = pl.int_range(pl.len())
    group_start = pl.when(group.ne_missing(group.shift(1))).then(row).forward_fill()
    set_at = pl.when(value.is_not_null()).then(row).forward_fill()
    return pl.when(set_at >= group_start).then(value.forward_fill())


def within_file(frame: pl.DataFrame) -> str | None:
    """``"batch_file"`` when ``frame`` holds the lines of several files (a segmented source's batch), else None."""
    return "batch_file" if "batch_file" in frame.columns else None


def file_column(frame: pl.DataFrame) -> list[str]:
    """The ``batch_file`` column's name in a list when ``frame`` has it: for a select that must keep it."""
    return ["batch_file"] if "batch_file" in frame.columns else []


def per_file(values: Sequence[object], dtype: pl.DataType, within: str = "batch_file") -> pl.Expr:
    """A value per file of a batch, by its number in the ``within`` column; a literal when they are all the same."""
    if len(set(values)) == 1:
        return pl.lit(values[0], dtype)
    return pl.col(within).replace_strict(list(range(len(values))), list(values), default=None, return_dtype=dtype)


def starts_file(frame: pl.DataFrame) -> pl.Expr:
    """Whether a row opens a file other than the batch's first; never, for the lines of one file.

    A record, a block or an inherited frame of a segmented parser must end there: nothing a
    line means may come from another file's lines.
    """
    if "batch_file" not in frame.columns:
        return pl.lit(False)
    return pl.col("batch_file").ne_missing(pl.col("batch_file").shift(1)) & (pl.int_range(pl.len()) > 0)


def inherit_frame(framed: pl.DataFrame, carried: Sequence[str]) -> pl.DataFrame:
    """Lines with no frame of their own (``framed`` false: continuations, stack dumps) take the ``carried``
    columns of the framed line above them in their file, with ``ts_quality`` "inherited"; above a
    file's first framed line they have none, and ``ts_quality`` is "missing"."""
    record = (pl.col("framed") | starts_file(framed)).cum_sum()
    has_frame = forward_fill_within(pl.when(pl.col("framed")).then(pl.lit(True)), record).fill_null(False)
    return framed.with_columns(
        [pl.when(has_frame).then(forward_fill_within(pl.col(name), record)).alias(name) for name in carried],
        ts_quality=pl.when(pl.col("framed")).then(pl.col("ts_quality")).when(has_frame).then(pl.lit("inherited")).otherwise(pl.lit("missing")),
    )


def parse_apart(lines: pl.DataFrame, ctx: ParseContext, together: Sequence[int], parse_together: ParseFn, parse_alone: ParseFn) -> Parsed:
    """The lines of several files (a ``batch_file`` column): the files numbered in ``together`` in one ``parse_together``
    call, each other file by ``parse_alone`` with its own context (:func:`file_context`), as it would be read by itself.

    For a segmented source whose decisions for a batch (a sub-format, a document) hold for most files of a folder but not
    all: the common kind is read at once, the rest file by file, each file's skipped lines told apart.
    """
    chosen = pl.col("batch_file").is_in(together)
    parts = [parse_together(lines.filter(chosen), ctx)] if together else []
    for (number,), own in lines.filter(~chosen).partition_by("batch_file", as_dict=True, maintain_order=True).items():
        parsed = parse_alone(own.drop("batch_file"), file_context(ctx, number))
        parts.append(Parsed(events=parsed.events, skipped=parsed.skipped, skipped_by_file={number: parsed.skipped}))
    skipped: dict[str, int] = {}
    for part in parts:
        add_skipped(skipped, part.skipped)
    events = [part.events for part in parts if part.events.height]
    return Parsed(
        events=pl.concat(events, how="diagonal_relaxed").sort("line") if events else pl.DataFrame(),
        skipped=skipped,
        skipped_by_file={number: counts for part in parts for number, counts in (part.skipped_by_file or {}).items()},
    )


def file_context(ctx: ParseContext, number: int) -> ParseContext:
    """The context of the ``number``-th file of a batch's ``ctx`` (the first file's, with every file's name, time and year)
    as that file has it read alone."""
    file, reference_time = ctx.files[number]
    alone = dataclasses.replace(ctx, file=file, reference_time=reference_time, files=(), file_years=())
    if not ctx.file_years:
        return alone
    year, quality, _ = ctx.file_years[number]
    return dataclasses.replace(alone, year=year, year_quality=quality) if year is not None else dataclasses.replace(alone, year=None, reference_quality=quality)


def backward_fill_within(value: pl.Expr, group: pl.Expr) -> pl.Expr:
    """``value.backward_fill().over(group)`` for a contiguous ``group`` key, in O(n)."""
    row = pl.int_range(pl.len())
    group_end = pl.when(group.ne_missing(group.shift(-1))).then(row).backward_fill()
    set_at = pl.when(value.is_not_null()).then(row).backward_fill()
    return pl.when(set_at <= group_end).then(value.backward_fill())


def split_rows(
    frame: pl.DataFrame,
    mask: pl.Expr,
    matched: Callable[[pl.DataFrame], pl.DataFrame],
    rest: Callable[[pl.DataFrame], pl.DataFrame],
) -> pl.DataFrame:
    """``matched`` on the rows where ``mask`` holds, ``rest`` on the others, back in row order.

    Both must map rows one to one and return the same columns and dtypes. A ``when/then``
    evaluates both branches on every row; this lets a cheap path take the bulk of a batch
    while the costly one runs only where it is needed.
    """
    flags = frame.select(mask.fill_null(False)).to_series()
    if flags.all():
        return matched(frame)
    if not flags.any():
        return rest(frame)
    order = pl.concat([flags.arg_true(), (~flags).arg_true()])
    parts = pl.concat([matched(frame.filter(flags)), rest(frame.filter(~flags))])
    return parts.with_columns(order.alias("__order")).sort("__order").drop("__order")


MESSAGE_TAIL = r"(?<message>.*)$"

_CAPTURE_NAME = re.compile(r"\(\?P?<[A-Za-z_][A-Za-z0-9_]*>")


def attrs_json(fields: dict[str, pl.Expr]) -> pl.Expr:
    """A JSON object string of ``fields`` with null members left out (null when all are)."""
    encoded = pl.struct(**fields).struct.json_encode()
    # Inside JSON strings every quote is escaped, so ',"key":null' can only be a member.
    trimmed = encoded.str.replace_all(r',"[A-Za-z_][0-9A-Za-z_]*":null', "").str.replace(r'^\{"[A-Za-z_][0-9A-Za-z_]*":null,?', "{")
    return trimmed.replace("{}", None)


def joined_json(first: pl.Expr, second: pl.Expr) -> pl.Expr:
    """Two JSON objects (strings, either null) as one: ``second``'s members after ``first``'s."""
    joined = pl.concat_str([first.str.strip_suffix("}"), pl.lit(","), second.str.strip_prefix("{")])
    return pl.when(second.is_null()).then(first).when(first.is_null()).then(second).otherwise(joined)


def any_of(*patterns: str) -> str:
    """One pattern that matches wherever one of ``patterns`` does.

    One pass of the union over a column costs about as much as one pass of a single
    pattern, so a line most patterns cannot match is ruled out once instead of once per
    pattern (see :func:`split_rows`). Capture names are dropped: two patterns may use the same.
    """
    return "|".join(f"(?:{_CAPTURE_NAME.sub('(?:', pattern)})" for pattern in patterns)


def holds_newline(texts: pl.Series) -> bool:
    """Whether any text holds a newline (lines of a lines frame never do; decoded JSON messages may)."""
    return bool(texts.str.contains("\n", literal=True).any())


def head_groups(text: pl.Expr, head: str, *, one_line: bool) -> pl.Expr:
    """The groups of ``head + MESSAGE_TAIL`` as a struct, with ``message`` the text after the head.

    A capture costs time in proportion to the text it spans, and a log line is mostly its
    message. On text without a newline the ``.*$`` tail matches whatever follows the head, so
    only the head is captured and the message is sliced off after it; otherwise
    (``one_line=False``) the full pattern is captured.
    """
    if not one_line:
        return text.str.extract_groups(head + MESSAGE_TAIL)
    groups = text.str.extract_groups(f"(?<head>{head})")
    return groups.struct.with_fields(message=text.str.slice(pl.field("head").str.len_chars()))


def map_distinct(values: pl.Series, convert: Callable[[pl.Expr], pl.Expr]) -> pl.Series:
    """``convert`` of each value, evaluated once per distinct value (``convert`` must be row-wise).

    Logs repeat their stamps and readings, and a time conversion tries several formats; run
    on the distinct values it costs per stamp, not per line. Joining the results back costs
    about what a time conversion does (three to four times the conversion of the distinct
    values, on 500k ISO stamps), so values that repeat less than four times on average, such as
    millisecond stamps, are converted directly.
    """
    frame = values.to_frame("value")
    distinct = frame.unique()
    if distinct.height * 4 > frame.height:
        return frame.select(converted=convert(pl.col("value")))["converted"]
    distinct = distinct.with_columns(converted=convert(pl.col("value")))
    if distinct.height == 1:
        return distinct["converted"].new_from_index(0, values.len())
    return frame.join(distinct, on="value", how="left", maintain_order="left", nulls_equal=True)["converted"]


def evaluated_once(value: pl.Expr, use: Callable[[pl.Expr], pl.Expr]) -> pl.Expr:
    """``use(value)``, with ``value`` computed once however often ``use`` reads it.

    Polars evaluates an expression wherever it appears in a tree (common subexpressions in
    ``when/then`` are not shared), so a conversion that reads its input three times would
    compute it three times.
    """
    return pl.struct(value.alias("value")).struct.with_fields(used=use(pl.field("value"))).struct.field("used")
