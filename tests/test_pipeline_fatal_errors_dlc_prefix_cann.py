"""Pipeline source: a bare CPython fatal error, Alibaba PAI-DLC's replica prefix and CANN's error message before CANN 8."""

from __future__ import annotations

import json

import polars as pl

from tests.test_source_pipeline import _parse, events_of


def test_bare_fatal_python_error_under_ray_dedup_is_an_error_record() -> None:
    # Ray's deduplication left the line without the stacks faulthandler dumps: still the interpreter dying.
    fatal = events_of("ray_dedup_repeated_fatal_python_error_segfault_01.log").filter(pl.col("line") == 2).row(0, named=True)
    assert (fatal["kind"], fatal["severity"], fatal["pid"], fatal["ts_quality"]) == ("traceback", "error", 66693, "inherited")
    assert fatal["message"] == "Fatal Python error: Segmentation fault"
    assert json.loads(fatal["attrs"])["repeated"] == 3


def test_bare_fatal_python_error_reads_as_the_dumped_one() -> None:
    # The last line of a cut log (pytorch_sglang_npu_aicore_timeout_torch_npu_cann_errors_01.log) and the same line with
    # faulthandler's stacks under it (pytorch_faulthandler_fatal_python_error_threads_01.log) are alike.
    for name, line, n_lines in (
        ("pytorch_sglang_npu_aicore_timeout_torch_npu_cann_errors_01.log", 63, 1),
        ("pytorch_faulthandler_fatal_python_error_threads_01.log", 3, 9),
    ):
        event = events_of(name).filter(pl.col("line") == line).row(0, named=True)
        assert (event["kind"], event["severity"], event["n_lines"]) == ("traceback", "error", n_lines)
        assert event["message"].startswith("Fatal Python error: Aborted")


def test_fatal_error_keeps_its_runtime_state_line_and_the_stacks() -> None:
    # Py_FatalError (Python 3.8+) prints the runtime's state under its message (PJLab-ADG/DiLu issue #13).
    text = (
        "==========Loaded  memories/20_mem  Memory, Now the database has  21  items.==========\n"
        "Fatal Python error: (pygame parachute) Segmentation Fault\nPython runtime state: initialized\n\n"
        "Thread 0x00007f72ed5ff700 (most recent call first):\n"
        '  File "/home/anaconda3/envs/dilu2/lib/python3.8/http/client.py", line 972 in send\n'
    )
    events = _parse(text)[0]
    assert events.select("line", "n_lines", "kind", "severity").rows() == [(1, 1, "log", None), (2, 4, "traceback", "error")]


def test_pai_dlc_prefix_names_the_pod_and_lets_ray_tags_be_read() -> None:
    prefixed = events_of("ray_pai_dlc_master_prefix_python_traceback_01.log").row(0, named=True)
    assert (prefixed["pod"], prefixed["n_lines"]) == ("dlc163vnre3d5pv3-master-0", 5)
    assert json.loads(prefixed["attrs"])["exc_type"] == "AttributeError"
    # The prefix sits outside what Ray tags a worker's line with, as kubectl's does.
    text = "[dlc163vnre3d5pv3-worker-1] (WorkerDict pid=4242, ip=10.0.0.7) ERROR 06-01 22:12:45 [launcher.py:85] boom\n"
    event = _parse(text)[0].row(0, named=True)
    assert (event["pod"], event["pid"], event["process"], event["severity"], event["message"]) == (
        "dlc163vnre3d5pv3-worker-1", 4242, "WorkerDict", "error", "boom"
    )
    assert json.loads(event["attrs"])["node_ip"] == "10.0.0.7"


def test_replicas_tracebacks_are_kept_apart() -> None:
    text = (
        "[dlcabc-master-0] Traceback (most recent call last):\n[dlcabc-worker-0] Traceback (most recent call last):\n"
        '[dlcabc-master-0]   File "a.py", line 1, in <module>\n[dlcabc-worker-0]   File "b.py", line 2, in <module>\n'
        "[dlcabc-master-0] ValueError: a\n[dlcabc-worker-0] KeyError: 'b'\n"
    )
    tracebacks = _parse(text)[0].filter(pl.col("kind") == "traceback")
    assert tracebacks.select("line", "n_lines", "pod").rows() == [(1, 3, "dlcabc-master-0"), (2, 3, "dlcabc-worker-0")]


def test_cann_error_without_a_process_is_one_stamped_error() -> None:
    cann = events_of("pytorch_npu_hccl_cann_error_without_pid_01.log").filter(pl.col("line") == 5).row(0, named=True)
    assert (cann["kind"], cann["severity"], cann["n_lines"], cann["format"], cann["pid"]) == ("log", "error", 8, "cann", None)
    assert cann["ts"].isoformat() == "2024-05-21T11:57:54.167645+00:00"
    assert cann["message"].startswith("EJ0001: Failed to initialize the HCCP process.")
    assert cann["message"].splitlines()[2].strip() == "TraceBack (most recent call last):"


def test_a_dash_joined_stamp_without_a_cann_code_is_no_cann_line() -> None:
    event = _parse("2024-05-21-11:57:54.167.645 something happened\n")[0].row(0, named=True)
    assert (event["format"], event["severity"]) == ("text", None)
