"""The local pool: this process and spawned workers share the tasks, and every result comes back once."""

from __future__ import annotations

import os
import threading
import time

import pytest

from rca._executors import ProcessPool, executor


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _fail(message: str) -> None:
    raise ValueError(message)


def test_this_process_and_the_workers_share_the_tasks_and_tasks_added_while_draining_run_too() -> None:
    pool = ProcessPool(2)
    try:
        for n in range(6):
            pool.submit(_pid_after, 0.2, f"first-{n}")
        seen: dict[str, int] = {}
        for key, pid in pool.results():
            seen[key] = pid
            if key == "first-0":
                pool.submit(_pid_after, 0.0, "added")
    finally:
        pool.close()
    assert sorted(seen) == sorted([f"first-{n}" for n in range(6)] + ["added"])
    assert os.getpid() in seen.values()
    assert len(set(seen.values())) == 2


def test_a_task_that_raises_makes_the_results_raise() -> None:
    pool = ProcessPool(2)
    try:
        pool.submit(_pid_after, 0.0, "fine")
        pool.submit(_fail, "broken input", "broken")
        with pytest.raises(ValueError, match="broken input"):
            list(pool.results())
    finally:
        pool.close()


def test_a_failed_run_does_not_wait_for_the_task_running_in_this_process() -> None:
    """After a failure (or Ctrl-C) the pool closes though a task of this process's lane still runs."""
    release = threading.Event()
    with pytest.raises(ValueError, match="broken input"), executor(2, None) as pool:
        pool.submit(release.wait, 60, "this-process")  # the first task goes to this process's lane
        pool.submit(_fail, "broken input", "worker")
        list(pool.results())
    still_running = [future for future in pool._running if not future.done()]
    release.set()
    assert len(still_running) == 1
