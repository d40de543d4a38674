"""The kernel source: dmesg (raw, -T, iso, -x), kern.log, journalctl -k (short, short-iso, monotonic, json).

The real samples (tests/data/kernel/dmesg_*, kern_log_*, journalctl_k_*, verbatim copies of
public logs) are checked against the facts in SOURCES.md. The hand-made fixtures follow the
kernel's and the NVIDIA driver's own formats: a 6.x memcg OOM block with Xid 48/94/63/154/79
(dmesg_oom_6x_xid_01), ``dmesg --time-format iso`` (dmesg_iso_xid_48_01), ``journalctl -k
-o json`` (journalctl_k_json_01), ``-o short-monotonic`` with a boot header, short-iso /
short-iso-precise, ``dmesg -x`` and a kern.log shared with other programs.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rca
from rca import schema, sources
from rca.ingest import parse_lines
from rca.sources import _syslog, _xid, kernel
from rca.sources._base import ParseContext, lines_frame
from tests.conftest import DATA, FIXED_MTIME, attrs_of, head_lines, of_kind, sniffed

FOLDER = DATA / "kernel"
KI = 1024


def _text(name: str) -> str:
    return (FOLDER / name).read_text(encoding="utf-8")


def _events(name: str, **kwargs: object) -> pl.DataFrame:
    return rca.parse_text(_text(name), file=name, reference_time=FIXED_MTIME, **kwargs)


def _parse(text: str, **kwargs: object) -> pl.DataFrame:
    return rca.parse_text(text, file="inline", format="kernel", **kwargs)


def _events_of(text: str) -> pl.DataFrame:
    """Events of pasted text, its source sniffed."""
    return rca.parse_text(text, file="pasted.log", reference_time=FIXED_MTIME)


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def _accounted(text: str, ctx: ParseContext) -> tuple[int, int]:
    lines = lines_frame(text)
    events, skipped = parse_lines(lines, ctx, kernel.SOURCE)
    return int(events["n_lines"].sum() or 0) + sum(skipped.values()), lines.height


# --- real samples: NVIDIA Xid ---------------------------------------------------------------


def test_xid_119_ctime_seven_gsp_timeouts_45_seconds_apart() -> None:
    events = _events("dmesg_xid_119_ctime_01.log")
    xids = of_kind(events, "xid")
    assert xids.height == 7 == events.height
    assert xids["xid"].unique().to_list() == [119]
    assert set(xids["pci_bus"]) == {"0000:61:00"} and set(xids["pid"]) == {1346198} and set(xids["process"]) == {"nvidia-smi"}
    assert xids["ts"][0] == _utc(2023, 3, 3, 4, 27, 8) and xids["ts"][-1] == _utc(2023, 3, 3, 4, 31, 38)
    assert set(xids["ts"].diff().drop_nulls()) == {timedelta(seconds=45)}
    assert set(xids["format"]) == {"dmesg_ctime"} and set(xids["ts_quality"]) == {"exact"}
    assert xids["ts_raw"][0] == "Fri Mar  3 04:27:08 2023"
    assert xids["boot_seconds"].null_count() == 7
    assert set(xids["severity"]) == {"critical"}
    attrs = attrs_of(xids)[0]
    assert (attrs["xid_name"], attrs["xid_resolution"], attrs["xid_investigation"]) == ("GSP_RPC_TIMEOUT", "RESET_GPU", "INVESTIGATE_SW")
    functions = xids["message"].str.extract(r"Expected function (\d+ \(\w+\))").value_counts().sort("message")
    assert functions.rows() == [("103 (GSP_RM_ALLOC)", 2), ("76 (GSP_RM_CONTROL)", 5)]


def test_ctime_without_zone_is_read_in_the_given_zone() -> None:
    events = _events("dmesg_xid_119_ctime_01.log", tz="Europe/Berlin")
    assert events["ts"][0] == _utc(2023, 3, 3, 3, 27, 8)


def test_xid_13_unknown_pid_and_name_are_null() -> None:
    events = _events("dmesg_xid_13_01.log")
    assert events["kind"].to_list() == ["xid"] * 6
    assert set(events["xid"]) == {13} and set(events["pci_bus"]) == {"0000:43:00"}
    assert events["pid"].null_count() == 6 and events["process"].null_count() == 6
    assert events["boot_seconds"].to_list()[0] == 93297.027938 and events["boot_seconds"].to_list()[-1] == 93297.043905
    assert events["ts"].null_count() == 6 and set(events["ts_quality"]) == {"boot_relative"}
    assert events["message"][0].startswith("NVRM: Xid (PCI:0000:43:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR")


def test_boot_relative_times_align_with_a_known_boot_time() -> None:
    boot = _utc(2024, 8, 22, 0, 0, 0)
    events = rca.parse_text(_text("dmesg_xid_13_01.log"), file="x", boot_time=boot)
    assert set(events["ts_quality"]) == {"boot_aligned"}
    assert events["ts"][0] == boot + timedelta(seconds=93297.027938)


def test_xid_31_gpu_uuid_from_the_gpu_at_line_reaches_every_xid_on_the_bus() -> None:
    events = _events("dmesg_xid_31_01.log")
    xids = of_kind(events, "xid")
    assert xids["xid"].to_list() == [31, 13, 13, 13, 13, 32]
    assert set(xids["pci_bus"]) == {"0000:01:00"}
    assert set(xids["gpu_uuid"]) == {"GPU-8a47641b-dff6-f09f-618c-c3eb58fb430d"}
    assert xids["pid"].null_count() == 6
    assert xids["boot_seconds"][0] == 31543.449443 and xids["boot_seconds"][-1] == 31609.615516
    gpu_at = events.row(0, named=True)
    assert (gpu_at["kind"], gpu_at["pci_bus"], gpu_at["gpu_uuid"]) == ("log", "0000:01:00", "GPU-8a47641b-dff6-f09f-618c-c3eb58fb430d")


def test_xid_31_62_45_sequence_on_one_gpu() -> None:
    events = _events("dmesg_xid_31_62_45_01.log")
    xids = of_kind(events, "xid")
    assert xids["xid"].to_list() == [31, 62] + [45] * 8
    first = xids.row(0, named=True)
    assert (first["pid"], first["process"], first["boot_seconds"]) == (13332, "cuda_plot_k32_v", 14328.198504)
    assert xids["pid"][1:].null_count() == 9
    assert set(xids["gpu_uuid"]) == {"GPU-760d0170-b7c5-6817-9414-6cc7112645de"}
    assert xids.filter(pl.col("xid") == 45)["boot_seconds"].to_list()[::7] == [14370.688139, 14397.322674]
    assert xids["severity"].to_list()[:3] == ["error", "critical", "warning"]
    others = of_kind(events, "log")["message"].to_list()
    assert "sched: RT throttling activated" in others


def test_journalctl_xid_45_lines_without_time_keep_ts_null() -> None:
    events = _events("journalctl_k_xid_45_01.log")
    assert events["kind"].to_list() == ["xid"] * 7 and set(events["xid"]) == {45}
    assert events["ts"].null_count() == 7 and set(events["ts_quality"]) == {"missing"}
    assert set(events["process"]) == {"python3"}
    assert [a["previous_xid"] for a in attrs_of(events)] == [149, 145, 145, 145, 149, 145, 145]
    counts = events.group_by("pci_bus", "pid").len().sort("pci_bus").rows()
    assert counts == [("0000:97:00", 1818987, 1), ("0000:ba:00", 1818989, 2), ("0000:dc:00", 1818990, 2), ("0000:ed:00", 1818992, 2)]


def test_kern_log_xid_13_keeps_wall_clock_and_boot_seconds() -> None:
    events = _events("kern_log_xid_13_01.log")
    assert events["kind"].to_list() == ["xid"] * 8 and set(events["pci_bus"]) == {"0000:41:00"}
    assert set(events["host"]) == {"Gipfeli"} and events["pid"].null_count() == 8
    assert events["boot_seconds"][0] == 82659.755847 and events["boot_seconds"][-1] == 82659.756109
    assert set(events["ts"]) == {_utc(2026, 2, 15, 17, 37, 45)} and set(events["ts_quality"]) == {"year_from_mtime"}
    assert events["message"][1] == (
        "NVRM: Xid (PCI:0000:41:00): 13, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Illegal Instruction Encoding"
    )
    kinds = events["message"].str.extract(r"13, (Graphics (?:Exception: ESR|SM Warp Exception|SM Global Exception))").value_counts()
    assert sorted(kinds.rows()) == [("Graphics Exception: ESR", 3), ("Graphics SM Global Exception", 2), ("Graphics SM Warp Exception", 3)]


def test_gpu_fallen_off_the_bus_without_xid_is_a_critical_log_event() -> None:
    events = _events("dmesg_gpu_fallen_off_bus_noxid_01.log")
    assert of_kind(events, "xid").height == 0
    fallen = events.row(0, named=True)
    assert (fallen["kind"], fallen["n_lines"], fallen["pci_bus"], fallen["severity"]) == ("log", 3, "0000:b3:00.0", "critical")
    assert json.loads(fallen["attrs"]) == {"fallen_off_bus": True, "pci_id": "10de:26b5"}
    assert fallen["message"].count("\n") == 2
    probe, driver = events.row(1, named=True), events.row(2, named=True)
    assert probe["boot_seconds"] == 1843.439662 and "probe routine failed for 1 device" in probe["message"]
    assert json.loads(driver["attrs"]) == {"nvidia_driver": "570.158.01"}


# --- real samples: OOM killer ---------------------------------------------------------------


def test_oom_cgroup_01_kill_reaper_then_a_new_invocation() -> None:
    events = _events("dmesg_oom_cgroup_01.log")
    assert events["kind"].to_list() == ["oom_kill", "log", "oom_invoked"]
    kill, reaper, invoked = (events.row(i, named=True) for i in range(3))
    assert (kill["pid"], kill["process"], kill["rss_bytes"], kill["boot_seconds"]) == (63214, "uwsgi", 164992 * KI, 7063.247407)
    assert json.loads(kill["attrs"]) == {
        "constraint": "CONSTRAINT_MEMCG", "uid": 0, "total_vm_kb": 3149468, "anon_rss_kb": 164992, "file_rss_kb": 52176,
        "shmem_rss_kb": 92, "pgtables_kb": 1372, "oom_score_adj": 986,
    }
    assert (reaper["pid"], reaper["boot_seconds"], reaper["severity"]) == (63214, 7063.263325, "info")
    assert json.loads(reaper["attrs"]) == {"reaper": True, "anon_rss_kb": 0, "file_rss_kb": 0, "shmem_rss_kb": 92}
    assert (invoked["pid"], invoked["process"], invoked["n_lines"], invoked["boot_seconds"]) == (63635, "uwsgi", 18, 7093.543707)
    attrs = json.loads(invoked["attrs"])
    assert (attrs["gfp_mask"], attrs["order"], attrs["oom_score_adj"], attrs["cpu"]) == ("0xcc0(GFP_KERNEL)", 0, 986, 4)
    assert attrs["kernel"] == "5.4.0-77-generic" and attrs["memcg_oom"] is True
    assert attrs["hardware"].startswith("Yandex xeon-gold-6230")


def test_oom_cgroup_03_guaranteed_pod_and_task_table() -> None:
    events = _events("dmesg_oom_cgroup_03.log")
    kill = of_kind(events, "oom_kill")
    assert kill.height == 1
    row = kill.row(0, named=True)
    assert (row["pid"], row["process"], row["rss_bytes"]) == (5740, "pause", 4096)
    assert row["cgroup"] == (
        "/kubepods/podf1c273d3-9b36-11ea-b3df-246e9693c184/1f246a3eeea8f70bf91141eeaf1805346a666e225f823906485ea0b6c37dfc3d"
    )
    assert row["pod_uid"] == "f1c273d3-9b36-11ea-b3df-246e9693c184"
    assert row["container_id"] == "1f246a3eeea8f70bf91141eeaf1805346a666e225f823906485ea0b6c37dfc3d"
    assert row["mem_used_bytes"] == row["mem_total_bytes"] == 16777216 * KI
    attrs = json.loads(row["attrs"])
    assert attrs["oom_memcg"] == "/kubepods/podf1c273d3-9b36-11ea-b3df-246e9693c184"
    assert (attrs["memcg_failcnt"], attrs["mems_allowed"], attrs["uid"]) == (52843037, "0-1", 0)
    assert attrs["cpuset"] == "3aa16c9482ae3a6f6b78bda68a55d32c87c99b985e0f11331cddf05af6c4d753"
    assert (attrs["total_vm_kb"], attrs["anon_rss_kb"], attrs["file_rss_kb"], attrs["shmem_rss_kb"]) == (1028, 4, 0, 0)
    assert "pgtables_kb" not in attrs and "oom_score_adj" not in attrs
    tasks = events.filter(pl.col("attrs").str.contains('"task_table":true'))
    assert tasks.height == 21 and {a["oom_score_adj"] for a in attrs_of(tasks)} == {-998}
    largest = max(zip(tasks["pid"], tasks["process"], (a["rss_pages"] for a in attrs_of(tasks)), strict=True), key=lambda t: t[2])
    assert largest == (58406, "data_sim", 3967322)
    memcg_usage = events.row(0, named=True)
    assert memcg_usage["kind"] == "log" and memcg_usage["mem_used_bytes"] == 16777216 * KI
    assert events.filter(pl.col("message").str.starts_with("oom_reaper"))["boot_seconds"].to_list() == [7516988.092344]


def test_oom_cgroup_05_burstable_kill_without_pgtables() -> None:
    events = _events("dmesg_oom_cgroup_05.log")
    row = of_kind(events, "oom_kill").row(0, named=True)
    assert (row["pid"], row["process"], row["rss_bytes"], row["boot_seconds"]) == (18524, "cdi-importer", 23032 * KI, 580237.376066)
    assert row["pod_uid"] == "6b212546-f5dd-4fdf-bcc7-72a686638102"
    assert row["container_id"] == "ea887b1c9c5c8e734ac798fedd2bf5d39c0b7ce5ad961027dfc1ca138a23a2e8"
    assert row["mem_used_bytes"] == 585936 * KI and json.loads(row["attrs"])["memcg_failcnt"] == 75129
    attrs = json.loads(row["attrs"])
    assert (attrs["uid"], attrs["total_vm_kb"], attrs["file_rss_kb"]) == (0, 2701352, 0)
    assert "pgtables_kb" not in attrs and "oom_score_adj" not in attrs
    tasks = events.filter(pl.col("attrs").str.contains('"task_table":true'))
    assert list(zip(tasks["pid"], tasks["process"], (a["oom_score_adj"] for a in attrs_of(tasks)), strict=True)) == [
        (17998, "pause", -998), (18524, "cdi-importer", 999), (3422, "qemu-img", 999)]
    reaper = events.row(-1, named=True)
    assert reaper["boot_seconds"] == 580237.466313 and json.loads(reaper["attrs"])["reaper"] is True


def test_oom_ctime_cgroup_v2_kill_comes_from_the_oom_kill_summary() -> None:
    events = _events("dmesg_oom_cgroup_ctime_v2_01.log")
    kill = of_kind(events, "oom_kill")
    assert kill.height == 1
    row = kill.row(0, named=True)
    assert (row["pid"], row["process"], row["ts"]) == (32550, "uvicorn", _utc(2026, 8, 21, 22, 26, 52))
    assert row["cgroup"].endswith("kubelet-kubepods-burstable-pod17d1d0b1_bbeb_4252_a45c_c9f426d1cb34.slice/"
                                  "cri-containerd-799855c3e9e23ea07677c581b96f444dffb0932d7a907973bb08a8391803c559.scope")
    assert row["pod_uid"] == "17d1d0b1-bbeb-4252-a45c-c9f426d1cb34"
    assert row["container_id"] == "799855c3e9e23ea07677c581b96f444dffb0932d7a907973bb08a8391803c559"
    attrs = json.loads(row["attrs"])
    assert (attrs["uid"], attrs["cpuset"], attrs["mems_allowed"], attrs["constraint"]) == (525287, "user.slice", "0", "CONSTRAINT_MEMCG")
    assert row["rss_bytes"] is None
    tasks = attrs_of(events.filter(pl.col("attrs").str.contains('"task_table":true')))
    assert tasks[0]["rss_pages"] == 178
    assert (tasks[1]["total_vm_pages"], tasks[1]["rss_pages"], tasks[1]["rss_anon_pages"], tasks[1]["oom_score_adj"]) == (
        67713442, 536771, 522690, 992)


def test_oom_global_one_kill_of_java() -> None:
    events = _events("dmesg_oom_global_01.log")
    assert events["kind"].to_list() == ["log", "log", "oom_kill", "log"]
    row = events.row(2, named=True)
    assert (row["pid"], row["process"], row["rss_bytes"], row["cgroup"]) == (5765, "java", 59801780 * KI, "/user.slice")
    assert row["boot_seconds"] == 427582.613244
    attrs = json.loads(row["attrs"])
    assert (attrs["constraint"], attrs["global_oom"], attrs["cpuset"], attrs["mems_allowed"]) == ("CONSTRAINT_NONE", True, "/", "0")
    assert (attrs["uid"], attrs["total_vm_kb"], attrs["pgtables_kb"], attrs["oom_score_adj"]) == (1000, 74499336, 131084, 0)
    assert events["boot_seconds"][1] == 427582.603652  # the oom-kill: summary, kept as its own log event
    assert (events["pid"][0], json.loads(events["attrs"][0])["task_table"]) == (5765, True)
    assert events["boot_seconds"][3] == 427586.569063


def test_oom_invoked_python_header_only_no_victim() -> None:
    events = _events("dmesg_oom_invoked_python_01.log")
    assert events.height == 1 and of_kind(events, "oom_kill").height == 0
    row = events.row(0, named=True)
    assert (row["kind"], row["pid"], row["process"], row["n_lines"]) == ("oom_invoked", 5522, "python", 13)
    assert row["boot_seconds"] == 2672.189925
    attrs = json.loads(row["attrs"])
    assert (attrs["gfp_mask"], attrs["order"], attrs["oom_score_adj"], attrs["mems_allowed"]) == ("0xd0", 0, -998, "0")
    assert attrs["cpuset"] == "b1cfb82028711b33d813aaa9a555122a1e90568375d3f47f8312cc61ce35776b" == row["container_id"]
    assert attrs["kernel"] == "3.10.0-514.6.1.el7.x86_64" and attrs["hardware"].startswith("Xen HVM domU")


def test_journalctl_oom_invoked_comm_with_space_and_slash() -> None:
    events = _events("journalctl_k_oom_memcg_invoked_01.log")
    assert events.height == 1
    row = events.row(0, named=True)
    assert (row["kind"], row["pid"], row["process"], row["host"], row["n_lines"]) == ("oom_invoked", 10612, "CPU 2/KVM", "hv", 20)
    assert (row["ts"], row["ts_quality"]) == (_utc(2026, 6, 23, 10, 10, 34), "year_from_mtime")
    attrs = json.loads(row["attrs"])
    assert (attrs["gfp_mask"], attrs["oom_score_adj"], attrs["memcg_oom"]) == ("0xcc0(GFP_KERNEL)", 872, True)
    assert attrs["kernel"] == "5.3.18-150300.59.63-default"
    assert _events("journalctl_k_oom_memcg_invoked_01.log", year=2022)["ts"][0] == _utc(2022, 6, 23, 10, 10, 34)


def test_kern_log_four_memcg_kills_and_three_reapers() -> None:
    events = _events("kern_log_oom_cgroup_01.log")
    kills = of_kind(events, "oom_kill")
    assert set(events["host"]) == {"ubuntu-s-1vcpu-2gb-ams3-01"}
    assert kills["pid"].to_list() == [15617, 15674, 15623, 15694] and set(kills["process"]) == {"python3"}
    assert set(kills["rss_bytes"]) == {4292 * KI}
    assert [a["file_rss_kb"] for a in attrs_of(kills)] == [3428, 3424, 3420, 3440]
    assert {a["total_vm_kb"] for a in attrs_of(kills)} == {11892} and {a["shmem_rss_kb"] for a in attrs_of(kills)} == {0}
    assert kills["boot_seconds"].to_list() == [514.682838, 514.686269, 514.707378, 514.715469]
    assert set(kills["ts"]) == {_utc(2026, 5, 15, 23, 9, 27)}
    reapers = events.filter(pl.col("message").str.starts_with("oom_reaper"))
    assert reapers["pid"].to_list() == [15617, 15674, 15623]


def test_kern_log_old_kill_process_or_sacrifice_child_is_the_kill() -> None:
    events = _events("kern_log_oom_old_sacrifice_01.log")
    row = events.row(0, named=True)
    assert (row["kind"], row["pid"], row["process"], row["boot_seconds"]) == ("oom_kill", 31490, "corerun", 259563.476003)
    assert json.loads(row["attrs"]) == {"selected": True, "oom_score": 897}
    assert row["ts"] == _utc(2026, 3, 7, 11, 54, 10)


def test_3x_kill_of_a_sacrificed_child_is_one_kill_of_the_child() -> None:
    events = _events("dmesg_T_oom_sacrifice_child_el7_01.log")
    kill = of_kind(events, "oom_kill")
    assert (kill.height, kill["pid"][0], kill["rss_bytes"][0]) == (1, 28438, 466160 * KI)
    selection = events.filter(pl.col("message").str.contains("sacrifice child")).row(0, named=True)
    assert (selection["kind"], selection["pid"], json.loads(selection["attrs"])["selected"]) == ("log", 24572, True)


@pytest.mark.parametrize(("name", "pids"), [
    ("kern_log_oom_kill_uid_comma_el6_01.log", [3679]),
    ("kern_log_oom_memcg_uid_after_name_01.log", [42452, 42453, 42474, 42471, 42468]),
])
def test_rhel_6_and_7_kill_lines_give_the_victim_and_its_uid(name: str, pids: list[int]) -> None:
    kills = of_kind(_events(name), "oom_kill")
    assert kills["pid"].to_list() == pids
    assert [attrs["uid"] for attrs in attrs_of(kills)] == [0] * len(pids)


def test_old_driver_fallen_off_the_bus_line_names_its_bus() -> None:
    lost = _events("dmesg_fallen_off_bus_old_wording_01.log").filter(pl.col("message").str.contains("fallen off the bus"))
    assert lost["pci_bus"].to_list() == ["0000:01:00.0"] * 2
    assert [attrs.get("fallen_off_bus") for attrs in attrs_of(lost)] == [True, True]


# --- hand-made fixtures -------------------------------------------------------------------


def test_6x_memcg_oom_block_then_ecc_and_fallen_off_bus() -> None:
    events = _events("dmesg_oom_6x_xid_01.log")
    invoked = of_kind(events, "oom_invoked").row(0, named=True)
    assert (invoked["pid"], invoked["process"], invoked["n_lines"], invoked["mem_used_bytes"]) == (48213, "python3", 39, 32 * KI**3)
    assert json.loads(invoked["attrs"])["kernel"] == "6.12.9-200.fc41.x86_64"
    kill = of_kind(events, "oom_kill").row(0, named=True)
    assert (kill["pid"], kill["rss_bytes"], kill["mem_total_bytes"]) == (48213, 33478164 * KI, 32 * KI**3)
    assert kill["pod_uid"] == "3f1c9a52-8d1e-4b7a-9c3e-2f5d6a7b8c9d"
    assert kill["container_id"] == "7b41c2e9d0f38a5561c4e2b7a9d03f18e6c5b4a3928170f6e5d4c3b2a1908f7e"
    assert json.loads(kill["attrs"])["memcg_failcnt"] == 1843
    assert of_kind(events, "oom_kill").height == 1
    tasks = attrs_of(events.filter(pl.col("attrs").str.contains('"task_table":true')))
    assert [t["rss_anon_pages"] for t in tasks] == [0, 8369541]
    xids = of_kind(events, "xid")
    assert xids["xid"].to_list() == [48, 94, 63, 154, 79]
    assert xids["severity"].to_list() == ["critical", "error", "notice", "critical", "critical"]
    assert [a["xid_resolution"] for a in attrs_of(xids)] == ["WORKFLOW_XID_48", "RESTART_APP", "IGNORE", "XID_154", "RESTART_BM"]
    assert attrs_of(xids)[3]["xid_recovery_action"] == "GPU Reset Required"
    assert xids["gpu_uuid"].to_list() == ["GPU-5c1e0f4e-7a2b-4c3d-9e8f-0a1b2c3d4e5f"] * 4 + ["GPU-9d2f4b61-3e8a-4f0c-b5d7-1c2e3f405162"]
    fallen = events.filter(pl.col("attrs").str.contains('"fallen_off_bus":true')).row(0, named=True)
    assert (fallen["pci_bus"], fallen["gpu_uuid"], fallen["kind"]) == ("0000:86:00.0", "GPU-9d2f4b61-3e8a-4f0c-b5d7-1c2e3f405162", "log")
    assert events.row(-1, named=True)["n_lines"] == 3  # the crash-dump notice with its two continuation lines


def test_dmesg_iso_time_format_keeps_the_offset() -> None:
    events = _events("dmesg_iso_xid_48_01.log")
    assert set(events["format"]) == {"dmesg_iso"} and set(events["ts_quality"]) == {"exact"}
    assert events["ts"][0] == _utc(2025, 2, 11, 8, 14, 2, 118412)
    assert events["ts_raw"][0] == "2025-02-11T09:14:02,118412+01:00"
    xids = of_kind(events, "xid")
    assert xids["xid"].to_list() == [48, 64, 45, 74]
    assert set(xids["gpu_uuid"]) == {"GPU-0f7e3b2a-91c4-4d5e-8a6b-7c8d9e0f1a2b"}
    assert json.loads(events["attrs"][1]) == {"nvidia_driver": "550.127.05"}


def test_journal_json_kernel_transport() -> None:
    events = _events("journalctl_k_json_01.log")
    assert set(events["host"]) == {"gpu-node-07"} and set(events["format"]) == {"journal_json"}
    xid = of_kind(events, "xid").row(0, named=True)
    assert (xid["xid"], xid["pid"], xid["process"], xid["ts"]) == (79, 0, "swapper/0", _utc(2024, 6, 10, 12, 42, 5, 118239))
    assert xid["gpu_uuid"] == "GPU-5c1e0f4e-7a2b-4c3d-9e8f-0a1b2c3d4e5f"
    assert events["severity"][0] == "info"  # PRIORITY=6 on a plain NVRM line
    invoked = of_kind(events, "oom_invoked").row(0, named=True)
    assert (invoked["pid"], invoked["process"], invoked["n_lines"], invoked["mem_used_bytes"]) == (77310, "pt_main_thread", 5, 64 * KI**3)
    kill = of_kind(events, "oom_kill").row(0, named=True)
    assert (kill["pid"], kill["rss_bytes"], kill["pod_uid"]) == (77310, 66912344 * KI, "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d")
    assert kill["container_id"] == "5f0c2b7e9a3d4c1b8e6f7a2d9c0b3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d"


def test_journal_short_monotonic_with_boot_header() -> None:
    events = _events("journalctl_k_monotonic_01.log")
    assert events["line"][0] == 2  # the "-- Boot … --" line is skipped as a header
    assert set(events["host"]) == {"gpu-node-03"} and set(events["format"]) == {"journal_monotonic"}
    assert of_kind(events, "xid")["xid"].to_list() == [119, 120]
    assert set(of_kind(events, "xid")["gpu_uuid"]) == {"GPU-2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901"}
    assert events["message"][0].startswith("Linux version 6.8.0-49-generic")
    lines = lines_frame(_text("journalctl_k_monotonic_01.log"))
    assert kernel.parse(lines, ParseContext(file="m")).skipped == {"header": 1}


def test_journal_short_iso_and_precise() -> None:
    events = _events("journalctl_k_short_iso_01.log")
    assert events["kind"].to_list() == ["oom_kill", "log", "xid"]
    assert events["ts"].to_list() == [
        _utc(2024, 9, 3, 14, 21, 57), _utc(2024, 9, 3, 14, 21, 58, 104512), _utc(2024, 9, 3, 14, 22, 9, 881230)]
    kill = events.row(0, named=True)
    assert (kill["pid"], kill["rss_bytes"], json.loads(kill["attrs"])["uid"]) == (918273, 126483212 * KI, 1001)


def test_dmesg_decode_levels_give_severity() -> None:
    events = _events("dmesg_decode_x_01.log")
    assert events["severity"].to_list() == ["info", "error", "error", "notice"]
    assert events["boot_seconds"][0] == 412.331902 and events["message"][0].startswith("nvidia-uvm: Loaded")
    assert events["xid"][1] == 31 and events["pid"][1] == 60817


# --- format details -----------------------------------------------------------------------

POD = "/kubepods/burstable/pod5d3e7a10-4b2c-11e9-8f5a-0a1b2c3d4e5f"
CID = "9f2c1e7d5b3a4c6e8d0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"
OLD_MEMCG_BLOCK = f"""\
[1234567.123456] java invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), order=0, oom_score_adj=999
[1234567.123470] java cpuset={CID} mems_allowed=0
[1234567.123480] CPU: 3 PID: 20117 Comm: java Not tainted 4.15.0-1044-aws #46-Ubuntu
[1234567.123482] Hardware name: Amazon EC2 m5.2xlarge/, BIOS 1.0 10/16/2017
[1234567.123483] Call Trace:
[1234567.123490]  dump_stack+0x63/0x8b
[1234567.123507]  mem_cgroup_out_of_memory+0x4b/0x80
[1234567.123522] Task in {POD}/{CID} killed as a result of limit of {POD}
[1234567.123530] memory: usage 2097152kB, limit 2097152kB, failcnt 1432
[1234567.123532] memory+swap: usage 0kB, limit 9007199254740988kB, failcnt 0
[1234567.123560] [ pid ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name
[1234567.123600] [20101]     0 20101     1023        4    45056        0          -998 pause
[1234567.123610] [20117]  1000 20117  1290111   521788  4521984        0           999 java
[1234567.123650] Memory cgroup out of memory: Kill process 20117 (java) score 1996 or sacrifice child
[1234567.124100] Killed process 20117 (java) total-vm:5160444kB, anon-rss:2075124kB, file-rss:12028kB, shmem-rss:0kB
[1234567.140022] oom_reaper: reaped process 20117 (java), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
"""


def test_4x_block_selection_line_is_not_a_second_kill_and_task_in_gives_the_cgroup() -> None:
    events = _parse(OLD_MEMCG_BLOCK)
    assert events["kind"].to_list() == ["oom_invoked", "log", "log", "log", "oom_kill", "log"]
    invoked, kill, selection = events.row(0, named=True), events.row(4, named=True), events.row(3, named=True)
    assert (invoked["n_lines"], invoked["pid"], invoked["mem_used_bytes"]) == (11, 20117, 2 * KI**3)
    assert invoked["container_id"] == CID
    assert json.loads(invoked["attrs"])["nodemask"] == "(null)"
    assert (kill["pid"], kill["rss_bytes"], kill["mem_used_bytes"]) == (20117, 2075124 * KI, 2 * KI**3)
    assert kill["pod_uid"] == "5d3e7a10-4b2c-11e9-8f5a-0a1b2c3d4e5f"
    assert (kill["container_id"], kill["cgroup"], json.loads(kill["attrs"])["oom_memcg"]) == (CID, f"{POD}/{CID}", POD)
    assert {"selected": True, "oom_score": 1996}.items() <= json.loads(selection["attrs"]).items()
    assert selection["cgroup"] == kill["cgroup"]


def test_unlimited_memcg_limit_is_not_a_size() -> None:
    events = _parse("[  1.000000] memory: usage 1024kB, limit 9007199254740988kB, failcnt 0\n")
    row = events.row(0, named=True)
    assert (row["mem_used_bytes"], row["mem_total_bytes"]) == (1024 * KI, None)
    assert json.loads(row["attrs"]) == {"memcg_failcnt": 0, "memcg_unlimited": True}


def test_printk_level_prefix_and_bare_kernel_lines() -> None:
    events = _parse("<3>[   12.500000] nvme nvme0: I/O 7 QID 3 timeout, aborting\n<6>[   12.600000] eth0: link up\n")
    assert events["severity"].to_list() == ["error", "info"] and events["message"][1] == "eth0: link up"
    bare = _parse("kernel: [  514.682838] oom_reaper: reaped process 15617 (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB\n")
    row = bare.row(0, named=True)
    assert (row["boot_seconds"], row["ts"], row["ts_quality"], row["pid"]) == (514.682838, None, "boot_relative", 15617)


def test_journal_short_precise_and_empty_frames() -> None:
    events = _parse("Jun 23 10:10:34.512093 hv kernel: NVRM: Xid (PCI:0000:3b:00): 63, pid='<unknown>', name=<unknown>, Row Remapper\n",
                    year=2024)
    assert (events["ts"][0], events["host"][0], events["xid"][0]) == (_utc(2024, 6, 23, 10, 10, 34, 512093), "hv", 63)
    empty = _syslog.frame_text(lines_frame("Jun 23 10:10:34 hv kernel: x\n"), ParseContext(file="e")).clear()
    assert kernel.kernel_rules(empty, ParseContext(file="e")).height == 0


def test_untimed_lines_join_the_record_above_only_when_indented() -> None:
    events = _parse("[    5.000000] first\n    more of first\nstray text\n")
    assert events["n_lines"].to_list() == [2, 1]
    assert events["message"].to_list() == ["first\n    more of first", "stray text"]
    assert events["boot_seconds"].to_list() == [5.0, 5.0]


NOISE = "e1000e: eth0 NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx"


def test_noise_inside_an_oom_block_ends_the_header_dump_but_not_the_block() -> None:
    # Rule lines and the noise around them take different paths; a noise line still ends the
    # header's dump run, and the block's memcg usage still reaches its kill across noise.
    events = _parse(
        "[  100.000001] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
        "[  100.000002] CPU: 3 PID: 4242 Comm: python3 Not tainted 5.15.0-91-generic #101-Ubuntu\n"
        f"[  100.000003] {NOISE}\n"
        "[  100.000004] Call Trace:\n"
        "[  100.000005] memory: usage 1048576kB, limit 1048576kB, failcnt 12\n"
        f"[  100.000006] {NOISE}\n"
        "[  100.000007] Memory cgroup out of memory: Killed process 4242 (python3) total-vm:2000000kB, "
        "anon-rss:1000000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:2100kB oom_score_adj:0\n"
    )
    assert events.select("line", "n_lines", "kind").rows() == [
        (1, 2, "oom_invoked"), (3, 1, "log"), (4, 1, "log"), (5, 1, "log"), (6, 1, "log"), (7, 1, "oom_kill"),
    ]
    kill = of_kind(events, "oom_kill").row(0, named=True)
    assert (kill["pid"], kill["mem_used_bytes"], kill["mem_total_bytes"]) == (4242, 1024 * 1024 * KI, 1024 * 1024 * KI)


@pytest.mark.parametrize(("noise_lines", "bus"), [(1, "0000:3b:00.0"), (2, None)])
def test_fallen_off_the_bus_takes_the_bus_from_the_two_lines_before_noise_included(noise_lines: int, bus: str | None) -> None:
    text = "[    5.000000] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0x56:1474)\n"
    text += "".join(f"[    5.00000{i + 1}] {NOISE}\n" for i in range(noise_lines))
    text += "[    6.000000] NVRM: GPU has fallen off the bus.\n"
    fallen = _parse(text).filter(pl.col("message").str.contains("fallen off the bus"))
    assert fallen.select("severity", "pci_bus").row(0) == ("critical", bus)


def test_xid_catalog_covers_the_codes_fleet_operators_meet() -> None:
    required = {8, 13, 31, 32, 38, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120, 121, 140, 143,
                *range(144, 151), 154}
    catalog = _xid.CATALOG
    assert required <= set(catalog["xid"]) and catalog["xid"].is_unique().all()
    assert set(catalog["severity"]) <= set(schema.SEVERITIES)
    assert catalog.filter(pl.col("xid").is_in(list(required)))["resolution"].null_count() == 0
    rows = {row["xid"]: row for row in catalog.iter_rows(named=True)}
    assert (rows[79]["mnemonic"], rows[79]["resolution"], rows[79]["severity"]) == (
        "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "RESTART_BM", "critical")
    assert (rows[13]["resolution"], rows[63]["resolution"], rows[48]["mnemonic"]) == ("RESTART_APP", "IGNORE", "ROBUST_CHANNEL_GPU_ECC_DBE")


def test_unknown_xid_and_mig_instance() -> None:
    events = _parse("[  9.000000] NVRM: Xid (PCI:0000:01:00 GPU-I:05): 999, pid=7194, Contained: CE User Channel (0x9). RST: No\n")
    row = events.row(0, named=True)
    assert (row["kind"], row["xid"], row["pid"], row["pci_bus"], row["severity"]) == ("xid", 999, 7194, "0000:01:00", "error")
    assert json.loads(row["attrs"]) == {"gpu_instance": "GPU-I:05"}


# --- detection ------------------------------------------------------------------------------

OTHERS = sorted(p for p in DATA.glob("*/*") if p.is_file() and p.parent.name not in ("kernel", "real_logs", "syslog"))  # mixed syslog files hold kernel lines too
NOT_KERNEL = [
    "I0523 12:00:00.123456    1234 eviction_manager.go:349] \"Eviction manager: attempting to reclaim\" resourceName=\"memory\"",
    "Jun 23 10:10:34 node-1 kubelet[1234]: I0623 10:10:34.000000    1234 kubelet.go:2000] \"SyncLoop ADD\"",
    "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh",
    "| NVIDIA-SMI 535.129.03             Driver Version: 535.129.03   CUDA Version: 12.2     |",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB",
    "[2025-03-10T15:07:20Z] INFO 03-10 08:07:20 model_runner.py:1115] Loading model weights took 0.2389 GB",
    '{"__REALTIME_TIMESTAMP":"1718023325118230","_TRANSPORT":"journal","SYSLOG_IDENTIFIER":"kubelet","MESSAGE":"ok"}',
    "    at java.lang.Thread.run(Thread.java:748)",
]


@pytest.mark.parametrize("path", sorted(FOLDER.iterdir()), ids=lambda p: p.name)
def test_every_kernel_fixture_is_sniffed_as_kernel(path: Path) -> None:
    source, score = sniffed(path)
    assert source is not None and source.name == "kernel" and score > 0.5


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_sources_fixtures_are_not_kernel(path: Path) -> None:
    source, _ = sniffed(path)
    assert source is None or source.name != "kernel"


@pytest.mark.parametrize("line", NOT_KERNEL)
def test_other_formats_score_zero(line: str) -> None:
    assert kernel.sniff([line]) == 0.0


# --- accounting and robustness --------------------------------------------------------------

REAL_LINES = [line for path in sorted(FOLDER.iterdir()) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
CONTEXTS = [ParseContext(file="t"), ParseContext(file="t", year=2024, boot_time=_utc(2024, 1, 1)),
            ParseContext(file="t", reference_time=FIXED_MTIME, tz="Asia/Kolkata")]



def test_events_conform_to_the_schema() -> None:
    events = _events("dmesg_oom_6x_xid_01.log")
    schema.validate(events, schema.EVENT_SCHEMA, "kernel events")
    assert set(events["kind"]) <= set(schema.KINDS) and set(events["severity"].drop_nulls()) <= set(schema.SEVERITIES)
    assert set(events["ts_quality"]) <= set(schema.TS_QUALITIES) and set(events["source"]) == {"kernel"}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400), st.sampled_from(CONTEXTS))
def test_arbitrary_text_never_raises_and_is_accounted(text: str, ctx: ParseContext) -> None:
    covered, total = _accounted(text, ctx)
    assert covered == total


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(REAL_LINES), st.integers(0, 300)), min_size=1, max_size=25),
    st.sampled_from(["", "[99999999999999999999.5] ", "kernel: ", "    ", "{", "-- Boot 0 --"]),
    st.sampled_from(CONTEXTS),
)
def test_spliced_and_truncated_real_lines_are_accounted(pieces: list[tuple[str, int]], prefix: str, ctx: ParseContext) -> None:
    text = "\n".join(prefix + line[:cut] if cut % 3 else line for line, cut in pieces)
    covered, total = _accounted(text, ctx)
    assert covered == total


def test_summary_then_selection_then_the_kill_of_a_sacrificed_child_is_one_kill_in_the_summary_s_cgroup() -> None:
    """/var/log/messages of a 3.10 (RHEL 7) kernel with the backported oom-kill: line (a public blog's quote)."""
    memcg = "/kubepods/burstable/pod6c4333b3-a663-11ea-b39f-6c92bf85beda"
    cid = "bbd5e4b5f9c13666dd0ec7ff7afb2c4c2b0ede40a4adf1de43cc31c606f283f5"
    text = (
        f"Jun 17 03:18:17 host-xx kernel: oom-kill:,cpuset={cid},mems_allowed=0-1,oom_memcg={memcg},"
        f"task_memcg={memcg}/{cid},task=runc:[2:INIT],pid=12800,uid=0\n"
        "Jun 17 03:18:17 host-xx kernel: Memory cgroup out of memory: Kill process 12800 (runc:[2:INIT]) score 997 or sacrifice child\n"
        "Jun 17 03:18:17 host-xx kernel: Killed process 12788 (runc:[2:INIT]) total-vm:600736kB, anon-rss:3296kB, file-rss:276kB, shmem-rss:1012kB\n"
    )
    kill = of_kind(_parse(text, year=2020), "oom_kill")
    assert kill.select("line", "pid", "cgroup", "container_id").rows() == [(3, 12788, f"{memcg}/{cid}", cid)]
    assert kill["pod_uid"][0] == "6c4333b3-a663-11ea-b39f-6c92bf85beda" and json.loads(kill["attrs"][0])["uid"] == 0


def test_a_few_nvrm_lines_in_an_application_log_leave_it_the_application_s() -> None:
    app = "".join(f"2024-01-01 00:00:{n:02d},123 - trainer - INFO - step {n}\n" for n in range(12))
    events = rca.parse_text(app + "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n" * 2, file="train.log")
    assert set(events["source"]) == {"pipeline"} and events["ts"].null_count() == 2


def test_printk_caller_after_the_stamp_is_cut_off_so_the_oom_block_is_read() -> None:
    events = _events("dmesg_printk_caller_oom_lkp_01.log")
    invoked = of_kind(events, "oom_invoked")
    assert invoked.select("pid", "process", "boot_seconds").row(0) == (7791, "trinity-c4", 218.519632)
    assert attrs_of(invoked)[0]["kernel"] == "6.6.0-rc2-00008-g376fdc4552f1"
    kill = of_kind(events, "oom_kill")
    assert kill.select("pid", "process", "rss_bytes").rows() == [(4413, "trinity-group-0", 128 * KI)]
    assert attrs_of(kill)[0]["constraint"] == "CONSTRAINT_NONE"
    assert not events["message"].str.contains(r"^\[ *T[0-9]+\]").any()
    # The same caller after a boot stamp inside a syslog envelope, and a CPU caller.
    text = (
        "Oct 10 03:00:01 node kernel: [  218.732135][ T7791] Out of memory: Killed process 4413 (trinity-group-0) "
        "total-vm:2548kB, anon-rss:128kB, file-rss:1536kB, shmem-rss:0kB, UID:0 pgtables:12kB oom_score_adj:1000\n"
        "<4>[  219.000001][    C3] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
        "<4>[  219.000002] [    T7791] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"  # util-linux dmesg
    )
    for line in text.splitlines():
        event = rca.parse_text(line + "\n", file="k.log", reference_time=FIXED_MTIME, format="kernel").row(0, named=True)
        assert event["kind"] in ("oom_kill", "xid") and event["message"].startswith(("Out of memory", "NVRM"))


def test_xid_bus_of_old_drivers_without_a_domain() -> None:
    xids = of_kind(_events("kern_log_xid_bus_without_domain_2007_01.log"), "xid")
    assert xids["xid"].to_list() == [16, 8, 16, 8]
    assert set(xids["pci_bus"]) == {"0001:00"}
    assert xids["boot_seconds"].to_list() == [930.977791, 932.97472, 938.965483, 940.962418]


def test_dmesg_reltime_minute_stamps_and_deltas_give_times_within_the_minute() -> None:
    text = (
        "[Dec 4 12:00] Memory cgroup out of memory: Killed process 63214 (uwsgi) total-vm:3149468kB, anon-rss:164992kB, "
        "file-rss:52176kB, shmem-rss:92kB, UID:0 pgtables:1372kB oom_score_adj:986\n"
        "[  +0.000123] oom_reaper: reaped process 63214 (uwsgi), now anon-rss:0kB, file-rss:0kB, shmem-rss:92kB\n"
        "[  +5.100000] NVRM: Xid (PCI:0000:cb:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
        "[Dec13 12:01] NVRM: Xid (PCI:0000:cb:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)\n"
    )
    events = rca.parse_text(text, file="dmesg_e.log", year=2025)
    assert events["source"].unique().to_list() == ["kernel"]
    assert events["kind"].to_list() == ["oom_kill", "log", "xid", "xid"]
    start = datetime(2025, 12, 4, 12, 0, tzinfo=UTC)
    assert events["ts"].to_list() == [start, start + timedelta(microseconds=123), start + timedelta(seconds=5.100123),
                                      datetime(2025, 12, 13, 12, 1, tzinfo=UTC)]
    assert set(events["ts_quality"]) == {"year_inferred"} and set(events["format"]) == {"dmesg_reltime"}
    assert events["ts_raw"].to_list() == ["Dec 4 12:00", "+0.000123", "+5.100000", "Dec13 12:01"]  # as written


def test_xid_code_is_read_whatever_the_parenthesis_holds() -> None:
    xids = of_kind(_events("journalctl_k_xid145_137_redacted_bus_01.log"), "xid")
    assert xids["xid"].to_list() == [145, 137] and xids["pci_bus"].null_count() == 2
    # The driver's MIG attribution (open-gpu-kernel-modules' Xid print: "PCI:%04x:%02x:%02x GPU-I:%02u GPU-CI:%02u").
    line = "[ 1234.500000] NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:02): 13, pid=9, name=python3, Graphics Exception\n"
    xid = of_kind(rca.parse_text(line, file="dmesg"), "xid")
    assert xid.select("xid", "pci_bus", "pid", "process").row(0) == (13, "0000:3b:00", 9, "python3")
    assert {k: attrs_of(xid)[0][k] for k in ("gpu_instance", "compute_instance")} == {"gpu_instance": "GPU-I:01", "compute_instance": "GPU-CI:02"}


def test_lines_padded_with_blanks_still_make_one_oom_header() -> None:
    invoked = _events("dmesg_oom_invoked_trailing_blanks_01.log")
    assert invoked.select("kind", "n_lines", "pid", "process").rows() == [("oom_invoked", 5, 4289, "cp")]
    assert invoked["container_id"][0] == "ec391272ec599d14b9d3ad22e7b3d37b4e3047eef9ea796e239861e0c209a763"
    assert attrs_of(invoked)[0]["hardware"] == "Google Google Compute Engine/Google Compute Engine, BIOS Google 01/01/2011"


def test_oom_killer_lines_without_any_stamp_are_a_kernel_file() -> None:
    events = _events("dmesg_bare_oom_lines_wsl_01.log")
    assert set(events["source"]) == {"kernel"} and events["ts"].null_count() == events.height
    kill = of_kind(events, "oom_kill")
    assert kill.select("pid", "process", "cgroup", "rss_bytes").rows() == [(14078, "python", "/init.scope", 14282608 * KI)]
    assert attrs_of(kill)[0]["global_oom"] is True


def test_2_6_32_pid_comm_line_and_kill_or_a_child_selection() -> None:
    events = _events("kern_log_oom_2632_pid_comm_01.log")
    assert events.select("line", "kind", "pid", "process").rows() == [
        (1, "oom_invoked", 1517, "python"), (30, "log", 1257, "kdeinit4"), (31, "oom_kill", 1258, "klauncher"),
        (32, "oom_invoked", 1466, "kbluetooth"),
    ]
    assert events["n_lines"][0] == 29 and attrs_of(events)[0]["kernel"] == "2.6.32-22-generic"
    assert attrs_of(events)[1] == {"selected": True, "oom_score": 720377}


def test_an_oom_killer_without_a_victim_is_an_error() -> None:
    line = "[    4.923156] Out of memory and no killable processes...\n"  # quoted by Michal Hocko on the iommu list
    assert rca.parse_text(line, file="dmesg").select("kind", "severity").row(0) == ("log", "error")


# --- real samples: the kernel's other multi-line reports, NVSwitch and hardware errors ------


def test_sxid_report_lines_join_their_head_with_the_switch_bus_and_fatality() -> None:
    events = _events("dmesg_sxid_nvswitch_nonfatal_01.log")
    sxids = events.filter(pl.col("message").str.contains("SXid", literal=True))
    assert sxids["line"].to_list() == [5, 8] and sxids["n_lines"].to_list() == [3, 2]
    assert sxids["kind"].to_list() == ["log", "log"] and sxids["xid"].to_list() == [None, None]  # not a GPU Xid
    assert sxids["pci_bus"].to_list() == ["0000:02:00.0"] * 2
    assert sxids["severity"].to_list() == ["warning", "warning"]  # "Non-fatal"
    assert [a["sxid"] for a in attrs_of(sxids)] == [22013, 22013]
    fatal = _parse("nvidia-nvswitch3: SXid (PCI:0000:c4:00.0): 12028, Fatal, Link 34 egress non-posted PRIV error\n")
    assert (fatal["severity"][0], fatal["pci_bus"][0]) == ("critical", "0000:c4:00.0")
    # gpud's dmesg scan (leptonai/gpud PR #338): `dmesg --decode --time-format iso`, a lone Data line keeps its level
    decoded = _parse(
        "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x000001c0, "
        "0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, 0x5a001100, 0x00000000, 0x00000000}\n"
    ).row(0, named=True)
    assert (decoded["severity"], decoded["pci_bus"], decoded["ts"]) == ("error", "0000:84:00.0", _utc(2025, 1, 25, 10, 34, 54, 859532))
    assert json.loads(decoded["attrs"])["sxid"] == 12028


def test_the_driver_s_indented_lines_join_the_xid_they_follow() -> None:
    events = _events("dmesg_xid120_gsp_riscv_dump_01.log")
    assert events.height == 2
    xid = of_kind(events, "xid").row(0, named=True)
    assert (xid["xid"], xid["n_lines"], xid["severity"], xid["pci_bus"]) == (120, 11, "critical", "0000:06:00")
    assert xid["gpu_uuid"] == "GPU-604d3abb-43d5-088f-f873-9dc453a081a5"
    assert json.loads(xid["attrs"])["xid_name"] == "GSP_ERROR"


def test_a_fatal_nvlink_xid_is_critical_a_nonfatal_one_keeps_the_catalog_s_severity() -> None:
    xids = of_kind(_events("dmesg_xid_nvlink5_fatal_bare_01.log"), "xid")
    assert xids["xid"].to_list() == [149, 149, 145, 144]
    assert xids["severity"].to_list() == ["critical", "critical", "error", "error"]
    assert xids["pci_bus"].to_list() == ["0019:01:00", "0000:00:00", "0018:01:00", "0000:01:00"]


def test_hung_task_report_is_one_error_of_the_blocked_task() -> None:
    (hung,) = _events("dmesg_hung_task_nvidia_uvm_4x_01.log").iter_rows(named=True)
    assert (hung["pid"], hung["process"], hung["severity"], hung["n_lines"], hung["kind"]) == (5403, "nvc:[driver]", "error", 14, "log")
    assert json.loads(hung["attrs"])["blocked_seconds"] == 120
    assert hung["message"].endswith("uvm_gpu_retain_by_uuid+0x1e/0x40 [nvidia_uvm]")
    # 6.x: "task:NAME state:D … pid:…" and <TASK> frames (ROCm/amdgpu issue #150)
    six = _parse(
        "[279123.179003] INFO: task ipython3:827204 blocked for more than 120 seconds.\n"
        "[279123.180183]       Tainted: G        W  OE      6.2.0-35-generic #35~22.04.1-Ubuntu\n"
        '[279123.181403] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.\n'
        "[279123.182612] task:ipython3        state:D stack:0     pid:827204 ppid:742680 flags:0x00004002\n"
        "[279123.182617] Call Trace:\n[279123.182620]  <TASK>\n"
    )
    assert (six.height, six["n_lines"][0], six["pid"][0], six["process"][0]) == (1, 6, 827204, "ipython3")


def test_pcie_aer_reports_group_and_take_their_severity_and_the_gpu_s_bus() -> None:
    events = _events("dmesg_reltime_aer_fatal_nvidia_01.log")
    bus_error = events.filter(pl.col("message").str.contains("PCIe Bus Error", literal=True)).row(0, named=True)
    assert (bus_error["n_lines"], bus_error["severity"]) == (4, "critical")
    assert events.filter(pl.col("message").str.starts_with("nvidia "))["pci_bus"].to_list() == ["0000:03:00.0"] * 2
    received = events.filter(pl.col("message").str.contains("error received", literal=True))
    assert received["severity"].to_list() == ["critical"]
    surprise = _events("dmesg_aer_surprise_down_xid79_01.log")
    heads = surprise.filter(pl.col("message").str.contains("AER: |PCIe Bus Error"))
    assert heads["severity"].to_list() == ["warning", "warning", "critical", "critical"]  # Corrected, then Uncorrected (Fatal)
    assert heads["n_lines"].to_list() == [1, 3, 1, 3]
    xid = of_kind(surprise, "xid").row(0, named=True)
    assert (xid["xid"], xid["pci_bus"], xid["gpu_uuid"]) == (79, "0000:02:00", "GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df")


def test_edac_and_machine_check_reports_group_with_corrected_warning_and_uncorrected_critical() -> None:
    (ce,) = _events("dmesg_T_edac_sbridge_ce_01.log").iter_rows(named=True)
    assert (ce["n_lines"], ce["severity"], ce["ts"]) == (7, "warning", _utc(2022, 10, 3, 13, 52, 42))
    # ovro-lwa/lwa-issues issue #117 (`dmesg -wH`): the machine check's status has UC (bit 61) set
    ue = _parse(
        "[  +0.000127] mce: [Hardware Error]: Machine check events logged\n"
        "[  +0.000013] EDAC skx MC3: HANDLING MCE MEMORY ERROR\n"
        "[  +0.000001] EDAC skx MC3: CPU 10: Machine Check Event: 0 Bank 8: fc00010001010092\n"
        "[  +0.000001] EDAC skx MC3: TSC e6ee62e90fe6 \n"
        "[  +0.000001] EDAC skx MC3: ADDR b757589dc0 \n"
    )
    assert ue["n_lines"].to_list() == [1, 4] and ue["severity"].to_list() == ["warning", "critical"]
    # andikleen/mcelog issue #70: a machine check logged at boot, with UC and PCC set
    mce = _parse(
        "[    0.064265] mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 4: a600000000020408\n"
        "[    0.064270] mce: [Hardware Error]: TSC 0 ADDR fef4c9e0 \n"
        "[    0.064277] mce: [Hardware Error]: PROCESSOR 0:706a1 TIME 1537152664 SOCKET 0 APIC 0 microcode 28\n"
        "[    0.064300] mce: [Hardware Error]: CPU 2: Machine Check: 0 Bank 5: 8c00004000010151\n"
    )
    assert mce["n_lines"].to_list() == [3, 1] and mce["severity"].to_list() == ["critical", "warning"]


def test_page_allocation_failure_takes_its_dump_like_an_oom_header() -> None:
    (failure,) = _events("dmesg_T_page_allocation_failure_01.log").iter_rows(named=True)
    assert (failure["pid"], failure["process"], failure["n_lines"], failure["severity"]) == (1333536, "kworker/u16:3", 10, "warning")
    attrs = json.loads(failure["attrs"])
    assert (attrs["order"], attrs["gfp_mask"]) == (4, "0x40dc0(GFP_KERNEL|__GFP_COMP|__GFP_ZERO)")
    # RHEL 7 (Seagate/cortx-prvsnr issue #5465): "Tainted: P  OE  ------------   3.10.0-…" still names the kernel
    el7 = _parse(
        "swapper/21: page allocation failure: order:0, mode:0x20\n"
        "CPU: 21 PID: 0 Comm: swapper/21 Kdump: loaded Tainted: P           OE  ------------   3.10.0-1062.el7.x86_64 #1\n"
    ).row(0, named=True)
    assert (el7["pid"], el7["n_lines"], json.loads(el7["attrs"])["kernel"]) == (0, 2, "3.10.0-1062.el7.x86_64")


def test_user_process_segfaults_and_soft_lockups_name_the_task() -> None:
    segv = _events("kern_log_segfault_null_ip_01.log")
    assert segv["pid"].to_list() == [21566, 21565] and segv["process"].to_list() == ["thp_memscale"] * 2
    assert segv["severity"].to_list() == ["error", "error"]
    assert [a["fault_in"] for a in attrs_of(segv)] == ["thp_memscale"] * 2
    with_code = _parse(
        "[   55.085869] ibus-x11[1526]: segfault at 0 ip 0000000000000000 sp 00007fff2e1401b8 error 14 likely on CPU 5 (core 2, socket 0)\n"
        "[   55.085877] Code: Unable to access opcode bytes at 0xffffffffffffffd6.\n"
    )
    assert (with_code.height, with_code["pid"][0], with_code["n_lines"][0]) == (1, 1526, 2)
    lockup = _parse(
        "[Sat Apr  3 05:23:42 2021] watchdog: BUG: soft lockup - CPU#7 stuck for 23s! [pytest:25222]\n"
        "[Sat Apr  3 05:23:42 2021] Modules linked in: xt_recent bluetooth nvidia_uvm(OE)\n"
    ).row(0, named=True)
    assert (lockup["pid"], lockup["process"], lockup["severity"], lockup["n_lines"]) == (25222, "pytest", "critical", 2)
    assert json.loads(lockup["attrs"])["stuck_seconds"] == 23
    trap = _parse("[ 1234.5] traps: python3[4242] general protection fault ip:7f00 sp:7ffd error:0 in libc.so.6[7f00+1000]\n")
    assert (trap["pid"][0], trap["process"][0], trap["severity"][0]) == (4242, "python3", "error")


def test_talosctl_dmesg_node_level_and_utc_time() -> None:
    events = _events("dmesg_talos_nvrm_kflcn_trace_01.log")
    assert set(events["host"]) == {"192.168.11.119"} and set(events["format"]) == {"dmesg_iso"}
    assert events["ts"].to_list() == [_utc(2026, 4, 22, 21, 27, 51, us) for us in (291660, 291666, 291670)]
    assert set(events["severity"]) == {"warning"} and set(events["ts_quality"]) == {"exact"}
    assert events["message"][0] == "NVRM: kflcnCoreDumpNondestructive_IMPL: TRACE: 08 = 0x0000000004d4b1a0"
    # a Talos troubleshooting note (public-code index): the OOM killer's line at level err
    kill = _parse(
        "172.25.100.11: kern:     err: [2025-04-22T10:37:36.727637155Z]: Out of memory: Killed process 2735 (kube-apiserver) "
        "total-vm:3112352kB, anon-rss:1505564kB, file-rss:104kB, shmem-rss:0kB, UID:65534 pgtables:3800kB oom_score_adj:827\n"
    ).row(0, named=True)
    assert (kill["kind"], kill["pid"], kill["process"], kill["host"]) == ("oom_kill", 2735, "kube-apiserver", "172.25.100.11")
    assert (kill["ts"], kill["rss_bytes"]) == (_utc(2025, 4, 22, 10, 37, 36, 727637), 1505564 * KI)
    # Talos's docs: kmsg dictionary lines (" SUBSYSTEM=…") continue the line above; an 8-digit fraction
    continued = _parse(
        "10.100.52.1: kern:    info: [2023-07-23T16:47:30.48512066Z]: thunderbolt 0-0:1.1: new retimer found, vendor=0x8087 device=0x15ee\n"
        " SUBSYSTEM=thunderbolt\n DEVICE=+thunderbolt:0-0:1.1\n"
    )
    assert (continued.height, continued["n_lines"][0], continued["ts"][0]) == (1, 3, _utc(2023, 7, 23, 16, 47, 30, 485120))


def test_frames_whose_indent_a_journal_copy_lost_stay_in_the_oom_header_s_dump() -> None:
    # containers/crun issue #1357 (EL9 5.14): the frames printed without their leading blank, RHEL's dashed taint flags;
    # the header line is the kernel's own wording (the post cut it), the rest verbatim
    text = "Nov 23 15:36:25 localhost kernel: stress invoked oom-killer: gfp_mask=0x1100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=666\n"
    text += (
        "Nov 23 15:36:25 localhost kernel: CPU: 0 PID: 5117 Comm: stress Kdump: loaded Tainted: G           OE    --------  ---  "
        "5.14.0-285.el9.x86_64 containers/crun#1\n"
        "Nov 23 15:36:25 localhost kernel: Call Trace:\nNov 23 15:36:25 localhost kernel: <TASK>\n"
        "Nov 23 15:36:25 localhost kernel: dump_stack_lvl+0x34/0x48\nNov 23 15:36:25 localhost kernel: ? __alloc_pages+0xe6/0x230\n"
        "Nov 23 15:36:25 localhost kernel: mem_cgroup_out_of_memory+0x13a/0x150\n"
    )
    (invoked,) = _parse(text, reference_time=FIXED_MTIME).iter_rows(named=True)
    assert (invoked["kind"], invoked["n_lines"], invoked["pid"], invoked["process"]) == ("oom_invoked", 7, 5117, "stress")
    attrs = json.loads(invoked["attrs"])
    assert (attrs["kernel"], attrs["memcg_oom"]) == ("5.14.0-285.el9.x86_64", True)


def test_a_ctime_stamp_without_its_year_takes_the_year_like_a_syslog_stamp() -> None:
    # a public GPU-node write-up (RTX A4000, public-code index) quoting `dmesg` with the year cut off the stamps
    events = _events_of(
        "[Sun Mar 29 19:20:37] NVRM: Xid (PCI:0000:5f:00): 79, GPU has fallen off the bus.\n"
        "[Sun Mar 29 19:20:37] NVRM: GPU 0000:5f:00.0: GPU has fallen off the bus.\n"
        "[Sun Mar 29 19:20:37] NVRM: Xid (PCI:0000:5f:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)\n"
    )
    assert set(events["source"]) == {"kernel"} and set(events["format"]) == {"dmesg_ctime"}
    assert set(events["ts"]) == {_utc(2026, 3, 29, 19, 20, 37)} and set(events["ts_quality"]) == {"year_from_mtime"}
    xids = of_kind(events, "xid")
    assert xids["xid"].to_list() == [79, 154] and xids["severity"].to_list() == ["critical", "critical"]
    assert attrs_of(xids)[1]["xid_recovery_action"] == "GPU Reset Required"


def test_interleaved_sxid_reports_of_several_switches_are_not_merged() -> None:
    events = _events("dmesg_xid79_sxid20034_interleaved_switches_01.log")
    assert events.height == 13 and set(events["n_lines"]) == {1}
    sxids = events.filter(pl.col("message").str.contains("SXid", literal=True))
    fatal = sxids.filter(pl.col("message").str.contains("Fatal", literal=True))
    assert fatal["pci_bus"].to_list() == ["0000:06:00.0", "0000:05:00.0", "0000:07:00.0", "0000:05:00.0"]
    assert set(fatal["severity"]) == {"critical"} and set(fatal["kind"]) == {"log"}
    assert {a["sxid"] for a in attrs_of(sxids)} == {20034}
    xid = of_kind(events, "xid").row(0, named=True)
    assert (xid["xid"], xid["pid"], xid["process"], xid["gpu_uuid"]) == (79, None, None, "GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b")


def test_apei_edac_and_rcu_stall_wordings_give_their_severity() -> None:
    events = _parse(
        "[ 1234.000002] {1}[Hardware Error]: event severity: corrected\n"
        "[ 1234.000003] EDAC MC0: 1 CE Memory read error on CPU_SrcID#0_MC#0_Chan#0_DIMM#0 (channel:0 slot:0 page:0x1 offset:0x0 grain:32)\n"
        "[ 1234.000004] {2}[Hardware Error]: event severity: fatal\n"
        "[ 1234.000005] EDAC MC1: 1 UE Memory read error on CPU_SrcID#1_MC#1_Chan#2_DIMM#0 (channel:2 slot:0 page:0xb757589 offset:0xdc0)\n"
        "[ 1234.000006] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:\n"
    )
    assert events["severity"].to_list() == ["warning", "warning", "critical", "critical", "error"]


# A Snakemake log run under Slurm (snakemake/snakemake-executor-plugin-slurm#371, selten, Nov 2025): a bare
# ctime stamp over each job, then the job's lines, and Slurm's OOM report between them.
_SNAKEMAKE_SLURM_OOM = (
    "Provided cores: 1 (use --cores to define parallelism)\n"
    "Rules claiming more threads will be scaled down.\n"
    "Select jobs to execute...\n"
    "Execute 1 jobs...\n"
    "\n"
    "[Wed Nov 12 11:40:15 2025]\n"
    "localrule use_ram:\n"
    "    input: /dev/zero\n"
    "    jobid: 0\n"
    "    reason: Rules with a run or shell declaration but no output are always executed.\n"
    "    resources: mem_mb=5000, mem_mib=4769, disk_mb=1000, disk_mib=954, tmpdir=/tmp, slurm_account=default,"
    " slurm_partition=debug, cores=1, partition=debug, nodes=1\n"
    "slurmstepd: error: Detected 2 oom_kill events in StepId=JOBID.4. Some of the step tasks have been OOM Killed.\n"
    "srun: error: NODE: task 0: Out Of Memory\n"
    "[Wed Nov 12 11:40:17 2025]\n"
    "Error in rule use_ram:\n"
    "    message: None\n"
    "    jobid: 0\n"
    "    input: /dev/zero\n"
    "    shell:\n"
    "        head -c 12G    /dev/zero | tail\n"
    "        (command exited with non-zero exit code)\n"
    "Trying to restart job 0.\n"
)


def test_bare_ctime_stamps_of_a_snakemake_log_are_not_dmesg_lines() -> None:
    head = _SNAKEMAKE_SLURM_OOM.splitlines()
    assert kernel.sniff(head) == 0.0
    source, _ = sources.sniff(head)
    assert source is not None and source.name == "pipeline"
    events = _events_of(_SNAKEMAKE_SLURM_OOM)
    oom = of_kind(events, "oom_kill").row(0, named=True)
    assert (oom["source"], oom["line"], oom["severity"]) == ("pipeline", 12, "error")
    # a dmesg -T line with a message after the stamp still counts, and so does its indented stack
    assert kernel.sniff(["[Mon Apr 20 15:08:07 2020] Call Trace:", "[Mon Apr 20 15:08:07 2020]  dump_stack+0x66/0x90"]) == 1.0


def test_nvidia_driver_lines_saying_the_gpu_did_not_come_up_are_errors() -> None:
    # NVIDIA/open-gpu-kernel-modules#1230 (gengchaogit) and #1058 (ArrayBolt3): GSP firmware that would not boot
    events = _parse(
        "[   88.582894] NVRM: GPU6 RmInitAdapter: Cannot initialize GSP firmware RM\n"
        "[   88.583480] NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)\n"
        "[   88.585226] NVRM: GPU 0000:a1:00.0: rm_init_adapter failed, device minor number 7\n"
        "[   88.669319] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP\n"
        "[   81.967314] NVRM: GPU0 nvAssertOkFailedNoLog: Assertion failed: Invalid argument to call [NV_ERR_INVALID_ARGUMENT]"
        " (0x0000001F) returned from RPC_HDR->rpc_result @ kernel_gsp.c:6112\n"
        "[   81.969336] NVRM: GPU0 iovaspaceDestruct_IMPL: 1 left-over mappings in IOVAS 0x100\n"
    )
    assert events["severity"].to_list() == ["error"] * 5 + [None]
    assert events["pci_bus"].to_list()[1:3] == ["0000:a1:00.0", "0000:a1:00.0"]


def test_the_kills_of_a_memory_oom_group_are_of_its_cgroup() -> None:
    """cgroup v2 with memory.oom.group (set by the kubelet since 1.28): the chosen task's kill, then one of each other
    task of the container under "Tasks in … are going to be killed"; the next OOM killer run is not theirs."""
    scope = "cri-containerd-" + "0123456789abcdef" * 4 + ".scope"
    memcg = f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice/{scope}"
    rss = "total-vm:1000kB, anon-rss:400kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:937"
    text = (
        "[ 5321.123456] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=937\n"
        f"[ 5321.123500] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset={scope},mems_allowed=0,oom_memcg={memcg},"
        f"task_memcg={memcg},task=python3,pid=4242,uid=0\n"
        f"[ 5321.123600] Memory cgroup out of memory: Killed process 4242 (python3) {rss}\n"
        f"[ 5321.123700] Tasks in {memcg} are going to be killed due to memory.oom.group set\n"
        f"[ 5321.123800] Memory cgroup out of memory: Killed process 4250 (pt_data_worker) {rss}\n"
        f"[ 5321.123900] Memory cgroup out of memory: Killed process 4251 (pt_data_worker) {rss}\n"
        "[ 5400.000000] bash invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
        f"[ 5400.000100] Out of memory: Killed process 999 (bash) {rss}\n"
    )
    kills = of_kind(rca.parse_text(text, file="dmesg"), "oom_kill")
    assert kills.select("pid", "container_id", "pod_uid").rows() == [
        (4242, "0123456789abcdef" * 4, "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901"),
        (4250, "0123456789abcdef" * 4, "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901"),
        (4251, "0123456789abcdef" * 4, "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901"),
        (999, None, None),
    ]
    assert [a.get("oom_group") for a in attrs_of(kills)] == [None, True, True, None]


# --- real samples, round 3: old task tables, ARM dumps, panics, bare and mixed files ---------


def test_task_rows_of_4_x_kernels_with_nr_pmds_read_the_name_and_adj() -> None:
    """4.1-4.14 print nr_pmds after nr_ptes (9 numbers a row): the name is not "0 conmon", the adj not the swap."""
    events = _events("dmesg_oom_crio_sacrifice_runc_init_01.log")
    rows = events.filter(pl.col("line").is_between(2, 6))
    assert rows.select("pid", "process").rows() == [
        (157294, "conmon"), (157486, "pause"), (387940, "conmon"), (387941, "runc"), (387951, "runc:[2:INIT]"),
    ]
    assert [(a["oom_score_adj"], a["swapents"], a["pgtables"]) for a in attrs_of(rows)][1] == (-998, 0, 4)
    kill = of_kind(events, "oom_kill")  # the child the kernel sacrificed for runc: one kill
    assert kill.select("line", "pid", "process", "rss_bytes").rows() == [(8, 387951, "runc:[2:INIT]", 3000 * KI)]
    ecs = _events("dmesg_T_oom_ecs_al2_task_in_nr_pmds_01.log")
    assert ecs.filter(pl.col("pid").is_not_null()).select("pid", "process").rows() == [(28573, "celery"), (21486, "chrome"), (21490, "cat")]
    # 3.x-5.x (8 numbers) and 6.x (11) rows read as before
    eight = _parse("[  100.000001] [ 3942]     0  3942     2227     1354       9        0          -999 docker-containe\n")
    eleven = _parse("[  100.000002] [    375]     0   375    14010     2008      160     1848         0   102400      256          -250 systemd-journal\n")
    assert (eight["process"][0], attrs_of(eight)[0]["oom_score_adj"]) == ("docker-containe", -999)
    assert (eleven["process"][0], attrs_of(eleven)[0]["oom_score_adj"], attrs_of(eleven)[0]["rss_anon_pages"]) == ("systemd-journal", -250, 160)


def test_a_task_in_line_names_the_container_that_hit_its_limit() -> None:
    task_in = _events("kern_log_task_in_systemd_docker_scope_01.log").row(0, named=True)
    assert (task_in["pod_uid"], task_in["container_id"]) == (
        "0330b2c1-a15b-4cdd-b5e5-72d4a90bee82", "b27201334a41cd0749d053b18378d7ea65617b8e26277197ea25c974da1a5a8a",
    )
    ecs = _events("dmesg_T_oom_ecs_al2_task_in_nr_pmds_01.log")
    assert ecs.select("cgroup", "container_id").row(0) == (
        "/ecs/f209da7f990b45b585488946f0eec404/15e20c7f5997947ffa3adb2b2bff199eea61004e29501677c53751b2c549bb15",
        "15e20c7f5997947ffa3adb2b2bff199eea61004e29501677c53751b2c549bb15",
    )
    assert ecs.select("mem_used_bytes", "mem_total_bytes").row(1) == (1048576 * KI, 1048576 * KI)


# eolwral/OSMonitor#54 (ARoiD, 2015): a 3.0 ARM kernel's OOM header, its "Backtrace:" heading, "[<…>] (f) from [<…>]"
# frames, register lines and the exception stack's rows.
_ARM_OOM = (
    "[ 5623.859741] osmcore_L invoked oom-killer: gfp_mask=0x200da, order=0, oom_adj=-17, oom_score_adj=-1000\n"
    "[ 5623.859863] Backtrace: \n"
    "[ 5623.859985] [<c005c174>] (dump_backtrace+0x0/0x10c) from [<c05d4624>] (dump_stack+0x18/0x1c)\n"
    "[ 5623.860076]  r6:000200da r5:00000000 r4:c3ada000 r3:00000000\n"
    "[ 5623.861541] [<c00524c4>] (do_DataAbort+0x0/0xa0) from [<c0058608>] (ret_from_exception+0x0/0x10)\n"
    "[ 5623.861602] Exception stack(0xc3adbfb0 to 0xc3adbff8)\n"
    "[ 5623.861694] bfa0:                                     5d056000 00000000 0e244c33 00000000\n"
)


def test_32_bit_arm_stack_dumps_stay_with_their_oom_header() -> None:
    events = _parse(_ARM_OOM)
    assert events.select("kind", "n_lines", "process").rows() == [("oom_invoked", 7, "osmcore_L")]
    # 5.x+ ARM frames ("f from g+0x18/0x1c", raspberrypi/linux#3872) as journald keeps them: without their indent
    journal = _parse(
        "Jun 10 10:00:00 pi kernel: kworker/0:1 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
        "Jun 10 10:00:00 pi kernel: Hardware name: BCM2711\n"
        "Jun 10 10:00:00 pi kernel: unwind_backtrace from show_stack+0x18/0x1c\n"
        "Jun 10 10:00:00 pi kernel: show_stack from dump_stack_lvl+0x90/0xac\n"
        "Jun 10 10:00:00 pi kernel: 9fe0: beda7370 beda8370 b6aea008 b6aea01c\n"
        "Jun 10 10:00:00 pi kernel: Mem-Info:\n",
        reference_time=FIXED_MTIME,
    )
    assert journal.select("kind", "n_lines").rows() == [("oom_invoked", 6)]


def test_a_panic_and_the_empty_line_it_ends_with_are_one_event_with_its_task() -> None:
    events = _events("dmesg_panic_on_oom_compulsory_01.log")
    assert events.select("line", "n_lines", "severity", "pid", "process").rows() == [
        (1, 1, None, None, None), (2, 3, "critical", 243, "kworker/1:2"),
    ]
    # an empty line after an ordinary one stays an event of its own
    assert _parse("[    1.000000] usb 1-1: new device\n[    1.000000]\n")["n_lines"].to_list() == [1, 1]


def test_a_gpu_named_inside_an_nvrm_message_is_its_bus() -> None:
    events = _events("dmesg_grep_c_xid119_gsp_rate_limit_oom_01.log")
    rate = events.filter(pl.col("line") == 3).row(0, named=True)
    assert (rate["pci_bus"], rate["severity"], rate["kind"]) == ("0000:61:00", "error", "log")
    xids = of_kind(events, "xid")
    assert xids.select("line", "xid", "pid", "process").rows() == [
        (1, 119, 123417, "nv-hostengine"), (2, 119, 123417, "nv-hostengine"), (12, 119, 126121, "nvidia-smi"),
    ]
    assert of_kind(events, "oom_invoked").select("line", "n_lines", "pid").rows() == [(13, 10, 128187)]


def test_bare_oom_killer_dumps_of_a_kernel_without_printk_time_are_kernel_lines() -> None:
    """RHEL 6's dmesg prints no times: the OOM killer's lines and their call trace, bare, still make a kernel file."""
    path = FOLDER / "dmesg_bare_rhel6_oom_no_timestamps_01.log"
    assert kernel.sniff(head_lines(path)) == 1.0
    events = _events(path.name)
    assert events.select("line", "kind", "pid", "process").rows() == [
        (1, "log", 28364, "sh"), (2, "log", 16929, "beam.smp"), (3, "oom_kill", 28364, "sh"), (4, "oom_invoked", 1205, "rsyslogd"),
    ]
    assert events["n_lines"][3] == 8 and of_kind(events, "oom_kill")["rss_bytes"][0] == 180 * KI
    # a stack trace under an application's own lines does not make them kernel lines
    app = [
        "2026-06-01 10:00:00 INFO step 1", "2026-06-01 10:00:01 INFO step 2", "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>', "RuntimeError: device lost", "Call Trace:", "  frame",
    ]
    assert kernel.sniff(app) < 0.5


def test_journal_and_dmesg_lines_of_one_file_are_each_framed_as_written() -> None:
    """grep of nvidia-bug-report.log: its journal copy and its dmesg copy of the same Xid."""
    events = _events("journalctl_k_bugreport_grep_mixed_dmesg_01.log")
    assert events.select("line", "kind", "host", "ts_quality").rows() == [
        (1, "xid", "jjf-Super-Server", "year_from_mtime"), (2, "log", "jjf-Super-Server", "year_from_mtime"),
        (3, "xid", None, "boot_relative"), (4, "log", None, "boot_relative"),
    ]
    assert events["ts"][0] == _utc(2026, 6, 28, 2, 52, 53) and events["boot_seconds"][2] == 1590188.789226
    assert set(events["source"]) == {"kernel"} and events["pci_bus"].to_list()[::2] == ["0000:c2:00"] * 2
    # each run keeps the lines under it (the Xid's CPU line, the indented line)
    mixed = _events_of(
        "[  100.000000] NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n"
        "[  100.000001] CPU: 3 PID: 7 Comm: python3 Tainted: P           OE     5.15.0 #1\n"
        "Jun 28 02:52:53 gpu1 kernel: NVRM: Xid (PCI:0000:02:00): 48, pid=5, name=python3, Ch 00000008\n"
        "Jun 28 02:52:53 gpu1 kernel: NVRM: Xid (PCI:0000:02:00): 63, pid=5, name=python3, Ch 00000008\n"
        "[  101.000000] NVRM: Xid (PCI:0000:03:00): 13, pid=9, name=python3, Graphics Exception\n"
        "  indented\n"
    )
    assert mixed.select("line", "n_lines", "xid", "host", "ts_quality").rows() == [
        (1, 2, 79, None, "boot_relative"), (3, 1, 48, "gpu1", "year_from_mtime"), (4, 1, 63, "gpu1", "year_from_mtime"),
        (5, 2, 13, None, "boot_relative"),
    ]
    # mostly journal: a dmesg line among it keeps its own (boot-relative) time, not the journal line's above it
    journal = _events_of(
        "Jun 28 02:52:50 gpu1 systemd[1]: Started nvidia-persistenced.service.\n"
        "Jun 28 02:52:53 gpu1 kernel: NVRM: Xid (PCI:0000:c2:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
        "[1590188.789226] NVRM: Xid (PCI:0000:c2:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
    )
    assert journal.select("line", "ts_quality", "boot_seconds").rows()[1:] == [
        (2, "year_from_mtime", None), (3, "boot_relative", 1590188.789226),
    ]


def test_a_pre_4_10_oops_is_two_critical_events_whatever_its_printk_level() -> None:
    events = _events("dmesg_pstore_erst_oops_coreos_01.log")
    assert events.select("line", "n_lines", "severity", "pid", "process").rows() == [
        (1, 1, "info", None, None), (2, 3, "critical", 1899, "bash"), (5, 35, "critical", 1899, "bash"),
    ]
    # a WARNING's level stands: only the kernel's own crash reports are raised to critical
    warning = _parse("<4>[   10.000000] WARNING: CPU: 3 PID: 1 at drivers/gpu/drm/drm_gem.c:100 f+0x1/0x2\n")
    assert warning["severity"].to_list() == ["warning"]


def test_an_arm64_oops_and_the_panic_after_it_are_grouped_critical_events() -> None:
    """Grace (GH200 / GB200) nodes are arm64: its oops opens with "Unable to handle kernel …", the abort's
    decoding and "Internal error: Oops: …" with pstate / pc / lr / x-registers and "Call trace:"."""
    events = _events("dmesg_arm64_oops_ampere_altra_01.log")
    assert events.select("line", "n_lines", "severity", "pid", "process").rows() == [
        # the head names the task of the oops it opened, as x86's "BUG: unable to handle page fault" does
        (1, 12, "critical", 2214, "ping"), (13, 22, "critical", 2214, "ping"),
    ]
    panic = _parse(
        "[  335.010416] Kernel panic - not syncing: Oops: Fatal exception in interrupt\n"
        "[  335.017279] SMP: stopping secondary CPUs\n"
        "[  335.021374] Kernel Offset: 0x5baca8eb0000 from 0xffff800008000000\n"
        "[  335.027456] PHYS_OFFSET: 0x80000000\n"
        "[  335.030932] CPU features: 0x0000,0085c029,19805c82\n"
        "[  335.035713] Memory Limit: none\n"
        "[  335.038756] Rebooting in 180 seconds..\n"
    )
    assert panic.select("n_lines", "severity").rows() == [(7, "critical")]


def test_a_slab_allocation_failure_keeps_its_cache_and_node_lines() -> None:
    # docker/for-linux#1001 (MrSerth, 2020): a kernel-memory limit hit inside a container, before the OOM killer
    events = _parse(
        "[Thu May 14 23:17:24 2020] SLUB: Unable to allocate memory on node -1, gfp=0xdc0(GFP_KERNEL|__GFP_ZERO)\n"
        "[Thu May 14 23:17:24 2020]   cache: signal_cache(632851:3a166877f91031145f6dc491df3c915c57f1439f4b3bcea4c6a37d1885ea27ea),"
        " object size: 1056, buffer size: 1088, default order: 3, min order: 0\n"
        "[Thu May 14 23:17:24 2020]   node 0: slabs: 31, objs: 930, free: 0\n"
        "[Thu May 14 23:17:24 2020] oom_kill_process: 70 callbacks suppressed\n"
    )
    # the rate limiter's count of the lines it dropped is a warning (KERN_WARNING), whatever it names
    assert events.select("n_lines", "severity").rows() == [(3, "error"), (1, "warning")]


def test_a_kill_whose_task_in_line_was_cut_off_takes_the_memcg_of_the_stats_line() -> None:
    """kubernetes/kubernetes#56891: the paste starts at "Memory cgroup stats for /kubepods/pod…/<container>:"; the
    victim was chosen inside that memcg, so the kill is its pod's and container's (the header after it is another run's)."""
    events = _events("dmesg_T_oom_sacrifice_child_el7_01.log")
    kill = of_kind(events, "oom_kill").row(0, named=True)
    assert (kill["pid"], kill["pod_uid"], kill["container_id"]) == (
        28438, "95387fa4-da9c-11e7-9d36-5254b24cbf5e", "6895a3e13439535852d3184ac2aadd26d7363cc035f171545ec7d4ce74073b0b",
    )
    assert attrs_of(of_kind(events, "oom_kill"))[0]["oom_memcg"].startswith("/kubepods/pod95387fa4-")
    invoked = of_kind(events, "oom_invoked").row(0, named=True)  # the invoking task's container, from its cpuset
    assert (invoked["cgroup"], invoked["container_id"]) == (None, "1e479e759020fa0b6c72def90973540a2d33982fea2ad67a96373b4da751a820")


def test_short_monotonic_without_hostname_keeps_kernel_out_of_the_message() -> None:
    """`journalctl -k -o short-monotonic --no-hostname` (the form Chris Murphy asks for on linux-btrfs): "[ts] kernel: …"."""
    events = _parse(
        "[ 7933.811228] kernel: BTRFS info (device dm-0): using free-space-tree\n"
        "[ 7933.813593] kernel: Memory cgroup out of memory: Killed process 5100 (python) total-vm:3000000kB, anon-rss:2048000kB,"
        " file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:6000kB oom_score_adj:0\n"
    )
    assert events.select("kind", "format", "host", "pid").rows() == [
        ("log", "journal_monotonic", None, None), ("oom_kill", "journal_monotonic", None, 5100),
    ]
    assert events["message"][0] == "BTRFS info (device dm-0): using free-space-tree"
    assert events["boot_seconds"].to_list() == [7933.811228, 7933.813593]


def test_short_monotonic_journal_gives_each_daemon_line_its_program_and_pid() -> None:
    """`journalctl -o short-monotonic` beside the kernel's lines: "[ts] host program[pid]: …" is a daemon's line, not dmesg's."""
    events = _parse(
        "[    5.487436] gpu-node-3 mount[570]: mount: mount /dev/nvme0n1p2 on /sysroot failed: Structure needs cleaning\n"
        "[    5.487681] gpu-node-3 systemd[1]: sysroot.mount: Mount process exited, code=exited, status=32/n/a\n"
        "[ 7933.813593] gpu-node-3 kernel: Memory cgroup out of memory: Killed process 5100 (python) total-vm:3000000kB,"
        " anon-rss:2048000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:6000kB oom_score_adj:0\n"
        "[ 7934.100000] gpu-node-3 systemd[1]: train.service: A process of this unit has been killed by the OOM killer.\n"
    )
    assert events.select("kind", "process", "pid", "host", "format").rows() == [
        ("log", "mount", 570, "gpu-node-3", "journal_monotonic"),
        # systemd's lines go to its rules, which name the unit they are about
        ("log", "sysroot.mount", None, "gpu-node-3", "journal_monotonic"),
        ("oom_kill", "python", 5100, "gpu-node-3", "journal_monotonic"),
        ("oom_kill", "train.service", None, "gpu-node-3", "journal_monotonic"),
    ]
    assert events["message"][1] == "sysroot.mount: Mount process exited, code=exited, status=32/n/a"
    assert events["boot_seconds"].to_list() == [5.487436, 5.487681, 7933.813593, 7934.1]


def test_dmesg_lines_of_programs_stay_kernel_lines() -> None:
    # dmesg writes no host before a program's name: systemd's early lines and a segfault stay kernel lines.
    events = _parse(
        "[    3.120001] systemd[1]: Detected architecture x86-64.\n"
        "[   12.300000] python3[1234]: segfault at 0 ip 00007f00deadbeef sp 00007ffc00000000 error 4 in libc.so.6[7f0000000000+1000]\n"
    )
    assert events["format"].to_list() == ["dmesg_raw", "dmesg_raw"]
    assert events["message"][0] == "systemd[1]: Detected architecture x86-64."
    assert events["pid"].to_list()[1] == 1234


def test_the_group_sweep_killing_the_chosen_task_again_is_not_a_second_kill() -> None:
    # Kernel 6.18 with memory.oom.group, as captured on an H200 (datasets/captures/h200/capture2.sh)
    events = _parse((DATA / "kernel" / "dmesg_iso_h200_oom_group_xid31_xid43_01.log").read_text())
    kills = events.filter(pl.col("kind") == "oom_kill")
    assert kills["pid"].to_list() == [567, 568, 569]
    (again,) = events.filter(pl.col("line") == 111).to_dicts()
    assert again["kind"] == "log" and again["pid"] == 567
    assert json.loads(again["attrs"])["kill_repeated"] is True


def test_dev_kmsg_records_are_read_with_their_level_boot_time_and_dictionary() -> None:
    # `cat /dev/kmsg` (udisks issue #1231): "prio,seq,usec,flags;message", then the record's " KEY=value" lines
    events = _events("dmesg_kmsg_nvme_dictionary_udisks_01.log")
    assert set(events["source"]) == {"kernel"} and set(events["format"]) == {"dmesg_kmsg"}
    assert events.select("line", "n_lines", "severity", "boot_seconds", "ts_quality").rows() == [
        (1, 3, "info", 4.307125, "boot_relative"),
        (4, 3, "info", 4.31395, "boot_relative"),
        (7, 3, "info", 4.315079, "boot_relative"),
        (10, 3, "error", 7.382617, "boot_relative"),
    ]
    assert events["message"][3] == "nvme nvme1: failed to connect socket: -110\n SUBSYSTEM=nvme\n DEVICE=c241:1"


def test_a_dev_kmsg_oom_kill_record_is_a_kill() -> None:
    (kill,) = _events("dmesg_kmsg_memcg_oom_kill_01.log").to_dicts()
    assert (kill["kind"], kill["pid"], kill["process"], kill["rss_bytes"]) == ("oom_kill", 988370, "python", 95724 * KI)
    assert (kill["severity"], kill["boot_seconds"], kill["format"]) == ("error", 35945.901683, "dmesg_kmsg")
    assert json.loads(kill["attrs"])["oom_score_adj"] == 995


def test_journalctl_indents_a_multi_line_kernel_record_and_it_stays_one_event() -> None:
    # journalctl -k prints the NVRM report's further lines indented to the message column, not as kernel lines
    events = _events("journalctl_k_nvrm_fallen_off_bus_multiline_p51_01.log")
    (fallen,) = events.filter(pl.col("line") == 2).to_dicts()
    assert (fallen["n_lines"], fallen["severity"], fallen["pci_bus"], fallen["host"]) == (3, "critical", "0000:01:00.0", "p51")
    assert json.loads(fallen["attrs"]) == {"fallen_off_bus": True, "pci_id": "10de:13b6"}
    assert events["line"].to_list() == [1, 2, 5, 6, 7, 8]
    # "None of the NVIDIA graphics adapters were initialized!": no GPU came up
    assert events.filter(pl.col("line") == 7)["severity"].item() == "error"


def test_a_kill_in_a_kind_node_inside_rootless_podman_names_the_pod_and_container() -> None:
    (kill,) = of_kind(_events("dmesg_T_oom_kind_in_rootless_podman_cri_scope_01.log"), "oom_kill").to_dicts()
    assert (kill["pid"], kill["process"], kill["pod_uid"]) == (32550, "uvicorn", "17d1d0b1-bbeb-4252-a45c-c9f426d1cb34")
    assert kill["container_id"] == "799855c3e9e23ea07677c581b96f444dffb0932d7a907973bb08a8391803c559"
    assert json.loads(kill["attrs"])["constraint"] == "CONSTRAINT_MEMCG"


def test_a_kill_line_figure_someone_regrouped_is_no_figure_and_wrapped_task_rows_are_read_whole() -> None:
    # "anon-rss:153,700,88kB" (py-autovod issue #7): not 153 kB
    events = _events("dmesg_T_oom_wrapped_rows_grouped_figures_01.log")
    rows = events.filter(pl.col("line").is_in([1, 3]))
    assert rows.select("n_lines", "pid", "process").rows() == [(2, 7899, "python"), (2, 11794, "init")]
    assert json.loads(rows["attrs"][0])["rss_pages"] == 3842522
    (kill,) = of_kind(events, "oom_kill").to_dicts()
    assert (kill["pid"], kill["process"], kill["cgroup"], kill["rss_bytes"]) == (7899, "python", "/init.scope", None)
    attrs = json.loads(kill["attrs"])
    assert "total_vm_kb" not in attrs and "anon_rss_kb" not in attrs
    assert (attrs["pgtables_kb"], attrs["oom_score_adj"], attrs["global_oom"]) == (38964, 0, True)


def test_dmesg_show_delta_stamps_are_boot_stamps_and_the_5x_oops_keeps_its_page_fault_lines() -> None:
    # `dmesg -d`: "[  925.738225 <    0.188086>]" (dri-devel thread, 5.5.0-rc7); "#PF:" lines decode the fault since 5.1
    events = _events("dmesg_delta_oops_null_deref_amdgpu_01.log")
    assert events.select("line", "n_lines", "severity", "pid", "process", "format").rows() == [
        (1, 4, "critical", 2547, "amdgpu_test", "dmesg_raw"),
        (5, 20, "critical", 2547, "amdgpu_test", "dmesg_raw"),
    ]
    assert events["boot_seconds"].to_list() == [925.738225, 925.738245]
    assert events["ts_quality"].to_list() == ["boot_relative", "boot_relative"]


def test_dmesg_ctime_show_delta_stamp_keeps_its_time() -> None:
    # `dmesg -T -d` puts the delta after the ctime stamp the same way (util-linux print_timestamp)
    (event,) = _parse("[Tue Feb 25 00:12:10 2025 <    0.000020>] amdgpu 0000:04:00.0: amdgpu: [gfxhub0] no-retry page fault\n").to_dicts()
    assert (event["format"], event["ts"], event["ts_quality"]) == ("dmesg_ctime", datetime(2025, 2, 25, 0, 12, 10, tzinfo=UTC), "exact")
    assert event["message"] == "amdgpu 0000:04:00.0: amdgpu: [gfxhub0] no-retry page fault"


def test_a_hung_task_in_a_kern_log_without_host_keeps_its_4x_state_line_and_arm_frames() -> None:
    # "May 17 18:48:11 kernel: [ 6141.921740] INFO: task …" (raspberrypi/linux issue #2557, 4.14 on a Raspberry Pi)
    (hung,) = _events("kern_log_hung_task_no_host_arm32_rpi_01.log").to_dicts()
    assert (hung["n_lines"], hung["pid"], hung["process"], hung["severity"], hung["format"]) == (12, 5, "kworker/u8:0", "error", "syslog")
    assert (hung["boot_seconds"], hung["host"]) == (6141.92174, None)
    assert json.loads(hung["attrs"])["blocked_seconds"] == 120


def test_an_el8_kern_log_oom_block_with_escaped_meminfo_is_one_invocation_and_one_kill() -> None:
    events = _events("kern_log_oom_el8_memory_policy_escaped_meminfo_01.log")
    assert events["kind"].value_counts().sort("kind").rows() == [("log", 36), ("oom_invoked", 1), ("oom_kill", 1)]
    (header,) = of_kind(events, "oom_invoked").to_dicts()
    assert (header["n_lines"], header["pid"], header["process"]) == (54, 2074, "oom")
    assert json.loads(header["attrs"])["kernel"] == "4.18.0-477.13.1.el8_8.x86_64"
    (kill,) = of_kind(events, "oom_kill").to_dicts()
    assert (kill["pid"], kill["cgroup"], kill["rss_bytes"]) == (2074, "/user.slice/user-0.slice/session-1.scope", 1872532 * KI)
    assert json.loads(kill["attrs"])["constraint"] == "CONSTRAINT_MEMORY_POLICY"


def test_a_dev_kmsg_capture_is_all_kernel_lines_with_their_boot_seconds() -> None:
    events = _events("dmesg_kmsg_nvswitch_open_gpud_01.log")
    assert events.height == 47 and set(events["kind"]) == {"log"} and set(events["severity"]) == {"info"}
    assert events["boot_seconds"].to_list()[39] == 3757.433151
    assert events["ts_raw"].to_list()[39] == "3757433151"


def test_a_3_10_oom_report_keeps_its_raw_stack_words_with_its_header() -> None:
    """3.10 (CentOS 7, TencentOS) prints the stack's raw words above the call trace, four a line; rsyslog left the host empty."""
    events = _events("kern_log_oom_3_10_stack_words_empty_host_01.log")
    header = of_kind(events, "oom_invoked")
    assert header.select("line", "n_lines", "pid", "process").rows() == [(1, 26, 3691, "stress-ng-vm")]
    kill = of_kind(events, "oom_kill")
    assert kill.select("line", "pid", "process", "rss_bytes", "cgroup", "mem_used_bytes", "mem_total_bytes").rows() == [
        (32, 3691, "stress-ng-vm", 292 * KI, "/cgroup-test", 102400 * KI, 102400 * KI),
    ]
    assert events.filter(pl.col("line").is_between(27, 30))["pid"].to_list() == [7125, 29937, 29938, 3691]


def test_dmesg_json_records_are_framed_with_their_level_boot_seconds_and_every_line() -> None:
    """`dmesg --json` (util-linux): an object a record over several lines; "pri" is facility × 8 + level."""
    name = "dmesg_json_kmsg_caller_levels_util_linux_01.log"
    events = _events(name)
    assert events.height == 58 and set(events["format"]) == {"dmesg_json"} and set(events["source"]) == {"kernel"}
    assert int(events["n_lines"].sum()) == len(_text(name).splitlines())
    assert events["severity"].to_list()[:8] == ["critical", "critical", "critical", "error", "warning", "notice", "info", "debug"]
    first, command, *_ = events.to_dicts()
    assert (first["line"], first["n_lines"], first["boot_seconds"], first["ts_quality"]) == (1, 7, 0.0, "boot_relative")
    assert command["message"].startswith("Command line: initrd=\\ucode.img ")
    daemon = events.filter(pl.col("message").str.starts_with("systemd[1]: Detected")).row(0, named=True)
    assert (daemon["severity"], daemon["boot_seconds"], daemon["line"]) == ("info", 11.441524, 158)  # pri 30: daemon.info


def test_dmesg_json_decoded_levels_and_a_stream_cut_before_its_close() -> None:
    events = _events("dmesg_json_decode_follow_unclosed_01.log")
    assert events.select("line", "n_lines", "severity", "boot_seconds").rows() == [(1, 7, "error", 87876.71428), (8, 5, "error", 119412.66746)]


def test_dmesg_json_reads_an_oom_block_and_xids_as_the_raw_dmesg_does() -> None:
    """The same real records printed the way `dmesg --json` prints them give the same events."""
    stamp = re.compile(r"^\[ *([0-9]+\.[0-9]+)\] (.*)$")
    for name in ("dmesg_oom_cgroup_01.log", "dmesg_xid_31_62_45_01.log"):
        records = [stamp.match(line).groups() for line in _text(name).splitlines()]
        objects = ",".join(f'{{\n         "pri": 6,\n         "time": {seconds:>12},\n         "msg": {json.dumps(msg)}\n      }}'
                           for seconds, msg in records)
        rendered = _events_of('{\n   "dmesg": [\n      ' + objects + "\n   ]\n}\n")
        facts = ["kind", "pid", "process", "xid", "pci_bus", "boot_seconds", "rss_bytes", "mem_used_bytes"]
        assert set(rendered["format"]) == {"dmesg_json"}
        assert rendered.select(facts).rows() == _events(name).select(facts).rows()


def test_a_hung_task_whose_comm_holds_a_space_keeps_its_state_line_and_stack() -> None:
    """5.x pads the comm to 15 columns on the state line: "task:CPU 0/KVM       state:D"."""
    events = _events("dmesg_hung_task_comm_with_space_kvm_01.log")
    assert events.select("line", "n_lines", "pid", "process", "severity").rows() == [
        (1, 25, 3487, "qemu-system-x86", "error"), (26, 46, 3543, "CPU 0/KVM", "error"),
    ]


def test_a_log_server_file_gives_each_host_s_gpu_its_own_uuid() -> None:
    """Nodes of a cluster all have a GPU at 0000:01:00: a UUID named on one host is not another host's."""
    events = _events_of(
        "Mar 11 10:37:00 node-a kernel: NVRM: GPU at PCI:0000:01:00: GPU-cccfc25d-fc66-0d40-e289-3b1a1f5d7896\n"
        "Mar 11 10:37:00 node-a kernel: NVRM: Xid (PCI:0000:01:00): 62, 3239edf9 0000c3d8 00000000 206dae60\n"
        "Mar 11 10:37:01 node-b kernel: NVRM: Xid (PCI:0000:01:00): 109, channel 0x00000009, errorString CTX SWITCH TIMEOUT, Info 0xb400b\n"
    )
    assert of_kind(events, "xid").select("host", "xid", "gpu_uuid").rows() == [
        ("node-a", 62, "GPU-cccfc25d-fc66-0d40-e289-3b1a1f5d7896"), ("node-b", 109, None),
    ]


def test_an_aks_node_allocatable_oom_names_the_pod_and_the_group_sweep_kills_each_task_once() -> None:
    """cgroup v2, systemd driver: the limit hit is /kubepods.slice's (node allocatable), the victim a BestEffort pod's container."""
    events = _events("kern_log_oom_aks_kubepods_slice_oom_group_npd_01.log")
    kernel_kills = of_kind(events, "oom_kill").filter(pl.col("boot_seconds").is_not_null())
    assert kernel_kills.select("line", "pid", "process").rows() == [
        (94, 7788, "bash"), (96, 7620, "nginx"), (97, 7656, "nginx"), (98, 7657, "nginx"), (99, 7712, "bash"),
    ]
    assert set(kernel_kills["pod_uid"]) == {"a5d8fdd1-1369-469e-8a7d-2c1047529435"}
    assert set(kernel_kills["container_id"]) == {"9192cb33411ff69d015a3577db136757f5b145064a1703efea3d0e12e8a64987"}
    first = kernel_kills.row(0, named=True)
    assert (first["mem_used_bytes"], first["mem_total_bytes"], first["rss_bytes"]) == (7464436 * KI, 7464436 * KI, 7165824 * KI)
    assert json.loads(first["attrs"])["oom_memcg"] == "/kubepods.slice"
    header = of_kind(events, "oom_invoked").row(0, named=True)
    assert (header["line"], header["n_lines"], header["pid"], header["process"], header["ts"].year) == (1, 64, 7788, "bash", 2025)
    # node-problem-detector quoting the kill line is no kill of the kernel's
    assert events.filter(pl.col("line") == 107)["kind"].to_list() == ["log"]


def test_the_lock_a_hung_task_waits_on_and_its_likely_owner_s_stack_are_one_event() -> None:
    """6.16+ names the mutex's likely owner after the hung task's report and dumps the owner's state and stack
    (`dmesg -r` with the printk caller: "<3>[  125.362363][  T140] …")."""
    events = _events("dmesg_r_caller_hung_task_mutex_blocker_01.log")
    assert events.select("line", "n_lines", "pid", "process", "severity").rows() == [
        (1, 30, 470, "zsh", "error"), (31, 28, 470, "zsh", "error"),
    ]
    assert attrs_of(events)[1] == {"lock_owner": "zsh", "lock_owner_pid": 470}


def test_dmesg_color_always_output_is_read_without_its_colors() -> None:
    """`dmesg --color=always -x`: a green stamp, a brown subsystem prefix, a red or bold message, all SGR sequences."""
    name = "dmesg_x_color_always_util_linux_01.log"
    assert sources.sniff(head_lines(FOLDER / name))[0] is kernel.SOURCE
    events = _events(name)
    assert events.height == 45 and set(events["format"]) == {"dmesg_raw"} and not events["message"].str.contains("\x1b").any()
    assert events["severity"].to_list()[:8] == ["critical", "critical", "critical", "error", "warning", "notice", "info", "debug"]
    assert events.row(1, named=True)["message"].startswith("Command line: initrd=\\ucode.img")
    assert events.row(29, named=True)["boot_seconds"] == 9.398562


def test_a_firmware_first_pcie_error_record_of_a_gpu_is_one_corrected_event_on_its_bus() -> None:
    """APEI GHES: "{8}[Hardware Error]: …" lines, then the AER status the kernel decodes for the GPU's driver; pasted bare."""
    name = "dmesg_bare_apei_pcie_corrected_gpu_01.log"
    assert sources.sniff(head_lines(FOLDER / name))[0] is kernel.SOURCE
    events = _events(name)
    assert events.select("line", "n_lines", "severity", "pci_bus").rows() == [(1, 14, "warning", "0000:e3:00.0")]


def test_a_stamped_firmware_first_record_opens_at_its_source_line() -> None:
    events = _parse(
        "[11219.196524] {1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 1\n"
        "[11219.196558] {1}[Hardware Error]: event severity: recoverable\n"
        "[11219.196576] {1}[Hardware Error]:  Error 0, type: recoverable\n"
        "[11219.196591] {1}[Hardware Error]:   section_type: PCIe error\n"
    )
    assert events.select("line", "n_lines", "severity", "boot_seconds").rows() == [(1, 4, "error", 11219.196524)]


def test_dmesg_delta_without_time_reads_the_delta_prefix_and_keeps_no_time() -> None:
    # `dmesg -d --notime` prints util-linux's "[<%12.06f>] " alone: the seconds since the line before, never a stamp
    text = (
        "[<    0.000000>] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
        "[<    0.000012>] CPU: 3 PID: 4242 Comm: python3 Not tainted 6.8.0-45-generic #45-Ubuntu\n"
        "[<    0.000031>] Memory cgroup out of memory: Killed process 4242 (python3) total-vm:41943040kB, "
        "anon-rss:33554432kB, file-rss:1024kB, shmem-rss:0kB, UID:1000 pgtables:65600kB oom_score_adj:0\n"
        "[<    2.104512>] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n"
    )
    events = _events_of(text)
    assert events["source"].unique().to_list() == ["kernel"]
    assert events["kind"].to_list() == ["oom_invoked", "oom_kill", "xid"]
    assert events["n_lines"].to_list() == [2, 1, 1]
    assert events["pid"].to_list() == [4242, 4242, 4242] and events["process"].to_list() == ["python3"] * 3
    assert events["rss_bytes"][1] == 33554432 * 1024 and events["xid"][2] == 79 and events["pci_bus"][2] == "0000:3b:00"
    assert events["ts"].null_count() == 3 and set(events["ts_quality"]) == {"missing"}
    assert events["ts_raw"].to_list() == ["<    0.000000>", "<    0.000031>", "<    2.104512>"]  # as written
    assert events["message"][2].startswith("NVRM: Xid")


def test_a_bare_hung_task_head_pasted_without_stamps_is_sniffed_as_kernel() -> None:
    text = (
        "INFO: task python3:1234 blocked for more than 120 seconds.\n"
        "      Not tainted 5.15.0-91-generic #101-Ubuntu\n"
        '"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.\n'
    )
    events = _events_of(text)
    assert events["source"].unique().to_list() == ["kernel"]
    assert events["pid"].to_list() == [1234] and events["process"].to_list() == ["python3"]
    assert events["severity"].to_list() == ["error"] and events["n_lines"].to_list() == [3]


def test_dev_kmsg_fragments_of_one_line_are_one_event() -> None:
    # Kernels 3.5-4.8 (Documentation/ABI/testing/dev-kmsg): a line printed in pieces is a "c" record then "+" records,
    # the "+" ones at the default level 4; the line is the pieces joined, at the first record's level and time
    text = (
        "6,1233,5677000,-;e1000e: Intel(R) PRO/1000 Network Driver - 2.3.2-k\n"
        "6,1234,5678000,c;CPU: Testing write buffer coherency: \n"
        "4,1235,5679000,+;ok\n"
        "3,1237,5681000,c;Memory cgroup out of memory: \n"
        "4,1238,5682000,+;Killed process 4243 (python3) \n"
        "4,1239,5683000,+;total-vm:2048kB, anon-rss:1024kB, file-rss:0kB, shmem-rss:0kB\n"
        "6,1240,5684000,-;sd 0:0:0:0: [sda] Attached SCSI disk\n"
        " SUBSYSTEM=scsi\n"
        "4,1241,5685000,+;orphan\n"
    )
    events = _events_of(text)
    assert set(events["source"]) == {"kernel"} and set(events["format"]) == {"dmesg_kmsg"}
    assert events.select("line", "n_lines", "kind", "severity", "boot_seconds").rows() == [
        (1, 1, "log", "info", 5.677),
        (2, 2, "log", "info", 5.678),
        (4, 3, "oom_kill", "error", 5.681),
        (7, 2, "log", "info", 5.684),
        (9, 1, "log", "warning", 5.685),  # a "+" record after a dictionary line continues no record it can be sure of
    ]
    assert events["message"][1] == "CPU: Testing write buffer coherency: ok"
    kill = events.row(2, named=True)
    assert (kill["pid"], kill["process"], kill["rss_bytes"]) == (4243, "python3", 1024 * KI)
    assert json.loads(kill["attrs"])["constraint"] == "CONSTRAINT_MEMCG"
    ctx = ParseContext(file="kmsg", reference_time=FIXED_MTIME)
    assert _accounted(text, ctx) == (9, 9)


def test_a_firmware_first_record_keeps_its_lines_printed_after_an_unrelated_line() -> None:
    # the record's number ("{1}") is on each of its lines: another CPU's "mce:" line (a rule's line) or a memory-failure
    # notice (no rule's) printed among them is an event of its own, the record one event of all its lines
    text = (
        "[  261.273226] {1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 4\n"
        "[  261.273227] {1}[Hardware Error]: event severity: recoverable\n"
        "[  261.273228] mce: [Hardware Error]: Machine check events logged\n"
        "[  261.273228] {1}[Hardware Error]:  Error 0, type: recoverable\n"
        "[  261.273229] {1}[Hardware Error]:   section_type: memory error\n"
        "[  261.273230] Memory failure: 0xe16677: already hardware poisoned\n"
        "[  261.273230] {1}[Hardware Error]:   physical_address: 0x0000000e16677000\n"
        "[  261.273233] {1}[Hardware Error]:   DIMM location: CPU 1 DIMM 5\n"
        "[  262.000000] {2}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 4\n"
        "[  262.000001] {2}[Hardware Error]: event severity: corrected\n"
    )
    events = _parse(text)
    assert events.select("line", "n_lines", "severity", "boot_seconds").rows() == [
        (1, 6, "error", 261.273226),
        (3, 1, "warning", 261.273228),
        (6, 1, "error", 261.27323),
        (9, 2, "warning", 262.0),
    ]
    assert events["message"][0].splitlines()[-1] == "{1}[Hardware Error]:   DIMM location: CPU 1 DIMM 5"
    assert _accounted(text, ParseContext(file="ghes")) == (10, 10)


_JQ_DMESG = """{
  "dmesg": [
    {
      "pri": 6,
      "time": 0,
      "caller": "T1",
      "msg": "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-115) #45-Ubuntu SMP PREEMPT_DYNAMIC"
    },
    {
      "pri": 4,
      "time": 1843.3,
      "caller": "T1234",
      "msg": "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus."
    },
    {
      "pri": 3,
      "time": 1e-06,
      "msg": "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:41943040kB, anon-rss:33554432kB, file-rss:1024kB, shmem-rss:0kB, UID:1000 pgtables:65600kB oom_score_adj:0"
    }
  ]
}
"""


def test_dmesg_json_through_jq_is_read_as_dmesg_json() -> None:
    # `dmesg --json | jq .`: two-space indent, "}," and "{" on lines of their own, times as jq writes numbers
    # (jq 1.6 turned the fixture's "0.000001" into 1e-06 and "0.000000" into 0)
    events = _events_of(_JQ_DMESG)
    assert set(events["source"]) == {"kernel"} and set(events["format"]) == {"dmesg_json"}
    assert events.select("line", "n_lines", "kind", "severity", "boot_seconds", "pid", "xid").rows() == [
        (1, 8, "log", "info", 0.0, None, None),
        (9, 6, "xid", "critical", 1843.3, 4242, 79),
        (15, 7, "oom_kill", "error", 0.000001, 4242, None),
    ]
    assert events["pci_bus"][1] == "0000:3b:00" and events["rss_bytes"][2] == 33554432 * KI
    # a piece of it without the "dmesg": [ line (a large file is read in byte ranges) is still known by its time lines
    piece = "\n".join(_JQ_DMESG.splitlines()[8:20]) + "\n"
    assert set(_events_of(piece)["format"]) == {"dmesg_json"}


@pytest.mark.parametrize(
    ("line", "pid", "process", "seconds"),
    [
        ("INFO: task python3:1234 blocked for more than 120 seconds.", 1234, "python3", 120),
        ("INFO: task kworker/u16:3:2345 blocked for more than 122 seconds.", 2345, "kworker/u16:3", 122),
    ],
)
def test_a_bare_hung_task_head_pasted_alone_is_sniffed_as_kernel(line: str, pid: int, process: str, seconds: int) -> None:
    # no "[", "," or "kernel" in it: the hung-task head must pass the kernel's sniff literals by itself
    assert sources.sniff([line])[0] is kernel.SOURCE
    (event,) = _events_of(line + "\n").to_dicts()
    assert (event["source"], event["kind"], event["severity"], event["pid"], event["process"]) == ("kernel", "log", "error", pid, process)
    assert event["ts"] is None and event["ts_quality"] == "missing"
    assert json.loads(event["attrs"])["blocked_seconds"] == seconds


@pytest.mark.parametrize(
    ("name", "host", "lines"),
    [("kern_log_ghes_memory_recoverable_matrixone_01.log", "mo-srv-128", 11), ("kern_log_ghes_memory_poisoned_mcelog_01.log", "linux-dgwd", 9)],
)
def test_a_firmware_first_memory_error_record_in_syslog_is_one_event(name: str, host: str, lines: int) -> None:
    events = _events(name)
    assert set(events["source"]) == {"kernel"}
    record = events.row(0, named=True)
    assert (record["line"], record["n_lines"], record["severity"], record["host"], record["kind"]) == (1, lines, "error", host, "log")
    assert record["message"].splitlines()[-1].endswith(("DMI handle: 0x0000", "DIMM location: CPU 1 DIMM 5"))
    assert events["n_lines"].sum() == _text(name).count("\n")


def test_the_memory_failure_notice_after_a_firmware_first_record_is_its_own_event() -> None:
    events = _events("kern_log_ghes_memory_poisoned_mcelog_01.log")
    assert events["ts"][0] == _utc(2019, 8, 19, 8, 18, 38, 274652) and events["boot_seconds"][0] == 261.273226
    notice = events.row(1, named=True)
    assert (notice["line"], notice["n_lines"], notice["message"]) == (10, 1, "Memory failure: 0xe16677: already hardware poisoned")


def test_programs_lines_in_dmesg_carry_their_name_and_pid() -> None:
    # what systemd, journald or sshd write to /dev/kmsg shows in dmesg (and in a syslog daemon's kernel lines) as "name[pid]: …"
    events = _events("dmesg_hung_task_khugepaged_mixed_rfc3339_cloud_hypervisor_01.log")
    assert set(events["source"]) == {"kernel"}
    assert events.select("line", "pid", "process").rows()[:6] == [
        (1, 15537, "sshd"), (2, 15537, "sshd"), (3, 15537, "sshd"), (4, 15537, "sshd"), (5, 15479, "sshd"), (6, 1528, "systemd-logind"),
    ]
    hung = events.filter(pl.col("line").is_in([7, 10]))
    assert hung.select("n_lines", "pid", "process", "severity", "format").rows() == [
        (3, 170, "khugepaged", "error", "dmesg_raw"), (3, 170, "khugepaged", "error", "syslog_iso"),
    ]
    assert hung["ts"][1] == _utc(2026, 5, 28, 12, 19, 54, 424175) and hung["host"][1] == "vm-1779970054023451471"
    assert hung["boot_seconds"][0] == 738.894674


def test_a_kernel_line_that_only_looks_bracketed_names_no_program() -> None:
    events = _parse(
        "[    5.000001] IPVS: [rr] scheduler registered.\n"
        "[    5.000002] sd 0:0:0:0: [sda] Attached SCSI disk\n"
        "[    5.000003] traps: python3[4242] general protection fault ip:7f0 sp:7ffd error:0 in libc.so.6[7f0+1000]\n"
    )
    assert events.select("pid", "process").rows() == [(None, None), (None, None), (4242, "python3")]


def test_a_headless_memcg_stats_excerpt_names_the_pod_of_the_memcg() -> None:
    events = _events("dmesg_T_oom_memcg_stats_v2_kind_podman_01.log")
    assert set(events["source"]) == {"kernel"} and "oom_kill" not in set(events["kind"])
    (stats,) = events.filter(pl.col("line") == 2).to_dicts()
    assert stats["pod_uid"] == "304864fc-f2da-4bfb-b9a1-37d0f0f96863"
    assert stats["cgroup"].endswith("/kubelet-kubepods-burstable-pod304864fc_f2da_4bfb_b9a1_37d0f0f96863.slice")
    assert stats["ts"] == _utc(2026, 8, 21, 22, 26, 29) and events["n_lines"].sum() == 24
    # the memory.stat lines under it are one report with it (lines 2-24), the swap line before it one of its own
    assert events.select("line", "n_lines").rows() == [(1, 1), (2, 23)] and stats["message"].split("\n")[1:3] == ["anon 2141384704", "file 0"]


def test_an_xid_report_that_ends_at_the_process_name_names_the_process() -> None:
    # NVIDIA/NVSentinel's syslog-health-monitor parser tests quote such a line ("…: 8, pid=5678, name=idle_timeout")
    events = _parse(
        "NVRM: Xid (PCI:0000:9b:00): 8, pid=5678, name=idle_timeout\n"
        "NVRM: Xid (PCI:0000:66:00): 32, pid=2280636, name=train.3, Channel ID 0000000d intr0 00040000\n"
        "NVRM: Xid (PCI:0000:3f:00): 46\n"
    )
    assert events.select("xid", "pid", "process", "pci_bus").rows() == [
        (8, 5678, "idle_timeout", "0000:9b:00"), (32, 2280636, "train.3", "0000:66:00"), (46, None, None, "0000:3f:00"),
    ]


def test_a_priority_prefix_of_a_programs_line_is_facility_and_level() -> None:
    # `dmesg -r` and /proc/kmsg write "<facility × 8 + level>": a 3.0 kernel's dmesg kept it on a program's line
    events = _events("dmesg_prio_prefix_userspace_udevd_3_0_01.log")
    (udevd,) = events.filter(pl.col("line") == 3).to_dicts()
    assert (udevd["boot_seconds"], udevd["severity"], udevd["pid"], udevd["process"]) == (1.823533, "info", 116, "udevd")
    assert udevd["message"] == "udevd[116]: starting version 173" and udevd["format"] == "dmesg_raw"
    raw = _parse("<6>[    0.000000] Linux version 6.6.4\n<30>[    9.398562] [    T1] systemd[1]: Detected architecture x86-64.\n<12>[   12.0] x\n")
    assert raw.select("severity", "boot_seconds", "process").rows() == [("info", 0.0, None), ("info", 9.398562, "systemd"), ("warning", 12.0, None)]


# --- dmesg --json through `jq -c '.dmesg[]'`, oom_reaper wordings, a headerless memory.stat paste ------------------


def test_jq_compact_dmesg_json_records_are_kernel_lines_with_their_levels() -> None:
    # the util-linux records of dmesg_json_kmsg_caller_levels_util_linux_01.log, re-printed by jq 1.6 -c '.dmesg[]'
    # ("time":0 and "time":1e-06 as jq 1.6 writes them)
    name = "dmesg_json_jq_c_records_01.log"
    assert sources.sniff(head_lines(FOLDER / name))[0] is kernel.SOURCE
    events = _events(name)
    assert set(events["source"]) == {"kernel"} and set(events["format"]) == {"dmesg_json"}
    assert events["severity"].to_list()[:8] == ["critical", "critical", "critical", "error", "warning", "notice", "info", "debug"]
    assert events["boot_seconds"].to_list()[:2] == [0.0, 0.000001] and events["boot_seconds"][11] == 0.201607
    assert events["message"][1].startswith("Command line: initrd=\\ucode.img ") and events["n_lines"].to_list() == [1] * 12
    # --decode names the level; a message's quotes and backslashes are JSON's escapes
    decoded = _events_of('{"fac":"kern","pri":"err","time":412.331902,"msg":"NVRM: Xid (PCI:0000:3b:00): 31, pid=60817, name=python"}\n'
                         '{"pri":4,"time":5e-06,"msg":"x \\"quoted\\" \\\\ back"}\n')
    assert decoded.select("source", "severity", "xid", "pid", "boot_seconds").rows()[0] == ("kernel", "error", 31, 60817, 412.331902)
    assert decoded["message"][1] == 'x "quoted" \\ back'


def test_jq_compact_oom_records_group_into_one_kill() -> None:
    records = [(4, 1234567.12345, "java invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999"),
               (4, 1234567.12348, "CPU: 3 PID: 20117 Comm: java Not tainted 6.1.0-13-amd64 #1 Debian 6.1.55-1"),
               (6, 1234567.1241, ("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,"
                                  "task_memcg=/a,task=java,pid=20117,uid=1000")),
               (3, 1234567.1242, ("Memory cgroup out of memory: Killed process 20117 (java) total-vm:5160444kB, "
                                  "anon-rss:2075124kB, file-rss:12028kB, shmem-rss:0kB, UID:1000 pgtables:4416kB oom_score_adj:999"))]
    text = "".join(json.dumps({"pri": pri, "time": time, "msg": msg}, separators=(",", ":")) + "\n" for pri, time, msg in records)
    events = _events_of(text)
    assert events["kind"].to_list() == ["oom_invoked", "log", "oom_kill"]
    invoked, kill = of_kind(events, "oom_invoked").row(0, named=True), of_kind(events, "oom_kill").row(0, named=True)
    assert (invoked["n_lines"], invoked["process"]) == (2, "java")
    assert (kill["pid"], kill["process"], kill["cgroup"], kill["rss_bytes"], kill["boot_seconds"]) == (20117, "java", "/a", 2075124 * KI, 1234567.1242)


def test_oom_reaper_unable_to_reap_gives_the_victim_and_groups_its_stack() -> None:
    # 4.17+: the victim's state line (its free stack filling five columns, "D13272") and stack follow
    events = _events("dmesg_oom_reaper_unable_to_reap_sched_show_task_01.log")
    assert events["kind"].to_list() == ["oom_kill", "log"]
    failed = events.row(1, named=True)
    assert (failed["pid"], failed["process"], failed["line"], failed["n_lines"], failed["boot_seconds"]) == (7558, "a.out", 2, 25, 664.684801)
    assert json.loads(failed["attrs"]) == {"reap_failed": True}


def test_oom_reaper_unable_to_reap_before_4_17_groups_the_locks_held() -> None:
    # lines of a linux-mm post (Tetsuo Handa, 2016): lockdep's list of the locks held follows
    text = """\
[  494.838382] oom_reaper: unable to reap pid:3163 (a.out)
[  494.847768] 
[  494.847768] Showing all locks held in the system:
[  494.861357] 1 lock held by oom_reaper/59:
[  494.865903]  #0:  (tasklist_lock){.+.+..}, at: [<ffffffff9f0c202d>] debug_show_all_locks+0x3d/0x1a0
[  494.872934] 1 lock held by khugepaged/63:
[  494.877426]  #0:  (&mm->mmap_sem){++++++}, at: [<ffffffff9f1d5a4d>] khugepaged+0x99d/0x1af0
"""
    events = _events_of(text)
    assert (events.height, events["pid"][0], events["process"][0], events["n_lines"][0]) == (1, 3163, "a.out", 7)


def test_stats_paste_ends_at_a_line_of_another_form() -> None:
    text = """\
[Fri Aug 21 22:26:29 2026] Memory cgroup stats for /kubepods.slice/kubepods-pod304864fc_f2da_4bfb_b9a1_37d0f0f96863.slice:
[Fri Aug 21 22:26:29 2026] anon 2141384704
[Fri Aug 21 22:26:29 2026] file 0
[Fri Aug 21 22:26:30 2026] usb 1-1: new high-speed USB device number 2 using xhci_hcd
[Fri Aug 21 22:26:31 2026] anon 4096
"""
    events = _events_of(text)
    assert events.select("line", "n_lines").rows() == [(1, 3), (4, 1), (5, 1)]
    assert events["pod_uid"].to_list()[:2] == ["304864fc-f2da-4bfb-b9a1-37d0f0f96863", None]


def test_kmsg_escapes_are_read_back_in_kmsg_records_only() -> None:
    # /dev/kmsg escapes every backslash ("\x5c") and unprintable byte; util-linux's test capture of an Arch 6.6.4 boot
    events = _events("dmesg_kmsg_escaped_backslash_acpi_util_linux_01.log")
    assert set(events["format"]) == {"dmesg_kmsg"} and events.height == 12
    assert events["message"][1] == (
        "Command line: initrd=\\ucode.img initrd=\\initramfs-linux.img rw cryptdevice=/dev/nvme0n1p3:system:discard root=/dev/mapper/system"
    )
    assert events["message"][6] == "ACPI: \\_SB_.PCI0.GP19.NHI1.PWRS: New power resource" and events["boot_seconds"][6] == 0.367657
    assert (events["n_lines"][11], events["severity"][1]) == (3, "critical")
    # a newline of a multi-line record and UTF-8 read back; bytes that make no UTF-8 text, and dmesg's own lines, as written
    records = _parse("4,2,1000,-;a\\x0ab caf\\xc3\\xa9\n6,3,2000,-;bad \\xc3 x\n[    2.000000] dmesg \\x0a\n")
    assert records["message"].to_list() == ["a\nb café", "bad \\xc3 x", "dmesg \\x0a"]


def test_headless_memcg_oom_dump_from_its_cpu_line_is_one_report() -> None:
    # a journal paste of a 5.15 arm64 Docker memcg OOM that starts at the CPU line (no "invoked oom-killer" header)
    events = _events("journalctl_k_oom_docker_scope_memcg_stats_arm64_01.log")
    scope = "/system.slice/docker-3193584578ea07bf5ee503289e7fe7b69f20e60ad236b2b5ce2274419856f8f3.scope"
    dump = events.row(0, named=True)
    assert (dump["line"], dump["n_lines"], dump["pid"], dump["process"], dump["cgroup"]) == (1, 75, 3974, "apk", scope)
    assert events.filter(pl.col("source") == "kernel")["line"].to_list()[1:] == [76, 77, 78, 79, 80]
    (kill,) = of_kind(events.filter(pl.col("line") == 79), "oom_kill").to_dicts()
    assert (kill["pid"], kill["cgroup"], kill["container_id"], kill["mem_used_bytes"], kill["rss_bytes"]) == (
        3974, scope, scope[21:85], 8192 * KI, 7508 * KI
    )


def test_module_loader_refusing_nvidia_peermem_is_a_warning() -> None:
    events = _events("dmesg_T_peermem_unknown_symbol_gb300_01.log")
    assert events["severity"].to_list() == ["warning"] * 8 and set(events["kind"]) == {"log"}
    assert (events["ts"][0], events["ts"][4]) == (_utc(2026, 9, 8, 17, 16, 2), _utc(2026, 9, 8, 17, 21, 18))


def test_an_application_json_log_with_time_and_msg_is_not_dmesg_json() -> None:
    text = '{"time":1700000000.5,"msg":"started server","level":"info"}\n{"time":1700000001.5,"msg":"request done","level":"info"}\n'
    assert kernel.sniff(text.splitlines()) == 0.0


def test_warning_banner_of_6_19_names_the_task_and_opens_its_dump() -> None:
    # 6.19 moved the task to the banner's end: "WARNING: <file>:<line> at <func>, CPU#0: (udev-worker)/429" (Fedora 7.0)
    events = _events("journalctl_k_warning_v6_19_banner_nouveau_gsp_fc44_01.log")
    warning = events.row(6, named=True)
    assert (warning["line"], warning["n_lines"], warning["severity"], warning["pid"], warning["process"]) == (
        7, 5, "warning", 429, "(udev-worker)"
    )
    assert events.height == 7 and warning["host"] == "fedora"
    # a comm holding "/" keeps it: the pid is what follows the last one
    assert _parse("[    1.000000] WARNING: at foo+0x1/0x2, CPU#3: kworker/15:0/84678\n").select("pid", "process").row(0) == (
        84678, "kworker/15:0"
    )


def test_bug_on_and_its_invalid_opcode_oops_are_critical() -> None:
    # a 6.8 BUG_ON(): "kernel BUG at …!" (KERN_CRIT), another CPU's line, then x86's oops header "invalid opcode: 0000 [#1]"
    events = _events("dmesg_kernel_bug_at_invalid_opcode_cet_vmnet_01.log")
    assert events.filter(pl.col("severity") == "critical").select("line", "n_lines", "pid", "process").rows() == [
        (7, 1, 760, "modprobe"), (9, 8, 760, "modprobe")
    ]
    assert events.height == 9


def test_irq_nobody_cared_is_one_error_report_with_its_dump() -> None:
    events = _events("dmesg_irq_nobody_cared_arm64_rk3568_01.log")
    report = events.row(6, named=True)
    assert (report["line"], report["n_lines"], report["severity"], report["pid"], report["process"]) == (7, 15, "error", 9, "ksoftirqd/0")
    assert events.height == 7


def test_taint_flags_line_of_6_10_and_a_debug_checks_caller_stay_in_the_report() -> None:
    # 6.10+ spells a tainted kernel's flags out under the CPU line ("Tainted: [P]=PROPRIETARY_MODULE, …"): the nvidia
    # driver taints every GPU node's kernel, so this line is in each of their dumps (an OOM header's included)
    events = _events("journalctl_k_bug_smp_processor_id_taint_flags_line_nvidia_modeset_01.log")
    assert events.select("line", "n_lines", "pid", "process", "severity").rows() == [(1, 18, 1183, "Xorg", "critical")]
    oom = _parse(
        "[ 5.000000] python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
        "[ 5.000001] CPU: 3 UID: 0 PID: 77 Comm: python Tainted: P           O       6.12.8 #1\n"
        "[ 5.000002] Tainted: [P]=PROPRIETARY_MODULE, [O]=OOT_MODULE\n"
        "[ 5.000003] Hardware name: QEMU Standard PC (Q35 + ICH9, 2009)\n"
        "[ 5.000004] Call Trace:\n"
    )
    assert oom.select("kind", "n_lines", "pid").rows() == [("oom_invoked", 5, 77)]


def test_rcu_stall_report_is_one_error_event_with_its_backtraces() -> None:
    # each "rcu: INFO: rcu_sched detected stalls on CPUs/tasks:" opens a report though its "rcu: " lines are dump lines
    events = _events("dmesg_rcu_sched_stall_kthread_starved_tetragon_01.log")
    assert events.select("line", "n_lines", "severity").rows() == [(1, 19, "error"), (20, 4, "error")]
    # an expedited stall on a serial console, systemd's status lines before it
    console = _events("dmesg_serial_console_rcu_expedited_stall_lkrg_01.log")
    assert console.filter(pl.col("line") == 5).select("n_lines", "severity", "boot_seconds").row(0) == (16, "error", 27.285351)
    assert console.height == 5


def test_hard_lockup_and_a_warn_message_under_its_banner_join_their_reports() -> None:
    lockup = _events("kern_log_nmi_watchdog_hard_lockup_modules_01.log")
    assert lockup.select("line", "n_lines", "severity", "host").rows() == [(1, 2, "critical", "chi412")]
    # 3.16's WARN() prints its message under the banner, before the module list: one report of 14 lines
    warning = _events("dmesg_warning_message_under_banner_hard_lockup_3_16_01.log")
    assert warning.select("line", "n_lines", "pid", "process").rows() == [(1, 14, 31758, "sqlvpn")]
    # a WARN_ON() without a message: the banner and the module list, nothing between them to take
    bare = _parse("[ 1.0] WARNING: CPU: 0 PID: 1 at a.c:1 f+0x1/0x2\n[ 1.1] Modules linked in:\n[ 1.2] next line\n")
    assert bare.select("line", "n_lines").rows() == [(1, 2), (3, 1)]


def test_vmalloc_failure_report_is_one_warning_with_its_dump() -> None:
    events = _events("dmesg_vmalloc_allocation_failure_kmodloader_armada_01.log")
    report = events.row(1, named=True)
    assert (report["line"], report["n_lines"], report["severity"], report["pid"], report["process"]) == (2, 16, "warning", 1134, "kmodloader")
    assert json.loads(report["attrs"])["gfp_mask"] == "0x14000c0(GFP_KERNEL)"
    # 5.16+ words it "vmalloc error: size …" (syzbot's report, caller stamps included)
    newer = _parse(
        "[ 2564.414170][T20674] syz-executor.5: vmalloc error: size 20480, page order 0, failed to allocate pages, "
        "mode:0xdc0(GFP_KERNEL|__GFP_ZERO), nodemask=(null),cpuset=/,mems_allowed=0-1\n"
        "[ 2564.465408][T20674] CPU: 1 PID: 20674 Comm: syz-executor.5 Not tainted 5.16.0-rc2-next-20211125-syzkaller #0\n"
    )
    assert newer.select("n_lines", "severity", "pid", "process").row(0) == (2, "warning", 20674, "syz-executor.5")


def test_gsp_rpc_history_table_after_an_xid_119_is_one_event() -> None:
    events = _events("journalctl_k_xid119_gsp_rpc_history_table_rtx4070_01.log")
    xid = of_kind(events, "xid").row(0, named=True)
    assert (xid["line"], xid["xid"], xid["pid"], xid["process"], xid["pci_bus"]) == (5, 119, 1671935, "kworker/1:3", "0000:01:00")
    assert xid["gpu_uuid"] == "GPU-02187fd8-22a1-3f71-cd52-22af54f42481"
    assert events.select("line", "n_lines").rows()[-2:] == [(6, 1), (7, 3)]


def test_arm64_serror_is_a_critical_report_with_its_registers() -> None:
    events = _events("dmesg_arm64_serror_interrupt_odroid_m1_01.log")
    assert events.select("line", "n_lines", "severity", "pid", "process").rows()[-1] == (3, 15, "critical", 2930, "Xorg")
    assert events.height == 3


def test_irq_nobody_cared_report_ends_with_its_handlers_and_the_irq_disabled() -> None:
    events = _events("dmesg_irq_nobody_cared_handlers_disabling_rt61pci_2_6_38_01.log")
    assert events.select("line", "n_lines", "severity").rows()[0] == (1, 21, "error")
    assert events["message"][0].endswith("handlers:\n[<ffffffffa0ce0ea0>] (rt61pci_interrupt+0x0/0x90 [rt61pci])\nDisabling IRQ #18")
    assert events["line"].to_list()[1:] == [22, 23, 24, 25]


def test_nvrm_api_mismatch_is_an_error_naming_the_client_and_both_versions() -> None:
    # the client named since the 575 drivers: its pid and name are the event's
    named = _events("dmesg_nvrm_api_mismatch_named_client_01.log").row(1, named=True)
    assert (named["line"], named["n_lines"], named["severity"], named["pid"], named["process"]) == (2, 5, "error", 1005, "kwin_wayland")
    assert json.loads(named["attrs"]) == {"nvidia_driver": "595.80", "nvidia_client_version": "595.84"}
    # the older wording, its lines under a caller stamp; and rsyslog's "#012" for the record's newlines
    for name, driver, client in (
        ("dmesg_caller_nvrm_api_mismatch_continuation_01.log", "550.90.07", "550.100"),
        ("kern_log_nvrm_api_mismatch_rsyslog_012_01.log", "530.30.02", "535.54.03"),
    ):
        event = _events(name).row(0, named=True)
        assert (event["severity"], event["pid"], event["process"]) == ("error", None, None)
        assert json.loads(event["attrs"]) == {"nvidia_driver": driver, "nvidia_client_version": client}


def test_board_serial_line_names_the_gpu_of_the_gpu_at_line_before_it() -> None:
    events = _events("dmesg_T_xid43_31_94_three_gpus_01.log")
    serials = events.filter(pl.col("message").str.contains("Board Serial", literal=True))
    assert serials.select("line", "pci_bus", "gpu_uuid").rows() == [
        (3, "0000:00:05", "GPU-efbdfde9-5798-a6e7-4c46-12518fa15375"),
        (7, "0000:00:07", "GPU-3b6ec030-5adc-1847-e155-79f635584b4e"),
        (10, "0000:00:08", "GPU-c24840ec-8de1-83d5-b126-08000173ae32"),
    ]
    assert [json.loads(attrs)["gpu_serial"] for attrs in serials["attrs"]] == ["1650423013443", "1652923017935", "1652923018111"]


def test_gpu_the_driver_does_not_support_is_an_error_on_its_bus() -> None:
    # one record of 8 lines (open nvidia.ko without GSP), or (2011) a record a line with the bus on the line before
    whole = _events("dmesg_nvrm_unsupported_by_open_nvidia_ko_gsp_01.log").row(0, named=True)
    assert (whole["n_lines"], whole["severity"], whole["pci_bus"]) == (8, "error", "0000:2c:00.0")
    assert json.loads(whole["attrs"]) == {"pci_id": "10de:1d16"}
    split = _events("dmesg_nvrm_unsupported_gpu_old_driver_separate_lines_01.log")
    assert split.filter(pl.col("line").is_in([7, 8])).select("severity", "pci_bus").rows() == [(None, "0000:04:00.0"), ("error", "0000:04:00.0")]


def test_board_serial_zero_names_no_serial_and_os_schedule_is_an_error() -> None:
    events = _events("journalctl_k_xid62_154_109_os_schedule_serial_zero_01.log")
    assert events.filter(pl.col("line") == 3).select("pci_bus", "attrs").row(0) == ("0000:2d:00", None)
    assert events.filter(pl.col("message").str.contains("os_schedule", literal=True))["severity"].to_list() == ["error", "error"]


def test_mlx5_driver_error_names_the_task_that_issued_the_command() -> None:
    events = _events("dmesg_mlx5_cmd_check_rtr2rts_qp_pid_01.log")
    assert events.select("severity", "pid", "process").rows() == [("error", 9993, None), ("error", 9992, None), ("error", 9994, None)]
    # the same prefix after the device's name repeated ("0000:03:00.0:handle_hca_cap:438:(pid 6016): …")
    assert _events("dmesg_mlx5_core_probe_failed_01.log")["pid"].to_list() == [None, None, 6016, None, None, None]


def test_kill_line_a_terminal_wrapped_keeps_no_figure_the_wrap_split() -> None:
    kill = of_kind(_events("dmesg_oom_kill_terminal_padded_wrap_01.log"), "oom_kill").row(0, named=True)
    attrs = json.loads(kill["attrs"])
    assert (kill["pid"], kill["rss_bytes"], attrs["file_rss_kb"]) == (25315, 31451456 * 1024, 74816)
    assert "total_vm_kb" not in attrs and "pgtables_kb" not in attrs


def test_kernel_lines_printed_into_a_program_s_console_line_keep_their_stamp_and_text() -> None:
    """A serial console (u-boot's PolarFire SoC boot log): BusyBox init's output with kernel lines printed into it."""
    name = "dmesg_serial_console_busybox_glued_kernel_lines_riscv_01.log"
    events = _events(name)
    shared = events.filter(pl.col("line").is_in([22, 23, 37, 53]))
    assert shared.select("line", "n_lines", "boot_seconds", "message").rows() == [
        (22, 1, 1.184157, "/etc/init.d/S10mdev: line 21: can't create /proc/sys/kernel/hotplug: nonexiste"),
        (22, 0, 1.331981, "mmc0: mmc_select_hs200 failed, error -74"),
        (23, 1, 1.331981, "nt directory"),
        (37, 1, 1.457755, "Initializing random number generator..."),
        (37, 0, 2.830198, "random: dd: uninitialized urandom read (512 bytes read)"),
        (53, 1, 6.380169, "Starting dropbear sshd:"),
        (53, 0, 11.385619, "random: dropbear: uninitialized urandom read (32 bytes read)"),
    ]
    assert set(events["source"]) == {"kernel"} and set(shared["format"]) == {"dmesg_raw"}
    # a stamp inside a kernel line's own text, or after a level or an indent only, cuts nothing out
    inline = _parse("[    1.000000] a [    2.000000] b\nfoo\n<6>[    3.000000] c\n   [    4.000000] d\n")
    assert inline.select("line", "n_lines", "boot_seconds").rows() == [(1, 1, 1.0), (2, 1, 1.0), (3, 2, 3.0)]


def test_systemd_status_lines_on_a_serial_console_are_systemd_s_and_join_no_kernel_record() -> None:
    events = _events("dmesg_serial_console_systemd_status_lines_riscv_01.log")
    rows = events.filter(pl.col("line").is_in([43, 44, 101, 102, 103, 104, 132]))
    assert rows.select("line", "n_lines", "pid", "process").rows() == [
        (43, 1, 1, "systemd"), (44, 1, None, "systemd"), (101, 1, None, "systemd"), (102, 1, None, "systemd"),
        (103, 1, None, "systemd"), (104, 1, None, "systemd"), (132, 1, None, None), (132, 0, None, None),
    ]
    assert rows.filter(pl.col("line") == 132)["boot_seconds"].to_list() == [12.622153, 15.795564]
    # a report the kernel printed around systemd's lines goes on across them; the status lines are events of their own
    oops = _parse(
        "[   84.437406] BUG: kernel NULL pointer dereference, address: 0000000000000060\n"
        "[   84.437494] CPU: 0 PID: 3470 Comm: systemd-user-ru Not tainted 5.7.10-arch1-1 #1\n"
        "[  OK  ] Started Journal Service.\n"
        "[   84.437578] Call Trace:\n"
        "[   84.437580]  seq_path+0x5/0x10\n"
        "         Starting Flush Journal to Persistent Storage...\n"
        "[   84.437590]  d_path+0x47/0x170\n"
        "[   85.000000] next line\n"
    )
    assert oops.select("line", "n_lines", "severity", "process").rows() == [
        (1, 5, "critical", "systemd-user-ru"), (3, 1, None, "systemd"), (6, 1, None, "systemd"), (8, 1, None, None),
    ]


def test_amdgpu_aca_reports_are_one_event_per_gpu_with_its_pci_bus() -> None:
    events = _events("dmesg_amdgpu_aca_hardware_error_mi300x_01.log")
    assert events.select("line", "n_lines", "severity", "pci_bus").rows() == [
        (1, 1, "error", "0000:1c:00.0"), (2, 6, "error", "0000:42:00.0"), (8, 5, "error", "0000:55:00.0"),
    ]
    assert events["message"][1].splitlines()[-1].endswith("aca entry[00].SYND=0x0000000000000000")


def test_smmu_v3_fault_event_is_one_error_with_its_words_and_decoding() -> None:
    events = _events("dmesg_arm64_smmu_v3_event_hisilicon_01.log")
    assert events.select("line", "n_lines", "severity", "boot_seconds").rows() == [(1, 5, "error", 196.747107)]
    # 6.x decodes the event on a line of its own after the words (a QEMU guest's, from a patch's cover letter)
    decoded = _parse(
        "arm-smmu-v3 arm-smmu-v3.0.auto: event 0x02 received:\n"
        "arm-smmu-v3 arm-smmu-v3.0.auto: 0x0000090000000002\n"
        "arm-smmu-v3 arm-smmu-v3.0.auto: event: C_BAD_STREAMID client: (unassigned sid) sid: 0x900 ssid: 0x0\n"
        "virtio_net virtio1 enp9s0: NETDEV WATCHDOG: CPU: 2: transmit queue 0 timed out 5172 ms\n"
    )
    # (the watchdog's line after it is printed at KERN_CRIT: netdev_crit)
    assert decoded.select("line", "n_lines", "severity").rows() == [(1, 3, "error"), (4, 1, "critical")]


def test_systemd_status_words_and_spinner_are_its_lines_and_a_bracketed_number_is_not() -> None:
    events = _parse(
        "[FAILED] Failed to start Load Kernel Modules.\n"
        "[  *** ] A start job is running for /dev/disk/by-label/data (1min 2s / 1min 30s)\n"
        "[  !!  ] Freezing execution.\n"
        "[      ] no status\n"
    )
    assert events["process"].to_list() == ["systemd", "systemd", "systemd", None]


def test_gsp_boot_attempts_exceeded_is_an_error_like_the_failed_boots_before_it() -> None:
    events = _events("dmesg_reltime_gsp_fmc_boot_attempts_exceeded_580_01.log")
    assert events["severity"].to_list() == [None, None, "error", "error", "error", "error", "error", "error"]
    assert set(events["ts_quality"]) == {"missing"} and json.loads(events["attrs"][0])["nvidia_driver"] == "580.95.05"


def test_a_ring_buffer_read_back_has_no_glued_lines_alone_or_beside_a_console_capture(tmp_path: Path) -> None:
    # dmesg -T reads the ring buffer, which no other program writes into: a stamp inside its message is the message's,
    # whether the file is read alone or in one batch with a raw dmesg file.
    ring = "[Wed Feb 19 06:41:03 2025] usb 1-1: new device\n[Wed Feb 19 06:41:04 2025] echo said: foo [    1.331981] bar baz\n"
    assert rca.parse_text(ring, file="ring").select("line", "n_lines").rows() == [(1, 1), (2, 1)]
    (tmp_path / "logs" / "h").mkdir(parents=True)
    (tmp_path / "logs" / "h" / "a-dmesg-T.log").write_text(ring)
    (tmp_path / "logs" / "h" / "b-dmesg.log").write_text("[    1.000000] Linux version 6.1\n[    2.000000] usb 1-1: new device\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    events = rca.open_store(tmp_path / "store").events().filter(pl.col("file") == "h/a-dmesg-T.log").sort("line")
    assert events.select("line", "n_lines", "message").rows() == [(1, 1, "usb 1-1: new device"), (2, 1, "echo said: foo [    1.331981] bar baz")]


def test_lustre_and_lnet_lines_name_the_printing_task_and_their_errors_are_errors() -> None:
    # a GH200 Lustre client whose writer hung (dmesg -T): libcfs's "<prefix>: <pid>:<ext pid>:(<file>:<line>:<fn>())"
    events = _events("dmesg_T_lustre_lnet_gh200_client_hang_01.log")
    assert events.height == 30 and set(events["kind"]) == {"log"} and set(events["n_lines"]) == {1}
    # the console lines name no task; a lost target is LCONSOLE_WARN, its restoration LCONSOLE_INFO (no level in the text)
    assert events.select("severity", "pid").rows()[:4] == [("error", 4069), ("warning", 128727), ("warning", None), (None, None)]
    # the "Skipped N previous similar messages" line is printed at its message's level under the same prefix
    assert events.row(5, named=True)["severity"] == "error" and events.row(25, named=True)["pid"] is None
    assert events["ts"][0] == _utc(2025, 1, 15, 17, 19, 5) and set(events["ts_quality"]) == {"exact"}
    # through syslog (a hand-made line after aws/aws-parallelcluster#2701's): the same prefix, the same facts
    kern_log = _events_of(
        "Apr 30 14:49:44 ip-10-0-33-4 kernel: [271848.483270] LustreError: 3315:0:(client.c:2116:ptlrpc_expire_one_request()) "
        "Skipped 68 previous similar messages\n"
    )
    assert kern_log.select("source", "severity", "pid", "host").row(0) == ("kernel", "error", 3315, "ip-10-0-33-4")
    # a console error ("LustreError: <message number>: …") names no task
    console = _parse("[    9.000000] LustreError: 11-0: fs-MDT0000-mdc-ffff88: operation mds_connect to node 10.0.0.1@o2ib failed: rc = -16\n")
    assert console.select("severity", "pid").row(0) == ("error", None)


def test_stampless_mlx5_command_failure_then_a_hung_kworker_with_colon_and_slash_in_its_name() -> None:
    # kernel commit 0e2909c6bec9's log (4.19 aarch64): the driver's task, then one hung-task event of the blocked kworker
    events = _events("dmesg_bare_mlx5_cmd_entry_hung_kworker_arm64_01.log")
    assert events.select("line", "n_lines", "severity", "pid", "process").rows() == [
        (1, 1, "error", 3880418, None), (2, 21, "error", 4055883, "kworker/13:2")
    ]
    assert set(events["ts_quality"]) == {"missing"} and set(events["source"]) == {"kernel"}


def test_xid_45_of_590_names_the_xid_that_caused_it() -> None:
    events = _events("journalctl_k_bare_xid45_caused_by_previous_xid_01.log")
    assert events.height == 7 and set(events["kind"]) == {"xid"} and set(events["xid"]) == {45} and set(events["process"]) == {"python3"}
    assert events.select("pci_bus", "pid").rows()[:2] == [("0000:dc:00", 1818990), ("0000:ed:00", 1818992)]
    assert [json.loads(attrs)["previous_xid"] for attrs in events["attrs"]] == [149, 145, 145, 145, 149, 145, 145]


def test_journalctl_without_host_gpf_of_a_ray_worker_is_one_critical_event() -> None:
    events = _events("journalctl_k_no_host_gpf_ray_worker_6_8_01.log")
    assert events.select("n_lines", "severity", "pid", "process", "host").rows() == [(11, "critical", 1089479, "ray::ImplicitFu", None)]
    assert json.loads(events["attrs"][0])["kernel"] == "6.8.0-40-lowlatency"


def test_an_nfs_server_not_responding_is_a_warning() -> None:
    # An arm64 FVP booting from an NFS root (stable@vger.kernel.org, 2024-09-08): the mount's I/O hangs, at KERN_NOTICE.
    events = _events("dmesg_nfs_root_server_not_responding_bad_gso_arm64_01.log")
    assert events.height == 8
    assert events.filter(pl.col("severity").is_not_null()).select("line", "severity", "boot_seconds").rows() == [(8, "warning", 185.330941)]


def test_syslogd_own_lines_of_a_kern_log_keep_their_envelope() -> None:
    # LKML "Re: An oops while running 2.5.65-mm2" (2003-03-20): kern.log whose "last message repeated N times" lines
    # carry no "program:" tag; they are syslogd's, stamped, and the kernel lines around them keep theirs
    events = _events("kern_log_syslogd_last_message_repeated_slab_corruption_2_5_01.log")
    assert events.height == 49 and set(events["host"]) == {"jyro"} and events["ts"].null_count() == 0
    repeated = events.filter(pl.col("line").is_between(2, 11))
    assert sources.sniff(_text("kern_log_syslogd_last_message_repeated_slab_corruption_2_5_01.log").splitlines())[0] == kernel.SOURCE
    assert set(repeated["source"]) == {"kernel"} and set(repeated["process"]) == {"syslogd"}
    assert repeated.select("ts", "message").row(-1) == (_utc(FIXED_MTIME.year, 3, 19, 14, 1, 7), "last message repeated 2 times")
    assert events.filter(pl.col("line") == 17).select("source", "severity").row(0) == ("kernel", "error")
    # "Slab corruption: start=…" (KERN_ERR): the allocator found memory overwritten
    assert events.filter(pl.col("line") == 13).select("message", "severity").row(0) == (
        "Slab corruption: start=ceaa2234, expend=ceaa2377, problemat=ceaa22ac", "error",
    )


def test_syslogd_own_line_above_the_first_tagged_line_of_a_mixed_file_is_read_as_syslog() -> None:
    # A file of kern.log lines and dmesg lines both (lines of the two real samples above): syslogd's tagless line at
    # its top is a syslog line, not a dmesg line without a time.
    kern_log = _text("kern_log_syslogd_last_message_repeated_slab_corruption_2_5_01.log").splitlines()
    dmesg = _text("dmesg_xid_13_01.log").splitlines()
    events = _parse("\n".join([*kern_log[1:3], dmesg[0]]) + "\n", reference_time=FIXED_MTIME)
    assert events.select("line", "host", "process", "ts_quality").rows()[:2] == [
        (1, "jyro", "syslogd", "year_from_mtime"), (2, "jyro", "syslogd", "year_from_mtime")
    ]
    assert events.select("kind", "xid", "ts_quality").row(2) == ("xid", 13, "boot_relative")


def test_global_oom_kill_line_of_a_docker_scope_under_system_slice() -> None:
    # dyrnq/install-docker#14 (2026): `dmesg | grep` of one global OOM kill whose victim ran in a Docker container
    event = _events("dmesg_grep_oom_kill_global_oom_system_slice_docker_scope_01.log").row(0, named=True)
    assert (event["kind"], event["pid"], event["process"]) == ("oom_kill", 7134, "java")
    assert event["container_id"] == "00748bf4e957f82c239a1db8a88579059b7d40c7b5fbd3f43617d31d3f646f12"
    assert json.loads(event["attrs"])["global_oom"] is True


def test_an_amdgpu_hung_job_and_a_gpu_page_fault_name_the_process_whose_they_were() -> None:
    # ROCm/legacy-rocm-build#5997 (6.17, journal): a compute ring's job hung, " Process firefox-bin pid 7401 thread …" under it
    events = _events("journalctl_k_amdgpu_compute_ring_timeout_process_page_fault_01.log")
    hung = events.filter(pl.col("line") == 1).row(0, named=True)
    assert (hung["severity"], hung["pid"], hung["process"], hung["pci_bus"]) == ("error", 7401, "firefox-bin", "0000:03:00.0")
    assert json.loads(hung["attrs"])["ring"] == "comp_1.1.0"
    assert events.filter(pl.col("line") == 2).select("pid", "process").row(0) == (7401, "firefox-bin")
    # a fault of pasid 0 names no process: the line under it is the faulting address
    assert events.filter(pl.col("line") == 7).select("severity", "pid", "process").row(0) == ("error", None, None)
    # ROCm/legacy-rocm-build#5745 (dmesg -T): each "[gfxhub] page fault" head takes the " Process python pid 523991 …" line under it
    faults = _events("dmesg_T_amdgpu_page_fault_process_line_strix_halo_01.log")
    assert faults.filter(pl.col("message").str.contains("page fault")).select("line", "severity", "pid", "process").rows() == [
        (line, "error", 523991, "python") for line in (3, 6, 9)
    ]
    assert faults.filter(pl.col("message").str.contains("in page starting"))["pid"].null_count() == 4
    # ROCm/legacy-rocm-build#1495 (5.13): the process on the report's own line; "for process  pid 0" is none
    inline = _events("kern_log_amdgpu_5x_fault_for_process_inline_01.log")
    assert inline.filter(pl.col("line").is_in([2, 3])).select("line", "pid", "process").rows() == [
        (2, 4905, "rocm-bandwidth-"), (3, None, None)
    ]
    # yshui/picom#1390 (before 6.x): DRM_ERROR's "ring gfx_0.0.0 timeout" and "Process information: process picom pid 37593 …"
    old = _events("kern_log_amdgpu_job_timedout_process_information_01.log")
    assert old.filter(pl.col("line") <= 2).select("severity", "pid", "process").rows() == [("error", 37593, "picom")] * 2


def test_a_kernel_oops_pasted_without_stamps_is_a_kernel_file() -> None:
    # NVIDIA/open-gpu-kernel-modules#1141: a 6.x NULL-pointer oops copied without times, a console line among its lines
    name = "dmesg_bare_oops_null_deref_nv_audio_kmscon_01.log"
    assert sources.sniff(_text(name).splitlines())[0] == kernel.SOURCE
    events = _events(name)
    assert set(events["source"]) == {"kernel"} and events.height == 6
    # the fault's head names the task of the oops right after it (a console line between), the two still events of their own
    assert events.filter(pl.col("severity") == "critical").select("line", "n_lines", "pid", "process").rows() == [
        (1, 1, 576538, "kmscon"), (6, 17, 576538, "kmscon")
    ]
    # an application's log quoting an oops's head line stays the application's
    quoted = ["Running the driver test suite", "BUG: kernel NULL pointer dereference, address: 0000000000000040", "test 3 of 7 failed"]
    assert sources.sniff(quoted)[0] != kernel.SOURCE


def test_a_6x_network_watchdog_is_critical_and_a_down_nvme_controller_a_warning() -> None:
    # csrutil/OpenWrt-NIC-Drivers#11: newer kernels print the watchdog's line with netdev_crit
    watchdog = _events("dmesg_netdev_watchdog_cpu_tx_queue_timeout_r8125_01.log")
    assert watchdog.filter(pl.col("message").str.contains("NETDEV WATCHDOG", literal=True))["severity"].to_list() == ["critical"] * 7
    assert watchdog.filter(pl.col("message").str.contains("rtl_rxtx_empty_cond", literal=True))["severity"].null_count() == 7
    # raspberrypi/linux#6661: "controller is down; will reset: CSTS=0xffffffff" (dev_warn), then the failed read (KERN_ERR)
    nvme = _events("kern_log_nvme_controller_down_csts_ffffffff_01.log")
    assert nvme.filter(pl.col("severity").is_not_null()).select("line", "severity").rows() == [
        (3, "warning"), (9, "warning"), (12, "error"), (13, "error")
    ]


def test_a_fault_s_bug_head_names_the_task_of_the_oops_after_it_and_no_other_bug_does() -> None:
    events = _events("dmesg_delta_oops_null_deref_amdgpu_01.log")
    assert events.select("line", "n_lines", "pid", "process").rows()[:2] == [(1, 4, 2547, "amdgpu_test"), (5, 20, 2547, "amdgpu_test")]
    # a BUG with no oops in reach names no task it did not print
    far = "\n".join(
        ["[  1.000000] BUG: kernel NULL pointer dereference, address: 0000000000000090"]
        + [f"[  1.{n:06d}] usb 1-{n}: new device" for n in range(1, 10)]
        + ["[  2.000000] Oops: 0000 [#1] SMP PTI", "[  2.000001] CPU: 7 PID: 2547 Comm: amdgpu_test Not tainted 6.8.0 #1"]
    )
    assert _parse(far).filter(pl.col("line") == 1).select("pid", "process").rows() == [(None, None)]


def test_an_nvme_controller_that_never_came_ready_is_an_error() -> None:
    # linux-nvme/nvme-cli#151: nvme_wait_ready() gives up with dev_err, and the driver removes the controller
    events = _events("dmesg_nvme_io_timeout_removed_after_probe_failure_01.log")
    assert events.filter(pl.col("message").str.contains("Device not ready", literal=True))["severity"].to_list() == ["error"] * 4


def test_ext4_errors_and_read_only_remounts_are_critical_and_name_the_task() -> None:
    # bit-team/backintime#2568: ext4 prints its errors and the remount at KERN_CRIT; the rate limiter's count is a warning
    rsync = _events("dmesg_ext4_aborted_journal_read_only_rsync_callbacks_suppressed_01.log")
    assert rsync.select("line", "severity", "process").rows()[:2] == [(1, "critical", "rsync"), (2, "critical", None)]
    assert rsync.filter(pl.col("line") == 7).select("severity", "process").rows() == [("warning", None)]
    # Joshua-Riek/ubuntu-rockchip#1060: a comm holds colons and spaces
    rockchip = _events("kern_log_ext4_aborted_journal_comm_with_spaces_rockchip_01.log")
    assert rockchip.filter(pl.col("line").is_between(2, 5))["process"].to_list() == [
        "rs:main Q:Reg", "journal-offline", "systemd-journal", ".NET TP Worker"
    ]
    # coolsnowwolf/lede#6147: jbd2 aborting the journal (KERN_ERR) before the ext4 error
    lede = _events("dmesg_blk_update_request_journal_abort_ext4_read_only_01.log")
    assert lede.filter(pl.col("line").is_between(3, 6))["severity"].to_list() == ["error", "error", "critical", "critical"]
    # a file's error names the task before its path, whatever the path's text
    path = "EXT4-fs error (device nvme0n1p1): ext4_find_entry:1455: inode #2: comm a: path x: y: reading directory lblock 0"
    assert _parse(f"[  1.000000] {path}")["process"].to_list() == ["a"]


def test_a_syslogd_broadcast_of_a_kernel_line_is_timed_and_hosted_by_its_head() -> None:
    # madMAx43v3r/chia-plotter#535: "Message from syslogd@plot-071 at Jun 17 13:06:42 ..." over " kernel:[405108.698255] …"
    name = "kern_log_syslogd_broadcast_soft_lockup_chia_plot_01.log"
    assert sources.sniff(_text(name).splitlines())[0] == kernel.SOURCE
    chia = _events(name)
    assert chia.select("line", "n_lines", "ts", "ts_quality", "host", "severity", "pid", "process", "boot_seconds").rows() == [
        (2, 1, _utc(2026, 6, 17, 13, 6, 42), "year_from_mtime", "plot-071", "critical", 29632, "chia_plot", 405108.698255)
    ]
    # the head counts as a skipped line: every line of the file is accounted for
    assert _accounted(_text(name), ParseContext(file=name)) == (2, 2)
    # FMInference/FlexLLMGen#86: the heads without their "Message from syslogd@… at "
    python = _events("kern_log_syslogd_broadcast_soft_lockup_python_no_sender_01.log")
    assert python.select("line", "ts", "pid", "process").rows()[-1] == (8, _utc(2026, 3, 24, 11, 14, 29), 7565, "python")
    # sysklogd writes the time as a ctime, with the year
    dated = _events_of("Message from syslogd@node7 at Tue Mar 16 10:12:45 2010 ...\n kernel:Kernel panic - not syncing: Fatal exception")
    assert dated.select("source", "line", "ts", "ts_quality", "host", "severity").rows() == [
        ("kernel", 2, _utc(2010, 3, 16, 10, 12, 45), "exact", "node7", "critical")
    ]
