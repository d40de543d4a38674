"""Pods the kubelet rejects at admission: the device counts, the status Message alone, topology statuses in words.

The device manager's admission failure names the resource and, where it counts them, what the pod requested and what
the kubelet had ("requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0"); every form
that carries it (the kubelet's event line, a describe's status Message, an event row, a pod status fragment) puts them
in attrs. Kubernetes 1.16's topology manager gave its rejected pods the status "Topology Affinity Error", in words.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.sources._kube import admission_devices
from tests.conftest import DATA


def _events(folder: str, name: str) -> pl.DataFrame:
    return rca.parse_text((DATA / folder / name).read_text(encoding="utf-8"), file=name)


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


def _devices(*messages: str) -> list[dict]:
    return pl.DataFrame({"m": list(messages)}).select(admission_devices(pl.col("m")).alias("d"))["d"].to_list()


def test_admission_devices_reads_each_wording() -> None:
    found = _devices(
        "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 4, Available: 0, which is unexpected",
        "Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested:1, Available: 0, which is unexpected",
        "Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/mig-1g.5gb, which is unexpected",
        "cannot allocate unhealthy devices      nvidia.com/gpu, which is unexpected",
        "Allocate failed due to rpc error: code = Unavailable desc = transport is closing, which is unexpected",
    )
    assert found == [
        {"resource": "nvidia.com/gpu", "requested": 4, "available": 0},
        {"resource": "nvidia.com/gpu", "requested": 1, "available": 0},
        {"resource": "nvidia.com/mig-1g.5gb", "requested": None, "available": None},
        {"resource": "nvidia.com/gpu", "requested": None, "available": None},
        {"resource": None, "requested": None, "available": None},
    ]


@settings(max_examples=30, deadline=None)
@given(
    vendor=st.from_regex(r"[a-z][a-z0-9]{0,8}\.(com|io)", fullmatch=True),
    name=st.from_regex(r"[a-z][-a-z0-9]{0,10}[a-z0-9]", fullmatch=True),
    requested=st.integers(0, 10_000),
    available=st.integers(0, 10_000),
    spaced=st.booleans(),
)
def test_admission_devices_round_trips_the_kubelet_format(vendor: str, name: str, requested: int, available: int, spaced: bool) -> None:
    gap = " " if spaced else ""
    message = (
        f"Allocate failed due to requested number of devices unavailable for {vendor}/{name}. "
        f"Requested:{gap}{requested}, Available:{gap}{available}, which is unexpected"
    )
    assert _devices(message) == [{"resource": f"{vendor}/{name}", "requested": requested, "available": available}]


def test_describe_status_cut_to_its_fields_is_an_error_with_the_counts() -> None:
    name = "kubectl_describe_pod_status_elided_unexpected_admission_requested_available_01.txt"
    lines = (DATA / "k8s" / name).read_text().splitlines()
    assert sources.sniff(lines)[0].name == "k8s"
    event = _events("k8s", name).row(0, named=True)
    assert (event["severity"], event["n_lines"]) == ("error", 4)
    assert _attrs(event) == {
        "reason": "UnexpectedAdmissionError",
        "status": "Failed",
        "resource": "nvidia.com/gpu",
        "devices_requested": 1,
        "devices_available": 0,
    }


def test_a_rejected_pods_status_message_alone_is_an_error() -> None:
    name = "kubectl_describe_message_pod_was_rejected_unhealthy_mig_devices_01.txt"
    assert sources.sniff((DATA / "k8s" / name).read_text().splitlines())[0].name == "k8s"
    event = _events("k8s", name).row(0, named=True)
    assert (event["source"], event["format"], event["severity"]) == ("k8s", "describe", "error")
    assert _attrs(event) == {"resource": "nvidia.com/mig-1g.5gb"}


def test_pre_126_status_message_then_pod_table() -> None:
    events = _events("k8s", "kubectl_describe_message_then_get_pods_unexpected_admission_gpu_lost_01.txt")
    assert events.select("line", "severity", "pod").rows() == [(1, "error", None), (6, "error", "rojin-2q6ld")]


def test_a_message_of_another_kind_stays_no_error() -> None:
    text = "Name:         x\nNamespace:    y\nNode:         n1\nStart Time:   Thu, 12 Mar 2020 16:58:22 +0800\nStatus:       Pending\nMessage:      Pod is waiting\n"
    events = rca.parse_text(text, file="d.txt")
    assert set(events["source"]) == {"k8s"}
    assert "error" not in set(events["severity"].drop_nulls())


def test_kubelet_event_line_counts_the_devices() -> None:
    event = _events("kubelet", "kubelet_klog_event_occurred_unexpected_admission_placeholder_pod_01.log").row(0, named=True)
    assert event["severity"] == "warning"
    assert {k: _attrs(event)[k] for k in ("resource", "devices_requested", "devices_available")} == {
        "resource": "nvidia.com/gpu",
        "devices_requested": 4,
        "devices_available": 0,
    }


def test_pod_status_fragment_names_the_unhealthy_resource() -> None:
    event = _events("k8s", "kubectl_status_yaml_fragment_rejected_unhealthy_gpu_devices_01.yaml").row(0, named=True)
    assert (event["severity"], _attrs(event)["resource"]) == ("error", "nvidia.com/gpu")


def test_topology_affinity_error_in_words_is_a_failed_pod() -> None:
    events = _events("k8s", "kubectl_get_pods_topology_affinity_error_words_status_01.txt")
    assert events.height == 12
    assert set(events["severity"]) == {"error"}
    assert {_attrs(row)["status"] for row in events.iter_rows(named=True)} == {"Topology Affinity Error"}


def test_headless_row_cut_after_restarts() -> None:
    name = "kubectl_get_pods_headless_topology_affinity_error_cut_after_restarts_01.txt"
    assert sources.sniff((DATA / "k8s" / name).read_text().splitlines())[0].name == "k8s"
    event = _events("k8s", name).row(0, named=True)
    assert (event["pod"], event["namespace"], event["severity"]) == ("kube-dns-b54d5f547-22dks", "kube-system", "error")
    assert _attrs(event) == {"status": "Topology Affinity Error", "ready": "0/3", "restarts": "0"}


def test_failed_probes_are_named_in_attrs() -> None:
    sync = _events("kubelet", "kubelet_klog_syncloop_probe_readiness_not_ready_01.log")
    assert [_attrs(row).get("probe_failed") for row in sync.iter_rows(named=True)] == ["readiness"] * 4
    assert set(sync["pod"]) == {"northftpmaster-0"}
    aks = _events("kubelet", "kubelet_journal_liveness_kill_aks_2025_01.log")
    probes = {row["line"]: _attrs(row).get("probe_failed") for row in aks.iter_rows(named=True)}
    assert (probes[3], probes[4], probes[1]) == ("liveness", "liveness", None)
    ready = rca.parse_text('I0509 08:18:50.485093  941881 kubelet.go:2668] "SyncLoop (probe)" probe="readiness" status="ready" pod="a/b"\n', file="k.log")
    assert "probe_failed" not in _attrs(ready.row(0, named=True))
