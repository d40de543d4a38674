"""``nvidia-smi dmon`` (per-device) and ``pmon`` (per-process) monitor output.

A ``# gpu …`` header names the whitespace-separated columns and a ``# Idx …`` line gives
their units; dmon repeats both every screenful. ``-o D`` / ``-o T`` / ``-o DT`` prepend
``Date`` (YYYYMMDD) and ``Time`` columns; only a row with both has a resolvable time, a
``Time``-only row keeps it in ``ts_raw`` with ``ts`` null. ``-`` means unsupported (null).

dmon rows are ``gpu_sample`` (``sm`` → ``gpu_util_pct``, ``fb`` MB → ``mem_used_bytes``);
pmon rows are ``gpu_process`` (``command`` → ``process``), or ``log`` when no process ran.
"""

from __future__ import annotations

import polars as pl

from rca import timeutil
from rca.sources._base import ParseContext, Parsed
from rca.sources._nvsmi_common import MIB, attrs_json, conform_events, integer, log_rows, quality

# A monitor log pasted into docs may keep their indent: the header, units and rows are read after it.
HEADER_LINE = r"^[ \t]*#\s*(?:Date\s+)?(?:Time\s+)?gpu(?:\s+[A-Za-z][0-9A-Za-z_.]*)+\s*$"
UNITS_LINE = r"^[ \t]*#\s*(?:YYYYMMDD\s+)?(?:HH:MM:SS\s+)?Idx\b"
_RENAMED = {
    "pwr": "power_w", "gtemp": "temp_c", "temp": "temp_c", "mtemp": "mem_temp_c", "mem": "mem_util_pct",
    "enc": "enc_util_pct", "dec": "dec_util_pct", "jpg": "jpg_util_pct", "ofa": "ofa_util_pct",
    "mclk": "mclk_mhz", "pclk": "pclk_mhz", "bar1": "bar1_used_mib",
}
_MAPPED = {"Date", "Time", "gpu", "pid", "type", "command", "sm", "fb"}


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Parse monitor rows under the nearest ``# gpu …`` header."""
    text = pl.col("text")
    words = text.str.strip_chars().str.replace_all(r"\s+", " ")
    rows = lines.with_columns(
        is_header=text.str.contains(HEADER_LINE),
        is_units=text.str.contains(UNITS_LINE),
    ).with_columns(
        columns=pl.when(pl.col("is_header")).then(words.str.strip_chars_start("# ")).forward_fill(),
        values=pl.when(~words.str.starts_with("#")).then(words.str.split(" ")),
    )
    width = pl.col("columns").str.count_matches(" ") + 1
    # Only pmon's last column, the command name, may itself contain spaces.
    fits = (pl.col("values").list.len() == width) | (
        pl.col("columns").str.ends_with(" command") & (pl.col("values").list.len() > width)
    )
    rows = rows.with_columns(is_row=pl.col("columns").is_not_null() & pl.col("values").is_not_null() & fits.fill_null(False))
    # A line that is no row (the next command's prompt in a pasted session) is of the monitor whose header is above it.
    under_pmon = pl.col("columns").str.contains(r"(?:^| )pid(?: |$)").fill_null(False)
    stray = rows.filter(~pl.col("is_header") & ~pl.col("is_units") & ~pl.col("is_row"))
    parts = [log_rows(stray, "dmon", format=pl.when(under_pmon).then(pl.lit("pmon")).otherwise(pl.lit("dmon")))]
    for (columns,), group in rows.filter(pl.col("is_row")).group_by("columns", maintain_order=True):
        parts.append(_events(group, columns.split(" "), ctx))
    headers = rows.filter(pl.col("is_header") | pl.col("is_units")).height
    return Parsed(events=pl.concat([conform_events(p) for p in parts]), skipped={"header": headers} if headers else {})


def _events(rows: pl.DataFrame, columns: list[str], ctx: ParseContext) -> pl.DataFrame:
    last = len(columns) - 1

    def cell(name: str) -> pl.Expr:
        if name not in columns:
            return pl.lit(None, pl.String)
        position = columns.index(name)
        if name == "command" and position == last:
            value = pl.col("values").list.slice(position).list.join(" ")
        else:
            value = pl.col("values").list.get(position, null_on_oob=True)
        return pl.when(value != "-").then(value)

    def measured(name: str) -> pl.Expr:
        return cell(name).cast(pl.Float64, strict=False)

    per_process = "pid" in columns
    has_process = cell("pid").is_not_null()
    kind = pl.when(has_process).then(pl.lit("gpu_process")).otherwise(pl.lit("log")) if per_process else pl.lit("gpu_sample")
    date, clock = cell("Date"), cell("Time")
    stamp = pl.concat_str([date, clock], separator=" ", ignore_nulls=True)
    ts = timeutil.dated_to_utc(pl.concat_str([date, clock], separator=" "), "%Y%m%d %H:%M:%S", ctx.tz)
    extra = {_RENAMED.get(c, c): measured(c) for c in columns if c not in _MAPPED}
    return rows.select(
        "line",
        n_lines=pl.lit(1, pl.Int32),
        kind=kind,
        severity=pl.lit("info"),
        message=pl.col("text").str.strip_chars(),
        format=pl.lit("pmon" if per_process else "dmon"),
        ts=ts,
        ts_raw=pl.when(stamp != "").then(stamp),
        ts_quality=quality(ts, "exact"),
        gpu_index=integer(cell("gpu")),
        pid=integer(cell("pid")).cast(pl.Int64),
        process=cell("command"),
        mem_used_bytes=(measured("fb") * MIB).round().cast(pl.Int64, strict=False),
        gpu_util_pct=pl.lit(None, pl.Float64) if per_process else measured("sm"),
        attrs=attrs_json(**{**extra, **({"type": cell("type"), "sm_pct": measured("sm")} if per_process else {})}),
    )
