"""Control-plane views of a GPU job's failure: the taint manager's evictions and the scheduler's "Insufficient" verdicts.

kube-controller-manager deletes the pods of a node gone NotReady (its taint manager, or the node controller before
taints): each such pod is an eviction, named. kube-scheduler's FailedScheduling names the resources no node had
enough of; the one a GPU job waits on goes to attrs ``resource``. Real samples are under tests/data (SOURCES.md).
"""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rca
from rca.sources._kube import event_kind, eviction_fields, insufficient_resource, insufficient_resources
from tests.conftest import FIXED_MTIME, fixture_path


def _parse(name: str) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_text(encoding="utf-8"), file=name, reference_time=FIXED_MTIME)


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"]) if event["attrs"] else {}


def _one_text(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x.log", reference_time=FIXED_MTIME)


def test_taint_manager_deletions_are_evictions_of_named_pods() -> None:
    events = _parse("kubelet_klog_controller_manager_taint_manager_deleting_pods_01.log")
    evictions = events.filter(pl.col("kind") == "eviction")
    assert evictions["line"].to_list() == [3, 4, 5, 6]
    assert evictions["pod"].to_list() == ["ice1-1", "datacenter-dc-0", "ice1-1", "datacenter-dc-0"]
    assert set(evictions["namespace"]) == {"supcon"}
    # taint_manager.go names the component for the whole bare file, event.go lines included.
    assert set(events["process"]) == {"kube-controller-manager"}
    assert _attrs(evictions.row(0, named=True))["eviction_stage"] == "taint_eviction"
    assert _attrs(evictions.row(2, named=True))["reason"] == "TaintManagerEviction"
    # The NodeNotReady events before them are warnings, not evictions.
    not_ready = events.filter(pl.col("line") <= 2)
    assert not_ready["kind"].to_list() == ["log", "log"] and not_ready["severity"].to_list() == ["warning", "warning"]


@pytest.mark.parametrize(
    "line",
    [
        "I0501 10:00:00.000000       1 taint_manager.go:106] NoExecuteTaintManager is deleting Pod: team-a/trainer-worker-3",
        'I0501 10:00:00.000000       1 taint_eviction.go:110] "Deleting pod" controller="taint-eviction-controller" pod="team-a/trainer-worker-3"',
    ],
)
def test_taint_manager_wordings_of_other_releases(line: str) -> None:
    event = _one_text(line + "\n").row(0, named=True)
    assert (event["kind"], event["pod"], event["namespace"]) == ("eviction", "trainer-worker-3", "team-a")
    assert event["process"] == "kube-controller-manager"


def test_cancelled_taint_deletion_is_no_eviction() -> None:
    kinds = pl.select(
        event_kind(pl.lit("TaintManagerEviction"), pl.lit("Cancelling deletion of Pod default/my-nginx-54fc6798c5-9ldng"))
    ).item()
    assert kinds == "log"
    node_controller = pl.select(event_kind(pl.lit("NodeControllerEviction"), pl.lit("Marking for deletion Pod ingester-01 from Node n1"))).item()
    assert node_controller == "eviction"


def test_node_level_evicting_pods_line_stays_a_log() -> None:
    # "Evicting pods on node X" (nodecontroller.go, 2016) queues a node, naming no pod: its expected row says log.
    event = _parse("kubelet_klog_controller_manager_nodecontroller_evicting_pods_01.log").row(0, named=True)
    assert event["kind"] == "log"


@pytest.mark.parametrize(
    ("name", "line", "resource", "insufficient", "count"),
    [
        ("kubectl_describe_pod_events_failedscheduling_gpu_cpu_memory_gke_01.txt", 4, "nvidia.com/gpu", ["cpu", "nvidia.com/gpu", "memory"], None),
        ("kubectl_describe_events_headerless_failedscheduling_preemption_gpu_01.txt", 1, "nvidia.com/gpu", ["nvidia.com/gpu"], 351),
        ("kubectl_describe_events_mixed_padding_insufficient_gpu_01.txt", 2, "nvidia.com/gpu", ["nvidia.com/gpu"], 2),
        ("kubelet_klog_kube_scheduler_unable_to_schedule_gpu_memory_01.log", 6, "nvidia.com/gpu.memory", ["nvidia.com/gpu.memory"], None),
    ],
)
def test_failed_scheduling_names_the_insufficient_gpu(name: str, line: int, resource: str, insufficient: list[str], count: int | None) -> None:
    event = _parse(name).filter(pl.col("line") == line).row(0, named=True)
    attrs = _attrs(event)
    assert (attrs["resource"], attrs["insufficient_resources"], attrs.get("count")) == (resource, insufficient, count)
    # "0/2 nodes are available: 1 …" counts nodes: no threshold's available bytes.
    assert "available_bytes" not in attrs
    assert event["kind"] == "log"


def test_failed_scheduling_event_severity_is_warning() -> None:
    events = _parse("kubectl_describe_pod_events_failedscheduling_gpu_cpu_memory_gke_01.txt")
    assert events.filter(pl.col("line") == 4)["severity"].to_list() == ["warning"]


def test_eviction_message_available_is_still_read() -> None:
    message = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 87608Ki."
    assert pl.select(eviction_fields(pl.lit(message)).struct.field("available_bytes")).item() == 87608 * 1024
    scheduler = "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable."
    assert pl.select(eviction_fields(pl.lit(scheduler)).struct.field("available_bytes")).item() is None


_RESOURCE = st.from_regex(r"\A(?:cpu|memory|ephemeral-storage|hugepages-2Mi|nvidia\.com/gpu|amd\.com/gpu|nvidia\.com/mig-1g\.5gb)\Z")


@given(st.lists(st.tuples(st.integers(1, 64), _RESOURCE), min_size=1, max_size=4, unique_by=lambda pair: pair[1]), st.booleans())
def test_insufficient_resources_in_any_order(parts: list[tuple[int, str]], preemption: bool) -> None:
    total = sum(count for count, _ in parts)
    message = f"0/{total} nodes are available: " + ", ".join(f"{count} Insufficient {name}" for count, name in parts) + "."
    if preemption:
        message += f" preemption: 0/{total} nodes are available: {total} No preemption victims found for incoming pod."
    found = pl.select(insufficient_resources(pl.lit(message))).item().to_list()
    assert found == [name for _, name in parts]
    gpus = [name for name in found if "/" in name and ("gpu" in name or "mig-" in name)]
    assert pl.select(insufficient_resource(insufficient_resources(pl.lit(message)))).item() == (gpus[0] if gpus else found[0])


def test_no_scheduling_verdict_names_no_resource() -> None:
    assert pl.select(insufficient_resources(pl.lit("Insufficient permissions for user x"))).item() is None
