"""Kubelet event lines of old and test-framework shapes, and `kubectl get pods -w` rows padded one by one.

* 1.3-1.5 kubelets log the events they record as ``Event(api.ObjectReference{…})`` (``v1.`` came later);
* the e2e framework's dump.go prints a namespace's events as "At <time> - event for <name>: {<source> <host>} <Reason>: <message>";
* `kubectl get pods -w` pads each row it watches on its own, so a longer STATUS shifts RESTARTS and AGE off the header.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

import rca

# kubernetes/kubernetes#30550 (Random-Liu, 2016-08-25): a 1.3 kubelet's klog.
API_EVENT = (
    'I0818 03:35:27.856536    2658 server.go:680] Event(api.ObjectReference{Kind:"Pod", Namespace:"e2e-tests-density-test-43bif", '
    'Name:"cadvisor", UID:"ce5092e5-64f4-11e6-b1e0-42010a800007", APIVersion:"v1", ResourceVersion:"469", FieldPath:""}): '
    "type: 'Warning' reason: 'Evicted' The node was low on compute resources."
)
# kubernetes/kubernetes#126053 (dims, 2024-07-12): build-log.txt lines as grep -n printed them, the "2300:  " line
# number grep put before each left out here (the klog lines themselves as written).
DUMP_EVICTED = (
    "I0712 15:54:56.488170 5711 dump.go:53] At 2024-07-12 15:49:58 +0000 UTC - event for oomkill-nodeallocatable-pod: "
    "{kubelet i-0f43c1d9bda1707a4} Evicted: The node was low on resource: memory. Threshold quantity: 250Mi, available: 232700Ki. "
    "Container oomkill-nodeallocatable-container was using 4923412Ki, request is 0, has larger consumption of memory."
)
DUMP_KILLING = (
    "I0712 15:54:56.488184 5711 dump.go:53] At 2024-07-12 15:49:58 +0000 UTC - event for oomkill-nodeallocatable-pod: "
    "{kubelet i-0f43c1d9bda1707a4} Killing: Stopping container oomkill-nodeallocatable-container"
)


def _events(text: str) -> list[dict]:
    return rca.parse_text(text, file="x").sort("line").to_dicts()


def test_api_object_reference_event_is_the_pods_eviction() -> None:
    [event] = _events(API_EVENT + "\n")
    assert (event["source"], event["kind"], event["severity"]) == ("kubelet", "eviction", "warning")
    assert (event["pod"], event["namespace"]) == ("cadvisor", "e2e-tests-density-test-43bif")


def test_e2e_event_dump_names_the_evicted_pod_and_its_memory() -> None:
    evicted, killing = _events(DUMP_EVICTED + "\n" + DUMP_KILLING + "\n")
    assert (evicted["kind"], evicted["severity"], evicted["pod"]) == ("eviction", "warning", "oomkill-nodeallocatable-pod")
    assert evicted["container"] == "oomkill-nodeallocatable-container"
    assert (evicted["mem_used_bytes"], evicted["mem_requested_bytes"]) == (4923412 * 1024, 0)
    assert (killing["kind"], killing["severity"], killing["pod"]) == ("log", "info", "oomkill-nodeallocatable-pod")


def test_e2e_event_dump_of_a_nodes_own_event_names_no_pod() -> None:
    # Same shape, the object being the kubelet's own node (same name as the source's host): no pod.
    line = DUMP_KILLING.replace("event for oomkill-nodeallocatable-pod:", "event for i-0f43c1d9bda1707a4:")
    [event] = _events(line + "\n")
    assert event["pod"] is None


WATCH = """kubectl get po -owide -w

NAME               READY   STATUS      RESTARTS     AGE
max-resource-pod   0/1     OOMKilled   1 (9s ago)   14s
max-resource-pod   0/1     CrashLoopBackOff   1 (15s ago)   24s
max-resource-pod   1/1     Running            2 (16s ago)   25s
max-resource-pod   0/1     OOMKilled          2 (19s ago)   28s
"""


def _cells(text: str) -> list[tuple[str, str, str]]:
    rows = rca.parse_text(text, file="x").filter(pl.col("format") == "get_pods").sort("line")
    attrs = rows.select(pl.col("attrs").str.json_decode(pl.Struct({"status": pl.String, "restarts": pl.String, "age": pl.String})))
    return [(a["status"], a["restarts"], a["age"]) for a in attrs.to_series().to_list()]


def test_watch_rows_keep_restarts_and_age_whole() -> None:
    assert _cells(WATCH) == [
        ("OOMKilled", "1 (9s ago)", "14s"),
        ("CrashLoopBackOff", "1 (15s ago)", "24s"),
        ("Running", "2 (16s ago)", "25s"),
        ("OOMKilled", "2 (19s ago)", "28s"),
    ]
    kinds = rca.parse_text(WATCH, file="x").sort("line")["kind"].to_list()
    assert kinds == ["container_oomkilled", "log", "log", "container_oomkilled"]


_STATUSES = st.sampled_from(["OOMKilled", "Running", "Error", "CrashLoopBackOff", "Completed", "Init:OOMKilled", "ContainerCreating"])
_AGES = st.integers(1, 59).map(lambda n: f"{n}s") | st.integers(1, 59).map(lambda n: f"{n}m{n % 50 + 1}s")


@given(
    rows=st.lists(
        st.tuples(_STATUSES, st.integers(0, 9), st.one_of(st.none(), st.integers(1, 99)), _AGES), min_size=1, max_size=4
    )
)
def test_watch_rows_padded_one_by_one_parse_as_written(rows: list[tuple[str, int, int | None, str]]) -> None:
    # Each watched row padded on its own, as kubectl's printer does: 3 spaces after its widest cell.
    lines = ["NAME               READY   STATUS      RESTARTS     AGE"]
    wanted = []
    for status, restarts, ago, age in rows:
        restarts_cell = f"{restarts} ({ago}s ago)" if ago is not None else str(restarts)
        lines.append("   ".join(["max-resource-pod", "0/1", f"{status:<9}", f"{restarts_cell:<10}", age]))
        wanted.append((status, restarts_cell, age))
    assert _cells("\n".join(lines) + "\n") == wanted
