"""torchrun's ChildFailedError table across torch versions, and Ray's deduplicated lines, in the pipeline source."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl

from tests.test_source_pipeline import _parse, _text, attrs_of, events_of


def _table_entries(events: pl.DataFrame) -> pl.DataFrame:
    return events.filter(pl.col("message").str.contains(r"^\s*exitcode\s*:")).sort("line")


def test_torch_1_9_table_gives_each_failure_its_rank_time_and_root_cause() -> None:
    # "Root Cause:" first, then "Other Failures:"; no host line, no padding before the colons.
    events = events_of("pytorch_torchrun_childfailed_legacy_other_failures_01.log")
    entries = _table_entries(events)
    assert entries.select("line", "kind", "severity", "pid", "exit_code", "ts_quality").rows() == [
        (6, "log", "error", 866229, 1, "exact"), (14, "log", "error", 866230, 1, "exact"),
    ]
    assert entries["ts"].to_list() == [datetime(2025, 2, 20, 22, 1, 20, tzinfo=UTC)] * 2
    assert attrs_of(entries) == [
        {"rank": 0, "local_rank": 0, "root_cause": True}, {"rank": 1, "local_rank": 1, "root_cause": False},
    ]
    # Each entry's msg repeats its exit code: no second failure.
    echoes = events.filter(pl.col("message").str.contains(r"^\s*msg: "))
    assert echoes.select("line", "kind", "exit_code").rows() == [(8, "log", None), (16, "log", None)]


def test_torch_1_9_table_under_the_launcher_traceback() -> None:
    events = events_of("pytorch_torchrun_childfailed_legacy_root_cause_layout_01.log")
    assert events.filter(pl.col("kind") == "traceback").select("line", "n_lines").rows() == [(1, 11)]
    entry = _table_entries(events).row(0, named=True)
    assert (entry["line"], entry["pid"], entry["exit_code"], entry["ts"]) == (19, 12342, 1, datetime(2023, 3, 31, 11, 18, 11, tzinfo=UTC))
    assert json.loads(entry["attrs"]) == {"rank": 0, "local_rank": 0, "root_cause": True}
    assert events.filter(pl.col("exit_code").is_not_null()).height == 1


def test_a_rank_killed_among_the_other_failures_is_no_root_cause() -> None:
    # torch 2.x: three ranks under "Failures:", the root cause's entry cut after its rank line.
    events = events_of("pytorch_torchrun_childfailed_failures_sigkill_not_root_01.log")
    entries = _table_entries(events)
    assert entries.select("line", "kind", "severity", "host", "pid", "exit_code").rows() == [
        (12, "log", "error", "localhost", 14692, 1),
        (19, "process_killed", "error", "localhost", 14689, -9),
        (26, "process_killed", "warning", "localhost", 14691, -15),
    ]
    assert [entry["ts"] for entry in entries.iter_rows(named=True)] == [
        datetime(2026, 9, 7, 13, 2, 58, tzinfo=UTC), datetime(2026, 9, 7, 13, 3, 29, tzinfo=UTC), datetime(2026, 9, 7, 13, 3, 29, tzinfo=UTC),
    ]
    assert attrs_of(entries) == [
        {"rank": 3, "local_rank": 3, "root_cause": False},
        {"signal": "SIGKILL", "rank": 0, "local_rank": 0, "root_cause": False},
        {"signal": "SIGTERM", "rank": 2, "local_rank": 2, "root_cause": False},
    ]
    # Each "traceback : Signal N (SIG…) received by PID N" repeats its entry: one kill each.
    assert events.filter(pl.col("kind") == "process_killed")["line"].to_list() == [19, 26]


def test_table_lines_behind_a_stamp_keep_their_entry_fields() -> None:
    events = events_of("pytorch_torchrun_childfailed_timestamped_lines_01.log")
    entries = _table_entries(events)
    assert entries.select("line", "host", "pid", "exit_code").rows() == [
        (10, "standalone-q1xmje-13716191-worker-0", 226, 1), (17, "standalone-q1xmje-13716191-worker-0", 227, 1),
    ]
    assert [(a["rank"], a["root_cause"]) for a in attrs_of(entries)] == [(0, False), (1, False)]


def test_torch_1_9_signal_message_and_a_signal_name_after_the_pid_are_one_kill_each() -> None:
    # torch 1.9's template ("msg:" holds the failure's message, quoted) and a later one that names the signal after the pid.
    text = (
        "Root Cause:\n[0]:\n  time: 2021-09-03_11:53:29\n  rank: 3 (local_rank: 1)\n  exitcode: -9 (pid: 4321)\n"
        '  error_file: <N/A>\n  msg: "Signal 9 (SIGKILL) received by PID 4321"\n'
        "=======================================\nOther Failures:\n[1]:\n  time      : 2021-09-03_11:53:30\n"
        "  host      : node-7\n  rank      : 2 (local_rank: 0)\n  exitcode  : -11 (pid: 4320) SIGSEGV\n  error_file: <N/A>\n"
        "  traceback : Signal 11 (SIGSEGV) received by PID 4320\n"
    )
    killed = _parse(text)[0].filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "host", "pid", "exit_code").rows() == [(5, None, 4321, -9), (14, "node-7", 4320, -11)]
    assert attrs_of(killed) == [
        {"signal": "SIGKILL", "rank": 3, "local_rank": 1, "root_cause": True},
        {"signal": "SIGSEGV", "rank": 2, "local_rank": 0, "root_cause": False},
    ]


def test_ray_repeat_count_is_an_attr_not_part_of_the_message() -> None:
    events, skipped, _ = _parse(_text("ray_dedup_repeated_fatal_python_error_segfault_01.log"))
    assert events.select("line", "pid", "message").rows() == [
        (1, 66693, "logging.cc:365:     @         0xffffffff  (unknown)  (unknown)"),
        (2, 66693, "Fatal Python error: Segmentation fault"),
    ]
    # A blank line Ray counted is a blank line of the log.
    assert skipped == {"blank": 1}


def test_ray_repeat_count_leaves_the_exception_of_a_worker_traceback_clean() -> None:
    oom = events_of("vllm_ascend_ray_worker_npu_out_of_memory_01.log").row(0, named=True)
    attrs = json.loads(oom["attrs"])
    assert attrs["repeated"] == 6
    assert attrs["exc_message"].endswith("to avoid fragmentation.")
    assert attrs["last_frame"].endswith("_device.py:106 in __torch_function__")
    assert "across cluster" not in oom["message"]


def test_ray_first_repeat_note_inside_a_traceback() -> None:
    # The count and Ray's note on deduplication ride on a line inside the traceback; the record's last line has none.
    events = events_of("ray_dedup_notice_inside_actor_traceback_nccl_error_01.log")
    tb = events.filter(pl.col("kind") == "traceback").row(0, named=True)
    assert (tb["line"], tb["n_lines"], tb["pid"], tb["process"]) == (3, 14, 4180678, "Actor")
    assert tb["message"].splitlines()[4] == "    )"
    assert "repeated" not in json.loads(tb["attrs"])
    assert json.loads(tb["attrs"])["exc_type"] == "cupy_backends.cuda.libs.nccl.NcclError"


def test_a_line_that_only_mentions_a_repeat_keeps_its_text() -> None:
    text = (
        "(pid=12) the suffix [repeated 2x across cluster] is Ray's\n"
        "(pid=12) RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB [repeated 9x across cluster]\n"
    )
    events = _parse(text)[0]
    assert events.select("kind", "message").rows() == [
        ("log", "the suffix [repeated 2x across cluster] is Ray's"),
        ("cuda_oom", "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB"),
    ]
    oom = attrs_of(events)[1]
    assert (oom["repeated"], oom["exc_message"]) == (9, "CUDA out of memory. Tried to allocate 2.00 MiB")
