"""Three line heads of build and worker tools in the pipeline source: Celery's worker header ("[<stamp>: LEVEL/Process] "),
npm's level prefix ("npm ERR!", "npm error", "npm WARN", "npm warn") and Bazel's --show_timestamps stamp ("(15:27:35) INFO: ").
Inline lines are copied from the real samples named beside them."""

from __future__ import annotations

from datetime import datetime

import polars as pl

from rca.sources import pipeline
from tests.conftest import fixture_path, sniffed
from tests.test_source_pipeline import _parse, attrs_of, events_of, utc

CELERY = "docker_compose_celery_redisbeat_mainprocess_debug_01.log"
CELERY_KILLED = "docker_compose_celery_billiard_forkpoolworker_signal_9_sigkill_01.log"
BAZEL = "ci_circleci_bazel_show_timestamps_runfiles_signal_9_01.log"
NPM_ERR = "ci_npm_7_err_block_command_failed_windows_01.log"
NPM_ERROR = "ci_npm_10_error_git_dep_preparation_nested_warn_01.log"
NPM_WARN = "ci_npm_8_warn_old_lockfile_deprecated_powershell_01.log"


def test_celery_header_behind_compose_gives_level_process_and_message() -> None:
    events = events_of(CELERY)
    assert events.height == 17
    assert set(events["format"]) == {"celery"}
    assert set(events["container"]) == {"appex"}
    assert set(events["process"]) == {"MainProcess"}
    rows = events.filter(pl.col("line").is_in([1, 4, 10])).select("line", "ts", "ts_raw", "severity", "message").rows()
    assert rows == [
        (1, utc(2018, 1, 10, 10, 58, 9, 714000), "2018-01-10 10:58:09,714", "debug", "^-- substep ok"),
        (4, utc(2018, 1, 10, 10, 58, 9, 805000), "2018-01-10 10:58:09,805", "info", "Connected to redis://redis:6379//"),
        (10, utc(2018, 1, 10, 10, 58, 10, 839000), "2018-01-10 10:58:10,839", "info", "mingle: all alone"),
    ]
    assert set(events["ts_quality"]) == {"exact"}


def test_celery_worker_process_and_task_line() -> None:
    # newfies-dialer/newfies-dialer #10 (a worker's log file): a pool worker's task line keeps its task name and id
    text = (
        "[2012-03-23 20:36:27,960: INFO/PoolWorker-5] dialer_campaign.tasks.campaign_spool_contact"
        "[f70b58d1-65e0-4a8f-b4d4-741dd93e760b]: TASK :: campaign_spool_contact\n"
        "[2012-03-23 20:36:27,968: INFO/MainProcess] Task dialer_campaign.tasks.campaign_spool_contact"
        "[f70b58d1-65e0-4a8f-b4d4-741dd93e760b] succeeded in 0.00865507125854s: None\n"
        # celery/celery #8091: a WARNING of the main process, then the traceback it logged
        "[2022-02-01 22:50:13,323: WARNING/MainProcess] consumer: Connection to broker lost. Trying to re-establish the connection...\n"
        "Traceback (most recent call last):\n"
        '  File "/home/covatti/.local/share/virtualenvs/souq-p_Vlgosd/lib/python3.8/site-packages/celery/worker/consumer/consumer.py",'
        " line 326, in start\n"
        "    blueprint.start(self)\n"
    )
    events = _parse(text)[0]
    assert events.select("line", "severity", "process", "format").rows() == [
        (1, "info", "PoolWorker-5", "celery"), (2, "info", "MainProcess", "celery"), (3, "warning", "MainProcess", "celery"),
        (4, "error", None, "text"),
    ]
    assert events["message"][0] == (
        "dialer_campaign.tasks.campaign_spool_contact[f70b58d1-65e0-4a8f-b4d4-741dd93e760b]: TASK :: campaign_spool_contact"
    )
    assert events["message"][2] == "consumer: Connection to broker lost. Trying to re-establish the connection..."
    assert events["kind"][3] == "traceback"


def test_celery_pool_report_names_the_child_not_the_main_process() -> None:
    killed = events_of(CELERY_KILLED).filter(pl.col("kind") == "process_killed")
    # the pool's report names the child it lost; the WorkerLostError names none (MainProcess only reported it)
    assert killed.select("line", "process", "pid").rows() == [(1, "ForkPoolWorker-3", 27), (2, None, None), (3, None, None)]


def test_celery_level_after_a_stamp_cut_at_its_bracket() -> None:
    # celery/celery #3085: the stamp read as an outer one, the level and process what is left of the header
    events = _parse("2017-07-06 12:13:37,999: ERROR/MainProcess] Process 'PoolWorker-3' pid:22 exited with 'exitcode 2'\n")[0]
    row = events.row(0, named=True)
    assert (row["severity"], row["process"], row["exit_code"], row["ts"]) == ("error", "MainProcess", 2, utc(2017, 7, 6, 12, 13, 37, 999000))
    assert row["message"] == "Process 'PoolWorker-3' pid:22 exited with 'exitcode 2'"


def test_other_bracketed_stamps_with_a_colon_are_not_celery() -> None:
    # SageMaker's model parallelism library (a letter level, then a caller), and a python-logging stamp without a process
    text = (
        "[2024-06-28 18:30:50.171: W torch/sagemaker/distributed/fsdp/fully_sharded_data_parallel.py:38] msg\n"
        "[2022-06-10 10:08:01,828: INFO] no process\n"
    )
    events = _parse(text)[0]
    assert events["format"].to_list() == ["iso8601", "iso8601"]
    assert events["process"].to_list() == [None, None]
    assert events["severity"].to_list() == ["warning", "info"]


def test_npm_err_block_is_error() -> None:
    events = events_of(NPM_ERR)
    assert events.select("line", "severity").rows() == [(1, "error"), (2, "error"), (3, "error"), (4, "error"), (6, "error"), (7, "error")]
    assert events["message"][0] == "npm ERR! code 1"


def test_npm_10_error_lines_quoting_a_child_npm_warning_are_errors() -> None:
    events = events_of(NPM_ERROR)
    assert events.height == 12
    assert set(events["severity"]) == {"error"}
    assert set(events["kind"]) == {"log"}


def test_npm_warn_lines_are_warnings() -> None:
    events = events_of(NPM_WARN)
    assert events["severity"].to_list() == [None] + ["warning"] * 14
    assert events["message"][7].startswith("npm WARN deprecated natives@1.1.6: ")


def test_npm_prefix_only_at_line_start() -> None:
    # npm 10's lowercase warning (stonith404/pingvin-share #363 gives its block); a word glued to "npm" or text before it is no prefix
    events = _parse("npm warn deprecated inflight@1.0.6: This module is not supported\nnpmx WARN a\nsee npm ERR! above\nnpm notice New\n")[0]
    assert events["severity"].to_list() == ["warning", None, None, "notice"]


def test_bazel_timestamps_give_time_of_day_and_level() -> None:
    events = events_of(BAZEL)
    rows = events.select("line", "ts", "ts_raw", "ts_quality", "severity", "format").rows()
    assert rows[1:] == [
        # the date Bazel prints on its second line dates its own time and the times of day after it
        (2, utc(2019, 5, 20, 15, 24, 7), "2019-05-20 15:24:07", "exact", "info", "bazel"),
        (3, None, None, "missing", None, "text"),
        # a paste that lost the parenthesis: no stamp
        (4, None, None, "missing", None, "text"),
        (5, utc(2019, 5, 20, 15, 27, 20), "15:27:20", "year_inferred", "info", "bazel"),
        (6, utc(2019, 5, 20, 15, 27, 20), "15:27:20", "year_inferred", "info", "bazel"),
        (7, utc(2019, 5, 20, 15, 27, 21), "15:27:21", "year_inferred", None, "bazel"),
        (8, utc(2019, 5, 20, 15, 27, 21), "15:27:21", "year_inferred", None, "bazel"),
        (9, utc(2019, 5, 20, 15, 27, 35), "15:27:35", "year_inferred", "error", "bazel"),
    ]
    # before the date line, the file's reference day
    assert rows[0][2:] == ("15:24:07", "year_from_mtime", "info", "bazel")
    assert isinstance(rows[0][1], datetime)
    assert events["message"][0] == "INFO: Invocation ID: b229b03f-d4d7-4b93-9fa6-b11307b73912"
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "n_lines", "severity").rows() == [(9, 6, "error")]
    assert attrs_of(killed) == [{"signal": "SIGKILL"}]


def test_bazel_warning_stamp() -> None:
    # apollo's build through Bazel (bazelbuild/bazel #12390), and its level words
    events = _parse("(01:12:15) INFO: Elapsed time: 529.481s, Critical Path: 286.41s\n(01:12:15) WARNING: x\n")[0]
    assert events.select("ts_raw", "severity", "message").rows() == [
        ("01:12:15", "info", "INFO: Elapsed time: 529.481s, Critical Path: 286.41s"), ("01:12:15", "warning", "WARNING: x"),
    ]


def test_samples_are_sniffed_as_pipeline() -> None:
    for name in (CELERY, BAZEL, NPM_ERR, NPM_ERROR, NPM_WARN):
        source, _ = sniffed(fixture_path(name))
        assert source is pipeline.SOURCE, name
