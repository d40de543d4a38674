"""A log service's export written as one JSON document, read as the JSON lines of its records.

``gcloud logging read --format=json`` (and the Logs Explorer's download) writes Google Cloud Logging's LogEntry
objects as one pretty-printed JSON array, newest first; ``aws logs filter-log-events`` / ``get-log-events`` write
CloudWatch's events under ``"events"``; the Cloud Logging API's ``entries.list`` under ``"entries"``. Entries copied
out of the Logs Explorer one by one are pretty-printed objects one after another (a blank line between), or a single
one. An Elasticsearch / OpenSearch search answer holds its records under ``hits.hits``, each hit (as Kibana shows one
document, too) the record a collector shipped under ``"_source"``. Each record is the JSON-lines record the pipeline
source reads on its own (its time, severity, pod, namespace, container and node: see ``_JSON_KEYS`` in
:mod:`rca.sources._pipeline_frame`), so the document is turned into those lines, oldest first: a traceback a container
wrote over several records is then in the order it was written.
"""

from __future__ import annotations

import json
import re

import polars as pl

from rca.errors import FileFormatError

# Cloud Logging's LogEntry names its log and its payload; CloudWatch's events their stream (filter-log-events) or their
# ingestion time (get-log-events, from one stream); an Elasticsearch hit its index and the record it holds.
_CLOUD_LOGGING = ((b'"textPayload"', b'"jsonPayload"'), (b'"logName"', b'"insertId"', b'"receiveTimestamp"'))
_CLOUDWATCH = (b'"events"', b'"message"')
_CLOUDWATCH_EVENT = (b'"logStreamName"', b'"ingestionTime"')
_ELASTICSEARCH = (b'"_index"', b'"_source"')
_LISTS = ("events", "entries")
_TIME_KEYS = ("timestamp", "@timestamp")  # Elasticsearch's hits, as Kibana sorts them, newest first

_BOM = b"\xef\xbb\xbf"
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
"""A document is parsed whole in memory (about ten times its size at its peak): larger exports are refused with the
command that turns them into JSON lines, which are read in batches like any log."""


def sniff_bytes(head: bytes) -> float:
    """0.9 for a Cloud Logging, CloudWatch Logs or Elasticsearch export document, by its first bytes; 0 for JSON lines
    of the same records (a log sink's files, ``jq -c``'s output), which the pipeline source reads line by line."""
    head = head.removeprefix(_BOM).lstrip()
    if head[:1] not in (b"[", b"{") or _is_record_line(head.split(b"\n", 1)[0]):
        return 0.0
    payloads, log_keys = _CLOUD_LOGGING
    cloud_logging = any(key in head for key in payloads) and any(key in head for key in log_keys)
    cloudwatch = all(key in head for key in _CLOUDWATCH) and any(key in head for key in _CLOUDWATCH_EVENT)
    return 0.9 if cloud_logging or cloudwatch or all(key in head for key in _ELASTICSEARCH) else 0.0


def _is_record_line(line: bytes) -> bool:
    """Whether a first line is a whole record of its own (an object other than a list's holder): the file is JSON lines."""
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict) and not any(isinstance(value.get(key), list) for key in _LISTS)


def record_lines(data: bytes) -> pl.DataFrame:
    """The export's records as JSON lines (``line`` from 1, ``text``), oldest first."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise FileFormatError(
            f"a log export of {len(data):,} bytes is over the {MAX_DOCUMENT_BYTES:,}-byte limit of one document: write it as JSON"
            " lines (jq -c '.[]', or '.events[]' for CloudWatch) and ingest those"
        )
    try:
        values = _json_values(data.decode("utf-8-sig"))
    except ValueError as err:  # a truncated download, bytes that are not UTF-8
        raise FileFormatError(f"not a readable log export: {err}") from None
    records = [_shipped(record) for value in values for record in _records(value)]
    if not records:
        raise FileFormatError('a log export holds a list of records: a JSON array, or one under "events" or "entries"')
    if _newest_first(records):
        records.reverse()
    texts = [json.dumps(record, ensure_ascii=False) for record in records]
    return pl.DataFrame({"line": range(1, len(texts) + 1), "text": texts}, schema={"line": pl.Int64, "text": pl.String})


def _json_values(text: str) -> list:
    """The JSON values written one after another in ``text``: one for a CLI's document, several for copied entries."""
    values, end = [], _SPACE.match(text).end()
    while end < len(text):
        value, end = _DECODER.raw_decode(text, end)
        values.append(value)
        end = _SPACE.match(text, end).end()
    return values


def _records(value: object) -> list[dict]:
    """A value's records: an array's objects, the list under a CLI's or a search answer's key, or the object itself."""
    if isinstance(value, list):
        return [record for record in value if isinstance(record, dict)]
    if not isinstance(value, dict):
        return []
    hits = value.get("hits")
    held = [value.get(key) for key in _LISTS] + [hits.get("hits") if isinstance(hits, dict) else None]
    listed = next((records for records in held if isinstance(records, list)), None)
    return _records(listed) if listed is not None else [value]


def _shipped(record: dict) -> dict:
    """An Elasticsearch hit's ``_source`` (the record its collector shipped); any other record as it is."""
    source = record.get("_source")
    return source if "_index" in record and isinstance(source, dict) else record


def _newest_first(records: list[dict]) -> bool:
    """Whether the records run from the newest to the oldest, as gcloud lists them (by their times to the second)."""
    if len(records) < 2:
        return False
    first, last = _time(records[0]), _time(records[-1])
    return type(first) is type(last) and first is not None and first > last


def _time(record: dict) -> str | int | None:
    value = next((record[key] for key in _TIME_KEYS if key in record), None)
    if isinstance(value, str):
        return value[:19]  # RFC 3339 to the second: its fraction's digits vary
    return value if isinstance(value, int) else None  # CloudWatch's epoch milliseconds
