"""Splitting raw bytes into lines: the fast path (polars' CSV reader) and the plain one agree on every input."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rca._reader import ReadState, _decode

# The bytes on which a CSV reader could read a line otherwise than str.split: separators, quotes, comment
# and carriage-return characters, a byte-order mark, NUL, bytes that are not UTF-8 (stray, surrogates, overlong, past U+10FFFF), multi-byte characters.
_PIECES = [b"a", b"7", b" ", b"\t", b"\n", b"\r", b"\r\n", b"\x1f", b"\xef\xbb\xbf", "é".encode(), "界".encode(),
           b'"', b"'", b"#", b",", b";", b"\x00", b"\xff", b"\xc3",
           b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80"]


def _expected(data: bytes, max_chars: int) -> tuple[list[str], int, int]:
    """Lines, decode errors and truncated lines, by the definition: split at \\n, drop one \\r before it."""
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
    assert (state.decode_errors, state.truncated_lines) == (errors, truncated)


def test_a_batch_of_log_lines_keeps_blank_lines_quotes_and_crlf() -> None:
    data = b'Dec  1 03:17:05 gpu-1 kernel: "quoted", a,b\r\n\n   \n# not a comment\nlast line without newline'
    batch = _decode(data, ReadState(), 10, 1000)
    assert batch.lines.rows() == [
        (10, 'Dec  1 03:17:05 gpu-1 kernel: "quoted", a,b'), (11, ""), (12, "   "), (13, "# not a comment"),
        (14, "last line without newline"),
    ]
