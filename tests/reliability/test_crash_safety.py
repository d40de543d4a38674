"""``rca ingest`` killed with SIGKILL at random points of a growing corpus loses nothing and duplicates nothing.

Each round grows the corpus (new files, an appended file, a rewritten file), starts
``rca ingest`` in its own process group and kills the group at a seeded kill point: after
a random number of parts are staged (mid-parse), the moment the manifest is replaced
(mid-commit), or at a random moment. Kill points follow the run's progress rather than a
clock, so a loaded machine moves them in time but not in the run. Between rounds the store
must be readable (or absent, before the first commit) and self-consistent; at the end a run
to completion must hold exactly the events of a clean run over the final corpus.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

import rca
from rca.errors import StoreError

DATA = Path(__file__).resolve().parents[1] / "data"
SEED = 7
ROUNDS = 5
RANDOM_KILL_S = (0.2, 3.0)  # the one kill at a random moment: from interpreter start-up to about the end of a run
RUN_TIMEOUT_S = 120  # a run that takes longer has hung


def _fixtures() -> list[Path]:
    folders = ("kernel", "kubelet", "pipeline", "nvidia_smi", "syslog")
    return sorted(p for folder in folders for p in (DATA / folder).iterdir() if p.is_file())


@dataclass
class Corpus:
    """A folder of logs that grows a little each round, the way a live log folder does."""

    root: Path
    rng: random.Random
    pool: list[Path] = field(default_factory=_fixtures)
    written: list[Path] = field(default_factory=list)
    originals: dict[Path, bytes] = field(default_factory=dict)  # what each file held when it was (re)written

    def grow(self, round_number: int) -> None:
        for _ in range(3):
            source = self.pool.pop(self.rng.randrange(len(self.pool)))
            target = self.root / f"gpu-node-{len(self.written) % 2 + 1}" / f"r{round_number}-{source.name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            self.originals[target] = source.read_bytes()
            target.write_bytes(self.originals[target])
            self.written.append(target)
        if round_number:
            # An excerpt may open inside a traceback: appended again, its rest runs on into the record before it, and
            # the incremental run must read the file again whole to join them as a clean run does.
            grown = self.written[self.rng.randrange(len(self.written) - 3)]
            with open(grown, "ab") as handle:  # whole records of the same format appended: the file grew, its old bytes unchanged
                handle.write(self.originals[grown])
        if round_number % 2:
            rewritten = self.written[self.rng.randrange(len(self.written) - 3)]
            self.originals[rewritten] = self.pool[self.rng.randrange(len(self.pool))].read_bytes()
            rewritten.write_bytes(self.originals[rewritten])


def _ingest_command(corpus: Path, store: Path) -> list[str]:
    return [sys.executable, "-m", "rca", "ingest", str(corpus), "--store", str(store), "--workers", "1", "--no-correlate", "--json"]


@dataclass(frozen=True)
class KillPoint:
    """When to kill a run: after its ``staged``-th part is staged, when it replaces the manifest, or ``seconds`` after it starts."""

    staged: int | None = None
    at_manifest: bool = False
    seconds: float | None = None

    def reached(self, store: Path, started: float, manifest_before: tuple[int, int] | None) -> bool:
        if self.staged is not None:
            return _staged_parts(store) >= self.staged
        if self.at_manifest:
            return _identity(store / "files.parquet") not in (None, manifest_before)
        return time.monotonic() - started >= self.seconds


def _staged_parts(store: Path) -> int:
    """Parts the running ingest has staged so far (its folders come and go while it runs)."""
    try:
        return sum(1 for _ in (store / ".staging").rglob("*.parquet"))
    except FileNotFoundError:
        return 0


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns


def _run_and_kill(command: list[str], store: Path, point: KillPoint) -> bool:
    """Run ``command``; SIGKILL its whole process group once ``point`` is reached. True when it was killed, False when it finished first."""
    manifest_before = _identity(store / "files.parquet")
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while process.poll() is None:
        hung = time.monotonic() - started > RUN_TIMEOUT_S
        if hung or point.reached(store, started, manifest_before):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            assert not hung, f"rca ingest ran over {RUN_TIMEOUT_S} s"
            return True
        time.sleep(0.002)
    assert process.returncode == 0
    return False


def _where_it_died(store: Path, runs_before: int) -> str:
    """What a killed run left behind (for the report; the assertions are in :func:`_committed_state`)."""
    if _staged_parts(store):
        return "while parsing"
    if not (store / "store.json").exists():
        return "mid-commit (manifest replaced, store.json not yet)" if (store / "files.parquet").exists() else "before its first commit"
    opened = rca.open_store(store)
    stored = {str(p) for p in store.rglob("*.parquet") if ".staging" not in p.parts and p.parent != store}
    if stored - set(opened.part_paths()):
        return "mid-commit (parts moved in, manifest not yet replaced)"
    runs = {run.get("run_id") for run in opened.meta().get("runs", [])}
    if set(opened.manifest()["run_id"].drop_nulls()) - runs:
        return "mid-commit (manifest replaced, store.json not yet)"
    return "after its commit" if len(runs) > runs_before else "before parsing"


def _committed_state(store: Path) -> tuple[int, int] | None:
    """(committed runs, events) of a readable store, None when nothing was committed yet; fails on an inconsistent store."""
    try:
        opened = rca.open_store(store)
    except StoreError:
        assert not (store / "store.json").exists()
        return None
    events, manifest = opened.events(), opened.manifest()
    assert events["event_id"].n_unique() == events.height, "an event is stored twice"
    by_file = events.group_by("file").len().rename({"len": "stored"})
    expected = manifest.select(file="path", expected="events").filter(pl.col("expected") > 0)
    mismatch = expected.join(by_file, on="file", how="full", coalesce=True).filter(pl.col("stored").ne_missing(pl.col("expected")))
    assert mismatch.is_empty(), f"the manifest and the event parts disagree: {mismatch.to_dicts()}"
    return len(opened.meta().get("runs", [])), events.height


def test_sigkill_at_random_points_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    corpus = Corpus(tmp_path / "logs", rng)
    store = tmp_path / "store"
    outcomes: list[str] = []
    # Seeded kill points: mid-parse after a random number of staged parts, two at the commit, one at a random moment.
    points = [KillPoint(staged=rng.randint(1, 3)) for _ in range(ROUNDS - 3)] + [KillPoint(at_manifest=True)] * 2
    points = rng.sample(points, len(points)) + [KillPoint(seconds=rng.uniform(*RANDOM_KILL_S))]
    for round_number, point in enumerate(points):
        corpus.grow(round_number)
        before = _committed_state(store)
        killed = _run_and_kill(_ingest_command(corpus.root, store), store, point)
        outcomes.append(f"killed {_where_it_died(store, before[0] if before else 0)}" if killed else "finished")
        _committed_state(store)
    kills = [outcome for outcome in outcomes if outcome.startswith("killed")]
    assert len(kills) >= ROUNDS - 3, outcomes  # the mid-parse kills cannot miss: a run stages more parts before it commits

    finished = subprocess.run(_ingest_command(corpus.root, store), capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    assert finished.returncode == 0, finished.stderr
    rca.ingest(corpus.root, tmp_path / "clean", workers=1)
    final, clean = rca.open_store(store).events(), rca.open_store(tmp_path / "clean").events()
    assert final.height == clean.height
    assert set(final["event_id"]) == set(clean["event_id"])
    assert final["event_id"].n_unique() == final.height
    print(f"faults injected: {len(kills)} kills in {ROUNDS} rounds {outcomes}; {final.height} events, "
          f"{len(set(clean['event_id']) - set(final['event_id']))} lost")
