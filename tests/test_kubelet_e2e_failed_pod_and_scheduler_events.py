"""Kubernetes e2e output the kubelet source reads: a Ginkgo failure quoting a failed pod's status, a scheduler's dumped
event, and a file of the e2e framework's Logf lines alone."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from rca import sources
from tests.conftest import parse_log

# Synthetic Gomega dump of the framework's error, as the e2e job prints it (its quotes escaped inside s: "…").
_FAILED_POD_REPORT = (
    "Expected success, but got an error:\n"
    "    <*errors.errorString | 0xc003262610>: {\n"
    '        s: "pod \\"{pod}\\" failed with reason: \\"{reason}\\", message: \\"{message}\\"",\n'
    "    }\n"
)
_COUNTED = (
    "Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 2, Available: 0, which is unexpected"
)
_POD_NAMES = st.from_regex(r"[a-z0-9][-a-z0-9]{0,20}[a-z0-9]", fullmatch=True)


def _report(pod: str, reason: str, message: str) -> str:
    """Ginkgo's location, the framework's stamped line of the wait, then its failure (on line 3), as the e2e job prints them."""
    waited = f'/go/src/k8s.io/kubernetes/test/e2e/scheduling/nvidia-gpus.go:224\nNov 11 21:43:04.675: wait for pod "{pod}" to succeed\n'
    return waited + _FAILED_POD_REPORT.replace("{pod}", pod).replace("{reason}", reason).replace("{message}", message)


@settings(max_examples=6)
@given(pod=_POD_NAMES)
def test_failed_pod_report_names_the_pod_and_its_admission_error(pod: str) -> None:
    (event,) = parse_log(_report(pod, "UnexpectedAdmissionError", _COUNTED)).filter(line=3).to_dicts()
    assert (event["source"], event["kind"], event["pod"], event["severity"]) == ("kubelet", "log", pod, "error")
    attrs = json.loads(event["attrs"])
    assert (attrs["reason"], attrs["resource"], attrs["devices_requested"], attrs["devices_available"]) == (
        "UnexpectedAdmissionError",
        "nvidia.com/gpu",
        2,
        0,
    )


def test_failed_pod_report_of_an_eviction_is_the_pod_s_eviction() -> None:
    message = "The node was low on resource: memory. Container c was using 2Gi, which exceeds its request of 1Gi."
    (event,) = parse_log(_report("p-1", "Evicted", message)).filter(line=3).to_dicts()
    assert (event["kind"], event["pod"], event["mem_used_bytes"]) == ("eviction", "p-1", 2 << 30)


@settings(max_examples=6)
@given(pod=_POD_NAMES, scheduler=st.sampled_from(["default-scheduler", "kube-batch", "volcano"]))
def test_dumped_scheduler_event_names_its_pod(pod: str, scheduler: str) -> None:
    line = (
        f"Feb  4 15:44:07.174: INFO: At 2021-02-04 15:40:00 +0000 UTC - event for {pod}: {{{scheduler} }} FailedScheduling: "
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n"
    )
    (event,) = parse_log(line).to_dicts()
    assert (event["source"], event["kind"], event["pod"], event["host"], event["severity"]) == ("kubelet", "log", pod, None, "warning")
    assert json.loads(event["attrs"])["resource"] == "nvidia.com/gpu"


def test_dumped_scheduled_event_names_the_namespace_it_assigns() -> None:
    line = "Apr 24 21:35:59.553: INFO: At 2019-04-24 21:33:55 +0530 IST - event for p-0: {kube-batch } Scheduled: Successfully assigned ns-1/p-0 to w-1\n"
    (event,) = parse_log(line).to_dicts()
    assert (event["pod"], event["namespace"], event["severity"]) == ("p-0", "ns-1", "info")


def test_dumped_event_of_a_controller_names_no_pod() -> None:
    line = "Jul 25 07:40:00.000: INFO: At 2017-07-25 07:39:30 +0000 UTC - event for ds-1: {daemonset-controller } FailedPlacement: failed to place pod\n"
    (event,) = parse_log(line).to_dicts()
    assert event["pod"] is None


def test_file_of_e2e_logf_lines_alone_is_the_kubelet_s_e2e_format() -> None:
    head = ["Feb  4 15:44:07.174: INFO: Adding deviceplugin addon pod.", "Feb  4 15:44:07.660: INFO: Getting list of Nodes from API server"]
    source, score = sources.sniff(head)
    assert (source.name if source else None, score) == ("kubelet", 0.8)
    events = parse_log("\n".join(head) + "\n").to_dicts()
    assert [(e["format"], e["ts_raw"], e["severity"]) for e in events] == [
        ("e2e_framework", "Feb  4 15:44:07.174", "info"),
        ("e2e_framework", "Feb  4 15:44:07.660", "info"),
    ]
    assert events[0]["message"] == "Adding deviceplugin addon pod."


def test_text_that_only_mentions_a_level_is_not_claimed() -> None:
    source, _ = sources.sniff(["build step: INFO: done", "2021-02-04 15:44:07 INFO: other"])
    assert source is None or source.name != "kubelet"
