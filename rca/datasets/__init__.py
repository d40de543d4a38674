"""A synthetic multi-host incident corpus: a week of GPU-node logs with known failures in them.

``generate(out)`` writes ``out/logs/<host>/...`` in the formats real nodes produce (dmesg,
kern.log, journald, kubelet klog, nvidia-smi loops and tables, training, vLLM, JVM, Go and
CI logs) with what was collected around each OOM (cgroup memory files, DCGM exports and
scrapes, PyTorch memory snapshots: see :mod:`rca.datasets._artifacts`), ``out/ground_truth.csv``
with one row per injected incident (and the stage of ``rca explain`` that should explain it)
and ``out/evidence.jsonl`` pointing at every injected evidence line. The same arguments give
the same bytes.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from rca.datasets._generate import build_world, write_corpus
from rca.datasets._model import DAY, US
from rca.datasets._plan import MODES

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}
DEFAULT_START = "2026-11-23"


@dataclass(frozen=True)
class GenerateResult:
    """What :func:`generate` wrote."""

    out: Path
    files: int
    bytes: int
    lines: int
    incident_lines: int
    incidents: int
    hosts: tuple[str, ...]

    @property
    def noise_ratio(self) -> float:
        """The share of log lines that are background noise, not written by an incident."""
        return 1 - self.incident_lines / self.lines if self.lines else 1.0


def parse_size(size: str | int) -> int:
    """``"20MB"`` -> 20_000_000 (decimal units; ``MiB``/``GiB`` are binary)."""
    if isinstance(size, int):
        return size
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", size)
    unit = match.group(2).upper() if match else None
    if match is None or unit not in _UNITS:
        raise ValueError(f"size must look like 5MB, 300MB, 1GB or 512MiB, not {size!r}")
    return int(float(match.group(1)) * _UNITS[unit])


def generate(
    out: Path,
    *,
    seed: int = 0,
    days: int = 7,
    hosts: int = 6,
    incidents_per_mode: int = 3,
    size: str | int = "20MB",
    start: str | date = DEFAULT_START,
) -> GenerateResult:
    """Write the corpus into ``out`` (replacing what a previous run left there)."""
    if days < 1 or hosts < 1 or incidents_per_mode < 1:
        raise ValueError("days, hosts and incidents_per_mode must be at least 1")
    day = start if isinstance(start, date) else date.fromisoformat(start)
    start_us = int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()) * US
    end_us = start_us + days * DAY
    out = Path(out)
    for stale in (out / "logs", out / "ground_truth.csv", out / "evidence.jsonl"):
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    out.mkdir(parents=True, exist_ok=True)
    world, incidents = build_world(seed, start_us, end_us, hosts, incidents_per_mode)
    tally = write_corpus(world, out, parse_size(size), seed)
    return GenerateResult(
        out, tally.files, tally.bytes, tally.lines, tally.incident_lines, len(incidents), tuple(h.name for h in world.hosts)
    )


__all__ = ["DEFAULT_START", "MODES", "GenerateResult", "generate", "parse_size"]
