"""Line headers of the pipeline frame found in real logs: logfmt with the caller or level first and
log15's "lvl=", vLLM V1's ranked worker tags, `srun --label` task numbers, a time of day before the
header, rich's logging handler, and a python logging header with the level, pid and caller.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

import rca
from rca import sources
from rca.ingest import parse_lines
from rca.sources._base import ParseContext
from tests.conftest import fixture_path

REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _events(text: str, *, year: int | None = 2025) -> pl.DataFrame:
    ctx = ParseContext(file="t.log", tz="UTC", year=year, reference_time=REFERENCE)
    events, _ = parse_lines(sources.lines_frame(text), ctx, sources.get("pipeline"))
    return events


def _rows(events: pl.DataFrame) -> list[dict]:
    rows = events.sort("line").to_dicts()
    for row in rows:
        row["attrs"] = json.loads(row["attrs"]) if row["attrs"] else {}
    return rows


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


# --- logfmt: caller and level before the time, log15's lvl= -----------------------------------


def test_logfmt_with_the_caller_or_the_level_before_the_time() -> None:
    rows = _rows(_events(
        'caller=main.go:55 level=error ts=2024-01-02T03:04:05.678Z msg="compaction failed"\n'
        'level=warn caller=foo.go:1 ts=2024-01-02T03:04:06.5Z msg="slow query"\n'
        'level=info ts=2024-01-02T03:04:07Z caller=bar.go:9 msg="ok"\n'
    ))
    assert [r["ts"] for r in rows] == [
        utc(2024, 1, 2, 3, 4, 5, 678000), utc(2024, 1, 2, 3, 4, 6, 500000), utc(2024, 1, 2, 3, 4, 7)
    ]
    assert [r["severity"] for r in rows] == ["error", "warning", "info"]
    assert [r["message"] for r in rows] == ['msg="compaction failed"', 'msg="slow query"', 'msg="ok"']
    assert {r["format"] for r in rows} == {"logfmt"}


def test_log15_lvl_and_its_four_letter_level_words() -> None:
    rows = _rows(_events(
        't=2024-01-02T03:04:05+0000 lvl=eror msg="Failed to send alert" logger=alerting\n'
        't=2024-01-02T03:04:06+0100 lvl=dbug msg="d"\n'
        't=2024-01-02T03:04:07+0000 lvl=crit msg="c"\n'
        'logger=context t=2024-01-02T03:04:08Z level=warn msg="w"\n'
    ))
    assert [r["ts"] for r in rows] == [
        utc(2024, 1, 2, 3, 4, 5), utc(2024, 1, 2, 2, 4, 6), utc(2024, 1, 2, 3, 4, 7), utc(2024, 1, 2, 3, 4, 8)
    ]
    assert [r["severity"] for r in rows] == ["error", "debug", "critical", "warning"]
    assert rows[0]["message"] == 'msg="Failed to send alert" logger=alerting'


# --- vLLM V1 worker tags --------------------------------------------------------------------


def test_vllm_v1_worker_tag_gives_rank_and_pid_and_its_traceback_is_one_event() -> None:
    rows = _rows(_events(
        "(VllmWorker rank=3 pid=226) ERROR 06-26 10:00:01 [multiproc_executor.py:470] WorkerProc hit an exception.\n"
        "(VllmWorker rank=3 pid=226) Traceback (most recent call last):\n"
        '(VllmWorker rank=3 pid=226)   File "/v/worker.py", line 465, in worker_busy_loop\n'
        "(VllmWorker rank=3 pid=226) torch.OutOfMemoryError: boom\n"
        "(VllmWorker rank=1 pid=224) INFO 06-26 10:00:02 [pynccl.py:70] vLLM is using nccl==2.26.2\n"
    ))
    header, trace, other = rows
    assert header["ts"] == utc(2025, 6, 26, 10, 0, 1)
    assert (header["severity"], header["pid"], header["attrs"]["rank"]) == ("error", 226, 3)
    assert header["process"] == "VllmWorker"
    assert header["message"] == "WorkerProc hit an exception."
    assert (trace["line"], trace["n_lines"], trace["pid"], trace["attrs"]["rank"]) == (2, 3, 226, 3)
    assert trace["message"].startswith("Traceback (most recent call last):\n")
    assert trace["ts"] == header["ts"]
    assert (other["pid"], other["attrs"]["rank"], other["message"]) == (224, 1, "vLLM is using nccl==2.26.2")


def test_vllm_worker_tag_with_its_parallel_ranks_in_the_name() -> None:
    (row,) = _rows(_events(
        "(VllmWorker TP2 pid=47571) WARNING 09-09 15:47:25 [fused_moe.py:727] Using default MoE config.\n"
    ))
    assert (row["pid"], row["process"], row["severity"]) == (47571, "VllmWorker TP2", "warning")
    assert row["ts"] == utc(2025, 9, 9, 15, 47, 25)
    assert row["message"] == "Using default MoE config."


# --- srun --label ---------------------------------------------------------------------------


SRUN = (
    " 0: [rank0]: Traceback (most recent call last):\n"
    ' 0: [rank0]:   File "/t.py", line 3, in <module>\n'
    "12: 2024-05-01 10:00:00,123 - INFO - step 5\n"
    " 0: [rank0]: RuntimeError: boom\n"
    "srun: error: node1: task 0: Exited with exit code 1\n"
    " 3: plain words\n"
)


def test_srun_task_numbers_are_ranks_and_keep_a_task_traceback_together() -> None:
    rows = _rows(_events(SRUN))
    by_line = {r["line"]: r for r in rows}
    trace = by_line[1]
    assert (trace["kind"], trace["n_lines"], trace["attrs"]["rank"]) == ("traceback", 3, 0)
    assert trace["message"].splitlines()[-1] == "RuntimeError: boom"
    step = by_line[3]
    assert (step["attrs"]["rank"], step["ts"], step["severity"]) == (12, utc(2024, 5, 1, 10, 0, 0, 123000), "info")
    assert step["message"] == "INFO - step 5"
    assert by_line[6]["attrs"]["rank"] == 3 and by_line[6]["message"] == "plain words"
    assert by_line[5]["attrs"].get("rank") is None


def test_a_number_and_colon_in_a_file_few_of_whose_lines_wear_one_is_text() -> None:
    rows = _rows(_events(
        "Steps:\n1: install the driver\n2: reboot\nloss 0.5\nother\nmore text\n2024-01-01T00:00:00Z 3: stamped\n"
    ))
    by_line = {r["line"]: r for r in rows}
    assert by_line[2]["message"] == "1: install the driver" and by_line[2]["attrs"].get("rank") is None
    # The stamp outside a stray task number stays peeled.
    assert (by_line[7]["message"], by_line[7]["ts"]) == ("3: stamped", utc(2024, 1, 1))
    assert by_line[7]["attrs"].get("rank") is None


# --- a time of day before the header; rich's handler -----------------------------------------


def test_a_time_of_day_before_a_rank_tag_keeps_the_inner_headers_time() -> None:
    (row,) = _rows(_events(
        "18:11:06.680 [rank4]:[E205 10:12:13.456789 123 ProcessGroupNCCL.cpp:616] [Rank 4] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        "600016 milliseconds before timing out.\n"
    ))
    assert (row["kind"], row["attrs"]["rank"], row["severity"]) == ("nccl_timeout", 4, "error")
    assert row["ts"] == utc(2025, 2, 5, 10, 12, 13, 456789)
    assert row["message"].startswith("[Rank 4] Watchdog caught")


def test_a_time_of_day_alone_takes_the_date_of_the_last_dated_line() -> None:
    rows = _rows(_events(
        "2024-03-09 23:59:58,000 - INFO - start\n"
        "23:59:59.500 [rank1]: loading\n"
        "00:00:01.250 [rank1]: loaded\n"
    ))
    assert [r["ts"] for r in rows] == [
        utc(2024, 3, 9, 23, 59, 58), utc(2024, 3, 9, 23, 59, 59, 500000), utc(2024, 3, 10, 0, 0, 1, 250000)
    ]
    assert [r["ts_quality"] for r in rows] == ["exact", "year_inferred", "year_inferred"]
    assert rows[2]["message"] == "loaded" and rows[2]["attrs"]["rank"] == 1


def test_rich_handler_level_and_message_without_its_caller() -> None:
    rows = _rows(_events(
        "[15:58:29] WARNING  The following values were not passed to `accelerate launch`           launch.py:887\n"
        "[11/30/26 09:15:02] ERROR    Training failed                                       trainer.py:12\n"
        "[09:16:00] CRITICAL boom                                                               x.py:1\n",
        year=None,
    ))
    warning, error, critical = rows
    assert (warning["severity"], warning["format"]) == ("warning", "rich")
    assert warning["message"] == "The following values were not passed to `accelerate launch`"
    # No dated line before it: the day is the file's reference time's, a day back if it would land after it.
    assert (warning["ts"], warning["ts_quality"]) == (utc(2026, 11, 29, 15, 58, 29), "year_from_mtime")
    assert (error["severity"], error["message"], error["ts"]) == ("error", "Training failed", utc(2026, 11, 30, 9, 15, 2))
    assert (critical["severity"], critical["message"], critical["ts"]) == ("critical", "boom", utc(2026, 11, 30, 9, 16))


# --- python logging: level, pid and caller after the stamp -----------------------------------


def test_python_logging_level_pid_and_caller_after_the_stamp() -> None:
    rows = _rows(_events(
        "2024-12-19 21:40:35 ERROR 56542 [engine.py:64] Engine background task failed\n"
        "Traceback (most recent call last):\n"
        '  File "/x/engine.py", line 54, in _log_task_completion\n'
        "    return_value = task.result()\n"
        "RuntimeError: Engine loop has died\n"
        "2024-12-19 21:40:36 INFO [api_server.py:9] shutting down\n"
    ))
    header, trace, info = rows
    assert (header["ts"], header["severity"], header["pid"]) == (utc(2024, 12, 19, 21, 40, 35), "error", 56542)
    assert header["message"] == "Engine background task failed"
    assert header["format"] == "iso8601"
    assert (trace["kind"], trace["line"], trace["n_lines"], trace["ts"]) == ("traceback", 2, 4, header["ts"])
    assert (info["severity"], info["pid"], info["message"]) == ("info", None, "shutting down")


def test_rich_blank_stamp_repeats_the_time_above_and_each_line_is_its_own_event() -> None:
    rows = _rows(_events(
        "[15:58:29] WARNING  Sending process 197 closing signal SIGTERM                      api.py:699\n"
        "           WARNING  Sending process 198 closing signal SIGTERM                      api.py:699\n"
        "[11/30/26 09:15:02] INFO     saving checkpoint                                 trainer.py:3\n"
        "                    ERROR    checkpoint failed                                 trainer.py:9\n",
        year=None,
    ))
    assert [r["line"] for r in rows] == [1, 2, 3, 4]
    assert [r["n_lines"] for r in rows] == [1, 1, 1, 1]
    assert [r["severity"] for r in rows] == ["warning", "warning", "info", "error"]
    assert rows[1]["message"] == "Sending process 198 closing signal SIGTERM"
    assert rows[1]["ts"] == rows[0]["ts"] == utc(2026, 11, 29, 15, 58, 29)
    assert rows[3]["ts"] == rows[2]["ts"] == utc(2026, 11, 30, 9, 15, 2)
    assert rows[3]["message"] == "checkpoint failed"


def test_logfmt_caller_after_the_level_and_slogs_source_are_not_the_message() -> None:
    rows = _rows(_events(
        'ts=2023-05-04T10:11:16.000Z level=info caller=main.go:1 msg="y"\n'
        'time=2023-05-04T10:11:17.000+02:00 level=WARN source=main.go:12 msg="slog line"\n'
    ))
    assert [r["message"] for r in rows] == ['msg="y"', 'msg="slog line"']
    assert [r["ts"] for r in rows] == [utc(2023, 5, 4, 10, 11, 16), utc(2023, 5, 4, 8, 11, 17)]
    assert [r["severity"] for r in rows] == ["info", "warning"]


def test_a_carriage_return_shown_as_caret_m_ends_no_message() -> None:
    rows = _rows(_events(
        "2024-12-19 21:40:35 ERROR 56542 [async_llm_engine.py:64] Engine background task failed^M\n"
        "2024-12-19 21:40:35 ERROR 56542 [async_llm_engine.py:64] Traceback (most recent call last):^M\n"
        '2024-12-19 21:40:35 ERROR 56542 [async_llm_engine.py:64]   File "/x/engine.py", line 54, in f^M\n'
        "2024-12-19 21:40:35 ERROR 56542 [async_llm_engine.py:64] RuntimeError: Engine loop has died^M\n"
    ))
    header, trace = rows
    assert header["message"] == "Engine background task failed"
    assert (trace["kind"], trace["n_lines"], trace["pid"]) == ("traceback", 3, 56542)
    assert trace["message"].endswith("RuntimeError: Engine loop has died")


# --- the real samples: what expected.jsonl cannot say (ranks live in attrs) -------------------


def _fixture_rows(name: str) -> list[dict]:
    return _rows(_events(fixture_path(name).read_text(encoding="utf-8")))


def test_real_samples_carry_their_ranks() -> None:
    vllm = _fixture_rows("vllm_v1_worker_rank_traceback_01.log")
    assert [(r["line"], r["attrs"]["rank"], r["pid"]) for r in vllm] == [(1, 1, 12231), (2, 1, 12231)]
    (watchdog,) = _fixture_rows("nccl_watchdog_stuck_clock_prefix_01.log")
    assert (watchdog["attrs"]["rank"], watchdog["ts"]) == (4, utc(2025, 2, 5, 18, 11, 6, 375750))
    steps = _fixture_rows("slurm_srun_label_nemo_steps_01.log")
    assert [(r["line"], r["attrs"]["rank"], r["attrs"]["step"]) for r in steps] == [(1, 0, 8), (3, 0, 9)]
    assert steps[0]["message"].startswith("Training epoch 0, iteration 8/29 |")


# --- more python logging headers of training jobs ------------------------------------------


def test_nemo_logging_header() -> None:
    rows = _rows(_events(
        "[NeMo I 2026-06-08 14:47:40 mixins:184] Tokenizer SentencePieceTokenizer initialized with 13087 tokens\n"
        "[NeMo E 2026-06-08 14:47:46 common:644] Model instantiation failed!\n"
        "    Target class:       nemo.collections.asr.models.rnnt_bpe_models_prompt.EncDecRNNTBPEModel\n"
        "[NeMo W 2026-06-08 14:47:47 nemo_logging:349] deprecated\n"
    ))
    info, error, warning = rows
    assert (info["ts"], info["severity"]) == (utc(2026, 6, 8, 14, 47, 40), "info")
    assert info["message"] == "Tokenizer SentencePieceTokenizer initialized with 13087 tokens"
    assert (error["severity"], error["n_lines"], error["ts"]) == ("error", 2, utc(2026, 6, 8, 14, 47, 46))
    assert error["message"].startswith("Model instantiation failed!\n    Target class:")
    assert (warning["severity"], warning["message"]) == ("warning", "deprecated")


def test_loguru_level_and_caller_after_the_stamp() -> None:
    rows = _rows(_events(
        "2024-01-02 03:04:05.678 | ERROR    | train:main:12 - CUDA error: an illegal memory access was encountered\n"
        "2024-01-02 03:04:06.000 | SUCCESS  | train:main:20 - saved\n"
        "14:11:03 | WARNING  | Navigation failed (attempt 2)\n"
    ))
    error, success, warning = rows
    assert (error["ts"], error["severity"]) == (utc(2024, 1, 2, 3, 4, 5, 678000), "error")
    assert error["message"] == "CUDA error: an illegal memory access was encountered"
    assert (success["severity"], success["message"]) == ("info", "saved")
    assert (warning["severity"], warning["message"], warning["ts"]) == ("warning", "Navigation failed (attempt 2)", utc(2024, 1, 2, 14, 11, 3))


def test_month_first_stamp_of_transformers_example_scripts() -> None:
    rows = _rows(_events(
        "01/17/2024 13:47:27 - INFO - __main__ - Training/evaluation parameters\n"
        "01/17/2024 13:47:28 - WARNING - __main__ - Process rank: 0, device: cuda:0, n_gpu: 1\n"
        "25/01/2024 09:00:00 - ERROR - __main__ - a day-first stamp\n"
    ))
    assert [r["ts"] for r in rows] == [utc(2024, 1, 17, 13, 47, 27), utc(2024, 1, 17, 13, 47, 28), utc(2024, 1, 25, 9)]
    assert [r["severity"] for r in rows] == ["info", "warning", "error"]
    assert [r["ts_quality"] for r in rows] == ["exact"] * 3


def test_snakemake_ctime_stamps_are_times_and_date_the_job_lines_around_them(tmp_path: Path) -> None:
    """snakemake-executor-plugin-slurm PR #371: a bracketed ctime over each job, the Slurm OOM kill between two."""
    text = fixture_path("slurm_snakemake_oom_kill_01.log").read_text()
    events = _events(text, year=None)
    stamps = events.filter(pl.col("format") == "ctime")
    assert stamps.select("line", "ts", "ts_quality").rows() == [
        (6, utc(2025, 11, 12, 11, 40, 15), "exact"), (14, utc(2025, 11, 12, 11, 40, 17), "exact"),
    ]
    # Correlation gives the kill, which has no stamp of its own, the time of its timed neighbours.
    (tmp_path / "logs" / "node1").mkdir(parents=True)
    (tmp_path / "logs" / "node1" / "snakemake.log").write_text(text)
    rca.ingest(tmp_path / "logs", tmp_path / "store")
    incident = rca.correlate(rca.open_store(tmp_path / "store").events()).incidents.row(0, named=True)
    assert utc(2025, 11, 12, 11, 40, 15) <= incident["start"] <= utc(2025, 11, 12, 11, 40, 17)


# --- SGLang's ranks, nanotron's and NVIDIA Cosmos' headers, Megatron's and nanotron's progress lines -------


def test_sglang_tensor_parallel_rank_is_the_rank_of_the_whole_record() -> None:
    rows = _rows(_events((fixture_path("pytorch_sglang_tp_rank_scheduler_traceback_01.log")).read_text()))
    assert [(r["line"], r["kind"], r["n_lines"], r["attrs"].get("rank")) for r in rows] == [(1, "log", 1, None), (2, "traceback", 6, 3)]
    assert rows[1]["ts"] == utc(2026, 3, 3, 3, 53, 36)


def test_sglang_ranks_beside_a_data_parallel_rank_are_no_worker_rank() -> None:
    rows = _rows(_events("[2025-05-19 23:22:28 DP1 TP3] Decode batch. #running-req: 4\n"))
    assert (rows[0]["ts"], rows[0]["attrs"].get("rank")) == (utc(2025, 5, 19, 23, 22, 28), None)


def test_nanotron_header() -> None:
    rows = _rows(_events(
        "08/31/2024 14:37:31 [INFO|DP=0|PP=0|TP=0]: iteration: 1 / 15 | consumed_tokens: 512 | lm_loss: 5.32 | lr: 0.00015\n"
        "08/31/2024 14:37:32 [WARNING|DP=0|PP=0|TP=0|ip-26-0-160-225]: Saving checkpoint at checkpoints/10\n"
    ))
    assert [(r["ts"], r["severity"]) for r in rows] == [(utc(2024, 8, 31, 14, 37, 31), "info"), (utc(2024, 8, 31, 14, 37, 32), "warning")]
    assert rows[1]["message"] == "Saving checkpoint at checkpoints/10"
    assert (rows[0]["attrs"]["loss"], rows[0]["attrs"]["step"]) == (5.32, 1)


def test_cosmos_imaginaire_header() -> None:
    rows = _rows(_events(fixture_path("pytorch_cosmos_predict1_imaginaire_header_loss_01.log").read_text()))
    assert (rows[1]["ts"], rows[1]["severity"], rows[1]["attrs"]["loss"]) == (utc(2025, 4, 14, 2, 51, 9), "info", 1.5156)
    assert rows[1]["message"] == "20 : iter_speed 19.06 seconds per iteration | Loss: 1.5156"
    tagged = _rows(_events("[08-03 22:21:35|job=|SUCCESS|cosmos_framework/scripts/server.py:595:infer] ready\n"))
    assert (tagged[0]["ts"], tagged[0]["severity"], tagged[0]["message"]) == (utc(2025, 8, 3, 22, 21, 35), "info", "ready")


def test_megatron_iteration_line_gives_step_and_lm_loss() -> None:
    rows = _rows(_events(
        " iteration      100/  500000 | consumed samples:        51200 | elapsed time per iteration (ms): 1234.5 |"
        " lm loss: 7.123456E+00 | loss scale: 1.0 | grad norm: 1.234 |\n"
    ))
    assert (rows[0]["attrs"]["loss"], rows[0]["attrs"]["step"]) == (7.123456, 100)


# --- DCGM's own logs: "LEVEL [pid:tid]" after the stamp -----------------------------------------


def test_dcgm_host_engine_lines_give_their_level_and_pid() -> None:
    events = _events(
        # NVIDIA/dcgm-exporter#144 (suchisur, 2023-03-14): nv-hostengine started by hand, its level padded to five
        "2023-03-14 07:35:17.289 DEBUG [39:39] gpuId 0, arch 6 is on the allowlist. [/workspaces/dcgm-rel_dcgm_3_1-postmerge/dcgmlib/src/"
        "DcgmCacheManager.cpp:1051] [DcgmCacheManager::IsGpuAllowlisted]\n"
        "2023-03-14 07:35:17.289 INFO  [39:39] Got 0 excluded GPUs [/workspaces/dcgm-rel_dcgm_3_1-postmerge/dcgmlib/src/"
        "DcgmCacheManager.cpp:1087] [DcgmCacheManager::ReadAndCacheGpuExclusionList]\n"
        # NVIDIA/gpu-monitoring-tools#146 (IsQiao, 2021-07-15): /var/log/nv-hostengine.log
        "2021-07-15 08:17:23.624 ERROR [1:24] GetLatestSample returned No data is available for entityId 0 groupId 1 fieldId 230 "
        "[/workspaces/dcgm-rel_dcgm_2_1-postmerge/dcgmlib/src/DcgmCacheManager.cpp:4395] [DcgmCacheManager::GetMultipleLatestSamples]\n"
    )
    rows = _rows(events)
    assert [(r["severity"], r["pid"], r["ts"]) for r in rows] == [
        ("debug", 39, utc(2023, 3, 14, 7, 35, 17, 289000)),
        ("info", 39, utc(2023, 3, 14, 7, 35, 17, 289000)),
        ("error", 1, utc(2021, 7, 15, 8, 17, 23, 624000)),
    ]
    assert [r["message"].split(" [/")[0] for r in rows] == [
        "gpuId 0, arch 6 is on the allowlist.", "Got 0 excluded GPUs",
        "GetLatestSample returned No data is available for entityId 0 groupId 1 fieldId 230",
    ]


def test_a_padded_python_level_before_its_caller_is_a_header() -> None:
    # logging's "%(asctime)s %(levelname)-8s [%(filename)s:%(lineno)d] %(message)s"
    (row,) = _rows(_events("2025-03-10 15:07:20,123 WARNING  [trainer.py:88] loss is nan\n"))
    assert (row["severity"], row["message"], row["pid"]) == ("warning", "loss is nan", None)


# --- date(1) stamps that shell scripts echo, a spaced numeric offset, Jupyter's header -----------


def test_date_command_stamps_give_their_time_and_zone() -> None:
    events = _events(
        "Tue Mar  5 15:17:06 UTC 2019 starting training\n"
        "Tue Mar  5 15:17:09 2019 step 1\n"
        "Wed Dec  3 04:11:02 PM UTC 2025 epoch done\n"
        "Tue Mar  5 15:17:06 +0330 2019 - watchdog fired\n"
        "Thu Nov 27 07:52:15 CET 2025: job finished with exit code 137\n"
        "Tue Mar  5 15:17:06 IST 2019 - a zone name that names several zones\n"
    )
    rows = _rows(events)
    assert [row["ts"] for row in rows] == [
        utc(2019, 3, 5, 15, 17, 6), utc(2019, 3, 5, 15, 17, 9), utc(2025, 12, 3, 16, 11, 2), utc(2019, 3, 5, 11, 47, 6),
        utc(2025, 11, 27, 6, 52, 15), utc(2019, 3, 5, 15, 17, 6),
    ]
    assert {row["ts_quality"] for row in rows} == {"exact"}
    assert rows[4]["ts_raw"] == "Thu Nov 27 07:52:15 CET 2025"
    assert [row["message"] for row in rows[:2]] == ["starting training", "step 1"]
    assert (rows[4]["kind"], rows[4]["exit_code"]) == ("process_killed", 137)


def test_an_iso_stamp_with_a_spaced_numeric_offset() -> None:
    (row,) = _rows(_events("2025-05-12 09:51:40 +0800 loader started\n"))
    assert (row["ts"], row["message"]) == (utc(2025, 5, 12, 1, 51, 40), "loader started")


def test_jupyter_server_header_gives_level_and_time() -> None:
    rows = _rows(_events(
        "[W 2025-05-12 09:51:40.123 ServerApp] AsyncIOLoopKernelRestarter: restarting kernel (1/5), keep random ports\n"
        "[I 2025-05-12 09:51:41.001 ServerApp] Kernel restarted: 7f3c2d6a-1b7a-4c3e-9d2f-0a1b2c3d4e5f\n"
    ))
    assert [(row["ts"], row["severity"], row["format"]) for row in rows] == [
        (utc(2025, 5, 12, 9, 51, 40, 123000), "warning", "tornado"), (utc(2025, 5, 12, 9, 51, 41, 1000), "info", "tornado"),
    ]
    assert rows[0]["message"].startswith("AsyncIOLoopKernelRestarter: restarting kernel")
    (classic,) = _rows(_events("2025-05-12 09:51:00 starting\n[I 09:51:40.123 NotebookApp] Kernel restarted: 7f3c2d6a\n"))[1:]
    assert (classic["ts"], classic["severity"], classic["message"]) == (utc(2025, 5, 12, 9, 51, 40, 123000), "info", "Kernel restarted: 7f3c2d6a")


def test_logrus_text_formatter_level_letters_and_no_time() -> None:
    # the seconds since start in brackets are no time of day; the four letters are the level
    events = _events("ERRO[0012] failed to reconcile  job=default.x\nDEBU[0001] dbg line\nFATA[12345] fatal thing\n")
    assert events.sort("line").select("severity", "ts_quality", "message").rows() == [
        ("error", "missing", "failed to reconcile  job=default.x"), ("debug", "missing", "dbg line"), ("critical", "missing", "fatal thing"),
    ]


def test_zap_epoch_float_stamp() -> None:
    # controller-runtime's zap before v0.15 prints the epoch as Go's %g
    row = _rows(_events("1.6690869152808545e+09\tINFO\tsetup\tstarting manager\n"))[0]
    assert (row["format"], row["severity"], row["ts"], row["ts_quality"]) == ("epoch", "info", utc(2022, 11, 22, 3, 15, 15, 280854), "exact")


# --- Ascend NPUs: torch_npu's error codes and logger, CANN's error messages ---------------------


def test_torch_npu_error_code_line_gives_time_pid_and_device() -> None:
    # vllm-project/vllm-ascend#1500, sgl-project/sglang#30453: the date and the time joined by "-"; Device and RankID -1 are none
    rows = _rows(_events(
        "[ERROR] 2025-06-28-15:57:56 (PID:118889, Device:0, RankID:-1) ERR99999 UNKNOWN applicaiton exception\n"
        "[ERROR] 2026-06-23-19:38:13 (PID:1982680, Device:-1, RankID:3) ERR99999 UNKNOWN applicaiton exception\n"
    ))
    facts = [(row["ts"], row["ts_raw"], row["ts_quality"], row["severity"], row["pid"], row["gpu_index"], row["format"]) for row in rows]
    assert facts == [
        (utc(2025, 6, 28, 15, 57, 56), "2025-06-28-15:57:56", "exact", "error", 118889, 0, "torch_npu"),
        (utc(2026, 6, 23, 19, 38, 13), "2026-06-23-19:38:13", "exact", "error", 1982680, None, "torch_npu"),
    ]
    assert rows[0]["message"] == "ERR99999 UNKNOWN applicaiton exception"
    assert rows[0]["attrs"] == {} and rows[1]["attrs"] == {"rank": 3}


def test_cann_error_message_keeps_its_code_and_its_indented_trace() -> None:
    # CANN's code before "[PID: N]" (with or without a colon, 8.2+ repeating it after the stamp) or none before it
    rows = _rows(_events(
        "EZ1001: [PID: 55172] 2025-09-13-05:28:15.526.256 tensor 0 not implemented for DT_UINT64\n"
        "EZ9999[PID: 163686] 2026-07-07-07:20:43.817.613 (EZ9999):  Kernel task happen error, retCode=0x25, [aicore timeout].\n"
        "        TraceBack (most recent call last):\n"
        "       rtMemcpyAsync execution failed, reason=aicore timeout\n"
        "[PID: 366] 2025-12-29-13:22:34.070.507 AclNN_Runtime_Error(EZ9903): rtKernelLaunchWithHandleV2 failed: 507014\n"
    ))
    assert [(row["line"], row["n_lines"], row["ts"], row["pid"], row["severity"], row["format"]) for row in rows] == [
        (1, 1, utc(2025, 9, 13, 5, 28, 15, 526256), 55172, "error", "cann"),
        (2, 3, utc(2026, 7, 7, 7, 20, 43, 817613), 163686, "error", "cann"),
        (5, 1, utc(2025, 12, 29, 13, 22, 34, 70507), 366, "error", "cann"),
    ]
    assert [row["message"].split("\n")[0] for row in rows] == [
        "EZ1001: tensor 0 not implemented for DT_UINT64",
        "EZ9999: Kernel task happen error, retCode=0x25, [aicore timeout].",
        "AclNN_Runtime_Error(EZ9903): rtKernelLaunchWithHandleV2 failed: 507014",
    ]
    assert rows[1]["ts_raw"] == "2026-07-07-07:20:43.817.613"


def test_torch_npu_cpp_logger_gives_time_pid_level_and_rank() -> None:
    # torch_npu/csrc/logging/Logger.cpp: "[rank:N]:" where the rank is known, "[pid] [date time:ms] logger: [LEVEL] [tid] "
    rows = _rows(_events(
        "[366] [2025-12-29 13:22:34:096] torch.distributed: [ERROR] [546] Find exception when finishedNPUExecutionInternal\n"
        "[rank:2]:[368] [2025-12-29 13:22:35:001] torch_npu.memory: [WARNING] [550] low memory\n"
    ))
    assert [(row["ts"], row["ts_raw"], row["pid"], row["severity"], row["format"], row["attrs"]) for row in rows] == [
        (utc(2025, 12, 29, 13, 22, 34, 96000), "2025-12-29 13:22:34:096", 366, "error", "torch_npu_log", {}),
        (utc(2025, 12, 29, 13, 22, 35, 1000), "2025-12-29 13:22:35:001", 368, "warning", "torch_npu_log", {"rank": 2}),
    ]
    assert rows[0]["message"] == "Find exception when finishedNPUExecutionInternal"


def test_ray_worker_tag_keeps_its_node_ip_and_the_innermost_tag_names_the_writer() -> None:
    # vllm-project/vllm-ascend#264 and #4579: Ray's ip= is the worker's node (an address, kept as attrs, not the host);
    # vLLM's engine prints its Ray workers' lines behind its own tag
    rows = _rows(_events(
        "(NPURayWorkerWrapper pid=399601, ip=10.43.132.227) ERROR 03-07 09:51:00 worker_base.py:581] Error executing method\n"
        "(EngineCore_DP0 pid=118283) (RayWorkerWrapper pid=26344, ip=10.0.104.230) INFO 11-29 10:44:45 [backends.py:548] Using cache\n"
        "(EngineCore_DP0 pid=118283) INFO 11-29 10:54:13 [core.py:708] Waiting for workers.\n"
    ))
    assert [(row["process"], row["pid"], row["host"], row["attrs"]) for row in rows] == [
        ("NPURayWorkerWrapper", 399601, None, {"node_ip": "10.43.132.227"}),
        ("RayWorkerWrapper", 26344, None, {"node_ip": "10.0.104.230"}),
        ("EngineCore_DP0", 118283, None, {}),
    ]
