"""Support bundles: nvidia-bug-report split into sections, sosreport and cluster-info dump layouts.

The bug report is the committed fixture tests/data/bundles/nvidia-bug-report.log, laid out
as nvidia-bug-report.sh writes it (underscore separators, ``*** FILE`` / ``*** ls:``
headers, command echo lines, the kernel-message scan's per-log blocks). Sosreports and
cluster-info dumps are built here in ``tmp_path`` with the files sos and kubectl write.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import bundles
from rca.sources import lines_frame
from tests.conftest import fixture_path

BUG_REPORT = fixture_path("nvidia-bug-report.log")
SECTIONS = {  # section → (source, events)
    "prologue": ("pipeline", 11),
    "etc/issue": ("pipeline", 1),
    "var/log/nvidia-installer.log": ("pipeline", 0),
    "journalctl -b -0 SYSLOG_IDENTIFIER=systemd-coredump -g nvidia": ("syslog", 1),
    "kernel-messages": ("pipeline", 0),
    "kernel-messages/var/log/kern.log": ("kernel", 2),
    "kernel-messages/journalctl -b -0": ("kernel", 1),
    "dmesg": ("kernel", 6),
    "nvidia-smi --query": ("nvidia_smi", 1),
    "nvidia-smi --query --unit": ("nvidia_smi", 0),
}
OOM_KILL = (
    "[86123.447390] Memory cgroup out of memory: Killed process 41877 (python3) total-vm:48213420kB, anon-rss:31998812kB, "
    "file-rss:75264kB, shmem-rss:0kB, UID:1000 pgtables:63112kB oom_score_adj:999\n"
)


def _store(root: Path, store: Path) -> tuple[dict[str, dict], pl.DataFrame]:
    rca.ingest(root, store, workers=1)
    opened = rca.open_store(store)
    return {row["path"]: row for row in opened.manifest().to_dicts()}, opened.events()


def _balanced(row: dict) -> bool:
    return row["lines"] == row["events"] - row["derived_events"] + row["merged_lines"] + row["skipped_lines"]


def _lines_with(text: str, needle: str) -> list[int]:
    return [number for number, line in enumerate(text.split("\n"), start=1) if needle in line]


# --- nvidia-bug-report ------------------------------------------------------------------


def test_bug_report_sections_are_parsed_by_their_own_source(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    shutil.copy(BUG_REPORT, tmp_path / "logs")
    rows, events = _store(tmp_path / "logs", tmp_path / "store")
    text = BUG_REPORT.read_text()
    own = rows.pop("nvidia-bug-report.log")
    assert (own["source"], own["format"], own["host"], own["status"]) == ("bundle", "nvidia-bug-report", "gpu-worker-3", "ok")
    assert json.loads(own["skipped_reasons"]) == {"section header": own["lines"]}
    assert {path: (row["source"], row["events"]) for path, row in rows.items()} == {
        f"nvidia-bug-report.log!/{name}": expected for name, expected in SECTIONS.items()
    }
    assert all(_balanced(row) for row in [own, *rows.values()])
    assert own["lines"] + sum(row["lines"] for row in rows.values()) == text.count("\n")
    assert set(events["host"]) == {"gpu-worker-3"}  # from the prologue's uname line
    # line numbers point into the report itself
    xids = events.filter(pl.col("kind") == "xid").sort("line")
    assert xids.select("file", "line", "xid", "pid", "pci_bus").rows() == [
        ("nvidia-bug-report.log!/kernel-messages/var/log/kern.log", _lines_with(text, "NVRM: Xid")[0], 79, 28411, "0000:3b:00"),
        ("nvidia-bug-report.log!/kernel-messages/journalctl -b -0", _lines_with(text, "NVRM: Xid")[1], 79, 28411, "0000:3b:00"),
        ("nvidia-bug-report.log!/dmesg", _lines_with(text, "NVRM: Xid")[2], 79, 28411, "0000:3b:00"),
    ]
    # yearless syslog lines take the year of the report's Date line, not of the file's mtime
    assert xids["ts"][0] == datetime(2024, 6, 14, 9, 58, 39, tzinfo=UTC)
    kill = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["file"], kill["line"], kill["pid"], kill["ts_quality"]) == (
        "nvidia-bug-report.log!/dmesg", _lines_with(text, "Killed process 28502")[0], 28502, "boot_relative",
    )
    sample = events.filter(pl.col("kind") == "gpu_sample").row(0, named=True)
    assert (sample["file"], sample["line"], sample["ts"], sample["gpu_uuid"], sample["mem_used_bytes"], sample["mem_total_bytes"]) == (
        "nvidia-bug-report.log!/nvidia-smi --query", _lines_with(text, "GPU 00000000:3B:00.0")[0],
        datetime(2024, 6, 14, 10, 2, 19, tzinfo=UTC), "GPU-5b8e4c2a-9f1d-4e3b-a7c6-0d2e1f3a4b5c", 80123 << 20, 81920 << 20,
    )


def test_a_gzipped_bug_report_in_a_tarball_keeps_both_names_in_its_provenance(tmp_path: Path) -> None:
    # nvidia-bug-report.sh appends one gzip member per section: the .gz is many gzip streams in a row
    text = BUG_REPORT.read_bytes()
    cuts = [match.start() for match in re.finditer(rb"^_{44}$", text, re.MULTILINE)] + [len(text)]
    report = b"".join(gzip.compress(text[start:end]) for start, end in zip(cuts, cuts[1:]))
    (tmp_path / "logs" / "gpu-worker-3").mkdir(parents=True)
    (tmp_path / "report.log.gz").write_bytes(report)
    with tarfile.open(tmp_path / "logs" / "gpu-worker-3" / "support.tgz", "w:gz") as tar:
        tar.add(tmp_path / "report.log.gz", arcname="nvidia-bug-report.log.gz")
    rows, events = _store(tmp_path / "logs", tmp_path / "store")
    prefix = "gpu-worker-3/support.tgz!/nvidia-bug-report.log.gz"
    assert rows[prefix]["source"] == "bundle" and rows[prefix]["status"] == "ok"
    assert {path.removeprefix(prefix + "!/"): row["events"] for path, row in rows.items() if path.startswith(prefix + "!/")} == {
        name: count for name, (_, count) in SECTIONS.items()
    }
    dmesg = events.filter(pl.col("file") == f"{prefix}!/dmesg")
    assert dmesg["line"].to_list() == _lines_with(text.decode(), "] ")[-6:]


def test_an_unchanged_bug_report_is_not_read_again(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    shutil.copy(BUG_REPORT, tmp_path / "logs")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    again = rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    assert again.changes == {"unchanged": 1 + len(SECTIONS)} and again.summary["events"] == 0


SECTION_HEADERS = st.sampled_from(["*** /var/log/Xorg.0.log", "dmesg:", "/usr/bin/lspci -nn", "journalctl -b -1 _COMM=Xorg", "Skipping: lsusb output"])
BODY_LINES = st.lists(st.sampled_from(["", "[    5.211402] nvidia: loading out-of-tree module taints kernel.", "00:00.0 Host bridge [0600]", "x"]), max_size=6)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(SECTION_HEADERS, BODY_LINES), min_size=1, max_size=8), st.lists(st.integers(1, 60), max_size=4))
def test_bug_report_sections_do_not_depend_on_batch_boundaries(sections: list[tuple[str, list[str]]], cuts: list[int]) -> None:
    lines = ["_" * 44, "", "Start of NVIDIA bug report log file.  Please include this file, along", "uname: Linux n1 6.5.0 #1 SMP"]
    for header, body in sections:
        lines += ["_" * 44, "", header, *(["*** ls: -rw-r--r-- 1 root root 1 /var/log/Xorg.0.log"] if header.startswith("***") else []), *body]
    frame = lines_frame("\n".join(lines) + "\n")

    def assignment(boundaries: list[int]) -> tuple[list[tuple[str, int]], int]:
        splitter = bundles.splitter_for(bundles.BUG_REPORT, "UTC")
        owned, headers = [], 0
        edges = [0, *sorted({min(cut, frame.height) for cut in boundaries}), frame.height]
        for start, end in zip(edges, edges[1:]):
            pieces, count = splitter.split(frame.slice(start, end - start))
            headers += count
            owned += [(piece.section.name, line) for piece in pieces for line in piece.lines["line"]]
        return owned, headers

    whole, headers = assignment([])
    assert assignment(cuts) == (whole, headers)
    assert len(whole) + headers == frame.height
    assert [line for _, line in whole] == sorted(line for _, line in whole)


# --- sosreport -----------------------------------------------------------------------------


SOS_NAME = "sosreport-gpu-node-07-01234567-2024-06-14-xkqhmva"


def _sosreport(parent: Path, hostname: str | None = "gpu-node-07.cluster.local") -> Path:
    """A sosreport folder with the files sos writes where it writes them."""
    top = parent / SOS_NAME
    for folder in ("sos_commands/host", "sos_commands/kernel", "sos_commands/logs", "var/log"):
        (top / folder).mkdir(parents=True)
    if hostname:
        (top / "sos_commands/host/hostname").write_text(hostname + "\n")
        (top / "hostname").symlink_to("sos_commands/host/hostname")
    (top / "sos_commands/kernel/dmesg").write_text(
        "[    0.000000] Linux version 5.14.0-362.8.1.el9_3.x86_64 (mockbuild@x86-vm-07.build.eng.bos.redhat.com)\n"
        "[86123.447201] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999\n" + OOM_KILL
    )
    (top / "var/log/messages").write_text(
        "Jun 14 09:58:39 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=28411, name=python3, GPU has fallen off the bus.\n"
        "Jun 14 09:58:40 gpu-node-07 systemd[1]: kubelet.service: Main process exited, code=killed, status=9/KILL\n"
    )
    (top / "sos_commands/logs/journalctl_--no-pager").write_text(
        'Jun 14 09:58:41 gpu-node-07 kubelet[2345]: I0614 09:58:41.123456    2345 kubelet.go:2404] "SyncLoop (probe)" '
        'probe="readiness" status="ready" pod="ml/trainer-0"\n'
    )
    return top


@pytest.mark.parametrize("layout", ["folder holding it", "the report itself", "tar.xz"])
def test_sosreport_events_carry_the_host_its_hostname_file_names(tmp_path: Path, layout: str) -> None:
    top = _sosreport(tmp_path / "cases")
    if layout == "folder holding it":
        root = tmp_path / "cases"
    elif layout == "the report itself":
        root = top
    else:
        root = tmp_path / f"{SOS_NAME}.tar.xz"
        with tarfile.open(root, "w:xz") as tar:
            tar.add(top, arcname=SOS_NAME)  # as sos writes it: tarfile.add, each folder sorted
    rows, events = _store(root, tmp_path / "store")
    recognised = events.filter(pl.col("kind") != "log").with_columns(pl.col("file").str.split(SOS_NAME + "/").list.last())
    assert sorted(recognised.select("file", "kind", "host", "pid").rows()) == [
        ("sos_commands/kernel/dmesg", "oom_invoked", "gpu-node-07.cluster.local", None),
        ("sos_commands/kernel/dmesg", "oom_kill", "gpu-node-07.cluster.local", 41877),
        ("var/log/messages", "process_killed", "gpu-node-07.cluster.local", None),  # systemd: kubelet.service SIGKILLed
        ("var/log/messages", "xid", "gpu-node-07.cluster.local", 28411),
    ]
    assert set(events["host"]) == {"gpu-node-07.cluster.local"}
    if layout == "tar.xz":
        link = rows[f"{root.resolve()}!/{SOS_NAME}/hostname"]
        assert (link["status"], link["error"]) == ("skipped", "symbolic link to sos_commands/host/hostname; links are not followed")
    assert all(_balanced(row) for row in rows.values())


def test_a_rewritten_sosreport_tarball_keeps_the_host_of_its_unchanged_hostname_file(tmp_path: Path) -> None:
    top = _sosreport(tmp_path / "cases")
    archive = tmp_path / "logs" / f"{SOS_NAME}.tar.xz"
    archive.parent.mkdir()
    for extra in ("", "Jun 14 09:59:02 gpu-node-07 systemd[1]: Started kubelet.service - kubelet: The Kubernetes Node Agent.\n"):
        with open(top / "var/log/messages", "a") as handle:
            handle.write(extra)
        with tarfile.open(archive, "w:xz") as tar:
            tar.add(top, arcname=SOS_NAME)
        report = rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    # the tarball and var/log/messages are read again; the top-level hostname link is reported again, as skipped entries are
    assert report.changes == {"rewritten": 2, "unchanged": 3, "failed": 1}
    events = rca.open_store(tmp_path / "store").events()
    assert events.filter(pl.col("file").str.ends_with("var/log/messages")).height == 3
    assert set(events["host"]) == {"gpu-node-07.cluster.local"}


def test_a_sosreport_without_its_hostname_file_is_named_by_its_folder(tmp_path: Path) -> None:
    _sosreport(tmp_path / "cases", hostname=None)
    _, events = _store(tmp_path / "cases", tmp_path / "store")
    assert set(events["host"]) == {"gpu-node-07"}


@pytest.mark.parametrize(("folder", "host"), [
    ("sosreport-gpu-node-07-01234567-2024-06-14-xkqhmva", "gpu-node-07"),
    ("sosreport-sat64test-123456-2019-03-07-obvjctv", "sat64test"),
    ("sosreport-db-2-2023-11-02-abcdefg", "db-2"),
    ("sosreport-web01-20180101120000", "web01"),
    ("sos_commands", None),
])
def test_host_from_a_sosreport_folder_name(folder: str, host: str | None) -> None:
    assert bundles.host_from_sos_folder(folder) == host


# --- kubectl cluster-info dump -------------------------------------------------------------


def _cluster_dump(top: Path) -> Path:
    """A ``kubectl cluster-info dump --output-directory`` folder: typed lists written kind first, and pod logs."""
    (top / "ml" / "trainer-0").mkdir(parents=True)
    nodes = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "4817301"},
             "items": [{"metadata": {"name": "gpu-node-07", "uid": "5f0c9d2e-1a3b-4c5d-8e7f-9a0b1c2d3e4f"}}]}
    events = {"kind": "EventList", "apiVersion": "v1", "metadata": {"resourceVersion": "4817301"}, "items": [{
        "metadata": {"name": "trainer-0.17d8a5c0e1f2a3b4", "namespace": "ml", "uid": "d1f0c2a4-5b6e-4c7d-8e9f-0a1b2c3d4e5f",
                     "resourceVersion": "4817299", "creationTimestamp": "2024-06-14T09:58:42Z"},
        "involvedObject": {"kind": "Pod", "namespace": "ml", "name": "trainer-0", "uid": "9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a",
                           "apiVersion": "v1", "resourceVersion": "4817002", "fieldPath": "spec.containers{trainer}"},
        "reason": "BackOff", "message": "Back-off restarting failed container trainer in pod trainer-0_ml(9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a)",
        "source": {"component": "kubelet", "host": "gpu-node-07"}, "firstTimestamp": "2024-06-14T09:58:42Z",
        "lastTimestamp": "2024-06-14T09:58:42Z", "count": 1, "type": "Warning", "eventTime": None,
        "reportingComponent": "kubelet", "reportingInstance": "gpu-node-07",
    }]}
    (top / "nodes.json").write_text(json.dumps(nodes, indent=4) + "\n")
    (top / "ml" / "events.json").write_text(json.dumps(events, indent=4) + "\n")
    oom = fixture_path("pytorch_cuda_oom_new_01.log").read_text().split("\n")[0]
    (top / "ml" / "trainer-0" / "logs.txt").write_text(
        "==== START logs for container fetch-data of pod ml/trainer-0 ====\n"
        "downloading shard 17/64 from s3://datasets/imagenet\n"
        "==== END logs for container fetch-data of pod ml/trainer-0 ====\n"
        "==== START logs for container trainer of pod ml/trainer-0 ====\n"
        f"{oom}\n"
        "==== END logs for container trainer of pod ml/trainer-0 ====\n"
    )
    return top


@pytest.mark.parametrize("packed", [False, True])
def test_cluster_dump_pod_logs_carry_pod_namespace_and_container(tmp_path: Path, packed: bool) -> None:
    top = _cluster_dump(tmp_path / "logs" / "cluster-dump")
    if packed:
        with tarfile.open(tmp_path / "logs" / "cluster-dump.tgz", "w:gz") as tar:
            tar.add(top, arcname="cluster-dump")
        shutil.rmtree(top)
    rows, events = _store(tmp_path / "logs", tmp_path / "store")
    prefix = "cluster-dump.tgz!/cluster-dump" if packed else "cluster-dump"
    logs = f"{prefix}/ml/trainer-0/logs.txt"
    assert events.filter(pl.col("file").str.starts_with(logs)).select("file", "line", "kind", "host", "pod", "namespace", "container").rows() == [
        (f"{logs}!/fetch-data", 2, "log", None, "trainer-0", "ml", "fetch-data"),
        (f"{logs}!/trainer", 5, "cuda_oom", None, "trainer-0", "ml", "trainer"),
    ]
    assert (rows[logs]["source"], rows[logs]["lines"], rows[logs]["host"]) == ("bundle", 4, None)
    # the dump's folder is no host: its events keep the node their content names
    backoff = events.filter(pl.col("file") == f"{prefix}/ml/events.json").row(0, named=True)
    assert (backoff["host"], backoff["pod"], backoff["namespace"], backoff["container"]) == ("gpu-node-07", "trainer-0", "ml", "trainer")
    assert rows[f"{prefix}/nodes.json"]["host"] is None
    assert "cluster-dump" not in set(events["host"].drop_nulls())
    assert all(_balanced(row) for row in rows.values())


# --- kubelet's container logs -----------------------------------------------------------------

_POD_DIR = "var/log/pods/research_llama-ft-0_3f1c9a52-8d1e-4b7a-9c3e-2f5d6a7b8c9d/trainer"
_LINK = "var/log/containers/llama-ft-0_research_trainer-7b41c2e9d0f38a5561c4e2b7a9d03f18e6c5b4a3928170f6e5d4c3b2a1908f7e.log"
_CRI_LOG = (
    "2024-06-14T09:58:30.123456789Z stderr F [rank0]: Traceback (most recent call last):\n"
    '2024-06-14T09:58:30.123456790Z stderr F [rank0]:   File "/workspace/train.py", line 88, in <module>\n'
    "2024-06-14T09:58:30.123456791Z stderr F [rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
    "GPU 0 has a total capacity of 79.10 GiB of which 1.06 GiB is free.\n"
)


@pytest.mark.parametrize("packed", [False, True])
def test_container_logs_carry_the_pod_namespace_and_container_their_path_names(tmp_path: Path, packed: bool) -> None:
    node = tmp_path / "logs" / "gpu-worker-3"
    (node / _POD_DIR).mkdir(parents=True)
    (node / _POD_DIR / "0.log").write_text("2024-06-14T08:01:12.000000001Z stdout F starting\n")
    (node / _POD_DIR / "1.log").write_text(_CRI_LOG)
    (node / _LINK).parent.mkdir(parents=True)
    if packed:  # tar keeps kubelet's link a link, to where the log lay on the node
        (node / _LINK).symlink_to(f"/{_POD_DIR}/1.log")
    else:  # a copy that followed the link
        (node / _LINK).write_text(_CRI_LOG)
    (node / "var/log/containers/dcgm-exporter-x7k2p_gpu-operator_exporter-" f"{'a' * 64}.log").write_text(
        "2024-06-14T09:58:31.000000000Z stderr F level=info msg=\"scraping\"\n"
    )
    docker = node / "var/lib/docker/containers" / ("e" * 64)
    docker.mkdir(parents=True)
    (docker / f"{'e' * 64}-json.log").write_text('{"log":"Killed\\n","stream":"stderr","time":"2024-06-14T09:58:39.5Z"}\n')
    if packed:
        with tarfile.open(tmp_path / "logs" / "gpu-worker-3.tgz", "w:gz") as tar:
            tar.add(node, arcname="gpu-worker-3")
        shutil.rmtree(node)
    rows, events = _store(tmp_path / "logs", tmp_path / "store")
    oom = events.filter(pl.col("kind") == "cuda_oom").row(0, named=True)
    assert (oom["pod"], oom["namespace"], oom["container"], oom["host"]) == ("llama-ft-0", "research", "trainer", "gpu-worker-3")
    exporter = events.filter(pl.col("message").str.contains("scraping")).row(0, named=True)
    assert (exporter["pod"], exporter["namespace"], exporter["container"]) == ("dcgm-exporter-x7k2p", "gpu-operator", "exporter")
    assert events.filter(pl.col("pod") == "llama-ft-0").height == 2  # the restart's start line and the OOM, each once
    killed = events.filter(pl.col("kind") == "process_killed").row(0, named=True)
    assert (killed["container_id"], killed["pod"]) == ("e" * 64, None)
    link = next(row for path, row in rows.items() if path.endswith(_LINK))
    assert link["status"] == "skipped"
    assert ("links are not followed" if packed else "the same log as") in link["error"]
    assert all(_balanced(row) for row in rows.values() if row["status"] == "ok")


@pytest.mark.parametrize(
    ("path", "scope"),
    [
        (f"n/{_POD_DIR}/3.log.20240614-095839.gz", {"pod": "llama-ft-0", "namespace": "research", "container": "trainer"}),
        (f"n/{_LINK}", {"pod": "llama-ft-0", "namespace": "research", "container": "trainer", "container_id": _LINK[-68:-4]}),
        (f"n/var/lib/docker/containers/{'c' * 64}/{'c' * 64}-json.log.1", {"container_id": "c" * 64}),
        (f"n/var/lib/docker/containers/{'c' * 64}/{'d' * 64}-json.log", {}),
        ("n/var/log/pods/not_a_pod/trainer/0.log", {}),
        ("n/var/log/containers/trainer.log", {}),
    ],
)
def test_container_log_scope_from_the_path(path: str, scope: dict[str, str]) -> None:
    assert bundles.container_log_scope(path) == scope


def test_text_kinds_are_sniffed_from_content_not_names() -> None:
    assert bundles.text_kind(BUG_REPORT.read_text()[:4000]) == bundles.BUG_REPORT
    assert bundles.text_kind("==== START logs for container app of pod default/web-0 ====\nhello\n") == bundles.POD_LOGS
    assert bundles.text_kind('{\n    "kind": "PodList",\n    "apiVersion": "v1",\n') == bundles.DUMP_DOCUMENT
    assert bundles.text_kind('{\n    "apiVersion": "v1",\n    "items": [],\n    "kind": "List"\n}\n') is None  # kubectl get -o json
    assert bundles.text_kind("____________________________________________\n\nsome other report\n") is None


# --- the EKS log collector (eks-log-collector.sh) -----------------------------------------------

EKS_INSTANCES = ("i-0123456789abcdef0", "i-0fedcba9876543210")
_AWS_NODE_POD = "kube-system_aws-node-x7k2p_5c2d8e1f-3a4b-4c6d-9e8f-0a1b2c3d4e5f"
_AWS_NODE_LINK = f"aws-node-x7k2p_kube-system_aws-node-{'b' * 64}.log"
_AWS_NODE_LOG = '2024-06-14T09:58:20.000000001Z stderr F {"level":"error","msg":"Failed to check API server connectivity"}\n'


def _eks_name(instance: str) -> str:
    return f"eks_{instance}_2024-06-14_1000-UTC_0.7.6"


def _eks_collector(top: Path, instance: str) -> Path:
    """A collector's folder as eks-log-collector.sh fills it: logs, and snapshots of commands and configurations."""
    files = {
        "system/instance-id.txt": f"{instance}\n",
        "system/ps.txt": "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\nroot           1  0.0  0.0 171580 13148 ?        Ss   09:00   0:03 /usr/lib/systemd/systemd\n",
        "system/top.txt": "top - 10:00:01 up  1:00,  0 users,  load average: 0.52, 0.58, 0.59\n",
        "kernel/uname.txt": "Linux ip-192-168-7-21.ec2.internal 5.10.217-205.860.amzn2.x86_64 #1 SMP x86_64 GNU/Linux\n",
        "kernel/dmesg.current": "[86123.447201] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999\n"
        + OOM_KILL,
        "kubelet/kubelet.log": 'Jun 14 09:58:41 ip-192-168-7-21.ec2.internal kubelet[2345]: I0614 09:58:41.123456    2345 kubelet.go:2404] "SyncLoop (probe)" '
        'probe="readiness" status="ready" pod="ml/trainer-0"\n',
        "kubelet/kubeconfig.yaml": "apiVersion: v1\nclusters:\n- cluster:\n    server: https://0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com\n",
        "kubelet/config.json": '{"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1"}\n',
        "networking/iptables-save.txt": '*nat\n:PREROUTING ACCEPT [0:0]\n-A KUBE-SERVICES -m comment --comment "kube-system/kube-dns:dns" -j KUBE-SVC-TCOU7JCQXEZGVUNU\n',
        "sysctls/sysctl_all.txt": "vm.oom_kill_allocating_task = 0\nvm.panic_on_oom = 0\n",
        "var_log/messages": "Jun 14 09:58:39 ip-192-168-7-21 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=28411, name=python3, GPU has fallen off the bus.\n",
        f"var_log/{_AWS_NODE_POD}/aws-node/0.log": _AWS_NODE_LOG,
        f"var_log/{_AWS_NODE_LINK}": _AWS_NODE_LOG,  # the collector copies kubelet's link too, dereferenced
    }
    for relative, text in files.items():
        (top / relative).parent.mkdir(parents=True, exist_ok=True)
        (top / relative).write_text(text)
    return top


def _eks_tarball(top: Path, archive: Path) -> None:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(top, arcname=".")  # tar --directory=/tmp/eks-log-collector . : the members lie at the top, ./kernel/…


@pytest.mark.parametrize("packed", [False, True])
def test_eks_log_collector_files_carry_their_instance_and_pod(tmp_path: Path, packed: bool) -> None:
    logs = tmp_path / "logs"
    for instance in EKS_INSTANCES:
        top = _eks_collector(logs / _eks_name(instance), instance)
        if packed:
            _eks_tarball(top, logs / f"{_eks_name(instance)}.tar.gz")
            shutil.rmtree(top)
    rows, events = _store(logs, tmp_path / "store")
    for instance in EKS_INSTANCES:
        prefix = f"{_eks_name(instance)}.tar.gz!/" if packed else f"{_eks_name(instance)}/"
        mine = events.filter(pl.col("file").str.starts_with(prefix))
        assert set(mine["host"]) == {instance}
        assert sorted(mine.filter(pl.col("kind") != "log").select("file", "kind").rows()) == [
            (f"{prefix}kernel/dmesg.current", "oom_invoked"),
            (f"{prefix}kernel/dmesg.current", "oom_kill"),
            (f"{prefix}var_log/messages", "xid"),
        ]
        kubelet = mine.filter(pl.col("file") == f"{prefix}kubelet/kubelet.log").row(0, named=True)
        assert (kubelet["source"], kubelet["process"]) == ("kubelet", "kubelet")
        aws_node = mine.filter(pl.col("file") == f"{prefix}var_log/{_AWS_NODE_POD}/aws-node/0.log").row(0, named=True)
        assert (aws_node["pod"], aws_node["namespace"], aws_node["container"]) == ("aws-node-x7k2p", "kube-system", "aws-node")
        link = rows[f"{prefix}var_log/{_AWS_NODE_LINK}"]  # the pod's log again, in a folder or a tarball: read once
        assert (link["status"], link["error"], link["events"], link["parts"]) == (
            "skipped",
            f"the same log as {prefix}var_log/{_AWS_NODE_POD}/aws-node/0.log (a copy of kubelet's link to it)",
            0,
            [],
        )
        assert mine.filter(pl.col("file") == f"{prefix}var_log/{_AWS_NODE_LINK}").is_empty()
        for snapshot in (
            "system/ps.txt",
            "system/top.txt",
            "kernel/uname.txt",
            "kubelet/kubeconfig.yaml",
            "kubelet/config.json",
            "networking/iptables-save.txt",
            "sysctls/sysctl_all.txt",
            "system/instance-id.txt",
        ):
            assert rows[prefix + snapshot]["status"] == "ignored", snapshot
    assert all(_balanced(row) for row in rows.values() if row["status"] == "ok")


def test_an_eks_tarball_read_again_keeps_its_link_copy_skipped(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    name = _eks_name(EKS_INSTANCES[0])
    logs.mkdir()
    _eks_tarball(_eks_collector(tmp_path / "unpacked", EKS_INSTANCES[0]), logs / f"{name}.tar.gz")
    first_rows, first_events = _store(logs, tmp_path / "store")
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    rows, events = _store(logs, tmp_path / "store")
    assert set(report.changes) == {"unchanged"}
    assert rows == first_rows
    assert events.height == first_events.height
    assert rows[f"{name}.tar.gz!/var_log/{_AWS_NODE_LINK}"]["status"] == "skipped"


def test_an_eks_collector_unpacked_as_the_folder_to_read_names_its_instance(tmp_path: Path) -> None:
    top = _eks_collector(tmp_path / "eks__2024-06-14_1000-UTC_0.7.6", EKS_INSTANCES[0])  # the name lacks the id the script did not find
    rows, events = _store(top, tmp_path / "store")
    assert set(events["host"]) == {EKS_INSTANCES[0]}  # from system/instance-id.txt
    assert (rows["system/ps.txt"]["status"], rows["kubelet/kubeconfig.yaml"]["status"]) == ("ignored", "ignored")
    assert rows["kernel/dmesg.current"]["status"] == "ok"


@pytest.mark.parametrize(
    ("name", "host"),
    [
        ("eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6.tar.gz", "i-0123456789abcdef0"),
        ("eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6", "i-0123456789abcdef0"),
        ("eks__2024-05-01_1200-UTC_0.7.9.tar.gz", None),
        ("eks_notes.tar.gz", None),
    ],
)
def test_host_from_an_eks_collector_name(name: str, host: str | None) -> None:
    assert bundles.collector_host(name) == host


@pytest.mark.parametrize(
    ("path", "within", "ignored"),
    [
        ("./system/ps.txt", "eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6.tar.gz", True),
        ("./kernel/dmesg.current", "eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6.tar.gz", False),
        ("./containerd/containerd-log.txt", "eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6.tar.gz", False),
        ("./containerd/containerd-images.txt", "eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6.tar.gz", True),
        ("./docker/docker.log", "eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6.tar.gz", False),
        ("./nodeadm/nodeadm-run.log", "eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6.tar.gz", False),
        ("./networking/configure-multicard-interfaces.txt", "eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6.tar.gz", False),
        ("node-a/eks_i-0123456789abcdef0_2024-05-01_1200-UTC_0.7.6/storage/mounts.txt", "", True),
        ("node-a/system/ps.txt", "", False),  # outside a collector, a folder named system is anyone's
    ],
)
def test_which_eks_collector_files_are_not_logs(path: str, within: str, ignored: bool) -> None:
    assert (bundles.not_a_log(path, within=within) is not None) == ignored


# --- OpenShift must-gather ----------------------------------------------------------------------

_GATHER_IMAGE = "must-gather.local.5343129742034946316/quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-0f3c1e2d"


@pytest.mark.parametrize("packed", [False, True])
def test_must_gather_pod_logs_carry_their_pod_and_node_files_their_node(tmp_path: Path, packed: bool) -> None:
    top = tmp_path / "logs" / _GATHER_IMAGE
    pod_logs = top / "namespaces/ml/pods/trainer-0/trainer/trainer/logs"
    node = top / "nodes/gpu-node-07"
    for folder in (pod_logs, node, top / "cluster-scoped-resources/core/nodes"):
        folder.mkdir(parents=True)
    (pod_logs / "current.log").write_text("2024-06-14T09:58:44.000000001Z starting epoch 3\n")
    (pod_logs / "previous.log").write_text(_CRI_LOG.replace(" stderr F", ""))  # oc logs --timestamps: no stream, no tag
    (node / "dmesg").write_text(OOM_KILL)
    (node / "gpu-node-07_logs_kubelet.gz").write_bytes(
        gzip.compress(
            b'Jun 14 09:58:41 gpu-node-07 kubenswrapper[2345]: I0614 09:58:41.123456    2345 kubelet.go:2404] "SyncLoop (probe)" pod="ml/trainer-0"\n'
        )
    )
    (top / "cluster-scoped-resources/core/nodes/gpu-node-07.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-node-07\n"
    )
    if packed:
        with tarfile.open(tmp_path / "logs" / "must-gather.tar.gz", "w:gz") as tar:
            tar.add(tmp_path / "logs" / "must-gather.local.5343129742034946316", arcname="must-gather.local.5343129742034946316")
        shutil.rmtree(tmp_path / "logs" / "must-gather.local.5343129742034946316")
    rows, events = _store(tmp_path / "logs", tmp_path / "store")
    prefix = f"must-gather.tar.gz!/{_GATHER_IMAGE}" if packed else _GATHER_IMAGE
    pods = events.filter(pl.col("file").str.contains("/pods/")).sort("file", "line")
    assert set(pods["source"]) == {"pipeline"}
    assert pods.select("file", "kind", "host", "pod", "namespace", "container").rows() == [
        (f"{prefix}/namespaces/ml/pods/trainer-0/trainer/trainer/logs/current.log", "log", None, "trainer-0", "ml", "trainer"),
        # the traceback is one event
        (f"{prefix}/namespaces/ml/pods/trainer-0/trainer/trainer/logs/previous.log", "cuda_oom", None, "trainer-0", "ml", "trainer"),
    ]
    on_node = events.filter(pl.col("file").str.contains("/nodes/gpu-node-07/"))
    assert sorted(on_node.select("kind", "host").rows()) == [("log", "gpu-node-07"), ("oom_kill", "gpu-node-07")]
    assert rows[f"{prefix}/cluster-scoped-resources/core/nodes/gpu-node-07.yaml"]["host"] is None
    assert not any(host.startswith(("must-gather", "quay-io")) for host in events["host"].drop_nulls())
    assert all(_balanced(row) for row in rows.values() if row["status"] == "ok")


def test_an_eks_collector_unpacked_under_another_name_is_known_by_its_instance_file(tmp_path: Path) -> None:
    _eks_collector(tmp_path / "logs" / "node-logs" / "extracted", EKS_INSTANCES[1])
    _, events = _store(tmp_path / "logs", tmp_path / "store")
    assert set(events["host"]) == {EKS_INSTANCES[1]}
