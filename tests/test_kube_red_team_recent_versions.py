"""Red-team of the kubelet and k8s sources with recent Kubernetes wording: ephemeral-storage eviction figures, the
eviction manager's cleanup stages, and the kubelet's JSON-printed container id struct."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import rca

DATA = Path(__file__).parent / "data"
GIB = 1 << 30


def _evictions(text: str, name: str) -> list[dict]:
    events = rca.parse_text(text, file=name).filter(pl.col("kind") == "eviction")
    return [{**row, "attrs": json.loads(row["attrs"] or "{}")} for row in events.iter_rows(named=True)]


def _fixture_evictions(folder: str, name: str) -> list[dict]:
    return _evictions((DATA / folder / name).read_text(), name)


def test_container_local_storage_limit_is_recorded_in_bytes() -> None:
    (row,) = _fixture_evictions("k8s", "kubectl_describe_pod_evicted_container_local_ephemeral_storage_limit_01.txt")
    assert row["container"] == "consumerui"
    assert row["attrs"]["resource"] == "ephemeral-storage"
    assert row["attrs"]["storage_limit_bytes"] == 20 << 20
    assert row["mem_used_bytes"] is None


def test_pod_total_storage_limit_is_recorded_in_bytes() -> None:
    (row,) = _fixture_evictions("k8s", "kubectl_describe_events_evicted_pod_ephemeral_total_limit_kind_01.txt")
    assert row["pod"] == "grow-test-c677dc98c-qj7mc"
    assert row["attrs"]["storage_limit_bytes"] == 5 << 20


def test_node_low_on_ephemeral_storage_records_the_container_disk_use_not_memory() -> None:
    (row,) = _fixture_evictions("k8s", "kubectl_jsonpath_evicted_ephemeral_storage_01.txt")
    assert row["container"] == "infras-logstash"
    assert row["attrs"]["threshold_bytes"] == 30 * GIB
    assert row["attrs"]["available_bytes"] == 24094024 << 10
    assert row["attrs"]["storage_used_bytes"] == 2456 << 10
    assert row["attrs"]["storage_requested_bytes"] == 0
    assert (row["mem_used_bytes"], row["mem_requested_bytes"]) == (None, None)


def test_older_exceeds_its_request_wording_gives_the_same_storage_figures() -> None:
    (row,) = _fixture_evictions("k8s", "kubectl_describe_pod_evicted_ephemeral_storage_01.txt")
    assert (row["attrs"]["storage_used_bytes"], row["attrs"]["storage_requested_bytes"]) == (92 << 10, 0)


def test_memory_eviction_keeps_its_columns_and_gets_no_storage_attrs() -> None:
    rows = _fixture_evictions("kubelet", "kubelet_structured_oom_eviction.log")
    (row,) = [row for row in rows if row["mem_used_bytes"] is not None]
    assert (row["mem_used_bytes"], row["mem_requested_bytes"]) == (14395616 << 10, 8 * GIB)
    assert not any(key.startswith("storage_") for key in row["attrs"])


KUBELET_EVICTING = (
    'I0614 10:02:1{n}.402990    2480 eviction_manager.go:612] "Evicting pod" pod="ml/trainer-0" '
    'podUID="6f1c2a8e-3b4d-4e5f-9a6b-7c8d9e0f1a2b" message="{message} "\n'
)


def test_kubelet_evicting_line_quotes_each_local_storage_message_with_its_figures() -> None:
    messages = (
        "Pod ephemeral local storage usage exceeds the total limit of containers 10Gi.",
        'Container trainer exceeded its local ephemeral storage limit \\"1Gi\\".',
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 5Gi. "
        "Container trainer was using 7Gi, request is 0, has larger consumption of ephemeral-storage.",
    )
    text = "".join(KUBELET_EVICTING.format(n=n, message=message) for n, message in enumerate(messages))
    pod_total, container, node = (row["attrs"] for row in _evictions(text, "kubelet.log"))
    assert (pod_total["resource"], pod_total["storage_limit_bytes"]) == ("ephemeral-storage", 10 * GIB)
    assert (container["resource"], container["storage_limit_bytes"]) == ("ephemeral-storage", GIB)
    assert (node["threshold_bytes"], node["available_bytes"]) == (10 * GIB, 5 * GIB)
    assert (node["storage_used_bytes"], node["storage_requested_bytes"]) == (7 * GIB, 0)


def test_event_object_with_emptydir_limit_records_it() -> None:
    event = {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": "web-0.17d", "namespace": "shop"},
        "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "shop"},
        "reason": "Evicted",
        "type": "Warning",
        "message": 'Usage of EmptyDir volume "cache" exceeds the limit "512Mi". ',
        "lastTimestamp": "2025-03-01T10:00:00Z",
    }
    text = json.dumps({"kind": "List", "apiVersion": "v1", "items": [event]})
    (row,) = _evictions(text, "events.json")
    assert row["pod"] == "web-0"
    assert (row["attrs"]["resource"], row["attrs"]["storage_limit_bytes"]) == ("ephemeral-storage", 512 << 20)


def test_eviction_manager_cleanup_end_stages_name_the_evicted_pods_but_are_no_eviction() -> None:
    text = (
        'I0614 10:02:14.402990    2480 eviction_manager.go:405] "Eviction manager: timed out waiting for pods to be cleaned up" '
        'pods=["ml/trainer-0"]\n'
        'I0614 10:02:15.402990    2480 eviction_manager.go:411] "Eviction manager: pods successfully cleaned up" pods=["ml/trainer-1"]\n'
    )
    events = rca.parse_text(text, file="kubelet.log")
    assert events["kind"].to_list() == ["log", "log"]
    timeout, cleaned = ({**row, "attrs": json.loads(row["attrs"])} for row in events.iter_rows(named=True))
    assert (timeout["attrs"]["eviction_stage"], timeout["attrs"]["evicted_pods"]) == ("cleanup_timeout", ["ml/trainer-0"])
    assert (cleaned["attrs"]["eviction_stage"], cleaned["attrs"]["evicted_pods"]) == ("cleaned_up", ["ml/trainer-1"])
    assert (cleaned["namespace"], cleaned["pod"]) == ("ml", "trainer-1")


def test_json_printed_container_id_struct_gives_the_container_id() -> None:
    name = "kubelet_journal_aks_pod_delete_json_pleg_event_container_id_struct_01.log"
    events = rca.parse_text((DATA / "kubelet" / name).read_text(), file=name)
    deleted = events.filter(pl.col("message").str.contains("DeleteContainer returned error", literal=True))
    assert deleted["container_id"].to_list() == ["c65a36d4090569f70b6badb5b6127ad773ebd7e5ce18d3872b8e93ee4fb52cab"]
    killing = events.filter(pl.col("message").str.contains("Killing container with a grace period", literal=True)).row(0, named=True)
    assert (killing["namespace"], killing["pod"], killing["container"]) == ("default", "nginx", "nginx")
    assert killing["kind"] == "log"
