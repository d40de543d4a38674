"""The journal_file source: systemd's binary journal files, read without systemd.

The fixtures (tests/data/journal, made by tests/make_journal_fixtures.py) are journal files that
systemd 252's own writer (systemd-journal-remote) made of one node's journal around a pod's
OOM kill, in the regular layout and the compact one, their long data objects compressed with
Zstandard or not at all (XZ and LZ4, which other builds choose, are checked on payloads made
the way systemd makes them); reference/node_oom_xid.journalctl.json is what ``journalctl -o json``
printed of the first.
"""

from __future__ import annotations

import gzip
import json
import lzma
import shutil
import struct
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca.errors import FileFormatError
from rca.sources import journal_file, syslog
from rca.sources._base import ParseContext, lines_frame
from tests.conftest import DATA

FOLDER = DATA / "journal"
LAYOUTS = ("system.journal.gz", "system-compact.journal.gz", "system-uncompressed.journal.gz")
ENTRIES = 62


def _journal(name: str = "system.journal.gz") -> bytes:
    return gzip.decompress((FOLDER / name).read_bytes())


def _journalctl_json() -> list[dict]:
    return [json.loads(line) for line in (FOLDER / "reference" / "node_oom_xid.journalctl.json").read_text().splitlines()]


@pytest.mark.parametrize("name", LAYOUTS)
def test_each_layout_reads_as_journalctl_prints_it(name: str) -> None:
    entries = [json.loads(text) for text in journal_file.json_lines(_journal(name))["text"]]
    printed = _journalctl_json()
    assert len(entries) == len(printed) == ENTRIES
    for ours, theirs in zip(entries, printed, strict=True):
        assert ours == {field: theirs[field] for field in journal_file.FIELDS if field in theirs}
    # The kubelet status patch is past journald's compression threshold: it was decompressed.
    assert any(len(entry["MESSAGE"]) > 1000 and "OOMKilled" in entry["MESSAGE"] for entry in entries)
    assert "\nNVRM: the NVIDIA kernel module is unloaded." in entries[-1]["MESSAGE"]


def test_the_binary_journal_gives_the_events_of_its_journalctl_export() -> None:
    ctx = ParseContext(file="system.journal", host="gpu-worker-3", reference_time=datetime(2024, 6, 14, 10, 36, 58, tzinfo=UTC),
                       reference_quality="year_inferred")
    ours = journal_file.parse_bytes(_journal(), ctx)
    text = (FOLDER / "reference" / "node_oom_xid.journalctl.json").read_text()
    theirs = syslog.parse(lines_frame(text), ctx).events
    columns = ["line", "n_lines", "kind", "ts", "severity", "pid", "process", "message", "xid", "pci_bus", "pod", "exit_code", "container_id", "container"]
    assert ours.events.select(columns).sort("line").equals(theirs.select(columns).sort("line"))
    # Docker's log driver names the container in fields of the entry, in the file as in the export.
    named = theirs.filter(pl.col("container") == "finetune-7")["container_id"].unique().to_list()
    assert named == ["e3a1c7b9d2f4061835a7c9e1b3d5f7092468ace0bdf13579ace02468bdf13579"]
    assert ours.lines == ENTRIES


def test_a_node_folder_with_its_journal_gives_the_oom_facts(tmp_path: Path) -> None:
    node = tmp_path / "logs" / "gpu-worker-3"
    node.mkdir(parents=True)
    (node / "system.journal").write_bytes(_journal())
    shutil.copy(FOLDER / "system-compact.journal.gz", node / "user-1000.journal.gz")  # gzipped before it was copied off
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    store = rca.open_store(tmp_path / "store")
    files = store.manifest().sort("path")
    assert files["source"].to_list() == ["journal_file", "journal_file"]
    assert files["lines"].to_list() == [ENTRIES, ENTRIES]
    assert (files["events"] + files["merged_lines"] + files["skipped_lines"]).to_list() == [ENTRIES, ENTRIES]
    events = store.events().filter(pl.col("file") == "gpu-worker-3/system.journal")
    kill = events.filter(pl.col("kind") == "oom_kill", pl.col("source") == "kernel").row(0, named=True)
    assert (kill["pid"], kill["process"], kill["host"]) == (48213, "python3", "gpu-worker-3")
    assert kill["ts"] == datetime(2024, 6, 14, 9, 58, 39, 457083, tzinfo=UTC)
    assert kill["container_id"] == "7b41c2e9d0f38a5561c4e2b7a9d03f18e6c5b4a3928170f6e5d4c3b2a1908f7e"
    restarted = events.filter(pl.col("message").str.contains("was OOMKilled, restarting")).row(0, named=True)
    assert (restarted["kind"], restarted["source"], restarted["pod"], restarted["exit_code"]) == ("container_oomkilled", "kubelet", "llama-ft-0", 137)
    # klog's yearless stamp takes its year from the journal's own times, not from the file's mtime.
    assert restarted["ts"] == datetime(2024, 6, 14, 9, 58, 52, 310544, tzinfo=UTC)
    assert sorted(events.filter(pl.col("kind") == "xid")["xid"].to_list()) == [48, 63, 79, 94, 154]
    assert events["ts"].dt.year().unique().to_list() == [2024]
    # Docker's journald log driver names the container of its lines: the traceback is one event of it.
    oom = events.filter(pl.col("kind") == "cuda_oom").row(0, named=True)
    assert (oom["n_lines"], oom["gpu_index"], oom["container"], oom["source"]) == (3, 1, "finetune-7", "pipeline")
    assert oom["container_id"] == "e3a1c7b9d2f4061835a7c9e1b3d5f7092468ace0bdf13579ace02468bdf13579"


@settings(max_examples=40, deadline=None)
@given(cut=st.integers(min_value=0, max_value=60_000))
def test_a_journal_cut_short_gives_the_entries_before_the_cut(cut: int) -> None:
    whole = journal_file.json_lines(_journal())["text"].to_list()
    try:
        kept = journal_file.json_lines(_journal()[:cut])["text"].to_list()
    except FileFormatError:
        assert cut < 208  # only a file whose header is cut cannot be read
        return
    assert kept == whole[: len(kept)]


def test_what_is_no_journal_is_a_format_error() -> None:
    with pytest.raises(FileFormatError, match="not a journal"):
        journal_file.json_lines(b"LPKSHHRH" + bytes(50))
    unknown_feature = bytearray(_journal())
    struct.pack_into("<I", unknown_feature, 12, 1 << 7)
    with pytest.raises(FileFormatError, match="incompatible flags 0x80"):
        journal_file.json_lines(bytes(unknown_feature))
    assert journal_file.sniff_bytes(_journal()[:64]) == 1.0
    assert journal_file.sniff_bytes(b"\x1f\x8b\x08\x00") == 0.0


def test_data_objects_compressed_the_ways_systemd_compresses_them() -> None:
    field = ("MESSAGE=" + "Memory cgroup out of memory: Killed process 48213 (python3) " * 20).encode()
    xz = lzma.compress(field, format=lzma.FORMAT_XZ, check=lzma.CHECK_NONE)
    lz4 = struct.pack("<Q", len(field)) + pa.compress(field, codec="lz4_raw", asbytes=True)
    zstd = pa.compress(field, codec="zstd", asbytes=True)
    assert journal_file._decoded(xz, 1) == journal_file._decoded(lz4, 2) == journal_file._decoded(zstd, 4) == field.decode()
    assert journal_file._decoded(b"MESSAGE=caf\xe9", 0) == "MESSAGE=caf\ufffd"
    assert journal_file._decoded(zstd[:-4], 4) is None  # damaged: the field is left out, the entry kept


@settings(max_examples=30, deadline=None)
@given(flips=st.lists(st.tuples(st.integers(min_value=0, max_value=70_000), st.integers(min_value=0, max_value=255)), min_size=1, max_size=40))
def test_a_damaged_journal_never_breaks_the_reader(flips: list[tuple[int, int]]) -> None:
    damaged = bytearray(_journal("system-compact.journal.gz"))
    for at, value in flips:
        damaged[at % len(damaged)] = value
    try:
        lines = journal_file.json_lines(bytes(damaged))
    except FileFormatError:
        return  # a header it cannot trust
    assert lines.columns == ["line", "text"]
    assert lines["line"].to_list() == list(range(1, lines.height + 1))


def test_an_entry_array_chain_pointing_past_any_offset_ends_the_entries() -> None:
    # A flipped byte made the header's first entry array offset larger than a signed 64-bit integer (found by the test above).
    data = bytearray(_journal())
    first_array_at = journal_file._HEADER.size - 8  # the header's last field: the offset of the first entry array
    data[first_array_at : first_array_at + 8] = (2**64 - 8).to_bytes(8, "little")
    assert journal_file.json_lines(bytes(data)).height == 0
