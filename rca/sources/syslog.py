"""System logs in a syslog or journald envelope: ``/var/log/syslog``, ``messages``, ``journalctl`` (its line
formats, and the records of ``-o verbose`` / ``-o json-pretty`` / ``-o export``).

The envelope (time, host, program[pid]) is peeled off by :mod:`rca.sources._syslog`; each
line then goes to the rules of the program that wrote it (the kernel's, kubelet's), an
application's (a program that printed a traceback, a CUDA OOM, NCCL lines) to the pipeline
source's rules, and lines of programs nobody has rules for (sshd, cron…) are
kept as ``kind=log`` events with their time, host, process and pid. A container runtime's own log file, its logrus lines
bare (no envelope), is read here too, with the runtime's rules. The kernel and kubelet
sources claim files written mostly by their own program; this source claims the mixed rest.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rca.sources import (
    _audit,  # noqa: F401  (registers the rules of journald's audit records: a process dead of a core-dumping signal)
    _containerd,  # noqa: F401  (registers the rules of the container runtimes' lines: containerd, dockerd, CRI-O, conmon)
    _earlyoom,  # noqa: F401  (registers the rules of earlyoom's lines)
    _fabricmanager,  # noqa: F401  (registers the rules of NVIDIA Fabric Manager's lines)
    _syslog,
    _systemd,  # registers the rules of systemd's, systemd-oomd's and journald's lines
    register,
)
from rca.sources._base import ParseContext, Parsed, Source, by_head, one_head

# Below a dedicated source's score for a file that is all its own program's lines, above
# its score for a file where that program is a minority.
_ENVELOPE_CONFIDENCE = 0.85
# A container runtime's bare log (logrus lines, its own wordings among them) is also the pipeline source's logfmt, which
# scores it up to 0.8: this source claims it above that.
_BARE_RUNTIME_CONFIDENCE = 0.9


# An application's logger line has the shape of an ISO-stamped syslog line whose program is a level: Python logging's
# "%(asctime)s %(name)s %(levelname)s: %(message)s" ("2020-08-18 10:03:40,666 tan.trainer INFO: Start training"), where
# the logger would be read as the host. No syslog daemon names a program INFO or ERROR.
_LOGGER_LINE = (
    r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9][ T][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]+)?\S* \S+ "
    r"(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL):? "
)


def sniff(head: Sequence[str]) -> float:
    """Share of the head in a syslog / journald envelope, scaled below a single-program file's score."""
    return one_head(sniff_heads, head)


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """:func:`sniff` of each head of :func:`~rca.sources._base.heads_frame`."""
    text = pl.col("text")
    framed = (
        text.str.contains(_syslog.SHORT_LINE) | text.str.contains(_syslog.SHORT_PID_LINE) | text.str.contains(_syslog.ISO_LINE) | _is_journal_json(text)
        | text.str.contains(_syslog.ISO_PID_LINE) | _syslog.is_registered_program_line(text)
        | (text.str.starts_with("[") & (text.str.contains(_syslog.MONOTONIC_PID_LINE) | text.str.contains(_syslog.MONOTONIC_DELTA_LINE)))
        | text.str.contains(_syslog.RELAYED_5424) | _syslog.is_syslogd_own_line(text) | _syslog.is_logread_line(text)
        # A program's own lines without an envelope (earlyoom's stderr, `journalctl -u earlyoom -o cat`).
        | _syslog.own_bare_program(text).is_not_null()
    ) & ~text.str.contains(_LOGGER_LINE)
    record = _syslog.is_record_line(text)
    # A "{" or "}" alone on its line is a `-o json-pretty` record's only in a head that holds a record's field or time: other
    # JSON pretty-printed (`kubectl logs … | jq`'s records, a document) is not journalctl's.
    brace = text.str.contains(r"^[ \t]*[{}],?[ \t]*$")
    record = record & (~brace | (record & ~brace).any().over("head"))
    # (A field of `journalctl -o export` is a record's only in a head that holds a record's time.)
    if heads.select(text.str.starts_with(_syslog.EXPORT_OPENING).any()).item():
        record = record | _syslog.is_export_field(text, "head")
    # The further lines of a multi-line message are indented under its first (journalctl): they are the envelope's;
    # so are the indented fields of a `journalctl -o verbose` or `-o json-pretty` record.
    share = (framed | record).filter(~text.str.starts_with(" ") | record).mean()
    if not heads.select((_syslog.opens_like_logrus(text) | _syslog.is_runtime_event(text)).any()).item():
        return {head: float(row["share"] or 0.0) * _ENVELOPE_CONFIDENCE for head, row in by_head(heads, share=share).items()}
    # (The runtimes' wordings and saved events are looked for only in heads with a line that may be one.)
    runtime = _syslog.runtime_of_bare_lines(text, None).is_not_null() | _syslog.runtime_event(text).struct.field("runtime").is_not_null()
    bare = (framed | record | runtime).filter(~text.str.starts_with(" ") | record).mean()
    # (A head without a runtime's bare line keeps the envelope's score: the heads of a batch are sniffed together.)
    return {
        head: float(row["bare"] or 0.0) * _BARE_RUNTIME_CONFIDENCE if row["runtime"] else float(row["share"] or 0.0) * _ENVELOPE_CONFIDENCE
        for head, row in by_head(heads, share=share, bare=bare, runtime=runtime.any()).items()
    }


def _is_journal_json(texts: pl.Expr) -> pl.Expr:
    return texts.str.starts_with("{") & texts.str.contains('"__REALTIME_TIMESTAMP"', literal=True)


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Frame every line, route each program's lines to its rules, keep the rest as log events."""
    events = _syslog.dispatch(_syslog.frame(lines, ctx, _is_journal_json(pl.col("text"))), ctx)
    return Parsed(events=_syslog.with_log_driver_containers(events, lines))


SOURCE = register(
    Source(
        name="syslog", sniff=sniff, sniff_heads=sniff_heads, parse=parse, sniff_literals=(":", _syslog.EXPORT_OPENING, *_systemd.OOMD_BARE_LITERALS),
        formats=(
            "syslog", "syslog_iso", "syslog_bare", "logrus", "docker_events", "podman_events", "journal_monotonic", "journal_json", "journal_verbose",
            "journal_export",
        ),
        line_local=True, segmented=True,
    )
)
