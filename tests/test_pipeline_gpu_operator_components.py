"""The GPU operator's components as the pipeline source reads their container logs: nvidia-mig-manager, mig-parted,
dcgm-exporter, the validator and the driver manager (logrus, in its logfmt and its text formatter; client-go's klog)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import parse_fixture, parse_log


def _rows(events: pl.DataFrame, *columns: str) -> dict[int, tuple]:
    return {row[0]: row[1:] for row in events.select("line", *columns).rows()}


def test_mig_manager_wrapper_klog_and_logrus_lines() -> None:
    rows = _rows(parse_fixture("gpu_operator_mig_manager_klog_logrus_wrapper_01.log"), "severity", "format", "ts", "ts_quality")
    # the wrapper script's echo lines carry neither time nor level
    assert rows[4] == (None, "text", None, "missing")
    # klog gives no year: the file's own logrus lines (2023-12-25) date it, not the copy's mtime (2026)
    assert rows[5] == ("warning", "klog", datetime(2023, 12, 25, 7, 53, 18, 74295, tzinfo=UTC), "year_inferred")
    assert rows[6] == ("info", "logfmt", datetime(2023, 12, 25, 7, 53, 18, tzinfo=UTC), "exact")
    assert len(rows) == 17


def test_logrus_levels_and_dcgm_exporter_numbered_warning() -> None:
    rows = _rows(parse_fixture("gpu_operator_dcgm_exporter_fatal_nv_hostengine_init_01.log"), "severity", "format", "ts_quality")
    assert rows == {
        1: ("warning", "text", "missing"),  # "Warning #2: dcgm-exporter doesn't have sufficient privileges …"
        2: ("info", "logfmt", "exact"),
        3: (None, "text", "missing"),  # DCGM's bare "CacheManager Init Failed. Error: -17"
        4: ("critical", "logfmt", "exact"),  # level=fatal
    }


def test_logfmt_levels_map_to_severities() -> None:
    levels = ["panic", "fatal", "error", "warning", "warn", "info", "debug", "trace"]
    text = "".join(f'time="2024-01-02T03:04:0{i}Z" level={level} msg="m {i}"\n' for i, level in enumerate(levels))
    severities = parse_log(text).sort("line")["severity"].to_list()
    assert severities == ["critical", "critical", "error", "warning", "warning", "info", "debug", "debug"]


# logrus' text formatter (no clock time: the bracket counts seconds since start), as nvidia-mig-parted printed it in
# NVIDIA/mig-parted issue #5 (https://github.com/NVIDIA/mig-parted/issues/5), padding kept; inline, not a fixture: a file
# of such lines alone has no time, which ingest flags as an unrecognised format while "text" is the format these lines get.
_MIG_PARTED = (
    "DEBU[0000] Parsing config file...                       \n"
    "DEBU[0000]   GPU 0: 0x20F110DE                          \n"
    "DEBU[0000] Error checking MIG capable: error opening bar0 MMIO resource: failed to open file for mmio: failed to mmap file: invalid argument\n"
    " \n"
    "FATA[0000] Assertion failure: selected configuration not currently applied\n"
    "WARN[0005] failed to validate the driver, retrying after 5 seconds\n"  # the validator's (NVIDIA/gpu-operator issue #1687)
)


def test_logrus_text_formatter_lines() -> None:
    rows = _rows(parse_log(_MIG_PARTED), "severity", "ts", "message")
    assert rows[1] == ("debug", None, "Parsing config file...")  # the padding to 44 columns is dropped
    assert rows[2] == ("debug", None, "  GPU 0: 0x20F110DE")  # the message's own indent is kept
    assert rows[5] == ("critical", None, "Assertion failure: selected configuration not currently applied")
    assert rows[6] == ("warning", None, "failed to validate the driver, retrying after 5 seconds")


_LEVELS = {"DEBU": "debug", "INFO": "info", "WARN": "warning", "ERRO": "error", "FATA": "critical", "PANI": "critical"}


@settings(max_examples=15, deadline=None)
@given(
    level=st.sampled_from(sorted(_LEVELS)),
    seconds=st.integers(0, 99999),
    message=st.from_regex(r"[A-Za-z][A-Za-z0-9 .,:'()=/-]{0,60}[A-Za-z0-9.)]", fullmatch=True),
)
def test_logrus_text_message_is_read_without_its_padding(level: str, seconds: int, message: str) -> None:
    line = f"{level}[{seconds:04d}] {message:<44}"
    row = parse_log(line + "\n").row(0, named=True)
    assert (row["severity"], row["format"], row["message"], row["ts"]) == (_LEVELS[level], "logrus_text", message, None)


def test_a_file_of_logrus_text_lines_alone_is_a_recognised_log(tmp_path: Path) -> None:
    folder = tmp_path / "logs" / "n1"
    folder.mkdir(parents=True)
    (folder / "mig-parted.log").write_text(_MIG_PARTED)
    files = rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1).files
    assert files.select("source", "format", "status").row(0) == ("pipeline", "logrus_text", "ok")
