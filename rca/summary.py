"""The figures an engineer wants right after an ingest: what came in, and what looks wrong."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rca import schema, timeutil


def summarize(pieces: Sequence[pl.DataFrame], files: pl.DataFrame, tz: str = "UTC") -> dict:
    """Summary of one run's new events, from their :func:`event_groups` in any number of pieces, and the run's
    manifest rows; zone-less times were read in ``tz``.

    Each task tallies the events it writes while it holds them, so the run's parts are never
    read back: that read took one process 0.2 s of a 100 MB run after every worker had finished.
    """
    groups = merged_groups(pieces)
    by_kind = groups.group_by("source", "kind").agg(pl.col("events").sum().alias("len")).sort(
        "source", "len", "kind", descending=[False, True, False]
    )
    first, last = groups["first"].min(), groups["last"].max()
    problems = files.filter(~pl.col("status").is_in(["ok", "ignored"])).select("path", "status", "error")
    return {
        "files": files.height,
        "lines": int(files["lines"].sum() or 0),
        "events": int(by_kind["len"].sum()),
        "by_source_kind": [{"source": s, "kind": k, "events": n} for s, k, n in by_kind.iter_rows()],
        "hosts": sorted(groups["host"].drop_nulls().unique().to_list()),
        "files_without_host": groups.filter(pl.col("host").is_null())["file"].n_unique(),  # files with events that name no host
        "time_range": [first.isoformat(), last.isoformat()] if first is not None else None,
        "events_without_time": int((groups["events"] - groups["timed"]).sum()),
        "oom_class_events": int(by_kind.filter(pl.col("kind").is_in(schema.OOM_CLASS_KINDS))["len"].sum()),
        "unparsed_lines": int(files["unparsed_lines"].sum() or 0),
        "problem_files": problems.to_dicts(),
        "ignored_files": int((files["status"] == "ignored").sum()),  # never logs: a desktop's metadata (.DS_Store, __MACOSX/…), login records
        "zone_hints": zone_hints(_by_zone(groups), tz),
    }


# A stamp that gives its zone as a number ("+0200", "-05:00") states the host's local zone; a "Z" tells only that its
# program writes UTC whatever the host's zone is (Go, Kubernetes, most JSON loggers).
_NUMERIC_ZONE = r"[0-9](?<zone>[+-][0-9][0-9]:?[0-9][0-9])(?:\s+[A-Za-z]{2,5})?$"
# Times read as written in --tz: a clock with no zone after it (an epoch needs none), from the line or the file's own stamp.
_CLOCK_END = r":[0-9][0-9](?:[.,][0-9]+)?(?: [0-9]{4})?$"
_READ_IN_TZ = ("exact", "year_inferred", "year_from_mtime", "inherited")
AGREEMENT = 0.9
"""The share of a host's numeric zones that must name the same offset before it is called the host's."""


_GROUP_KEYS = ("source", "kind", "host", "file", "zone")


def event_groups(events: pl.DataFrame) -> pl.DataFrame:
    """Per source, kind, host, file and stated zone (null: none) of ``events`` (rca.schema.EVENT_SCHEMA): the events,
    those with a time, the first and last time, and the times read at --tz; per ``batch_file`` too where it is a column."""
    timed = pl.col("ts").is_not_null()
    by_file = ["batch_file"] if "batch_file" in events.columns else []
    return events.group_by(*by_file, "source", "kind", "host", "file", zone=pl.col("ts_raw").str.extract(_NUMERIC_ZONE, 1)).agg(
        events=pl.len(),
        timed=timed.sum(),
        first=pl.col("ts").min(),
        last=pl.col("ts").max(),
        zoneless=(timed & pl.col("ts_raw").str.contains(_CLOCK_END) & pl.col("ts_quality").is_in(_READ_IN_TZ)).sum(),
    )


def merged_groups(pieces: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """The :func:`event_groups` of all the pieces' events together."""
    if not pieces:
        return event_groups(schema.empty(schema.EVENT_SCHEMA))
    return (
        pl.concat(pieces, how="vertical_relaxed")
        .group_by(*_GROUP_KEYS)
        .agg(pl.col("events", "timed").sum(), pl.col("first").min(), pl.col("last").max(), pl.col("zoneless").sum())
    )


def _by_zone(groups: pl.DataFrame) -> pl.DataFrame:
    """Per host, file and stated zone, of the events with a host and a time: how many, the first time, and the times
    read at --tz."""
    return (
        groups.filter(pl.col("host").is_not_null() & (pl.col("timed") > 0))
        .group_by("host", "file", "zone")
        .agg(events=pl.col("timed").sum(), ts=pl.col("first").min(), zoneless=pl.col("zoneless").sum())
    )


def zone_hints(by_zone: pl.DataFrame, tz: str) -> list[dict]:
    """The hosts whose stamps state one local zone other than ``tz`` while some of their times, written with no zone,
    were read in ``tz``: each with the zone, where it is stated, and how many zone-less times it may concern."""
    zoned = by_zone.filter(pl.col("zone").is_not_null()).select("host", "file", "zone", "events", "ts")
    zoneless = by_zone.filter(pl.col("zone").is_null() & (pl.col("zoneless") > 0)).select("host", "file", events="zoneless")
    if zoned.is_empty() or zoneless.is_empty():
        return []
    # A file whose own stamps state its zone has its zone-less ones read at that zone by its parser.
    zoneless = (
        zoneless.join(zoned, on=["host", "file"], how="anti")
        .group_by("host")
        .agg(pl.col("events").sum(), files=pl.len(), file=pl.col("file").min())
    )
    offsets = zoned.with_columns(minutes=timeutil.zone_minutes(pl.col("zone")))
    stated = (
        offsets.group_by("host", "minutes")
        .agg(pl.col("events").sum(), ts=pl.col("ts").min(), file=pl.col("file").min())
        .with_columns(share=pl.col("events") / pl.col("events").sum().over("host"))
        .filter(pl.col("share") >= AGREEMENT)
        # what --tz's offset was at that moment (a named zone's changes with daylight saving time)
        .with_columns(tz_minutes=_offset_minutes(pl.col("ts").dt.convert_time_zone(tz)))
        .filter(pl.col("minutes") != pl.col("tz_minutes"))
    )
    hints = stated.join(zoneless, on="host", suffix="_zoneless").sort("host")
    return [
        {"host": row["host"], "stated_zone": offset, "stated_in": row["file"], "stated_events": row["events"],
         "zoneless_events": row["events_zoneless"], "zoneless_files": row["files"], "zoneless_example": row["file_zoneless"]}
        for row, offset in zip(hints.iter_rows(named=True), hints.select(timeutil.offset_text(pl.col("minutes")))[:, 0], strict=True)
    ]


def _offset_minutes(local: pl.Expr) -> pl.Expr:
    return ((local.dt.base_utc_offset() + local.dt.dst_offset()).dt.total_minutes()).cast(pl.Int32)
