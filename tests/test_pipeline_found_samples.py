"""Public training and serving logs of shapes the other fixtures lack: the attrs expected.jsonl cannot state.

A torch OOM under torchrun's rank tag whose device index printed blank, vLLM's V0 worker and V1 engine core reporting an
OOM (one naming another process's memory, one quoting its worker's message), and PyTorch's shared-memory segments on a
full /dev/shm.
"""

from __future__ import annotations

import functools
import json

import polars as pl
import pytest

import rca
from tests.conftest import FIXED_MTIME, fixture_path

GIB = 1024**3


@functools.cache
def _events(name: str) -> pl.DataFrame:
    text = fixture_path(name).read_bytes().decode("utf-8", errors="replace")
    return rca.parse_text(text, file=name, reference_time=FIXED_MTIME)


def _incidents(name: str, kind: str) -> list[dict]:
    rows = _events(name).filter(pl.col("kind") == kind).sort("line").to_dicts()
    return [{**row, "attrs": json.loads(row["attrs"] or "{}")} for row in rows]


def test_rank_tagged_oom_with_blank_device_index_keeps_its_rank_and_figures() -> None:
    (oom,) = _incidents("pytorch_rank_prefixed_oom_blank_gpu_index_elastic_sigterm_failed_01.log", "cuda_oom")
    # "GPU  has a total capacity": PyTorch printed no index, so none is guessed
    assert oom["gpu_index"] is None
    assert oom["attrs"]["rank"] == 3
    assert oom["attrs"]["exc_type"] == "torch.cuda.OutOfMemoryError"
    assert oom["attrs"]["process_in_use_bytes"] == round(44.29 * GIB)
    assert oom["attrs"]["reserved_unallocated_bytes"] == 582 * 1024


def test_torchrun_failure_line_names_the_local_rank_that_failed() -> None:
    failed = (
        _events("pytorch_rank_prefixed_oom_blank_gpu_index_elastic_sigterm_failed_01.log").filter(pl.col("line") == 8).row(0, named=True)
    )
    assert (failed["pid"], failed["exit_code"], json.loads(failed["attrs"])["local_rank"]) == (3701341, 1, 2)


def test_vllm_worker_oom_names_the_one_process_listed_as_its_own() -> None:
    (oom,) = _incidents("vllm_v0_multiproc_worker_oom_other_process_in_use_01.log", "cuda_oom")
    assert (oom["pid"], oom["gpu_index"]) == (486731, 2)
    # NVML's pid of another pid namespace ("Process 37008 has 79.29 GiB memory in use"), the only one listed
    assert oom["attrs"]["in_use_pid"] == 37008
    assert oom["attrs"]["process_in_use_bytes"] == round(79.29 * GIB)
    assert oom["attrs"]["free_bytes"] == 16 * 1024**2


def test_vllm_engine_core_quoting_its_workers_oom_is_the_oom() -> None:
    (oom,) = _incidents("vllm_v1_enginecore_worker_failed_with_error_cuda_oom_01.log", "cuda_oom")
    assert (oom["pid"], oom["gpu_index"], oom["mem_requested_bytes"]) == (162129, 0, round(2.96 * GIB))
    assert oom["attrs"]["exc_type"] == "RuntimeError"
    assert oom["attrs"]["exc_message"].startswith("Worker failed with error 'CUDA out of memory.")


@pytest.mark.parametrize(("index", "path"), [(0, "/torch_8289_606636967_0"), (1, "/torch_8226_3581395585_0")])
def test_each_feeder_traceback_is_an_shm_error_naming_its_segment(index: int, path: str) -> None:
    errors = _incidents("pytorch_shm_no_space_torch_segment_two_feeder_tracebacks_01.log", "shm_error")
    assert len(errors) == 2
    assert errors[index]["attrs"]["shm_path"] == path
    assert errors[index]["attrs"]["last_frame"].endswith("torch/storage.py:374 in _share_fd_cpu_")


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        ("2022-11-22 06:34:34.434+0000 [id=683]\tSEVERE\to.c.j.p.k.KubernetesSlave#_terminate: Computer for agent is null: x", "error"),
        # a paste that made the tabs spaces (kubesphere/kubesphere#3918)
        ("2021-05-27 09:27:43.150+0000 [id=89] WARNING o.c.j.p.k.KubernetesSlave#_terminate: Terminating agent base-2ww6k", "warning"),
        ("2021-05-27 09:26:32.133+0000 [id=20]\tFINE\thudson.WebAppMain$3#run: Jenkins is fully up and running", "debug"),
    ],
)
def test_jenkins_controller_lines_keep_their_java_util_logging_level(line: str, severity: str) -> None:
    (event,) = rca.parse_text(line + "\n", file="jenkins.log").to_dicts()
    assert event["severity"] == severity
