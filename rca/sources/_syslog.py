"""Syslog and journald framing shared by the sources whose lines arrive through them.

``kern.log``, ``/var/log/messages`` (RFC 3164 or RFC 5424), ``journalctl`` short / short-iso /
short-full / short-unix / -o json all wrap a program's message in the same envelope: time, host (left
out by ``--no-hostname``), program[pid]. journalctl prints the further lines of a multi-line message
indented under its first: they keep its envelope and lose the indent.
This module peels the envelope off whole columns at once; the message rules of each program (the kernel's OOM
killer, kubelet's eviction manager) are registered here by their source modules with
:func:`register_program`, so a mixed journal is parsed by the right rules line by line.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from rca import timeutil
from rca.sources._base import (
    MESSAGE_TAIL,
    ParseContext,
    file_column,
    head_groups,
    holds_newline,
    inherit_frame,
    map_distinct,
    split_rows,
    within_file,
)

MessageRules = Callable[[pl.DataFrame, ParseContext], pl.DataFrame]

_PROGRAM_RULES: dict[str, tuple[str | None, MessageRules]] = {}
# Applications (a training job run as a systemd unit, a container logging to journald) go by
# names nobody can list: one source reads the lines of any other program whose messages it recognises.
_APPLICATIONS: list[tuple[str, MessageRules, pl.Expr]] = []
# Programs whose every line is about the job they run, read by the applications' rules whatever they say:
# Slurm's step daemon reports the step's OOM kills and limits ("error: Detected 1 oom_kill event in StepId=…").
_JOB_PROGRAMS = ("slurmstepd",)

# A host name has a lower-case letter or a digit: that keeps log levels ("ERROR", "[INFO]")
# of application lines that start with a date from being read as a syslog host. It does not end
# in a colon: "systemd[1]:" after the time is the program of `journalctl --no-hostname`, not a host.
_REAL_HOST = r"(?<host>[^ \t]*[a-z0-9](?:[^ \t]*[^ \t:])?)"
# Each envelope is a head and MESSAGE_TAIL; the head alone is captured (see head_groups).
# The heads captured for framing take any host and have it checked after (_with_real_host):
# written so that a field can end in one place only (at a space or tab, which it cannot hold),
# they are captured 2.7x faster (a 356k-line journal: 0.54 -> 0.20 s for the short head).
_ANY_HOST = r"(?<host>[^ \t]+)"
# journalctl --no-hostname leaves the host out: the lines the heads with a host miss (or misread, taking
# "systemd[1]:" for the host) are tried again without one; the empty group keeps the heads' fields alike.
# rsyslog writes an empty host as nothing between two spaces ("03:28:16  kernel: …").
_NO_HOST = "(?<host>)[ \t]?"
# rsyslog keeps a tag as the program sent it: "Fledge[16823] ERROR: …" has no colon after the pid.
_PROGRAM = r"(?<program>[A-Za-z0-9_.\-/@()]+)(?:\[(?<pid>[0-9]+)\]:?|:)[ \t]"
# A host of capitals alone ("PC", "H") is a host where the program gives its pid: a log level is
# not followed by "program[pid]:".
_PROGRAM_WITH_PID = r"(?<program>[A-Za-z0-9_.\-/@()]+)\[(?<pid>[0-9]+)\]:?[ \t]"
_NAMED_PROGRAM = r"(?<program>[A-Za-z0-9_.\-/@()]+):[ \t]"


def _short_head(host: str, program: str = _PROGRAM) -> str:
    """The short head; ``host`` holds its own separator after it (none without a host)."""
    clock = r"(?<clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?)"
    return rf"^(?<stamp>(?<mon>{timeutil.MONTH_NAME_PATTERN})[ \t]+(?<day>[0-9]{{1,2}})[ \t]{clock})[ \t]{host}{program}"


# RFC 5424 (rsyslog's RSYSLOG_SyslogProtocol23Format, in a file or on the wire with its "<PRI>1 "):
# "2024-04-10T10:15:57.163826-07:00 host kernel - - - message": app-name, procid, msgid and structured
# data, each "-" when empty, where RFC 3164 has "program[pid]:".
_RFC5424_PRI = r"(?:<(?<pri>[0-9]{1,3})> ?1 )?"
_PROGRAM_OR_5424 = (
    r"(?<program>[A-Za-z0-9_.\-/@()]+)"
    r"(?:(?:\[(?<pid>[0-9]+)\])?:| (?:-|(?<procid>[0-9]+)) \S+ (?:-|(?:\[[^\]]*\])+))[ \t]"
)


# journalctl -o short-full: "Thu 2024-01-04 12:00:01 UTC host program[pid]: message" (the zone as
# an abbreviation; UTC and GMT are read as such, any other as --tz).
_FULL = r"(?<weekday>[A-Z][a-z]{2}) (?<full>[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?) (?<zone>[A-Z][A-Za-z0-9+-]{1,5})"
_UTC_NAMES = ("UTC", "GMT")
# journalctl -o short-unix: "1701684000.123456 host program[pid]: message" (epoch seconds, microseconds).
_UNIX = r"(?<epoch>[0-9]{9,10}\.[0-9]{6})"


def _iso_head(host: str, program: str = _PROGRAM_OR_5424) -> str:
    """The ISO / short-full / short-unix head; ``host`` holds its own separator after it (none without a host)."""
    iso = r"(?<iso>[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]+)?(?:Z|[+-][0-9][0-9]:?[0-9][0-9])?)"
    return rf"^{_RFC5424_PRI}(?:{iso}|{_FULL}|{_UNIX})[ \t]{host}{program}"


_HOSTED, _MAYBE_HOSTED = rf"{_ANY_HOST}[ \t]", rf"(?:{_ANY_HOST}[ \t])?"
SHORT_HEAD, ISO_HEAD = _short_head(_HOSTED), _iso_head(_HOSTED)
_SHORT_NO_HOST_HEAD, _ISO_NO_HOST_HEAD = _short_head(_NO_HOST), _iso_head(_NO_HOST)
_SHORT_PROGRAM, _ISO_PROGRAM = _short_head(_MAYBE_HOSTED, _NAMED_PROGRAM), _iso_head(_MAYBE_HOSTED, _NAMED_PROGRAM)
_BARE_HEAD = rf"^{_PROGRAM}"

SHORT_LINE = _short_head(rf"(?:{_REAL_HOST}[ \t])?") + MESSAGE_TAIL
# An application's line may start with an ISO time and "name:" too (python logging): without a host, only a
# program with its pid makes an envelope for sniffing.
ISO_LINE = _iso_head(rf"{_REAL_HOST}[ \t]") + MESSAGE_TAIL
ISO_PID_LINE = _iso_head(_MAYBE_HOSTED, _PROGRAM_WITH_PID) + MESSAGE_TAIL
# The short lines of a host of capitals (journalctl of a machine named "PC"), for sniffing.
SHORT_PID_LINE = _short_head(_MAYBE_HOSTED, _PROGRAM_WITH_PID) + MESSAGE_TAIL

_SEVERITY_BY_PRIORITY = {"0": "critical", "1": "critical", "2": "critical", "3": "error", "4": "warning", "5": "notice", "6": "info", "7": "debug"}

# What a line without an envelope takes from the line above (rca.sources._base.inherit_frame); "indent"
# is the width of that line's envelope.
_CARRIED = ("ts", "ts_raw", "host", "program", "pid", "format", "indent")

FRAMED_SCHEMA = {
    "line": pl.Int64(),
    "text": pl.String(),
    "ts": pl.Datetime("us", "UTC"),
    "ts_raw": pl.String(),
    "ts_quality": pl.String(),
    "host": pl.String(),
    "program": pl.String(),
    "pid": pl.Int64(),
    "message": pl.String(),
    "severity": pl.String(),
    "format": pl.String(),
}


def is_registered_program_line(text: pl.Expr) -> pl.Expr:
    """Whether ``text`` is the line of a program with rules of its own, whatever its host ("апр 28 01:23:30 PC
    kernel: …": a host of capitals, no pid; "2024-12-04T10:00:00+0000 kernel: …" no host), for sniffing."""
    program = pl.coalesce(
        text.str.extract_groups(_SHORT_PROGRAM + MESSAGE_TAIL).struct.field("program"), text.str.extract_groups(_ISO_PROGRAM + MESSAGE_TAIL).struct.field("program")
    )
    return program.is_in(list(_PROGRAM_RULES)).fill_null(False)


def register_program(program: str, source: str | None, rules: MessageRules) -> None:
    """Route messages of syslog ``program`` (e.g. "kernel") to ``rules``, labelled ``source`` (None: the file's source)."""
    _PROGRAM_RULES[program] = (source, rules)


def register_applications(source: str, rules: MessageRules, recognises: pl.Expr) -> None:
    """Route the lines of a program without rules of its own to ``rules``, labelled ``source``, when
    ``recognises`` (an expression over ``message``) holds for a line of the same program and pid."""
    _APPLICATIONS[:] = [(source, rules, recognises)]


def frame_text(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Peel the syslog/journald envelope off each line.

    Lines without an envelope (continuations, stack dumps) keep ``message`` = the line and
    inherit the time, host and program of the line above.
    """
    one_line = not holds_newline(lines["text"])
    short = head_groups(pl.col("text"), SHORT_HEAD, one_line=one_line)
    iso = head_groups(pl.col("text"), ISO_HEAD, one_line=one_line)
    bare = head_groups(pl.col("text"), _BARE_HEAD, one_line=one_line)
    parts = lines.with_columns(short.alias("s"), iso.alias("i"), bare.alias("b"))
    parts = _with_real_host(_with_or_without_host(_with_or_without_host(parts, "s", _SHORT_NO_HOST_HEAD, one_line), "i", _ISO_NO_HOST_HEAD, one_line), "s", "i")
    s, i, b = pl.col("s").struct, pl.col("i").struct, pl.col("b").struct
    full = pl.when(i.field("zone").is_in(_UTC_NAMES)).then(pl.format("{}+00:00", i.field("full"))).otherwise(i.field("full"))
    iso_ts = map_distinct(parts.select(pl.coalesce(i.field("iso"), full)).to_series(), lambda text: timeutil.iso_to_utc(text, ctx.tz))
    parts = parts.with_columns(iso_ts=pl.coalesce(timeutil.epoch_to_utc(i.field("epoch").str.replace(".", "", literal=True)), iso_ts))
    short_ts, short_quality = timeutil.yearless_to_utc(
        timeutil.month_number(s.field("mon")), s.field("day"), s.field("clock"), ctx, within=within_file(lines)
    )
    has_short = s.field("message").is_not_null()
    has_iso = i.field("message").is_not_null()
    has_bare = b.field("message").is_not_null() & b.field("program").is_in(list(_PROGRAM_RULES))
    framed = parts.with_columns(
        ts=pl.when(has_short).then(short_ts).when(has_iso).then(pl.col("iso_ts")),
        ts_raw=pl.when(has_short).then(s.field("stamp"))
        .when(has_iso).then(pl.coalesce(i.field("iso"), pl.format("{} {} {}", i.field("weekday"), i.field("full"), i.field("zone")), i.field("epoch"))),
        ts_quality=pl.when(has_short).then(short_quality).when(has_iso).then(pl.lit("exact")),
        host=pl.coalesce(s.field("host"), i.field("host")),
        program=pl.when(has_short).then(s.field("program")).when(has_iso).then(i.field("program")).when(has_bare).then(b.field("program")),
        # strict=False: a pid past 2**63 (damage, not a process) is null rather than an error for the whole batch.
        pid=pl.coalesce(s.field("pid"), i.field("pid"), i.field("procid"), pl.when(has_bare).then(b.field("pid"))).cast(pl.Int64, strict=False),
        message=pl.when(has_short).then(s.field("message")).when(has_iso).then(i.field("message")).when(has_bare).then(b.field("message")).otherwise(pl.col("text")),
        severity=(i.field("pri").cast(pl.Int32, strict=False) % 8).cast(pl.String).replace_strict(_SEVERITY_BY_PRIORITY, default=None),
        format=pl.when(has_short).then(pl.lit("syslog")).when(has_iso).then(pl.lit("syslog_iso")).when(has_bare).then(pl.lit("syslog_bare")),
        framed=has_short | has_iso | has_bare,
        indent=pl.when(has_short | has_iso).then(pl.col("text")).str.len_chars()
        - pl.when(has_short).then(s.field("message")).when(has_iso).then(i.field("message")).str.len_chars(),
    )
    inherited = inherit_frame(framed, _CARRIED)
    # journalctl prints the further lines of a multi-line message (a traceback a unit logged) indented to
    # the column its first line's message starts at: without that margin they read as the program wrote them.
    # (Measured on the lines without an envelope alone: string functions skip nulls.)
    unframed = pl.when(~pl.col("framed")).then(pl.col("text"))
    margin = unframed.str.len_chars() - unframed.str.strip_chars_start(" ").str.len_chars()
    continued = (margin >= pl.col("indent")).fill_null(False)
    return inherited.with_columns(message=pl.when(continued).then(unframed.str.slice(pl.col("indent"))).otherwise(pl.col("message"))).select(
        *FRAMED_SCHEMA, *file_column(lines)
    )


def _with_or_without_host(parts: pl.DataFrame, hosted: str, no_host_head: str, one_line: bool) -> pl.DataFrame:
    """``parts`` with the groups of a head with a host (column ``hosted``) taken, where that head missed or misread
    a line ("systemd[1]:" is no host), from the same head without one (``no_host_head``, its host null)."""
    missed = pl.col(hosted).struct.field("message").is_null() | pl.col(hosted).struct.field("host").str.ends_with(":")
    without = parts.select(pl.when(missed).then(pl.col("text")).str.contains(no_host_head).fill_null(False)).to_series()
    # Most files have a host on every line: the groups are captured, and struct columns merged, only where needed.
    if not without.any():
        return parts
    no_host = head_groups(pl.when(without).then(pl.col("text")), no_host_head, one_line=one_line).struct.with_fields(host=pl.lit(None, pl.String))
    return parts.with_columns(pl.when(without).then(no_host).otherwise(pl.col(hosted)).alias(hosted))


def _with_real_host(parts: pl.DataFrame, *envelopes: str) -> pl.DataFrame:
    """The ``envelopes`` (struct columns of head groups) nulled where the host is missing or has no lower-case
    letter or digit, unless the program gives its pid or is one with rules of its own ("PC kernel:" is a host
    of capitals, "ERROR main:" a log level, "2024-12-04T10:00:00Z root: …" python logging)."""
    real = {}
    for name in envelopes:
        host, program = pl.col(name).struct.field("host"), pl.col(name).struct.field("program")
        plausible = host.str.contains("[a-z0-9]").fill_null(False) | pl.col(name).struct.field("pid").is_not_null() | program.is_in(list(_PROGRAM_RULES))
        real[name] = pl.when(plausible).then(pl.col(name))
    return parts.with_columns(**real)


_JOURNAL_JSON = pl.Struct(
    {
        "__REALTIME_TIMESTAMP": pl.String(),
        "_HOSTNAME": pl.String(),
        "SYSLOG_IDENTIFIER": pl.String(),
        "_COMM": pl.String(),
        "_PID": pl.String(),
        "SYSLOG_PID": pl.String(),
        "MESSAGE": pl.String(),
        "PRIORITY": pl.String(),
        "_TRANSPORT": pl.String(),
    }
)


def frame_journal_json(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Frame ``journalctl -o json`` lines (one JSON object a line)."""
    # json_path_match, unlike json_decode, yields null for a truncated or non-JSON line instead of raising.
    decoded = lines.with_columns(
        j=pl.struct([pl.col("text").str.json_path_match(f"$.{field.name}").alias(field.name) for field in _JOURNAL_JSON.fields])
    )
    j = pl.col("j").struct
    program = pl.when(j.field("_TRANSPORT") == "kernel").then(pl.lit("kernel")).otherwise(pl.coalesce(j.field("SYSLOG_IDENTIFIER"), j.field("_COMM")))
    ok = j.field("MESSAGE").is_not_null()
    return decoded.with_columns(
        ts=timeutil.epoch_to_utc(j.field("__REALTIME_TIMESTAMP")),
        ts_raw=j.field("__REALTIME_TIMESTAMP"),
        ts_quality=pl.when(j.field("__REALTIME_TIMESTAMP").is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("missing")),
        host=j.field("_HOSTNAME"),
        program=program,
        pid=pl.coalesce(j.field("SYSLOG_PID"), j.field("_PID")).cast(pl.Int64, strict=False),
        message=pl.when(ok).then(j.field("MESSAGE")).otherwise(pl.col("text")),
        severity=j.field("PRIORITY").replace_strict(_SEVERITY_BY_PRIORITY, default=None),
        format=pl.lit("journal_json"),
    ).select(*FRAMED_SCHEMA, *file_column(lines))


def frame(lines: pl.DataFrame, ctx: ParseContext, journal_json: pl.Expr) -> pl.DataFrame:
    """Frame the lines of each file as ``journalctl -o json`` where most of its lines are (``journal_json``
    tells of a line), else as text: a file is written one way or the other, and its neighbours in a
    batch may be written the other way."""
    share = journal_json.mean().over("batch_file") if within_file(lines) else journal_json.mean()
    return split_rows(lines, share > 0.5, lambda part: frame_journal_json(part, ctx), lambda part: frame_text(part, ctx))


def dispatch(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Apply each registered program's rules to its lines, and the applications' rules to the programs
    they recognise; other programs' lines stay ``kind=log`` (their ``source`` is left null, so the
    driver labels them with the file's source).

    Each program's rules get the framed columns (``line, text, ts, ts_raw, ts_quality,
    host, program, pid, message, severity, format``) and return event rows.
    """
    parts = []
    for program, (source, rules) in _PROGRAM_RULES.items():
        mine = framed.filter(pl.col("program") == program)
        if mine.height:
            parts.append(rules(mine, ctx).with_columns(source=pl.lit(source, pl.String)))
    rest = framed.filter(pl.col("program").is_null() | ~pl.col("program").is_in(list(_PROGRAM_RULES)))
    for source, rules, recognises in _APPLICATIONS:
        claimed = (recognises.fill_null(False) | pl.col("program").is_in(_JOB_PROGRAMS)).any().over([*file_column(rest), "host", "program", "pid"])
        applications = rest.filter(claimed)
        if applications.height:
            # What the rules made nothing of stays the file's, as other programs' lines do.
            events = rules(applications, ctx)
            parts.append(events.with_columns(source=pl.when(pl.col("kind") != "log").then(pl.lit(source))))
            rest = rest.filter(~claimed)
    if rest.height:
        parts.append(program_events(rest))
    return pl.concat(parts, how="diagonal_relaxed").sort("line") if parts else pl.DataFrame()


def program_events(framed: pl.DataFrame, victim_pid: pl.Expr | None = None, **facts: pl.Expr) -> pl.DataFrame:
    """One event a framed line: the envelope's time, host and format, and ``facts`` (a ``kind=log`` line of its
    program by default), for the rules of programs that read one line at a time.

    The envelope's pid is the program's own: a line about another process, a unit or a cgroup (a ``process``
    other than the program) does not keep it, and a line that names the pid it acted on takes ``victim_pid``.
    The lines without an envelope under a line (a multi-line message: systemd-coredump's stack trace) are its
    event's, as its first line says.
    """
    columns = {"kind": pl.lit("log"), "severity": pl.col("severity"), "process": pl.col("program"), **facts}
    own_pid = pl.when(pl.col("process").eq_missing(pl.col("program"))).then(pl.col("pid"))
    envelope = ["ts_raw", "host", "program", "envelope_pid", *file_column(framed)]
    events = framed.select(
        "line", "ts", "ts_raw", "ts_quality", "host", "message", "format", "pid", "program", *file_column(framed), n_lines=pl.lit(1, pl.Int32),
        victim_pid=pl.lit(None, pl.Int64) if victim_pid is None else victim_pid, envelope_pid="pid", **columns,
    ).with_columns(pid=pl.coalesce("victim_pid", own_pid)).drop("victim_pid")
    # A line without an envelope carries the one above it (blank lines, dropped, may lie between).
    same = pl.all_horizontal(pl.col(name).eq_missing(pl.col(name).shift(1)) for name in envelope)
    continued = (pl.col("ts_quality") == "inherited") & same
    if events.select(continued.any()).item():
        events = events.group_by((~continued).cum_sum().alias("record"), maintain_order=True).agg(
            pl.exclude("record", "message", "n_lines").first(), message=pl.col("message").str.join("\n"),
            n_lines=pl.len().cast(pl.Int32),
        )
    return events.drop("record", "program", "envelope_pid", *file_column(framed), strict=False)
