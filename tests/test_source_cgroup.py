"""The cgroup source: v1 and v2 memory files, claimed by name or sniffed, one event per file, merged per folder.

The fixtures are folders as a support bundle copies them (``<host>/sys/fs/cgroup/...``): a v2
container cgroup of the systemd driver that hit its 8 GiB limit (3 OOM kills), a v1 cgroupfs
container at its 16 GiB limit with one OOM kill under an unlimited ``kubepods`` parent, and a
container's own view of its cgroup (``/``) with no limit. File contents follow the kernel's
cgroup-v1/memory.rst and cgroup-v2.rst.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.ingest import parse_lines
from rca.sources import cgroup
from rca.sources._base import ParseContext, lines_frame
from tests.conftest import DATA, FIXED_MTIME

FOLDER = DATA / "cgroup"
FILES = sorted(p for p in FOLDER.rglob("*") if p.is_file())
V2_FOLDER = (
    "gpu-node-07/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c1d4f2e_9a3b_4c5d_8e6f_0123456789ab.slice/"
    "cri-containerd-3f9a1c2b7d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd.scope"
)
V2_CGROUP = "/" + V2_FOLDER.split("/sys/fs/cgroup/", 1)[1]
V1_CONTAINER = "9d2e4b6a8c0f1e3d5b7a9c1e3f5d7b9a1c3e5f7d9b1a3c5e7f9d1b3a5c7e9f1d"
V1_CGROUP = f"/kubepods/burstable/pod5e8b2a91-4c7d-4f3e-9b1a-2d6c8e0f4a17/{V1_CONTAINER}"
GIB = 2**30


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    root = tmp_path_factory.mktemp("cgroup") / "logs"
    shutil.copytree(FOLDER, root)
    for path in root.rglob("*"):
        os.utime(path, (FIXED_MTIME.timestamp(), FIXED_MTIME.timestamp()))
    rca.ingest(root, root.parent / "store", workers=1)
    return rca.open_store(root.parent / "store").events()


def _attrs(row: dict) -> dict:
    return json.loads(row["attrs"])


def _file_event(events: pl.DataFrame, path: str) -> dict:
    rows = events.filter(pl.col("file") == path).to_dicts()
    assert len(rows) == 1, rows
    return rows[0]


def test_every_fixture_file_is_one_cgroup_memory_event(events: pl.DataFrame) -> None:
    assert events.height == len(FILES)
    assert set(events["source"]) == {"cgroup"} and set(events["kind"]) == {"cgroup_memory"}
    assert set(events["ts"]) == {FIXED_MTIME} and set(events["ts_quality"]) == {"file_mtime"}
    assert sorted(events["file"]) == sorted(str(p.relative_to(FOLDER)) for p in FILES)


def test_v2_container_at_its_limit(events: pl.DataFrame) -> None:
    current = _file_event(events, f"{V2_FOLDER}/memory.current")
    assert (current["host"], current["cgroup"], current["format"]) == ("gpu-node-07", V2_CGROUP, "cgroup_v2")
    assert (current["pod_uid"], current["container_id"]) == (
        "7c1d4f2e-9a3b-4c5d-8e6f-0123456789ab", "3f9a1c2b7d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd")
    assert current["mem_used_bytes"] == 8581816320
    assert _file_event(events, f"{V2_FOLDER}/memory.max")["mem_total_bytes"] == 8 * GIB
    assert _attrs(_file_event(events, f"{V2_FOLDER}/memory.peak"))["peak_bytes"] == 8 * GIB
    oom = _file_event(events, f"{V2_FOLDER}/memory.events")
    assert _attrs(oom) == {"cgroup_version": 2, "cgroup_file": "memory.events", "events.low": 0, "events.high": 0, "max_events": 1843,
                           "oom": 3, "oom_kill": 3, "events.oom_group_kill": 0}
    assert (oom["severity"], oom["n_lines"]) == ("warning", 6)
    stat = _attrs(_file_event(events, f"{V2_FOLDER}/memory.stat"))
    assert (stat["cgroup_version"], stat["stat.anon"], stat["stat.file"], stat["stat.pgmajfault"]) == (2, 8420589568, 125001728, 312)
    assert len([key for key in stat if key.startswith("stat.")]) == 53


def test_v1_container_and_its_unlimited_parent(events: pl.DataFrame) -> None:
    folder = f"gpu-node-03/sys/fs/cgroup/memory{V1_CGROUP}"
    usage = _file_event(events, f"{folder}/memory.usage_in_bytes")
    assert (usage["cgroup"], usage["pod_uid"], usage["container_id"], usage["format"]) == (
        V1_CGROUP, "5e8b2a91-4c7d-4f3e-9b1a-2d6c8e0f4a17", V1_CONTAINER, "cgroup_v1")
    assert usage["mem_used_bytes"] == 17163145216
    assert _file_event(events, f"{folder}/memory.limit_in_bytes")["mem_total_bytes"] == 16 * GIB
    assert _attrs(_file_event(events, f"{folder}/memory.max_usage_in_bytes"))["peak_bytes"] == 16 * GIB
    failcnt = _file_event(events, f"{folder}/memory.failcnt")
    assert (_attrs(failcnt)["failcnt"], failcnt["severity"]) == (48213, "warning")
    assert _attrs(_file_event(events, f"{folder}/memory.oom_control")) == {
        "cgroup_version": 1, "cgroup_file": "memory.oom_control", "oom_kill_disable": 0, "under_oom": 0, "oom_kill": 1}
    assert _attrs(_file_event(events, f"{folder}/memory.stat"))["stat.total_rss"] == 16911519744
    parent = _file_event(events, "gpu-node-03/sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes")
    assert (parent["cgroup"], parent["pod_uid"], parent["mem_total_bytes"], _attrs(parent)["unlimited"]) == ("/kubepods", None, None, True)


def test_merge_readings_gives_one_row_per_folder(events: pl.DataFrame) -> None:
    readings = cgroup.merge_readings(events).sort("host", "cgroup")
    assert readings.schema == pl.Schema(cgroup.CGROUP_READING_SCHEMA)
    rows = {(r["host"], r["cgroup"]): r for r in readings.to_dicts()}
    assert set(rows) == {("gpu-node-03", "/kubepods"), ("gpu-node-03", V1_CGROUP), ("gpu-node-07", V2_CGROUP), ("gpu-node-11", "/")}
    v2 = rows["gpu-node-07", V2_CGROUP]
    assert {k: v2[k] for k in ("cgroup_version", "mem_used_bytes", "mem_total_bytes", "peak_bytes", "oom", "oom_kill", "max_events", "ts")} == {
        "cgroup_version": 2, "mem_used_bytes": 8581816320, "mem_total_bytes": 8 * GIB, "peak_bytes": 8 * GIB, "oom": 3, "oom_kill": 3,
        "max_events": 1843, "ts": FIXED_MTIME}
    assert json.loads(v2["stat"])["anon"] == 8420589568 and len(v2["event_ids"]) == 5
    v1 = rows["gpu-node-03", V1_CGROUP]
    assert (v1["failcnt"], v1["oom_kill"], v1["under_oom"], v1["oom_kill_disable"], v1["peak_bytes"]) == (48213, 1, False, False, 16 * GIB)
    own_view = rows["gpu-node-11", "/"]
    assert (own_view["mem_total_bytes"], own_view["peak_bytes"], own_view["oom_kill"]) == (None, 3489660928, 0)


def test_merge_readings_of_events_without_cgroup_files_is_empty() -> None:
    other = rca.parse_text("I1201 03:17:05.123456    2345 kubelet.go:123] hello\n", file="n/kubelet.log", year=2024)
    assert cgroup.merge_readings(other).height == 0


# --- detection -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FOLDER)) for p in FILES])
def test_fixture_files_are_claimed_as_cgroup(path: Path) -> None:
    events = rca.parse_text(path.read_text(), file=str(path.relative_to(FOLDER)))
    assert set(events["source"]) == {"cgroup"}


def test_tables_are_sniffed_by_content_and_single_numbers_only_by_name() -> None:
    assert cgroup.sniff(["low 0", "high 0", "max 3", "oom 1", "oom_kill 1"]) == 0.95
    assert cgroup.sniff(["oom_kill_disable 0", "under_oom 1"]) == 0.95
    assert cgroup.sniff(["anon 1", "file 2", "pgfault 3"]) == 0.9
    assert cgroup.sniff(["8589934592"]) == 0.0
    assert cgroup.claims_name("n/memory.peak", ["8589934592"]) == 0.9
    assert cgroup.claims_name("n/memory.max", ["max"]) == 0.9
    assert cgroup.claims_name("n/memory.peak", ["not a number"]) == 0.0
    assert cgroup.claims_name("n/peak.txt", ["8589934592"]) == 0.0


def test_a_number_in_a_file_of_another_name_stays_with_the_catch_all() -> None:
    events = rca.parse_text("8589934592\n", file="n/value.txt")
    assert events["source"].to_list() == ["pipeline"]


def test_klog_and_syslog_lines_are_not_cgroup() -> None:
    assert cgroup.sniff(["I1201 03:17:05.123456    2345 kubelet.go:123] oom_kill 1"]) == 0.0
    assert cgroup.sniff(["Dec  1 03:17:05 node kernel: [ 1.0] under_oom 1"]) == 0.0


def test_cgroup_path_from_the_folder_layout() -> None:
    assert cgroup.cgroup_path("h/sys/fs/cgroup/memory/kubepods/besteffort/podx/memory.stat") == "/kubepods/besteffort/podx"
    assert cgroup.cgroup_path("h/sys/fs/cgroup/memory,memsw/kubepods/memory.stat") == "/kubepods"
    assert cgroup.cgroup_path("h/sys/fs/cgroup/memory.max") == "/"
    assert cgroup.cgroup_path("bundle/h/cgroups/kubepods.slice/kubepods-pod1.slice/memory.max") == "/kubepods.slice/kubepods-pod1.slice"
    assert cgroup.cgroup_path("h/copied/memory.max") == "h/copied"


# --- property tests -----------------------------------------------------------------------------------

KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
VALUES = st.integers(min_value=0, max_value=2**62)


@settings(max_examples=30, deadline=None)
@given(entries=st.dictionaries(KEYS, VALUES, min_size=1, max_size=30))
def test_every_stat_entry_lands_in_attrs(entries: dict[str, int]) -> None:
    text = "".join(f"{key} {value}\n" for key, value in entries.items())
    events = rca.parse_text(text, file="h/sys/fs/cgroup/x/memory.stat", format="cgroup")
    assert events.height == 1 and events["n_lines"][0] == len(entries)
    attrs = json.loads(events["attrs"][0])
    assert {key[5:]: value for key, value in attrs.items() if key.startswith("stat.")} == entries


@settings(max_examples=30, deadline=None)
@given(value=st.integers(min_value=0, max_value=2**63 - 1), name=st.sampled_from(sorted(cgroup.SINGLE_VALUE_FILES)))
def test_a_single_value_file_reads_its_number(value: int, name: str) -> None:
    events = rca.parse_text(f"{value}\n", file=f"h/sys/fs/cgroup/x/{name}")
    row = events.row(0, named=True)
    attribute = cgroup.SINGLE_VALUE_FILES[name][0]
    limited = value < cgroup.UNLIMITED_BYTES
    if attribute == "used":
        assert row["mem_used_bytes"] == value
    elif attribute == "limit":
        assert (row["mem_total_bytes"], json.loads(row["attrs"])["unlimited"]) == ((value, False) if limited else (None, True))
    else:
        assert json.loads(row["attrs"])[attribute] == value


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(st.text(alphabet="abc _0123456789\t-x", max_size=20), max_size=20))
def test_every_line_is_accounted_for(lines: list[str]) -> None:
    frame = lines_frame("".join(line + "\n" for line in lines))
    events, skipped = parse_lines(frame, ParseContext(file="h/sys/fs/cgroup/memory.events"), sources.get("cgroup"))
    assert int(events["n_lines"].sum() or 0) + sum(skipped.values()) == frame.height
    assert events.filter(pl.col("kind") == "cgroup_memory").height <= 1
