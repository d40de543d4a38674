"""Kubelet admission denials and container ids in quoted form (real samples plus the kubelet's documented lines).

``"Pod admission denied"`` is the kubelet's own line for a pod it rejects (pkg/kubelet, 1.22+): it carries the reason
and message of the Warning event the kubelet records for the rejection. The eviction admitter's reason is "Evicted"
with the message "The node had condition: [X]. ".
"""

from __future__ import annotations

import json

import polars as pl

import rca
from tests.conftest import DATA

FOLDER = DATA / "kubelet"


def _events(name: str) -> pl.DataFrame:
    return rca.parse_text((FOLDER / name).read_text(encoding="utf-8"), file=name)


def _one(line: str) -> dict:
    return rca.parse_text(line + "\n", file="kubelet.log").row(0, named=True)


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


def test_pod_admission_denied_is_a_warning_with_its_reason() -> None:
    events = _events("kubelet_journal_pod_admission_denied_unexpected_admission_error_01.log")
    denied = events.filter(pl.col("line") == 2).row(0, named=True)
    assert (denied["kind"], denied["severity"]) == ("log", "warning")
    assert (denied["namespace"], denied["pod"]) == ("kube-system", "kube-scheduler-master01")
    assert denied["pod_uid"] == "bc449538bd25dc8e916a59305e6d6fdc"
    assert _attrs(denied)["reason"] == "UnexpectedAdmissionError"
    # The admit handler's own line before it keeps the level it was logged at.
    assert events.filter(pl.col("line") == 1)["severity"].to_list() == ["info"]


def test_admission_denied_for_node_condition_is_an_eviction_admission_rejection() -> None:
    event = _one(
        'I0527 09:00:05.110852    1025 kubelet.go:2357] "Pod admission denied" podUID="0b5e4c8f-56f4-4b4e-9c8c-1f1c0a9e3c11" '
        'pod="monitoring/prometheus-k8s-0" reason="Evicted" message="The node had condition: [MemoryPressure]. "'
    )
    attrs = _attrs(event)
    assert (event["kind"], event["severity"], event["pod"]) == ("eviction", "warning", "prometheus-k8s-0")
    assert (attrs["eviction_stage"], attrs["reason"], attrs["conditions"]) == ("admission_rejected", "Evicted", ["MemoryPressure"])


def test_admission_denied_device_counts_are_no_bytes() -> None:
    event = _one(
        'I0527 09:00:05.110852    1025 kubelet.go:2357] "Pod admission denied" podUID="0b5e4c8f-56f4-4b4e-9c8c-1f1c0a9e3c11" '
        'pod="default/x" reason="OutOfnvidia.com/gpu" '
        'message="Node didn\'t have enough resource: nvidia.com/gpu, requested: 1, used: 8, capacity: 8"'
    )
    attrs = _attrs(event)
    assert attrs["reason"] == "OutOfnvidia.com/gpu"
    assert "capacity_bytes" not in attrs and "available_bytes" not in attrs


def test_container_quoted_by_runtime_id_is_its_id_not_its_name() -> None:
    events = _events("kubelet_journal_terminated_container_quoted_id_eviction_no_observation_01.log")
    first = events.filter(pl.col("line") == 1).row(0, named=True)
    assert first["container"] is None
    assert first["container_id"] == "3d8582cef73e93dcfbc7ed4d73ba9483b3ac5254adf6870c0949becd5f63df99"
    assert events["kind"].to_list() == ["log"] * 3

