"""Supercomputer system logs as the Loghub project publishes them (Oliner & Stearley, "What Supercomputers Say", DSN 2007).

Each line starts with an alert category ("-" for none, else a label such as ``KERNDTLB``), the epoch second and the
date (``2005.06.03``), then the node the line is about, then the line as the machine logged it:

* Blue Gene/L's RAS log: the local stamp to the microsecond, the node again, the type (``RAS`` or ``NULL``), the
  component, the level (INFO, WARNING, SEVERE, ERROR, FATAL, FAILURE) and the message
  (``- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS KERNEL INFO …``);
* Thunderbird's, Spirit's and Liberty's syslog: a yearless syslog stamp in local time, the reporter (``dn228/dn228``,
  ``local@tbird-admin1``), then the syslog message (``crond[2916]: (root) CMD (run-parts /etc/cron.hourly)``).

The epoch second is UTC and exact. BGL's local stamp is the same second in the machine's zone (Pacific: seven or eight
hours behind) with the microseconds; those refine the time only where the two stamps differ by whole hours.
The node is a place in the machine (a BGL rack, midplane, node card and chip), not the host of the file: it goes in
attrs, with the alert label.
"""

from __future__ import annotations

import polars as pl

from rca.sources._pipeline_attrs import json_run, json_text

# What a line must start with to be read so at all: one anchored test, the fields read only on the lines that pass.
LINE = pl.col("inner").str.contains(r"^(?:-|[A-Z][0-9A-Z_]*) 1[0-9]{9} [0-9]{4}\.[0-9][0-9]\.[0-9][0-9] ")

_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_FIELDS = (
    r"^(?<alert>-|[A-Z][0-9A-Z_]*) (?<epoch>1[0-9]{9}) [0-9]{4}\.[0-9][0-9]\.[0-9][0-9] (?<node>\S+) (?:"
    # BGL
    r"(?<local>[0-9]{4}-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]\.[0-9][0-9]\.[0-9][0-9])\.(?<micros>[0-9]{6}) \S+ \S+"
    r" (?<component>[0-9A-Z_]+) (?<level>INFO|WARNING|SEVERE|ERROR|FATAL|FAILURE)"
    # Thunderbird, Spirit, Liberty: the program and pid of a syslog message that names them ("crond(pam_unix)[2915]: ",
    # a path: "/apps/x86_64/system/ganglia-3.0.1/sbin/gmetad[1682]: "); "ACPI: …" is a kernel subsystem, no program.
    rf"|(?<syslog>(?:{_MONTHS}) +[0-9]{{1,2}} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]) \S+(?: (?<program>[^\s\[\]]+)\[(?<pid>[0-9]+)\]:)?"
    r")(?: (?<message>.*))?$"
)
_SEVERITY = {"INFO": "info", "WARNING": "warning", "SEVERE": "error", "ERROR": "error", "FATAL": "critical", "FAILURE": "critical"}
# The largest offset of a zone from UTC, in seconds: a local stamp further off is not the same second.
_MAX_OFFSET_S = 14 * 3600

COLUMNS: dict[str, pl.DataType] = {
    "hpc_ts": pl.Datetime("us", "UTC"), "hpc_raw": pl.String(), "hpc_format": pl.String(), "hpc_severity": pl.String(),
    "hpc_process": pl.String(), "hpc_pid": pl.Int64(), "hpc_body": pl.String(), "hpc_attrs": pl.String(),
}


def fields(rows: pl.DataFrame) -> pl.DataFrame:
    """The ``hpc_*`` columns of lines that passed :data:`LINE` (null where the rest of the line is not of the format)."""
    g = pl.col("inner").str.extract_groups(_FIELDS).struct
    epoch = g.field("epoch").cast(pl.Int64)
    local = g.field("local").str.to_datetime("%Y-%m-%d-%H.%M.%S", strict=False)
    offset_s = (local - pl.from_epoch(epoch, time_unit="s")).dt.total_seconds()
    same_second = (offset_s % 3600 == 0) & (offset_s.abs() <= _MAX_OFFSET_S)
    micros = pl.when(same_second).then(g.field("micros").cast(pl.Int64)).otherwise(0)
    bgl = g.field("level").is_not_null()
    read = g.field("epoch").is_not_null() & (bgl | g.field("syslog").is_not_null())
    alert = pl.when(g.field("alert") != "-").then(g.field("alert"))
    attrs = json_run({"node": json_text(g.field("node")), "alert": json_text(alert)})
    return rows.select(
        hpc_ts=pl.when(read).then(pl.from_epoch(epoch * 1_000_000 + micros, time_unit="us").dt.replace_time_zone("UTC")),
        hpc_raw=pl.when(read).then(g.field("epoch")),
        hpc_format=pl.when(bgl).then(pl.lit("bgl_ras")).when(read).then(pl.lit("hpc_syslog")),
        hpc_severity=g.field("level").replace_strict(_SEVERITY, default=None, return_dtype=pl.String),
        hpc_process=pl.coalesce(g.field("component"), g.field("program")),
        hpc_pid=g.field("pid").cast(pl.Int64, strict=False),
        hpc_body=pl.when(read).then(g.field("message").fill_null("")),
        hpc_attrs=pl.when(read).then(attrs),
    )


def overlay(framed: pl.DataFrame) -> pl.DataFrame:
    """``framed`` with what the ``hpc_*`` columns read over what the generic headers made of the line, and ``line_attrs``."""
    c = pl.col
    read = c("hpc_raw").is_not_null()
    return framed.with_columns(
        ts=pl.when(read).then(c("hpc_ts")).otherwise(c("ts")),
        ts_raw=pl.when(read).then(c("hpc_raw")).otherwise(c("ts_raw")),
        ts_quality=pl.when(read).then(pl.lit("exact")).otherwise(c("ts_quality")),
        # the syslog variant names no level: nothing the generic headers took from the line's start stands
        severity=pl.when(read).then(c("hpc_severity")).otherwise(c("severity")),
        format=pl.coalesce("hpc_format", "format"),
        process=pl.coalesce("hpc_process", "process"),
        pid=pl.coalesce("hpc_pid", "pid"),
        body=pl.coalesce("hpc_body", "body"),
        line_attrs=c("hpc_attrs"),
    ).drop(*COLUMNS)
