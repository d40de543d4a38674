"""Reading raw log files into bounded batches of lines, whatever shape the bytes are in.

Handles gzip, bzip2, xz and Zstandard (also truncated; logrotate's compressors), UTF-16 and UTF-8 with a byte-order
mark (what Windows tools write), invalid UTF-8 (kept with replacement characters and
counted), over-long lines (cut and counted) and binary files (refused), and hashes the
raw bytes on the way so the manifest can tell unchanged, appended and rewritten files apart.
"""

from __future__ import annotations

import bz2
import codecs
import hashlib
import itertools
import lzma
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import polars as pl
import pyarrow as pa

from rca.sources._base import LINES_SCHEMA

GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
COMPRESSED_MAGICS = (GZIP_MAGIC, XZ_MAGIC, ZSTD_MAGIC)
# bzip2: "BZh", the block size digit, then a block's magic (BCD pi) or, for an empty stream, the end marker (BCD sqrt(pi)).
_BZIP2_BLOCK_MAGICS = (b"1AY&SY", b"\x17rE8P\x90")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_READ_SIZE = 1 << 20
_BINARY_PROBE = 8192
# Bytes of a text log besides printable ASCII and UTF-8's upper half: tab, line ends, form feed, backspace, escape.
_TEXT_BYTES = bytes([0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1B, *range(0x20, 0x7F), *range(0x80, 0x100)])
# A crash leaves a log it was writing with a run or two of zero bytes (blocks allocated, never written); UTF-16 without
# a byte-order mark, or a binary format, has NULs all through.
_MOST_NUL_RUNS = 64


class BinaryFileError(Exception):
    """The file holds NUL bytes all through its start, or other control bytes with them: it is not a text log."""


@dataclass
class ReadState:
    """What reading learned besides the lines: digest of the raw bytes and damage found."""

    sha256: "hashlib._Hash" = field(default_factory=hashlib.sha256)
    raw_bytes: int = 0
    decode_errors: int = 0
    truncated_lines: int = 0
    nul_bytes: int = 0
    damage: str | None = None

    @property
    def problems(self) -> str | None:
        """The damage found and the NUL bytes dropped, in words (None: neither)."""
        dropped = f"{self.nul_bytes} NUL bytes dropped (zero padding, as a crash leaves in a log it was writing)" if self.nul_bytes else None
        return "; ".join(note for note in (self.damage, dropped) if note) or None


@dataclass(frozen=True)
class Batch:
    lines: pl.DataFrame
    first_line: int


class _HashingReader:
    """A raw file object that feeds every byte it returns into the read state's digest."""

    def __init__(self, handle: BinaryIO, state: ReadState) -> None:
        self._handle = handle
        self._state = state

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        self._state.sha256.update(data)
        self._state.raw_bytes += len(data)
        return data

    def readable(self) -> bool:
        return True


def prefix_digest(path: str, length: int) -> str:
    """sha256 of the first ``length`` bytes of ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        remaining = length
        while remaining > 0:
            chunk = handle.read(min(_READ_SIZE, remaining))
            if not chunk:
                break
            digest.update(chunk)
            remaining -= len(chunk)
    return digest.hexdigest()


def is_bzip2(head: bytes) -> bool:
    """Whether ``head`` opens a bzip2 stream (checked past "BZh", which a text file may start with)."""
    return head.startswith(b"BZh") and head[3:4] in (b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"9") and head[4:10] in _BZIP2_BLOCK_MAGICS


def reads_by_offset(path: str) -> bool:
    """Whether a byte offset of the file is one of the text it holds: neither compressed nor UTF-16 (transcoded as read)."""
    with open(path, "rb") as handle:
        head = handle.read(10)
    return not (head.startswith(COMPRESSED_MAGICS + _UTF16_BOMS) or is_bzip2(head))


def iter_batches(
    path: str, state: ReadState, *, start: int = 0, end: int | None = None, first_line: int = 1, batch_bytes: int, max_line_chars: int,
    probe: bool = True,
) -> Iterator[Batch]:
    """Yield the file's lines in batches of about ``batch_bytes``, starting at byte ``start``.

    ``start`` skips an already-ingested prefix of a plain file (its bytes still go into
    the digest, so the digest is always of the whole file). With ``end``, only the plain
    bytes ``[start, end)`` are read, the prefix skipped by seeking (the digest is then of
    that range alone). Raises :class:`BinaryFileError` before yielding anything if the
    content is binary (unless ``probe`` is False: a later range of a file whose start was
    already found to be text).

    What the file's first bytes tell (compression, a byte-order mark, NUL bytes of a binary
    file) is looked for there only: bytes from a later ``start`` are read as they are, as a
    whole read reads them (an appended gzip stream or mark is text in the middle of a file).
    """
    with open(path, "rb") as raw_handle:
        raw = _HashingReader(raw_handle, state)
        if end is not None:
            raw_handle.seek(start)
            content = _plain(raw, end - start)
        elif start:
            _consume(raw, start)
            content = _plain(raw)
        else:
            content = _content(raw, state)
        if start == 0:
            content = _text_chunks(content) if probe else content
            content = _utf8(content) if end is not None else content  # the first range of a file with a UTF-8 mark drops it
        yield from _batches(content, state, first_line, batch_bytes, max_line_chars)


def iter_stream(
    handle: BinaryIO, state: ReadState, *, batch_bytes: int, max_line_chars: int, keep_reading: Callable[[int], bool] | None = None
) -> Iterator[Batch]:
    """Like :func:`iter_batches` for a stream that cannot seek (an archive member).

    ``keep_reading`` sees the size of every chunk of content (after gunzip) before it is
    used and ends the stream by returning False: archives bound what a member may expand to.
    """
    chunks = _content(_HashingReader(handle, state), state)
    if keep_reading is not None:
        chunks = itertools.takewhile(lambda chunk: keep_reading(len(chunk)), chunks)
    yield from _batches(_text_chunks(chunks), state, 1, batch_bytes, max_line_chars)


def _content(reader: _HashingReader, state: ReadState) -> Iterator[bytes]:
    """The stream's text as UTF-8, decompressed when it starts with the gzip, bzip2, xz or Zstandard magic."""
    first = reader.read(_READ_SIZE)
    chunks = itertools.chain([first], _plain(reader))
    if first.startswith(GZIP_MAGIC):
        return _utf8(_gunzip(chunks, state))
    if first.startswith(XZ_MAGIC):
        return _utf8(_unpacked(chunks, state, lzma.LZMADecompressor, "xz", lzma.LZMAError))
    if is_bzip2(first):
        return _utf8(_unpacked(chunks, state, bz2.BZ2Decompressor, "bzip2", OSError))
    if first.startswith(ZSTD_MAGIC):
        return _utf8(_unzstd(chunks, state))
    return _utf8(chunks)


def _utf8(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Text whose byte-order mark says UTF-16, transcoded to UTF-8; a UTF-8 byte-order mark dropped.

    Windows PowerShell 5.1 writes UTF-16 with a mark for ``kubectl logs POD > pod.log``, and a
    mark before UTF-8 for ``Out-File -Encoding utf8``; read as they are, the one is refused
    as binary (its NUL bytes) and the other's first line carries the mark before its stamp.
    """
    first = next(chunks, b"")
    if first.startswith(_UTF16_BOMS):
        decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
        for chunk in itertools.chain([first], chunks):
            yield decoder.decode(chunk).encode()
        yield decoder.decode(b"", final=True).encode()
        return
    if first:
        yield first.removeprefix(codecs.BOM_UTF8)
    yield from chunks


def _consume(reader: _HashingReader, length: int) -> None:
    remaining = length
    while remaining > 0:
        chunk = reader.read(min(_READ_SIZE, remaining))
        if not chunk:
            return
        remaining -= len(chunk)


def _plain(reader: _HashingReader, limit: int | None = None) -> Iterator[bytes]:
    remaining = limit
    while chunk := reader.read(_READ_SIZE if remaining is None else min(_READ_SIZE, remaining)):
        yield chunk
        if remaining is not None:
            remaining -= len(chunk)


def _gunzip(chunks: Iterable[bytes], state: ReadState) -> Iterator[bytes]:
    """Decompress gzip (all members) and keep whatever precedes damage or truncation.

    Output comes in pieces of at most ``_READ_SIZE``, so a small, highly compressed chunk
    never expands to gigabytes in memory at once.
    """
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    member_open = False
    for chunk in chunks:
        while chunk:
            member_open = True
            try:
                out = inflater.decompress(chunk, _READ_SIZE)
            except zlib.error as damage:
                state.damage = f"damaged gzip stream ({damage}); the lines before the damage were kept"
                return
            if out:
                yield out
            if inflater.eof:
                chunk, member_open = inflater.unused_data, False
                inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            else:
                chunk = inflater.unconsumed_tail  # input held back because the output piece was full
    if member_open:
        if tail := inflater.flush():
            yield tail
        if not inflater.eof:
            state.damage = "truncated gzip stream (it ends before its end marker); the lines before the cut were kept"


def _unpacked(
    chunks: Iterable[bytes], state: ReadState, decompressor_type: Callable[[], lzma.LZMADecompressor | bz2.BZ2Decompressor],
    name: str, damage_error: type[Exception],
) -> Iterator[bytes]:
    """Decompress xz or bzip2 (all streams: pbzip2 and ``cat`` of rotations write several), in pieces of at most
    ``_READ_SIZE``; keep whatever precedes damage or truncation. bzip2 gives a block's text only once the whole block
    (up to 900 kB of text) has arrived, so a cut bzip2 file loses its last block."""
    decompressor, opened = decompressor_type(), False
    try:
        for data in chunks:
            while data or not decompressor.needs_input:
                opened = True
                if out := decompressor.decompress(data, _READ_SIZE):
                    yield out
                data = b""
                if decompressor.eof:
                    data, decompressor, opened = decompressor.unused_data, decompressor_type(), False
    except damage_error as damage:
        state.damage = f"damaged {name} stream ({damage}); the lines before the damage were kept"
        return
    if opened and not decompressor.eof:
        state.damage = f"truncated {name} stream (it ends before its end marker); the lines before the cut were kept"


class _Chunks:
    """Chunks of bytes as a file object that can only be read, for pyarrow's decompressing stream."""

    closed = False

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks, self._held = chunks, b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._held) < size:
            chunk = next(self._chunks, b"")
            if not chunk:
                break
            self._held += chunk
        out, self._held = (self._held, b"") if size < 0 else (self._held[:size], self._held[size:])
        return out

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def zstd_stream(chunks: Iterator[bytes]) -> pa.NativeFile:
    """A file object of the Zstandard stream in ``chunks``, decompressed (all frames)."""
    return pa.CompressedInputStream(pa.PythonFile(_Chunks(chunks), mode="r"), "zstd")


def _unzstd(chunks: Iterator[bytes], state: ReadState) -> Iterator[bytes]:
    """Decompress Zstandard, in pieces of at most ``_READ_SIZE``; keep whatever precedes damage or truncation."""
    stream = zstd_stream(chunks)
    try:
        while out := stream.read(_READ_SIZE):
            yield out
    except (OSError, pa.ArrowException) as damage:
        state.damage = f"damaged or truncated Zstandard stream ({damage}); the lines before it were kept"


def _text_chunks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    first = True
    for chunk in chunks:
        if first and b"\x00" in chunk[:_BINARY_PROBE] and not _zero_padded_text(chunk[:_BINARY_PROBE]):
            raise BinaryFileError("binary content (NUL bytes in the first 8 KiB)")
        first = False
        yield chunk


def _zero_padded_text(probe: bytes) -> bool:
    """Whether ``probe``, which holds NUL bytes, is text with a few runs of them (a crash's padding): without its NULs,
    lines of text with no other control bytes."""
    text = probe.replace(b"\x00", b"")
    runs = len([run for run in probe.split(b"\x00") if run])
    other_controls = len(text.translate(None, _TEXT_BYTES))
    lines = text.count(b"\n")
    return bool(text) and runs <= _MOST_NUL_RUNS and other_controls * 100 <= len(text) and lines >= max(1, len(text) // 4096)


def _batches(chunks: Iterator[bytes], state: ReadState, first_line: int, batch_bytes: int, max_line_chars: int) -> Iterator[Batch]:
    pending: list[bytes] = []
    pending_size = 0
    next_line = first_line
    for chunk in chunks:
        pending.append(chunk)
        pending_size += len(chunk)
        if pending_size < batch_bytes:
            continue
        data = b"".join(pending)
        cut = data.rfind(b"\n")
        if cut < 0:
            # One line longer than a whole batch: keep collecting, it is cut when decoded.
            pending, pending_size = [data], len(data)
            continue
        pending, pending_size = [data[cut + 1 :]], len(data) - cut - 1
        batch = _decode(data[: cut + 1], state, next_line, max_line_chars)
        next_line += batch.lines.height
        yield batch
    tail = b"".join(pending)
    if tail:
        yield _decode(tail, state, next_line, max_line_chars)


def decode_lines(data: bytes, max_line_chars: int) -> pl.DataFrame:
    """Whole lines of ``data`` (a piece of a file) as a lines frame numbered from 1, decoded as :func:`iter_batches` does."""
    return _decode(data, ReadState(), 1, max_line_chars).lines


def _decode(data: bytes, state: ReadState, first_line: int, max_line_chars: int) -> Batch:
    if b"\x00" in data:
        state.nul_bytes += data.count(b"\x00")
        data = data.replace(b"\x00", b"")
    lines, replaced = _lines_of(data)
    if replaced:
        state.decode_errors += int(lines.str.contains("\ufffd", literal=True).sum())
    too_long = lines.str.len_chars() > max_line_chars
    if too_long.any():
        state.truncated_lines += int(too_long.sum())
        lines = lines.str.slice(0, max_line_chars)
    numbers = pl.int_range(first_line, first_line + lines.len(), eager=True)
    return Batch(pl.DataFrame({"line": numbers, "text": lines}, schema=LINES_SCHEMA), first_line)


# Below this, splitting in Python is faster than polars' CSV reader, which costs about 0.7 ms a call however few
# the lines (measured on journal lines: 20 KB 0.10 ms against 0.71 ms, 256 KB 0.44 against 0.87, 1 MB 1.56 against 1.35).
CSV_SPLIT_BYTES = 512 * 1024


def _lines_of(data: bytes) -> tuple[pl.Series, bool]:
    """The lines of ``data`` without their ``\\r\\n`` or ``\\n``, and whether bytes that are not UTF-8 were replaced."""
    if len(data) >= CSV_SPLIT_BYTES and _csv_splits_alike(data):
        try:
            return _csv_lines(data), False
        except pl.exceptions.ComputeError:  # not UTF-8: read below with replacement characters
            pass
    try:
        return _split_lines(data.decode("utf-8")), False
    except UnicodeDecodeError:
        return _split_lines(data.decode("utf-8", errors="replace")), True


def _csv_splits_alike(data: bytes) -> bool:
    """Whether polars' CSV reader, one column per line, reads ``data`` as :func:`_split_lines` would: no
    byte it would take for a column separator, and no byte-order mark, which it drops."""
    return bool(data) and b"\x1f" not in data and not data.startswith(b"\xef\xbb\xbf")


def _csv_lines(data: bytes) -> pl.Series:
    """The lines of ``data`` split by polars' CSV reader, which refuses bytes that are not UTF-8: a fifth of the
    time of decoding, ``str.split`` and a Series built from its list. It drops the ``\\r`` of a ``\\r\\n``
    ending as :func:`_split_lines` does."""
    frame = pl.read_csv(data, has_header=False, separator="\x1f", quote_char=None, new_columns=["text"], schema={"text": pl.String})
    return frame.get_column("text").fill_null("")


def _split_lines(text: str) -> pl.Series:
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    return pl.Series("text", rows, dtype=pl.String).str.strip_suffix("\r")
