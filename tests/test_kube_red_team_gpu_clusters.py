"""Kubernetes outputs of GPU clusters that were misread: kubectl 1.5's `get events` rows without their header (Go times
in LASTSEEN / FIRSTSEEN), evictions for a local ephemeral storage limit, the Killing event's container id, and a pod
whose image pull just failed."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.conftest import parse_log

# In the shape of kubernetes/kubernetes#42164's paste (kubectl 1.5, --all-namespaces, header not pasted).
_GO_TIME_ROWS = (
    "ml    2017-03-09 18:45:36 +0100 CET   2017-03-09 18:43:35 +0100 CET   3         trainer-0   Pod       "
    "spec.containers{worker}   Warning   BackOff   {kubelet gpu-node-7}   Back-off restarting failed container\n"
    "ml    2017-03-09 18:46:20 +0100 CET   2017-03-09 18:46:20 +0100 CET   1         trainer-0   Pod       "
    "spec.containers{worker}   Normal    Killing   {kubelet gpu-node-7}   Killing container with docker id 069359c8acce: Need to kill pod.\n"
)


def _parse(text: str) -> list[dict]:
    return parse_log(text).to_dicts()


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


def test_headerless_go_time_rows_are_events_of_their_pod_and_node() -> None:
    backoff, killing = _parse(_GO_TIME_ROWS)
    assert (backoff["source"], backoff["format"]) == ("k8s", "get_events")
    assert backoff["ts"] == datetime(2017, 3, 9, 17, 45, 36, tzinfo=UTC)
    assert (backoff["ts_quality"], backoff["ts_raw"]) == ("exact", "2017-03-09 18:45:36 +0100 CET")
    assert (backoff["host"], backoff["namespace"], backoff["pod"], backoff["container"]) == ("gpu-node-7", "ml", "trainer-0", "worker")
    assert (_attrs(backoff)["reason"], _attrs(backoff)["count"], backoff["severity"]) == ("BackOff", 3, "warning")
    assert killing["ts"] == datetime(2017, 3, 9, 17, 46, 20, tzinfo=UTC)


def test_killing_event_names_its_container_id_not_its_name() -> None:
    killing = _parse(_GO_TIME_ROWS)[1]
    assert killing["container_id"] == "069359c8acce"
    by_name = "  Normal  Killing  1m  kubelet, gpu-node-7  Killing container with id docker://memhog:Need to kill Pod\n"
    assert _parse(by_name)[0]["container_id"] is None


def test_container_over_its_ephemeral_storage_limit_is_its_eviction() -> None:
    describe = (
        "Name:         trainer-0\nNamespace:    ml\nNode:         gpu-node-7/10.0.0.7\nStatus:       Failed\n"
        'Reason:       Evicted\nMessage:      Container worker exceeded its local ephemeral storage limit "20Mi".\n'
    )
    (event,) = _parse(describe)
    assert (event["kind"], event["pod"], event["container"], event["host"]) == ("eviction", "trainer-0", "worker", "gpu-node-7")
    assert _attrs(event)["resource"] == "ephemeral-storage"


def test_pod_and_emptydir_storage_limits_name_ephemeral_storage() -> None:
    rows = (
        "  Warning  Evicted  60s  kubelet  Pod ephemeral local storage usage exceeds the total limit of containers 100Gi.\n"
        '  Warning  Evicted  30s  kubelet  Usage of EmptyDir volume "cache" exceeds the limit "1Gi".\n'
    )
    events = _parse(rows)
    assert [e["kind"] for e in events] == ["eviction", "eviction"]
    assert [_attrs(e)["resource"] for e in events] == ["ephemeral-storage", "ephemeral-storage"]
    assert [e["mem_used_bytes"] for e in events] == [None, None]


def test_err_image_pull_row_is_a_warning_and_running_row_none() -> None:
    rows = "ml   pod/trainer-0   0/1   ErrImagePull   0   60s\nml   pod/trainer-1   1/1   Running   0   60s\n"
    assert [e["severity"] for e in _parse(rows)] == ["warning", None]
