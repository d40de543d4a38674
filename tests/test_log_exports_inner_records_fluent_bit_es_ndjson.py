"""A shipped record whose message is a JSON-lines record of its own; Fluent Bit's stdout output; Elasticsearch hits one a line.

The fixtures in tests/data/log_exports/ are verbatim public samples (tests/data/real_logs/SOURCES.md), asserted here rather
than in expected.jsonl. The records built in the tests are synthetic, in the shapes Grafana Loki's ``logcli --output=jsonl``,
CloudWatch's events, Cloud Logging's LogEntry, Fluent Bit's stdout / json_lines outputs and elasticdump write.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

import rca
from rca.sources._log_exports import sniff_bytes
from tests.conftest import fixture_path

REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
INNER = json.dumps({"level": "error", "ts": "2024-05-01T12:00:01.5Z", "msg": OOM}, separators=(",", ":"))
HEX_ID = "0123456789abcdef" * 4


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="export.log", reference_time=REFERENCE)


def _records(*records: dict) -> pl.DataFrame:
    return _parse("\n".join(json.dumps(record, separators=(",", ":")) for record in records) + "\n")


def _fixture(name: str) -> pl.DataFrame:
    return _parse(Path(fixture_path(name)).read_text())


# --- a record's message that is a record ---------------------------------------------------------------------------------


def test_a_loki_line_that_is_a_json_record_gives_its_level_and_message_at_the_streams_time() -> None:
    events = _records({"labels": {"pod": "trainer-0", "namespace": "team-a"}, "line": INNER, "timestamp": "2024-05-01T12:00:00Z"})
    assert events.select("kind", "severity", "message", "pod", "namespace").rows() == [("cuda_oom", "error", OOM, "trainer-0", "team-a")]
    assert events["ts"].to_list() == [datetime(2024, 5, 1, 12, 0, tzinfo=UTC)]


def test_a_cloudwatch_events_message_that_is_a_json_record_is_read_as_one() -> None:
    events = _records({"logStreamName": "app", "timestamp": 1714564800123, "message": INNER, "ingestionTime": 1714564805000})
    assert events.select("kind", "severity", "message").rows() == [("cuda_oom", "error", OOM)]
    assert events["ts"].to_list() == [datetime(2024, 5, 1, 12, 0, 0, 123000, tzinfo=UTC)]


def test_the_inner_records_level_is_over_the_shippers_which_names_the_stream() -> None:
    entry = {"textPayload": INNER, "severity": "INFO", "logName": "projects/p/logs/stdout", "timestamp": "2024-05-01T12:00:00Z"}
    assert _records(entry).select("severity", "message").rows() == [("error", OOM)]


def test_the_inner_records_time_is_the_events_where_the_shipper_gave_none() -> None:
    events = _records({"labels": {"pod": "trainer-0"}, "line": INNER})
    assert events["ts"].to_list() == [datetime(2024, 5, 1, 12, 0, 1, 500000, tzinfo=UTC)]
    assert events["severity"].to_list() == ["error"]


def test_a_json_record_with_a_stack_trace_gives_it_after_its_message() -> None:
    inner = json.dumps({"severity": "ERROR", "message": "step failed", "stack_trace": "Traceback (most recent call last):\n  boom"})
    events = _records({"logStreamName": "app", "timestamp": 1714564800000, "message": inner, "ingestionTime": 1714564805000})
    assert events["message"].to_list() == ["step failed\nTraceback (most recent call last):\n  boom"]
    assert events["severity"].to_list() == ["error"]


def test_a_records_own_message_is_kept_over_an_ecs_log_object() -> None:
    record = {"@timestamp": "2024-05-01T12:00:00Z", "log": {"level": "warn", "logger": "train"}, "message": "slow step"}
    assert _records(record).select("severity", "message").rows() == [("warning", "slow step")]


def test_an_object_that_is_no_record_leaves_the_shipped_record_as_it_was() -> None:
    record = {"labels": {"pod": "trainer-0"}, "line": '{"step":1,"loss":0.5}', "timestamp": "2024-05-01T12:00:00Z"}
    assert _records(record)["message"].to_list() == [json.dumps(record, separators=(",", ":"))]


def test_a_docker_json_file_line_holding_a_python_json_record_is_that_record() -> None:
    events = _fixture("json_docker_json_file_log_holding_json_record_01.log")
    assert events.select("line", "kind", "severity", "message").rows() == [(1, "log", "debug", "starting %s")]
    assert events["ts"].to_list() == [datetime(2017, 6, 16, 7, 31, 39, 745970, tzinfo=UTC)]


# --- Fluent Bit's stdout output --------------------------------------------------------------------------------------------


def test_fluent_bits_stdout_records_cut_by_their_newline_are_each_the_pods_line_at_its_time() -> None:
    events = _fixture("json_fluent_bit_stdout_kube_tail_records_01.log")
    pod_a, pod_b = "simple-app-deployment-dd44b5ff4-2zhps", "simple-app-deployment-dd44b5ff4-58bg4"
    assert events.select("line", "kind", "message", "pod", "namespace", "container").rows() == [
        (1, "log", "Count 249", pod_a, "default", "simple-app"),
        (3, "log", "Count 250", pod_b, "default", "simple-app"),
        (5, "log", "Count 250", pod_a, "default", "simple-app"),
        (7, "log", "Count 251", pod_b, "default", "simple-app"),
        (9, "log", "Count 251", pod_a, "default", "simple-app"),
    ]
    assert events["ts"][0] == datetime(2024, 1, 9, 12, 32, 4, 484566, tzinfo=UTC)
    assert events["ts"][4] == datetime(2024, 1, 9, 12, 32, 6, 488614, tzinfo=UTC)


def test_a_fluent_bit_record_names_its_pod_by_its_kubernetes_map_and_its_json_line_by_its_level() -> None:
    tag = f"kube.var.log.containers.trainer-0_team-a_pytorch-{HEX_ID}.log"
    line = (
        f'[12] {tag}: [1714564800.250000000, {{"log"=>"{INNER}", "stream"=>"stderr", '
        '"kubernetes"=>{"pod_name"=>"trainer-0", "namespace_name"=>"team-a", "container_name"=>"pytorch", "host"=>"gke-node-1"}}]'
    )
    events = _parse(line + "\n")
    assert events.select("kind", "severity", "message", "pod", "namespace", "container", "host").rows() == [
        ("cuda_oom", "error", OOM, "trainer-0", "team-a", "pytorch", "gke-node-1"),
    ]
    assert events["ts"].to_list() == [datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)]


def test_a_fluent_bit_record_of_a_plain_line_keeps_the_quotes_it_printed_unescaped() -> None:
    line = '[0] app.log: [1714564800.000000000, {"log"=>"GET "/healthz" 200", "stream"=>"stdout"}]'
    assert _parse(line + "\n")["message"].to_list() == ['GET "/healthz" 200']


def test_fluent_bits_json_lines_date_is_the_records_time_where_it_is_an_epoch() -> None:
    events = _records(
        {"date": 1632081398.581249, "log": "epoch 1 loss 0.5\n", "stream": "stdout", "kubernetes": {"pod_name": "trainer-0"}},
        {"date": "Sun Sep 19 19:55:34 UTC 2021", "msg": "not an epoch"},
    )
    assert events.select("message", "pod").rows() == [("epoch 1 loss 0.5", "trainer-0"), ("not an epoch", None)]
    assert events["ts"].to_list() == [datetime(2021, 9, 19, 19, 56, 38, 581249, tzinfo=UTC), None]


# --- Elasticsearch hits, one a line --------------------------------------------------------------------------------------


def _hit(n: int, source: dict) -> dict:
    return {"_index": "logstash-2024.05.01", "_type": "_doc", "_id": str(n), "_score": 1, "_source": source}


def test_elasticdumps_hits_one_a_line_are_their_source_records() -> None:
    kubernetes = {"pod_name": "trainer-0", "namespace_name": "team-a", "container_name": "pytorch", "host": "node-1"}
    lines = [
        _hit(1, {"@timestamp": "2024-05-01T12:00:00Z", "log": "epoch 1\n", "stream": "stdout", "kubernetes": kubernetes}),
        _hit(2, {"@timestamp": "2024-05-01T12:00:05Z", "log": OOM + "\n", "stream": "stderr", "kubernetes": kubernetes}),
    ]
    document = "\n".join(json.dumps(hit, separators=(",", ":")) for hit in lines) + "\n"
    assert sniff_bytes(document.encode()) == 0.0  # JSON lines: read line by line, each hit a record
    events = _parse(document)
    assert events.select("kind", "message", "pod", "namespace", "container", "host").rows() == [
        ("log", "epoch 1", "trainer-0", "team-a", "pytorch", "node-1"),
        ("cuda_oom", OOM, "trainer-0", "team-a", "pytorch", "node-1"),
    ]
    assert events["ts"].to_list() == [datetime(2024, 5, 1, 12, 0, tzinfo=UTC), datetime(2024, 5, 1, 12, 0, 5, tzinfo=UTC)]


def test_a_hit_written_with_spaces_and_a_source_that_holds_a_json_record_are_read() -> None:
    hit = _hit(3, {"@timestamp": "2024-05-01T12:00:00Z", "message": INNER})
    events = _parse(json.dumps(hit) + "\n")  # ", " and ": " between members
    assert events.select("kind", "severity", "message").rows() == [("cuda_oom", "error", OOM)]


def test_a_fluent_bit_record_of_no_line_is_kept_as_printed() -> None:
    # A metrics input's record (cpu) has no log, message or msg: its fields are all it says.
    line = '[0] cpu.local: [1690000000.123456789, {"cpu_p"=>97.250000, "user_p"=>90.0, "system_p"=>7.25}]'
    events = _parse(line + "\n")
    assert events["message"].to_list() == [line]
