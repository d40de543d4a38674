"""rsyslog's escaped control characters ($EscapeControlCharactersOnReceive): a program's terminal colours arrive as
"#033[0;33m … #033[0;m"; a syslog line's message reads as the text without them, and its events are those of the clean text."""

import datetime as dt
import functools
import re

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import DATA

REFERENCE_TIME = dt.datetime(2024, 3, 10)
# A short head ("Mar  3 10:15:02 host program[pid]: "), its message after it.
_HEAD = re.compile(r"^([A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} \S+ [^:\s]+: )(.*)$")
# Fixtures whose lines' rules give events of a kind, an exit code or a pid: a containerd TaskExit, systemd's killed unit
# beside a kernel OOM kill, a unit's exit 143.
_SAMPLES = {
    name: (DATA / "syslog" / name).read_text()
    for name in (
        "journal_containerd_taskexit_137_01.log",
        "journal_systemd_killed_kernel_oom_01.log",
        "journal_unit_exit_143_na_memory_peak_01.log",
    )
}


@functools.cache  # a sample's clean text is parsed once (frames are never changed in place)
def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="syslog", reference_time=REFERENCE_TIME)


def _message(line: str) -> str:
    return _parse(line + "\n")["message"].item()


def _coloured(text: str, opening: str, closing: str) -> str:
    """``text`` with each short-headed line's message between ``opening`` and ``closing``."""
    return "".join(_HEAD.sub(lambda head: f"{head[1]}{opening}{head[2]}{closing}", line) + "\n" for line in text.splitlines())


def _facts(text: str) -> list[tuple]:
    return sorted(_parse(text).select("kind", "exit_code", "pid", "process").rows(), key=repr)


def test_gitlab_runner_colours_are_dropped_from_the_message() -> None:
    head = "Mar  3 10:15:02 ci-runner-3 gitlab-runner[812]: "
    coloured = _message(f"{head}#033[0;33mWARNING: Job failed: exit code 137 #033[0;m job=4711 project=42 runner=abc")
    assert coloured == _message(f"{head}WARNING: Job failed: exit code 137  job=4711 project=42 runner=abc")
    assert coloured == "WARNING: Job failed: exit code 137  job=4711 project=42 runner=abc"


def test_a_gitlab_runner_job_killed_with_exit_137_in_syslog_is_a_killed_process() -> None:
    # gitlab-runner's service logs its jobs' ends to syslog: the job's exit code, not the runner's, and a CI exit 137 is
    # the OOM-class failure the pipeline source reads in a job's own log.
    text = (
        "Mar  3 10:15:01 ci-runner-3 gitlab-runner[1234]: Checking for jobs... received    #033[0;m  job#033[0;m=4711 runner#033[0;m=abc\n"
        "Mar  3 10:15:02 ci-runner-3 gitlab-runner[1234]: #033[31;1mERROR: Job failed: exit code 137#033[0;m  duration_s#033[0;m=61.2 job#033[0;m=4711\n"
        "Mar  3 10:16:02 ci-runner-3 gitlab-runner[1234]: #033[0;33mWARNING: Job failed: exit code 1 #033[0;m job#033[0;m=4712\n"
    )
    events = _parse(text).select("line", "source", "kind", "exit_code", "process", "pid").rows()
    # (the job's process is not named: the runner, pid 1234, logs on)
    assert events[1] == (2, "pipeline", "process_killed", 137, None, None)
    assert [(source, kind) for _, source, kind, *_ in (events[0], events[2])] == [("syslog", "log"), ("syslog", "log")]
    assert events[2][3] == 1


def test_erase_sequences_and_bold_colours_are_dropped() -> None:
    line = "Mar  3 10:15:02 ci-runner-3 gitlab-runner[1234]: #033[31;1mERROR: Job failed: exit code 137#033[0;m#033[K  duration_s=12.3"
    assert _message(line) == "ERROR: Job failed: exit code 137  duration_s=12.3"


def test_tab_is_a_tab_newline_a_newline_other_controls_dropped() -> None:
    line = "Mar  3 10:15:02 web-1 app[9]: POST /reporting/update HTTP/1.1#015#012Host:#01110.0.0.1#007"
    assert _message(line) == "POST /reporting/update HTTP/1.1\nHost:\t10.0.0.1"


def test_a_line_without_escapes_keeps_its_hash_signs() -> None:
    assert _message("Mar  3 10:15:02 ci-runner-3 gitlab-runner[812]: Job #4711 retried (#1 of 2)") == "Job #4711 retried (#1 of 2)"


def test_numbers_and_colours_written_with_a_hash_and_a_zero_are_kept() -> None:
    text = "Processing batch #0017 of #0100 color=#000000 bg=#003366"
    assert _message(f"Mar  3 10:15:02 web-1 app[9]: {text}") == text


def test_the_samples_coloured_lines_are_read_as_the_clean_ones() -> None:
    text = _SAMPLES["journal_systemd_killed_kernel_oom_01.log"]
    coloured = _parse(_coloured(text, "#033[0;33m", "#033[0;m"))
    assert coloured["message"].to_list() == _parse(text)["message"].to_list()
    assert ("process_killed", 137, None, "networkd-dispatcher.service") in coloured.select("kind", "exit_code", "pid", "process").rows()


_SGR_PARAMETERS = st.lists(st.integers(0, 107).map(str), max_size=3).map(";".join)
_TERMINAL_ESCAPE = st.builds(lambda parameters, final: f"#033[{parameters}{final}", _SGR_PARAMETERS, st.sampled_from("mK"))


@settings(max_examples=6, deadline=None)
@given(sample=st.sampled_from(sorted(_SAMPLES)), opening=_TERMINAL_ESCAPE, closing=st.one_of(st.just(""), _TERMINAL_ESCAPE))
def test_any_colour_around_a_message_leaves_its_events_facts(sample: str, opening: str, closing: str) -> None:
    text = _SAMPLES[sample]
    assert _facts(_coloured(text, opening, closing)) == _facts(text)


def test_logrus_terminal_levels_name_the_severity_once_their_colours_are_dropped() -> None:
    events = _parse((DATA / "syslog" / "journal_rsyslog_logrus_tty_colour_escapes_ssh2docker_01.log").read_text())
    assert events.select("line", "severity").rows() == [(1, "warning"), (2, "info"), (3, "info")]
    assert _parse("Jun  2 09:49:00 h app[1]: ERRO[0012] failed to start container\n")["severity"].to_list() == ["error"]
