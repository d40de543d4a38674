"""The pipeline source: training jobs, inference servers, CI runners and the catch-all.

Real samples (copied verbatim from /work/shared/real_logs) are checked against the facts
SOURCES.md states for them; hand-written fixtures cover JSON-lines, python-logging, CI raw
logs, Java and Go out-of-memory dumps, shm errors and rank-interleaved tracebacks.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rca import schema, sources
from rca.ingest import parse_lines
from rca.sources import _pipeline_rules as rules
from rca.sources import pipeline
from rca.sources._base import ParseContext
from tests.conftest import DATA, head_lines, sniffed

HERE = DATA / "pipeline"
FIXTURES = sorted(p for p in HERE.iterdir() if p.is_file())
REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def mib(value: float) -> int:
    return round(value * 1024**2)


def gib(value: float) -> int:
    return round(value * 1024**3)


def _text(name: str) -> str:
    # Bytes, not read_text: universal newlines would split GitLab's "\r" section markers into lines.
    return (HERE / name).read_bytes().decode("utf-8", errors="replace")


def _parse(text: str, *, year: int | None = 2025, tz: str = "UTC") -> tuple[pl.DataFrame, dict[str, int], int]:
    lines = sources.lines_frame(text)
    ctx = ParseContext(file="t.log", tz=tz, year=year, reference_time=REFERENCE)
    events, skipped = parse_lines(lines, ctx, pipeline.SOURCE)
    return events, skipped, lines.height


def events_of(name: str, **kwargs: object) -> pl.DataFrame:
    return _parse(_text(name), **kwargs)[0]


def attrs_of(events: pl.DataFrame) -> list[dict]:
    return [json.loads(a) if a else {} for a in events["attrs"].to_list()]


def one(events: pl.DataFrame, kind: str) -> dict:
    rows = events.filter(pl.col("kind") == kind)
    assert rows.height == 1, rows.select("line", "kind", "message").to_dicts()
    row = rows.row(0, named=True)
    row["attrs"] = json.loads(row["attrs"]) if row["attrs"] else {}
    return row


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


# --- PyTorch CUDA OOM, every message generation ---------------------------------------------

CUDA_OOM_FACTS = {
    "pytorch_cuda_oom_capacty_01.log": dict(
        gpu_index=3, requested=mib(448.00), total=gib(15.77),
        attrs={"free_bytes": mib(289.38), "process_in_use_bytes": gib(15.49), "allocated_bytes": gib(14.66),
               "reserved_unallocated_bytes": mib(483.75), "exc_type": "torch.cuda.OutOfMemoryError"},
    ),
    "pytorch_cuda_oom_new_01.log": dict(
        gpu_index=0, requested=gib(22.78), total=gib(31.47),
        attrs={"free_bytes": gib(12.73), "process_in_use_bytes": gib(18.73), "allocated_bytes": gib(9.08),
               "reserved_unallocated_bytes": gib(9.35), "exc_type": "torch.OutOfMemoryError"},
    ),
    "pytorch_cuda_oom_new_03_process.log": dict(
        gpu_index=0, requested=gib(1.58), total=gib(93.00),
        attrs={"free_bytes": gib(1.08), "in_use_pid": 1324862, "process_in_use_bytes": gib(91.91),
               "allocated_bytes": gib(86.10), "reserved_unallocated_bytes": gib(5.15)},
    ),
    "pytorch_cuda_oom_old_02_hint.log": dict(
        gpu_index=0, requested=mib(74.00), total=gib(11.91),
        attrs={"allocated_bytes": gib(10.79), "free_bytes": mib(12.94), "reserved_total_bytes": gib(11.21),
               "exc_type": "RuntimeError"},
    ),
    "pytorch_cuda_oom_old_04_torch2_class.log": dict(
        gpu_index=0, requested=gib(10.73), total=gib(8.00),
        attrs={"allocated_bytes": gib(17.20), "free_bytes": 0, "reserved_total_bytes": gib(19.15),
               "exc_type": "torch.cuda.OutOfMemoryError"},
    ),
}


@pytest.mark.parametrize("name", sorted(CUDA_OOM_FACTS))
def test_cuda_oom_facts(name: str) -> None:
    facts = CUDA_OOM_FACTS[name]
    oom = one(events_of(name), "cuda_oom")
    got = (oom["gpu_index"], oom["mem_requested_bytes"], oom["mem_total_bytes"])
    assert got == (facts["gpu_index"], facts["requested"], facts["total"])
    assert {key: oom["attrs"].get(key) for key in facts["attrs"]} == facts["attrs"]
    assert oom["severity"] == "error" and oom["line"] == 1


def test_cuda_oom_expected_values_from_the_shared_table() -> None:
    oom = one(events_of("pytorch_cuda_oom_capacty_01.log"), "cuda_oom")
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (469762048, 16932908564)


def test_chained_separator_after_an_oom_line_is_one_event() -> None:
    events = events_of("pytorch_cuda_oom_new_01.log")
    assert events["kind"].to_list() == ["cuda_oom"]
    assert events["n_lines"].to_list() == [2]
    assert events["message"][0].endswith("During handling of the above exception, another exception occurred:")


def test_oom_line_before_its_own_traceback_is_not_swallowed() -> None:
    events = events_of("pytorch_cuda_oom_capacty_01.log")
    assert events["kind"].to_list() == ["cuda_oom", "log", "traceback"]  # the warning and its source line are one event
    truncated = one(events, "traceback")
    assert truncated["line"] == 4 and truncated["n_lines"] == 7
    assert truncated["attrs"]["last_frame"] == "/usr/local/lib/python3.10/dist-packages/fire/core.py:475 in _Fire"
    assert "exc_type" not in truncated["attrs"]


# --- DataLoader, NCCL, shm -------------------------------------------------------------------

def test_dataloader_killed_chained_traceback_is_one_event() -> None:
    events = events_of("pytorch_dataloader_killed_01.log")
    assert events.height == 1
    event = one(events, "dataloader_killed")
    assert (event["pid"], event["line"], event["n_lines"]) == (1817, 1, 18)
    assert event["attrs"]["signal"] == "SIGKILL" and event["attrs"]["memory_class"] is True
    assert event["attrs"]["exc_type"] == "RuntimeError"
    assert event["attrs"]["last_frame"].endswith("torch/utils/data/_utils/signal_handling.py:66 in handler")
    assert "The above exception was the direct cause" in event["message"]


def test_dataloader_segfault_is_not_memory_class() -> None:
    event = one(events_of("pytorch_dataloader_killed_03_segv.log"), "dataloader_killed")
    assert event["pid"] == 25902
    assert event["attrs"]["signal"] == "SIGSEGV" and event["attrs"]["signal_text"] == "Segmentation fault"
    assert event["attrs"]["memory_class"] is False


def test_nccl_watchdog_new_format() -> None:
    events = events_of("nccl_timeout_01.log")
    timeouts = events.filter(pl.col("kind") == "nccl_timeout")
    got = {a["rank"]: a for a in attrs_of(timeouts)}
    assert sorted(got) == [0, 1, 2]
    assert {r: a["ran_for_ms"] for r, a in got.items()} == {1: 600020, 0: 600030, 2: 600061}
    assert all((a["seq"], a["op"], a["numel_in"], a["numel_out"], a["timeout_ms"]) == (808, "ALLREDUCE", 9801523, 9801523, 600000)
               for a in got.values())
    assert timeouts["severity"].to_list() == ["error"] * 3
    assert timeouts["format"].unique().to_list() == ["torch_c10d"]
    summaries = attrs_of(events.filter(pl.col("kind") == "log"))
    assert [(s["rank"], s["failed_seq"], s["last_enqueued_seq"], s["last_completed_seq"], s["pg_name"]) for s in summaries] == [
        (1, 808, 811, 807, "default_pg"), (0, 808, 811, 807, "default_pg")]
    # klog-style stamps carry no year; they are kept in file order even when not monotonic.
    assert timeouts["ts"].to_list() == [
        utc(2025, 6, 26, 6, 24, 44, 903881), utc(2025, 6, 26, 6, 24, 44, 159932), utc(2025, 6, 26, 6, 24, 44, 173078)]
    assert timeouts["ts_raw"][0] == "626 06:24:44.903881913"
    assert timeouts["ts_quality"].unique().to_list() == ["year_inferred"]


def test_nccl_watchdog_old_format_has_no_time() -> None:
    events = events_of("nccl_timeout_03_old.log")
    assert events["kind"].to_list() == ["nccl_timeout"] * 5
    got = attrs_of(events)
    assert [a["rank"] for a in got] == [1, 3, 2, 6, 7]
    assert [a["ran_for_ms"] for a in got] == [1802212, 1802211, 1802212, 1802210, 1802220]
    assert {(a["seq"], a["op"], a["timeout_ms"]) for a in got} == {(469508, "ALLREDUCE", 1800000)}
    assert all("numel_in" not in a for a in got)
    assert events["ts"].null_count() == 5 and events["ts_quality"].unique().to_list() == ["missing"]


def test_nccl_desync_keeps_each_ranks_op() -> None:
    events = events_of("nccl_timeout_05_desync.log")
    got = {a["rank"]: a for a in attrs_of(events.filter(pl.col("kind") == "nccl_timeout"))}
    assert (got[7]["op"], got[7]["numel_in"], got[7]["ran_for_ms"], got[7]["seq"]) == ("BROADCAST", 5056, 600026, 80078)
    assert (got[3]["op"], got[3]["numel_in"], got[3]["ran_for_ms"], got[3]["seq"]) == ("ALLREDUCE", 2106881, 600013, 80078)
    summary = one(events, "log")["attrs"]
    assert (summary["rank"], summary["last_enqueued_seq"], summary["last_completed_seq"], summary["pg_id"]) == (7, 80078, 80077, 0)


def test_shm_errors_and_bus_error_worker() -> None:
    events = events_of("dataloader_shm_errors.log")
    assert events["kind"].to_list() == ["shm_error", "dataloader_killed", "shm_error"]
    worker = one(events, "dataloader_killed")
    assert worker["pid"] == 30544 and worker["attrs"]["signal"] == "SIGBUS" and worker["attrs"]["memory_class"] is False
    write_failure = events.filter(pl.col("kind") == "shm_error").row(1, named=True)
    assert json.loads(write_failure["attrs"])["shm_path"] == "/torch_18692_1954506"
    assert write_failure["n_lines"] == 6
    assert events["attrs"][0] is None


# --- vLLM, transformers ------------------------------------------------------------------------

def test_vllm_kv_cache_lines() -> None:
    events = events_of("vllm_kv_cache_insufficient_01.log")
    assert events["kind"].to_list() == ["log"] * 5
    assert events["ts"].null_count() == 5
    merged: dict = {}
    for a in attrs_of(events):
        merged.update(a)
    assert merged == {
        "model_memory_bytes": round(14.9888 * 1024**3), "kv_cache_bytes": gib(2.89), "total_gpu_memory_bytes": gib(23.58),
        "gpu_memory_utilization": 0.9, "gpu_blocks": 1478, "cpu_blocks": 2048, "tokens_per_request": 29000,
        "max_concurrency": 0.82, "max_seq_len": 29000, "kv_cache_tokens": 23648, "vllm_error": "kv_cache_insufficient",
    }
    assert events["severity"][4] == "error"


def test_vllm_v1_engine_core_lines() -> None:
    events = events_of("vllm_no_cache_blocks_02_v1.log")
    assert events["pid"].unique().to_list() == [5839] and events["process"].unique().to_list() == ["EngineCore_0"]
    assert events["severity"].value_counts().sort("severity").rows() == [("error", 2), ("info", 6), ("warning", 1)]
    kv = events.filter(pl.col("message").str.contains("Available KV cache memory"))
    assert json.loads(kv["attrs"][0]) == {"kv_cache_available_bytes": -round(2.14 * 1024**3)}
    assert kv["ts"][0] == utc(2025, 8, 20, 18, 4, 22) and kv["ts_raw"][0] == "08-20 18:04:22"
    assert json.loads(events["attrs"][7]) == {"vllm_error": "engine_start_failed"}
    assert events["kind"].to_list() == ["log"] * 8 + ["traceback"]


def test_vllm_engine_metrics_line() -> None:
    line = (
        "INFO 11-23 12:41:38 metrics.py:351] Avg prompt throughput: 1815.9 tokens/s, Avg generation throughput: 272.1 tokens/s,"
        " Running: 9 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 25.7%, CPU KV cache usage: 0.0%."
    )
    row = _parse(line)[0].row(0, named=True)
    assert json.loads(row["attrs"]) == {"gpu_kv_cache_usage_pct": 25.7, "running_requests": 9, "waiting_requests": 3}


def test_vllm_year_comes_from_mtime_when_the_file_has_none() -> None:
    events = events_of("vllm_no_cache_blocks_02_v1.log", year=None)
    assert events["ts"][0] == utc(2026, 8, 20, 18, 4, 8)
    assert events["ts_quality"].unique().to_list() == ["year_from_mtime"]


def test_buildkite_agent_clock_wins_over_the_vllm_clock() -> None:
    events = events_of("ci_buildkite_vllm_no_cache_blocks_01.log")
    assert events["kind"].to_list() == ["log", "log", "traceback"]
    tb = one(events, "traceback")
    assert (tb["line"], tb["n_lines"], tb["ts"], tb["ts_quality"]) == (3, 6, utc(2025, 3, 10, 15, 7, 20), "exact")
    assert tb["message"].startswith("EngineCore hit an exception: Traceback (most recent call last):\n  File ")
    assert tb["attrs"]["last_frame"] == "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py:249 in __init__"
    assert json.loads(events["attrs"][0]) == {"model_memory_bytes": round(0.2389 * 1024**3)}
    assert events["message"][1] == "--" and events["ts"][1] is None


def test_transformers_trainer_header() -> None:
    events = events_of("hf_trainer_log_01.log")
    assert events.height == 8 and events["kind"].unique().to_list() == ["log"]
    assert events["ts"][0] == utc(2025, 3, 6, 12, 4, 9, 913000)
    assert events["format"].unique().to_list() == ["hf_transformers"] and events["severity"].unique().to_list() == ["info"]
    merged: dict = {}
    for a in attrs_of(events):
        merged.update(a)
    assert merged == {"phase": "training", "num_examples": 5498, "num_epochs": 1, "per_device_batch_size": 8,
                      "total_train_batch_size": 224, "gradient_accumulation_steps": 4, "total_optimization_steps": 196,
                      "trainable_parameters": 7615616512}
    assert "loss" not in merged


def test_trainer_loss_and_eval_dicts() -> None:
    events = events_of("hf_trainer_log_03_eval.log")
    got = attrs_of(events)
    losses = [a["loss"] for a in got if "loss" in a]
    assert len(losses) == 10 and (min(losses), max(losses)) == (1.5126, 1.6531)
    assert (got[0]["epoch"], got[9]["epoch"]) == (0.38, 0.44)
    assert {k: got[10][k] for k in ("eval_loss", "eval_spearman_cosine", "eval_runtime", "eval_samples_per_second", "epoch")} == {
        "eval_loss": 1.2490781545639038, "eval_spearman_cosine": 0.8698181457609595, "eval_runtime": 49.1914,
        "eval_samples_per_second": 119.431, "epoch": 0.44}


# --- CI ---------------------------------------------------------------------------------------

def test_github_actions_pytest_kill() -> None:
    events = events_of("ci_github_actions_exit137_02_pytest.log")
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "pid", "process", "exit_code").rows() == [(12, 2930, "pytest", None), (14, None, None, 137)]
    assert [a["signal"] for a in attrs_of(killed)] == ["SIGKILL", "SIGKILL"]
    assert json.loads(killed["attrs"][0])["command"] == "pytest --cov=. --cov-report=xml"


def test_github_actions_runner_shutdown() -> None:
    events = events_of("ci_github_actions_exit137_05_shutdown.log")
    assert events.select("kind", "exit_code").rows() == [("log", None), ("process_killed", 137), ("log", None)]
    assert [a.get("ci_event") for a in attrs_of(events)] == ["runner_shutdown", None, "canceled"]


def test_gitlab_kubernetes_executor_oomkilled() -> None:
    event = one(events_of("ci_gitlab_k8s_executor_oomkilled_01.log"), "process_killed")
    assert (event["exit_code"], event["container"], event["severity"]) == (137, "build", "error")
    assert event["attrs"] == {"signal": "SIGKILL", "reason": "OOMKilled", "failure_class": "system failure"}


def test_github_actions_raw_log_with_runner_timestamps() -> None:
    events = events_of("ci_github_actions_raw_exit137.log")
    assert events["ts"][0] == utc(2025, 3, 10, 15, 1, 2, 441021) and events["ts_raw"][0] == "2025-03-10T15:01:02.4410213Z"
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("pid", "process", "exit_code", "severity").rows() == [(2214, "python", None, "error"), (None, None, 137, "error")]
    assert killed["message"][1] == "##[error]Process completed with exit code 137."


def test_gitlab_job_log_with_control_codes() -> None:
    events, skipped, total = _parse(_text("ci_gitlab_job_killed_137.log"))
    assert skipped == {"terminal control codes": 3}
    assert int(events["n_lines"].sum()) + 3 == total
    assert not events["message"].str.contains("\x1b").any()
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("message", "exit_code").rows() == [
        ("Killed", None), ("ERROR: Job failed: command terminated with exit code 137", 137)]
    assert events.filter(pl.col("message") == "Preparing the \"kubernetes\" executor").height == 1


def test_buildkite_agent_exit_status() -> None:
    events = events_of("ci_buildkite_agent_exit137.log")
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "exit_code").rows() == [(5, None), (6, 137), (7, 137)]
    assert events["message"][0] == "~~~ Preparing working directory"


def test_nccl_debug_prefix_and_shm_segment_failure() -> None:
    text = (
        "node-h100-16:103128:103168 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM\n"
        "node-h100-16:103128:103168 [3] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-q9j9mt to 9637888 bytes\n"
    )
    events, _, _ = _parse(text)
    assert events.select("kind", "pid", "gpu_index", "host", "severity", "format").rows() == [
        ("log", 103128, 3, "node-h100-16", "info", "nccl"), ("shm_error", 103128, 3, "node-h100-16", "warning", "nccl")]
    assert json.loads(events["attrs"][1])["shm_path"] == "/dev/shm/nccl-q9j9mt"


def test_exit_codes_map_to_signals_and_plain_failures_stay_logs() -> None:
    text = "\n".join([
        "Process completed with exit code 143.",
        "Process completed with exit code 139.",
        "Process completed with exit code 1.",
        "make[2]: *** [Makefile:41: test] Error 137",
        "Error: signal: killed",
        "subprocess.CalledProcessError: Command '['python', 'shard.py']' died with <Signals.SIGKILL: 9>.",
    ])
    events, _, _ = _parse(text)
    assert events.select("kind", "exit_code").rows() == [
        ("process_killed", 143), ("process_killed", 139), ("log", 1),
        ("process_killed", 137), ("process_killed", None), ("process_killed", None)]
    assert [a.get("signal") for a in attrs_of(events)] == ["SIGTERM", "SIGSEGV", None, "SIGKILL", "SIGKILL", "SIGKILL"]
    assert events["severity"][2] == "error"


# --- Xid from the device plugin ---------------------------------------------------------------

def test_device_plugin_xid_in_local_time() -> None:
    events = events_of("k8s_device_plugin_xid_unhealthy_01.log", tz="Europe/Berlin")
    xid = one(events, "xid")
    assert (xid["xid"], xid["gpu_uuid"], xid["pci_bus"]) == (69, "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8", None)
    assert (xid["ts"], xid["ts_raw"], xid["format"]) == (utc(2020, 8, 10, 17, 9, 42), "2020/08/10 19:09:42", "go_log")
    unhealthy = one(events, "log")
    assert unhealthy["gpu_uuid"] == xid["gpu_uuid"]
    assert unhealthy["attrs"] == {"health": "unhealthy", "resource": "nvidia.com/gpu"}


def test_device_plugin_xid_in_klog_format() -> None:
    line = (
        "I0626 06:24:44.906473       1 health.go:155] XidCriticalError: Xid=79 on Device=GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8;"
        " marking device as unhealthy."
    )
    row = _parse(line)[0].row(0, named=True)
    assert (row["kind"], row["xid"], row["gpu_uuid"], row["format"]) == ("xid", 79, "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8", "klog")
    assert row["ts"] == utc(2025, 6, 26, 6, 24, 44, 906473)


# --- hand-written fixtures ---------------------------------------------------------------------

def test_json_lines_training_log_with_cuda_oom() -> None:
    events = events_of("train_jsonl_cuda_oom.jsonl")
    assert events["kind"].to_list() == ["log", "log", "log", "log", "cuda_oom", "log"]
    oom = one(events, "cuda_oom")
    assert (oom["ts"], oom["severity"], oom["format"]) == (utc(2025, 3, 10, 15, 7, 21, 344000), "error", "json_lines")
    assert (oom["pod"], oom["namespace"], oom["container"], oom["host"]) == ("llama-ft-worker-0", "ml-train", "trainer", "gpu-node-07")
    assert (oom["gpu_index"], oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (0, gib(3.91), gib(79.15))
    assert oom["attrs"]["last_frame"] == "/usr/local/lib/python3.11/site-packages/torch/_tensor.py:581 in backward"
    assert oom["message"].startswith("training step failed\nTraceback (most recent call last):")
    assert json.loads(events["attrs"][0]) == {"loss": 1.8342, "step": 1200, "epoch": 0.61}
    stray = events.row(2, named=True)
    assert (stray["format"], stray["ts"], stray["ts_quality"]) == ("text", None, "missing")
    assert events["severity"][3] == "warning"


def test_python_logging_steps_config_record_and_dataloader_kill() -> None:
    events, skipped, total = _parse(_text("train_python_logging_dataloader_killed.log"))
    assert skipped == {"blank": 2} and int(events["n_lines"].sum()) + 2 == total
    assert events["kind"].to_list() == ["log", "log", "log", "log", "log", "dataloader_killed", "log"]
    config = events.row(0, named=True)
    assert config["n_lines"] == 4 and config["message"].splitlines()[-1] == "    num_workers: 8"
    assert [json.loads(a) for a in events["attrs"][1:3]] == [
        {"loss": 2.441, "step": 100, "epoch": 0.0}, {"loss": 2.1187, "step": 200, "epoch": 0.0}]
    assert events["severity"].to_list()[:5] == ["info", "info", "info", "warning", "error"]
    killed = one(events, "dataloader_killed")
    got = (killed["pid"], killed["n_lines"], killed["ts"], killed["ts_quality"])
    assert got == (48211, 21, utc(2025, 3, 10, 15, 7, 20, 118000), "inherited")
    assert killed["attrs"]["memory_class"] is True


def test_java_out_of_memory_errors() -> None:
    events = events_of("java_service_oom.log")
    ooms = events.filter(pl.col("attrs").str.contains('"oom"'))
    assert [json.loads(a)["oom"] for a in ooms["attrs"]] == ["jvm_heap", "jvm_metaspace", "jvm_native_thread"]
    assert ooms["kind"].unique().to_list() == ["log"] and ooms["severity"].unique().to_list() == ["critical"]
    heap = ooms.row(0, named=True)
    assert (heap["line"], heap["n_lines"], heap["ts"], heap["ts_quality"]) == (3, 8, utc(2025, 3, 10, 15, 7, 20, 301000), "inherited")
    assert json.loads(heap["attrs"])["last_frame"] == "java.base/java.util.Arrays.copyOf(Arrays.java:3537)"
    caused = ooms.row(2, named=True)
    assert caused["n_lines"] == 7 and json.loads(caused["attrs"])["exc_type"] == "java.lang.IllegalStateException"
    assert int(events["n_lines"].sum()) == 19


def test_go_runtime_out_of_memory() -> None:
    events = events_of("go_sidecar_runtime_oom.log")
    assert events.height == 5
    crash = events.row(3, named=True)
    assert (crash["kind"], crash["severity"], crash["n_lines"], crash["ts_quality"]) == ("log", "critical", 13, "inherited")
    assert json.loads(crash["attrs"]) == {"exc_type": "fatal error", "exc_message": "runtime: out of memory", "oom": "go_runtime"}
    assert events["message"][4] == "tokenizer-sidecar: starting (restart 1)"


def test_go_out_of_memory_prelude_carries_the_request() -> None:
    text = (
        "runtime: out of memory: cannot allocate 4194304-byte block (3959422976 in use)\n"
        "fatal error: out of memory\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:9 +0x1d\n"
    )
    events, _, _ = _parse(text)
    assert events.select("kind", "n_lines", "mem_requested_bytes").rows() == [("log", 5, 4194304)]
    assert json.loads(events["attrs"][0])["oom"] == "go_runtime"


def test_rank_prefixed_tracebacks_are_untangled() -> None:
    events = events_of("torchrun_rank_interleaved_oom.log")
    ooms = events.filter(pl.col("kind") == "cuda_oom")
    assert ooms.select("line", "n_lines", "gpu_index").rows() == [(1, 6, 1), (2, 6, 0)]
    assert [a["rank"] for a in attrs_of(ooms)] == [1, 0]
    assert ooms["message"][0].splitlines()[1] == '  File "/workspace/train.py", line 88, in <module>'
    assert attrs_of(ooms)[1]["free_bytes"] == mib(980.00)
    killed = events.filter(pl.col("kind") == "process_killed")
    # The launcher's log and the ChildFailedError table each report the death once (the table's
    # "traceback : Signal 9 (SIGKILL) received by PID 4300" repeats its exitcode line).
    assert killed.select("line", "pid", "exit_code").rows() == [(14, 4300, -9), (27, 4300, -9)]
    assert {a["signal"] for a in attrs_of(killed)} == {"SIGKILL"}
    elastic = one(events, "traceback")
    assert elastic["attrs"]["exc_type"] == "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
    assert elastic["ts_quality"] == "inherited"


# --- timestamps -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("line", "ts", "fmt"),
    [
        ("2025-03-10T15:07:20Z job started", utc(2025, 3, 10, 15, 7, 20), "iso8601"),
        ("2025-03-10T17:07:20+02:00 job started", utc(2025, 3, 10, 15, 7, 20), "iso8601"),
        ("2025-03-10 16:07:20,123 INFO job started", utc(2025, 3, 10, 15, 7, 20, 123000), "iso8601"),
        ("[2025-03-10 16:07:20,123] [INFO] job started", utc(2025, 3, 10, 15, 7, 20, 123000), "iso8601"),
        ("[2025-03-10T15:07:20Z] job started", utc(2025, 3, 10, 15, 7, 20), "iso8601"),
        ("2025-03-10T15:07:20.1234567Z job started", utc(2025, 3, 10, 15, 7, 20, 123456), "iso8601"),
        ("1741619240 job started", utc(2025, 3, 10, 15, 7, 20), "epoch"),
        ("1741619240123 job started", utc(2025, 3, 10, 15, 7, 20, 123000), "epoch"),
        ("2025/03/10 16:07:20 job started", utc(2025, 3, 10, 15, 7, 20), "go_log"),
        ("INFO 03-10 16:07:20 [core.py:58] job started", utc(2025, 3, 10, 15, 7, 20), "vllm"),
        ("INFO 03-10 16:07:20 llm_engine.py:237] job started", utc(2025, 3, 10, 15, 7, 20), "vllm"),
        ("[INFO|trainer.py:2405] 2025-03-10 16:07:20,913 >> job started", utc(2025, 3, 10, 15, 7, 20, 913000), "hf_transformers"),
        ("[rank1]:[E0310 16:07:20.906473421 ProcessGroupNCCL.cpp:616] job started", utc(2025, 3, 10, 15, 7, 20, 906473), "torch_c10d"),
        ("I0310 16:07:20.906473 4242 train.py:12] job started", utc(2025, 3, 10, 15, 7, 20, 906473), "klog"),
        ('{"ts": "2025-03-10T15:07:20Z", "level": "info", "msg": "job started"}', utc(2025, 3, 10, 15, 7, 20), "json_lines"),
        ('{"@timestamp": "2025-03-10T16:07:20.5", "severity": "INFO", "message": "job started"}',
         utc(2025, 3, 10, 15, 7, 20, 500000), "json_lines"),
        ('{"asctime": "2025-03-10 16:07:20,123", "levelname": "INFO", "message": "job started"}',
         utc(2025, 3, 10, 15, 7, 20, 123000), "json_lines"),
        ('{"time": 1741619240.25, "level": 30, "msg": "job started"}', utc(2025, 3, 10, 15, 7, 20, 250000), "json_lines"),
        ('{"timestamp": 1741619240250, "lvl": "info", "event": "job started"}', utc(2025, 3, 10, 15, 7, 20, 250000), "json_lines"),
    ],
)
def test_timestamp_forms(line: str, ts: datetime, fmt: str) -> None:
    events, _, _ = _parse(line, tz="Europe/Berlin")
    row = events.row(0, named=True)
    assert (row["ts"], row["format"]) == (ts, fmt)
    assert row["message"].endswith("job started")
    printed = any(level in line for level in ("INFO", "info", '"level": 30', "I0310"))
    assert row["severity"] == ("error" if "[E0310" in line else "info" if printed else None)
    assert row["ts_quality"] == ("year_inferred" if fmt in ("vllm", "torch_c10d", "klog") else "exact")


def test_json_lines_severity_and_kubernetes_block() -> None:
    line = (
        '{"time": "2025-03-10T15:07:20Z", "level": "50", "msg": "boom",'
        ' "kubernetes": {"pod_name": "p-0", "namespace_name": "ns", "container_name": "c"}}'
    )
    row = _parse(line)[0].row(0, named=True)
    assert (row["severity"], row["pod"], row["namespace"], row["container"]) == ("error", "p-0", "ns", "c")


def test_an_empty_name_in_a_json_line_is_no_name() -> None:
    # Karpenter's controller log names no namespace for a cluster-scoped NodeClaim.
    line = (
        '{"level":"INFO","time":"2024-07-02T10:15:04.213Z","logger":"controller","message":"disrupting nodeclaim(s) via delete",'
        '"controller":"disruption","namespace":"","name":"","pod":"","reconcileID":"3f0c2b5e"}'
    )
    row = _parse(line)[0].row(0, named=True)
    assert (row["namespace"], row["pod"], row["message"]) == (None, None, "disrupting nodeclaim(s) via delete")


def test_python_warnings_are_warnings() -> None:
    events = events_of("pytorch_cuda_oom_capacty_01.log")
    assert events["severity"][1] == "warning"


def test_untimed_lines_do_not_borrow_time_outside_a_record() -> None:
    events, _, _ = _parse("2025-03-10 15:07:20,001 INFO started\nplain line without time\n  indented continuation\n")
    assert events.select("n_lines", "ts_quality").rows() == [(1, "exact"), (1, "missing"), (1, "missing")]
    assert events["ts"].to_list()[1:] == [None, None]


def test_kubectl_prefix_tags_pod_and_container() -> None:
    row = _parse("[pod/trainer-0/main] 2025-03-10T15:07:20Z Killed")[0].row(0, named=True)
    assert (row["pod"], row["container"], row["kind"], row["message"]) == ("trainer-0", "main", "process_killed", "Killed")


# What containerd and CRI-O write under /var/log/pods: the runtime's stamp, the stream and a P(artial) or F(ull) tag.
CRI_CONTAINER_LOG = """\
2024-03-05T10:15:01.998000000Z stdout F {"time": "2024-03-05T10:15:01Z", "level": "info", "msg": "step 1200 loss 2.31"}
2024-03-05T10:15:02.123456789Z stderr F Traceback (most recent call last):
2024-03-05T10:15:02.123556789Z stderr F   File "/workspace/train.py", line 88, in <module>
2024-03-05T10:15:02.123656789Z stderr F     loss.backward()
2024-03-05T10:15:02.123756789Z stderr F torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.50 GiB is free.
"""


def test_cri_container_log_envelope_is_peeled() -> None:
    events, _, _ = _parse(CRI_CONTAINER_LOG)
    assert events["kind"].to_list() == ["log", "cuda_oom"]
    assert events["message"][0] == "step 1200 loss 2.31" and events["severity"][0] == "info"
    oom = events.row(1, named=True)
    assert (oom["n_lines"], oom["gpu_index"], oom["ts"]) == (4, 3, utc(2024, 3, 5, 10, 15, 2, 123456))
    assert oom["message"].startswith("Traceback (most recent call last):")


# Docker's json-file driver: each line the container printed, as a JSON string, with its stream and time.
DOCKER_JSON_FILE_LOG = r"""{"log":"I0305 10:15:03.123456       1 main.go:100] Starting device plugin\n","stream":"stderr","time":"2024-03-05T10:15:03.123456789Z"}
{"log":"{\"level\":\"error\",\"ts\":\"2024-03-05T10:15:04Z\",\"msg\":\"CUDA out of memory. Tried to allocate 2.00 GiB\"}\n","stream":"stdout","attrs":{"tag":"trainer"},"time":"2024-03-05T10:15:04.000000001Z"}
{"log":"\u001b[31mKilled\u001b[0m\n","stream":"stderr","time":"2024-03-05T10:15:05Z"}
{"log":"\n","stream":"stderr","time":"2024-03-05T10:15:05.1Z"}
"""


def test_docker_json_file_lines_are_read_as_the_lines_they_hold() -> None:
    events, skipped, _ = _parse(DOCKER_JSON_FILE_LOG)
    assert events.select("kind", "severity", "format", "message").rows() == [
        ("log", "info", "klog", "Starting device plugin"),
        ("cuda_oom", "error", "json_lines", "CUDA out of memory. Tried to allocate 2.00 GiB"),
        ("process_killed", "error", "iso8601", "Killed"),
    ]
    assert events["ts"].to_list() == [utc(2024, 3, 5, 10, 15, 3, 123456), utc(2024, 3, 5, 10, 15, 4), utc(2024, 3, 5, 10, 15, 5)]
    assert skipped == {"blank": 1}


def test_docker_json_file_chained_traceback_is_one_event() -> None:
    traceback = one(events_of("docker_json_file_python_traceback_01.log"), "traceback")
    assert (traceback["n_lines"], traceback["ts"]) == (15, utc(2019, 5, 22, 7, 51, 24, 252614))
    assert traceback["attrs"]["exc_type"] == "OSError"


# containerd cuts a line over 16 KiB into pieces: each but the last tagged P, in order within its stream.
CRI_CUT_LINE_LOG = """2024-06-01T10:00:01.000000001Z stderr F Traceback (most recent call last):
2024-06-01T10:00:01.000000002Z stderr F   File "train.py", line 3, in <module>
2024-06-01T10:00:01.000000003Z stderr P RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.15 GiB total capacity; 75.10 GiB already allocated; 1.
2024-06-01T10:00:01.000000004Z stdout F step 7 loss 0.5
2024-06-01T10:00:01.000000005Z stderr P 20 GiB free; 76.00 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid frag
2024-06-01T10:00:01.000000006Z stderr F mentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF
2024-06-01T10:00:02.000000001Z stdout F done
"""


def test_a_line_the_runtime_cut_into_pieces_is_one_line_again() -> None:
    events, skipped, _ = _parse(CRI_CUT_LINE_LOG)
    assert events.select("line", "kind").rows() == [(1, "cuda_oom"), (4, "log"), (7, "log")]
    oom = events.row(0, named=True)
    assert oom["message"].splitlines()[-1] == (
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.15 GiB total capacity; 75.10 GiB already allocated; "
        "1.20 GiB free; 76.00 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
        "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
    )
    assert (oom["gpu_index"], oom["n_lines"], json.loads(oom["attrs"])["free_bytes"]) == (1, 3, round(1.2 * 2**30))
    # Every line is an event's, or counted: the two later pieces are on the first one's row.
    assert skipped == {"joined to the line it continues": 2}
    assert int(events["n_lines"].sum()) + 2 == len(CRI_CUT_LINE_LOG.splitlines())


def test_a_docker_json_file_line_without_its_newline_is_continued_by_the_next() -> None:
    log = (
        '{"log":"NCCL WARN Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALL","stream":"stderr","time":"2024-06-01T10:00:00.1Z"}\n'
        '{"log":"REDUCE, Timeout(ms)=600000) ran for 600123 milliseconds before timing out.\\n","stream":"stderr","time":"2024-06-01T10:00:00.2Z"}\n'
    )
    events, skipped, _ = _parse(log)
    assert events["kind"].to_list() == ["nccl_timeout"]
    assert "OpType=ALLREDUCE, Timeout(ms)=600000" in events["message"][0]
    assert skipped == {"joined to the line it continues": 1}


# --- sniffing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_fixture_is_sniffed_as_pipeline(path: Path) -> None:
    best, score = sniffed(path)
    assert best is not None and best.name == "pipeline"
    assert 0.5 <= score <= 0.8


OTHER_FAMILIES = sorted(p for p in DATA.iterdir() if p.is_dir() and p.name not in ("pipeline", "real_logs", "templates"))
OTHER_FIXTURES = sorted(p for folder in OTHER_FAMILIES for p in folder.iterdir() if p.is_file())


@pytest.mark.parametrize("path", OTHER_FIXTURES, ids=[f"{p.parent.name}/{p.name}" for p in OTHER_FIXTURES])
def test_other_families_are_not_claimed(path: Path) -> None:
    head = head_lines(path)
    if path.parent.name not in {s.name for s in sources.all_sources()}:
        assert pipeline.sniff(head) <= 0.2
        return
    # A log both read (the device plugin's klog lines: kubelet's and the pipeline's) goes to the family's own source.
    best, score = sniffed(path)
    assert best is not None and best.name != "pipeline" and (pipeline.sniff(head) <= 0.2 or score > pipeline.sniff(head))


def test_plain_text_gets_a_low_score() -> None:
    assert pipeline.sniff(["hello world", "nothing to see here"]) == pytest.approx(0.1)
    assert pipeline.sniff([]) == 0.0


# --- invariants -------------------------------------------------------------------------------

def _check_invariants(text: str) -> None:
    events, skipped, total = _parse(text)
    assert int(events["n_lines"].sum() or 0) + sum(skipped.values()) == total
    assert events.schema == pl.Schema(schema.EVENT_SCHEMA)
    assert set(events["kind"].to_list()) <= set(schema.KINDS)
    assert set(events["severity"].drop_nulls().to_list()) <= set(schema.SEVERITIES)
    assert set(events["ts_quality"].to_list()) <= set(schema.TS_QUALITIES)
    assert set(events["format"].to_list()) <= set(pipeline.SOURCE.formats)
    assert all(isinstance(json.loads(a), dict) for a in events["attrs"].drop_nulls().to_list())



REAL_LINES = [line for path in FIXTURES for line in path.read_bytes().decode("utf-8", errors="replace").split("\n")]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    _check_invariants(text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(REAL_LINES), max_size=40), st.lists(st.text(max_size=30), max_size=5))
def test_spliced_real_lines_never_raise(lines: list[str], noise: list[str]) -> None:
    _check_invariants("\n".join(lines + noise))


HEADER_FRAGMENTS = [
    "[rank0]: ", "[rank1]:", "(EngineCore_0 pid=5839) ", "INFO 03-10 08:07:20 [core.py:1] ", "ERROR 13-99 08:07:20 x.py:1] ",
    "[INFO|trainer.py:1] 2025-03-06 12:04:09,913 >> ", "[E0626 06:24:44.906 ProcessGroupNCCL.cpp:616] ", "[E x.cpp:1] ",
    "2020/08/10 19:09:42 ", "1741619240 ", "2025-03-10T15:07:20.1234567Z ", "[2025-03-10T15:07:20Z] ", "  | ",
    "[pod/p/c] ", '{"ts": ', '{"msg": "', '"}', "{", "}", "\x1b[31m", "\r", "section_start:1:x\r", "    ", "\t",
    "Traceback (most recent call last):", '  File "x.py", line 1, in f',
    "During handling of the above exception, another exception occurred:",
    "RuntimeError: ", "CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; ", "DataLoader worker (pid 1) is killed by signal: ",
    "\tat a.B(C.java:1)", "Caused by: ", "fatal error: runtime: out of memory", "goroutine 1 [running]:", "Killed",
    "exit code 137", "{'loss': 1.0, 'epoch': 0.1}", "  Num examples = 5,498",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(st.sampled_from(HEADER_FRAGMENTS), max_size=4), st.text(max_size=20)), max_size=30))
def test_mangled_headers_never_raise(rows: list[tuple[list[str], str]]) -> None:
    _check_invariants("\n".join("".join(parts) + tail for parts, tail in rows))


def test_garbage_numbers_do_not_overflow() -> None:
    _check_invariants("\n".join([
        "99999999999999999999 Killed",
        '{"ts": 99999999999999999999999, "msg": "x"}',
        '{"ts": "1e400", "msg": "x"}',
        "CUDA out of memory. Tried to allocate 99999999999999999999999.00 GiB (GPU 99999999999; x)",
        "Process completed with exit code 99999.",
        "INFO 13-45 99:99:99 [x.py:1] bad clock",
        "[E9999 25:61:61.000 x.cpp:1] bad klog",
        "DataLoader worker (pid 99999999999999999999) is killed by signal: Killed.",
    ]))


def test_a_log_that_starts_inside_a_traceback_groups_the_tail_with_its_exception() -> None:
    """A rotated or cut log can begin with frames (or the code line under a cut frame) and no header."""
    for name, lines in (("pytorch_cuda_oom_cut_traceback_three_processes_01.log", 5), ("pytorch_rocm_hip_oom_cut_traceback_01.log", 6)):
        oom = one(events_of(name), "cuda_oom")
        assert (oom["line"], oom["n_lines"]) == (1, lines)


def test_an_oom_that_lists_this_process_and_others_keeps_each_figure_with_its_own() -> None:
    attrs = one(events_of("pytorch_cuda_oom_cut_traceback_three_processes_01.log"), "cuda_oom")["attrs"]
    assert attrs["process_in_use_bytes"] == gib(8.04) and "in_use_pid" not in attrs
    assert attrs["listed_process_pids"] == [2086283, 2797307]
    assert attrs["listed_processes_in_use_bytes"] == mib(419.48) + gib(14.85)


def test_deepspeed_launcher_return_code_minus_9_is_a_sigkill() -> None:
    killed = one(events_of("pytorch_deepspeed_launcher_sigkill_01.log"), "process_killed")
    assert (killed["exit_code"], killed["attrs"]["signal"]) == (-9, "SIGKILL")


def test_tensorflow_resource_exhausted_names_its_gpu() -> None:
    assert one(events_of("pytorch_tensorflow_resource_exhausted_01.log"), "cuda_oom")["gpu_index"] == 0


def test_log4j_two_digit_year_and_level_as_spark_prints_them() -> None:
    events = events_of("spark_executor_java_heap_oom_01.log", year=None)
    error = events.filter(pl.col("line") == 2).row(0, named=True)
    assert (error["ts"], error["severity"], error["format"]) == (utc(2024, 7, 24, 4, 27, 42), "error", "log4j")
    assert events.filter(pl.col("line") == 3)["ts"].to_list() == [utc(2024, 7, 24, 4, 27, 42)]  # the OOM dump inherits it


def test_determined_prefix_is_peeled_so_the_traceback_groups() -> None:
    events = events_of("pytorch_determined_torchrun_prefix_01.log")
    assert events["kind"].to_list() == ["log"] * 5 + ["traceback"]
    assert events["severity"].to_list() == ["warning"] * 5 + ["error"]
    assert events["ts"][0] == datetime(2024, 2, 27, 21, 35, 32, 106313, tzinfo=UTC)


def test_slurm_cgroup_oom_kill_and_the_task_it_killed() -> None:
    events = events_of("slurm_oom_kill_srun_01.log")
    kill = one(events, "oom_kill")
    task, bus_error = events.filter(pl.col("kind") == "process_killed").iter_rows(named=True)
    assert kill["attrs"] == {"slurm_step": "3495064.0", "oom": "slurm_cgroup"}
    assert (json.loads(task["attrs"]), task["host"]) == ({"signal": "SIGKILL", "oom": "slurm_cgroup"}, "Orion-01-01")
    # A later step's task killed by SIGBUS is a kill, not an OOM.
    assert (json.loads(bus_error["attrs"]), bus_error["host"]) == ({"signal": "SIGBUS"}, "Orion-18-69")


def test_ray_tag_outside_a_rank_tag_and_a_c10d_header() -> None:
    events = events_of("ray_worker_rank_c10d_watchdog_01.log")
    assert set(events["pid"]) == {63294} and set(events["process"]) == {"WorkerDict"} and set(events["format"]) == {"torch_c10d"}
    assert events["ts"][0] == utc(2025, 4, 16, 20, 40, 12, 984683)


def test_ray_memory_monitor_kills_are_host_oom_kills() -> None:
    killed = one(events_of("ray_raylet_memory_monitor_kill_01.log"), "process_killed")
    assert (killed["pid"], killed["process"], killed["format"]) == (1111013, "raylet", "ray")
    assert killed["attrs"] == {"signal": "SIGKILL", "workers_killed": 12, "oom": "ray_memory_monitor"}
    task = one(events_of("ray_task_out_of_memory_traceback_01.log"), "traceback")
    assert task["attrs"]["oom"] == "ray_memory_monitor" and task["attrs"]["exc_type"] == "ray.exceptions.OutOfMemoryError"
    # The exception's message goes on with the memory of the node and of the task Ray killed.
    assert (task["n_lines"], task["pid"], task["rss_bytes"]) == (11, 4331, gib(2.22))
    assert (task["mem_used_bytes"], task["mem_total_bytes"]) == (gib(59.49), gib(62.58))


def test_rule_regexes_stay_small_enough_for_the_literal_prefilter_and_match_as_one() -> None:
    assert all(rule.count("|") < 56 for rule in (*rules.INCIDENT_RULE, *rules.PROGRESS_RULE))
    texts = pl.Series(["Heartbeat monitor timed out!", "srun: error: n1: task 4: Out Of Memory", "loss: 0.25", "plain line", "CUDA out of memory."])
    for chunks in (rules.INCIDENT_RULE, rules.PROGRESS_RULE):
        split = texts.to_frame("t").select(rules.spells(pl.col("t"), chunks)).to_series()
        assert split.to_list() == texts.str.contains("|".join(chunks)).to_list()


def test_timeout_at_nccl_work_names_the_failed_work_and_minus_one_for_none_completed() -> None:
    events = events_of("nccl_pg_guid_timeout_at_work_01.log")
    watchdog = attrs_of(events.filter(pl.col("line") == 4))[0]
    assert (watchdog["failed_seq"], watchdog["last_enqueued_seq"], watchdog["last_completed_seq"]) == (1, 1, -1)
    assert one(events, "nccl_timeout")["attrs"]["op"] == "COALESCED"


@pytest.mark.parametrize(("line", "kind"), [
    ("slurmstepd: error: Detected 1 oom_kill event in StepId=1054.0. Some of the step tasks have been OOM Killed.", "oom_kill"),
    ("slurmstepd: error: Detected 2 oom_kill events in StepId=1054.0. Some of the step tasks have been OOM Killed.", "oom_kill"),
    ("srun: error: nid01: tasks 0-2,5,7: Out Of Memory", "process_killed"),
])
def test_slurm_oom_wordings_since_21_08(line: str, kind: str) -> None:
    assert _parse(line + "\n")[0]["kind"].to_list() == [kind]


@pytest.mark.parametrize("line", [
    "[rank0]: (RayWorkerWrapper pid=4321) INFO 07-09 17:31:56 worker.py:12] hello",  # Ray's tag inside torch's rank tag
    "(raylet, ip=10.0.6.140) [2025-08-11 10:13:54,613 I 4321 4321] (raylet) node_manager.cc:3084: ok",  # a daemon's tag with its ip
])
def test_ray_tags_anywhere_torch_and_ray_put_them(line: str) -> None:
    row = _parse(line + "\n")[0].row(0, named=True)
    assert (row["pid"], row["severity"], row["ts_quality"]) == (4321, "info", "exact" if "raylet" in line else "year_inferred")


def test_a_dd_mm_yy_line_without_a_logger_is_not_read_as_log4j() -> None:
    row = _parse("31/12/23 23:59:59 ERROR bye\n")[0].row(0, named=True)
    assert (row["ts"], row["format"]) == (None, "text")


@pytest.mark.parametrize("line", [
    "level=error ts=2024-03-01T10:00:00.123Z caller=main.go:12 msg=boom",  # Loki, Thanos
    "ts=2024-03-01T10:00:00.123Z caller=main.go:12 level=error msg=boom",  # go-kit
    "time=2024-03-01T10:00:00.123Z level=ERROR msg=boom",  # Go's slog
])
def test_logfmt_in_either_order_of_level_and_time(line: str) -> None:
    row = _parse(line + "\n")[0].row(0, named=True)
    assert (row["ts"], row["severity"], row["format"]) == (datetime(2024, 3, 1, 10, 0, 0, 123000, tzinfo=UTC), "error", "logfmt")


# A training job run as a systemd unit: journald keeps each line it prints as an entry of its own,
# between other programs' entries.
JOURNAL_OF_A_TRAINING_UNIT = """\
Mar 05 10:15:01 gpu-node-3 python3[4242]: 2024-03-05 10:15:01,998 - train - INFO - step 1200 loss 2.31
Mar 05 10:15:02 gpu-node-3 python3[4242]: Traceback (most recent call last):
Mar 05 10:15:02 gpu-node-3 containerd[1123]: time="2024-03-05T10:15:02.004521671Z" level=info msg="TaskExit event container_id:\\"a3c1\\" pid:551880 exit_status:137"
Mar 05 10:15:02 gpu-node-3 python3[4242]:   File "/opt/train.py", line 88, in <module>
Mar 05 10:15:02 gpu-node-3 python3[4242]:     loss.backward()
Mar 05 10:15:02 gpu-node-3 python3[4242]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.50 GiB is free.
Mar 05 10:15:04 gpu-node-3 systemd[1]: train.service: Main process exited, code=exited, status=1/FAILURE
"""


def test_an_application_in_a_journal_is_read_by_the_pipeline_rules() -> None:
    lines = sources.lines_frame(JOURNAL_OF_A_TRAINING_UNIT)
    ctx = ParseContext(file="journal.log", tz="UTC", year=2024, reference_time=REFERENCE)
    events, _ = parse_lines(lines, ctx, sources.get("syslog"))
    rows = events.select("line", "n_lines", "source", "kind", "process", "pid", "format").rows()
    assert rows == [
        (1, 1, "syslog", "log", "python3", 4242, "syslog"),
        (2, 4, "pipeline", "cuda_oom", "python3", 4242, "syslog"),
        (3, 1, "syslog", "log", "containerd", 1123, "syslog"),
        (7, 1, "syslog", "log", "train.service", None, "syslog"),
    ]
    oom = events.row(1, named=True)
    assert (oom["gpu_index"], oom["ts"], oom["severity"]) == (3, utc(2024, 3, 5, 10, 15, 2), "error")
    assert events.row(0, named=True)["severity"] == "info"  # the application's own level, under the envelope


# --- C++ tails, launchers and TensorFlow's C++ log (real samples) -----------------------------


def test_c10_frames_stay_with_their_error() -> None:
    events = events_of("pytorch_c10_cublas_alloc_failed_frames_01.log")
    assert events.select("line", "n_lines", "kind").rows() == [(1, 6, "cuda_oom")]
    assert attrs_of(events)[0]["exc_type"] == "RuntimeError"


C10_TERMINATE = """\
Traceback (most recent call last):
  File "train.py", line 10, in <module>
    loss.backward()
RuntimeError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.

Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f2a8c1a5617 in /usr/lib/libc10.so)
step 12 done
terminate called after throwing an instance of 'c10::Error'
  what():  CUDA error: an illegal memory access was encountered
Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f2a8c1a5617 in /usr/lib/libc10.so)
Epoch: 3
"""


def test_a_c10_error_keeps_its_hints_and_frames_in_and_out_of_a_traceback() -> None:
    events, _, _ = _parse(C10_TERMINATE)
    assert events.select("line", "n_lines", "kind").rows() == [(1, 9, "traceback"), (11, 1, "log"), (12, 4, "traceback"), (16, 1, "log")]
    python, terminated = attrs_of(events.filter(pl.col("kind") == "traceback"))
    assert (python["exc_type"], python["exc_message"]) == ("RuntimeError", "CUDA error: an illegal memory access was encountered")
    assert (terminated["exc_type"], terminated["exc_message"]) == ("CUDA error", "an illegal memory access was encountered")


def test_a_blank_line_ends_a_cut_traceback_before_a_later_word_colon_line() -> None:
    text = '  File "/a.py", line 3, in f\n    g()\n\nNote: later thing\n'
    events, _, _ = _parse(text)
    assert events.select("line", "n_lines", "kind").rows() == [(1, 2, "traceback"), (4, 1, "log")]


def test_torchrun_table_reports_the_killed_child_once() -> None:
    killed = events_of("pytorch_torchrun_childfailed_table_sigkill_01.log").filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "pid", "exit_code").rows() == [(15, 14750, -9)]
    assert attrs_of(killed)[0]["signal"] == "SIGKILL"


def test_xla_buffer_assignment_stays_with_its_resource_exhausted() -> None:
    events = events_of("jax_xla_resource_exhausted_buffer_assignment_01.log")
    assert events.select("line", "n_lines", "kind", "mem_requested_bytes").rows() == [(1, 24, "cuda_oom", 6291456)]
    assert attrs_of(events)[0]["exc_type"] == "jaxlib.xla_extension.XlaRuntimeError"
    bare, _, _ = _parse(_text("jax_xla_resource_exhausted_buffer_assignment_01.log").split("\n", 4)[4])  # no frames above
    assert bare.select("line", "n_lines", "kind", "mem_requested_bytes").rows() == [(1, 20, "cuda_oom", 6291456)]


def test_faulthandler_threads_are_one_record() -> None:
    events = events_of("pytorch_faulthandler_fatal_python_error_threads_01.log")
    assert events.select("line", "n_lines", "kind").rows() == [(1, 1, "log"), (3, 9, "traceback")]


def test_open_mpi_names_the_killed_rank_its_pid_and_node() -> None:
    killed = one(events_of("mpi_openmpi_mpirun_signal9_killed_01.log"), "process_killed")
    assert (killed["line"], killed["pid"], killed["host"]) == (2, 21183, "host01")
    assert (killed["attrs"]["rank"], killed["attrs"]["signal"]) == (0, "SIGKILL")
    unknown = one(_parse("mpirun noticed that process rank 7 with PID 0 on node HOSTNAME exited on signal 6 (Aborted).\n")[0], "process_killed")
    assert (unknown["pid"], unknown["attrs"]["signal"]) == (None, "SIGABRT")


def test_horovod_exit_with_status_code() -> None:
    killed = one(events_of("mpi_horovodrun_exit_status_code_137_01.log"), "process_killed")
    assert (killed["line"], killed["exit_code"], killed["attrs"]["signal"]) == (1, 137, "SIGKILL")


def test_tensorflow_cpp_log_gives_severity_and_its_oom_facts() -> None:
    events = events_of("tf_xla_cuda_driver_failed_to_allocate_wrapped_01.log")
    first = events.row(0, named=True)
    assert (first["severity"], first["format"], first["ts"]) == ("error", "tensorflow", utc(2019, 6, 8, 3, 44, 36, 84180))
    assert first["message"].startswith("failed to allocate 3.39G")
    text = (
        "2019-06-08 03:44:36.084180: E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_driver.cc:828]"
        " failed to allocate 3.39G (3640655872 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
        "2019-06-08 03:44:36.087182: E external/org_tensorflow/tensorflow/compiler/xla/service/gpu/cudnn_conv_algorithm_picker.cc:555]"
        " Resource exhausted: Failed to allocate request for 3.39GiB (3640655872B) on device ordinal 1\n"
        "2022-02-11 12:56:42.783062: I tensorflow/core/common_runtime/bfc_allocator.cc:1066] InUse at 703b01400 of size 256 next 159\n"
    )
    rows = _parse(text)[0].select("kind", "severity", "mem_requested_bytes", "gpu_index").rows()
    assert rows == [("cuda_oom", "error", 3640655872, None), ("cuda_oom", "error", 3640655872, 1), ("log", "info", None, None)]


@pytest.mark.parametrize(("line", "severity"), [
    # torch.distributed.elastic's logger since 2.1: "[asctime] name: [LEVEL] message"
    ("[2023-10-13 17:40:02,544] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 62499 closing signal SIGTERM", "warning"),
    ("[2025-02-10 21:49:50,346]::[InvokeAI]::INFO --> Started", "info"),  # InvokeAI
])
def test_levels_behind_a_logger_name(line: str, severity: str) -> None:
    row = _parse(line + "\n")[0].row(0, named=True)
    assert (row["severity"], row["ts_quality"]) == (severity, "exact")
    assert row["ts"].year in (2023, 2025)


# `docker compose logs` of an inference stack: each service's lines under its padded tag, interleaved.
COMPOSE_LOGS = """\
sglang-1  | [2025-05-19 23:22:28 TP3] Scheduler hit an exception: Traceback (most recent call last):
redis_1   | 1:M 19 May 2025 23:22:28.100 * Background saving started
sglang-1  |   File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2311, in run_scheduler_process
sglang-1  |     scheduler.event_loop_overlap()
sglang-1  | torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.50 GiB is free.
sglang-1  | [2025-05-19 23:22:30 DP1 TP0] Load weight end. type=Qwen3ForCausalLM, avail mem=38.11 GB
"""


def test_compose_service_tags_keep_services_apart_and_sglang_ranks_leave_the_message() -> None:
    events, _, _ = _parse(COMPOSE_LOGS)
    assert events.select("line", "n_lines", "kind", "container").rows() == [
        (1, 4, "cuda_oom", "sglang-1"), (2, 1, "log", "redis_1"), (6, 1, "log", "sglang-1"),
    ]
    assert events["message"][0].startswith("Scheduler hit an exception: Traceback")
    assert events["message"][2] == "Load weight end. type=Qwen3ForCausalLM, avail mem=38.11 GB"
    assert events["ts"][2] == utc(2025, 5, 19, 23, 22, 30)


def _journal_events(text: str) -> tuple[pl.DataFrame, dict[str, int]]:
    lines = sources.lines_frame(text)
    return parse_lines(lines, ParseContext(file="journal.log", tz="UTC", year=2025, reference_time=REFERENCE), sources.get("syslog"))


def test_applications_in_a_journal_are_told_apart_by_host_program_and_pid() -> None:
    """Two writers without pids, and two hosts' pid 1 (a central rsyslog), interleave their tracebacks."""
    for first, second in (("h train:", "h evalr:"), ("node1 python[1]:", "node2 python[1]:")):
        text = "".join(f"Jan  1 00:00:01 {writer} {message}\n" for writer, message in (
            (first, "Traceback (most recent call last):"), (second, "Traceback (most recent call last):"),
            (first, '  File "a.py", line 1, in <module>'), (second, '  File "b.py", line 2, in <module>'),
            (first, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."), (second, "ValueError: bad"),
        ))
        events, _ = _journal_events(text)
        assert events.select("line", "n_lines", "kind").rows() == [(1, 3, "cuda_oom"), (2, 3, "traceback")], first


def test_a_chained_traceback_in_a_journal_with_empty_messages_is_one_event() -> None:
    messages = (
        "Traceback (most recent call last):", '  File "a.py", line 1, in <module>', "ValueError: bad", "",
        "The above exception was the direct cause of the following exception:", "", "Traceback (most recent call last):",
        '  File "a.py", line 3, in <module>', "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
    )
    events, skipped = _journal_events("".join(f"Jan  1 00:00:01 h python3[500]: {message}\n" for message in messages))
    assert events.select("line", "n_lines", "kind").rows() == [(1, 7, "cuda_oom"), (4, 1, "log"), (6, 1, "log")]
    assert int(events["n_lines"].sum()) + sum(skipped.values()) == len(messages)


def test_compose_like_tags_on_a_few_lines_of_another_log_are_text() -> None:
    events, _, _ = _parse("epoch_1 | train loss 0.5\nstep 2 loss 0.4\nstep 3 loss 0.3\n")
    assert events["container"].to_list() == [None, None, None]
    assert events["message"][0] == "epoch_1 | train loss 0.5"


# --- continuation lines of TensorFlow's and NCCL's errors, CUDA errors, Slurm's node ----------------------


def test_tensorflow_error_keeps_its_node_hint_and_root_error_lines() -> None:
    """TensorFlow 1's reprint of an OOM with two ops ("[[Node: …]]" 5 spaces in, each with the OOM hint), and
    "N root error(s) found." with its items: one GPU OOM each, none of their lines left as log lines."""
    hint = "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions."
    reprint = (
        "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[64,2016,9,9] and type float"
        " on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc\n"
        f"     [[Node: cell_12/AvgPool_1 = AvgPool[T=DT_FLOAT]]]\n{hint}\n\n     [[Node: gradients/_12031 = _Recv[]()]]\n{hint}\n\n"
        "INFO:tensorflow:Error reported to Coordinator\n"
    )
    events, _, _ = _parse(reprint)
    assert events.select("line", "n_lines", "kind", "gpu_index").rows() == [(1, 5, "cuda_oom", 1), (8, 1, "log", None)]
    roots = (
        "ResourceExhaustedError: 2 root error(s) found.\n"
        "  (0) Resource exhausted: OOM when allocating tensor with shape[16,112,112,147] and type float on /job:localhost/replica:0/task:0/device:GPU:0\n"
        f"\t [[{{{{node resnet_v1_50/conv1/ExtractImagePatches}}}}]]\n{hint}\n\n\t [[Mean_1/_1047]]\n{hint}\n\n"
        "  (1) Resource exhausted: OOM when allocating tensor with shape[16,112,112,147] and type float\n"
        "0 successful operations.\n"
    )
    events, _, _ = _parse(roots)
    assert events.select("line", "n_lines", "kind", "gpu_index").rows()[0] == (1, 7, "cuda_oom", 0)


def test_tensorflow_2_traceback_keeps_the_op_line() -> None:
    text = (
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    model.fit(x)\n'
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError:  OOM when allocating tensor with shape[32,64,112,112]"
        " and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
        "\t [[node model/conv1/Conv2D (defined at train.py:9) ]]\n"
        "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom.\n"
        " [Op:__inference_train_function_1015]\n\nFunction call stack:\ntrain_function\n"
    )
    events, _, _ = _parse(text)
    assert events.select("line", "n_lines", "kind").rows()[0] == (1, 7, "cuda_oom")


def test_nccl_error_keeps_its_result_code_and_last_error() -> None:
    text = (
        "[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error"
        " (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
        "[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.\n[rank7]: Last error:\n[rank7]: Cuda failure 1 'invalid argument'\n"
        "[rank6]: done\n"
    )
    events, _, _ = _parse(text)
    error = events.row(0, named=True)
    assert (error["n_lines"], error["kind"], error["severity"]) == (4, "traceback", "error")
    attrs = json.loads(error["attrs"])
    assert (attrs["rank"], attrs["cuda_error"], attrs["exc_type"]) == (7, "unhandled cuda error", "torch.distributed.DistBackendError")
    old, _, _ = _parse(
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:38, unhandled cuda error, NCCL version 2.7.8\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\n"
    )
    assert old.select("n_lines", "severity").rows() == [(2, "error")]


def test_untagged_c10_tail_joins_the_ranked_line_it_ends() -> None:
    """torch tags the first line of a rank's watchdog error; its hints and c10 frames follow untagged."""
    text = (
        "model_runner_base.py:120] Writing input of failed execution to /tmp/err.pkl...\n"
        "[rank0]:[E219 12:14:43.351647859 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 3 Rank 0] Process group watchdog thread"
        " terminated with exception: CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n\n"
        "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7fd4b596c446 in /usr/lib/libc10.so)\n"
        "[rank1]:[I219 12:14:44.000000000 ProcessGroupNCCL.cpp:1600] [PG ID 2 PG GUID 3 Rank 1] waiting\n"
        "frame #1: c10::detail::torchCheckFail + 0x64 (0x7fd4b59166e4 in /usr/lib/libc10.so)\n"
    )
    events, _, _ = _parse(text)
    assert events.select("line", "n_lines", "severity").rows() == [(1, 1, None), (2, 5, "error"), (8, 2, "info")]
    watchdog = json.loads(events["attrs"][1])
    assert watchdog == {"rank": 0, "cuda_error": "an illegal memory access was encountered"}


@pytest.mark.parametrize(("line", "error"), [
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "uncorrectable ECC error encountered"),
    ("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
     "uncorrectable ECC error encountered"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "CUDNN_STATUS_NOT_INITIALIZED"),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k)`",
     "CUBLAS_STATUS_EXECUTION_FAILED"),
    (("F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of handling error Internal: failed call to"
      " cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered"), "CUDA_ERROR_ECC_UNCORRECTABLE"),
])
def test_cuda_errors_are_errors_that_name_what_failed(line: str, error: str) -> None:
    events, _, _ = _parse(line + "\n")
    row = events.row(0, named=True)
    assert row["severity"] in {"error", "critical"} and json.loads(row["attrs"])["cuda_error"] == error


def test_cuda_oom_is_not_also_a_cuda_error() -> None:
    events, _, _ = _parse("RuntimeError: CUDA error: out of memory\n")
    assert one(events, "cuda_oom")["attrs"] == {"exc_type": "RuntimeError", "exc_message": "CUDA error: out of memory"}


def test_srun_out_of_memory_names_the_node_of_the_killed_task() -> None:
    text = (
        "slurmstepd: error: Detected 2 oom_kill events in StepId=4242.13. Some of the step tasks have been OOM Killed.\n"
        "srun: error: gpu-node-07: tasks 0-2,5: Out Of Memory\n"
    )
    events, _, _ = _parse(text)
    assert events.select("kind", "host").rows() == [("oom_kill", None), ("process_killed", "gpu-node-07")]


@pytest.mark.parametrize("line", [
    'level=info ts=2023-05-04T10:11:12.123Z caller=main.go:123 msg="Starting Prometheus"',
    'ts=2023-05-04T10:11:13.123Z caller=main.go:124 level=warn msg="Scrape commit failed"',
    'time=2023-05-04T10:11:17.000+02:00 level=WARN msg="slog line"',
])
def test_logfmt_lines_are_sniffed_and_read(line: str) -> None:
    assert pipeline.sniff([line] * 3) >= 0.5
    events, _, _ = _parse(line + "\n")
    row = events.row(0, named=True)
    assert (row["format"], row["ts_quality"]) == ("logfmt", "exact") and row["severity"] in {"info", "warning"}
    assert row["message"].startswith("msg=")


def test_make_recipe_killed_by_a_signal() -> None:
    events, _, _ = _parse("make: *** [Makefile:22: test] Terminated\nmake[1]: *** [all] Killed\nmake: *** [all] Error 2\n")
    assert [(row["kind"], json.loads(row["attrs"] or "{}").get("signal"), row["exit_code"]) for row in events.iter_rows(named=True)] == [
        ("process_killed", "SIGTERM", None), ("process_killed", "SIGKILL", None), ("log", None, 2),
    ]


def test_xla_out_of_memory_allocating_gives_the_request() -> None:
    events, _, _ = _parse("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.\n")
    assert one(events, "cuda_oom")["mem_requested_bytes"] == 20029400304


def test_exception_line_above_a_cuda_tail_names_the_exception() -> None:
    events, _, _ = _parse(
        "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
    )
    attrs = json.loads(events["attrs"][0])
    assert (events["n_lines"][0], attrs["exc_type"], attrs["exc_message"]) == (3, "RuntimeError", "CUDA error: uncorrectable ECC error encountered")


def test_journal_lines_with_pipeline_markers_are_not_sniffed_as_pipeline() -> None:
    head = [
        "Apr 13 13:35:51 host Fledge[16823] ERROR: audit: Traceback (most recent call last):",
        "Apr 13 13:35:51 host python3[500]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
    ]
    assert pipeline.sniff(head) <= 0.2


def test_spawned_process_killed_by_a_signal() -> None:
    text = (
        "Traceback (most recent call last):\n  File \"main.py\", line 422, in <module>\n    join=True)\n"
        "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL\n"
    )
    killed = one(_parse(text)[0], "process_killed")
    assert (killed["n_lines"], killed["attrs"]["signal"]) == (4, "SIGKILL")


def test_ray_2_0_memory_monitor_kills_the_latest_task() -> None:
    line = (
        "(raylet) [2022-08-29 15:18:33,592 E 30307 30344] (raylet) node_manager.cc:2963: System memory low at node with IP 172.17.0.2."
        " Used memory (23.63GB) / total capacity (33.28GB) (0.709971) exceeds threshold 0.7, killing latest task with name"
        " the_real_oom_actor:Leaker.__init__ and actor ID dc0d34f19836a07b46222dbc01000000 to avoid running out of memory.\n"
    )
    killed = one(_parse(line)[0], "process_killed")
    assert killed["attrs"] == {"signal": "SIGKILL", "workers_killed": 1, "oom": "ray_memory_monitor"}
    assert killed["ts"] == utc(2022, 8, 29, 15, 18, 33, 592000)
    assert (killed["mem_used_bytes"], killed["mem_total_bytes"]) == (gib(23.63), gib(33.28))


def test_better_exceptions_blank_line_before_the_exception_keeps_it_in_the_traceback() -> None:
    """loguru's diagnose (better_exceptions) annotates each frame's values and leaves a blank line before the exception."""
    text = (
        "2023-11-29 06:51:23.492 | ERROR    | __main__:<module>:224 - An error has been caught in function '<module>'\n"
        "Traceback (most recent call last):\n\n"
        '  > File "train.py", line 224, in <module>\n      main()\n      └ <function main at 0x147b5e2a7280>\n\n'
        '    File "train.py", line 130, in join\n      raise ProcessExitedException(\n'
        "            └ <class 'torch.multiprocessing.spawn.ProcessExitedException'>\n\n"
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL\n"
        "2023-11-29 06:51:24.000 | INFO     | __main__:<module>:230 - done\n"
    )
    events, _, _ = _parse(text)
    assert events.select("line", "n_lines", "kind", "severity").rows() == [
        (1, 1, "log", "error"), (2, 8, "process_killed", "error"), (13, 1, "log", "info"),
    ]
    assert events["ts_quality"][1] == "inherited"


def test_bare_exited_with_a_code() -> None:
    text = (
        'The command "travis_wait 40 ci/run_test.sh" exited with 137.\n'
        "Exec lifecycle hook (x) for Container \"c\" in Pod \"p\" failed - error: command 'x' exited with 137: , message: ''\n"
        "worker exited with 2 errors remaining\n"
    )
    events, _, _ = _parse(text)
    assert events.select("kind", "exit_code").rows() == [("process_killed", 137), ("process_killed", 137), ("log", None)]


def test_srun_tasks_killed_by_a_signal() -> None:
    text = (
        "srun: error: Orion-18-69: task 289: Bus error\nsrun: Terminating job step 3495450.0\n"
        "srun: error: node12: tasks 0-3: Killed\nsrun: error: gpu03: task 1: Exited with exit code 1\n"
    )
    events, _, _ = _parse(text)
    rows = [(row["kind"], row["host"], json.loads(row["attrs"] or "{}").get("signal"), row["exit_code"]) for row in events.iter_rows(named=True)]
    assert rows == [
        ("process_killed", "Orion-18-69", "SIGBUS", None), ("log", None, None, None),
        ("process_killed", "node12", "SIGKILL", None), ("log", None, None, 1),
    ]


def test_tensorflow_graph_execution_error_keeps_its_error_lines() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/app/train.py", line 279, in run\n    history = the_model.fit(\n'
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:\n\n"
        "Detected at node 'model/conv2d/Conv2D' defined at (most recent call last):\n"
        '    File "/app/train.py", line 279, in run\n      history = the_model.fit(\n'
        "Node: 'model/conv2d/Conv2D'\n"
        "OOM when allocating tensor with shape[16,64,64,64] and type float on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc\n"
        "\t [[{{node model/conv2d/Conv2D}}]]\n"
        "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom.\n"
        " [Op:__inference_train_function_7181]\n"
        "Epoch 2/10\n"
    )
    events, _, _ = _parse(text)
    oom = one(events, "cuda_oom")
    assert (oom["n_lines"], oom["gpu_index"], oom["attrs"]["exc_message"]) == (12, 1, "Graph execution error:")
    assert events["kind"].to_list() == ["cuda_oom", "log"]


@pytest.mark.parametrize(("line", "loss"), [
    ("Training epoch 0, iteration 8/29 | lr: 5.389e-06 | global_step: 8 | reduced_train_loss: 10.22 | consumed_samples: 4608", 10.22),
    ("Epoch 3: 100%|██████████| 50/50 [00:10<00:00, 4.90it/s, v_num=1, train_loss=0.412, val_loss=0.530]", 0.412),
    ("Epoch 3: 100%|██████████| 50/50 [00:10<00:00, 4.90it/s, v_num=1, val_loss=0.530]", None),
])
def test_training_loss_names(line: str, loss: float | None) -> None:
    events, _, _ = _parse(line + "\n")
    assert json.loads(events["attrs"][0] or "{}").get("loss") == loss


# --- captured on an H200 (torch 2.11, JAX 0.11, CuPy 14), and public samples -----------------------


def test_torchrun_failure_table_names_the_root_cause_and_the_rank_the_launcher_stopped() -> None:
    events = events_of("pytorch_torchrun_sigkill_sigterm_table_h200_01.log")
    killed = events.filter(pl.col("kind") == "process_killed").sort("line")
    assert killed.select("line", "pid", "exit_code", "severity", "host").rows() == [
        (8, 679, -9, "error", None), (34, 678, -15, "warning", "localhost"), (43, 679, -9, "error", "localhost"),
    ]
    agent, stopped, root = attrs_of(killed)
    assert agent == {"signal": "SIGKILL", "local_rank": 1}
    assert stopped == {"signal": "SIGTERM", "rank": 0, "local_rank": 0, "root_cause": False}
    assert root == {"signal": "SIGKILL", "rank": 1, "local_rank": 1, "root_cause": True}
    # The table's own time (the launcher's clock, to the second).
    assert killed["ts"].to_list()[1:] == [datetime(2026, 12, 4, 17, 27, 27, tzinfo=UTC)] * 2
    assert killed["ts_quality"].to_list()[1:] == ["exact", "exact"]


def test_torchrun_failure_table_of_ranks_that_exited_with_an_error() -> None:
    events = events_of("nccl_duplicate_gpu_invalid_usage_two_ranks_h200_01.log")
    table = events.filter(pl.col("message").str.contains(r"^\s*exitcode\s*:")).sort("line")
    assert table.select("line", "kind", "pid", "exit_code", "severity").rows() == [
        (118, "log", 738, 1, "error"), (127, "log", 737, 1, "error"),
    ]
    assert [(a["rank"], a["root_cause"]) for a in attrs_of(table)] == [(1, False), (0, True)]
    agent = events.filter(pl.col("line") == 92).row(0, named=True)
    assert (agent["pid"], agent["exit_code"], json.loads(agent["attrs"])) == (737, 1, {"local_rank": 0})


def test_nccl_result_code_and_last_error_stay_with_the_dist_backend_error() -> None:
    events = events_of("nccl_duplicate_gpu_invalid_usage_two_ranks_h200_01.log")
    error = events.filter(pl.col("line") == 79).row(0, named=True)
    assert error["n_lines"] == 4
    assert error["message"].splitlines()[1] == "ncclInvalidUsage: This usually reflects invalid usage of NCCL library."
    assert json.loads(error["attrs"])["cuda_error"] == "invalid usage"


def test_an_untagged_traceback_under_another_writers_lines_inherits_no_time() -> None:
    # Line 51 follows NCCL_DEBUG lines of pids 737/738; the last untagged timed line is torchrun's, 47 lines up.
    events = events_of("nccl_duplicate_gpu_invalid_usage_two_ranks_h200_01.log")
    first = events.filter(pl.col("line") == 51).row(0, named=True)
    assert (first["kind"], first["ts"], first["ts_quality"]) == ("traceback", None, "missing")
    # The launcher's traceback right under its own line still does.
    launcher = events.filter(pl.col("line") == 93).row(0, named=True)
    assert launcher["ts_quality"] == "inherited"


def test_cupy_out_of_memory_is_a_gpu_oom_with_the_bytes_it_asked_for() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "cupy/cuda/memory.pyx", line 1560, in cupy.cuda.memory.SingleDeviceMemoryPool._try_malloc\n'
        "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 200,000,000,000 bytes (allocated so far: 0 bytes).\n"
    )
    events, _, _ = _parse(text)
    oom = one(events, "cuda_oom")
    assert (oom["mem_requested_bytes"], oom["attrs"]["allocated_bytes"]) == (200_000_000_000, 0)
    assert oom["attrs"]["exc_type"] == "cupy.cuda.memory.OutOfMemoryError"


def test_jax_oom_names_the_device_of_its_allocator() -> None:
    events = events_of("jax_xla_oom_autotuner_device0_h200_01.log")
    ooms = events.filter(pl.col("kind") == "cuda_oom").sort("line")
    assert ooms.select("line", "gpu_index", "mem_requested_bytes").rows() == [(22, 0, gib(223.53)), (34, 0, gib(223.53))]


def test_bare_lines_under_a_glog_line_are_its_message_and_take_its_time() -> None:
    # XLA's error (line 11, "E1204 17:27:54.356897 … config_assigner.cc:536] Could not get config for HLO: …") prints the
    # HLO and its status ("… RESOURCE_EXHAUSTED: Out of memory …", line 22) bare under its glog header.
    events = events_of("jax_xla_oom_autotuner_device0_h200_01.log").sort("line")
    oom = events.filter(pl.col("line") == 22).row(0, named=True)
    assert (oom["kind"], oom["ts"], oom["ts_quality"]) == ("cuda_oom", datetime(2025, 12, 4, 17, 27, 54, 356897, tzinfo=UTC), "inherited")
    assert events.filter(pl.col("line").is_between(12, 32))["ts"].n_unique() == 1
    # A blank line ends the message: the traceback under it has no time of its own.
    assert events.filter(pl.col("line") == 34)["ts_quality"].to_list() == ["missing"]
    # So does a traceback under the glog line: the lines under it are the exception's, not the glog message's.
    text = (
        "E1204 17:27:41.106000 716 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) local_rank: 0 (pid: 737)\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/torch/.venv/bin/torchrun", line 10, in <module>\n'
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
    )
    parsed = _parse(text)[0].sort("line")
    assert parsed.select("line", "ts_quality").rows() == [(1, "year_inferred"), (2, "inherited"), (5, "missing")]


def test_h200_training_oom_facts() -> None:
    oom = one(events_of("pytorch_cuda_oom_after_steps_h200_01.log"), "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["gpu_index"], oom["ts_quality"]) == (7, 5, 0, "inherited")
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (gib(24.00), gib(139.80))
    assert (oom["attrs"]["free_bytes"], oom["attrs"]["reserved_unallocated_bytes"]) == (gib(17.41), mib(96.91))
    lightning = one(events_of("pytorch_lightning_cuda_oom_rich_table_h200_01.log"), "cuda_oom")
    assert (lightning["line"], lightning["n_lines"], lightning["mem_requested_bytes"]) == (21, 76, gib(158.69))
    loader = one(events_of("pytorch_dataloader_killed_chained_h200_01.log"), "dataloader_killed")
    assert (loader["line"], loader["n_lines"], loader["pid"], loader["attrs"]["signal"]) == (8, 45, 708, "SIGKILL")


_RICH_BOXED = """\
╭───────────────────── Traceback (most recent call last) ──────────────────────╮
│ /Users/masa/.local/pipx/venvs/mcp-ticketer/lib/python3.13/site-packages/mcp_ │
│ ticketer/cli/main.py:1935 in mcp_callback                                    │
│                                                                              │
│ ❱ 1935 │   │   │   os.chdir(project_path)                                    │
│                                                                              │
╰──────────────────────────────────────────────────────────────────────────────╯
FileNotFoundError: [Errno 2] No such file or directory: 
'/nonexistent/path/that/does/not/exist'
"""
_RICH_RULED = """\
  Network URL: http://192.168.1.41:8501

────────────────────────── Traceback (most recent call last) ───────────────────────────
  C:\\Users\\user\\AppData\\Local\\Packages\\PythonSoftwareFoundation.Python.3.13_qbz5n2kfra  
  \\exec_code.py:129 in exec_func_with_error_handling

  D:\\OneDrive - Westminster International University in
  Tashkent\\wrangling\\CW\\Wrangling-CW-WIUT\\main.py:4 in <module>

  ❱   4 import plotly.express as px
────────────────────────────────────────────────────────────────────────────────────────
ModuleNotFoundError: No module named 'plotly'
Epoch 2/10
"""


@pytest.mark.parametrize(("text", "line", "n_lines", "exc_type"), [
    # rich.traceback's box (typer, Lightning's CLI), the exception's message wrapped at the box's width
    (_RICH_BOXED, 1, 9, "FileNotFoundError"),
    (_RICH_RULED, 3, 8, "ModuleNotFoundError"),  # without the box's sides (Streamlit's)
])
def test_rich_traceback_is_one_traceback_with_its_exception(text: str, line: int, n_lines: int, exc_type: str) -> None:
    events, _, _ = _parse(text)
    traceback = one(events, "traceback")
    assert (traceback["line"], traceback["n_lines"], traceback["attrs"]["exc_type"]) == (line, n_lines, exc_type)
    # The message rich wrapped at the box's width is one message again.
    assert traceback["attrs"]["exc_message"] == {
        "FileNotFoundError": "[Errno 2] No such file or directory: '/nonexistent/path/that/does/not/exist'",
        "ModuleNotFoundError": "No module named 'plotly'",
    }[exc_type]
    assert events.filter(pl.col("kind") == "log")["line"].to_list() == ([] if line == 1 else [1, 13])


def test_bash_kill_report_without_the_command() -> None:
    killed = one(events_of("ci_jenkins_mvn_line_killed_no_command_01.log"), "process_killed")
    assert (killed["pid"], killed["attrs"]["signal"]) == (298, "SIGKILL")


def test_slurm_cancellation_is_a_kill_at_the_time_it_states() -> None:
    text = (
        "srun: Job step aborted: Waiting up to 47 seconds for job step to finish.\n"
        "slurmstepd: error: *** JOB 494583 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***\n"
        "Preparing test set...:  46%|████▋     | 31/67 [29:02<35:12, 58.67s/it]slurmstepd: error: *** STEP 6053.0 ON DEL2212S020"
        " CANCELLED AT 2024-04-23T12:18:08 ***\n"
    )
    events, _, _ = _parse(text)
    cancelled = events.filter(pl.col("line") > 1)
    assert cancelled.select("line", "kind", "ts", "ts_quality", "severity").rows() == [
        (2, "process_killed", datetime(2024, 4, 20, 9, 9, 37, tzinfo=UTC), "exact", "error"),
        # Without a reason: scancel's, or srun's once a task had failed (a consequence, not a kill of its own).
        (3, "log", datetime(2024, 4, 23, 12, 18, 8, tzinfo=UTC), "exact", None),  # the level is not at the start of the line
    ]
    assert attrs_of(cancelled)[0] == {"slurm_step": "494583", "cancel_reason": "time_limit"}


def test_bash_kill_report_with_the_core_dump_after_the_padded_signal() -> None:
    line = (
        "/data/tir/projects/tir3/users/mengyan3/all_in_one_pretraining/./pretrain_then_finetune.sh: line 184: 2324239 Aborted"
        "                 (core dumped) litgpt pretrain $model_name --resume \"${checkpoint_dir}/step${step}/lit_model.pth\"\n"
    )
    killed = one(_parse(line)[0], "process_killed")
    assert (killed["pid"], killed["process"], killed["attrs"]["signal"]) == (2324239, "litgpt", "SIGABRT")
    assert killed["attrs"]["command"].startswith("litgpt pretrain ")


def test_cuda_driver_error_out_of_memory_is_a_gpu_oom() -> None:
    events = events_of("vllm_enginecore_cuda_driver_error_oom_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["pid"], oom["attrs"]["exc_message"]) == (1, 7, 77, "CUDA driver error: out of memory")
    other, _, _ = _parse("RuntimeError: CUDA driver error: an illegal memory access was encountered\n")
    assert json.loads(other["attrs"][0])["cuda_error"] == "an illegal memory access was encountered"


def test_called_process_error_for_a_child_a_signal_ended_is_a_kill() -> None:
    # Python 2's wording of a negative return code (nephila/djangocms-installer#298, with the terminal's wrapping).
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python2.7/subprocess.py", line 574, in check_output\n'
        "    raise CalledProcessError(retcode, cmd, output=output)\n"
        "subprocess.CalledProcessError: Command '['/home/ashr/env/bin/python', u'-W'                                        "
        "                                                , u'ignore', u'manage.py', u'migrate']' returned non-zero exit status -9\n"
    )
    killed = one(_parse(text)[0], "process_killed")
    assert (killed["n_lines"], killed["exit_code"], killed["attrs"]["signal"]) == (4, -9, "SIGKILL")
    exited, _, _ = _parse(text.replace("status -9", "status 1"))
    assert exited["kind"].to_list() == ["traceback"]


def test_a_cuda_runtime_error_named_by_the_runtime_api_is_a_cuda_error() -> None:
    # CuPy's CUDARuntimeError, captured on an H200 after a kernel wrote through a wild pointer (Xid 31 in dmesg)
    events, _, _ = _parse(
        "Traceback (most recent call last):\n"
        '  File "gpu_fault.py", line 13, in <module>\n'
        "    cupy.cuda.runtime.deviceSynchronize()\n"
        '  File "cupy_backends/cuda/api/runtime.pyx", line 146, in cupy_backends.cuda.api.runtime.check_status\n'
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered\n"
    )
    (traceback,) = events.filter(pl.col("kind") == "traceback").to_dicts()
    assert json.loads(traceback["attrs"])["cuda_error"] == "cudaErrorIllegalAddress"


def test_open_mpi_tag_output_is_the_lines_rank() -> None:
    # `mpirun --tag-output` ("[job,rank]<stream>:") and horovodrun ("[rank]<stream>:"): the rank's tag, then the line as printed.
    events = events_of("mpi_horovod_tag_output_rank_traceback_01.log")
    assert [(line, a.get("rank")) for line, a in zip(events["line"], attrs_of(events), strict=True)][:4] == [(1, 0), (2, 1), (5, 0), (6, 1)]
    traceback = one(events, "traceback")
    assert (traceback["line"], traceback["n_lines"], traceback["attrs"]["rank"]) == (10, 7, 1)
    assert traceback["message"].splitlines()[1] == '  File "train_1.py", line 186, in <module>'
    tf = events_of("mpi_horovod_tag_output_tf_cuda_driver_oom_01.log").row(0, named=True)
    assert (tf["kind"], tf["mem_requested_bytes"]) == ("cuda_oom", 3173555200)
    assert tf["ts"] == datetime(2019, 8, 26, 18, 41, 15, 943905, tzinfo=UTC)
    gloo, _, _ = _parse("[0]<stderr>:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    assert (gloo["kind"][0], json.loads(gloo["attrs"][0])["rank"]) == ("cuda_oom", 0)


def test_a_launchers_stream_prefix_is_peeled() -> None:
    events = events_of("pytorch_accelerate_stderr_prefix_elastic_failed_01.log")
    traceback = one(events, "traceback")
    assert traceback["message"].startswith("Traceback (most recent call last):\n  File ")
    assert "exc_type" not in traceback["attrs"]  # the traceback is cut before its exception; "stderr" is no exception's name
    failed = events.filter(pl.col("line") == 4).row(0, named=True)
    assert (failed["pid"], failed["exit_code"], failed["severity"]) == (153932, 1, "error")


def test_tensorrt_logger_lines_and_their_out_of_memory() -> None:
    events = events_of("pytorch_tensorrt_logger_cuda_runtime_oom_01.log")
    assert events.select("line", "kind", "severity", "format").rows() == [
        (1, "cuda_oom", "error", "tensorrt"), (2, "cuda_oom", "warning", "tensorrt"), (3, "log", "error", "tensorrt"),
    ]
    assert events["ts"].to_list() == [datetime(2024, 5, 8, 20, 47, 56, tzinfo=UTC)] * 3  # month first
    assert events["mem_requested_bytes"].to_list() == [None, 13476831488, None]
    # TensorRT-LLM's Python logger names the rank (NVIDIA/TensorRT-LLM#7818); its C++ one has no time.
    ranked, _, _ = _parse(
        "[09/17/2025-21:24:19] [TRT-LLM] [RANK 2] [E] Error executing load_single_module with args ('model.layers.9.mlp.gate_up_proj',"
        " Linear()): CUDA out of memory. Tried to allocate 40.00 MiB. GPU 0 has a total capacity of 22.07 GiB of which 20.62 MiB is free.\n"
        "[TensorRT-LLM][INFO] Refreshed the MPI local session\n"
    )
    assert ranked.select("kind", "severity", "gpu_index", "mem_requested_bytes").rows() == [
        ("cuda_oom", "error", 0, mib(40)), ("log", "info", None, None),
    ]
    assert json.loads(ranked["attrs"][0])["rank"] == 2 and ranked["ts"][0] == datetime(2025, 9, 17, 21, 24, 19, tzinfo=UTC)
    assert ranked["message"][1] == "Refreshed the MPI local session"


def test_tensorrt_llm_cuda_runtime_out_of_memory_and_its_cpp_frames() -> None:
    events = events_of("pytorch_trtllm_cudamallocasync_oom_frames_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["n_lines"]) == (1, 15)
    assert oom["message"].splitlines()[-1].startswith("1       0x762b1a2a241c void tensorrt_llm::common::check<cudaError>(")
    # Triton's model-load failure (triton-inference-server/tensorrtllm_backend#281), the C++ error alone (NVIDIA/TensorRT-LLM#498).
    triton, _, _ = _parse(
        "Model 'tensorrt_llm' loading failed with error: version 1 is at UNAVAILABLE state: Internal: unexpected error when creating"
        " modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory"
        " (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)\n"
    )
    assert triton["kind"].to_list() == ["cuda_oom"]
    bench, _, _ = _parse(
        "[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory"
        " (/data/TensorRT-LLM/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)\n"
        "1       0x5601283f70e5 void tensorrt_llm::common::check<cudaError>(cudaError, char const*, char const*, int) + 149\n"
        "2       0x7ff6ff543918 virtual thunk to tensorrt_llm::runtime::GenericTensor<tensorrt_llm::runtime::CudaAllocatorAsync>::reshape"
        "(nvinfer1::Dims32 const&) + 456\n"
    )
    assert bench.select("kind", "n_lines", "severity").rows() == [("cuda_oom", 3, "error")]


def test_slurm_accounting_kill_over_the_memory_limit() -> None:
    events = events_of("slurm_step_exceeded_memory_limit_being_killed_01.log")
    killed = events.filter(pl.col("kind") == "process_killed").sort("line")
    assert killed.select("line", "host", "mem_used_bytes", "mem_total_bytes").rows() == [
        (5, "falkor7", 52917772 * 1024, 20971520 * 1024), (9, "falkor7", None, None),
    ]
    assert attrs_of(killed) == [
        {"signal": "SIGKILL", "slurm_step": "1141810.0", "oom": "slurm_memory_limit"}, {"signal": "SIGKILL"},
    ]
    job = one(events_of("slurm_job_exceeded_memory_limit_being_killed_01.log"), "process_killed")
    assert (job["host"], job["attrs"]["slurm_step"], job["mem_total_bytes"]) == (None, "42664148", 4 * 1024**3)
    # "Exceeded job memory limit at some point." is a peak seen, no kill.
    at_some_point, _, _ = _parse("slurmstepd: error: Exceeded job memory limit at some point.\n")
    assert at_some_point.select("kind", "severity").rows() == [("log", "error")]


def test_ray_out_of_memory_error_without_the_tasks_memory_names_the_nodes() -> None:
    event = one(events_of("ray_task_oom_node_memory_without_task_01.log").filter(pl.col("line") == 1), "log")
    assert (event["n_lines"], event["mem_used_bytes"], event["mem_total_bytes"], event["rss_bytes"]) == (2, gib(54.86), gib(57.60), None)
    assert event["attrs"]["oom"] == "ray_memory_monitor"


def test_ipython_traceback_is_one_traceback_with_its_exception() -> None:
    # IPython 7 (ColabFold's notebook): frames as "path in function(…)" and numbered code lines, apart by blank lines.
    oom = one(events_of("jax_ipython_runtimeerror_resource_exhausted_01.log"), "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["mem_requested_bytes"]) == (1, 8, 14285187448)
    assert (oom["attrs"]["exc_type"], oom["attrs"]["exc_message"]) == (
        "RuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.",
    )
    # IPython 8 (tapnet's notebook), cut before its exception: the rule of dashes to the last frame.
    cut = one(events_of("jax_ipython_cell_traceback_xla_buffers_01.log"), "traceback")
    assert (cut["line"], cut["n_lines"]) == (11, 13)
    # A line after a blank one that is no frame of it, or a line with a time, is the log's again.
    text = (
        "---------------------------------------------------------------------------\n"
        "OutOfMemoryError                          Traceback (most recent call last)\n"
        "Cell In[5], line 1\n"
        "----> 1 trainer.train()\n"
        "\n"
        "File /opt/conda/lib/python3.10/site-packages/transformers/trainer.py:1539, in Trainer.train(self, resume_from_checkpoint)\n"
        "-> 1539     return inner_training_loop(\n"
        "\n"
        "OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB.\n"
        "epoch 1 done\n"
        "---------------------------------------------------------------------------\n"
        "KeyboardInterrupt                         Traceback (most recent call last)\n"
        "Cell In[6], line 1\n"
        "\n"
        "Saving the model\n"
        "2024-01-01 10:00:00,000 INFO next cell ran\n"
    )
    events, _, _ = _parse(text)
    assert events.select("line", "n_lines", "kind").rows() == [
        (1, 7, "cuda_oom"), (10, 1, "log"), (11, 3, "traceback"), (15, 1, "log"), (16, 1, "log"),  # blank lines are no record's
    ]


def test_azure_pipelines_agent_reports_the_exit_code_however_quoted() -> None:
    # The agent's own report of a task's process, under its 7-digit stamps.
    killed = one(events_of("ci_azure_pipelines_exit_code_137_returned_from_process_01.log"), "process_killed")
    assert (killed["line"], killed["exit_code"], killed["severity"], killed["attrs"]["signal"]) == (13, 137, "error", "SIGKILL")
    assert (killed["ts"], killed["ts_quality"]) == (utc(2017, 3, 10, 18, 44, 22, 793625), "exact")
    # Docker-exec's report puts the code and the container's id in backticks; "id" there is a label, not a name.
    exec_killed = one(events_of("ci_azure_pipelines_docker_exec_exit_code_backticks_137_01.log"), "process_killed")
    assert (exec_killed["line"], exec_killed["exit_code"], exec_killed["container"], exec_killed["container_id"]) == (
        2, 137, None, "81c9e9bd6fb873d6fbc1403f0906e475e7c99f4a12f73241f5969ffb94780113",
    )
    # The Bash task's wording quotes it.
    events, _, _ = _parse("2024-05-01T12:00:00.1234567Z ##[error]Bash exited with code '137'.\n")
    assert events.select("kind", "exit_code", "severity").rows() == [("process_killed", 137, "error")]


def test_mps_backend_out_of_memory_is_a_device_oom_with_its_limit() -> None:
    oom = one(events_of("pytorch_mps_backend_oom_fooocus_01.log"), "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["gpu_index"], oom["severity"]) == (1, 1, None, "error")
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"], oom["attrs"]["allocated_bytes"]) == (mib(6.25), gib(9.07), gib(8.89))
    assert oom["attrs"]["exc_type"] == "RuntimeError"


def test_tgi_launcher_shard_oom_and_its_tracing_lines() -> None:
    events = events_of("pytorch_tgi_shard_cuda_oom_rank_field_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["gpu_index"], oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (1, 0, mib(128), gib(15.77))
    assert (oom["attrs"]["allocated_bytes"], oom["attrs"]["free_bytes"], oom["attrs"]["reserved_total_bytes"]) == (
        gib(15.37), mib(13.62), gib(15.40),
    )
    stamped = events.filter(pl.col("ts").is_not_null())
    assert stamped.select("line", "severity", "ts_quality").rows() == [(4, "error", "exact"), (5, "info", "exact")]
    assert stamped["ts"][0] == utc(2023, 8, 17, 10, 23, 27, 32737)


def test_a_driver_older_than_the_cuda_build_is_a_cuda_error() -> None:
    # PyTorch warns and falls back to the CPU; the job then runs without its GPU.
    events = events_of("pytorch_cuda_init_driver_too_old_warning_01.log")
    warning = events.row(0, named=True)
    assert (warning["kind"], warning["severity"]) == ("log", "error")
    assert json.loads(warning["attrs"])["cuda_error"] == "NVIDIA driver on your system is too old (found version 12080)"
    runtime, _, _ = _parse("2025-01-02 03:04:05 ERROR cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version")
    assert json.loads(runtime["attrs"][0])["cuda_error"] == "CUDA driver version is insufficient for CUDA runtime version"


def test_a_python_warning_and_its_source_line_are_one_event() -> None:
    # warnings.warn prints the warning, then the source line that warned, indented: one event, not two.
    events = events_of("pytorch_userwarning_source_line_01.log")
    assert events.select("line", "n_lines", "kind", "severity").rows() == [
        (1, 1, "log", None), (2, 1, "log", None), (3, 1, "log", None), (4, 2, "log", "warning"), (6, 2, "log", "warning"),
        (8, 11, "traceback", "error"),
    ]
    assert events["message"][3].endswith("UserWarning: To copy construct from a tensor, it is recommended to use "
                                         "sourceTensor.clone().detach() or sourceTensor.clone().detach().requires_grad_(True), "
                                         "rather than torch.tensor(sourceTensor).\n  ngraph = torch.tensor(vgraph.repeat(N,1).view(N,N,-1),requires_grad=False)")
    # A Windows path has a drive and spaces.
    windows, _, _ = _parse(
        "B:\\ML Models\\src\\utils.py:30: YAMLLoadWarning: calling yaml.load() without Loader=... is deprecated.\n"
        "  config = yaml.load(f)\n"
    )
    assert windows.select("line", "n_lines", "severity").rows() == [(1, 2, "warning")]
    assert windows["message"][0].endswith("is deprecated.\n  config = yaml.load(f)")


def test_a_captured_warning_keeps_its_source_line_and_a_lone_warning_stays_alone() -> None:
    events, _, _ = _parse(
        "2024-05-01 12:00:00,123 - py.warnings - WARNING - /opt/x/train.py:12: FutureWarning: `foo` is deprecated\n"
        "  warnings.warn(\n"
        "/x/y.py:3: UserWarning: lone\n"
        "building examples...\n"
    )
    assert events.select("line", "n_lines", "severity", "ts_quality").rows() == [
        (1, 2, "warning", "exact"), (3, 1, "warning", "missing"), (4, 1, None, "missing"),
    ]


def test_a_tgi_shard_traceback_with_blank_separated_frames_ends_at_its_rank_field() -> None:
    # text-generation-inference issue #1354: the launcher relays a shard's traceback with a blank line after each
    # frame and the span's fields on a line of their own; n_lines counts the 8 lines that are not blank.
    frame = 'File "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/custom_modeling/flash_rw_modeling.py"'
    events, _, _ = _parse(
        f"  {frame}, line 557, in <listcomp>\n    FlashRWLayer(layer_id, config, weights)\n\n"
        f"  {frame}, line 385, in __init__\n    self.self_attention = FlashRWAttention(\n\n"
        f"  {frame}, line 138, in __init__\n    raise ValueError(\n\n"
        "ValueError: `num_heads` must be divisible by `num_shards` (got `num_heads`: 71 and `num_shards`: 2\n"
        " rank=0\n"
        "2023-12-16T09:36:24.632149Z ERROR text_generation_launcher: Shard 0 failed to start\n"
    )
    assert events.select("line", "n_lines", "kind").rows() == [(1, 8, "traceback"), (12, 1, "log")]
    traceback = one(events, "traceback")
    assert traceback["attrs"]["exc_type"] == "ValueError"
    assert traceback["message"].endswith("(got `num_heads`: 71 and `num_shards`: 2\n rank=0")


def test_nemo_indented_traceback_and_a_line_interleaved_in_a_traceback() -> None:
    # NeMo's "Model instantiation failed!" (line 14) prints the traceback indented inside its message, after two
    # unstamped lines; uvicorn's "INFO:     Application startup complete." (line 48) comes out amid the next traceback's frames.
    events = events_of("pytorch_nemo_instantiation_failed_indented_traceback_01.log").sort("line")
    by_line = {row["line"]: row for row in events.iter_rows(named=True)}
    nemo = by_line[14]
    assert (nemo["kind"], nemo["severity"], nemo["n_lines"], nemo["ts"]) == ("log", "error", 3, datetime(2026, 6, 8, 14, 47, 46, tzinfo=UTC))
    indented = by_line[17]
    assert (indented["kind"], indented["n_lines"], indented["ts"], indented["ts_quality"]) == (
        "traceback", 18, datetime(2026, 6, 8, 14, 47, 46, tzinfo=UTC), "inherited",
    )
    attrs = json.loads(indented["attrs"])
    assert attrs["exc_type"] == "RuntimeError"
    assert attrs["exc_message"].startswith("The NVIDIA driver on your system is too old (found version 12060).")
    assert attrs["last_frame"] == "/usr/local/lib/python3.11/site-packages/torch/cuda/__init__.py:491 in _lazy_init"
    # The traceback under "Failed to preload" runs on past the interleaved line, which stays a line of its own.
    tail = by_line[37]
    assert (tail["kind"], tail["severity"], tail["n_lines"], tail["ts_quality"]) == ("traceback", "error", 22, "inherited")
    assert json.loads(tail["attrs"])["exc_type"] == "TypeError"
    assert (by_line[48]["kind"], by_line[48]["severity"], by_line[48]["n_lines"]) == ("log", "info", 1)
    assert not set(range(49, 60)) & set(by_line)


def test_indented_traceback_exception_only_at_its_headers_indentation() -> None:
    # A traceback cut above its exception line: the last frame's code line ("else:") is not an exception.
    text = (
        "[NeMo E 2024-05-01 12:00:00 common:506] Model instantiation failed!\n"
        "    Traceback (most recent call last):\n"
        '      File "/x/common.py", line 485, in from_config_dict\n'
        "        else:\n"
    )
    row = _parse(text)[0].filter(pl.col("kind") == "traceback").row(0, named=True)
    attrs = json.loads(row["attrs"]) if row["attrs"] else {}
    assert "exc_type" not in attrs
    assert (row["ts"], row["ts_quality"]) == (datetime(2024, 5, 1, 12, 0, tzinfo=UTC), "inherited")


def test_a_file_cut_inside_a_traceback_whose_every_line_is_stamped_opens_its_record_there() -> None:
    # vllm-project/vllm-ascend#1127: vLLM's header on every line, the file starting at a frame's code line. Read alone,
    # no line opened a record by its shape, and the grouping was skipped; among other files it was one record.
    header = "(NPURayWorkerWrapper pid=45464) ERROR 06-09 06:57:48 worker_base.py:581] "
    text = (
        f"{header}    return fn(*args, **kwargs)\n"
        f'{header}  File "/usr/lib/python3.10/site-packages/torch/utils/_device.py", line 106, in __torch_function__\n'
        f"{header}RuntimeError: NPU out of memory. Tried to allocate 30.00 MiB (NPU 3; 60.96 GiB total capacity; 14.24 MiB free)\n"
    )
    events = _parse(text)[0]
    assert events.select("line", "n_lines", "kind", "gpu_index").rows() == [(1, 3, "cuda_oom", 3)]


def test_jenkins_lost_wrapper_exit_code_minus_one_is_no_signal() -> None:
    # Jenkins' sh step reports a script it lost track of (after a restart) as exit code -1: not SIGHUP, not a kill.
    events = events_of("ci_jenkins_script_returned_exit_code_minus1_01.log")
    row = events.filter(pl.col("line") == 3).row(0, named=True)
    assert (row["kind"], row["severity"], row["exit_code"], row["attrs"]) == ("log", "error", -1, None)
    # A Python launcher's negative code is still the signal that killed the child.
    deepspeed = _parse("[2024-05-01 12:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['python', 'train.py'] exits with return code = -9\n")[0]
    assert json.loads(deepspeed.row(0, named=True)["attrs"])["signal"] == "SIGKILL"


def test_untagged_ranks_interleaved_tracebacks_are_one_event_each() -> None:
    # Twelve MPI ranks print the same traceback at once, untagged, their lines shuffled: each header opens its
    # own event, and no event names another exception than the one the ranks raised.
    events = events_of("mpi_openmpi_untagged_rank_tracebacks_interleaved_01.log")
    tracebacks = events.filter(pl.col("kind") == "traceback").sort("line")
    assert tracebacks["line"].to_list() == [1, 3, 10, 16, 17, 19, 31, 33, 36, 46, 49, 56]
    assert set(tracebacks["severity"]) == {"error"}
    exc_types = {json.loads(a).get("exc_type") if a else None for a in tracebacks["attrs"]}
    assert exc_types == {"TypeError", None}
    assert tracebacks.filter(pl.col("attrs").str.contains('"exc_type"'))["line"].to_list() == [3, 10, 19, 36, 49, 56]
    # mpiexec's report of the first rank that failed.
    exit_row = events.filter(pl.col("line") == 70).row(0, named=True)
    assert (exit_row["exit_code"], exit_row["severity"]) == (1, "error")


def test_jenkins_durable_task_lost_script_events() -> None:
    events = events_of("ci_jenkins_script_returned_exit_code_minus1_01.log").sort("line")
    assert attrs_of(events)[:2] == [{"ci_event": "controller_restart"}, {"ci_event": "script_lost"}]


def test_yarn_kill_over_a_containers_memory_limit() -> None:
    # Spark's YARN backend repeats the NodeManager's diagnostics on three lines (endpoint, scheduler, task set): each is
    # the kill, with the physical memory it quotes as used and limit (Hadoop's 1024-based "8.2 GB").
    events = events_of("spark_yarn_container_killed_physical_memory_01.log")
    killed = events.filter(pl.col("kind") == "process_killed").sort("line")
    assert killed.select("line", "severity", "mem_used_bytes", "mem_total_bytes").rows() == [
        (1, "warning", gib(8.2), gib(8)), (2, "error", gib(8.2), gib(8)), (3, "warning", gib(8.2), gib(8)),
    ]
    assert attrs_of(killed) == [{"yarn_limit": "physical", "oom": "yarn_memory_limit"}] * 3
    assert events.filter(pl.col("line") == 4)["kind"].to_list() == ["log"]
    # The ApplicationMaster's report: the container's process and id, its exit status (-104: KILLED_EXCEEDED_PMEM), and
    # of the two memories the NodeManager quotes, the physical one whose limit it broke.
    # The process tree the NodeManager dumps under its diagnostics is part of that one message.
    am_events = events_of("tf_easyrec_yarn_am_container_beyond_physical_memory_01.log")
    assert am_events.height == 1
    am = one(am_events, "process_killed")
    assert (am["line"], am["n_lines"], am["pid"], am["container"], am["exit_code"]) == (
        1, 3, 8788, "container_1598507699008_0094_01_000010", -104,
    )
    assert (am["mem_used_bytes"], am["mem_total_bytes"], am["ts"]) == (gib(9.8), gib(9.8), datetime(2020, 9, 4, 11, 43, 51, 536000, tzinfo=UTC))
    # A virtual-memory kill quotes the virtual pair (an OpenPAI job's diagnostics, microsoft/pai issue #2158; its last row cut short).
    vmem, _, _ = _parse(
        "[2019-02-13 07:44:33.796]Container [pid=188212,containerID=container_e04_1548839040935_6713_01_000002] is running beyond"
        " virtual memory limits. Current usage: 264.3 MB of 1 GB physical memory used; 2.8 GB of 2.1 GB virtual memory used."
        " Killing container.\n"
        "Dump of the process-tree for container_e04_1548839040935_6713_01_000002 :\n"
        "|- PID PPID PGRPID SESSID CMD_NAME USER_MODE_TIME(MILLIS) SYSTEM_TIME(MILLIS) VMEM_USAGE(BYTES) RSSMEM_USAGE(PAGES) FULL_CMD_LINE\n"
        "|- 188295 188212 188212 188212 (bash) 0 1 18620416 780 /bin/bash -c source YarnContainerScripts/0.sh\n"
    )
    assert vmem.select("kind", "n_lines", "pid", "mem_used_bytes", "mem_total_bytes").rows() == [
        ("process_killed", 4, 188212, gib(2.8), gib(2.1)),
    ]
    assert attrs_of(vmem) == [{"yarn_limit": "virtual", "oom": "yarn_memory_limit"}]
    # Hadoop 3.1+ words the limit "beyond the 'PHYSICAL' memory limit".
    hadoop3, _, _ = _parse(
        "Container [pid=1,containerID=container_1_0001_01_000002] is running 31457280B beyond the 'PHYSICAL' memory limit."
        " Current usage: 1.0 GB of 1 GB physical memory used; 2.6 GB of 2.1 GB virtual memory used. Killing container.\n"
    )
    assert hadoop3.select("kind", "mem_used_bytes", "mem_total_bytes").rows() == [("process_killed", gib(1.0), gib(1))]


def test_yarn_container_killed_on_request_names_its_exit_code() -> None:
    # A MapReduce client's report of a failed attempt (Hadoop 2.7.5; public-code index id 6797265373): the NodeManager's
    # diagnostics come unstamped under it, "Exit code is 137" as well as "non-zero exit code 137".
    events, _, _ = _parse(
        "18/01/08 22:02:44 INFO mapreduce.Job: Task Id : attempt_1515459417185_0001_m_000001_0, Status : FAILED\n"
        "Container killed on request. Exit code is 137\n"
        "Container exited with a non-zero exit code 137\n"
        "Killed by external signal\n"
    )
    assert events.sort("line").select("line", "kind", "exit_code").rows() == [
        (1, "log", None), (2, "process_killed", 137), (3, "process_killed", 137), (4, "log", None),
    ]
    assert attrs_of(events.filter(pl.col("line") == 2)) == [{"signal": "SIGKILL"}]


def test_triton_fatal_signal_and_its_boost_stack_are_one_kill() -> None:
    # Triton's handler of a fatal signal prints "Signal (11) received." and the boost stacktrace under it, unstamped.
    events = events_of("tf_triton_signal11_boost_stacktrace_01.log")
    crash = one(events, "process_killed")
    assert (crash["line"], crash["n_lines"], crash["severity"], crash["ts_quality"]) == (2, 8, "error", "inherited")
    assert crash["ts"] == datetime(2025, 1, 9, 4, 42, 35, 404094, tzinfo=UTC)
    assert crash["attrs"]["signal"] == "SIGSEGV"
    assert events.height == 2
    # The signal it shuts down on gracefully is no kill.
    graceful, _, _ = _parse("I0602 16:34:04.094388 1 server.cc:100] Interrupt signal (15) received.\n")
    assert graceful["kind"].to_list() == ["log"]


def test_cloud_logging_severity_before_the_time() -> None:
    # Triton's output as Google Cloud Logging's console shows it (triton-inference-server/server issue #7016): the entry's
    # severity, then its time, then the line.
    events, _, _ = _parse(
        "INFO 2024-03-20T12:09:07.685054971Z == Triton Inference Server ==\n"
        "INFO 2024-03-20T12:09:07.687115734Z NVIDIA Release 24.02 (build 83572450)\n"
    )
    assert events.select("ts", "ts_quality", "format", "severity", "message").rows() == [
        (datetime(2024, 3, 20, 12, 9, 7, 685054, tzinfo=UTC), "exact", "iso8601", "info", "== Triton Inference Server =="),
        (datetime(2024, 3, 20, 12, 9, 7, 687115, tzinfo=UTC), "exact", "iso8601", "info", "NVIDIA Release 24.02 (build 83572450)"),
    ]


def test_spark_names_the_failed_container_and_its_node() -> None:
    # Spark's reason for a lost executor, as a job's driver reported it (public-code index id 46831626100; the node redacted there).
    events, _, _ = _parse(
        "Caused by: org.apache.spark.SparkException: Job aborted due to stage failure: Task 2 in stage 3.0 failed 4 times, most"
        " recent failure: Lost task 2.3 in stage 3.0 (TID 23, ip-xxx-xxx-xx-xxx.compute.internal, executor 4): ExecutorLostFailure"
        " (executor 4 exited caused by one of the running tasks) Reason: Container marked as failed:"
        " container_1516900607498_6585_01_000008 on host: ip-xxx-xxx-xx-xxx.compute.internal. Exit status: 137. Diagnostics:"
        " Container killed on request. Exit code is 137\n"
    )
    assert events.select("kind", "exit_code", "container", "host").rows() == [
        ("process_killed", 137, "container_1516900607498_6585_01_000008", "ip-xxx-xxx-xx-xxx.compute.internal"),
    ]
    assert attrs_of(events) == [{"signal": "SIGKILL"}]


# --- llama.cpp / Ollama (ggml's CUDA backend), docker compose and Docker Desktop views ---------------------------


def test_ggml_cudamalloc_oom_under_a_compose_container_name() -> None:
    # `docker compose logs` of a service given a container_name: its tag has no replica number ("ollama  | ").
    events = events_of("docker_compose_ollama_cudamalloc_oom_go_panic_01.log")
    assert set(events["container"]) == {"ollama"}
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["severity"], oom["gpu_index"], oom["mem_requested_bytes"]) == (11, "error", 0, mib(35533.34))
    assert oom["message"].startswith("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 35533.34 MiB")
    assert "exc_type" not in oom["attrs"]  # ggml's function name is no exception class
    panic = one(events, "traceback")
    assert (panic["line"], panic["n_lines"], panic["attrs"]["exc_type"]) == (14, 4, "panic")
    assert events.height == 14


def test_ggml_cudamalloc_oom_and_a_go_panic_whose_tabs_docker_desktop_dropped() -> None:
    events = events_of("docker_desktop_ollama_cudamalloc_oom_go_panic_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["gpu_index"], oom["mem_requested_bytes"]) == (3, 0, mib(3257.82))
    assert (oom["ts"], oom["ts_quality"]) == (utc(2025, 3, 6, 23, 36, 39), "exact")
    # The stack's file lines ("runner.go:851 +0x375") lost their tab: still the panic's, up to its last frame.
    panic = one(events, "traceback")
    assert (panic["line"], panic["n_lines"]) == (6, 6)
    last = events.row(-1, named=True)
    assert (last["line"], last["kind"], last["severity"], last["exit_code"], last["format"]) == (13, "log", "error", 2, "logfmt")


def test_compose_tag_without_a_number_needs_the_padding_and_is_no_level() -> None:
    text = "Train | loss 0.5\nTrain | loss 0.4\n"
    assert _parse(text)[0]["container"].to_list() == [None, None]
    levels, _, _ = _parse("INFO     | loading\nERROR    | failed\n")
    assert levels["container"].to_list() == [None, None]
    assert levels["severity"].to_list() == ["info", "error"]


def test_runner_events_that_end_a_job_carry_its_level() -> None:
    lost = one(events_of("ci_github_actions_self_hosted_runner_lost_communication_01.log"), "log")
    assert (lost["severity"], lost["attrs"]) == ("error", {"ci_event": "runner_lost"})
    events = events_of("ci_github_actions_exit137_05_shutdown.log")
    assert events["severity"].to_list() == ["error", "error", "warning"]


def test_accelerator_error_cuda_oom_chained_into_a_cut_traceback() -> None:
    # PyTorch 2.8+ raises torch.AcceleratorError for a CUDA error; the traceback it was handled in is cut before its exception.
    oom = one(events_of("pytorch_accelerator_error_cuda_oom_chained_cut_01.log"), "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["severity"]) == (1, 18, "error")
    assert (oom["attrs"]["exc_type"], oom["attrs"]["exc_message"]) == ("torch.AcceleratorError", "CUDA error: out of memory")


def test_llama_cpp_prefixed_log_gives_the_level_and_no_clock() -> None:
    # llama-server with --log-prefix --log-timestamps, from a comment (Aidan24, 2026-08-01) on ggml-org/llama.cpp pull request
    # #26297: the time since start (minutes.seconds.ms.us) is no clock time; the letter is the level.
    events, _, _ = _parse(
        "1.06.520.077 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: cudaMalloc failed: out of memory\n"
        "1.06.520.084 E ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 54262464512\n"
        "1.06.520.086 E graph_reserve: failed to allocate compute buffers\n"
        "1.06.520.107 W sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism\n"
        "1.07.304.130 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 50176, kv_unified = 'false'\n"
    )
    assert events.select("kind", "severity", "ts_quality", "gpu_index", "mem_requested_bytes").rows() == [
        ("cuda_oom", "error", "missing", 1, mib(51748.72)), ("log", "error", "missing", None, None), ("log", "error", "missing", None, None),
        ("log", "warning", "missing", None, None), ("log", "info", "missing", None, None),
    ]
    assert events["message"][2] == "graph_reserve: failed to allocate compute buffers"


def test_github_actions_toolkit_names_the_process_that_failed() -> None:
    events = events_of("ci_github_actions_raw_process_failed_exit137_01.log")
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "process", "exit_code", "ts").rows() == [
        (3, None, None, utc(2024, 4, 14, 22, 5, 23, 860590)), (6, "bash", 137, utc(2024, 4, 14, 22, 5, 47, 763030)),
    ]
    assert [a["signal"] for a in attrs_of(killed)] == ["SIGKILL", "SIGKILL"]
    windows, _, _ = _parse("##[error]The process 'C:\\Program Files\\Git\\bin\\bash.exe' failed with exit code 1\n")
    assert windows.select("kind", "severity", "process", "exit_code").rows() == [("log", "error", "bash.exe", 1)]


def test_vllm_startup_short_of_free_gpu_memory_is_a_gpu_oom() -> None:
    # vLLM 0.9+ will not start where another process holds the memory its --gpu-memory-utilization share needs.
    oom = one(events_of("vllm_v1_free_memory_short_on_startup_01.log"), "cuda_oom")
    assert (oom["process"], oom["pid"], oom["gpu_index"], oom["severity"]) == ("EngineCore_DP0", 6940, 1, "error")
    assert (oom["mem_total_bytes"], oom["mem_requested_bytes"], oom["attrs"]["free_bytes"]) == (gib(22.05), gib(19.84), gib(19.77))
    assert (oom["ts"], oom["attrs"]["exc_type"]) == (utc(2026, 2, 24, 20, 21, 58), "ValueError")


def test_cloud_logging_console_severity_yields_to_the_lines_own_level() -> None:
    # Argo's executor in its init container, as the Logs Explorer showed it (argoproj/argo-workflows issue #13373, yonirab,
    # 2024-08-22): GKE gives every line written to stderr the severity ERROR; logrus' level=info is the line's own. The third
    # line is made up: a line with no level of its own keeps the console's.
    events, _, _ = _parse(
        'ERROR 2024-08-22T06:28:01.550152336Z [resource.labels.containerName: init] time="2024-08-22T06:28:01.549Z" level=info'
        ' msg="Starting Workflow Executor" version=v3.5.6\n'
        'ERROR 2024-08-22T06:28:01.554005551Z [resource.labels.containerName: init] time="2024-08-22T06:28:01.553Z" level=info'
        ' msg="Using executor retry strategy" Duration=1s Factor=1.6 Jitter=0.5 Steps=5\n'
        "ERROR 2024-08-22T06:28:01.665699834Z oops\n"
    )
    assert events.select("severity", "container", "format", "ts").rows() == [
        ("info", "init", "logfmt", utc(2024, 8, 22, 6, 28, 1, 550152)), ("info", "init", "logfmt", utc(2024, 8, 22, 6, 28, 1, 554005)),
        ("error", None, "iso8601", utc(2024, 8, 22, 6, 28, 1, 665699)),
    ]
    assert events["message"][0] == 'msg="Starting Workflow Executor" version=v3.5.6'


def test_a_containers_oom_kill_reason_as_argo_and_jenkins_word_it() -> None:
    # Argo's step message (argoproj/argo-workflows issue #13373's title and hadim's comment on #8456), and the Kubernetes
    # plugin's report of an agent container (jenkinsci/kubernetes-plugin pull request #772, its test's expected line).
    events, _, _ = _parse("OOMKilled (exit code 137)\nContainer jnlp was terminated (Exit Code: 137, Reason: OOMKilled)\n")
    assert events.select("kind", "exit_code").rows() == [("process_killed", 137), ("process_killed", 137)]
    assert attrs_of(events) == [{"signal": "SIGKILL", "reason": "OOMKilled"}] * 2


def test_a_word_after_container_is_no_name_unless_marked_as_one() -> None:
    # Made-up lines: a name is labelled, quoted or closed by a colon; "container to" is a sentence's.
    events, _, _ = _parse(
        "Error (exit code 137): failed to wait for main container to complete\n"
        'ERROR: Job failed: command terminated with exit code 137 in container "build"\n'
        "container: trainer exited with code 137\n"
    )
    assert events["container"].to_list() == [None, "build", "trainer"]


def test_nccl_cuda_failure_with_the_errors_number_is_a_gpu_oom() -> None:
    # NCCL 2.19+'s wording, as quoted from runs' logs in public notes (public-code index ids 61024599153, 60791250268).
    events, _, _ = _parse(
        "include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n"
        "include/alloc.h:320 (ncclCuMemAlloc) NCCL WARN Cuda failure 2 'out of memory'\n"
    )
    assert events.select("kind", "severity").rows() == [("cuda_oom", "warning"), ("cuda_oom", "warning")]


def test_xla_cudamallocasync_oom_with_what_cuda_reported() -> None:
    events = events_of("jax_xla_cudamallocasync_oom_reported_by_cuda_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["severity"], oom["gpu_index"]) == (1, 2, "error", 1)
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"], oom["attrs"]["free_bytes"]) == (1225195446464, 85095874560, 22635544576)
    # The allocator's stats and histogram are log lines, the unstamped ones at the time of the line above them.
    assert events.height == 17
    assert set(events.filter(pl.col("line").is_between(4, 10))["ts_quality"]) == {"inherited"}


def test_tgi_shard_a_signal_ended_is_a_kill_of_its_rank() -> None:
    events = events_of("pytorch_tgi_shard_signal4_cannot_start_01.log")
    killed = one(events, "process_killed")
    assert (killed["line"], killed["severity"], killed["ts"]) == (5, "error", utc(2024, 3, 6, 17, 53, 31, 52444))
    assert killed["attrs"] == {"rank": 0, "signal": "SIGILL"}
    # The shard's empty standard error: its span's field closes the launcher's line above.
    assert events.filter(pl.col("line") == 3)["n_lines"].to_list() == [2]


def test_gitlab_job_timeout_terminates_its_script() -> None:
    events = events_of("ci_gitlab_step_script_timeout_terminated_01.log")
    assert events.select("kind", "severity").rows() == [("process_killed", "error"), ("log", "warning"), ("log", "error")]
    assert attrs_of(events) == [{"signal": "SIGTERM"}, {"ci_event": "timeout"}, {"ci_event": "timeout"}]


def test_circleci_no_output_timeout() -> None:
    # nspcc-dev/neo-go pull request #2436 (AnnaShaleva, 2022-04-14): a step that printed nothing for 10 minutes.
    events, _, _ = _parse("go test -v -race ./...\n\nToo long with no output (exceeded 10m0s): context deadline exceeded\n")
    assert events.select("line", "kind", "severity").rows() == [(1, "log", None), (3, "log", "error")]
    assert attrs_of(events)[1] == {"ci_event": "timeout"}


def test_github_actions_runner_diagnostic_log() -> None:
    events = events_of("ci_github_actions_runner_diag_worker_finished_01.log")
    assert set(events["format"]) == {"actions_runner"} and set(events["severity"]) == {"info"} and set(events["kind"]) == {"log"}
    first = events.row(0, named=True)
    assert (first["ts"], first["ts_quality"]) == (utc(2024, 9, 2, 5, 18, 28), "exact")
    assert first["message"].startswith("Successfully renew job request 581691")
    # The worker's exit code is the job's result (100: it finished), logged at INFO: no failure.
    finished = events.filter(pl.col("line") == 5).row(0, named=True)
    assert (finished["exit_code"], finished["severity"]) == (100, "info")


def test_tpu_hbm_oom_under_jax_simplified_traceback_chain() -> None:
    # JAX prints its SimplifiedTraceback cause with no frames, here behind a progress bar: the chain separator under it
    # opens the record of the traceback it introduces.
    events = events_of("jax_tpu_hbm_oom_simplified_traceback_chain_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["severity"], oom["gpu_index"]) == (6, 7, "error", None)
    # "Used 21.90G of 7.48G hbm.": XLA's sizes are 1024-based.
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (round(21.90 * 2**30), round(7.48 * 2**30))
    assert oom["attrs"]["exc_type"] == "jaxlib.xla_extension.XlaRuntimeError"
    assert events.height == 5


def test_tpu_hbm_oom_keeps_the_compilers_memory_report() -> None:
    report = one(events_of("jax_tpu_hbm_oom_program_report_01.log"), "cuda_oom")
    assert (report["line"], report["n_lines"]) == (2, 18)
    assert (report["mem_requested_bytes"], report["mem_total_bytes"]) == (round(63.80 * 2**30), round(30.75 * 2**30))
    # The message wrapped onto a line of its own, under a traceback a chain separator (cut to "he above …") stood above.
    events = events_of("jax_tpu_hbm_oom_wrapped_message_01.log")
    wrapped = one(events, "cuda_oom")
    assert (wrapped["line"], wrapped["n_lines"], events.height) == (3, 17, 2)
    assert (wrapped["mem_requested_bytes"], wrapped["mem_total_bytes"]) == (round(21.95 * 2**30), round(15.48 * 2**30))


def test_tensorflow_tpu_compilation_out_of_hbm_in_glog() -> None:
    events = events_of("tf_tpu_glog_hbm_compilation_failure_01.log")
    oom = one(events, "cuda_oom")
    # TensorFlow logs the failed op at WARNING; the printed level wins over the kind's default.
    assert (oom["line"], oom["severity"], oom["ts"]) == (1, "warning", utc(2025, 11, 10, 7, 24, 24, 387306))
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (round(18.56 * 2**30), 16 * 2**30)
    # vmem and smem are the chip's scratch memories, and rematerialization's note no failure.
    assert _parse("Ran out of memory in memory space vmem. Used 32.42M of 16.00M vmem.\n")[0]["kind"].to_list() == ["log"]
    assert events.filter(pl.col("line") == 3)["kind"].to_list() == ["log"]


def test_ray_task_error_chain_is_one_oom_of_the_innermost_task() -> None:
    events = events_of("ray_task_error_nested_cuda_oom_hydra_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["gpu_index"]) == (1, 36, 0)
    # The actor whose frames end in the OOM, not the driver's main_task (pid 399789) that awaited it.
    assert (oom["pid"], oom["process"]) == (400862, "WorkerDict")
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (round(2.16 * 2**30), round(79.10 * 2**30))
    assert events.height == 2


def test_ray_unhandled_error_is_a_traceback_of_its_task() -> None:
    events = events_of("ray_unhandled_error_task_traceback_cut_01.log")
    failed = one(events, "traceback")
    # Ray's driver tag (Runner pid=104449) printed it; the task's header names where it ran.
    assert (failed["line"], failed["n_lines"], failed["pid"], failed["process"]) == (6, 7, 118847, "WorkerDict")
    assert events.filter(pl.col("line") == 4).select("pid", "process").row(0) == (118271, "WorkerDict")


def test_torch_compile_failure_keeps_the_error_it_wraps() -> None:
    # "BackendCompilerFailed: backend='inductor' raised:" ends where the wrapped exception's line begins.
    cut = events_of("pytorch_compile_backend_failed_wrapped_error_cut_01.log")
    failed = one(cut, "traceback")
    assert (failed["line"], failed["n_lines"], failed["attrs"]["exc_type"]) == (1, 4, "RuntimeError")
    # IPython draws the same failure; the OOM it wraps makes the record a GPU OOM.
    drawn = events_of("pytorch_ipython_compile_backend_failed_cuda_oom_01.log")
    oom = one(drawn, "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["gpu_index"], oom["attrs"]["exc_type"]) == (1, 20, 0, "OutOfMemoryError")
    assert (oom["mem_requested_bytes"], oom["mem_total_bytes"]) == (256 * 2**20, round(47.53 * 2**30))
    assert drawn.height == 5


def test_raylet_report_of_a_worker_death_is_a_kill_of_its_pid() -> None:
    died = one(events_of("ray_raylet_worker_died_system_error_01.log"), "process_killed")
    # Ray names the worker's pid but not the signal; the raylet's tag is the reporter's, not the dead worker's name.
    assert (died["pid"], died["process"], died["severity"]) == (89513, None, "error")
    assert died["attrs"] == {"ray_exit_type": "SYSTEM_ERROR"}
    # A worker Ray stopped on purpose, or whose task raised, did not die (the line is still about that worker).
    intended, _, _ = _parse("(raylet) Worker PID: 7 Worker exit type: INTENDED_USER_EXIT Worker exit detail: exit_actor\n")
    assert intended.select("kind", "pid").row(0) == ("log", 7)
    # Ray 2.2's driver logs the same report at its own level.
    relayed = one(events_of("ray_driver_tab_stamp_01.log"), "process_killed")
    assert (relayed["pid"], relayed["severity"], relayed["attrs"]) == (121882, "warning", {"ray_exit_type": "SYSTEM_ERROR"})


def test_bracketed_capitalised_level_is_the_severity() -> None:
    # KubeSpawner's spawn progress gives each Kubernetes event's type: Warning is a warning, Normal information.
    spawn = events_of("pytorch_jupyterhub_kubespawner_event_log_taints_01.log")
    assert spawn.select("line", "severity").rows() == [(1, None), (2, "warning"), (3, "info"), (4, "info")]
    assert spawn["ts"].to_list()[1:] == [utc(2022, 5, 2, 0, 33, 47, 149327), utc(2022, 5, 2, 0, 33, 59, 912858), utc(2022, 5, 2, 0, 34, 2)]
    assert set(spawn["kind"]) == {"log"}
    # KubeSpawner before 1.0 printed the event's time as Python's str() of it, with its offset.
    older = events_of("pytorch_jupyterhub_kubespawner_event_log_spawn_failed_01.log").row(2, named=True)
    assert (older["severity"], older["ts"], older["ts_quality"]) == ("warning", utc(2020, 6, 18, 5, 43, 14), "exact")
    # Omniverse Kit (Isaac Sim) puts the time since it started before its level.
    kit = events_of("pytorch_isaac_sim_kit_vulkan_out_of_device_memory_01.log")
    assert kit["severity"].to_list() == ["error"] * 7
    assert kit["ts"].to_list() == [utc(2024, 12, 3, 16, 28, 27)] * 7
    # Only a level in its own brackets at the start counts.
    assert _parse("2024-01-02T03:04:05Z the [Warning] light is on\n")[0]["severity"].to_list() == [None]


def test_vulkan_device_out_of_memory_is_a_gpu_oom() -> None:
    ggml = events_of("pytorch_llamacpp_vulkan_device_memory_allocation_failed_01.log")
    oom = one(ggml, "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["severity"], oom["mem_requested_bytes"]) == (1, 1, "error", 118497280)
    # The Vulkan call's error under it is the same failure's, not a second OOM.
    assert ggml.height == 3
    kit = one(events_of("pytorch_isaac_sim_kit_vulkan_out_of_device_memory_01.log"), "cuda_oom")
    assert (kit["line"], kit["severity"], kit["mem_requested_bytes"]) == (1, "error", None)
    # Host memory pinned for the device is not the device's.
    pinned = "ggml_vulkan: Failed to allocate pinned memory.\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"
    assert _parse(pinned)[0]["kind"].to_list() == ["log", "log"]


def test_triton_iso8601_header_gives_level_and_pid() -> None:
    # Google Cloud Logging's console marks every stderr line ERROR; Triton's own level letter wins.
    events = events_of("pytorch_triton_iso8601_google_cloud_logging_console_01.log")
    assert events.select("line", "severity").rows()[0] == (1, "info")
    assert events.filter(pl.col("line") == 8)["severity"].to_list() == ["info"]
    assert events["ts"].to_list()[0] == utc(2024, 3, 20, 12, 9, 36, 741697)
    # Unwrapped, the header is peeled: its pid is the line's.
    plain = _parse("2024-03-20T12:09:36Z E 58 model_lifecycle.cc:621] failed to load 'm' version 1: Internal: boom\n")[0].row(0, named=True)
    assert (plain["severity"], plain["pid"], plain["ts"], plain["message"]) == (
        "error", 58, utc(2024, 3, 20, 12, 9, 36), "failed to load 'm' version 1: Internal: boom",
    )


def test_torchserve_worker_traceback_is_one_record_per_worker() -> None:
    events = events_of("pytorch_torchserve_model_log_worker_died_traceback_01.log")
    assert set(events["format"]) == {"log4j2"}
    assert events.filter(pl.col("line") == 3).select("message", "severity").row(0) == ("[PID]19364", "info")
    failed = one(events, "traceback")
    assert (failed["line"], failed["n_lines"], failed["ts"]) == (9, 3, utc(2023, 11, 7, 5, 11, 40, 49000))
    # TorchServe logs its worker's stdout at INFO: the uncaught exception is an error all the same.
    assert failed["severity"] == "error"
    assert failed["message"].startswith("Traceback (most recent call last):\n  File ")
    assert events.height == 9
    # Two workers' tracebacks, line by line between each other's, are kept apart by the thread that logged them.
    two = events_of("pytorch_torchserve_two_workers_interleaved_tracebacks_01.log")
    assert two.filter(pl.col("kind") == "traceback").select("line", "n_lines", "severity").rows() == [(7, 2, "error"), (8, 1, "error")]
    assert two.height == 8
    # log4j2 pads the level to five columns: an unpadded bracketed level is the message's.
    assert _parse("[INFO] Epoch 1 - loss 0.5\n")[0].select("format", "message").row(0) == ("text", "[INFO] Epoch 1 - loss 0.5")


def test_pingcap_log_header_gives_time_zone_and_level() -> None:
    # milvus-io/milvus #21726 (2023): a querynode's log in pingcap/log's format, its stamp's date slashed, its offset kept.
    events = events_of("pytorch_milvus_querynode_pingcap_log_debug_01.log")
    assert set(events.select("format", "severity", "ts", "ts_quality").rows()) == {("pingcap", "debug", utc(2023, 1, 15, 23, 8, 42, 416000), "exact")}
    assert events["message"][1] == '["Filter invalid message in QueryNode"] [traceID=5e1aa9cfac367d16]'
    warned = _parse('[2024/05/22 10:11:16.753 +08:00] [WARN] [task/scheduler.go:741] ["task scheduler recordSegmentTaskError"]\n')[0]
    assert warned.select("severity", "ts").rows() == [("warning", utc(2024, 5, 22, 2, 11, 16, 753000))]


def test_go_log_caller_and_gin_access_log_are_headers() -> None:
    # Ollama's Go log: the caller (log.Lshortfile) is the header's, the level after it the message's.
    ollama = events_of("pytorch_ollama_go_log_shortfile_level_gin_debug_01.log")
    first = ollama.row(0, named=True)
    assert (first["format"], first["severity"], first["ts"]) == ("go_log", "info", utc(2024, 12, 15, 1, 34, 55))
    assert first["message"].startswith('INFO server config env="map[CUDA_VISIBLE_DEVICES: ')
    # Its stamp has no zone: read in --tz (the logfmt lines under it give +09:00).
    assert events_of("pytorch_ollama_go_log_shortfile_level_gin_debug_01.log", tz="Asia/Tokyo")["ts"].to_list()[:2] == [
        utc(2024, 12, 14, 16, 34, 55), utc(2024, 12, 14, 16, 34, 55, 930000),
    ]
    # Gin's access line under Docker Desktop's stamp: the stamp outside is the line's time, Gin's header is peeled.
    gin = events_of("docker_desktop_ollama_gin_access_log_500_01.log").filter(pl.col("format") == "gin")
    assert gin.height == 8
    assert gin.row(0, named=True)["message"] == '500 |  1.710346111s |       127.0.0.1 | POST     "/api/generate"'
    alone = _parse('[GIN] 2024/08/19 - 14:13:01 | 404 |     414.019µs |       127.0.0.1 | POST     "/api/chat"\n')[0].row(0, named=True)
    assert (alone["format"], alone["ts"], alone["ts_quality"]) == ("gin", utc(2024, 8, 19, 14, 13, 1), "exact")


def test_torchtitan_logger_gives_time_and_level() -> None:
    events = events_of("pytorch_torchtitan_cuda_memory_allocation_retries_01.log")
    assert events.filter(pl.col("severity") == "warning")["line"].to_list() == [4, 5, 6, 9]
    assert set(events["ts_quality"]) == {"exact"}
    assert events.row(3, named=True)["ts"] == utc(2026, 2, 24, 19, 40, 57, 825000)
    assert attrs_of(events)[0] == {"loss": 7.86874, "step": 4}
    # under torchrun's rank tag
    ranked = _parse("[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  memory: 49.66GiB(52.28%)\n")[0]
    assert ranked.select("severity", "ts").row(0) == ("info", utc(2025, 6, 16, 22, 30, 50, 322000))


def test_kserve_header_gives_pid_and_level() -> None:
    events = events_of("pytorch_kserve_huggingfaceserver_failed_to_start_01.log")
    # the FutureWarning and the source line under it, then KServe's own error
    assert events.select("line", "n_lines", "severity").rows() == [(1, 2, "warning"), (3, 1, "error")]
    failed = events.row(1, named=True)
    assert (failed["pid"], failed["ts"], failed["ts_quality"]) == (1, utc(2024, 7, 1, 7, 28, 4, 488000), "exact")
    assert failed["message"] == "Failed to start model server: integer division or modulo by zero"


def test_paddle_gpu_oom_and_paddleocr_logger() -> None:
    events = events_of("pytorch_paddle_resource_exhausted_gpu_oom_summary_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["severity"], oom["gpu_index"], oom["mem_requested_bytes"]) == (13, "error", 0, 128 * 2**20)
    assert oom["attrs"] == {"free_bytes": 0, "allocated_bytes": round(7.995605 * 2**30)}
    logged = events_of("pytorch_paddleocr_logger_error_lang_not_supported_01.log").row(0, named=True)
    assert (logged["format"], logged["severity"], logged["ts"], logged["message"]) == (
        "paddle", "error", utc(2026, 6, 3, 13, 34, 34), "lang latin is not support,",
    )


def test_ggml_cuda_error_names_its_device_on_the_next_line() -> None:
    events = events_of("pytorch_llamacpp_cuda_error_2_out_of_memory_current_device_01.log")
    oom = one(events, "cuda_oom")
    assert (oom["line"], oom["n_lines"], oom["severity"], oom["gpu_index"]) == (5, 2, "error", 0)
    assert events.height == 4
    # since 2024 the device line is indented and names the function, the failed call under it
    text = (
        "CUDA error: out of memory\n"
        "  current device: 1, in function ggml_backend_cuda_buffer_type_alloc_buffer at ggml-cuda.cu:123\n"
        "  cudaMalloc(&ptr, size)\n"
    )
    assert _parse(text)[0].select("kind", "n_lines", "gpu_index").rows() == [("cuda_oom", 3, 1)]


def test_mlserver_mlflow_and_seldon_loggers_give_their_level() -> None:
    served = events_of("pytorch_kserve_mlserver_mlflow_dependency_mismatch_01.log")
    # MLServer's bracketed logger before its level; uvicorn's "INFO:" lines; MLflow's slash-dated logging line
    assert served.filter(pl.col("line").is_in([3, 4, 5, 16])).select("line", "severity", "format").rows() == [
        (3, "debug", "iso8601"), (4, "info", "iso8601"), (5, "info", "text"), (16, "warning", "go_log"),
    ]
    assert served.filter(pl.col("line") == 16)["ts"].to_list() == [utc(2024, 6, 5, 14, 36, 19)]
    seldon = events_of("pytorch_seldon_core_wrapper_microservice_internal_error_01.log")
    assert seldon["severity"].to_list() == ["info", "error", "error", "error"]
    assert seldon["ts"].to_list()[1] == utc(2022, 3, 8, 5, 11, 36, 940000)


def test_nvidia_smi_without_its_nvml_library_is_an_error() -> None:
    events = events_of("docker_nvidia_smi_couldnt_find_libnvidia_ml_01.log")
    assert events.select("line", "kind", "severity").rows() == [(1, "log", "error"), (2, "log", None)]
    assert attrs_of(events)[0] == {"cuda_error": "couldn't find libnvidia-ml.so"}


def test_a_record_printed_after_a_progress_bar_keeps_its_header() -> None:
    events = events_of("hf_trainer_tqdm_bar_glued_log_header_01.log")
    logged = events.filter(pl.col("line") == 3).row(0, named=True)
    assert (logged["ts"], logged["ts_quality"], logged["severity"]) == (utc(2023, 8, 5, 5, 10, 26, 977000), "exact", "info")
    # a bar alone, and a bar with a postfix, stay as they were
    bars = "Epoch 1:  40%|████      | 4/10 [00:01<00:02,  2.9it/s, loss=0.31]\n 12%|█▏        | 6/50 [00:03<00:25,  1.7it/s]\n"
    assert _parse(bars)[0]["message"].to_list() == bars.strip("\n").split("\n")


def test_buildkit_step_output_is_read_behind_its_seconds() -> None:
    events = events_of("ci_docker_buildkit_nemo_instantiation_failed_01.log")
    rows = {row["line"]: row for row in events.iter_rows(named=True)}
    assert (rows[3]["severity"], rows[3]["ts"], rows[3]["message"]) == (
        "warning", utc(2026, 6, 8, 13, 13, 45), "Megatron num_microbatches_calculator not found, using Apex version.",
    )
    assert (rows[7]["kind"], rows[7]["n_lines"], rows[7]["severity"]) == ("log", 3, "error")
    assert (rows[10]["kind"], rows[10]["n_lines"], rows[10]["ts_quality"]) == ("traceback", 8, "inherited")
    assert (rows[19]["kind"], rows[19]["n_lines"], json.loads(rows[19]["attrs"])["exc_type"]) == ("traceback", 20, "TypeError")
    assert (rows[54]["severity"], rows[54]["exit_code"]) == ("error", 1)
    # a few lines that open with a decimal number are text where most lines do not
    text = "epoch 1 done\n0.5 of the GPUs are idle\nloss went down\nsaving checkpoint\n"
    assert _parse(text)[0]["message"].to_list() == text.strip("\n").split("\n")


def test_bitsandbytes_cuda_check_is_an_error() -> None:
    events = events_of("pytorch_bitsandbytes_error_named_symbol_not_found_ops_cu_01.log")
    failed = events.filter(pl.col("line") == 6).row(0, named=True)
    assert (failed["kind"], failed["severity"], json.loads(failed["attrs"])) == ("log", "error", {"cuda_error": "named symbol not found"})
    assert events.filter(pl.col("line") < 6)["severity"].null_count() == 5
    # printed after a progress bar's last draw (bitsandbytes issue #371)
    glued = "Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]Error named symbol not found at line 528 in file x/ops.cu\n"
    assert _parse(glued)[0].select("severity", "attrs").rows() == [("error", '{"cuda_error":"named symbol not found"}')]


def test_level_letters_of_sagemaker_smp_and_python_caller_headers() -> None:
    events = events_of("pytorch_sagemaker_smp_level_letter_headers_01.log")
    assert events["severity"].to_list() == ["info"] * 5 + ["warning"]
    flushes = events.row(5, named=True)
    assert (flushes["ts"], flushes["format"]) == (utc(2024, 6, 28, 18, 30, 50, 171000), "iso8601")
    assert flushes["message"].startswith("8 pytorch allocator cache flushes since last step.")
    assert events.row(1, named=True)["message"].startswith("Batch 74 Loss: 11.625,")


def test_kubeflow_training_operator_names_the_pod_that_exited() -> None:
    events = events_of("pytorch_kubeflow_training_operator_zap_epoch_exited_with_code_01.log")
    # zap's epoch float in Go's %g ("1.7085078566441019e+09") is the line's time, its DEBUG the level
    assert events.select("line", "format", "severity", "ts").rows()[2:5] == [
        (3, "epoch", "debug", utc(2024, 2, 21, 9, 30, 56, 644096)),
        (4, "epoch", "debug", utc(2024, 2, 21, 9, 30, 56, 644101)),
        (5, "epoch", "debug", utc(2024, 2, 21, 9, 30, 57, 647631)),
    ]
    assert events.select("line", "exit_code", "pod", "namespace").rows()[2:4] == [
        (3, 1, "pytorch-simple-worker-0", None), (4, 1, "pytorch-simple-worker-0", "kubeflow"),
    ]
    logrus = events_of("pytorch_kubeflow_training_operator_logrus_text_exited_with_code_01.log")
    # logrus' "INFO[0289]" counts seconds since the operator started: no time
    assert logrus.select("line", "ts_quality", "exit_code", "pod", "namespace").rows() == [
        (1, "missing", 1, "kfto-01-master-0", "default"), (2, "missing", None, None, None),
        (3, "exact", 1, "kfto-01-master-0", "default"), (4, "exact", None, None, None),
    ]
    # tf-operator's logfmt quotes the message: the pod is named inside msg="…"
    tf = events_of("pytorch_kubeflow_tf_operator_logfmt_pod_exited_code_130_01.log")
    assert tf.filter(pl.col("exit_code").is_not_null()).select("line", "exit_code", "pod", "namespace").rows() == [
        (1, 130, "worker-1", "default"), (3, 130, "worker-2", "default"), (5, 130, "worker-3", "default"),
    ]
