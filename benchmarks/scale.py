"""How ingest cost grows with the corpus, and what more processes and a Dask cluster buy.

    python benchmarks/scale.py [--sizes 10MB,100MB,1GB] [--huge] [--compare-at 100MB] [--repeat 3] [--cache DIR]

For each size, a corpus from the dataset generator (``rca datasets generate``; kept in
``--cache`` for the next run) is ingested by ``rca ingest --no-correlate`` in a child
process with the default workers (every core). Printed per size: files, wall time, CPU
seconds of all its processes, MB/s and lines/s, and the peak RSS of the largest process
(driver or worker) and of all of them together, sampled every 50 ms. Then:

* the exponent of wall time against size, fitted on a log-log scale (target 1.0 ± 0.1), and
  the marginal MB/s and the exponent between consecutive sizes (a per-file cost that does not
  grow with the bytes pulls the exponent below 1 on small corpora); and the least-squares
  line time = fixed + size / rate, which splits the two;
* at ``--compare-at``: the speed-up from 1 to 2 workers (target ≥ 1.7× on 2 cores), also
  against one worker held to one polars thread (the single process otherwise keeps part
  of the second core busy through polars' thread pool), and a 2-worker Dask
  ``LocalCluster`` against 2 local workers (target within 25 %).
  The cluster is started, and rca imported on its workers, before the clock starts, as a
  real one would already be running. Each of these runs ``--repeat`` times, the kinds taking
  turns so that a slow spell of the machine falls on all of them; the best of each is
  compared (other load only ever adds time), the slowest printed beside it.

``--huge`` adds 10 GB. Wall-clock figures suffer from other load on the machine: the load
average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _children import compile_rca, run_sampled


@dataclass(frozen=True)
class Run:
    seconds: float
    cpu_seconds: float  # of the child and every process it waited for (not a Dask cluster's workers)
    lines: int
    peak_process_rss: int
    peak_total_rss: int


def corpus(cache: Path, size: str, seed: int) -> tuple[Path, int, int]:
    """The generated corpus of ``size`` (made once per cache folder), its bytes on disk and its files."""
    from rca.datasets import generate

    folder = cache / f"corpus-{size}-seed{seed}"
    done = folder / ".complete"
    if not done.exists():
        started = time.perf_counter()
        generate(folder, seed=seed, size=size)
        done.write_text("ok")
        print(f"generated the {size} corpus in {time.perf_counter() - started:.0f} s", flush=True)
    logs = folder / "logs"
    files = [p for p in logs.rglob("*") if p.is_file()]
    return logs, sum(p.stat().st_size for p in files), len(files)


def ingest(logs: Path, store: Path, *, workers: int | None = None, scheduler: str | None = None, polars_threads: int | None = None) -> Run:
    """``rca ingest`` of ``logs`` into a fresh ``store`` in a child process, its wall time and peak memory."""
    shutil.rmtree(store, ignore_errors=True)
    command = [sys.executable, "-m", "rca", "ingest", str(logs), "--store", str(store), "--json", "--no-correlate"]
    if workers:
        command += ["--workers", str(workers)]
    if scheduler:
        command += ["--scheduler", scheduler]
    env = {**os.environ, "POLARS_MAX_THREADS": str(polars_threads)} if polars_threads else None
    run = run_sampled(command, env)
    if run.returncode not in (0, 1):
        raise RuntimeError(f"rca ingest failed ({run.returncode}): {run.stderr[-2000:]}")
    return Run(run.seconds, run.cpu_seconds, int(json.loads(run.stdout)["lines"]), run.peak_process_rss, run.peak_total_rss)


def _warm(address: str) -> None:
    """Import rca on the cluster's workers, as a cluster that already ran an ingest has."""
    from distributed import Client

    with Client(address) as client:
        client.run(__import__, "rca.ingest")


def fitted_exponent(sizes: list[int], seconds: list[float]) -> float:
    """The slope of log(time) against log(size)."""
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def affine_fit(sizes: list[int], seconds: list[float]) -> tuple[float, float]:
    """The least-squares line seconds = fixed + size / rate: ``fixed`` in seconds, ``rate`` in bytes per second."""
    slope, fixed = np.polyfit(np.asarray(sizes, dtype=float), np.asarray(seconds), 1)
    return float(fixed), float(1 / slope)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10MB,100MB,1GB", help="corpus sizes, comma-separated (default 10MB,100MB,1GB)")
    parser.add_argument("--huge", action="store_true", help="also 10GB")
    parser.add_argument("--compare-at", default="100MB", help="size for the 1-vs-2 workers and Dask comparisons (default 100MB)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each kind in the comparisons (default 3)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "rca-scale", help="where corpora are kept between runs")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()] + (["10GB"] if args.huge else [])
    args.cache.mkdir(parents=True, exist_ok=True)
    compile_rca()
    work = Path(tempfile.mkdtemp(prefix="rca-scale-"))
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores", flush=True)
    try:
        measured: list[tuple[str, int, Run]] = []
        print(f"{'size':>6} {'MB':>9} {'files':>6} {'wall s':>8} {'CPU s':>7} {'MB/s':>7} {'lines/s':>10} {'peak RSS/process':>17} {'peak RSS/all':>13}")
        for size in sizes:
            logs, on_disk, files = corpus(args.cache, size, args.seed)
            run = ingest(logs, work / "store")
            measured.append((size, on_disk, run))
            print(f"{size:>6} {on_disk / 1e6:9.1f} {files:6} {run.seconds:8.1f} {run.cpu_seconds:7.1f} {on_disk / 1e6 / run.seconds:7.2f} "
                  f"{run.lines / run.seconds:10,.0f} {run.peak_process_rss / 2**20:13,.0f} MiB {run.peak_total_rss / 2**20:9,.0f} MiB", flush=True)
        if len(measured) > 1:
            exponent = fitted_exponent([b for _, b, _ in measured], [r.seconds for _, _, r in measured])
            print(f"time ~ size^{exponent:.2f}   (target 1.0 ± 0.1)")
            fixed, rate = affine_fit([b for _, b, _ in measured], [r.seconds for _, _, r in measured])
            print(f"time ≈ {fixed:.1f} s + size / {rate / 1e6:.1f} MB/s   (least squares over the sizes)")
            for (small, small_bytes, a), (large, large_bytes, b) in itertools.pairwise(measured):
                local = fitted_exponent([small_bytes, large_bytes], [a.seconds, b.seconds])
                print(f"marginal {small} → {large}: {(large_bytes - small_bytes) / 1e6 / (b.seconds - a.seconds):.2f} MB/s wall, "
                      f"{(large_bytes - small_bytes) / 1e6 / (b.cpu_seconds - a.cpu_seconds):.2f} MB per CPU-s, exponent {local:.2f}")
        compare(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def compare(args: argparse.Namespace, work: Path) -> None:
    """1 worker, 2 workers and a 2-worker Dask cluster at ``args.compare_at``, each ``args.repeat`` times by turns."""
    logs, _, _ = corpus(args.cache, args.compare_at, args.seed)
    from distributed import LocalCluster

    # One polars thread per worker, as the local pool gives its processes (see rca._executors).
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      silence_logs=logging.ERROR, env={"POLARS_MAX_THREADS": "1"}) as cluster:
        _warm(cluster.scheduler_address)
        kinds = {
            "one": lambda: ingest(logs, work / "store", workers=1),
            "two": lambda: ingest(logs, work / "store", workers=2),
            # The single process keeps more than one core busy through polars' thread pool; held to one
            # thread, it shows what the second process adds over one core.
            "one_core": lambda: ingest(logs, work / "store", workers=1, polars_threads=1),
            "dask": lambda: ingest(logs, work / "store", scheduler=cluster.scheduler_address),
        }
        runs: dict[str, list[Run]] = {kind: [] for kind in kinds}
        for _ in range(args.repeat):
            for kind, run in kinds.items():
                runs[kind].append(run())
    best = {kind: min(r.seconds for r in taken) for kind, taken in runs.items()}
    worst = {kind: max(r.seconds for r in taken) for kind, taken in runs.items()}
    print(f"at {args.compare_at}, best (slowest) of {args.repeat}: 1 worker {best['one']:.1f} s ({worst['one']:.1f}), 2 workers "
          f"{best['two']:.1f} s ({worst['two']:.1f}): speed-up {best['one'] / best['two']:.2f}×   (target ≥ 1.7×)", flush=True)
    print(f"at {args.compare_at}: 1 worker with one polars thread {best['one_core']:.1f} s ({worst['one_core']:.1f}): "
          f"2 workers are {best['one_core'] / best['two']:.2f}× faster", flush=True)
    print(f"at {args.compare_at}: 2-worker Dask LocalCluster {best['dask']:.1f} s ({worst['dask']:.1f}) vs 2 local workers "
          f"{best['two']:.1f} s: {best['dask'] / best['two'] - 1:+.0%}   (target within ±25 %)")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
