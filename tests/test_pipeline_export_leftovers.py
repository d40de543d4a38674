"""What log exports and tailers left for the pipeline source to read: the node a Loki stream's labels name, `logcli
query`'s "Common labels:" line, stern's --all-namespaces prefix "<namespace> <pod> <container> ", and the node a
collector or a tailer names winning over the host folder a JSON-lines export was put in.

The lines are synthetic, in the shapes those tools write (the verbatim ones are real-log fixtures).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
import pytest

import rca
from rca import _small_files

REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
    "of which 1.50 GiB is free."
)


def _parse(text: str, file: str = "tail.log") -> pl.DataFrame:
    return rca.parse_text(text, file=file, reference_time=REFERENCE)


def _oom(events: pl.DataFrame) -> dict:
    rows = events.filter(pl.col("kind") == "cuda_oom")
    assert rows.height == 1, events.select("kind", "message").to_dicts()
    oom = rows.row(0, named=True)
    assert oom["message"].startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert json.loads(oom["attrs"])["free_bytes"] == round(1.5 * 1024**3)
    return oom


def _loki_record(labels: dict, line: str) -> str:
    return json.dumps({"labels": labels, "line": line, "timestamp": "2024-05-01T12:00:01Z"})


def test_a_loki_streams_host_or_node_name_label_is_the_records_host() -> None:
    text = "\n".join(
        [
            _loki_record({"host": "node-7", "pod": "trainer-0"}, OOM_LINE),
            _loki_record({"node_name": "node-8", "pod": "trainer-1"}, "step 1"),
        ]
    )
    events = _parse(text + "\n", file="export.jsonl")
    assert events.select("pod", "host").rows() == [("trainer-0", "node-7"), ("trainer-1", "node-8")]
    assert _oom(events)["host"] == "node-7"


def test_json_lines_records_keep_their_nodes_in_a_folder_named_for_a_host(tmp_path) -> None:
    (tmp_path / "logs" / "host-a").mkdir(parents=True)
    (tmp_path / "logs" / "host-a" / "x.jsonl").write_text(_loki_record({"host": "node-7", "pod": "trainer-0"}, OOM_LINE) + "\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    assert rca.open_store(tmp_path / "store").events()["host"].to_list() == ["node-7"]


def _stamp(second: int) -> str:
    return f"2024-05-01T12:00:{second:02d}Z"


# One record a line, in the shapes the collectors write: gcloud logging read's LogEntry (a k8s_container's node in its
# resource's labels, a GCE instance's under its own labels), Fluent Bit's kubernetes filter, and an application's own
# JSON whose "host" names the database it connected to.
_EXPORTS = {
    "gcloud.jsonl": [
        {
            "textPayload": OOM_LINE,
            "resource": {"type": "k8s_container", "labels": {"node_name": "gke-a-1", "pod_name": "trainer-0"}},
            "timestamp": _stamp(1),
        },
        {"textPayload": "step 1", "labels": {"compute.googleapis.com/resource_name": "gke-a-2"}, "timestamp": _stamp(2)},
    ],
    "fluent-bit.jsonl": [
        {"log": "step 2", "kubernetes": {"host": "node-9", "pod_name": "trainer-1"}, "time": _stamp(3)},
        {"msg": "connected", "host": "db-1:5432", "time": _stamp(4)},
    ],
}
_LOGCLI = f'{_stamp(5)} {{node_name="gpu-3", pod="trainer-2"}} step 3\n{_stamp(6)} {{pod="trainer-3"}} step 4\n'


@pytest.mark.parametrize("small_file_bytes", [_small_files.SMALL_FILE_BYTES, -1], ids=["together", "alone"])
def test_the_node_a_collector_or_tailer_names_wins_over_the_folder_per_row(
    tmp_path, monkeypatch: pytest.MonkeyPatch, small_file_bytes: int
) -> None:
    monkeypatch.setattr(_small_files, "SMALL_FILE_BYTES", small_file_bytes)  # -1: no file is small, each is read alone
    folder = tmp_path / "logs" / "host-a"
    folder.mkdir(parents=True)
    for name, records in _EXPORTS.items():
        (folder / name).write_text("".join(json.dumps(record) + "\n" for record in records))
    (folder / "logcli.log").write_text(_LOGCLI)
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    events = rca.open_store(tmp_path / "store").events().sort("ts")
    assert events.select("message", "host").rows() == [
        (OOM_LINE, "gke-a-1"),
        ("step 1", "gke-a-2"),
        ("step 2", "node-9"),
        ("connected", "host-a"),  # the application's "host" names a peer: the folder's host stands
        ("step 3", "gpu-3"),
        ("step 4", "host-a"),  # a tailed line whose labels name no node
    ]
    assert events.columns == list(rca.schema.EVENT_SCHEMA)  # the parser's host_named flag is gone


def test_logclis_common_labels_reach_every_line_and_their_own_line_is_no_event() -> None:
    text = (
        'Common labels: {app="x", container="pytorch", namespace="ml", node_name="gpu-3", pod="trainer-0"}\n'
        "2024-05-01T12:00:00Z {} Starting training\n"
        f'2024-05-01T12:00:01Z {{stream="stderr"}} {OOM_LINE}\n'
        '2024-05-01T12:00:02Z {pod="trainer-1", stream="stdout"} done\n'
    )
    events = _parse(text)
    assert events.select("line", "pod", "namespace", "container", "host", "message").rows() == [
        (2, "trainer-0", "ml", "pytorch", "gpu-3", "Starting training"),
        (3, "trainer-0", "ml", "pytorch", "gpu-3", OOM_LINE),
        (4, "trainer-1", "ml", "pytorch", "gpu-3", "done"),  # a line's own label wins over the common one
    ]
    assert _oom(events)["ts"] == datetime(2024, 5, 1, 12, 0, 1, tzinfo=UTC)


def test_stern_all_namespaces_prefix_names_namespace_pod_and_container() -> None:
    text = (
        "+ team-a trainer-0 › pytorch\n"
        "team-a trainer-0 pytorch Starting training\n"
        f"team-a trainer-0 pytorch {OOM_LINE}\n"
        "ml trainer-1 pytorch step 1\n"
        "ml trainer-1 pytorch step 2\n"
    )
    events = _parse(text)
    assert events.select("line", "namespace", "pod", "container", "message").rows() == [
        (2, "team-a", "trainer-0", "pytorch", "Starting training"),
        (3, "team-a", "trainer-0", "pytorch", OOM_LINE),
        (4, "ml", "trainer-1", "pytorch", "step 1"),
        (5, "ml", "trainer-1", "pytorch", "step 2"),
    ]
    assert (_oom(events)["pod"], _oom(events)["namespace"]) == ("trainer-0", "team-a")


def test_stern_all_namespaces_with_timestamps_reads_the_stamp() -> None:
    text = "".join(f"ml trainer-0 pytorch 2024-05-01T12:00:0{n}Z step {n}\n" for n in range(3))
    events = _parse(text)
    assert events.select("pod", "namespace", "ts_raw", "message").row(2) == ("trainer-0", "ml", "2024-05-01T12:00:02Z", "step 2")


def test_stern_two_words_before_lines_starting_with_varied_words_stay_pod_and_container() -> None:
    # Without --all-namespaces a dashed container and the line's first word look like "<namespace> <pod> <container>".
    words = ["epoch", "loading", "saving", "resuming"]
    text = "".join(f"trainer-0 pytorch-main {word} shard {n}\n" for n, word in enumerate(words)) + f"trainer-0 pytorch-main {OOM_LINE}\n"
    events = _parse(text)
    assert events.select("pod", "container", "namespace").unique().rows() == [("trainer-0", "pytorch-main", None)]
    assert events["message"].to_list()[:2] == ["epoch shard 0", "loading shard 1"]
    assert _oom(events)["pod"] == "trainer-0"
