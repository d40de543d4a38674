"""Small files read together: one parser call for many small files of one source.

A parser's cost is mostly per call, not per line: a few dozen polars queries, each compiling
its regexes again because the other sources' patterns evicted them from polars' cache. A
folder of two hundred pod logs of a hundred lines each spends nearly all its time there
(measured on a generated 10 MB corpus: 187 pipeline files parsed one by one 7.3 s of CPU,
the same lines parsed at once 0.29 s). So small files named alike (which depends on the
folder only) form a :class:`FileGroup`, one task: each file is read and
given its context as it would be alone, and all their heads are sniffed in one pass; the
files of a ``segmented`` source are concatenated and parsed once, and the events are split
back by line. Each file still gets its own manifest row and ids, equal to those of reading
it alone: a yearless time takes its own file's year (``ParseContext.file_years``), and
where the events cannot be split back exactly the files are parsed again alone. The
group's events are written together, one part per (day, host) that every file with events
in it lists (:class:`rca.store.SharedPartWriter`). A file read before is in a group too: unchanged,
it keeps its row; grown, its new lines are read alone where its seam holds (checked for all the
group's grown files of a source at once), else, like a rewritten file, it is read again whole.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from rca import _reader, _split, archives, ingest, sources, summary, templates
from rca.sources._base import SOURCE_FAILURES, ParseContext, Parsed, Source
from rca.store import PartWriter, SharedPartWriter

# Files up to a group's size: a parse of 1–4 MiB still costs more per call than per line
# (generated 100 MB corpus, serial: 23.0 s with files up to 256 KiB grouped, 18.7 s up to
# 1 MiB, 17.5 s up to 4 MiB; the same events). Up to 256 files a group: a group of small
# files costs about 100 ms a source however few its lines (generated 10 MB corpus, 468 files,
# serial: 7.6 s in groups of up to 64 files, 6.4 s up to 256 or 512).
SMALL_FILE_BYTES = 4 * 1024 * 1024
GROUP_FILES = 256
GROUP_BYTES = 4 * 1024 * 1024
# Files of a failed parse together are halved down to this many, then parsed one by one: a parse of
# a few files costs about what one file's does, so halving further would save no parse.
HALVED_DOWN_TO = 4


@dataclass(frozen=True)
class FileGroup:
    """Small files read by one task; ``indices`` are their places in the plan."""

    indices: tuple[int, ...]
    tasks: tuple[ingest.FileTask, ...]


@dataclass
class GroupResult:
    """Each file's results, by its place in the plan."""

    results: dict[int, list[ingest.FileResult]]


def units(tasks: Sequence[ingest.FileTask], sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """The plan cut into units of work: groups of small files, and every other file alone.

    A group takes files named alike (:func:`_name_shape`) together: they are most often of
    one source, and a group pays a parse per source it holds. The cut depends on the files,
    their names and sizes only, never on the workers, so every run of the same folder reads
    the same groups.
    """
    alone = [(index,) for index, (task, size) in enumerate(zip(tasks, sizes, strict=True)) if not _groupable(task, size)]
    small = sorted(
        (index for index, (task, size) in enumerate(zip(tasks, sizes, strict=True)) if _groupable(task, size)),
        key=lambda index: (_name_shape(tasks[index].provenance), index),
    )
    cut: list[tuple[int, ...]] = []
    run: list[int] = []
    run_bytes = 0
    for index in small:
        if run and (len(run) == GROUP_FILES or run_bytes + sizes[index] > GROUP_BYTES):
            cut.append(tuple(run))
            run, run_bytes = [], 0
        run.append(index)
        run_bytes += sizes[index]
    return sorted(alone + cut + ([tuple(run)] if run else []))


_COMPRESSION_AND_ROTATION = re.compile(r"(?:\.[0-9]+)?(?:\.(?:gz|bz2|xz|zst))?$")
_DIGITS = re.compile(r"[0-9]+")


def _name_shape(provenance: str) -> str:
    """The file's name without its folder, rotation number and compression, its digits as one:
    ``host-a/gpu/nvidia-smi-query-20261125-215434.csv`` and ``host-b/gpu/nvidia-smi-query-20261123-083425.csv``
    are both ``nvidia-smi-query-0-0.csv``; ``kubelet.log.2.gz`` is ``kubelet.log``."""
    name = provenance.rsplit("/", 1)[-1]
    return _DIGITS.sub("0", _COMPRESSION_AND_ROTATION.sub("", name))


def _groupable(task: ingest.FileTask, size: int) -> bool:
    # One over a batch is cut into byte ranges instead; an archive's members are read by the archive's task.
    return size <= min(SMALL_FILE_BYTES, task.options.batch_bytes) and task.problem is None and not task.members


@dataclass
class _Read:
    """A small file read into one batch of lines, with what reading it alone would give the parser."""

    index: int
    task: ingest.FileTask
    lines: pl.DataFrame
    state: _reader.ReadState
    size: int
    mtime: datetime
    source: Source | None  # None until sniffed (:func:`_with_sources`)
    ctx: ParseContext | None  # None until :func:`_with_contexts`
    change: str = "new"  # new; appended (its new lines alone); grown or rewritten (read whole again)


@dataclass(frozen=True)
class _Grown:
    """A small file that only grew since the last run, whose new lines are read alone if its seam holds (:func:`_holding_seams`)."""

    index: int
    task: ingest.FileTask
    seam: _split.Seam
    size: int
    mtime: datetime
    ctx: ParseContext  # what a fresh read gives its lines (:func:`rca.ingest.fresh_context`)


def run_group(group: FileGroup) -> GroupResult:
    """Read every file of ``group``; parse the files of each segmented source together; write their events together."""
    first = group.tasks[0]
    writer = SharedPartWriter(first.staging, f"{ingest.file_key(first.provenance)}-{first.run_id}-group")
    results: dict[int, list[ingest.FileResult]] = {}
    loaded: list[_Read] = []
    grown: list[_Grown] = []
    for index, task in zip(group.indices, group.tasks, strict=True):
        read = _read(index, task, writer)
        if isinstance(read, list):
            results[index] = read
        elif isinstance(read, _Grown):
            grown.append(read)
        else:
            loaded.append(read)
    holding = _holding_seams(grown)
    for file in grown:
        appended = file.index in holding
        read = _read_lines(file.index, file.task, file.size, file.mtime, "appended" if appended else "grown", file.ctx if appended else None)
        if isinstance(read, list):
            results[file.index] = read
        else:
            loaded.append(read)
    together: dict[tuple, list[_Read]] = {}
    each: dict[str, list[_Read]] = {}
    for read in _with_sources(_with_contexts(loaded)):
        if not read.source.segmented:
            each.setdefault(read.source.name, []).append(read)
        else:
            together.setdefault((read.source.name, read.ctx.tz, read.ctx.boot_time), []).append(read)
    for reads in each.values():
        results.update(_parse_each(reads, writer))
    for reads in together.values():
        results.update(_parse_together(reads, writer))
    writer.flush()
    return GroupResult(results)


def _year_context(ctx: ParseContext) -> tuple[int | None, str, datetime | None]:
    """What a parser takes from ``ctx`` for a time written without a year."""
    if ctx.year is None:
        return None, ctx.reference_quality, ctx.reference_time
    return ctx.year, ctx.year_quality, None


def _read(index: int, task: ingest.FileTask, writer: PartWriter) -> _Read | _Grown | list[ingest.FileResult]:
    """The file in one batch with its context (its source is named by --format or sniffed later), a grown file's seam to
    check first, or its results when it takes another path."""
    contained = archives.read_container(task)
    if contained is not None:
        return contained
    try:
        stat = os.stat(task.path)
        mtime = datetime.fromtimestamp(stat.st_mtime, UTC)
        if ingest._unchanged(task.previous, stat.st_size, mtime):
            return [ingest.FileResult(task.previous.row, change="unchanged")]
        if ingest._whole_file_source(task) is not None:
            return [ingest.parse_file(task, writer)]
        grown = ingest.only_grew(task, stat.st_size)
        if grown and ingest.may_append(task):
            seam = _split.seam(task.path, task.previous.bytes, stat.st_size, task.options.max_line_chars)
            if seam is not None:
                return _Grown(index, task, seam, stat.st_size, mtime, ingest.fresh_context(task, mtime, stat.st_size))
    except OSError:
        return [ingest.parse_file(task)]  # which says what is wrong with it
    return _read_lines(index, task, stat.st_size, mtime, "grown" if grown else None)


def _read_lines(
    index: int, task: ingest.FileTask, size: int, mtime: datetime, change: str | None = None, ctx: ParseContext | None = None
) -> _Read | list[ingest.FileResult]:
    """The file's lines in one batch: of an "appended" file (one that grew, whose seam holds) the new ones alone, read by
    the source that read the old in ``ctx``; of any other, all of them (``change`` says why, when the file was read before)."""
    previous = task.previous
    appended = change == "appended" and previous is not None
    start, first_line = (previous.bytes, previous.lines + 1) if appended else (0, 1)
    try:
        state = _reader.ReadState()
        batches = list(_reader.iter_batches(
            task.path, state, start=start, first_line=first_line, batch_bytes=task.options.batch_bytes, max_line_chars=task.options.max_line_chars,
        ))
    except (OSError, _reader.BinaryFileError):
        return [ingest.parse_file(task)]  # which says what is wrong with it
    if len(batches) != 1:  # empty, or grown past a batch since it was planned
        return [ingest.parse_file(task)]
    if appended:
        return _Read(index, task, batches[0].lines, state, size, mtime, ingest.appended_source(task), ctx, "appended")
    source = sources.get(task.options.format) if task.options.format else None
    return _Read(index, task, batches[0].lines, state, size, mtime, source, None, change or ("rewritten" if previous else "new"))


def _holding_seams(grown: list[_Grown]) -> set[int]:
    """The grown files whose new lines parse alone as after their old ones (:func:`rca._split.holds_cut`), by place in the plan.

    The seams of the files of one source are parsed together, whole and past the old end,
    instead of each on its own: a parse of a few lines costs what a parse of many does.
    """
    holding = {file.index for file in grown if file.seam.trivial()}
    by_source: dict[tuple, list[_Grown]] = {}
    for file in grown:
        if file.index not in holding:
            by_source.setdefault((ingest.appended_source(file.task).name, file.ctx.tz, file.ctx.boot_time), []).append(file)
    for files in by_source.values():
        holding |= _holding(files)
    return holding


def _holding(files: list[_Grown]) -> set[int]:
    """Of grown files of one source, those whose seams hold (:meth:`rca._split.Seam.holds`)."""
    windows = [
        _Read(file.index, file.task, file.seam.lines, _reader.ReadState(), file.size, file.mtime, ingest.appended_source(file.task), file.ctx)
        for file in files
    ]
    whole = _events_by_file(windows, [file.seam.lines for file in files])
    after = _events_by_file(windows, [file.seam.after().with_columns(pl.col("line") - (file.seam.cut - 1)) for file in files])
    if whole is None or after is None:
        return set()
    return {
        file.index for number, file in enumerate(files)
        if file.seam.holds(whole(number), after(number).with_columns(pl.col("line") + (file.seam.cut - 1)))
    }


def _events_by_file(windows: list[_Read], pieces: list[pl.DataFrame]) -> Callable[[int], pl.DataFrame] | None:
    """The events of the pieces of lines (each numbered from 1) parsed together, by the piece's number; None if the parse failed."""
    joined = _joined_lines(pieces, [0] * len(pieces))
    parsed = _parse_joined(windows, joined.content)
    if parsed is None:
        return None
    own = _with_own_lines(parsed.events, joined.offsets)
    return lambda number: own.filter(pl.col("batch_file") == number).drop("batch_file")


def _with_contexts(reads: list[_Read]) -> list[_Read]:
    """The files with their contexts, their years looked for in one query (--year, when given, wins over them); an
    appended file's new lines keep the context of the whole file they came with."""
    hints = iter(ingest.year_hints([read.lines["text"] for read in reads if read.ctx is None]))
    return [read if read.ctx is not None else dataclasses.replace(read, ctx=ingest.task_context(read.task, read.mtime, next(hints))) for read in reads]


def _with_sources(reads: list[_Read]) -> list[_Read]:
    """The files with their sources: the heads of those --format names none are sniffed together."""
    sniffed = iter(ingest.sniff_files([(read.lines["text"], read.task.provenance) for read in reads if read.source is None]))
    return [read if read.source is not None else dataclasses.replace(read, source=next(sniffed)) for read in reads]


def _parse_each(reads: list[_Read], writer: SharedPartWriter) -> dict[int, list[ingest.FileResult]]:
    """The files of a source that reads one file at a time: a parse each, then one pass to finish, count and hold their events."""
    rows, skipped, failures = [], [], []
    for number, read in enumerate(reads):
        events, file_skipped, failure = ingest.parse_rows(read.lines, read.ctx, read.source)
        rows.append(events.with_columns(batch_file=pl.lit(number, pl.Int32)))
        skipped.append(file_skipped)
        failures.append(failure)
    return _finished(reads, pl.concat(rows), skipped, writer, failures)


def _parse_together(reads: list[_Read], writer: SharedPartWriter) -> dict[int, list[ingest.FileResult]]:
    """One parse of the files' lines, numbered on from one file to the next, split back by line.

    Wherever the split could differ from reading alone (the parse failed, the parser's
    skipped lines cannot be told apart by file, an event runs past its file's end) the
    files are read alone instead. The events of all the files are finished, counted and
    held for writing in one pass each.
    """
    # An appended file's new lines go on from its old last line: numbered from 1 in the joined parse, and back after it.
    before = [read.lines["line"][0] - 1 if read.lines.height else 0 for read in reads]
    joined = _joined_lines([read.lines for read in reads], before)
    parsed = _parse_joined(reads, joined.content)
    if parsed is None:
        return _parse_halves(reads, writer)
    own = _with_own_lines(parsed.events, joined.offsets)
    if any(before):
        own = own.with_columns(pl.col("line") + pl.col("batch_file").replace_strict(dict(enumerate(before)), return_dtype=pl.Int64))
    uncovered = [lines - covered for lines, covered in zip(joined.content_lines, _covered_by_file(own, len(reads)), strict=True)]
    skipped = _skipped_by_file(parsed, uncovered)
    if skipped is None:
        return _parse_halves(reads, writer)
    return _finished(reads, own, [{**blank, **own_skipped} for blank, own_skipped in zip(joined.blanks, skipped, strict=True)], writer)


def _parse_halves(reads: list[_Read], writer: SharedPartWriter) -> dict[int, list[ingest.FileResult]]:
    """Files whose parse together failed, or could not be split back by file: each half parsed together (and halved
    again where it fails too), so that one file a joined parse cannot take costs a few more parses, not one per file."""
    if len(reads) <= HALVED_DOWN_TO:
        return _parse_each(reads, writer)
    middle = len(reads) // 2
    return _parse_together(reads[:middle], writer) | _parse_together(reads[middle:], writer)


def _finished(
    reads: list[_Read], rows: pl.DataFrame, skipped: list[dict[str, int]], writer: SharedPartWriter, failures: Sequence[str | None] = ()
) -> dict[int, list[ingest.FileResult]]:
    """Each file's result from the rows of all of them (``batch_file``: the file's place in ``reads``), finished,
    counted and held for writing in one pass; ``skipped`` and ``failures`` (none by default) are by file too."""
    finished = ingest.finish_batch_events(rows, [read.ctx for read in reads], reads[0].source.name)
    tallies, parts = ingest.event_tallies(finished), writer.write_batch(finished)
    groups = {number: frame.drop("batch_file") for (number,), frame in summary.event_groups(finished).partition_by("batch_file", as_dict=True).items()}
    failures = failures or [None] * len(reads)
    return {
        read.index: [_file_result(read, tallies.get(number), skipped[number], parts.get(number, []), failures[number], groups.get(number))]
        for number, read in enumerate(reads)
    }


def _skipped_by_file(parsed: Parsed, uncovered: list[int]) -> list[dict[str, int]] | None:
    """Each file's skipped lines by reason, from the lines its events leave uncovered.

    None when they cannot be told apart: the parser skipped lines for more than one reason
    and did not say whose they were, or its counts do not add up to the uncovered lines.
    """
    if parsed.skipped_by_file is not None:
        by_file = [{reason: n for reason, n in parsed.skipped_by_file.get(number, {}).items() if n} for number in range(len(uncovered))]
    elif len(parsed.skipped) <= 1:
        reason = next(iter(parsed.skipped), "")
        by_file = [{reason: missing} if missing else {} for missing in uncovered]
    else:
        return None
    totals = [sum(counts.values()) for counts in by_file]
    fits = totals == uncovered and sum(totals) == sum(parsed.skipped.values()) and min(uncovered, default=0) >= 0
    return by_file if fits else None


@dataclass(frozen=True)
class _Joined:
    """Files' lines numbered on from one file to the next (``batch_file``: the file's place), blank lines left out."""

    content: pl.DataFrame
    offsets: list[int]  # the joined number of each file's line 0
    content_lines: list[int]  # each file's non-blank lines
    blanks: list[dict[str, int]]  # each file's blank lines, as skipped lines


def _joined_lines(pieces: list[pl.DataFrame], before: list[int]) -> _Joined:
    """The pieces of lines (each file's, its first line numbered ``before`` + 1) joined in one query, not one per file."""
    heights = [piece.height for piece in pieces]
    offsets = list(itertools.accumulate(heights, initial=0))[:-1]
    shifts = [offset - lines_before for offset, lines_before in zip(offsets, before, strict=True)]
    owner = pl.select(pl.Series("batch_file", range(len(pieces)), pl.Int32).repeat_by(pl.Series(heights, dtype=pl.UInt32)).explode(empty_as_null=False)).to_series()
    # One chunk: polars 2.1 can panic in string kernels on a frame concatenated from pieces (:func:`ingest.without_blank_lines`).
    numbered = pl.concat(pieces, rechunk=True).with_columns(owner).with_columns(
        pl.col("line") + pl.col("batch_file").replace_strict(dict(enumerate(shifts)), return_dtype=pl.Int64), blank=ingest.blank_line(),
    )
    blank_by_file = dict(numbered.filter("blank").group_by("batch_file").len().iter_rows())
    content = numbered.filter(~pl.col("blank")).drop("blank")
    blanks = [{"blank": blank_by_file[number]} if number in blank_by_file else {} for number in range(len(pieces))]
    return _Joined(content, offsets, [height - blank_by_file.get(number, 0) for number, height in enumerate(heights)], blanks)


def _parse_joined(reads: list[_Read], joined: pl.DataFrame) -> Parsed | None:
    """The parse of the files' joined non-blank lines (:func:`_joined_lines`) at once, with template ids; None if it failed or found nothing."""
    if joined.height == 0:
        return None
    years = tuple(_year_context(read.ctx) for read in reads)
    files = tuple((read.ctx.file, read.ctx.reference_time) for read in reads)
    ctx = dataclasses.replace(reads[0].ctx, files=files, file_years=years if len(set(years)) > 1 else ())
    try:
        parsed = reads[0].source.parse(joined, ctx)
        # Conformed here: an ill-typed column sends the files to be read one by one, each failing alone.
        rows = ingest.conformed_rows(parsed.events.drop("batch_file", strict=False))
    except SOURCE_FAILURES:
        return None  # alone, each file's failure is kept and reported
    if rows.height == 0:
        return None
    with_ids = rows.with_columns(template_id=templates.template_ids(rows["message"]))
    return Parsed(with_ids, parsed.skipped, parsed.skipped_by_file)


def _with_own_lines(events: pl.DataFrame, offsets: list[int]) -> pl.DataFrame:
    """The events with the number of their file (``batch_file``: that of their first line) and their line in it."""
    owner = pl.Series(offsets, dtype=pl.Int64).search_sorted(events["line"], side="left") - 1
    starts = pl.Series(offsets, dtype=pl.Int64).gather(owner)
    return events.with_columns(batch_file=owner.cast(pl.Int32), line=pl.col("line") - starts)


def _covered_by_file(events: pl.DataFrame, files: int) -> list[int]:
    """Lines each file's events cover (an event without ``n_lines`` covers its own)."""
    covers = pl.col("n_lines").fill_null(1) if "n_lines" in events.columns else pl.lit(1)
    counts = dict(events.group_by("batch_file").agg(covers.sum()).iter_rows())
    return [int(counts.get(number, 0)) for number in range(files)]


def _file_result(
    read: _Read, tally: dict | None, skipped: dict[str, int], parts: list[str], failure: str | None = None, groups: pl.DataFrame | None = None
) -> ingest.FileResult:
    """The file's row, as :func:`ingest.parse_batches` makes it for a file read alone."""
    accounting = ingest._Accounting(failures=[failure] if failure else [])
    accounting.add_tally(read.lines.height, tally, skipped, groups)
    accounting.decode_errors, accounting.truncated = read.state.decode_errors, read.state.truncated_lines
    return ingest._file_result(
        read.task, accounting, parts, read.source.name, size=read.size, mtime=read.mtime, change=read.change,
        sha256=read.state.sha256.hexdigest(), damage=read.state.problems,
    )
