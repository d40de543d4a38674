"""systemd's own lines about the units it runs: the kills a unit's processes suffered.

A training job or an inference server run as a unit (or a user's terminal scope) dies in a
journal without a kernel line of its own when systemd-oomd kills it, and systemd tells of
a kernel OOM kill in the unit's cgroup and of the signal its main process died of:

* ``systemd-oomd[840]: Killed /user.slice/…/x.scope due to memory pressure for /user.slice/… being 51.07% > 50.00% for > 20s with reclaim activity``
  (``Marked … for killing due to …`` in newer releases; ``due to memory used (M) / total (T) and swap used (S) /
  total (W) being more than 90.00%`` for the swap rule, its figures kept: memory in ``mem_used_bytes`` /
  ``mem_total_bytes``, swap in attrs) → ``oom_kill`` of that cgroup, and of the container or pod it is the scope
  or slice of (``docker-<id>.scope``, ``libpod-<id>.scope``, ``kubepods-…-pod<uid>.slice``); ``oomd attempting to kill 63 with KILL`` →
  ``process_killed`` of pid 63; ``Memory pressure for /x.slice is 64.15% > 1.00% for > 30s …`` →
  ``memory_pressure`` of that cgroup (247–248: ``… is greater than 10 for more than 10 seconds and there was reclaim
  activity``; 261's rules: ``Rule 'low_memory' conditions met for cgroup /x.slice (lasting 1s), taking action kill-by-swap``,
  the rule and its action in attrs); ``Failed to kill any cgroup(s) under … based on pressure: …`` an error;
* ``systemd[1]: train.service: A process of this unit has been killed by the OOM killer.`` →
  ``oom_kill`` (the unit's cgroup counted a kernel kill); a slice holds no process of its own (cgroup v2),
  so the same line of each slice above the unit (``kubepods-burstable-pod<uid>.slice``, ``user.slice``…)
  repeats that kill: a warning (``oom`` ``counted_below`` in attrs, the pod's uid from a pod's slice), not
  another kill;
* ``systemd[1]: train.service: Main process exited, code=killed, status=9/KILL`` (``main process`` in older
  releases: RHEL 7's 219) → ``process_killed``, exit code 137 (128 + the signal; ``code=exited, status=1/FAILURE`` → exit code 1,
  an error; a ``Control process`` (ExecStartPre=, ExecStop=) likewise); ``systemd-oomd killed 12 process(es) in this unit.`` →
  ``process_killed`` of that many;
* ``train.service: Killing process 23391 (python3) with signal SIGKILL.`` (a process left at the stop
  timeout) → ``process_killed`` of that pid and name;
* ``train.service: Failed with result 'oom-kill'.`` keeps the result in attrs, and ``Consumed 2h 29min
  CPU time, 3.2G memory peak, …`` (systemd 256+) the unit's memory peak (``memory_peak_bytes``).

journald's own ``Suppressed 4499764 messages from run-r73….service`` (its rate limit) and ``Missed 81
kernel messages`` (a kmsg overrun) are warnings with the count in attrs: the journal has a hole there.

systemd-oomd's lines are read bare too (``journalctl -u systemd-oomd -o cat``, a line quoted without its envelope).

These are registered with :mod:`rca.sources._syslog` as the rules of programs ``systemd``,
``systemd-oomd`` and ``systemd-journald``; the pid of the envelope is the daemon's, not a victim's: a line
about a unit, a cgroup or another process does not keep it.
"""

from __future__ import annotations

import polars as pl

from rca.sources import _syslog
from rca.sources._base import ParseContext, attrs_json
from rca.sources._kube import MEMCG_CONTAINER_ID, memcg_pod_uid

_OOMD_LINE = (
    r"^(?:(?:Killed|Marked) (?<killed>/\S+) (?:for killing )?due to (?<trigger>memory pressure|memory used|swap used)"
    r"(?: for (?<pressured>/\S+) being (?<pressure>[0-9.]+)% > (?<limit>[0-9.]+)%"
    # The swap rule: "memory used (M) / total (T) and swap used (S) / total (W) being more than 90.00%" (249+), bytes;
    # 247–248 "swap used (S) / total (W) being more than 90.00%".
    r"| \((?<used>[0-9]+)\) / total \((?<total>[0-9]+)\)(?: and swap used \((?<swap_used>[0-9]+)\) / total \((?<swap_total>[0-9]+)\))?"
    r" being more than (?<used_limit>[0-9.]+)%)?"
    r"|oomd attempting to kill (?<pid>[0-9]+) with (?<signal>[A-Z]+)"
    r"|Memory pressure for (?<under_pressure>/\S+) is (?<current>[0-9.]+)% > (?<threshold>[0-9.]+)%"
    # systemd 247–248: "… is greater than 10 for more than 10 seconds and there was reclaim activity".
    r"|Memory pressure for (?<greater>/\S+) is greater than (?<old_threshold>[0-9.]+) for more than [0-9]+ seconds"
    # systemd 261's OOMRules=: "Rule 'low_memory' conditions met for cgroup /x.slice (lasting 1s), taking action kill-by-swap".
    r"|Rule '(?<rule>[^']*)' conditions met for cgroup (?<ruled>/\S+) \(lasting [^)]*\), taking action (?<action>\S+))"
)
# systemd-oomd's own lines written bare (`journalctl -u systemd-oomd -o cat`, or a line quoted from the journal): its
# kills, the pids it signals, the pressure and the candidate list it prints before a kill. (A candidate's indented
# "Path: …" / figures lines are the further lines of the list's head.)
_OOMD_BARE = (
    r"^(?:(?:Killed|Marked) /\S+ (?:for killing )?due to (?:memory pressure|memory used|swap used)"
    r"|oomd attempting to kill [0-9]+ with [A-Z]+|Memory pressure for /\S+ is [0-9.]+% > "
    r"|Considered [0-9]+ cgroups for killing, top candidates were:"
    r"|Rule '[^']*' conditions met for cgroup /)"
)
# Substrings one of which each of those bare lines holds: most hold no ":", the syslog source's cheap sniff literal.
OOMD_BARE_LITERALS = (" due to ", "oomd attempting to kill ", "Memory pressure for /", " conditions met for cgroup /")
_UNIT = r"^(?<unit>[^\s:]+\.(?:service|scope|slice|socket|mount|timer)): "
_UNIT_LINE = (
    _UNIT + r"(?:(?<oom_killed>A process of this unit has been killed by the OOM killer\.)"
    r"|(?<process_role>[Mm]ain|[Cc]ontrol) process exited, code=(?<code>killed|dumped|exited), status=(?<status>[0-9]+)/(?<status_name>[A-Za-z0-9_/]+)"
    r"|systemd-oomd killed (?<oomd_killed>[0-9]+) process\(es\) in this unit\."
    r"|Killing process (?<killed_pid>[0-9]+) \((?<killed_name>[^)]*)\) with signal (?<kill_signal>SIG[A-Z0-9]+)"
    r"|Consumed .*?(?<peak>[0-9.]+)(?<peak_unit>[BKMGTPE]) memory peak"
    r"|Failed with result '(?<result>[a-z\-]+)'\.)?"
)
# journald's word that lines are missing: an OOM kill or an Xid may have been among them.
_JOURNALD_LOSS = (
    r"^(?:Suppressed (?<suppressed>[0-9]+) messages from (?<from>\S+)|Missed (?<missed>[0-9]+) kernel messages"
    r"|Forwarding to syslog missed (?<forward_missed>[0-9]+) messages|(?<overrun>/dev/kmsg buffer overrun))"
)
# A pod's volume the kubelet mounts is a mount unit named by systemd's escaped path ("-" for "/", "\x2d" for "-"):
# "var-lib-kubelet-pods-1a2b3c4d\x2d5e6f\x2d…-volumes-kubernetes.io\x7eprojected-kube\x2dapi\x2daccess\x2dx.mount".
_VOLUME_MOUNT_POD_UID = r"^var-lib-kubelet-pods-([0-9a-f]{8}\\x2d[0-9a-f]{4}\\x2d[0-9a-f]{4}\\x2d[0-9a-f]{4}\\x2d[0-9a-f]{12}|[0-9a-f]{32})-"
_SIGNALS = {"9": "SIGKILL"}
# systemd's format_bytes(): powers of 1024 with one-letter suffixes ("3.2G", "38.4M", "0B").
_PEAK_UNIT_BYTES = {"B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50, "E": 2**60}


def _pod_uid(cgroup_or_unit: pl.Expr) -> pl.Expr:
    """The pod uid a cgroup path, a pod's slice or a pod volume's mount unit names: a pod's RFC 4122 uid or a static
    pod's 32-digit hash."""
    mount_uid = cgroup_or_unit.str.extract(_VOLUME_MOUNT_POD_UID, 1).str.replace_all(r"\x2d", "-", literal=True)
    return pl.coalesce(memcg_pod_uid(cgroup_or_unit), mount_uid)


def oomd_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for systemd-oomd's lines: the cgroup it killed, each pid it signalled, the pressure that set it off."""
    # Matched once: an expression is evaluated wherever it is used.
    framed = framed.with_columns(oomd=pl.col("message").str.extract_groups(_OOMD_LINE))
    oomd = pl.col("oomd").struct
    under_pressure = pl.coalesce(oomd.field("under_pressure"), oomd.field("greater"), oomd.field("ruled"))
    killed, signalled = (oomd.field(name).is_not_null() for name in ("killed", "pid"))
    pressured = under_pressure.is_not_null()
    kind = (
        pl.when(killed).then(pl.lit("oom_kill"))
        .when(signalled).then(pl.lit("process_killed"))
        .when(pressured).then(pl.lit("memory_pressure"))
        .otherwise(pl.lit("log"))
    )
    # 247–248's swap rule names swap alone; 249+ memory, then swap.
    swap_only = oomd.field("trigger") == "swap used"
    cgroup = pl.coalesce(oomd.field("killed"), under_pressure)
    as_int = {name: oomd.field(name).cast(pl.Int64, strict=False) for name in ("used", "total", "swap_used", "swap_total")}
    return _syslog.program_events(
        framed,
        kind=kind,
        # "Failed to kill any cgroup(s) under … based on pressure: No such device": the pressure stays.
        severity=pl.when(killed | signalled | pl.col("message").str.starts_with("Failed to ")).then(pl.lit("error"))
        .when(pressured).then(pl.lit("warning")).otherwise(pl.col("severity")),
        cgroup=cgroup,
        container_id=cgroup.str.extract(MEMCG_CONTAINER_ID, 1),
        pod_uid=_pod_uid(cgroup),
        mem_used_bytes=pl.when(~swap_only).then(as_int["used"]),
        mem_total_bytes=pl.when(~swap_only).then(as_int["total"]),
        # A pid it signalled is named by its number alone: that process is not systemd-oomd.
        process=pl.when(~signalled).then(pl.coalesce(cgroup.str.extract(r"([^/]+)$"), pl.col("program"))),
        victim_pid=oomd.field("pid").cast(pl.Int64, strict=False),
        attrs=attrs_json({
            "oom": pl.when(killed | signalled).then(pl.lit("systemd_oomd")),
            "trigger": oomd.field("trigger"),
            "signal": pl.format("SIG{}", oomd.field("signal")),
            "pressured_cgroup": oomd.field("pressured"),
            "rule": oomd.field("rule"),
            "action": oomd.field("action"),
            "pressure_pct": pl.coalesce(oomd.field("pressure"), oomd.field("current")).cast(pl.Float64, strict=False),
            "limit_pct": pl.coalesce(oomd.field("limit"), oomd.field("threshold"), oomd.field("old_threshold"), oomd.field("used_limit"))
            .cast(pl.Float64, strict=False),
            "swap_used_bytes": pl.coalesce(as_int["swap_used"], pl.when(swap_only).then(as_int["used"])),
            "swap_total_bytes": pl.coalesce(as_int["swap_total"], pl.when(swap_only).then(as_int["total"])),
        }),
    )


def unit_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for systemd's lines about its units: OOM kills counted in a unit, signals its main process died of."""
    framed = framed.with_columns(unit=pl.col("message").str.extract_groups(_UNIT_LINE))
    unit = pl.col("unit").struct
    sigkill = (unit.field("code") == "killed") & (unit.field("status") == "9")
    oomd_killed = unit.field("oomd_killed").cast(pl.Int64, strict=False)
    # "Killing process 23391 (beam.smp) with signal SIGKILL.": a process left in the unit at its stop timeout.
    left_killed = unit.field("kill_signal") == "SIGKILL"
    counted = unit.field("oom_killed").is_not_null()
    below = counted & unit.field("unit").str.ends_with(".slice")
    kind = (
        pl.when(counted & ~below).then(pl.lit("oom_kill"))
        .when(sigkill | oomd_killed.is_not_null() | left_killed).then(pl.lit("process_killed"))
        .otherwise(pl.lit("log"))
    )
    signalled = unit.field("code").is_in(["killed", "dumped"])
    exited_failing = (unit.field("code") == "exited") & (unit.field("status") != "0")
    failed = signalled | exited_failing | (unit.field("result").is_not_null() & (unit.field("result") != "success"))
    # "Created slice libcontainer container kubepods-pod<uid>.slice." / "Removed slice kubepods-burstable-pod<uid>.slice - …":
    # the kubelet made (or removed) a pod's cgroup (a static pod's "pod<32 hex digits>").
    pod_slice = pl.when(pl.col("message").str.contains("kubepods", literal=True)).then(pl.col("message")).str.extract(
        r"\b(kubepods[-a-z]*-pod(?:[0-9a-f_]{36}|[0-9a-f]{32})\.slice)", 1
    )
    peak = unit.field("peak").cast(pl.Float64, strict=False) * unit.field("peak_unit").replace_strict(_PEAK_UNIT_BYTES, default=None, return_dtype=pl.Float64)
    return _syslog.program_events(
        framed,
        kind=kind,
        # "Failed to start NVIDIA Persistence Daemon." names the unit by its description, not its name.
        severity=pl.when((kind != "log") | failed | pl.col("message").str.starts_with("Failed to start ")).then(pl.lit("error"))
        .when(below).then(pl.lit("warning")).otherwise(pl.col("severity")),
        process=pl.coalesce(unit.field("killed_name"), unit.field("unit"), pl.col("program")),
        victim_pid=unit.field("killed_pid").cast(pl.Int64, strict=False),
        # A container's scope (cri-containerd-<id>.scope, docker-<id>.scope) names the container.
        container_id=unit.field("unit").str.extract(MEMCG_CONTAINER_ID, 1),
        pod_uid=_pod_uid(pl.coalesce(unit.field("unit"), pod_slice)),
        # A shell's convention, as the container runtimes report it: 128 + the signal a process died of.
        exit_code=pl.when(signalled).then(unit.field("status").cast(pl.Int32, strict=False) + 128)
        .when(unit.field("code") == "exited").then(unit.field("status").cast(pl.Int32, strict=False)),
        attrs=attrs_json({
            "unit": unit.field("unit"),
            "unit_process": pl.when(unit.field("process_role").str.to_lowercase() == "control").then(pl.lit("control")),
            "signal": pl.when(signalled).then(
                unit.field("status").replace_strict(_SIGNALS, default=pl.format("SIG{}", unit.field("status_name")))
            ).otherwise(unit.field("kill_signal")),
            "oom": pl.when(oomd_killed.is_not_null()).then(pl.lit("systemd_oomd")).when(below).then(pl.lit("counted_below")),
            "processes_killed": oomd_killed,
            "result": unit.field("result"),
            "memory_peak_bytes": peak.round().cast(pl.Int64),
        }),
    )


def journald_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for journald's own lines: the messages it dropped (rate limit) or missed (kmsg overrun) are warnings."""
    framed = framed.with_columns(loss=pl.col("message").str.extract_groups(_JOURNALD_LOSS))
    loss = pl.col("loss").struct
    lost = pl.coalesce(loss.field("suppressed"), loss.field("missed"), loss.field("forward_missed")).cast(pl.Int64, strict=False)
    any_loss = lost.is_not_null() | loss.field("overrun").is_not_null()
    return _syslog.program_events(
        framed,
        severity=pl.when(any_loss).then(pl.lit("warning")).otherwise(pl.col("severity")),
        attrs=attrs_json({
            "messages_lost": lost,
            "lost_from": pl.coalesce(loss.field("from"), pl.when(loss.field("missed").is_not_null() | loss.field("overrun").is_not_null()).then(pl.lit("kernel"))),
        }),
    )


# Not a source of their own: their lines are the file's, as other programs' lines are.
_syslog.register_program("systemd", None, unit_rules)
_syslog.register_program("systemd-oomd", None, oomd_rules)
_syslog.register_bare_messages("systemd-oomd", _OOMD_BARE)
# RHEL 7's journald names itself by its 15-character comm.
for _journald in ("systemd-journald", "systemd-journal"):
    _syslog.register_program(_journald, None, journald_rules)
