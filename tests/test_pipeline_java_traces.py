"""A Java stack trace under the log4j2 line that logged its exception (TorchServe's ts_log.log) is that line's thread's."""

from __future__ import annotations

from datetime import UTC, datetime

import rca

# pytorch/serve issue #3026: the frontend's worker thread logs the exception it caught, log4j prints its trace under it.
TS_LOG = """\
2024-03-14T07:34:24,938 [DEBUG] W-9015-my_tc_1.0 org.pytorch.serve.wlm.WorkerThread - Backend worker monitoring thread interrupted or backend worker process died.
java.lang.InterruptedException: null
        at java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.awaitNanos(AbstractQueuedSynchronizer.java:1679) ~[?:?]
        at org.pytorch.serve.wlm.WorkerThread.run(WorkerThread.java:194) [model-server.jar:?]
"""


def test_a_trace_under_a_log4j2_line_takes_its_time() -> None:
    events = rca.parse_text(TS_LOG, file="ts_log.log")
    assert events.select("line", "kind", "n_lines", "ts_quality").rows() == [(1, "log", 1, "exact"), (2, "traceback", 3, "inherited")]
    assert events["ts"].to_list() == [datetime(2024, 3, 14, 7, 34, 24, 938000, tzinfo=UTC)] * 2


def test_workers_interleaved_lines_stay_apart() -> None:
    # Each worker's own output line carries its thread: two workers' lines between each other are two writers still.
    text = (
        "2024-03-14T07:34:25,001 [INFO ] W-9000-a_1.0-stdout MODEL_LOG - Traceback (most recent call last):\n"
        "2024-03-14T07:34:25,002 [INFO ] W-9001-b_1.0-stdout MODEL_LOG - step 10 loss 0.5\n"
        '2024-03-14T07:34:25,003 [INFO ] W-9000-a_1.0-stdout MODEL_LOG -   File "handler.py", line 3, in handle\n'
        "2024-03-14T07:34:25,004 [INFO ] W-9000-a_1.0-stdout MODEL_LOG - RuntimeError: boom\n"
    )
    events = rca.parse_text(text, file="model_log.log")
    assert events.select("line", "kind", "n_lines").rows() == [(1, "traceback", 3), (2, "log", 1)]
