"""nvidia-smi output: ``--query-gpu`` / ``--query-compute-apps`` CSV loops and the default table.

The table layout is the one drivers since 530 print (the ``shared/real_logs`` H100
captures): an 89-column box, GPU rows of three lines, then the process box.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from rca.datasets._formats import moment, utc
from rca.datasets._model import Gpu, Host

_RULE = "+" + "-" * 89 + "+"
_GPU_RULE = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
_GPU_HEAD = (
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
    "|                                         |                        |               MIG M. |",
    "|" + "=" * 41 + "+" + "=" * 24 + "+" + "=" * 22 + "|",
)
_PROC_HEAD = (
    "| Processes:                                                                              |",
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
    "|        ID   ID                                                               Usage      |",
    "|" + "=" * 89 + "|",
)

UNITS = {"memory.used": "MiB", "memory.total": "MiB", "memory.free": "MiB", "utilization.gpu": "%"}
RESERVED_MIB = {"NVIDIA H100 80GB HBM3": 479, "NVIDIA A100-SXM4-80GB": 552, "NVIDIA L4": 322, "NVIDIA A10G": 346}


@dataclass(frozen=True)
class GpuReading:
    gpu: Gpu
    used_mib: int
    util: int
    temp_c: int
    power_w: int


@dataclass(frozen=True)
class ProcReading:
    gpu_index: int
    pid: int
    name: str
    used_mib: int | None


def query_header(host: Host) -> str:
    return ", ".join(f"{col} [{UNITS[col]}]" if col in UNITS else col for col in host.smi_columns)


def query_rows(samples: pl.DataFrame, host: Host) -> pl.Expr:
    """CSV rows for a frame with ts, gpu, used (MiB), util (%), temp columns, in the host's column order."""
    by_index = {gpu.index: gpu for gpu in host.gpus}
    uuid = pl.col("gpu").replace_strict({i: g.uuid for i, g in by_index.items()}, return_dtype=pl.String)
    bus = pl.col("gpu").replace_strict({i: g.bus_id for i, g in by_index.items()}, return_dtype=pl.String)
    model = host.gpus[0].model
    reserved = RESERVED_MIB[model.name]

    def unit(expr: pl.Expr, suffix: str) -> pl.Expr:
        return pl.format("{} " + suffix, expr) if host.smi_units else expr.cast(pl.String)

    columns = {
        "timestamp": utc(pl.col("ts")).dt.strftime("%Y/%m/%d %H:%M:%S%.3f"),
        "index": pl.col("gpu").cast(pl.String),
        "uuid": uuid,
        "pci.bus_id": bus,
        "name": pl.lit(model.name),
        "memory.used": unit(pl.col("used"), "MiB"),
        "memory.total": unit(pl.lit(model.memory_mib), "MiB"),
        "memory.free": unit((pl.lit(model.memory_mib - reserved) - pl.col("used")).clip(0), "MiB"),
        "utilization.gpu": unit(pl.col("util"), "%"),
        "temperature.gpu": pl.col("temp").cast(pl.String),
    }
    return pl.concat_str([columns[name] for name in host.smi_columns], separator=", ")


APPS_COLUMNS = (
    ("timestamp", "gpu_uuid", "pid", "process_name", "used_gpu_memory"),
    ("timestamp", "gpu_name", "gpu_bus_id", "gpu_uuid", "pid", "process_name", "used_gpu_memory"),
    ("timestamp", "pid", "process_name", "gpu_bus_id", "used_gpu_memory"),
)


def apps_header(columns: Sequence[str]) -> str:
    return ", ".join(f"{col} [MiB]" if col == "used_gpu_memory" else col for col in columns)


def table(ts: int, host: Host, readings: Sequence[GpuReading], procs: Sequence[ProcReading]) -> list[str]:
    """The default ``nvidia-smi`` output at ``ts``; process rows are the lines just before the last."""
    lines = [
        f"{moment(ts):%a %b %d %H:%M:%S %Y}       ",
        _RULE,
        f"| NVIDIA-SMI {host.driver:<22} Driver Version: {host.driver:<14} CUDA Version: {host.cuda:<8} |",
        _GPU_RULE,
    ]
    lines.extend(_GPU_HEAD)
    for reading in readings:
        gpu = reading.gpu
        mig = "Disabled" if "L4" not in gpu.model.name and "A10G" not in gpu.model.name else "N/A"
        perf = "P0" if reading.util > 0 or reading.used_mib > 10 else "P8"
        lines.append(f"|{gpu.index:>4}  {gpu.model.name:<29.29}{'On':>4}  |{gpu.bus_id:>19} {'Off':>3} |{'0':>21} |")
        lines.append(
            f"| {'N/A':>3}{str(reading.temp_c) + 'C':>6}{perf:>6}{str(reading.power_w) + 'W':>16} / {str(gpu.model.power_cap_w) + 'W':>5} |"
            f"{str(reading.used_mib) + 'MiB':>11} / {str(gpu.model.memory_mib) + 'MiB':>9} |{str(reading.util) + '%':>8}{'Default':>13} |"
        )
        lines.append(f"|{'':41}|{'':24}|{mig:>21} |")
        lines.append(_GPU_RULE)
    lines.extend(["", _RULE])
    lines.extend(_PROC_HEAD)
    if not procs:
        lines.append(f"|  {'No running processes found':<87}|")
    for proc in procs:
        name = proc.name if len(proc.name) <= 32 else "..." + proc.name[-29:]
        used = "N/A" if proc.used_mib is None else f"{proc.used_mib}MiB"
        lines.append(f"|{proc.gpu_index:>5}{'N/A':>6}{'N/A':>5}{proc.pid:>16}{'C':>7}   {name:<37}{used:>9} |")
    lines.append(_RULE)
    return lines
