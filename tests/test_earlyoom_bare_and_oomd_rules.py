"""earlyoom's lines without an envelope (its stderr, ``journalctl -u earlyoom -o cat``) and systemd-oomd's OOMRules= lines.

The samples are real (tests/data/real_logs/SOURCES.md); the unit cases quote real lines of the same issues.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.sources import _syslog
from tests.conftest import DATA, FIXED_MTIME

FOLDER = DATA / "syslog"
MIB = 1024 * 1024
BARE_SAMPLES = (
    "journal_earlyoom_bare_stderr_v13_escalate_sigkill_01.log",
    "journal_earlyoom_bare_stderr_killing_process_v12_01.log",
    "journal_earlyoom_bare_stderr_sigterm_self_v16_01.log",
    "journal_earlyoom_bare_stderr_old_capital_low_memory_01.log",
    "journal_earlyoom_bare_kill_failed_not_permitted_01.log",
)


def _parsed(text: str, file: str = "earlyoom.log") -> pl.DataFrame:
    return rca.parse_text(text, file=file, reference_time=FIXED_MTIME)


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).to_dicts()[0]


@pytest.mark.parametrize("name", BARE_SAMPLES)
def test_bare_earlyoom_output_is_syslog_with_earlyoom_as_program(name: str) -> None:
    text = (FOLDER / name).read_text()
    assert sources.sniff(text.splitlines())[0].name == "syslog"
    events = _parsed(text, name)
    # Every line is earlyoom's (or its victim's), none with a time: the output has none.
    assert set(events["source"]) == {"syslog"}
    assert set(events["format"]) == {"syslog_bare"}
    assert set(events["ts_quality"]) == {"missing"}
    assert events["ts"].null_count() == events.height
    assert events.filter(pl.col("kind") == "log")["process"].drop_nulls().is_in(["earlyoom", "bash"]).all()


def test_v13_banner_continuations_and_kill() -> None:
    events = _parsed((FOLDER / BARE_SAMPLES[0]).read_text())
    # "sending SIGTERM when …", its indented second line and "Could not lock memory …" are one record.
    banner = _row(events, 3)
    assert (banner["kind"], banner["n_lines"]) == ("log", 3)
    assert banner["message"].splitlines()[1].strip().startswith("SIGKILL when mem <=")
    # The poster's "..." is no event of its own.
    assert 9 not in events["line"].to_list()
    kill = _row(events, 16)
    assert (kill["kind"], kill["pid"], kill["process"], kill["rss_bytes"], kill["severity"]) == ("oom_kill", 12006, "python3", 2891 * MIB, "error")
    assert _row(events, 17)["severity"] == "warning"  # "escalating to SIGKILL after 2.4 seconds"
    assert events.filter(pl.col("kind") == "oom_kill").height == 1


def test_old_capital_low_memory_and_resent_signals() -> None:
    events = _parsed((FOLDER / BARE_SAMPLES[3]).read_text())
    pressure = events.filter(pl.col("kind") == "memory_pressure")
    assert pressure["line"].to_list() == [4, 7, 10, 13, 16, 19]
    assert set(pressure["severity"]) == {"warning"}
    assert '"signal":"SIGTERM"' in pressure["attrs"][0]
    # Five signals to pid 5874: one kill, four resent.
    kills = events.filter(pl.col("kind") == "oom_kill")
    assert kills.select("line", "pid", "rss_bytes").rows() == [(6, 5874, 3160 * MIB)]
    resent = events.filter(pl.col("attrs").str.contains('"resent":true', literal=True))
    assert resent["line"].to_list() == [9, 12, 15, 18]


@pytest.mark.parametrize(
    "line",
    [
        "earlyoom v1.2-26-g7cdb65c",  # earlyoom #118
        "mem total: 7834 MiB, swap total:    0 MiB",
        "Sending SIGTERM when mem <= 10 % and swap <= 10 %,",  # 1.2's capital
        "mem avail: 4978 MiB (84 %), swap free: 5590 MiB (95 %)",  # before 1.0 (earlyoom #65)
        "Out of memory! avail: 0 MiB < min: 587 MiB",
        "kill_release: pid=1024668: process_mrelease pidfd=4 success",  # 1.8 (earlyoom #344)
        "process 906175 did not exit",
        "kill failed: Timer expired",
    ],
)
def test_earlyoom_wordings_are_its_own_bare_lines(line: str) -> None:
    assert pl.select(_syslog.own_bare_program(pl.lit(line))).item() == "earlyoom"


@pytest.mark.parametrize(
    "line",
    [
        # Enveloped: the envelope names the program, the bare rule must not take the line.
        "Aug 04 23:41:26 qaa earlyoom[1308]: mem avail:  2051 of 20537 MiB ( 9.99%), swap free:    0 of  975 MiB ( 0.01%)",
        # An application talking about memory, not earlyoom.
        "INFO the mem avail: 3 GiB reported by the node",
        "        SIGKILL when mem <=  5 % and swap <=  5 %",  # a further line: it keeps the envelope above
        "Killing process group 1234",
    ],
)
def test_other_lines_are_not_earlyoom_bare_lines(line: str) -> None:
    assert pl.select(_syslog.own_bare_program(pl.lit(line))).item() is None


def test_enveloped_earlyoom_lines_keep_their_envelope() -> None:
    events = _parsed(
        "Aug 04 23:41:26 qaa earlyoom[1308]: low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%\n"
        "Aug 04 23:41:26 qaa earlyoom[1308]: process 1024668 exited after 0.100 seconds\n"
    )
    assert events.select("kind", "host", "pid", "format").rows() == [("memory_pressure", "qaa", 1308, "syslog"), ("log", "qaa", 1308, "syslog")]


_NAMES = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="\"'\\"), min_size=1, max_size=15)


@settings(max_examples=20, deadline=None)
@given(pid=st.integers(1, 4_194_304), name=_NAMES, rss=st.integers(0, 2_000_000), badness=st.integers(-1000, 2000), uid=st.none() | st.integers(0, 70000))
def test_bare_kill_line_reads_as_the_enveloped_one(pid: int, name: str, rss: int, badness: int, uid: int | None) -> None:
    """earlyoom 1.3–1.7's kill line gives the same victim whether journald framed it or not."""
    who = f"uid {uid} " if uid is not None else ""
    message = f'sending SIGTERM to process {pid} {who}"{name}": badness {badness}, VmRSS {rss} MiB'
    bare = _parsed(f"mem avail:    21 of   950 MiB ( 2.27%), swap free:   81 of 1023 MiB ( 7.95%)\n{message}\n")
    framed = _parsed(f"Jun 12 06:39:16 host earlyoom[1233]: {message}\n")
    columns = ["kind", "pid", "process", "rss_bytes", "severity", "attrs"]
    assert {c: _row(bare, 2)[c] for c in columns} == {c: _row(framed, 1)[c] for c in columns}
    assert (_row(bare, 2)["kind"], _row(bare, 2)["pid"], _row(bare, 2)["rss_bytes"]) == ("oom_kill", pid, rss * MIB)


def test_oomd_261_rule_line_is_pressure_on_its_cgroup() -> None:
    events = _parsed((FOLDER / "journal_oomd_261_oomrules_conditions_met_01.log").read_text(), "journal_oomd.log")
    rule = _row(events, 1)
    assert (rule["kind"], rule["severity"], rule["host"], rule["pid"]) == ("memory_pressure", "warning", "Pallas", None)
    assert rule["cgroup"] == "/user.slice/user-1000.slice/user@1000.service/app.slice"
    assert '"rule":"low_memory"' in rule["attrs"] and '"action":"kill-by-swap"' in rule["attrs"]
    assert _row(events, 2)["kind"] == "log"
