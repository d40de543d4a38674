"""torchrun's agent ended by a signal, TGI's warmup OOM, vLLM V1's KV-cache shortfall and PyTorch's host allocator out of RAM."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_source_pipeline import _parse, attrs_of, events_of

_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 9: "SIGKILL", 15: "SIGTERM"}


def test_elastic_signal_exception_line_is_the_agent_killed() -> None:
    events = events_of("pytorch_torchrun_elastic_signal_exception_sighup_01.log").sort("line")
    assert events.select("line", "kind", "severity", "pid").rows() == [
        (1, "log", "warning", 2920926), (2, "process_killed", "error", 2920830),  # the process the agent signalled, then its own
    ]
    assert attrs_of(events.filter(pl.col("line") == 2)) == [{"signal": "SIGHUP"}]


def test_elastic_signal_exception_ends_a_headerless_traceback() -> None:
    events = events_of("pytorch_torchrun_elastic_signal_exception_sigterm_cut_traceback_01.log").sort("line")
    assert events.select("line", "n_lines", "kind", "pid").rows() == [(1, 12, "process_killed", 293812), (13, 3, "traceback", None)]
    killed = attrs_of(events.head(1))[0]
    assert killed["signal"] == "SIGTERM"
    assert killed["exc_type"] == "torch.distributed.elastic.multiprocessing.api.SignalException"


@settings(max_examples=25, deadline=None)
@given(pid=st.integers(min_value=1, max_value=4_194_304), number=st.sampled_from(sorted(_SIGNALS)))
def test_any_signal_exception_names_pid_and_signal(pid: int, number: int) -> None:
    line = f"torch.distributed.elastic.multiprocessing.api.SignalException: Process {pid} got signal: {number}\n"
    event = _parse(line)[0].row(0, named=True)
    assert (event["kind"], event["pid"], event["severity"]) == ("process_killed", pid, "error")
    assert attrs_of(pl.DataFrame({"attrs": [event["attrs"]]})) == [{"signal": _SIGNALS[number]}]


def test_the_raise_line_of_the_handler_is_no_kill() -> None:
    # the source line Python prints under the frame spells "got signal: " with no number
    text = '    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)\n'
    assert _parse(text)[0]["kind"].to_list() == ["log"]


def test_tgi_warmup_reraise_is_the_cuda_oom_and_its_echoes_are_logs() -> None:
    events = events_of("pytorch_lorax_warmup_not_enough_memory_prefill_tokens_01.log").sort("line")
    assert events.select("line", "kind", "severity").rows() == [
        (1, "cuda_oom", "error"), (2, "log", "error"), (3, "log", "error"), (4, "log", "error"), (5, "log", "info"),
    ]


def test_tgi_warmup_traceback_tail_is_one_cuda_oom_record() -> None:
    events = events_of("pytorch_tgi_warmup_not_enough_memory_cut_traceback_01.log").sort("line")
    assert events.select("line", "n_lines", "kind").rows() == [(1, 3, "cuda_oom"), (5, 1, "log"), (6, 13, "traceback")]


def test_tgi_before_1_0_total_tokens_wording_is_a_cuda_oom() -> None:
    text = (
        "RuntimeError: Not enough memory to handle 16000 total tokens with 2 prefill tokens. "
        "You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`\n"
    )
    assert _parse(text)[0]["kind"].to_list() == ["cuda_oom"]


def test_vllm_v1_kv_cache_shortfall_reads_both_sizes_and_the_estimate() -> None:
    events = events_of("vllm_v1_kv_cache_needed_larger_than_available_tpu_01.log")
    assert events.select("line", "n_lines", "kind", "severity").rows() == [(1, 5, "traceback", "error")]
    attrs = attrs_of(events)[0]
    assert {k: attrs[k] for k in ("vllm_error", "max_seq_len", "kv_cache_needed_bytes", "kv_cache_available_bytes", "max_model_len_estimate")} == {
        "vllm_error": "kv_cache_insufficient", "max_seq_len": 131072, "kv_cache_needed_bytes": 16 * 2**30,
        "kv_cache_available_bytes": round(0.71 * 2**30), "max_model_len_estimate": 5632,
    }


def test_default_cpu_allocator_is_a_host_oom_with_the_request() -> None:
    events = events_of("pytorch_deepspeed_rank_prefix_default_cpu_allocator_cant_allocate_01.log")
    assert events.select("kind", "severity", "mem_requested_bytes").rows() == [("log", "critical", 21474836480)]
    assert attrs_of(events) == [{"rank": 0, "oom": "torch_cpu_allocator"}]


def test_default_cpu_allocator_in_a_traceback_keeps_the_traceback_kind() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    x = torch.empty(n)\n"
        "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: not enough memory: "
        "you tried to allocate 4009910272 bytes.\n"
    )
    event = _parse(text)[0].row(0, named=True)
    assert (event["kind"], event["n_lines"], event["mem_requested_bytes"]) == ("traceback", 4, 4009910272)
    assert attrs_of(pl.DataFrame({"attrs": [event["attrs"]]}))[0]["oom"] == "torch_cpu_allocator"
