"""``python -m rca.datasets generate --out DIR [--seed S] [--days 7] [--hosts 6] [--incidents-per-mode 3] [--size 20MB]``"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rca.datasets import DEFAULT_START, generate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rca.datasets", description="Synthetic multi-host GPU incident corpus.")
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="write logs/, ground_truth.csv and evidence.jsonl into --out")
    gen.add_argument("--out", type=Path, required=True)
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--days", type=int, default=7)
    gen.add_argument("--hosts", type=int, default=6)
    gen.add_argument("--incidents-per-mode", type=int, default=3)
    gen.add_argument("--size", default="20MB", help="total bytes to write, e.g. 5MB, 300MB, 1GB (within about 15%%)")
    gen.add_argument("--start", default=DEFAULT_START, help="first day (UTC), YYYY-MM-DD")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    try:
        result = generate(
            args.out,
            seed=args.seed,
            days=args.days,
            hosts=args.hosts,
            incidents_per_mode=args.incidents_per_mode,
            size=args.size,
            start=args.start,
        )
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    took = time.perf_counter() - began
    print(
        f"wrote {result.files} files, {result.bytes / 1e6:.1f} MB, {result.lines} lines ({result.noise_ratio:.1%} noise), "
        f"{result.incidents} incidents on {len(result.hosts)} hosts into {result.out} in {took:.1f} s ({result.bytes / 1e6 / took:.1f} MB/s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
