"""A `kubectl get pods` row whose name an author lengthened until it ran into READY keeps its whole name
(kubernetes/kubernetes issue #117955's paste); a row that sits under its header is read as before."""

from __future__ import annotations

import rca
from tests.conftest import FIXED_MTIME

# Constructed in the shape of issue #117955's rows: the header's READY column starts inside the last row's name.
_JAMMED = """NAME              READY   STATUS                     RESTARTS   AGE
job-9s7jw         0/1     UnexpectedAdmissionError   0          5m1s
deploy-6d485b4676-w5qmx1/1        Running          0          3m14s
"""


def _pods(text: str) -> list[str | None]:
    return rca.parse_text(text, file="pods.txt", reference_time=FIXED_MTIME)["pod"].to_list()


def test_name_run_into_ready_is_read_whole() -> None:
    events = rca.parse_text(_JAMMED, file="pods.txt", reference_time=FIXED_MTIME)
    assert events["pod"].to_list() == ["job-9s7jw", "deploy-6d485b4676-w5qmx"]
    assert events["severity"].to_list()[0] == "error"


def test_name_ending_in_a_digit_leaves_ready_its_count() -> None:
    text = _JAMMED.replace("deploy-6d485b4676-w5qmx1/1", "trainer-worker-12345-abc71/1")
    assert _pods(text)[1] == "trainer-worker-12345-abc7"


def test_aligned_rows_keep_their_cells() -> None:
    aligned = "NAME        READY   STATUS      RESTARTS   AGE\nworker-0    0/1     OOMKilled   3          7m\n"
    events = rca.parse_text(aligned, file="pods.txt", reference_time=FIXED_MTIME)
    assert (events["pod"].item(), events["severity"].item()) == ("worker-0", "error")
