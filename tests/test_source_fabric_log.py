"""The fabric_log source: NVIDIA Fabric Manager's and IMEX's own log files.

Fixtures: tests/data/fabric/fabricmanager_gpud_test_lines_01.log (fabric manager lines that
gpud's tests quote) and nvidia_imex_dra_docs_gb200_01.log (IMEX's log as NVIDIA's DRA driver
documentation prints it), fabricmanager_gb200_nvl_fatal_record_runbook_01.log (a GB200 NVL error
record of several lines) and fabricmanager_gpud_testdata_multicast_inband_01.log (inband messages
with their payload lines); see tests/data/real_logs/SOURCES.md.
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


def test_a_gb200_nvl_error_record_is_one_event_with_its_fields() -> None:
    # The header line ends "error on :" and the record's fields follow one a line, without a header of their own.
    source, score = sources.sniff(head_lines(FOLDER / "fabricmanager_gb200_nvl_fatal_record_runbook_01.log"))
    assert (source.name, score) == ("fabric_log", 0.9)
    events = _events("fabricmanager_gb200_nvl_fatal_record_runbook_01.log")
    assert events.height == 1
    record = events.row(0, named=True)
    assert (record["line"], record["n_lines"], record["severity"], record["ts_quality"]) == (1, 12, "critical", "exact")
    assert record["ts"] == datetime(2025, 10, 13, 18, 14, 38, tzinfo=UTC)
    assert record["message"].splitlines()[-1] == "errorStatus : 0x00000000"
    assert json.loads(record["attrs"]) == {
        "nvl_error": "fatal", "gpu_module_id": 3, "node_id": 7, "partition_id": 4137, "nvlink_port": 4,
        "gpu_fabric_guid": "0xED0A8727AFC3C6F9", "nvl_error_code": "0x06", "nvl_error_subcode": "0x0E", "port_down_reason_code": "0x0A",
    }


def test_a_payload_line_belongs_to_the_inband_message_above_it() -> None:
    events = _events("fabricmanager_gpud_testdata_multicast_inband_01.log")
    assert events.height == 53
    assert events["ts_quality"].unique().to_list() == ["exact"]  # no payload line left as an event without a time
    message = events.row(0, named=True)
    assert (message["line"], message["n_lines"]) == (1, 2)
    assert message["message"].endswith("\nMessage payload details:Team release request: Team Handle:99c9f23d49236386 Flags:0")
    assert events.filter(pl.col("n_lines") == 2).height == 23


def test_a_line_under_no_header_keeps_no_time() -> None:
    lines = ["IMEX Log initializing at: 3/27/2025 15:47:10.092", "[Mar 27 2025 15:47:10] [INFO] [tid 39] IMEX version 570.124.06 is running"]
    events = rca.parse_text("\n".join(lines) + "\n", file="nvidia-imex.log")
    assert events["ts_quality"].to_list() == ["missing", "exact"]
    assert events["n_lines"].to_list() == [1, 1]


def test_imex_lines_with_a_bare_level_before_its_log_is_set_up() -> None:
    # Logging to stderr (no log file), IMEX first says so with "WARNING:" / "INFO:" and no header.
    events = _events("nvidia_imex_dra_stderr_bare_levels_580_01.log")
    assert events["process"].unique().to_list() == [fabric_log.IMEX]
    assert events.height == 15 and events["n_lines"].unique().to_list() == [1]
    assert events.head(4)["severity"].to_list() == ["warning", "info", "warning", None]
    assert events.head(4)["ts_quality"].unique().to_list() == ["missing"]
    assert events.row(4, named=True)["ts"] == datetime(2026, 9, 18, 6, 40, 33, tzinfo=UTC)


def test_gb200_switch_port_events_name_the_switch_and_port() -> None:
    port_down, trunk = _events("fabricmanager_nmx_c_trunk_port_down_docs_01.log").to_dicts()
    assert (port_down["severity"], trunk["severity"]) == ("info", "warning")  # each line's own level
    assert json.loads(port_down["attrs"]) == {"nvswitch_guid": "0xb0cf0e0300e60b00", "nvswitch_port": 1, "fabric_event": "port_down"}
    assert json.loads(trunk["attrs"]) == {"nvswitch_guid": "0xb0cf0e0300e42e00", "nvswitch_port": 61, "fabric_event": "trunk_port_failure"}
    assert trunk["ts"] == datetime(2025, 7, 19, 18, 34, 57, tzinfo=UTC)


@pytest.mark.parametrize(
    ("line", "fm_version", "driver_version"),
    [
        # journalctl of a host whose driver package was upgraded without a reboot (search-index file id 69459278002)
        (("Aug 11 06:47:54 sprocket nv-fabricmanager[186868]: fabric manager NVIDIA GPU driver interface version 595.71.05"
          " don't match with driver version 590.48.01. Please update with matching NVIDIA driver package."), "595.71.05", "590.48.01"),
        # `systemctl status nvidia-fabricmanager` quoted in install troubleshooting notes (search-index file id 72921247)
        (("Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05"
          " doesn't match with driver version 550.120. Please update with the matching NVIDIA driver package."), "550.127.05", "550.120"),
    ],
)
def test_a_fabric_manager_of_another_driver_version_is_an_error(line: str, fm_version: str, driver_version: str) -> None:
    (event,) = rca.parse_text(line + "\n", file="syslog", reference_time=datetime(2026, 12, 1, tzinfo=UTC)).to_dicts()
    assert (event["source"], event["process"], event["severity"]) == ("syslog", "nv-fabricmanager", "error")
    attrs = json.loads(event["attrs"])
    assert (attrs["fabric_manager"], attrs["fabric_manager_version"], attrs["driver_version"]) == ("failed", fm_version, driver_version)
