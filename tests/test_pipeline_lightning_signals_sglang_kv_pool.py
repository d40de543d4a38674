"""Pipeline source: PyTorch Lightning's reports of a rank's end (its SIGTERM handler, Fabric's child-process watcher) and
SGLang's startup refusal for want of memory for its KV-cache pool."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import FIXED_MTIME, fixture_path


def _events(text: str):
    return rca.parse_text(text, file="x.log", reference_time=FIXED_MTIME)


def test_lightning_sigterm_after_slurm_time_limit_is_one_kill_of_rank_0() -> None:
    events = _events(fixture_path("lightning_slurm_time_limit_received_sigterm_bypassing_01.log").read_text())
    assert events.select("line", "kind").rows() == [(1, "process_killed"), (2, "log"), (3, "process_killed"), (4, "log")]
    received = events.row(2, named=True)
    assert received["severity"] == "error"
    assert json.loads(received["attrs"]) == {"rank": 0, "signal": "SIGTERM"}
    # the handler's "Bypassing SIGTERM: 15" repeats the signal: no second kill
    assert events.row(3, named=True)["severity"] is None


def test_a_bare_received_sigterm_without_lightnings_rank_is_no_kill() -> None:
    (event,) = _events("Received SIGTERM: 15\n").to_dicts()
    assert event["kind"] == "log"


def test_fabric_child_watcher_names_the_childs_pid_rank_and_code() -> None:
    events = _events(fixture_path("lightning_fabric_child_process_terminated_forcefully_terminating_01.log").read_text())
    assert events.select("line", "kind", "n_lines").rows() == [(1, "traceback", 29), (30, "log", 1)]
    child = events.row(1, named=True)
    assert (child["pid"], child["exit_code"], child["severity"]) == (2084751, 1, "error")
    assert json.loads(child["attrs"]) == {"rank": 1}


@settings(max_examples=40, deadline=None)
@given(pid=st.integers(1, 4_000_000), rank=st.integers(1, 63), code=st.sampled_from([1, 2, 255, -9, -15, -11, -6]))
def test_fabric_child_watcher_any_child(pid: int, rank: int, code: int) -> None:
    line = (
        f"[rank: {rank}] Child process with PID {pid} terminated with code {code}. "
        "Forcefully terminating all other processes to avoid zombies \N{ZOMBIE}\n"
    )
    (event,) = _events(line).to_dicts()
    signal = {-9: "SIGKILL", -15: "SIGTERM", -11: "SIGSEGV", -6: "SIGABRT"}.get(code)
    # Popen's -N is the signal that ended the child: a kill; any other code is an exit
    assert (event["kind"], event["pid"], event["exit_code"], event["severity"]) == (
        "process_killed" if signal else "log", pid, code, "error",
    )
    attrs = json.loads(event["attrs"])
    assert attrs["rank"] == rank
    assert attrs.get("signal") == signal


def test_sglang_kv_pool_refusal_reads_as_vllms_no_cache_blocks() -> None:
    (event,) = _events(fixture_path("sglang_not_enough_memory_mem_fraction_static_current_value_01.log").read_text()).to_dicts()
    assert (event["kind"], event["severity"]) == ("log", "error")
    assert json.loads(event["attrs"]) == {"vllm_error": "no_cache_blocks"}


def test_sglang_refusal_in_older_wording_and_a_scheduler_traceback() -> None:
    # SGLang 0.1-0.4's message had no "Current value" tail; raised in its scheduler, it ends a traceback
    text = (
        "Traceback (most recent call last):\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 160, in init_memory_pool\n'
        "    raise RuntimeError(\n"
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"
    )
    (event,) = _events(text).to_dicts()
    assert (event["kind"], event["severity"], event["n_lines"]) == ("traceback", "error", 4)
    assert json.loads(event["attrs"])["vllm_error"] == "no_cache_blocks"
