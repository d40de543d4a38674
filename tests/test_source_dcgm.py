"""The dcgm source: dcgm-exporter scrapes, Prometheus /federate dumps, query-API JSON exports, dcgmi diag / discovery tables.

Fixtures follow dcgm-exporter's own output (its README and etc/default-counters.csv: HELP texts,
label order ``gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION,
container, namespace, pod``; MIG series with ``GPU_I_PROFILE`` / ``GPU_I_ID``), Prometheus'
federation output (sorted labels, ``untyped``, millisecond timestamps) and its HTTP API
(``resultType`` matrix and vector, values as ``[seconds, "string"]``).
"""

from __future__ import annotations

import json
import math
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import _small_files, sources
from rca.ingest import FileTask, IngestOptions, parse_file, parse_lines
from rca.sources import dcgm
from rca.sources._base import ParseContext, lines_frame
from tests.conftest import DATA, FIXED_MTIME, of_kind

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


def test_renamed_lowercase_hostname_label_names_the_host() -> None:
    """dcgm-exporter renamed its ``Hostname`` label ``hostname`` (PR #655): the node is still the host."""
    samples = _events("dcgm_exporter_hostname_label_lowercase_t4_pod_01.txt").filter(pl.col("kind") == "gpu_sample")
    row = samples.row(0, named=True)
    assert samples.height == 1
    assert (row["host"], row["gpu_index"], row["gpu_uuid"], row["pod"], row["namespace"], row["container"]) == (
        "hami-workshop", 0, "GPU-8f1f4d06-07fd-27a7-52d5-e58aa060d256", "gpu-test", "default", "gpu-test")
    assert (row["mem_used_bytes"], row["gpu_util_pct"], _attrs(row)["temp_c"], _attrs(row)["power_w"]) == (0, 0.0, 43, 15.507)


def test_old_namespace_labels_and_lowercase_field_names_are_read() -> None:
    """``--use-old-namespace`` (``uuid``, ``pod_name`` …) with a field named in lowercase: a sample of its GPU and pod."""
    events = _events("dcgm_exporter_old_namespace_lowercase_fields_mig_pod_01.txt")
    assert events["kind"].to_list() == ["gpu_sample", "gpu_sample"]
    mig, podded = events.row(0, named=True), events.row(1, named=True)
    assert (mig["gpu_index"], mig["gpu_uuid"], mig["pod"], _attrs(mig)["mig_device"], _attrs(mig)["mig_profile"]) == (
        3, "GPU-af2c63a8-8c8b-21cc-581a-bab6bba89d08", None, 1, "4g.40gb")
    assert (podded["gpu_index"], podded["pod"], podded["namespace"], podded["container"]) == (4, "d85np-t6mdg", "ai-1", "-grpc-pod")
    assert _attrs(podded)["DCGM_FI_PROF_GR_ENGINE_ACTIVE"] == pytest.approx(0.008246)


def test_query_export_reads_the_renamed_and_legacy_labels() -> None:
    document = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [{"metric": {
        "__name__": "dcgm_fi_dev_fb_used", "gpu": "2", "uuid": "GPU-b", "hostname": "gpu-node-4", "pod_name": "trainer-0",
        "pod_namespace": "ml", "container_name": "main"}, "value": [1764496800, "4096"]}]}})
    row = rca.parse_text(document, file="h/query.json").row(0, named=True)
    identity = (row["kind"], row["host"], row["gpu_index"], row["gpu_uuid"], row["pod"], row["namespace"], row["container"])
    assert identity == ("gpu_sample", "gpu-node-4", 2, "GPU-b", "trainer-0", "ml", "main")
    assert row["mem_used_bytes"] == 4096 * MIB


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


@settings(max_examples=40, deadline=None)
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


@settings(max_examples=30, deadline=None)
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


# --- dcgmi diag -------------------------------------------------------------------------------


def test_diag_331_results_are_events_with_metadata_in_attrs() -> None:
    events = _events("dcgm_diag_r2_331_deployment_pass.txt")
    assert events["source"].unique().to_list() == ["dcgm"]
    assert events["kind"].unique().to_list() == ["log"]
    denylist = events.filter(pl.col("line") == 11).row(0, named=True)
    assert (denylist["severity"], denylist["message"], denylist["ts"], denylist["ts_quality"]) == (
        "info", "Denylist: Pass", FIXED_MTIME, "file_mtime")
    assert _attrs(denylist) == {"test": "Denylist", "section": "Deployment", "result": "Pass", "dcgm_version": "3.3.1",
                                "driver_version": "535.129.03", "gpu_device_ids": "1eb8"}
    # Borders, header, section rules and metadata rows are no events; the prompt and banner stay as logs.
    assert events["line"].to_list() == [1, 2, *range(11, 18)]


def test_diag_per_gpu_results_of_dcgm4_carry_the_gpu_index() -> None:
    events = _events("dcgm_diag_423_per_gpu_pass.txt").filter(pl.col("line") >= 11)
    assert events["gpu_index"].to_list() == [None, 0, 1, 2, 3]
    assert events["message"].to_list()[1] == "software: GPU0: Pass"
    assert {_attrs(row)["dcgm_version"] for row in events.to_dicts()} == {"4.2.3"}


def test_diag_wrapped_warning_rows_join_into_one_message() -> None:
    events = _events("dcgm_diag_r2_331_gpu_memory_fail.txt")
    passed, failed, warning = events.filter(pl.col("line").is_in([9, 10, 11])).to_dicts()
    assert (passed["severity"], passed["gpu_index"], failed["severity"], failed["gpu_index"]) == ("info", 1, "error", 0)
    assert _attrs(failed) == {"test": "GPU Memory", "section": "Hardware", "result": "Fail", "gpus": "0"}
    assert (warning["severity"], warning["gpu_index"], warning["n_lines"]) == ("warning", 0, 5)
    assert warning["message"] == (
        "GPU Memory: Warning: GPU 0 Error using CUDA API cuCtxCreate Check DCGM and system logs for errors. Reset GPU. "
        "Restart DCGM. Rerun diagnostics. Unable to create CUDA context: 'CUDA-capable device(s) is/are busy or unavailable'.")
    # Chunks are cut mid-word and keep their own spaces ("bandwidth:  12.33").
    info = events.filter(pl.col("line") == 5).row(0, named=True)
    assert info["message"] == ("Info: GPU 1 GPU to Host bandwidth:  12.33 GB/s, GPU 1 Host to GPU bandwidth:  13.15 GB/s, "
                               "GPU 1 bidirectional bandwidth: 22.63 GB/s")
    assert events["n_lines"].sum() + 1 == 15  # the section rule is skipped


def test_diag_fail_all_and_an_xid_in_a_warning() -> None:
    # Wrapped as dcgmi does: 45-character chunks, here one ending on a word and the next starting with its space.
    rows = (
        "+---------------------------+------------------------------------------------+",
        "| Diagnostic                | Result                                         |",
        "+===========================+================================================+",
        "+-----  Integration  -------+------------------------------------------------+",
        "| PCIe                      | Fail - All                                     |",
        "| Warning                   | GPU 3 Detected XID 79 for GPU 3 while running  |",
        "|                           |  the test. Drain the node.                     |",
        "+---------------------------+------------------------------------------------+   ",
    )
    events = rca.parse_text("\n".join(rows), file="node/diag.txt", reference_time=FIXED_MTIME)
    fail, warning = events.to_dicts()
    assert (fail["source"], fail["kind"], fail["severity"], fail["gpu_index"]) == ("dcgm", "log", "error", None)
    assert _attrs(fail)["gpus"] == "all"
    assert (warning["kind"], warning["xid"], warning["gpu_index"], warning["severity"]) == ("xid", 79, 3, "warning")
    assert warning["message"].endswith("Detected XID 79 for GPU 3 while running the test. Drain the node.")
    assert _attrs(warning)["xid_name"]


def test_discovery_list_gives_one_event_per_gpu_with_bus_and_uuid() -> None:
    events = _events("dcgm_discovery_l_h100_01.txt")
    gpus = events.filter(pl.col("format") == "discovery")
    assert events["source"].unique().to_list() == ["dcgm"]
    assert gpus.select("line", "n_lines", "gpu_index", "pci_bus", "gpu_uuid").rows() == [
        (6, 3, 0, "00000000:4C:00.0", "GPU-d6a2c177-4cd8-8d01-0310-79f2720f37de"),
        (10, 3, 1, "00000000:5D:00.0", "GPU-75c4ee16-a840-6f6c-9a7b-5ed8f41598b8"),
    ]
    assert gpus["kind"].unique().to_list() == ["log"]
    assert events.filter(pl.col("line") == 2)["message"].to_list() == ["4 GPUs found."]


def test_diag_table_inside_a_longer_job_log_is_left_to_the_log() -> None:
    table = (FOLDER / "dcgm_diag_423_per_gpu_pass.txt").read_text().splitlines()
    assert dcgm.sniff(table) == 0.95
    job_log = [f"2025-08-25 10:00:{i:02d} INFO step {i} loss 1.{i:02d}" for i in range(40)]
    assert dcgm.sniff(job_log[:20] + table + job_log[20:]) == 0.0


def test_diag_rows_with_trailing_blanks_after_the_box() -> None:
    rows = (
        "$ dcgmi diag -i 0,1,2,3 -v -r 2",
        "+---------------------------+------------------------------------------------+" + " " * 60,
        "| Diagnostic                | Result                                         |" + " " * 60,
        "+===========================+================================================+" + " " * 60,
        "|-----  Metadata  ----------+------------------------------------------------|" + " " * 40,
        "| DCGM Version              | 4.4.1                                          |",
        "+-----  Integration  -------+------------------------------------------------+" + " " * 20,
        "| pcie                      | Fail                                           |\t ",
        "|                           | GPU0: Fail                                     |   ",
    )
    events = rca.parse_text("\n".join(rows), file="node/diag.txt", reference_time=FIXED_MTIME)
    diag = events.filter(pl.col("line") >= 8)
    assert diag.select("severity", "gpu_index").rows() == [("error", None), ("error", 0)]
    assert {_attrs(row)["dcgm_version"] for row in diag.to_dicts()} == {"4.4.1"}
    assert _attrs(diag.row(1, named=True))["test"] == "pcie"


def test_diag_under_kubectl_exec_keeps_the_banner_as_a_log_line() -> None:
    events = _events("dcgm_diag_r3_335_kubectl_exec.txt")
    assert events["source"].unique().to_list() == ["dcgm"]
    assert events.filter(pl.col("line") == 1)["message"].to_list()[0].startswith("Defaulted container")
    assert _attrs(events.filter(pl.col("line") == 13).row(0, named=True))["gpu_device_ids"] == "20b5,20b5,20b5,20b5"


def test_scrape_with_pod_labels_is_one_info_sample_attributed_to_the_pod() -> None:
    (sample,) = _events("dcgm_exporter_pod_labels_t4_xid0_01.txt").to_dicts()
    assert (sample["kind"], sample["severity"], sample["gpu_index"], sample["n_lines"]) == ("gpu_sample", "info", 0, 4)
    assert (sample["pod"], sample["namespace"], sample["container"], sample["host"]) == ("dcgmproftester", "default", "dcgmproftester11", None)
    assert _attrs(sample)["last_xid"] == 0


def test_exporter_xid_counter_is_an_xid_event_with_the_code_of_its_label() -> None:
    series = 'DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-b9f9e81b-bee7-34bc-af17-132ef6592740",window_size_in_ms="300000",xid="%s"} %d %d'
    text = "\n".join([
        "# TYPE DCGM_EXP_XID_ERRORS_COUNT gauge",
        series % ("48", 1, 1764496800000),
        series % ("48", 1, 1764496815000),  # the same occurrence in the next scrape
        series % ("79", 1, 1764496815000),
        series % ("48", 2, 1764496830000),
    ])
    xids = of_kind(rca.parse_text(text, file="metrics.txt"), "xid").sort("line")
    assert xids.select("xid", "gpu_index", "line").rows() == [(48, 0, 2), (79, 0, 4), (48, 0, 5)]
    assert xids["severity"].to_list() == ["critical"] * 3  # the catalog's: a DBE, a GPU off the bus


# --- dcgmi health -c and dcgmi stats ------------------------------------------------------------


def _accounted(events: pl.DataFrame, skipped: dict[str, int], lines: int) -> bool:
    return int(events["n_lines"].sum()) + sum(skipped.values()) == lines


def test_health_report_of_dcgm_1x_is_an_event_per_gpu_incident() -> None:
    events = _events("dcgm_health_c_userguide_warning_01.txt")
    assert events["source"].unique().to_list() == ["dcgm"]
    overall, pcie, inforom = events.sort("line").to_dicts()
    assert (overall["kind"], overall["severity"], overall["message"]) == ("log", "warning", "Overall Health: Warning")
    assert (pcie["kind"], pcie["severity"], pcie["gpu_index"], pcie["line"], pcie["n_lines"]) == ("log", "warning", 0, 6, 2)
    assert pcie["message"] == "GPU 0: PCIe system: Warning: Detected more than 8 PCIe replays per minute for GPU 0: 13"
    assert (inforom["gpu_index"], _attrs(inforom)) == (1, {"system": "InfoROM system", "result": "Warning"})
    assert inforom["message"].endswith("A corrupt InfoROM has been detected in GPU 1.")
    assert (pcie["ts"], pcie["ts_quality"]) == (FIXED_MTIME, "file_mtime")


# DCGM 2+ prints the report as DcgmiOutputTree(28, 60) (dcgmi/Health.cpp): an entity group, its entities
# ("-> 0"), their systems ("-> Memory system") and the incident text wrapped at word breaks under each.
_HEALTH_TREE = """\
+---------------------------+----------------------------------------------------------+
| Health Monitor Report                                                                |
+===========================+==========================================================+
| Overall Health            | Failure                                                  |
| GPU                       |                                                          |
| -> 0                      | Warning                                                  |
|    -> Errors              |                                                          |
|       -> PCIe system      | Warning                                                  |
|                           | Detected more than 8 PCIe replays per minute for GPU 0 : |
|                           | 13                                                       |
| -> 1                      | Failure                                                  |
|    -> Errors              |                                                          |
|       -> Memory system    | Failure                                                  |
|                           | Detected XID 48 for GPU 1                                |
|       -> SM system        | Warning                                                  |
|                           | Detected clocks event due to thermal violation in GPU 1. |
| Switch                    |                                                          |
| -> 3                      | Failure                                                  |
|    -> Errors              |                                                          |
|       -> NVLINK system    | Failure                                                  |
|                           | NvSwitch physical ID 3's NvLink port 7 is currently      |
|                           | down.                                                    |
+---------------------------+----------------------------------------------------------+
"""


def test_health_tree_layout_gives_each_system_incident_of_its_entity() -> None:
    lines = lines_frame(_HEALTH_TREE)
    assert dcgm.sniff(lines["text"].to_list()) == 0.95
    parsed = dcgm.parse(lines, ParseContext(file="node/health.txt", reference_time=FIXED_MTIME))
    rows = parsed.events.sort("line").to_dicts()
    assert [(r["line"], r["kind"], r["severity"], r["gpu_index"], r["xid"]) for r in rows] == [
        (4, "log", "error", None, None), (8, "log", "warning", 0, None), (13, "xid", "error", 1, 48),
        (15, "log", "warning", 1, None), (20, "log", "error", None, None)]
    assert rows[1]["message"] == "GPU 0: PCIe system: Warning: Detected more than 8 PCIe replays per minute for GPU 0 : 13"
    assert rows[2]["message"] == "GPU 1: Memory system: Failure: Detected XID 48 for GPU 1"
    assert _attrs(rows[2])["xid_name"] == "ROBUST_CHANNEL_GPU_ECC_DBE"
    assert rows[4]["message"] == "Switch 3: NVLINK system: Failure: NvSwitch physical ID 3's NvLink port 7 is currently down."
    assert {k: _attrs(rows[4])[k] for k in ("entity_group", "entity_id")} == {"entity_group": "Switch", "entity_id": 3}
    assert _accounted(parsed.events, parsed.skipped, lines.height)


def test_healthy_report_is_one_info_line() -> None:
    text = _HEALTH_TREE.splitlines()
    events = rca.parse_text("\n".join([*text[:3], "| Overall Health            | Healthy                                                  |", text[-1]]))
    assert events.select("kind", "severity", "message").rows() == [("log", "info", "Overall Health: Healthy")]


def test_stats_of_a_pid_is_a_sample_with_its_max_memory_at_its_start_while_running() -> None:
    events = _events("dcgm_stats_pid_v_326_a100_01.txt").sort("line")
    (sample,) = of_kind(events, "gpu_sample").to_dicts()
    assert (sample["line"], sample["n_lines"], sample["gpu_index"], sample["pid"]) == (4, 35, 0, 3518784)
    assert (sample["mem_used_bytes"], sample["gpu_util_pct"], sample["severity"]) == (473956352, 100.0, "info")
    assert (sample["ts"], sample["ts_quality"]) == (datetime(2023, 10, 25, 11, 51, 37, tzinfo=UTC), "exact")  # End Time: Still Running
    attrs = _attrs(sample)
    assert {k: attrs[k] for k in ("end_time", "energy_j", "conflicting_processes", "ecc_dbe", "critical_xid_errors", "overall_health")} == {
        "end_time": "Still Running", "energy_j": 1249175, "conflicting_processes": 1, "ecc_dbe": 0, "critical_xid_errors": 0,
        "overall_health": "Healthy"}
    assert "ecc_sbe" not in attrs  # not printed for this GPU
    assert events.filter(pl.col("kind") == "log")["line"].to_list() == [1, 2, 39, 40]


def test_stats_summary_of_a_group_has_no_gpu_and_unspecified_counters_are_null() -> None:
    (sample,) = of_kind(_events("dcgm_stats_j_318_mig_summary_01.txt"), "gpu_sample").to_dicts()
    assert (sample["gpu_index"], sample["mem_used_bytes"], sample["gpu_util_pct"]) == (None, 0, None)
    assert sample["ts"] == datetime(2023, 8, 3, 18, 21, 32, tzinfo=UTC)
    attrs = _attrs(sample)
    assert (attrs["job_id"], attrs["duration_s"], attrs["processes"], attrs["critical_xid_errors"]) == ("952404", 6391.9, 0, 0)
    assert not {"energy_j", "ecc_sbe", "ecc_dbe", "pcie_replays", "power_avg_w"} & set(attrs)


def test_stats_in_a_slurm_epilog_reads_every_section_and_the_job_id(tmp_path: Path) -> None:
    row, events = _parse_file(FOLDER / "dcgm_stats_j_slurm_epilog_232_01.txt", tmp_path)
    assert (row["source"], row["status"]) == ("dcgm", "ok")
    (sample,) = of_kind(events, "gpu_sample").to_dicts()
    assert (sample["line"], sample["n_lines"], sample["pid"], sample["mem_used_bytes"]) == (5, 36, 10140, 2628780032)
    assert sample["ts"] == datetime(2021, 12, 10, 19, 41, 24, tzinfo=UTC)
    assert {k: _attrs(sample)[k] for k in ("job_id", "power_avg_w", "power_max_w", "ecc_sbe")} == {
        "job_id": "232", "power_avg_w": 37.8985, "power_max_w": 45.874, "ecc_sbe": 0}
    # the "+--  Compute Process Utilization  ---+" rule (two dashes) is a section, not text
    assert sorted(events.filter(pl.col("kind") == "log")["line"].to_list()) == [1, 2, 3, 42]


def test_stats_pasted_indented_from_docs_is_dcgm_and_read_in_the_given_zone() -> None:
    events = _events("dcgm_stats_j_ibex_indented_01.txt", tz="Asia/Riyadh")
    (sample,) = of_kind(events, "gpu_sample").to_dicts()
    assert (sample["gpu_index"], sample["mem_used_bytes"], sample["gpu_util_pct"]) == (6, 7409238016, 72.0)
    assert sample["ts"] == datetime(2026, 1, 5, 12, 39, 41, tzinfo=UTC)  # 15:39:41 +03:00
    assert _attrs(sample)["sm_util_max_pct"] == 99.0


def test_stats_health_rows_are_events_and_a_critical_xid_makes_the_sample_a_warning() -> None:
    text = """\
Successfully retrieved statistics for job: 77.
+------------------------------------------------------------------------------+
| GPU ID: 3                                                                    |
+====================================+=========================================+
|-----  Execution Stats  ------------+-----------------------------------------|
| Start Time                         | Fri Dec 10 19:40:36 2021                |
| End Time                           | Fri Dec 10 19:41:24 2021                |
+-----  Event Stats  ----------------+-----------------------------------------+
| Double Bit ECC Errors              | 0                                       |
| Critical XID Errors                | 1                                       |
| XID (Hr:Min:Sec since start)       | 0:00:12                                 |
+-----  Overall Health  -------------+-----------------------------------------+
| Overall Health                     | Healthy                                 |
|      PCIE Health                   | Warning                                 |
+------------------------------------+-----------------------------------------+
"""
    lines = lines_frame(text)
    parsed = dcgm.parse(lines, ParseContext(file="n/stats.txt", reference_time=FIXED_MTIME))
    events = parsed.events.sort("line")
    sample = of_kind(events, "gpu_sample").row(0, named=True)
    assert (sample["gpu_index"], sample["severity"], _attrs(sample)["critical_xid_errors"]) == (3, "warning", 1)
    health = events.filter(pl.col("line") == 14).row(0, named=True)
    assert (health["kind"], health["severity"], health["gpu_index"], health["n_lines"]) == ("log", "warning", 3, 0)
    assert health["message"] == "PCIE Health: Warning"
    assert _accounted(parsed.events, parsed.skipped, lines.height)


def test_discovery_of_eight_gpus_and_an_empty_switch_box() -> None:
    events = _events("dcgm_discovery_l_326_a100_8gpu_nvswitch_01.txt")
    gpus = events.filter(pl.col("gpu_index").is_not_null())
    assert gpus["gpu_index"].to_list() == list(range(8))
    last = gpus.row(7, named=True)
    assert (last["line"], last["pci_bus"], last["gpu_uuid"]) == (33, "00000000:A0:1D.0", "GPU-59e925d1-5f83-fc83-c0e5-a80a31d2ddf3")


def test_a_docker_container_id_hostname_is_not_the_node() -> None:
    labels = 'gpu="0",UUID="GPU-ef6ef310-f8e2-cef9-036e-8f12d59b5ffc",pci_bus_id="00000000:02:00.0",device="nvidia0",modelName="NVIDIA RTX 6000 Ada Generation"'
    text = "\n".join([
        f'DCGM_FI_DEV_FB_USED{{{labels},Hostname="ed7e7a5e585f"}} 46614',
        f'DCGM_FI_DEV_FB_FREE{{{labels},Hostname="ed7e7a5e585f"}} 2048',
        f'DCGM_FI_DEV_FB_USED{{{labels},Hostname="gpu-node-12"}} 46614',
    ])
    events = rca.parse_text(text, file="scrape.txt").sort("line")
    assert events["host"].to_list() == [None, "gpu-node-12"]
    assert events["mem_total_bytes"].to_list()[0] == (46614 + 2048) * MIB


def test_diag_result_rows_pasted_without_the_header_are_still_a_diag() -> None:
    path = FOLDER / "dcgm_diag_r2_excerpt_thermal_warning_01.txt"
    assert dcgm.sniff(path.read_text().splitlines()) == 0.9
    events = _events(path.name).sort("line")
    assert events.select("line", "severity", "gpu_index").rows()[:3] == [(1, "info", None), (2, "error", 0), (3, "warning", 0)]
    assert _attrs(events.row(0, named=True))["gpus"] == "1, 2, 3, 4, 5, 6, 7"
    # the Warning's chunks joined mid-word; its last row lost its closing bar in the source and stays a line of its own
    assert events.row(2, named=True)["message"].startswith("GPU Memory: Warning: GPU 0 Thermal violations totaling 13.3 seconds started")
    assert (events.row(2, named=True)["n_lines"], events.row(3, named=True)["line"]) == (5, 8)


def test_a_markdown_table_of_test_results_is_not_a_diag() -> None:
    rows = ["| test | result |", "|------|--------|", "| test_a | Pass |", "| test_b | Fail |"]
    assert dcgm.sniff(rows) == 0.0


def test_diag_error_row_names_its_gpu() -> None:
    (error,) = _events("dcgm_diag_deployment_error_row_remap_pending_01.txt").to_dicts()
    assert (error["line"], error["n_lines"], error["severity"], error["gpu_index"]) == (5, 2, "error", 3)
    assert error["message"] == "Error: GPU 3 has uncorrectable memory errors and row remappings are pending"


# --- dcgmi dmon -----------------------------------------------------------------------------------


def test_dmon_rows_are_samples_of_their_gpu_with_the_tags_in_attrs() -> None:
    events = _events("dcgm_dmon_e_1001_1004_1005_userguide_01.txt").sort("line")
    samples = of_kind(events, "gpu_sample")
    assert samples["line"].to_list() == list(range(4, 19))
    assert set(samples["gpu_index"]) == {0} and (samples["ts"] == FIXED_MTIME).all()
    busy = _attrs(samples.row(3, named=True))
    assert busy == {"sample": 3, "GRACT": 0.552, "TENSO": 0.527, "DRAMA": 0.0}
    assert events.filter(pl.col("kind") == "log")["line"].to_list() == [1]


def test_dmon_memory_utilisation_mig_entities_and_an_xid() -> None:
    text = """\
#Entity   GPUTL  FBUSD  FBFRE  XIDER  SMACT
ID
GPU 0     34     15640  33022  0      0.512
GPU 1     0      0      48662  N/A    N/A
GPU 0     35     15700  32962  79     0.500
GPU-I 3   N/A    N/A    N/A    N/A    0.100
GPU 0     36     15700  32962  79     0.490
GPU 1     0
"""
    lines = lines_frame(text)
    assert dcgm.sniff(lines["text"].to_list()) == 0.95
    parsed = dcgm.parse(lines, ParseContext(file="n/dmon.txt", reference_time=FIXED_MTIME))
    rows = rca.parse_text(text, file="n/dmon.txt", reference_time=FIXED_MTIME).sort("line").to_dicts()
    assert [(r["line"], r["kind"], r["gpu_index"], r["xid"]) for r in rows] == [
        (3, "gpu_sample", 0, None), (4, "gpu_sample", 1, None), (5, "xid", 0, 79), (6, "gpu_sample", None, None),
        (7, "gpu_sample", 0, None), (8, "log", None, None)]
    assert (rows[0]["mem_used_bytes"], rows[0]["mem_total_bytes"], rows[0]["gpu_util_pct"]) == (15640 * MIB, (15640 + 33022) * MIB, 34.0)
    assert rows[2]["severity"] == "critical" and _attrs(rows[2])["xid_name"] == "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
    assert _attrs(rows[3]) == {"entity_group": "GPU-I", "entity_id": 3, "SMACT": 0.1}
    assert rows[1]["attrs"] is None  # N/A readings left out
    assert _accounted(parsed.events, parsed.skipped, lines.height)


def test_dmon_of_a_group_of_mig_instances_names_each_instance() -> None:
    events = _events("dcgm_dmon_e_1001_1004_gpu_i_entities_01.txt").sort("line")
    assert events["kind"].unique().to_list() == ["gpu_sample"] and events["gpu_index"].null_count() == events.height
    assert [_attrs(r)["entity_id"] for r in events.to_dicts()] == [21, 22, 29, 30, 31, 28, 35]
    assert _attrs(events.row(5, named=True)) == {"entity_group": "GPU-I", "entity_id": 28, "GRACT": 0.993, "SMACT": 0.987, "SMOCC": 0.123, "TENSO": 0.94}


def test_dmon_that_could_not_set_its_watches_is_an_error() -> None:
    # DCGM 2's header ("# Entity" over an indented "Id"), then dcgmi's failure line instead of rows.
    (row,) = _events("dcgm_dmon_e_1004_profiling_module_error_01.txt").to_dicts()
    assert (row["source"], row["kind"], row["severity"], row["line"], row["format"]) == ("dcgm", "log", "error", 3, "dmon")
    assert row["message"].startswith("Error setting watches. Result: The third-party Profiling module")


def test_a_scrape_kept_with_its_doc_indent_is_read_as_one() -> None:
    # A reST code block indents every sample; the whole GPU's series and the MIG instance's are two samples.
    name = "dcgm_exporter_scrape_a100_mig_rst_indented_01.txt"
    assert dcgm.sniff((FOLDER / name).read_text().splitlines()) == 0.95
    gpu, mig = _events(name).sort("line").to_dicts()
    assert (gpu["line"], gpu["n_lines"], gpu["host"], gpu["gpu_index"]) == (1, 17, "ub20-a100-k8s", 0)
    assert (gpu["mem_used_bytes"], gpu["mem_total_bytes"]) == (4845 * MIB, (4845 + 35690) * MIB)
    assert (mig["line"], mig["n_lines"], _attrs(mig)["mig_device"], _attrs(mig)["mig_profile"]) == (19, 4, 13, "1g.5gb")


def test_exporter_xid_errors_active_series_is_an_xid_event_of_its_label() -> None:
    # dcgm-exporter >= 3.3.5 (PR #239) exports the active Xid as an `xid` label with value 1, not as the sample value.
    (row,) = _events("dcgm_exporter_xid_errors_active_t400_inject_01.txt").to_dicts()
    assert {k: row[k] for k in ("kind", "severity", "host", "gpu_index", "gpu_uuid", "xid", "line", "ts", "ts_quality")} == {
        "kind": "xid", "severity": "error", "host": "workstation", "gpu_index": 0,
        "gpu_uuid": "GPU-b9f9e81b-bee7-34bc-af17-132ef6592740", "xid": 42, "line": 3, "ts": FIXED_MTIME, "ts_quality": "file_mtime"}
    assert json.loads(row["attrs"])["driver_version"] == "545.29.02"


def test_the_reserved_framebuffer_counts_in_the_gpus_total() -> None:
    (row,) = _events("dcgm_exporter_scrape_l40s_fb_reserved_595_01.txt").to_dicts()
    assert (row["kind"], row["host"], row["gpu_index"], row["pci_bus"]) == ("gpu_sample", "gpu1-wl8sg", 0, "00000000:00:07.0")
    # FB_FREE 45459 + FB_USED 0 + FB_RESERVED 608 MiB: nvidia-smi's 46068 MiB L40S, less its rounding.
    assert (row["mem_used_bytes"], row["mem_total_bytes"], row["n_lines"]) == (0, (45459 + 608) * MIB, 17)
    assert _attrs(row)["fb_reserved_bytes"] == 608 * MIB


def test_a_value_the_exporter_could_not_print_joins_its_gpus_sample() -> None:
    events = _events("dcgm_exporter_scrape_a800_mig_convert_error_535_01.txt")
    assert set(events["kind"]) == {"gpu_sample"}
    assert events.select("gpu_index", "n_lines").rows() == [(0, 2)] * 3 + [(gpu, 2) for gpu in range(1, 8)]
    first = events.row(0, named=True)
    assert (first["mem_used_bytes"], _attrs(first)["mig_device"], _attrs(first)["mig_profile"]) == (10 * MIB, 3, "2g.20gb")
    assert _attrs(first)["DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION"] is None


# --- dcgmi diag -j ---------------------------------------------------------------------------


def test_diag_json_452_gives_an_event_per_result_with_its_warning() -> None:
    """DCGM 4.5.2 on a GB10 (``dcgmi diag -r 2 -j``): a Fail with an error id, two Passes with their info lines."""
    events = _events("dcgm_diag_j_452_gb10_level2_fail_pass_01.json")
    assert set(events["source"]) == {"dcgm"} and set(events["format"]) == {"diag_json"}
    assert events.select("kind", "severity", "gpu_index").rows() == [
        ("log", "error", 0), ("log", "info", 0), ("log", "info", 0), ("log", "info", 0)]
    failed, summary, memory, pcie = events.to_dicts()
    assert failed["message"] == ('software: GPU 0: Fail: Persistence Mode: Persistence mode for GPU 0 is disabled. '
                                 'Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.')
    assert _attrs(failed) == {"test": "software", "section": "Deployment", "result": "Fail", "error_id": 29, "device_id": "2e12",
                              "dcgm_version": "4.5.2", "driver_version": "580.82.09"}
    # the summary repeats the result's warning: only its own info line is an event
    assert summary["message"].startswith("software: Error getting the SRAM Threshold Count for GPU 0.")
    assert _attrs(summary)["detail"] == "summary"
    assert memory["message"] == "memory: GPU 0: Pass: Allocated 112427837082 bytes (87.5%)"
    assert "Host to GPU bandwidth: 58.88 GB/s; bidirectional bandwidth: 58.69 GB/s" in pcie["message"]
    assert (failed["ts"], failed["ts_quality"], failed["line"], failed["n_lines"]) == (FIXED_MTIME, "file_mtime", 1, 129)
    assert events["n_lines"].sum() == 129


def test_diag_json_is_read_whole_by_ingest(tmp_path: Path) -> None:
    manifest, events = _parse_file(FOLDER / "dcgm_diag_j_423_gb10_level1_persistence_01.json", tmp_path)
    assert (manifest["source"], manifest["format"], manifest["lines"], manifest["events"]) == ("dcgm", "diag_json", 1, 2)
    assert events.select("severity", "gpu_index").rows() == [("error", 0), ("info", 0)]
    assert _attrs(events.row(0, named=True))["dcgm_version"] == "4.2.3"


def test_diag_json_3x_layout_reads_gpu_ids_string_warnings_and_xids() -> None:
    """The DCGM 2.x/3.x layout (nvvs JsonOutput): ``gpu_ids`` strings, a CSV for software tests, warnings as text or objects."""
    document = {"DCGM GPU Diagnostic": {"test_categories": [
        {"category": "Deployment", "tests": [{"name": "Denylist", "results": [{"gpu_ids": "0,1", "status": "PASS"}]}]},
        {"category": "Hardware", "tests": [{"name": "GPU Memory", "results": [
            None,
            {"gpu_ids": "1", "status": "FAIL", "warnings": [{"warning": "GPU 1: Detected XID 48 error", "error_id": 43}], "info": "Allocated 1 bytes"},
            {"gpu_ids": "2", "status": "WARN", "warnings": ["Thermal violations"]},
            {"gpu_ids": "3", "status": "SKIPPED"},
        ]}]},
    ], "version": "3.3.1"}}
    events = rca.parse_text(json.dumps(document, indent=4), file="diag.json", reference_time=FIXED_MTIME)
    assert events.select("kind", "severity", "gpu_index", "xid").rows() == [
        ("log", "info", None, None), ("xid", "error", 1, 48), ("log", "warning", 2, None), ("log", "info", 3, None)]
    assert events["message"].to_list()[:2] == ["Denylist: GPUs 0,1: Pass", "GPU Memory: GPU 1: Fail: GPU 1: Detected XID 48 error; Allocated 1 bytes"]
    assert {k: _attrs(events.row(0, named=True)).get(k) for k in ("gpus", "dcgm_version")} == {"gpus": "0,1", "dcgm_version": "3.3.1"}
    assert _attrs(events.row(1, named=True))["error_id"] == 43


def test_diag_json_that_is_not_a_report_is_a_format_error() -> None:
    ctx = ParseContext(file="diag.json", reference_time=FIXED_MTIME)
    with pytest.raises(rca.errors.FileFormatError):
        dcgm.parse_bytes(b'{"DCGM Diagnostic": [1, 2', ctx)


def test_diag_json_after_dcgmis_banner_keeps_the_banner_as_a_log_line() -> None:
    text = "Successfully ran diagnostic for group.\n" + (FOLDER / "dcgm_diag_j_423_gb10_level1_persistence_01.json").read_text()
    events = rca.parse_text(text, file="diag.txt", reference_time=FIXED_MTIME)
    assert events.select("source", "line", "n_lines", "severity").rows() == [
        ("dcgm", 1, 1, None), ("dcgm", 2, 53, "error"), ("dcgm", 2, 0, "info")]
    assert events["message"][0] == "Successfully ran diagnostic for group."


def test_diag_json_runtime_error_is_an_error_event() -> None:
    document = {"DCGM Diagnostic": {"runtime_error": "Unable to run diagnostic on unsupported GPU 0."}, "metadata": {"version": "4.2.3"}}
    events = rca.parse_text(json.dumps(document), file="diag.json", reference_time=FIXED_MTIME)
    assert events.select("kind", "severity", "message").rows() == [
        ("log", "error", "DCGM diagnostic runtime error: Unable to run diagnostic on unsupported GPU 0.")]
    assert _attrs(events.row(0, named=True)) == {"dcgm_version": "4.2.3"}


def test_diag_json_310_after_a_warning_reads_csv_and_integer_gpu_ids() -> None:
    """DCGM 3.1.0's JsonCpp document (NVIDIA's nvvs unit-test copy of a real run): a warning line before it, ``null`` between
    tests, software tests under one ``gpu_ids`` CSV, the Custom software test with integer ``gpu_ids`` per GPU."""
    events = _events("dcgm_diag_j_310_8gpu_pass_warning_preamble_01.json")
    assert events.select("line", "n_lines", "severity").row(0) == (1, 1, None)
    results = events.filter(pl.col("line") == 2)
    assert results.height == 17 and results["n_lines"].sum() == 157 and set(results["severity"]) == {"info"}
    denylist = results.row(0, named=True)
    assert (denylist["message"], denylist["gpu_index"]) == ("Denylist: GPUs 0,1,2,3,4,5,6,7: Pass", None)
    assert {k: _attrs(denylist)[k] for k in ("gpus", "section", "dcgm_version")} == {"gpus": "0,1,2,3,4,5,6,7", "section": "Deployment", "dcgm_version": "3.1.0"}
    assert results.filter(pl.col("message").str.starts_with("software"))["gpu_index"].to_list() == list(range(8))


def test_gb200_scrape_with_bus_id_labels_and_no_help_lines() -> None:
    # A sampled scrape of a GB200 node (dcgm-exporter on driver 580.126.20): metric lines only, the 3.3+ pci_bus_id label.
    events = _events("dcgm_exporter_scrape_gb200_pci_bus_id_580_01.txt")
    assert events["kind"].unique().to_list() == ["gpu_sample"]
    assert events.select("line", "n_lines", "gpu_index", "pci_bus").rows() == [
        (1, 6, 0, "00000000:29:00.0"), (2, 6, 1, "00000000:3F:00.0"), (3, 6, 2, "00000000:9C:00.0"), (4, 6, 3, "00000000:B2:00.0")]
    assert events["host"].unique().to_list() == ["ip-100-64-135-20.ec2.internal"]
    assert events["gpu_uuid"][0] == "GPU-c4873a68-bfd2-8a3e-7776-061ea4b074bc"
    # FB_USED 0 MiB of FB_FREE 188729 MiB (no FB_RESERVED scraped): the total is their sum.
    assert events["mem_used_bytes"].to_list() == [0] * 4
    assert events["mem_total_bytes"].to_list() == [188729 * 2**20] * 4
    first = json.loads(events["attrs"][0])
    assert (first["model_name"], first["driver_version"], first["temp_c"], first["power_w"]) == ("NVIDIA GB200", "580.126.20", 27, 165.926)


def test_nvlink_link_status_names_each_gpu_and_flags_links_down() -> None:
    # "dcgmi nvlink --link-status" on DCGM 3.3.7 with every NVLink of both GPUs down (NVIDIA/DCGM issue #198).
    name = "dcgm_nvlink_link_status_all_down_337_01.txt"
    assert sources.sniff((FOLDER / name).read_text().splitlines())[0].name == "dcgm"
    events = _events(name)
    devices = events.filter(pl.col("gpu_index").is_not_null())
    assert devices.select("line", "n_lines", "gpu_index", "severity", "format").rows() == [
        (5, 2, 0, "warning", "nvlink_status"), (7, 2, 1, "warning", "nvlink_status")]
    attrs = _attrs(devices.row(0, named=True))
    assert (attrs["links_down"], attrs["links_up"], attrs["link_states"]) == (18, 0, "D" * 18)
    assert events.filter(pl.col("gpu_index").is_null())["message"].to_list() == ["    No NvSwitches found."]
    assert events["ts_quality"].unique().to_list() == ["file_mtime"]


def test_nvlink_link_status_counts_switch_links_and_leaves_unsupported_slots_alone() -> None:
    # The layout dcgmi's Nvlink::DisplayNvLinkLinkStatus prints; an A100's 12 links up, the 6 slots it lacks "_".
    text = (
        "+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n"
        "    gpuId 0:\n        U U U U U U U U U U U U _ _ _ _ _ _\n"
        "NvSwitches:\n    physicalId 8:\n        U U X D\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n"
    )
    gpu, switch = rca.parse_text(text, file="nvlink.txt").to_dicts()
    assert (gpu["gpu_index"], gpu["severity"], _attrs(gpu)["links_up"], _attrs(gpu)["links_down"]) == (0, "info", 12, 0)
    assert switch["gpu_index"] is None and switch["severity"] == "warning"
    assert {k: _attrs(switch)[k] for k in ("entity_group", "entity_id", "links_disabled", "links_down")} == {
        "entity_group": "NvSwitch", "entity_id": 8, "links_disabled": 1, "links_down": 1}


def test_clock_event_counts_are_one_sample_named_by_their_event() -> None:
    # DCGM_EXP_CLOCK_EVENTS_COUNT (dcgm-exporter PR #261's output): one series per clock_event label in one scrape,
    # not three scrapes; a hardware thermal slowdown counted in the window is a warning.
    (sample,) = _events("dcgm_exporter_clock_events_count_t400_545_01.txt").to_dicts()
    assert (sample["kind"], sample["line"], sample["n_lines"], sample["gpu_index"], sample["host"]) == ("gpu_sample", 2, 3, 0, "home")
    assert sample["severity"] == "warning"
    attrs = _attrs(sample)
    assert "scrape" not in attrs
    assert {k: attrs[k] for k in ("clock_events_gpu_idle", "clock_events_sw_thermal", "clock_events_hw_thermal")} == {
        "clock_events_gpu_idle": 2, "clock_events_sw_thermal": 1, "clock_events_hw_thermal": 1}


def test_software_clock_events_alone_leave_the_sample_info() -> None:
    labels = 'gpu="1",UUID="GPU-0",Hostname="n1",window_size_in_ms="300000"'
    text = "".join(f'DCGM_EXP_CLOCK_EVENTS_COUNT{{{labels},clock_event="{event}"}} {count}\n'
                   for event, count in (("sw_power_cap", 4), ("hw_slowdown", 0)))
    (sample,) = rca.parse_text(text, file="scrape.txt", reference_time=FIXED_MTIME).to_dicts()
    assert sample["severity"] == "info" and _attrs(sample)["clock_events_sw_power_cap"] == 4


def test_old_throttle_reason_counts_read_as_clock_events() -> None:
    # DCGM_FI_EXP_CLOCK_THROTTLE_REASONS_COUNT, the name (and throttle_reason label) before 3.3.5 (dcgm-exporter PR #254).
    (sample,) = _events("dcgm_exporter_clock_throttle_reasons_count_t400_545_01.txt").to_dicts()
    assert (sample["line"], sample["n_lines"], sample["severity"]) == (1, 2, "warning")
    assert {k: v for k, v in _attrs(sample).items() if k.startswith("clock_events_")} == {
        "clock_events_sw_thermal": 1, "clock_events_hw_thermal": 1}


def test_clock_reason_bitmask_with_a_hardware_slowdown_bit_is_a_warning() -> None:
    # DCGM_FI_DEV_CLOCK_THROTTLE_REASONS / _CLOCKS_EVENT_REASONS hold nvml's bitmask: 0x1 idle, 0x4 power cap,
    # 0x48 hardware slowdown + thermal.
    text = "".join(f'{metric}{{gpu="{gpu}",UUID="GPU-{gpu}",Hostname="n1"}} {mask}\n' for metric, gpu, mask in (
        ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 0, 1), ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 1, 72), ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", 2, 4)))
    events = rca.parse_text(text, file="scrape.txt", reference_time=FIXED_MTIME)
    assert events.select("gpu_index", "severity").rows() == [(0, "info"), (1, "warning"), (2, "info")]


# --- dcgmi health -c -j ------------------------------------------------------------------------


def test_health_json_healthy_report_is_one_overall_event() -> None:
    """``dcgmi health -c -j`` on the node of NVIDIA/DCGM issue 263 (a GPU awaiting a reset DCGM does not see): Healthy."""
    events = _events("dcgm_health_c_j_healthy_gpu_in_reset_01.json")
    assert events.select("source", "format", "line", "n_lines", "kind", "severity", "message").rows() == [
        ("dcgm", "health_json", 1, 13, "log", "info", "Overall Health: Healthy")]
    assert _attrs(events.row(0, named=True)) == {"overall_health": "Healthy"}
    assert events["ts"].to_list() == [FIXED_MTIME]


def test_health_json_incidents_are_events_of_their_entity(tmp_path: Path) -> None:
    """The tree dcgmi's JSON writer makes of the table (dcgmi/Health.cpp, DcgmiOutput.cpp): per entity group and id an
    ``Errors`` branch of systems, each with its result and its text word-wrapped into ``overflow`` chunks."""
    document = {"body": {
        "GPU": {"children": {
            "0": {"value": "Warning", "children": {"Errors": {"children": {"PCIe system": {"value": "Warning", "overflow": [
                "Detected more than 8 PCIe replays per minute for GPU 0 :", "13 Reconnect PCIe card."]}}}}},
            "1": {"value": "Failure", "children": {"Errors": {"children": {
                "Memory system": {"value": "Failure", "overflow": ["Detected a critical Xid 48 error on GPU 1"]}}}}}}},
        "Switch": {"children": {"8": {"value": "Warning", "children": {"Errors": {"children": {
            "NVLINK system": {"value": "Warning", "overflow": ["link down"]}}}}}}},
        "Overall Health": {"value": "Failure"}},
        "header": ["Health Monitor Report"]}
    path = tmp_path / "health.json"
    path.write_text(json.dumps(document, indent=8))
    manifest, events = _parse_file(path, tmp_path)
    assert (manifest["source"], manifest["format"], manifest["lines"]) == ("dcgm", "health_json", 1)
    assert events.select("kind", "severity", "gpu_index", "xid").rows() == [
        ("log", "warning", 0, None), ("xid", "error", 1, 48), ("log", "warning", None, None), ("log", "error", None, None)]
    assert events["message"].to_list() == [
        "GPU 0: PCIe system: Warning: Detected more than 8 PCIe replays per minute for GPU 0 : 13 Reconnect PCIe card.",
        "GPU 1: Memory system: Failure: Detected a critical Xid 48 error on GPU 1",
        "Switch 8: NVLINK system: Warning: link down", "Overall Health: Failure"]
    assert {k: _attrs(events.row(2, named=True))[k] for k in ("system", "entity_group", "entity_id")} == {
        "system": "NVLINK system", "entity_group": "Switch", "entity_id": 8}


def test_the_1x_exporter_s_metric_names_read_as_dcgm_fields() -> None:
    """gpu-monitoring-tools' dcgm-exporter script (node-exporter's textfile) named the fields ``dcgm_gpu_temp``,
    ``dcgm_gpu_utilization``, …: one sample of its GPU, as the current names give."""
    events = _events("dcgm_exporter_1x_names_node_exporter_textfile_01.txt")
    assert events["kind"].to_list() == ["gpu_sample"]
    row = events.row(0, named=True)
    assert (row["line"], row["n_lines"], row["gpu_index"], row["gpu_uuid"], row["gpu_util_pct"]) == (
        3, 6, 0, "GPU-8f640a3c-7e9a-608d-02a3-f4372d72b323", 0.0)
    attrs = _attrs(row)
    assert (attrs["temp_c"], attrs["power_w"], attrs["sm_clock_mhz"], attrs["last_xid"]) == (34, 31.737, 135, 0)
    assert attrs["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] == pytest.approx(7.824041e06)


def test_the_1x_exporter_s_pod_labels_and_memory_names_are_read() -> None:
    podded = _events("dcgm_exporter_1x_names_pod_gpu_metrics_exporter_01.txt")
    assert podded.select("gpu_index", "pod", "namespace", "container").rows() == [(0, "pod1", "default", "pod1-ctr"), (1, "pod1", "default", "pod1-ctr")]
    assert [_attrs(row)["mem_clock_mhz"] for row in podded.iter_rows(named=True)] == [810, 810]
    text = 'dcgm_fb_used{gpu="0",uuid="GPU-a"} 1024\ndcgm_fb_free{gpu="0",uuid="GPU-a"} 3072\ndcgm_xid_errors{gpu="0",uuid="GPU-a"} 79\n'
    events = rca.parse_text(text, file="h/dcgm.prom", reference_time=FIXED_MTIME)
    sample, xid = of_kind(events, "gpu_sample").row(0, named=True), of_kind(events, "xid").row(0, named=True)
    assert (sample["mem_used_bytes"], sample["mem_total_bytes"], xid["xid"], xid["gpu_uuid"]) == (1024 * MIB, 4096 * MIB, 79, "GPU-a")


def test_a_folder_of_scrapes_and_a_diag_table_reads_in_one_parse_each_file_at_its_own_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A scrape saved every minute is a small file each: they are parsed together, a dcgmi table among them alone.
    folder = tmp_path / "logs" / "gpu-node-07" / "dcgm"
    folder.mkdir(parents=True)
    scrape = (FOLDER / "dcgm_exporter_scrape_h100_2gpu.txt").read_text()
    saved = [datetime(2026, 12, 1, 3, minute, tzinfo=UTC) for minute in (1, 2, 3)]
    for when in saved:
        path = folder / f"metrics-{when:%H%M}.txt"
        path.write_text(scrape.replace("} 75890", "} " + str(75890 + when.minute)))
        os.utime(path, (when.timestamp(), when.timestamp()))
    (folder / "metrics-diag.txt").write_text((FOLDER / "dcgm_diag_r2_331_gpu_memory_fail.txt").read_text())
    scrape_parses: list[int] = []
    parse_scrapes = dcgm._parse_scrapes
    monkeypatch.setattr(dcgm, "_parse_scrapes", lambda lines, ctx: scrape_parses.append(lines["batch_file"].n_unique()) or parse_scrapes(lines, ctx))
    rca.ingest(tmp_path / "logs", tmp_path / "together", workers=1)
    assert scrape_parses == [3]
    together = rca.open_store(tmp_path / "together")
    busy = together.events().filter(pl.col("pod") == "vllm-llama3-70b-0").sort("ts")
    assert busy.select("ts", "ts_quality", "mem_used_bytes").rows() == [
        (when, "file_mtime", (75890 + when.minute) * MIB) for when in saved
    ]
    files = together.manifest().sort("path")
    assert [(row["skipped_lines"], json.loads(row["skipped_reasons"])) for row in files.head(3).iter_rows(named=True)] == [(44, {"comment": 44})] * 3
    monkeypatch.undo()
    monkeypatch.setattr(_small_files, "SMALL_FILE_BYTES", -1)  # each file alone
    rca.ingest(tmp_path / "logs", tmp_path / "alone", workers=1)
    alone = rca.open_store(tmp_path / "alone")
    assert_frame_equal(together.events().sort("event_id"), alone.events().sort("event_id"))
    per_run = ("run_id", "parts")
    assert_frame_equal(files.drop(*per_run), alone.manifest().sort("path").drop(*per_run))
