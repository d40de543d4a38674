"""The ingest driver: nothing lost, bad input survived, idempotent and incremental runs."""

from __future__ import annotations

import codecs
import dataclasses
import gzip
import json
import os
import shutil
import zipfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from polars.exceptions import PanicException

import rca
from rca import schema, sources
from rca.errors import InputError, StoreLockedError
from rca.ingest import HEAD_LINES, IngestOptions, finish_events, year_hint, year_hints
from rca.sources._base import ParseContext
from rca.store import Store
from tests.conftest import DATA

KLOG = "I1201 03:17:05.123456    2345 kubelet.go:2404] \"SyncLoop (probe)\" probe=\"readiness\" status=\"ready\" pod=\"ml/trainer-0\"\n"
DMESG = "[ 7063.247407] Memory cgroup out of memory: Killed process 63214 (uwsgi) total-vm:3149468kB, anon-rss:164992kB, file-rss:52176kB, shmem-rss:92kB, UID:0 pgtables:1372kB oom_score_adj:986\n"


def _manifest(store: Path) -> dict[str, dict]:
    return {row["path"]: row for row in rca.open_store(store).manifest().to_dicts()}


def _balanced(row: dict) -> bool:
    return row["lines"] == row["events"] - row["derived_events"] + row["merged_lines"] + row["skipped_lines"]


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    (root / "gpu-node-1").mkdir(parents=True)
    (root / "gpu-node-2").mkdir()
    (root / "gpu-node-1" / "kubelet.log").write_text(KLOG * 3 + "\n" + KLOG)
    (root / "gpu-node-2" / "dmesg.log").write_text("[    0.000000] Linux version 6.5.0\n" + DMESG)
    return root


def test_events_carry_host_from_layout_and_provenance(logs: Path, tmp_path: Path) -> None:
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    events = rca.open_store(tmp_path / "store").events()
    schema.validate(events, schema.EVENT_SCHEMA, "events")
    assert report.summary["events"] == events.height == 6
    kill = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["host"], kill["file"], kill["line"], kill["pid"]) == ("gpu-node-2", "gpu-node-2/dmesg.log", 2, 63214)
    assert set(events.filter(pl.col("source") == "kubelet")["host"]) == {"gpu-node-1"}
    manifest = _manifest(tmp_path / "store")
    assert manifest["gpu-node-1/kubelet.log"]["skipped_reasons"] == json.dumps({"blank": 1})
    assert all(_balanced(row) for row in manifest.values())


def test_second_run_on_same_folder_adds_nothing(logs: Path, tmp_path: Path) -> None:
    rca.ingest(logs, tmp_path / "store", workers=1)
    first = rca.open_store(tmp_path / "store").events()
    again = rca.ingest(logs, tmp_path / "store", workers=1)
    assert again.changes == {"unchanged": 2}
    assert again.summary["events"] == 0
    assert rca.open_store(tmp_path / "store").events().equals(first)


# Lines enough to take a file past the 64 KiB window its seam is checked in: a smaller file that grew is read again whole.
_PAST_THE_SEAM_WINDOW = 600


def test_appended_lines_are_the_only_new_work(logs: Path, tmp_path: Path) -> None:
    kubelet = logs / "gpu-node-1" / "kubelet.log"
    kubelet.write_text(KLOG * _PAST_THE_SEAM_WINDOW + "\n")
    rca.ingest(logs, tmp_path / "store", workers=1)
    with open(kubelet, "a") as handle:
        handle.write(KLOG.replace("ready", "unready"))
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    assert report.changes == {"appended": 1, "unchanged": 1}
    assert report.summary["events"] == 1
    events = rca.open_store(tmp_path / "store").events().filter(pl.col("file") == "gpu-node-1/kubelet.log")
    assert events["line"].to_list()[-2:] == [_PAST_THE_SEAM_WINDOW, _PAST_THE_SEAM_WINDOW + 2]
    row = _manifest(tmp_path / "store")["gpu-node-1/kubelet.log"]
    assert (row["lines"], row["events"], _balanced(row)) == (_PAST_THE_SEAM_WINDOW + 2, _PAST_THE_SEAM_WINDOW + 1, True)


def test_a_small_file_that_grew_is_read_again_whole(logs: Path, tmp_path: Path) -> None:
    # Checking where its old lines end would parse all of them: reading them again costs no more.
    rca.ingest(logs, tmp_path / "store", workers=1)
    with open(logs / "gpu-node-1" / "kubelet.log", "a") as handle:
        handle.write(KLOG.replace("ready", "unready"))
    assert rca.ingest(logs, tmp_path / "store", workers=1).changes == {"grown": 1, "unchanged": 1}
    assert _fresh_events(logs, tmp_path / "fresh").equals(rca.open_store(tmp_path / "store").events().sort("file", "line"))


def _fresh_events(logs: Path, store: Path) -> pl.DataFrame:
    rca.ingest(logs, store, workers=1)
    return rca.open_store(store).events().sort("file", "line")


def test_a_record_running_on_into_appended_lines_is_read_whole_again(logs: Path, tmp_path: Path) -> None:
    # The training log was copied while the traceback was being written: its rest arrives with the next copy.
    train = logs / "gpu-node-1" / "train.log"
    steps = "".join(f"2026-12-01 10:00:01,000 INFO step {step} loss 0.25 lr 0.0003 tokens/s 151234\n" for step in range(_PAST_THE_SEAM_WINDOW * 2))
    train.write_text(steps + "2026-12-01 10:00:02,000 ERROR step failed\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n")
    rca.ingest(logs, tmp_path / "store", workers=1)
    with open(train, "a") as handle:
        handle.write("    main()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n2026-12-01 10:00:09,000 INFO next\n")
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    assert report.changes == {"grown": 1, "unchanged": 2}
    events = rca.open_store(tmp_path / "store").events().sort("file", "line")
    oom = events.filter(pl.col("kind") == "cuda_oom").row(0, named=True)
    assert (oom["line"], oom["n_lines"]) == (_PAST_THE_SEAM_WINDOW * 2 + 2, 4)
    assert events.equals(_fresh_events(logs, tmp_path / "fresh"))


@pytest.mark.parametrize("rest", ["    main()\ntorch.OutOfMemoryError: CUDA out of memory.\n", "2026-12-01 10:00:09,000 INFO next\n"])
def test_a_file_read_alone_checks_its_seam_too(tmp_path: Path, rest: str) -> None:
    # One file in the folder is a task of its own, not a group's: the same rule, checked on its own.
    train = tmp_path / "logs" / "gpu-node-1" / "train.log"
    train.parent.mkdir(parents=True)
    steps = "".join(f"2026-12-01 10:00:01,000 INFO step {step} loss 0.25 lr 0.0003 tokens/s 151234\n" for step in range(_PAST_THE_SEAM_WINDOW * 2))
    train.write_text(steps + "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n")
    rca.ingest(train.parent.parent, tmp_path / "store", workers=1)
    with open(train, "a") as handle:
        handle.write(rest)
    report = rca.ingest(train.parent.parent, tmp_path / "store", workers=1)
    assert report.changes == ({"grown": 1} if rest.startswith(" ") else {"appended": 1})
    assert rca.open_store(tmp_path / "store").events().sort("line").equals(_fresh_events(train.parent.parent, tmp_path / "fresh"))


def test_appended_bytes_are_read_as_they_are_not_as_a_files_start(logs: Path, tmp_path: Path) -> None:
    # `cat notes.txt >> train.log` where notes.txt opens with a UTF-8 mark, or a gzip stream appended by mistake: in the
    # middle of a file these are text as they are, as a fresh read takes them, never a mark or a stream to open.
    train = logs / "gpu-node-1" / "train.log"
    steps = "".join(f"2026-12-01 10:00:01,000 INFO step {step} loss 0.25 lr 0.0003 tokens/s 151234\n" for step in range(_PAST_THE_SEAM_WINDOW * 2))
    train.write_text(steps)
    rca.ingest(logs, tmp_path / "store", workers=1)
    with open(train, "ab") as handle:
        handle.write(codecs.BOM_UTF8 + b"note appended after a mark\n" + gzip.compress(b"a compressed line\n") + b"\n")
    assert rca.ingest(logs, tmp_path / "store", workers=1).changes == {"appended": 1, "unchanged": 2}
    events = rca.open_store(tmp_path / "store").events().sort("file", "line")
    assert events.filter(pl.col("file") == "gpu-node-1/train.log")["message"][_PAST_THE_SEAM_WINDOW * 2] == "\ufeffnote appended after a mark"
    assert events.equals(_fresh_events(logs, tmp_path / "fresh"))


def test_appended_yearless_lines_take_the_year_the_files_head_gives(logs: Path, tmp_path: Path) -> None:
    # The year of a yearless file comes from its first dated line, which the appended bytes do not repeat.
    kern = logs / "gpu-node-2" / "kern.log"
    kern.write_text("2023-06-01T10:00:00+00:00 node1 kernel: Linux version 6.5.0\n" + "Jun  1 10:00:01 node1 kernel: usb 1-1: new device\n" * 1500)
    os.utime(kern, (datetime(2025, 6, 4, tzinfo=UTC).timestamp(),) * 2)
    rca.ingest(logs, tmp_path / "store", workers=1)
    with open(kern, "a") as handle:
        handle.write("Jun  1 11:00:00 node1 kernel: appended\n")
    assert rca.ingest(logs, tmp_path / "store", workers=1).changes == {"appended": 1, "unchanged": 2}
    events = rca.open_store(tmp_path / "store").events().filter(pl.col("file") == "gpu-node-2/kern.log").sort("line")
    assert events["ts"][-1] == datetime(2023, 6, 1, 11, 0, tzinfo=UTC)
    assert rca.open_store(tmp_path / "store").events().sort("file", "line").equals(_fresh_events(logs, tmp_path / "fresh"))


def test_a_line_finished_by_the_append_is_read_whole_again(logs: Path, tmp_path: Path) -> None:
    kubelet = logs / "gpu-node-1" / "kubelet.log"
    kubelet.write_text(KLOG * _PAST_THE_SEAM_WINDOW + KLOG[:40])  # copied mid-line
    rca.ingest(logs, tmp_path / "store", workers=1)
    with open(kubelet, "a") as handle:
        handle.write(KLOG[40:] + KLOG)
    assert rca.ingest(logs, tmp_path / "store", workers=1).changes == {"grown": 1, "unchanged": 1}
    events = rca.open_store(tmp_path / "store").events().sort("file", "line")
    assert events.filter(pl.col("source") == "kubelet")["pod"].to_list() == ["trainer-0"] * (_PAST_THE_SEAM_WINDOW + 2)
    assert events.equals(_fresh_events(logs, tmp_path / "fresh"))


def test_rows_appended_below_a_csv_header_are_read_with_it(logs: Path, tmp_path: Path) -> None:
    # `nvidia-smi --query-gpu=... --format=csv -l 1 > gpu.csv` grows between two copies; its header is at the top alone.
    samples = logs / "gpu-node-1" / "gpu.csv"
    header = "timestamp, index, memory.used [MiB], memory.total [MiB]\n"
    row = "2026/12/01 10:00:0{}.000, 0, 7000{} MiB, 81920 MiB\n"
    samples.write_text(header + "".join(row.format(k, k) for k in range(1, 4)))
    rca.ingest(logs, tmp_path / "store", workers=1)
    with open(samples, "a") as handle:
        handle.write("".join(row.format(k, k) for k in range(4, 7)))
    assert rca.ingest(logs, tmp_path / "store", workers=1).changes == {"grown": 1, "unchanged": 2}
    events = rca.open_store(tmp_path / "store").events().sort("file", "line")
    gpu = events.filter(pl.col("file") == "gpu-node-1/gpu.csv")
    assert gpu["kind"].to_list() == ["gpu_sample"] * 6
    assert gpu["mem_used_bytes"].to_list() == [(70000 + k) * 2**20 for k in range(1, 7)]
    assert events.equals(_fresh_events(logs, tmp_path / "fresh"))


def test_a_log_saved_as_utf16_by_windows_powershell_is_read_and_grows_whole(logs: Path, tmp_path: Path) -> None:
    # `kubectl logs trainer-0 > trainer.log` in Windows PowerShell 5.1 writes UTF-16 with a byte-order mark.
    trainer = logs / "gpu-node-1" / "trainer.log"
    trainer.write_bytes("2026-12-01 10:00:02,000 ERROR step failed\r\n".encode("utf-16"))
    rca.ingest(logs, tmp_path / "store", workers=1)
    with open(trainer, "ab") as handle:  # PowerShell's `>>` goes on in UTF-16, without a second mark
        handle.write("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\r\n".encode("utf-16-le"))
    assert rca.ingest(logs, tmp_path / "store", workers=1).changes == {"rewritten": 1, "unchanged": 2}
    events = rca.open_store(tmp_path / "store").events().filter(pl.col("file") == "gpu-node-1/trainer.log").sort("line")
    assert events.select("line", "kind", "severity", "mem_requested_bytes").rows() == [(1, "log", "error", None), (2, "cuda_oom", "error", 2 * 2**30)]
    assert events["ts"][0] == datetime(2026, 12, 1, 10, 0, 2, tzinfo=UTC)


def test_files_that_are_never_logs_are_listed_as_ignored_never_read(logs: Path, tmp_path: Path) -> None:
    # A folder zipped by macOS Finder holds an AppleDouble twin of every file; Windows Explorer leaves thumbnail caches.
    (logs / "gpu-node-1" / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (logs / "__MACOSX" / "gpu-node-2").mkdir(parents=True)
    (logs / "__MACOSX" / "gpu-node-2" / "._dmesg.log").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X")
    (logs / "gpu-node-2" / "Thumbs.db").write_bytes(b"\xd0\xcf\x11\xe0")
    (logs / "gpu-node-2" / "wtmp.1").write_bytes(b"\x07\x00\x00\x00" * 96)  # a node's /var/log copied whole
    with zipfile.ZipFile(logs / "bundle.zip", "w") as bundle:
        bundle.writestr("gpu-node-3/kern.log", DMESG)
        bundle.writestr("__MACOSX/gpu-node-3/._kern.log", b"\x00\x05\x16\x07")
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    assert report.changes == {"ignored": 5, "new": 4}  # the zip has a row of its own
    assert report.summary["problem_files"] == [] and report.summary["ignored_files"] == 5
    assert rca.ingest(logs, tmp_path / "store", workers=1).changes == {"ignored": 4, "unchanged": 4}  # the zip's rows come with it
    manifest = _manifest(tmp_path / "store")
    assert manifest["__MACOSX"]["error"] == "macOS Finder metadata, not a log"  # the folder is one row
    assert manifest["gpu-node-2/Thumbs.db"]["status"] == manifest["gpu-node-2/wtmp.1"]["status"] == "ignored"
    assert manifest["bundle.zip!/__MACOSX/gpu-node-3/._kern.log"]["status"] == "ignored"
    assert set(rca.open_store(tmp_path / "store").events()["file"]) == {"gpu-node-1/kubelet.log", "gpu-node-2/dmesg.log", "bundle.zip!/gpu-node-3/kern.log"}


def test_another_store_inside_the_folder_is_one_ignored_row_and_none_of_its_files_are_read(logs: Path, tmp_path: Path) -> None:
    # `rca ingest .` writes ./rca-store inside the folder; a later run into another store finds it there.
    rca.ingest(logs, logs / "rca-store", workers=1)
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    assert report.changes == {"ignored": 1, "new": 2}
    assert report.summary["problem_files"] == []
    row = _manifest(tmp_path / "store")["rca-store"]
    assert (row["status"], row["error"]) == ("ignored", "an rca store (events parsed by an earlier run), not logs")
    assert set(rca.open_store(tmp_path / "store").events()["file"]) == {"gpu-node-1/kubelet.log", "gpu-node-2/dmesg.log"}


def test_rewritten_file_replaces_its_events(logs: Path, tmp_path: Path) -> None:
    rca.ingest(logs, tmp_path / "store", workers=1)
    (logs / "gpu-node-2" / "dmesg.log").write_text("[    1.000000] rewritten boot\n")
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    assert report.changes == {"rewritten": 1, "unchanged": 1}
    events = rca.open_store(tmp_path / "store").events().filter(pl.col("file") == "gpu-node-2/dmesg.log")
    assert events["message"].to_list() == ["rewritten boot"]
    assert len(list((tmp_path / "store" / "events").glob("date=*/host=*/*.parquet"))) == 2


def test_a_file_read_with_other_options_is_read_again_whole(logs: Path, tmp_path: Path) -> None:
    # The store had every file read in UTC; the engineer learns the nodes log local time (UTC+02:00) and runs again.
    store = tmp_path / "store"
    rca.ingest(logs, store, workers=1)
    utc = rca.open_store(store).events().filter(pl.col("source") == "kubelet").sort("line")
    with open(logs / "gpu-node-1" / "kubelet.log", "a") as handle:  # grown since: read from the top all the same
        handle.write(KLOG)
    berlin = IngestOptions(tz="+02:00")
    report = rca.ingest(logs, store, workers=1, options=berlin)
    assert report.changes == {"rewritten": 2}
    kubelet = rca.open_store(store).events().filter(pl.col("source") == "kubelet").sort("line")
    assert kubelet["line"].to_list() == [1, 2, 3, 5, 6]
    assert kubelet["ts"].head(4).to_list() == [ts - timedelta(hours=2) for ts in utc["ts"]]
    assert all(_balanced(row) for row in _manifest(store).values())
    # What a fresh store read at those options holds, to the event and the manifest row.
    rca.ingest(logs, tmp_path / "fresh", workers=1, options=berlin)
    fresh = rca.open_store(tmp_path / "fresh")
    assert rca.open_store(store).events().sort("event_id").equals(fresh.events().sort("event_id"))
    assert rca.open_store(store).manifest().drop("run_id", "parts").sort("path").equals(fresh.manifest().drop("run_id", "parts").sort("path"))
    # The same options again: nothing to do; a batch size is no reading option.
    assert rca.ingest(logs, store, workers=1, options=dataclasses.replace(berlin, batch_bytes=1 << 20)).changes == {"unchanged": 2}
    assert rca.ingest(logs, store, workers=1).changes == {"rewritten": 2}


def test_a_timeless_log_whose_only_fact_is_an_exit_code_is_recognised(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "ci-runner-3"
    logs.mkdir(parents=True)
    (logs / "job.log").write_text("+ make test\nmake: *** [Makefile:12: test] Error 2\nProcess completed with exit code 2.\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    row = _manifest(tmp_path / "store")["ci-runner-3/job.log"]
    assert (row["status"], row["error"]) == ("ok", None)
    assert rca.open_store(tmp_path / "store").events()["exit_code"].drop_nulls().to_list() == [2, 2]


def test_bad_inputs_get_a_manifest_line_and_the_rest_is_ingested(logs: Path, tmp_path: Path) -> None:
    bad = logs / "gpu-node-2"
    (bad / "core.bin").write_bytes(b"\x7fELF\x00\x00\x01" * 500)
    good_gz = gzip.compress((KLOG * 2000).encode())
    (bad / "kubelet.log.2.gz").write_bytes(good_gz)
    (bad / "kubelet.log.3.gz").write_bytes(good_gz[: len(good_gz) // 2])
    (bad / "latin1.log").write_bytes(b"ok line\nna\xefve caf\xe9 line\n")
    (bad / "empty.log").write_bytes(b"")
    (bad / "huge.log").write_bytes(b"x" * (50 * 1024 * 1024) + b"\nnext line\n")
    (bad / "unknown.dat").write_text("%%%% some format nobody knows %%%%\n" * 3)
    (bad / "dangling").symlink_to(bad / "missing-target")
    (bad / "loop").symlink_to(logs)
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    rows = _manifest(tmp_path / "store")
    assert rows["gpu-node-2/core.bin"]["status"] == "skipped" and "binary" in rows["gpu-node-2/core.bin"]["error"]
    assert rows["gpu-node-2/kubelet.log.2.gz"]["events"] == 2000
    truncated = rows["gpu-node-2/kubelet.log.3.gz"]
    assert truncated["status"] == "warning" and "truncated gzip" in truncated["error"] and 0 < truncated["events"] < 2000
    assert rows["gpu-node-2/latin1.log"]["decode_errors"] == 1 and rows["gpu-node-2/latin1.log"]["events"] == 2
    assert rows["gpu-node-2/empty.log"]["error"] == "empty file"
    huge = rows["gpu-node-2/huge.log"]
    assert (huge["truncated_lines"], huge["events"], huge["status"]) == (1, 2, "warning")
    unknown = rows["gpu-node-2/unknown.dat"]
    assert (unknown["events"], unknown["status"]) == (3, "warning") and "format not recognised" in unknown["error"]
    assert rows["gpu-node-2/dangling"]["status"] == "skipped"
    assert "symlink loop" in rows["gpu-node-2/loop"]["error"]
    assert all(_balanced(row) for row in rows.values())
    events = rca.open_store(tmp_path / "store").events()
    assert events.filter(pl.col("kind") == "oom_kill").height == 1
    cut = events.filter(pl.col("file") == "gpu-node-2/huge.log")["message"].str.len_chars().max()
    assert cut <= IngestOptions().max_line_chars
    assert report.summary["problem_files"]


def _failing_source(monkeypatch: pytest.MonkeyPatch, name: str, **broken: object) -> None:
    """Replace the registered source ``name`` by one whose given functions raise."""
    monkeypatch.setitem(sources._REGISTRY, name, dataclasses.replace(sources.get(name), **broken))


def _panic(*args: object) -> None:
    raise PanicException("assertion failed: i < self.len()")


def test_a_parser_that_fails_keeps_the_file_s_lines_and_says_so(logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A panic inside polars is a BaseException, not an Exception: it must not stop the ingest either.
    _failing_source(monkeypatch, "kernel", parse=_panic)
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    rows = _manifest(tmp_path / "store")
    dmesg = rows["gpu-node-2/dmesg.log"]
    assert dmesg["status"] == "warning" and dmesg["source"] == "kernel"
    assert "the kernel parser failed on lines 1-2 (PanicException: assertion failed" in dmesg["error"]
    assert rows["gpu-node-1/kubelet.log"]["status"] == "ok"
    assert all(_balanced(row) for row in rows.values())
    kept = rca.open_store(tmp_path / "store").events().filter(pl.col("file") == "gpu-node-2/dmesg.log").sort("line")
    assert kept["kind"].to_list() == ["log", "log"] and kept["ts_quality"].to_list() == ["missing", "missing"]
    assert kept["message"].to_list() == [line for line in (logs / "gpu-node-2" / "dmesg.log").read_text().splitlines()]
    assert kept["host"].unique().to_list() == ["gpu-node-2"]
    assert "gpu-node-2/dmesg.log" in str(report.summary["problem_files"])


def test_a_whole_file_parser_that_fails_gives_an_error_row(logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(DATA / "dcgm" / "prometheus_instant_query_xid.json", logs / "gpu-node-1" / "query.json")
    _failing_source(monkeypatch, "dcgm", parse_bytes=_panic)
    rca.ingest(logs, tmp_path / "store", workers=1)
    rows = _manifest(tmp_path / "store")
    failed = rows["gpu-node-1/query.json"]
    assert (failed["status"], failed["source"], failed["events"]) == ("error", "dcgm", 0)
    assert failed["error"].startswith("the dcgm parser failed: PanicException: assertion failed")
    assert rows["gpu-node-1/kubelet.log"]["status"] == "ok" and rows["gpu-node-2/dmesg.log"]["status"] == "ok"


def test_a_sniffer_that_fails_does_not_claim_the_file(logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _failing_source(monkeypatch, "kubelet", sniff=_panic, sniff_heads=_panic)
    rca.ingest(logs, tmp_path / "store", workers=1)
    rows = _manifest(tmp_path / "store")
    assert rows["gpu-node-2/dmesg.log"]["source"] == "kernel"
    assert rows["gpu-node-1/kubelet.log"]["source"] != "kubelet" and rows["gpu-node-1/kubelet.log"]["events"] == 4


def _fixture_heads() -> list[list[str]]:
    heads = []
    for path in sorted(p for p in DATA.rglob("*") if p.is_file()):
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
        heads.append([line for line in lines if line.strip()][:60])
    return [*heads, [], ["   "]]


def test_heads_sniffed_together_score_as_each_alone() -> None:
    heads = _fixture_heads()
    together = sources.sniff_many(heads)
    # Every third fixture's head and the two empty ones are also sniffed alone (a sniff costs its queries); what the
    # others are sniffed beside must not change their scores.
    sampled = [*range(0, len(heads) - 2, 3), len(heads) - 2, len(heads) - 1]
    assert [together[i] for i in sampled] == [sources.sniff(heads[i]) for i in sampled]
    named = {source.name for source, _ in together if source}
    assert {"kernel", "kubelet", "nvidia_smi", "pipeline", "syslog", "k8s", "dcgm", "cgroup"} <= named


def _named(scores: list[tuple[sources.Source | None, float]]) -> list[tuple[str | None, float]]:
    return [(source.name if source else None, score) for source, score in scores]


def test_a_head_a_sniffer_cannot_read_costs_the_other_heads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    heads = _fixture_heads()
    expected = _named(sources.sniff_many(heads))
    real = sources.get("kernel").sniff_heads

    def fails_on_marker(frame: pl.DataFrame) -> dict[int, float]:
        if frame["text"].str.contains("UNREADABLE", literal=True).any():
            raise PanicException("assertion failed")
        return real(frame)

    _failing_source(monkeypatch, "kernel", sniff_heads=fails_on_marker)
    assert _named(sources.sniff_many([*heads, ["[    1.0] UNREADABLE"]]))[:-1] == expected


def test_missing_input_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        rca.ingest(tmp_path / "nope", tmp_path / "store")


def test_single_file_input(logs: Path, tmp_path: Path) -> None:
    report = rca.ingest(logs / "gpu-node-2" / "dmesg.log", tmp_path / "store", IngestOptions(host="h9"), workers=1)
    assert report.summary["events"] == 2 and report.summary["hosts"] == ["h9"]


def test_a_failed_run_leaves_the_previous_store_intact(logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rca.ingest(logs, tmp_path / "store", workers=1)
    before = rca.open_store(tmp_path / "store").events()
    (logs / "gpu-node-1" / "new.log").write_text(KLOG)

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("killed mid-commit")

    monkeypatch.setattr("rca.store._atomic_write_parquet", explode)
    with pytest.raises(RuntimeError):
        rca.ingest(logs, tmp_path / "store", workers=1)
    monkeypatch.undo()
    assert rca.open_store(tmp_path / "store").events().equals(before)
    rca.ingest(logs, tmp_path / "store", workers=1)
    assert rca.open_store(tmp_path / "store").events().height == before.height + 1


def test_second_writer_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    with store.writing():
        with pytest.raises(StoreLockedError, match="being written"):
            with Store(tmp_path / "store").writing():
                pass


def test_parallel_run_equals_serial_run(logs: Path, tmp_path: Path) -> None:
    for i in range(4):
        (logs / "gpu-node-1" / f"extra-{i}.log").write_text(KLOG * (i + 1))
    rca.ingest(logs, tmp_path / "serial", workers=1)
    rca.ingest(logs, tmp_path / "parallel", workers=2)
    serial = rca.open_store(tmp_path / "serial").events()
    parallel = rca.open_store(tmp_path / "parallel").events()
    assert serial.equals(parallel)


def test_year_comes_from_dated_lines_then_mtime(tmp_path: Path) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    (root / "a.log").write_text(KLOG)
    os.utime(root / "a.log", (1_764_000_000, 1_764_000_000))  # 2025-11-24
    (root / "b.log").write_text("I1215 19:22:27.124029   77158 helpers.go:814] took 2021-12-15 19:22:27.083065473 +0800 CST\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    events = rca.open_store(tmp_path / "store").events()
    by_file = {row["file"]: row for row in events.to_dicts()}
    assert by_file["n1/a.log"]["ts"].year == 2024 and by_file["n1/a.log"]["ts_quality"] == "year_from_mtime"
    assert by_file["n1/b.log"]["ts"].year == 2021 and by_file["n1/b.log"]["ts_quality"] == "year_inferred"


def test_event_ids_count_the_events_of_a_line_in_parser_order() -> None:
    events = pl.DataFrame({"line": [3, 1, 3, 2], "n_lines": [1, 1, 0, 1], "message": ["c", "a", "c derived", "b"]})
    finished = finish_events(events, ParseContext(file="f.log"), "kernel")
    assert finished["line"].to_list() == [1, 2, 3, 3]
    assert [event_id.rsplit(":", 2)[1:] for event_id in finished["event_id"]] == [["1", "0"], ["2", "0"], ["3", "0"], ["3", "1"]]
    assert finished["message"].to_list() == ["a", "b", "c", "c derived"]


def test_the_year_hints_of_several_files_are_each_file_s_first_dated_year() -> None:
    undated = "Dec  1 03:17:05 node-1 kernel: Out of memory"
    texts = [
        pl.Series("text", [undated, "2025-03-01T10:00:00Z start", "2026-01-01 00:00:00 next"]),
        pl.Series("text", [], dtype=pl.String),
        pl.Series("text", [undated] * 3),
        pl.Series("text", [undated] * (HEAD_LINES + 5) + ["2024/12/31 23:59:59 late"]),  # past the head
    ]
    assert year_hints(texts) == [year_hint(t) for t in texts] == [2025, None, None, 2024]
    assert year_hints([]) == []


def test_a_year_hint_reads_torchrun_s_table_stamp_and_us_month_first_dates() -> None:
    texts = [
        pl.Series("text", ["[0]:", "  time      : 2026-12-04_17:27:27", "  host      : localhost"]),  # torchrun's failure table
        pl.Series("text", ["08/31/2024 14:37:22 [INFO|DP=0|PP=0|TP=0]: iteration: 5"]),  # nanotron's header
        pl.Series("text", ["31/08/2024 14:37:22 day first is not read"]),
    ]
    assert year_hints(texts) == [year_hint(t) for t in texts] == [2026, 2024, None]


def test_a_year_hint_reads_ctime_and_date_stamps() -> None:
    texts = [
        # Loghub's Linux syslog: yearless lines, ftpd's connection lines quote ctime(3) with its year
        pl.Series("text", ["Jun 17 07:07:00 combo su(pam_unix)[3135]: session closed", "Jun 17 07:07:00 combo ftpd[29504]: connection from"
                           " 24.54.76.216 (24-54-76-216.bflony.adelphia.net) at Fri Jun 17 07:07:00 2005 "]),
        pl.Series("text", ["Tue Mar  2 14:20:00 UTC 2026", "Mon Mar  2 14:20:00 2026       "]),  # date(1), nvidia-smi's header
        pl.Series("text", ["Fri Jun 17 07:07:00 at 2005 is no stamp", "Fry Jun 17 07:07:00 2005"]),
    ]
    assert year_hints(texts) == [year_hint(t) for t in texts] == [2005, 2026, None]


_JOURNAL_BANNER = "-- Logs begin at Sat 2022-06-04 08:00:11 UTC, end at Tue 2024-01-02 14:22:09 UTC. --"


def test_a_journal_banner_s_end_bounds_the_year_of_the_lines_below_it() -> None:
    # A persistent journal began in 2022; `journalctl -u kubelet --since …` printed only its last days, over New Year.
    text = "\n".join([
        _JOURNAL_BANNER,
        "Dec 31 23:59:58 node-1 kubelet[811]: I1231 23:59:58.100000     811 kubelet.go:2400] SyncLoop (PLEG)",
        "Jan 02 14:22:09 node-1 systemd[1]: kubelet.service: Main process exited, code=killed, status=9/KILL",
    ])
    assert year_hint(pl.Series(text.split("\n"))) == datetime(2024, 1, 2, 14, 22, 9, tzinfo=UTC)
    events = rca.parse_text(text, file="node-1/kubelet.journal")
    timed = events.filter(pl.col("ts").is_not_null())
    assert timed["ts"].dt.date().to_list() == [date(2023, 12, 31), date(2024, 1, 2)]
    assert set(timed["ts_quality"]) == {"year_inferred"}


def test_small_files_take_their_own_journal_banner_s_end_or_dated_year(tmp_path: Path) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    (root / "kubelet.journal").write_text(f"{_JOURNAL_BANNER}\nDec 31 23:59:58 n1 systemd[1]: Started kubelet.service.\n")
    (root / "kern.log").write_text("2021-12-15T19:22:27+00:00 n1 kernel: start\nDec 16 10:00:00 n1 kernel: Out of memory: Killed process 4242 (python3)\n")
    os.utime(root / "kern.log", (1_764_000_000, 1_764_000_000))  # 2025-11-24
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    events = rca.open_store(tmp_path / "store").events().filter(pl.col("ts").is_not_null())
    years = {(row["file"], row["ts"].year, row["ts_quality"]) for row in events.to_dicts()}
    assert ("n1/kubelet.journal", 2023, "year_inferred") in years
    assert ("n1/kern.log", 2021, "year_inferred") in years
    assert {year for _, year, _ in years} == {2021, 2023}


def test_a_format_read_without_any_time_is_recognised_and_plain_text_is_not(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "h"
    logs.mkdir(parents=True)
    (logs / "nccl_debug.log").write_text(
        "ng30903:3063025:3066031 [0] NCCL INFO group.cc:96 -> 3\nng30903:3063025:3066031 [0] NCCL INFO comm 0x5 rank 0 nranks 8\n"
    )
    (logs / "app.jsonl").write_text('{"levelname": "INFO", "msg": "started"}\n{"levelname": "ERROR", "msg": "failed"}\n')
    (logs / "notes.txt").write_text("hello world\nsome words here\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store")
    status = dict(rca.open_store(tmp_path / "store").manifest().select("path", "status").iter_rows())
    assert status == {"h/nccl_debug.log": "ok", "h/app.jsonl": "ok", "h/notes.txt": "warning"}
