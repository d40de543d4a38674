"""The pipeline source's GPU rules: NVIDIA driver (NVRM) Xids and device-plugin lines inside an application's log.

An Xid reads the same wherever it is found: the pipeline source takes its severity and catalog attrs from
rca.sources._xid, as the kernel source does.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
import pytest

import rca
from rca import sources
from rca.ingest import parse_lines
from rca.sources import pipeline
from rca.sources._base import ParseContext

REFERENCE = datetime(2025, 1, 1, tzinfo=UTC)


def _pipeline(text: str) -> pl.DataFrame:
    ctx = ParseContext(file="t.log", tz="UTC", year=2025, reference_time=REFERENCE)
    return parse_lines(sources.lines_frame(text), ctx, pipeline.SOURCE)[0]


def _xid_rows(events: pl.DataFrame) -> list[dict]:
    return [row | {"attrs": json.loads(row["attrs"] or "{}")} for row in events.filter(pl.col("kind") == "xid").iter_rows(named=True)]


def test_nvrm_xid_79_in_a_container_log_is_critical_with_the_catalog_attrs() -> None:
    # The NVRM line from NVIDIA/nvidia-docker#1553 (a container on a node whose GPU fell off the bus), in a training log.
    events = _pipeline(
        "2024-05-02 10:11:12,345 INFO epoch 3 step 1200 loss 1.234\n"
        "[1084456.074562] NVRM: Xid (PCI:0000:09:00): 79, pid=0, GPU has fallen off the bus.\n"
    )
    (xid,) = _xid_rows(events)
    assert (xid["source"], xid["xid"], xid["pci_bus"], xid["severity"]) == ("pipeline", 79, "0000:09:00", "critical")
    assert xid["attrs"] == {
        "xid_name": "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "xid_description": "GPU has fallen off the bus",
        "xid_resolution": "RESTART_BM", "xid_investigation": "CONTACT_SUPPORT",
    }


@pytest.mark.parametrize(("action", "severity"), [("None", "info"), ("GPU Reset Required", "critical"), ("Node Reboot Required", "critical")])
def test_xid_154_takes_the_severity_of_the_recovery_it_names(action: str, severity: str) -> None:
    code = {"None": 0, "GPU Reset Required": 1, "Node Reboot Required": 2}[action]
    events = _pipeline(f"NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x{code} ({action})\n")
    (xid,) = _xid_rows(events)
    assert (xid["xid"], xid["severity"]) == (154, severity)
    assert (xid["attrs"]["xid_name"], xid["attrs"]["xid_recovery_action"]) == ("GPU_RECOVERY_ACTION_CHANGED", action)


def test_pipeline_and_kernel_give_an_xid_the_same_severity_and_attrs() -> None:
    lines = [
        "NVRM: Xid (PCI:0000:b3:00): 13, pid=22154, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address",
        "NVRM: Xid (PCI:0000:b3:00): 48, pid=1234, name=python, An uncorrectable double bit error (DBE) has been detected on GPU.",
        "NVRM: Xid (PCI:0000:b3:00): 63, pid=1234, name=python, Row Remapper: New row marked for remapping, reset gpu to activate.",
        "NVRM: Xid (PCI:0000:b3:00): 79, pid=0, GPU has fallen off the bus.",
        "NVRM: Xid (PCI:0000:b3:00): 999, pid=0, a code the catalog does not know",
    ]
    piped = _xid_rows(_pipeline("".join(f"2025-01-02 03:04:05,000 {line}\n" for line in lines)))
    kernel = _xid_rows(rca.parse_text("".join(f"[ 12.{i:06d}] {line}\n" for i, line in enumerate(lines)), file="dmesg", format="kernel"))
    assert [row["severity"] for row in piped] == ["error", "critical", "notice", "critical", "error"]
    assert [row["severity"] for row in piped] == [row["severity"] for row in kernel]
    names = ("xid_name", "xid_description", "xid_resolution", "xid_investigation")
    assert [{n: row["attrs"].get(n) for n in names} for row in piped] == [{n: row["attrs"].get(n) for n in names} for row in kernel]


def test_a_shortened_gpu_uuid_keeps_no_trailing_dash() -> None:
    # nvidia-device-plugin lines quoted with the UUID cut short ("UUID는 축약"), public-code index (a Korean GPU-ops write-up).
    events = _pipeline(
        "I0810 15:36:05.551834 1 health.go:169] XidCriticalError: Xid=48 on Device=GPU-455e672a-...; marking device as unhealthy.\n"
        "I0810 15:36:05.552532 1 server.go:278] 'nvidia.com/gpu' device marked unhealthy: GPU-455e672a-...\n"
    )
    assert events["gpu_uuid"].to_list() == ["GPU-455e672a", "GPU-455e672a"]
    (xid,) = _xid_rows(events)
    # logged at info, but a double-bit ECC error needs the GPU reset
    assert (xid["xid"], xid["severity"], xid["attrs"]["xid_name"]) == (48, "critical", "ROBUST_CHANNEL_GPU_ECC_DBE")
    assert json.loads(events["attrs"][1]) == {"health": "unhealthy", "resource": "nvidia.com/gpu"}
    assert _pipeline("XidCriticalError: Xid=79 on Device=MIG-7540a9b3-eeb9-1214-1526-f93c9ea826a8;\n")["gpu_uuid"].to_list() == [
        "MIG-7540a9b3-eeb9-1214-1526-f93c9ea826a8"
    ]
    # A device-plugin note with the UUID redacted (public-code index, a GPU-ops write-up): the Xid stays.
    (redacted,) = _xid_rows(_pipeline("08:08:58 XidCriticalError: Xid=94 on Device=GPU-XX-X-X-XX-XX; marking device as unhealthy.\n"))
    assert (redacted["xid"], redacted["gpu_uuid"]) == (94, None)


def test_a_lost_gpu_or_driver_as_nvidia_smi_nvml_and_the_container_toolkit_tell_it_is_an_error() -> None:
    events = _pipeline(
        # NVIDIA/nvidia-docker#1553 (cswinter): `nvidia-smi -a -i 0` after the Xid 79
        "Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error\n"
        # NVIDIA/dcgm-exporter#604 (WaterAndBread): the domain printed with three digits
        "Unable to determine the device handle for GPU 000:BA:80.0: Unknown Error\n"
        # NVIDIA/nvidia-docker#1629 (valentindbdg)
        "docker: Error response from daemon: failed to create shim: OCI runtime create failed: container_linux.go:380: starting container"
        " process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit status 1, stdout: ,"
        " stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.\n"
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
        "Failed to initialize NVML: Driver/library version mismatch\n"
    )
    assert events["kind"].to_list() == ["log"] * 5 and events["severity"].to_list() == ["error"] * 5
    assert events["pci_bus"].to_list() == ["0000:09:00.0", "000:BA:80.0", None, None, None]
    assert [json.loads(a)["cuda_error"] for a in events["attrs"]] == [
        "Unknown Error", "Unknown Error", "driver not loaded", "couldn't communicate with the NVIDIA driver", "Driver/library version mismatch",
    ]


def test_a_lost_device_handle_with_the_gpus_index_first_names_its_bus() -> None:
    # The wording of newer drivers (a Proxmox VM's lost RTX 3080, public-code index id 65929732340), and the index alone.
    events = _pipeline(
        "Unable to determine the device handle for GPU3: 0000:04:00.0: Unknown Error\n"
        "Unable to determine the device handle for GPU2: Unknown Error\n"
    )
    assert events.select("severity", "pci_bus").rows() == [("error", "0000:04:00.0"), ("error", None)]
    assert [json.loads(a)["cuda_error"] for a in events["attrs"]] == ["Unknown Error", "Unknown Error"]


def test_a_dcgm_health_watch_finding_names_its_gpu_system_and_severity() -> None:
    # NVIDIA/DCGM#270 (47oo, 2025-12-22) quotes the host engine's line from its "ERROR [pid:tid]" on; the stamp is
    # nv-hostengine's own layout. The FAILURE line is made up in the same shape (no public sample found).
    finding = (
        "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: 'Detected clocks event due to thermal "
        "violation in GPU 2. Verify that the cooling on this machine is functional, including external, thermal material "
        "interface, fans, and any other components."
    )
    events = _pipeline(
        f"2025-12-22 03:14:07.512 {finding}\n"
        "2025-12-22 03:15:07.512 ERROR [1514002:1514004] [[Health]] Detected a FAILURE in health system Memory: 'A pending "
        "retired page has been detected in GPU 5.'\n"
    )
    rows = events.sort("line").to_dicts()
    assert [(r["kind"], r["severity"], r["gpu_index"], r["pid"], json.loads(r["attrs"])) for r in rows] == [
        ("log", "warning", 2, 1514002, {"health_system": "Thermal"}),
        ("log", "error", 5, 1514002, {"health_system": "Memory"}),
    ]


def test_an_intel_xpu_or_ascend_npu_out_of_memory_is_a_cuda_oom_with_its_device_and_sizes() -> None:
    # Verbatim lines: IPEX (intel/intel-extension-for-pytorch#846, #629) and torch_npu under vLLM-Ascend's Ray workers
    # (vllm-project/vllm-ascend#1127); fixtures pytorch_xpu_out_of_memory_repl_01.log, vllm_ascend_ray_worker_npu_out_of_memory_01.log.
    events = _pipeline(
        "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 15.11 GiB."
        " Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.\n"
        "\n"
        "RuntimeError: XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; 15.56 GiB total capacity; 176.00 MiB already allocated;"
        " 176.00 MiB reserved in total by PyTorch)\n"
        "\n"
        "(NPURayWorkerWrapper pid=45464) ERROR 06-09 06:57:48 worker_base.py:581] RuntimeError: NPU out of memory. Tried to allocate"
        " 30.00 MiB (NPU 3; 60.96 GiB total capacity; 60.34 GiB already allocated; 60.34 GiB current active; 14.24 MiB free;"
        " 60.60 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid"
        " fragmentation. [repeated 6x across cluster]\n"
    )
    ooms = events.filter(pl.col("kind") == "cuda_oom")
    assert ooms.select("line", "gpu_index", "mem_requested_bytes", "mem_total_bytes", "pid", "process").rows() == [
        (1, 0, 8 * 2**30, round(15.11 * 2**30), None, None),
        (3, 0, round(1.71 * 2**30), round(15.56 * 2**30), None, None),
        (5, 3, 30 * 2**20, round(60.96 * 2**30), 45464, "NPURayWorkerWrapper"),
    ]
    assert json.loads(ooms["attrs"][2])["free_bytes"] == round(14.24 * 2**20)
