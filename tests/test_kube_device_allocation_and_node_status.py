"""The kubelet device manager's allocation lines, a Node object's lost devices, and the pod killer's lines.

The device manager names the devices it asks a plugin to allocate to a container ("Making allocation request for device
plugin" devices=[…], before 1.21 "Making allocation request for devices […] for device plugin <resource>"): the first
GPU (or MIG slice) is the event's GPU, the whole list stays in attrs. A Node (``kubectl get node -o yaml|json``, an
item of ``get nodes``, a pasted ``status:``) whose extended resource counts fewer allocatable than its capacity, or a
GPU resource counted 0, is a warning naming the node, as ``describe node``'s Capacity / Allocatable blocks are.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

import rca
from tests.conftest import DATA


def _events(folder: str, name: str) -> pl.DataFrame:
    return rca.parse_text((DATA / folder / name).read_text(encoding="utf-8"), file=name)


def _one(text: str, file: str = "kubelet.log") -> dict:
    return rca.parse_text(text, file=file).row(0, named=True)


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


JOURNAL = "Jul 30 19:37:03 gpu-node kubelet[26361]: I0730 19:37:03.952761   26361 manager.go:819] "
MIG_FIXTURE = "kubelet_journal_device_manager_allocation_mig_v4_01.log"


def test_allocation_request_names_the_mig_slice_and_resource() -> None:
    events = _events("kubelet", MIG_FIXTURE)
    allocated = events.filter(pl.col("line") == 5).row(0, named=True)
    assert allocated["gpu_uuid"] == "MIG-5e2f454b-6cf3-51c3-a060-0a34ba38dfe4"
    assert (allocated["kind"], allocated["severity"], allocated["process"]) == ("log", "info", "kubelet")
    attrs = _attrs(allocated)
    assert attrs["devices"] == ["MIG-5e2f454b-6cf3-51c3-a060-0a34ba38dfe4"]
    assert attrs["resource"] == "nvidia.com/mig-3g.48gb"


def test_devices_needed_line_names_the_container_and_count() -> None:
    events = _events("kubelet", MIG_FIXTURE)
    needed = events.filter(pl.col("line") == 20).row(0, named=True)
    assert (needed["container"], needed["pod_uid"]) == ("neal-0729-6", "69e0758e-d625-4013-9258-df8b7ddf04e2")
    assert _attrs(needed)["resource"] == "nvidia.com/gpu"
    assert _attrs(needed)["devices_needed"] == 1
    # "Looking for needed resources" of cpu names no device resource.
    assert "resource" not in _attrs(events.filter(pl.col("line") == 6).row(0, named=True))


def test_newer_quoted_device_list_keeps_every_gpu_and_the_pod() -> None:
    line = (
        JOURNAL + '"Making allocation request for device plugin" devices=["GPU-8519f552-3983-e6d6-b2f0-f4a9fccad783",'
        '"GPU-1e0bc5d0-2a8e-b0c4-77e5-1f0b2c3d4e5f"] resourceName="nvidia.com/gpu" pod="ml/train-0" containerName="trainer"\n'
    )
    event = _one(line)
    assert event["gpu_uuid"] == "GPU-8519f552-3983-e6d6-b2f0-f4a9fccad783"
    assert _attrs(event)["devices"] == ["GPU-8519f552-3983-e6d6-b2f0-f4a9fccad783", "GPU-1e0bc5d0-2a8e-b0c4-77e5-1f0b2c3d4e5f"]
    assert (event["namespace"], event["pod"], event["container"]) == ("ml", "train-0", "trainer")


def test_legacy_allocation_lines_before_structured_logging() -> None:
    made = _one(JOURNAL + "Making allocation request for devices [GPU-aaaa1111-2222-3333-4444-555566667777] for device plugin nvidia.com/gpu\n")
    assert made["gpu_uuid"] == "GPU-aaaa1111-2222-3333-4444-555566667777"
    assert _attrs(made)["resource"] == "nvidia.com/gpu"
    needs = _one(JOURNAL + 'Needs to allocate 2 "nvidia.com/gpu" for pod "0d1e2f3a-4b5c-6d7e-8f90-a1b2c3d4e5f6" container "cuda"\n')
    assert (needs["pod_uid"], needs["container"]) == ("0d1e2f3a-4b5c-6d7e-8f90-a1b2c3d4e5f6", "cuda")
    assert (_attrs(needs)["devices_needed"], _attrs(needs)["resource"]) == (2, "nvidia.com/gpu")


def test_devices_that_are_not_gpus_stay_in_attrs_without_a_gpu() -> None:
    event = _one(JOURNAL + '"Making allocation request for device plugin" devices=["kvm0"] resourceName="github.com.ihcsim/kvm"\n')
    assert event["gpu_uuid"] is None
    assert _attrs(event)["devices"] == ["kvm0"]


@given(st.lists(st.uuids().map(lambda u: f"GPU-{u}"), min_size=1, max_size=8), st.booleans())
def test_first_allocated_gpu_is_the_events_gpu(uuids: list[str], quoted: bool) -> None:
    listed = ",".join(f'"{u}"' for u in uuids) if quoted else " ".join(uuids)
    event = _one(JOURNAL + f'"Making allocation request for device plugin" devices=[{listed}] resourceName="nvidia.com/gpu"\n')
    assert event["gpu_uuid"] == uuids[0]
    assert _attrs(event)["devices"] == uuids


def test_node_status_fragment_with_no_allocatable_gpu_is_a_warning_naming_the_node() -> None:
    events = _events("k8s", "kubectl_get_node_yaml_status_fragment_allocatable_gpu_zero_01.yaml")
    assert events.height == 1
    node = events.row(0, named=True)
    assert (node["source"], node["severity"], node["host"]) == ("k8s", "warning", "ocio-gpu01")
    assert node["message"] == "nvidia.com/gpu allocatable 0 of capacity 16"
    assert {k: _attrs(node)[k] for k in ("resource", "capacity", "allocatable", "unavailable")} == {
        "resource": "nvidia.com/gpu", "capacity": 16, "allocatable": 0, "unavailable": 16,
    }


def _node(name: str, capacity: int, allocatable: int) -> dict:
    return {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
        "status": {"capacity": {"cpu": "8", "nvidia.com/gpu": str(capacity)}, "allocatable": {"cpu": "8", "nvidia.com/gpu": str(allocatable)}},
    }


def test_get_nodes_json_list_flags_only_the_node_that_lost_gpus() -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [_node("healthy", 8, 8), _node("degraded", 8, 6)]}
    events = rca.parse_text(json.dumps(listed, indent=4) + "\n", file="nodes.json")
    warned = events.filter(pl.col("severity") == "warning")
    assert warned["host"].to_list() == ["degraded"]
    assert warned["message"].to_list() == ["nvidia.com/gpu allocatable 6 of capacity 8"]
    assert _attrs(warned.row(0, named=True))["unavailable"] == 2
    # The healthy node is still accounted for, as a plain row.
    assert events.filter(pl.col("severity").is_null() | (pl.col("severity") != "warning")).height == 1


def test_jq_status_object_of_a_node() -> None:
    status = json.dumps(_node("n", 4, 3)["status"] | {"addresses": [{"address": "gpu-3", "type": "Hostname"}]}, indent=2)
    event = _one(status + "\n", file="status.json")
    assert (event["host"], event["severity"], event["message"]) == ("gpu-3", "warning", "nvidia.com/gpu allocatable 3 of capacity 4")


def test_killing_unwanted_pod_names_the_pod_and_kill_failure_its_container_id() -> None:
    events = _events("kubelet", "kubelet_journal_aks_killing_unwanted_pod_podname_kill_failed_01.log")
    unwanted = events.filter(pl.col("line") == 2).row(0, named=True)
    assert (unwanted["pod"], unwanted["namespace"], unwanted["severity"]) == ("alloc-mem-leak", None, "info")
    failed = events.filter(pl.col("line") == 3).row(0, named=True)
    assert failed["container_id"] == "d3f3b2f7f02b832711593044c30a165bd991b4af5b1eadbb0c6d313d57660616"
    killing = events.filter(pl.col("line") == 4).row(0, named=True)
    assert (killing["severity"], killing["pod"], killing["container"]) == ("error", "alloc-mem-leak", "alloc-mem")
