"""containerd's lines that name a container's log file: the kubelet's path names its pod, namespace, container (and pod uid or
container id)."""

from __future__ import annotations

import datetime as dt

import polars as pl

import rca

_REFERENCE = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
_ENVELOPE = 'May 07 09:36:31 node1 containerd[28673]: time="2020-05-07T09:36:31.152728093Z" level=debug msg='
_ID_A = "a" * 64
_ID_B = "b" * 64


def _only(message: str) -> dict:
    events = rca.parse_text(_ENVELOPE + message + "\n", file="journal.log", reference_time=_REFERENCE)
    return events.filter(pl.col("process") == "containerd").row(0, named=True)


def test_a_pod_log_path_names_the_pod_its_namespace_uid_and_container() -> None:
    event = _only(
        r'"Finish redirecting stream \"stdout\" to log file \"/var/log/pods/ml-jobs_trainer-7f9c-0_0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/pytorch/3.log\""'
    )
    assert (event["pod"], event["namespace"], event["container"], event["pod_uid"]) == (
        "trainer-7f9c-0",
        "ml-jobs",
        "pytorch",
        "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
    )


def test_a_container_log_link_names_the_pod_its_namespace_container_and_id() -> None:
    event = _only(rf'"Failed to open log file" path=/var/log/containers/web-0_default_nginx-{_ID_B}.log')
    assert (event["pod"], event["namespace"], event["container"], event["container_id"]) == ("web-0", "default", "nginx", _ID_B)


def test_the_container_a_line_acts_on_stands_over_its_log_path() -> None:
    event = _only(rf'"StopContainer for \"{_ID_A}\"" path=/var/log/containers/web-0_default_nginx-{_ID_B}.log')
    assert (event["container_id"], event["pod"]) == (_ID_A, "web-0")


def test_a_path_outside_the_kubelets_log_folders_names_no_pod() -> None:
    event = _only(r'"Finish redirecting stream \"stdout\" to log file \"/var/log/app/trainer_ml-jobs_x/pytorch/0.log\""')
    assert (event["pod"], event["namespace"], event["container"]) == (None, None, None)
