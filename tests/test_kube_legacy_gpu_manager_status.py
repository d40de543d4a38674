"""Pods the kubelet's own GPU manager (Kubernetes 1.6-1.9, before the device manager) refused GPUs.

Its error "requested number of GPUs unavailable. Requested: 4, Available: 0" names no resource but counts the GPUs the
pod asked for and those the node had. `kubectl get pods` printed it as the pod's STATUS, in words; the kubelet's sync
error carried it too. Both are a failed start: severity error, the counts in attrs, no resource made up.
"""

from __future__ import annotations

import json

import polars as pl

import rca
from rca.sources._kube import admission_devices
from tests.conftest import DATA

_GPU_MANAGER_ERROR = "requested number of GPUs unavailable. Requested: 4, Available: 0"


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


def _rows(text: str, name: str) -> list[dict]:
    return rca.parse_text(text, file=name).sort("line").to_dicts()


def test_admission_devices_counts_the_gpu_managers_error_without_a_resource() -> None:
    found = (
        pl.DataFrame({"m": [_GPU_MANAGER_ERROR, "requested number of GPUs available", "gpu 0/1 Running 0 7s"]})
        .select(admission_devices(pl.col("m")).alias("d"))["d"]
        .to_list()
    )
    assert found == [
        {"resource": None, "requested": 4, "available": 0},
        {"resource": None, "requested": None, "available": None},
        {"resource": None, "requested": None, "available": None},
    ]


def test_pods_row_whose_status_is_the_gpu_managers_error_is_a_failure_with_counts() -> None:
    text = (
        "NAME      READY     STATUS                                                             RESTARTS   AGE\n"
        f"trainer   0/1       {_GPU_MANAGER_ERROR}   0          36s\n"
        "other     1/1       Running                                                            0          7s\n"
    )
    failed, running = _rows(text, "kubectl_get_pods.txt")
    assert (failed["format"], failed["kind"], failed["severity"], failed["pod"]) == ("get_pods", "log", "error", "trainer")
    assert _attrs(failed) == {
        "status": _GPU_MANAGER_ERROR,
        "age": "36s",
        "ready": "0/1",
        "restarts": "0",
        "devices_requested": 4,
        "devices_available": 0,
    }
    assert (running["pod"], running["severity"]) == ("other", None)
    assert "devices_requested" not in _attrs(running)


def test_kubelet_sync_error_with_the_gpu_managers_error_counts_the_gpus() -> None:
    line = (
        "Mar 02 10:00:01 node-1 kubelet[1234]: E0302 10:00:01.123456    1234 pod_workers.go:182] Error syncing pod "
        '5f1c2b3a-ff00-11e6-8a7b-0800277c7a5a ("gpu_default(5f1c2b3a-ff00-11e6-8a7b-0800277c7a5a)"), skipping: failed to '
        f'"StartContainer" for "gpu" with RunContainerError: "GenerateRunContainerOptions: {_GPU_MANAGER_ERROR}"\n'
    )
    (event,) = _rows(line, "kubelet_journal.log")
    assert (event["source"], event["severity"], event["pod"], event["namespace"], event["container"]) == (
        "kubelet",
        "error",
        "gpu",
        "default",
        "gpu",
    )
    attrs = _attrs(event)
    assert (attrs["devices_requested"], attrs["devices_available"], attrs.get("resource")) == (4, 0, None)


def test_real_get_pods_runs_end_with_the_gpu_managers_status() -> None:
    name = "kubectl_get_pods_prompt_status_gpus_unavailable_requested_available_2017_01.txt"
    events = _rows((DATA / "k8s" / name).read_text(encoding="utf-8"), name)
    assert [(e["line"], e["pod"], e["severity"]) for e in events] == [(3, "gpu", None), (6, "gpu", None), (9, "gpu", "error")]
    assert (_attrs(events[-1])["devices_requested"], _attrs(events[-1])["devices_available"]) == (4, 0)
