"""The NVIDIA k8s-device-plugin's own klog files: read by the kubelet rules, named as the plugin's, not the kubelet's.

A `kubectl logs` of the plugin's pod is bare klog like the kubelet's; its banner, its resource manager and health
checker's callers and its own messages name it for the whole file, and a header with nothing after it (the plugin's
"Running with config:" dump) keeps the unindented lines that follow as its message.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import fixture_path

MTIME = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _parse(text: str, name: str = "plugin.log") -> pl.DataFrame:
    return rca.parse_text(text, file=name, reference_time=MTIME)


def _fixture(name: str) -> pl.DataFrame:
    return _parse(fixture_path(name).read_bytes().decode("utf-8"), name)


def test_banner_names_every_line_of_the_plugin_file() -> None:
    events = _fixture("kubelet_klog_device_plugin_fs_watcher_too_many_open_files_gpu_operator_01.log")
    assert set(events["source"]) == {"kubelet"}
    assert set(events["process"]) == {"nvidia-device-plugin"}
    failed = events.filter(pl.col("line") == 12).row(0, named=True)
    assert (failed["severity"], failed["pid"], failed["kind"]) == ("error", 1, "log")
    assert failed["message"].endswith("too many open files")
    banner = events.filter(pl.col("line") == 7).row(0, named=True)
    assert banner["n_lines"] == 4


def test_config_dump_after_few_klog_lines_is_still_the_plugin_klog() -> None:
    events = _fixture("kubelet_klog_device_plugin_fs_watcher_running_with_config_defaulted_container_01.log")
    assert set(events["source"]) == {"kubelet"}
    assert set(events["process"]) == {"nvidia-device-plugin"}
    dump = events.filter(pl.col("line") == 7).row(0, named=True)
    # the header at line 7 has nothing after it: "Running with config:" and the JSON, to the file's end, are its message
    assert dump["n_lines"] == 37
    assert "Running with config:" in dump["message"] and dump["message"].endswith("}")
    assert events.height == 7


def test_xid_line_of_the_plugin_keeps_its_xid() -> None:
    events = _fixture("kubelet_klog_device_plugin_xid48_unhealthy_01.log")
    xid = events.filter(pl.col("kind") == "xid").row(0, named=True)
    # The Xid and unhealthy-device lines name no process (tests/test_source_kubelet.py pins it); the other lines name the plugin.
    assert (xid["xid"], xid["process"], xid["severity"]) == (48, None, "critical")


def test_non_xid_nvml_event_is_no_xid() -> None:
    events = _fixture("kubelet_klog_device_plugin_health_skipping_non_xid_event_01.log")
    row = events.row(0, named=True)
    assert (row["kind"], row["xid"], row["process"], row["severity"]) == ("log", None, "nvidia-device-plugin", "info")


def test_kubelet_file_with_server_and_main_callers_stays_the_kubelet() -> None:
    text = (
        'I0131 19:35:42.895845    2345 server.go:417] "Kubelet version" kubeletVersion="v1.30.0"\n'
        "I0131 19:35:42.895917    2345 main.go:50] Starting\n"
        'I0131 19:35:43.000001    2345 kubelet.go:2400] "SyncLoop ADD" source="api" pods=["default/a"]\n'
    )
    events = _parse(text, "kubelet.log")
    assert set(events["process"]) == {"kubelet"}


def test_real_kubelet_fixture_keeps_its_process() -> None:
    events = _fixture("kubelet_klog_eviction_01.log")
    assert "nvidia-device-plugin" not in set(events["process"].drop_nulls())


@settings(max_examples=30, deadline=None)
@given(st.lists(st.from_regex(r"[A-Za-z{}\[\]\":, ]{1,20}", fullmatch=True).filter(lambda s: not s[0].isspace()), min_size=1, max_size=8))
def test_empty_header_keeps_unindented_lines_to_the_next_header(body: list[str]) -> None:
    text = "\n".join(
        [
            "I1023 10:14:11.984927       1 main.go:199] Starting FS watcher.",
            "I1023 10:14:11.986423       1 main.go:314]",
            *body,
            "I1023 10:14:11.986441       1 main.go:317] Retrieving plugins.",
        ]
    ) + "\n"
    events = _parse(text).sort("line")
    assert events["line"].to_list() == [1, 2, len(body) + 3]
    assert events["n_lines"].to_list() == [1, len(body) + 1, 1]
    assert set(events["process"]) == {"nvidia-device-plugin"}
