"""A 1.33+ kubelet's admission denial (kubernetes/kubernetes issue #138391): since the pod allocation manager took over
admission, ``"Pod admission denied"`` comes from allocation_manager.go, not kubelet.go. The rules read the message, not
the caller, so the denial keeps its pod, uid, reason and warning severity; a bare klog file carries no year.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import polars as pl

import rca
from tests.conftest import DATA

NAME = "kubelet_klog_static_pod_admission_denied_allocation_manager_01.log"


def _events(year: int | None = None) -> pl.DataFrame:
    return rca.parse_text((DATA / "kubelet" / NAME).read_text(encoding="utf-8"), file=NAME, year=year)


def test_denial_from_allocation_manager_is_a_warning_with_reason_and_uid() -> None:
    denied = _events().filter(pl.col("line") == 3).row(0, named=True)
    assert (denied["source"], denied["kind"], denied["severity"]) == ("kubelet", "log", "warning")
    assert (denied["namespace"], denied["pod"], denied["pid"]) == ("kube-system", "kube-apiserver-master1", 12113)
    assert denied["pod_uid"] == "7183a2ef18ecabe4427de6a5437caaad"
    attrs = json.loads(denied["attrs"])
    assert (attrs["caller"], attrs["reason"]) == ("allocation_manager.go:706", "UnexpectedAdmissionError")


def test_every_line_names_the_static_pod_and_the_admit_handler_keeps_its_level() -> None:
    events = _events()
    assert events["pod"].to_list() == ["kube-apiserver-master1"] * 3
    assert events["severity"].to_list() == ["info", "info", "warning"]
    # No year in a bare klog header and none given: the time stays unknown, the text is kept.
    assert events["ts_quality"].unique().to_list() == ["missing"]
    assert events["ts_raw"][0] == "0414 16:35:50.929106"


def test_a_given_year_resolves_the_klog_time() -> None:
    events = _events(year=2026)
    assert events["ts"][2] == datetime(2026, 4, 14, 16, 35, 50, 929430, tzinfo=timezone.utc)
    assert events["ts_quality"].is_not_null().all()
