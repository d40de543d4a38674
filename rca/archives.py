"""Containers: an input file read as many members, each member like a file of its own.

An **archive** (tar, plain or gzip / bzip2 / xz compressed, and zip; recognised by content,
not by name) is read member by member as a stream and never extracted: tar sequentially,
zip through ``ZipFile.open``. A zip inside a tar cannot be read without seeking, so it is
spooled (in memory up to ``SPOOL_MEMORY``, then in a temporary file). Members go through
the same reader as files (gzip, damaged bytes, over-long lines, binary refusal), and an
archive inside an archive is opened too, down to ``MAX_NESTING`` levels. A **bundle file**
(``nvidia-bug-report.log``, a cluster-info dump pod log; :mod:`rca.bundles`) is split into
its sections, and each section is a member.

Provenance: a member is called ``CONTAINER!/MEMBER`` in the manifest and in its events'
``file`` (``bundle.tar.gz!/var/log/kern.log``, ``a.tgz!/inner.zip!/x.log``,
``nvidia-bug-report.log.gz!/dmesg``); the container has a row of its own (source
``archive`` or ``bundle``) that holds its size, mtime, digest and problems, and the lines
of a bundle's section headers. The members' rows and the container's together account for
every line.

Safety: names that are absolute or hold ``..``, symbolic and hard links, devices and FIFOs
get a skipped row and are never read. One top-level container and everything nested in
it may expand to ``archive_max_bytes`` (counting the output of every decompression) and
hold ``archive_max_members`` members; past either, reading stops and the container's row
says so. A stream that expands more than ``archive_max_ratio`` times (judged once
``RATIO_GRACE`` bytes came out) is abandoned as a decompression bomb: a zip member or a
gzip member is an error row and the rest of the archive is read; inside one compressed tar
stream nothing after it can be reached.

Incrementality: an unchanged container (size and mtime) gives back its rows without being
read. A changed one is read again, and each member is compared with its row by size and
mtime, then by the sha256 of its content: an unchanged member keeps its events, a changed
one replaces them, and one that is gone gets a skipped row and loses its events.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import itertools
import json
import lzma
import os
import re
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import BinaryIO

import pyarrow as pa

from rca import _reader, bundles, ingest, store

ARCHIVE_SOURCE = "archive"
BUNDLE_SOURCE = "bundle"
TAR_KINDS: dict[str, Callable[[BinaryIO], BinaryIO] | None] = {
    "tar": None,
    "tar.gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    "tar.bz2": bz2.BZ2File,
    "tar.xz": lzma.LZMAFile,
    "tar.zst": lambda raw: _reader.zstd_stream(iter(lambda: raw.read(1 << 20), b"")),
}
ARCHIVE_KINDS = (*TAR_KINDS, "zip")
MAX_NESTING = 2  # an archive, and archives inside it; deeper ones get a skipped row
RATIO_GRACE = 8 << 20  # small files compress far better than their ratio says about bombs
SPOOL_MEMORY = 64 << 20
HEAD_BYTES = 64 * 1024
# bzip2 expands nothing before a whole block has arrived; a block holds at most 900 kB (after its run-length
# stage), so this much of the stream always expands to the first bytes.
BZIP2_HEAD_BYTES = 1024 * 1024 + 64 * 1024
MEMBER_SEPARATOR = "!/"

_STREAM_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError, tarfile.TarError, zipfile.BadZipFile, pa.ArrowException)
_CAN_NOT_OPEN = (*_STREAM_ERRORS, NotImplementedError, RuntimeError)  # zipfile: unknown method, encrypted member
_DRIVE = re.compile(r"^[A-Za-z]:")


def members_by_container(previous: dict[str, ingest.Previous]) -> dict[str, dict[str, ingest.Previous]]:
    """The manifest's member rows grouped under the top-level container they came from."""
    grouped: dict[str, dict[str, ingest.Previous]] = {}
    for path, row in previous.items():
        container, separator, _ = path.partition(MEMBER_SEPARATOR)
        if separator:
            grouped.setdefault(container, {})[path] = row
    return grouped


def read_container(task: ingest.FileTask) -> list[ingest.FileResult] | None:
    """The results of a planned file that is an archive or a bundle file (its own row first); None for any other file.

    A cluster-info dump's list document is read like any file, without the host of the
    folder it sits in.
    """
    if task.problem:
        return None
    try:
        info = os.stat(task.path)
        mtime = datetime.fromtimestamp(info.st_mtime, UTC)
        if ingest._unchanged(task.previous, info.st_size, mtime):
            kind = task.previous.row["format"] if task.previous.row["source"] in (ARCHIVE_SOURCE, BUNDLE_SOURCE) else None
        else:
            with open(task.path, "rb") as handle:
                kind = sniff_kind(_read_head(handle))
    except OSError:
        return None  # parse_file reports what is wrong with the file
    if kind == bundles.DUMP_DOCUMENT:
        return [ingest.parse_file(replace(task, host=None))]
    if kind is None:
        return None
    return _Reader(task).read(kind, info.st_size, mtime)


def sniff_kind(head: bytes) -> str | None:
    """What a file's first bytes open: an archive kind, a sectioned bundle, a dump document, or None."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if _is_tar(head):
        return "tar"
    if _reader.is_bzip2(head):
        return "tar.bz2" if _is_tar(_expanded_head(bz2.BZ2Decompressor(), head)) else None
    if head.startswith(_reader.XZ_MAGIC):
        return "tar.xz" if _is_tar(_expanded_head(lzma.LZMADecompressor(), head)) else None
    if head.startswith(_reader.ZSTD_MAGIC):
        return "tar.zst" if _is_tar(_zstd_head(head)) else None
    if head.startswith(_reader.GZIP_MAGIC):
        head = _expanded_head(zlib.decompressobj(16 + zlib.MAX_WBITS), head)
        if _is_tar(head):
            return "tar.gz"
    return bundles.text_kind(head.decode("utf-8", errors="replace"))


def _is_tar(head: bytes) -> bool:
    return head[257:262] == b"ustar"


def _zstd_head(head: bytes) -> bytes:
    """The first bytes a Zstandard head expands to (nothing when it is damaged or too short to tell)."""
    try:
        return pa.CompressedInputStream(pa.BufferReader(head), "zstd").read(1024)
    except (OSError, pa.ArrowException):
        return b""


def _expanded_head(decompressor: zlib._Decompress | lzma.LZMADecompressor | bz2.BZ2Decompressor, head: bytes) -> bytes:
    """The first bytes a compressed head expands to (nothing when it is damaged)."""
    try:
        return decompressor.decompress(head, HEAD_BYTES)
    except (zlib.error, lzma.LZMAError, OSError):  # bz2 says OSError
        return b""


# --- streams ----------------------------------------------------------------------------


class _Budget:
    """What one top-level container and everything inside it may still expand to."""

    def __init__(self, options: ingest.IngestOptions) -> None:
        self.bytes_left = options.archive_max_bytes
        self.members_left = options.archive_max_members
        self.max_ratio = options.archive_max_ratio
        self.options = options
        self.exceeded: str | None = None

    def take_member(self) -> bool:
        self.members_left -= 1
        if self.members_left < 0 and not self.exceeded:
            self.exceeded = f"more than {self.options.archive_max_members:,} members (archive_max_members); the rest were not read"
        return self.members_left >= 0

    def take_bytes(self, size: int) -> bool:
        self.bytes_left -= size
        if self.bytes_left < 0 and not self.exceeded:
            self.exceeded = f"expands to more than {self.options.archive_max_bytes:,} bytes (archive_max_bytes); reading stopped"
        return self.bytes_left >= 0

    def ratio_problem(self, produced: int, consumed: int) -> str | None:
        """Why ``produced`` bytes out of ``consumed`` compressed ones look like a decompression bomb; None if they do not."""
        if produced <= RATIO_GRACE or produced <= self.max_ratio * max(consumed, 1):
            return None
        return (
            f"compression ratio {produced / max(consumed, 1):,.0f}:1 is over archive_max_ratio ({self.max_ratio:g}:1), "
            f"a decompression bomb? ({produced:,} bytes from {consumed:,})"
        )


class _Counting:
    """A raw stream that counts (and hashes) the bytes read through it: a decompressor's input."""

    def __init__(self, inner: BinaryIO) -> None:
        self._inner = inner
        self.count = 0
        self.sha256 = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._inner.read(size)
        self.count += len(data)
        self.sha256.update(data)
        return data

    def readable(self) -> bool:
        return True

    def drain(self) -> None:
        """Read what the consumer left (a tar's end padding), so the digest is of the whole stream."""
        while self.read(1 << 20):
            pass


class _Guarded:
    """A stream that ends instead of raising: damage is noted, and limits stop it.

    Errors of a damaged or cut stream (gzip, xz, tar, zip) become the end of the stream
    with ``damage`` set; past the budget or the ratio (against ``source``, the compressed
    input) it ends with ``stopped`` set.
    """

    def __init__(self, inner: BinaryIO, budget: _Budget | None = None, source: _Counting | None = None) -> None:
        self._inner = inner
        self._budget = budget
        self._source = source
        self.produced = 0
        self.damage: str | None = None
        self.stopped: str | None = None

    def read(self, size: int = -1) -> bytes:
        if self.damage or self.stopped:
            return b""
        try:
            data = self._inner.read(size)
        except _STREAM_ERRORS as err:
            self.damage = str(err) or type(err).__name__
            return b""
        self.produced += len(data)
        if self._budget is not None:
            if not self._budget.take_bytes(len(data)):
                self.stopped = self._budget.exceeded
            elif self._source is not None:
                self.stopped = self._budget.ratio_problem(self.produced, self._source.count)
        return b"" if self.stopped else data

    def readable(self) -> bool:
        return True


class _Prefixed:
    """A stream whose first bytes were already read to sniff it."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(size)
        if size < 0:
            data, self._head = self._head + self._rest.read(), b""
            return data
        data, self._head = self._head[:size], self._head[size:]
        return data

    def readable(self) -> bool:
        return True


@dataclass
class _ContentGuard:
    """Bounds what a member's content (gunzipped by the reader) expands to beyond its bytes."""

    budget: _Budget
    state: _reader.ReadState
    produced: int = 0
    expanded: int = 0
    stopped: str | None = None

    def __call__(self, size: int) -> bool:
        self.produced += size
        expanded = max(self.produced - self.state.raw_bytes, 0)
        if not self.budget.take_bytes(expanded - self.expanded):
            self.stopped = self.budget.exceeded
        else:
            self.stopped = self.budget.ratio_problem(self.produced, self.state.raw_bytes)
        self.expanded = expanded
        return self.stopped is None


# --- reading -------------------------------------------------------------------------------


@dataclass
class _Container:
    """An archive or bundle file being read: what it is called, whose host it is, what went wrong."""

    provenance: str
    host: str | None
    depth: int
    sos_hosts: dict[tuple[str, ...], str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    status: str = "ok"

    def note(self, status: str, problem: str) -> None:
        self.problems.append(problem)
        if status == "error" or self.status == "ok":
            self.status = status


class _Reader:
    """Reads one top-level container and everything nested in it into results."""

    def __init__(self, task: ingest.FileTask) -> None:
        self.task = task
        self.options = task.options
        self.budget = _Budget(task.options)
        self.results: list[ingest.FileResult] = []
        self.seen: set[str] = set()
        self.complete = True  # every member was reached: the ones not seen are gone
        self.mtime: datetime | None = None  # the top-level container's, for members that carry none

    def read(self, kind: str, size: int, mtime: datetime) -> list[ingest.FileResult]:
        task = self.task
        if ingest._unchanged(task.previous, size, mtime):
            return [ingest.FileResult(task.previous.row, change="unchanged")] + [
                ingest.FileResult(previous.row, change="unchanged") for previous in task.members.values()
            ]
        self.mtime = mtime
        # An archive read by itself has no folder to name its host; an EKS collector's tarball names its instance.
        container = _Container(task.provenance, task.host or bundles.collector_host(os.path.basename(task.provenance)), depth=1)
        with open(task.path, "rb") as raw:
            row = self._read_container(kind, raw, container, size, mtime, seekable=raw)
        self._drop_copied_links()
        self._remove_gone()
        dropped = list(task.previous.parts) if task.previous else []
        own = ingest.FileResult(row, dropped_parts=dropped, change="rewritten" if task.previous else "new")
        return [own, *self.results]

    # --- containers

    def _read_container(
        self, kind: str, stream: BinaryIO, container: _Container, size: int, mtime: datetime | None, *, seekable: BinaryIO | None = None
    ) -> dict:
        """Read a container from ``stream``; its manifest row. ``seekable`` is the same bytes when they can seek (a zip on disk)."""
        if kind in bundles.SECTIONED:
            return self._read_sections(kind, stream, container, size, mtime)
        counting = _Counting(stream)
        if kind == "zip":
            self._read_zip(counting, container, seekable)
            if seekable is not None:
                seekable.seek(0)  # ZipFile read it by seeking; the digest is taken in one pass below
        else:
            self._read_tar(kind, counting, container)
        if self.budget.exceeded:
            container.note("warning" if self.budget.members_left < 0 else "error", self.budget.exceeded)
            self.complete = False
        if container.status != "error":
            counting.drain()
        return self._container_row(container, ARCHIVE_SOURCE, kind, size, mtime, counting.sha256.hexdigest())

    def _read_tar(self, kind: str, counting: _Counting, container: _Container) -> None:
        decompressor = TAR_KINDS[kind]
        expanded = _Guarded(decompressor(counting) if decompressor else counting, self.budget, counting if decompressor else None)
        try:
            tar = tarfile.open(fileobj=expanded, mode="r|")
        except (tarfile.TarError, *_STREAM_ERRORS) as err:
            container.note("error", f"not a readable {kind} archive ({expanded.damage or err})")
            return
        with tar:
            while not self.budget.exceeded:
                try:
                    member = tar.next()
                except (tarfile.TarError, *_STREAM_ERRORS) as err:
                    expanded.damage = expanded.damage or str(err)
                    break
                if member is None:
                    break
                if not member.isdir():
                    self._tar_member(tar, member, container, expanded)
                if expanded.stopped:
                    break
        self._note_stream_end(container, expanded, kind)

    def _tar_member(self, tar: tarfile.TarFile, member: tarfile.TarInfo, container: _Container, expanded: _Guarded) -> None:
        if not self.budget.take_member() or self._not_a_log(container, member.name):
            return
        name = member.name
        if member.issym() or member.islnk():
            kind = "symbolic" if member.issym() else "hard"
            return self._skip(container, name, f"{kind} link to {member.linkname}; links are not followed")
        if member.ischr() or member.isblk() or member.isfifo():
            return self._skip(container, name, "device file or FIFO; ignored")
        if not member.isreg():
            return self._skip(container, name, "not a regular file; ignored")
        self._member(lambda: tar.extractfile(member), name, container, member.size, _timestamp(member.mtime), outer=expanded)

    def _read_zip(self, counting: _Counting, container: _Container, seekable: BinaryIO | None) -> None:
        try:
            archive = zipfile.ZipFile(seekable if seekable is not None else _spool(counting))
        except _CAN_NOT_OPEN as err:
            container.note("error", f"not a readable zip archive ({err})")
            return
        with archive:
            members = [info for info in archive.infolist() if not info.is_dir()]
            self._read_sos_hostnames(archive, members, container)
            for info in members:
                if self.budget.exceeded:
                    break
                self._zip_member(archive, info, container)

    def _zip_member(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, container: _Container) -> None:
        if not self.budget.take_member() or self._not_a_log(container, info.filename):
            return
        mode = info.external_attr >> 16
        if info.create_system == 3 and stat.S_ISLNK(mode):
            return self._skip(container, info.filename, "symbolic link; links are not followed")
        if info.create_system == 3 and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)):
            return self._skip(container, info.filename, "device file or FIFO; ignored")
        if info.flag_bits & 0x1:
            return self._skip(container, info.filename, "encrypted member; not read")
        # The sizes a zip declares bound what its members can expand to, so a bomb is refused unread.
        if bomb := self.budget.ratio_problem(info.file_size, info.compress_size):
            return self._fail(container, info.filename, f"{bomb}; not read")
        self._member(lambda: archive.open(info), info.filename, container, info.file_size, _zip_time(info), outer=None)

    def _read_sos_hostnames(self, archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], container: _Container) -> None:
        """A zip's names are known before its members are read: take the sosreports' hostnames first."""
        for info in members:
            name = _safe_name(info.filename)
            folder = bundles.sos_hostname_file(name.split("/")) if name else None
            if folder and info.file_size <= bundles.HOSTNAME_BYTES:
                try:
                    host = bundles.hostname_in(archive.read(info).decode("utf-8", errors="replace"))
                except _CAN_NOT_OPEN:
                    continue
                if host:
                    container.sos_hosts.setdefault(folder, host)

    def _note_stream_end(self, container: _Container, expanded: _Guarded, kind: str) -> None:
        if expanded.stopped and expanded.stopped != self.budget.exceeded:
            container.note("error", f"{expanded.stopped}; reading stopped, the members before were ingested")
            self.complete = False
        elif expanded.damage:
            container.note("warning", f"{kind} stream cut short or damaged ({expanded.damage}); the members before the damage were ingested")
            self.complete = False

    # --- members

    def _member(
        self, open_member: Callable[[], BinaryIO], raw_name: str, container: _Container, size: int, mtime: datetime | None,
        outer: _Guarded | None,
    ) -> None:
        """Read one regular member: unchanged, a nested archive, a bundle file or a plain file.

        ``outer`` is the tar stream the member lies in (which counts its bytes); a zip member
        counts its own.
        """
        name = _safe_name(raw_name)
        if name is None:
            return self._skip(container, raw_name, "unsafe name (absolute, or with '..'); not read")
        provenance = f"{container.provenance}{MEMBER_SEPARATOR}{name}"
        self.seen.add(provenance)
        mtime = mtime or self.mtime
        parts = name.split("/")
        host = bundles.member_host(parts, container.host, container.sos_hosts)
        previous = self.task.members.get(provenance)
        sos_folder = bundles.sos_hostname_file(parts)
        if ingest._unchanged(previous, size, mtime):
            if sos_folder and previous.row["host"]:
                container.sos_hosts[sos_folder] = previous.row["host"]  # what it named when it was read
            return self._keep(provenance)
        try:
            handle = _Guarded(open_member(), None if outer else self.budget)
        except _CAN_NOT_OPEN as err:
            return self._fail(container, name, f"cannot open the member ({err})")
        if sos_folder and size <= bundles.HOSTNAME_BYTES:
            content = handle.read()
            if found := bundles.hostname_in(content.decode("utf-8", errors="replace")):
                container.sos_hosts[sos_folder] = host = found
            handle = _Guarded(io.BytesIO(content))
        head = _read_head(handle)
        kind = sniff_kind(head)
        stream = _Prefixed(head, handle)
        task = replace(self.task, provenance=provenance, host=host, previous=previous, members={}, scope=bundles.container_log_scope(name))
        if kind in ARCHIVE_KINDS:
            self._nested(kind, stream, task, container, size, mtime)
        elif kind in bundles.SECTIONED:
            row = self._read_sections(kind, stream, _Container(provenance, host, container.depth), size, mtime)
            self._add_container_row(task, row)
        else:
            self._parse_member(stream, replace(task, host=None) if kind == bundles.DUMP_DOCUMENT else task, size, mtime, handle, outer)

    def _nested(self, kind: str, stream: BinaryIO, task: ingest.FileTask, container: _Container, size: int, mtime: datetime | None) -> None:
        if container.depth >= MAX_NESTING:
            self._skip(container, task.provenance.rpartition(MEMBER_SEPARATOR)[2], f"{kind} archive nested more than {MAX_NESTING} deep; not opened")
            return
        nested = _Container(task.provenance, task.host, container.depth + 1)
        row = self._read_container(kind, stream, nested, size, mtime)
        self._add_container_row(task, row)

    def _add_container_row(self, task: ingest.FileTask, row: dict) -> None:
        dropped = list(task.previous.parts) if task.previous else []
        self.results.append(ingest.FileResult(row, dropped_parts=dropped, change="rewritten" if task.previous else "new"))

    def _parse_member(
        self, stream: BinaryIO, task: ingest.FileTask, size: int, mtime: datetime | None, handle: _Guarded, outer: _Guarded | None
    ) -> None:
        """Parse a plain member; one that ran past a limit is dropped, with an error row saying which."""
        state = _reader.ReadState()
        guard = _ContentGuard(self.budget, state)
        batches = _reader.iter_stream(stream, state, batch_bytes=self.options.batch_bytes, max_line_chars=self.options.max_line_chars, keep_reading=guard)
        change = "rewritten" if task.previous else "new"
        try:
            result = ingest.parse_batches(task, batches, state, size=size, mtime=mtime, change=change)
        except _reader.BinaryFileError as err:
            self._append_row(task, status="skipped", error=f"not a text log: {err}", bytes=size, mtime=mtime)
            return
        if limit := guard.stopped or handle.stopped or (outer.stopped if outer else None):
            _discard(task, result.new_parts)
            self._append_row(task, status="error", error=f"{limit}; not ingested", bytes=size, mtime=mtime)
            return
        if handle.damage:
            note = f"cut short inside the archive ({handle.damage}); the lines before the cut were kept"
            result.manifest.update(status="warning", error="; ".join(filter(None, [result.manifest["error"], note])))
        elif task.previous and task.previous.stands_for(result.manifest["sha256"]):
            _discard(task, result.new_parts)
            result = ingest.FileResult(task.previous.row, change="unchanged")
        self.results.append(result)

    def _read_sections(self, kind: str, stream: BinaryIO, container: _Container, size: int, mtime: datetime | None) -> dict:
        """Parse a bundle file section by section; its own row (the header lines, the reader's findings)."""
        splitter = bundles.splitter_for(kind, self.options.tz)
        state = _reader.ReadState()
        guard = _ContentGuard(self.budget, state)
        batches = _reader.iter_stream(stream, state, batch_bytes=self.options.batch_bytes, max_line_chars=self.options.max_line_chars, keep_reading=guard)
        header_lines = 0

        def pieces() -> Iterator[bundles.Piece]:
            nonlocal header_lines
            for batch in batches:
                found, headers = splitter.split(batch.lines)
                header_lines += headers
                yield from found

        first = len(self.results)
        try:
            for section, group in itertools.groupby(pieces(), key=lambda piece: piece.section):
                self._parse_section(container, section, group, splitter, mtime)
        except _reader.BinaryFileError as err:
            container.note("skipped", f"not a text log: {err}")
        if guard.stopped:
            for result in self.results[first:]:
                _discard(self.task, result.new_parts)
            del self.results[first:]
            container.note("error", f"{guard.stopped}; not ingested")
            self.complete = False
            header_lines = 0
        elif state.problems:
            container.note("warning", state.problems)
        if state.decode_errors:
            container.note("warning", f"{state.decode_errors} lines held invalid UTF-8 (kept with U+FFFD)")
        if state.truncated_lines:
            container.note("warning", f"{state.truncated_lines} lines longer than the line limit were cut")
        container.host = splitter.host or (container.host if splitter.keeps_folder_host else None)
        row = self._container_row(container, BUNDLE_SOURCE, kind, size, mtime, state.sha256.hexdigest())
        skipped = {"section header": header_lines} if header_lines else {}
        row.update(
            lines=header_lines, skipped_lines=header_lines, skipped_reasons=json.dumps(skipped),
            decode_errors=state.decode_errors, truncated_lines=state.truncated_lines,
        )
        return row

    def _parse_section(
        self, container: _Container, section: bundles.Section, group: Iterator[bundles.Piece], splitter: bundles.Splitter, mtime: datetime | None
    ) -> None:
        provenance = f"{container.provenance}{MEMBER_SEPARATOR}{section.name}"
        self.seen.add(provenance)
        host = section.host or (container.host if splitter.keeps_folder_host else None)
        previous = self.task.members.get(provenance)
        task = replace(self.task, provenance=provenance, host=host, previous=previous, members={}, scope=dict(section.scope))
        state = _reader.ReadState()
        written = splitter.written or mtime  # yearless lines take their year from when the report was written
        result = ingest.parse_batches(task, _hashed(group, state), state, size=0, mtime=written, change="rewritten" if previous else "new")
        result.manifest["bytes"] = state.raw_bytes
        if previous and previous.stands_for(result.manifest["sha256"]):
            _discard(task, result.new_parts)
            result = ingest.FileResult(previous.row, change="unchanged")
        self.results.append(result)

    # --- rows

    def _container_row(self, container: _Container, source: str, kind: str, size: int, mtime: datetime | None, sha256: str) -> dict:
        task = replace(self.task, provenance=container.provenance, host=container.host)
        return ingest._manifest_row(
            task, status=container.status, error="; ".join(container.problems) or None,
            bytes=size, mtime=mtime, sha256=sha256, source=source, format=kind,
        )

    def _member_task(self, container: _Container, name: str) -> ingest.FileTask:
        provenance = f"{container.provenance}{MEMBER_SEPARATOR}{name}"
        safe = _safe_name(name)
        host = bundles.member_host(safe.split("/"), container.host, container.sos_hosts) if safe else container.host
        return replace(self.task, provenance=provenance, host=host, previous=self.task.members.get(provenance), members={}, scope={})

    def _skip(self, container: _Container, name: str, reason: str, *, status: str = "skipped", change: str = "failed") -> None:
        task = self._member_task(container, name)
        self.seen.add(task.provenance)
        self._append_row(task, change=change, status=status, error=reason)

    def _not_a_log(self, container: _Container, name: str) -> bool:
        """Whether the member is never a log (a zip made by macOS Finder holds a ``__MACOSX/._NAME`` of every file): listed as ignored, never read."""
        reason = bundles.not_a_log(name, within=container.provenance)
        if reason:  # named as the members read are (an EKS collector's tarball writes ./kernel/…)
            self._skip(container, _safe_name(name) or name, reason, status="ignored", change="ignored")
        return bool(reason)

    def _fail(self, container: _Container, name: str, reason: str) -> None:
        task = self._member_task(container, name)
        self.seen.add(task.provenance)
        self._append_row(task, status="error", error=reason)

    def _append_row(self, task: ingest.FileTask, change: str = "failed", **values: object) -> None:
        dropped = list(task.previous.parts) if task.previous else []
        self.results.append(ingest.FileResult(ingest._manifest_row(task, **values), dropped_parts=dropped, change=change))

    def _keep(self, provenance: str) -> None:
        """A member unchanged since the last run keeps its row, and so does everything inside it."""
        inside = provenance + MEMBER_SEPARATOR
        for path, previous in self.task.members.items():
            if path == provenance or path.startswith(inside):
                self.seen.add(path)
                self.results.append(ingest.FileResult(previous.row, change="unchanged"))

    def _drop_copied_links(self) -> None:
        """A copy of kubelet's ``containers/`` link whose pod log the archive also holds loses its events.

        As in a folder (``ingest._without_copied_links``), the log under ``pods/`` is the one kept.
        A stream's members come in the order they were packed, so both were read, and the copy
        is told by its content's digest once the whole archive is.
        """
        def container(row: dict) -> tuple:
            scope = bundles.container_log_scope(row["path"])
            return row["host"], scope.get("namespace"), scope.get("pod"), scope.get("container"), row["sha256"]

        read = {
            position: result.manifest for position, result in enumerate(self.results)
            if result.change in ("new", "rewritten") and result.manifest["status"] in ("ok", "warning") and result.manifest["sha256"]
        }
        logs = {container(row): row["path"] for row in read.values() if not bundles.is_container_link(row["path"])}
        for position, row in read.items():
            twin = logs.get(container(row)) if bundles.is_container_link(row["path"]) else None
            if twin is None:
                continue
            copy = self.results[position]
            _discard(self.task, copy.new_parts)
            counts = dict.fromkeys(ingest.LINE_COUNTS, 0)
            # Its size and time stay, so the next run finds it unchanged and does not read it again.
            skipped = {**row, **counts, "status": "skipped", "error": f"the same log as {twin} (a copy of kubelet's link to it)", "skipped_reasons": None, "parts": []}
            self.results[position] = ingest.FileResult(skipped, dropped_parts=copy.dropped_parts, change=copy.change)

    def _remove_gone(self) -> None:
        """Members of the last run that the container no longer holds lose their events."""
        if not self.complete:
            return
        for path, previous in self.task.members.items():
            if path not in self.seen:
                task = replace(self.task, provenance=path, host=previous.row["host"], previous=previous)
                row = ingest._manifest_row(task, status="skipped", error=f"no longer in {self.task.provenance}")
                self.results.append(ingest.FileResult(row, dropped_parts=list(previous.parts), change="removed"))


def _hashed(group: Iterator[bundles.Piece], state: _reader.ReadState) -> Iterator[_reader.Batch]:
    """A section's pieces as batches, their text hashed and counted into ``state``."""
    for piece in group:
        text = "\n".join(piece.lines["text"].to_list()) + "\n"
        data = text.encode("utf-8")
        state.sha256.update(data)
        state.raw_bytes += len(data)
        yield _reader.Batch(piece.lines, int(piece.lines["line"][0]))


def _spool(counting: _Counting) -> BinaryIO:
    """A zip inside a stream, copied where it can seek (its bytes already count against the budget)."""
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)
    while chunk := counting.read(1 << 20):
        spool.write(chunk)
    spool.seek(0)
    return spool


def _discard(task: ingest.FileTask, parts: list[str]) -> None:
    store.discard_parts(task.staging, parts)


def _read_head(handle: BinaryIO) -> bytes:
    """The bytes :func:`sniff_kind` needs: ``HEAD_BYTES``, or for a bzip2 stream its first block."""
    head, wanted = b"", HEAD_BYTES
    while len(head) < wanted and (chunk := handle.read(wanted - len(head))):
        head += chunk
        if len(head) >= 10 and _reader.is_bzip2(head):
            wanted = BZIP2_HEAD_BYTES
    return head


def _safe_name(raw: str) -> str | None:
    """A member's name as a relative path (``./`` and doubled slashes dropped); None when it is absolute or climbs with ``..``."""
    name = raw.replace("\\", "/")
    if name.startswith("/") or _DRIVE.match(name):
        return None
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts or not parts:
        return None
    return "/".join(parts)


def _timestamp(seconds: float) -> datetime | None:
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _zip_time(info: zipfile.ZipInfo) -> datetime | None:
    try:
        return datetime(*info.date_time, tzinfo=UTC)
    except ValueError:
        return None
