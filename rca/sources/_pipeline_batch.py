"""The memory figures of PBS / Torque, LSF and Grid Engine job reports, on the event of the job's end.

A scheduler reports a job's peak memory and its request on lines of their own, around the line that states
how the job ended: Torque's end mail and `qstat -f` (``resources_used.mem=251686472kb``, ``Resource_List.mem = 4gb``
beside ``Exit_status=271``), PBS's accounting ``E`` record (all on one line), LSF's job report (``Max Memory :  13062 MB``,
``Total Requested Memory :  25600.00 MB`` below ``TERM_MEMLIMIT: …`` / ``Exited with exit code 143.``) and ``qacct -j``
(``maxvmem  1.656G``, a ``category`` line's ``-l h_vmem=8G`` around ``exit_status  0``).

The figures of one record go on the first line of it that states the job's end (``rss_bytes``, ``mem_requested_bytes``):
that is the event a reader of the job's failure looks at. A record is the lines
from one record's first line (qacct's rule of "=", ``PBS Job Id:``, ``Job Id:``, LSF's ``Sender: LSF System``) to the
next; a record that states no end keeps each figure on its own line.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from rca.sources._pipeline_rules import _PBS_EXIT, _SGE_EXIT, _bytes, _pbs_bytes

# What a message must hold for any figure to be read at all: one cheap test over the batch.
_GATE = r"resources_used\.mem|Resource_List\.mem|Max Memory :|Total Requested Memory :|maxvmem|^category"
# (a PBS accounting file is a record a line: "04/01/2020 10:00:00;E;102.pbs01;user=… Exit_status=0 resources_used.mem=…")
_RECORD_START = r"^={20,}\s*$|^PBS Job Id: |^Job Id: |^Sender: LSF System|^[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2};[A-Z];"
# LSF's words for a job's end: its TERM_ reason first, then its exit ("Exited with exit code 143.", "Successfully completed.")
_LSF_END = r"^TERM_[A-Z]+: |^Exited with exit code -?[0-9]+\.|^Successfully completed\.\s*$"

# PBS sizes: a number and a 1024-based unit of bytes ("kb", "mb", "gb"; some sites print them upper case), bytes without one.
_PBS_SIZE = r"([0-9]+)([kKmMgGtT]?[bB])?(?:\s|$)"
# LSF's: "13062 MB", "25600.00 MB", 1024-based ("-" where it measured nothing).
_LSF_SIZE = r":\s+([0-9]+(?:\.[0-9]+)?) ([KMGT]B)\s*$"
# Grid Engine's memory specifier: K/M/G/T are 1024-based, k/m/g/t 1000-based; qacct prints "1.656G", a bare number is bytes.
_SGE_SIZE = r"([0-9]+(?:\.[0-9]+)?)([KMGTkmgt]?)"
_SGE_UNIT_BYTES = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "k": 1000, "m": 1000**2, "g": 1000**3, "t": 1000**4}


def _sge_bytes(number: pl.Expr, unit: pl.Expr) -> pl.Expr:
    """Bytes of a Grid Engine memory figure (:data:`_SGE_UNIT_BYTES`)."""
    factor = unit.fill_null("").replace_strict(_SGE_UNIT_BYTES, default=None, return_dtype=pl.Float64)
    return (number.cast(pl.Float64, strict=False) * factor).round().cast(pl.Int64, strict=False)


def _size(text: pl.Expr, pattern: str, to_bytes: Callable[[pl.Expr, pl.Expr], pl.Expr]) -> pl.Expr:
    """Bytes of ``pattern``'s number (group 1) and unit (group 2) in ``text``, null where it is absent."""
    return to_bytes(text.str.extract(pattern, 1), text.str.extract(pattern, 2))


def _figures(message: pl.Expr) -> dict[str, pl.Expr]:
    """Each message's own figures, by what they are."""
    def pbs(name: str) -> pl.Expr:
        return _size(message, rf"(?:^|[\s;]){name} ?= ?{_PBS_SIZE}", _pbs_bytes)

    category = message.str.extract(r"^category:? +(.*)$", 1)
    return {
        "b_rss": pl.coalesce(
            pbs(r"resources_used\.mem"), _size(message, rf"^\s*Max Memory {_LSF_SIZE}", _bytes),
            # qacct's maxvmem is the job's peak virtual size, not its resident set: the nearest figure Grid Engine keeps
            _size(message, rf"^maxvmem:? +{_SGE_SIZE}\s*$", _sge_bytes),
        ),
        # h_vmem (the limit the execd kills at) before mem_free (a scheduling hint); both per slot, as requested
        "b_requested": pl.coalesce(
            pbs(r"Resource_List\.mem"), _size(message, rf"^\s*Total Requested Memory {_LSF_SIZE}", _bytes),
            *(_size(category, rf"(?:^|\s|,){name}={_SGE_SIZE}(?:[,\s]|$)", _sge_bytes) for name in ("h_vmem", "mem_free")),
        ),
    }


def with_job_figures(events: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """``events`` (in line order) with each scheduler record's memory figures on the event of the job's end; of a batch of
    several files (``lines``' ``batch_file``) no record runs on from one file into the next."""
    message = pl.col("message")
    if not events.select(message.str.contains(_GATE).any()).item():
        return events
    joined = "batch_file" in lines.columns and "batch_file" not in events.columns
    files = events.join(lines.select("line", "batch_file"), on="line", how="left", maintain_order="left") if joined else events
    ends = message.str.contains(_PBS_EXIT) | message.str.contains(_SGE_EXIT) | message.str.contains(_LSF_END)
    keyed = files.with_columns(
        **_figures(message),
        b_record=message.str.contains(_RECORD_START).cum_sum(),
        b_end=ends.fill_null(False),
    )
    record = ["b_record", *(["batch_file"] if "batch_file" in keyed.columns else [])]
    anchor = pl.col("b_end") & (pl.col("b_end").cum_sum().over(record) == 1)
    has_end = pl.col("b_end").any().over(record)

    def placed(name: str) -> pl.Expr:
        return pl.when(anchor).then(pl.col(name).drop_nulls().first().over(record)).when(~has_end).then(pl.col(name))

    return keyed.with_columns(
        rss_bytes=pl.coalesce("rss_bytes", placed("b_rss")),
        mem_requested_bytes=pl.coalesce("mem_requested_bytes", placed("b_requested")),
    ).drop("b_rss", "b_requested", "b_record", "b_end", *(["batch_file"] if joined else []))
