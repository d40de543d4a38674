"""systemd journal files (``/var/log/journal/<machine-id>/*.journal``), read without systemd.

On most Kubernetes nodes kubelet, the container runtime and the kernel log to journald, so a
folder copied off a node often holds the journal's own files rather than a ``journalctl``
export. A journal file (https://systemd.io/JOURNAL_FILE_FORMAT/) is a header, then objects:
*entries*, each a list of references to *data* objects (``FIELD=value``, shared by every entry
with that field and value, compressed with XZ, LZ4 or Zstandard past a size), and *entry
arrays*, a chain that lists every entry in the order it was written. The chain gives the
entries; numpy reads their headers and items as whole arrays; each distinct data object is cut
out (and decompressed) once. Both layouts are read: the regular one and systemd 252's compact
one (32-bit offsets).

Each entry becomes the line ``journalctl -o json`` prints for it, which the syslog source reads:
kernel messages go to the kernel's rules, kubelet's to kubelet's, the container runtimes' to
theirs, exactly as for an export; a line no rule claims is a ``syslog`` event, as in a
``journalctl`` text file. An entry is a line of the file: ``line`` is its place in the chain
(1 for the first). A file cut short (copied while journald wrote to it) gives the entries
before the cut; a file that is no journal, or whose header is cut, or that uses a feature this
reader does not know, is a :class:`~rca.errors.FileFormatError`.
"""

from __future__ import annotations

import dataclasses
import lzma
import struct
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pyarrow as pa

from rca.errors import FileFormatError
from rca.sources import _syslog, register, syslog
from rca.sources._base import ParseContext, Parsed, Source, attrs_json

SIGNATURE = b"LPKSHHRH"
# The header up to and including entry_array_offset: every version of the format has it.
_HEADER = struct.Struct("<8sII B7x 16s16s16s16s QQ QQ QQ QQ QQQ Q")
_COMPACT = 16
_KNOWN_INCOMPATIBLE = 1 | 2 | 4 | 8 | _COMPACT  # XZ, LZ4, keyed hash, Zstandard, compact
_OBJECT_HEADER = 16
_DATA, _ENTRY, _ENTRY_ARRAY = 1, 3, 6
_ENTRY_ITEMS_AT = 64
_XZ, _LZ4, _ZSTD = 1, 2, 4
# An object's declared size past this is damage, not data (journald caps a field far below it).
_MAX_OBJECT = 1 << 30
# The fields journalctl -o json prints that the syslog source reads, in the order it prints them.
FIELDS = (
    "__REALTIME_TIMESTAMP", "_SOURCE_REALTIME_TIMESTAMP", "PRIORITY", "SYSLOG_FACILITY", "SYSLOG_IDENTIFIER", "SYSLOG_PID",
    "_PID", "_COMM", "_HOSTNAME", "_TRANSPORT", "_SYSTEMD_UNIT", "_SYSTEMD_USER_UNIT", "UNIT", "USER_UNIT", "_SYSTEMD_CGROUP",
    *_syslog.LOG_DRIVER_FIELDS, "MESSAGE",
)


def sniff_bytes(head: bytes) -> float:
    """1.0 for a journal file (its signature opens it), else 0."""
    return 1.0 if head.startswith(SIGNATURE) else 0.0


def parse_bytes(data: bytes, ctx: ParseContext) -> Parsed:
    """The entries of a journal file as events (raises FileFormatError for a file that cannot be read as one)."""
    entries, latest = _entries(data)
    lines = entries.select("line", "text")
    if lines.height == 0:
        return Parsed(events=pl.DataFrame(), skipped={}, lines=0)
    if ctx.year is None:
        # A yearless stamp inside an entry (klog's) is dated by the entries' own times: the latest bounds
        # them, as the end that journalctl's banner names bounds an export's.
        ctx = dataclasses.replace(ctx, reference_time=latest, reference_quality="year_inferred")
    parsed = parse(lines, ctx)
    return Parsed(events=parsed.events, skipped=parsed.skipped, lines=lines.height)


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """``journalctl -o json`` lines read by the syslog source; the lines no program's rules claim are ``syslog``
    events, as in a ``journalctl`` export."""
    parsed = syslog.parse(lines, ctx)
    return Parsed(events=_syslog.as_syslog(parsed.events), skipped=parsed.skipped)


def json_lines(data: bytes) -> pl.DataFrame:
    """``line`` and ``text``: each entry as ``journalctl -o json`` prints it (the fields of :data:`FIELDS` it has)."""
    return _entries(data)[0]


def _entries(data: bytes) -> tuple[pl.DataFrame, datetime | None]:
    """:func:`json_lines`, and the time of the latest entry (None without entries)."""
    journal = _Journal(data)
    entries = journal.entry_offsets()
    entry_of_item, data_offsets = journal.items(entries)
    distinct, which = np.unique(data_offsets, return_inverse=True)
    fields = journal.fields(distinct).with_row_index("data").filter(pl.col("name").is_in(FIELDS))
    items = pl.DataFrame({"entry": entry_of_item, "data": which.astype(np.uint32)}).join(fields, on="data")
    wide = items.pivot(on="name", index="entry", values="value", aggregate_function="first") if items.height else pl.DataFrame()
    realtime = journal.u64(entries + 24)
    latest = datetime.fromtimestamp(int(realtime.max()) / 1e6, UTC) if len(realtime) else None
    frame = pl.DataFrame({"entry": np.arange(len(entries), dtype=np.int64), "__REALTIME_TIMESTAMP": realtime.astype(str)})
    if wide.height:
        frame = frame.join(wide.drop("__REALTIME_TIMESTAMP", strict=False), on="entry", how="left")
    present = [name for name in FIELDS if name in frame.columns]
    return frame.select(line=pl.col("entry") + 1, text=attrs_json({name: pl.col(name) for name in present})), latest


class _Journal:
    """The file's bytes, with whole-array reads of its little-endian words at byte offsets."""

    def __init__(self, data: bytes) -> None:
        if len(data) < _HEADER.size or not data.startswith(SIGNATURE):
            raise FileFormatError("not a journal file, or its header is cut short")
        fields = _HEADER.unpack_from(data)
        incompatible, self.header_size, n_entries, self.first_array = fields[2], fields[8], fields[16], fields[19]
        if incompatible & ~_KNOWN_INCOMPATIBLE:
            raise FileFormatError(f"journal file with features this reader does not know (incompatible flags 0x{incompatible:x})")
        self.compact = bool(incompatible & _COMPACT)
        self.n_entries = n_entries
        self.data = data
        self._bytes = np.frombuffer(data, dtype=np.uint8)
        self._words32 = np.frombuffer(data, dtype="<u4", count=len(data) // 4)
        self._words64 = np.frombuffer(data, dtype="<u8", count=len(data) // 8)

    def u64(self, offsets: np.ndarray) -> np.ndarray:
        """The 64-bit words at ``offsets`` (multiples of 8 inside the file)."""
        return self._words64[offsets // 8]

    def _offsets(self, positions: np.ndarray) -> np.ndarray:
        """The object offsets stored at ``positions``: 32-bit words in a compact file, else 64-bit."""
        return (self._words32[positions // 4] if self.compact else self._words64[positions // 8]).astype(np.int64)

    def _objects(self, offsets: np.ndarray, kind: int, least: int) -> np.ndarray:
        """Which of ``offsets`` are whole objects of ``kind`` at least ``least`` bytes long inside the file."""
        inside = (offsets >= self.header_size) & (offsets % 8 == 0) & (offsets + _OBJECT_HEADER <= len(self.data))
        safe = np.where(inside, offsets, 0)
        sizes = self._words64[(safe + 8) // 8].astype(np.int64)
        return inside & (self._bytes[safe] == kind) & (sizes >= least) & (sizes <= _MAX_OBJECT) & (safe + sizes <= len(self.data))

    def entry_offsets(self) -> np.ndarray:
        """The offsets of the entries, in the order the chain of entry arrays lists them; those cut off dropped."""
        width = 4 if self.compact else 8
        chunks, seen, offset = [], set(), self.first_array
        # A damaged header or array may point anywhere, even past what a signed 64-bit offset holds.
        while 0 < offset < len(self.data) and offset not in seen and sum(len(chunk) for chunk in chunks) < self.n_entries:
            seen.add(offset)
            if not self._objects(np.array([offset], dtype=np.int64), _ENTRY_ARRAY, 24)[0]:
                break
            size = int(self._words64[(offset + 8) // 8])
            positions = offset + 24 + width * np.arange((size - 24) // width, dtype=np.int64)
            listed = self._offsets(positions)
            chunks.append(listed[: np.argmax(listed == 0)] if (listed == 0).any() else listed)
            offset = int(self._words64[(offset + 16) // 8])
        entries = np.concatenate(chunks)[: self.n_entries] if chunks else np.zeros(0, dtype=np.int64)
        whole = self._objects(entries, _ENTRY, _ENTRY_ITEMS_AT)
        # A cut-off entry ends the file: what a live journal wrote after it is not there either.
        return entries[: np.argmin(whole)] if not whole.all() else entries

    def items(self, entries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each item of the entries: the number of its entry and the offset of its data object."""
        width = 4 if self.compact else 16
        counts = (self._words64[(entries + 8) // 8].astype(np.int64) - _ENTRY_ITEMS_AT) // width
        entry_of_item = np.repeat(np.arange(len(entries), dtype=np.int64), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        positions = np.repeat(entries + _ENTRY_ITEMS_AT, counts) + width * (np.arange(len(entry_of_item), dtype=np.int64) - first)
        return entry_of_item, self._offsets(positions)

    def fields(self, distinct: np.ndarray) -> pl.DataFrame:
        """``name`` and ``value`` of the data object at each offset (null for one that is cut off or undecodable)."""
        payload_at = 72 if self.compact else 64
        whole = self._objects(distinct, _DATA, payload_at)
        starts = distinct + payload_at
        ends = distinct + self._words64[(np.where(whole, distinct, 0) + 8) // 8].astype(np.int64)
        flags = self._bytes[np.where(whole, distinct, 0) + 1]
        texts = [
            _decoded(self.data[start:end], flag) if ok else None
            for start, end, flag, ok in zip(starts.tolist(), ends.tolist(), flags.tolist(), whole.tolist(), strict=True)
        ]
        return pl.Series("pair", texts, dtype=pl.String).str.splitn("=", 2).struct.rename_fields(["name", "value"]).struct.unnest()


def _decoded(payload: bytes, flags: int) -> str | None:
    """A data object's ``FIELD=value`` (UTF-8, invalid bytes replaced), decompressed; None if it cannot be."""
    try:
        if flags & _XZ:
            payload = lzma.decompress(payload)
        elif flags & _LZ4:
            payload = pa.decompress(payload[8:], decompressed_size=int.from_bytes(payload[:8], "little"), codec="lz4_raw", asbytes=True)
        elif flags & _ZSTD:
            payload = pa.decompress(payload, decompressed_size=_zstd_content_size(payload), codec="zstd", asbytes=True)
    except (lzma.LZMAError, OSError, ValueError, pa.ArrowException):
        return None
    return payload.decode("utf-8", "replace")


def _zstd_content_size(frame: bytes) -> int:
    """The decompressed size a Zstandard frame's header declares (systemd always writes it)."""
    if len(frame) < 6 or frame[:4] != b"\x28\xb5\x2f\xfd":
        raise ValueError("not a Zstandard frame")
    descriptor = frame[4]
    single_segment = descriptor >> 5 & 1
    at = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3]
    width = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
    if width == 0 or len(frame) < at + width:
        raise ValueError("Zstandard frame without its content size")
    return int.from_bytes(frame[at : at + width], "little") + (256 if width == 2 else 0)


def _never(head: Sequence[str]) -> float:
    return 0.0  # a journal file is told by its first bytes (sniff_bytes), never by text lines


SOURCE = register(
    Source(
        name="journal_file", sniff=_never, parse=parse, sniff_bytes=sniff_bytes, parse_bytes=parse_bytes,
        formats=("journal_json",),
    )
)
