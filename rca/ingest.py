"""Ingest: raw log files → rows of the event schema.

The work is split the way it scales: :func:`parse_file` is a pure task (one file in,
Parquet parts in a staging folder and a manifest row out) that runs the same in this
process, in a process pool or on a Dask worker; :func:`ingest` is the driver that plans
the tasks from the manifest, runs them and commits them to the store atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path

import polars as pl

from rca import _reader, schema, sources, templates
from rca.errors import InputError
from rca.sources._base import ParseContext, Source
from rca.store import Store

MAX_LINE_CHARS = 64 * 1024
BATCH_BYTES = 32 * 1024 * 1024
HEAD_LINES = 60
_DATED = re.compile(r"\b((?:19|20)\d\d)[-/](?:0[1-9]|1[0-2])[-/](?:[0-2]\d|3[01])[T ]\d\d:\d\d:\d\d")


@dataclass(frozen=True)
class IngestOptions:
    """Options that change how files are read; all of them are written to the manifest."""

    format: str | None = None
    host: str | None = None
    tz: str = "UTC"
    year: int | None = None
    boot_time: datetime | None = None
    max_line_chars: int = MAX_LINE_CHARS
    batch_bytes: int = BATCH_BYTES


def file_key(provenance: str) -> str:
    """Short stable key of a file's provenance path, the prefix of its events' ids."""
    return hashlib.blake2b(provenance.encode("utf-8"), digest_size=6).hexdigest()


def parse_lines(lines: pl.DataFrame, ctx: ParseContext, source: Source) -> tuple[pl.DataFrame, dict[str, int]]:
    """Parse one batch of lines with ``source`` and finish the rows into the event schema.

    Blank lines never reach the parser; they are counted as skipped here.
    """
    blank = pl.col("text").str.strip_chars() == ""
    content = lines.filter(~blank)
    skipped = {"blank": lines.height - content.height} if lines.height > content.height else {}
    if content.height == 0:
        return schema.empty(schema.EVENT_SCHEMA), skipped
    parsed = source.parse(content, ctx)
    for reason, count in parsed.skipped.items():
        skipped[reason] = skipped.get(reason, 0) + count
    return finish_events(parsed.events, ctx, source.name), skipped


def finish_events(events: pl.DataFrame, ctx: ParseContext, source_name: str) -> pl.DataFrame:
    """Fill provenance, host, source, template ids and event ids; conform to the schema."""
    if events.height == 0:
        return schema.empty(schema.EVENT_SCHEMA)
    key = file_key(ctx.file)
    host = pl.lit(ctx.host, pl.String) if ctx.host else pl.lit(None, pl.String)
    filled = schema.conform(events, schema.EVENT_SCHEMA).with_columns(
        host=pl.coalesce(host, pl.col("host")) if ctx.host else pl.col("host"),
        source=pl.col("source").fill_null(source_name),
        format=pl.col("format").fill_null(source_name),
        kind=pl.col("kind").fill_null("log"),
        ts_quality=pl.when(pl.col("ts").is_null() & pl.col("ts_quality").is_in(["exact", "year_inferred", "year_from_mtime", "boot_aligned", "inherited"]))
        .then(pl.lit("missing"))
        .otherwise(pl.col("ts_quality").fill_null(pl.when(pl.col("ts").is_null()).then(pl.lit("missing")).otherwise(pl.lit("exact")))),
        n_lines=pl.col("n_lines").fill_null(1),
        file=pl.lit(ctx.file),
    )
    with_ids = filled.with_columns(template_id=templates.template_ids(filled["message"]))
    # A stable sort keeps the events of one line in parser order, so the ordinal counts them.
    ordered = with_ids if with_ids["line"].is_sorted() else with_ids.sort("line", maintain_order=True)
    row = pl.int_range(pl.len())
    ordinal = row - pl.when(pl.col("line").ne_missing(pl.col("line").shift(1))).then(row).forward_fill()
    return ordered.with_columns(event_id=pl.format("{}:{}:{}", pl.lit(key), pl.col("line"), ordinal))


def year_hint(texts: pl.Series) -> int | None:
    """The year of the first fully dated timestamp in a batch, if any."""
    found = texts.str.extract(_DATED.pattern, 1).drop_nulls()
    return int(found[0]) if found.len() else None


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
    source = sources.get(format) if format else _sniff_or_fallback(lines["text"])
    ctx = _context(file, host, tz, year, reference_time, boot_time, lines["text"])
    events, _ = parse_lines(lines, ctx, source)
    return events


def _context(file: str, host: str | None, tz: str, year: int | None, reference_time: datetime | None,
             boot_time: datetime | None, head: pl.Series) -> ParseContext:
    if year is not None:
        return ParseContext(file=file, host=host, tz=tz, year=year, reference_time=reference_time, boot_time=boot_time)
    hinted = year_hint(head)
    if hinted is not None:
        return ParseContext(file=file, host=host, tz=tz, year=hinted, reference_time=reference_time, boot_time=boot_time)
    return ParseContext(file=file, host=host, tz=tz, reference_time=reference_time, boot_time=boot_time, year_quality="year_from_mtime")


def _sniff_or_fallback(texts: pl.Series) -> Source:
    head = [t for t in texts.head(HEAD_LINES * 4).to_list() if t.strip()][:HEAD_LINES]
    source, _ = sources.sniff(head)
    return source or sources.get("pipeline")


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


@dataclass
class FileResult:
    """A task's answer: the file's new manifest row and the parts it staged."""

    manifest: dict
    new_parts: list[str] = field(default_factory=list)
    dropped_parts: list[str] = field(default_factory=list)
    change: str = "new"  # new / appended / rewritten / unchanged / failed


def parse_file(task: FileTask) -> FileResult:
    """Read, sniff and parse one file; write its event parts into ``task.staging``.

    Pure apart from writing its own part files: safe to run in any process or on a
    Dask worker. Never raises for bad input: problems go into the manifest row.
    """
    if task.problem:
        return FileResult(_manifest_row(task, status="skipped", error=task.problem), change="failed")
    try:
        stat = os.stat(task.path)
    except OSError as err:
        return FileResult(_manifest_row(task, status="error", error=f"cannot stat: {err.strerror}"), change="failed")
    mtime = datetime.fromtimestamp(stat.st_mtime, UTC)
    previous = task.previous
    if previous and previous.bytes == stat.st_size and previous.mtime and abs((previous.mtime - mtime).total_seconds()) < 1e-3:
        return FileResult(previous.row, change="unchanged")
    try:
        return _read_and_parse(task, stat.st_size, mtime)
    except _reader.BinaryFileError as err:
        return _failed(task, stat.st_size, mtime, "skipped", f"not a text log: {err}")
    except OSError as err:
        return _failed(task, stat.st_size, mtime, "error", f"cannot read: {err.strerror or err}")


def _failed(task: FileTask, size: int, mtime: datetime, status: str, error: str) -> FileResult:
    dropped = list(task.previous.parts) if task.previous else []
    return FileResult(_manifest_row(task, status=status, error=error, bytes=size, mtime=mtime), dropped_parts=dropped, change="failed")


def _read_and_parse(task: FileTask, size: int, mtime: datetime) -> FileResult:
    start, first_line, change = _resume_point(task, size)
    state = _reader.ReadState()
    accounting = _Accounting()
    batches = _reader.iter_batches(
        task.path, state, start=start, first_line=first_line,
        batch_bytes=task.options.batch_bytes, max_line_chars=task.options.max_line_chars,
    )
    key = file_key(task.provenance)
    parts: list[str] = []
    source: Source | None = None
    ctx: ParseContext | None = None
    for number, batch in enumerate(batches):
        if source is None:
            source = sources.get(task.options.format) if task.options.format else _sniff_or_fallback(batch.lines["text"])
            ctx = _task_context(task, mtime, batch.lines["text"])
        events, skipped = parse_lines(batch.lines, ctx, source)
        accounting.add(batch.lines.height, events, skipped)
        if events.height:
            name = f"{key}-{task.run_id}-{number:05d}.parquet"
            events.write_parquet(Path(task.staging) / name)
            parts.append(name)
    accounting.decode_errors, accounting.truncated = state.decode_errors, state.truncated_lines
    kept = list(task.previous.parts) if change == "appended" and task.previous else []
    dropped = list(task.previous.parts) if task.previous and change != "appended" else []
    totals = accounting.merged_with(task.previous.row) if change == "appended" and task.previous else accounting
    row = _manifest_row(
        task,
        status="warning" if (state.damage or state.decode_errors or state.truncated_lines) else "ok",
        error=state.damage or _warnings(state),
        bytes=size,
        mtime=mtime,
        sha256=state.sha256.hexdigest(),
        source=source.name if source else (task.previous.row["source"] if change == "appended" and task.previous else None),
        format=accounting.main_format() or (task.previous.row["format"] if change == "appended" and task.previous else None),
        parts=kept + parts,
        **totals.as_manifest(),
    )
    if accounting.lines == 0 and change != "appended":
        row.update(status="skipped" if not state.damage else "warning", error=state.damage or "empty file")
    elif accounting.events and not accounting.recognised:
        note = "format not recognised: no timestamps or known records found; lines kept as kind=log events"
        row.update(status="warning", error="; ".join(filter(None, [row["error"], note])))
    return FileResult(row, new_parts=parts, dropped_parts=dropped, change=change)


def _resume_point(task: FileTask, size: int) -> tuple[int, int, str]:
    """Where to start reading: after the old bytes if the file only grew, else from the top."""
    previous = task.previous
    if previous is None:
        return 0, 1, "new"
    grew = size > previous.bytes and previous.sha256 and not _reader.is_gzip(task.path)
    if grew and _reader.prefix_digest(task.path, previous.bytes) == previous.sha256:
        return previous.bytes, previous.lines + 1, "appended"
    return 0, 1, "rewritten"


def _task_context(task: FileTask, mtime: datetime, head: pl.Series) -> ParseContext:
    options = task.options
    return _context(task.provenance, options.host or task.host, options.tz, options.year, mtime, options.boot_time, head)


def _warnings(state: _reader.ReadState) -> str | None:
    notes = []
    if state.decode_errors:
        notes.append(f"{state.decode_errors} lines held invalid UTF-8 (kept with U+FFFD)")
    if state.truncated_lines:
        notes.append(f"{state.truncated_lines} lines longer than the line limit were cut")
    return "; ".join(notes) or None


def _manifest_row(task: FileTask, **values: object) -> dict:
    row: dict = {name: None for name in schema.MANIFEST_SCHEMA}
    row.update(path=task.provenance, file_key=file_key(task.provenance), host=task.options.host or task.host, run_id=task.run_id, parts=[])
    for count in ("bytes", "lines", "events", "derived_events", "merged_lines", "skipped_lines", "unparsed_lines", "decode_errors", "truncated_lines"):
        row[count] = 0
    row.update(values)
    return row


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
    recognised: int = 0  # events with a time, a kind other than log, or facts extracted into attrs

    def add(self, lines: int, events: pl.DataFrame, skipped: dict[str, int]) -> None:
        self.lines += lines
        self.events += events.height
        covering = events.filter(pl.col("n_lines") > 0)
        self.derived += events.height - covering.height
        self.merged += int(covering["n_lines"].sum() or 0) - covering.height
        self.unparsed += int((events["kind"] == "log").sum())
        self.recognised += events.filter(
            (pl.col("kind") != "log") | pl.col("ts").is_not_null() | pl.col("boot_seconds").is_not_null() | pl.col("attrs").is_not_null()
        ).height
        self.skipped.update(skipped)
        self.formats.update(dict(events["format"].value_counts().iter_rows()))

    def main_format(self) -> str | None:
        """The sub-format most of the file's events were read as."""
        return self.formats.most_common(1)[0][0] if self.formats else None

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


# --- planning ----------------------------------------------------------------------


def plan(root: Path, store: Store, staging: Path, run_id: str, options: IngestOptions) -> list[FileTask]:
    """One task per regular file under ``root`` (or ``root`` itself), in a stable order.

    Host comes from the layout: the first folder under ``root`` names the host. Symlinked
    folders are followed once; a loop or a second path to the same file becomes a
    skipped entry, never an endless walk.
    """
    previous = _previous_by_path(store)

    def task(path: str, provenance: str, host: str | None, problem: str | None = None) -> FileTask:
        return FileTask(path, provenance, host, str(staging), run_id, options, previous.get(provenance), problem)

    if root.is_file():
        return [task(str(root), str(root.resolve()), None)]
    tasks = [task(path, provenance, host, problem) for path, provenance, host, problem in _walk(root, store.path)]
    return sorted(tasks, key=lambda t: t.provenance)


def _walk(root: Path, store_path: Path) -> Iterable[tuple[str, str, str | None, str | None]]:
    store_real = os.path.realpath(store_path)
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: dict[tuple[int, int], str] = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=True, onerror=None):
        if os.path.realpath(directory) == store_real:
            dirnames[:] = []
            continue
        info = os.stat(directory)
        rel_dir = os.path.relpath(directory, root)
        if (info.st_dev, info.st_ino) in seen_dirs:
            dirnames[:] = []
            yield directory, rel_dir, _host_of(rel_dir), "folder already visited through another path (symlink loop?)"
            continue
        seen_dirs.add((info.st_dev, info.st_ino))
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(directory, name)
            provenance = os.path.normpath(os.path.join(rel_dir, name))
            try:
                st = os.stat(path)
            except OSError as err:
                yield path, provenance, _host_of(provenance), f"unreadable entry: {err.strerror}"
                continue
            if not os.path.isfile(path):
                yield path, provenance, _host_of(provenance), "not a regular file"
                continue
            first = seen_files.setdefault((st.st_dev, st.st_ino), provenance)
            problem = None if first == provenance else f"same file as {first}"
            yield path, provenance, _host_of(provenance), problem


def _host_of(provenance: str) -> str | None:
    parts = Path(provenance).parts
    return parts[0] if len(parts) > 1 and parts[0] not in (".", "..") else None


def _previous_by_path(store: Store) -> dict[str, Previous]:
    rows = store.manifest().filter(pl.col("status").is_in(["ok", "warning", "skipped"])).to_dicts()
    return {
        row["path"]: Previous(row["bytes"], row["mtime"], row["sha256"], row["lines"], tuple(row["parts"] or ()), row)
        for row in rows
    }


# --- the driver ----------------------------------------------------------------------


@dataclass(frozen=True)
class IngestReport:
    """What a run did: per-file results and the summary figures printed at the end."""

    run_id: str
    store: Path
    files: pl.DataFrame
    changes: dict[str, int]
    summary: dict


Progress = Callable[[FileResult], None]


def ingest(
    root: str | os.PathLike[str],
    store_path: str | os.PathLike[str] = "rca-store",
    options: IngestOptions | None = None,
    *,
    workers: int | None = None,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest a folder or a file into the store; only new and changed files are read.

    Raises :class:`InputError` when ``root`` does not exist.
    """
    from rca.summary import summarize

    options = options or IngestOptions()
    if options.format:
        sources.get(options.format)
    root = Path(root)
    if not root.exists():
        raise InputError(f"{root} does not exist")
    store = Store(store_path)
    run_id = uuid.uuid4().hex[:12]
    started = datetime.now(UTC)
    with store.writing() as staging:
        tasks = plan(root, store, staging, run_id, options)
        results = _run(tasks, workers, progress)
        manifest = _merged_manifest(store, results)
        new_parts = [p for r in results for p in r.new_parts]
        dropped = [p for r in results for p in r.dropped_parts]
        run = {"run_id": run_id, "started": started.isoformat(), "root": str(root.resolve()), "options": _jsonable(options)}
        store.commit(manifest, staging, new_parts, dropped, run)
    changes = Counter(r.change for r in results)
    this_run = [str(store.path / "events.parquet" / p) for p in new_parts]
    files = manifest.filter(pl.col("path").is_in([r.manifest["path"] for r in results]))
    return IngestReport(run_id, store.path, files, dict(changes), summarize(this_run, files))


def _run(tasks: list[FileTask], workers: int | None, progress: Progress | None) -> list[FileResult]:
    workers = min(workers or os.cpu_count() or 1, len(tasks)) if tasks else 1
    results: list[FileResult] = []
    if workers <= 1:
        for task in tasks:
            results.append(parse_file(task))
            if progress:
                progress(results[-1])
        return results
    # spawn, not fork: polars' thread pool does not survive a fork.
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        for result in pool.map(parse_file, tasks):
            results.append(result)
            if progress:
                progress(result)
    return results


def _merged_manifest(store: Store, results: list[FileResult]) -> pl.DataFrame:
    fresh = pl.DataFrame([r.manifest for r in results], schema=schema.MANIFEST_SCHEMA) if results else schema.empty(schema.MANIFEST_SCHEMA)
    kept = store.manifest().filter(~pl.col("path").is_in(fresh["path"].implode()))
    return pl.concat([kept, fresh]).sort("path")


def _jsonable(options: IngestOptions) -> dict:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in asdict(options).items()}
