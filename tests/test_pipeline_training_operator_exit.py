"""The Kubeflow Training Operator's ExitedWithCode event: the replica's pod, its namespace and exit code; 137 a kill."""

from __future__ import annotations

import datetime as dt

import pytest

import rca

_REFERENCE = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
_EVENT_TAIL = '\t{"type": "Normal", "object": {"kind":"PyTorchJob","namespace":"ml","name":"llm"}, "reason": "ExitedWithCode"}'


def _only(line: str) -> dict:
    events = rca.parse_text(line + "\n", file="operator.log", reference_time=_REFERENCE)
    assert events.height == 1
    return events.row(0, named=True)


@pytest.mark.parametrize(
    "line",
    [
        "2024-04-05T11:12:25-04:00\tDEBUG\tevents\tPod: ml.llm-worker-3 exited with code 137" + _EVENT_TAIL,
        "INFO[0289] Pod: ml.llm-worker-3 exited with code 137  job=ml.llm replica-type=worker uid=4acaf99e-c0e0-424e-b6fe-9cbb2e303f3b",
    ],
)
def test_a_replica_that_exited_137_was_killed(line: str) -> None:
    event = _only(line)
    assert (event["kind"], event["pod"], event["namespace"], event["exit_code"]) == ("process_killed", "llm-worker-3", "ml", 137)


def test_a_replica_that_exited_1_is_no_kill() -> None:
    event = _only("1.7085078566441019e+09\tDEBUG\tevents\tPod: ml.llm.v2-master-0 exited with code 1" + _EVENT_TAIL)
    assert (event["kind"], event["pod"], event["namespace"], event["exit_code"]) == ("log", "llm.v2-master-0", "ml", 1)


def test_the_operators_error_event_names_the_replicas_container() -> None:
    line = '1.708507856644096e+09\tDEBUG\tevents\tError pod llm-worker-3 container pytorch exitCode: 1 terminated message: \t{"type": "Warning"}'
    event = _only(line)
    assert (event["pod"], event["container"], event["exit_code"]) == ("llm-worker-3", "pytorch", 1)
