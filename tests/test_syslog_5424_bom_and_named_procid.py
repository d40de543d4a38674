"""RFC 5424 messages as rsyslog writes them: the UTF-8 byte order mark that opens a message, and a procid that is a word."""
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca

BOM = "\ufeff"
LATIN1_BOM = "\u00ef\u00bb\u00bf"


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def test_one_leading_bom_of_a_5424_message_is_taken_off():
    line = f'<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3"] {BOM}An application event'
    event = _events(line + "\n").row(0, named=True)
    assert (event["host"], event["process"], event["severity"]) == ("mymachine.example.com", "evntslog", "notice")
    assert event["message"] == "An application event"


def test_only_one_bom_is_taken_off():
    line = f"<13>1 2024-01-01T00:00:00Z host app - - - {BOM}{BOM}text"
    assert _events(line + "\n")["message"].to_list() == [BOM + "text"]


def test_tag_without_colon_before_a_bom_is_the_program():
    for mark in (BOM, LATIN1_BOM):
        events = _events(f"Aug 11 18:00:47 esp32-1 RC-Switch {mark}Temperature Sensor 1 25.937500\n")
        row = events.row(0, named=True)
        assert (row["source"], row["host"], row["process"], row["pid"]) == ("syslog", "esp32-1", "RC-Switch", None)
        assert row["message"] == "Temperature Sensor 1 25.937500"


def test_bom_after_a_colon_tag_is_taken_off():
    row = _events(f"Aug 11 18:00:47 host sshd[12]: {BOM}Accepted key\nAug 11 18:00:48 host cron[9]: x\n").row(0, named=True)
    assert (row["process"], row["pid"], row["message"]) == ("sshd", 12, "Accepted key")


def test_word_procid_in_the_tag_is_no_pid():
    text = "2024-09-15T12:41:21.466816+02:00 OpenDTU-347AF0 OpenDTU[e4975f6a] WiFi got ip: 192.168.8.242\n"
    row = _events(text).row(0, named=True)
    assert (row["host"], row["process"], row["pid"], row["ts_quality"]) == ("OpenDTU-347AF0", "OpenDTU", None, "exact")
    assert row["message"] == "WiFi got ip: 192.168.8.242"


def test_numeric_pid_without_colon_still_a_pid_in_the_short_head():
    row = _events("Apr 13 13:35:51 aj-host Fledge[16823] ERROR: x\nApr 13 13:35:52 aj-host Fledge[16823] ERROR: y\n").row(0, named=True)
    assert (row["process"], row["pid"]) == ("Fledge", 16823)


@settings(max_examples=40, deadline=None)
@given(
    procid=st.from_regex(r"\A[a-f][0-9a-f]{0,11}\Z"),
    message=st.from_regex(r"\A[A-Za-z][A-Za-z0-9 :./]{0,30}[A-Za-z0-9]\Z"),
    bom=st.booleans(),
)
def test_word_procid_and_bom_shapes(procid, message, bom):
    line = f"Aug 11 18:00:47 node-1 app[{procid}] {BOM if bom else ''}{message}"
    row = _events(f"{line}\n{line}\n").row(0, named=True)
    assert (row["host"], row["process"], row["pid"], row["message"]) == ("node-1", "app", None, message)
