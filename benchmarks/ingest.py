"""Ingest throughput and memory, as ratios against baselines measured in the same run.

    python benchmarks/ingest.py [--size 300MB] [--workers N] [--drain-lines 200000] [--corpus DIR]

Builds (or reuses) a mixed multi-source corpus with the dataset generator, then measures:

* ``rca ingest --no-correlate`` in a child process: wall time, lines/s, MB/s and peak RSS of the largest
  process; ``rca correlate`` on the result is timed apart, as the next stage;
* a plain ``polars.read_csv`` line read of the same bytes (the floor for any polars-based parser);
* writing the event table ingest produced, part by part as the store holds it, with the store's
  Parquet options: what producing the table alone costs, with no parsing at all (the ≤ 4×
  target is set against the line read, and the table's own write is a floor under any ingest);
* a Drain3 ``TemplateMiner.add_log_message`` loop over the same lines (measured on a
  ``--drain-lines`` sample with the corpus' mix of sources and compared as a rate, since a
  full Drain3 pass takes far longer).

Targets from the project issue: ingest ≤ 4× the polars read, ≥ 5× faster than Drain3, peak RSS < 2 GB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
from _children import ChildRun, compile_rca, run_sampled


def _corpus_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _raw_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _is_binary(data: bytes) -> bool:
    """A file with NUL bytes (a pickled memory snapshot) has no lines to read: rca reads it whole."""
    return b"\x00" in data[:8192]


def polars_line_read(files: list[Path]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, lines and bytes for reading every text file's lines with polars.read_csv."""
    start, cpu_start = time.perf_counter(), time.process_time()
    lines = size = 0
    for path in files:
        data = _raw_bytes(path)
        if _is_binary(data):
            continue
        size += len(data)
        frame = pl.read_csv(data, has_header=False, separator="\x1f", quote_char=None, new_columns=["text"],
                            schema_overrides={"text": pl.String}, truncate_ragged_lines=True, encoding="utf8-lossy")
        lines += frame.height
    return time.perf_counter() - start, time.process_time() - cpu_start, lines, size


def event_table_write(store: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of writing the store's event parts again (in memory, the store's Parquet options), and their rows."""
    from rca._storefs import parquet_bytes

    wall = cpu = 0.0
    rows = 0
    for part in sorted((store / "events").rglob("*.parquet")):
        events = pl.read_parquet(part)
        rows += events.height
        start, cpu_start = time.perf_counter(), time.process_time()
        parquet_bytes(events)
        wall += time.perf_counter() - start
        cpu += time.process_time() - cpu_start
    return wall, cpu, rows


def drain3_rate(files: list[Path], max_lines: int) -> tuple[float, float, int]:
    """Lines per wall second and per CPU second of a Drain3 TemplateMiner loop over ``max_lines`` lines.

    The sample takes the same share of every file, so it has the corpus' mix of sources:
    Drain3's cost per line grows with its cluster count, which differs tenfold between
    kernel lines and nvidia-smi or pipeline lines.
    """
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    texts = (_raw_bytes(path) for path in files)
    per_file = [data.decode("utf-8", errors="replace").splitlines() for data in texts if not _is_binary(data)]
    share = min(1.0, max_lines / max(1, sum(len(lines) for lines in per_file)))
    sample = [line for lines in per_file for line in lines[: max(1, round(len(lines) * share))]][:max_lines]
    start, cpu_start = time.perf_counter(), time.process_time()
    for line in sample:
        miner.add_log_message(line)
    return len(sample) / (time.perf_counter() - start), len(sample) / (time.process_time() - cpu_start), len(sample)


def _finished(run: ChildRun, what: str) -> ChildRun:
    if run.returncode != 0:
        raise RuntimeError(f"{what} failed ({run.returncode}): {run.stderr[-2000:]}")
    return run


def rca_ingest(corpus: Path, store: Path, workers: int | None) -> tuple[ChildRun, dict]:
    """``rca ingest --no-correlate`` of ``corpus`` (wall, CPU of all its processes, peak RSS) and its JSON summary."""
    command = [sys.executable, "-m", "rca", "ingest", str(corpus), "--store", str(store), "--json", "--no-correlate"]
    if workers:
        command += ["--workers", str(workers)]
    run = _finished(run_sampled(command), "rca ingest")
    return run, json.loads(run.stdout)


def rca_correlate(store: Path) -> ChildRun:
    """``rca correlate`` on the ingested store (the next stage, timed apart)."""
    return _finished(run_sampled([sys.executable, "-m", "rca", "correlate", "--store", str(store)]), "rca correlate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="300MB", help="corpus size for the generator (default 300MB)")
    parser.add_argument("--corpus", type=Path, help="reuse this corpus folder (DIR/logs is ingested) instead of generating")
    parser.add_argument("--workers", type=int, help="rca ingest --workers (default: all cores)")
    parser.add_argument("--drain-lines", type=int, default=200_000, help="lines fed to the Drain3 baseline")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    compile_rca()

    work = Path(tempfile.mkdtemp(prefix="rca-bench-"))
    try:
        corpus = args.corpus
        if corpus is None:
            from rca.datasets import generate

            corpus = work / "corpus"
            started = time.perf_counter()
            generate(corpus, seed=args.seed, size=args.size)
            print(f"generated {args.size} corpus in {time.perf_counter() - started:.1f} s")
        logs = corpus / "logs"
        files = _corpus_files(logs)
        on_disk = sum(p.stat().st_size for p in files)

        polars_s, polars_cpu, lines, raw = polars_line_read(files)
        drain_lps, drain_cpu_lps, drain_n = drain3_rate(files, args.drain_lines)
        ingested, summary = rca_ingest(logs, work / "store", args.workers)
        ingest_s, ingest_cpu, peak = ingested.seconds, ingested.cpu_seconds, ingested.peak_process_rss
        correlated = rca_correlate(work / "store")
        write_s, write_cpu, written = event_table_write(work / "store")

        rca_lps = lines / ingest_s
        print(f"corpus: {len(files)} files, {on_disk / 1e6:,.1f} MB on disk, {raw / 1e6:,.1f} MB of text, {lines:,} lines")
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall-clock figures suffer from load; CPU-second figures less so)")
        print(f"rca ingest:        {ingest_s:8.2f} s  {rca_lps:12,.0f} lines/s  {raw / 1e6 / ingest_s:8.1f} MB/s  "
              f"CPU {ingest_cpu:7.1f} s ({lines / ingest_cpu:,.0f} lines per CPU-s)  peak RSS {peak / 2**20:,.0f} MiB")
        print(f"rca correlate:     {correlated.seconds:8.2f} s  (CPU {correlated.cpu_seconds:.1f} s, peak RSS {correlated.peak_process_rss / 2**20:,.0f} MiB;"
              " the next stage, not in the ratios below)")
        print(f"polars line read:  {polars_s:8.2f} s  {lines / polars_s:12,.0f} lines/s  CPU {polars_cpu:.2f} s")
        print(f"event table write: {write_s:8.2f} s  ({written:,} events, CPU {write_cpu:.2f} s: {write_s / polars_s:.2f}× the polars read in wall, "
              f"{write_cpu / polars_cpu:.2f}× in CPU; a floor under ingest, which writes this table)")
        print(f"drain3 loop:       {drain_n / drain_lps:8.2f} s  {drain_lps:12,.0f} lines/s  {drain_cpu_lps:,.0f} lines per CPU-s  (a {drain_n:,}-line sample)")
        print(f"ratio ingest / polars read: {ingest_s / polars_s:6.2f}× wall, {ingest_cpu / polars_cpu:6.2f}× CPU   (target ≤ 4×)")
        print(f"speed-up over drain3:       {rca_lps / drain_lps:6.2f}× wall, {lines / ingest_cpu / drain_cpu_lps:6.2f}× per CPU-s   (target ≥ 5×)")
        print(f"events: {summary['events']:,}  OOM-class: {summary['oom_class_events']}  hosts: {len(summary['hosts'])}  problem files: {len(summary['problem_files'])}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
