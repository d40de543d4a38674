"""Run the fuzz targets for a bounded time each: ``python fuzz/run.py [TARGET ...] --seconds 60``.

Each target starts from the fixture files of its source (``tests/data`` and the public samples
in ``/work/shared/real_logs`` when present) and keeps what it learns in
``build/fuzz/corpus/<target>/``, so the next run goes on from there. A crash leaves its input in
``build/fuzz/artifacts/``; replay it with ``python fuzz/fuzz_<target>.py ARTIFACT``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = ROOT / "build" / "fuzz"
SEED_FOLDERS = [ROOT / "tests" / "data", Path("/work/shared/real_logs")]
# Which fixture files seed which target: the folder or name prefixes of the source's samples.
SEEDS = {
    "sniff": ("",),
    "kernel": ("kernel/", "dmesg_", "kern_log_", "journalctl_k_"),
    "pipeline": ("pipeline/", "ci_", "nccl_", "hf_trainer_", "k8s_device_plugin_", "pytorch_", "vllm_"),
}
MAX_LEN = 8192
_STAT = re.compile(r"stat::(\w+):\s*(\d+)")


def seed(target: str) -> Path:
    """A fresh folder of the target's seed files (each cut to the fuzzer's input length)."""
    folder = WORK / "seeds" / target
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for root in SEED_FOLDERS:
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            if any(rel.startswith(prefix) or path.name.startswith(prefix) for prefix in SEEDS[target]):
                (folder / f"{root.name}-{rel.replace('/', '-')}").write_bytes(b"\x00" + path.read_bytes()[:MAX_LEN - 1])
    return folder


def run(target: str, seconds: int) -> dict[str, int | str]:
    """Fuzz ``target`` for ``seconds``; returns libFuzzer's final statistics and the outcome."""
    corpus = WORK / "corpus" / target
    artifacts = WORK / "artifacts"
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(HERE / f"fuzz_{target}.py"), f"-max_total_time={seconds}", f"-max_len={MAX_LEN}",
               "-print_final_stats=1", "-rss_limit_mb=4096", "-timeout=30", f"-artifact_prefix={artifacts}/{target}-",
               str(corpus), str(seed(target))]
    env = {**os.environ, "POLARS_MAX_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    stats: dict[str, int | str] = {name: int(value) for name, value in _STAT.findall(done.stderr)}
    stats["outcome"] = "ok" if done.returncode == 0 else f"crash (exit {done.returncode})"
    if done.returncode:
        sys.stderr.write(done.stderr[-4000:])
    return stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"Targets to run (default: all of {', '.join(SEEDS)}).")
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("FUZZ_SECONDS", "60")), help="Fuzzing time per target.")
    args = parser.parse_args()
    unknown = sorted(set(args.targets) - set(SEEDS))
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(SEEDS)}")
    failed = False
    for target in args.targets or list(SEEDS):
        stats = run(target, args.seconds)
        failed |= stats["outcome"] != "ok"
        print(f"{target}: {stats['outcome']}, {stats.get('number_of_executed_units', '?')} executions in "
              f"{stats.get('total_time_seconds', args.seconds)} s, {stats.get('peak_rss_mb', '?')} MB peak, corpus in {WORK / 'corpus' / target}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
