"""A store written by another schema version, or with a damaged store.json, is refused with a clear message,
by the API and by every command (exit code 2, no traceback), and nothing is written to it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rca
from rca import schema
from rca.cli import app
from rca.errors import StoreError, StoreVersionError

DATA = Path(__file__).resolve().parents[1] / "data"
CURRENT = schema.SCHEMA_VERSION


@pytest.fixture
def store(tmp_path: Path) -> Path:
    (tmp_path / "logs" / "gpu-node-1").mkdir(parents=True)
    (tmp_path / "logs" / "gpu-node-1" / "dmesg.log").write_bytes((DATA / "kernel" / "dmesg_oom_cgroup_01.log").read_bytes())
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    return tmp_path / "store"


def _set_version(store: Path, version: object) -> None:
    meta = json.loads((store / "store.json").read_text())
    meta["schema_version"] = version
    (store / "store.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("version,expected", [
    (CURRENT + 1, f"was written by a newer rca (store schema {CURRENT + 1}, this rca reads {CURRENT}); re-ingest into a new store"),
    (0, f"was written by an older rca (store schema 0, this rca reads {CURRENT}); re-ingest into a new store"),
    (CURRENT - 1, f"was written by an older rca (store schema {CURRENT - 1}, this rca reads {CURRENT}); convert it with 'rca migrate --store"),
    ("2", "store.json names store schema '2', which no rca writes; the store is damaged"),
    (True, "store.json names store schema True, which no rca writes; the store is damaged"),
])
def test_another_schema_version_is_refused_with_what_to_do(store: Path, version: object, expected: str) -> None:
    _set_version(store, version)
    with pytest.raises(StoreVersionError) as refused:
        rca.open_store(store)
    assert expected in str(refused.value)


@pytest.mark.parametrize("content,expected", [
    ("{not json", "store.json is damaged (not valid JSON"),
    ("[1, 2]", "store.json is damaged (it holds no JSON object)"),
    ("\udcff", "store.json is damaged (not valid JSON"),
])
def test_a_damaged_store_json_is_a_store_error(store: Path, content: str, expected: str) -> None:
    (store / "store.json").write_bytes(content.encode("utf-8", errors="surrogateescape"))
    with pytest.raises(StoreError, match=re.escape(expected)):
        rca.open_store(store)


COMMANDS = [
    ["incidents"], ["correlate"], ["modes"], ["digest", "--week", "2026-W49"], ["export", "--out", "{tmp}/x.jsonl"],
    ["cluster", "--embedder", "tfidf"], ["timeline", "inc-000000000000"], ["postmortem", "inc-000000000000"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_command_prints_the_refusal_and_exits_2(store: Path, tmp_path: Path, command: list[str]) -> None:
    _set_version(store, CURRENT + 1)
    args = [part.format(tmp=tmp_path) for part in command] + ["--store", str(store)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "was written by a newer rca" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_ingest_into_a_newer_store_writes_nothing(store: Path, tmp_path: Path) -> None:
    _set_version(store, CURRENT + 1)
    before = {path: path.stat().st_mtime_ns for path in store.rglob("*") if path.is_file()}
    (tmp_path / "logs" / "gpu-node-1" / "more.log").write_bytes((DATA / "kubelet" / "kubelet_klog_eviction_01.log").read_bytes())
    result = subprocess.run([sys.executable, "-m", "rca", "ingest", str(tmp_path / "logs"), "--store", str(store), "--workers", "1"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert "was written by a newer rca" in result.stderr and "Traceback" not in result.stderr + result.stdout
    assert {path: path.stat().st_mtime_ns for path in store.rglob("*") if path.is_file()} == before
