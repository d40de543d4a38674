"""The k8s source: kubectl tables, describe output, status fields and object documents.

Real samples (tests/data/k8s/kubectl_*_01.txt / _02.txt, from kubernetes, openshift and
Greenstand issues) are checked against the facts in SOURCES.md; the hand-made fixtures
reproduce kubectl's layouts (tabwriter-aligned tables, ``-o json`` / ``-o yaml``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.sources import k8s
from rca.sources._base import ParseContext, Parsed, lines_frame
from tests.conftest import DATA, attrs_of, head_lines, sniffed

FOLDER = DATA / "k8s"
KI = 1024


def _text(name: str) -> str:
    return (FOLDER / name).read_text(encoding="utf-8")


def _events(name: str) -> pl.DataFrame:
    return rca.parse_text(_text(name), file=name)


def _parsed(text: str) -> tuple[pl.DataFrame, Parsed]:
    lines = lines_frame(text).filter(pl.col("text").str.strip_chars() != "")
    return lines, k8s.parse(lines, ParseContext(file="t"))


def _assert_accounted(text: str) -> dict[str, int]:
    lines, parsed = _parsed(text)
    if lines.height == 0:
        return {}
    covered = int(parsed.events["n_lines"].sum()) if parsed.events.height else 0
    assert covered + sum(parsed.skipped.values()) == lines.height
    return parsed.skipped


# --- real samples -------------------------------------------------------------------------


def test_describe_node_system_oom_events() -> None:
    events = _events("kubectl_describe_node_events_systemoom_01.txt")
    assert events.height == 6
    oom = events.filter(pl.col("kind") == "oom_kill")
    assert oom.height == 3
    assert oom["message"].unique().to_list() == ["System OOM encountered"]
    assert oom["pid"].null_count() == 3  # the old message names no victim
    assert events["host"].unique().to_list() == ["node1"]
    assert events["ts"].null_count() == 6 and events["ts_quality"].unique().to_list() == ["missing"]
    assert {a["age"] for a in attrs_of(events)} == {"17m"}
    assert sorted(events.filter(pl.col("kind") == "log")["message"].str.extract(r"^(\w+)", 1).to_list()) == ["Node", "Starting", "Updated"]
    assert _assert_accounted(_text("kubectl_describe_node_events_systemoom_01.txt")) == {
        "section header": 1,
        "table header": 1,
        "table border": 1,
    }


def test_describe_pod_evicted_joins_the_wrapped_message() -> None:
    events = _events("kubectl_describe_pod_evicted_01.txt")
    eviction = events.filter(pl.col("kind") == "eviction")
    assert eviction.height == 1
    row = eviction.row(0, named=True)
    assert (row["pod"], row["namespace"], row["container"], row["host"]) == (
        "treetracker-pgpool-598947fd8f-vzvkq",
        "pgpool",
        "treetracker-pgpool",
        "cloud-services-node-pool-8ld4g",
    )
    assert row["mem_used_bytes"] == 1275700 * KI
    assert row["mem_requested_bytes"] == 0  # "which e" / "xceeds its request of 0." read as one sentence
    assert row["ts"] is None and row["ts_quality"] == "missing"
    attrs = attrs_of(eviction)[0]
    assert (attrs["status"], attrs["reason"], attrs["resource"], attrs["start_time"]) == (
        "Failed",
        "Evicted",
        "memory",
        "Sat, 21 Aug 2021 10:38:36 +0800",
    )
    assert "Controlled By:  ReplicaSet/treetracker-pgpool-598947fd8f" in row["message"]
    container = events.filter(pl.col("container") == "treetracker-pgpool", pl.col("kind") == "log")
    assert container["message"][0].startswith("  treetracker-pgpool:\n    Image:      pgpool/pgpool:4.2.2")


def test_describe_state_oomkilled_keeps_exit_code_zero() -> None:
    events = _events("kubectl_describe_pod_oomkilled_exit0_01.txt")
    oom = events.filter(pl.col("kind") == "container_oomkilled")
    assert oom.height == 1
    row = oom.row(0, named=True)
    assert row["exit_code"] == 0
    assert row["ts"] == datetime(2025, 4, 29, 6, 10, 51, tzinfo=UTC)
    assert row["ts_raw"] == "Tue, 29 Apr 2025 14:10:51 +0800"
    assert (row["n_lines"], row["line"]) == (5, 1)
    assert attrs_of(oom)[0] == {
        "state_field": "State",
        "state": "Terminated",
        "reason": "OOMKilled",
        "started": "Tue, 29 Apr 2025 13:43:32 +0800",
    }
    rest = events.filter(pl.col("kind") == "log").row(0, named=True)
    assert (rest["line"], rest["n_lines"]) == (6, 2)


def test_oc_get_pods_and_yq_status_fields() -> None:
    events = _events("kubectl_get_pod_status_evicted_02.txt")
    pods = events.filter(pl.col("format") == "get_pods")
    assert pods.height == 5
    assert pods["namespace"].unique().to_list() == ["ci"]
    statuses = [a["status"] for a in attrs_of(pods)]
    assert statuses.count("ContainerStatusUnknown") == 4 and statuses.count("Running") == 1
    assert pods.filter(pl.col("pod").str.ends_with("bg8d8")).height == 1
    assert attrs_of(pods)[0]["restarts"] == "2 (7h40m ago)"
    eviction = events.filter(pl.col("kind") == "eviction").row(0, named=True)
    assert eviction["container"] == "dptp-controller-manager"
    assert eviction["mem_used_bytes"] == 48458972 * KI
    assert eviction["mem_requested_bytes"] == 15 * KI**3
    attrs = attrs_of(events.filter(pl.col("kind") == "eviction"))[0]
    assert (attrs["threshold_bytes"], attrs["available_bytes"]) == (100 * KI * KI, 87608 * KI)
    assert _assert_accounted(_text("kubectl_get_pod_status_evicted_02.txt")) == {"shell prompt": 3, "table header": 1}


def test_describe_events_reads_the_event_not_a_pod_named_after_it() -> None:
    """`kubectl describe events`: the Event's own name ("<pod>.<hex>") is no pod; its Involved Object is."""
    events = _events("kubectl_describe_events_pod_backoff_microk8s_01.txt")
    described = events.filter(pl.col("format") == "describe_event")
    event = described.row(0, named=True)
    assert event["line"] == 2
    assert event["ts"] == datetime(2024, 11, 30, 4, 12, 13, tzinfo=UTC)
    assert (event["ts_quality"], event["severity"], event["kind"]) == ("exact", "info", "log")
    assert (event["pod"], event["namespace"], event["container"]) == ("app-task2-799677b7cb-92zvd", "app", "nginx")
    assert event["pod_uid"] == "fd125a56-c68b-43a9-bb5a-c7b31efbc6cf"
    assert event["host"] == "microk8s"
    assert event["message"] == 'Back-off pulling image "nginx:1.28"'
    (attrs,) = attrs_of(described)
    assert (attrs["reason"], attrs["event_type"], attrs["count"], attrs["source"]) == ("BackOff", "Normal", 44, "kubelet")
    assert attrs["object"] == "pod/app-task2-799677b7cb-92zvd"
    assert "app-task2-799677b7cb-92zvd.180ca3233f0a18a1" not in set(events["pod"].drop_nulls())


def test_describe_events_of_an_oom_on_a_node() -> None:
    text = """Name:             gpu-node-7.17f3c2a1b2c3d4e5
Namespace:        default
Labels:           <none>
Annotations:      <none>
API Version:      v1
Count:            1
Event Time:       <nil>
First Timestamp:  2024-06-14T10:02:11Z
Involved Object:
  Kind:  Node
  Name:  gpu-node-7
  UID:   gpu-node-7
Kind:    Event
Last Timestamp:  2024-06-14T10:02:11Z
Message:         System OOM encountered, victim process: python, pid: 41234
Metadata:
  Creation Timestamp:  2024-06-14T10:02:11Z
  Resource Version:    1401908
Reason:                SystemOOM
Reporting Component:   kubelet
Reporting Instance:    gpu-node-7
Source:
  Component:  kubelet
  Host:       gpu-node-7
Type:         Warning
Events:       <none>
"""
    event = rca.parse_text(text, file="t.txt").filter(pl.col("format") == "describe_event").row(0, named=True)
    assert (event["kind"], event["severity"], event["host"], event["pod"]) == ("oom_kill", "warning", "gpu-node-7", None)
    assert (event["pid"], event["process"]) == (41234, "python")
    assert event["ts"] == datetime(2024, 6, 14, 10, 2, 11, tzinfo=UTC)


def test_failed_sync_event_names_the_container_that_failed_to_start() -> None:
    events = _events("kubectl_describe_pod_events_tabs_failedsync_start_container_01.txt")
    failed_sync = events.filter(pl.col("message").str.starts_with("Error syncing pod"))
    assert failed_sync["line"].to_list() == [3, 6]
    assert set(failed_sync["container"]) == {"web"}
    assert set(failed_sync["host"]) == {"rootfs-dev"}
    assert set(failed_sync["severity"]) == {"warning"}


# --- hand-made: tables -----------------------------------------------------------------------


def test_get_events_all_namespaces() -> None:
    events = _events("kubectl_get_events_all_namespaces.txt")
    assert events["kind"].to_list() == ["oom_kill", "log", "log", "eviction", "memory_pressure", "eviction", "log", "oom_kill"]
    oom_killing, system_oom = events.filter(pl.col("kind") == "oom_kill").rows(named=True)
    assert (oom_killing["pid"], oom_killing["process"], oom_killing["host"]) == (28411, "python3", "gpu-worker-3")
    assert (system_oom["pid"], system_oom["process"]) == (31337, "python3")
    evicted = events.row(5, named=True)
    assert (evicted["pod"], evicted["namespace"], evicted["container"]) == ("trainer-7d9f8c6b5-x2x9q", "ml", "trainer")
    assert (evicted["mem_used_bytes"], evicted["mem_requested_bytes"]) == (14395616 * KI, 8 * KI**3)
    assert evicted["message"].startswith("The node was low on resource: memory.")
    assert events.row(6, named=True)["container"] == "trainer"
    assert events.row(2, named=True)["container"] == "loader"
    assert events["severity"].to_list()[:2] == ["warning", "info"]
    assert [a["age"] for a in attrs_of(events)][-1] == "4m40s"
    assert events["ts"].null_count() == events.height


def test_get_events_old_format() -> None:
    events = _events("kubectl_get_events_old_format.txt")
    assert events["kind"].to_list() == ["log", "eviction", "eviction", "log"]
    assert events["host"].unique().to_list() == ["minikube"]
    assert events["pod"].to_list() == ["memhog-5b6b8c7d9-qx2lt", None, "memhog-5b6b8c7d9-qx2lt", "memhog-5b6b8c7d9-qx2lt"]
    assert events["container"].to_list() == ["memhog", None, "memhog", "memhog"]
    evicted = events.row(2, named=True)
    assert (evicted["mem_used_bytes"], evicted["mem_requested_bytes"]) == (1536204 * KI, 256 * KI * KI)
    assert [a["count"] for a in attrs_of(events)] == [1, 1, 1, 1]


def test_describe_node_conditions_give_a_timed_memory_pressure() -> None:
    events = _events("kubectl_describe_node_memory_pressure.txt")
    pressure = events.filter(pl.col("kind") == "memory_pressure")
    assert pressure["format"].to_list() == ["describe_conditions", "describe_events"]
    condition = pressure.row(0, named=True)
    assert condition["ts"] == datetime(2024, 6, 14, 10, 2, 11, tzinfo=UTC)
    assert condition["ts_quality"] == "exact"
    assert attrs_of(pressure)[0]["reason"] == "KubeletHasInsufficientMemory"
    assert events["host"].unique().to_list() == ["gpu-worker-3"]
    assert events["pod"].null_count() == events.height
    assert events.filter(pl.col("format") == "describe_conditions").height == 4
    assert attrs_of(pressure)[1]["age"] == "3m20s (x2 over 3m21s)"


# --- hand-made: documents --------------------------------------------------------------------


def test_event_list_json() -> None:
    text = _text("kubectl_get_events_json.json")
    events = _events("kubectl_get_events_json.json")
    assert events["kind"].to_list() == ["oom_kill", "log", "eviction", "oom_kill"]
    assert events["line"].to_list() == [4, 34, 67, 96]
    assert events["ts"].to_list() == [
        datetime(2024, 6, 14, 9, 58, 39, tzinfo=UTC),
        datetime(2024, 6, 14, 10, 1, 12, tzinfo=UTC),
        datetime(2024, 6, 14, 10, 2, 11, 402990, tzinfo=UTC),
        datetime(2024, 6, 14, 9, 58, 39, tzinfo=UTC),
    ]
    assert events["host"].unique().to_list() == ["gpu-worker-3"]
    backoff, evicted = events.row(1, named=True), events.row(2, named=True)
    assert (backoff["pod"], backoff["container"], backoff["pod_uid"]) == (
        "data-loader-6c8b7f9d4-k7p2m",
        "loader",
        "0b7d4c55-8e2f-4a61-9c3e-5f2a1d7b8c90",
    )
    assert (evicted["pod"], evicted["namespace"], evicted["container"], evicted["mem_used_bytes"]) == (
        "trainer-7d9f8c6b5-x2x9q",
        "ml",
        "trainer",
        14395616 * KI,
    )
    assert events.row(0, named=True)["pid"] == 28411
    assert attrs_of(events)[1]["count"] == 6
    skipped = _assert_accounted(text)
    assert skipped == {"document envelope": 9}


def test_pod_yaml_oomkilled_last_state() -> None:
    events = _events("kubectl_get_pod_oomkilled.yaml")
    assert events.height == 1
    row = events.row(0, named=True)
    assert row["kind"] == "container_oomkilled"
    assert (row["pod"], row["namespace"], row["container"], row["exit_code"], row["host"]) == (
        "data-loader-6c8b7f9d4-k7p2m",
        "ml",
        "loader",
        137,
        "gpu-worker-3",
    )
    assert row["container_id"] == "9f3e1b2c4d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c"
    assert row["ts"] == datetime(2024, 6, 14, 9, 58, 39, tzinfo=UTC)
    assert attrs_of(events)[0]["state_field"] == "lastState"
    assert row["n_lines"] == len(_text("kubectl_get_pod_oomkilled.yaml").splitlines())


def test_pod_list_json_with_eviction_and_two_oom_states() -> None:
    pods = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "kind": "Pod",
                "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1"},
                "spec": {"nodeName": "n1"},
                "status": {
                    "phase": "Failed",
                    "reason": "Evicted",
                    "message": "The node was low on resource: memory. Container web was using 900Mi, which exceeds its request of 100Mi.",
                },
            },
            {
                "kind": "Pod",
                "metadata": {"name": "job-2", "namespace": "batch"},
                "status": {
                    "containerStatuses": [
                        {
                            "name": "a",
                            "state": {"terminated": {"reason": "OOMKilled", "exitCode": 0, "finishedAt": "2024-01-02T03:04:05Z"}},
                        },
                        {"name": "b", "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}},
                    ]
                },
            },
            {"kind": "Pod", "metadata": {"name": "fine-3", "namespace": "batch"}, "status": {"phase": "Running"}},
        ],
    }
    text = json.dumps(pods, indent=4)
    events = rca.parse_text(text)
    assert events["kind"].to_list() == ["eviction", "container_oomkilled", "container_oomkilled", "log"]
    assert events["container"].to_list() == ["web", "a", "b", None]
    assert events["exit_code"].to_list() == [None, 0, 137, None]
    assert events["mem_used_bytes"][0] == 900 * KI * KI
    assert events["n_lines"][2] == 0  # a second row from the same pod's lines
    assert events["message"][3] == "Pod batch/fine-3 phase=Running"
    _assert_accounted(text)


def test_broken_json_falls_back_to_text() -> None:
    text = '{\n    "apiVersion": "v1",\n    "items": [\n        {"kind": "Event", "reason": "Evicted"\n'
    events = rca.parse_text(text, format="k8s")
    assert events.height == 4 and events["kind"].unique().to_list() == ["log"]
    _assert_accounted(text)


# --- sniffing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(FOLDER.iterdir()), ids=lambda p: p.name)
def test_every_k8s_fixture_is_sniffed_as_k8s(path: Path) -> None:
    source, _ = sniffed(path)
    assert source is not None and source.name == "k8s"


OTHERS = sorted(p for p in DATA.glob("*/*") if p.is_file() and p.parent.name not in ("k8s", "real_logs"))


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_fixtures_are_not_k8s(path: Path) -> None:
    assert k8s.sniff(head_lines(path)) == 0.0


# --- robustness -------------------------------------------------------------------------------



REAL_LINES = [line for path in sorted(FOLDER.iterdir()) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    _assert_accounted(text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(REAL_LINES), min_size=1, max_size=14), st.integers(0, 120), st.text(max_size=12))
def test_spliced_real_lines_never_raise(lines: list[str], cut: int, junk: str) -> None:
    spliced = [line[:cut] + junk if i % 4 == 1 else line for i, line in enumerate(lines)]
    _assert_accounted("\n".join(spliced))


def test_describe_pod_with_state_blocks_and_events() -> None:
    events = _events("kubectl_describe_pod_evicted_events.txt")
    assert events.filter(pl.col("kind") == "eviction")["format"].to_list() == ["describe", "describe_events"]
    states = events.filter(pl.col("format") == "describe_state")
    assert states["kind"].to_list() == ["log", "container_oomkilled"]  # exit 137 alone is not an OOM kill
    assert states["exit_code"].to_list() == [137, 137]
    assert states["ts"].to_list() == [None, datetime(2024, 6, 14, 9, 55, 40, tzinfo=UTC)]  # Go's zero time is "unset"
    assert [a["state_field"] for a in attrs_of(states)] == ["State", "Last State"]
    assert events["pod"].unique().to_list() == ["trainer-7d9f8c6b5-x2x9q"]
    assert events["host"].unique().to_list() == ["gpu-worker-3"]
    assert states["container"].unique().to_list() == ["trainer"]
    assert events.filter(pl.col("format") == "describe_events")["container"].to_list() == ["trainer", "trainer"]


def test_yq_status_yaml_fragment() -> None:
    text = (
        "message: 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 87608Ki. "
        "Container dptp-controller-manager was using 48458972Ki, request is 15Gi, has larger consumption of memory. '\n"
        "phase: Failed\n"
        "reason: Evicted\n"
    )
    assert k8s.sniff(text.splitlines()) > 0
    events = rca.parse_text(text)
    # The pod-level fields of one status: one eviction event of all three lines.
    assert events["kind"].to_list() == ["eviction"]
    assert events["n_lines"].to_list() == [3]
    assert events["container"][0] == "dptp-controller-manager"
    assert events["mem_requested_bytes"][0] == 15 * KI**3


def test_event_list_yaml_locates_each_item() -> None:
    text = """apiVersion: v1
items:
- apiVersion: v1
  involvedObject:
    kind: Node
    name: gpu-worker-3
  kind: Event
  lastTimestamp: "2024-06-14T09:58:39Z"
  message: 'System OOM encountered, victim process: python3, pid: 31337'
  reason: SystemOOM
  type: Warning
- apiVersion: v1
  involvedObject:
    kind: Pod
    name: trainer-7d9f8c6b5-x2x9q
    namespace: ml
  kind: Event
  lastTimestamp: "2024-06-14T10:02:11Z"
  message: 'The node was low on resource: memory. Container trainer was using 14395616Ki, which exceeds its request of 8Gi.'
  reason: Evicted
  type: Warning
kind: List
metadata:
  resourceVersion: ""
"""
    events = rca.parse_text(text)
    assert events["format"].unique().to_list() == ["event_yaml"]
    assert events["kind"].to_list() == ["oom_kill", "eviction"]
    assert events["line"].to_list() == [3, 12]
    assert events["n_lines"].to_list() == [9, 10]
    assert (events["pid"][0], events["host"][0]) == (31337, "gpu-worker-3")
    assert (events["pod"][1], events["container"][1], events["mem_requested_bytes"][1]) == ("trainer-7d9f8c6b5-x2x9q", "trainer", 8 * KI**3)
    assert _assert_accounted(text) == {"document envelope": 5}


def test_compact_json_stream_one_event_per_line() -> None:
    rows = [
        {
            "kind": "Event",
            "reason": "OOMKilling",
            "type": "Warning",
            "lastTimestamp": "2024-06-14T09:58:39Z",
            "involvedObject": {"kind": "Node", "name": "n1"},
            "message": "Out of memory: Killed process 4242 (python)",
        },
        {
            "kind": "Event",
            "reason": "Pulled",
            "type": "Normal",
            "eventTime": "2024-06-14T09:59:00.000001Z",
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "d"},
            "message": "ok",
        },
    ]
    text = "\n".join(json.dumps(row) for row in rows) + "\n"
    events = rca.parse_text(text)
    assert events["line"].to_list() == [1, 2]
    assert events["kind"].to_list() == ["oom_kill", "log"]
    assert (events["pid"][0], events["process"][0], events["host"][0]) == (4242, "python", "n1")
    assert events["ts"][1] == datetime(2024, 6, 14, 9, 59, 0, 1, tzinfo=UTC)


def test_an_ephemeral_storage_eviction_gives_no_memory_figures() -> None:
    evicted = _events("kubectl_describe_pod_evicted_ephemeral_storage_01.txt").filter(pl.col("kind") == "eviction").row(0, named=True)
    assert (evicted["container"], evicted["mem_used_bytes"], evicted["mem_requested_bytes"]) == ("calico-node", None, None)
    assert json.loads(evicted["attrs"])["resource"] == "ephemeral-storage"


def test_an_oomkilled_init_container_takes_its_container_id_from_its_block() -> None:
    killed = _events("kubectl_describe_pod_init_oomkilled_01.txt").filter(pl.col("kind") == "container_oomkilled")
    assert killed.filter(pl.col("format") == "describe_state").select("container", "exit_code", "container_id").rows() == [
        ("init", 137, "567f505a638e0b42e23d275a5a1b75f40ac6b706490ada9ea7901219b54e43c8")
    ]
    # The `get pods` row above it shows the same kill as "Init:OOMKilled".
    assert killed.filter(pl.col("format") == "get_pods")["line"].to_list() == [2]


def test_eviction_threshold_met_names_the_resource_reclaimed() -> None:
    events = _events("kubectl_describe_node_eviction_threshold_met_01.txt")
    assert events.filter(pl.col("kind") != "log")["kind"].to_list() == ["eviction", "memory_pressure"]
    assert attrs_of(events.filter(pl.col("kind") == "eviction"))[0]["resource"] == "memory"


def test_a_control_character_in_yaml_keeps_the_lines_as_log_events() -> None:
    """PyYAML's reader refuses control characters before parsing starts (found by the splicing test)."""
    events = rca.parse_text("kind: Pod\n\x1f\nEvents:\n", file="pod.yaml")
    assert events.select("kind", "message").rows() == [("log", "kind: Pod"), ("log", "\x1f"), ("log", "Events:")]


def test_an_event_whose_message_is_the_kernel_kill_line_is_an_oom_kill_with_the_victim_s_rss() -> None:
    # node-problem-detector forwards the kernel's line under its own reason (OOMKilling, or a custom
    # rule's PodOOMKilling); rows of a describe node Events table as kubectl aligns them.
    text = (
        "Events:\n"
        "  Type     Reason         Age   From            Message\n"
        "  ----     ------         ----  ----            -------\n"
        "  Warning  PodOOMKilling  2m    kernel-monitor  Memory cgroup out of memory: Kill process 25169 (hyperkube) score 2109 or sacrifice child\n"
        "  Warning  OOMKilling     1m    kernel-monitor  Out of memory: Killed process 3103923 (stress-ng-vm) total-vm:15791416kB, "
        "anon-rss:14369596kB, file-rss:4kB, shmem-rss:36kB, UID:0 pgtables:28184kB oom_score_adj:1000\n"
    )
    kills = rca.parse_text(text, file="describe-node.txt").filter(pl.col("kind") == "oom_kill")
    assert kills.select("pid", "process", "rss_bytes").rows() == [(25169, "hyperkube", None), (3103923, "stress-ng-vm", 14369596 * 1024)]


def test_a_last_state_oomkilled_does_not_take_the_current_container_id() -> None:
    text = (
        "Containers:\n  trainer:\n    Container ID:   containerd://" + "1" * 64 + "\n    State:          Running\n"
        "      Started:      Mon, 01 Jan 2024 10:00:00 +0000\n    Last State:     Terminated\n      Reason:       OOMKilled\n"
        "      Exit Code:    137\n      Finished:     Mon, 01 Jan 2024 09:59:00 +0000\n"
    )
    killed = rca.parse_text(text, file="describe.txt").filter(pl.col("kind") == "container_oomkilled")
    assert killed.select("container", "exit_code", "container_id").rows() == [("trainer", 137, None)]


@pytest.mark.parametrize("wrapper", ["verb", "type"])
def test_watch_streams_wrap_the_event_they_report(wrapper: str) -> None:
    """eventrouter's {"verb": …, "event": {…}} and `kubectl get events --watch --output-watch-events`' {"type": …, "object": {…}}."""
    event = {
        "kind": "Event", "metadata": {"name": "node-1.17683ea4fced9353", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "node-1"}, "reason": "OOMKilling", "type": "Warning",
        "message": "Memory cgroup out of memory: Killed process 3504804 (kubectl) total-vm:1000kB, anon-rss:500kB, file-rss:0kB",
        "source": {"component": "kernel-monitor", "host": "node-1"}, "lastTimestamp": "2023-06-13T14:35:38Z",
    }
    wrapped = {"verb": "ADDED", "event": event} if wrapper == "verb" else {"type": "ADDED", "object": event}
    kills = rca.parse_text(json.dumps(wrapped, indent=2) + "\n", file="events.json").filter(pl.col("kind") == "oom_kill")
    assert kills.select("pid", "process", "rss_bytes").rows() == [(3504804, "kubectl", 500 * 1024)]
    assert kills["ts"][0] == datetime(2023, 6, 13, 14, 35, 38, tzinfo=UTC)


def test_tab_padded_describe_of_2016_reads_its_events_table_and_last_termination_state() -> None:
    """kubectl before 1.3 padded with tabs, underlined with "─", and said "Last Termination State"."""
    events = _events("kubectl_describe_pod_tabs_2016_01.txt")
    earlier = events.filter(pl.col("message").str.contains("Last Termination State", literal=True))
    assert earlier.select("kind", "container", "exit_code", "ts", "container_id").rows() == [
        ("log", "busybox", 0, datetime(2016, 2, 2, 7, 2, 52, tzinfo=UTC), None)
    ]
    assert attrs_of(earlier)[0]["reason"] == "Error"
    rows = events.filter(pl.col("format") == "describe_events")
    assert rows.select("container", "host", "pod").unique().rows() == [("busybox", "172.18.18.101", "busybox")]
    assert [a["reason"] for a in attrs_of(rows)] == ["Pulled", "Created", "Started"]
    assert attrs_of(rows)[0]["count"] == 4


def test_a_grep_of_describe_takes_its_pod_from_the_command_and_ends_the_pod_table() -> None:
    events = _events("kubectl_get_po_describe_grep_tabs_2017_01.txt")
    killed = events.filter(pl.col("kind") == "container_oomkilled")
    assert killed.select("line", "pod", "exit_code", "ts").rows() == [
        (4, "memhog-oom-3179143800-gmdbc", None, None),
        (9, "memhog-oom-3179143800-gmdbc", 137, datetime(2017, 3, 20, 21, 51, 57, tzinfo=UTC)),
    ]
    # The bare `kubectl describe …` line is a command, not a row of the pod table above it.
    assert events.filter(pl.col("format") == "get_pods")["line"].to_list() == [3, 4]


def test_headerless_event_rows_are_read_by_their_shape() -> None:
    """`kubectl get events -A | grep OOM` drops the header; the age, type and kind/name still place the columns."""
    kills = _events("kubectl_get_events_headerless_grep_oomkilling_01.txt").filter(pl.col("kind") == "oom_kill")
    assert kills.select("host", "namespace", "pid", "process", "severity").rows() == [
        ("ncn-w003", "default", 1223856, "prometheus", "warning"),
        ("ncn-w003", "default", 1372634, "prometheus", "warning"),
    ]


def test_event_rows_with_an_empty_message_and_a_condition_leaving_pressure() -> None:
    events = _events("kubectl_get_events_rows_karpenter_oomkilling_01.txt")
    assert events.height == 11
    kills = events.filter(pl.col("kind") == "oom_kill")
    assert kills.select("pid", "rss_bytes").rows()[0] == (157430, 128776 * KI)
    assert kills["host"].unique().to_list() == ["ip-10-2-112-20.ec2.internal"]
    # Karpenter's "Status: False -> Unknown" is the condition going unknown, not memory pressure.
    assert events.filter(pl.col("kind") == "memory_pressure").height == 0
    empty = events.filter(pl.col("line") == 10)
    assert (empty["host"][0], attrs_of(empty)[0]["reason"]) == ("ip-10-2-112-6.ec2.internal", "Starting")


def test_describe_events_without_the_underline_row() -> None:
    text = (
        "Events:\n"
        "  Type     Reason      Age   From                        Message\n"
        "  Warning  OOMKilling  5m    kernel-monitor, gpu-node-3  Memory cgroup out of memory: Killed process 4242 (python) "
        "total-vm:1000kB, anon-rss:800kB, file-rss:0kB\n"
        "  Normal   Killing     5m    kubelet                     Stopping container trainer\n"
    )
    events = rca.parse_text(text, file="describe.txt")
    assert events.select("kind", "pid", "container", "host").rows() == [
        ("oom_kill", 4242, None, "gpu-node-3"),
        ("log", None, "trainer", None),
    ]


def test_a_jsonpath_row_of_an_evicted_pod() -> None:
    evicted = _events("kubectl_jsonpath_evicted_ephemeral_storage_01.txt").filter(pl.col("kind") == "eviction")
    assert evicted.select("pod", "container", "mem_used_bytes").rows() == [("infras-logstash-d484d57fc-rkx95", "infras-logstash", None)]
    assert attrs_of(evicted)[0]["resource"] == "ephemeral-storage"


def test_a_wide_pod_row_with_a_redacted_ip_and_a_container_line_that_lost_its_indent() -> None:
    events = _events("kubectl_get_pods_wide_init_oomkilled_gpu_01.txt")
    assert events.filter(pl.col("format") == "get_pods").select("pod", "namespace", "host").rows() == [("gpu-pod", "default", "xxxxx")]
    killed = events.filter(pl.col("kind") == "container_oomkilled")
    assert killed.select("container", "exit_code").rows() == [("app2", 0)]


def test_the_k_alias_is_a_command_naming_the_pod() -> None:
    events = _events("kubectl_describe_po_liveness_exit137_2025_01.txt")
    killed = events.filter(pl.col("exit_code") == 137)
    # Exit 137 after a failed liveness probe: killed, but not by the OOM killer.
    assert killed.select("kind", "pod", "container", "ts").rows() == [
        ("log", "liveness-exec", "liveness", datetime(2025, 5, 16, 12, 36, 34, tzinfo=UTC))
    ]


def test_a_bare_yaml_sequence_of_events_is_a_document() -> None:
    """The items of `kubectl get events -o yaml` pasted without their List: dashes at the left edge."""
    events = _events("kubectl_get_events_yaml_bare_item_01.yaml")
    assert events.select("format", "pod", "namespace", "container", "host", "severity", "n_lines").rows() == [
        ("event_yaml", "zx-hpa-7b56cddd95-n9ft9", "default", "busybox", "192.168.0.5", "info", 29)
    ]
    assert events["ts"][0] == datetime(2021, 6, 26, 8, 46, 33, tzinfo=UTC)


def test_headless_pod_rows_of_get_all_with_the_pod_prefix() -> None:
    """`kubectl get all -A` rows without their header: "pod/" prefix, RESTARTS "16 (5m13s ago)"."""
    events = _events("kubectl_get_all_headless_pods_oomkilled_01.txt")
    assert set(events["format"]) == {"get_pods"}
    killed = events.filter(pl.col("kind") == "container_oomkilled")
    assert killed.select("line", "pod", "namespace").rows() == [(8, "user-directory-646bbbc878-lf4tq", "impt")]
    assert attrs_of(killed)[0]["restarts"] == "16 (5m13s ago)"
    assert events.height == 11


def test_a_headless_wide_pod_row_names_its_node() -> None:
    text = "ml-train   trainer-0   0/1   OOMKilled   3 (2m ago)   41m   10.4.2.17   gpu-node-3   <none>   <none>\n"
    row = rca.parse_text(text, file="pods.txt").row(0, named=True)
    assert (row["kind"], row["pod"], row["namespace"], row["host"]) == ("container_oomkilled", "trainer-0", "ml-train", "gpu-node-3")


def test_a_conditions_row_without_its_header() -> None:
    """`kubectl describe node | grep MemoryPressure`: type, status and the two RFC 1123 times place the row."""
    row = _events("kubectl_describe_node_condition_row_memory_pressure_01.txt").row(0, named=True)
    assert (row["source"], row["kind"], row["format"]) == ("k8s", "memory_pressure", "describe_conditions")
    assert row["ts"] == datetime(2022, 1, 20, 3, 54, 21, tzinfo=UTC)
    assert json.loads(row["attrs"])["reason"] == "KubeletHasInsufficientMemory"


def test_a_describe_events_row_that_lost_its_alignment_is_split_on_its_gaps() -> None:
    """A node name redacted to "<node>" leaves the Message cell left of its header offset."""
    row = _events("kubectl_describe_node_events_redacted_node_podoomkilling_01.txt").row(0, named=True)
    assert (row["kind"], row["pid"], row["process"], row["host"]) == ("oom_kill", 25169, "hyperkube", None)
    assert row["message"].startswith("Memory cgroup out of memory: Kill process 25169")
    assert json.loads(row["attrs"])["source"] == "kernel-monitor, <node>"


def test_a_cgroup_oom_event_names_its_victim_and_the_pod_of_the_command() -> None:
    events = _events("kubectl_describe_pod_events_cgroupoom_01.txt")
    kill = events.filter(pl.col("kind") == "oom_kill")
    assert kill.select("line", "pid", "process", "pod", "namespace").rows() == [(8, 470521, "stress", "memory-demo-2", "default")]


def test_a_root_prompt_with_the_k_alias_and_a_namespace_flag() -> None:
    events = _events("kubectl_get_pods_root_prompt_k_alias_evicted_01.txt")
    assert events.filter(pl.col("kind") == "eviction").select("namespace").to_series().unique().to_list() == ["kube-system"]
    assert events.height == 3


def test_describe_age_x_over_gives_the_event_count() -> None:
    events = _events("kubectl_describe_node_events_x_over_count_01.txt").filter(pl.col("format") == "describe_events")
    assert [a["count"] for a in attrs_of(events)] == [4, 4, 38]
    assert events["kind"].to_list() == ["log", "memory_pressure", "eviction"]


def test_a_status_yaml_fragment_with_elisions() -> None:
    """A pasted `status:` piece with "..." elisions is not a document, but its terminated state is read."""
    events = _events("kubectl_status_yaml_fragment_oomkilled_exit0_01.yaml")
    assert events.select("kind", "exit_code", "format", "n_lines").rows() == [("container_oomkilled", 0, "pod_fragment", 12)]
    assert events["ts"][0] == datetime(2019, 8, 29, 0, 51, 41, tzinfo=UTC)


def test_a_json_laststate_fragment_keeps_its_exit_code() -> None:
    """A JSON excerpt of a container status (members without their braces): exit 137 with reason Error is no OOM kill."""
    text = (
        '                "lastState": {\n'
        '                    "terminated": {\n'
        '                        "containerID": "docker://5954f621c17f13706c25a215db06fe2bf7b9a9a6c732a909eb0db39d62346724",\n'
        '                        "exitCode": 137,\n'
        '                        "finishedAt": "2017-10-10T17:41:58Z",\n'
        '                        "reason": "Error",\n'
        '                        "startedAt": "2017-10-10T17:20:37Z"\n'
        "                    }\n"
        "                },\n"
    )
    row = rca.parse_text(text, file="status.json").row(0, named=True)
    assert (row["source"], row["kind"], row["exit_code"]) == ("k8s", "log", 137)
    assert row["container_id"] == "5954f621c17f13706c25a215db06fe2bf7b9a9a6c732a909eb0db39d62346724"
    assert row["ts"] == datetime(2017, 10, 10, 17, 41, 58, tzinfo=UTC)


def test_gke_xid_condition_row_is_an_xid_of_the_node_in_the_command() -> None:
    row = _events("kubectl_describe_node_grep_xid_condition_gke_01.txt").row(0, named=True)
    assert (row["kind"], row["xid"], row["host"], row["format"]) == ("xid", 31, "gke-weitong-cluster-p100-22d24db3-kd6j", "describe_conditions")
    assert row["ts"] == datetime(2025, 6, 23, 18, 44, 57, tzinfo=UTC)


def test_a_container_block_cut_below_its_containers_heading_keeps_its_name() -> None:
    events = _events("kubectl_describe_container_block_without_section_oomkilled_01.txt")
    oom = events.filter(pl.col("kind") == "container_oomkilled").row(0, named=True)
    assert (oom["container"], oom["exit_code"], oom["line"]) == ("kotsadm", 137, 9)
    # Finished: Fri, 08 Sep 2023 00:57:10 +0530.
    assert oom["ts"] == datetime(2023, 9, 7, 19, 27, 10, tzinfo=UTC)
    running = events.filter(pl.col("line") == 7).row(0, named=True)
    assert running["container_id"] == "41bbe4aa9c2b520813a426a2179828d35bffc20f98a565bc57e691668b173570"
    assert running["container"] == "kotsadm"


def test_a_container_oom_takes_the_memory_request_and_limit_printed_below_its_state() -> None:
    events = _events("kubectl_describe_dcgm_exporter_oomkilled_limits_requests_01.txt")
    oom = events.filter(pl.col("kind") == "container_oomkilled").row(0, named=True)
    assert (oom["line"], oom["exit_code"]) == (10, 137)
    assert oom["ts"] == datetime(2025, 5, 28, 13, 41, 53, tzinfo=UTC)
    assert oom["mem_requested_bytes"] == 358 * 1024 * 1024
    assert json.loads(oom["attrs"])["memory_limit_bytes"] == 358 * 1024 * 1024
    # The current State (Waiting) is no OOM and does not take them as facts of its own kind.
    waiting = events.filter(pl.col("line") == 8).row(0, named=True)
    assert waiting["kind"] == "log"


def test_each_container_keeps_its_own_memory_request() -> None:
    text = (
        "Containers:\n  a:\n    Image:  x\n    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
        "    Requests:\n      memory:  1Gi\n  b:\n    Image:  y\n    Last State:     Terminated\n      Reason:       OOMKilled\n"
        "      Exit Code:    137\n    Limits:\n      memory:  2Gi\n"
    )
    ooms = rca.parse_text(text, file="d.txt").filter(pl.col("kind") == "container_oomkilled").sort("line")
    assert ooms["container"].to_list() == ["a", "b"]
    assert ooms["mem_requested_bytes"].to_list() == [1024**3, None]
    assert [json.loads(a).get("memory_limit_bytes") for a in ooms["attrs"]] == [None, 2 * 1024**3]


def test_a_pending_pod_row_whose_node_is_none_has_no_host() -> None:
    events = _events("kubectl_get_pods_wide_pending_node_none_01.txt")
    by_line = {row["line"]: row for row in events.iter_rows(named=True)}
    assert (by_line[3]["host"], by_line[3]["namespace"]) == ("node2", "rook-ceph")
    pending = by_line[5]
    assert (pending["pod"], pending["namespace"], pending["host"]) == (
        "service-1-84988c5fb6-9fm2t",
        "eogo7cjtebo8fr0g9l1mfmo17j5r3efi1hitlpki3g04g",
        None,
    )
    assert json.loads(pending["attrs"])["status"] == "Pending"


def test_describe_of_a_pod_never_scheduled_is_k8s_with_no_host() -> None:
    name = "kubectl_describe_pod_pending_gpu_node_none_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "k8s"
    events = _events(name)
    assert events["host"].is_null().all()
    assert set(events["pod"].to_list()) == {"gpu-pod"}
    assert set(events["namespace"].to_list()) == {"default"}
    assert events.filter(pl.col("line") == 9)["container"].to_list() == ["cuda-container"]


def test_get_events_rows_shifted_left_by_a_redaction_are_split_on_their_spaces() -> None:
    events = _events("kubectl_get_events_all_namespaces_redacted_shift_systemoom_01.txt")
    by_line = {row["line"]: row for row in events.iter_rows(named=True)}
    oom = by_line[6]
    assert (oom["kind"], oom["host"], oom["pid"], oom["process"]) == ("oom_kill", "nlk8s-node04", 1568701, "grafana")
    assert oom["message"] == "System OOM encountered, victim process: grafana, pid: 1568701"
    # A row whose redacted job name is three characters short keeps its whole message.
    assert by_line[4]["message"] == "Job has reached the specified backoff limit"
    # Rows that sit under the header are read from their cells as before.
    assert by_line[7]["pod"] == "monitoring-kube-prometheus-operator-67d8d4c647-vwbbr"
    assert [by_line[n]["pid"] for n in (8, 9)] == [2055777, 1559452]


def test_go_template_last_state_map_is_the_container_oom_with_its_id_exit_code_and_time() -> None:
    events = _events("kubectl_go_template_last_state_map_oomkilled_01.txt")
    oom = events.filter(pl.col("kind") == "container_oomkilled").row(0, named=True)
    assert (oom["line"], oom["exit_code"], oom["format"]) == (2, 137, "inline_state")
    assert oom["container_id"] == "8aa1658ad04797da09ac9ccf9fda3448a643c52c3cba3f398ec3139727e1380a"
    assert oom["ts"] == datetime(2020, 4, 27, 1, 58, 36, tzinfo=UTC)
    assert json.loads(oom["attrs"])["started"] == "2020-04-27T01:57:48Z"
    # "-n <namespace> <pod>": placeholders, no names.
    assert (oom["pod"], oom["namespace"]) == (None, None)


def test_a_printed_status_list_gives_each_container_its_terminated_states() -> None:
    name = "kubectl_template_init_statuses_go_map_root_prompt_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "k8s"
    states = _events(name).filter(pl.col("line") == 2)
    assert states["container"].to_list() == ["init-myservice", "init-mydb", "init-failed-test"]
    assert states["exit_code"].to_list() == [0, 0, 127]
    assert states["n_lines"].to_list() == [1, 0, 0]
    assert set(states["pod"].to_list()) == {"myapp-pod"}
    assert [json.loads(a)["state_field"] for a in states["attrs"]] == ["state", "state", "lastState"]
    failed = states.row(2, named=True)
    assert failed["container_id"] == "b5c52e752b0c79b31cd5c0e6111b844e286d5a968dfac055f2968594a78ca783"
    assert failed["ts"] == datetime(2020, 9, 26, 14, 52, 2, tzinfo=UTC)


def test_custom_columns_rows_take_their_pod_from_the_name_column_first() -> None:
    by_line = {row["line"]: row for row in _events("kubectl_custom_columns_state_go_map_01.txt").iter_rows(named=True)}
    assert (by_line[3]["pod"], by_line[3]["exit_code"], by_line[3]["kind"]) == ("lifecycle-crashloop", 1, "log")
    assert by_line[3]["ts"] == datetime(2026, 10, 7, 15, 15, 36, tzinfo=UTC)
    assert by_line[4]["container_id"] == "da83ed309fc4d0ff11286f8e6351fbfad68b6d4e8042b34b3d72776a52318bdc"


def test_jsonpath_state_as_json_is_read_like_the_go_map() -> None:
    oom = _events("kubectl_jsonpath_inline_json_state_oomkilled_01.txt").filter(pl.col("kind") == "container_oomkilled").row(0, named=True)
    assert (oom["line"], oom["exit_code"]) == (1, 137)
    assert oom["ts"] == datetime(2026, 10, 5, 11, 20, 34, tzinfo=UTC)
    # An id cut short with "…" is no container id.
    assert oom["container_id"] is None
    text = (
        "$ kubectl get pod p1 -n ml -o jsonpath='phase={.status.phase}{\"\\n\"}state={.status.containerStatuses[0].state}{\"\\n\"}'\n"
        "phase=Failed\n"
        'state={"terminated":{"containerID":"containerd://' + "a" * 64 + '","exitCode":137,"finishedAt":"2026-01-02T03:04:05Z",'
        '"reason":"OOMKilled","startedAt":"2026-01-02T03:00:00Z"}}\n'
    )
    row = rca.parse_text(text, file="t.txt").filter(pl.col("line") == 3).row(0, named=True)
    assert (row["kind"], row["pod"], row["namespace"], row["container_id"]) == ("container_oomkilled", "p1", "ml", "a" * 64)
    assert json.loads(row["attrs"])["state_field"] == "state"


def test_a_2015_go_map_with_a_spaced_reason_and_unsorted_keys() -> None:
    text = (
        "$ kubectl get pod -o go-template='{{range.status.containerStatuses}}{{\"Container Name: \"}}{{.name}}"
        "{{\"\\r\\nLastState: \"}}{{.lastState}}{{end}}'  simmemleak-60xbc\n"
        "Container Name: simmemleak\n"
        "LastState: map[terminated:map[exitCode:137 reason:OOM Killed startedAt:2015-07-07T20:58:43Z "
        "finishedAt:2015-07-07T20:58:43Z containerID:docker://" + "0e4095bba1fe" * 5 + "0e40]]\n"
    )
    row = rca.parse_text(text, file="t.txt").filter(pl.col("kind") == "container_oomkilled").row(0, named=True)
    assert (row["line"], row["exit_code"], row["container"], row["pod"]) == (3, 137, "simmemleak", "simmemleak-60xbc")
    assert row["container_id"] == "0e4095bba1fe" * 5 + "0e40"
    assert json.loads(row["attrs"])["state_field"] == "lastState"


def test_kubectl_events_last_seen_holds_the_count_and_headless_rows_keep_it() -> None:
    by_line = {row["line"]: row for row in _events("kubectl_events_for_pod_last_seen_count_01.txt").iter_rows(named=True)}
    backoff = by_line[8]
    assert (backoff["pod"], backoff["namespace"], backoff["container"], backoff["severity"]) == ("restart-demo", "s14", "app", "warning")
    assert json.loads(backoff["attrs"])["count"] == 14
    assert json.loads(by_line[6]["attrs"])["count"] == 8
    rows = "26s (x393 over 85m)   Warning   BackOff   Pod/rc-oomkilled-b6d999d-m8sl8   Back-off restarting failed container app in pod x\n"
    row = rca.parse_text(rows, file="t.txt").row(0, named=True)
    assert (row["source"], row["pod"], row["container"]) == ("k8s", "rc-oomkilled-b6d999d-m8sl8", "app")
    assert json.loads(row["attrs"])["count"] == 393


def test_a_describe_whose_paste_collapsed_the_indent_keeps_its_state_fields() -> None:
    events = _events("kubectl_describe_pod_collapsed_indent_exit137_01.txt")
    last = events.filter(pl.col("line") == 32).row(0, named=True)
    assert (last["exit_code"], last["container"], last["mem_requested_bytes"]) == (137, "prometheus", 20 * 1024**3)
    # Finished: Mon, 28 Apr 2025 10:10:20 +0800.
    assert last["ts"] == datetime(2025, 4, 28, 2, 10, 20, tzinfo=UTC)
    assert json.loads(last["attrs"])["reason"] == "Error"
    running = events.filter(pl.col("line") == 30).row(0, named=True)
    assert running["ts"] == datetime(2025, 4, 28, 2, 11, 39, tzinfo=UTC)


def test_a_blank_line_ends_a_table_and_a_lone_describe_event_row_is_read_by_its_shape() -> None:
    events = _events("kubectl_get_pod_then_event_runc_init_oom_01.txt")
    oom = events.filter(pl.col("line") == 5).row(0, named=True)
    assert (oom["kind"], oom["severity"], oom["pod"]) == ("container_oomkilled", "warning", None)
    assert json.loads(oom["attrs"])["source"] == "kubelet"
    assert oom["message"].startswith("Error: container create failed:")


def test_kueue_evicted_due_to_events_are_evictions() -> None:
    events = _events("kubectl_describe_workload_events_kueue_evicted_01.txt")
    assert events.filter(pl.col("kind") == "eviction")["line"].to_list() == [6]


def test_a_pod_row_cut_after_its_status_is_still_a_pod_row() -> None:
    row = _events("kubectl_get_pods_row_cut_after_status_oomkilled_01.txt").row(0, named=True)
    assert (row["kind"], row["pod"], row["namespace"], row["format"]) == (
        "container_oomkilled",
        "training-operator-8569f97489-zkxbt",
        "kubeflow",
        "get_pods",
    )


@pytest.mark.parametrize(
    "prompt",
    ["❯ kubectl get pods", "➜  ~ kubectl get pods", "user@host ~ % kubectl get pods", "PS C:\\> kubectl get pods", "[root@m1 ~]# kubectl get pods"],
)
def test_shell_prompts_of_other_shells_are_prompts(prompt: str) -> None:
    text = f"{prompt}\nNAME    READY   STATUS      RESTARTS   AGE\nworker-0   0/1     OOMKilled   3          5m\n"
    events = rca.parse_text(text, file="t.txt")
    assert events["line"].to_list() == [3]
    assert events["kind"].to_list() == ["container_oomkilled"]


def test_a_selector_is_no_pod_name() -> None:
    text = "$ kubectl get pods -l app=trainer -o custom-columns=STATE:.status.containerStatuses[*].state\nSTATE\nmap[terminated:map[exitCode:137 reason:OOMKilled]]\n"
    row = rca.parse_text(text, file="t.txt").filter(pl.col("kind") == "container_oomkilled").row(0, named=True)
    assert (row["pod"], row["exit_code"], row["ts"]) == (None, 137, None)


def test_headless_pod_rows_with_init_statuses() -> None:
    text = (
        "gpu-operator   nvidia-device-plugin-daemonset-x7k2p   0/1   Init:0/1   0     12m\n"
        "gpu-operator   nvidia-driver-daemonset-9qk4d          0/1   Init:OOMKilled   7 (3m ago)   15m\n"
    )
    events = rca.parse_text(text, file="t.txt")
    assert events["source"].to_list() == ["k8s", "k8s"]
    assert events["kind"].to_list() == ["log", "container_oomkilled"]
    assert [json.loads(a)["status"] for a in events["attrs"]] == ["Init:0/1", "Init:OOMKilled"]
    assert events["pod"].to_list() == ["nvidia-device-plugin-daemonset-x7k2p", "nvidia-driver-daemonset-9qk4d"]


def test_kubectl_top_pods_and_nodes_give_memory_by_pod_and_by_node() -> None:
    events = _events("kubectl_top_pod_all_namespaces_then_node_01.txt")
    assert events["source"].unique().to_list() == ["k8s"]
    assert events.height == 18  # 15 pods and 3 nodes; the prompts, headers and blank line are skipped
    apiserver = events.filter(pl.col("pod") == "kube-apiserver-ub18").row(0, named=True)
    assert (apiserver["namespace"], apiserver["mem_used_bytes"], apiserver["kind"], apiserver["format"]) == ("kube-system", 343 * KI * KI, "log", "top_pods")
    assert json.loads(apiserver["attrs"]) == {"cpu": "74m"}
    # The last row lost some of its trailing spaces: its cells are still read.
    assert events.filter(pl.col("pod") == "metrics-server-7d9c65958-ghrmp")["mem_used_bytes"].to_list() == [15 * KI * KI]
    nodes = events.filter(pl.col("format") == "top_nodes")
    assert nodes["host"].to_list() == ["ub18", "ub18c1", "ub18c2"]
    assert nodes["pod"].null_count() == 3
    assert nodes["mem_used_bytes"].to_list() == [2685 * KI * KI, 2244 * KI * KI, 2138 * KI * KI]
    assert json.loads(nodes["attrs"][0]) == {"cpu": "354m", "cpu_pct": 17, "mem_pct": 45}
    assert events["ts"].null_count() == events.height  # a snapshot of now, with no clock printed


def test_kubectl_top_pod_containers_name_pod_and_container() -> None:
    text = (
        "$ kubectl top pod -n ml --containers\n"
        "POD                          NAME      CPU(cores)   MEMORY(bytes)   \n"
        "trainer-0                    trainer   3912m        61234Mi         \n"
        "trainer-0                    sidecar   2m           18Mi            \n"
        "$ kubectl top node gpu-node-07\n"
        "NAME          CPU(cores)   CPU%        MEMORY(bytes)   MEMORY%     \n"
        "gpu-node-07   <unknown>    <unknown>   <unknown>       <unknown>   \n"
    )
    events = rca.parse_text(text, file="t.txt")
    assert events.select("pod", "container", "namespace", "mem_used_bytes").rows() == [
        ("trainer-0", "trainer", "ml", 61234 * KI * KI),
        ("trainer-0", "sidecar", "ml", 18 * KI * KI),
        (None, None, None, None),
    ]
    unknown = events.row(2, named=True)
    assert (unknown["host"], unknown["format"], unknown["attrs"]) == ("gpu-node-07", "top_nodes", None)


def test_an_nvsentinel_gpu_condition_is_an_xid_of_its_gpu() -> None:
    row = _events("kubectl_describe_node_condition_nvsentinel_xid95_01.txt").row(0, named=True)
    assert (row["source"], row["kind"], row["xid"], row["severity"]) == ("k8s", "xid", 95, "critical")
    assert (row["gpu_index"], row["gpu_uuid"], row["pci_bus"]) == (0, "GPU-65e4956a-8db1-af7f-47f8-b355e3b7bf07", "0000:16:00.0")
    assert row["ts"] == datetime(2026, 3, 9, 6, 11, 19, tzinfo=UTC)  # its transition, +0530 read


def test_a_conditions_table_under_its_header_is_k8s_and_its_xid_conditions_xids() -> None:
    text = (
        "Conditions:\n"
        "  Type              Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message\n"
        "  ----              ------  -----------------                 ------------------                ------                       -------\n"
        "  SysLogsXIDError   True    Mon, 11 May 2026 10:35:45 +0530   Mon, 11 May 2026 10:35:45 +0530   SysLogsXIDErrorIsNotHealthy  "
        "ErrorCode:119 PCI:0002:00:00 GPU_UUID:GPU-22222222-2222-2222-2222-222222222222 kernel: [16450076.435595] NVRM: Xid (PCI:0002:00:00): 119, "
        "pid=1582259, name=nvc:[driver], Timeout after 6s of waiting for RPC response from GPU1 GSP! Recommended Action=COMPONENT_RESET;\n"
        "  MemoryPressure    False   Mon, 11 May 2026 10:35:45 +0530   Mon, 04 May 2026 09:10:00 +0530   KubeletHasSufficientMemory   kubelet has sufficient memory available\n"
    )
    assert k8s.sniff(text.splitlines()) == 0.95
    events = rca.parse_text(text, file="t.txt")
    assert events.select("kind", "xid", "pci_bus", "gpu_uuid").rows() == [
        ("xid", 119, "0002:00:00", "GPU-22222222-2222-2222-2222-222222222222"),
        ("log", None, None, None),
    ]


_CRICTL_INSPECT = """{
  "status": {
    "id": "e3a1c7b9d2f4061835a7c9e1b3d5f7092468ace0bdf13579ace02468bdf13579",
    "metadata": {
      "attempt": 1,
      "name": "trainer"
    },
    "state": "CONTAINER_EXITED",
    "createdAt": "2024-06-14T08:01:11.912345678Z",
    "startedAt": "2024-06-14T08:01:12.123456789Z",
    "finishedAt": "2024-06-14T09:58:39.457083000Z",
    "exitCode": 137,
    "reason": "OOMKilled",
    "message": "",
    "labels": {
      "io.kubernetes.container.name": "trainer",
      "io.kubernetes.pod.name": "llama-ft-0",
      "io.kubernetes.pod.namespace": "research",
      "io.kubernetes.pod.uid": "3f1c9a52-8d1e-4b7a-9c3e-2f5d6a7b8c9d"
    }
  },
  "info": {
    "pid": 48213
  }
}
"""


def test_crictl_inspect_of_an_oom_killed_container() -> None:
    assert k8s.sniff(_CRICTL_INSPECT.splitlines()[:60]) == 0.95
    (row,) = rca.parse_text(_CRICTL_INSPECT, file="inspect.json").to_dicts()
    assert (row["kind"], row["exit_code"], row["pod"], row["namespace"], row["container"]) == ("container_oomkilled", 137, "llama-ft-0", "research", "trainer")
    assert (row["ts"], row["n_lines"], row["format"]) == (datetime(2024, 6, 14, 9, 58, 39, 457083, tzinfo=UTC), 25, "container_json")
    assert row["container_id"] == "e3a1c7b9d2f4061835a7c9e1b3d5f7092468ace0bdf13579ace02468bdf13579"


def test_docker_inspect_list_of_containers() -> None:
    running = {"Id": "a" * 64, "Name": "/sidecar", "State": {"Status": "running", "OOMKilled": False, "ExitCode": 0,
                                                            "FinishedAt": "0001-01-01T00:00:00Z"}, "Config": {"Labels": {}}}
    killed = {"Id": "b" * 64, "Name": "/finetune-7", "State": {"Status": "exited", "OOMKilled": True, "ExitCode": 137,
                                                              "FinishedAt": "2024-06-14T09:58:39.5Z"}, "Config": {"Labels": {}}}
    events = rca.parse_text(json.dumps([running, killed], indent=4), file="inspect.json")
    assert events.select("kind", "container", "container_id", "exit_code", "ts").rows() == [
        ("log", "sidecar", "a" * 64, 0, None),  # still running: no end, no time
        ("container_oomkilled", "finetune-7", "b" * 64, 137, datetime(2024, 6, 14, 9, 58, 39, 500000, tzinfo=UTC)),
    ]


def test_a_pasted_docker_state_killed_outside_its_cgroup_limit_is_a_sigkill() -> None:
    (row,) = _events("docker_inspect_state_redis_exit137_01.txt").to_dicts()
    assert (row["source"], row["kind"], row["exit_code"], row["n_lines"]) == ("k8s", "process_killed", 137, 13)
    assert row["ts"] == datetime(2020, 7, 31, 22, 28, 17, 557863, tzinfo=UTC)
    assert json.loads(row["attrs"])["started"] == "2020-07-31T22:26:20.031194Z"


def test_an_event_message_naming_the_pod_by_its_full_name_gives_pod_namespace_and_uid() -> None:
    (row,) = _events("kubectl_describe_pod_events_backoff_in_pod_full_name_01.txt").to_dicts()
    assert (row["kind"], row["severity"], row["container"]) == ("log", "warning", "serverless-test")
    assert (row["pod"], row["namespace"], row["pod_uid"]) == (
        "serverless-test-deployment-6c7657c859-66pn6", "default", "b50a7fa8-bb90-46f1-aba4-f17a2bb67161"
    )
    # FailedSync's message before 1.10 spells it "pod=<name>_<namespace>(<uid>)".
    failed_sync = (
        "  Warning  FailedSync  1h (x3 over 1h)  kubelet, node1  Error syncing pod, skipping: failed to \"StartContainer\" for \"registry\" "
        "with CrashLoopBackOff: \"Back-off 10s restarting failed container=registry pod=docker-registry-1-df7qm_ops(68ee35ca-548e-11e7-8b4d-080027893417)\"\n"
    )
    (row,) = rca.parse_text(failed_sync, file="events.txt").to_dicts()
    assert (row["pod"], row["namespace"], row["pod_uid"]) == ("docker-registry-1-df7qm", "ops", "68ee35ca-548e-11e7-8b4d-080027893417")
    assert row["container"] == "registry"


def test_rows_shifted_off_their_header_are_split_on_their_spaces() -> None:
    # kubernetes issue #112927: a pods row and a `top nodes` row no longer under their headers' offsets (names edited
    # to another length), and root's "#" glued to the command, once inside markdown bold ("**#kubectl ...").
    events = _events("kubectl_get_pods_top_nodes_shifted_rows_evicted_01.txt")
    pods = events.filter(pl.col("format") == "get_pods").to_dicts()
    assert [(r["line"], r["kind"], r["pod"], r["namespace"]) for r in pods] == [
        (3, "eviction", "istio-citadel-894d98c88-zkt23", "istio-system")
    ]
    assert attrs_of(events.filter(pl.col("line") == 3))[0]["status"] == "Evicted"
    (message,) = events.filter(pl.col("line") == 6).to_dicts()
    assert (message["kind"], message["pod"], message["namespace"], message["container"]) == (
        "eviction", "istio-citadel-894d98c88-zkt23", "istio-system", "citadel"
    )
    assert (message["mem_used_bytes"], message["mem_requested_bytes"]) == (43536 * KI, 0)
    (node,) = events.filter(pl.col("format") == "top_nodes").to_dicts()
    assert (node["host"], node["namespace"], node["mem_used_bytes"]) == ("k8s-107", None, 127894 * KI**2)
    assert attrs_of(events.filter(pl.col("format") == "top_nodes"))[0]["cpu_pct"] == 2
    # The describe node cut above its Name: the node its command names.
    assert events.filter(pl.col("line") >= 18)["host"].unique().to_list() == ["k8s-107"]


def test_an_evicted_pods_status_fields_folded_over_lines_are_one_eviction() -> None:
    (row,) = _events("kubectl_status_yaml_fragment_evicted_memory_request_01.yaml").to_dicts()
    assert (row["kind"], row["format"], row["n_lines"], row["container"]) == ("eviction", "pod_fragment", 9, "node")
    assert (row["mem_used_bytes"], row["mem_requested_bytes"]) == (35505620 * KI, 12 * KI**3)
    assert row["ts"] is None  # startTime is when the pod started, not when it was evicted


def test_a_status_fragment_with_container_status_unknown_is_no_oom() -> None:
    events = _events("kubectl_status_yaml_fragment_container_status_unknown_01.yaml")
    assert events.select("kind", "exit_code", "ts").rows() == [
        ("log", 103, datetime(2022, 3, 16, 7, 0, tzinfo=UTC)),
        ("log", 137, None),  # exit 137 of a container the kubelet could not find: no OOM kill, no time
    ]
    assert [a["reason"] for a in attrs_of(events)] == ["Error", "ContainerStatusUnknown"]


def test_event_rows_whose_names_hold_a_spaced_placeholder() -> None:
    events = _events("kubectl_get_events_headerless_placeholder_names_evicted_01.txt")
    assert events["source"].unique().to_list() == ["k8s"]
    assert events.select("kind", "severity", "container").rows() == [
        ("eviction", "warning", "egg"),
        ("log", "info", "egg"),
        ("log", "warning", None),
        ("log", "info", None),
        ("eviction", "warning", None),
    ]
    assert events["mem_used_bytes"][0] == 5053216 * KI
    # "pod/egg-<id here>": a placeholder names no pod.
    assert events["pod"].null_count() == events.height


def test_a_state_block_cut_to_its_reason_is_describe_output() -> None:
    name = "kubectl_describe_state_block_only_last_state_oomkilled_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "k8s"
    events = _events(name)
    assert events.select("line", "kind", "n_lines", "exit_code", "ts").rows() == [
        (1, "log", 2, None, None),
        (3, "container_oomkilled", 2, None, None),  # no Exit Code printed: none inferred
    ]


def test_a_describe_events_table_collapsed_to_single_spaces() -> None:
    # A blog's scrape of kubectl 1.7's describe node Events: every run of padding is one space.
    name = "kubectl_describe_node_events_collapsed_spaces_eviction_threshold_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "k8s"
    events = _events(name)
    rows = events.filter(pl.col("format") == "describe_events")
    assert rows["line"].to_list() == list(range(6, 15))
    assert rows["host"].unique().to_list() == ["ubuntu-k8s-3"]
    evictions = rows.filter(pl.col("kind") == "eviction")
    assert evictions.select("line", "severity", "message").rows() == [
        (7, "warning", "Attempting to reclaim nodefs"),
        (14, "warning", "Attempting to reclaim nodefs"),
    ]
    assert [(a["count"], a["resource"], a["age"]) for a in attrs_of(evictions)] == [(49428, "nodefs", "51m"), (23, "nodefs", "14s")]
    assert attrs_of(rows.filter(pl.col("line") == 6))[0]["reason"] == "NodeNotSchedulable"


def test_get_nodes_rows_name_their_node() -> None:
    events = _events("kubectl_oc_get_nodes_not_ready_pods_wide_nominated_01.txt")
    nodes = events.filter(pl.col("format") == "get_nodes")
    assert nodes["host"].to_list() == [f"{role}{i}.ocp4.example.com" for role, i in [("master", 0), ("master", 1), ("master", 2), ("worker", 0), ("worker", 1)]]
    assert {(a["status"], a["version"]) for a in attrs_of(nodes)} == {("NotReady", "v1.23.5+8471591")}
    assert nodes["pod"].null_count() == nodes.height
    pods = events.filter(pl.col("format") == "get_pods")
    assert pods.height == 23
    assert pods["namespace"].unique().to_list() == ["openshift-etcd"]
    assert set(pods["host"]) == {"master0.ocp4.example.com", "master1.ocp4.example.com", "master2.ocp4.example.com"}


def test_events_k8s_io_v1_names_its_object_regarding() -> None:
    # The events.k8s.io/v1 shape (`kubectl get events.events.k8s.io -o yaml`): regarding, note, deprecated* fields.
    text = """apiVersion: v1
items:
- apiVersion: events.k8s.io/v1
  deprecatedCount: 14
  deprecatedFirstTimestamp: "2024-05-02T09:10:00Z"
  deprecatedLastTimestamp: "2024-05-02T09:58:00Z"
  deprecatedSource:
    component: kubelet
    host: gpu-node-7
  eventTime: null
  kind: Event
  metadata:
    name: trainer-0.17cb0a1b2c3d4e5f
    namespace: ml
  note: 'Memory cgroup out of memory: Killed process 4242 (python) total-vm:9000kB, anon-rss:4096kB, file-rss:0kB, shmem-rss:0kB'
  reason: OOMKilling
  regarding:
    kind: Pod
    name: trainer-0
    namespace: ml
    fieldPath: spec.containers{trainer}
  reportingController: kubelet
  reportingInstance: gpu-node-7
  type: Warning
kind: List
"""
    (row,) = rca.parse_text(text, file="events.yaml").to_dicts()
    assert (row["format"], row["kind"], row["severity"]) == ("event_yaml", "oom_kill", "warning")
    assert (row["pod"], row["namespace"], row["container"], row["host"]) == ("trainer-0", "ml", "trainer", "gpu-node-7")
    assert (row["pid"], row["process"], row["rss_bytes"]) == (4242, "python", 4096 * KI)
    assert row["ts"] == datetime(2024, 5, 2, 9, 58, tzinfo=UTC)
    attrs = json.loads(row["attrs"])
    assert (attrs["count"], attrs["component"]) == (14, "kubelet")


def test_a_current_describe_events_table_collapsed_to_single_spaces() -> None:
    name = "kubectl_describe_pod_events_collapsed_spaces_liveness_killing_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "k8s"
    rows = _events(name).filter(pl.col("format") == "describe_events")
    assert rows.select("line", "severity", "container").rows() == [
        (6, "warning", None),
        (7, "info", "liveness-exec"),  # "Container liveness-exec failed liveness probe, will be restarted"
        (8, "info", "liveness-exec"),
        (9, "info", "liveness-exec"),
    ]
    assert rows["pod"].unique().to_list() == ["liveness-exec-165f6d5j4-fh9xu"]
    assert [(a["reason"], a.get("count")) for a in attrs_of(rows)] == [("Unhealthy", None), ("Killing", None), ("Created", 2), ("Started", 2)]
    # The From cell is one word, or "kubelet, <node>" (before 1.20), which names the host.
    text = "Events:\nType Reason Age From Message\n---- ------ ---- ---- -------\nNormal Pulled 3m kubelet, node1 Container image \"nginx\" already present\n"
    (row,) = rca.parse_text(text, file="describe.txt").to_dicts()
    assert (row["format"], row["host"], row["message"]) == ("describe_events", "node1", 'Container image "nginx" already present')


def test_a_headerless_describe_events_row_with_padding_cut_in_some_cells_only() -> None:
    """NVIDIA/k8s-device-plugin #119: " Warning FailedScheduling  40s (x2 over 40s)  default-scheduler  0/2 nodes …" under
    "Events:", its header cut, single spaces after the type, two between the other cells."""
    name = "kubectl_describe_events_mixed_padding_insufficient_gpu_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "k8s"
    (row,) = _events(name).filter(pl.col("format") == "describe_events").to_dicts()
    assert (row["line"], row["kind"], row["severity"]) == (2, "log", "warning")
    assert row["message"] == "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable."
    attrs = json.loads(row["attrs"])
    assert (attrs["reason"], attrs["age"], attrs["source"]) == ("FailedScheduling", "40s (x2 over 40s)", "default-scheduler")


def test_a_jq_printed_pod_status_object_takes_its_pod_from_the_command() -> None:
    """kube-state-metrics #1145: `kubectl -n kube-system get pod x -o json | jq '.status'` prints the status of a pod
    rejected at admission as an object of its own; the command above it names the pod."""
    name = "kubectl_jq_status_object_unexpected_admission_prompt_pod_01.json"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "k8s"
    (row,) = _events(name).to_dicts()
    assert (row["line"], row["n_lines"], row["format"], row["kind"], row["severity"]) == (2, 6, "pod_fragment", "log", "error")
    assert (row["pod"], row["namespace"]) == ("coredns-578bdc569f-g87nk", "kube-system")
    assert json.loads(row["attrs"])["reason"] == "UnexpectedAdmissionError"
    assert row["message"].startswith("Pod Unexpected error while attempting to recover from admission failure")


def test_a_pod_rejected_at_admission_is_a_failed_pod() -> None:
    """kube-batch #931: the kubelet's device manager rejected a TF-Job worker (no free nvidia.com/gpu)."""
    (row,) = _events("kubectl_describe_pod_failed_unexpected_admission_error_gpu_01.txt").to_dicts()
    assert (row["kind"], row["severity"], row["n_lines"], row["ts"]) == ("log", "error", 14, None)
    assert (row["pod"], row["namespace"], row["host"]) == ("imgsr-11103465-20200312165729394-worker-0", "11103465", "10.193.86.6")
    attrs = json.loads(row["attrs"])
    assert (attrs["reason"], attrs["status"], attrs["start_time"]) == ("UnexpectedAdmissionError", "Failed", "Thu, 12 Mar 2020 16:58:22 +0800")


def test_the_scheduled_row_names_the_pod_of_a_bare_events_table() -> None:
    """HAMi #39: a describe pod's Events table pasted alone; "Successfully assigned default/gpu-pod to pkm-05"."""
    events = _events("kubectl_describe_pod_events_scheduled_unexpected_admission_error_01.txt")
    assert set(events["format"]) == {"describe_events"}
    assert events.select("line", "severity", "pod", "namespace", "host").rows() == [
        (4, "warning", "gpu-pod", "default", None),
        (5, "warning", "gpu-pod", "default", None),
        (6, "info", "gpu-pod", "default", None),
        (7, "warning", "gpu-pod", "default", None),
        (8, "warning", "gpu-pod", "default", "pkm-05"),  # the kubelet's rows: the node the pod was bound to
        (9, "warning", "gpu-pod", "default", "pkm-05"),
    ]
    assert [a["reason"] for a in attrs_of(events)][4] == "UnexpectedAdmissionError"


def test_a_pods_row_of_a_failed_container_is_an_error() -> None:
    """gpu-operator #559: `get pod -o wide | grep a44`: Error, RunContainerError and Init:RunContainerError rows."""
    events = _events("kubectl_get_pods_wide_grep_gpu_operator_run_container_error_01.txt")
    assert events.select("line", "severity").filter(pl.col("severity").is_not_null()).rows() == [(2, "error"), (5, "error"), (7, "error")]
    assert set(events["namespace"]) == {"gpu-operator"}
    assert set(events["host"]) == {"a44"}


@pytest.mark.parametrize(
    ("status", "severity"),
    [
        ("UnexpectedAdmissionError", "error"),
        ("OutOfnvidia.com/gpu", "error"),
        ("Init:OOMKilled", "error"),
        ("Init:ExitCode:1", "error"),
        ("Signal:9", "error"),
        ("CrashLoopBackOff", "warning"),
        ("Init:ImagePullBackOff", "warning"),
        ("Init:0/2", None),
        ("Completed", None),
        ("ExitCode:0", None),
        ("Terminating", None),
    ],
)
def test_pod_status_severity(status: str, severity: str | None) -> None:
    row = f"NAME        READY   STATUS   RESTARTS   AGE\ngpu-job-0   0/1     {status}   0          4s\n"
    assert _events_of(row)["severity"].to_list() == [severity]


def _events_of(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="pods.txt")


def test_insufficient_gpu_events_row_under_a_pods_row() -> None:
    """kubeflow #794: a Pending pod's row, then its FailedScheduling row with no describe header above it."""
    events = _events("kubectl_get_pods_then_events_insufficient_nvidia_gpu_01.txt")
    assert events.select("line", "format", "severity", "pod").rows() == [
        (2, "get_pods", None, "inception-gpu-v1-74fc6fd6cf-ft226"),
        (4, "text", None, None),
        (8, "describe_events", "warning", None),
    ]
    assert attrs_of(events)[2]["count"] == 57


def test_a_root_at_host_prompt_names_the_described_pod() -> None:
    """kkamji's post: "root@Zest ~# kubectl describe pods x", its Events row an ephemeral-storage eviction."""
    events = _events("kubectl_describe_pods_root_host_prompt_combined_evicted_ephemeral_01.txt")
    evicted = events.filter(pl.col("kind") == "eviction")
    assert evicted.select("line", "severity", "pod").rows() == [(11, "warning", "simple-webapp-color")]
    attrs = attrs_of(evicted)[0]
    assert (attrs["resource"], attrs["threshold_bytes"], attrs["available_bytes"], attrs["count"]) == (
        "ephemeral-storage", 1024**3, 925292 * KI, 2334
    )
    assert events.filter(pl.col("format") == "get_pods").select("line", "severity").rows() == [(4, None)]


def test_get_events_k3s_node_system_ooms_and_an_empty_message() -> None:
    """A k3s tutorial's `kubectl get events`: SystemOOM rows name their victim; a row with no MESSAGE has an empty one."""
    events = _events("kubectl_get_events_k3s_node_systemoom_empty_message_01.txt")
    ooms = events.filter(pl.col("kind") == "oom_kill")
    assert ooms.select("line", "severity", "host", "pid", "process").rows() == [
        (5, "warning", "hans-laptop", 9295, "nginx"),
        (6, "warning", "hans-laptop", 478970, "coredns"),
        (8, "warning", "hans-laptop", 343134, "chrome"),
    ]
    starting = events.filter(pl.col("line") == 14)
    assert starting.select("kind", "severity", "host", "message").rows() == [("log", "info", "hans-laptop", "")]
    # kubelets of 2025 write "Created container: nginx".
    assert events.filter(pl.col("line").is_in([28, 29])).select("pod", "container").rows() == [("my-nginx-54fc6798c5-9ldng", "nginx")] * 2


def test_describe_node_events_without_indent_or_underline() -> None:
    """Dynatrace/k8s-problem-patterns node-pressure README: AKS' SystemOOM / OOMKilling rows, EKS' pressure rows."""
    events = _events("kubectl_describe_node_events_unindented_systemoom_oomkilling_01.txt")
    assert events.filter(pl.col("kind") == "oom_kill").select("line", "pid", "process", "rss_bytes").rows() == [
        (5, 3103923, "stress-ng-vm", None),
        (6, 3103923, "stress-ng-vm", 14369596 * KI),
        (7, 3106306, "stress-ng-vm", None),
        (8, 3106306, "stress-ng-vm", 14360328 * KI),
    ]
    assert [attrs.get("count") for attrs in attrs_of(events.filter(pl.col("kind") == "oom_kill"))] == [None, None, 16, 16]
    assert events.filter(pl.col("line") >= 14).select("line", "kind", "severity", "host").rows() == [
        (14, "log", "info", None), (15, "eviction", "warning", None), (16, "memory_pressure", "info", None),
    ]


def test_describe_node_events_under_an_elided_header() -> None:
    """A blog's describe node excerpt: "Events:", then "..." for the header, then two rows; the status row names the node."""
    events = _events("kubectl_describe_node_events_elided_header_eviction_threshold_01.txt")
    rows = events.filter(pl.col("format") == "describe_events")
    assert rows.select("line", "kind", "severity", "host").rows() == [
        (4, "eviction", "warning", "test2"), (5, "log", "info", "test2"),
    ]
    assert attrs_of(rows)[0]["resource"] == "ephemeral-storage"


def test_get_events_of_kubectl_before_1_14_with_spaced_header_words() -> None:
    """An issue's `kubectl get events --namespace=genome-nexus`: LAST SEEN FIRST SEEN COUNT NAME KIND SUBOBJECT … columns."""
    events = _events("kubectl_get_events_spaced_first_seen_columns_liveness_failed_01.txt")
    rows = events.filter(pl.col("format") == "get_events")
    pod = "gn-mongo-v0dot23-grch38-ensembl95-mongodb-arbiter-0"
    assert rows.select("line", "severity", "host", "pod", "namespace", "container").rows() == [
        (3, "info", None, pod, "genome-nexus", None),
        *[(line, "info", "ip-172-20-83-132.ec2.internal", pod, "genome-nexus", "mongodb-arbiter") for line in (4, 5, 6)],
        (7, "warning", "ip-172-20-83-132.ec2.internal", pod, "genome-nexus", "mongodb-arbiter"),
    ]
    assert attrs_of(rows)[4]["reason"] == "Unhealthy" and attrs_of(rows)[4]["count"] == 1


def test_get_events_wide_scheduler_instance_is_no_host() -> None:
    """CKA notes' `kubectl get events -o wide`: SOURCE "my-scheduler, my-scheduler-my-scheduler" is the scheduler's instance."""
    events = _events("kubectl_get_events_wide_scheduler_instance_source_01.txt")
    rows = events.filter(pl.col("format") == "get_events")
    assert rows.select("line", "severity", "host", "pod", "namespace").rows() == [(4, "info", None, "nginx", "default")]
    assert attrs_of(rows)[0]["source"] == "my-scheduler, my-scheduler-my-scheduler"


def test_describe_job_events_under_a_ragged_pre_1_10_header() -> None:
    """kubernetes #90124: tabs pasted as uneven runs of spaces ("FirstSeen LastSeen  Count From    SubObjectPath …")."""
    events = _events("kubectl_describe_job_events_ragged_old_header_quota_01.txt")
    rows = events.filter(pl.col("format") == "describe_events")
    assert rows.select("line", "kind", "severity", "pod").rows() == [(6, "log", "warning", None)]
    assert rows["message"][0].startswith('Error creating: pods "job-mem-ky5es" is forbidden: exceeded quota: quota, requested: memory=500Mi')
    attrs = attrs_of(rows)[0]
    assert (attrs["reason"], attrs["source"], attrs["count"], attrs["age"]) == ("FailedCreate", "job-controller", 1, "1m")


def test_status_fragment_of_a_pod_rejected_at_admission() -> None:
    """kubernetes #128854: a pod's status, phase Failed, reason UnexpectedAdmissionError (no healthy nvidia.com/gpu devices)."""
    events = _events("kubectl_status_yaml_fragment_rejected_unhealthy_gpu_devices_01.yaml")
    assert events.select("line", "n_lines", "source", "format", "kind", "severity").rows() == [(1, 5, "k8s", "pod_fragment", "log", "error")]
    assert events["message"][0].startswith("Pod was rejected: Allocate failed due to no healthy devices present")
    attrs = attrs_of(events)[0]
    assert (attrs["reason"], attrs["started"]) == ("UnexpectedAdmissionError", "2024-11-19T03:04:55z")


def test_json_last_state_fragment_of_a_sigkilled_container() -> None:
    """kubernetes #53669: a watched pod's "lastState" JSON, exit 137 with reason Error (a system OOM's SIGKILL): no OOM kind."""
    events = _events("kubectl_status_json_fragment_last_state_error_exit137_01.json")
    assert events.select("line", "n_lines", "format", "kind", "exit_code", "container_id", "ts_quality").rows() == [
        (1, 9, "pod_fragment", "log", 137, "5954f621c17f13706c25a215db06fe2bf7b9a9a6c732a909eb0db39d62346724", "exact")
    ]
    assert events["ts"][0] == datetime(2017, 10, 10, 17, 41, 58, tzinfo=UTC)
    assert attrs_of(events)[0]["state_field"] == "lastState"


def test_headless_events_rows_of_a_job_past_its_backoff_limit() -> None:
    """An incident review's `get events` rows: the Job's BackoffLimitExceeded is an error (its pods are done for),
    the pod rows keep their Warning and Normal levels. Without a NAMESPACE column the events are one namespace's: the
    one the Scheduled and BackOff rows name is every row's, the Job's too."""
    events = _events("kubectl_get_events_headerless_job_backoff_limit_exceeded_01.txt")
    assert events.height == 8
    assert events["severity"].to_list() == ["info"] * 5 + ["warning", "info", "error"]
    assert events["namespace"].to_list() == ["longhorn-system"] * 8
    failed = events.row(7, named=True)
    assert (failed["kind"], failed["message"], failed["pod"]) == ("log", "Job has reached the specified backoff limit", None)
    assert attrs_of(events)[7]["object"] == "job/longhorn-pre-upgrade"
    backoff = events.row(5, named=True)
    assert (backoff["pod"], backoff["namespace"], backoff["container"], backoff["pod_uid"]) == (
        "longhorn-pre-upgrade-rc9rr", "longhorn-system", "longhorn-pre-upgrade", "f3a4cd0b-b410-467b-ab23-6333bcc192dd",
    )


def test_status_fragment_of_a_job_failed_past_its_backoff_limit() -> None:
    """kubernetes #92245: a Job's pasted `status:` with its Failed condition: one error, at the condition's transition."""
    events = _events("kubectl_status_yaml_fragment_job_failed_backoff_limit_01.yaml")
    assert events.select("line", "n_lines", "source", "format", "kind", "severity", "ts_quality").rows() == [
        (1, 10, "k8s", "workload_fragment", "log", "error", "exact")
    ]
    assert events["ts"][0] == datetime(2020, 6, 18, 6, 6, 48, tzinfo=UTC)
    assert events["message"][0] == "Job has reached the specified backoff limit"
    attrs = attrs_of(events)[0]
    assert (attrs["reason"], attrs["started"]) == ("BackoffLimitExceeded", "2020-06-18T06:01:55Z")


_FAILED_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train-llm
  namespace: ml
status:
  conditions:
  - lastTransitionTime: "2024-05-01T10:00:00Z"
    message: Job was active longer than specified deadline
    reason: DeadlineExceeded
    status: "True"
    type: FailureTarget
  - lastTransitionTime: "2024-05-01T10:00:01Z"
    message: Job was active longer than specified deadline
    reason: DeadlineExceeded
    status: "True"
    type: Failed
  failed: 1
  startTime: "2024-05-01T09:00:00Z"
"""


@pytest.mark.parametrize(("status", "severity"), [('"True"', "error"), ('"False"', None)])
def test_a_job_document_with_a_failed_condition_is_an_error(status: str, severity: str | None) -> None:
    """`get job -o yaml` of a Job that failed (1.31+ writes FailureTarget first): its Failed condition, named."""
    events = rca.parse_text(_FAILED_JOB.replace('status: "True"\n    type: Failed', f"status: {status}\n    type: Failed"), file="job.yaml")
    assert events.select("line", "n_lines", "format", "severity").rows() == [(1, 19, "object_yaml", severity)]
    if severity:
        assert (events["ts"][0], events["namespace"][0]) == (datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC), "ml")
        attrs = attrs_of(events)[0]
        assert (attrs["object"], attrs["name"], attrs["reason"]) == ("Job", "train-llm", "DeadlineExceeded")


def test_a_table_of_two_namespaces_lends_neither() -> None:
    """Rows naming two namespaces (two commands' outputs pasted together) give none to the rows that name none."""
    events = _events_of(
        "5m          Normal    Scheduled              pod/a-1   Successfully assigned team-a/a-1 to node-1\n"
        "5m          Normal    Scheduled              pod/b-1   Successfully assigned team-b/b-1 to node-2\n"
        "4m          Warning   BackoffLimitExceeded   job/a     Job has reached the specified backoff limit\n"
    )
    assert events["namespace"].to_list() == ["team-a", "team-b", None]


def test_describe_job_names_no_pod() -> None:
    """kubernetes #96630: `kubectl describe jobs` prints a Pod Template, never a pod of its own: its Name is the Job's
    (attrs object), no record's pod; the namespace stays."""
    events = _events("kubectl_describe_job_pod_template_events_not_a_pod_01.txt")
    assert events.select("line", "format", "pod", "namespace").rows() == [
        (1, "describe", None, "default"),
        (15, "describe", None, "default"),
        (29, "describe_events", None, "default"),
        (30, "describe_events", None, "default"),
    ]
    assert {attrs["object"] for attrs in attrs_of(events)} == {"test-job"}


def test_get_table_of_custom_resources_keeps_each_row_named() -> None:
    """`kubectl get nodeclaims` (Karpenter): no pods, events or nodes table; each row is its object, named, its instance
    TYPE no event type, its empty NODE cell no host."""
    name = "kubectl_get_nodeclaims_ready_unknown_empty_node_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0] is k8s.SOURCE
    events = _events(name)
    assert events.height == 7
    assert set(events["format"]) == {"get_table"} and set(events["kind"]) == {"log"}
    assert events["severity"].is_null().all() and events["host"].is_null().all() and events["pod"].is_null().all()
    first = attrs_of(events)[0]
    assert (first["name"], first["type"], first["ready"], first["age"]) == ("atg-worker-ondemand-284k9", "m7i-flex.large", "Unknown", "7s")
    assert "event_type" not in first


def test_get_table_failed_status_is_an_error_in_the_prompts_namespace() -> None:
    """`kubectl -n kubeflow get studyjob` twice (Katib): the CONDITION column is the status; Failed is an error; the
    prompt names the namespace and the resource."""
    events = _events("kubectl_get_studyjob_condition_failed_prompt_namespace_01.txt")
    table = events.filter(pl.col("format") == "get_table")
    assert table.select("line", "severity", "namespace").rows() == [(3, None, "kubeflow"), (8, "error", "kubeflow"), (9, None, "kubeflow")]
    failed = attrs_of(table)[1]
    assert (failed["name"], failed["status"], failed["object"]) == ("pytorchjob-example", "Failed", "studyjob/pytorchjob-example")


def test_get_table_row_with_an_empty_state_cell() -> None:
    """`kubectl get pytorchjobs --namespace=kubeflow` under a zsh prompt: a PyTorchJob whose STATE is still empty."""
    name = "kubectl_get_pytorchjobs_empty_state_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0] is k8s.SOURCE
    row = _events(name).row(0, named=True)
    assert (row["line"], row["format"], row["namespace"], row["severity"], row["pod"]) == (3, "get_table", "kubeflow", None, None)
    assert json.loads(row["attrs"]) == {"name": "pytorch-simple", "age": "30m", "object": "pytorchjobs/pytorch-simple"}


def test_get_of_several_resources_keeps_the_pods_table_its_reader() -> None:
    """`kubectl get job,deploy,rs,pod,workload` (Kueue's docs): the Job's and the Workload's tables are generic, the pods'
    one stays get_pods (its pods named)."""
    events = _events("kubectl_get_job_pod_workload_mixed_tables_kueue_01.txt")
    assert events.select("line", "format").rows() == [
        (4, "get_table"), (7, "get_pods"), (8, "get_pods"), (9, "get_pods"), (12, "get_table"),
    ]
    assert events.filter(pl.col("format") == "get_pods")["pod"].to_list() == [
        "sample-elastic-job-468nl", "sample-elastic-job-gd9qn", "sample-elastic-job-snk6j",
    ]
    assert [a["name"] for a in attrs_of(events.filter(pl.col("format") == "get_table"))] == [
        "job.batch/sample-elastic-job", "workload.kueue.x-k8s.io/job-sample-elastic-job-615b3",
    ]


@pytest.mark.parametrize(
    ("table", "severity"),
    [
        ("NAME      STATUS   COMPLETIONS   DURATION   AGE\ntrain-0   Failed   0/1           5m         5m\n", "error"),
        ("NAMESPACE   NAME    STATUS   VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   AGE\nml          data    Lost     pv-1     0                             gp3            2d\n", "error"),
        ("NAME      STATUS     COMPLETIONS   DURATION   AGE\ntrain-0   Complete   1/1           5m         5m\n", None),
    ],
)
def test_get_table_status_cell_gives_the_severity(table: str, severity: str | None) -> None:
    events = rca.parse_text(table, file="get.txt", reference_time=datetime(2026, 12, 1, tzinfo=UTC))
    row = events.row(0, named=True)
    assert (row["format"], row["severity"]) == ("get_table", severity)


def test_failed_pytorchjob_row_then_its_grepped_pods() -> None:
    """A failed PyTorchJob's row under root's prompt, then its pods grepped from `get pod`: the job's STATE Failed is an
    error, the worker's Error too; both tables in the prompts' namespace."""
    events = _events("kubectl_get_pytorchjob_failed_then_pods_grep_error_01.txt")
    assert events.select("line", "format", "severity", "pod", "namespace").rows() == [
        (3, "get_table", "error", None, "kubeflow"),
        (6, "get_pods", None, "pytorchjob-master-0", "kubeflow"),
        (7, "get_pods", "error", "pytorchjob-worker-0", "kubeflow"),
    ]
    assert attrs_of(events)[0]["object"] == "pytorchjob/pytorchjob"


def test_an_eviction_message_s_negative_memory_figure_is_no_reading() -> None:
    # Found by the hostile-input property test: a damaged "was using -1Ki" gave a negative mem_used_bytes.
    from rca.sources._kube import eviction_fields

    messages = pl.DataFrame({"m": [
        "The node was low on resource: memory. Container citadel was using 1275700Ki, which exceeds its request of 0.",
        "The node was low on resource: memory. Container citadel was using -1Ki, which exceeds its request of -2Ki.",
    ]})
    fields = messages.select(eviction_fields(pl.col("m")).alias("f")).unnest("f")
    assert fields.select("used_bytes", "requested_bytes").rows() == [(1275700 * 1024, 0), (None, None)]


# --- describe node: device-plugin resources, condition severities ------------------------------


def test_describe_node_gpus_missing_from_allocatable_are_a_warning() -> None:
    """Capacity counts the GPUs the device plugin registered, Allocatable the healthy ones: fewer is a node losing GPUs."""
    for name, line, host, capacity, allocatable in (
        ("kubectl_describe_node_allocatable_gpu_zero_capacity_one_01.txt", 35, "node1", 1, 0),
        ("kubectl_describe_node_gpu_allocatable_below_capacity_hami_01.txt", 17, "gpu-000-001", 80, 70),
    ):
        events = _events(name)
        lost = events.filter(pl.col("format") == "describe_resources")
        assert lost.select("line", "n_lines", "kind", "severity", "host").rows() == [(line, 0, "log", "warning", host)], name
        assert attrs_of(lost)[0] == {"resource": "nvidia.com/gpu", "capacity": capacity, "allocatable": allocatable,
                                     "unavailable": capacity - allocatable}
        assert events["source"].unique().to_list() == ["k8s"]


def test_a_grepped_allocatable_block_with_no_gpus_is_a_warning_of_the_commanded_node() -> None:
    text = (
        '$ kubectl describe node gpu-worker-07 | grep -A6 "Allocatable:"\n'
        "Allocatable:\n  cpu:                62\n  hugepages-1Gi:      0\n  memory:             240Gi\n"
        "  nvidia.com/gpu:     0\n  amd.com/gpu:        2\n  devices.kubevirt.io/kvm:  0\n"
    )
    assert k8s.sniff(text.splitlines()) == pytest.approx(0.9)
    events = rca.parse_text(text, file="t")
    lost = events.filter(pl.col("format") == "describe_resources")
    assert lost.select("line", "severity", "host", "message").rows() == [(6, "warning", "gpu-worker-07", "nvidia.com/gpu allocatable 0")]
    assert attrs_of(lost) == [{"resource": "nvidia.com/gpu", "allocatable": 0}]
    _assert_accounted(text)


def test_describe_node_with_its_gpus_all_allocatable_has_no_resource_warning() -> None:
    events = _events("kubectl_describe_node_memory_pressure.txt")
    assert events.filter(pl.col("format") == "describe_resources").height == 0


def test_node_conditions_take_a_severity_from_what_they_report() -> None:
    """Ready False / Unknown: the node is down or unheard of (error); a pressure True: warning; healthy rows: none."""
    events = _events("kubectl_describe_node_conditions_tabs_ready_unknown_01.txt")
    assert events.select("line", "severity").rows() == [(4, None), (5, None), (6, None), (7, None), (8, "error")]
    pressure = _events("kubectl_describe_node_memory_pressure.txt").filter(pl.col("format") == "describe_conditions")
    assert pressure["severity"].to_list() == ["warning", None, None, None]
    text = (
        "  DiskPressure     True    Mon, 03 Jun 2024 08:12:40 +0000   Mon, 03 Jun 2024 08:12:40 +0000   KubeletHasDiskPressure   kubelet has disk pressure\n"
        "  Ready            False   Mon, 03 Jun 2024 08:12:40 +0000   Mon, 03 Jun 2024 08:12:40 +0000   KubeletNotReady          PLEG is not healthy\n"
    )
    assert rca.parse_text(text, file="t")["severity"].to_list() == ["warning", "error"]
