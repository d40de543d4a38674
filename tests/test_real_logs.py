"""Every public real-log sample is detected and parsed into the events a correct parser emits.

``tests/data/real_logs/expected.jsonl`` lists, per sample, events that must exist (any
event of the file whose columns equal all the given values). The samples themselves live
in the folder of the source that owns them; here they are ingested as one flat folder, as
an SRE's copy of loose files would be, so a host comes from the lines alone. That the
folder reads as each file read alone would is tests/test_small_files.py's to check.
"""

from __future__ import annotations

import json
import os
import shutil

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


SAMPLE_NAMES = sorted({row["file"] for row in EXPECTED})


@pytest.fixture(scope="module")
def events_by_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, pl.DataFrame], set[str]]:
    """One ingest of every sample, copied side by side with :data:`FIXED_MTIME` as its mtime: each file's events, and
    the files read whole (a JSON document), which count as one line."""
    root = tmp_path_factory.mktemp("real_logs") / "logs"
    root.mkdir()
    for name in SAMPLE_NAMES:
        shutil.copy(fixture_path(name), root / name)
        os.utime(root / name, (FIXED_MTIME.timestamp(), FIXED_MTIME.timestamp()))
    rca.ingest(root, root.parent / "store", workers=1)
    store = rca.open_store(root.parent / "store")
    events = {name: frame for (name,), frame in store.events().partition_by("file", as_dict=True).items()}
    return events, set(store.manifest().filter(pl.col("lines") == 1)["path"])


@pytest.mark.parametrize("row", EXPECTED, ids=[f"{r['file']}:{r['kind']}" for r in EXPECTED])
def test_expected_event_is_emitted(row: dict, events_by_file: tuple[dict[str, pl.DataFrame], set[str]]) -> None:
    by_file, read_whole = events_by_file
    events = by_file.get(row["file"])
    assert events is not None, f"{row['file']} gave no events"
    # a file read whole is one line of the manifest, so its event covers one however many lines the document has
    wanted = {k: v for k, v in row.items() if k != "file" and not (k == "n_lines" and row["file"] in read_whole)}
    matching = events.filter(*[pl.col(column) == value for column, value in wanted.items()])
    assert matching.height >= 1, f"no event with {wanted}; kinds seen: {events['kind'].value_counts().to_dicts()}"


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_is_sniffed_as_its_source(name: str) -> None:
    source, _ = sniffed(fixture_path(name))
    assert source is not None and source.name == _owner(name)
