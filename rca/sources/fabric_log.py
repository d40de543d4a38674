"""The log files of NVIDIA's fabric daemons: Fabric Manager (``/var/log/fabricmanager.log``) and IMEX (``/var/log/nvidia-imex.log``).

On an HGX / NVL node the fabric manager trains and watches the NVSwitch fabric, and IMEX (on
GB200 NVL systems) shares GPU memory across nodes; when either fails, jobs see NCCL hangs and
``CUDA_ERROR_SYSTEM_NOT_READY`` while the GPUs look healthy. Both daemons write their own file
(besides the journal) with one header a line::

    [Mar 25 2025 10:39:32] [INFO] [tid 38] Identified this node as ID 0, using bind IP of '10.136.206.48' …
    [Feb 27 2025 15:10:02] [ERROR] [tid 1921] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33

The stamp has a year but no zone (read in ``--tz``), the level is the severity. Each line is
framed, and labelled ``syslog``, as the journal frames the daemon's own lines (program ``nv-fabricmanager``, or
``nvidia-imex`` in a file that says it is IMEX's), so the fabric manager's rules
(:mod:`rca.sources._fabricmanager`: NVSwitch errors by fatality, the daemon giving up) read
both alike. A line without the header continues the message above it and shares its event (the
GB200 fabric manager writes an NVLink error as a header line ending "error on :" and one
``key : value`` line per field under it); before any header (IMEX's ``IMEX Log initializing at: …``
banner) it is a ``log`` event of the file's daemon, without a time.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rca import timeutil
from rca.sources import _syslog, register
from rca.sources._base import ParseContext, Parsed, Source, by_head, forward_fill_within, one_head

_HEADER = (
    r"^\[(?<mon>[A-Z][a-z]{2}) +(?<day>[0-9]{1,2}) (?<year>[0-9]{4}) (?<clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9])\]"
    r" \[(?<level>[A-Z]+)\] \[tid (?<tid>[0-9]+)\] "
)
_SEVERITY = {"DEBUG": "debug", "INFO": "info", "WARNING": "warning", "WARN": "warning", "ERROR": "error", "FATAL": "critical"}
FABRIC_MANAGER, IMEX = "nv-fabricmanager", "nvidia-imex"
# IMEX opens its file with "IMEX Log initializing at: 8/8/2025 14:23:12.081", then "… IMEX version 570.124.06 is running …".
_IMEX_BANNER_LINE = "IMEX Log initializing at: "
_IMEX_BANNER = rf"^{_IMEX_BANNER_LINE}|\] IMEX version [0-9]"
# IMEX's lines from before its log file is set up carry a bare level: "WARNING: failed to open IMEX log file …".
_BARE_LEVEL = r"^(DEBUG|INFO|WARNING|WARN|ERROR|FATAL): "
# A field line of a multi-line record ("moduleId : 3", "gpuGuid : 0xED0A8727AFC3C6F9").
_RECORD_FIELD = r"^[A-Za-z][A-Za-z0-9]* : \S"


def sniff(head: Sequence[str]) -> float:
    """0.9 for a head whose lines mostly open with the daemons' header, 0.6 for one with a header and IMEX's banner."""
    return one_head(sniff_heads, head)


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """:func:`sniff` of each head of :func:`~rca.sources._base.heads_frame`.

    The field lines of a record count with the headers: one NVLink error is a header and eleven fields.
    IMEX's banner marks its output even where other lines outnumber the headers (the DRA driver's daemon
    echoes its nodes_config.cfg, one address a line, before starting IMEX); scored below a source that
    claims most lines, so a log interleaving another program's lines with IMEX's stays that source's.
    """
    text = pl.col("text")
    header = text.str.contains(_HEADER)
    found = by_head(
        heads,
        headed=header.any(),
        banner=text.str.starts_with(_IMEX_BANNER_LINE).any(),
        share=(header | text.str.contains(_RECORD_FIELD)).mean(),
    )
    return {head: _score(row["headed"], row["banner"], row["share"] or 0.0) for head, row in found.items()}


def _score(headed: bool, banner: bool, share: float) -> float:
    """A head's score: none without a header; most lines the daemons' (or its IMEX banner) claims it."""
    if not headed:
        return 0.0
    return 0.9 if share >= 0.5 else 0.6 if banner else 0.0


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Frame each line with its header's time, level and daemon, then apply the daemons' rules."""
    text = pl.col("text")
    header = pl.col("header").struct
    dated = timeutil.ctime_string(header.field("year"), header.field("mon"), header.field("day"), header.field("clock"))
    ts = timeutil.dated_to_utc(dated, "%Y-%m-%d %H:%M:%S", ctx.tz)
    imex = text.str.contains(_IMEX_BANNER).any()
    stamp = pl.format("{} {} {} {}", header.field("mon"), header.field("day"), header.field("year"), header.field("clock"))
    # Matched once: an expression is evaluated wherever it is used.
    own = lines.with_columns(header=text.str.extract_groups(_HEADER), bare_level=text.str.extract(_BARE_LEVEL, 1)).with_columns(
        own_ts=ts, own_stamp=stamp, level=pl.coalesce(header.field("level"), pl.col("bare_level"))
    )
    # A line with a level of its own opens an event; one without continues the event above it (the
    # journal's framing groups it into that event), or has no time before the first.
    record = _records(own)
    framed = own.with_columns(
        ts=forward_fill_within(pl.col("own_ts"), record), ts_raw=forward_fill_within(pl.col("own_stamp"), record)
    ).with_columns(
        ts_quality=pl.when(pl.col("own_ts").is_not_null())
        .then(pl.lit("exact"))
        .when(pl.col("ts").is_not_null())
        .then(pl.lit("inherited"))
        .otherwise(pl.lit("missing")),
        host=pl.lit(None, pl.String),
        program=pl.when(imex).then(pl.lit(IMEX)).otherwise(pl.lit(FABRIC_MANAGER)),
        pid=pl.lit(None, pl.Int64),
        message=text,
        severity=pl.col("level").replace_strict(_SEVERITY, default=None),
        format=pl.lit("fabric_log"),
    )
    return Parsed(events=_syslog.as_syslog(_syslog.dispatch(framed.select(*_syslog.FRAMED_SCHEMA), ctx)))


def _records(lines: pl.DataFrame) -> pl.Expr:
    """A number per event: it grows at each line with a level of its own, and at each new file."""
    opens = pl.col("level").is_not_null()
    if "batch_file" in lines.columns:
        opens = opens | pl.col("batch_file").ne_missing(pl.col("batch_file").shift(1))
    return opens.cum_sum()


SOURCE = register(
    Source(
        name="fabric_log",
        sniff=sniff,
        sniff_heads=sniff_heads,
        parse=parse,
        sniff_literals=("] [tid ",),
        formats=("fabric_log",),
    )
)
