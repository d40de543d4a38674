"""Misreads a red team found on real kubectl output (helper-233's report):

- kubectl 1.0's (2015) describe Events rows are padded with tabs whose header counts them over rows a paste cut: the row
  is read by its tabs, not sliced at the header's 8-column stops ("ully assigned si" was its reason);
- a container the kernel OOM-killed, read from a describe ``State`` / ``Last State`` block, an inline state or a pod
  status, is an error, as the same kill in a ``get pods`` row is;
- an eviction read from a pasted pod status is graded as the describe of that pod is (phase Failed: error), and timed by
  its DisruptionTarget condition, else by its Ready condition's turn to False.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import polars as pl

import rca

K8S = Path(__file__).parent / "data" / "k8s"
TABS_2015 = K8S / "kubectl_describe_pod_events_tabs_2015_rfc1123_scheduled_01.txt"
LAST_STATE = K8S / "kubectl_describe_last_state_oomkilled_exit137_01.txt"
EVICTED_STATUS = K8S / "kubectl_pod_status_yaml_evicted_memory_ready_false_01.txt"


def _events(text: str, name: str = "x") -> pl.DataFrame:
    return rca.parse_text(text, file=name)


def _attrs(event: SimpleNamespace) -> dict:
    return json.loads(event.attrs)


def _one(events: pl.DataFrame, **where: object) -> SimpleNamespace:
    picked = events.filter(*[pl.col(column) == value for column, value in where.items()])
    assert picked.height == 1, events.select("line", "kind", "format", "message")
    return SimpleNamespace(**picked.row(0, named=True))


def test_2015_tab_padded_describe_events_row_is_read_by_its_tabs():
    event = _one(_events(TABS_2015.read_text()), line=27)
    assert (event.source, event.format, event.kind) == ("k8s", "describe_events", "log")
    assert event.message == "Successfully assigned simmemleak-hra99 to kubernetes-minion-tf0f"
    assert _attrs(event) == {"reason": "scheduled", "count": 1, "source": "{scheduler }"}
    assert event.ts_raw == "Tue, 07 Jul 2015 12:53:51 -0700" and event.ts_quality == "exact"
    assert str(event.ts) == "2015-07-07 19:53:51+00:00"
    assert (event.pod, event.namespace, event.host) == ("simmemleak-hra99", "default", "kubernetes-minion-tf0f")


def test_2015_tab_padded_row_without_its_header_is_read_by_its_tabs_too():
    # The row alone (the describe above it cut): no header to slice it by, its tabs are its cells.
    row = TABS_2015.read_text().splitlines()[26]
    event = _one(_events("Events:\n" + row + "\n"), line=2)
    assert (event.source, event.format) == ("k8s", "describe_events")
    assert event.message == "Successfully assigned simmemleak-hra99 to kubernetes-minion-tf0f"
    assert _attrs(event)["reason"] == "scheduled"
    assert event.pod == "simmemleak-hra99"


def test_tab_padded_rows_of_1_1_and_1_2_keep_their_cells():
    # 1.1 (no Type) and 1.2 (Type after SubobjectPath, an empty SubobjectPath left as padding) rows read by their tabs.
    old = _events((K8S / "kubectl_describe_pod_tabs_2016_01.txt").read_text())
    pulled = _one(old, line=38)
    assert pulled.message == 'Container image "busybox" already present on machine'
    assert (pulled.container, pulled.host) == ("busybox", "172.18.18.101")
    assert _attrs(pulled)["reason"] == "Pulled"
    newer = _events((K8S / "kubectl_describe_pod_events_tabs_failedsync_start_container_01.txt").read_text())
    synced = _one(newer, line=6)
    assert synced.severity == "warning" and _attrs(synced)["reason"] == "FailedSync"
    assert synced.message.startswith('Error syncing pod, skipping: failed to "StartContainer" for "web" with ImagePullBackOff')


def test_describe_last_state_oomkilled_is_an_error():
    event = _one(_events(LAST_STATE.read_text()), kind="container_oomkilled")
    assert (event.format, event.severity, event.exit_code) == ("describe_state", "error", 137)
    assert (event.line, event.n_lines) == (1, 5)
    assert event.ts_raw == "Fri, 15 Sep 2023 09:56:17 +0200" and str(event.ts) == "2023-09-15 07:56:17+00:00"
    # The same in a State block (exit code 0), in a pasted status, in an inline Go map.
    for name, fmt in (
        ("kubectl_describe_pod_oomkilled_exit0_01.txt", "describe_state"),
        ("kubectl_status_yaml_fragment_oomkilled_exit0_01.yaml", "pod_fragment"),
        ("kubectl_go_template_last_state_map_oomkilled_01.txt", "inline_state"),
    ):
        kills = _events((K8S / name).read_text()).filter(pl.col("kind") == "container_oomkilled")
        assert kills.height >= 1 and set(kills["format"]) == {fmt} and set(kills["severity"]) == {"error"}, name


def test_evicted_pod_status_is_an_error_at_its_ready_condition_turning_false():
    event = _one(_events(EVICTED_STATUS.read_text()), kind="eviction")
    assert (event.format, event.severity) == ("pod_fragment", "error")
    assert event.ts_raw == "2024-03-12T11:52:43Z" and event.ts_quality == "exact"
    assert str(event.ts) == "2024-03-12 11:52:43+00:00"
    assert (event.container, event.mem_used_bytes, event.mem_requested_bytes) == ("cstor-pool-mgmt", 27484 * 1024, 0)
    assert _attrs(event) == {"object": "Pod", "reason": "Evicted", "resource": "memory"}


def test_eviction_status_without_failed_phase_is_a_warning_and_disruption_target_times_it_first():
    lines = EVICTED_STATUS.read_text().splitlines(keepends=True)
    # As a Pod document's status whose phase line is cut: an eviction not known to be over, the warning its event is.
    status = "".join(line[1:] for line in lines if "phase: Failed" not in line)
    document = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: cstor-pool\n" + status
    event = _one(_events(document), kind="eviction")
    assert (event.format, event.severity, event.ts_raw) == ("pod_yaml", "warning", "2024-03-12T11:52:43Z")
    # A DisruptionTarget condition (1.26+) dates the eviction before the Ready condition does.
    at = lines.index("    - type: PodScheduled\n")
    disrupted = "".join(
        [
            *lines[:at],
            "    - type: DisruptionTarget\n",
            "      status: 'True'\n",
            "      lastProbeTime: null\n",
            "      lastTransitionTime: '2024-03-12T11:52:40Z'\n",
            *lines[at:],
        ]
    )
    assert _one(_events(disrupted), kind="eviction").ts_raw == "2024-03-12T11:52:40Z"


def test_a_tab_separated_get_events_row_is_not_read_as_a_describe_row():
    # Its third cell after the count is the object's NAME, not a "{component host}" From cell: the header's columns read it.
    header = "FIRSTSEEN\tLASTSEEN\tCOUNT\tNAME\tKIND\tSUBOBJECT\tTYPE\tREASON\tSOURCE\tMESSAGE"
    row = "5m\t5m\t1\tnginx-abc\tPod\t\tNormal\tScheduled\t{default-scheduler }\tSuccessfully assigned nginx-abc to node-1"
    events = _events(header + "\n" + row + "\n")
    assert "Normal\tScheduled" not in " ".join(events["message"].drop_nulls())
    assert all(_attrs(SimpleNamespace(attrs=attrs)).get("reason") != "Pod" for attrs in events["attrs"].drop_nulls())
