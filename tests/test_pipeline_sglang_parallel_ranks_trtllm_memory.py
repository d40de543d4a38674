"""SGLang's parallel ranks in its stamp's bracket, and TensorRT-LLM's memory when it sizes its paged KV cache."""

from __future__ import annotations

import json

import rca

GIB = 1024**3


def _events(text: str, name: str = "serve.log") -> list[dict]:
    return rca.parse_text(text, file=name).to_dicts()


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"]) if event["attrs"] else {}


def test_data_and_pipeline_ranks_are_kept_by_their_names_and_make_no_rank() -> None:
    text = (
        "[2025-09-22 10:25:22 DP0 PP0] Load weight end. avail mem=14.53 GB\n[2025-09-22 10:25:23 DP1 TP3 EP3] Capture cuda graph begin.\n"
    )
    first, second = _events(text)
    assert _attrs(first) == {"dp_rank": 0, "pp_rank": 0, "free_bytes": round(14.53 * GIB)}
    assert _attrs(second) == {"dp_rank": 1, "tp_rank": 3, "ep_rank": 3}


def test_a_traceback_under_a_dp_tp_bracket_keeps_its_ranks_beside_its_exception() -> None:
    text = (
        "[2025-05-27 04:36:06 DP1 TP4] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/sglang/srt/managers/scheduler.py", line 2353, in run_scheduler_process\n'
        "    scheduler.event_loop_overlap()\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    (event,) = _events(text)
    assert event["kind"] == "traceback" and event["n_lines"] == 4
    assert _attrs(event)["dp_rank"] == 1 and _attrs(event)["tp_rank"] == 4
    assert "rank" not in _attrs(event)


def test_a_tensor_parallel_rank_alone_is_still_the_rank() -> None:
    (event,) = _events("[2025-05-19 23:22:28 TP3] Load weight begin. avail mem=78.00 GB\n")
    assert _attrs(event) == {"rank": 3, "free_bytes": round(78.00 * GIB)}


def test_trtllm_kv_cache_sizing_gives_the_device_total_and_what_was_free() -> None:
    text = (
        "[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, available: 70.48 GiB\n"
        "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 4060\n"
    )
    sizing, blocks = _events(text, "trtllm.log")
    assert (sizing["kind"], sizing["severity"]) == ("log", "info")
    assert sizing["mem_total_bytes"] == round(79.10 * GIB)
    assert _attrs(sizing) == {"free_bytes": round(70.48 * GIB)}
    assert sizing["mem_used_bytes"] is None  # "available" counts the runtime's pool too: no used figure is read from it
    assert blocks["mem_total_bytes"] is None and not blocks["attrs"]


def test_trtllm_sizing_beside_a_cuda_oom_keeps_each_its_own_free_memory() -> None:
    text = (
        "[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 5.67 GiB, available: 0.03 GiB\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 5.67 GiB of which "
        "20.00 MiB is free.\n"
    )
    sizing, oom = _events(text, "trtllm.log")
    assert _attrs(sizing)["free_bytes"] == round(0.03 * GIB)
    assert oom["kind"] == "cuda_oom" and _attrs(oom)["free_bytes"] == 20 * 1024**2
    assert oom["mem_requested_bytes"] == 2 * GIB
