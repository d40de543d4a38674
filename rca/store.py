"""The store folder: the only module besides the CLI that touches the disk for writing.

Layout::

    STORE/
      store.json          schema version, runs and their parameters
      files.parquet       the manifest: one row per input file (rca.schema.MANIFEST_SCHEMA)
      events/             event parts, hive-partitioned by UTC day and host:
                          ``events/date=2026-12-01/host=gpu-node-1/<file key>-<run>-<task>-<batch>.parquet``,
                          or ``<file key>-<run>-group.parquet`` for small files read together
                          (``…~<run>.parquet``: a copy of one without a file read again);
                          see "Reading the events directly" below
      .staging/RUN/       parts being written by a run (same layout), moved in at commit
      .lock               held by the one process writing the store (an fcntl lock, or on an object store the lock object)
      incidents.parquet   one row per incident (rca.schema.INCIDENT_SCHEMA), by rca.correlate
      incident_events.parquet  incident ↔ event links with their role (rca.schema.INCIDENT_EVENTS_SCHEMA)
      correlation.json    the last correlation's report: clock alignment per file, counts
      failure_modes.parquet  one row per failure mode with its centroid (rca.schema.FAILURE_MODE_SCHEMA), by rca.cluster
      embeddings.parquet  the embedding cache, keyed by embedder and text hash (rca.schema.EMBEDDING_SCHEMA)
      kb_drafts/          draft knowledge-base entries for modes no entry matched, for a person to complete

Commit order makes a killed run harmless: parts are staged, moved in, then the manifest
is replaced in one rename; only then are replaced parts deleted. Parts that no manifest
lists (left by a run killed mid-commit) are removed the next time the store is written.
Incremental runs only add parts (and delete the parts of files that changed; a part that
a changed file shared with others is first copied with the others' events only, see
:func:`keep_shared_parts`); nothing rewrites the whole table.

The store may also live at an fsspec URL (``s3://bucket/prefix``, ``memory://…``; ``file://``
is a local folder). The layout is the same; parts are copied in rather than renamed, and the
commit point is the one PUT that writes ``files.parquet`` (see rca._storefs for what each
kind of location guarantees, the lock included). Credentials and endpoints come from the
environment as fsspec's backends read them (``AWS_*`` variables, ``FSSPEC_S3_*`` settings).

Reading the events directly: each part holds every column of rca.schema.EVENT_SCHEMA, the
host included, and the partition folders add ``date`` (the UTC day of ``ts``). Events with
no time or no host go under ``date=__HIVE_DEFAULT_PARTITION__`` / ``host=__HIVE_DEFAULT_PARTITION__``,
the Hive convention for null that polars, pyarrow, DuckDB and Spark read back as null. A
host is percent-encoded in its folder name when it holds characters other than letters,
digits and ``-._~``. Readers::

    polars.scan_parquet("STORE/events", hive_partitioning=True)
    duckdb.sql("SELECT * FROM read_parquet('STORE/events/**/*.parquet', hive_partitioning = true)")
    pyarrow.dataset.dataset("STORE/events", partitioning=rca.store.arrow_partitioning())
    pandas.read_parquet("STORE/events", partitioning=rca.store.arrow_partitioning())

pyarrow (and pandas through it) needs the partitioning spelled out: left to infer it, it
reads ``host`` as a dictionary column that clashes with the host stored in the parts.
After a crash mid-commit a direct reader may see parts no manifest lists until the next
write removes them; :meth:`Store.scan_events` reads only the listed parts.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import posixpath
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import polars as pl

from rca import _storefs, schema
from rca.errors import StoreError, StoreVersionError

if TYPE_CHECKING:
    import pyarrow.dataset

EVENTS_DIR = "events"
LEGACY_EVENTS_DIR = "events.parquet"  # schema 1: every part flat in one folder
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
MANIFEST_FILE = "files.parquet"
META_FILE = "store.json"
INCIDENTS_FILE = "incidents.parquet"
INCIDENT_EVENTS_FILE = "incident_events.parquet"
CORRELATION_FILE = "correlation.json"
FAILURE_MODES_FILE = "failure_modes.parquet"
EMBEDDINGS_FILE = "embeddings.parquet"
KB_DRAFTS_DIR = "kb_drafts"
STAGING_DIR = ".staging"


class Store:
    """A store folder or URL; ``rca.open_store(path)`` is the public way to get one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path: Path | str = _storefs.location(path)  # a Path for a local folder, else the URL
        self._fs = _storefs.StoreFS(self.path)

    # --- reading -----------------------------------------------------------------

    def meta(self) -> dict:
        """The store's metadata (schema version, runs); empty for a store not yet written."""
        meta_path = self._where(META_FILE)
        try:
            raw = self._fs.read_bytes(META_FILE)
        except FileNotFoundError:
            return {}
        try:
            meta = json.loads(raw)
        except ValueError as err:
            raise StoreError(f"{meta_path} is damaged (not valid JSON: {err}); restore it or re-ingest into a new store") from None
        if not isinstance(meta, dict):
            raise StoreError(f"{meta_path} is damaged (it holds no JSON object); restore it or re-ingest into a new store")
        return meta

    def check_version(self) -> None:
        """Raise :class:`StoreVersionError` when the store was written by another schema version."""
        version = self.meta().get("schema_version")
        if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
            raise StoreVersionError(f"{self.path}: {META_FILE} names store schema {version!r}, which no rca writes; the store is damaged")
        if version is not None and version != schema.SCHEMA_VERSION:
            newer = "a newer" if version > schema.SCHEMA_VERSION else "an older"
            remedy = f"convert it with 'rca migrate --store {self.path}'" if version in _MIGRATIONS else "re-ingest into a new store"
            raise StoreVersionError(
                f"{self.path} was written by {newer} rca (store schema {version}, this rca reads {schema.SCHEMA_VERSION}); {remedy}"
            )

    def manifest(self) -> pl.DataFrame:
        """The ingest manifest: one row per input file, with its accounting and problems."""
        self.check_version()
        manifest = _read_parquet(self._fs, MANIFEST_FILE)
        return schema.empty(schema.MANIFEST_SCHEMA) if manifest is None else manifest

    def scan_events(self) -> pl.LazyFrame:
        """All committed events as a lazy frame (only parts the manifest lists), exactly rca.schema.EVENT_SCHEMA."""
        return self.scan_parts(self.part_paths())

    def scan_parts(self, paths: list[str]) -> pl.LazyFrame:
        """The events of the parts at ``paths`` (from :meth:`part_paths` or :meth:`part_path`), exactly rca.schema.EVENT_SCHEMA.

        The parts of a remote store are fetched at once (concurrently where the backend can)
        and decoded lazily from memory: polars reads no fsspec URL by itself.
        """
        if not paths:
            return schema.empty(schema.EVENT_SCHEMA).lazy()
        sources = paths if self._fs.local else self._fs.read_many(paths)
        # The paths are exact: a bracket or star in the store's own path is no pattern.
        return pl.scan_parquet(sources, schema=schema.EVENT_SCHEMA, hive_partitioning=False, glob=False)

    def events(self) -> pl.DataFrame:
        """All committed events, ordered by time (unknown times last), then file and line.

        A commit deletes the parts of the files it re-read once its manifest is in place, so a
        read that began before it can find a listed part gone; it is then read again from the
        new manifest. Either way the events are those of one committed state.
        """
        missing: FileNotFoundError | None = None
        for _ in range(_READ_ATTEMPTS):
            try:
                return self.scan_events().sort(["ts", "file", "line"], nulls_last=True).collect()
            except FileNotFoundError as err:
                missing = err
        raise StoreError(f"{self.path} is damaged: an event part its manifest lists is missing ({missing})") from None

    def incidents(self) -> pl.DataFrame:
        """The incidents of the last correlation (rca.schema.INCIDENT_SCHEMA); empty before one ran."""
        return self._read_table(INCIDENTS_FILE, schema.INCIDENT_SCHEMA)

    def incident_events(self) -> pl.DataFrame:
        """Links between incidents and events (rca.schema.INCIDENT_EVENTS_SCHEMA); empty before a correlation ran."""
        return self._read_table(INCIDENT_EVENTS_FILE, schema.INCIDENT_EVENTS_SCHEMA)

    def failure_modes(self) -> pl.DataFrame:
        """Every failure mode the clustering runs made (rca.schema.FAILURE_MODE_SCHEMA); empty before one ran."""
        return self._read_table(FAILURE_MODES_FILE, schema.FAILURE_MODE_SCHEMA)

    def embeddings(self) -> pl.DataFrame:
        """The embedding cache (rca.schema.EMBEDDING_SCHEMA); empty before a clustering ran."""
        return self._read_table(EMBEDDINGS_FILE, schema.EMBEDDING_SCHEMA)

    def kb_drafts(self) -> dict[Path | str, str]:
        """The draft knowledge-base entries clustering wrote: where each lies → its YAML text."""
        names = self._fs.files(KB_DRAFTS_DIR, "*.yaml")
        return {self._where(name): self._fs.read_bytes(name).decode("utf-8", errors="replace") for name in names}

    def correlation_report(self) -> dict:
        """The last correlation's report (clock alignment, counts); empty before one ran."""
        try:
            return json.loads(self._fs.read_bytes(CORRELATION_FILE))
        except FileNotFoundError:
            return {}

    def _read_table(self, name: str, table_schema: dict[str, pl.DataType]) -> pl.DataFrame:
        self.check_version()
        table = _read_parquet(self._fs, name)
        return schema.empty(table_schema) if table is None else table

    def part_paths(self) -> list[str]:
        """Paths of the committed event parts."""
        return [str(self.part_path(name)) for name in self._part_names()]

    def part_path(self, name: str) -> Path | str:
        """Where the part the manifest calls ``name`` (``date=…/host=…/….parquet``) lies: a path, or a URL when remote."""
        return self._where(f"{EVENTS_DIR}/{name}")

    def _part_names(self) -> list[str]:
        return self.manifest()["parts"].explode().drop_nulls().unique().sort().to_list()

    def _where(self, name: str) -> Path | str:
        """The file ``name`` of the store, as a reader names it: under :attr:`path`, or its URL when remote."""
        return self.path / name if isinstance(self.path, Path) else self._fs.url(name)

    # --- writing -----------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self, wait: float = 0.0, on_wait: Callable[[str], None] | None = None) -> Iterator[str]:
        """Hold the store's lock for a run; yields a fresh staging folder (a path, or a URL when remote) for the workers.

        While another process holds the lock, a second writer gets :class:`StoreLockedError`
        naming the holder: at once by default (the other run may take an hour), or after
        waiting up to ``wait`` seconds for it to finish, having told ``on_wait`` who it waits for.
        Readers never wait: they see the last committed state.
        """
        self._fs.makedirs("")
        self.check_version()
        with self._locked(wait, on_wait):
            self._remove_leftovers()
            staging = f"{STAGING_DIR}/{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}"
            self._fs.makedirs(staging)
            try:
                yield self._fs.url(staging)
            finally:
                self._fs.remove_tree(staging)

    def commit(self, manifest: pl.DataFrame, staging: str, new_parts: list[str], dropped_parts: list[str], run: dict) -> None:
        """Make a run's parts and manifest the store's current state, atomically for readers.

        The parts move in under names no manifest lists yet; the write of ``files.parquet``
        is the commit point, on a local folder (a rename) and on an object store (one PUT) alike.
        """
        schema.validate(manifest, schema.MANIFEST_SCHEMA, "manifest")
        staged = f"{STAGING_DIR}/{posixpath.basename(staging.rstrip('/'))}"
        self._fs.publish([(f"{staged}/{name}", f"{EVENTS_DIR}/{name}") for name in new_parts])
        _atomic_write_parquet(manifest, self._fs, MANIFEST_FILE)
        meta = self.meta() or {"schema_version": schema.SCHEMA_VERSION, "created": run["started"], "runs": []}
        meta["runs"].append(run)
        _atomic_write_text(json.dumps(meta, indent=2, default=str), self._fs, META_FILE)
        dropped = [f"{EVENTS_DIR}/{name}" for name in dropped_parts]
        self._fs.remove(dropped)
        self._fs.remove_empty_folders(dropped)

    def write_incidents(self, incidents: pl.DataFrame, links: pl.DataFrame, report: dict) -> None:
        """Replace the incident tables and the correlation report, each file atomically (hold :meth:`writing`)."""
        schema.validate(incidents, schema.INCIDENT_SCHEMA, "incidents")
        schema.validate(links, schema.INCIDENT_EVENTS_SCHEMA, "incident events")
        _atomic_write_parquet(links, self._fs, INCIDENT_EVENTS_FILE)
        _atomic_write_parquet(incidents, self._fs, INCIDENTS_FILE)
        _atomic_write_text(json.dumps(report, indent=2, default=str), self._fs, CORRELATION_FILE)

    def write_clustering(
        self, incidents: pl.DataFrame, modes: pl.DataFrame, embeddings: pl.DataFrame, drafts: dict[str, str]
    ) -> list[Path | str]:
        """Write a clustering run's results, each file atomically (hold :meth:`writing`); returns the drafts created.

        The cache goes first and the incidents last, so a run killed in between leaves
        tables a re-run completes. A draft that already exists is left alone: a person may
        be editing it.
        """
        schema.validate(incidents, schema.CLUSTERED_INCIDENT_SCHEMA, "clustered incidents")
        schema.validate(modes, schema.FAILURE_MODE_SCHEMA, "failure modes")
        schema.validate(embeddings, schema.EMBEDDING_SCHEMA, "embeddings")
        _atomic_write_parquet(embeddings, self._fs, EMBEDDINGS_FILE)
        written = []
        for name, text in sorted(drafts.items()):
            target = f"{KB_DRAFTS_DIR}/{Path(name).name}"
            if not self._fs.exists(target):
                self._fs.makedirs(KB_DRAFTS_DIR)
                _atomic_write_text(text, self._fs, target)
                written.append(self._where(target))
        _atomic_write_parquet(modes, self._fs, FAILURE_MODES_FILE)
        _atomic_write_parquet(incidents, self._fs, INCIDENTS_FILE)
        return written

    def _remove_leftovers(self) -> None:
        self._fs.remove_tree(STAGING_DIR)
        listed = {f"{EVENTS_DIR}/{name}" for name in self._part_names()}
        unlisted = [name for name in self._fs.files(EVENTS_DIR, "*/*/*.parquet") if name not in listed]
        self._fs.remove(unlisted)
        self._fs.remove_empty_folders(unlisted)

    # --- migration ---------------------------------------------------------------

    def migrate(self) -> int | None:
        """Convert a store written by an older schema in place; returns the version it had (None when current).

        Schema 1 kept every part flat in ``events.parquet/``; each is rewritten into the
        partitioned layout, then the manifest (the commit point) and ``store.json``. A
        migration killed midway is finished by running it again.
        """
        version = self.meta().get("schema_version")
        if version is None or version == schema.SCHEMA_VERSION:
            return None
        if version not in _MIGRATIONS:
            self.check_version()
        with self._locked():
            _MIGRATIONS[version](self)
        return version

    @contextlib.contextmanager
    def _locked(self, wait: float = 0.0, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """The store's lock, without the version check (held by :meth:`writing` and :meth:`migrate`)."""
        with self._fs.lock(str(self.path), wait, on_wait):
            yield


def _migrate_from_1(store: Store) -> None:
    """Schema 1 → 2: flat parts in events.parquet/ become hive partitions in events/."""
    fs = store._fs
    staging = f"{STAGING_DIR}/migration"
    fs.remove_tree(staging)
    fs.makedirs(staging)
    manifest = _read_parquet(fs, MANIFEST_FILE)
    manifest = schema.empty(schema.MANIFEST_SCHEMA) if manifest is None else manifest
    paths, partitioned, new_parts = [], [], []
    for path, parts in manifest.select("path", "parts").iter_rows():
        moved = []
        for name in parts or []:
            if "/" in name:  # already partitioned by an earlier, interrupted migration
                moved.append(name)
                continue
            legacy = pl.read_parquet(io.BytesIO(fs.read_bytes(f"{LEGACY_EVENTS_DIR}/{name}")))
            written = write_event_parts(legacy, fs.url(staging), Path(name).stem)
            moved += written
            new_parts += written
        paths.append(path)
        partitioned.append(moved)
    new_lists = pl.DataFrame({"path": paths, "parts": partitioned}, schema={"path": pl.String(), "parts": pl.List(pl.String())})
    migrated = manifest.drop("parts").join(new_lists, on="path", how="left").select(manifest.columns)
    store.commit(migrated, fs.url(staging), new_parts, [], {"migrated_from": 1, "started": datetime.now(UTC).isoformat()})
    meta = store.meta()
    meta["schema_version"] = schema.SCHEMA_VERSION
    _atomic_write_text(json.dumps(meta, indent=2, default=str), fs, META_FILE)
    fs.remove_tree(LEGACY_EVENTS_DIR)
    fs.remove_tree(staging)


_MIGRATIONS = {1: _migrate_from_1}


# --- the partitioned layout ---------------------------------------------------------


def partition_value(value: str | None) -> str:
    """A partition folder's value: the Hive null placeholder, or ``value`` percent-encoded where needed."""
    return NULL_PARTITION if value is None else quote(value, safe="")


def write_event_parts(events: pl.DataFrame, folder: str, stem: str) -> list[str]:
    """Write ``events`` as one part per (UTC day, host) under ``folder`` (a path or a URL); returns the parts' names relative to it.

    The names, ``date=…/host=…/STEM.parquet``, are what the manifest lists and what
    :meth:`Store.commit` moves into ``events/``. A part file only ever holds the event
    columns: ``date`` lives in the folder name alone.
    """
    names = []
    for (day, host), part in _by_day_and_host(events):
        name = _part_file(day, host, stem)
        _storefs.write_parquet(folder, name, part)
        names.append(name)
    return names


# The day as a Date, not text: hashing it for the unique keys costs a quarter of a string's (0.17 vs 0.63 CPU-s on 822k events).
_PART_KEYS = (pl.col("ts").dt.date().alias("__date"), pl.col("host").alias("__host"))


def _part_file(day: date | None, host: str | None, stem: str) -> str:
    return f"date={partition_value(day.isoformat() if day else None)}/host={partition_value(host)}/{stem}.parquet"


def _by_day_and_host(events: pl.DataFrame) -> list[tuple[tuple[date | None, str | None], pl.DataFrame]]:
    """The events of each (UTC day, host), in order of first appearance."""
    found = events.select(_PART_KEYS).unique(maintain_order=True)
    if found.height <= 1:  # most parts; partition_by costs ~2 ms even then
        return [(found.row(0), events)] if found.height else []
    split = events.with_columns(_PART_KEYS).partition_by("__date", "__host", as_dict=True, maintain_order=True)
    return [(key, part.drop("__date", "__host")) for key, part in split.items()]


class PartWriter:
    """Where a task writes its event parts: into the staging folder at once, one set per batch."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def write(self, events: pl.DataFrame, stem: str) -> list[str]:
        """Write ``events`` as the parts named ``stem``; returns their names."""
        return write_event_parts(events, self.folder, stem)


class SharedPartWriter(PartWriter):
    """The parts of many small files, written together by :meth:`flush`: one part per (day, host) named ``stem``.

    A Parquet file costs ~4 ms to write however few its rows, more than parsing a small
    file costs. A file's parts are the shared parts that hold its events;
    :func:`keep_shared_parts` keeps the other files' events when one of them is read again.
    """

    def __init__(self, folder: str, stem: str) -> None:
        super().__init__(folder)
        self.stem = stem
        self._held: list[pl.DataFrame] = []

    def write(self, events: pl.DataFrame, stem: str) -> list[str]:
        if events.height == 0:
            return []
        self._held.append(events)
        return [_part_file(day, host, self.stem) for day, host in events.select(_PART_KEYS).unique(maintain_order=True).rows()]

    def write_batch(self, events: pl.DataFrame) -> dict[int, list[str]]:
        """Hold the events of several files (a ``batch_file`` column); each file's part names by its number."""
        if events.height == 0:
            return {}
        self._held.append(events.drop("batch_file"))
        names: dict[int, list[str]] = {}
        for number, day, host in events.select("batch_file", *_PART_KEYS).unique(maintain_order=True).rows():
            names.setdefault(number, []).append(_part_file(day, host, self.stem))
        return names

    def flush(self) -> None:
        """Write every file's events held so far."""
        if self._held:
            write_event_parts(pl.concat(self._held), self.folder, self.stem)
            self._held = []


def keep_shared_parts(
    store: Store, before: pl.DataFrame, after: pl.DataFrame, staging: str, run_id: str
) -> tuple[pl.DataFrame, list[str], list[str]]:
    """The new manifest ``after`` with copies of the parts fewer files list than in ``before``; the copies' names; the parts they replace.

    Small files read together share parts (:class:`SharedPartWriter`). When one of them is
    read again, or can no longer be read, its row stops listing its old parts; a part that
    other files still list is copied into ``staging`` with only the events of the files that
    list it, under a new name (``…~RUN.parquet``) that their rows list from now on. The
    replaced part goes at commit, like every dropped part.
    """
    still = _holders(after).join(_holders(before), on="parts", suffix="_before")
    shrunk = still.filter(pl.col("path").list.len() < pl.col("path_before").list.len())
    copies: dict[str, str] = {}
    for name, holders in shrunk.select("parts", "path").iter_rows():
        try:
            kept = store.scan_parts([str(store.part_path(name))]).filter(pl.col("file").is_in(holders)).collect()
        except FileNotFoundError:
            raise StoreError(f"{store.path} is damaged: an event part its manifest lists is missing ({name})") from None
        copies[name] = f"{posixpath.dirname(name)}/{posixpath.basename(name).split('~')[0].removesuffix('.parquet')}~{run_id}.parquet"
        _storefs.write_parquet(staging, copies[name], kept)
    relisted = after.with_columns(pl.col("parts").list.eval(pl.element().replace(copies))) if copies else after
    return relisted, list(copies.values()), list(copies)


def _holders(manifest: pl.DataFrame) -> pl.DataFrame:
    """Each listed part and the paths of the files whose rows list it."""
    return manifest.select("path", "parts").explode("parts").drop_nulls("parts").group_by("parts").agg("path")


def arrow_partitioning() -> pyarrow.dataset.Partitioning:
    """The partitioning to give pyarrow (or pandas) when reading ``STORE/events`` directly."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    return ds.partitioning(pa.schema([("date", pa.date32()), ("host", pa.large_string())]), flavor="hive")


def discard_parts(folder: str, names: list[str]) -> None:
    """Delete parts written under ``folder`` (a path or a URL) that will not be committed."""
    _storefs.remove(folder, names)


_READ_ATTEMPTS = 5  # reads of the events, each from the manifest of the moment, before a missing part means damage


def _read_parquet(fs: _storefs.StoreFS, name: str) -> pl.DataFrame | None:
    """The table ``name`` (None when absent), read in one piece.

    Reading by name may open the file more than once; a writer's atomic replace in between
    would mix the footer of one version with the bytes of the other.
    """
    try:
        return pl.read_parquet(io.BytesIO(fs.read_bytes(name)))
    except FileNotFoundError:
        return None


def _atomic_write_parquet(frame: pl.DataFrame, fs: _storefs.StoreFS, name: str) -> None:
    fs.write_atomic(name, _storefs.parquet_bytes(frame))


def _atomic_write_text(text: str, fs: _storefs.StoreFS, name: str) -> None:
    fs.write_atomic(name, text.encode())


def open_store(path: str | os.PathLike[str]) -> Store:
    """Open the store at ``path`` (a folder or an fsspec URL) for reading; raises :class:`StoreError` if it holds no store."""
    store = Store(path)
    if not store._fs.exists(META_FILE):
        raise StoreError(f"{store.path} is not an rca store (no {META_FILE}); run 'rca ingest DIR --store {store.path}' first")
    store.check_version()
    return store
