"""Ingest: raw log files → rows of the event schema.

The work is split the way it scales: :func:`parse_file` is a pure task (one file in,
Parquet parts in a staging folder and a manifest row out) that runs the same in this
process, in a process pool or on a Dask worker (rca._executors); a large plain-text file
becomes one task per byte range instead (:func:`split_plan`, :func:`parse_range`, rca._split).
:func:`ingest` is the driver that plans the tasks from the manifest, runs them and commits
them to the store atomically.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from rca import _executors, _reader, _small_files, _split, archives, bundles, schema, sources, summary, templates
from rca._carry import Carry
from rca.errors import FileFormatError, InputError
from rca.sources._base import HEAD_LINES, SOURCE_FAILURES, ParseContext, Source, add_skipped, per_file
from rca.store import MANIFEST_FILE, META_FILE, PartWriter, Store, keep_shared_parts

MAX_LINE_CHARS = 64 * 1024
BATCH_BYTES = 32 * 1024 * 1024
WHOLE_FILE_PROBE = 64 * 1024  # first bytes shown to binary sources' sniffers
MAX_WHOLE_FILE_BYTES = 1 << 30  # a binary file is parsed in memory: refuse what would not fit
ARCHIVE_MAX_BYTES = 16 << 30  # bytes one archive may expand to, nested archives and gzip members included
ARCHIVE_MAX_MEMBERS = 100_000
ARCHIVE_MAX_RATIO = 500.0  # expanded : compressed; logs compress 5-30x (xz up to ~400x on repetitive ones), deflate bombs ~1030x
# A fully dated time: ISO's order (torchrun's table joins date and time with "_") or the US month-first one
# (nanotron's and accelerate's "08/31/2024 14:37:22").
# journalctl's banner spans the whole journal ("-- Logs begin at Fri 2016-05-06 23:00:44 -05, end at
# Tue 2017-06-27 21:55:41 -05. --") while the output below it may be any part (-u, --since): its
# start says nothing of the lines' year, its end bounds them. Its zone is not read: a yearless
# time may land up to a day past the moment that bounds it.
_JOURNAL_END = r"^-- (?:Logs begin at|Journal begins at) [^,]*, (?:end at|ends at) \S+ ([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})"
_DATED = (
    r"\b(?:(?<iso>(?:19|20)[0-9][0-9])[-/](?:0[1-9]|1[0-2])[-/](?:[0-2][0-9]|3[01])[T _]"
    r"|(?:0[1-9]|1[0-2])/(?:[0-2][0-9]|3[01])/(?<us>(?:19|20)[0-9][0-9])[ T])[0-9][0-9]:[0-9][0-9]:[0-9][0-9]"
    # ctime(3) and date(1): "Fri Jun 17 07:07:00 2005" (ftpd's connection lines in a yearless syslog, nvidia-smi's header),
    # "Tue Mar  2 14:20:00 UTC 2026"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-3][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"
    r"(?: [A-Z]{3,5})? (?<ctime>(?:19|20)[0-9][0-9])\b"
)


@dataclass(frozen=True)
class IngestOptions:
    """Options that change how files are read; each run records them in store.json, and a file read with other
    ones than a run's (all but batch_bytes) is read again by it, whole."""

    format: str | None = None
    host: str | None = None
    tz: str = "UTC"
    year: int | None = None
    boot_time: datetime | None = None
    max_line_chars: int = MAX_LINE_CHARS
    # Text parsed at once by one process (plus the rest of one 1 MiB read): what bounds its memory. A plain
    # file of a line_local source that is larger is cut into ranges of about this size, parsed in parallel.
    batch_bytes: int = BATCH_BYTES
    archive_max_bytes: int = ARCHIVE_MAX_BYTES
    archive_max_members: int = ARCHIVE_MAX_MEMBERS
    archive_max_ratio: float = ARCHIVE_MAX_RATIO


def file_key(provenance: str) -> str:
    """Short stable key of a file's provenance path, the prefix of its events' ids."""
    return hashlib.blake2b(provenance.encode("utf-8"), digest_size=6).hexdigest()


def parse_lines(lines: pl.DataFrame, ctx: ParseContext, source: Source) -> tuple[pl.DataFrame, dict[str, int]]:
    """Parse one batch of lines with ``source`` and finish the rows into the event schema.

    Blank lines never reach the parser; they are counted as skipped here. A parser's
    failure raises (the driver uses :func:`parse_rows`, which keeps the lines instead).
    """
    rows, skipped = _parsed_rows(lines, ctx, source)
    return finish_events(rows, ctx, source.name), skipped


def parse_rows(lines: pl.DataFrame, ctx: ParseContext, source: Source) -> tuple[pl.DataFrame, dict[str, int], str | None]:
    """:func:`parse_lines` short of :func:`finish_events`, for the driver: a parser's failure never stops a run.

    Returns the rows (event schema), the skipped lines by reason, and a note when the parser
    failed; the batch's non-blank lines are then kept as ``kind=log`` rows with no time
    (``format=unparsed``).
    """
    try:
        rows, skipped = _parsed_rows(lines, ctx, source)
    except SOURCE_FAILURES as err:
        content, skipped = without_blank_lines(lines)
        kept = content.select("line", message="text", format=pl.lit("unparsed"), ts_quality=pl.lit("missing"))
        return conformed_rows(kept), skipped, _failure_note(source.name, lines, err)
    return rows, skipped, None


def _parsed_rows(lines: pl.DataFrame, ctx: ParseContext, source: Source) -> tuple[pl.DataFrame, dict[str, int]]:
    content, skipped = without_blank_lines(lines)
    if content.height == 0:
        return conformed_rows(schema.empty(schema.EVENT_SCHEMA)), skipped
    parsed = source.parse(content, ctx)
    add_skipped(skipped, parsed.skipped)
    # Conformed here: a parser's ill-typed column fails its own batch, not the files finished with it.
    return conformed_rows(parsed.events), skipped


def conformed_rows(events: pl.DataFrame) -> pl.DataFrame:
    """``events`` conformed to the event schema, and beside them the parser's ``host_named`` (null where it gave none):
    the rows whose host names the node they came from, which :func:`finish_batch_events` reads and drops."""
    named = events["host_named"] if "host_named" in events.columns else pl.repeat(None, events.height, dtype=pl.Boolean, eager=True)
    return schema.conform(events.drop("host_named", strict=False), schema.EVENT_SCHEMA).with_columns(named.cast(pl.Boolean).alias("host_named"))


def blank_line() -> pl.Expr:
    """A line holding nothing but whitespace: never given to a parser, counted as skipped ("blank")."""
    return pl.col("text").str.strip_chars() == ""


def without_blank_lines(lines: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int]]:
    """The lines holding more than whitespace, and the others counted as skipped ("blank")."""
    # One chunk: polars 2.1 can panic in string kernels on a frame concatenated from pieces
    # (the kernel parser did, on two dmesg files put together); a single chunk is not copied.
    content = lines.filter(~blank_line()).rechunk()
    return content, ({"blank": lines.height - content.height} if lines.height > content.height else {})


def part_name(task: FileTask, piece: int, batch: int) -> str:
    """The name of the events part of batch ``batch`` of range ``piece`` of a file (0, 0 for a file read in one batch)."""
    return f"{file_key(task.provenance)}-{task.run_id}-{piece:04d}-{batch:05d}"


def finish_events(events: pl.DataFrame, ctx: ParseContext, source_name: str) -> pl.DataFrame:
    """Fill provenance, host, source, template ids and event ids; conform to the schema. The host an event names wins over
    the folder's where its source says so (``host_in_content``) or the parser's ``host_named`` column does, row by row."""
    return finish_batch_events(events, [ctx], source_name)


def finish_batch_events(events: pl.DataFrame, contexts: Sequence[ParseContext], source_name: str) -> pl.DataFrame:
    """:func:`finish_events` of the events of several files at once, each with its own context.

    The events of several files carry a ``batch_file`` column (the file's place in
    ``contexts``; lines numbered from each file's own first line), which the result keeps
    so that the caller can tell the files' events apart. One pass over a small-files
    group costs what one file did (about 3 ms of polars queries and expression building).
    """
    if events.height == 0:
        return schema.empty(schema.EVENT_SCHEMA)
    batch = "batch_file" in events.columns
    hosts = [ctx.host or None for ctx in contexts]
    host = per_file(hosts, pl.String)
    content_first = sources.get(source_name).host_in_content
    # A row whose host a collector, a log tailer or a log service's export named (the parser's ``host_named``) came from that
    # node, whatever the folder.
    named = pl.col("host_named").fill_null(False) if "host_named" in events.columns else pl.lit(False)
    event_host_first = named | content_first
    scopes = [ctx.scope() for ctx in contexts]
    scoped = dict.fromkeys(name for scope in scopes for name in scope)
    beside = [name for name in ("batch_file", "host_named") if name in events.columns]
    conformed = schema.conform(events.drop(beside), schema.EVENT_SCHEMA).hstack([events[name] for name in beside])
    filled = conformed.with_columns(
        host=pl.when(event_host_first).then(pl.coalesce(pl.col("host"), host)).otherwise(pl.coalesce(host, pl.col("host")))
        if any(hosts) else pl.col("host"),
        source=pl.col("source").fill_null(source_name),
        format=pl.col("format").fill_null(source_name),
        kind=pl.col("kind").fill_null("log"),
        ts_quality=pl.when(pl.col("ts").is_null() & pl.col("ts_quality").is_in(["exact", "year_inferred", "year_from_mtime", "boot_aligned", "inherited"]))
        .then(pl.lit("missing"))
        .otherwise(pl.col("ts_quality").fill_null(pl.when(pl.col("ts").is_null()).then(pl.lit("missing")).otherwise(pl.lit("exact")))),
        n_lines=pl.col("n_lines").fill_null(1),
        file=per_file([ctx.file for ctx in contexts], pl.String),
        **{name: pl.col(name).fill_null(per_file([scope.get(name) for scope in scopes], pl.String)) for name in scoped},
    )
    # Small files parsed together come with the ids of the whole batch (rca._small_files).
    known = filled["template_id"].null_count() == 0
    with_ids = filled if known else filled.with_columns(template_id=templates.template_ids(filled["message"]))
    # A stable sort keeps the events of one line in parser order, so the ordinal counts them.
    order = ["batch_file", "line"] if batch else ["line"]
    ordered = with_ids if not batch and with_ids["line"].is_sorted() else with_ids.sort(order, maintain_order=True)
    row = pl.int_range(pl.len())
    new_line = pl.any_horizontal(pl.col(name).ne_missing(pl.col(name).shift(1)) for name in order)
    ordinal = row - pl.when(new_line).then(row).forward_fill()
    key = per_file([file_key(ctx.file) for ctx in contexts], pl.String)
    return ordered.with_columns(event_id=pl.format("{}:{}:{}", key, pl.col("line"), ordinal)).drop("host_named", strict=False)


YearHint = int | datetime | None
"""A file's year (of its first fully dated line), or the latest moment its yearless lines can
describe (the end of the journal that journalctl's banner names), or None."""


def year_hint(texts: pl.Series) -> YearHint:
    """:data:`YearHint` of a batch's lines.

    The head is searched first: a dated file shows it in its first lines, and the batch
    behind them can be 32 MiB.
    """
    return year_hints([texts])[0]


def year_hints(texts: Sequence[pl.Series]) -> list[YearHint]:
    """:data:`YearHint` of each of several files' lines, found in one query per pass.

    The heads are searched first, and the rest only of the files whose head has no date.
    """
    heads = [lines.head(HEAD_LINES) for lines in texts]
    ends = _first_found(heads, lambda lines: lines.str.extract(_JOURNAL_END, 1))
    years = _first_found(heads, _dated_years)
    hints: list[YearHint] = [
        datetime.strptime(end, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC) if end is not None else None if year is None else int(year)
        for end, year in zip(ends, years, strict=True)
    ]
    undated = [number for number, hint in enumerate(hints) if hint is None and texts[number].len() > HEAD_LINES]
    for number, year in zip(undated, _first_found([texts[number].slice(HEAD_LINES) for number in undated], _dated_years), strict=True):
        hints[number] = None if year is None else int(year)
    return hints


def _dated_years(lines: pl.Series) -> pl.Series:
    """The year of each line's :data:`_DATED` match."""
    groups = lines.str.extract_groups(_DATED)
    return groups.struct.field("iso").fill_null(groups.struct.field("us")).fill_null(groups.struct.field("ctime"))


def _first_found(texts: Sequence[pl.Series], find: Callable[[pl.Series], pl.Series]) -> list[str | None]:
    """The first non-null value ``find`` gives of each of ``texts``' lines, in one query over them all."""
    lengths = [lines.len() for lines in texts]
    if not any(lengths):
        return [None] * len(texts)
    owner = pl.Series("file", range(len(texts)), dtype=pl.Int32).repeat_by(pl.Series(lengths, dtype=pl.UInt32)).explode()
    found = pl.DataFrame({"file": owner, "value": find(pl.concat(list(texts)))}).drop_nulls("value")
    first = dict(found.group_by("file").agg(pl.col("value").first()).iter_rows())
    return [first.get(number) for number in range(len(texts))]


def parse_text(
    text: str,
    *,
    file: str = "<text>",
    format: str | None = None,
    host: str | None = None,
    tz: str = "UTC",
    year: int | None = None,
    reference_time: datetime | None = None,
    boot_time: datetime | None = None,
) -> pl.DataFrame:
    """Parse a string as if it were a file; the format is sniffed unless given.

    This is the whole per-file pipeline minus the disk, for notebooks and tests.
    """
    lines = sources.lines_frame(text)
    source = sources.get(format) if format else _sniff_or_fallback(lines["text"], file)
    ctx = _context(file, host, tz, year, reference_time, boot_time, year_hint(lines["text"]) if year is None else None)
    events, _ = parse_lines(lines, ctx, source)
    return events


def _context(file: str, host: str | None, tz: str, year: int | None, reference_time: datetime | None,
             boot_time: datetime | None, hinted: YearHint) -> ParseContext:
    """The context of a file whose year is ``year`` when given, else ``hinted`` (:func:`year_hint`), else its mtime's."""
    if year is not None:
        return ParseContext(file=file, host=host, tz=tz, year=year, reference_time=reference_time, boot_time=boot_time)
    if isinstance(hinted, datetime):
        return ParseContext(file=file, host=host, tz=tz, reference_time=hinted, boot_time=boot_time, reference_quality="year_inferred")
    if hinted is not None:
        return ParseContext(file=file, host=host, tz=tz, year=hinted, reference_time=reference_time, boot_time=boot_time)
    return ParseContext(file=file, host=host, tz=tz, reference_time=reference_time, boot_time=boot_time, year_quality="year_from_mtime")


def _sniff_or_fallback(texts: pl.Series, path: str) -> Source:
    return sniff_files([(texts, path)])[0]


def sniff_files(files: Sequence[tuple[pl.Series, str]]) -> list[Source]:
    """The source of each file (its lines, its path): the best sniffer of its head, or what claims its name, or pipeline."""
    heads = [[t for t in texts.head(HEAD_LINES * 4).to_list() if t.strip()][:HEAD_LINES] for texts, _ in files]
    chosen = []
    for (_, path), head, (source, score) in zip(files, heads, sources.sniff_many(heads), strict=True):
        named, named_score = sources.claim_by_name(path, head)
        chosen.append(named if named_score > score else source or sources.get("pipeline"))
    return chosen


# --- the per-file task ------------------------------------------------------------


@dataclass(frozen=True)
class Previous:
    """What the manifest remembers of a file from the last run that read it."""

    bytes: int
    mtime: datetime | None
    sha256: str | None
    lines: int
    parts: tuple[str, ...]
    row: dict
    read_otherwise: bool = False  # read with other options (--tz, --year, …) than this run's: read again, whole

    def stands_for(self, sha256: str | None) -> bool:
        """Whether the events read before are those of content hashing to ``sha256``, read as this run reads."""
        return not self.read_otherwise and self.sha256 == sha256


@dataclass(frozen=True)
class FileTask:
    """One file to read: where it is, what to call it, and what was read of it before."""

    path: str
    provenance: str
    host: str | None
    staging: str
    run_id: str
    options: IngestOptions
    previous: Previous | None = None
    problem: str | None = None  # set by the planner for entries that cannot be read at all
    members: dict[str, Previous] = field(default_factory=dict)  # an archive's or bundle's earlier member rows
    scope: dict[str, str] = field(default_factory=dict)  # pod / namespace / container / container id the layout names


@dataclass
class FileResult:
    """A task's answer: the file's new manifest row and the parts it staged."""

    manifest: dict
    new_parts: list[str] = field(default_factory=list)
    dropped_parts: list[str] = field(default_factory=list)
    change: str = "new"  # new / appended / grown (read whole again) / rewritten / unchanged / failed / ignored / removed (a member gone from its archive)
    event_groups: pl.DataFrame | None = None  # the events it staged, tallied for the run's summary (rca.summary.event_groups)


def parse_file(task: FileTask, writer: PartWriter | None = None) -> FileResult:
    """Read, sniff and parse one file; write its event parts into ``task.staging`` (or hand them to ``writer``).

    Pure apart from writing its own part files: safe to run in any process or on a
    Dask worker. Never raises for bad input: problems go into the manifest row.
    """
    writer = writer or PartWriter(task.staging)
    dropped = list(task.previous.parts) if task.previous else []
    if task.problem:
        if task.problem in _IGNORED_REASONS:
            return FileResult(_manifest_row(task, status="ignored", error=task.problem), dropped_parts=dropped, change="ignored")
        return FileResult(_manifest_row(task, status="skipped", error=task.problem), dropped_parts=dropped, change="failed")
    try:
        stat = os.stat(task.path)
    except OSError as err:
        return FileResult(_manifest_row(task, status="error", error=f"cannot stat: {err.strerror}"), dropped_parts=dropped, change="failed")
    mtime = datetime.fromtimestamp(stat.st_mtime, UTC)
    if _unchanged(task.previous, stat.st_size, mtime):
        return FileResult(task.previous.row, change="unchanged")
    try:
        whole = _whole_file_source(task)
        if whole is not None:
            return _parse_whole_file(task, whole, stat.st_size, mtime, writer)
        return _read_and_parse(task, stat.st_size, mtime, writer)
    except _reader.BinaryFileError as err:
        return _failed(task, stat.st_size, mtime, "skipped", f"not a text log: {err}")
    except OSError as err:
        return _failed(task, stat.st_size, mtime, "error", f"cannot read: {err.strerror or err}")


def _unchanged(previous: Previous | None, size: int, mtime: datetime) -> bool:
    return bool(previous and not previous.read_otherwise and previous.bytes == size and previous.mtime and abs((previous.mtime - mtime).total_seconds()) < 1e-3)


def _failed(task: FileTask, size: int, mtime: datetime, status: str, error: str) -> FileResult:
    dropped = list(task.previous.parts) if task.previous else []
    return FileResult(_manifest_row(task, status=status, error=error, bytes=size, mtime=mtime), dropped_parts=dropped, change="failed")


def _read_and_parse(task: FileTask, size: int, mtime: datetime, writer: PartWriter) -> FileResult:
    resume = _resume_point(task, size, mtime)
    state = _reader.ReadState()
    batches = _reader.iter_batches(
        task.path, state, start=resume.start, first_line=resume.first_line,
        batch_bytes=task.options.batch_bytes, max_line_chars=task.options.max_line_chars,
    )
    source = appended_source(task) if resume.change == "appended" else None
    return parse_batches(task, batches, state, size=size, mtime=mtime, change=resume.change, source=source, ctx=resume.ctx, writer=writer)


def parse_batches(
    task: FileTask, batches: Iterable[_reader.Batch], state: _reader.ReadState, *, size: int, mtime: datetime, change: str = "new",
    source: Source | None = None, ctx: ParseContext | None = None, writer: PartWriter | None = None,
) -> FileResult:
    """Sniff (unless ``source`` is given) and parse a file's batches of lines (read from disk, an archive member or a bundle's section).

    Writes the event parts into ``task.staging`` (or hands them to ``writer``); ``change``
    says whether ``task.previous``'s parts are kept ("appended") or replaced.
    """
    accounting, parts, source = _parse_into_parts(task, batches, mtime, source=source, ctx=ctx, writer=writer)
    accounting.decode_errors, accounting.truncated = state.decode_errors, state.truncated_lines
    return _file_result(
        task, accounting, parts, source.name if source else None,
        size=size, mtime=mtime, change=change, sha256=state.sha256.hexdigest(), damage=state.problems,
    )


def _parse_into_parts(
    task: FileTask, batches: Iterable[_reader.Batch], mtime: datetime, *, piece: int = 0,
    source: Source | None = None, ctx: ParseContext | None = None, writer: PartWriter | None = None,
) -> tuple[_Accounting, list[str], Source | None]:
    """Parse batches of lines into event parts in ``task.staging``.

    The source and the context come from the first batch unless given (a byte range of a
    large file gets those of the file). ``piece`` numbers the range, so the parts of every
    range of a file have their own names. A batch is read below the lines its source carries
    from the batches before it, and a record it ends in may be held back for the next (rca._carry).
    """
    accounting = _Accounting()
    parts: list[str] = []
    writer = writer or PartWriter(task.staging)
    carry: Carry | None = None
    for number, (batch, more) in enumerate(_with_more(batches)):
        if source is None:
            source = sources.get(task.options.format) if task.options.format else _sniff_or_fallback(batch.lines["text"], task.provenance)
        if ctx is None:
            ctx = _task_context(task, mtime, batch.lines["text"])
        carry = carry or Carry(source, functools.partial(_rows_and_skipped, ctx=ctx, source=source))
        lines = carry.above(batch.lines)
        rows, skipped, failure = parse_rows(lines, ctx, source)
        rows, skipped = carry.without_carried(rows, skipped)
        held = 0
        if more:  # (what the last batch would hand on has no batch to go to)
            rows, held = carry.hold_back(rows, lines)
            carry.take(lines)
        accounting.failures += [failure] if failure else []
        events = finish_events(rows, ctx, source.name)
        accounting.add(carry.own_lines - held, events, skipped)
        parts += writer.write(events, part_name(task, piece, number))
    return accounting, parts, source


def _with_more(batches: Iterable[_reader.Batch]) -> Iterator[tuple[_reader.Batch, bool]]:
    """Each batch, and whether another follows it (read one ahead; a batch read before a failed read is still parsed)."""
    ahead = iter(batches)
    current = next(ahead, None)
    while current is not None:
        try:
            following = next(ahead, None)
        except OSError:
            yield current, False
            raise
        yield current, following is not None
        current = following


def _rows_and_skipped(lines: pl.DataFrame, ctx: ParseContext, source: Source) -> tuple[pl.DataFrame, dict[str, int]]:
    return parse_rows(lines, ctx, source)[:2]


def _failure_note(source_name: str, lines: pl.DataFrame, err: BaseException) -> str:
    first, last = lines["line"].min(), lines["line"].max()
    reason = " ".join(f"{type(err).__name__}: {err}".split())[:300]
    return f"the {source_name} parser failed on lines {first}-{last} ({reason}); those lines were kept as kind=log events"


def _file_result(
    task: FileTask, accounting: _Accounting, parts: list[str], source_name: str | None, *,
    size: int, mtime: datetime, change: str, sha256: str, damage: str | None,
) -> FileResult:
    """A read file's manifest row; an appended file keeps its earlier parts and adds to its earlier totals."""
    appended = change == "appended" and task.previous is not None
    kept = list(task.previous.parts) if appended else []
    dropped = list(task.previous.parts) if task.previous and not appended else []
    totals = accounting.merged_with(task.previous.row) if appended else accounting
    row = _manifest_row(
        task,
        status="warning" if (damage or accounting.decode_errors or accounting.truncated or accounting.failures) else "ok",
        error=damage or _warnings(accounting),
        bytes=size,
        mtime=mtime,
        sha256=sha256,
        source=source_name or (task.previous.row["source"] if appended else None),
        format=accounting.main_format() or (task.previous.row["format"] if appended else None),
        parts=kept + parts,
        **totals.as_manifest(),
    )
    if accounting.lines == 0 and change != "appended":
        row.update(status="skipped" if not damage else "warning", error=damage or "empty file")
    elif accounting.events and not accounting.recognised:
        note = "format not recognised: no timestamps or known records found; lines kept as kind=log events"
        row.update(status="warning", error="; ".join(filter(None, [row["error"], note])))
    return FileResult(row, new_parts=parts, dropped_parts=dropped, change=change, event_groups=accounting.event_groups())


def _whole_file_source(task: FileTask) -> Source | None:
    """The binary source that reads this file whole, if one recognises its first bytes (of a gzip file, its content's)."""
    try:
        head = _expanded(_head(task.path), WHOLE_FILE_PROBE, whole=False)
    except (OSError, EOFError, zlib.error):
        return None  # a damaged gzip file: the line reader reports it
    if not task.options.format:
        return sources.sniff_bytes(head)
    forced = sources.get(task.options.format)
    return forced if forced.sniff_bytes and forced.sniff_bytes(head) > 0 else None


def _parse_whole_file(task: FileTask, source: Source, size: int, mtime: datetime, writer: PartWriter) -> FileResult:
    """Parse a binary file in one piece; it counts as one line, covered by its first event or skipped, unless its parser
    says how many records it read (a journal's entries: each a line of the manifest)."""
    if size > MAX_WHOLE_FILE_BYTES:
        return _failed(task, size, mtime, "error", f"{source.name} file of {size:,} bytes is over the {MAX_WHOLE_FILE_BYTES:,}-byte limit")
    raw = Path(task.path).read_bytes()
    try:
        data = _expanded(raw, MAX_WHOLE_FILE_BYTES + 1)
    except (OSError, EOFError, zlib.error) as err:
        return _failed(task, size, mtime, "error", f"damaged gzip file: {err}")
    if len(data) > MAX_WHOLE_FILE_BYTES:
        return _failed(task, size, mtime, "error", f"{source.name} file expands past the {MAX_WHOLE_FILE_BYTES:,}-byte limit")
    ctx = task_context(task, mtime, None)
    try:
        parsed = source.parse_bytes(data, ctx)
    except SOURCE_FAILURES as err:
        reason = str(err) if isinstance(err, FileFormatError) else f"the {source.name} parser failed: {type(err).__name__}: {err}"
        failed = _failed(task, size, mtime, "error", reason)
        failed.manifest["source"] = source.name
        return failed
    events = finish_events(parsed.events, ctx, source.name)
    accounting = _Accounting()
    accounting.add(1 if parsed.lines is None else parsed.lines, events, parsed.skipped)
    parts = writer.write(events, part_name(task, 0, 0))
    row = _manifest_row(
        task, status="ok", bytes=size, mtime=mtime, sha256=hashlib.sha256(raw).hexdigest(), source=source.name,
        format=accounting.main_format(), parts=parts, **accounting.as_manifest(),
    )
    dropped = list(task.previous.parts) if task.previous else []
    return FileResult(row, new_parts=parts, dropped_parts=dropped, change="rewritten" if task.previous else "new", event_groups=accounting.event_groups())


def _head(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(WHOLE_FILE_PROBE)


def _expanded(data: bytes, limit: int, *, whole: bool = True) -> bytes:
    """``data``, gunzipped when it is gzip (a journal or a snapshot compressed before it was copied), to at most ``limit`` bytes.

    Of a ``whole`` file, a gzip stream that ends early raises EOFError; of its first bytes, they give what they hold.
    """
    if not data.startswith(_reader.GZIP_MAGIC):
        return data[:limit]
    stream = zlib.decompressobj(wbits=31)  # 31: the gzip header and trailer
    expanded = stream.decompress(data, limit)
    if whole and not stream.eof and len(expanded) < limit:
        raise EOFError("the gzip stream ends early")
    return expanded


@dataclass(frozen=True)
class Resume:
    """Where to read a file from, its change ("new", "appended", "grown", "rewritten"), and of an appended file the
    context its new lines are parsed in: the one a fresh read of the whole file gives, as its year comes from its head."""

    start: int
    first_line: int
    change: str
    ctx: ParseContext | None = None


def _resume_point(task: FileTask, size: int, mtime: datetime) -> Resume:
    """After the old bytes if the file only grew and what grew reads on its own ("appended"), else from the top."""
    previous = task.previous
    if previous is None:
        return Resume(0, 1, "new")
    if not only_grew(task, size):
        return Resume(0, 1, "rewritten")
    if may_append(task):
        ctx = fresh_context(task, mtime, size)
        if _appends_cleanly(task, size, ctx):
            return Resume(previous.bytes, previous.lines + 1, "appended", ctx)
    return Resume(0, 1, "grown")


def only_grew(task: FileTask, size: int) -> bool:
    """Whether the file only grew since the last run read it: longer, its old bytes unchanged and read as they are
    (not compressed, not transcoded), and read with this run's options."""
    previous = task.previous
    if previous is None or size <= previous.bytes or not previous.sha256 or previous.read_otherwise or not _reader.reads_by_offset(task.path):
        return False
    return _reader.prefix_digest(task.path, previous.bytes) == previous.sha256


def may_append(task: FileTask) -> bool:
    """Whether the bytes a file that :func:`only_grew` has gained may be read from its old end, if its seam holds.

    Its old bytes must be more than the window a seam is checked in, and its source must
    read line by line (a CSV's rows need the header far above).
    """
    if task.previous is None or task.previous.bytes <= _split.WINDOW_BYTES:
        return False  # checking the seam would parse all of the old bytes: reading them again costs no more
    source = appended_source(task)
    return source is not None and source.line_local


def fresh_context(task: FileTask, mtime: datetime, size: int) -> ParseContext:
    """The context a fresh read gives the lines of a plain file of ``size`` bytes: a yearless time takes the year its first
    batch's first dated line gives (or the journal's end its banner names), which the old bytes may hold."""
    return _first_range_context(task, mtime, 0, min(size, task.options.batch_bytes))


def _appends_cleanly(task: FileTask, size: int, ctx: ParseContext) -> bool:
    """Whether what was appended to a file reads the same on its own as after the file's earlier lines.

    No record may run on from the earlier bytes into the new ones (a traceback the earlier
    run saw cut), and no table the file opens with may (its new rows need its header). Else
    the file is read again whole, so an incremental store equals a fresh one.
    """
    source = appended_source(task)
    try:
        if source.carried_lines is not None and _opens_carried_table(source, _head_lines(task, 0, size)):
            return False  # (only a source that carries lines reads the file's head for it)
        return _split.holds_cut(task.path, task.previous.bytes, size, task.options.max_line_chars, lambda lines: parse_lines(lines, ctx, source)[0])
    except (OSError, _reader.BinaryFileError, StopIteration, *SOURCE_FAILURES):
        return False


def appended_source(task: FileTask) -> Source | None:
    """The source that read the file's earlier bytes, which reads what was appended to them too."""
    name = task.options.format or (task.previous.row.get("source") if task.previous else None)
    return sources.get(name) if name else None


def _task_context(task: FileTask, mtime: datetime, head: pl.Series) -> ParseContext:
    return task_context(task, mtime, year_hint(head) if task.options.year is None else None)


def task_context(task: FileTask, mtime: datetime, hinted: YearHint) -> ParseContext:
    """The context of the task's file, modified at ``mtime``, whose lines' :func:`year_hint` is ``hinted``."""
    options = task.options
    ctx = _context(task.provenance, options.host or task.host, options.tz, options.year, mtime, options.boot_time, hinted)
    return replace(ctx, **task.scope) if task.scope else ctx


def _warnings(accounting: _Accounting) -> str | None:
    notes = list(accounting.failures)
    if accounting.decode_errors:
        notes.append(f"{accounting.decode_errors} lines held invalid UTF-8 (kept with U+FFFD)")
    if accounting.truncated:
        notes.append(f"{accounting.truncated} lines longer than the line limit were cut")
    return "; ".join(notes) or None


LINE_COUNTS = ("lines", "events", "derived_events", "merged_lines", "skipped_lines", "unparsed_lines", "decode_errors", "truncated_lines")
"""The manifest's counts of what was read from a file's lines: all 0 for a file not read."""


def _manifest_row(task: FileTask, **values: object) -> dict:
    row: dict = {name: None for name in schema.MANIFEST_SCHEMA}
    row.update(path=task.provenance, file_key=file_key(task.provenance), host=task.options.host or task.host, run_id=task.run_id, parts=[])
    row.update(dict.fromkeys(("bytes", *LINE_COUNTS), 0))
    row.update(values)
    return row


def event_tallies(events: pl.DataFrame) -> dict[int, dict]:
    """What the manifest counts of finished events, by ``batch_file`` (all under 0 without that column).

    Each tally holds ``events``, ``covering`` (events that cover lines), ``covered_lines``,
    ``unparsed`` (``kind=log``), ``recognised`` and ``formats`` (``format``/``count`` pairs).
    """
    file = pl.col("batch_file") if "batch_file" in events.columns else pl.lit(0, pl.Int32).alias("batch_file")
    covers = pl.col("n_lines") > 0
    log = pl.col("kind") == "log"
    tallies = events.group_by(file).agg(
        events=pl.len(),
        covering=covers.sum(),
        covered_lines=pl.col("n_lines").filter(covers).sum(),
        unparsed=log.sum(),
        # A format of its own (NCCL_DEBUG lines, JSON lines) is recognised even without a time.
        # (An exit code is a fact too: a CI job's "script returned exit code -1" has no time and is no kill; so is a level a
        # line's own words give: npm's "npm ERR! …", a driver container's "Could not unload NVIDIA driver kernel modules".)
        recognised=(
            ~log | pl.col("ts").is_not_null() | pl.col("boot_seconds").is_not_null() | pl.col("attrs").is_not_null()
            | pl.col("exit_code").is_not_null() | pl.col("severity").is_not_null() | ~pl.col("format").is_in(["text", "unparsed"])
        ).sum(),
        formats=pl.col("format").value_counts(),
    )
    return {tally.pop("batch_file"): tally for tally in tallies.iter_rows(named=True)}


@dataclass
class _Accounting:
    lines: int = 0
    events: int = 0
    derived: int = 0
    merged: int = 0
    unparsed: int = 0
    decode_errors: int = 0
    truncated: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    formats: Counter[str] = field(default_factory=Counter)
    recognised: int = 0  # events with a time, a kind other than log, facts in attrs, or a format other than plain text
    failures: list[str] = field(default_factory=list)  # batches the parser failed on (their lines kept unparsed)
    groups: list[pl.DataFrame] = field(default_factory=list)  # each batch's rca.summary.event_groups

    def add(self, lines: int, events: pl.DataFrame, skipped: dict[str, int]) -> None:
        """Count a batch: its lines, its finished events and its skipped lines by reason."""
        groups = summary.event_groups(events) if events.height else None
        self.add_tally(lines, next(iter(event_tallies(events).values()), None), skipped, groups)

    def add_tally(self, lines: int, tally: dict | None, skipped: dict[str, int], groups: pl.DataFrame | None = None) -> None:
        """Count a batch from the :func:`event_tallies` of its events (None: it has none) and their
        :func:`rca.summary.event_groups`."""
        self.lines += lines
        self.skipped.update(skipped)
        if groups is not None:
            self.groups.append(groups)
        if tally is None:
            return
        self.events += tally["events"]
        self.derived += tally["events"] - tally["covering"]
        self.merged += int(tally["covered_lines"] or 0) - tally["covering"]
        self.unparsed += tally["unparsed"]
        self.recognised += tally["recognised"]
        self.formats.update({count["format"]: count["count"] for count in tally["formats"]})

    def event_groups(self) -> pl.DataFrame | None:
        """The :func:`rca.summary.event_groups` of every batch counted, one after the other (the run's summary sums them
        all once: a sum per file cost more than the whole summary); None when there were none."""
        return pl.concat(self.groups) if self.groups else None

    def main_format(self) -> str | None:
        """The sub-format most of the file's events were read as (the first by name on a tie)."""
        return min(self.formats.items(), key=lambda item: (-item[1], item[0] or ""))[0] if self.formats else None

    def plus(self, other: _Accounting) -> _Accounting:
        """The totals of two byte ranges of one file."""
        return _Accounting(
            lines=self.lines + other.lines,
            events=self.events + other.events,
            derived=self.derived + other.derived,
            merged=self.merged + other.merged,
            unparsed=self.unparsed + other.unparsed,
            decode_errors=self.decode_errors + other.decode_errors,
            truncated=self.truncated + other.truncated,
            skipped=self.skipped + other.skipped,
            formats=self.formats + other.formats,
            recognised=self.recognised + other.recognised,
            failures=self.failures + other.failures,
            groups=self.groups + other.groups,
        )

    def merged_with(self, previous: dict) -> _Accounting:
        """Totals of an appended file: what the earlier runs counted plus this run's tail."""
        combined = _Accounting(
            lines=self.lines + previous["lines"],
            events=self.events + previous["events"],
            derived=self.derived + previous["derived_events"],
            merged=self.merged + previous["merged_lines"],
            unparsed=self.unparsed + previous["unparsed_lines"],
            decode_errors=self.decode_errors + previous["decode_errors"],
            truncated=self.truncated + previous["truncated_lines"],
        )
        combined.skipped.update(json.loads(previous["skipped_reasons"] or "{}"))
        combined.skipped.update(self.skipped)
        return combined

    def as_manifest(self) -> dict:
        return {
            "lines": self.lines,
            "events": self.events,
            "derived_events": self.derived,
            "merged_lines": self.merged,
            "skipped_lines": sum(self.skipped.values()),
            "skipped_reasons": json.dumps(dict(sorted(self.skipped.items()))),
            "unparsed_lines": self.unparsed,
            "decode_errors": self.decode_errors,
            "truncated_lines": self.truncated,
        }


# --- large files: byte ranges ---------------------------------------------------------


@dataclass(frozen=True)
class SplitPlan:
    """A large plain-text file cut into byte ranges, with what the ranges share: source, context, digest."""

    task: FileTask
    size: int
    mtime: datetime
    change: str
    sha256: str
    source: str
    ctx: ParseContext
    ranges: tuple[_split.ByteRange, ...]


@dataclass(frozen=True)
class RangeTask:
    """Range ``piece`` of a split file."""

    plan: SplitPlan
    piece: int


@dataclass
class RangeResult:
    """What parsing one byte range counted and staged (``error`` when it could not be read)."""

    piece: int
    accounting: _Accounting
    parts: list[str]
    error: str | None = None


def split_plan(task: FileTask) -> SplitPlan | None:
    """Byte ranges of a file worth cutting, or None to read it in one task.

    A file is cut when what is left to read is more than one batch, it is plain text (not
    gzip, not a binary format read whole), its source is ``line_local`` and its first lines
    open no table that the source carries from batch to batch. The source and
    the context are fixed once for the file (the year from the first dated line of its first
    range, as a whole read takes it from its first batch), the digest is of the whole file,
    and each range knows the number of its first line, so the ranges' events, ids and
    totals are those of reading the same ranges one after the other in one process. The
    cuts depend on the bytes and ``options.batch_bytes`` only, never on the workers.
    """
    options = task.options
    if task.problem:
        return None
    try:
        stat = os.stat(task.path)
        mtime = datetime.fromtimestamp(stat.st_mtime, UTC)
        if stat.st_size <= options.batch_bytes or _unchanged(task.previous, stat.st_size, mtime):
            return None
        if not _reader.reads_by_offset(task.path) or _whole_file_source(task) is not None:
            return None
        resume = _resume_point(task, stat.st_size, mtime)
        start, first_line, change = resume.start, resume.first_line, resume.change
        if stat.st_size - start <= options.batch_bytes:
            return None
        head = _head_lines(task, start, stat.st_size)
        if change == "appended":
            source = appended_source(task)
        else:
            source = sources.get(options.format) if options.format else _sniff_or_fallback(head["text"], task.provenance)
        if not source.line_local or _opens_carried_table(source, head):
            return None
        probe = resume.ctx or _task_context(task, mtime, head["text"])
        cuts = _split.find_cuts(
            task.path, start, stat.st_size, options.batch_bytes, options.max_line_chars, lambda lines: parse_lines(lines, probe, source)[0]
        )
        if not cuts:
            return None
        ctx = resume.ctx or _first_range_context(task, mtime, start, cuts[0])
        sha256, lines_before = _split.digest_and_line_counts(task.path, stat.st_size, start, cuts)
    except (OSError, _reader.BinaryFileError, StopIteration, *SOURCE_FAILURES):
        return None  # read whole, where parse_file reports what is wrong with it (or keeps lines its parser fails on)
    ranges = _split.ranges(start, stat.st_size, first_line, cuts, lines_before)
    return SplitPlan(task, stat.st_size, mtime, change, sha256, source.name, ctx, tuple(ranges))


_HEAD_BYTES = 1 << 20


def _head_lines(task: FileTask, start: int, size: int) -> pl.DataFrame:
    """The whole lines of the file's first ``_HEAD_BYTES`` from ``start`` on."""
    return next(_reader.iter_batches(
        task.path, _reader.ReadState(), start=start, end=min(size, start + _HEAD_BYTES),
        batch_bytes=_HEAD_BYTES, max_line_chars=task.options.max_line_chars,
    )).lines


def _opens_carried_table(source: Source, head: pl.DataFrame) -> bool:
    """Whether a table whose rows need its header runs past the file's first lines: such a file is read in order.

    (A range cut from the middle knows no header; one opened farther down than a cut's window reaches is not seen here.)
    """
    return source.carried_lines is not None and source.carried_lines(head).height > 0


def _first_range_context(task: FileTask, mtime: datetime, start: int, end: int) -> ParseContext:
    if task.options.year is None:
        pieces = _reader.iter_batches(
            task.path, _reader.ReadState(), start=start, end=end, batch_bytes=_HEAD_BYTES, max_line_chars=task.options.max_line_chars
        )
        for piece in pieces:
            if year_hint(piece.lines["text"]) is not None:
                return _task_context(task, mtime, piece.lines["text"])
    return _task_context(task, mtime, pl.Series("text", [], dtype=pl.String))


def parse_range(task: RangeTask) -> RangeResult:
    """Parse one byte range of a split file, as one batch, into its own parts."""
    plan, piece = task.plan, task.plan.ranges[task.piece]
    state = _reader.ReadState()
    batches = _reader.iter_batches(
        plan.task.path, state, start=piece.start, end=piece.end, first_line=piece.first_line,
        batch_bytes=piece.end - piece.start, max_line_chars=plan.task.options.max_line_chars, probe=False,
    )
    try:
        accounting, parts, _ = _parse_into_parts(plan.task, batches, plan.mtime, piece=task.piece, source=sources.get(plan.source), ctx=plan.ctx)
    except OSError as err:
        return RangeResult(task.piece, _Accounting(), [], error=f"cannot read: {err.strerror or err}")
    accounting.decode_errors, accounting.truncated = state.decode_errors, state.truncated_lines
    return RangeResult(task.piece, accounting, parts)


def merge_ranges(plan: SplitPlan, results: list[RangeResult]) -> FileResult:
    """The file's result from all its ranges' results."""
    ordered = sorted(results, key=lambda result: result.piece)
    error = next((result.error for result in ordered if result.error), None)
    if error:
        return _failed(plan.task, plan.size, plan.mtime, "error", error)
    accounting = functools.reduce(_Accounting.plus, (result.accounting for result in ordered))
    parts = [name for result in ordered for name in result.parts]
    return _file_result(
        plan.task, accounting, parts, plan.source, size=plan.size, mtime=plan.mtime, change=plan.change, sha256=plan.sha256, damage=None
    )


# --- planning ----------------------------------------------------------------------


def plan(root: Path, store: Store, staging: str, run_id: str, options: IngestOptions) -> list[FileTask]:
    """One task per regular file under ``root`` (or ``root`` itself), in a stable order.

    Host comes from the layout: the first folder under ``root`` names the host, a
    sosreport its own (:class:`rca.bundles.FolderHosts`). Archives and bundle files are
    planned as one task each; their members' earlier rows travel with it. Symlinked
    folders are followed once; a loop or a second path to the same file becomes a
    skipped entry, never an endless walk.
    """
    previous = _previous_by_path(store, options)
    members = archives.members_by_container(previous)

    def task(path: str, provenance: str, host: str | None, problem: str | None = None) -> FileTask:
        return FileTask(path, provenance, host, staging, run_id, options, previous.get(provenance), problem, members.get(provenance, {}),
                        bundles.container_log_scope(provenance))

    if root.is_file():
        return [task(str(root), str(root.resolve()), None)]
    tasks = [task(path, provenance, host, problem) for path, provenance, host, problem in _walk(root, store.path)]
    return sorted(_without_copied_links(tasks), key=lambda t: t.provenance)


def _without_copied_links(tasks: list[FileTask]) -> list[FileTask]:
    """The tasks, with a copy of a kubelet ``containers/`` link whose log is also here under ``pods/`` marked skipped.

    A copy that followed the links holds each current container log twice; the one under
    ``pods/`` is read (its path also tells the container's restart). The two are told alike by
    their size and first MiB.
    """
    def container(task: FileTask) -> tuple:
        return task.host, task.scope.get("namespace"), task.scope.get("pod"), task.scope.get("container")

    logs: dict[tuple, list[FileTask]] = {}
    for task in tasks:
        if task.scope.get("pod") and task.problem is None and not bundles.is_container_link(task.provenance):
            logs.setdefault(container(task), []).append(task)
    marked = []
    for task in tasks:
        twins = logs.get(container(task), []) if task.scope.get("pod") and task.problem is None else []
        twin = next((log for log in twins if bundles.is_container_link(task.provenance) and _same_log(task.path, log.path)), None)
        marked.append(replace(task, problem=f"the same log as {twin.provenance} (a copy of kubelet's link to it)") if twin else task)
    return marked


def _same_log(path: str, other: str) -> bool:
    try:
        size = os.stat(path).st_size
        if size != os.stat(other).st_size:
            return False
    except OSError:
        return False
    head = min(size, 1 << 20)
    return _reader.prefix_digest(path, head) == _reader.prefix_digest(other, head)


ANOTHER_STORE = "an rca store (events parsed by an earlier run), not logs"
"""Why a folder is passed over: `rca ingest .` with the default ``./rca-store`` and then another ``--store`` finds the first."""
_IGNORED_REASONS = bundles.NOT_LOG_REASONS | {ANOTHER_STORE}  # an entry with one is listed as ignored, never read


def _walk(root: Path, store_path: Path | str) -> Iterable[tuple[str, str, str | None, str | None]]:
    store_real = os.path.realpath(store_path) if isinstance(store_path, Path) else None  # a remote store is in no folder
    hosts = bundles.FolderHosts(root)
    root_path = os.path.realpath(root)  # the folder read may itself be a bundle (an EKS collector's)
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: dict[tuple[int, int], str] = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=True, onerror=None):
        if os.path.realpath(directory) == store_real:
            dirnames[:] = []
            continue
        info = os.stat(directory)
        rel_dir = os.path.relpath(directory, root)
        if {MANIFEST_FILE, META_FILE} <= set(filenames):
            dirnames[:] = []  # one row for the store, not one for each of its parts
            yield directory, rel_dir, hosts.of(rel_dir), ANOTHER_STORE
            continue
        if (info.st_dev, info.st_ino) in seen_dirs:
            dirnames[:] = []
            yield directory, rel_dir, hosts.of(rel_dir), "folder already visited through another path (symlink loop?)"
            continue
        seen_dirs.add((info.st_dev, info.st_ino))
        dirnames.sort()
        pruned = {name: reason for name in dirnames if (reason := bundles.never_logs(name))}
        for name, reason in pruned.items():
            dirnames.remove(name)  # one row for the folder, not one for each of its thousands of files
            provenance = os.path.normpath(os.path.join(rel_dir, name))
            yield os.path.join(directory, name), provenance, hosts.of(provenance), reason
        for name in sorted(filenames):
            path = os.path.join(directory, name)
            provenance = os.path.normpath(os.path.join(rel_dir, name))
            try:
                st = os.stat(path)
            except OSError as err:
                yield path, provenance, hosts.of(provenance), f"unreadable entry: {err.strerror}"
                continue
            if not os.path.isfile(path):
                yield path, provenance, hosts.of(provenance), "not a regular file"
                continue
            first = seen_files.setdefault((st.st_dev, st.st_ino), provenance)
            problem = None if first == provenance else f"same file as {first}"
            problem = bundles.not_a_log(provenance, within=root_path) or problem
            yield path, provenance, hosts.of(provenance), problem


def _previous_by_path(store: Store, options: IngestOptions) -> dict[str, Previous]:
    rows = store.manifest().filter(pl.col("status").is_in(["ok", "warning", "skipped"])).to_dicts()
    read_otherwise = _runs_with_other_options(store.meta().get("runs", []), options)
    return {
        row["path"]: Previous(row["bytes"], row["mtime"], row["sha256"], row["lines"], tuple(row["parts"] or ()), row,
                              read_otherwise=row["run_id"] in read_otherwise)
        for row in rows
    }


# batch_bytes only decides how the work is cut: the events are the same whatever it is.
_READING_OPTIONS = tuple(option.name for option in fields(IngestOptions) if option.name != "batch_bytes")


def _runs_with_other_options(runs: list[dict], options: IngestOptions) -> set[str]:
    """The runs that read files with other reading options than ``options`` (an option a run does not record had its default)."""
    wanted, default = _jsonable(options), _jsonable(IngestOptions())
    return {
        run["run_id"] for run in runs
        if any(run.get("options", {}).get(name, default[name]) != wanted[name] for name in _READING_OPTIONS)
    }


# --- the driver ----------------------------------------------------------------------


@dataclass(frozen=True)
class IngestReport:
    """What a run did: per-file results and the summary figures printed at the end."""

    run_id: str
    store: Path | str
    files: pl.DataFrame
    changes: dict[str, int]  # files by what changed since the last run (FileResult.change)
    summary: dict


Progress = Callable[[FileResult], None]


def ingest(
    root: str | os.PathLike[str],
    store_path: str | os.PathLike[str] = "rca-store",
    options: IngestOptions | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    lock_wait: float = 0.0,
    on_lock_wait: Callable[[str], None] | None = None,
) -> IngestReport:
    """Ingest a folder or a file into the store; only new and changed files are read.

    The store is a folder or an fsspec URL such as ``s3://bucket/prefix`` (see :mod:`rca.store`).

    While another process writes the store, the run is refused with
    :class:`~rca.errors.StoreLockedError`, or waits up to ``lock_wait`` seconds for it
    (telling ``on_lock_wait`` who holds the lock); see :meth:`rca.store.Store.writing`.

    ``workers`` local processes (default: every core) read the files, and large files in
    byte ranges; with ``scheduler`` (a Dask scheduler's address, ``tcp://HOST:8786``) the
    same tasks run on that Dask cluster instead, whose workers must see the input at the
    same paths, and the store at the same path or URL. Either way the events are those of a serial run. Raises
    :class:`InputError` when ``root`` does not exist or the scheduler cannot be reached.
    """
    options = options or IngestOptions()
    if options.format:
        sources.get(options.format)
    root = Path(root)
    if not root.exists():
        raise InputError(f"{root} does not exist")
    store = Store(store_path)
    run_id = uuid.uuid4().hex[:12]
    started = datetime.now(UTC)
    with store.writing(lock_wait, on_lock_wait) as staging:
        tasks = plan(root, store, staging, run_id, options)
        results = _run(tasks, workers, scheduler, progress)
        # Small files read together share their parts: each is named once.
        new_parts = list(dict.fromkeys(p for r in results for p in r.new_parts))
        dropped = [p for r in results for p in r.dropped_parts]
        manifest, copies, replaced = keep_shared_parts(store, store.manifest(), _merged_manifest(store, results), staging, run_id)
        run = {"run_id": run_id, "started": started.isoformat(), "root": str(root.resolve()), "options": _jsonable(options),
               "workers": workers, "scheduler": scheduler}
        store.commit(manifest, staging, new_parts + copies, list(dict.fromkeys(dropped + replaced)), run)
    changes = Counter(r.change for r in results)
    files = manifest.filter(pl.col("path").is_in([r.manifest["path"] for r in results]))
    tallied = [r.event_groups for r in results if r.event_groups is not None]
    return IngestReport(run_id, store.path, files, dict(changes), summary.summarize(tallied, files, options.tz))


def _run(tasks: list[FileTask], workers: int | None, scheduler: str | None, progress: Progress | None) -> list[FileResult]:
    """Every entry's tasks, in this process, in worker processes or on Dask; the results in the order of ``tasks``.

    The tasks are the same wherever they run (:func:`run_task`, then :func:`parse_range`
    for each range of a split file), so the results are the same too.
    """
    results: dict[int, list[FileResult]] = {}
    plans: dict[int, SplitPlan] = {}
    pieces: dict[int, list[RangeResult]] = {}
    run_id = tasks[0].run_id if tasks else ""
    sizes = [_size(task) for task in tasks]
    with _executors.executor(_worker_count(tasks, workers), scheduler) as pool:
        # Largest first: a big file read last would leave the other workers idle while it finishes.
        for unit in sorted(_small_files.units(tasks, sizes), key=lambda unit: -sum(sizes[i] for i in unit)):
            if len(unit) == 1:
                pool.submit(run_task, tasks[unit[0]], f"rca-file-{unit[0]}-{run_id}")
            else:
                pool.submit(_small_files.run_group, _small_files.FileGroup(unit, tuple(tasks[i] for i in unit)), f"rca-group-{unit[0]}-{run_id}")
        for key, answer in pool.results():
            if isinstance(answer, _small_files.GroupResult):
                results.update(answer.results)
                for result in itertools.chain.from_iterable(answer.results.values()) if progress else ():
                    progress(result)
                continue
            index = int(key.split("-")[2])
            if isinstance(answer, SplitPlan):
                plans[index], pieces[index] = answer, []
                for piece in range(len(answer.ranges)):
                    pool.submit(parse_range, RangeTask(answer, piece), f"rca-range-{index}-{run_id}-{piece}")
                continue
            if isinstance(answer, RangeResult):
                pieces[index].append(answer)
                if len(pieces[index]) < len(plans[index].ranges):
                    continue
                answer = [merge_ranges(plans[index], pieces[index])]
            results[index] = answer
            for result in answer if progress else ():
                progress(result)
    return [result for index in range(len(tasks)) for result in results[index]]


def run_task(task: FileTask) -> list[FileResult] | SplitPlan:
    """One planned entry's first task: for an archive or a bundle file, its own and its members' results;
    for a large plain file, its byte ranges (:func:`split_plan`); for any other file, its result."""
    return archives.read_container(task) or split_plan(task) or [parse_file(task)]


def _size(task: FileTask) -> int:
    try:
        return os.stat(task.path).st_size
    except OSError:
        return 0


def _worker_count(tasks: list[FileTask], workers: int | None) -> int:
    """Processes worth starting: ``workers`` (default: every core), no more than there are batches to read."""
    wanted = workers or os.cpu_count() or 1
    batches = 0
    for task in tasks:
        batches += 1 + _size(task) // task.options.batch_bytes
        if batches >= wanted:
            return wanted
    return max(1, batches)


def _merged_manifest(store: Store, results: list[FileResult]) -> pl.DataFrame:
    fresh = pl.DataFrame([r.manifest for r in results], schema=schema.MANIFEST_SCHEMA) if results else schema.empty(schema.MANIFEST_SCHEMA)
    kept = store.manifest().filter(~pl.col("path").is_in(fresh["path"].implode()))
    return pl.concat([kept, fresh]).sort("path")


def _jsonable(options: IngestOptions) -> dict:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in asdict(options).items()}
