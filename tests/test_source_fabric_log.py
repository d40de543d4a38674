"""The fabric_log source: NVIDIA Fabric Manager's and IMEX's own log files.

Fixtures: tests/data/fabric/fabricmanager_gpud_test_lines_01.log (fabric manager lines that
gpud's tests quote) and nvidia_imex_dra_docs_gb200_01.log (IMEX's log as NVIDIA's DRA driver
documentation prints it); see tests/data/real_logs/SOURCES.md.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
import pytest

import rca
from rca import sources
from rca.sources import fabric_log
from tests.conftest import DATA, head_lines

FOLDER = DATA / "fabric"


def _events(name: str, **context: object) -> pl.DataFrame:
    return rca.parse_text((FOLDER / name).read_text(), file=name, **context)


def test_nvswitch_errors_of_the_fabric_manager_log() -> None:
    events = _events("fabricmanager_gpud_test_lines_01.log")
    assert events["source"].unique().to_list() == ["syslog"]  # as the daemon's lines in the journal
    assert events["process"].unique().to_list() == [fabric_log.FABRIC_MANAGER]
    assert events["severity"].to_list() == ["warning", "critical", "info", "error", "info"]
    fatal = events.row(1, named=True)
    assert (fatal["ts"], fatal["ts_quality"], fatal["pci_bus"]) == (datetime(2024, 7, 23, 7, 53, 55, tzinfo=UTC), "exact", "00000000:86:00.0")
    assert json.loads(fatal["attrs"]) == {"sxid": 20034, "nvswitch_physical_id": 3, "nvswitch_port": 33}
    assert events["xid"].null_count() == events.height  # an SXid is the switch's, never a GPU Xid


def test_the_stamps_zone_is_the_one_given() -> None:
    events = _events("fabricmanager_gpud_test_lines_01.log", tz="America/Los_Angeles")
    assert events["ts"][0] == datetime(2024, 7, 10, 1, 14, 7, tzinfo=UTC)


def test_imex_log_lines_are_imex_events() -> None:
    events = _events("nvidia_imex_dra_docs_gb200_01.log")
    assert events["process"].unique().to_list() == [fabric_log.IMEX]
    assert events.height == 20  # the blank lines between the configuration lines are skipped
    banner = events.row(0, named=True)
    assert (banner["line"], banner["ts"], banner["ts_quality"]) == (1, None, "missing")
    assert events["ts"].drop_nulls().unique().to_list() == [datetime(2025, 3, 27, 15, 47, 10, tzinfo=UTC)]
    assert events["severity"].drop_nulls().unique().to_list() == ["info"]


@pytest.mark.parametrize("name", ["fabricmanager_gpud_test_lines_01.log", "nvidia_imex_dra_docs_gb200_01.log"])
def test_the_daemons_logs_are_sniffed_as_theirs(name: str) -> None:
    source, score = sources.sniff(head_lines(FOLDER / name))
    assert (source.name, score) == ("fabric_log", 0.9)


def test_a_journal_line_of_the_fabric_manager_is_not_taken() -> None:
    head = ["Jul 23 07:53:55 dgx-01 nv-fabricmanager[841]: [Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034"]
    assert fabric_log.sniff(head) == 0.0
