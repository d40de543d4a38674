"""An nvidia-smi table pasted from a console with its prompt: Windows cmd (``C:\\Users\\x>nvidia-smi``), PowerShell
(``PS C:\\> nvidia-smi``), bash (``user@host:~$``, ``[user@host ~]$``, ``$``, ``#``, a venv's ``(venv) $``).

The paste is nvidia-smi's: the prompt, the output of the commands before and after the table (``nvcc --version``, the next
prompt, a benchmark's lines) stay ``log`` events, one a line, and the table reads as a bare table would (per-GPU memory,
utilization, its process rows). Real samples: tests/data/nvidia_smi/nvidia_smi_*prompt*.
"""

from __future__ import annotations

import json

import polars as pl
import pytest

from rca import sources
from tests.conftest import fixture_path, parse_fixture, parse_log, sniffed

MIB = 2**20

WINDOWS_TABLE = """\
Thu Sep  4 11:15:06 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.97                 Driver Version: 580.97         CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                  Driver-Model | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce RTX 4060 Ti   WDDM  |   00000000:01:00.0  On |                  N/A |
|  0%   43C    P8              6W /  160W |    1412MiB /   8188MiB |      2%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
"""

PROMPTS = [
    "C:\\Users\\IOT>nvidia-smi",
    "PS C:\\> nvidia-smi",
    "PS C:\\Users\\x> nvidia-smi.exe",
    "C:\\Program Files\\NVIDIA Corporation\\NVSMI>nvidia-smi",
    "user@host:~$ nvidia-smi",
    "[root@gpu-10 ~]# nvidia-smi",
    "$ nvidia-smi",
    "# nvidia-smi",
    "(venv) $ nvidia-smi",
    "(base) user@host:~$ sudo nvidia-smi",
]
# What follows the table in such a paste: the next prompt (empty, or with the next command) and that command's output.
AFTER = ["", "C:\\Users\\IOT>\n", "user@host:~$ conda activate mutil.311\n(mutil.311) user@host:~$ \n"]


def _of_kind(events: pl.DataFrame, kind: str) -> pl.DataFrame:
    return events.filter(pl.col("kind") == kind).sort("line")


@pytest.mark.parametrize("after", AFTER, ids=["table-last", "next-prompt", "next-command"])
@pytest.mark.parametrize("prompt", PROMPTS)
def test_table_under_a_prompt_is_nvidia_smis(prompt: str, after: str) -> None:
    text = f"{prompt}\n{WINDOWS_TABLE}{after}"
    source, score = sources.sniff(text.splitlines())
    assert source is not None and source.name == "nvidia_smi" and score == 0.95
    events = parse_log(text)
    assert set(events["source"]) == {"nvidia_smi"}
    (gpu,) = _of_kind(events, "gpu_sample").iter_rows(named=True)
    assert (gpu["line"], gpu["gpu_index"], gpu["pci_bus"]) == (10, 0, "00000000:01:00.0")
    assert (gpu["mem_used_bytes"], gpu["mem_total_bytes"], gpu["gpu_util_pct"]) == (1412 * MIB, 8188 * MIB, 2.0)
    assert json.loads(gpu["attrs"])["driver_model"] == "WDDM"
    # the prompt and every shell line after the table are kept, verbatim, one log event each
    logs = _of_kind(events, "log")
    shell = [prompt, *after.splitlines()]
    assert [m.rstrip() for m in logs["message"]] == [line.rstrip() for line in shell]
    assert logs["line"].to_list() == [1, *range(14, 14 + len(after.splitlines()))]


def test_cmd_prompt_after_nvcc_output_with_process_table() -> None:
    """Windows cmd: ``nvcc --version`` under its prompt, then ``nvidia-smi`` under the same prompt (driver 581, WDDM)."""
    name = "nvidia_smi_table_581_cmd_prompt_after_nvcc_rtx5060ti_processes_01.txt"
    assert sniffed(fixture_path(name))[0].name == "nvidia_smi"
    events = parse_fixture(name)
    logs = _of_kind(events, "log")
    assert logs["line"].to_list() == [1, 2, 3, 4, 5, 6, 7]
    assert logs["message"][0] == "C:\\Users\\caoye04>nvcc --version"
    assert logs["message"][6] == "C:\\Users\\caoye04>nvidia-smi"
    (gpu,) = _of_kind(events, "gpu_sample").iter_rows(named=True)
    assert (gpu["line"], gpu["gpu_index"], gpu["pci_bus"], gpu["ts_quality"]) == (16, 0, "00000000:01:00.0", "inherited")
    assert gpu["ts"].isoformat() == "2026-01-06T21:09:52+00:00"
    assert (gpu["mem_used_bytes"], gpu["mem_total_bytes"], gpu["gpu_util_pct"]) == (1886 * MIB, 8151 * MIB, 4.0)
    attrs = json.loads(gpu["attrs"])
    assert (attrs["name"], attrs["driver"], attrs["cuda"], attrs["driver_model"]) == ("NVIDIA GeForce RTX 5060 Ti", "581.42", "13.0", "WDDM")
    processes = _of_kind(events, "gpu_process")
    assert processes.height == 32
    first, last = processes.row(0, named=True), processes.row(-1, named=True)
    assert (first["line"], first["pid"], first["process"], first["mem_used_bytes"]) == (26, 2584, "....0.3650.96\\msedgewebview2.exe", None)
    assert (last["line"], last["pid"], last["process"]) == (57, 29532, "C:\\Windows\\explorer.exe")
    assert set(processes["pci_bus"]) == {"00000000:01:00.0"}


def test_cmd_prompt_table_without_stamp_then_the_next_command() -> None:
    """A table with no stamp line under its cmd prompt, then the next prompt's ``go test`` run: kept as log lines."""
    name = "nvidia_smi_table_581_cmd_prompt_no_stamp_then_go_bench_rtx3070_01.txt"
    assert sniffed(fixture_path(name))[0].name == "nvidia_smi"
    events = parse_fixture(name)
    (gpu,) = _of_kind(events, "gpu_sample").iter_rows(named=True)
    assert (gpu["line"], gpu["gpu_index"], gpu["mem_used_bytes"], gpu["mem_total_bytes"], gpu["gpu_util_pct"]) == (9, 0, 22 * MIB, 8192 * MIB, 0.0)
    assert (gpu["ts"], gpu["ts_quality"]) == (None, "missing")
    logs = _of_kind(events, "log")
    assert logs["line"].to_list() == [1, *range(13, 25)]
    assert logs["message"][0] == "C:\\Users\\ron>nvidia-smi"
    assert logs["message"][1].startswith("C:\\Users\\limbo\\ron\\yzma\\pkg\\llama>go test ")
    assert logs["message"][-1] == "ok      github.com/hybridgroup/yzma/pkg/llama   62.888s"
    assert set(logs["severity"].drop_nulls()) == set()


def test_bash_prompt_over_a_2014_table() -> None:
    """``[user@host ~]$ nvidia-smi`` over a driver 331 table (version box without CUDA, bus ids of 4 digits)."""
    name = "nvidia_smi_table_331_bash_prompt_gtx680_01.txt"
    assert sniffed(fixture_path(name))[0].name == "nvidia_smi"
    events = parse_fixture(name)
    assert _of_kind(events, "log")["message"].to_list() == ["[chodera@gpu-1-12 ~]$ nvidia-smi"]
    gpus = _of_kind(events, "gpu_sample")
    assert gpus.select("line", "gpu_index", "pci_bus", "mem_used_bytes", "mem_total_bytes", "gpu_util_pct").rows() == [
        (9, 0, "0000:03:00.0", 9 * MIB, 4095 * MIB, None),
        (12, 1, "0000:04:00.0", 9 * MIB, 4095 * MIB, None),
        (15, 2, "0000:83:00.0", 9 * MIB, 4095 * MIB, None),
    ]
    assert {json.loads(a)["driver"] for a in gpus["attrs"]} == {"331.62"}
    assert set(gpus["ts_quality"]) == {"inherited"}


def test_prompt_after_pmon_rows_is_a_pmon_line() -> None:
    """``nvidia-smi pmon`` under its prompt, then the next prompt (``nvidia-smi``): the prompt is a log line of the pmon run."""
    name = "nvidia_smi_pmon_560_bash_prompt_then_table_head_01.txt"
    assert sniffed(fixture_path(name))[0].name == "nvidia_smi"
    events = parse_fixture(name)
    (process,) = _of_kind(events, "gpu_process").iter_rows(named=True)
    assert (process["line"], process["gpu_index"], process["pid"], process["process"], process["format"]) == (4, 0, 1647159, "python", "pmon")
    prompt = events.filter(pl.col("line") == 8).row(0, named=True)
    assert (prompt["kind"], prompt["format"], prompt["message"]) == ("log", "pmon", "[--@b5301.BETZY ~]$ nvidia-smi")
    assert events.filter(pl.col("line") == 1)["message"].to_list() == ["[--@b5301.BETZY ~]$ nvidia-smi pmon -c 1 -s u"]


def test_training_log_with_a_prompt_and_a_table_stays_the_pipelines() -> None:
    """A job's log that prints a table stays its own log's, prompt or not (tests/test_nvsmi_in_other_logs.py)."""
    log = "".join(f"2024-05-07 10:00:0{i},001 - INFO - epoch {i} loss 0.{i}\n" for i in range(6))
    text = f"$ python train.py\n{WINDOWS_TABLE}{log}"
    source, _ = sources.sniff(text.splitlines())
    assert source is not None and source.name == "pipeline"
    events = parse_log(text)
    assert _of_kind(events, "gpu_sample")["mem_used_bytes"].to_list() == [1412 * MIB]
