"""GPU pods Kubernetes cannot schedule or start: the scheduler's and cluster-autoscaler's counts, the kubelet's counted
device rejection and the runtime's failure to create a container, in each way kubectl and the kubelet print them.
The lines are synthetic, in the wordings of kube-scheduler, cluster-autoscaler, the kubelet and containerd."""

from __future__ import annotations

import json

import polars as pl
import pytest

import rca
from tests.conftest import FIXED_MTIME

SCHEDULING = "0/8 nodes are available: 2 Insufficient nvidia.com/gpu, 6 node(s) didn't match Pod's node affinity/selector."
NO_SCALE_UP = "pod didn't trigger scale-up: 3 Insufficient nvidia.com/gpu, 1 max node group size reached"
SCALE_UP = "pod triggered scale-up: [{gpu-pool 1->2 (max: 4)}]"
REJECTED = (
    "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected"
)
RUNTIME = (
    "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to "
    "start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , "
    "stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown"
)
ROWS = (
    ("Warning", "FailedScheduling", "default-scheduler", SCHEDULING),
    ("Normal", "NotTriggerScaleUp", "cluster-autoscaler", NO_SCALE_UP),
    ("Normal", "TriggeredScaleUp", "cluster-autoscaler", SCALE_UP),
    ("Warning", "UnexpectedAdmissionError", "kubelet", REJECTED),
    ("Warning", "Failed", "kubelet", RUNTIME),
)
WANTED = {
    "FailedScheduling": ("warning", {"resource": "nvidia.com/gpu", "nodes_available": 0, "nodes_total": 8, "insufficient_count": 2}),
    "NotTriggerScaleUp": ("warning", {"resource": "nvidia.com/gpu", "insufficient_count": 3}),
    "TriggeredScaleUp": ("info", {}),
    "UnexpectedAdmissionError": ("error", {"resource": "nvidia.com/gpu", "devices_requested": 1, "devices_available": 0}),
    "Failed": ("error", {}),
}


def _get_events() -> str:
    header = f"{'LAST SEEN':<12}{'TYPE':<10}{'REASON':<27}{'OBJECT':<18}MESSAGE"
    rows = [f"{'2m':<12}{kind:<10}{reason:<27}{'pod/train-0':<18}{message}" for kind, reason, _, message in ROWS]
    return "\n".join([header, *rows]) + "\n"


def _describe_events() -> str:
    rows = [f"  {kind:<8} {reason:<25} {'2m':<5} {source:<19} {message}" for kind, reason, source, message in ROWS]
    head = [
        "Events:",
        f"  {'Type':<8} {'Reason':<25} {'Age':<5} {'From':<19} Message",
        f"  {'----':<8} {'------':<25} {'----':<5} {'----':<19} -------",
    ]
    return "\n".join([*head, *rows]) + "\n"


def _json_events() -> str:
    items = [
        {
            "apiVersion": "v1",
            "kind": "Event",
            "involvedObject": {"kind": "Pod", "name": "train-0", "namespace": "ml"},
            "type": kind,
            "reason": reason,
            "message": message,
            "lastTimestamp": "2026-01-02T03:04:05Z",
        }
        for kind, reason, _, message in ROWS
    ]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2) + "\n"


def _by_reason(text: str, name: str) -> dict[str, dict]:
    events = rca.parse_text(text, file=name, reference_time=FIXED_MTIME).filter(pl.col("attrs").is_not_null())
    found = {}
    for row in events.select("severity", "attrs").to_dicts():
        attrs = json.loads(row["attrs"])
        found.setdefault(attrs.get("reason"), {"severity": row["severity"], **attrs})
    return found


@pytest.mark.parametrize(
    ("text", "name"),
    [(_get_events(), "kubectl_get_events.txt"), (_describe_events(), "kubectl_describe_pod.txt"), (_json_events(), "events.json")],
    ids=["get_events", "describe_events", "json"],
)
def test_scheduling_and_start_failures_have_their_severity_and_counts(text: str, name: str) -> None:
    found = _by_reason(text, name)
    for reason, (severity, attrs) in WANTED.items():
        assert found[reason]["severity"] == severity, reason
        assert {key: found[reason].get(key) for key in attrs} == attrs, reason


def test_admission_failure_without_counts_stays_a_warning() -> None:
    rpc = "Allocate failed due to rpc error: code = Unavailable desc = transport is closing, which is unexpected"
    text = _get_events().splitlines()[0] + f"\n{'2m':<12}{'Warning':<10}{'UnexpectedAdmissionError':<27}{'pod/train-0':<18}{rpc}\n"
    assert _by_reason(text, "kubectl_get_events.txt")["UnexpectedAdmissionError"]["severity"] == "warning"


def test_kubelet_klog_runtime_failure_event_is_an_error() -> None:
    line = (
        'I0102 03:04:05.000001    1234 event.go:294] "Event occurred" object="ml/train-0" kind="Pod" apiVersion="v1" type="Warning" '
        f'reason="Failed" message="{RUNTIME}"\n'
    )
    events = rca.parse_text(line, file="kubelet.log", reference_time=FIXED_MTIME)
    assert events.select("severity", "pod", "namespace").row(0) == ("error", "train-0", "ml")


def test_describe_last_state_start_error_is_an_error_with_exit_code_128() -> None:
    text = (
        "Name:         train-0\nNamespace:    ml\nStatus:       Running\nContainers:\n  trainer:\n"
        "    Container ID:   containerd://f8e0836a357dcb47c6f7de38bd7b183956024104faf5118e85a44ee6e41f687d\n"
        "    Image:          nvcr.io/nvidia/pytorch:24.01-py3\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n"
        f"    Last State:     Terminated\n      Reason:       StartError\n      Message:      {RUNTIME.removeprefix('Error: ')}\n"
        "      Exit Code:    128\n      Started:      Thu, 01 Jan 1970 00:00:00 +0000\n"
        "      Finished:     Fri, 02 Jan 2026 03:04:05 +0000\n    Ready:          False\n    Restart Count:  3\n"
    )
    events = rca.parse_text(text, file="kubectl_describe_pod.txt", reference_time=FIXED_MTIME).filter(pl.col("exit_code").is_not_null())
    assert events.select("severity", "pod", "container", "exit_code").row(0) == ("error", "train-0", "trainer", 128)
