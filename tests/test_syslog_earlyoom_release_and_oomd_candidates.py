"""earlyoom's failed ``process_mrelease`` of its victim is a warning; systemd-oomd's candidate list is no kill."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import DATA, FIXED_MTIME


def _parse(text: str, name: str = "journal_earlyoom.log") -> pl.DataFrame:
    return rca.parse_text(text, file=name, reference_time=FIXED_MTIME)


def _fixture(name: str) -> pl.DataFrame:
    return _parse((DATA / "syslog" / name).read_text(), name)


def test_failed_memory_release_of_the_victim_is_a_warning() -> None:
    # earlyoom issue #354: each SIGTERM to java is followed by a failed process_mrelease.
    events = _fixture("journal_earlyoom_padded_limit_no_hostname_01.log")
    releases = events.filter(pl.col("message").str.starts_with("kill_release: "))
    assert releases.select("line", "severity", "kind", "process", "pid").rows() == [
        (4, "warning", "log", "earlyoom", 1295),
        (10, "warning", "log", "earlyoom", 1295),
    ]


def test_successful_memory_release_keeps_its_severity() -> None:
    events = _fixture("journal_earlyoom_oom_score_kill_release_debian13_01.log")
    release = events.filter(pl.col("line") == 4)
    assert release.select("kind", "severity", "process").rows() == [("log", None, "earlyoom")]


@settings(max_examples=15, deadline=None)
@given(
    victim=st.integers(min_value=2, max_value=4_194_304),
    pidfd=st.integers(min_value=3, max_value=999),
    outcome=st.sampled_from(["failed: Invalid argument", "failed: Operation not permitted", "success"]),
    bare=st.booleans(),
)
def test_release_severity_follows_its_outcome(victim: int, pidfd: int, outcome: str, bare: bool) -> None:
    message = f"kill_release: pid={victim}: process_mrelease pidfd={pidfd} {outcome}"
    kill = f'sending SIGTERM to process {victim} uid 1000 "java": oom_score 1170, VmRSS 43912 MiB, cmdline "java"'
    lines = [kill, message] if bare else [f"Nov 12 17:08:27 gpu01 earlyoom[1295]: {line}" for line in (kill, message)]
    events = _parse("\n".join(lines) + "\n")
    assert events.select("kind", "pid").row(0) == ("oom_kill", victim)
    release = events.filter(pl.col("line") == 2)
    assert release.select("kind", "severity").row(0) == ("log", None if outcome == "success" else "warning")


def test_oomd_candidate_list_is_no_kill() -> None:
    # systemd issue #42385: the list oomd prints before acting, here with no kill after it.
    events = _fixture("journal_zh_month_oomd_swap_candidates_arch_01.log")
    assert events.select("kind").unique().to_series().to_list() == ["log"]
    assert events.select("host", "process", "pid").unique().rows() == [("Analyse", "systemd-oomd", 111564)]
    assert events["ts"].dt.strftime("%Y-%m-%d %H:%M:%S").unique().to_list() == ["2026-05-29 23:06:20"]
