"""System logs in a syslog or journald envelope: ``/var/log/syslog``, ``messages``, ``journalctl``.

The envelope (time, host, program[pid]) is peeled off by :mod:`rca.sources._syslog`; each
line then goes to the rules of the program that wrote it (the kernel's, kubelet's), and
lines of programs nobody has rules for (systemd, containerd, sshd…) are kept as
``kind=log`` events with their time, host, process and pid. The kernel and kubelet
sources claim files written mostly by their own program; this source claims the mixed rest.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rca.sources import _syslog, register
from rca.sources._base import ParseContext, Parsed, Source

# Below a dedicated source's score for a file that is all its own program's lines, above
# its score for a file where that program is a minority.
_ENVELOPE_CONFIDENCE = 0.85


def sniff(head: Sequence[str]) -> float:
    """Share of the head in a syslog / journald envelope, scaled below a single-program file's score."""
    texts = pl.Series("text", list(head), dtype=pl.String)
    if texts.len() == 0:
        return 0.0
    framed = texts.str.contains(_syslog.SHORT_LINE) | texts.str.contains(_syslog.ISO_LINE) | _is_journal_json(texts)
    return float(framed.mean() or 0.0) * _ENVELOPE_CONFIDENCE


def _is_journal_json(texts: pl.Series) -> pl.Series:
    return texts.str.starts_with("{") & texts.str.contains('"__REALTIME_TIMESTAMP"', literal=True)


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Frame every line, route each program's lines to its rules, keep the rest as log events."""
    as_json = _is_journal_json(lines["text"]).mean() or 0.0
    framed = _syslog.frame_journal_json(lines, ctx) if as_json > 0.5 else _syslog.frame_text(lines, ctx)
    return Parsed(events=_syslog.dispatch(framed, ctx))


SOURCE = register(
    Source(name="syslog", sniff=sniff, parse=parse, sniff_literals=(":",), formats=("syslog", "syslog_iso", "journal_json"), line_local=True)
)
