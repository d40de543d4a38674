"""The zone of a log's zone-less stamps, told by the zoned stamps its own lines carry.

syslog and journalctl's short stamps (``May 12 09:51:40``) are the host's local time, with no
zone: they are read in ``--tz`` (UTC unless told), so a host that logs at UTC+08:00 has every
such line eight hours late. Yet the daemons behind many of those lines stamp their message
themselves, with a zone: containerd's and dockerd's logrus ``time="2025-05-12T09:51:40.24+08:00"``,
a JSON logger's ``"time":"…Z"``. Both stamps were written within a moment of each other, so on
each such line the envelope's time minus the message's is the envelope's zone offset from the
one it was read in, give or take that moment: a whole number of quarter hours (every zone in
use is one) within :data:`SLACK_S`.

A file's votes come from at most :data:`SAMPLE` of its stamped lines, spread over it: a journal
can hold a million containerd lines, and a zone is told by a few dozen. When they agree on one
non-zero offset (:data:`MIN_VOTES` lines at least, and :data:`AGREEMENT` of those that vote),
the file's zone-less envelope times are moved by it; a file whose lines disagree more (two
zones, a daylight-saving change near its middle, stamps that are no "now") is left as read.
The stamps' own quality stays: a short stamp still has no year of its own.
"""

from __future__ import annotations

import polars as pl

SLACK_S = 120
"""How far apart the two stamps of one line may be (journald's receipt lags the daemon's write)."""
MIN_VOTES = 2
SAMPLE = 1000
AGREEMENT = 0.9
_QUARTER_S = 900
_MAX_QUARTERS = 56  # UTC-12:00 … UTC+14:00

# logrus' text and JSON formatters (containerd, dockerd, CRI-O), and the JSON loggers that name the field "time".
_EMBEDDED_STAMP = (
    r'(?:(?:^|\s)time=|"time":\s*)"([0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?'
    r'(?:Z|[+-][0-9][0-9]:?[0-9][0-9]))"'
)
_LITERALS = ['time="', '"time":']


def envelope_zone_corrected(framed: pl.DataFrame, zoneless: pl.Expr, within: str | None) -> pl.DataFrame:
    """``framed`` (a framer's rows: ``ts`` of the envelope, ``message``) with the ``ts`` of the ``zoneless`` rows
    moved into the zone their files' own zoned stamps show; ``within`` names the column that tells the files of
    a batch apart (None: one file)."""
    key = within or "__file"
    keyed = framed if within else framed.with_columns(pl.lit(0).alias(key))
    stamped = keyed.filter(zoneless & pl.col("message").str.contains_any(_LITERALS).fill_null(False)).select(key, "ts", "message")
    if stamped.is_empty():
        return framed
    sample = stamped.filter((pl.int_range(pl.len()) % (pl.len() // SAMPLE + 1) == 0).over(key))
    offsets = _agreed_offsets(sample.select(key, _vote().alias("vote")).drop_nulls("vote"), key)
    if offsets.is_empty():
        return framed
    shifted = keyed.join(offsets, on=key, how="left", maintain_order="left").with_columns(
        ts=pl.when(zoneless & pl.col("quarters").is_not_null())
        .then(pl.col("ts") - pl.duration(seconds=pl.col("quarters") * _QUARTER_S))
        .otherwise(pl.col("ts"))
    )
    return shifted.select(framed.columns)


def _vote() -> pl.Expr:
    """The quarter hours between a line's envelope time and its message's own zoned stamp, where they are that close."""
    text = pl.col("message").str.extract(_EMBEDDED_STAMP, 1)
    iso = text.str.replace(r"Z$", "+00:00").str.replace(r"([+-][0-9][0-9]):?([0-9][0-9])$", "$1:$2").str.replace(" ", "T", literal=True)
    stamped = iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", time_zone="UTC", strict=False, time_unit="us")
    gap = (pl.col("ts") - stamped).dt.total_seconds()
    quarters = (gap / _QUARTER_S).round()
    return pl.when((gap - quarters * _QUARTER_S).abs() <= SLACK_S).then(quarters.cast(pl.Int32))


def _agreed_offsets(votes: pl.DataFrame, key: str) -> pl.DataFrame:
    """Each file's agreed non-zero offset in quarter hours (``quarters``), by ``key``."""
    mode = pl.col("vote").mode().sort().first()
    tally = votes.group_by(key).agg(quarters=mode, share=(pl.col("vote") == mode).mean(), votes=pl.len())
    agreed = (
        (pl.col("votes") >= MIN_VOTES) & (pl.col("share") >= AGREEMENT)
        & (pl.col("quarters") != 0) & (pl.col("quarters").abs() <= _MAX_QUARTERS)
    )
    return tally.filter(agreed).select(key, "quarters")
