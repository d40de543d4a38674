"""Ingest on every core and on Dask: large files in byte ranges, the same events wherever the tasks run.

Batches are made small (32 KiB) so that the fixture-sized files below are "large": they are
cut into ranges, with multi-line records (OOM-killer blocks, interleaved tracebacks, Java
and Go dumps) close to every cut.
"""

from __future__ import annotations

import gzip
import logging
import os
import shutil
import signal
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

import rca
from rca.cli import app
from rca.ingest import IngestOptions
from rca.store import Store
from tests.conftest import DATA, fail_parsing_on

SMALL_BATCHES = IngestOptions(batch_bytes=32 * 1024)
WHOLE_FILES = IngestOptions(batch_bytes=1 << 30)
# Fixture files repeated into files of a few batches each, on two hosts.
LARGE = {
    "gpu-node-1": ["kernel/dmesg_oom_cgroup_01.log", "pipeline/torchrun_rank_interleaved_oom.log", "kubelet/kubelet_klog_eviction_01.log"],
    "gpu-node-2": ["kernel/journalctl_k_oom_memcg_invoked_01.log", "pipeline/java_service_oom.log", "pipeline/go_sidecar_runtime_oom.log",
                   "pipeline/nccl_timeout_01.log", "pipeline/train_python_logging_dataloader_killed.log"],
}
TARGET_BYTES = 100_000
PER_RUN_COLUMNS = ("run_id", "parts")  # differ between any two runs


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parallel") / "logs"
    for host, names in LARGE.items():
        (root / host).mkdir(parents=True)
        for name in names:
            text = (DATA / name).read_text()
            (root / host / Path(name).name).write_text(text * (TARGET_BYTES // len(text) + 1))
    # Files read whole: small ones, a source that is not line_local, and gzip.
    (root / "gpu-node-1" / "nvidia-smi.csv").write_text((DATA / "nvidia_smi/nvidia_smi_query_gpu_allfields_01.csv").read_text())
    (root / "gpu-node-2" / "kubelet.log.1.gz").write_bytes(gzip.compress((DATA / "kubelet/kubelet_klog_eviction_01.log").read_bytes() * 40))
    (root / "gpu-node-2" / "short.log").write_text((DATA / "kernel/dmesg_xid_13_01.log").read_text())
    return root


def _ingest(corpus: Path, store: Path, options: IngestOptions, **how: object) -> tuple[pl.DataFrame, pl.DataFrame]:
    rca.ingest(corpus, store, options, **how)
    opened = rca.open_store(store)
    return opened.events(), opened.manifest().drop(*PER_RUN_COLUMNS)


@pytest.fixture(scope="module")
def serial_store(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("serial") / "store"
    rca.ingest(corpus, store, SMALL_BATCHES, workers=1)
    return store


@pytest.fixture(scope="module")
def serial(serial_store: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    opened = rca.open_store(serial_store)
    return opened.events(), opened.manifest().drop(*PER_RUN_COLUMNS)


def _pieces(store: Path, path: str) -> set[str]:
    """The range numbers of a file's parts (``<key>-<run>-<range>-<batch>.parquet``)."""
    parts = rca.open_store(store).manifest().filter(pl.col("path") == path)["parts"][0]
    return {Path(name).name.split("-")[2] for name in parts}


def test_large_files_are_cut_where_the_parse_does_not_change(corpus: Path, serial_store: Path, serial: tuple, tmp_path: Path) -> None:
    events, manifest = serial
    whole_events, whole_manifest = _ingest(corpus, tmp_path / "whole", WHOLE_FILES, workers=1)
    # Files read whole are read in other batches (and a CSV header reaches only its first batch): compare the cut ones.
    line_local = pl.col("source").is_in(["kernel", "kubelet", "pipeline", "syslog"]) & ~pl.col("path").str.ends_with(".gz")
    cut_paths = manifest.filter(line_local)["path"]
    assert cut_paths.len() == sum(len(names) for names in LARGE.values()) + 1
    in_cut = pl.col("file").is_in(cut_paths.implode())
    assert_frame_equal(events.filter(in_cut), whole_events.filter(in_cut))
    assert_frame_equal(manifest.filter(line_local), whole_manifest.filter(line_local))
    for path in cut_paths.to_list():
        if os.path.getsize(corpus / path) > 2 * SMALL_BATCHES.batch_bytes:
            assert len(_pieces(serial_store, path)) >= 2, path
    assert len(_pieces(serial_store, "gpu-node-2/kubelet.log.1.gz")) == 1  # a gzip stream is never cut into ranges


def test_worker_processes_give_the_serial_result(corpus: Path, serial: tuple, tmp_path: Path) -> None:
    events, manifest = _ingest(corpus, tmp_path / "store", SMALL_BATCHES, workers=2)
    assert_frame_equal(events, serial[0])
    assert_frame_equal(manifest, serial[1])


TRACEBACK = """\
2026-12-01 10:15:00,000 ERROR train.py:120 step failed
Traceback (most recent call last):
  File "/app/train.py", line 120, in <module>
    main()
  File "/app/train.py", line 98, in main
    loss = model(batch).loss
  File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1736, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.20 GiB is free.
"""


def _straddling(filler: str, record: str, before: int) -> tuple[str, int]:
    """``filler`` lines up to ``before`` bytes short of a batch, ``record``, more filler; and the line holding the batch's offset."""
    head = filler.encode()[: SMALL_BATCHES.batch_bytes - before].decode()
    text = head[: head.rfind("\n") + 1] + record + filler
    return text, text.encode()[: SMALL_BATCHES.batch_bytes].count(b"\n") + 1


def test_a_cut_never_falls_inside_a_record_that_spans_the_target(tmp_path: Path) -> None:
    """A traceback and an OOM-killer block straddling the offset where a cut is wanted stay whole."""
    steps = "".join(f"2026-12-01 10:{n // 60 % 60:02d}:{n % 60:02d},000 INFO train.py:88 step {n} loss 0.5\n" for n in range(900))
    train, train_target = _straddling(steps, TRACEBACK, 300)
    noise = "".join(f"[{100 + n}.000000] eth0: link up {n}\n" for n in range(1200))
    oom = (DATA / "kernel/dmesg_oom_cgroup_01.log").read_text()
    dmesg, dmesg_target = _straddling(noise, oom, 400)
    (tmp_path / "logs" / "n1").mkdir(parents=True)
    (tmp_path / "logs" / "n1" / "train.log").write_text(train)
    (tmp_path / "logs" / "n1" / "dmesg.log").write_text(dmesg)
    split, _ = _ingest(tmp_path / "logs", tmp_path / "split", SMALL_BATCHES, workers=1)
    whole, _ = _ingest(tmp_path / "logs", tmp_path / "whole", WHOLE_FILES, workers=1)
    assert_frame_equal(split, whole)
    for path, target, kind in (("n1/train.log", train_target, "cuda_oom"), ("n1/dmesg.log", dmesg_target, "oom_invoked")):
        assert len(_pieces(tmp_path / "split", path)) >= 2
        covering = split.filter((pl.col("file") == path) & (pl.col("line") < target) & (pl.col("line") + pl.col("n_lines") > target))
        assert covering["kind"].to_list() == [kind]


def test_a_large_tail_appended_to_a_file_is_read_in_ranges_from_where_the_last_run_stopped(tmp_path: Path) -> None:
    text = (DATA / "kernel/journalctl_k_oom_memcg_invoked_01.log").read_text()
    (tmp_path / "logs" / "n1").mkdir(parents=True)
    log = tmp_path / "logs" / "n1" / "kern.log"
    log.write_text(text * 60)  # past the window an append's seam is checked in (a smaller file is read again whole)
    rca.ingest(tmp_path / "logs", tmp_path / "store", SMALL_BATCHES, workers=1)
    with open(log, "a") as handle:
        handle.write(text * 60)
    report = rca.ingest(tmp_path / "logs", tmp_path / "store", SMALL_BATCHES, workers=1)
    assert report.changes == {"appended": 1}
    assert len(_pieces(tmp_path / "store", "n1/kern.log")) >= 3
    whole, whole_manifest = _ingest(tmp_path / "logs", tmp_path / "whole", WHOLE_FILES, workers=1)
    assert_frame_equal(rca.open_store(tmp_path / "store").events(), whole)
    assert_frame_equal(rca.open_store(tmp_path / "store").manifest().drop(*PER_RUN_COLUMNS), whole_manifest)


def test_the_batch_size_bounds_the_lines_parsed_at_once(tmp_path: Path) -> None:
    """Memory follows the batch, not the file: every part (one per batch here: one host, one day) holds a batch's lines at most."""
    line = 'I1201 03:17:05.123456    2345 kubelet.go:2404] "SyncLoop (probe)" probe="readiness" status="ready" pod="ml/trainer-0"\n'
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    (root / "kubelet.log").write_text(line * 6000)  # 660 KB: ranges of about a batch
    (root / "kubelet.log.1.gz").write_bytes(gzip.compress((line * 30000).encode()))  # 3.3 MB read in batches
    options = IngestOptions(batch_bytes=64 * 1024, year=2026)
    rca.ingest(tmp_path / "logs", tmp_path / "store", options, workers=1)
    store = Store(tmp_path / "store")
    rows = {path: [pl.scan_parquet(store.part_path(name)).select(pl.len()).collect().item() for name in parts]
            for path, parts in store.manifest().select("path", "parts").iter_rows()}
    per_batch = options.batch_bytes // len(line)
    split_rows = rows["n1/kubelet.log"]
    assert sum(split_rows) == 6000 and len(split_rows) >= 6000 // (per_batch * 3 // 2)
    assert max(split_rows) <= per_batch * 3 // 2  # a range runs past its target offset by less than half a batch
    read_size = 1 << 20  # a batch also holds the rest of the reader's last 1 MiB read
    gz_rows = rows["n1/kubelet.log.1.gz"]
    assert sum(gz_rows) == 30000 and len(gz_rows) >= 3
    assert max(gz_rows) <= (options.batch_bytes + read_size) // len(line) + 1


def test_a_range_its_parser_fails_on_is_kept_unparsed_and_the_other_ranges_are_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = 'I1201 03:17:05.123456    2345 kubelet.go:2404] "SyncLoop (probe)" probe="readiness" pod="ml/trainer-{n}"\n'
    text = "".join(line.format(n=n) for n in range(12000))  # 1.2 MB: more than one batch however it is read
    poisoned = 6000  # the parser raises on any batch holding this line
    text = text.replace("trainer-5999\"", "trainer-5999\" POISON")
    (tmp_path / "logs" / "n1").mkdir(parents=True)
    (tmp_path / "logs" / "n1" / "kubelet.log").write_text(text)
    fail_parsing_on(monkeypatch, "kubelet", "POISON", ValueError("cannot read this"))
    events, manifest = _ingest(tmp_path / "logs", tmp_path / "store", SMALL_BATCHES, workers=1)
    row = manifest.row(0, named=True)
    assert row["status"] == "warning" and "the kubelet parser failed on lines" in row["error"] and "ValueError" in row["error"]
    assert events.height == 12000 and events["line"].sort().to_list() == list(range(1, 12001))
    kept = events.filter(pl.col("format") == "unparsed")
    assert kept["line"].min() <= poisoned <= kept["line"].max() and 0 < kept.height < 12000
    assert kept.height == kept["line"].max() - kept["line"].min() + 1  # one batch: a run of lines
    assert (kept["kind"] == "log").all() and events.filter(pl.col("format") != "unparsed")["ts"].null_count() == 0


# --- Dask distributed -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR
    ) as local:
        yield local


def test_a_dask_cluster_gives_the_serial_result(corpus: Path, serial: tuple, cluster, tmp_path: Path) -> None:
    events, manifest = _ingest(corpus, tmp_path / "store", SMALL_BATCHES, scheduler=cluster.scheduler_address)
    assert_frame_equal(events, serial[0])
    assert_frame_equal(manifest, serial[1])


def test_the_scheduler_address_can_come_from_the_environment(corpus: Path, cluster, tmp_path: Path) -> None:
    rca.ingest(corpus / "gpu-node-2" / "short.log", tmp_path / "serial", workers=1)
    result = CliRunner().invoke(
        app, ["ingest", str(corpus / "gpu-node-2" / "short.log"), "--store", str(tmp_path / "dask"), "--no-correlate"],
        env={"DASK_SCHEDULER_ADDRESS": cluster.scheduler_address},
    )
    assert result.exit_code == 0, result.output
    assert_frame_equal(rca.open_store(tmp_path / "dask").events(), rca.open_store(tmp_path / "serial").events())
    runs = rca.open_store(tmp_path / "dask").meta()["runs"]
    assert runs[-1]["scheduler"] == cluster.scheduler_address


def test_a_killed_dask_worker_is_retried_or_nothing_is_committed(corpus: Path, serial: tuple, cluster, tmp_path: Path) -> None:
    from distributed import Client, KilledWorker

    store = tmp_path / "store"
    earlier = tmp_path / "earlier"
    shutil.copytree(corpus / "gpu-node-2", earlier / "gpu-node-2")  # same relative paths and mtimes: unchanged in the full run
    rca.ingest(earlier, store, SMALL_BATCHES, workers=1)
    before = rca.open_store(store).events(), rca.open_store(store).manifest()
    with Client(cluster.scheduler_address) as client:
        pids = list(client.run(os.getpid).values())
    killed: list[int] = []

    def kill_a_worker(result: object) -> None:
        if not killed:
            killed.append(pids[0])
            os.kill(pids[0], signal.SIGKILL)

    try:
        rca.ingest(corpus, store, SMALL_BATCHES, scheduler=cluster.scheduler_address, progress=kill_a_worker)
    except KilledWorker:  # Dask gave up on the task: the store must be as it was
        assert_frame_equal(rca.open_store(store).events(), before[0])
        assert_frame_equal(rca.open_store(store).manifest(), before[1])
    else:
        # gpu-node-2's files were read by the earlier run under the same paths: together, the events of one full run.
        assert killed
        assert_frame_equal(rca.open_store(store).events(), serial[0])
        assert_frame_equal(rca.open_store(store).manifest().drop(*PER_RUN_COLUMNS), serial[1])
