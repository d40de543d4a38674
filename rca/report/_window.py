"""The time window a digest covers: an ISO week, a [since, until) range, or the last 7 days of data."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import polars as pl

from rca.errors import InputError
from rca.store import Store

WEEK = timedelta(days=7)
_ISO_WEEK = re.compile(r"^([0-9]{4})-W([0-9]{2})$")


@dataclass(frozen=True)
class Window:
    """``[since, until)`` in UTC, and the label the digest's file names carry (``2026-W48`` for an ISO week)."""

    since: datetime
    until: datetime
    label: str

    def previous(self) -> Window:
        """The window of the same length just before this one."""
        return window_between(self.since - (self.until - self.since), self.since)

    def holds(self, column: str) -> pl.Expr:
        """Whether ``column`` (a UTC datetime) falls inside the window."""
        utc = pl.Datetime("us", "UTC")
        return pl.col(column).is_between(pl.lit(self.since, utc), pl.lit(self.until, utc), closed="left")

    def days(self) -> list[date]:
        """Every calendar day (UTC) the window touches, in order."""
        last = (self.until - timedelta(microseconds=1)).date()
        return [self.since.date() + timedelta(days=n) for n in range((last - self.since.date()).days + 1)]

    def describe(self) -> str:
        """``2026-11-23 00:00 – 2026-11-30 00:00 UTC``."""
        return f"{self.since:%Y-%m-%d %H:%M} – {self.until:%Y-%m-%d %H:%M} UTC"


def iso_week(week: str) -> Window:
    """The window of an ISO week written ``2026-W48`` (Monday 00:00 UTC to the next Monday)."""
    match = _ISO_WEEK.match(week.strip())
    if not match:
        raise ValueError(f"not an ISO week: {week!r} (write it like 2026-W48)")
    try:
        monday = date.fromisocalendar(int(match.group(1)), int(match.group(2)), 1)
    except ValueError:
        raise ValueError(f"{week!r}: year {match.group(1)} has no week {int(match.group(2))}") from None
    since = datetime.combine(monday, time(), tzinfo=UTC)
    return Window(since, since + WEEK, week.strip())


def window_between(since: datetime | date, until: datetime | date) -> Window:
    """The window ``[since, until)``, labelled as the ISO week when it is exactly one, else ``SINCE_UNTIL``."""
    start, end = _utc(since), _utc(until)
    if end <= start:
        raise ValueError(f"the window ends ({end:%Y-%m-%d %H:%M}) before it starts ({start:%Y-%m-%d %H:%M})")
    year, week, weekday = start.isocalendar()
    if weekday == 1 and start.time() == time() and end - start == WEEK:
        return Window(start, end, f"{year}-W{week:02d}")
    midnight = start.time() == time() and end.time() == time()
    stamp = "%Y-%m-%d" if midnight else "%Y-%m-%dT%H%M%S"
    return Window(start, end, f"{start.strftime(stamp)}_{end.strftime(stamp)}")


def resolve_window(store: Store, *, week: str | None = None, since: datetime | date | None = None,
                   until: datetime | date | None = None) -> Window:
    """The digest's window: ``week``, or ``since``/``until`` (a missing end is 7 days from the other), or by default
    the 7 days ending with the day of the store's newest event (never the wall clock)."""
    if week is not None:
        if since is not None or until is not None:
            raise ValueError("give a week or a since/until range, not both")
        return iso_week(week)
    if since is not None or until is not None:
        start = _utc(since) if since is not None else _utc(until) - WEEK  # type: ignore[arg-type]
        end = _utc(until) if until is not None else start + WEEK
        return window_between(start, end)
    newest = store.scan_events().select(pl.col("ts").max()).collect().item()
    if newest is None:
        newest = store.incidents().select(pl.max_horizontal(pl.col("start").max(), pl.col("end").max())).item()
    if newest is None:
        raise InputError(f"{store.path} holds no timed events to take the last 7 days from; give a week or a since/until range")
    end = datetime.combine(newest.date() + timedelta(days=1), time(), tzinfo=UTC)
    return window_between(end - WEEK, end)


def _utc(moment: datetime | date) -> datetime:
    if not isinstance(moment, datetime):
        return datetime.combine(moment, time(), tzinfo=UTC)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
