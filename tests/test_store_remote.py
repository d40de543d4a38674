"""A store at an fsspec URL: the same events, manifest and guarantees as a local folder.

``memory://`` stands in for an object store in this process; the S3 test runs moto's
server on 127.0.0.1 so that worker processes write their parts to it themselves.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

import rca
from rca import _storefs, schema
from rca.cli import app
from rca.cluster import cluster_store
from rca.correlate import correlate_store
from rca.errors import StoreLockedError
from rca.store import Store
from tests.conftest import DATA

ONE_FAILURE = DATA / "correlate" / "one_failure"


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    shutil.copytree(ONE_FAILURE, root)
    return root


@pytest.fixture
def memory_url() -> Iterator[str]:
    name = f"rca-test-{uuid.uuid4().hex}"
    yield f"memory://{name}/store"
    fsspec.filesystem("memory").rm(f"/{name}", recursive=True)


def _without_run_ids(manifest: pl.DataFrame) -> pl.DataFrame:
    """The manifest with the run ids (which name every part) blanked: they differ between any two runs."""
    return manifest.with_columns(
        run_id=pl.lit(None, pl.String),
        parts=pl.col("parts").list.eval(pl.element().str.replace(r"-[0-9a-f]{12}-(\d{4}-\d{5}|group)\.parquet$", "-RUN-$1.parquet")),
    ).sort("path")


def _assert_same_store(a: Store, b: Store) -> None:
    assert_frame_equal(a.events(), b.events())
    assert_frame_equal(_without_run_ids(a.manifest()), _without_run_ids(b.manifest()))


def _comparable(summary: dict) -> dict:
    """An ingest summary with its (source, kind) counts in one order: the summary leaves ties unordered."""
    return {**summary, "by_source_kind": sorted(summary["by_source_kind"], key=lambda row: (row["source"], row["kind"]))}


def _stored_parts(url: str) -> list[str]:
    fs, root = fsspec.core.url_to_fs(url)
    return sorted(path[len(root) + len("/events/"):] for path in fs.glob(f"{root}/events/*/*/*.parquet"))


def test_a_memory_store_holds_what_a_local_store_holds(logs: Path, tmp_path: Path, memory_url: str) -> None:
    local = rca.ingest(logs, tmp_path / "store", workers=1)
    remote = rca.ingest(logs, memory_url, workers=1)
    assert remote.store == memory_url and _comparable(remote.summary) == _comparable(local.summary)
    _assert_same_store(rca.open_store(tmp_path / "store"), rca.open_store(memory_url))
    assert rca.open_store(memory_url).events().height == local.summary["events"] > 0
    assert _stored_parts(memory_url) == sorted({name for parts in rca.open_store(memory_url).manifest()["parts"] for name in parts})

    again = rca.ingest(logs, memory_url, workers=1)
    assert again.changes == {"unchanged": len(list(logs.rglob("*.*")))} and again.summary["events"] == 0
    _assert_same_store(rca.open_store(tmp_path / "store"), rca.open_store(memory_url))


def test_correlation_writes_the_same_incidents_to_a_memory_store(logs: Path, tmp_path: Path, memory_url: str) -> None:
    rca.ingest(logs, tmp_path / "store", workers=1)
    rca.ingest(logs, memory_url, workers=1)
    local, remote = rca.open_store(tmp_path / "store"), rca.open_store(memory_url)
    assert correlate_store(remote)["incidents"] == correlate_store(local)["incidents"] > 0
    assert_frame_equal(remote.incidents(), local.incidents())
    assert_frame_equal(remote.incident_events(), local.incident_events())
    assert remote.correlation_report()["incidents"] == local.correlation_report()["incidents"]


def test_clustering_writes_the_same_modes_to_a_memory_store(logs: Path, tmp_path: Path, memory_url: str) -> None:
    for where in (tmp_path / "store", memory_url):
        rca.ingest(logs, where, workers=1)
        correlate_store(rca.open_store(where))
        cluster_store(rca.open_store(where), embedder="hashing")
    local, remote = rca.open_store(tmp_path / "store"), rca.open_store(memory_url)
    assert_frame_equal(remote.incidents(), local.incidents())
    assert_frame_equal(remote.failure_modes(), local.failure_modes())
    assert remote.embeddings().height == local.embeddings().height > 0


def test_a_draft_in_a_memory_store_is_written_once(memory_url: str) -> None:
    store = Store(memory_url)
    tables = schema.empty(schema.CLUSTERED_INCIDENT_SCHEMA), schema.empty(schema.FAILURE_MODE_SCHEMA), schema.empty(schema.EMBEDDING_SCHEMA)
    with store.writing():
        written = store.write_clustering(*tables, {"draft-a.yaml": "evidence: {incident_id: i-1}\n"})
        assert store.write_clustering(*tables, {"draft-a.yaml": "edited by nobody\n"}) == []
    assert [str(where) for where in written] == [str(where) for where in store.kb_drafts()]
    assert list(store.kb_drafts().values()) == ["evidence: {incident_id: i-1}\n"]


def test_a_failed_run_leaves_the_previous_memory_store_intact(logs: Path, memory_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rca.ingest(logs, memory_url, workers=1)
    before = rca.open_store(memory_url)
    events, manifest, parts = before.events(), before.manifest(), _stored_parts(memory_url)
    for log in logs.rglob("*.log"):
        log.write_text(log.read_text() + log.read_text())  # every file grew: new parts for each
    write_parquet, written = _storefs.write_parquet, []

    def dies_on_the_second_part(folder: str, name: str, frame: pl.DataFrame) -> None:
        if written:
            raise RuntimeError("worker killed")
        written.append(name)
        write_parquet(folder, name, frame)

    monkeypatch.setattr(_storefs, "write_parquet", dies_on_the_second_part)
    with pytest.raises(RuntimeError, match="worker killed"):
        rca.ingest(logs, memory_url, workers=1)
    monkeypatch.undo()
    after = rca.open_store(memory_url)
    assert_frame_equal(after.events(), events)
    assert_frame_equal(after.manifest(), manifest)
    assert _stored_parts(memory_url) == parts


def test_a_run_killed_mid_commit_leaves_unlisted_parts_the_next_run_removes(
    logs: Path, memory_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rca.ingest(logs, memory_url, workers=1)
    events = rca.open_store(memory_url).events()
    (logs / "node-a" / "kern.log").write_text((logs / "node-a" / "kern.log").read_text() * 2)

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("killed at the commit point")

    monkeypatch.setattr("rca.store._atomic_write_parquet", explode)
    with pytest.raises(RuntimeError):
        rca.ingest(logs, memory_url, workers=1)
    monkeypatch.undo()
    assert_frame_equal(rca.open_store(memory_url).events(), events)
    assert set(_stored_parts(memory_url)) > set(_listed_parts(memory_url))  # the parts copied in before the manifest write

    rca.ingest(logs, memory_url, workers=1)
    assert _stored_parts(memory_url) == _listed_parts(memory_url)
    assert rca.open_store(memory_url).events().height > events.height


def _listed_parts(url: str) -> list[str]:
    """The parts the store's manifest names."""
    return sorted({name for parts in rca.open_store(url).manifest()["parts"] for name in parts})


def test_a_second_writer_of_a_memory_store_is_refused_until_the_lock_is_gone(memory_url: str) -> None:
    with Store(memory_url).writing(), pytest.raises(StoreLockedError, match=r"being written by rca pid \d+ on .+ since "):
        with Store(memory_url).writing():
            pass
    with Store(memory_url).writing():
        pass


def test_cli_ingests_into_a_memory_store(logs: Path, memory_url: str) -> None:
    result = CliRunner().invoke(app, ["ingest", str(logs), "--store", memory_url, "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert rca.open_store(memory_url).events().height > 0
    assert rca.open_store(memory_url).incidents().height > 0


def test_a_file_url_is_a_local_folder(tmp_path: Path) -> None:
    store = Store(f"file://{tmp_path}/store")
    assert store.path == tmp_path / "store"
    with store.writing():
        assert (tmp_path / "store" / ".lock").is_file()


def test_a_local_store_whose_path_looks_like_a_glob_pattern(logs: Path, tmp_path: Path) -> None:
    plain = rca.ingest(logs, tmp_path / "plain", workers=1).summary["events"]
    store = tmp_path / "a[1]*" / "store"
    rca.ingest(logs, store, workers=1)
    stray = store / "events" / "date=2026-11-30" / "host=node-a" / "stray.parquet"
    stray.write_bytes(b"left by a killed run")
    rca.ingest(logs, store, workers=1)
    assert not stray.exists() and rca.open_store(store).events().height == plain > 0


# --- S3, through moto's server -------------------------------------------------------------------------


@pytest.fixture
def s3_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    moto_server = pytest.importorskip("moto.server")
    s3fs = pytest.importorskip("s3fs")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    # The worker processes inherit these: they find the endpoint and the credentials themselves.
    for name, value in {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    s3fs.S3FileSystem.clear_instance_cache()
    fsspec.filesystem("s3").mkdir("rca-bucket")
    try:
        yield "s3://rca-bucket/stores/one"
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        server.stop()


def test_worker_processes_write_an_s3_store(logs: Path, tmp_path: Path, s3_url: str) -> None:
    rca.ingest(logs, tmp_path / "store", workers=1)
    report = rca.ingest(logs, s3_url, workers=2)
    assert report.changes == {"new": len(list(logs.rglob("*.*")))}
    _assert_same_store(rca.open_store(tmp_path / "store"), rca.open_store(s3_url))
    assert not fsspec.filesystem("s3").exists("rca-bucket/stores/one/.lock")
    assert rca.ingest(logs, s3_url, workers=1).summary["events"] == 0
