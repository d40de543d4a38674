"""The dcgm source: dcgm-exporter scrapes, Prometheus /federate dumps and query-API JSON exports.

Fixtures follow dcgm-exporter's own output (its README and etc/default-counters.csv: HELP texts,
label order ``gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION,
container, namespace, pod``; MIG series with ``GPU_I_PROFILE`` / ``GPU_I_ID``), Prometheus'
federation output (sorted labels, ``untyped``, millisecond timestamps) and its HTTP API
(``resultType`` matrix and vector, values as ``[seconds, "string"]``).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.ingest import FileTask, IngestOptions, parse_file, parse_lines
from rca.sources import dcgm
from rca.sources._base import ParseContext, lines_frame
from tests.conftest import DATA, FIXED_MTIME

FOLDER = DATA / "dcgm"
FIXTURES = sorted(p for p in FOLDER.iterdir() if p.is_file())
MIB = 2**20


def _events(name: str, **kwargs: object) -> pl.DataFrame:
    return rca.parse_text((FOLDER / name).read_text(), file=f"gpu-node-99/{name}", reference_time=FIXED_MTIME, **kwargs)


def _attrs(row: dict) -> dict:
    return json.loads(row["attrs"]) if row["attrs"] else {}


def _parse_file(path: Path, tmp_path: Path) -> tuple[dict, pl.DataFrame]:
    staging = tmp_path / "staging"
    staging.mkdir()
    result = parse_file(FileTask(str(path), f"gpu-node-99/{path.name}", "gpu-node-99", str(staging), "run0", IngestOptions()))
    return result.manifest, pl.concat([pl.read_parquet(staging / name) for name in result.new_parts])


def test_scrape_merges_each_gpus_metrics_into_one_sample() -> None:
    events = _events("dcgm_exporter_scrape_h100_2gpu.txt")
    assert events["kind"].to_list() == ["gpu_sample", "gpu_sample"]
    busy, idle = events.to_dicts()
    assert {k: busy[k] for k in ("host", "gpu_index", "gpu_uuid", "pci_bus", "pod", "namespace", "container", "gpu_util_pct")} == {
        "host": "gpu-node-07", "gpu_index": 0, "gpu_uuid": "GPU-3b8f2c1a-6d4e-4f7a-9c2b-1e5d8a7f6c30", "pci_bus": "00000000:18:00.0",
        "pod": "vllm-llama3-70b-0", "namespace": "inference", "container": "vllm", "gpu_util_pct": 100.0}
    assert (busy["mem_used_bytes"], busy["mem_total_bytes"]) == (75890 * MIB, (75890 + 5187) * MIB)
    assert (busy["ts"], busy["ts_quality"], busy["n_lines"]) == (FIXED_MTIME, "file_mtime", 22)
    attrs = _attrs(busy)
    assert {k: attrs[k] for k in ("model_name", "driver_version", "temp_c", "power_w", "sm_clock_mhz", "last_xid")} == {
        "model_name": "NVIDIA H100 80GB HBM3", "driver_version": "550.90.07", "temp_c": 66, "power_w": 612.457, "sm_clock_mhz": 1980, "last_xid": 0}
    assert attrs["DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"] == pytest.approx(0.412236)
    assert (idle["gpu_index"], idle["pod"], idle["mem_used_bytes"], idle["gpu_util_pct"]) == (1, None, 0, 0.0)


def test_help_and_type_lines_are_skipped_as_comments(tmp_path: Path) -> None:
    row, events = _parse_file(FOLDER / "dcgm_exporter_scrape_h100_2gpu.txt", tmp_path)
    assert (row["source"], row["status"], row["lines"], row["events"], row["skipped_lines"]) == ("dcgm", "ok", 88, 2, 44)
    assert json.loads(row["skipped_reasons"]) == {"comment": 44}
    assert set(events["host"]) == {"gpu-node-07"}  # the Hostname label, not the folder


def test_mig_instances_are_samples_of_their_parent_gpu_and_other_metrics_are_skipped() -> None:
    lines = lines_frame((FOLDER / "dcgm_exporter_scrape_mig.txt").read_text())
    events, skipped = parse_lines(lines, ParseContext(file="h/mig.txt"), sources.get("dcgm"))
    assert skipped == {"comment": 8, "other metric": 2}
    rows = events.sort("line").to_dicts()
    assert [(r["gpu_index"], _attrs(r)["mig_device"], _attrs(r)["mig_profile"], r["mem_used_bytes"]) for r in rows] == [
        (0, 3, "2g.20gb", 13 * MIB), (0, 5, "2g.20gb", 18216 * MIB)]
    assert rows[1]["mem_total_bytes"] == (18216 + 1250) * MIB


def test_federate_dumps_keep_their_timestamps_and_an_xid_becomes_one_event() -> None:
    events = _events("federate_dumps_fb_growth_xid31.txt")
    samples = events.filter(pl.col("kind") == "gpu_sample").sort("ts")
    start = datetime(2025, 11, 30, 10, 0, tzinfo=UTC)
    assert samples["ts"].to_list() == [start + timedelta(seconds=15 * k) for k in range(4)]
    assert set(samples["ts_quality"]) == {"exact"}
    assert samples["mem_used_bytes"].to_list() == [(52000 + 6400 * k) * MIB for k in range(4)]
    assert set(samples["pod"]) == {"mixtral-ft-worker-0"} and set(samples["host"]) == {"gpu-node-12"}
    xid = events.filter(pl.col("kind") == "xid").to_dicts()
    assert len(xid) == 1  # the gauge stays at 31 in the fourth dump: one Xid, not two
    assert (xid[0]["xid"], xid[0]["gpu_index"], xid[0]["ts"], xid[0]["severity"]) == (31, 3, start + timedelta(seconds=30), "error")
    assert _attrs(xid[0])["xid_name"] == "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT"
    assert _attrs(samples.row(3, named=True))["last_xid"] == 31


def test_range_query_export_is_read_whole(tmp_path: Path) -> None:
    row, events = _parse_file(FOLDER / "prometheus_range_query_fb_used.json", tmp_path)
    assert (row["source"], row["format"], row["lines"], row["events"], row["derived_events"]) == ("dcgm", "prometheus_json", 1, 10, 9)
    node7 = events.filter(pl.col("host") == "gpu-node-07").sort("ts")
    assert node7["mem_used_bytes"].to_list() == [v * MIB for v in (30000, 42000, 54000, 66000, 78000)]
    assert set(node7["mem_total_bytes"]) == {81077 * MIB}
    assert node7["ts"][0] == datetime(2025, 11, 30, 10, 0, tzinfo=UTC)
    node9 = events.filter(pl.col("host") == "gpu-node-09")
    assert (node9.height, node9["ts"].min(), node9["mem_total_bytes"].null_count()) == (5, datetime(2025, 11, 30, 10, 0, 0, 250000, tzinfo=UTC), 5)


def test_instant_query_export_with_relabelled_pod_labels() -> None:
    events = _events("prometheus_instant_query_xid.json")
    xid = events.filter(pl.col("kind") == "xid").row(0, named=True)
    assert (xid["xid"], xid["gpu_index"], xid["pod"], xid["namespace"], xid["container"], xid["severity"]) == (
        48, 5, "gpt-pretrain-worker-5", "research", "pytorch", "critical")
    assert xid["ts"] == datetime(2025, 11, 30, 11, 0, 0, 500000, tzinfo=UTC)
    assert events.filter(pl.col("kind") == "gpu_sample")["gpu_index"].to_list() == [6]


def test_a_damaged_json_export_is_a_file_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_FB_USED"},"values":[[1,')
    row, _ = _parse_file_or_empty(path, tmp_path)
    assert (row["status"], row["source"]) == ("error", "dcgm")
    assert row["error"].startswith("not a readable Prometheus JSON export")


def _parse_file_or_empty(path: Path, tmp_path: Path) -> tuple[dict, list[str]]:
    staging = tmp_path / "staging"
    staging.mkdir()
    result = parse_file(FileTask(str(path), f"h/{path.name}", "h", str(staging), "run0", IngestOptions()))
    return result.manifest, result.new_parts


def test_blank_values_and_nan_are_null() -> None:
    text = ('DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 9223372036854775794\nDCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} NaN\n'
            'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} +Inf\n')
    row = rca.parse_text(text, file="h/x.txt").row(0, named=True)
    assert (row["mem_used_bytes"], row["gpu_util_pct"], row["attrs"]) == (None, None, None)


def test_exporter_pod_hostname_is_not_a_host() -> None:
    text = 'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",Hostname="nvidia-dcgm-exporter-7xk2p"} 10\n'
    assert rca.parse_text(text, file="gpu-node-3/x.txt", host="gpu-node-3")["host"].to_list() == ["gpu-node-3"]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixtures_are_sniffed_as_dcgm(path: Path) -> None:
    head = [line for line in path.read_text().splitlines() if line.strip()][:60]
    source, _ = sources.sniff(head)
    assert source is not None and source.name == "dcgm"


def test_other_prometheus_metrics_and_logs_are_not_dcgm() -> None:
    assert dcgm.sniff(["# HELP go_goroutines Number of goroutines.", "# TYPE go_goroutines gauge", "go_goroutines 12"]) == 0.0
    assert dcgm.sniff(["I1201 03:17:05.123456    2345 kubelet.go:123] DCGM_FI_DEV_FB_USED is high"]) == 0.0
    assert dcgm.sniff_bytes(b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up"}}]}}') == 0.0


# --- property tests -------------------------------------------------------------------------------

LABEL_VALUES = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=30)


@settings(max_examples=80, deadline=None)
@given(
    gpu=st.integers(0, 15),
    used=st.integers(0, 200_000),
    free=st.integers(0, 200_000),
    util=st.integers(0, 100),
    pod=LABEL_VALUES,
    stamp_ms=st.none() | st.integers(946_684_800_000, 4_102_444_800_000),
    spaced=st.booleans(),
)
def test_exposition_samples_round_trip(gpu: int, used: int, free: int, util: int, pod: str, stamp_ms: int | None, spaced: bool) -> None:
    sep = ", " if spaced else ","
    escaped = pod.replace("\\", "\\\\").replace('"', '\\"')  # the exposition format's escapes
    labels = sep.join([f'gpu="{gpu}"', 'UUID="GPU-x"', f'pod="{escaped}"', 'namespace="ns"'])
    stamp = f" {stamp_ms}" if stamp_ms is not None else ""
    text = "".join(f"{metric}{{{labels}}} {value}{stamp}\n" for metric, value in (
        ("DCGM_FI_DEV_FB_USED", used), ("DCGM_FI_DEV_FB_FREE", free), ("DCGM_FI_DEV_GPU_UTIL", util)))
    events = rca.parse_text(text, file="h/scrape.txt", reference_time=FIXED_MTIME)
    assert events.height == 1
    row = events.row(0, named=True)
    assert (row["gpu_index"], row["mem_used_bytes"], row["mem_total_bytes"], row["gpu_util_pct"]) == (gpu, used * MIB, (used + free) * MIB, util)
    assert row["pod"] == (pod or None) and row["n_lines"] == 3
    expected_ts = datetime.fromtimestamp(stamp_ms / 1000, UTC) if stamp_ms is not None else FIXED_MTIME
    assert row["ts"] == expected_ts


@settings(max_examples=60, deadline=None)
@given(codes=st.lists(st.sampled_from([0, 0, 13, 31, 48, 79]), min_size=1, max_size=12))
def test_an_xid_event_where_the_gauge_changes_to_a_code(codes: list[int]) -> None:
    text = "".join(f'DCGM_FI_DEV_XID_ERRORS{{gpu="1",UUID="GPU-y"}} {code} {1_764_500_000_000 + 1000 * k}\n' for k, code in enumerate(codes))
    events = rca.parse_text(text, file="h/x.txt")
    expected = [code for k, code in enumerate(codes) if code and (k == 0 or codes[k - 1] != code)]
    assert events.filter(pl.col("kind") == "xid").sort("ts")["xid"].to_list() == expected
    assert int(events["n_lines"].sum()) == len(codes)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10, 10**20), min_size=1, max_size=8))
def test_any_value_gives_valid_numbers_and_attrs(values: list[float]) -> None:
    text = "".join(f'DCGM_FI_PROF_X{k}{{gpu="0"}} {v}\n' for k, v in enumerate(values))
    events = rca.parse_text(text, file="h/x.txt")
    for attrs in events["attrs"].drop_nulls():
        assert all(value is None or math.isfinite(value) for value in json.loads(attrs).values())
