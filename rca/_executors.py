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
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import Any, Protocol

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


class _Lane(Protocol):
    """Where the local pool runs a task: this process (:class:`_ThisProcess`) or its spawned processes."""

    def submit(self, fn: Task, arg: Any, /) -> Future: ...


class ProcessPool:
    """``workers`` lanes: a thread of this process and ``workers - 1`` spawned worker processes.

    Spawned, not forked: polars' thread pool does not survive a fork. This process works
    too because a spawned worker pays about a CPU-second importing rca before its first
    task, which this process has already paid. Tasks wait here and go, in the order they
    were submitted, to whichever lane is free, so none waits in a busy lane while another idles.

    Each worker's polars thread pool gets its share of the cores: with a pool per core
    on top of a process per core, most of a small query's time goes to waking threads
    (measured: 7 % more CPU for the same files, and the processes steal each other's cores).
    """

    def __init__(self, workers: int) -> None:
        threads = max(1, (os.cpu_count() or 1) // workers)
        spawned = ProcessPoolExecutor(
            max_workers=workers - 1, mp_context=get_context("spawn"), initializer=_limit_polars_threads, initargs=(threads,)
        )
        self._here = _ThisProcess()
        self._spawned = spawned
        self._capacity: dict[_Lane, int] = {self._here: 1, spawned: workers - 1}
        self._waiting: deque[tuple[str, Task, Any]] = deque()
        self._running: dict[Future, tuple[str, _Lane]] = {}

    def submit(self, fn: Task, arg: Any, key: str) -> None:
        self._waiting.append((key, fn, arg))
        self._hand_out()

    def results(self) -> Iterator[tuple[str, Any]]:
        while self._running:
            done, _ = wait(self._running, return_when=FIRST_COMPLETED)
            for future in done:
                key, _lane = self._running.pop(future)
                result = future.result()
                self._hand_out()  # before the caller sees the result, so the lane is not idle meanwhile
                yield key, result

    def _hand_out(self) -> None:
        busy = Counter(lane for _, lane in self._running.values())
        for lane, capacity in self._capacity.items():
            while self._waiting and busy[lane] < capacity:
                key, fn, arg = self._waiting.popleft()
                self._running[lane.submit(fn, arg)] = (key, lane)
                busy[lane] += 1

    def close(self, *, failed: bool = False) -> None:
        """Stop the workers once their running tasks end; after a failure or an interrupt, not this process's:
        a thread cannot be interrupted, and the run is abandoned anyway (its staged parts are never committed)."""
        self._spawned.shutdown(wait=True, cancel_futures=True)
        if not failed:
            self._here.join()


class _ThisProcess:
    """The lane of this process: one task at a time, on a daemon thread, so that an interrupted run
    can exit without waiting for it."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def submit(self, fn: Task, arg: Any) -> Future:
        future: Future = Future()
        future.set_running_or_notify_cancel()
        self._thread = threading.Thread(target=_settle, args=(future, fn, arg), name="rca-ingest", daemon=True)
        self._thread.start()
        return future

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()


def _settle(future: Future, fn: Task, arg: Any) -> None:
    try:
        result = fn(arg)
    except BaseException as err:  # noqa: BLE001 - every outcome goes to the driver, which raises it; none may leave it waiting
        future.set_exception(err)
    else:
        future.set_result(result)


def _limit_polars_threads(threads: int) -> None:
    """Runs first in a worker: polars sizes its thread pool from this variable on first use."""
    os.environ.setdefault("POLARS_MAX_THREADS", str(threads))


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
        except BaseException:
            pool.close(failed=True)
            raise
        pool.close()
    else:
        yield InProcess()
