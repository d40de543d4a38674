"""The dcgm source on nv-hostengine's own log (/var/log/nv-hostengine.log): stamp, level, ``[pid:tid]``, ``[[Module]]``,
message, ``[file:line] [function]``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rca
from rca.sources import dcgm
from rca.sources._base import ParseContext, lines_frame
from tests.conftest import DATA, FIXED_MTIME

FOLDER = DATA / "dcgm"
NVSWITCH = "dcgm_hostengine_nvswitch_nscq_nvsdm_01.log"
STARTUP = "dcgm_hostengine_40_startup_debug_01.log"


def _events(name: str, **kwargs: object) -> pl.DataFrame:
    return rca.parse_text((FOLDER / name).read_text(), file=name, reference_time=FIXED_MTIME, **kwargs)


def _parse(text: str) -> pl.DataFrame:
    return dcgm.parse(lines_frame(text), ParseContext(file="nv-hostengine.log", tz="Europe/Berlin")).events


def test_nvswitch_errors_read_with_module_source_and_function() -> None:
    events = _events(NVSWITCH)
    assert events.select("source", "format", "kind", "severity", "pid", "process").unique().rows() == [
        ("dcgm", "hostengine_log", "log", "error", 8999, "nv-hostengine"),
    ]
    first = events.row(0, named=True)
    assert first["message"] == "Could not load NVSDM"
    assert (first["ts"], first["ts_quality"]) == (datetime(2026, 7, 21, 5, 19, 17, 922000, tzinfo=UTC), "exact")
    assert json.loads(first["attrs"]) == {
        "tid": 8999,
        "module": "NvSwitch",
        "source": "./modules/nvswitch/DcgmNvsdmManager.cpp:974",
        "function": "DcgmNs::DcgmNvsdmManager::AttachToNvsdm",
    }
    assert json.loads(events["attrs"][4])["tid"] == 9058


def test_stamps_read_in_the_given_zone() -> None:
    events = _events(NVSWITCH, tz="America/New_York")
    assert events["ts"][0] == datetime(2026, 7, 21, 9, 19, 17, 922000, tzinfo=UTC)


def test_padded_levels_and_lines_without_module() -> None:
    events = _events(STARTUP)
    assert events["severity"].to_list() == ["debug", "info", "info", "debug", "debug", "info", "debug"]
    assert events["kind"].unique().to_list() == ["log"]  # "__DCGM_FATAL_XIDS__" names no Xid
    assert json.loads(events["attrs"][1]) == {
        "tid": 46359,
        "source": "/builds/dcgm/dcgm/dcgmlib/src/DcgmCacheManager.cpp:13317",
        "function": "DcgmCacheManagerEventThread::run",
    }


def test_continuation_lines_join_the_record_above_and_an_xid_is_named() -> None:
    text = (
        "nv-hostengine started by systemd\n"
        "2024-03-01 10:11:12.123 WARN  [1234:5678] [[Health]] GPU 3 reported Xid 79:\n"
        "GPU has fallen off the bus [/src/DcgmHealthWatch.cpp:42] [DcgmHealthWatch::Check]\n"
        "2024-03-01 10:11:13.000 FATAL [1234:1234] aborting\n"
    )
    events = _parse(text)
    assert events.select("line", "n_lines", "message").rows() == [
        (1, 1, "nv-hostengine started by systemd"),
        (2, 2, "GPU 3 reported Xid 79:\nGPU has fallen off the bus"),
        (4, 1, "aborting"),
    ]
    xid = events.row(1, named=True)
    assert (xid["kind"], xid["xid"], xid["severity"], xid["pid"]) == ("xid", 79, "warning", 1234)
    assert xid["ts"] == datetime(2024, 3, 1, 9, 11, 12, 123000, tzinfo=UTC)  # Berlin's winter time
    attrs = json.loads(xid["attrs"])
    assert (attrs["module"], attrs["source"], attrs["function"]) == ("Health", "/src/DcgmHealthWatch.cpp:42", "DcgmHealthWatch::Check")
    assert events.row(2, named=True)["severity"] == "critical"


def test_sniffed_where_most_lines_are_the_hostengine_s_only() -> None:
    head = (FOLDER / NVSWITCH).read_text().splitlines()
    assert dcgm.sniff(head) == 0.9
    assert dcgm.sniff(head[:1] + [f"step {number} loss 0.5" for number in range(5)]) == 0.0


def test_hostengine_log_beside_scrapes_reads_the_same_together_and_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "logs" / "gpu-node-01"
    folder.mkdir(parents=True)
    for name in (NVSWITCH, STARTUP, "dcgm_exporter_scrape_h100_2gpu.txt"):
        (folder / name).write_text((FOLDER / name).read_text())
    assert dcgm._scrape_files(
        pl.concat(
            [
                lines_frame((FOLDER / name).read_text()).with_columns(batch_file=pl.lit(number, pl.Int32))
                for number, name in enumerate((NVSWITCH, "dcgm_exporter_scrape_h100_2gpu.txt"))
            ]
        )
    ) == [1]
    rca.ingest(tmp_path / "logs", tmp_path / "together", workers=1)
    monkeypatch.setattr(rca._small_files, "SMALL_FILE_BYTES", -1)  # each file alone
    rca.ingest(tmp_path / "logs", tmp_path / "alone", workers=1)
    together, alone = rca.open_store(tmp_path / "together"), rca.open_store(tmp_path / "alone")
    assert_frame_equal(together.events().sort("event_id"), alone.events().sort("event_id"))
    assert together.events().filter(pl.col("format") == "hostengine_log").height == 12
