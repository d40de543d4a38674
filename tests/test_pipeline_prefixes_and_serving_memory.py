"""Lines pasted as grep printed them: ``grep -n``'s line number, with the file's name before it where grep names files.

The prefix is peeled before every other layer, only in a file most of whose lines wear it and whose numbers go up;
elsewhere a time ("12:34:56 "), a date ("2024-05-01 "), `srun --label`'s task number or a "name.log:" in a message is
the line's own text.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca.sources._pipeline_frame import _without_grep_prefix

REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
# torch's rank tags and a CUDA OOM, as torchrun writes them (synthetic lines)
OOM = (
    "[default0]:[rank0]: Traceback (most recent call last):",
    '[default0]:[rank0]:   File "/workspace/train.py", line 210, in <module>',
    "[default0]:[rank0]:     loss.backward()",
    "[default0]:[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
    "capacity of 79.15 GiB of which 1.23 GiB is free. Process 40212 has 77.90 GiB memory in use. Of the allocated memory "
    "75.00 GiB is allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.",
)
FACTS = ["kind", "severity", "gpu_index", "mem_requested_bytes", "mem_total_bytes", "attrs", "message", "n_lines"]


def _parse(lines: list[str] | tuple[str, ...]) -> pl.DataFrame:
    return rca.parse_text("\n".join(lines) + "\n", file="pasted.log", reference_time=REFERENCE)


def _facts(lines: list[str] | tuple[str, ...]) -> list[dict]:
    return _parse(lines).select(FACTS).to_dicts()


@cache
def _unprefixed() -> list[dict]:
    return _facts(OOM)


def test_grep_n_with_the_file_name_keeps_the_oom_its_rank_and_figures() -> None:
    events = _parse([f"logs/train.log:{1231 + n}:{line}" for n, line in enumerate(OOM)])
    oom = events.filter(pl.col("kind") == "cuda_oom").row(0, named=True)
    assert oom["gpu_index"] == 3
    assert oom["mem_requested_bytes"] == 2 * 1024**3
    assert oom["mem_total_bytes"] == round(79.15 * 1024**3)
    assert '"rank":0' in oom["attrs"]
    assert '"free_bytes":1320702444' in oom["attrs"] and '"in_use_pid":40212' in oom["attrs"]
    assert _facts([f"logs/train.log:{1231 + n}:{line}" for n, line in enumerate(OOM)]) == _unprefixed()


def test_grep_n_of_one_file_and_grep_h_alone_change_no_fact() -> None:
    assert _facts([f"{1231 + n}:{line}" for n, line in enumerate(OOM)]) == _unprefixed()
    assert _facts([f"slurm-4242.out:{line}" for line in OOM]) == _unprefixed()


def test_context_lines_and_group_separators_of_grep_c() -> None:
    lines = [
        "train.log-1229-step 410 done",
        *(f"train.log{':' if n == 3 else '-'}{1230 + n}{':' if n == 3 else '-'}{line}" for n, line in enumerate(OOM)),
        "--",
    ]
    events = _parse(lines)
    assert events.filter(pl.col("kind") == "cuda_oom")["gpu_index"].to_list() == [3]
    assert events.filter(pl.col("line") == 1)["message"].item() == "step 410 done"


@settings(max_examples=8, deadline=None)
@given(start=st.integers(min_value=1, max_value=10**7), gap=st.integers(min_value=1, max_value=50))
def test_numbering_changes_no_fact(start: int, gap: int) -> None:
    assert _facts([f"run.log:{start + gap * n}:{line}" for n, line in enumerate(OOM)]) == _unprefixed()


def test_times_dates_and_task_labels_stay_the_lines_own() -> None:
    clock = _parse(["12:34:56 epoch 1 done", "12:34:58 epoch 2 done", "12:35:02 epoch 3 done"])
    assert clock["message"].to_list() == ["epoch 1 done", "epoch 2 done", "epoch 3 done"]
    assert clock["ts"][0].time() == datetime(2026, 11, 30, 12, 34, 56).time()
    dated = _parse(["2024-05-01 12:00:00 INFO start"])
    assert dated["ts"][0] == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    tasks = _parse(["0: loss 0.5", "1: loss 0.6", "0: loss 0.4", "1: loss 0.3"])
    assert tasks["message"].to_list() == ["loss 0.5", "loss 0.6", "loss 0.4", "loss 0.3"]
    assert '"rank":1' in tasks["attrs"][1]


def test_a_few_file_names_in_a_plain_log_stay_text() -> None:
    lines = ["epoch 1 done", "metrics.log:written", "epoch 2 done", "epoch 3 done"]
    assert _parse(lines).filter(pl.col("line") == 2)["message"].item() == "metrics.log:written"


def test_each_batch_file_decides_for_itself() -> None:
    lines = pl.DataFrame(
        {
            "line": [1, 2, 3, 1, 2, 3],
            "batch_file": ["grepped.log"] * 3 + ["stamped.log"] * 3,
            "text": ["12:[rank0]: a", "13:[rank0]: b", "20:[rank0]: c", "2024-05-01 a", "2024-05-01 b", "2024-05-02 c"],
        }
    )
    peeled = _without_grep_prefix(lines)["text"].to_list()
    assert peeled == ["[rank0]: a", "[rank0]: b", "[rank0]: c", "2024-05-01 a", "2024-05-01 b", "2024-05-02 c"]


def test_grep_over_several_slurm_err_files() -> None:
    # `grep kill *2321682* …` over Slurm .err files, verbatim (eriqande/mega-non-model-wgs-snakeflow, Running-On-Alpine.md)
    lines = [
        "mark_duplicates-bqsr_round=0,sample=13N01565-2321682.err:slurmstepd: error: Detected 1 oom-kill event(s) in "
        "StepId=2321682.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.",
        "mark_duplicates-bqsr_round=0,sample=99N0674-2330469.err:slurmstepd: error: Detected 1 oom_kill event in "
        "StepId=2330469.batch. Some of the step tasks have been OOM Killed.",
    ]
    events = _parse(lines)
    assert events["kind"].to_list() == ["oom_kill", "oom_kill"]
    assert events["message"].str.starts_with("slurmstepd: error: Detected 1 oom").all()
    assert '"slurm_step":"2330469.batch"' in events["attrs"][1]


def test_sglangs_startup_memory_goes_under_the_keys_vllm_and_a_cuda_oom_use() -> None:
    # (sgl-project/sglang's wordings: InferenceX#2128's fp8 "Load weight end", vllm#21348's "KV Cache is allocated")
    events = rca.parse_text(
        "[2025-07-20 10:00:00 TP0] Load weight end. quant=fp8, fmt=e4m3, avail mem=12.25 GB, mem usage=125.65 GB.\n"
        "[2025-07-20 10:00:01 TP1] KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB\n"
        "[2025-07-20 10:00:02 TP0] Memory pool end. avail mem=2.44 GB\n",
        file="sglang.log",
    )
    gib = 1 << 30
    assert [json.loads(attrs) for attrs in events["attrs"]] == [
        {"rank": 0, "free_bytes": round(12.25 * gib), "model_memory_bytes": round(125.65 * gib)},
        {"rank": 1, "kv_cache_bytes": round(8.23 * gib) * 2},
        {"rank": 0, "free_bytes": round(2.44 * gib)},
    ]
