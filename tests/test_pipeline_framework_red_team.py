"""Serving logs' headers and span fields, and launchers' reports of a child they lost, read as an SRE needs them."""

from __future__ import annotations

import json
from datetime import datetime

import rca
from tests.conftest import fixture_path

_REFERENCE = datetime(2024, 6, 1)


def _events(text: str) -> list[dict]:
    return rca.parse_text(text, file="serve.log", reference_time=_REFERENCE).to_dicts()


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"]) if event["attrs"] else {}


def test_empty_vllm_header_heads_the_traceback_its_call_logged_under_the_same_prefix() -> None:
    text = (
        "INFO 05-10 12:00:00 api_server.py:100] Started\n"
        "ERROR 05-10 12:00:01 engine.py:123] \n"
        "ERROR 05-10 12:00:01 engine.py:123] Traceback (most recent call last):\n"
        'ERROR 05-10 12:00:01 engine.py:123]   File "/x/engine.py", line 10, in run\n'
        'ERROR 05-10 12:00:01 engine.py:123]     raise RuntimeError("boom")\n'
        "ERROR 05-10 12:00:01 engine.py:123] RuntimeError: boom\n"
    )
    started, failed = _events(text)
    assert (failed["line"], failed["n_lines"], failed["kind"], failed["severity"]) == (2, 5, "traceback", "error")
    assert failed["message"].startswith("Traceback (most recent call last):")
    assert failed["ts"].isoformat().startswith("2024-05-10T12:00:01")
    assert started["kind"] == "log"


def test_empty_vllm_header_gives_a_bare_traceback_under_it_its_time() -> None:
    text = (
        "ERROR 05-10 12:00:03 engine.py:124] \n"
        "Traceback (most recent call last):\n"
        '  File "/x/engine.py", line 10, in run\n'
        "RuntimeError: boom2\n"
        "ERROR 05-10 12:00:04 [core.py:124] \n"
        "ERROR 05-10 12:00:04 [core.py:124] EngineCore failed\n"
    )
    traceback, logged = _events(text)
    assert (traceback["line"], traceback["n_lines"], traceback["kind"]) == (1, 4, "traceback")
    assert _attrs(traceback)["exc_message"] == "boom2"
    assert traceback["ts"].isoformat().startswith("2024-05-10T12:00:03")
    assert (logged["line"], logged["n_lines"], logged["message"], logged["severity"]) == (5, 2, "EngineCore failed", "error")


def test_empty_header_before_another_call_or_a_blank_line_stays_alone() -> None:
    text = (
        "ERROR 05-10 12:00:05 engine.py:1] \n"
        "INFO 05-10 12:00:06 engine.py:2] later\n"
        "INFO 05-10 12:00:07 engine.py:3] \n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/x/a.py", line 1, in f\n'
        "ValueError: x\n"
    )
    assert [(e["line"], e["n_lines"]) for e in _events(text)] == [(1, 1), (2, 1), (3, 1), (5, 3)]


def test_tgi_span_fields_line_ends_a_cut_traceback_and_names_its_rank() -> None:
    name = "pytorch_tgi_shard_cuda_oom_rank_field_01.log"
    events = rca.parse_text(fixture_path(name).read_text(), file=name).to_dicts()
    oom = next(e for e in events if e["kind"] == "cuda_oom")
    assert (oom["line"], oom["n_lines"], _attrs(oom)["rank"]) == (1, 2, 0)
    assert 2 not in [e["line"] for e in events]


def test_tgi_span_fields_line_names_the_rank_of_a_full_traceback() -> None:
    name = "pytorch_tgi_valueerror_num_heads_shard_terminated_rank1_01.log"
    events = rca.parse_text(fixture_path(name).read_text(), file=name).to_dicts()
    (traceback,) = [e for e in events if e["kind"] == "traceback"]
    assert (_attrs(traceback)["rank"], _attrs(traceback)["exc_type"]) == (0, "ValueError")


def test_tgi_shard_crashed_and_lower_case_terminated_name_their_rank() -> None:
    text = (
        "2023-06-03T03:40:00.000000Z ERROR text_generation_launcher: Shard 1 crashed\n"
        "2024-07-22T19:57:05.908774Z  INFO shard-manager: text_generation_launcher: shard terminated rank=3\n"
        "2023-06-03T03:40:01.000000Z  INFO text_generation_launcher: Sharding model on 2 processes\n"
    )
    crashed, terminated, sharding = _events(text)
    assert (_attrs(crashed)["rank"], crashed["severity"]) == (1, "error")
    assert _attrs(terminated)["rank"] == 3
    assert "rank" not in _attrs(sharding)


def test_called_process_error_of_a_signalled_child_under_a_lower_case_header_is_one_kill_of_its_rank() -> None:
    name = "pytorch_distributed_launch_sigkill_handler_died_with_signals_sigkill_01.log"
    (event,) = rca.parse_text(fixture_path(name).read_text(), file=name).to_dicts()
    assert (event["kind"], event["severity"], event["n_lines"]) == ("process_killed", "error", 12)
    assert (_attrs(event)["signal"], _attrs(event)["rank"]) == ("SIGKILL", 3)


def test_called_process_error_of_a_failed_child_keeps_its_exit_status() -> None:
    name = "pytorch_accelerate_simple_launcher_called_process_error_exit_status_1_01.log"
    (event,) = rca.parse_text(fixture_path(name).read_text(), file=name).to_dicts()
    assert (event["kind"], event["exit_code"], event["severity"]) == ("traceback", 1, "error")
    assert "rank" not in _attrs(event)


def test_tensorflow_1_glog_lines_without_a_date_report_the_op_kernel_oom() -> None:
    name = "tf_v1_glog_no_date_bfc_ran_out_op_kernel_oom_01.log"
    events = rca.parse_text(fixture_path(name).read_text(), file=name).to_dicts()
    assert [e["line"] for e in events if e["kind"] == "cuda_oom"] == [3, 6, 7]
    assert {e["format"] for e in events if e["line"] <= 6} == {"tensorflow"}
