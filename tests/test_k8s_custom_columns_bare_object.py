"""`kubectl get events -o custom-columns=OBJECT:.involvedObject.name,…`: the object's name printed bare (no "pod/").

The pod such a row is about is kept where the reason is one only a pod gets (or the taint manager's message names it),
and a table whose field selector already chose the reason (no REASON column) is still an events table. A command's
"| head -n 3" names no namespace.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca.sources import k8s
from tests.conftest import DATA

FIXTURE = DATA / "k8s" / "kubectl_get_events_custom_columns_bare_object_taint_eviction_01.txt"


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).to_dicts()[0]


def test_taint_manager_rows_are_evictions_of_their_pods() -> None:
    events = _parse(FIXTURE.read_text(encoding="utf-8"))
    rows = events.filter(pl.col("kind") == "eviction").select("line", "source", "format", "pod", "namespace").to_dicts()
    assert rows == [
        {"line": 3, "source": "k8s", "format": "get_events", "pod": "shop-774b84ff8c-f7xmw", "namespace": "default"},
        {"line": 4, "source": "k8s", "format": "get_events", "pod": "shop-774b84ff8c-krnt6", "namespace": "default"},
    ]


def test_head_after_a_pipe_names_no_namespace() -> None:
    text = (
        "$ kubectl get events -o custom-columns=REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message | head -n 3\n"
        "REASON    OBJECT           MESSAGE\n"
        "BackOff   trainer-0-abcde  Back-off restarting failed container\n"
    )
    row = _row(_parse(text), 3)
    assert row["namespace"] is None
    assert row["pod"] == "trainer-0-abcde"
    namespaced = text.replace("kubectl get events", "kubectl -n ml get events")
    assert _row(_parse(namespaced), 3)["namespace"] == "ml"


def test_bare_object_is_a_pod_only_for_pod_reasons() -> None:
    text = (
        "TIME                   TYPE      REASON              OBJECT                      MESSAGE\n"
        "2024-05-01T10:00:00Z   Normal    SuccessfulRescale   trainer                     New size: 8; reason: cpu above target\n"
        "2024-05-01T10:00:02Z   Warning   FailedScheduling    trainer-6d4b7f9c85-l4m2p    0/4 nodes are available: 4 Insufficient nvidia.com/gpu.\n"
        "2024-05-01T10:00:09Z   Warning   BackOff             trainer-6d4b7f9c85-x9x9x    Back-off restarting failed container\n"
    )
    events = _parse(text)
    assert _row(events, 2)["pod"] is None  # an autoscaler's event: the name is a Deployment's
    assert _row(events, 3)["pod"] == "trainer-6d4b7f9c85-l4m2p"
    assert _row(events, 3)["severity"] == "warning"
    assert _row(events, 4)["pod"] == "trainer-6d4b7f9c85-x9x9x"


def test_kind_column_names_the_bare_object() -> None:
    text = (
        "REASON       KIND         OBJECT        MESSAGE\n"
        "Killing      Pod          worker-3      Stopping container main\n"
        "Killing      Deployment   worker        Stopping container main\n"
    )
    events = _parse(text)
    assert _row(events, 2)["pod"] == "worker-3"
    assert _row(events, 3)["pod"] is None


_NAMES = st.from_regex(r"\A[a-z][a-z0-9]{0,8}(?:-[a-z0-9]{1,8}){0,3}\Z")


@settings(max_examples=40, deadline=None)
@given(name=_NAMES, reason=st.sampled_from(k8s._POD_EVENT_REASONS), other=st.sampled_from(["ScalingReplicaSet", "SuccessfulCreate", "Sync"]))
def test_bare_object_property(name: str, reason: str, other: str) -> None:
    width = max(len(name), 6) + 3
    rows = [f"{'REASON':<26}{'OBJECT':<{width}}MESSAGE", f"{reason:<26}{name:<{width}}something happened", f"{other:<26}{name:<{width}}something happened"]
    events = _parse("\n".join(rows) + "\n")
    assert _row(events, 2)["pod"] == name
    assert _row(events, 3)["pod"] is None
