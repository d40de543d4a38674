"""The local pool: spawned workers share the tasks, each with its share of polars' threads, and every result comes back once."""

from __future__ import annotations

import os
import time

import polars as pl
import pytest

from rca._executors import ProcessPool


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _fail(message: str) -> None:
    raise ValueError(message)


def _polars_threads(_: object) -> int:
    return pl.thread_pool_size()


def test_the_workers_share_the_tasks_and_tasks_added_while_draining_run_too() -> None:
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
    assert os.getpid() not in seen.values()
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


def test_each_worker_gets_its_share_of_polars_threads_and_this_process_keeps_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # one thread each: fewer than polars' default on any machine with 2 cores
    pool = ProcessPool(2)
    try:
        for n in range(2):
            pool.submit(_polars_threads, None, f"threads-{n}")
        threads = dict(pool.results())
    finally:
        pool.close()
    assert threads == {"threads-0": 1, "threads-1": 1}
    assert "POLARS_MAX_THREADS" not in os.environ


def test_a_thread_count_the_user_set_is_left_to_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLARS_MAX_THREADS", "1")
    monkeypatch.setattr(os, "cpu_count", lambda: 8)  # a share of 4 threads, had the user not asked for 1
    pool = ProcessPool(2)
    try:
        pool.submit(_polars_threads, None, "threads")
        threads = dict(pool.results())
    finally:
        pool.close()
    assert threads == {"threads": 1}
    assert os.environ["POLARS_MAX_THREADS"] == "1"
