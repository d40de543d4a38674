"""grep's prefix on the lines it prints, and the rule that tells a file of grep's output from a log.

The pipeline source peels it off the lines it reads, and the grep_output source reads what is under it as
the log it came from; both use this one rule.
"""

from __future__ import annotations

import polars as pl

from rca.sources._base import split_rows

# `grep -n`'s line number before each line, with the file's name before it where grep names files (`-H`, several files):
# "train.log:1234:[rank0]: …", "1234:[rank3]: …"; a context line (`-A`, `-B`, `-C`) has dashes for colons
# ("train.log-1233-  File …"); `grep -H` alone leaves the name ("train.log:[rank0]: …"). A log's name (.log, .txt, .out,
# .err, PBS's .o<job>) is a file's wherever it stands, so that a logger's "torch.distributed:" is no file.
# logrotate's suffixes ("kern.log.1", "messages-20240101", zgrep's "syslog.2.gz"; a `dateformat -%Y-%m-%d-%s` one,
# "messages-2024-04-02-1712016061.gz", before a line number: without one it reads as a context line's "FILE-NUMBER-")
# may follow any name.
_ROTATION = r"(?:\.[0-9]+|-[0-9]{8}(?:[0-9]{2}){0,3}|-[0-9]{4}-[0-9]{2}-[0-9]{2}(?:-[0-9]{9,10})?|\.(?:gz|bz2|xz|zst))"
_LOG_NAME = rf"[^\s:]*[^\s:.]\.(?:log|txt|out|err|[oe][0-9]+){_ROTATION}*"
# Other names are syslog's own files in a folder ("/var/log/syslog", "journal/node1/kern") or bare ("messages"), or a
# name with a rotation suffix ("syslog.1", "/var/log/messages-20240101"), ending in a letter (so that a context line's
# "-1233-" is no part of it). A path alone is no file's: a source location ("…/torch/cuda/__init__.py:52: UserWarning",
# a compiler's "main.go:12:5:"), a Bazel target ("//tensorflow/core/kernels:matmul_op_test") or an image
# ("nvcr.io/nvidia/pytorch:24.01-py3") is the line's own text.
_SYSTEM_LOG = r"(?:syslog|messages|kern|dmesg|daemon|auth|secure|cron|user|debug|boot|maillog)"
_WIDE_NAME = (
    rf"(?:[^\s:]*/{_SYSTEM_LOG}{_ROTATION}*|(?:[^\s:]*/)?[0-9A-Za-z_@+-]*[A-Za-z]{_ROTATION}+|(?:syslog|messages|dmesg){_ROTATION}*)"
)
GREP_FILE = rf"(?:{_LOG_NAME}|{_WIDE_NAME})"
# Without a line number such a name counts only where the text under it starts at once, as a log's line does: a program's
# "/usr/bin/python: error while loading …" or a kernel's "kernel: …" has a space after its colon, and a source
# location's number is followed by one (NCCL's "include/alloc.h:228 NCCL WARN …").
GREP_PREFIX = (
    rf"^(?:(?<grep_prefix>(?<grep_file>{_LOG_NAME}):(?:(?<grep_line>[0-9]{{1,9}}):)?|(?<wide_file>{_WIDE_NAME}):(?<wide_line>[0-9]{{1,9}}):"
    rf"|(?:(?<context_file>{GREP_FILE})-)?(?<context_line>[0-9]{{1,9}})-|(?<bare_line>[0-9]{{1,9}}):)"
    rf"|(?<named_prefix>(?<named_file>{_WIDE_NAME}):)[0-9]*[^\s0-9])"
)
# A date or a time of day at a line's start has a bare number's shape ("2024-05-01 …", "12:34:56 …").
_STAMP_START = r"^(?:[0-9]{4}-[0-9][0-9]-[0-9][0-9]|[0-9][0-9]:[0-9][0-9]:[0-9][0-9])"
_GREP_FIELDS = {"grep_prefix": pl.String(), "grep_name": pl.String(), "grep_number": pl.Int64()}
# Most of a file's lines wear grep's prefix, and the numbers of most go up: a time's hours ("12:34:56 …"), a date's year
# ("2024-05-01 …") or `srun --label`'s task numbers ("0: …", "1: …") stay or go down as often.
GREP_WORN_SHARE = 0.75
GREP_RISING_SHARE = 0.9


def file_share(tagged: pl.Expr, lines: pl.DataFrame) -> pl.Expr:
    """The share of the rows of each file of ``lines`` (each ``batch_file`` where it has several) where ``tagged`` holds."""
    return tagged.mean().over("batch_file") if "batch_file" in lines.columns else tagged.mean()


def _grep_groups(rows: pl.DataFrame) -> pl.DataFrame:
    groups = pl.col("text").str.extract_groups(GREP_PREFIX).struct
    return rows.with_columns(
        grep_prefix=pl.coalesce(groups.field("grep_prefix"), groups.field("named_prefix")),
        grep_name=pl.coalesce(*(groups.field(name) for name in ("grep_file", "wide_file", "context_file", "named_file"))),
        grep_number=pl.coalesce(*(groups.field(name) for name in ("grep_line", "wide_line", "context_line", "bare_line"))).cast(pl.Int64),
    )


def _no_groups(rows: pl.DataFrame) -> pl.DataFrame:
    return rows.with_columns(pl.lit(None, dtype).alias(name) for name, dtype in _GREP_FIELDS.items())


def without_grep_prefix(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` without the prefix grep put on them, in a file most of whose lines wear it (each batch file decides)."""
    shaped = pl.col("text").str.contains(GREP_PREFIX)
    # In most files few lines have the shape (the cheaper test first), and in a stamped one the stamps do.
    for shape in (shaped, shaped & ~pl.col("text").str.contains(_STAMP_START)):
        if not lines.select((file_share(shape, lines) >= GREP_WORN_SHARE).any()).item():
            return lines
    prefixed = split_rows(lines, shape, _grep_groups, _no_groups)
    worn = pl.col("grep_prefix").is_not_null()
    by_name = ["batch_file", "grep_name"] if "batch_file" in lines.columns else ["grep_name"]
    number = pl.col("grep_number")
    # A lone number is no count, unless a file's name is before it: "2024-" is a date's year.
    rising = _rising_share(number, prefixed, by_name).fill_null(pl.col("grep_name").is_not_null().cast(pl.Float64))
    peel = worn & (file_share(worn, prefixed) >= GREP_WORN_SHARE) & (number.is_null() | (rising >= GREP_RISING_SHARE))
    return _without(prefixed, peel, "grep_prefix").select(lines.columns)


def _rising_share(number: pl.Expr, lines: pl.DataFrame, by: list[str]) -> pl.Expr:
    """The share of each file's numbered lines whose ``number`` is above that of the numbered line before it (within ``by``);
    null where a file has one number only."""
    prior = number.forward_fill().shift(1)
    rising = number > (prior.over(by) if by else prior)
    return file_share(rising.filter(rising.is_not_null()), lines)


def _without(framed: pl.DataFrame, peel: pl.Expr, prefix: str) -> pl.DataFrame:
    """``framed`` whose lines where ``peel`` holds lose the text of their ``prefix`` column."""
    return framed.with_columns(text=pl.when(peel).then(pl.col("text").str.slice(pl.col(prefix).str.len_chars())).otherwise("text"))


# A pasted log's own numbers before its lines, as `cat -n` and `nl` print them (right-aligned, a tab after: "     7\t[   12.3] …")
# and an editor or a web viewer (a space or more after: "166233 Apr 18 00:37:34   kernel: …"). A dmesg stamp ("[ 12.3]"), a
# time ("12:34:56"), srun's label ("0: ") and an epoch stamp (ten digits) have no such shape.
LINE_NUMBER = r"^(?<numbering> *(?<number>[0-9]{1,9})(?:\t| +|$))"


def without_line_numbers(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` without the numbers a viewer put before them, in a file most of whose lines wear one, rising as grep's do
    (each batch file decides): a log whose own lines open with a number keeps it."""
    text = pl.col("text")
    content = text.str.strip_chars() != ""
    numbered = text.str.contains(LINE_NUMBER)
    worn_share = file_share(numbered.filter(content), lines)
    if not lines.select((worn_share >= GREP_WORN_SHARE).any()).item():
        return lines
    groups = text.str.extract_groups(LINE_NUMBER).struct
    framed = lines.with_columns(numbering=groups.field("numbering"), number=groups.field("number").cast(pl.Int64))
    number = pl.col("number")
    # a lone number is no count
    rising = _rising_share(number, lines, ["batch_file"] if "batch_file" in lines.columns else []).fill_null(0.0)
    peel = number.is_not_null() & (worn_share >= GREP_WORN_SHARE) & (rising >= GREP_RISING_SHARE)
    return _without(framed, peel, "numbering").select(lines.columns)
