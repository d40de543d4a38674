"""Log-store exports that were files with a problem or read line by line as syslog: CloudWatch's get-log-events (its
events name no stream), Cloud Logging entries copied from the Logs Explorer one after another, an Elasticsearch hit or
search answer (the record is its ``_source``). The fixtures in tests/data/log_exports/ are verbatim public samples
(tests/data/real_logs/SOURCES.md): not in tests/data/pipeline/, whose fixtures must sniff as pipeline by their lines, nor
in expected.jsonl, whose samples are sniffed by their lines too, where ingest sniffs a document by its bytes first. The
search answer and the newest-first hits are synthetic, in Elasticsearch's shape.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime

import polars as pl

import rca
from rca.sources._log_exports import record_lines, sniff_bytes
from tests.conftest import fixture_path


def _ingested(tmp_path, *names: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    (tmp_path / "logs").mkdir()
    for name in names:
        shutil.copy(fixture_path(name), tmp_path / "logs" / name)
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    store = rca.open_store(tmp_path / "store")
    return store.events().sort("file", "line"), store.manifest().sort("path")


def test_cloudwatch_get_log_events_without_stream_names_is_read_event_by_event(tmp_path) -> None:
    events, manifest = _ingested(tmp_path, "json_cloudwatch_get_log_events_no_stream_name_01.json")
    assert manifest.select("source", "lines", "status").rows() == [("pipeline", 3, "ok")]
    assert events.select("line", "message", "ts_quality").rows() == [
        (1, "Example Event 1", "exact"),
        (2, "Example Event 1", "exact"),
        (3, "Example Event 2", "exact"),
    ]
    assert events["ts"][2] == datetime(2015, 6, 1, 20, 23, 4, 358000, tzinfo=UTC)


def test_logs_explorer_entries_copied_one_after_another_are_each_a_record(tmp_path) -> None:
    events, manifest = _ingested(tmp_path, "json_cloud_logging_copied_entries_text_and_json_payload_01.json")
    assert manifest.select("lines", "status").rows() == [(2, "ok")]
    assert events.select("line", "message", "severity").rows() == [
        (1, "notice with no additional data", "notice"),
        (2, "notice with data", "notice"),
    ]
    assert events["ts"].to_list() == [
        datetime(2023, 10, 12, 1, 35, 36, 731815, tzinfo=UTC),
        datetime(2023, 10, 12, 1, 37, 8, 69294, tzinfo=UTC),
    ]


def test_an_elasticsearch_hit_is_its_source_record_with_its_pod(tmp_path) -> None:
    events, _ = _ingested(tmp_path, "json_elasticsearch_hit_fluent_bit_source_kubernetes_01.json")
    row = events.row(0, named=True)
    assert events.height == 1
    assert (row["pod"], row["namespace"], row["container"], row["host"]) == (
        "fluent-bit-wjnfq",
        "dev-logging",
        "fluent-bit",
        "10.63.56.245",
    )
    assert row["ts"] == datetime(2018, 11, 3, 19, 31, 10, tzinfo=UTC)
    assert row["message"].endswith("Fluent-Bit v0.14.6\x1b[0m")


def test_one_copied_log_entry_alone_is_one_record() -> None:
    entry = json.dumps({"textPayload": "step 1", "logName": "projects/p/logs/stdout", "timestamp": "2024-05-01T12:00:00Z"}, indent=2)
    assert sniff_bytes(entry.encode()) == 0.9
    assert [json.loads(text)["textPayload"] for text in record_lines(entry.encode())["text"]] == ["step 1"]


def _hit(n: int, when: str) -> dict:
    source = {"@timestamp": when, "message": f"line {n}", "kubernetes": {"pod_name": "trainer-0"}}
    return {"_index": "logs-2024.05.01", "_id": str(n), "_source": source}


def test_a_search_answers_hits_newest_first_are_read_oldest_first() -> None:
    answer = {"took": 3, "hits": {"total": {"value": 2}, "hits": [_hit(2, "2024-05-01T12:00:05Z"), _hit(1, "2024-05-01T12:00:00Z")]}}
    document = json.dumps(answer, indent=2).encode()
    assert sniff_bytes(document) == 0.9
    assert [json.loads(text)["message"] for text in record_lines(document)["text"]] == ["line 1", "line 2"]


def test_a_document_of_other_json_is_no_export() -> None:
    assert sniff_bytes(b'{\n  "events": [\n    {"message": "deployed"}\n  ]\n}\n') == 0.0  # neither stream nor ingestion time
    assert sniff_bytes(b'{\n  "_source": {"message": "x"}\n}\n') == 0.0  # no index: not a hit
