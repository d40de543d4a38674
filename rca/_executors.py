"""Where the ingest tasks run: in this process, in local worker processes, or on a Dask cluster.

An executor takes tasks (a function, one argument and a key unique to the run) and hands
back ``(key, result)`` pairs as tasks finish, including tasks submitted while results are
being drained: a large file's byte ranges are only known once its survey task is done.
A task that raises (or, on Dask, whose worker died more often than the scheduler's
``allowed-failures``) makes :meth:`Executor.results` raise; the driver then commits nothing.

Dask is imported only by :class:`DaskExecutor`, so ``pip install rca[dask]`` is needed
only to run on a cluster.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import Any, Protocol

import polars as pl

from rca.errors import InputError

Task = Callable[[Any], Any]

SCHEDULER_TIMEOUT_S = 20
"""How long to wait for a Dask scheduler to answer before giving up on it."""


class Executor(Protocol):
    def submit(self, fn: Task, arg: Any, key: str) -> None:
        """Queue ``fn(arg)``; its result comes back from :meth:`results` under ``key``."""

    def results(self) -> Iterator[tuple[str, Any]]:
        """``(key, result)`` of each task as it finishes, until no task is pending."""


class InProcess:
    """Runs each task in this process when its result is asked for: the serial run."""

    def __init__(self) -> None:
        self._queue: deque[tuple[str, Task, Any]] = deque()

    def submit(self, fn: Task, arg: Any, key: str) -> None:
        self._queue.append((key, fn, arg))

    def results(self) -> Iterator[tuple[str, Any]]:
        while self._queue:
            key, fn, arg = self._queue.popleft()
            yield key, fn(arg)


class ProcessPool:
    """``workers`` spawned worker processes, each with a polars thread pool of its share of the cores.

    Spawned, not forked: polars' thread pool does not survive a fork. The share is set in the
    environment the workers are spawned with, since polars sizes its pool once, on first use,
    and a worker has used it before any initializer runs (unpickling the task imports rca,
    which runs polars queries at import). A pool per core on top of a process per core costs
    7 % more CPU for the same files, the processes stealing each other's cores. This process
    only plans and commits: it used to take tasks too, on its own pool of every core, and
    a 100 MB ingest with 2 workers took 7.5–7.8 s that way against 7.3 s with 2 spawned
    workers (generated corpus, by turns), though a spawned worker pays about 0.65 s importing rca.
    """

    def __init__(self, workers: int) -> None:
        threads = max(1, (os.cpu_count() or 1) // workers)
        self._workers = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"))
        # ProcessPoolExecutor spawns its workers as tasks arrive, so the share stays set while the pool lives.
        self._environment = _EnvironmentSetting("POLARS_MAX_THREADS", str(threads))
        self._running: dict[Future, str] = {}

    def submit(self, fn: Task, arg: Any, key: str) -> None:
        self._running[self._workers.submit(fn, arg)] = key

    def results(self) -> Iterator[tuple[str, Any]]:
        while self._running:
            done, _ = wait(self._running, return_when=FIRST_COMPLETED)
            for future in done:
                yield self._running.pop(future), future.result()

    def close(self) -> None:
        """Stop the workers once their running tasks end; tasks not started are dropped.

        When every task is done the workers have nothing left to write, so the run goes on to
        commit while they exit (joining them took 0.11 s of a 100 MB run's 10 s, all of it idle).
        """
        self._workers.shutdown(wait=bool(self._running), cancel_futures=True)
        self._environment.restore()


class _EnvironmentSetting:
    """An environment variable set for processes this one starts, unless the user set it; :meth:`restore` undoes it.

    This process's polars pool is sized first, so the setting only reaches the processes it starts.
    """

    def __init__(self, name: str, value: str) -> None:
        pl.thread_pool_size()
        self._name = name
        self._set = name not in os.environ
        if self._set:
            os.environ[name] = value

    def restore(self) -> None:
        if self._set:
            os.environ.pop(self._name, None)
            self._set = False


class DaskExecutor:
    """Tasks on a Dask distributed cluster, through the scheduler at ``address`` (``tcp://HOST:8786``).

    The workers must see the input files at the same paths as this process (a shared file
    system), and the store at the same path or URL (an object store needs no shared folder). A task is a pure function of its argument and writes only its
    own part files, so a task rerun after its worker died writes the same parts again.
    """

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise InputError("running on a Dask cluster needs Dask: pip install 'rca[dask]'") from None
        try:
            self._client = Client(address, timeout=SCHEDULER_TIMEOUT_S, set_as_default=False)
        except (OSError, TimeoutError) as err:
            raise InputError(f"cannot reach the Dask scheduler at {address}: {err}") from None
        self._done = as_completed(loop=self._client.loop)

    def submit(self, fn: Task, arg: Any, key: str) -> None:
        self._done.add(self._client.submit(fn, arg, key=key, pure=False))

    def results(self) -> Iterator[tuple[str, Any]]:
        for future in self._done:
            yield future.key, future.result()

    def close(self) -> None:
        self._client.close()


@contextlib.contextmanager
def executor(workers: int, scheduler: str | None) -> Iterator[Executor]:
    """The executor for a run: Dask when a scheduler address is given, else ``workers`` local processes."""
    if scheduler:
        remote = DaskExecutor(scheduler)
        try:
            yield remote
        finally:
            remote.close()
    elif workers > 1:
        pool = ProcessPool(workers)
        try:
            yield pool
        finally:
            pool.close()
    else:
        yield InProcess()
