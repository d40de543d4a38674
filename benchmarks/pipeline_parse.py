"""Pipeline source throughput and per-file cost, as ratios against a polars line read of the same text.

    python benchmarks/pipeline_parse.py [--lines 300000] [--seed 7] [--corpus DIR] [--profile]

Two measurements, each printed next to ``polars.read_csv`` of the same bytes (the floor):

* throughput: one large batch of typical training-log noise (python-logging step lines,
  JSON lines, ISO-prefixed lines, vLLM and transformers headers, uvicorn access lines)
  with the pipeline fixtures (tracebacks, OOMs, NCCL timeouts) spliced in;
* per-file cost: every fixture under ``tests/data/pipeline`` parsed as its own file (3 to
  a few hundred lines each), and with ``--corpus DIR`` every file under DIR that sniffs as
  ``pipeline`` (e.g. a tree from ``python -m rca.datasets generate``).

``parse`` is the source's ``parse``; ``ingest`` is ``rca.ingest.parse_lines`` (parse +
finish_events). No thresholds: the figures are for comparing runs. ``--profile`` runs the
throughput corpus' ``parse`` under cProfile instead.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import pstats
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from rca import sources
from rca.ingest import parse_lines
from rca.sources._base import ParseContext

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "data" / "pipeline"
_LOGGERS = ("trainer", "llm.train", "data.loader", "torch.distributed", "accelerate.utils")


def _python_logging(rng: random.Random, moment: datetime) -> str:
    stamp = f"{moment:%Y-%m-%d %H:%M:%S},{moment.microsecond // 1000:03d}"
    step = rng.randint(1, 90000)
    return (f"{stamp} - {rng.choice(_LOGGERS)} - INFO - step {step} | loss {rng.uniform(0.5, 4):.4f} | "
            f"lr {rng.uniform(1e-5, 3e-4):.2e} | tokens/s {rng.randint(20000, 60000)}")


def _json_line(rng: random.Random, moment: datetime) -> str:
    stamp = f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"
    return (f'{{"ts":"{stamp}","level":"info","logger":"{rng.choice(_LOGGERS)}","pod":"llama-ft-worker-{rng.randint(0, 7)}",'
            f'"pid":{rng.randint(1000, 999999)},"msg":"processed shard {rng.randint(1, 9000)}/9062 rows={rng.randint(1000, 250000)} '
            f'rss_mb={rng.randint(1000, 12000)}"}}')


def _iso_line(rng: random.Random, moment: datetime) -> str:
    stamp = f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond:06d}Z"
    return f"{stamp} Epoch {rng.randint(0, 9)} batch {rng.randint(0, 5000)}/5000 throughput {rng.uniform(100, 900):.1f} samples/s"


def _vllm_line(rng: random.Random, moment: datetime) -> str:
    return (f"INFO {moment:%m-%d %H:%M:%S} [metrics.py:351] Avg prompt throughput: {rng.uniform(0, 900):.1f} tokens/s, "
            f"Avg generation throughput: {rng.uniform(0, 900):.1f} tokens/s, Running: {rng.randint(0, 64)} reqs, "
            f"Swapped: 0 reqs, Pending: {rng.randint(0, 9)} reqs, GPU KV cache usage: {rng.uniform(0, 99):.1f}%, CPU KV cache usage: 0.0%.")


def _access_line(rng: random.Random, _: datetime) -> str:
    path = rng.choice(('"POST /v1/chat/completions HTTP/1.1" 200 OK', '"GET /health HTTP/1.1" 200 OK', '"GET /metrics HTTP/1.1" 200 OK'))
    return f"INFO:     10.244.{rng.randint(0, 255)}.{rng.randint(1, 254)}:{rng.randint(30000, 65000)} - {path}"


def _hf_line(rng: random.Random, moment: datetime) -> str:
    stamp = f"{moment:%Y-%m-%d %H:%M:%S},{moment.microsecond // 1000:03d}"
    return f"[INFO|trainer.py:{rng.randint(1000, 4000)}] {stamp} >> Saving model checkpoint to /ckpt/checkpoint-{rng.randint(1, 900) * 500}"


def _trainer_dict(rng: random.Random, _: datetime) -> str:
    return (f"{{'loss': {rng.uniform(0.5, 4):.4f}, 'grad_norm': {rng.uniform(0.1, 2):.3f}, "
            f"'learning_rate': {rng.uniform(1e-5, 3e-4):.4e}, 'epoch': {rng.uniform(0, 3):.2f}}}")


# (line builder, share of the noise)
_NOISE: tuple[tuple[Callable[[random.Random, datetime], str], float], ...] = (
    (_python_logging, 0.35), (_json_line, 0.25), (_iso_line, 0.15), (_vllm_line, 0.08),
    (_access_line, 0.08), (_hf_line, 0.05), (_trainer_dict, 0.04),
)


def noise_corpus(n: int, rng: random.Random, splice_every: int = 2000) -> str:
    """``n`` lines of training-log noise with a fixture file spliced in about every ``splice_every`` lines."""
    builders, weights = zip(*_NOISE)
    blocks = [path.read_text().splitlines() for path in sorted(FIXTURES.iterdir())]
    start = datetime(2025, 3, 1, tzinfo=UTC)
    out: list[str] = []
    while len(out) < n:
        moment = start + timedelta(milliseconds=37 * len(out) + rng.randint(0, 999))
        out.append(rng.choices(builders, weights)[0](rng, moment))
        if rng.random() < 1 / splice_every:
            out.extend(rng.choice(blocks))
    return "\n".join(out[:n]) + "\n"


def polars_read(text: str) -> float:
    data = text.encode()
    start = time.perf_counter()
    pl.read_csv(data, has_header=False, separator="\x1f", quote_char=None, new_columns=["text"],
                schema_overrides={"text": pl.String}, truncate_ragged_lines=True, encoding="utf8-lossy")
    return time.perf_counter() - start


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _context() -> ParseContext:
    return ParseContext(file="bench.log", host="gpu-node-07", year=2025)


def _decoded(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8", errors="replace")


def _pipeline_files(paths: list[Path]) -> list[tuple[Path, str]]:
    """The files among ``paths`` that the driver would hand to the pipeline source."""
    picked = []
    pipeline = sources.get("pipeline")
    for path in paths:
        text = _decoded(path)
        head = [t for t in text.splitlines()[:240] if t.strip()][:60]
        if head and (sources.sniff(head)[0] or pipeline).name == "pipeline":
            picked.append((path, text))
    return picked


def _per_file(label: str, files: list[tuple[Path, str]], ctx: ParseContext) -> None:
    source = sources.get("pipeline")
    frames = [sources.lines_frame(text) for _, text in files]
    frames = [f.filter(pl.col("text").str.strip_chars() != "") for f in frames]
    frames = [f for f in frames if f.height]
    n_lines = sum(f.height for f in frames)
    read_s = sum(polars_read(text) for _, text in files)
    times = [_timed(lambda f=f: source.parse(f, ctx)) for f in frames]
    ingest_s = sum(_timed(lambda f=f: parse_lines(f, ctx, source)) for f in frames)
    parse_s = sum(times)
    ms = sorted(t * 1000 for t in times)
    print(f"{label:<22}{len(frames):>6} files {n_lines:>8,} lines  parse {parse_s:7.2f} s ({n_lines / parse_s:>9,.0f} lines/s)"
          f"  ingest {ingest_s:7.2f} s  per file ms: median {ms[len(ms) // 2]:.1f}, max {ms[-1]:.1f}"
          f"  × read {parse_s / read_s:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=300_000, help="lines of the throughput corpus")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--corpus", type=Path, help="also time every pipeline file under this folder, one by one")
    parser.add_argument("--profile", action="store_true", help="profile the throughput corpus' parse and print the top entries")
    args = parser.parse_args()
    ctx = _context()
    source = sources.get("pipeline")
    text = noise_corpus(args.lines, random.Random(args.seed))
    lines = sources.lines_frame(text)

    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(source.parse, lines, ctx)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return

    source.parse(lines.head(100), ctx)  # warm up imports and lazy initialisation
    read_s = polars_read(text)
    parse_s = _timed(lambda: source.parse(lines, ctx))
    ingest_s = _timed(lambda: parse_lines(lines, ctx, source))
    print(f"{'throughput':<22}{lines.height:>8,} lines {len(text) / 1e6:6.1f} MB  read {read_s:6.2f} s  parse {parse_s:6.2f} s"
          f" ({lines.height / parse_s:>9,.0f} lines/s, × read {parse_s / read_s:.1f})"
          f"  ingest {ingest_s:6.2f} s ({lines.height / ingest_s:>9,.0f} lines/s, × read {ingest_s / read_s:.1f})")
    _per_file("fixtures", [(path, path.read_text()) for path in sorted(FIXTURES.iterdir())], ctx)
    if args.corpus:
        _per_file(f"corpus {args.corpus.name}", _pipeline_files(sorted(p for p in args.corpus.rglob("*") if p.is_file())), ctx)


if __name__ == "__main__":
    main()
