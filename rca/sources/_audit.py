"""The audit subsystem's ANOM_ABEND record: a process that died of a signal that dumps core.

The kernel prints the record itself where no auditd takes it (``kernel: audit: type=1701 audit(…): … pid=314359
comm="python3" exe="/usr/local/bin/python3.12" sig=11 res=1``, read by the kernel's rules), and journald files
the same record under the identifier ``audit`` with the pid it is about (``audit[314359]: ANOM_ABEND auid=1000 …
pid=314359 comm="python3" … sig=11 res=1``), read here. Either is often a crashed trainer's only trace besides
the kernel's segfault line: the event names the process (its ``comm``; one audit finds unsafe to print, with a
space or a quote, is written in hex, unquoted) and the signal, an error, since only the signals that dump core
(and, before 3.5, seccomp's SIGKILL) are reported so. Other audit records stay ``log`` lines of ``audit``.
"""

from __future__ import annotations

import polars as pl

from rca.sources import _syslog
from rca.sources._base import ParseContext, attrs_json

ABEND_FIELDS = r"""\bpid=(?<pid>[0-9]+) comm=(?:"(?<name>[^"]*)"|(?<hex_name>(?:[0-9A-F]{2})+)) .*?\bsig=(?<signal>[0-9]+)"""
_JOURNAL_ABEND = r"^ANOM_ABEND .*?" + ABEND_FIELDS


def comm(name: pl.Expr, hex_name: pl.Expr) -> pl.Expr:
    """The task's name as the record gives it: quoted, or hex-encoded where it held a character audit will not print."""
    return pl.coalesce(name, hex_name.str.decode("hex", strict=False).cast(pl.String, strict=False))


def audit_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for journald's ``audit`` lines: an ANOM_ABEND names the crashed process and its signal, an error."""
    abend = pl.col("abend").struct
    crashed = abend.field("signal").is_not_null()
    message = pl.col("message")
    return _syslog.program_events(
        framed.with_columns(abend=pl.when(message.str.starts_with("ANOM_ABEND ")).then(message).str.extract_groups(_JOURNAL_ABEND)),
        victim_pid=abend.field("pid").cast(pl.Int64, strict=False),
        severity=pl.when(crashed).then(pl.lit("error")).otherwise(pl.col("severity")),
        process=pl.when(crashed).then(comm(abend.field("name"), abend.field("hex_name"))).otherwise(pl.col("program")),
        attrs=attrs_json({"signal": abend.field("signal").cast(pl.Int64, strict=False)}),
    )


# Not a source of its own: its lines are the file's, as other programs' lines are.
_syslog.register_program("audit", None, audit_rules)
