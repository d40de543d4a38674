"""Signal notices of frameworks and CI agents, DeepSpeed's failed rank, and vLLM's engine death (pipeline source).

Lightning's "[rank: N] Received SIGTERM: 15" (a bare one is no kill: other daemons print it on a normal stop), CircleCI's 'Received "killed" signal', the local rank in DeepSpeed's
launcher line, and vLLM's "EngineCore encountered a fatal error" / EngineDeadError / "Engine process failed to start".
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca

DATA = Path(__file__).parent / "data" / "pipeline"


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"]) if event["attrs"] else {}


def _only(text: str) -> dict:
    events = _events(text).to_dicts()
    assert len(events) == 1
    return events[0]


@pytest.mark.parametrize(
    "line",
    [
        "[rank: 0] Received SIGTERM: 15",
        "Epoch 3:  50%|#####     | 5/10 [00:01<00:01, 4.2it/s][rank: 1] Received SIGTERM: 15",  # after a progress bar's last draw
    ],
)
def test_lightning_sigterm_notice_is_a_kill(line: str) -> None:
    event = _only(line + "\n")
    assert (event["kind"], event["severity"]) == ("process_killed", "error")
    assert _attrs(event)["signal"] == "SIGTERM"


def test_lightning_rank_is_kept() -> None:
    assert _attrs(_only("[rank: 3] Received SIGTERM: 15\n"))["rank"] == 3


@pytest.mark.parametrize(
    "line",
    [
        "Bypassing SIGTERM: 15",  # Lightning's handler of a repeat: no new kill
        "Received SIGTERM: 15",  # no rank: any daemon's notice of a normal stop
        "The job log will contain Received SIGTERM: 15",  # a sentence quoting it
        "Received SIGTERM: 15 seconds ago",
    ],
)
def test_sigterm_notice_lookalikes_are_not_kills(line: str) -> None:
    assert _only(line + "\n")["kind"] == "log"


@pytest.mark.parametrize(
    ("word", "signal"), [("killed", "SIGKILL"), ("terminated", "SIGTERM"), ("segmentation fault", "SIGSEGV"), ("aborted", "SIGABRT")]
)
def test_circleci_received_signal_names_it(word: str, signal: str) -> None:
    event = _only(f'Received "{word}" signal\n')
    assert (event["kind"], event["severity"], event["exit_code"]) == ("process_killed", "error", None)
    assert _attrs(event)["signal"] == signal


def test_circleci_signal_needs_its_own_line() -> None:
    assert _only('the step said Received "killed" signal\n')["kind"] == "log"


def test_circleci_fixture() -> None:
    event = _only((DATA / "ci_circleci_received_killed_signal_01.log").read_text())
    assert (event["kind"], _attrs(event)) == ("process_killed", {"signal": "SIGKILL"})


@settings(max_examples=50, deadline=None)
@given(rank=st.integers(0, 4095), code=st.sampled_from([-9, -11, -6, 1, 2]))
def test_deepspeed_launcher_line_names_the_local_rank(rank: int, code: int) -> None:
    line = (
        "[2024-03-20 20:31:29,269] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
        f"'--local_rank={rank}', '--deepspeed', 'ds.json'] exits with return code = {code}\n"
    )
    event = _only(line)
    assert (event["exit_code"], event["severity"]) == (code, "error")
    assert _attrs(event)["rank"] == rank


def test_deepspeed_fixtures_name_their_ranks() -> None:
    exit1 = _events((DATA / "pytorch_deepspeed_launcher_exit1_local_rank4_01.log").read_text())
    assert exit1.filter(pl.col("line") == 3).select("exit_code", "attrs").row(0) == (1, '{"rank":4}')
    segv = _events((DATA / "pytorch_deepspeed_launcher_return_code_segv_01.log").read_text())
    killed = segv.filter(pl.col("kind") == "process_killed").to_dicts()
    assert [(e["exit_code"], _attrs(e)) for e in killed] == [(-11, {"rank": 1, "signal": "SIGSEGV"})]


def test_vllm_engine_core_fatal_error_and_engine_dead() -> None:
    events = _events((DATA / "vllm_v1_enginecore_fatal_error_ray_engine_dead_01.log").read_text())
    dead = events.filter(pl.col("attrs").str.contains('"vllm_error":"engine_dead"', literal=True))
    assert dead.select("line", "kind", "n_lines").rows() == [(5, "log", 1), (34, "traceback", 6)]
    assert dead["severity"].to_list() == ["error", "error"]
    root = events.filter(pl.col("line") == 6).to_dicts()[0]
    assert (root["kind"], root["n_lines"], root["pid"]) == ("traceback", 25, 597873)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("RuntimeError: Engine process failed to start\n", "engine_start_failed"),  # vLLM 0.6's frontend
        ("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n", "engine_start_failed"),
        ("ERROR 01-16 17:16:49 [core_client.py:605] Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.\n",
         "engine_dead"),
    ],
)
def test_vllm_engine_failures_are_named(text: str, value: str) -> None:
    event = _only(text)
    assert (_attrs(event)["vllm_error"], event["severity"]) == (value, "error")
