"""Loghub's supercomputer logs (Blue Gene/L's RAS log, Thunderbird's syslog) in the pipeline source, and torch 2.6+'s NCCL watchdog wording."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_source_pipeline import _parse, attrs_of, events_of

BGL = "hpc_bgl_ras_loghub_01.log"
TBIRD = "hpc_thunderbird_syslog_loghub_01.log"


def test_bgl_line_gets_its_epoch_second_refined_by_the_local_stamps_microseconds() -> None:
    events = events_of(BGL).sort("line")
    first = events.row(0, named=True)
    # "- 1123262593 2005.08.05 R25-M1-N2 2005-08-05-10.23.13.029850 …": the local stamp is the epoch second in PDT (UTC-7)
    assert first["ts"] == datetime(2005, 8, 5, 17, 23, 13, 29850, tzinfo=UTC)
    assert (first["ts_raw"], first["ts_quality"], first["format"]) == ("1123262593", "exact", "bgl_ras")
    assert (first["severity"], first["process"], first["host"], first["pid"]) == ("warning", "HARDWARE", None, None)
    assert first["message"].startswith("PrepareForService shutting down NodeCard(")
    assert events.height == 34 and events["ts_quality"].unique().to_list() == ["exact"]


def test_bgl_levels_components_nodes_and_alert_labels() -> None:
    events = events_of(BGL).sort("line")
    picked = events.filter(events["line"].is_in([2, 3, 8, 9, 10, 16, 34]))
    assert picked.select("line", "severity", "process").rows() == [
        (2, "info", "DISCOVERY"), (3, "error", "DISCOVERY"), (8, "error", "DISCOVERY"), (9, "critical", "KERNEL"),
        (10, "info", "KERNEL"), (16, "critical", "APP"), (34, "critical", "APP"),
    ]
    assert attrs_of(picked) == [
        {"node": "UNKNOWN_LOCATION"}, {"node": "R40-M1-N5"}, {"node": "R26-M0-N7"}, {"node": "R00-M0-N6-C:J03-U11"},
        {"node": "R23-M0-N0-C:J10-U01"}, {"node": "R44-M0-N8-I:J18-U01"}, {"node": "R21-M0-N8-I:J18-U11", "alert": "APPSEV"},
    ]
    assert picked["message"][1] == "Can not get assembly information for node card"


def test_thunderbird_line_gets_its_epoch_second_program_pid_and_node() -> None:
    events = events_of(TBIRD).sort("line")
    assert events.height == 30 and set(events["format"]) == {"hpc_syslog"}
    # "Nov 9 12:10:33" is PST: the epoch second 1131567033 is 20:10:33 UTC
    assert events["ts"][0] == datetime(2005, 11, 9, 20, 10, 33, tzinfo=UTC)
    rows = events.filter(events["line"].is_in([1, 2, 6, 13, 14])).select("line", "pid", "process", "severity", "message").rows()
    assert rows == [
        (1, 27337, "sendmail", None, "My unqualified host name (dadmin1) unknown; sleeping for retry"),
        (2, 1682, "/apps/x86_64/system/ganglia-3.0.1/sbin/gmetad",
         None, "data_thread() got not answer from any [Thunderbird_A3] datasource"),
        (6, 24904, "ib_sm.x", None, "[ib_sm_sweep.c:1455]: No topology change"),
        # no program named: the kernel's subsystem and a continuation are messages
        (13, None, None, None, "- User ID: CentOS-4 (Kernel Module GPG key)"),
        (14, None, None, None, "ACPI: (supports S0 S4 S5)"),
    ]
    assert attrs_of(events.head(6)) == [
        {"node": "dadmin1"}, *[{"node": "tbird-admin1"}] * 3, {"node": "dn652"}, {"node": "tbird-sm1"},
    ]


def test_thunderbird_syslog_message_still_goes_through_the_rules() -> None:
    line = "- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 bash[2916]: line 1: 4242 Killed python train.py"
    events, _, _ = _parse(line + "\n")
    row = events.row(0, named=True)
    assert (row["kind"], row["ts_raw"], row["format"]) == ("process_killed", "1131566461", "hpc_syslog")
    assert attrs_of(events)[0]["node"] == "dn228"


def test_lines_that_only_start_like_it_are_left_alone() -> None:
    text = "- 1117838570 2005.06.03 not a stamp here\n- 1117838570 items left\n"
    events, _, _ = _parse(text)
    assert events["format"].to_list() == ["text", "text"]
    assert events["ts"].to_list() == [None, None]
    assert events["message"][0] == "- 1117838570 2005.06.03 not a stamp here"


_LOCAL_ZONE_HOURS = st.integers(min_value=-12, max_value=14)


@settings(max_examples=40, deadline=None)
@given(
    epoch=st.integers(min_value=1_000_000_000, max_value=1_999_999_999),
    micros=st.integers(min_value=0, max_value=999_999),
    hours=_LOCAL_ZONE_HOURS,
    skew=st.integers(min_value=0, max_value=3599),
)
def test_microseconds_refine_the_epoch_second_only_when_the_stamps_differ_by_whole_hours(
    epoch: int, micros: int, hours: int, skew: int
) -> None:
    local = datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None) + timedelta(hours=hours, seconds=skew)
    stamp = local.strftime("%Y-%m-%d-%H.%M.%S") + f".{micros:06d}"
    line = f"- {epoch} {local:%Y.%m.%d} R02-M1-N0-C:J12-U11 {stamp} R02-M1-N0-C:J12-U11 RAS KERNEL INFO x\n"
    row = _parse(line)[0].row(0, named=True)
    whole = datetime.fromtimestamp(epoch, UTC)
    assert row["ts"] == (whole + timedelta(microseconds=micros) if skew == 0 else whole)
    assert (row["ts_raw"], row["severity"], row["process"]) == (str(epoch), "info", "KERNEL")


def test_torch_2_6_watchdog_failure_line_gives_the_failed_and_last_work() -> None:
    # ProcessGroupNCCL's wording since torch 2.6, and its dump signal's capitalised "Last enqueued NCCL work"
    events = events_of("nccl_torch26_failure_detected_work_sequence_id_01.log").sort("line")
    assert attrs_of(events.filter(events["line"].is_in([1, 3]))) == [
        {"rank": 1, "pg_id": 1, "failed_seq": 1116, "last_enqueued_seq": 1118, "last_completed_seq": 1115},
        {"rank": 2, "pg_id": 1, "failed_seq": 1116, "last_enqueued_seq": 1118, "last_completed_seq": 1115},
    ]
    line = (
        "[rank1]:[E1204 17:58:23.734941081 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal"
        " due to a collective timeout from  rank 0 and we will try our best to dump the debug info. Last enqueued NCCL work: 1,"
        " last completed NCCL work: 1.\n"
    )
    assert attrs_of(_parse(line)[0]) == [{"rank": 1, "pg_id": 0, "pg_name": "default_pg", "last_enqueued_seq": 1, "last_completed_seq": 1}]
