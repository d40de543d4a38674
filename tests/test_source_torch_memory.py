"""The torch_memory source and rca.snapshots: _dump_snapshot pickles, memory_summary() tables, snapshot-diff.

No GPU records snapshots here: tests/make_torch_memory_fixtures.py builds them in the shape
torch.cuda.memory._snapshot documents (and _memory_viz.py reads), and prints the summaries
with PyTorch's own memory_summary() over made-up allocator stats.
"""

from __future__ import annotations

import json
import os
import pickle
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import rca
from rca import _safe_pickle, snapshots
from rca.cli import app
from rca.datasets._snapshots import Allocation, build, dumps
from rca.errors import FileFormatError
from rca.ingest import FileTask, IngestOptions, parse_file
from rca.sources import torch_memory
from tests.conftest import DATA, FIXED_MTIME, fixture_path

FOLDER = DATA / "torch_memory"
SNAPSHOTS = FOLDER / "snapshots"
BEFORE, AFTER = SNAPSHOTS / "leak_after_10_requests.pickle", SNAPSHOTS / "leak_after_25_requests.pickle"
MIB, GIB = 2**20, 2**30
LEAK = 42 * MIB


def _parse_file(path: Path, tmp_path: Path, format: str | None = None) -> tuple[dict, pl.DataFrame]:
    staging = tmp_path / "staging"
    staging.mkdir(exist_ok=True)
    result = parse_file(FileTask(str(path), f"gpu-node-5/{path.name}", "gpu-node-5", str(staging), "run0", IngestOptions(format=format)))
    parts = [pl.read_parquet(staging / name) for name in result.new_parts]
    return result.manifest, pl.concat(parts) if parts else pl.DataFrame()


def _attrs(row: dict) -> dict:
    return json.loads(row["attrs"])


# --- snapshot pickles through the driver ---------------------------------------------------------


def test_fragmented_snapshot_event(tmp_path: Path) -> None:
    row, events = _parse_file(SNAPSHOTS / "fragmented_oom.pickle", tmp_path)
    assert {k: row[k] for k in ("source", "format", "status", "lines", "events", "derived_events")} == {
        "source": "torch_memory", "format": "pickle", "status": "ok", "lines": 1, "events": 1, "derived_events": 0}
    event = events.row(0, named=True)
    live = 32 * (60 * MIB + 4096)
    assert (event["kind"], event["gpu_index"], event["mem_used_bytes"], event["mem_total_bytes"], event["mem_requested_bytes"]) == (
        "memory_snapshot", 1, live, 3842 * MIB, 90 * MIB)
    assert (event["ts"], event["ts_quality"], event["severity"], event["host"]) == (
        datetime(2025, 11, 30, 10, 53, 24, tzinfo=UTC), "exact", "warning", "gpu-node-5")
    attrs = _attrs(event)
    assert {k: attrs[k] for k in ("snapshot_format", "segments", "active_bytes", "inactive_split_bytes", "largest_free_block_bytes",
                                  "peak_allocated_bytes", "oom_events", "device_free_at_oom_bytes")} == {
        "snapshot_format": "pickle", "segments": 1, "active_bytes": live, "inactive_split_bytes": 3842 * MIB - live,
        "largest_free_block_bytes": 60 * MIB + 4096, "peak_allocated_bytes": live, "oom_events": 1, "device_free_at_oom_bytes": 38 * MIB}
    assert attrs["fragmentation"] == pytest.approx(0.5002, abs=1e-4)
    assert attrs["top_sites"] == [{"frame": "model.py:97:forward", "bytes": live, "count": 32}]


def test_leak_snapshot_names_the_growing_site(tmp_path: Path) -> None:
    _, events = _parse_file(AFTER, tmp_path)
    attrs = _attrs(events.row(0, named=True))
    assert attrs["top_sites"] == [
        {"frame": "model.py:41:__init__", "bytes": 8 * 512 * MIB, "count": 8},
        {"frame": "retriever.py:88:embed_query", "bytes": 25 * LEAK, "count": 25},
    ]
    # Each request's 96 MiB activation and 8 KiB of tokens are freed and their blocks reused: the peak is one request above now.
    assert attrs["peak_allocated_bytes"] == events["mem_used_bytes"][0] + 96 * MIB + 8192


def test_snapshot_without_a_trace_takes_the_file_time(tmp_path: Path) -> None:
    snapshot = build([Allocation("/srv/app.py:10:load", 4 * MIB, 1)])
    snapshot["device_traces"] = [[]]
    path = tmp_path / "no_trace.pickle"
    path.write_bytes(dumps(snapshot))
    os.utime(path, (FIXED_MTIME.timestamp(),) * 2)
    _, events = _parse_file(path, tmp_path)
    event = events.row(0, named=True)
    assert (event["ts"], event["ts_quality"], event["mem_used_bytes"], event["mem_total_bytes"]) == (FIXED_MTIME, "file_mtime", 4 * MIB, 20 * MIB)
    assert "peak_allocated_bytes" not in _attrs(event)


def test_old_format_list_of_segments_with_history_frames() -> None:
    segment = {"device": 0, "address": 1, "total_size": 2 * MIB, "allocated_size": MIB, "active_size": MIB, "stream": 0, "segment_type": "small",
               "blocks": [{"size": MIB, "state": "active_allocated",
                           "history": [{"addr": 1, "real_size": MIB, "frames": [{"filename": "/w/data.py", "line": 7, "name": "collate"}]}]},
                          {"size": MIB, "state": "inactive"}]}
    decoded = snapshots.decode(pickle.dumps([segment], protocol=2))
    assert snapshots.sites(decoded).to_dicts() == [{"frame": "data.py:7:collate", "bytes": MIB, "count": 1}]
    summary = snapshots.summary(decoded).row(0, named=True)
    assert (summary["allocated_bytes"], summary["reserved_bytes"], summary["inactive_split_bytes"], summary["peak_allocated_bytes"]) == (
        MIB, 2 * MIB, MIB, None)


def test_the_site_is_the_first_frame_outside_torch_and_the_interpreter() -> None:
    frames = [
        {"filename": "??", "line": 0, "name": "c10::cuda::CUDACachingAllocator::malloc"},
        {"filename": "/usr/lib/python3.11/site-packages/torch/nn/functional.py", "line": 2551, "name": "layer_norm"},
        {"filename": "/usr/lib/python3.11/contextlib.py", "line": 81, "name": "inner"},
        {"filename": "/home/me/proj/encoder.py", "line": 64, "name": "forward"},
        {"filename": "/home/me/proj/train.py", "line": 9, "name": "main"},
    ]
    segment = {"device": 0, "total_size": 2 * MIB, "blocks": [{"size": 512, "state": "active_allocated", "frames": frames}]}
    decoded = snapshots.decode(pickle.dumps({"segments": [segment], "device_traces": [[]]}))
    assert snapshots.sites(decoded)["frame"].to_list() == ["encoder.py:64:forward"]


# --- hostile and damaged pickles ----------------------------------------------------------------


class _RunsAShellCommand:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (os.system, (f"touch {self.marker}",))


def test_a_hostile_pickle_cannot_run_code_and_is_a_manifest_error(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "snapshot.pickle"
    path.write_bytes(pickle.dumps({"segments": [_RunsAShellCommand(marker)], "device_traces": []}))
    row, events = _parse_file(path, tmp_path)
    assert not marker.exists()
    assert (row["status"], row["source"], row["events"], events.height) == ("error", "torch_memory", 0, 0)
    assert row["error"] == "refused to unpickle: the pickle asks for posix.system, and pickles here may hold plain data only"


def test_the_restricted_unpickler_refuses_every_global_and_keeps_plain_data() -> None:
    for value in (datetime(2020, 1, 1), Path("x"), OrderedDict(a=1)):
        with pytest.raises(FileFormatError, match="refused to unpickle: the pickle asks for"):
            _safe_pickle.loads(pickle.dumps(value))
    plain = {"a": [1, 2.5, "x", None, True, (1, 2), b"b", {3}], "b": {"nested": [[]]}}
    assert _safe_pickle.loads(pickle.dumps(plain, protocol=4)) == plain


def test_a_truncated_snapshot_is_a_manifest_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.pickle"
    path.write_bytes(AFTER.read_bytes()[:5000])
    row, _ = _parse_file(path, tmp_path)
    assert row["status"] == "error" and row["error"].startswith(("damaged pickle", "refused to unpickle"))


def test_a_pickle_that_is_no_snapshot_is_refused() -> None:
    with pytest.raises(FileFormatError, match="no snapshot"):
        snapshots.decode(pickle.dumps({"segments_total": 3, "segments": "many"}))


def test_shared_references_that_would_explode_are_refused() -> None:
    blocks = [{"size": 512, "state": "active_allocated", "frames": []}] * 1
    segment = {"device": 0, "total_size": 512, "blocks": blocks * 2000}
    data = pickle.dumps({"segments": [segment] * 2000, "device_traces": []})
    with pytest.raises(FileFormatError, match="far more blocks"):
        snapshots.decode(data)


# --- snapshot-diff ----------------------------------------------------------------------------------


def test_diff_localises_a_leak_of_42_mib_per_request() -> None:
    grown = snapshots.diff(BEFORE, AFTER)
    assert grown.schema == pl.Schema(snapshots.DIFF_SCHEMA)
    assert grown.to_dicts() == [
        {"frame": "retriever.py:88:embed_query", "bytes_before": 10 * LEAK, "bytes_after": 25 * LEAK, "bytes_growth": 15 * LEAK,
         "count_before": 10, "count_after": 25, "count_growth": 15},
        {"frame": "model.py:41:__init__", "bytes_before": 8 * 512 * MIB, "bytes_after": 8 * 512 * MIB, "bytes_growth": 0,
         "count_before": 8, "count_after": 8, "count_growth": 0},
    ]
    assert snapshots.diff(BEFORE, AFTER, top=1)["frame"].to_list() == ["retriever.py:88:embed_query"]
    assert snapshots.diff(AFTER, BEFORE)["bytes_growth"].to_list() == [0, -15 * LEAK]


def test_snapshot_diff_command() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["snapshot-diff", str(BEFORE), str(AFTER), "--json", "--top", "1"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [{"frame": "retriever.py:88:embed_query", "bytes_before": 10 * LEAK, "bytes_after": 25 * LEAK,
                                          "bytes_growth": 15 * LEAK, "count_before": 10, "count_after": 25, "count_growth": 15}]
    table = runner.invoke(app, ["snapshot-diff", str(BEFORE), str(AFTER)])
    assert table.exit_code == 0 and "retriever.py:88:embed_query" in table.output and "+630.0 MiB" in table.output


def test_snapshot_diff_command_reports_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pickle"
    bad.write_bytes(b"not a pickle")
    result = CliRunner().invoke(app, ["snapshot-diff", str(bad), str(AFTER)])
    assert result.exit_code != 0 and "not a pickle" in result.output


# --- memory_summary() tables ---------------------------------------------------------------------------


def test_memory_summary_table() -> None:
    text = (FOLDER / "memory_summary_oom_device0.txt").read_text()
    events = rca.parse_text(text, file="gpu-node-5/summary.txt", reference_time=FIXED_MTIME)
    assert events.height == 1
    event = events.row(0, named=True)
    assert (event["source"], event["kind"], event["format"], event["gpu_index"], event["n_lines"]) == (
        "torch_memory", "memory_snapshot", "memory_summary", 0, 47)
    assert (event["mem_used_bytes"], event["mem_total_bytes"], event["ts"], event["ts_quality"], event["severity"]) == (
        62464 * MIB, 79872 * MIB, FIXED_MTIME, "file_mtime", "warning")
    assert _attrs(event) == {
        "snapshot_format": "memory_summary", "segments": 412, "active_bytes": 62464 * MIB, "inactive_split_bytes": 9216 * MIB,
        "requested_bytes": 61839 * MIB, "fragmentation": round(1 - 62464 / 79872, 4), "peak_allocated_bytes": 75776 * MIB,
        "allocations": 5120, "cuda_ooms": 2, "cudamalloc_retries": 6}


def test_memory_summaries_inside_a_training_log() -> None:
    events = rca.parse_text((FOLDER / "memory_summary_two_devices_in_log.txt").read_text(), file="h/train.log")
    tables = events.filter(pl.col("kind") == "memory_snapshot")
    assert tables["gpu_index"].to_list() == [0, 1]
    assert tables["mem_total_bytes"].to_list() == [33792 * MIB, 40 * GIB]
    assert [_attrs(r)["fragmentation"] for r in tables.to_dicts()] == [round(1 - 30720 / 33792, 4), 0.7]
    assert events.filter(pl.col("kind") == "log")["line"].to_list() == [1, 49]
    assert int(events["n_lines"].sum()) == 96


def test_summaries_are_sniffed_and_snapshots_sniffed_by_their_bytes() -> None:
    head = (FOLDER / "memory_summary_oom_device0.txt").read_text().splitlines()[:60]
    assert torch_memory.sniff(head) == 0.95
    assert torch_memory.sniff(["|====|", "| Allocated memory | 1 B | 1 B |"]) == 0.0
    assert torch_memory.sniff_bytes(AFTER.read_bytes()[:4096]) == 0.95
    assert torch_memory.sniff_bytes(pickle.dumps({"weights": [1, 2]})) == 0.0


# --- property tests --------------------------------------------------------------------------------------

SITES = st.sampled_from(["/a/x.py:1:f", "/a/y.py:2:g", "/a/z.py:3:h"])
ALLOCATIONS = st.lists(st.tuples(SITES, st.integers(1, 64 * MIB), st.booleans()), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(allocations=ALLOCATIONS)
def test_summary_accounts_for_every_live_byte(allocations: list[tuple[str, int, bool]]) -> None:
    built = build([Allocation(site, size, 1000 + k, freed_us=2000 + k if freed else None) for k, (site, size, freed) in enumerate(allocations)])
    decoded = snapshots.decode(dumps(built))
    summary = snapshots.summary(decoded).row(0, named=True)
    live = [(site, -(-size // 512) * 512) for site, size, freed in allocations if not freed]
    assert summary["allocated_bytes"] == sum(size for _, size in live)
    assert summary["reserved_bytes"] == sum(s["total_size"] for s in built["segments"])
    assert summary["allocated_bytes"] <= summary["reserved_bytes"]
    by_site = {f"{site.rsplit('/', 1)[1]}": sum(s for name, s in live if name == site) for site in {name for name, _ in live}}
    assert {row["frame"]: row["bytes"] for row in snapshots.sites(decoded).to_dicts()} == by_site


@settings(max_examples=40, deadline=None)
@given(before=st.integers(0, 30), extra=st.integers(0, 30), size=st.integers(1, 8 * MIB))
def test_diff_growth_is_the_added_blocks(before: int, extra: int, size: int) -> None:
    def snapshot(n: int) -> snapshots.Snapshot:
        return snapshots.decode(dumps(build([Allocation("/s/leak.py:5:keep", size, k) for k in range(n)] +
                                            [Allocation("/s/base.py:1:init", MIB, 10**6)])))

    grown = snapshots.diff(snapshot(before), snapshot(before + extra)).filter(pl.col("frame") == "leak.py:5:keep")
    rounded = -(-size // 512) * 512
    expected = [(extra * rounded, extra)] if before + extra else []
    assert [(r["bytes_growth"], r["count_growth"]) for r in grown.to_dicts()] == expected


def test_a_torch_1_summary_with_kb_mb_gb_sizes_is_read() -> None:
    # pytorch/pytorch#35901: PyTorch before 2.0 prints its 1024-based sizes as "MB" (and "KB", "GB").
    events = rca.parse_text(fixture_path("torch_memory_summary_torch1_mb_units_01.txt").read_text(), file="n/summary.txt")
    (event,) = events.to_dicts()
    assert (event["kind"], event["gpu_index"], event["mem_used_bytes"], event["mem_total_bytes"], event["n_lines"]) == (
        "memory_snapshot", 0, 1062 * MIB, 12420 * MIB, 16)
    assert _attrs(event)["peak_allocated_bytes"] == 4877 * MIB


def test_the_log_around_a_summary_is_read_as_a_training_log_and_the_summary_takes_its_time() -> None:
    # dropreg/R-Drop#9: fairseq's trainer logs the CUDA OOM it recovers from, then the summary under a stamped border line.
    name = "torch_memory_fairseq_trainer_oom_then_summary_mb_units_01.log"
    events = rca.parse_text(fixture_path(name).read_text(), file=f"n/{name}")
    stamp = datetime(2021, 8, 2, 18, 54, 21, tzinfo=UTC)
    assert events.select("line", "n_lines", "source", "kind", "ts", "ts_quality", "gpu_index").rows() == [
        (1, 1, "pipeline", "cuda_oom", stamp, "exact", 0),
        (2, 1, "pipeline", "log", stamp, "exact", None),
        (3, 12, "torch_memory", "memory_snapshot", stamp, "inherited", 0),
    ]
    oom, table = events.row(0, named=True), events.row(2, named=True)
    assert (oom["mem_requested_bytes"], table["mem_used_bytes"], _attrs(table)["cuda_ooms"]) == (68 * MIB, 15046 * MIB, 1)
