"""Every public real-log sample is detected and parsed into the events a correct parser emits.

``tests/data/real_logs/expected.jsonl`` lists, per sample, events that must exist (any
event of the file whose columns equal all the given values). The samples themselves live
in the folder of the source that owns them. That they ingest as a folder, every file ok and reconciled, is
checked by tests/test_small_files.py, whose folder holds every fixture.
"""

from __future__ import annotations

import functools
import json

import polars as pl
import pytest

import rca
from tests.conftest import DATA, FIXED_MTIME, fixture_path, sniffed

EXPECTED = [json.loads(line) for line in (DATA / "real_logs" / "expected.jsonl").read_text().splitlines() if line.strip()]

OWNER_BY_PREFIX = {
    "docker_inspect_": "k8s",  # before "docker_": the first prefix that fits names the owner
    "docker_events_": "syslog",
    "dmesg_": "kernel",
    "kern_log_numbered_": "grep_output",  # a viewer's line numbers before kern.log lines: the wrapper hands them to kernel
    "kern_log_": "kernel",
    "journalctl_k_": "kernel",
    "kubelet_grep_": "grep_output",  # grep's prefix before kubelet lines: the wrapper source hands them to kubelet
    "kubelet_": "kubelet",
    "kubectl_": "k8s",
    "nvidia_smi_": "nvidia_smi",
    "ci_": "pipeline",
    "pytorch_": "pipeline",
    "nccl_": "pipeline",
    "vllm_": "pipeline",
    "hf_trainer_": "pipeline",
    "k8s_device_plugin_": "pipeline",
    "spark_": "pipeline",
    "ray_": "pipeline",
    "slurm_": "pipeline",
    "airflow_": "pipeline",
    "argo_": "pipeline",
    "kubeflow_": "pipeline",
    "json_": "pipeline",
    "docker_": "pipeline",
    "jax_": "pipeline",
    "tf_": "pipeline",
    "mpi_": "pipeline",
    "hpc_": "pipeline",
    "pbs_": "pipeline",
    "lsf_": "pipeline",
    "sge_": "pipeline",
    "cupy_": "pipeline",
    "sglang_": "pipeline",
    "lightning_": "pipeline",
    "gunicorn_": "pipeline",
    "gpu_operator_": "pipeline",
    "journal_": "syslog",
    "loghub_app_": "pipeline",
    "loghub_syslog_": "syslog",
    "dcgm_": "dcgm",
    "fabricmanager_": "fabric_log",
    "nvidia_imex_": "fabric_log",
}


def _owner(name: str) -> str:
    return next(owner for prefix, owner in OWNER_BY_PREFIX.items() if name.startswith(prefix))


@functools.cache  # a sample has several expected rows: each file is parsed once (frames are never changed in place)
def _parse(name: str) -> pl.DataFrame:
    # bytes decoded, not read_text: its universal newlines would make a progress bar's bare CRs line ends, which ingest does not
    text = fixture_path(name).read_bytes().decode("utf-8", errors="replace")
    return rca.parse_text(text, file=name, reference_time=FIXED_MTIME)


SAMPLE_NAMES = sorted({row["file"] for row in EXPECTED})


@pytest.mark.parametrize("row", EXPECTED, ids=[f"{r['file']}:{r['kind']}" for r in EXPECTED])
def test_expected_event_is_emitted(row: dict) -> None:
    events = _parse(row["file"])
    wanted = {k: v for k, v in row.items() if k != "file"}
    matching = events.filter(*[pl.col(column) == value for column, value in wanted.items()])
    assert matching.height >= 1, f"no event with {wanted}; kinds seen: {events['kind'].value_counts().to_dicts()}"


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_is_sniffed_as_its_source(name: str) -> None:
    source, _ = sniffed(fixture_path(name))
    assert source is not None and source.name == _owner(name)
