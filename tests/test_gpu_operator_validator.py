"""The GPU operator's validator (nvidia-operator-validator's init containers) as the pipeline source reads its logs: lines
named by their container before logrus' logfmt, and the failures of its checks that carry no level."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from rca import sources
from tests.conftest import parse_fixture, parse_log


def _rows(events: pl.DataFrame, *columns: str) -> dict[int, tuple]:
    return {row[0]: row[1:] for row in events.select("line", *columns).rows()}


def test_container_named_logfmt_lines_keep_time_level_and_container() -> None:
    events = parse_fixture("gpu_operator_validator_container_tagged_logrus_01.log")
    stamp = datetime(2025, 8, 12, 2, 21, 46, tzinfo=UTC)
    assert _rows(events, "ts", "ts_quality", "severity", "format", "container") == {
        1: (stamp, "exact", "info", "logfmt", "driver-validation"),
        2: (stamp, "exact", "warning", "logfmt", "driver-validation"),
        3: (stamp, "exact", "info", "logfmt", "driver-validation"),
        4: (stamp, "exact", "warning", "logfmt", "driver-validation"),  # its msg's closing quote missing, as published
    }
    assert not events["message"].str.starts_with("driver-validation").any()


def test_a_container_name_needs_a_logfmt_stamp_after_it() -> None:
    events = parse_log("running command chroot with args [/run/nvidia/driver nvidia-smi]\n")
    assert events.select("container", "format", "ts").row(0) == (None, "text", None)


def test_validator_chroot_failure_is_an_error_and_the_file_is_the_pipelines() -> None:
    name = "gpu_operator_validator_driver_validation_chroot_retry_01.log"
    rows = _rows(parse_fixture(name), "severity", "format", "ts")
    assert len(rows) == 12
    assert rows[1] == (None, "iso8601", datetime(2024, 10, 24, 1, 25, 48, 176690, tzinfo=UTC))
    assert rows[2] == ("error", "iso8601", datetime(2024, 10, 24, 1, 25, 48, 178993, tzinfo=UTC))
    assert {rows[line][0] for line in (2, 5, 8, 11)} == {"error"}
    assert {rows[line][0] for line in (1, 3, 4, 6)} == {None}
    source, score = sources.sniff(["2024-10-24T09:25:48.176690024+08:00 running command chroot with args [/run/nvidia/driver nvidia-smi]"])
    assert source is not None and source.name == "pipeline" and score >= 0.5


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/cloud-native-stack issue #75 (coreutils' curly quotes in a UTF-8 locale)
        "chroot: failed to run command ‘nvidia-smi’: No such file or directory",
        # nebius/soperator issue #968
        "nvidia-smi: command not found",
        # NVIDIA/gpu-operator issue #277: the cuda-validation init container's CUDA sample
        "Failed to allocate device vector A (error code forward compatibility was attempted on non supported HW)!",
    ],
)
def test_unlevelled_validation_failures_are_errors(line: str) -> None:
    assert parse_log(line + "\n")["severity"].to_list() == ["error"]


def test_the_validators_retry_keeps_its_printed_level() -> None:
    # (cozystack/cozystack pull request #863: driver-validation's retry loop, a warning as the validator logs it)
    line = 'time="2025-04-24T07:21:03Z" level=warning msg="failed to validate the driver, retrying after 5 seconds\\n"'
    assert parse_log(line + "\n")["severity"].to_list() == ["warning"]


def test_a_word_before_an_unquoted_logfmt_time_is_no_container() -> None:
    events = parse_log("step ts=2024-05-01T10:00:01Z loss=0.31 lr=1e-4\n")
    assert events["container"].to_list() == [None]
    assert events["message"][0].startswith("step ")
