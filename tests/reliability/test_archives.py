"""Archives as input: members read as streams, hostile members refused, limits kept, provenance and re-runs exact.

Every archive is built here in ``tmp_path`` with tarfile / zipfile, the way ``tar`` and
``zip`` write them, hostile entries included (``../`` names, absolute names, links,
devices, decompression bombs, a stream cut short).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import tarfile
import zipfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

import rca
from rca import archives
from rca.ingest import IngestOptions

KLOG = 'I1201 03:17:05.123456    2345 kubelet.go:2404] "SyncLoop (probe)" probe="readiness" status="ready" pod="ml/trainer-0"\n'
OOM_KILL = (
    "[ 7063.247407] Memory cgroup out of memory: Killed process 63214 (uwsgi) total-vm:3149468kB, anon-rss:164992kB, "
    "file-rss:52176kB, shmem-rss:92kB, UID:0 pgtables:1372kB oom_score_adj:986\n"
)
XID = "[31543.449443] NVRM: Xid (PCI:0000:01:00): 31, Ch 0000003a, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x17_00592000. Fault is of type FAULT_PDE ACCESS_TYPE_READ\n"
MTIME = 1_764_000_000  # 2025-11-24


def _member(tar: tarfile.TarFile, name: str, data: bytes = b"", **fields: object) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime = len(data), MTIME
    for key, value in fields.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if info.isreg() else None)


def _tar(path: Path, members: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for name, data in members.items():
            _member(tar, name, data)
    return path


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2025, 11, 24, 16, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def _ingest(root: Path, store: Path, options: IngestOptions | None = None) -> tuple[rca.IngestReport, dict[str, dict], pl.DataFrame]:
    report = rca.ingest(root, store, options, workers=1)
    opened = rca.open_store(store)
    return report, {row["path"]: row for row in opened.manifest().to_dicts()}, opened.events()


def _balanced(row: dict) -> bool:
    return row["lines"] == row["events"] - row["derived_events"] + row["merged_lines"] + row["skipped_lines"]


def _status(rows: dict[str, dict]) -> dict[str, tuple[str, str | None]]:
    return {path: (row["status"], row["error"]) for path, row in rows.items()}


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    (root / "gpu-node-1").mkdir(parents=True)
    (root / "gpu-node-1" / "kubelet.log").write_text(KLOG)
    return root


def test_members_carry_archive_and_member_in_their_provenance(logs: Path, tmp_path: Path) -> None:
    _tar(logs / "bundle.tar.gz", {
        "gpu-node-2/var/log/kern.log": OOM_KILL.encode(),
        "gpu-node-2/kubelet.log.1.gz": gzip.compress(KLOG.encode() * 3),
        "var/log/dmesg": XID.encode(),
    })
    (logs / "gpu-node-1" / "node1.zip").write_bytes(_zip({"dmesg.log": XID.encode()}))
    report, rows, events = _ingest(logs, tmp_path / "store")
    assert sorted(rows) == [
        "bundle.tar.gz",
        "bundle.tar.gz!/gpu-node-2/kubelet.log.1.gz",
        "bundle.tar.gz!/gpu-node-2/var/log/kern.log",
        "bundle.tar.gz!/var/log/dmesg",
        "gpu-node-1/kubelet.log",
        "gpu-node-1/node1.zip",
        "gpu-node-1/node1.zip!/dmesg.log",
    ]
    assert (rows["bundle.tar.gz"]["source"], rows["bundle.tar.gz"]["format"], rows["bundle.tar.gz"]["status"]) == ("archive", "tar.gz", "ok")
    assert (rows["gpu-node-1/node1.zip"]["format"], rows["gpu-node-1/node1.zip!/dmesg.log"]["source"]) == ("zip", "kernel")
    kill = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["file"], kill["line"], kill["host"], kill["pid"]) == ("bundle.tar.gz!/gpu-node-2/var/log/kern.log", 1, "gpu-node-2", 63214)
    by_file = events.group_by("file").agg(pl.col("host").first(), pl.len()).sort("file").rows()
    assert by_file == [
        ("bundle.tar.gz!/gpu-node-2/kubelet.log.1.gz", "gpu-node-2", 3),
        ("bundle.tar.gz!/gpu-node-2/var/log/kern.log", "gpu-node-2", 1),
        ("bundle.tar.gz!/var/log/dmesg", None, 1),  # var/ is a system folder, not a host
        ("gpu-node-1/kubelet.log", "gpu-node-1", 1),
        ("gpu-node-1/node1.zip!/dmesg.log", "gpu-node-1", 1),  # an archive in a host's folder belongs to that host
    ]
    assert events.filter(pl.col("kind") == "xid")["xid"].to_list() == [31, 31]
    assert report.changes == {"new": 7}
    assert all(_balanced(row) for row in rows.values())
    assert rows["bundle.tar.gz!/gpu-node-2/var/log/kern.log"]["mtime"].timestamp() == MTIME


def test_bad_members_are_read_like_bad_files(logs: Path, tmp_path: Path) -> None:
    good_gz = gzip.compress(KLOG.encode() * 2000)
    _tar(logs / "bad.tgz", {
        "n/core.bin": b"\x7fELF\x00\x00\x01" * 500,
        "n/kubelet.log.3.gz": good_gz[: len(good_gz) // 2],
        "n/latin1.log": b"ok line\nna\xefve caf\xe9 line\n",
        "n/empty.log": b"",
        "n/long.log": b"x" * (200 * 1024) + b"\nnext line\n",
    })
    _, rows, events = _ingest(logs, tmp_path / "store")
    assert _status(rows)["bad.tgz!/n/core.bin"] == ("skipped", "not a text log: binary content (NUL bytes in the first 8 KiB)")
    truncated = rows["bad.tgz!/n/kubelet.log.3.gz"]
    assert truncated["status"] == "warning" and truncated["error"].startswith("truncated gzip stream") and 0 < truncated["events"] < 2000
    assert (rows["bad.tgz!/n/latin1.log"]["decode_errors"], rows["bad.tgz!/n/latin1.log"]["events"]) == (1, 2)
    assert _status(rows)["bad.tgz!/n/empty.log"] == ("skipped", "empty file")
    assert (rows["bad.tgz!/n/long.log"]["truncated_lines"], rows["bad.tgz!/n/long.log"]["events"]) == (1, 2)
    assert events.filter(pl.col("file") == "bad.tgz!/n/long.log")["message"].str.len_chars().max() <= IngestOptions().max_line_chars
    assert rows["bad.tgz"]["status"] == "ok"
    assert all(_balanced(row) for row in rows.values())


def test_a_single_archive_is_the_root(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "node.tgz", {"gpu-node-4/dmesg": OOM_KILL.encode()})
    _, rows, events = _ingest(archive, tmp_path / "store")
    member = f"{archive.resolve()}!/gpu-node-4/dmesg"
    assert sorted(rows) == [str(archive.resolve()), member]
    assert events.select("file", "host", "kind").rows() == [(member, "gpu-node-4", "oom_kill")]


def test_unsafe_names_links_and_devices_are_recorded_and_never_read(logs: Path, tmp_path: Path) -> None:
    with tarfile.open(logs / "hostile.tar", "w") as tar:
        _member(tar, "../../escape.log", KLOG.encode())
        _member(tar, "/etc/cron.d/evil", KLOG.encode())
        _member(tar, "ok/../../up.log", KLOG.encode())
        _member(tar, "ok/kern.log", OOM_KILL.encode())
        _member(tar, "ok/shadow", type=tarfile.SYMTYPE, linkname="/etc/shadow")
        _member(tar, "ok/kern-again.log", type=tarfile.LNKTYPE, linkname="ok/kern.log")
        _member(tar, "ok/tty", type=tarfile.CHRTYPE, devmajor=4, devminor=1)
        _member(tar, "ok/pipe", type=tarfile.FIFOTYPE)
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("..\\windows-escape.log", KLOG)
        link = zipfile.ZipInfo("passwd-link")
        link.create_system, link.external_attr = 3, (0o120777 << 16)
        archive.writestr(link, "/etc/passwd")
    (logs / "hostile.zip").write_bytes(zipped.getvalue())
    _, rows, events = _ingest(logs, tmp_path / "store")
    unsafe = "unsafe name (absolute, or with '..'); not read"
    assert _status(rows) == {
        "gpu-node-1/kubelet.log": ("ok", None),
        "hostile.tar": ("ok", None),
        "hostile.tar!/../../escape.log": ("skipped", unsafe),
        "hostile.tar!//etc/cron.d/evil": ("skipped", unsafe),
        "hostile.tar!/ok/../../up.log": ("skipped", unsafe),
        "hostile.tar!/ok/kern.log": ("ok", None),
        "hostile.tar!/ok/shadow": ("skipped", "symbolic link to /etc/shadow; links are not followed"),
        "hostile.tar!/ok/kern-again.log": ("skipped", "hard link to ok/kern.log; links are not followed"),
        "hostile.tar!/ok/tty": ("skipped", "device file or FIFO; ignored"),
        "hostile.tar!/ok/pipe": ("skipped", "device file or FIFO; ignored"),
        "hostile.zip": ("ok", None),
        "hostile.zip!/..\\windows-escape.log": ("skipped", unsafe),
        "hostile.zip!/passwd-link": ("skipped", "symbolic link; links are not followed"),
    }
    assert sorted(set(events["file"])) == ["gpu-node-1/kubelet.log", "hostile.tar!/ok/kern.log"]
    assert not (tmp_path / "escape.log").exists() and not (tmp_path / "up.log").exists()


@pytest.fixture
def small_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Judge ratios after 1 MiB instead of 8, so the bombs here stay small."""
    monkeypatch.setattr(archives, "RATIO_GRACE", 1 << 20)


def test_a_zip_bomb_member_is_refused_and_the_rest_is_ingested(logs: Path, tmp_path: Path, small_grace: None) -> None:
    (logs / "bomb.zip").write_bytes(_zip({"a.log": KLOG.encode(), "bomb.log": b"x" * (3 << 20), "z.log": OOM_KILL.encode()}))
    report, rows, events = _ingest(logs, tmp_path / "store")
    bomb = rows["bomb.zip!/bomb.log"]
    assert bomb["status"] == "error" and bomb["events"] == 0 and bomb["parts"] == []
    assert re.fullmatch(r"compression ratio 1,0\d\d:1 is over archive_max_ratio \(500:1\), a decompression bomb\? "
                        r"\(3,145,728 bytes from 3,\d{3}\); not read", bomb["error"])
    assert sorted(set(events["file"])) == ["bomb.zip!/a.log", "bomb.zip!/z.log", "gpu-node-1/kubelet.log"]
    assert {"path": "bomb.zip!/bomb.log", "status": "error", "error": bomb["error"]} in report.summary["problem_files"]


def test_a_bomb_in_a_compressed_tar_stops_that_archive_only(logs: Path, tmp_path: Path, small_grace: None) -> None:
    flood = KLOG.encode() * ((3 << 20) // len(KLOG))  # one line over and over: about 300:1 under gzip
    _tar(logs / "flood.tgz", {"a.log": OOM_KILL.encode(), "flood.log": flood, "z.log": XID.encode()})
    report, rows, events = _ingest(logs, tmp_path / "store", IngestOptions(archive_max_ratio=50))
    archive, flooded = rows["flood.tgz"], rows["flood.tgz!/flood.log"]
    assert archive["status"] == "error" and "over archive_max_ratio (50:1)" in archive["error"]
    assert archive["error"].endswith("; reading stopped, the members before were ingested")
    assert (flooded["status"], flooded["events"], flooded["parts"]) == ("error", 0, [])
    assert "flood.tgz!/z.log" not in rows  # one gzip stream: nothing after the bomb can be reached
    assert sorted(set(events["file"])) == ["flood.tgz!/a.log", "gpu-node-1/kubelet.log"]
    assert report.summary["events"] == 2


def test_a_gzip_bomb_member_is_dropped_and_the_next_members_are_read(logs: Path, tmp_path: Path, small_grace: None) -> None:
    bomb = gzip.compress(KLOG.encode() * ((3 << 20) // len(KLOG)), compresslevel=6)
    _tar(logs / "plain.tar", {"a.log": OOM_KILL.encode(), "kubelet.log.2.gz": bomb, "z.log": XID.encode()}, mode="w")
    _, rows, events = _ingest(logs, tmp_path / "store", IngestOptions(archive_max_ratio=50))
    assert rows["plain.tar!/kubelet.log.2.gz"]["status"] == "error"
    assert "over archive_max_ratio (50:1)" in rows["plain.tar!/kubelet.log.2.gz"]["error"]
    assert rows["plain.tar"]["status"] == "ok"
    assert sorted(set(events["file"])) == ["gpu-node-1/kubelet.log", "plain.tar!/a.log", "plain.tar!/z.log"]


def test_member_count_and_byte_limits_stop_reading_with_a_clear_row(logs: Path, tmp_path: Path) -> None:
    _tar(logs / "many.tgz", {f"n/{i:02d}.log": KLOG.encode() for i in range(5)})
    _, rows, _ = _ingest(logs, tmp_path / "count", IngestOptions(archive_max_members=3))
    assert sorted(path for path in rows if path.startswith("many.tgz!/")) == ["many.tgz!/n/00.log", "many.tgz!/n/01.log", "many.tgz!/n/02.log"]
    assert _status(rows)["many.tgz"] == ("warning", "more than 3 members (archive_max_members); the rest were not read")

    (logs / "many.tgz").unlink()
    (logs / "big.zip").write_bytes(_zip({"a.log": KLOG.encode() * 10, "b.log": KLOG.encode() * 10, "c.log": KLOG.encode()}))
    _, rows, events = _ingest(logs, tmp_path / "bytes", IngestOptions(archive_max_bytes=len(KLOG) * 15))
    limit = f"expands to more than {len(KLOG) * 15:,} bytes (archive_max_bytes); reading stopped"
    assert _status(rows)["big.zip!/b.log"] == ("error", f"{limit}; not ingested")
    assert _status(rows)["big.zip"] == ("error", limit)
    assert "big.zip!/c.log" not in rows
    assert events.filter(pl.col("file") == "big.zip!/a.log").height == 10


def test_a_truncated_tgz_keeps_what_came_before_the_cut(logs: Path, tmp_path: Path) -> None:
    first = "".join(f"[{i:5d}.000000] usb 1-1: new high-speed USB device number {i} using xhci_hcd\n" for i in range(2000))
    # random-looking text compresses little, so the cut lands inside the second member
    second = "".join(f"I1201 03:17:{i % 60:02d}.{(i * 7919) % 1000000:06d}    {i * 31 % 99991} kubelet.go:{i % 3000}] pod={i * 104729 % 1000003}\n" for i in range(40000))
    whole = _tar(tmp_path / "whole.tgz", {"a/first.log": first.encode(), "a/second.log": second.encode(), "a/third.log": KLOG.encode()}).read_bytes()
    (logs / "cut.tgz").write_bytes(whole[: len(whole) * 2 // 3])
    report, rows, events = _ingest(logs, tmp_path / "store")
    archive, cut = rows["cut.tgz"], rows["cut.tgz!/a/second.log"]
    assert archive["status"] == "warning" and archive["error"].startswith("tar.gz stream cut short or damaged")
    assert rows["cut.tgz!/a/first.log"]["status"] == "ok" and rows["cut.tgz!/a/first.log"]["events"] == 2000
    assert cut["status"] == "warning" and "cut short inside the archive" in cut["error"]
    assert 0 < cut["events"] < 40000 and cut["events"] == events.filter(pl.col("file") == "cut.tgz!/a/second.log").height
    assert "cut.tgz!/a/third.log" not in rows
    assert all(_balanced(row) for row in rows.values())
    assert report.summary["files"] == 4


def test_archives_nest_one_level_and_no_deeper(logs: Path, tmp_path: Path) -> None:
    deepest = io.BytesIO()
    with tarfile.open(fileobj=deepest, mode="w:gz") as tar:
        _member(tar, "x.log", KLOG.encode())
    inner = _zip({"gpu-node-5/dmesg.log": OOM_KILL.encode(), "deeper.tgz": deepest.getvalue()})
    _tar(logs / "a.tgz", {"inner.zip": inner, "top.log": XID.encode()})
    _, rows, events = _ingest(logs, tmp_path / "store")
    assert _status(rows) == {
        "a.tgz": ("ok", None),
        "a.tgz!/inner.zip": ("ok", None),
        "a.tgz!/inner.zip!/deeper.tgz": ("skipped", "tar.gz archive nested more than 2 deep; not opened"),
        "a.tgz!/inner.zip!/gpu-node-5/dmesg.log": ("ok", None),
        "a.tgz!/top.log": ("ok", None),
        "gpu-node-1/kubelet.log": ("ok", None),
    }
    kill = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["file"], kill["host"]) == ("a.tgz!/inner.zip!/gpu-node-5/dmesg.log", "gpu-node-5")


def test_re_ingesting_an_archive_adds_nothing_and_a_changed_one_only_its_changes(logs: Path, tmp_path: Path) -> None:
    members = {"n/a.log": KLOG.encode(), "n/b.log": OOM_KILL.encode(), "n/c.log": XID.encode()}
    _tar(logs / "bundle.tgz", members)
    _, first_rows, first = _ingest(logs, tmp_path / "store")

    again, _, events = _ingest(logs, tmp_path / "store")
    assert again.changes == {"unchanged": 5} and again.summary["events"] == 0
    assert events.equals(first)

    _tar(logs / "bundle.tgz", members)  # rewritten with the same members: read again, nothing new kept
    rewritten, rows, events = _ingest(logs, tmp_path / "store")
    assert rewritten.changes == {"rewritten": 1, "unchanged": 4} and rewritten.summary["events"] == 0
    assert events.equals(first) and rows["bundle.tgz!/n/a.log"]["parts"] == first_rows["bundle.tgz!/n/a.log"]["parts"]

    _tar(logs / "bundle.tgz", {"n/a.log": KLOG.encode(), "n/b.log": (OOM_KILL + OOM_KILL).encode(), "n/d.log": KLOG.encode()})
    changed, rows, events = _ingest(logs, tmp_path / "store")
    assert changed.changes == {"rewritten": 2, "unchanged": 2, "new": 1, "removed": 1}
    assert _status(rows)["bundle.tgz!/n/c.log"] == ("skipped", "no longer in bundle.tgz")
    assert events.group_by("file").len().sort("file").rows() == [
        ("bundle.tgz!/n/a.log", 1), ("bundle.tgz!/n/b.log", 2), ("bundle.tgz!/n/d.log", 1), ("gpu-node-1/kubelet.log", 1),
    ]
    assert all(_balanced(row) for row in rows.values())
    manifest_parts = {part for row in rows.values() for part in row["parts"]}
    on_disk = {str(path.relative_to(tmp_path / "store" / "events")) for path in (tmp_path / "store" / "events").rglob("*.parquet")}
    assert on_disk == manifest_parts


def test_a_damaged_zip_gets_a_row_and_a_bzip2_that_is_no_tar_is_read_as_a_log(logs: Path, tmp_path: Path) -> None:
    (logs / "broken.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    (logs / "kubelet.log.1.bz2").write_bytes(bz2.compress(KLOG.encode()))
    (logs / "BZh-notes.txt").write_bytes(b"BZh9 is how this note starts, and it is text\n")
    _, rows, events = _ingest(logs, tmp_path / "store")
    assert rows["broken.zip"]["status"] == "error" and rows["broken.zip"]["error"].startswith("not a readable zip archive")
    assert (rows["kubelet.log.1.bz2"]["status"], rows["kubelet.log.1.bz2"]["source"], rows["kubelet.log.1.bz2"]["events"]) == ("ok", "kubelet", 1)
    assert events.filter(pl.col("file") == "kubelet.log.1.bz2")["pod"].to_list() == ["trainer-0"]
    assert (rows["BZh-notes.txt"]["format"], rows["BZh-notes.txt"]["lines"], rows["BZh-notes.txt"]["events"]) == ("text", 1, 1)


def _zstd(data: bytes) -> bytes:
    return pa.compress(data, codec="zstd", asbytes=True)


def test_a_tar_zst_is_read_like_a_tgz(logs: Path, tmp_path: Path) -> None:
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w") as tar:
        _member(tar, "gpu-node-2/var/log/kern.log", OOM_KILL.encode())
        _member(tar, "gpu-node-2/var/log/kubelet.log", KLOG.encode())
    (logs / "node.tar.zst").write_bytes(_zstd(plain.getvalue()))
    _, rows, events = _ingest(logs, tmp_path / "store")
    assert rows["node.tar.zst"]["format"] == "tar.zst"
    kill = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["file"], kill["host"], kill["pid"]) == ("node.tar.zst!/gpu-node-2/var/log/kern.log", "gpu-node-2", 63214)
    assert all(_balanced(row) for row in rows.values() if row["status"] == "ok")


@pytest.mark.parametrize("compress", [lzma.compress, _zstd, bz2.compress], ids=["xz", "zstd", "bzip2"])
def test_logs_rotated_with_xz_zstd_or_bzip2_are_read_and_a_cut_one_keeps_its_head(logs: Path, tmp_path: Path, compress: Callable[[bytes], bytes]) -> None:
    data = (KLOG * 3000).encode()
    (logs / "gpu-node-1" / "kubelet.log.2.z").write_bytes(compress(data))
    (logs / "gpu-node-1" / "kubelet.log.3.z").write_bytes(compress(data)[: len(compress(data)) // 2])
    _, rows, events = _ingest(logs, tmp_path / "store")
    whole, cut = rows["gpu-node-1/kubelet.log.2.z"], rows["gpu-node-1/kubelet.log.3.z"]
    assert (whole["status"], whole["lines"], whole["events"]) == ("ok", 3000, 3000)
    assert cut["status"] == "warning" and "stream" in cut["error"] and 0 <= cut["lines"] < 3000
    assert events.filter(pl.col("file") == "gpu-node-1/kubelet.log.2.z")["pod"].unique().to_list() == ["trainer-0"]


def test_a_bzip2_log_of_several_blocks_and_streams_is_read_whole_and_a_cut_keeps_its_whole_blocks(logs: Path, tmp_path: Path) -> None:
    # Varied lines, so the text fills several 100 kB blocks (compresslevel 1) instead of collapsing into one run.
    lines = [f"[{n:6d}.000001] eth0: link state {n % 7} seq {n * 7919 % 100003}\n" for n in range(40_000)]
    text = "".join(lines).encode()
    half = len(text) // 2 // len(lines[0]) * len(lines[0])
    packed = bz2.compress(text[:half], compresslevel=1) + bz2.compress(text[half:], compresslevel=1)  # pbzip2 / cat of two files
    (logs / "gpu-node-1" / "kern.log.4.bz2").write_bytes(packed)
    (logs / "gpu-node-1" / "kern.log.5.bz2").write_bytes(packed[: len(packed) * 3 // 4])
    _, rows, events = _ingest(logs, tmp_path / "store")
    whole, cut = rows["gpu-node-1/kern.log.4.bz2"], rows["gpu-node-1/kern.log.5.bz2"]
    assert (whole["status"], whole["lines"], whole["source"]) == ("ok", 40_000, "kernel")
    assert events.filter(pl.col("file") == "gpu-node-1/kern.log.4.bz2")["boot_seconds"].max() == pytest.approx(39_999.000001)
    # bzip2 gives text a whole block at a time: the cut file keeps the blocks before the cut, and says it was cut.
    assert cut["status"] == "warning" and cut["error"].startswith("truncated bzip2 stream") and 20_000 < cut["lines"] < 40_000


def test_members_read_with_other_options_are_read_again(logs: Path, tmp_path: Path) -> None:
    _tar(logs / "bundle.tgz", {"n/a.log": KLOG.encode(), "n/b.log": OOM_KILL.encode()})
    _, _, first = _ingest(logs, tmp_path / "store")
    report, rows, events = _ingest(logs, tmp_path / "store", IngestOptions(tz="-05:00"))
    assert report.changes == {"rewritten": 4}
    assert events.group_by("file").len().sort("file").rows() == first.group_by("file").len().sort("file").rows()
    shifted = events.filter(pl.col("file") == "bundle.tgz!/n/a.log")["ts"].item()
    assert shifted == first.filter(pl.col("file") == "bundle.tgz!/n/a.log")["ts"].item() + timedelta(hours=5)
    assert all(_balanced(row) for row in rows.values())
    manifest_parts = {part for row in rows.values() for part in row["parts"]}
    on_disk = {str(path.relative_to(tmp_path / "store" / "events")) for path in (tmp_path / "store" / "events").rglob("*.parquet")}
    assert on_disk == manifest_parts
