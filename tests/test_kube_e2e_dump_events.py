"""The e2e framework's event dump in its older Logf form ("Aug 24 09:01:32.123: INFO: At … - event for …"): each event
timed by its own "At" time, kind by its reason, pod and host from the dump; a failure report is the framework's, not syslog."""

from __future__ import annotations

import datetime as dt
import json

import rca
from tests.conftest import FIXED_MTIME

# Synthetic lines in the framework's Logf layout (Go's StampMilli, then the level), one reason each.
_LOGF_DUMP = (
    "Aug 24 09:01:32.123: INFO: At 2023-08-24 09:00:58 +0000 UTC - event for pod-x: {kubelet node-1} Evicted: "
    "The node was low on resource: memory.\n"
    "Aug 24 09:01:32.124: INFO: At 2023-08-24 09:00:59 +0000 UTC - event for gpu-pod: {kubelet gce-node} UnexpectedAdmissionError: "
    "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected\n"
    "Aug 24 09:01:32.125: INFO: At 2023-08-24 09:01:00 +0000 UTC - event for node-1: {kernel-monitor node-1} OOMKilling: "
    "Memory cgroup out of memory: Kill process 1234 (python) score 100 or sacrifice child\n"
    "Aug 24 09:01:32.126: INFO: At 2023-08-24 09:01:01 +0000 UTC - event for pod-y: {kubelet node-2} OOMKilled: Container c was OOM killed\n"
    "Aug 24 09:01:32.127: INFO: At 2023-08-24 09:01:02 +0000 UTC - event for pod-z: {default-scheduler } Scheduled: "
    "Successfully assigned e2e/pod-z to node-2\n"
)


def _parse(text: str) -> list[dict]:
    return rca.parse_text(text, file="build-log.txt", reference_time=FIXED_MTIME).to_dicts()


def test_logf_dump_takes_each_event_s_own_time_and_zone() -> None:
    events = _parse(_LOGF_DUMP)
    assert [e["source"] for e in events] == ["kubelet"] * 5
    first = dt.datetime(2023, 8, 24, 9, 0, 58, tzinfo=dt.UTC)
    assert [e["ts"] for e in events] == [first + dt.timedelta(seconds=i) for i in range(5)]
    assert {e["ts_quality"] for e in events} == {"exact"}
    assert events[0]["ts_raw"] == "2023-08-24 09:00:58 +0000 UTC"


def test_logf_dump_reason_decides_kind_and_names_pod_and_node() -> None:
    rows = [(e["kind"], e["severity"], e["pod"], e["host"]) for e in _parse(_LOGF_DUMP)]
    assert rows == [
        ("eviction", "warning", "pod-x", "node-1"),
        # as a `kubectl get events` row of it: the pod rejected for devices the kubelet counted is an error
        ("log", "error", "gpu-pod", "gce-node"),
        # node-problem-detector's event is about the node itself: no pod
        ("oom_kill", "warning", None, "node-1"),
        ("container_oomkilled", "warning", "pod-y", "node-2"),
        # a kubelet's and the scheduler's events are about a pod (the dump names no kind); the scheduler names no node
        ("log", "info", "pod-z", None),
    ]
    admission = json.loads(_parse(_LOGF_DUMP)[1]["attrs"])
    assert (admission["reason"], admission["devices_requested"], admission["devices_available"]) == ("UnexpectedAdmissionError", 1, 0)


def test_klog_dump_names_the_event_s_node_as_host() -> None:
    line = (
        "I0712 15:54:56.488184 5711 dump.go:53] At 2024-07-12 15:49:58 +0000 UTC - event for p-0: "
        "{kubelet i-0f43c1d9bda1707a4} Killing: Stopping container c\n"
    )
    (event,) = _parse(line)
    assert (event["host"], event["pod"], event["format"]) == ("i-0f43c1d9bda1707a4", "p-0", "klog")


def test_a_zone_go_names_by_its_offset_still_gives_the_event_s_time() -> None:
    # (Go prints a zone without an abbreviation by its offset: "+0300 +03")
    line = "I0824 09:01:32.123456 1234 dump.go:53] At 2023-08-24 12:00:58 +0300 +03 - event for pod-x: {kubelet node-1} Evicted: low\n"
    (event,) = _parse(line)
    assert (event["ts"], event["ts_quality"], event["kind"]) == (dt.datetime(2023, 8, 24, 9, 0, 58, tzinfo=dt.UTC), "exact", "eviction")


# (day, Jenkins' clock before the stamp, the event's offset in hours): a space-padded day ("Mar  1"), either zone side.
_VARIANTS = ((1, True, -5), (9, False, 0), (28, True, 9), (4, False, -12))


def test_logf_stamp_padding_and_console_clock_leave_the_event_time() -> None:
    lines = [
        f"{'09:01:32 ' if jenkins else ''}Mar {day:2d} 10:00:00.500: INFO: At 2021-03-{day:02d} 08:30:00 "
        f"{'-' if hours < 0 else '+'}{abs(hours):02d}00 XYZ - event for p: {{kubelet n}} Evicted: The node was low on resource: memory."
        for day, jenkins, hours in _VARIANTS
    ]
    events = _parse("\n".join(lines) + "\n")
    assert [e["ts"] for e in events] == [
        dt.datetime(2021, 3, day, 8, 30, tzinfo=dt.UTC) - dt.timedelta(hours=hours) for day, _, hours in _VARIANTS
    ]
    assert {(e["kind"], e["host"], e["format"]) for e in events} == {("eviction", "n", "e2e_framework")}


# A Ginkgo failure report as kubernetes/kubernetes issue #96519 quotes it (the fixture's lines): the stamped line is the
# framework's, timed by its stamp; the quoted admission error is its text, no syslog line of a host "21:43:04.675:".
_FAILURE = (
    "/go/src/k8s.io/kubernetes/_output/dockerized/go/src/k8s.io/kubernetes/test/e2e/scheduling/nvidia-gpus.go:224\n"
    'Nov 11 21:43:04.675: wait for pod "nvidia-gpu-13237348-f464-496a-9e10-7d2bd90a5aad" to succeed\n'
    "Expected success, but got an error:\n"
    "    <*errors.errorString | 0xc003262610>: {\n"
    '        s: "pod \\"nvidia-gpu-13237348-f464-496a-9e10-7d2bd90a5aad\\" failed with reason: \\"UnexpectedAdmissionError\\", '
    'message: \\"Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, '
    'which is unexpected\\"",\n'
    "    }\n"
)


def test_failure_report_quoting_an_admission_error_is_no_syslog() -> None:
    events = _parse(_FAILURE)
    assert {e["source"] for e in events} == {"kubelet"}
    assert all(e["host"] is None and e["process"] in (None, "kubelet") for e in events)
    stamped = next(e for e in events if e["line"] == 2)
    assert stamped["ts"] == dt.datetime(2026, 11, 11, 21, 43, 4, 675000, tzinfo=dt.UTC)
    assert (stamped["ts_quality"], stamped["message"]) == (
        "year_from_mtime",
        'wait for pod "nvidia-gpu-13237348-f464-496a-9e10-7d2bd90a5aad" to succeed',
    )
