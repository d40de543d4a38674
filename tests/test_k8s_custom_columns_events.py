"""`kubectl get events -o custom-columns=…`: an event table whose columns the author named (TIME, REASON, MSG, NS …)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import FIXED_MTIME, fixture_path

SAMPLE = "kubectl_get_events_custom_columns_time_reason_msg_liveness_01.txt"


def _events(text: str, name: str = "x.txt"):
    return rca.parse_text(text, file=name, reference_time=FIXED_MTIME)


def test_real_sample_rows_are_events_with_reason_and_exact_time() -> None:
    events = _events(fixture_path(SAMPLE).read_text(), SAMPLE)
    assert set(events["source"]) == {"k8s"} and set(events["format"]) == {"get_events"}
    assert events.height == 11  # the header and the prompt are no events
    assert set(events["namespace"]) == {"kube-system"}
    killing = events.filter(events["line"] == 11).row(0, named=True)
    assert killing["ts_raw"] == "2021-07-01T13:58:59Z" and killing["ts_quality"] == "exact"
    assert killing["container"] == "gadget" and json.loads(killing["attrs"])["reason"] == "Killing"
    scheduled = events.filter(events["line"] == 3).row(0, named=True)
    assert scheduled["ts"] is None and scheduled["pod"] == "gadget-nzg7r"
    assert "age" not in json.loads(scheduled["attrs"])  # "<nil>" is an unset field, no age


def test_other_column_names_and_an_oom_event() -> None:
    widths = (23, 10, 7, 13)
    header = "".join(name.ljust(width) for name, width in zip(("TS", "NS", "KIND", "REASON"), widths)) + "MESSAGE"
    row = "".join(cell.ljust(width) for cell, width in zip(("2024-03-01T10:00:00Z", "default", "Node", "OOMKilling"), widths))
    text = f"{header}\n{row}Memory cgroup out of memory: Killed process 4242 (python) total-vm:100kB, anon-rss:50kB\n"
    row = _events(text).row(0, named=True)
    assert (row["source"], row["format"], row["kind"]) == ("k8s", "get_events", "oom_kill")
    assert row["namespace"] == "default" and row["ts_raw"] == "2024-03-01T10:00:00Z" and row["pid"] == 4242


_COLUMN = st.sampled_from(["TIME", "TS", "LAST", "NAME", "OBJ", "KIND", "TYPE", "COUNT", "FIRSTTIMESTAMP"])


@settings(max_examples=25, deadline=None)
@given(before=st.lists(_COLUMN, max_size=3, unique=True), message=st.sampled_from(["MSG", "MESSAGE"]))
def test_any_custom_header_with_reason_and_message_is_an_events_table(before: list[str], message: str) -> None:
    header = "   ".join([*before, "REASON", message])
    cells = "   ".join([*("x" * len(name) for name in before), "Evicted", "The node was low on resource: memory."])
    events = _events(f"{header}\n{cells}\n")
    assert events.height == 1
    row = events.row(0, named=True)
    assert (row["source"], row["format"], row["kind"]) == ("k8s", "get_events", "eviction")
