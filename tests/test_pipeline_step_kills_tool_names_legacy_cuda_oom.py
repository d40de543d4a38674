"""Pipeline source: workflow step tags before a kill, compiler tool names that look like pdsh hosts, Jenkins Timestamper's
padded clock, Docker 1.7's failed build step at info, and the legacy (Caffe/Caffe2) CUDA out-of-memory checks."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import rca


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x.log")


def _only(text: str) -> dict:
    events = _events(text)
    assert events.height == 1, events
    return events.row(0, named=True)


@pytest.mark.parametrize(
    "line",
    ["[build-step] Killed", "[build : compile] Terminated", "main: Killed", "wait: Terminated", "Killed"],
)
def test_a_step_or_container_tag_before_a_lone_kill_is_still_a_kill(line: str) -> None:
    event = _only(line + "\n")
    assert (event["kind"], event["severity"], event["message"]) == ("process_killed", "error", line)


@pytest.mark.parametrize("line", ["State: Terminated", "Reason: Killed", "[build-step] Killed the old worker"])
def test_a_field_or_a_sentence_is_no_lone_kill(line: str) -> None:
    assert _only(line + "\n")["kind"] == "log"


@pytest.mark.parametrize(
    ("line", "program"),
    [
        ("collect2: fatal error: ld terminated with signal 9 [Killed]", "collect2"),
        ("x86_64-linux-gnu-gcc: error: unrecognized command line option '-mavx512'", "x86_64-linux-gnu-gcc"),
        ("gcc-11: fatal error: Killed signal terminated program cc1plus", "gcc-11"),
        ("cc1plus: warning: command line option '-Wstrict-prototypes' is valid for C/ObjC but not for C++", "cc1plus"),
        ("python3.10: can't open file 'train.py': [Errno 2] No such file or directory", "python3.10"),
    ],
)
def test_a_program_name_with_a_digit_is_no_pdsh_host(line: str, program: str) -> None:
    event = _only(line + "\n")
    assert event["host"] is None
    assert event["message"].startswith(program + ": ")


@pytest.mark.parametrize("host", ["10.141.250.231", "node01", "node1.cluster.local", "gpu-node-3"])
def test_pdsh_hosts_are_still_peeled(host: str) -> None:
    events = _events(f"{host}: hello\n{host}: world\n")
    assert events["host"].to_list() == [host] * 2
    assert events["message"].to_list() == ["hello", "world"]


def test_timestampers_two_space_pad_is_not_part_of_the_message() -> None:
    events = _events("10:15:32  [Pipeline] sh\n10:15:33  + make -j8\n10:15:40  Killed\n10:15:41    File \"x.py\", line 2\n")
    assert events["ts_raw"].to_list() == ["10:15:32", "10:15:33", "10:15:40", "10:15:41"]
    assert events["message"].to_list() == ["[Pipeline] sh", "+ make -j8", "Killed", '  File "x.py", line 2']
    assert events["kind"].to_list()[2] == "process_killed"


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 23), st.integers(0, 59), st.integers(1, 2), st.from_regex(r"[A-Za-z][A-Za-z0-9 ]{0,20}[A-Za-z0-9]", fullmatch=True))
# A word shaped like GitLab's stream tag ("00O") is the line's after a time of day: that tag follows GitLab's own stamp alone.
@example(0, 0, 1, "a0O")
@example(0, 0, 1, "a0O 0")
def test_a_clock_takes_one_or_two_spaces_of_pad(hour: int, minute: int, pad: int, message: str) -> None:
    event = _only(f"{hour:02d}:{minute:02d}:07{' ' * pad}{message}\n")
    assert (event["ts_raw"], event["message"]) == (f"{hour:02d}:{minute:02d}:07", message)


def test_docker_17_failed_step_at_info_is_an_error() -> None:
    event = _only("INFO[0000] The command [/bin/sh -c make] returned a non-zero code: 2\n")
    assert (event["exit_code"], event["severity"]) == (2, "error")
    killed = _only("INFO[0000] The command [/bin/sh -c exit 137] returned a non-zero code: 137\n")
    assert (killed["kind"], killed["severity"]) == ("process_killed", "error")


def test_an_operators_replica_exit_at_info_stays_info() -> None:
    line = 'time="2020-07-24T09:29:55Z" level=info msg="Pod: default.worker-1 exited with code 130" job=default.test-tfjob uid=\n'
    event = _only(line)
    assert (event["kind"], event["severity"]) == ("process_killed", "info")


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: [enforce fail at context_gpu.cu:343] error == cudaSuccess. 2 vs 0. Error at: /root/caffe2/caffe2/core/context_gpu.cu:343: out of memory",
        "F0312 10:11:12.123456  3624 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
    ],
)
def test_legacy_cuda_checks_of_an_allocation_are_cuda_ooms(line: str) -> None:
    assert _only(line + "\n")["kind"] == "cuda_oom"


def test_another_legacy_cuda_check_failure_is_no_oom() -> None:
    line = "RuntimeError: [enforce fail at context_gpu.cu:343] error == cudaSuccess. 77 vs 0. Error at: /x/context_gpu.cu:343: an illegal memory access was encountered\n"
    assert _only(line)["kind"] != "cuda_oom"
