"""JSON log records pretty-printed (`kubectl logs … | jq`, `json.dumps(record, indent=2)`, an array of them) read as the
records they are, and a Kubernetes JSON document a paste cut before its closing brackets read as far as it is whole."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl

import rca
from rca import sources
from rca.sources import ParseContext, lines_frame
from tests.conftest import fixture_path, head_lines

REFERENCE = datetime(2026, 11, 30, tzinfo=UTC)
RECORDS = [
    {"event": "Starting check", "level": "info", "timestamp": "2026-02-04T05:19:34.002764Z", "module": "m"},
    {"event": "Test failed", "level": "error", "gpu": "GPU-0", "detail": {"code": 29, "ids": [0, 1]}, "timestamp": "2026-02-04T05:19:40.606906Z"},
]
COLUMNS = ["line", "n_lines", "format", "kind", "severity", "ts_raw", "ts_quality", "message"]


def _parse(text: str, file: str = "records.log", **options: str) -> pl.DataFrame:
    return rca.parse_text(text, file=file, reference_time=REFERENCE, **options)


def _pretty(records: list[dict], indent: int = 2) -> str:
    return "".join(json.dumps(record, indent=indent) + "\n" for record in records)


def _pipeline(text: str) -> sources.Parsed:
    return sources.get("pipeline").parse(lines_frame(text), ParseContext(file="records.log", reference_time=REFERENCE))


def test_jq_output_is_one_event_per_record_with_its_time_level_and_message() -> None:
    events = _parse(_pretty(RECORDS))
    assert events["source"].to_list() == ["pipeline", "pipeline"]
    assert events.select(COLUMNS).rows() == [
        (1, 6, "json_lines", "log", "info", "2026-02-04T05:19:34.002764Z", "exact", "Starting check"),
        (7, 13, "json_lines", "log", "error", "2026-02-04T05:19:40.606906Z", "exact", "Test failed"),
    ]


def test_pretty_records_read_as_their_json_lines_do() -> None:
    compact = _parse("".join(json.dumps(record) + "\n" for record in RECORDS))
    for indent in (2, 4):
        pretty = _parse(_pretty(RECORDS, indent))
        same = ["format", "kind", "severity", "ts", "ts_quality", "message", "attrs"]
        assert pretty.select(same).rows() == compact.select(same).rows()


def test_record_lines_count_as_merged_not_skipped() -> None:
    text = _pretty(RECORDS)
    parsed = _pipeline(text)
    assert parsed.skipped == {}
    assert parsed.events["n_lines"].sum() == text.count("\n") == 19


def test_a_record_among_text_lines_is_one_event_between_them() -> None:
    text = (
        "2024-05-01 12:00:00,000 INFO starting\n"
        + json.dumps({"time": "2024-05-01T12:00:01Z", "level": "error", "msg": "CUDA out of memory. Tried to allocate 2.00 GiB"}, indent=2)
        + "\nTraceback (most recent call last):\n"
        + '  File "x.py", line 1, in <module>\n'
        + "RuntimeError: boom\n"
    )
    events = _parse(text, format="pipeline")
    assert events.select("line", "n_lines", "kind", "severity", "ts_raw").rows() == [
        (1, 1, "log", "info", "2024-05-01 12:00:00,000"),
        (2, 5, "cuda_oom", "error", "2024-05-01T12:00:01Z"),
        (7, 3, "traceback", "error", "2024-05-01T12:00:01Z"),  # (a traceback under a timed record: its time)
    ]
    assert events["message"][1] == "CUDA out of memory. Tried to allocate 2.00 GiB"


def test_an_array_of_records_holds_its_brackets_in_its_first_and_last_record() -> None:
    text = json.dumps(RECORDS, indent=2) + "\n"
    events = _parse(text)
    assert events.select("line", "n_lines", "severity", "message").rows() == [
        (2, 7, "info", "Starting check"),
        (8, 14, "error", "Test failed"),
    ]
    assert _pipeline(text).skipped == {}


def test_objects_that_are_no_record_or_no_json_stay_lines() -> None:
    config = json.dumps({"lr": 0.001, "layers": [1, 2]}, indent=2)
    python_dict = "{\n  'time': '2024-05-01T12:00:01Z',\n  'msg': 'x'\n}"
    # (the closing brace above the indent of its opening one: not the object's)
    unclosed = '{\n  "time": "2024-05-01T12:00:01Z",\n  "msg": "x",\nplain line\n}'
    for text in (config, python_dict, unclosed):
        lines = text.count("\n") + 1
        events = _parse("2024-05-01 12:00:00,000 INFO config:\n" + text + "\n", format="pipeline")
        assert events["line"].to_list() == list(range(1, lines + 2)), text
        assert set(events["n_lines"].to_list()) == {1}


def test_pretty_records_are_no_journal_records_and_journalctl_json_pretty_stays_syslog() -> None:
    head = _pretty(RECORDS).splitlines()
    assert sources.get("syslog").sniff(head) == 0.0
    source, _ = sources.sniff(head)
    assert source.name == "pipeline"
    source, _ = sources.sniff(head_lines(fixture_path("journal_json_pretty_sudo_01.log")))
    assert source.name == "syslog"


def test_cut_event_exporter_document_is_read_as_closed_where_it_ends() -> None:
    events = _parse(fixture_path("kubectl_event_exporter_npd_oomkilling_json_cut_01.json").read_text(), file="event.json")
    assert events.select("line", "n_lines", "source", "format", "kind", "pid", "process", "rss_bytes", "namespace", "ts_raw").rows() == [
        (1, 31, "k8s", "event_json", "oom_kill", 3504804, "kubectl", 60186624, "default", "2023-06-13T14:35:38Z"),
    ]
    assert json.loads(events["attrs"][0])["reason"] == "OOMKilling"


def _event(number: int, pid: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"node-1.{number}", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "node-1"},
        "reason": "OOMKilling",
        "message": f"Memory cgroup out of memory: Killed process {pid} (python) total-vm:2048kB, anon-rss:1024kB, file-rss:0kB, shmem-rss:0kB",
        "source": {"component": "kernel-monitor", "host": "node-1"},
        "firstTimestamp": "2023-06-13T14:35:38Z",
        "lastTimestamp": "2023-06-13T14:35:38Z",
        "type": "Warning",
    }


def _events_list_cut(after: str) -> tuple[str, int]:
    """``kubectl get events -o json`` of two events, cut after the first line that holds ``after``, and that line's number."""
    lines = json.dumps({"apiVersion": "v1", "items": [_event(1, 101), _event(2, 202)], "kind": "List"}, indent=4).splitlines()
    cut = next(number for number, line in enumerate(lines, 1) if after in line and number > 5)
    return "\n".join(lines[:cut]) + "\n", cut


def test_cut_events_list_reads_its_whole_items_and_leaves_the_cut_one_lines() -> None:
    text, cut = _events_list_cut('"name": "node-1.2"')
    events = _parse(text, file="events.json")
    first = events.filter(pl.col("kind") == "oom_kill")
    assert first.select("line", "format", "pid", "severity").rows() == [(4, "event_json", 101, "warning")]
    second = events.filter(pl.col("line") >= 4 + first["n_lines"][0])
    assert second["line"].to_list() == list(range(4 + first["n_lines"][0], cut + 1))
    assert set(second["kind"].to_list()) == {"log"}


def test_cut_between_items_reads_every_item() -> None:
    text, _ = _events_list_cut('"type": "Warning"')
    events = _parse(text, file="events.json").filter(pl.col("kind") == "oom_kill")
    assert events.select("pid", "format").rows() == [(101, "event_json")]


def test_cut_inside_a_lone_object_stays_text() -> None:
    lines = fixture_path("kubectl_event_exporter_npd_oomkilling_json_cut_01.json").read_text().splitlines()[:20]
    events = _parse("\n".join(lines) + "\n", file="event.json")
    assert events["kind"].to_list() == ["log"] * 20
