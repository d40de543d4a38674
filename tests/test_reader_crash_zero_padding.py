"""A log a crash cut off: the zero bytes the file system left in it are dropped and counted, and the lines around
them (the next boot's included) are read; a file that is NUL bytes all through, or binary, is still refused."""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca._reader import BinaryFileError, ReadState, iter_batches

BEFORE = "".join(f"Dec  1 03:17:{second:02d} gpu-node-1 kernel: [ {1000 + second}.000000] eth0: link is up\n" for second in range(40))
AFTER = (
    "Dec  1 03:25:00 gpu-node-1 kernel: [    0.000000] Linux version 5.15.0-91-generic\n"
    "Dec  1 03:25:09 gpu-node-1 kernel: [    9.000000] Out of memory: Killed process 4242 (python) total-vm:1000kB, "
    "anon-rss:500kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0\n"
)


def _lines(path: Path) -> tuple[list[str], ReadState]:
    state = ReadState()
    texts = [text for batch in iter_batches(str(path), state, batch_bytes=1 << 20, max_line_chars=10_000) for text in batch.lines["text"]]
    return texts, state


def test_a_run_of_zero_bytes_in_the_first_kib_is_dropped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "syslog"
    path.write_bytes(BEFORE.encode() + b"\x00" * 3000 + AFTER.encode())
    texts, state = _lines(path)
    assert texts == (BEFORE + AFTER).splitlines()
    assert state.nul_bytes == 3000
    assert state.problems == "3000 NUL bytes dropped (zero padding, as a crash leaves in a log it was writing)"


def test_the_next_boots_lines_are_ingested_and_the_manifest_says_what_was_dropped(tmp_path: Path) -> None:
    (tmp_path / "logs" / "gpu-node-1").mkdir(parents=True)
    (tmp_path / "logs" / "gpu-node-1" / "syslog").write_bytes(BEFORE.encode() + b"\x00" * 4096 + AFTER.encode())
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    manifest = pl.read_parquet(tmp_path / "store" / "files.parquet").row(0, named=True)
    assert (manifest["status"], manifest["lines"], manifest["events"]) == ("warning", 42, 42)
    assert "4096 NUL bytes dropped" in manifest["error"]
    kill = rca.open_store(tmp_path / "store").events().filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["pid"], kill["line"], kill["host"]) == (4242, 42, "gpu-node-1")


@pytest.mark.parametrize(
    "content",
    [
        b"\x00" * 9000,  # nothing but zeros
        "Dec  1 03:17:05 gpu-node-1 kernel: eth0: link is up\n".encode("utf-16-le") * 40,  # UTF-16 without its mark
        b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 20,  # an executable
    ],
    ids=["zeros", "utf16_without_mark", "elf"],
)
def test_content_with_nul_bytes_all_through_is_still_binary(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "blob.log"
    path.write_bytes(content)
    with pytest.raises(BinaryFileError):
        _lines(path)


_LINE = st.from_regex(r"[A-Za-z0-9 :\[\].=_-]{1,60}", fullmatch=True)


@settings(max_examples=30, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=30), st.integers(0, 30), st.integers(1, 5000))
def test_zero_padding_at_a_line_boundary_changes_no_line(lines: list[str], at: int, zeros: int) -> None:
    at = min(at, len(lines))
    head, tail = "".join(f"{line}\n" for line in lines[:at]), "".join(f"{line}\n" for line in lines[at:])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kern.log"
        path.write_bytes(head.encode() + b"\x00" * zeros + tail.encode())
        texts, state = _lines(path)
    assert (texts, state.nul_bytes) == (lines, zeros)
