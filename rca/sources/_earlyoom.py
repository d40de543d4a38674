"""earlyoom's lines: a user-space OOM killer that signals the process of the highest badness.

A desktop or a GPU box without systemd-oomd runs earlyoom; when memory runs low it kills
before the kernel does, so the journal has no kernel OOM line for its victim:

* ``low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%`` (``mem  1.66%`` under 10 %) → ``memory_pressure``;
* ``sending SIGTERM to process 29410 uid 1000 "cluster": badness 1264, VmRSS 23964 MiB`` (1.6–1.7; 1.3 names no uid;
  ``oom_score 1146, oom_score_adj 0, VmRSS … MiB, cmdline "…"`` since 1.8; ``killing process 27541 "bash"
  with signal 15: badness 550, VmRSS 7609 MiB`` or ``Killing process 'tail' with signal 15, pid: 24059,
  badness: 997, VmRSS: 4278 MiB`` in older ones) → ``oom_kill`` of that pid and name, its
  resident memory in ``rss_bytes``, the signal and the user in attrs. When the victim outlives the signal
  (``kill failed: Timer expired``), earlyoom signals it again: a signal to the process its last one went to is
  the same kill, not a second one (a ``log`` event with ``resent`` in attrs); ``process 906175 did not exit``,
  ``kill failed: Timer expired`` and ``kill_release: pid=906175: process_mrelease pidfd=4 failed: Invalid argument`` are warnings.

nohang (and its desktop flavour, ``nohang-desktop``) does the same job in Python; it logs a report over many
lines, each its own journal entry (a multi-line message), naming its victim before it acts on it:
``Process with highest badness (found in 590 ms):`` / ``  PID: 32706, Name: python3, badness: 572``, then a
``Victim status (found in 1 ms):`` block (``  Name:      python3``, ``  PID:       32706``, ``  VmRSS:     10432 MiB  (Anon: …)``,
``  CGroup_v2: /user.slice/…``; since 0.2 ``  PID:       32706, name: python3, …`` and ``  Vm, MiB:   Size: …, RSS: …``;
0.1's ``Victim VmRSS: 3268608 KiB``), then ``Implement a corrective action:`` / ``  Send SIGTERM to the victim; total
response time: 2255 ms`` (``Implementing a corrective action:`` / ``  Sending SIGTERM to the victim`` since 0.2) →
``oom_kill`` of the victim the lines before it named (since its last signal): its pid, name, resident memory and
cgroup. ``Memory status that requires corrective actions:`` → ``memory_pressure``.

Registered with :mod:`rca.sources._syslog` as the rules of programs ``earlyoom``, ``nohang`` and ``nohang-desktop``;
the envelope's pid is the daemon's own, kept only on the lines that name no victim. earlyoom's lines are read bare too
(its stderr on a terminal, ``journalctl -u earlyoom -o cat``): its wordings tell them, and they have no time.
"""

from __future__ import annotations

import polars as pl

from rca.sources import _syslog
from rca.sources._base import ParseContext, attrs_json, file_column

_MIB = 1024 * 1024
_LINE = (
    r"^(?:(?:sending (?<signal>SIG[A-Z0-9]+) to process (?<pid>[0-9]+) (?:uid (?<uid>[0-9]+) )?\"(?<name>[^\"]*)\""
    r"|[Kk]illing process (?:(?<old_pid>[0-9]+) )?[\"'](?<old_name>[^\"']*)[\"'] with signal (?<signo>[0-9]+)(?:, pid: (?<pid_after>[0-9]+))?)"
    r"[:,] (?<score_name>badness|oom_score):? (?<score>-?[0-9]+).*?VmRSS:? (?<rss>[0-9]+) MiB"
    # The limits are printed "%5.2f": a limit under 10 % is padded ("mem  1.66%"). Before 1.2:
    # "Low Memory! At or below sigterm limits (mem: 10 %, swap: 10 %)".
    r"|(?<low>[Ll]ow [Mm]emory!) [Aa]t or below (?<limit_signal>SIG[A-Z0-9]+|sig[a-z0-9]+) limits:? \(?mem:? +(?<mem_pct>[0-9.]+) ?%, swap:? +(?<swap_pct>[0-9.]+) ?%)"
)
# earlyoom's own lines, as it writes them on stderr (run on a terminal, or `journalctl -u earlyoom -o cat`): its banner, the
# status it prints every few seconds ("mem avail:  1524 of 13855 MiB (10 %), swap free: …"; before 1.0 "mem avail: 4978 MiB (84 %)"),
# the alarm, each signal and what became of it. A line of no other shape (its limits' second line, "Could not lock memory")
# is the further line of the one above.
_BARE = (
    r"^(?:earlyoom v[0-9]|mem (?:avail|total): +[0-9]+ (?:of +[0-9]+ )?MiB|[Ll]ow [Mm]emory! [Aa]t or below |Out of memory! avail: "
    r"|[Ss]ending SIG[A-Z0-9]+ when mem |sending SIG[A-Z0-9]+ to process [0-9]+ |[Kk]illing process (?:[0-9]+ )?[\"'][^\"']*[\"'] with signal [0-9]+"
    r"|escalating to SIGKILL after [0-9.]+ seconds|process (?:[0-9]+ )?(?:exited after [0-9.]+ seconds|did not exit)"
    r"|kill failed: |kill_release: pid=[0-9]+)"
)
_SIGNALS = {"9": "SIGKILL", "15": "SIGTERM"}
# One line of nohang's report: a fact about its victim, or the signal it sends it. (Its "Ancestry:  PID 31921 (bash)"
# names the victim's parents, with no colon after "PID".)
_NOHANG_LINE = (
    r"^[ \t]*(?:PID:[ \t]+(?<pid>[0-9]+)(?:, [Nn]ame: (?<listed_name>[^,]+))?(?:.*?, badness: (?<badness>-?[0-9]+))?"
    r"|Name:[ \t]+(?<name>\S.*?)[ \t]*$"
    r"|badness:[ \t]+(?<status_badness>-?[0-9]+),"
    r"|(?:Victim )?VmRSS:[ \t]+(?<rss>[0-9]+) (?<rss_unit>MiB|KiB)"
    r"|Vm, MiB:[ \t]+Size: [0-9]+, RSS: (?<rss_mib>[0-9]+)"
    r"|[Cc][Gg]roup_v2:[ \t]+(?<cgroup>/\S*)"
    r"|Send(?:ing)? (?<signal>SIG[A-Z0-9]+) to the victim"
    r"|(?<pressure>Memory status that requires corrective actions:))"
)
_RSS_UNIT_BYTES = {"MiB": _MIB, "KiB": 1024}


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
    # "escalating to SIGKILL after 2.4 seconds" (1.3–1.6): the victim outlived SIGTERM.
    survived = pl.col("message").str.starts_with("kill failed: ") | pl.col("message").str.ends_with(" did not exit") | pl.col("message").str.starts_with("escalating to ")
    # "kill_release: pid=906175: process_mrelease pidfd=4 failed: Invalid argument" (1.8+): the kernel did not reap the
    # victim's memory at once, and the victim may then outlive the signal as well.
    release_failed = pl.col("message").str.contains(r"^kill_release: pid=[0-9]+: .* failed: ")
    return _syslog.program_events(
        framed,
        victim_pid=victim,
        kind=pl.when(killed & ~resent).then(pl.lit("oom_kill")).when(low).then(pl.lit("memory_pressure")).otherwise(pl.lit("log")),
        # "process 906175 did not exit", "kill failed: Timer expired": the victim outlived the signal, the memory with it.
        severity=pl.when(killed).then(pl.lit("error")).when(low | survived | release_failed).then(pl.lit("warning")).otherwise(pl.col("severity")),
        process=pl.when(killed).then(pl.coalesce(line.field("name"), line.field("old_name"))).otherwise(pl.col("program")),
        rss_bytes=line.field("rss").cast(pl.Int64, strict=False) * _MIB,
        attrs=attrs_json({
            "oom": pl.when(killed).then(pl.lit("earlyoom")),
            "resent": pl.when(resent).then(pl.lit(True)),
            "signal": pl.coalesce(line.field("signal"), line.field("signo").replace_strict(_SIGNALS, default=None), line.field("limit_signal").str.to_uppercase()),
            "uid": line.field("uid").cast(pl.Int64, strict=False),
            "oom_score": pl.when(line.field("score_name") == "oom_score").then(line.field("score").cast(pl.Int64, strict=False)),
            "badness": pl.when(line.field("score_name") == "badness").then(line.field("score").cast(pl.Int64, strict=False)),
            "mem_limit_pct": line.field("mem_pct").cast(pl.Float64, strict=False),
            "swap_limit_pct": line.field("swap_pct").cast(pl.Float64, strict=False),
        }),
    )


def nohang_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for nohang's lines: each signal it sends its victim, with the victim its report named before it."""
    framed = framed.with_columns(nohang=pl.col("message").str.extract_groups(_NOHANG_LINE))
    line = pl.col("nohang").struct
    signalled = line.field("signal").is_not_null()
    rss = pl.coalesce(
        line.field("rss").cast(pl.Int64, strict=False) * line.field("rss_unit").replace_strict(_RSS_UNIT_BYTES, default=None, return_dtype=pl.Int64),
        line.field("rss_mib").cast(pl.Int64, strict=False) * _MIB,
    )
    facts = {
        "victim": line.field("pid").cast(pl.Int64, strict=False), "victim_name": pl.coalesce(line.field("name"), line.field("listed_name")),
        "victim_rss": rss, "victim_cgroup": line.field("cgroup"),
        "victim_badness": pl.coalesce(line.field("badness"), line.field("status_badness")).cast(pl.Int64, strict=False),
    }
    # The victim of a signal is the one the lines since nohang's signal before it named (one nohang: its host and pid, in its file).
    since_last_signal = signalled.cast(pl.Int32).cum_sum().shift(1, fill_value=0).over([*file_column(framed), "host", "pid"])
    framed = framed.with_columns(**facts).with_columns(
        pl.col(*facts).forward_fill().over([*file_column(framed), "host", "pid", since_last_signal])
    )
    # The victim's facts are the signal's line's only.
    victim_rss, victim_cgroup, victim_badness = (pl.when(signalled).then(pl.col(name)) for name in ("victim_rss", "victim_cgroup", "victim_badness"))
    pressure = line.field("pressure").is_not_null()
    return _syslog.program_events(
        framed,
        victim_pid=pl.when(signalled).then(pl.col("victim")),
        kind=pl.when(signalled).then(pl.lit("oom_kill")).when(pressure).then(pl.lit("memory_pressure")).otherwise(pl.lit("log")),
        severity=pl.when(signalled).then(pl.lit("error")).when(pressure).then(pl.lit("warning")).otherwise(pl.col("severity")),
        # A victim the report did not name (its lines cut) is no process of nohang's.
        process=pl.when(signalled).then(pl.col("victim_name")).otherwise(pl.col("program")),
        rss_bytes=victim_rss,
        cgroup=victim_cgroup,
        attrs=attrs_json({
            "oom": pl.when(signalled).then(pl.lit("nohang")),
            "signal": line.field("signal"),
            "badness": victim_badness,
        }),
    )


# Not a source of its own: its lines are the file's, as other programs' lines are.
_syslog.register_program("earlyoom", None, earlyoom_rules)
_syslog.register_bare_messages("earlyoom", _BARE)
for _nohang in ("nohang", "nohang-desktop"):
    _syslog.register_program(_nohang, None, nohang_rules)
