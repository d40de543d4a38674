"""systemd-oomd's own lines written bare (`journalctl -u systemd-oomd -o cat`, a line quoted without its envelope)."""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

import rca
from rca import sources
from tests.conftest import FIXED_MTIME, fixture_path

SAMPLE = "journal_oomd_bare_killed_pressure_overflow_6_0_rc1_01.log"


def _events(name: str) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_text(), file=name, reference_time=FIXED_MTIME)


def test_bare_kill_line_is_sniffed_as_syslog() -> None:
    source, _ = sources.sniff(fixture_path(SAMPLE).read_text().splitlines())
    assert source is not None and source.name == "syslog"


def test_bare_kill_line_is_an_oomd_kill_of_its_cgroup() -> None:
    row = _events(SAMPLE).row(0, named=True)
    assert (row["kind"], row["severity"], row["format"], row["ts_quality"]) == ("oom_kill", "error", "syslog_bare", "missing")
    assert row["cgroup"] == "/user.slice/user-1000.slice/user@1000.service/session.slice/org.gnome.Shell@wayland.service"
    assert row["process"] == "org.gnome.Shell@wayland.service"
    assert row["pid"] is None and row["ts"] is None
    attrs = json.loads(row["attrs"])
    # 6.0-rc1's PSI overflow, as printed: the figure is kept, not clamped.
    assert attrs["pressure_pct"] == 27925460729.27 and attrs["limit_pct"] == 50.0
    assert attrs["oom"] == "systemd_oomd" and attrs["pressured_cgroup"] == "/user.slice/user-1000.slice/user@1000.service"


_SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_@.", min_size=1, max_size=12)


@given(
    path=st.lists(_SEGMENT, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts) + ".scope"),
    pressure=st.decimals(min_value=0, max_value=10**6, places=2),
    limit=st.decimals(min_value=0, max_value=100, places=2),
)
def test_any_bare_kill_line_names_its_cgroup(path: str, pressure: object, limit: object) -> None:
    line = f"Killed {path} due to memory pressure for /user.slice being {pressure}% > {limit}% for > 20s with reclaim activity"
    events = rca.parse_text(line + "\n", file="oomd.log", reference_time=FIXED_MTIME)
    assert events["source"].to_list() == ["syslog"]
    assert events.select("kind", "cgroup").row(0) == ("oom_kill", path)


def test_a_sentence_with_due_to_is_not_an_oomd_line() -> None:
    events = rca.parse_text("Build failed due to a missing header\n", file="build.log", reference_time=FIXED_MTIME)
    assert events["kind"].to_list() == ["log"] and events["source"].to_list() != ["syslog"]
