"""The GPU operator's other klog operands (gpu-feature-discovery, NVIDIA's DRA driver) name their own process."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import rca

DATA = Path(__file__).parent / "data" / "kubelet"


def _parse(name: str) -> pl.DataFrame:
    return rca.parse_text((DATA / name).read_text(), file=name)


@pytest.fixture(scope="module")
def gfd() -> pl.DataFrame:
    return _parse("kubelet_klog_gfd_running_with_config_sleeping_writing_labels_01.log")


def test_gfd_file_is_read_as_klog_though_its_config_dump_outnumbers_it(gfd: pl.DataFrame) -> None:
    assert set(gfd["source"]) == {"kubelet"}
    assert set(gfd["process"]) == {"gpu-feature-discovery"}
    dump = gfd.filter(pl.col("line") == 3).row(0, named=True)
    assert dump["n_lines"] == 24 and dump["message"].startswith("\nRunning with config:")


def test_gfd_go_log_line_takes_its_own_full_date(gfd: pl.DataFrame) -> None:
    row = gfd.filter(pl.col("line") == 32).row(0, named=True)
    assert row["ts_raw"] == "2024/05/22 06:06:01" and row["ts_quality"] == "exact"
    assert row["ts"].isoformat() == "2024-05-22T06:06:01+00:00"
    klog = gfd.filter(pl.col("line") == 33).row(0, named=True)
    assert (klog["severity"], klog["pid"], klog["ts_quality"]) == ("info", 1, "year_inferred")


def test_dra_driver_compute_domain_lines_name_the_driver() -> None:
    events = _parse("kubelet_klog_dra_compute_domain_reconcile_not_ready_01.log")
    assert events["line"].to_list() == [1, 3, 5]
    assert set(events["process"]) == {"nvidia-dra-driver-gpu"}
    assert set(events["severity"]) == {"info"} and set(events["pid"]) == {1}


def test_real_kubelet_and_device_plugin_files_keep_their_process() -> None:
    kubelet = _parse("kubelet_klog_eviction_01.log")
    assert set(kubelet["process"].drop_nulls()) <= {"kubelet"}
    plugin = _parse("kubelet_klog_device_plugin_fs_watcher_running_with_config_defaulted_container_01.log")
    assert set(plugin.filter(pl.col("line") > 1)["process"]) == {"nvidia-device-plugin"}
