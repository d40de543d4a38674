"""Logs exported from a cluster's log service (Google Cloud Logging, CloudWatch Logs, Grafana Loki) as JSON lines.

Each record's own time, level, pod, namespace, container and node are read, and its line is parsed as the pipeline parses
that line alone. The records are synthetic, in the shapes `gcloud logging read`, `aws logs filter-log-events` (one event a
line, as `jq -c '.events[]'` gives them) and `logcli query --output=jsonl` write.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl

import rca

REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
    "of which 1.50 GiB is free."
)
HEX_ID = "0123456789abcdef" * 4
STREAM = f"ip-10-0-1-2.ec2.internal-application.var.log.containers.trainer-0_team-a_pytorch-{HEX_ID}.log"


def _parse(*records: dict) -> pl.DataFrame:
    text = "\n".join(json.dumps(record, separators=(",", ":")) for record in records) + "\n"
    return rca.parse_text(text, file="export.jsonl", reference_time=REFERENCE)


def _gcl_container(payload: dict, severity: str = "ERROR") -> dict:
    return {
        "insertId": "abc123",
        "labels": {"compute.googleapis.com/resource_name": "gke-ml-pool-1-abcd", "k8s-pod/app": "trainer"},
        "logName": "projects/p/logs/stderr",
        "receiveTimestamp": "2024-05-01T12:00:05.123456789Z",
        "resource": {
            "labels": {
                "cluster_name": "ml",
                "container_name": "pytorch",
                "location": "us-central1",
                "namespace_name": "team-a",
                "pod_name": "trainer-0",
                "project_id": "p",
            },
            "type": "k8s_container",
        },
        "severity": severity,
        **payload,
        "timestamp": "2024-05-01T12:00:00.123456789Z",
    }


def _only(events: pl.DataFrame, kind: str) -> dict:
    rows = events.filter(pl.col("kind") == kind)
    assert rows.height == 1, events.select("kind", "message").to_dicts()
    return rows.row(0, named=True)


def test_cloud_logging_text_payload_is_the_line_with_the_pods_names_and_its_own_time() -> None:
    oom = _only(_parse(_gcl_container({"textPayload": OOM_LINE})), "cuda_oom")
    assert (oom["pod"], oom["namespace"], oom["container"], oom["host"]) == ("trainer-0", "team-a", "pytorch", "gke-ml-pool-1-abcd")
    assert oom["ts"] == datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert oom["severity"] == "error"
    assert oom["message"].startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert json.loads(oom["attrs"])["free_bytes"] == round(1.5 * 1024**3)


def test_cloud_logging_json_payload_message_is_the_line() -> None:
    oom = _only(_parse(_gcl_container({"jsonPayload": {"message": OOM_LINE, "logger": "train"}})), "cuda_oom")
    assert oom["pod"] == "trainer-0"
    assert oom["message"].startswith("torch.OutOfMemoryError")


def test_a_k8s_node_journal_entry_is_the_kernels_line_on_its_node() -> None:
    entry = {
        "insertId": "n1",
        "jsonPayload": {"MESSAGE": "NVRM: Xid (PCI:0000:00:04): 79, pid=1234, GPU has fallen off the bus.", "SYSLOG_IDENTIFIER": "kernel"},
        "labels": {"compute.googleapis.com/resource_name": "gke-ml-pool-1-abcd"},
        "resource": {"labels": {"cluster_name": "ml", "node_name": "gke-ml-pool-1-abcd", "project_id": "p"}, "type": "k8s_node"},
        "severity": "DEFAULT",
        "timestamp": "2024-05-01T12:00:01.5Z",
    }
    xid = _only(_parse(entry), "xid")
    assert xid["host"] == "gke-ml-pool-1-abcd"
    assert xid["ts"] == datetime(2024, 5, 1, 12, 0, 1, 500000, tzinfo=UTC)


def test_cloud_loggings_emergency_is_critical() -> None:
    events = _parse(_gcl_container({"textPayload": "node is going down"}, severity="EMERGENCY"))
    assert events["severity"].to_list() == ["critical"]


def test_cloudwatch_events_name_the_pod_by_their_stream_and_a_traceback_over_three_events_is_one() -> None:
    lines = ["Traceback (most recent call last):", '  File "train.py", line 10, in <module>', OOM_LINE]
    events = _parse(
        *(
            {"logStreamName": STREAM, "timestamp": 1714564800123 + n, "message": line, "ingestionTime": 1714564805000, "eventId": str(n)}
            for n, line in enumerate(lines)
        )
    )
    oom = _only(events, "cuda_oom")
    assert (oom["pod"], oom["namespace"], oom["container"], oom["host"]) == ("trainer-0", "team-a", "pytorch", "ip-10-0-1-2.ec2.internal")
    assert oom["ts"] == datetime(2024, 5, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert oom["message"].startswith("Traceback (most recent call last):\n")
    assert events.height == 1


def test_loki_jsonl_line_is_the_message_with_its_stream_labels() -> None:
    record = {
        "labels": {"app": "trainer", "pod": "trainer-0", "namespace": "team-a", "container": "pytorch"},
        "line": OOM_LINE + "\n",
        "timestamp": "2024-05-01T14:00:00.5+02:00",
    }
    oom = _only(_parse(record), "cuda_oom")
    assert (oom["pod"], oom["namespace"], oom["container"]) == ("trainer-0", "team-a", "pytorch")
    assert oom["ts"] == datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=UTC)


def test_a_source_lines_number_under_line_is_no_message() -> None:
    events = _parse({"file": "main.go", "line": 42, "level": "error", "time": "2024-05-01T12:00:00Z"})
    assert events["message"].to_list() == ['{"file":"main.go","line":42,"level":"error","time":"2024-05-01T12:00:00Z"}']
    assert events["severity"].to_list() == ["error"]


# --- whole export documents, as the CLIs write them by default ---------------------------------------------------------


def _ingested(tmp_path, name: str, document: str) -> tuple[pl.DataFrame, dict]:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / name).write_text(document)
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    store = rca.open_store(tmp_path / "store")
    return store.events().sort("line"), store.manifest().row(0, named=True)


def test_gclouds_json_array_newest_first_is_read_record_by_record_oldest_first(tmp_path) -> None:
    earlier = {
        **_gcl_container({"textPayload": "step 100 loss 1.23"}, "INFO"), "timestamp": "2024-05-01T11:59:00Z",
        "labels": {"compute.googleapis.com/resource_name": "gke-ml-pool-2-efgh"},
    }
    document = json.dumps([_gcl_container({"textPayload": OOM_LINE}), earlier], indent=2)  # gcloud logging read --format=json
    events, row = _ingested(tmp_path, "trainer.json", document)
    # (the file lies in the folder's root, named for no host: each record's node is its host; in a host's folder too, below)
    assert events.select("line", "kind", "pod", "container", "severity", "host").rows() == [
        (1, "log", "trainer-0", "pytorch", "info", "gke-ml-pool-2-efgh"), (2, "cuda_oom", "trainer-0", "pytorch", "error", "gke-ml-pool-1-abcd"),
    ]
    assert (row["source"], row["lines"], row["events"], row["status"]) == ("pipeline", 2, 2, "ok")


def test_cloudwatchs_events_document_groups_a_traceback_over_its_events(tmp_path) -> None:
    lines = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', OOM_LINE]
    document = json.dumps({
        "events": [{"logStreamName": STREAM, "timestamp": 1714564800000 + n, "message": line, "ingestionTime": 1714564801000,
                    "eventId": str(n)} for n, line in enumerate(lines)],
        "searchedLogStreams": [],
    }, indent=4)  # aws logs filter-log-events --output json
    events, row = _ingested(tmp_path, "cloudwatch.json", document)
    assert events.select("kind", "n_lines", "pod", "namespace", "container").rows() == [("cuda_oom", 3, "trainer-0", "team-a", "pytorch")]
    assert (row["lines"], row["events"], row["merged_lines"]) == (3, 1, 2)


def test_a_truncated_export_is_a_file_with_a_problem_and_the_rest_is_read(tmp_path) -> None:
    (tmp_path / "logs").mkdir()
    whole = json.dumps([_gcl_container({"textPayload": OOM_LINE})], indent=2)
    (tmp_path / "logs" / "cut.json").write_text(whole[: len(whole) - 40])  # a download cut short
    (tmp_path / "logs" / "train.log").write_text(OOM_LINE + "\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    manifest = rca.open_store(tmp_path / "store").manifest().sort("path")
    assert manifest.select("path", "status").rows() == [("cut.json", "error"), ("train.log", "ok")]
    assert "not a readable log export" in manifest["error"][0]


def test_json_lines_of_the_same_records_are_read_line_by_line_not_as_one_document(tmp_path) -> None:
    # a Cloud Storage log sink writes one LogEntry a line
    document = "\n".join(json.dumps(_gcl_container({"textPayload": text}), separators=(",", ":")) for text in ("step 1", OOM_LINE)) + "\n"
    events, row = _ingested(tmp_path, "sink.json", document)
    assert events.select("kind", "pod").rows() == [("log", "trainer-0"), ("cuda_oom", "trainer-0")]
    assert (row["status"], row["lines"]) == ("ok", 2)


def test_the_logging_apis_entries_behind_a_byte_order_mark_are_read(tmp_path) -> None:
    document = "\ufeff" + json.dumps({"entries": [_gcl_container({"textPayload": OOM_LINE})], "nextPageToken": "x"}, indent=2)
    events, row = _ingested(tmp_path, "entries.json", document)
    assert events.select("kind", "pod").rows() == [("cuda_oom", "trainer-0")]
    assert row["status"] == "ok"


def test_records_of_mixed_time_types_keep_their_order() -> None:
    from rca.sources._log_exports import record_lines

    records = [{"timestamp": "2024-05-01T12:00:00Z", "textPayload": "a", "logName": "l"}, {"timestamp": 1714564800000, "message": "b"}]
    assert [json.loads(text)["timestamp"] for text in record_lines(json.dumps(records).encode())["text"]] == [
        "2024-05-01T12:00:00Z", 1714564800000,
    ]


def test_an_exports_records_keep_their_nodes_in_a_folder_named_for_a_host(tmp_path) -> None:
    (tmp_path / "logs" / "exports").mkdir(parents=True)
    (tmp_path / "logs" / "exports" / "trainer.json").write_text(json.dumps([_gcl_container({"textPayload": OOM_LINE})], indent=2))
    (tmp_path / "logs" / "exports" / "train.log").write_text(OOM_LINE + "\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    events = rca.open_store(tmp_path / "store").events()
    assert sorted(events.select("file", "host").rows()) == [("exports/train.log", "exports"), ("exports/trainer.json", "gke-ml-pool-1-abcd")]
