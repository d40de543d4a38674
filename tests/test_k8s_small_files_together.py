"""k8s is segmented: a folder of small kubectl files (a must-gather's describe and events per object) is read in one parse,
each file as it reads alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rca
from rca import _small_files
from rca.sources import k8s
from rca.sources._base import ParseContext, lines_frame
from tests.conftest import fixture_path

FIXTURES = (
    "kubectl_describe_pod_oomkilled_exit0_01.txt",
    "kubectl_get_events_all_namespaces.txt",
    "kubectl_get_events_json.json",
    "kubectl_describe_node_gpu_allocatable_below_capacity_hami_01.txt",
)


def _ingest(root: Path, store: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    rca.ingest(root, store, workers=1)
    opened = rca.open_store(store)
    return opened.events().sort("event_id"), opened.manifest().drop("run_id", "parts").sort("path")


def test_a_folder_of_kubectl_files_is_one_parse_and_reads_as_each_file_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "logs" / "node-a"
    folder.mkdir(parents=True)
    for name in FIXTURES:
        shutil.copy(fixture_path(name), folder / name)
    text_parses: list[int] = []
    parse_text = k8s._parse_text
    monkeypatch.setattr(
        k8s,
        "_parse_text",
        lambda lines, ctx: (
            text_parses.append(lines["batch_file"].n_unique() if "batch_file" in lines.columns else 1) or parse_text(lines, ctx)
        ),
    )
    read_alone: list[int] = []
    parse_each = _small_files._parse_each
    monkeypatch.setattr(_small_files, "_parse_each", lambda reads, writer: read_alone.append(len(reads)) or parse_each(reads, writer))
    together, together_files = _ingest(tmp_path / "logs", tmp_path / "together")
    monkeypatch.undo()
    # The three text files in one parse; the JSON document alone inside the same call; no file read again alone.
    assert (text_parses, read_alone) == ([3], [])
    assert set(together_files["source"]) == {"k8s"}
    with monkeypatch.context() as patch:
        patch.setattr(_small_files, "SMALL_FILE_BYTES", -1)  # no file is small: each is read alone
        alone, alone_files = _ingest(tmp_path / "logs", tmp_path / "alone")
    assert_frame_equal(together, alone)
    assert_frame_equal(together_files, alone_files)
    by_format = dict(together.group_by("format").len().iter_rows())
    assert by_format["describe_state"] == 1 and by_format["get_events"] >= 3 and by_format["event_json"] >= 1
    assert by_format["describe_resources"] == 1


# A describe pod cut inside its container's State block, and another file whose lines would go on with it.
_CUT_DESCRIBE = """Name:         trainer-0
Namespace:    ml
Node:         gpu-node-7/10.0.0.7
Containers:
  trainer:
    Container ID:   containerd://0123456789abcdef0123
    State:          Terminated
      Reason:       OOMKilled
"""
_NEXT_FILE = """      Exit Code:    137
      Started:      Tue, 29 Apr 2025 13:43:32 +0800
      Finished:     Tue, 29 Apr 2025 14:10:51 +0800
    Ready:          False
    Restart Count:  3
"""


def test_a_describe_cut_at_its_files_end_takes_none_of_the_next_files_lines() -> None:
    first = lines_frame(_CUT_DESCRIBE).with_columns(batch_file=pl.lit(0, pl.Int32))
    second = lines_frame(_NEXT_FILE, first_line=first.height + 1).with_columns(batch_file=pl.lit(1, pl.Int32))
    ctx = ParseContext(file="a.txt", files=(("a.txt", None), ("b.txt", None)))
    parsed = k8s.parse(pl.concat([first, second]), ctx)
    events = parsed.events.sort("line")
    state = events.filter(pl.col("format") == "describe_state").row(0, named=True)
    # The state ends with its file: no exit code or finish time of the next file's, its two lines only.
    assert (state["kind"], state["line"], state["n_lines"], state["exit_code"], state["ts"]) == ("container_oomkilled", 7, 2, None, None)
    assert (state["pod"], state["container"], state["container_id"]) == ("trainer-0", "trainer", "0123456789abcdef0123")
    # The next file's lines are a record of their own, of no pod, namespace, node or container.
    rest = events.filter(pl.col("line") == 9).row(0, named=True)
    assert (rest["n_lines"], rest["format"], rest["exit_code"]) == (5, "describe", None)
    assert (rest["pod"], rest["namespace"], rest["host"], rest["container"]) == (None, None, None, None)
    assert parsed.skipped_by_file == {0: {"section header": 1}}
