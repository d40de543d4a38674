"""The store folder: the only module besides the CLI that touches the disk for writing.

Layout::

    STORE/
      store.json          schema version, runs and their parameters
      files.parquet       the manifest: one row per input file (rca.schema.MANIFEST_SCHEMA)
      events.parquet/     event parts, one or more per input file; readable as one table by
                          any Parquet engine (``polars.scan_parquet("STORE/events.parquet")``)
      .staging/RUN/       parts being written by a run, moved in at commit
      .lock               held by the one process writing the store
      incidents.parquet   one row per incident (rca.schema.INCIDENT_SCHEMA), by rca.correlate
      incident_events.parquet  incident ↔ event links with their role (rca.schema.INCIDENT_EVENTS_SCHEMA)
      correlation.json    the last correlation's report: clock alignment per file, counts
      failure_modes.parquet  one row per failure mode with its centroid (rca.schema.FAILURE_MODE_SCHEMA), by rca.cluster
      embeddings.parquet  the embedding cache, keyed by embedder and text hash (rca.schema.EMBEDDING_SCHEMA)
      kb_drafts/          draft knowledge-base entries for modes no entry matched, for a person to complete

Commit order makes a killed run harmless: parts are staged, moved in, then the manifest
is replaced in one rename; only then are replaced parts deleted. Parts that no manifest
lists (left by a run killed mid-commit) are removed the next time the store is written.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from rca import schema
from rca.errors import StoreError, StoreLockedError, StoreVersionError

EVENTS_DIR = "events.parquet"
MANIFEST_FILE = "files.parquet"
META_FILE = "store.json"
INCIDENTS_FILE = "incidents.parquet"
INCIDENT_EVENTS_FILE = "incident_events.parquet"
CORRELATION_FILE = "correlation.json"
FAILURE_MODES_FILE = "failure_modes.parquet"
EMBEDDINGS_FILE = "embeddings.parquet"
KB_DRAFTS_DIR = "kb_drafts"


class Store:
    """A store folder; ``rca.open_store(path)`` is the public way to get one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    # --- reading -----------------------------------------------------------------

    def meta(self) -> dict:
        """The store's metadata (schema version, runs); empty for a store not yet written."""
        meta_path = self.path / META_FILE
        if not meta_path.exists():
            return {}
        return json.loads(meta_path.read_text())

    def check_version(self) -> None:
        """Raise :class:`StoreVersionError` when the store was written by another schema version."""
        version = self.meta().get("schema_version")
        if version is not None and version != schema.SCHEMA_VERSION:
            newer = "a newer" if version > schema.SCHEMA_VERSION else "an older"
            raise StoreVersionError(
                f"{self.path} was written by {newer} rca (store schema {version}, this rca reads {schema.SCHEMA_VERSION}); "
                "re-ingest into a new store"
            )

    def manifest(self) -> pl.DataFrame:
        """The ingest manifest: one row per input file, with its accounting and problems."""
        self.check_version()
        path = self.path / MANIFEST_FILE
        if not path.exists():
            return schema.empty(schema.MANIFEST_SCHEMA)
        return pl.read_parquet(path)

    def scan_events(self) -> pl.LazyFrame:
        """All committed events as a lazy frame (only parts the manifest lists)."""
        parts = self.part_paths()
        if not parts:
            return schema.empty(schema.EVENT_SCHEMA).lazy()
        return pl.scan_parquet(parts, schema=schema.EVENT_SCHEMA)

    def events(self) -> pl.DataFrame:
        """All committed events, ordered by time (unknown times last), then file and line."""
        return self.scan_events().sort(["ts", "file", "line"], nulls_last=True).collect()

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

    def correlation_report(self) -> dict:
        """The last correlation's report (clock alignment, counts); empty before one ran."""
        path = self.path / CORRELATION_FILE
        return json.loads(path.read_text()) if path.exists() else {}

    def _read_table(self, name: str, table_schema: dict[str, pl.DataType]) -> pl.DataFrame:
        self.check_version()
        path = self.path / name
        if not path.exists():
            return schema.empty(table_schema)
        return pl.read_parquet(path)

    def part_paths(self) -> list[str]:
        """Paths of the committed event parts."""
        names = self.manifest()["parts"].explode().drop_nulls().unique().sort().to_list()
        return [str(self.path / EVENTS_DIR / name) for name in names]

    # --- writing -----------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[Path]:
        """Hold the store's lock for a run; yields a fresh staging folder.

        A second writer gets :class:`StoreLockedError` at once rather than waiting
        behind a run that may take an hour.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        self.check_version()
        lock_path = self.path / ".lock"
        with open(lock_path, "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.seek(0)
                holder = lock.read().strip() or "another process"
                raise StoreLockedError(f"{self.path} is being written by {holder}; wait for it to finish") from None
            lock.seek(0)
            lock.truncate()
            lock.write(f"rca pid {os.getpid()}")
            lock.flush()
            self._remove_leftovers()
            staging = self.path / ".staging" / datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
            staging.mkdir(parents=True)
            try:
                yield staging
            finally:
                shutil.rmtree(staging, ignore_errors=True)

    def commit(self, manifest: pl.DataFrame, staging: Path, new_parts: list[str], dropped_parts: list[str], run: dict) -> None:
        """Make a run's parts and manifest the store's current state, atomically for readers."""
        schema.validate(manifest, schema.MANIFEST_SCHEMA, "manifest")
        events_dir = self.path / EVENTS_DIR
        events_dir.mkdir(exist_ok=True)
        for name in new_parts:
            os.replace(staging / name, events_dir / name)
        _atomic_write_parquet(manifest, self.path / MANIFEST_FILE)
        meta = self.meta() or {"schema_version": schema.SCHEMA_VERSION, "created": run["started"], "runs": []}
        meta["runs"].append(run)
        _atomic_write_text(json.dumps(meta, indent=2, default=str), self.path / META_FILE)
        for name in dropped_parts:
            (events_dir / name).unlink(missing_ok=True)

    def write_incidents(self, incidents: pl.DataFrame, links: pl.DataFrame, report: dict) -> None:
        """Replace the incident tables and the correlation report, each file atomically (hold :meth:`writing`)."""
        schema.validate(incidents, schema.INCIDENT_SCHEMA, "incidents")
        schema.validate(links, schema.INCIDENT_EVENTS_SCHEMA, "incident events")
        _atomic_write_parquet(links, self.path / INCIDENT_EVENTS_FILE)
        _atomic_write_parquet(incidents, self.path / INCIDENTS_FILE)
        _atomic_write_text(json.dumps(report, indent=2, default=str), self.path / CORRELATION_FILE)

    def write_clustering(
        self, incidents: pl.DataFrame, modes: pl.DataFrame, embeddings: pl.DataFrame, drafts: dict[str, str]
    ) -> list[Path]:
        """Write a clustering run's results, each file atomically (hold :meth:`writing`); returns the drafts created.

        The cache goes first and the incidents last, so a run killed in between leaves
        tables a re-run completes. A draft that already exists is left alone: a person may
        be editing it.
        """
        schema.validate(incidents, schema.CLUSTERED_INCIDENT_SCHEMA, "clustered incidents")
        schema.validate(modes, schema.FAILURE_MODE_SCHEMA, "failure modes")
        schema.validate(embeddings, schema.EMBEDDING_SCHEMA, "embeddings")
        _atomic_write_parquet(embeddings, self.path / EMBEDDINGS_FILE)
        written = []
        for name, text in sorted(drafts.items()):
            target = self.path / KB_DRAFTS_DIR / Path(name).name
            if not target.exists():
                target.parent.mkdir(exist_ok=True)
                _atomic_write_text(text, target)
                written.append(target)
        _atomic_write_parquet(modes, self.path / FAILURE_MODES_FILE)
        _atomic_write_parquet(incidents, self.path / INCIDENTS_FILE)
        return written

    def _remove_leftovers(self) -> None:
        shutil.rmtree(self.path / ".staging", ignore_errors=True)
        events_dir = self.path / EVENTS_DIR
        if not events_dir.exists():
            return
        listed = {Path(p).name for p in self.part_paths()}
        for part in events_dir.glob("*.parquet"):
            if part.name not in listed:
                part.unlink()


def _atomic_write_parquet(frame: pl.DataFrame, target: Path) -> None:
    tmp = target.with_name(f".{target.name}.tmp")
    frame.write_parquet(tmp)
    _fsync_replace(tmp, target)


def _atomic_write_text(text: str, target: Path) -> None:
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text)
    _fsync_replace(tmp, target)


def _fsync_replace(tmp: Path, target: Path) -> None:
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, target)


def open_store(path: str | os.PathLike[str]) -> Store:
    """Open the store at ``path`` for reading; raises :class:`StoreError` if it holds no store."""
    store = Store(path)
    if not (store.path / META_FILE).exists():
        raise StoreError(f"{store.path} is not an rca store (no {META_FILE}); run 'rca ingest DIR --store {store.path}' first")
    store.check_version()
    return store
