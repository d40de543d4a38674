"""Exit codes and kills that CI tools and launchers print: npm's (7+) error block naming the signal, Bazel's "(Exit N)"
of a failed action and its "Process terminated by signal N", Celery's prefork pool (billiard) and joblib's loky executor
of a worker a signal ended, in the pipeline source. Inline lines are copied from the real samples named beside them, or
written in a format's own wording where a comment says so."""

from __future__ import annotations

import polars as pl

from tests.test_source_pipeline import _parse, attrs_of, events_of

NPM = "ci_podman_build_npm_err_signal_sigkill_01.log"
BAZEL = "ci_bazel_cmake_tensorflow_cc_exit_1_gcc_killed_make_error_01.log"
CELERY = "docker_compose_celery_billiard_forkpoolworker_signal_9_sigkill_01.log"


def _killed(events: pl.DataFrame) -> pl.DataFrame:
    return events.filter(pl.col("kind") == "process_killed")


def test_npm_err_signal_line_is_the_kill_and_the_rest_of_its_block_is_not() -> None:
    events = events_of(NPM)
    killed = _killed(events)
    assert killed.select("line", "severity", "exit_code", "message").rows() == [
        (9, "error", None, "npm ERR! signal SIGKILL"),
    ]
    assert attrs_of(killed) == [{"signal": "SIGKILL"}]
    # "npm ERR! command failed" and the command line say nothing of a signal
    assert events.filter(pl.col("line").is_in([8, 10]))["kind"].to_list() == ["log", "log"]


def test_npm_10_error_level_and_other_signals() -> None:
    # later npm writes its level "npm error" (line 1 in that wording); stonith404/pingvin-share #363 gives npm 9's SIGILL
    events = _parse("npm error signal SIGKILL\nnpm ERR! path /opt/app/backend\nnpm ERR! command failed\nnpm ERR! signal SIGILL\n")[0]
    killed = _killed(events)
    assert killed.select("line", "exit_code").rows() == [(1, None), (4, None)]
    assert attrs_of(killed) == [{"signal": "SIGKILL"}, {"signal": "SIGILL"}]


def test_npm_signal_word_elsewhere_is_no_kill() -> None:
    events = _parse("npm ERR! signal handling is broken in this script\nnpm WARN signal SIGKILL\n")[0]
    assert events["kind"].to_list() == ["log", "log"]


def test_bazel_exit_of_a_failed_action_is_its_exit_code() -> None:
    events = events_of(BAZEL)
    assert events.filter(pl.col("exit_code").is_not_null()).select("line", "kind", "severity", "exit_code").rows() == [
        (1, "log", "error", 1), (7, "log", "error", 1), (8, "log", "error", 2), (9, "log", "error", 2),
    ]
    killed = _killed(events)
    assert killed.select("line", "process").rows() == [(2, "cc1plus")]


def test_bazel_exit_forms() -> None:
    # tensorflow/tensorflow #58956 (Exit 4), bazelbuild/intellij #6811 (Bazel 7's "failed: (Exit 1): ")
    events = _parse(
        "ERROR: /home/work/tensorflow/test/tensorflow-2.4.0/tensorflow/compiler/xla/service/cpu/BUILD:695:1: C++ compilation"
        " of rule '//tensorflow/compiler/xla/service/cpu:runtime_matmul' failed (Exit 4)\n"
        "ERROR: /var/lib/buildkite-agent/.cache/bazel/_bazel_buildkite-agent/d482ca816c4aff7186650e0e5ac8ac81/external/abseil-cpp+"
        "/absl/hash/BUILD.bazel:35:11: Compiling absl/hash/internal/hash.cc [for tool] failed: (Exit 1): gcc failed: error"
        " executing CppCompile command (from target @@abseil-cpp+//absl/hash:hash) \n"
    )[0]
    assert events.select("line", "kind", "severity", "exit_code").rows() == [(1, "log", "error", 4), (2, "log", "error", 1)]


def test_bazel_exit_137_is_a_kill() -> None:
    events = _parse("ERROR: /src/BUILD:10:1: C++ compilation of rule '//foo:bar' failed (Exit 137)\n")[0]
    row = events.row(0, named=True)
    assert (row["kind"], row["severity"], row["exit_code"], row["attrs"]) == ("process_killed", "error", 137, '{"signal":"SIGKILL"}')


def test_process_terminated_by_signal_number() -> None:
    # bazelbuild/bazel #8413 (a spawn's end); PostgreSQL's postmaster of a backend, with its pid, in its wording; fish's
    # job report names the signal, not its number, and is left alone
    events = _parse(
        "  /home/circleci/.cache/bazel/_bazel_circleci/install/d3bd40b000554ec2dfd10da1797a94e5/_embedded_binaries/build-runfiles"
        " bazel-out/k8-fastbuild/bin/lint-ci.bash.runfiles_manifest bazel-out/k8-fastbuild/bin/lint-ci.bash.runfiles): Process"
        " terminated by signal 9: Process terminated by signal 9\n"
        "server process (PID 25011) was terminated by signal 9: Killed\n"
        "fish: Job 1, 'npm install' terminated by signal SIGKILL (Forced quit)\n"
    )[0]
    killed = _killed(events)
    assert killed.select("line", "severity", "pid", "exit_code").rows() == [(1, "error", None, None), (2, "error", 25011, None)]
    assert attrs_of(killed) == [{"signal": "SIGKILL"}, {"signal": "SIGKILL"}]


def test_celery_prefork_pool_worker_killed() -> None:
    events = events_of(CELERY)
    killed = _killed(events)
    assert killed.select("line", "severity", "pid", "exit_code", "container", "n_lines").rows() == [
        (1, "error", 27, None, "celery-slow_1", 1), (2, "error", None, None, "celery-slow_1", 1), (3, "error", None, None, "celery-slow_1", 4),
    ]
    attrs = attrs_of(killed)
    assert [a["signal"] for a in attrs] == ["SIGKILL"] * 3
    assert attrs[2]["exc_type"] == "billiard.exceptions.WorkerLostError"


def test_celery_worker_exit_code_is_no_kill() -> None:
    # celery/celery #3085: a pool worker that exited (no signal) keeps its code
    events = _parse("2017-07-06 12:13:37,999: ERROR/MainProcess] Process 'PoolWorker-3' pid:22 exited with 'exitcode 2'\n")[0]
    row = events.row(0, named=True)
    assert (row["kind"], row["exit_code"]) == ("log", 2)


def test_joblib_loky_terminated_worker_names_the_signal() -> None:
    # joblib/joblib #812: the exception that ends the traceback names the workers' exit codes as signals
    text = (
        '  File "/home/hadoop/miniconda3/envs/py3/lib/python3.6/concurrent/futures/_base.py", line 384, in __get_result\n'
        "    raise self._exception\n"
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was unexpectedly"
        " terminated. This could be caused by a segmentation fault while calling the function or by an excessive memory usage"
        " causing the Operating System to kill the worker. The exit codes of the workers are {SIGKILL(-9)}\n"
    )
    killed = _killed(_parse(text)[0])
    assert killed.select("line", "n_lines", "exit_code").rows() == [(1, 3, None)]
    attrs = attrs_of(killed)[0]
    assert (attrs["signal"], attrs["exc_type"]) == ("SIGKILL", "joblib.externals.loky.process_executor.TerminatedWorkerError")
