"""Python logging's "%(asctime)s %(name)s %(levelname)s: %(message)s" (maskrcnn-benchmark and its descendants): an application's
line, its level after the logger's name; never a syslog line whose host is the logger."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import FIXED_MTIME, parse_fixture

_LEVELS = {"DEBUG": "debug", "INFO": "info", "WARNING": "warning", "ERROR": "error", "CRITICAL": "critical"}


def test_the_real_sample_is_an_application_log_with_its_level_and_no_host() -> None:
    events = parse_fixture("pytorch_maskrcnn_benchmark_logger_lines_01.log")
    assert events.select("source", "format", "severity", "host", "process").unique().rows() == [("pipeline", "iso8601", "info", None, None)]
    assert events["ts"].to_list() == [datetime(2018, 12, 25, 15, 25, 13, 756000, tzinfo=UTC), datetime(2018, 12, 25, 15, 25, 19, 666000, tzinfo=UTC)]


def test_a_cuda_oom_logged_at_error_keeps_its_kind() -> None:
    text = (
        "2020-08-18 10:03:40,666 tan.trainer INFO: Start training\n"
        "2020-08-18 10:04:12,001 tan.trainer ERROR: RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB "
        "total capacity; 9.80 GiB already allocated; 9.56 MiB free; 9.94 GiB reserved in total by PyTorch)\n"
    )
    events = rca.parse_text(text, file="train.log", reference_time=FIXED_MTIME)
    assert events.select("source", "kind", "severity", "host").rows() == [("pipeline", "log", "info", None), ("pipeline", "cuda_oom", "error", None)]
    assert events["mem_requested_bytes"].to_list()[1] == 20 * 1024**2


def test_a_syslog_line_with_an_iso_stamp_is_still_syslog() -> None:
    events = rca.parse_text("2024-04-10T10:15:57.163826-07:00 gpu-node-3 systemd[1]: Started Session 3 of user root.\n", file="messages")
    assert events.select("source", "host", "process", "pid").row(0) == ("syslog", "gpu-node-3", "systemd", 1)


@settings(max_examples=30, deadline=None)
@given(
    logger=st.from_regex(r"[a-z][a-z_]{0,8}(?:\.[a-z_]{1,8}){0,2}", fullmatch=True),
    level=st.sampled_from(sorted(_LEVELS)),
    ms=st.integers(0, 999),
    words=st.from_regex(r"[a-z]{1,8}(?: [a-z0-9]{1,8}){0,4}", fullmatch=True),
)
def test_the_level_after_any_logger_name_is_the_severity(logger: str, level: str, ms: int, words: str) -> None:
    line = f"2021-03-04 05:06:07,{ms:03d} {logger} {level}: {words}\n"
    row = rca.parse_text(line, file="app.log", reference_time=FIXED_MTIME).row(0, named=True)
    assert (row["source"], row["severity"], row["host"]) == ("pipeline", _LEVELS[level], None)
    assert row["ts"] == datetime(2021, 3, 4, 5, 6, 7, ms * 1000, tzinfo=UTC)
