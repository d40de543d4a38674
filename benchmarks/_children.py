"""Run a command as a child process and measure it: wall time, CPU of its processes, peak RSS.

The peak is sampled every 50 ms over the child and its descendants (the largest process, and
all of them together). ``ru_maxrss`` cannot tell it: Linux carries the forking parent's
high-water mark across exec, so a benchmark that has read a gigabyte itself would report its
own size for every child it starts.
"""

from __future__ import annotations

import compileall
import importlib.util
import resource
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass

import psutil


def compile_rca() -> None:
    """Write rca's bytecode, as installing a wheel does, before a child is timed.

    An editable install has none, and where PYTHONDONTWRITEBYTECODE is set (as on the machines this project is built on)
    no run writes it: every process, each spawned worker included, then compiles rca's
    modules again (measured: about 0.15 s a process).
    """
    package = importlib.util.find_spec("rca")
    if package is None or not package.submodule_search_locations:
        raise RuntimeError("rca is not installed")
    for folder in package.submodule_search_locations:
        compileall.compile_dir(folder, quiet=1)


@dataclass(frozen=True)
class ChildRun:
    seconds: float
    cpu_seconds: float  # of the child and every process it waited for
    returncode: int
    stdout: str
    stderr: str
    peak_process_rss: int  # bytes, the largest single process
    peak_total_rss: int  # bytes, all of them at once


def run_sampled(command: list[str], env: Mapping[str, str] | None = None) -> ChildRun:
    """Run ``command`` to its end; its output goes through files, so no pipe fills while it is sampled."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err, env=None if env is None else dict(env))
        peak_one = peak_all = 0
        watched = psutil.Process(child.pid)
        while child.poll() is None:
            try:
                sizes = [p.memory_info().rss for p in [watched, *watched.children(recursive=True)]]
            except psutil.Error:
                sizes = []
            peak_one, peak_all = max(peak_one, *sizes, 0), max(peak_all, sum(sizes))
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.seek(0)
        err.seek(0)
        return ChildRun(
            seconds=seconds,
            cpu_seconds=after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
            returncode=child.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            peak_process_rss=peak_one,
            peak_total_rss=peak_all,
        )
