"""CI jobs that died: GitLab's timestamped job log, GCC's report of a killed compiler pass, Docker's legacy builder,
and the runner-lost events of Jenkins and Azure Pipelines, in the pipeline source."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

import rca
from tests.test_source_pipeline import _parse, _text, attrs_of, events_of

GITLAB = "ci_gitlab_ff_timestamps_stream_prefix_job_failed_exit_status_1_01.log"


def test_gitlab_timestamped_job_log_is_the_pipeline_source_with_exact_times() -> None:
    # syslog read "00O" as a host before the marker: the stamp and stream tag are GitLab's, not an envelope
    events = rca.parse_text(_text(GITLAB), file=GITLAB)
    assert set(events["source"].to_list()) == {"pipeline"}
    assert events["ts_quality"].unique().to_list() == ["exact"]
    first = events.row(0, named=True)
    assert (first["line"], first["message"], first["ts"]) == (
        1, "Running with gitlab-runner 18.11.1 (5265d41d)", datetime(2026, 5, 8, 9, 28, 43, 725057, tzinfo=UTC),
    )


def test_gitlab_stream_tag_with_a_plus_is_peeled_and_marker_lines_are_blank() -> None:
    events = events_of(GITLAB)
    by_line = dict(zip(events["line"].to_list(), events["message"].to_list(), strict=True))
    assert by_line[4] == 'Preparing the "shell" executor'
    assert by_line[36] == 'Executing "step_script" stage of the job script'
    # "00O section_start:…" and "00O+" hold nothing but the runner's markers
    assert 3 not in by_line and 62 not in by_line


def test_gitlab_job_failed_exit_status_1_is_an_error_not_a_kill() -> None:
    events = events_of(GITLAB)
    assert events.filter(pl.col("kind") != "log").height == 0
    failed = events.filter(pl.col("exit_code").is_not_null())
    assert failed.select("line", "kind", "severity", "exit_code").rows() == [(63, "log", "error", 1)]
    # stderr ("01E") is no level of its own: the line's words give it
    assert events.filter(pl.col("line").is_in([31, 56, 57])).select("line", "severity").rows() == [
        (31, None), (56, "warning"), (57, "error"),
    ]


def test_gcc_killed_compiler_pass_is_a_kill_of_the_pass_and_make_keeps_its_codes() -> None:
    events = events_of("ci_github_actions_gcc_killed_signal_cc1plus_make_error_01.log")
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "severity", "process").rows() == [(1, "error", "cc1plus")]
    assert attrs_of(killed) == [{"signal": "SIGKILL"}]
    assert events.filter(pl.col("exit_code").is_not_null()).select("line", "kind", "exit_code").rows() == [
        (3, "log", 1), (4, "log", 2), (5, "log", 1), (6, "log", 2),
    ]


def test_gcc_kill_inside_a_buildkit_step_under_crosstool_ng_levels() -> None:
    events = events_of("docker_buildkit_plain_ctng_gcc_killed_signal_cc1plus_01.log")
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "severity", "process").rows() == [(1, "error", "cc1plus")]
    assert events.filter(pl.col("line") == 3).select("kind", "exit_code").rows() == [("log", 1)]


def test_docker_legacy_builder_non_zero_code() -> None:
    events = events_of("docker_build_legacy_killed_returned_non_zero_code_137_01.log")
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "exit_code").rows() == [(9, None), (10, 137)]
    assert attrs_of(killed) == [{"signal": "SIGKILL"}, {"signal": "SIGKILL"}]


def test_docker_legacy_builder_code_that_is_no_signal_stays_an_error() -> None:
    row = _parse("The command '/bin/sh -c apt-get update' returned a non-zero code: 100\n")[0].row(0, named=True)
    assert (row["kind"], row["severity"], row["exit_code"]) == ("log", "error", 100)


def test_jenkins_cannot_contact_agent_and_azure_agent_never_connected() -> None:
    jenkins = events_of("ci_jenkins_cannot_contact_agent_interrupted_01.log").filter(pl.col("line") == 5)
    assert jenkins.select("kind", "severity").rows() == [("log", "error")]
    assert attrs_of(jenkins) == [{"ci_event": "runner_lost"}]
    azure = events_of("ci_azure_pipelines_agent_did_not_connect_alloted_time_01.log")
    assert azure.select("kind", "severity").rows() == [("log", "error")]
    assert attrs_of(azure) == [{"ci_event": "runner_unavailable"}]


def test_an_application_that_cannot_contact_a_service_is_no_lost_runner() -> None:
    events = rca.parse_text("2024-05-01 10:00:00,120 INFO Cannot contact the metadata server, retrying in 5s\n", file="train.log")
    assert events.select("kind", "severity", "attrs").rows() == [("log", "info", None)]


_SIGNALS = {"Killed": "SIGKILL", "Terminated": "SIGTERM", "Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS"}
_DRIVERS = ("gcc", "g++", "c++", "cc", "g++-4.8", "x86_64-linux-gnu-g++")
_PROGRAMS = ("cc1", "cc1plus", "cc1obj", "lto1", "f951", "as")


@given(st.sampled_from(_DRIVERS), st.sampled_from(sorted(_SIGNALS)), st.sampled_from(_PROGRAMS), st.booleans())
def test_gcc_driver_reports_name_the_program_and_its_signal(driver: str, word: str, program: str, old: bool) -> None:
    line = (
        f"{driver}: internal compiler error: {word} (program {program})" if old
        else f"{driver}: fatal error: {word} signal terminated program {program}"
    )
    events = _parse(f"[ 45%] Building CXX object src/a.cpp.o\n{line}\ncompilation terminated.\n")[0]
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("line", "process").rows() == [(2, program)]
    assert attrs_of(killed) == [{"signal": _SIGNALS[word]}]


@given(
    st.integers(0, 255), st.sampled_from("OE"), st.booleans(),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40),
)
def test_gitlab_stream_tag_is_peeled_whatever_the_stream(stream: int, kind: str, plus: bool, body: str) -> None:
    sep = "+" if plus else " "
    text = f"2026-05-08T09:28:43.725057Z 00O Running with gitlab-runner 18.11.1 (5265d41d)\n2026-05-08T09:28:44.5Z {stream:02x}{kind}{sep}{body}\n"
    events = _parse(text)[0]
    second = events.filter(pl.col("line") == 2).row(0, named=True)
    assert second["ts"] == datetime(2026, 5, 8, 9, 28, 44, 500000, tzinfo=UTC)
    assert second["ts_quality"] == "exact"
    assert not second["message"].startswith(f"{stream:02x}{kind}")
