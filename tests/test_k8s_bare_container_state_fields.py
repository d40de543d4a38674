"""A container state's fields printed alone (`yq '.status.containerStatuses[0].lastState.terminated'`, `jq` of the
same): the k8s source reads them as the container's termination, not as pipeline text."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca.sources import k8s

FIXTURE = Path(__file__).parent / "data" / "k8s" / "kubectl_yq_last_state_terminated_fields_oomkilled_01.yaml"


def _events(text: str):
    return rca.parse_text(text, file="x").to_pandas()


def test_kuberay_fragment_is_an_oom_kill_at_finished_at():
    events = _events(FIXTURE.read_text())
    assert len(events) == 1
    event = events.iloc[0]
    assert (event.source, event.format, event.kind) == ("k8s", "pod_fragment", "container_oomkilled")
    assert event.exit_code == 137
    assert event.container_id == "0f30d47b321c9d9482bc6b78f2292196f7156194f5d2ea02b12eaeb2b395a1b3"
    assert event.ts_raw == "2025-12-17T10:56:44Z" and event.ts_quality == "exact"
    assert (event.line, event.n_lines) == (1, 5)
    assert "state_field" not in event["attrs"]


def test_prompt_above_and_terminated_key_are_read_too():
    body = FIXTURE.read_text()
    prompted = _events("$ kubectl get pod x -o yaml | yq '.status.containerStatuses[0].lastState.terminated'\n" + body)
    keyed = _events("terminated:\n" + "".join("  " + line for line in body.splitlines(keepends=True)))
    for events, line in ((prompted, 2), (keyed, 1)):
        assert events[["source", "kind", "exit_code", "line"]].values.tolist() == [["k8s", "container_oomkilled", 137, line]]


def test_jq_json_object_of_the_fields():
    text = '{\n  "exitCode": 1,\n  "finishedAt": "2024-03-01T00:00:05Z",\n  "reason": "Error",\n  "startedAt": "2024-03-01T00:00:00Z"\n}\n'
    events = _events(text)
    assert events[["source", "kind", "exit_code", "ts_raw"]].values.tolist() == [["k8s", "log", 1, "2024-03-01T00:00:05Z"]]


def test_a_log_that_merely_holds_such_lines_is_not_k8s():
    head = ["exitCode: 1", "reason: Error", 'finishedAt: "2024-03-01T00:00:05Z"', "Traceback (most recent call last):"]
    assert k8s.sniff(head) < 0.5


_FIELDS = {
    "containerID": "containerd://" + "ab" * 32,
    "exitCode": "137",
    "finishedAt": '"2025-12-17T10:56:44Z"',
    "reason": "OOMKilled",
    "startedAt": '"2025-12-17T10:56:35Z"',
}


@settings(max_examples=20, deadline=None)
@given(order=st.permutations(list(_FIELDS)), drop=st.sampled_from([None, "containerID", "startedAt", "finishedAt"]))
def test_any_order_of_the_fields_is_the_same_termination(order, drop):
    text = "".join(f"{key}: {_FIELDS[key]}\n" for key in order if key != drop)
    events = _events(text)
    assert events[["source", "kind", "exit_code"]].values.tolist() == [["k8s", "container_oomkilled", 137]]
    expected_ts = "2025-12-17T10:56:35Z" if drop == "finishedAt" else "2025-12-17T10:56:44Z"
    assert events.iloc[0].ts_raw == expected_ts


EVENTS_ROW = Path(__file__).parent / "data" / "k8s" / "kubectl_get_events_headerless_reason_object_message_failedscheduling_gpu_01.txt"


def test_events_row_cut_to_reason_object_message_is_k8s():
    events = _events(EVENTS_ROW.read_text())
    assert len(events) == 1
    event = events.iloc[0]
    assert (event.source, event.format, event.kind, event.pod) == ("k8s", "get_events", "log", "model-2-79d7d6786c-bprm8")
    assert event.message.startswith("0/1 nodes are available: 1 Insufficient nvidia.com/gpu, ")
    assert '"reason":"FailedScheduling"' in event["attrs"]


def test_a_word_then_a_path_is_not_an_events_row():
    head = ["INFO    torch/distributed    starting rank 0", "Traceback (most recent call last):"]
    assert k8s.sniff(head) < 0.5
