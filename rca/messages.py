"""What a message says in one line: the headline every view and the incident signature show.

A multi-line event (a traceback, the kernel's OOM-killer report, a ``kubectl describe`` excerpt)
is kept whole in ``message``; readers and the clustering stage need the one line of it that
names the failure, not the line it happens to end with.
"""

from __future__ import annotations

import polars as pl

_TRACEBACK = r"Traceback \(most recent call last\)|(?m)^\s*File \"[^\"]+\", line [0-9]+"
_NOT_AN_EXCEPTION_LINE = r"^\s|Traceback \(most recent call last\)|^(During handling of|The above exception)"


def headline(message: pl.Expr | str = "message") -> pl.Expr:
    """The one line of a (multi-line) message a reader needs: a traceback's exception, else a block's own headline.

    A Python traceback's exception is its last line that is not a frame (``RuntimeError: DataLoader worker …``). Any
    other block reads from its top: the kernel's OOM-killer report and Xid lines, an nvidia-smi or systemd report. A
    ``kubectl describe`` excerpt says it in its ``Message:`` (else ``Reason:``) field, not in its first field (``Name:``,
    ``State:``) nor its last (``Controlled By:``). One-line messages are themselves.
    """
    text = (pl.col(message) if isinstance(message, str) else message).fill_null("").str.strip_chars_end()  # frames keep their indent
    lines = text.str.split("\n").list.eval(pl.element().filter(pl.element().str.strip_chars() != ""))
    exception = lines.list.eval(pl.element().filter(~pl.element().str.contains(_NOT_AN_EXCEPTION_LINE))).list.last()
    field = pl.coalesce(text.str.extract(r"(?m)^[ \t]*(Message:[ \t]*\S.*)$"), text.str.extract(r"(?m)^[ \t]*(Reason:[ \t]*\S.*)$"))
    first = lines.list.first()  # also a traceback cut before its exception: what raised it, not a frame's code
    chosen = pl.when(text.str.contains(_TRACEBACK)).then(pl.coalesce(exception, first)).otherwise(pl.coalesce(field, first))
    return pl.coalesce(chosen, pl.lit("")).str.strip_chars().str.replace_all(r"[ \t]{2,}", " ")


def headline_of(message: str | None) -> str:
    """:func:`headline` of one message."""
    return pl.select(headline(pl.lit(message, pl.String))).item()
