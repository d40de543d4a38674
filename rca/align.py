"""Clock alignment: give boot-relative kernel events a wall time, and check inferred years.

A raw ``dmesg`` line carries seconds since boot and nothing else. Its wall time is
``boot time + seconds``, and the boot time can be recovered from the host's other logs,
in order of trust:

1. ``kernel_line``: the same line, with the same boot seconds, in a dated kernel log of
   the host (syslog ``kern.log`` and ``journalctl -k`` embed ``[  514.680000]``). The
   offset is exact up to the dated log's own resolution.
2. ``kernel_message``: the same messages in a dated kernel log of the host that does not
   embed boot seconds (``dmesg -T``, ``journalctl -k`` short): offset = its time minus the
   boot seconds, to that log's resolution (a second). Only messages written once on each
   side vote, and the agreed offset must rest on a message written well after boot: the
   boot messages of two boots read alike, so a previous boot's journal must not date this one.
3. ``kill_match``: the same kill seen by another dated source of the host (the kubelet's
   OOMKilled, a pipeline's "Killed" or exit 137) sharing the pid, container id or pod uid.
   Those sightings trail the kernel by a few seconds, which the reported skew shows.
4. ``host_boot``: the host's dated kernel lines all come from one boot; use its offset.

Each (host, file, boot) group takes the first method that gives an answer; the residual
skew (largest disagreement between the chosen offset and its supporting matches) is
reported per group. A file whose boot seconds go backwards holds several boots, each
aligned on its own. Events that no method aligns keep a null ``ts``: never dropped.

Lines with no time at all (the traceback printed under a log line, a log of bare prints)
get one from the same failure seen by a dated source, or from their timed neighbours in
the file (``ts_quality`` "inherited"; see :func:`_inherit`).

Years: a file whose year was inferred (klog, syslog) is compared with the exactly dated
events of the same host (of all hosts when the host has none); a file that sits a whole
number of years away is shifted by that many years and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import polars as pl

from rca import schema

GROUP = ["host", "file", "boot"]
_US = 1_000_000
_LINE_BIN_US = 10 * _US  # offsets of one boot agree to the dated log's resolution
_KILL_BIN_US = 30 * _US  # a kill's other sightings trail the kernel by seconds
_AFTER_BOOT_S = 300.0  # by then the boot's own messages, which every boot repeats, are written
_HOST_BOOT_SHARE = 0.9
_YEAR_DAYS = 365.2425
_KILL_KINDS = ("oom_kill", "oom_invoked", "process_killed", "dataloader_killed", "container_oomkilled")
_IDENTITY = ("pid", "container_id", "pod_uid")
_CRASH_KINDS = (*schema.OOM_CLASS_KINDS, "traceback")  # records printed when a process fails
_SIGHTING_SLACK_US = 2 * 60 * _US  # a crash report and the kill or exit that ends the process are seconds apart

REPORT_SCHEMA: dict[str, pl.DataType] = {
    "host": pl.String(),
    "file": pl.String(),
    "boot": pl.Int32(),
    "method": pl.String(),  # kernel_line / kernel_message / kill_match / host_boot / unaligned
    "events": pl.Int64(),
    "matches": pl.Int64(),
    "boot_time": pl.Datetime("us", "UTC"),
    "residual_skew_s": pl.Float64(),
}

YEAR_REPORT_SCHEMA: dict[str, pl.DataType] = {"host": pl.String(), "file": pl.String(), "shifted_years": pl.Int32()}

INHERITED_SCHEMA: dict[str, pl.DataType] = {
    "host": pl.String(), "file": pl.String(), "inherited": pl.Int64(), "matched": pl.Int64(), "untimed": pl.Int64()
}


@dataclass(frozen=True)
class Alignment:
    """Events with aligned times, one report row per boot-relative group, year shifts, and inherited times per file."""

    events: pl.DataFrame
    report: pl.DataFrame
    year_shifts: pl.DataFrame
    inherited: pl.DataFrame


def align_clocks(events: pl.DataFrame, reference: datetime | None = None) -> Alignment:
    """Fill ``ts`` of boot-relative events where the boot time can be recovered, and of untimed lines.

    Needs the columns ts, ts_quality, boot_seconds, host, file, line, kind, source, pid,
    container_id, pod_uid, pod, exit_code, attrs and kernel_text (a hash of a kernel line's
    message, see :func:`rca.correlate.prepared`); other columns pass through. The
    caller's frame is not modified. Everything here is per host but the year check of a
    host without exactly dated events, which uses ``reference``: :func:`exact_reference`
    of every host's events (default: of ``events``), so hosts can be aligned one at a time.
    """
    shifted, year_shifts = _check_years(events, exact_reference(events) if reference is None else reference)
    relative_mask = pl.col("ts").is_null() & pl.col("boot_seconds").is_not_null()
    relative = shifted.filter(relative_mask)
    if relative.height == 0:
        inherited, counts = _inherit(shifted)
        return Alignment(inherited, pl.DataFrame(schema=REPORT_SCHEMA), year_shifts, counts)
    relative = _with_boot_segments(relative)
    dated = shifted.filter(pl.col("ts").is_not_null())
    offsets = _choose_offsets(relative, dated)
    aligned = (
        relative.join(offsets.select(*GROUP, "offset_us"), on=GROUP, how="left")
        .with_columns(
            ts=pl.when(pl.col("offset_us").is_not_null())
            .then((pl.col("offset_us") + _boot_us()).cast(pl.Datetime("us", "UTC")))
            .otherwise(pl.col("ts")),
            ts_quality=pl.when(pl.col("offset_us").is_not_null()).then(pl.lit("boot_aligned")).otherwise(pl.col("ts_quality")),
        )
        .drop("offset_us", "boot")
    )
    merged, counts = _inherit(pl.concat([shifted.filter(~relative_mask), aligned.select(shifted.columns)]))
    return Alignment(merged, _report(relative, offsets), year_shifts, counts)


def _inherit(events: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Give lines with no time of their own (a traceback under a timed log line, a plain print log) a time.

    A failure record (a traceback, CUDA OOM, DataLoader death, kill, runtime OOM) takes the
    time of the same failure seen by a dated source of its host (a kill or container exit
    sharing its container, pod uid, pid or pod) within the bounds its timed neighbours set.
    That holds for records a parser already gave the time of the line above ("inherited")
    too: a training log may say nothing for an hour before the crash it ends with. Without
    a sighting, an untimed record takes the time of the next timed line, since a crash
    report is printed when the crash happens, right before the reaction to it. Other lines
    take the time of the line before them (the next one for a file's first lines).
    Boot-relative lines that could not be aligned are left alone: their boot seconds are a
    better clue than a neighbour.
    """
    runtime_oom = pl.col("attrs").str.contains('"oom"', literal=True).fill_null(False)  # the JVM's / Go's own OOM report
    record = pl.col("kind").is_in(_CRASH_KINDS) | runtime_oom
    untimed = pl.col("ts").is_null() & pl.col("boot_seconds").is_null()
    guessed = untimed | ((pl.col("ts_quality") == "inherited") & record)
    files = events.filter(guessed)["file"].unique()
    if files.len() == 0:
        return events, pl.DataFrame(schema=INHERITED_SCHEMA)
    concerned = pl.col("file").is_in(files.implode())  # a hash probe per row, far cheaper than a join on the names
    own_time = pl.when(pl.col("ts_quality") == "inherited").then(None).otherwise(pl.col("ts"))
    mine = (
        events.filter(concerned)
        .sort("host", "file", "line")
        .with_row_index("_r")
        .with_columns(
            untimed=untimed,
            guessed=guessed,
            before=own_time.forward_fill().over("host", "file"),
            after=own_time.backward_fill().over("host", "file"),
        )
    )
    sighted = _sightings(mine.filter(pl.col("guessed") & record), events)
    neighbour = pl.when(record).then(pl.coalesce("after", "before")).otherwise(pl.coalesce("before", "after"))
    filled = (
        mine.join(sighted, on="_r", how="left")
        .with_columns(ts=pl.coalesce("sighted", "ts", neighbour))
        .with_columns(ts_quality=pl.when(pl.col("guessed") & pl.col("ts").is_not_null()).then(pl.lit("inherited")).otherwise(pl.col("ts_quality")))
    )
    counts = (
        filled.filter("guessed")
        .group_by("host", "file")
        .agg(
            inherited=(pl.col("untimed") & pl.col("ts").is_not_null()).sum().cast(pl.Int64),
            matched=pl.col("sighted").is_not_null().sum().cast(pl.Int64),
            untimed=pl.col("ts").is_null().sum().cast(pl.Int64),
        )
        .sort("host", "file")
    )
    return pl.concat([events.filter(~concerned), filled.select(events.columns)]), counts


def _sightings(records: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """(_r, sighted): for each untimed failure record, the earliest dated kill / container exit of the same identity in its bounds."""
    if records.height == 0:
        return pl.DataFrame(schema={"_r": pl.UInt32, "sighted": pl.Datetime("us", "UTC")})
    exited = (pl.col("exit_code").is_not_null() & (pl.col("exit_code") != 0)).fill_null(False)
    died = (pl.col("source") == "kubelet") & pl.col("attrs").str.contains('"ContainerDied"', literal=True).fill_null(False)
    # Only sightings with a time of their own: a guessed time cannot confirm another guess.
    dated = pl.col("ts").is_not_null() & (pl.col("ts_quality") != "inherited")
    termination = dated & (pl.col("kind").is_in(_KILL_KINDS) | exited | died)
    keys = ("container_id", "pod_uid", "pid", "pod")
    rank = {k: i for i, k in enumerate(keys)}
    wanted = _identity_long(records, ["_r", "host", "before", "after"], keys)
    seen = _identity_long(events.filter(termination), ["host", "ts"], keys)
    slack = pl.duration(microseconds=_SIGHTING_SLACK_US)
    in_bounds = ((pl.col("ts") >= pl.col("before") - slack) | pl.col("before").is_null()) & (
        (pl.col("ts") <= pl.col("after") + slack) | pl.col("after").is_null()
    )
    return (
        wanted.join(seen, on=["host", "key", "value"])
        .filter(in_bounds)
        .with_columns(rank=pl.col("key").replace_strict(rank, return_dtype=pl.Int32))
        .sort("_r", "rank", "ts")
        .unique("_r", keep="first")
        .select("_r", sighted="ts")
    )


def _boot_us() -> pl.Expr:
    return (pl.col("boot_seconds") * _US).round().cast(pl.Int64)


def _with_boot_segments(relative: pl.DataFrame) -> pl.DataFrame:
    """Number the boots inside each file: boot seconds going backwards start a new one."""
    ordered = relative.sort("host", "file", "line")
    restarted = (pl.col("boot_seconds") < pl.col("boot_seconds").shift(1).over("host", "file") - 1).fill_null(False)
    return ordered.with_columns(boot=restarted.cum_sum().over("host", "file").cast(pl.Int32))


def _choose_offsets(relative: pl.DataFrame, dated: pl.DataFrame) -> pl.DataFrame:
    """One offset (µs from epoch to boot) per group, from the most trusted method that has one."""
    candidates = [
        _consensus(_line_matches(relative, dated), _LINE_BIN_US).with_columns(method=pl.lit("kernel_line")),
        _after_boot(_message_matches(relative, dated)).with_columns(method=pl.lit("kernel_message")),
        _consensus(_kill_matches(relative, dated), _KILL_BIN_US).with_columns(method=pl.lit("kill_match")),
        _host_boot(relative, dated),
    ]
    return pl.concat(candidates, how="vertical_relaxed").unique(subset=GROUP, keep="first", maintain_order=True)


def _dated_us() -> pl.Expr:
    """A dated kernel line's time in µs; a whole-second stamp (syslog, journal short, dmesg -T) by the middle of its second.

    Such a stamp cuts the time down to its second, so offsets taken from it would all fall
    up to a second early; from the middle of the second they scatter around the truth.
    """
    micros = pl.col("ts").dt.epoch("us")
    return micros + pl.when(micros % _US == 0).then(_US // 2).otherwise(0)


def _line_matches(relative: pl.DataFrame, dated: pl.DataFrame) -> pl.DataFrame:
    keys = relative.select(*GROUP, boot_us=_boot_us()).unique()
    dated_boot = dated.filter(pl.col("boot_seconds").is_not_null()).select("host", boot_us=_boot_us(), ts_us=_dated_us())
    return keys.join(dated_boot, on=["host", "boot_us"]).select(*GROUP, offset_us=pl.col("ts_us") - pl.col("boot_us"))


def _message_matches(relative: pl.DataFrame, dated: pl.DataFrame) -> pl.DataFrame:
    """(group, offset, boot seconds) of each message written once in the group and once in the host's dated kernel logs without boot seconds."""
    once = pl.len().over("host", "file", "boot", "kernel_text") == 1
    written = relative.filter(once & pl.col("kernel_text").is_not_null()).select(*GROUP, "kernel_text", "boot_seconds", boot_us=_boot_us())
    dated_once = (
        dated.filter(pl.col("kernel_text").is_not_null() & pl.col("boot_seconds").is_null())
        .filter(pl.len().over("host", "kernel_text") == 1)
        .select("host", "kernel_text", ts_us=_dated_us())
    )
    return written.join(dated_once, on=["host", "kernel_text"]).select(
        *GROUP, "boot_seconds", offset_us=pl.col("ts_us") - pl.col("boot_us")
    )


def _after_boot(matches: pl.DataFrame) -> pl.DataFrame:
    """The consensus of each group whose agreeing matches include a message written well after boot."""
    agreed = _consensus(matches.drop("boot_seconds"), _LINE_BIN_US)
    late = (
        matches.filter(pl.col("boot_seconds") >= _AFTER_BOOT_S)
        .join(agreed.select(*GROUP, agreed_us="offset_us"), on=GROUP)
        .filter((pl.col("offset_us") - pl.col("agreed_us")).abs() <= 2 * _LINE_BIN_US)
        .select(GROUP)
        .unique()
    )
    return agreed.join(late, on=GROUP, how="semi")


def _kill_matches(relative: pl.DataFrame, dated: pl.DataFrame) -> pl.DataFrame:
    kills = _identity_long(relative.filter(pl.col("kind").is_in(_KILL_KINDS)), [*GROUP, "boot_seconds"])
    sightings = _identity_long(dated.filter(pl.col("kind").is_in(_KILL_KINDS)), ["host", "ts"])
    return kills.join(sightings, on=["host", "key", "value"]).select(
        *GROUP, offset_us=pl.col("ts").dt.epoch("us") - _boot_us()
    )


def _identity_long(frame: pl.DataFrame, keep: list[str], keys: tuple[str, ...] = _IDENTITY) -> pl.DataFrame:
    """(keep…, key, value): one row per non-null identity of each row, values as text."""
    present = [c for c in keys if c in frame.columns]
    return (
        frame.select(*keep, *[pl.col(c).cast(pl.String) for c in present])
        .unpivot(index=keep, on=present, variable_name="key", value_name="value")
        .drop_nulls("value")
    )


def _consensus(matches: pl.DataFrame, bin_us: int) -> pl.DataFrame:
    """Per group: the offset bin most matches agree on, its median and the residual spread."""
    if matches.height == 0:
        return pl.DataFrame(schema={**{k: REPORT_SCHEMA[k] for k in GROUP}, "offset_us": pl.Int64, "matches": pl.Int64, "residual_us": pl.Int64})
    binned = matches.with_columns(bin=(pl.col("offset_us") / bin_us).round().cast(pl.Int64))
    best = binned.group_by(*GROUP, "bin").len().sort([*GROUP, "len", "bin"], descending=[False] * len(GROUP) + [True, False]).unique(
        subset=GROUP, keep="first", maintain_order=True
    )
    near = binned.join(best.select(*GROUP, best_bin="bin"), on=GROUP).filter((pl.col("bin") - pl.col("best_bin")).abs() <= 1)
    return (
        near.group_by(GROUP)
        .agg(offset_us=pl.col("offset_us").median().round().cast(pl.Int64), matches=pl.len().cast(pl.Int64), all_offsets=pl.col("offset_us"))
        .with_columns(residual_us=(pl.col("all_offsets") - pl.col("offset_us")).list.eval(pl.element().abs()).list.max())
        .drop("all_offsets")
    )


def _host_boot(relative: pl.DataFrame, dated: pl.DataFrame) -> pl.DataFrame:
    """The host's dated kernel lines, when nearly all of them come from one boot."""
    offsets = dated.filter(pl.col("boot_seconds").is_not_null()).select(
        "host", offset_us=pl.col("ts").dt.epoch("us") - _boot_us()
    ).with_columns(bin=(pl.col("offset_us") / _LINE_BIN_US).round().cast(pl.Int64))
    per_bin = offsets.group_by("host", "bin").agg(pl.len(), offset_us=pl.col("offset_us").median().round().cast(pl.Int64),
                                                   spread=(pl.col("offset_us").max() - pl.col("offset_us").min()))
    single = per_bin.with_columns(share=pl.col("len") / pl.col("len").sum().over("host")).filter(pl.col("share") >= _HOST_BOOT_SHARE)
    return relative.select(GROUP).unique().join(single, on="host").select(
        *GROUP, "offset_us", matches=pl.col("len").cast(pl.Int64), residual_us=pl.col("spread"), method=pl.lit("host_boot")
    )


def _report(relative: pl.DataFrame, offsets: pl.DataFrame) -> pl.DataFrame:
    counts = relative.group_by(GROUP).agg(events=pl.len().cast(pl.Int64))
    return (
        counts.join(offsets, on=GROUP, how="left")
        .select(
            *GROUP,
            method=pl.col("method").fill_null("unaligned"),
            events="events",
            matches=pl.col("matches").fill_null(0),
            boot_time=pl.col("offset_us").cast(pl.Datetime("us", "UTC")),
            residual_skew_s=pl.col("residual_us") / _US,
        )
        .sort(GROUP)
        .cast(REPORT_SCHEMA)
    )


_EXACT = (pl.col("ts_quality") == "exact") & pl.col("ts").is_not_null()


# How far apart the middle 80 % of the exactly dated events may lie for their median to say
# which year a host without dated logs of its own is in: one cluster's logs of a week or a
# quarter agree; a folder of unrelated samples from several years does not, and shifting
# its yearless files towards their median would only move them away from the truth.
_SHARED_PERIOD = timedelta(days=120)


def exact_reference(events: pl.DataFrame) -> datetime | None:
    """The median time of the exactly dated events, when they agree on one period (else None).

    It is the year reference of hosts that have no dated logs of their own.
    """
    micros = pl.col("ts").dt.epoch("us")
    spread = events.lazy().filter(_EXACT).select(
        median=pl.col("ts").median(), early=micros.quantile(0.1), late=micros.quantile(0.9)
    ).collect().row(0, named=True)
    if spread["median"] is None or spread["late"] - spread["early"] > _SHARED_PERIOD / timedelta(microseconds=1):
        return None
    return spread["median"]


def _check_years(events: pl.DataFrame, overall: datetime | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Shift year-inferred files that sit whole years away from the exactly dated events."""
    inferred_mask = pl.col("ts_quality").is_in(["year_inferred", "year_from_mtime"]) & pl.col("ts").is_not_null()
    # Lazy, so each filter fuses with its aggregation instead of copying millions of rows.
    inferred = events.lazy().filter(inferred_mask).group_by("host", "file").agg(median=pl.col("ts").median()).collect()
    # Files of no known host are no one host: each stands alone, like a host without dated logs.
    per_host = events.lazy().filter(_EXACT & pl.col("host").is_not_null()).group_by("host").agg(reference=pl.col("ts").median()).collect()
    if inferred.height == 0:
        return events, pl.DataFrame(schema=YEAR_REPORT_SCHEMA)
    days = (pl.col("median") - pl.col("reference")).dt.total_seconds() / 86400
    shifts = (
        inferred.join(per_host.select("host", "reference"), on="host", how="left", nulls_equal=True)
        .with_columns(pl.col("reference").fill_null(pl.lit(overall, pl.Datetime("us", "UTC"))))
        .with_columns(shifted_years=pl.when(days.abs() > _YEAR_DAYS / 2).then(-(days / _YEAR_DAYS).round()).cast(pl.Int32))
        .filter(pl.col("shifted_years").is_not_null() & (pl.col("shifted_years") != 0))
        .select("host", "file", "shifted_years")
        .sort("host", "file")
    )
    if shifts.height == 0:
        return events, pl.DataFrame(schema=YEAR_REPORT_SCHEMA)
    joined = events.join(shifts, on=["host", "file"], how="left", nulls_equal=True, maintain_order="left")
    moved = pl.when(inferred_mask & pl.col("shifted_years").is_not_null()).then(
        pl.col("ts").dt.offset_by(pl.format("{}y", pl.col("shifted_years")))
    ).otherwise(pl.col("ts"))
    return joined.with_columns(ts=moved).drop("shifted_years"), shifts.cast(YEAR_REPORT_SCHEMA)
