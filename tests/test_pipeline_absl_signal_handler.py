"""Pipeline source: Abseil's failure signal handler and CHECK stack, Abseil's pre-InitializeLog stamp, Ray Serve's replica tags."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_source_pipeline import _parse, events_of


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).row(0, named=True)


def test_signal_handler_dump_under_a_ray_serve_tag_is_one_killed_record() -> None:
    # bioimage-io/bioengine docs/README.md: a Ray Serve replica aborting, each frame with its stack frame's size.
    events = events_of("ray_serve_replica_absl_sigabrt_frame_sizes_01.log")
    dump = _row(events, 1)
    assert (dump["kind"], dump["severity"], dump["n_lines"]) == ("process_killed", "error", 15)
    assert (dump["pid"], dump["process"]) == (2712, "ServeReplica:default:HyphaRayAppManager")
    assert json.loads(dump["attrs"])["signal"] == "SIGABRT"
    # the handler's epoch second, the only time the dump gives
    assert (dump["ts_raw"], dump["ts_quality"]) == ("1725140764", "exact")
    assert dump["ts"] == datetime(2024, 8, 31, 21, 46, 4, tzinfo=UTC)
    assert dump["message"].splitlines()[-1].endswith("0x87b120  (unknown)  (unknown)")
    # Ray's own logging.cc repeat of it stays a line each, stamped
    repeat = _row(events, 16)
    assert (repeat["kind"], repeat["format"], repeat["pid"], repeat["n_lines"]) == ("log", "ray", 2712, 1)


def test_signal_handler_dump_of_a_vllm_ray_worker_keeps_its_node() -> None:
    events = events_of("vllm_ray_worker_absl_sigsegv_nccl_proxy_fatal_python_01.log")
    dump = _row(events, 1)
    assert (dump["kind"], dump["n_lines"], dump["pid"], dump["process"]) == ("process_killed", 4, 376235, "RayWorkerWrapper")
    assert json.loads(dump["attrs"]) == {"node_ip": "10.10.10.61", "signal": "SIGSEGV"}
    assert dump["ts"] == datetime(2025, 4, 27, 2, 52, 27, tzinfo=UTC)
    fatal = _row(events, 9)
    assert (fatal["kind"], fatal["n_lines"], fatal["ts_quality"]) == ("traceback", 1, "inherited")


def test_handler_that_faults_inside_itself_is_still_one_record() -> None:
    # ray-project/ray issue #28791: the handler's RAW note between the program counter and the frames.
    dump = _row(events_of("ray_absl_sigsegv_bare_fatal_python_error_01.log"), 1)
    assert (dump["kind"], dump["n_lines"], json.loads(dump["attrs"])["signal"]) == ("process_killed", 5, "SIGSEGV")


def test_a_ray_stamped_repeat_alone_is_not_read_as_the_handler() -> None:
    text = "[2022-09-27 00:21:27,008 E 73412 73420] logging.cc:361: *** SIGSEGV received at time=1664230887 on cpu 14 ***\n"
    event = _parse(text)[0].row(0, named=True)
    assert (event["kind"], event["ts_raw"]) == ("log", "2022-09-27 00:21:27,008")


_SIGNALS = ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE", "SIGTERM")


@settings(max_examples=25, deadline=None)
@given(
    signal=st.sampled_from(_SIGNALS),
    epoch=st.integers(min_value=1_500_000_000, max_value=1_999_999_999),
    cpu=st.one_of(st.none(), st.integers(min_value=0, max_value=255)),
    frames=st.lists(st.tuples(st.integers(min_value=0x400000, max_value=2**47), st.one_of(st.none(), st.integers(1, 99999))), max_size=6),
)
def test_any_handler_dump_is_one_record_with_its_signal_and_time(
    signal: str, epoch: int, cpu: int | None, frames: list[tuple[int, int | None]]
) -> None:
    on_cpu = f" on cpu {cpu}" if cpu is not None else ""
    lines = [f"*** {signal} received at time={epoch}{on_cpu} ***", "PC: @     0x7f0bf42e100b  (unknown)  raise"]
    lines += [f"    @ {pc:#18x} {size if size else '(unknown)':>10}  fn{i}()" for i, (pc, size) in enumerate(frames)]
    events = _parse("\n".join(lines) + "\nnext line of the job\n")[0]
    dump = _row(events, 1)
    assert (dump["kind"], dump["n_lines"]) == ("process_killed", len(lines))
    assert json.loads(dump["attrs"])["signal"] == signal
    assert dump["ts"] == datetime.fromtimestamp(epoch, UTC)
    assert _row(events, len(lines) + 1)["kind"] == "log"


def test_absl_preinit_stamp_is_the_epoch_and_the_check_stack_joins_its_line() -> None:
    # openxla/xla issue #47352: "I0000 00:00:<epoch>" lines, then a CHECK failure and Abseil's stack under it.
    events = events_of("jax_xla_absl_preinit_epoch_stamp_check_failure_stack_01.log")
    first = _row(events, 2)
    assert (first["format"], first["severity"], first["ts_raw"], first["ts_quality"]) == ("klog", "info", "1786851496.949462", "exact")
    assert first["ts"] == datetime(2026, 8, 16, 3, 38, 16, 949462, tzinfo=UTC)
    # the program's own indented line after a blank one is not the glog line's next line
    assert (_row(events, 7)["n_lines"], _row(events, 9)["n_lines"]) == (1, 1)
    check = _row(events, 11)
    assert (check["kind"], check["severity"], check["n_lines"], check["ts_quality"]) == ("traceback", "critical", 5, "exact")
    assert check["message"].splitlines()[1] == "*** Check failure stack trace: ***"


def test_dated_glog_lines_are_still_yearless() -> None:
    event = _parse("E0407 10:13:24.178000 2651 torch/distributed/run.py:984] failed\n")[0].row(0, named=True)
    assert (event["ts_raw"], event["ts_quality"], event["ts"]) == ("0407 10:13:24.178000", "year_inferred", datetime(2025, 4, 7, 10, 13, 24, 178000, tzinfo=UTC))
