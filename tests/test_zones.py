"""A syslog / journal file's zone-less stamps take the zone its lines' own zoned stamps show (rca.sources._zones)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import FIXED_MTIME, fixture_path

CONTAINER = "7add877f859655b0c3a6f2c7d2a1e3f4b5c6d7e8f90112233445566778899aab"


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="journal.log", reference_time=FIXED_MTIME)


def _containerd(local: datetime, offset: str, pid: int = 25596) -> str:
    """A journal line of containerd's, its envelope at ``local`` and its own stamp that moment at ``offset``."""
    return (
        f"{local:%b %d %H:%M:%S} gpu-node-3 containerd[{pid}]: time=\"{local:%Y-%m-%dT%H:%M:%S}.244894676{offset}\" level=info "
        f'msg="TaskExit event in podsandbox handler container_id:\\"{CONTAINER}\\" id:\\"{CONTAINER}\\" pid:131544"'
    )


def _kubelet(local: datetime) -> str:
    return (
        f"{local:%b %d %H:%M:%S} gpu-node-3 kubelet[2915]: I{local:%m%d %H:%M:%S}.668133    2915 kubelet.go:2458] "
        '"SyncLoop DELETE" source="api" pods=["ml/train-0"]'
    )


def test_a_real_journal_at_utc_plus_8_is_read_at_its_zone():
    # containerd issue #11836: the journal's "May 12 09:51:40" is China time, as containerd's own "+08:00" says.
    events = rca.parse_text(fixture_path("journal_containerd2_podsandbox_taskexit_01.log").read_text(), file="j.log", reference_time=FIXED_MTIME)
    assert events["ts"][0] == datetime(2025, 5, 12, 1, 51, 40, tzinfo=UTC)
    assert events["ts_raw"][0] == "May 12 09:51:40"
    assert events["ts_quality"][0] == "exact"  # containerd's own stamp names the same moment, with its year


def test_every_zone_less_line_of_the_file_moves_klog_stamps_too():
    local = datetime(2026, 11, 23, 10, 0, 0)
    lines = [_containerd(local, "+05:30"), _kubelet(local + timedelta(seconds=1)), _containerd(local + timedelta(seconds=2), "+05:30")]
    events = _parse("\n".join(lines))
    utc = datetime(2026, 11, 23, 4, 30, 0, tzinfo=UTC)
    assert events["ts"].to_list() == [utc, utc + timedelta(seconds=1, microseconds=668133), utc + timedelta(seconds=2)]


def test_stamps_in_utc_leave_a_utc_journal_as_read():
    local = datetime(2026, 11, 23, 10, 0, 0)
    events = _parse("\n".join([_containerd(local, "Z"), _containerd(local + timedelta(seconds=3), "Z")]))
    assert events["ts"].to_list() == [datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC), datetime(2026, 11, 23, 10, 0, 3, tzinfo=UTC)]


def test_one_stamp_or_stamps_that_disagree_move_nothing():
    local = datetime(2026, 11, 23, 10, 0, 0)
    alone = _parse(_containerd(local, "+08:00"))
    split = _parse("\n".join([_containerd(local, "+08:00"), _containerd(local, "+02:00")]))
    assert alone["ts"].to_list() == [datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC)]
    assert split["ts"].to_list() == [datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC)] * 2


def test_a_message_stamp_far_from_a_whole_zone_is_no_vote():
    # A stalled journald received these lines seven minutes after containerd wrote them: no zone is that.
    local = datetime(2026, 11, 23, 10, 7, 0)
    late = [_containerd(local, "+08:00").replace("T10:07:00", "T10:00:00"), _containerd(local, "+08:00").replace("T10:07:00", "T10:00:01")]
    assert _parse("\n".join(late))["ts"].to_list() == [datetime(2026, 11, 23, 10, 7, 0, tzinfo=UTC)] * 2


def test_only_a_stamp_that_opens_the_message_votes():
    # A time further in need not be now (a schedule), nor an application's JSON "time" (often local time with a Z).
    scheduled = [f"Nov 23 10:00:0{n} node-c backup[12]: next run scheduled time=\"2026-11-23T11:00:00Z\"" for n in (0, 5)]
    local_with_z = [f'Nov 23 02:00:0{n} node-e app[12]: {{"time":"2026-11-23T10:00:0{n}Z","level":"info","msg":"step {n}"}}' for n in (0, 1)]
    assert _parse("\n".join(scheduled))["ts"].dt.hour().to_list() == [10, 10]
    assert _parse("\n".join(local_with_z))["ts"].dt.hour().to_list() == [2, 2]


def test_each_host_of_a_shared_syslog_keeps_its_own_zone():
    local = datetime(2026, 11, 23, 10, 0, 0)
    lines = [
        _containerd(local, "+08:00"),
        "Nov 23 02:00:01 node-b sshd[77]: Accepted publickey for root",
        _containerd(local + timedelta(seconds=2), "+08:00"),
    ]
    events = _parse("\n".join(lines))
    assert events.select("host", "ts").rows() == [
        ("gpu-node-3", datetime(2026, 11, 23, 2, 0, 0, tzinfo=UTC)),
        ("node-b", datetime(2026, 11, 23, 2, 0, 1, tzinfo=UTC)),
        ("gpu-node-3", datetime(2026, 11, 23, 2, 0, 2, tzinfo=UTC)),
    ]


def test_a_banner_zone_is_not_applied_twice():
    local = datetime(2026, 11, 23, 10, 0, 0)
    banner = "-- Logs begin at Mon 2026-11-02 08:00:00 +08, end at Mon 2026-11-23 11:00:00 +08. --"
    events = _parse("\n".join([banner, _containerd(local, "+08:00"), _containerd(local + timedelta(seconds=1), "+08:00")])).filter(pl.col("line") > 1)
    assert events["ts"].to_list() == [datetime(2026, 11, 23, 2, 0, 0, tzinfo=UTC), datetime(2026, 11, 23, 2, 0, 1, tzinfo=UTC)]


def test_small_files_read_together_each_keep_their_own_zone(tmp_path):
    local = datetime(2026, 11, 23, 10, 0, 0)
    for host, offset in (("node-a", "+08:00"), ("node-b", "Z")):
        (tmp_path / "logs" / host).mkdir(parents=True)
        lines = [_containerd(local, offset), _kubelet(local + timedelta(seconds=1)), _containerd(local + timedelta(seconds=2), offset)]
        (tmp_path / "logs" / host / "journal.log").write_text("\n".join(lines) + "\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    events = rca.open_store(tmp_path / "store").events().sort("host", "line")
    first = {host: group["ts"][0] for (host,), group in events.group_by("host")}
    assert first == {"node-a": datetime(2026, 11, 23, 2, 0, 0, tzinfo=UTC), "node-b": datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC)}


@settings(max_examples=25, deadline=None)
@given(quarters=st.integers(min_value=-48, max_value=56).filter(lambda q: q != 0), lag_ms=st.integers(min_value=0, max_value=90_000))
def test_any_whole_zone_is_found_whatever_the_receipt_lag(quarters: int, lag_ms: int):
    offset = timedelta(minutes=15 * quarters)
    sign, size = ("+" if quarters > 0 else "-"), abs(offset)
    zone = f"{sign}{size.seconds // 3600:02d}:{size.seconds % 3600 // 60:02d}"
    written = datetime(2026, 6, 1, 12, 0, 0)  # the daemon's local time; journald received it lag_ms later
    received = written + timedelta(milliseconds=lag_ms)
    line = _containerd(received, zone).replace(f"{received:%Y-%m-%dT%H:%M:%S}", f"{written:%Y-%m-%dT%H:%M:%S}")
    events = _parse(f"{line}\n{line}")
    envelope_local = received.replace(microsecond=0)
    assert events["ts"].to_list() == [(envelope_local - offset).replace(tzinfo=UTC)] * 2


def test_podman_events_go_stamps_give_the_journal_its_zone() -> None:
    # Podman's events print Go's time.String() (arsfeld/nixos #297: a host at EST, its journal in local time).
    lines = [
        "Feb 08 19:55:42 storage podman[3060462]: 2026-02-08 19:55:42.037424859 -0500 EST m=+12.424044473 volume remove 4755853d97",
        "Feb 08 19:55:42 storage podman[3060462]: 2026-02-08 19:55:42.03067556 -0500 EST m=+12.417295178 container remove 278c60eb3c50 (image=x, name=termix)",
        "Feb 08 19:55:43 storage systemd[1]: podman-termix.service: Main process exited, code=exited, status=137/n/a",
    ]
    events = _parse("\n".join(lines) + "\n")
    assert events["ts"].to_list() == [datetime(2026, 2, 9, 0, 55, 42, tzinfo=UTC)] * 2 + [datetime(2026, 2, 9, 0, 55, 43, tzinfo=UTC)]
    # one such line alone is no agreement: it stays in --tz
    (alone,) = _parse(lines[0] + "\n")["ts"].to_list()
    assert alone == datetime(2026, 2, 8, 19, 55, 42, tzinfo=UTC)


def test_french_months_as_journalctl_prints_them() -> None:
    events = _parse("avril 05 10:00:01 gpu-node-3 systemd[1]: Started x.\nsept. 05 10:00:01 gpu-node-3 systemd[1]: Started y.\n")
    assert [(ts.month, ts.day) for ts in events["ts"].to_list()] == [(4, 5), (9, 5)]


def test_an_opening_stamp_confirms_the_year_only_of_its_own_year():
    local = datetime(2026, 11, 23, 10, 0, 0)
    # The second line's message says it was written a year before journald got it: its envelope's year stays inferred.
    lines = [_containerd(local, "Z"), _containerd(local + timedelta(seconds=3), "Z").replace("2026-11-23T10:00:03", "2025-11-23T10:00:03")]
    events = _parse("\n".join(lines))
    assert events["ts_quality"].to_list() == ["exact", "year_inferred"]
