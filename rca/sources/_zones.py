"""The zone of a log's zone-less stamps, told by the zoned stamps its own lines carry.

syslog and journalctl's short stamps (``May 12 09:51:40``) are the host's local time, with no
zone: they are read in ``--tz`` (UTC unless told), so a host that logs at UTC+08:00 has every
such line eight hours late. Yet the container runtimes behind many of those lines stamp their
message themselves, with a zone: logrus' text format, which containerd, dockerd and CRI-O write,
opens every message with ``time="2025-05-12T09:51:40.24+08:00"``, the moment of writing, and podman's
events with Go's ``2025-12-21 18:01:34.529303815 -0500 EST m=+11.707569919``. Both
stamps were written within a moment of each other, so on each such line the envelope's time
minus the message's is the envelope's zone offset from the one it was read in, give or take
that moment: a whole number of quarter hours (every zone in use is one) within :data:`SLACK_S`.
Only a stamp that opens the message votes: one further in (``next run scheduled
time="…"``) or an application's JSON ``"time"`` (often local time with a ``Z``) need not be now.

The votes of each host of a file come from at most :data:`SAMPLE` of its stamped lines, spread
over it: a journal can hold a million containerd lines, and a zone is told by a few dozen. When
they agree on one non-zero offset (:data:`MIN_VOTES` lines at least, and :data:`AGREEMENT` of
those that vote), that host's zone-less envelope times in the file are moved by it; a host whose
lines disagree more (a daylight-saving change near the middle of the file) is left as read.

A short stamp has no year of its own; the line's opening stamp has one. Where it is the year the
envelope's time was given, the program wrote that year, and the line's time is exact
(:func:`with_confirmed_years`) — if the host's stamps agree with its envelope times: a host of one
such line, too few votes to move it, whose stamp is hours from its envelope, keeps an inferred year.

An envelope may give no time at all (seconds since a boot of unknown time, or a program's tag alone as a user cut the
line): there the opening stamp is the line's time (:func:`with_opening_stamp_times`).

What one file shows is not carried to the host's other files: its ``kern.log``, ``dmesg -T`` or
a bare ``kubelet.log`` stay in ``--tz``.
"""

from __future__ import annotations

import polars as pl

from rca import timeutil

SLACK_S = 120
"""How far apart the two stamps of one line may be (journald's receipt lags the daemon's write)."""
MIN_VOTES = 2
SAMPLE = 1000
AGREEMENT = 0.9
_QUARTER_S = 900
_MAX_QUARTERS = 56  # UTC-12:00 … UTC+14:00

# The message opens with the moment it was written: in logrus' text format (containerd, dockerd, CRI-O), and in
# podman's events, which print Go's time.String(): "2025-12-21 18:01:34.529303815 -0500 EST m=+11.707569919 container died …".
_OPENING_STAMP = (
    r'^(?:time="(?<logrus>[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?'
    r'(?:Z|[+-][0-9][0-9]:?[0-9][0-9]))"'
    r"|(?<go>[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?) (?<go_offset>[+-][0-9]{4}) [A-Z0-9+-]+ m=[+-])"
)


def _opens_with_stamp(message: pl.Expr) -> pl.Expr:
    """The cheap test of a message that may open with its stamp (the pattern then decides)."""
    return message.str.starts_with('time="') | message.str.contains(" m=+", literal=True)


def envelope_zone_corrected(framed: pl.DataFrame, zoneless: pl.Expr, within: str | None) -> pl.DataFrame:
    """``framed`` (a framer's rows: ``ts`` of the envelope, ``host``, ``message``) with the ``ts`` of the ``zoneless``
    rows moved into the zone that each host's own zoned stamps in the file show; ``within`` names the column
    that tells the files of a batch apart (None: one file)."""
    keys = [within, "host"] if within else ["host"]
    stamped = framed.select(*keys, "ts", "message", voting=zoneless & _opens_with_stamp(pl.col("message")).fill_null(False)).filter("voting")
    if stamped.is_empty():
        return framed
    stride = (pl.len() + SAMPLE - 1) // SAMPLE
    sample = stamped.filter((pl.int_range(pl.len()) % stride == 0).over(keys))
    offsets = _agreed_offsets(sample.select(*keys, _vote().alias("vote")).drop_nulls("vote"), keys)
    if offsets.is_empty():
        return framed
    shifted = framed.join(offsets, on=keys, how="left", nulls_equal=True, maintain_order="left").with_columns(
        ts=pl.when(zoneless & pl.col("quarters").is_not_null())
        .then(pl.col("ts") - pl.duration(seconds=pl.col("quarters") * _QUARTER_S))
        .otherwise(pl.col("ts"))
    )
    return shifted.drop("quarters")


def with_confirmed_years(framed: pl.DataFrame, yearless: pl.Expr, within: str | None) -> pl.DataFrame:
    """``framed`` with the ``ts_quality`` of its ``yearless`` rows "exact" where the message opens with a stamp of the
    year the envelope's time was given: the program wrote that year (a stamp of another year, or of a zone on the other
    side of New Year, leaves the year inferred). Only for a host whose stamps, on a sample as for the votes, agree with
    its envelope times (once :func:`envelope_zone_corrected` moved them): a host of too few lines to move, its stamps
    hours from its envelope times, has no exact time."""
    message = pl.col("message")
    stamp_year = (
        pl.when(message.str.starts_with('time="')).then(message.str.slice(6, 4))
        .when(message.str.contains(" m=+", literal=True)).then(message.str.slice(0, 4))
    )
    same_year = framed.select(yearless & (stamp_year == pl.col("ts").dt.year().cast(pl.String)).fill_null(False)).to_series()
    keys = [within, "host"] if within else ["host"]
    stamped = framed.select(*keys, "ts", "message").filter(same_year)
    if stamped.is_empty():
        return framed
    stride = (pl.len() + SAMPLE - 1) // SAMPLE
    sample = stamped.filter((pl.int_range(pl.len()) % stride == 0).over(keys))
    votes = sample.select(*keys, agrees=_vote() == 0)
    hosts = votes.group_by(keys).agg(in_zone=(pl.col("agrees").mean() >= AGREEMENT).fill_null(False))
    if hosts["in_zone"].all():
        return framed.with_columns(ts_quality=pl.when(pl.lit(same_year)).then(pl.lit("exact")).otherwise(pl.col("ts_quality")))
    joined = framed.join(hosts, on=keys, how="left", nulls_equal=True, maintain_order="left")
    confirmed = pl.lit(same_year) & pl.col("in_zone").fill_null(False)
    return joined.with_columns(ts_quality=pl.when(confirmed).then(pl.lit("exact")).otherwise(pl.col("ts_quality"))).drop("in_zone")


def with_opening_stamp_times(framed: pl.DataFrame, untimed: pl.Expr) -> pl.DataFrame:
    """``framed`` with the ``untimed`` rows (an envelope that gives no time: a program's tag alone, "dockerd[1471]: time=…" as a
    user cut it; seconds since a boot of unknown time) timed by the zoned stamp their message opens with, the moment the program
    wrote it: their ``ts`` (exact) and ``ts_raw``."""
    message = pl.col("message")
    stamped = untimed & _opens_with_stamp(message).fill_null(False)
    if not framed.select(stamped.any()).item():
        return framed
    stamp = _opening_stamp(pl.when(stamped).then(message))
    framed = framed.with_columns(opening_stamp=stamp)
    moment = timeutil.iso_to_utc(pl.col("opening_stamp"), "UTC")
    timed = moment.is_not_null()
    return framed.with_columns(
        ts=pl.when(timed).then(moment).otherwise(pl.col("ts")),
        ts_raw=pl.when(timed).then(pl.col("opening_stamp")).otherwise(pl.col("ts_raw")),
        ts_quality=pl.when(timed).then(pl.lit("exact")).otherwise(pl.col("ts_quality")),
    ).drop("opening_stamp")


def _opening_stamp(message: pl.Expr) -> pl.Expr:
    """The zoned stamp ``message`` opens with (:data:`_OPENING_STAMP`), as ISO 8601 reads it, or null."""
    opening = message.str.extract_groups(_OPENING_STAMP)
    return pl.coalesce(opening.struct.field("logrus"), pl.concat_str(opening.struct.field("go"), opening.struct.field("go_offset")))


def _opening_moment(message: pl.Expr) -> pl.Expr:
    """The UTC moment of the stamp ``message`` opens with (:data:`_OPENING_STAMP`), or null."""
    return timeutil.iso_to_utc(_opening_stamp(message), "UTC")


def _vote() -> pl.Expr:
    """The quarter hours between a line's envelope time and its message's opening zoned stamp, where they are that close."""
    gap = (pl.col("ts") - _opening_moment(pl.col("message"))).dt.total_seconds()
    quarters = (gap / _QUARTER_S).round()
    return pl.when((gap - quarters * _QUARTER_S).abs() <= SLACK_S).then(quarters.cast(pl.Int32))


def _agreed_offsets(votes: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The agreed non-zero offset in quarter hours (``quarters``) of each host of each file, by ``keys``.

    A vote past any zone still counts against the agreement: a line that disagrees is a reason for doubt.
    """
    mode = pl.col("vote").mode().sort().first()
    tally = votes.group_by(keys).agg(quarters=mode, share=(pl.col("vote") == mode).mean(), votes=pl.len())
    agreed = (
        (pl.col("votes") >= MIN_VOTES) & (pl.col("share") >= AGREEMENT)
        & (pl.col("quarters") != 0) & (pl.col("quarters").abs() <= _MAX_QUARTERS)
    )
    return tally.filter(agreed).select(*keys, "quarters")
