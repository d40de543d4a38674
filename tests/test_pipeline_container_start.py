"""A GPU job whose container never started: the container runtime's and the job's own errors in its log.

The docker, docker-compose and pyxis wordings are verbatim in tests/data/pipeline/ (docker_nvidia_container_cli_*,
docker_compose_nvidia_container_cli_*, slurm_pyxis_enroot_*); the lines here are the other wordings, made up in the shape the
NVIDIA container toolkit, Docker, PyTorch and pyxis print them (no public sample of each was found).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl

from rca import sources
from rca.ingest import parse_lines
from rca.sources import pipeline
from rca.sources._base import ParseContext

REFERENCE = datetime(2025, 1, 1, tzinfo=UTC)


def _pipeline(text: str) -> pl.DataFrame:
    ctx = ParseContext(file="t.log", tz="UTC", year=2025, reference_time=REFERENCE)
    return parse_lines(sources.lines_frame(text), ctx, pipeline.SOURCE)[0]


def _cuda_errors(events: pl.DataFrame) -> list[str | None]:
    return [json.loads(attrs or "{}").get("cuda_error") for attrs in events["attrs"]]


def test_the_container_toolkits_refusals_are_errors_with_what_it_refused() -> None:
    events = _pipeline(
        "nvidia-container-cli: device error: 3: unknown device\n"
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version,"
        " or use an earlier cuda container: unknown.\n"
        "nvidia-container-cli: mount error: failed to add device rules: open /sys/fs/cgroup/devices/x/devices.allow: permission denied\n"
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    )
    assert events.select("kind", "severity").rows() == [("log", "error")] * 4
    assert _cuda_errors(events) == [
        "device error: 3: unknown device",
        "requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container",
        "mount error: failed to add device rules: open /sys/fs/cgroup/devices/x/devices.allow: permission denied",
        'could not select device driver "" with capabilities: [[gpu]]',
    ]
    # the GPU it was asked for and the node does not have
    assert events["gpu_index"].to_list() == [3, None, None, None]


def test_an_unknown_device_named_by_its_uuid_gives_the_gpu_uuid() -> None:
    (event,) = _pipeline("nvidia-container-cli: device error: GPU-8f6e1c2a-0b1d-4c3e-9f2a-5d6c7b8a9e0f: unknown device: unknown.\n").rows(
        named=True
    )
    assert (event["severity"], event["gpu_uuid"]) == ("error", "GPU-8f6e1c2a-0b1d-4c3e-9f2a-5d6c7b8a9e0f")


def test_the_prestart_hooks_exit_status_is_not_the_jobs_exit_code() -> None:
    # the NVML wording of a driver upgraded under a running node (the cuda_error read by nvml, as before)
    (event,) = _pipeline(
        "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to"
        " start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: ,"
        " stderr: Auto-detected mode as 'legacy' nvidia-container-cli: initialization error: nvml error: driver/library version"
        " mismatch: unknown.\n"
    ).rows(named=True)
    assert (event["kind"], event["severity"], event["exit_code"]) == ("log", "error", None)
    assert json.loads(event["attrs"]) == {"cuda_error": "driver/library version mismatch"}
    # ... while the CI step's own end still gives Docker's code
    (step,) = _pipeline("##[error]Process completed with exit code 125.\n").rows(named=True)
    assert (step["severity"], step["exit_code"]) == ("error", 125)


def test_a_job_that_finds_no_gpu_is_an_error_and_cuda_initialization_a_warning() -> None:
    events = _pipeline(
        "RuntimeError: No CUDA GPUs are available\n"
        "RuntimeError: CUDA error: no CUDA-capable device is detected\n"
        "/usr/lib/python3/site-packages/torch/cuda/__init__.py:107: UserWarning: CUDA initialization: CUDA unknown error - this may be"
        " due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the"
        " available devices to be zero. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)\n"
    )
    assert events.select("kind", "severity").rows() == [("log", "error"), ("log", "error"), ("log", "warning")]
    assert _cuda_errors(events) == ["No CUDA GPUs are available", "no CUDA-capable device is detected", None]


def test_pyxis_and_apptainer_container_start_failures_without_a_level_of_their_own_are_errors() -> None:
    events = _pipeline(
        "pyxis: container start failed with error code: 1\n"
        "pyxis: couldn't start container\n"
        "FATAL:   container creation failed: mount /proc/self/fd/3->/var/lib/apptainer/mnt/session/rootfs error: failed to find loop device\n"
    )
    assert events.select("kind", "severity", "exit_code").rows() == [
        ("log", "error", None),
        ("log", "error", None),
        ("log", "critical", None),
    ]
