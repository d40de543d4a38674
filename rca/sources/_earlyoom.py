"""earlyoom's lines: a user-space OOM killer that signals the process of the highest badness.

A desktop or a GPU box without systemd-oomd runs earlyoom; when memory runs low it kills
before the kernel does, so the journal has no kernel OOM line for its victim:

* ``low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%`` (``mem  1.66%`` under 10 %) → ``memory_pressure``;
* ``sending SIGTERM to process 29410 uid 1000 "cluster": badness 1264, VmRSS 23964 MiB`` (1.6–1.7;
  ``oom_score 1146, oom_score_adj 0, VmRSS … MiB, cmdline "…"`` since 1.8; ``killing process 27541 "bash"
  with signal 15: badness 550, VmRSS 7609 MiB`` or ``Killing process 'tail' with signal 15, pid: 24059,
  badness: 997, VmRSS: 4278 MiB`` in older ones) → ``oom_kill`` of that pid and name, its
  resident memory in ``rss_bytes``, the signal and the user in attrs. When the victim outlives the signal
  (``kill failed: Timer expired``), earlyoom signals it again: a signal to the process its last one went to is
  the same kill, not a second one (a ``log`` event with ``resent`` in attrs); ``process 906175 did not exit`` and
  ``kill failed: Timer expired`` are warnings.

Registered with :mod:`rca.sources._syslog` as the rules of program ``earlyoom``; the envelope's pid
is earlyoom's own, kept only on the lines that name no victim.
"""

from __future__ import annotations

import polars as pl

from rca.sources import _syslog
from rca.sources._base import ParseContext, attrs_json, file_column

_MIB = 1024 * 1024
_LINE = (
    r"^(?:(?:sending (?<signal>SIG[A-Z0-9]+) to process (?<pid>[0-9]+) uid (?<uid>[0-9]+) \"(?<name>[^\"]*)\""
    r"|[Kk]illing process (?:(?<old_pid>[0-9]+) )?[\"'](?<old_name>[^\"']*)[\"'] with signal (?<signo>[0-9]+)(?:, pid: (?<pid_after>[0-9]+))?)"
    r"[:,] (?<score_name>badness|oom_score):? (?<score>-?[0-9]+).*?VmRSS:? (?<rss>[0-9]+) MiB"
    # The limits are printed "%5.2f": a limit under 10 % is padded ("mem  1.66%").
    r"|(?<low>low memory!) at or below (?<limit_signal>SIG[A-Z0-9]+) limits: mem +(?<mem_pct>[0-9.]+) ?%, swap +(?<swap_pct>[0-9.]+) ?%)"
)
_SIGNALS = {"9": "SIGKILL", "15": "SIGTERM"}


def earlyoom_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for earlyoom's lines: the low-memory alarm and each process it signalled."""
    # Matched once: an expression is evaluated wherever it is used.
    framed = framed.with_columns(earlyoom=pl.col("message").str.extract_groups(_LINE))
    line = pl.col("earlyoom").struct
    victim = pl.coalesce(line.field("pid"), line.field("old_pid"), line.field("pid_after")).cast(pl.Int64, strict=False)
    killed, low = victim.is_not_null(), line.field("low").is_not_null()
    # The victim of the earlyoom's signal before this one (one earlyoom: its host and pid, in its file).
    last_victim = pl.when(killed).then(victim).forward_fill().shift(1).over([*file_column(framed), "host", "pid"])
    resent = killed & (victim == last_victim).fill_null(False)
    survived = pl.col("message").str.starts_with("kill failed: ") | pl.col("message").str.ends_with(" did not exit")
    return _syslog.program_events(
        framed,
        victim_pid=victim,
        kind=pl.when(killed & ~resent).then(pl.lit("oom_kill")).when(low).then(pl.lit("memory_pressure")).otherwise(pl.lit("log")),
        # "process 906175 did not exit", "kill failed: Timer expired": the victim outlived the signal, the memory with it.
        severity=pl.when(killed).then(pl.lit("error")).when(low | survived).then(pl.lit("warning")).otherwise(pl.col("severity")),
        process=pl.when(killed).then(pl.coalesce(line.field("name"), line.field("old_name"))).otherwise(pl.col("program")),
        rss_bytes=line.field("rss").cast(pl.Int64, strict=False) * _MIB,
        attrs=attrs_json({
            "oom": pl.when(killed).then(pl.lit("earlyoom")),
            "resent": pl.when(resent).then(pl.lit(True)),
            "signal": pl.coalesce(line.field("signal"), line.field("signo").replace_strict(_SIGNALS, default=None), line.field("limit_signal")),
            "uid": line.field("uid").cast(pl.Int64, strict=False),
            "oom_score": pl.when(line.field("score_name") == "oom_score").then(line.field("score").cast(pl.Int64, strict=False)),
            "badness": pl.when(line.field("score_name") == "badness").then(line.field("score").cast(pl.Int64, strict=False)),
            "mem_limit_pct": line.field("mem_pct").cast(pl.Float64, strict=False),
            "swap_limit_pct": line.field("swap_pct").cast(pl.Float64, strict=False),
        }),
    )


# Not a source of its own: its lines are the file's, as other programs' lines are.
_syslog.register_program("earlyoom", None, earlyoom_rules)
