"""The e2e framework's event dump takes each event's own time; a `kubectl describe` Events row without a
Message keeps its reason as the message; NVIDIA's device plugin's klog without NVML is read line by line."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

import rca
from tests.conftest import FIXED_MTIME, fixture_path

# kubernetes/kubernetes PR #126053 (dims, 2024-07-12): lines 2300-2301 of a build log, as the comment quotes them,
# less the "2300:  " prefix its grep -n put before each (that prefix is no part of the klog line).
_DUMP = (
    "I0712 15:54:56.488170 5711 dump.go:53] At 2024-07-12 15:49:58 +0000 UTC - event for oomkill-nodeallocatable-pod: "
    "{kubelet i-0f43c1d9bda1707a4} Evicted: The node was low on resource: memory. Threshold quantity: 250Mi, available: 232700Ki. "
    "Container oomkill-nodeallocatable-container was using 4923412Ki, request is 0, has larger consumption of memory.\n"
    "I0712 15:54:56.488184 5711 dump.go:53] At 2024-07-12 15:49:58 +0000 UTC - event for oomkill-nodeallocatable-pod: "
    "{kubelet i-0f43c1d9bda1707a4} Killing: Stopping container oomkill-nodeallocatable-container\n"
)


def test_dumped_event_takes_its_own_time_not_the_dump_line_s() -> None:
    events = rca.parse_text(_DUMP, file="e2e.log", reference_time=FIXED_MTIME)
    assert events["source"].to_list() == ["kubelet", "kubelet"]
    assert events["ts"].to_list() == [dt.datetime(2024, 7, 12, 15, 49, 58, tzinfo=dt.UTC)] * 2
    assert events["ts_quality"].to_list() == ["exact", "exact"]
    assert events["ts_raw"].to_list() == ["2024-07-12 15:49:58 +0000 UTC"] * 2
    evicted = events.row(0, named=True)
    assert (evicted["kind"], evicted["severity"], evicted["pod"], evicted["container"]) == (
        "eviction", "warning", "oomkill-nodeallocatable-pod", "oomkill-nodeallocatable-container",
    )
    assert evicted["mem_used_bytes"] == 4923412 * 1024


@given(
    offset_minutes=st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: m - m % 15),
    second=st.integers(min_value=0, max_value=59),
    micros=st.one_of(st.none(), st.integers(min_value=0, max_value=999_999)),
)
def test_dumped_event_time_is_read_in_its_offset(offset_minutes: int, second: int, micros: int | None) -> None:
    sign = "-" if offset_minutes < 0 else "+"
    offset = f"{sign}{abs(offset_minutes) // 60:02d}{abs(offset_minutes) % 60:02d}"
    frac = "" if micros is None else f".{micros:06d}"
    line = (
        f"I0712 15:54:56.488184 5711 dump.go:53] At 2024-07-12 10:20:{second:02d}{frac} {offset} XYZ - event for p-0: "
        "{kubelet n1} Killing: Stopping container c\n"
    )
    event = rca.parse_text(line, file="e2e.log", reference_time=FIXED_MTIME).row(0, named=True)
    local = dt.datetime(2024, 7, 12, 10, 20, second, micros or 0)
    assert event["ts"] == (local - dt.timedelta(minutes=offset_minutes)).replace(tzinfo=dt.UTC)
    assert event["ts_quality"] == "exact"


# The row layout of `kubectl describe node` Events (kubernetes/kubernetes issue #55618's columns); the first event's
# Message cell left empty, as describe prints an event recorded without one (constructed, not a capture).
_DESCRIBE = """Events:
  Type     Reason     Age   From                       Message
  ----     ------     ----  ----                       -------
  Warning  SystemOOM  59m   kubelet, symphony-worker0
  Normal   Starting   59m   kubelet, symphony-worker0  Starting kubelet.
"""


def test_describe_event_row_without_message_keeps_its_reason() -> None:
    events = rca.parse_text(_DESCRIBE, file="describe.txt", reference_time=FIXED_MTIME)
    rows = events.select("line", "kind", "severity", "message").rows()
    assert rows == [(4, "oom_kill", "warning", "SystemOOM"), (5, "log", "info", "Starting kubelet.")]


def test_device_plugin_without_nvml_keeps_its_version_block_and_warnings() -> None:
    name = "kubelet_klog_device_plugin_nvml_not_detected_mig_mixed_01.log"
    events = rca.parse_text(fixture_path(name).read_text(), file=name, reference_time=FIXED_MTIME)
    assert events.select("line", "n_lines").row(0) == (1, 4)
    warned = events.filter(events["severity"] == "warning")
    assert warned["line"].to_list() == [10, 11]
    assert warned["message"][1].startswith("NVML not detected: could not load NVML library")
