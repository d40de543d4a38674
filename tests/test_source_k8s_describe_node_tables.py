"""`kubectl describe node`'s tables of what runs on the node: Non-terminated Pods and Allocated resources."""

from __future__ import annotations

import rca
from tests.conftest import FIXED_MTIME, fixture_path


def test_non_terminated_pods_and_allocated_resources_rows_are_node_table_rows_not_events() -> None:
    name = "kubectl_describe_node_non_terminated_pods_allocated_resources_eks_01.txt"
    events = rca.parse_text(fixture_path(name).read_text(), file=name, reference_time=FIXED_MTIME)
    rows = events.filter(events["format"] == "describe_node_table")
    assert rows["line"].to_list() == [7, 8, 9, 10, 15, 16, 17, 18, 19, 20]
    assert set(rows["kind"]) == {"log"} and rows["severity"].is_null().all()
    assert set(rows["host"]) == {"ip-192-168-90-244.eu-central-1.compute.internal"}
    assert rows.select("pod", "namespace").rows()[:4] == [
        ("aws-node-mjzt9", "kube-system"), ("coredns-85cc4f6d5-swj9w", "kube-system"), ("coredns-85cc4f6d5-w6dtw", "kube-system"),
        ("kube-proxy-7xxpf", "kube-system"),
    ]
    assert rows.select("pod", "namespace").rows()[4:] == [(None, None)] * 6
    assert "get_events" not in set(events["format"])


def test_allocated_resources_rows_pasted_alone_under_their_section_are_node_table_rows() -> None:
    name = "kubectl_describe_node_events_x_over_count_01.txt"
    events = rca.parse_text(fixture_path(name).read_text(), file=name, reference_time=FIXED_MTIME)
    rows = events.filter(events["format"] == "describe_node_table")
    assert rows.select("line", "kind", "pod").rows() == [(5, "log", None), (6, "log", None), (7, "log", None)]
