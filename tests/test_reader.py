"""Splitting raw bytes into lines: the fast path (polars' CSV reader) and the plain one agree on every input."""

from __future__ import annotations

import codecs
import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca._reader import ReadState, _csv_lines, _csv_splits_alike, _decode, iter_batches, reads_by_offset

# The bytes on which a CSV reader could read a line otherwise than str.split: separators, quotes, comment
# and carriage-return characters, a byte-order mark, NUL, bytes that are not UTF-8 (stray, surrogates, overlong, past U+10FFFF), multi-byte characters.
_PIECES = [b"a", b"7", b" ", b"\t", b"\n", b"\r", b"\r\n", b"\x1f", b"\xef\xbb\xbf", "é".encode(), "界".encode(),
           b'"', b"'", b"#", b",", b";", b"\x00", b"\xff", b"\xc3",
           b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80"]


def _expected(data: bytes, max_chars: int) -> tuple[list[str], int, int]:
    """Lines, decode errors and truncated lines, by the definition: NUL bytes dropped, split at \\n, drop one \\r before it."""
    data = data.replace(b"\x00", b"")
    try:
        text, replaced = data.decode("utf-8"), False
    except UnicodeDecodeError:
        text, replaced = data.decode("utf-8", errors="replace"), True
    rows = text.split("\n")
    if rows[-1] == "":
        rows.pop()
    rows = [row.removesuffix("\r") for row in rows]
    errors = sum("\ufffd" in row for row in rows) if replaced else 0
    return [row[:max_chars] for row in rows], errors, sum(len(row) > max_chars for row in rows)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.integers(1, 6), st.integers(1, 1000))
def test_lines_are_the_bytes_split_at_newlines_whatever_the_bytes(pieces: list[bytes], max_chars: int, first: int) -> None:
    data = b"".join(pieces)
    state = ReadState()
    batch = _decode(data, state, first, max_chars)
    lines, errors, truncated = _expected(data, max_chars)
    assert batch.lines["text"].to_list() == lines
    assert batch.lines["line"].to_list() == list(range(first, first + len(lines)))
    assert (state.decode_errors, state.truncated_lines, state.nul_bytes) == (errors, truncated, data.count(b"\x00"))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_the_csv_reader_splits_utf8_as_the_plain_split_does(pieces: list[bytes]) -> None:
    """Batches from 512 KiB are split by polars' CSV reader (smaller ones in Python): the same lines, where it is used."""
    data = b"".join(pieces).replace(b"\x00", b"")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    if _csv_splits_alike(data):
        assert _csv_lines(data).to_list() == _expected(data, 1_000)[0]


def test_a_batch_of_log_lines_keeps_blank_lines_quotes_and_crlf() -> None:
    data = b'Dec  1 03:17:05 gpu-1 kernel: "quoted", a,b\r\n\n   \n# not a comment\nlast line without newline'
    batch = _decode(data, ReadState(), 10, 1000)
    assert batch.lines.rows() == [
        (10, 'Dec  1 03:17:05 gpu-1 kernel: "quoted", a,b'), (11, ""), (12, "   "), (13, "# not a comment"),
        (14, "last line without newline"),
    ]


# --- what Windows tools write: UTF-16 and UTF-8 with a byte-order mark ------------------------------------------------

_KUBECTL_LOGS = "2026-12-01T03:17:05.123Z INFO step 1 loss=0.25 — ok\r\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\r\n"


def _read(path: Path, batch_bytes: int = 1 << 20) -> list[str]:
    batches = iter_batches(str(path), ReadState(), batch_bytes=batch_bytes, max_line_chars=1000)
    return [text for batch in batches for text in batch.lines["text"]]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_with_a_byte_order_mark_is_read_as_its_text(tmp_path: Path, encoding: str) -> None:
    # Windows PowerShell 5.1: `kubectl logs trainer-0 > trainer.log` writes UTF-16 (little-endian) with a mark.
    path = tmp_path / "trainer.log"
    mark = {"utf-16": b"", "utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}[encoding]
    path.write_bytes(mark + (_KUBECTL_LOGS * 8000).encode(encoding))  # past one 1 MiB read: a character may be cut between reads
    assert _read(path) == _KUBECTL_LOGS.replace("\r\n", "\n").splitlines() * 8000


def test_utf16_compressed_is_read_as_its_text(tmp_path: Path) -> None:
    path = tmp_path / "trainer.log.gz"
    path.write_bytes(gzip.compress(_KUBECTL_LOGS.encode("utf-16")))
    assert _read(path) == _KUBECTL_LOGS.replace("\r\n", "\n").splitlines()


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "trainer.log"
    path.write_bytes(codecs.BOM_UTF8 + _KUBECTL_LOGS.encode())
    assert _read(path)[0].startswith("2026-12-01T03:17:05.123Z INFO")


def test_a_utf8_byte_order_mark_is_dropped_from_the_first_range_of_a_split_file(tmp_path: Path) -> None:
    path = tmp_path / "trainer.log"
    path.write_bytes(codecs.BOM_UTF8 + _KUBECTL_LOGS.encode() * 2)
    middle = len(codecs.BOM_UTF8) + len(_KUBECTL_LOGS.encode())
    ranges = [iter_batches(str(path), ReadState(), start=start, end=end, batch_bytes=1 << 20, max_line_chars=1000, probe=False)
              for start, end in ((0, middle), (middle, path.stat().st_size))]
    assert [text for batches in ranges for batch in batches for text in batch.lines["text"]] == _KUBECTL_LOGS.replace("\r\n", "\n").splitlines() * 2


def test_utf16_is_never_read_by_byte_offset(tmp_path: Path) -> None:
    utf16, plain = tmp_path / "a.log", tmp_path / "b.log"
    utf16.write_bytes(_KUBECTL_LOGS.encode("utf-16"))
    plain.write_bytes(codecs.BOM_UTF8 + _KUBECTL_LOGS.encode())
    assert (reads_by_offset(str(utf16)), reads_by_offset(str(plain))) == (False, True)
