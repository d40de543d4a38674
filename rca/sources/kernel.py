"""Kernel logs: dmesg (raw, -T/--ctime, --time-format iso, -e/-H, -d, -x, -r, --json, also through `jq .` and
`jq -c '.dmesg[]'`), /dev/kmsg records (a line's fragments joined, their escapes read back), talosctl dmesg, kern.log /
messages, journalctl -k.

Framing strips each line's time prefix: boot seconds, a ctime or ISO date, or the syslog /
journald envelope (through :mod:`rca.sources._syslog`, which routes a mixed syslog file's
``kernel:`` lines here). :func:`kernel_rules` then reads the messages.

The OOM killer prints a block: the ``invoked oom-killer`` header, a dump (CPU line, call
trace, registers, Mem-Info, memcg usage, the task-table heading), the task-table rows, the
``oom-kill:`` summary, the kill line and the reaper line. The header and the dump lines
right after it become one ``oom_invoked`` event; every other line is an event of its own,
and the block's memcg usage and ``oom-kill:`` summary are carried forward onto its kill.
One kill is one ``oom_kill`` event: the ``Killed process`` line when present, else the
``oom-kill:`` summary or the old ``Kill process … or sacrifice child`` selection line.

A paste of a report's middle without its header (from the CPU line on, or from "Memory cgroup stats for …:" on)
keeps its dump lines together the same way, one ``log`` event. The kernel's other multi-line reports are grouped the
same way, their head and the dump lines after it one ``log`` event (:data:`_BLOCK_HEAD`): a hung task (pid and name of
the blocked task, error), an OOM reaper that could not reap its victim (its pid and name), a soft or hard lockup, an RCU
stall (error), an interrupt nobody handled (error), a page or vmalloc allocation failure (warning, pid from its CPU
line), a slab allocation failure, a user process's segfault or trap, an oops / BUG / BUG_ON / WARNING (x86's and
arm64's, 6.19's banner too; an oops, a BUG_ON, a panic critical whatever level printed them), an arm64 SError
(critical), a machine check and an EDAC memory error (critical when uncorrected, warning when corrected), a PCIe AER
error (the same), an NVSwitch SXid report, an NVIDIA Xid with the driver's indented lines and the GSP RPC history it
prints, an AMD GPU's ACA RAS report, an arm64 SMMUv3 fault event. A serial console's capture is read as dmesg: systemd's
status lines are lines of their own (never a record's, a report around them going on across them), and a kernel line
printed into a program's keeps its stamp and text (_unglued). ``talosctl dmesg`` is read as dmesg with ISO times (Talos'
user-space OOM controller's kill of a cgroup an ``oom_kill``, as systemd-oomd's is); a block of kernel lines pasted indented,
under a heading line or not, is read without its indent (_unindented); a
file of dmesg lines with journal / syslog lines among them (a grep of nvidia-bug-report.log) has each run of lines
framed as it is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from rca import timeutil
from rca.sources import _audit, _syslog, _xid, register
from rca.sources._base import (
    MESSAGE_TAIL,
    ParseContext,
    Parsed,
    Source,
    attrs_json,
    backward_fill_within,
    by_head,
    file_column,
    forward_fill_within,
    head_groups,
    holds_newline,
    inherit_frame,
    joined_json,
    map_distinct,
    one_head,
    split_rows,
    starts_file,
    within_file,
)
from rca.sources._kube import memcg_container_id, memcg_pod_uid

_FACILITY = r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7])"
# `dmesg -r` and /proc/kmsg write the record's priority, facility × 8 + level: "<6>" for the kernel's own lines, "<30>"
# (daemon.info) for a program's line written to /dev/kmsg ("<30>[    1.823533] udevd[116]: starting version 173").
_LEVEL_PREFIX = rf"^(?:<(?<prio>[0-9]{{1,4}})>|{_FACILITY} *:(?<level>emerg|alert|crit|err|warn|notice|info|debug) *: )?"
# `talosctl dmesg` (Talos Linux reads /dev/kmsg itself): "10.5.0.3: kern:    info: [2022-07-28T11:49:42.489473063Z]: …",
# the node first (when asked through the API), the level right-aligned, the time converted to UTC.
_TALOS = (
    rf"(?:(?<node>[^ :\[]+): )?{_FACILITY}: +(?<talos_level>emerg|alert|crit|err|warning|notice|info|debug): "
    r"\[(?<talos>[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?Z)\]: "
)
# Each pattern is its head (the time prefix) and MESSAGE_TAIL; the head alone is captured (see head_groups).
# A kernel built with CONFIG_PRINTK_CALLER (syzbot, the 0-day robot, some distros) follows the stamp
# with the caller, "[ T1234]" (a task) or "[ C3]" (a CPU in interrupt); util-linux dmesg puts a space before it.
_CALLER = r"\[ *[TC][0-9]+\]"
# `journalctl -k -o short-monotonic` puts "host kernel: " after the stamp ("kernel: " alone with --no-hostname).
# `dmesg -d` (--show-delta) adds the seconds since the line before inside the brackets: "[  925.738225 <    0.188086>]".
_DELTA = r"(?: <\s*[0-9]+\.[0-9]+>)?"
_RAW_HEAD = _LEVEL_PREFIX + rf"\[\s*(?<boot>[0-9]+\.[0-9]+){_DELTA}\](?: ?{_CALLER})? ?(?<journal>(?:(?<host>\S+) )?kernel: )?"
# A ctime stamp someone cut the year off ("[Sun Mar 29 19:20:37]") is resolved as a syslog stamp is.
_CTIME_HEAD = (
    _LEVEL_PREFIX + r"\[(?<when>\S+ (?<mon>\S+) +(?<day>[0-9]{1,2}) (?<clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9])(?: (?<year>[0-9]{4}))?)"
    + _DELTA + r"\] ?"
)
_ISO_HEAD = _LEVEL_PREFIX + rf"(?:(?<iso>[0-9]{{4}}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9],[0-9]+[+-][0-9][0-9]:?[0-9][0-9]) |{_TALOS})"
# dmesg -e / -H (reltime): "[Jun 3 09:04]" (or "[Jun13 09:04]": "%b%e") when the minute changes, then
# "[  +0.000123]", the seconds since the line before (in CJK locales the month is "12月"). `dmesg -d --notime` prints
# the delta alone, "[<    0.000123>]": no minute stamp ever comes, so its lines keep no time.
_RELTIME_HEAD = (
    _LEVEL_PREFIX + rf"\[(?:(?<minute>(?<mon>{timeutil.MONTH_NAME_PATTERN}) ?(?<day>[0-9]{{1,2}}) (?<clock>[0-9][0-9]:[0-9][0-9]))"
    r"|\s*(?<delta_raw>\+(?<delta>[0-9]+\.[0-9]+))|(?<notime_delta><\s*[0-9]+\.[0-9]+>))\] ?"
)
# A record read from /dev/kmsg (`cat /dev/kmsg`, what gpud and node-problem-detector read): "6,888,4307125,-;message",
# the syslog priority (facility × 8 + level), the sequence number, microseconds since boot and the flags ("-", "c" for a
# fragment, "+" for its continuation; newer kernels may add fields such as ",caller=T1"), then the message. The record's
# dictionary follows on lines of its own, each " KEY=value" ("SUBSYSTEM=pci", "DEVICE=+pci:0000:3b:00.0").
_KMSG_HEAD = r"^(?<kmsg_prio>[0-9]{1,4}),[0-9]+,(?<usec>[0-9]+),[-+c](?:,[^;]*)?;"
# Kernels 3.5-4.8 store a line printed in pieces (pr_cont) that could not be buffered whole as several records: the
# first flagged "c", the ones after it "+" (Documentation/ABI/testing/dev-kmsg); a "+" record is the rest of the line
# of the record above it. (Since 4.9 a "c" record is a KERN_CONT piece stored alone, which names no record it belongs to.)
_KMSG_FRAGMENT = r"^[0-9]{1,4},[0-9]+,[0-9]+,\+[,;]"
# /dev/kmsg writes every byte of a record's text and dictionary below " " or from 127 up, and every backslash, as "\xNN"
# (printk.c, Documentation/ABI/testing/dev-kmsg): "\x0a" a newline of a multi-line record, "\x5c" a backslash, "\xc3\xa9"
# an "é". No backslash stands for itself there, so each escape is read back, the hex of the text ("\x0a" is 5c783061)
# rewritten as the byte's hex ("0a"). (util-linux dmesg decodes a record it reads and escapes unprintable bytes itself,
# but not a backslash: in its output, -r too, "\x0a" may be the text, and it is left as written.)
_KMSG_ESCAPES = {f"\\x{byte:02x}".encode().hex(): f"{byte:02x}" for byte in range(256)}
# The hex of a valid UTF-8 text (RFC 3629), pairs from the start: only such a decoding becomes the message.
_UTF8_HEX = (
    r"^(?:[0-7][0-9a-f]|(?:c[2-9a-f]|d[0-9a-f])[89ab][0-9a-f]|e0[ab][0-9a-f][89ab][0-9a-f]|e[1-9a-cef](?:[89ab][0-9a-f]){2}"
    r"|ed[89][0-9a-f][89ab][0-9a-f]|f0[9ab][0-9a-f](?:[89ab][0-9a-f]){2}|f[1-3](?:[89ab][0-9a-f]){3}|f48[0-9a-f](?:[89ab][0-9a-f]){2})*$"
)
# `dmesg --json` (-J, util-linux 2.38+) prints {"dmesg": [ … ]}, an object a record and a field a line:
#       },{
#          "pri": 6,                ("fac": "kern", "pri": "info" with --decode; no "pri" when the record has none)
#          "time":   1843.308145,   (seconds since boot, whatever time format was asked for)
#          "caller": "T1",          (a kernel built with CONFIG_PRINTK_CALLER)
#          "msg": "NVRM: …"         (a JSON string; a multi-line record's lines joined by "\n")
# A record opens at "{" or "},{"; the lines outside the records (the outer braces, "dmesg": [) join the one
# nearest. The time line, padded to its column and always six decimals, tells the format from other JSON.
# Run through `jq .`, the output is re-indented by two, "}," and "{" are lines of their own and a time is written as
# jq writes the number ("time": 0, "time": 1.5, "time": 1e-06): such a time line counts where a "caller" or "msg"
# line follows it, as in every record.
_JSON_OPEN = r"^[ \t]*(?:\},[ \t]*)?\{[ \t]*$"
_JSON_FIELD = r'^[ \t]*"(?<field>fac|pri|time|caller|msg)": (?<value>.*?),?[ \t]*$'
_JSON_ANCHOR = r'^[ \t]*(?:"time": +[0-9]+\.[0-9]{6},|"dmesg": \[)[ \t]*$'
_JQ_TIME = r'^[ \t]*"time": [0-9]+(?:\.[0-9]+)?(?:e-[0-9]+)?,[ \t]*$'
_JSON_AFTER_TIME = r'^[ \t]*"(?:caller|msg)": "'
_JSON_SYNTAX = r"^[ \t]*(?:\{|\},[ \t]*\{|\}|\]|\],?|\},?)[ \t]*$"
# `dmesg --json | jq -c '.dmesg[]'` writes each record on a line of its own, compact and in dmesg's order of fields:
# {"pri":6,"time":1.234567,"msg":"…"} ({"fac":"kern","pri":"info",… with --decode; jq before 1.7 writes 0 for
# 0.000000 and 1e-06 for 0.000001). Its head up to the message tells it from other JSON (an application's JSON log
# may start with a numeric "time" and a "msg", never with a syslog priority); the message is read as JSON.
_JSON_COMPACT = (
    r'^[ \t]*\{(?:"fac": ?"(?<fac>[a-z0-9]+)", ?)?"pri": ?(?<pri>[0-9]+|"[a-z]+"), ?'
    r'"time": ?(?<time>[0-9]+(?:\.[0-9]+)?(?:e-[0-9]+)?), ?(?:"caller": ?"[TC][0-9]+", ?)?"msg": ?"'
)
# The terminal's select-graphic-rendition sequences `dmesg --color=always` (-L, and -H on a terminal) writes.
_SGR = r"\x1b\[[0-9;]*m"
# A boot stamp inside a syslog message, or the caller left once a raw stamp is cut off (_framed_boot_stamp).
_EMBEDDED_BOOT_HEAD = rf"^(?:\[\s*(?<boot>[0-9]+\.[0-9]+)\](?:{_CALLER})?|{_CALLER}) ?"
_BOOT_STAMP = r"^\[\s*[0-9]+\.[0-9]+\]"
# A serial console (a VM's, `virsh console`, a BMC's SOL, a cloud's serial-port output) carries the kernel's lines and
# whatever else writes to the console, and a kernel line printed while a program's line was half written lands inside
# it: "Starting dropbear sshd: [   11.385619] random: …", "icicle-kit-es login: [   15.795564] macb …", or mid-word, the
# program's line going on on the next ("…: nonexiste[    1.331981] mmc0: …", then "nt directory"). printk writes six
# decimals. The text before the first such stamp is the program's, the rest the kernel's line (_unglued).
_GLUED_STAMP = r"\[ *[0-9]+\.[0-9]{6}\] "
_GLUED = rf"^(?<before>.*?\S)\s*(?<kernel>{_GLUED_STAMP}.*)$"
# systemd's status lines on the console: "[  OK  ] Started …", "[FAILED] Failed to start …", "[DEPEND] …", "[ TIME ] …",
# "[  !!  ] …", a waiting job's spinner ("[  *** ] A start job is running for …"), and a job's start, indented to the same
# column where no status is shown ("         Starting Journal Service...", "         Mounting /var/volatile...", ellipsized
# "…" in the middle when long). An indented one is no line of the kernel record above it.
_SYSTEMD_STATUS = r"^\[(?:  OK  |FAILED|DEPEND| TIME | INFO | {1,2}!!  | *\*[ *]*)\] "
_SYSTEMD_JOB = r"^ {9}(?:Starting|Stopping|Reloading|Mounting|Unmounting|Activating|Deactivating|Expecting) \S.*\.\.\.[ \t]*$"
_HOST_AFTER_STAMP = _BOOT_STAMP + r" ?(?:\S+ )?kernel: "
# `journalctl -o short-monotonic`: after the stamp, the host and "kernel: " or a program[pid] (dmesg writes
# no host before a program's name; "traps: a[1] …" is no host).
_MONOTONIC_JOURNAL = r"^\[ *[0-9]+\.[0-9]{6}\][ \t](?:(?:\S+[ \t])?kernel: |\S*[^ \t:\[\]][ \t][A-Za-z0-9_.\-/@()]+\[[0-9]+\]:?[ \t])"
_RAW, _CTIME, _ISO, _RELTIME, _KMSG = (head + MESSAGE_TAIL for head in (_RAW_HEAD, _CTIME_HEAD, _ISO_HEAD, _RELTIME_HEAD, _KMSG_HEAD))
_CTIME_SNIFF = _CTIME_HEAD + r"\s*\S"
# Apache httpd's error log wears dmesg -T's stamp, then its level in brackets (2.4: the module too): "[Sun Dec 04 04:47:44
# 2005] [notice] workerEnv.init() ok …", "[Wed Oct 11 14:32:52.123456 2000] [core:error] [pid 35708:tid 4328636416] …".
_APACHE_ERROR_LINE = _CTIME_HEAD + r"\s*\[(?:[a-z_0-9]+:)?(?:emerg|alert|crit|error|warn|notice|info|debug|trace[1-8])\] "
_JOURNAL_HEADER = r"^-- (?:Logs begin at |Journal begins at |No entries --|Boot [0-9a-f]{32} --|Reboot --)"
_BARE_KERNEL = r"^kernel: "
# A syslog line of the kernel's without a host ("May 17 18:48:11 kernel: [ 6141.921740] …": a syslog daemon that
# writes none, `journalctl --no-hostname`), which the syslog heads that hold a host miss; rsyslog writes an empty
# host as two spaces.
_SHORT_KERNEL_NO_HOST = (
    rf"^(?:{timeutil.MONTH_NAME_PATTERN})[ \t]+[0-9]{{1,2}}[ \t][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?[ \t]{{1,2}}kernel: "
)
# The NVIDIA module's and the OOM killer's lines copied without any time or envelope (`journalctl -o cat`,
# `grep -h`, a paste, the dmesg of a kernel built without CONFIG_PRINTK_TIME such as RHEL 6's): kernel lines
# all the same (framed as raw dmesg). The OOM killer's dump counts too: the task's CPU line (2.6.32's
# "Pid: N, comm:"), its cpuset line, the call trace heading, the task-table rows and the kill line.
# A firmware-first hardware error record (APEI GHES, decoded by the kernel's CPER printer): "{8}[Hardware Error]: …", the
# record's number in braces on each of its lines.
_GHES = r"\{[0-9]+\}\[Hardware Error\]: "
_GHES_NUMBER = r"^\{([0-9]+)\}\[Hardware Error\]: "
# A PCIe error section names the function that failed, "{1}[Hardware Error]:   device_id: 0000:5e:00.0" (its ids follow on
# a line of their own, "vendor_id: 0x10de, device_id: 0x2bb5", no bus): the record's device, a GPU or NIC a job used.
_GHES_DEVICE = r"^\{[0-9]+\}\[Hardware Error\]: +device_id: ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])$"
_BARE_MESSAGE = (
    r"^(?:NVRM: |oom-kill:|oom_reaper: (?:reaped process |unable to reap pid:)|(?:Memory cgroup out of memory|Out of memory(?: \([^)]*\))?): Kill"
    r"|\S+ invoked oom-killer: |Killed process [0-9]+|Pid: [0-9]+, comm: |CPU: [0-9]+ (?:UID: [0-9]+ )?PID: [0-9]+ Comm: "
    r"|\S+ cpuset=\S* mems_allowed=|Call Trace:|\[ *[0-9]+\] +[0-9]+ +[0-9]+ +[0-9]+ |" + _GHES
    # a hung-task report pasted without its stamps, often its head alone
    + r"|INFO: task \S.*:[0-9]+ blocked for more than [0-9]+ seconds)"
)
# The head of a kernel crash report pasted without stamps (an issue's copy of the console or of `journalctl -o cat`): x86's
# "BUG: kernel NULL pointer dereference, address: 000000000000041c" (before 4.19 "BUG: unable to handle kernel NULL pointer
# dereference at …"), the oops line ("Oops: 0000 [#1] SMP NOPTI", since 6.9 "Oops: Oops: 0000 [#1] …" and "Oops: general
# protection fault, …"), a panic. The report's dump lines after it (:data:`_DUMP`: the page-fault decoding, the registers,
# "Code: …", the call trace) are kernel lines too, where an application's lines after such a head would not be.
_BARE_CRASH_HEAD = (
    r"^(?:BUG: (?:kernel NULL pointer dereference, address: |unable to handle )|(?:Oops: )?Oops: [0-9a-f]{4} \[#[0-9]+\]"
    r"|(?:Oops: )?general protection fault|Kernel panic - not syncing: )"
)
# rsyslog's (and sysklogd's) broadcast of an emergency message to the terminals of everyone logged in ("*.emerg :omusrmsg:*",
# the default): a soft lockup, a hard lockup or a panic reaches an ssh session, and then an issue, as
#     Message from syslogd@plot-071 at Jun 17 13:06:42 ...
#      kernel:[405108.698255] watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [chia_plot:29632]
# the host and the syslog stamp (sysklogd's a ctime with the weekday and the year) on a line of their own, then the tag and the
# message, the kernel's boot stamp in it where its syslog daemon keeps one. A paste may leave "Message from syslogd@… at " out.
_WALL_HEAD = (
    rf"^(?:Message from syslogd@(?<host>\S+) at )?(?:[A-Z][a-z]{{2}} )?(?<mon>{timeutil.MONTH_NAME_PATTERN}) +(?<day>[0-9]{{1,2}}) "
    r"(?<clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9])(?: (?<year>[0-9]{4}))? \.\.\.[ \t]*$"
)
_WALL_KERNEL = r"^ ?kernel:"
# Uptimes beyond ~300 years are garbage, and would overflow the datetime arithmetic.
_MAX_BOOT_SECONDS = 1e10
# A limit this high is the kernel's "unlimited" (PAGE_COUNTER_MAX), not a size.
_UNLIMITED_KB = 1 << 50

_SEVERITY_BY_LEVEL = {
    "0": "critical", "1": "critical", "2": "critical", "3": "error", "4": "warning", "5": "notice", "6": "info", "7": "debug",
    "emerg": "critical", "alert": "critical", "crit": "critical", "err": "error", "warn": "warning", "warning": "warning",
    "notice": "notice", "info": "info", "debug": "debug",
}
# A machine check's status word has bit 61 (UC) set when the error was not corrected: its first hex digit is 2, 3, 6, 7, a, b, e or f.
_MCE_STATUS = r"Machine Check(?: Event)?: [0-9a-f]+ Bank [0-9]+: "
# Newer kernels (6.x) report a transmit queue the NIC stopped draining at KERN_CRIT ("mlx5_core 0000:3b:00.0 ens1f0:
# NETDEV WATCHDOG: CPU: 3: transmit queue 5 timed out 5010 ms", netdev_crit; the driver resets the queue or the device), where
# it printed "NETDEV WATCHDOG: eth0 (igb): transmit queue 5 timed out" under a WARNING before.
# ext4 reports a filesystem error, and the read-only remount its errors=remount-ro default makes of it, at KERN_CRIT ("EXT4-fs
# error (device sdd1): ext4_journal_check_start:83: comm rsync: Detected aborted journal", "EXT4-fs (sdd1): Remounting
# filesystem read-only"): every write to it fails from then on, a job's checkpoint too. XFS shuts a filesystem down at
# KERN_ALERT, every I/O to it failing until it is unmounted: "XFS (md122): I/O Error Detected. Shutting down filesystem",
# "… Corruption of in-memory data detected.  Shutting down filesystem" (newer kernels: "… (0x8) detected at xfs_trans_cancel+0x…
# (fs/xfs/xfs_trans.c:1097).  Shutting down filesystem."), then "Please umount the filesystem and rectify the problem(s)"
# ("unmount" in newer kernels).
_CRITICAL_WORDS = (
    r"Kernel panic|hard LOCKUP|\bBUG: |\bOops\b|general protection fault|Machine Check Exception|Hardware Error\].*(?:[Uu]ncorrected|[Ff]atal)"
    rf"|Uncorrect(?:ed|able) \(Fatal\)|\bUE (?:[Mm]emory|error on )|{_MCE_STATUS}[2367abef][0-9a-f]{{15}}|NETDEV WATCHDOG: CPU: [0-9]+: transmit queue "
    r"|\bEXT[234]-fs error \(device |: Remounting filesystem read-only"
    # a Habana Gaudi the driver gave up on at probe (dev_err, "habanalabs 0000:1a:00.0: Failed to initialize hl2. Device is NOT
    # usable !", after its firmware stopped answering): the accelerator is lost to every job until the node is fixed
    r"|\. Device is NOT usable\b"
    r"|\. +Shutting down filesystem|the filesystem and rectify the problem"
)
# Hardware errors the hardware corrected (PCIe AER, EDAC "CE", APEI/GHES records, machine checks without UC): read
# before the error words. AER spells its severities "Corrected" / "Uncorrected (Fatal)" before 6.x and "Correctable" /
# "Uncorrectable (Fatal)" since ("pcieport 0000:00:03.1: AER: Multiple Correctable error message received from …", then
# "nvidia 0000:07:00.0: PCIe Bus Error: severity=Correctable, …", printed at KERN_WARNING); EDAC's core wrote "EDAC MC0: 4 CE
# error on CPU#0Channel#2_DIMM#0 (…)" (and "UE error on") before it named the operation ("1 CE memory read error on …").
_CORRECTED_WORDS = (
    rf"\bCorrect(?:ed|able) error|severity=Correct(?:ed|able)|event severity: corrected|\bCE (?:[Mm]emory|error on )|Machine check events logged"
    rf"|{_MCE_STATUS}[0-9a-f]{{16}}"
)
# "Slab corruption: start=…", "list_add corruption. …": the allocator or a list found memory overwritten (KERN_ERR).
# "Out of memory and no killable processes...": the OOM killer found no victim (a panic follows unless it is a memcg's).
# RCU stall reports ("rcu: INFO: rcu_sched detected stalls on CPUs/tasks:", "… detected expedited stalls …", "… self-detected
# stall on CPU") are KERN_ERR.
# The NVIDIA driver's "RmInitAdapter: Cannot initialize GSP firmware RM", "cannot proceed with booting GSP" and "kgspInitRm_IMPL: Max
# GSP-RM boot attempts exceeded: 4/4" (each boot attempt failed): the GPU did not come up;
# its "None of the NVIDIA graphics adapters were initialized!" (older) / "None of the NVIDIA devices were initialized.": no GPU did;
# its "API mismatch: the client has the version …": it refused a client (rca.sources._xid), which then fails; its "The NVIDIA GPU
# 0000:2c:00.0 (PCI ID: 10de:1d16) installed in this system is not supported by open nvidia.ko …" (or "by the 280.13 NVIDIA Linux
# graphics driver release"): the GPU is left without a driver; its "os_schedule: Attempted to yield the CPU while in atomic or
# interrupt context" (NV_DBG_ERRORS, the driver's own bug, a kernel WARNING often next); its "osInitNvMapping: *** Cannot
# attach gpu" (the GPU's device node not set up, RmInitAdapter fails next); its "A GPU crash dump has been created. If possible,
# please run" (NV_DBG_ERRORS, after an Xid 79 or another fatal error: the driver saved the GPU's state for nvidia-bug-report.sh).
# PCIe error recovery's "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)" (pci_info, but the device is
# left in its failed state: a GPU whose driver has no AER handlers is lost until a reset).
_ERROR_WORDS = (
    r"(?i)\b(?:error|errors|failed|failure|fault|segfault|corruption|unable to|no killable processes|detected (?:expedited )?stalls?|self-detected stall"
    r"|cannot initiali[sz]e|cannot proceed|cannot attach gpu|can't recover|boot attempts exceeded"
    r"|none of the nvidia (?:graphics adapters|devices) were initiali[sz]ed|api mismatch"
    r"|in this system is not supported by|while in atomic or interrupt context|a gpu crash dump has been created"
    # an NVMe controller that never came ready (dev_err; "Device not ready; aborting reset, CSTS=0x1" since 5.x): the driver
    # gives up on it and removes it; jbd2 aborting a journal (KERN_ERR; the filesystem goes read-only next)
    r"|not ready; aborting (?:initiali[sz]ation|reset|shutdown)|aborting journal on device"
    # a Mellanox NIC's firmware that stopped counting its health (mlx5_core_err, "mlx5_core 0000:0d:00.0: poll_health:801:(pid
    # 0): device's health compromised - reached miss count"): the NIC is dead to its RDMA and Ethernet traffic until reset;
    # an AMD GPU reset that lost the GPU's memory ("amdgpu 0000:28:00.0: VRAM is lost due to GPU reset!", dev_info): every
    # process's buffers on it are gone, their contexts unusable
    r"|health compromised|vram is lost"
    # the NVIDIA driver that found no GPU to drive (NV_DBG_ERRORS): "NVRM: No NVIDIA graphics adapter probed!" (or "… found!"),
    # "NVRM: The NVIDIA probe routine was not called for 3 device(s)." (nouveau or another driver holds them): no GPU works
    r"|no nvidia graphics adapter (?:probed|found)|nvidia probe routine was not called"
    # amdgpu/amdkfd giving up on the GPU's scheduler firmware (dev_err): "amdgpu: MES might be in unrecoverable state, issue a
    # GPU reset", "The cp might be in an unrecoverable state due to an unsuccessful queues preemption": a GPU reset follows
    r"|in (?:an )?unrecoverable state)\b"
)
# printk_ratelimit()'s count of the lines it dropped (KERN_WARNING), "EXT4-fs error: 1267 callbacks suppressed": the name of
# what printed them is no error of its own.
_RATELIMITED = r": [0-9]+ callbacks suppressed$"
# Lustre's and LNet's errors (D_ERROR, D_EMERG: printed at KERN_ERR, KERN_EMERG) open with these prefixes, their other
# messages with "Lustre: " / "LNet: ". (Looked for as literals: an anchored alternative in _ERROR_WORDS would slow it for
# every line.)
_LIBCFS_ERROR_PREFIXES = ("LustreError: ", "LNetError: ")
# A Lustre client that lost a storage target (LCONSOLE_WARN, KERN_WARNING): "Lustre: fs-OST003a-osc-…: Connection to
# fs-OST003a (at 172.28.1.43@tcp) was lost; in progress operations using this service will wait for recovery to complete".
_LUSTRE_TARGET_LOST = r"^Lustre: \S+: Connection to \S+ \(at \S+\) was lost;"
# The module loader's refusals (KERN_WARNING): "nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)",
# "…: disagrees about version of symbol …" (a module built against another kernel's or OFED's symbols; it does not load).
_WARNING_WORDS = (
    r"(?i)^WARNING:|\bwarn(?:ing)?\b|\btimed? ?out\b|: Unknown symbol \S+ \(err -?[0-9]+\)|: disagrees about version of symbol "
    # a server or device that stopped answering (KERN_NOTICE): "nfs: server 10.2.80.41 not responding, still trying" (an NFS
    # mount's I/O hangs: a training job's data loader with it)
    r"|\bnot responding\b"
    # an NVMe controller that stopped answering (KERN_WARNING), "nvme nvme0: controller is down; will reset: CSTS=0xffffffff,
    # PCI_STATUS=0x10" (all ones: the drive is off the bus; its I/O fails and the driver may remove it)
    r"|\bcontroller is down; will reset\b"
    # a NIC's transceiver or cable pulled (mlx5_core_info, "mlx5_core 0000:08:00.0: Port module event: module 0, Cable
    # unplugged"): its port goes down, the RDMA traffic of a job's ranks over it stops
    r"|: Port module event: module [0-9]+, Cable unplugged"
    # a network port that went down (all netdev_info / dev_info): its carrier ("mlx5_core 0000:53:00.0 enp83s0f0np0: Link
    # down"; Intel's and Broadcom's "…: NIC Link is Down", igb's and e1000e's "igb: eno1 NIC Link is Down", others' "…: Link is
    # Down"), an InfiniBand or RoCE port's state
    # (ib_core, "mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link DOWN") and a bond dropping the port ("bond0: (slave
    # enp83s0f0np0): link status definitely down, disabling slave"): the NCCL / RDMA traffic of a job's ranks over it stops
    r"|: (?:\S+ )?NIC Link is down\b|: Link (?:is )?down\b|: Port: [0-9]+ Link DOWN\b|: link status definitely down\b"
    # an AMD GPU reset (dev_info, "amdgpu 0000:28:00.0: GPU reset begin!. Source:  1", 5.x "… amdgpu: GPU reset begin!"): the
    # GPU recovers, the jobs on it are lost
    r"|\bGPU reset begin!"
)

_OOM_HEADER = r"^(?<name>.*?) invoked oom-killer: (?<args>.*)$"
# 2.6.32 writes "Pid: 1517, comm: python Tainted: …" where later kernels write "CPU: 0 PID: 1517 Comm: python …".
_CPU = r"^(?:CPU: (?<cpu>[0-9]+) (?:UID: [0-9]+ )?PID: |Pid: )(?<pid>[0-9]+)(?: Comm: |, comm: )(?<rest>.*)$"
_CPUSET = r"^(?<name>.+) cpuset=(?<cpuset>\S*) mems_allowed=(?<mems>\S+)$"
_HARDWARE = r"^Hardware name: (?<hardware>.*)$"
_MEMCG_USAGE = r"^memory: usage (?<used>[0-9]+)kB, limit (?<limit>[0-9]+)kB, failcnt (?<failcnt>[0-9]+)"
_TASK_IN = r"^Task in (?<task>\S+) killed as a result of limit of (?<memcg>\S+)"
# The memcg whose limit was hit, named again over its stats (alone when a paste cut the "Task in" line off).
_MEMCG_STATS = r"^Memory cgroup stats for (?<memcg>/[^:\s]*)"
_OOM_SUMMARY = r"^oom-kill:(?<kv>.*)$"
# cgroup v2 with memory.oom.group (the kubelet sets it on containers since 1.28): after the chosen task's kill,
# every other task of the cgroup is killed, a "Killed process" line each, under this line.
_OOM_GROUP = r"^Tasks in (?<cgroup>\S+) are going to be killed due to memory\.oom\.group set"
_SCOPE = r"^(?:(?<scope>Memory cgroup out of memory|Out of memory(?: \([^)]*\))?): )?"
# 2.6.32 (RHEL 6) prints the uid between the pid and the name: "Killed process 3679, UID 0, (name) …".
_KILLED = _SCOPE + r"Killed process (?<pid>[0-9]+)(?:, UID [0-9]+,)? \((?<name>.*)\)(?:[ ,].*)?$"
# "kill process … or a child" before 2.6.36.
_SELECTED = _SCOPE + r"[Kk]ill process (?<pid>[0-9]+) \((?<name>.*)\) score (?<score>-?[0-9]+) or (?:sacrifice|a) child"
# A task the kernel sent SIGBUS for touching a poisoned (uncorrectable) memory page, the task named "comm:pid" by
# every wording: "MCE: Killing python:123 due to hardware memory corruption fault at 7f…" (the faulting task),
# "Memory failure: 0x3710b3: Sending SIGBUS to python:123 due to hardware memory corruption" (5.2+; "Killing" before,
# "MCE 0x…: Killing …:… early" in 3.x), "… forcibly killing …:… because of failure to unmap corrupted page", and the
# signal that could not be sent to the task ("MCE: Error sending signal to python:123: -3", later "Memory failure: Error sending signal to …").
_HWPOISON_KILL = (
    r"(?:(?:Killing|Sending SIGBUS to|forcibly killing) (?<name>\S.*?):(?<pid>[0-9]+) (?:early )?"
    r"(?:due to hardware memory corruption|because of failure to unmap corrupted page)"
    r"|^(?:MCE|Memory failure): Error sending signal to (?<unsent_name>\S.*?):(?<unsent_pid>[0-9]+): -[0-9]+$)"
)
# A fork (or a new thread) refused at a cgroup's pids.max (4.3+, KERN_INFO, on the cgroup's first refusal): the cgroup whose
# limit it hit, a pod's or a container's under kubepods ("cgroup: fork rejected by pids controller in /kubepods/burstable/pod…/8e8c…").
_PIDS_REJECTED = r"^cgroup: fork rejected by pids controller in (?<cgroup>/\S*)"
# A task that died of a signal that dumps core (audit_core_dumps, AUDIT_ANOM_ABEND; SIGQUIT left out), printed by kauditd when
# no auditd takes the records, often a crashed trainer's only kernel line besides its segfault: "audit: type=1701
# audit(1787241386.129:755): auid=1000 uid=1000 gid=1000 ses=1 pid=314359 comm="python3" exe="/usr/local/bin/python3.12"
# sig=11 res=1" (3.x: "… reason="memory violation" sig=11"). The record's time is the wall clock's, UTC, to the millisecond;
# a comm audit finds unsafe to print (a space, a quote) is written in hex, unquoted.
_AUDIT_ABEND = r"^audit: type=1701 audit\((?<epoch_ms>[0-9]+\.[0-9]{3}):[0-9]+\): .*?" + _audit.ABEND_FIELDS
# "BUG: Bad page state in process python3  pfn:1a2b3c" (KERN_ALERT): the page allocator found a page it was freeing or
# handing out still mapped or referenced (memory corruption, a driver's bug, bad RAM); the task is the one that hit it.
_BAD_PAGE = r"^BUG: Bad page state in process (?<name>.+?) +pfn:"
_REAPER = (
    r"^oom_reaper: reaped process (?<pid>[0-9]+) \((?<name>.*)\)"
    r"(?:,? now anon-rss:(?<anon>[0-9]+)kB, file-rss:(?<file>[0-9]+)kB, shmem-rss:(?<shmem>[0-9]+)kB)?"
)
# 3.x-5.x print 8 numbers per task; 4.1-4.14 add nr_pmds after nr_ptes; 6.x adds rss_anon / rss_file /
# rss_shmem after rss.
_TASK_ROW = (
    r"^\[\s*(?<pid>[0-9]+)\]\s+(?<uid>[0-9]+)\s+(?<tgid>[0-9]+)\s+(?<total_vm>[0-9]+)\s+(?<rss>[0-9]+)"
    r"(?:\s+(?<rss_anon>[0-9]+)\s+(?<rss_file>[0-9]+)\s+(?<rss_shmem>[0-9]+))?"
    r"\s+(?<pgtables>[0-9]+)(?:\s+[0-9]+)?\s+(?<swapents>[0-9]+)\s+(?<adj>-?[0-9]+)\s+(?<name>.+)$"
)
# A task-table row wrapped before its name: its figures and nothing after them.
_TASK_ROW_CUT = r"^\[\s*[0-9]+\](?:\s+-?[0-9]+)+\s*$"
# The figures a kill line and a reaper line print after the task's name, each "word:number".
_KILL_FIGURES_TAIL = r"^(?:total-vm|anon-rss|file-rss|shmem-rss|UID|pgtables|oom_score_adj):-?[0-9]"
_CPUSET_LINE = r"\S.* cpuset=\S* mems_allowed=\S+$"
# A task's state line (sched_show_task, 5.x+): "task:python3.11      state:D stack:    0 pid:15277 ppid: 15257 flags:0x…"
# (6.x: "… stack:0 pid:123 tgid:123 ppid:2 …"), the comm padded to 15 columns and maybe holding spaces. It opens each task
# of a SysRq-w "Show Blocked State" dump, and a hung-task report someone pasted without its "INFO: task …" line.
_TASK_STATE = r"^task:(?<comm>.{1,15}?) +state:(?<state>[A-Z])\b.*? pid: *(?<pid>[0-9]+)\b"
# A line of the memcg's memory.stat the OOM killer prints under "Memory cgroup stats for …:" (4.19+: "anon 2141384704").
_STAT_LINE = r"[a-z_]+ [0-9]+$"
# Heads of the kernel's other multi-line reports; the dump lines after one join it as after an OOM header.
# Hung task (then the task's state line and stack; since 6.16 also the lock it waits on and the state and stack of the
# task likely holding it, "INFO: task zsh:470 is blocked on a mutex likely owned by task zsh:470."), soft lockup, page
# allocation failure (then a dump like the OOM killer's), a slab allocation failure (then the cache's and the nodes'
# lines), a user process's segfault or trap (then its "Code:" line), oops / BUG / WARNING (x86's and arm64's), a machine
# check, an EDAC memory error, a PCIe AER error, a firmware-first (APEI GHES) hardware error record, an NVSwitch SXid
# and an NVIDIA Xid (then the driver's indented lines). Since 6.19 a WARNING's banner names the task after the place,
# "WARNING: drivers/…/rpc.c:164 at r535_gsp_msgq_wait+0xb4/0xd0 [nouveau], CPU#0: (udev-worker)/429" (before it
# "WARNING: CPU: 0 PID: 429 at …"); a BUG_ON() prints "kernel BUG at mm/slub.c:1234!" (KERN_CRIT), then on x86 the
# oops header of its trap, "invalid opcode: 0000 [#1] SMP NOPTI" (before 6.9's "Oops: invalid opcode: …"); an
# interrupt no handler claimed, "irq 16: nobody cared (try booting with the "irqpoll" option)" (KERN_ERR, then a dump); an
# RCU stall, "rcu: INFO: rcu_sched detected stalls on CPUs/tasks:" (KERN_ERR, "rcu: " dropped before 4.20); a hard
# lockup, "NMI watchdog: Watchdog detected hard LOCKUP on cpu 79" (KERN_EMERG, then the CPU's dump); the table of the
# last RPCs the NVIDIA driver prints when GSP firmware times out, "NVRM: GPU0 RPC history (CPU -> GSP):" (then its
# "NVRM:     " rows, and the same of the events GSP sent, "… RPC event history (CPU <- GSP):"); an arm64 asynchronous
# external abort, "SError Interrupt on CPU3, code 0xbe000011 -- SError" (KERN_CRIT, then the CPU's registers; a RAS error);
# the RAS report of an AMD GPU (amdgpu's ACA, MI300), "amdgpu 0000:42:00.0: {1}[Hardware Error]: Accelerator Check
# Architecture events logged" (the RAS event's number in braces), then its "aca entry[00].STATUS=0x…" lines (STATUS, ADDR,
# MISC0, IPID, SYND), each record a GPU's; an arm64 SMMUv3's fault event (a device's DMA the IOMMU refused: a GPU's or a
# NIC's on a Grace or Ampere host), "arm-smmu-v3 arm-smmu-v3.0.auto: event 0x10 received:", then the event's four raw words
# and, since 6.x, its decoding ("… event: C_BAD_STREAMID client: (unassigned sid) sid: 0x900 ssid: 0x0").
# a PCI function as the kernel names a device ("0000:1a:00.0")
_PCI_FUNCTION = r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_PCI_DEVICE = rf"\S+ {_PCI_FUNCTION}: "
_AMDGPU_ACA = _PCI_DEVICE + r"(?:\{[0-9]+\})?\[Hardware Error\]: "
_BLOCK_HEAD = (
    r"^(?:INFO: task (?<hung_name>.+):(?<hung_pid>[0-9]+) (?:blocked for more than (?<hung_seconds>[0-9]+) seconds"
    r"|(?:is |<[a-z]+> )?blocked on an? \S+(?:, but| likely (?:owned|last held) by task (?<owner_name>.+):(?<owner_pid>[0-9]+))?)"
    # (before 4.5 the report had no "watchdog: " prefix: "BUG: soft lockup - CPU#10 stuck for 23s! [migration/10:346]")
    r"|(?:(?:NMI )?watchdog: )?BUG: soft lockup - CPU#[0-9]+ stuck for (?<lockup_seconds>[0-9]+)s! \[(?<lockup_name>.+):(?<lockup_pid>[0-9]+)\]"
    r"|(?<alloc_name>.+?): page allocation failure[:.] order:(?<alloc_order>[0-9]+), mode:(?<alloc_mode>0x[0-9a-f]+(?:\([^)]*\))?)"
    # the same report of a failed vmalloc(): "kmodloader: vmalloc: allocation failure: 425984 bytes, mode:0x14000c0(GFP_KERNEL), …"
    # (5.x: "…, allocated 12288 of 20480 bytes, mode:…"; 5.16+: "vmalloc error: size 20480, page order 0, …, mode:…")
    r"|(?<vmalloc_name>.+?): vmalloc(?: error)?: (?:allocation failure|size [0-9]+).*?, mode:(?<vmalloc_mode>0x[0-9a-f]+(?:\([^)]*\))?)"
    r"|(?<fault_name>\S.*?)\[(?<fault_pid>[0-9]+)\]: segfault at (?<fault_address>[0-9a-f]+) ip +\S+ sp \S+ error [0-9]+(?: in (?<fault_in>[^\[ ]+))?"
    # a user process's trap (x86 show_signal_msg / do_trap): "traps: python[3097] general protection fault ip:7f00fdcb09df
    # sp:7efe60cfa850 error:0 in libamdhip64.so.7.2.70201[2b09df,7f00fda23000+481000]", "… trap invalid opcode ip:… error:0 in
    # libtorch_cpu.so[…]", "… trap divide error ip:…": what trapped, and the file its instruction was in, as a segfault's
    r"|traps: (?<trap_name>\S.*?)\[(?<trap_pid>[0-9]+)\] (?:(?<trap_what>\S.*?) ip:\S+ sp:\S+ error:[0-9a-f]+(?: in (?<trap_in>[^\[ ]+))?)?"
    # the OOM reaper gave up on a victim (4.6+): then the victim's state line and stack (4.17+), before 4.17 the locks held
    r"|oom_reaper: unable to reap pid:(?<unreaped_pid>[0-9]+) \((?<unreaped_name>.*)\)"
    r"|(?:rcu: )?INFO: (?<rcu_flavor>rcu_[a-z_]+) (?:detected (?:expedited )?stalls on CPUs/tasks|self-detected stall on CPU)"
    r"|WARNING: (?:\S+:[0-9]+ )?at .+?, CPU#[0-9]+: (?<warn_name>.+)/(?<warn_pid>[0-9]+)$"
    r"|irq (?:event )?(?<bad_irq>[0-9]+): (?:nobody cared|bogus return value)"
    r"|arm-smmu-v3 \S+: event (?<smmu_event>0x[0-9a-f]{2}) received:"
    r"|(?<other>BUG: |Oops: |general protection fault|Kernel panic|Unable to handle kernel |Internal error: |WARNING: CPU: "
    r"|kernel BUG at |invalid opcode: |(?:NMI )?watchdog: Watchdog detected hard LOCKUP on cpu |SError Interrupt on CPU"
    r"|SLUB: Unable to allocate memory|mce: \[Hardware Error\]: CPU [0-9]+: Machine Check"
    r"|EDAC \S+ MC[0-9]+: HANDLING MCE MEMORY ERROR|\S+ \S+: PCIe Bus Error: |(?:\S+: )?SXid \(|NVRM: Xid \("
    r"|NVRM: GPU[0-9]+ RPC (?:event )?history \(CPU (?:->|<-) GSP\):|" + _AMDGPU_ACA + r"Accelerator Check Architecture events logged)"
    r"|\{(?<ghes_record>[0-9]+)\}\[Hardware Error\]: Hardware error from APEI )"
)
_CRASH_HEADS = (
    "Oops: ", "general protection fault", "Kernel panic", "Unable to handle kernel ", "Internal error: ", "kernel BUG at ", "invalid opcode: ",
    "SError Interrupt on CPU",
)
# Starts of the lines the kernel prints as part of an OOM header's dump (and of other stack dumps).
_DUMP_STARTS = (
    # an indented line, or an empty one (a panic's message ends with a newline of its own)
    r"\s", r"$", r"CPU: [0-9]+ (?:UID: [0-9]+ )?PID: [0-9]+ Comm: ", r"Pid: [0-9]+, comm: ", r"Hardware name: ",
    # since 6.10 a tainted kernel spells its taint flags out under the CPU line ("Tainted: [P]=PROPRIETARY_MODULE, [O]=OOT_MODULE")
    r"Tainted: \[[A-Z]\]=",
    # the caller a debug check names under its "BUG: using smp_processor_id() in preemptible [00000000] code: Xorg/1183"
    r"caller is \S+\+0x[0-9a-f]+/0x", r"Call [Tt]race:", r"</?(?:TASK|IRQ|NMI)>", r"Code: ", r"RIP: ",
    r"Workqueue: ", r"Mem-Info:", r"Node [0-9]+ ", r"[A-Za-z0-9]+ per-cpu:", r"CPU +[0-9]+: hi: ", r"lowmem_reserve\[\]:", r"Free swap", r"Total swap", r"Tasks state ",
    r"\[\s*pid\s*\]\s+uid",
    r"(?:memory|memory\+swap|kmem|swap): usage ", r"Memory cgroup stats for ", r"Unreclaimable slab info:", r"Swap cache stats:",
    r"active_anon:", r"[0-9]+ (?:total pagecache pages|pages (?:RAM|HighMem|reserved|hwpoisoned|cma reserved|in swap cache|shared|non-shared))",
    r"(?:R[A-Z0-9]{2}|[A-Z]S|CR[0-9]|DR[0-9]): +[0-9a-fA-F]", r"(?:pc|lr|sp|x[0-9]{1,2}) ?: ", _STAT_LINE,
    r"Task in \S+ killed as a result of limit of ", _CPUSET_LINE, r"\[<[0-9a-f]+>\]",
    # the raw stack words x86 printed above its call trace before 4.9 ("ffff880f5d92cd70 0000000094b48ef1 …", four a line;
    # eight-digit words on 32-bit kernels), their leading space lost to syslog
    r"[0-9a-f]{8}(?:[0-9a-f]{8})?(?: [0-9a-f]{8}(?:[0-9a-f]{8})?){1,7} *$",
    # the other reports' (_BLOCK_HEAD): hung task (5.x+ and 4.x state lines: the comm in 15 columns and the state, then
    # before 4.10 the task's address and its free stack, since "free stack, pid, ppid, flags"), oops, machine check, EDAC,
    # AER, NVRM (an SXid report's own lines join it by rca.sources._xid.continues_sxid); the 5.x+ state line pads the comm,
    # which may hold spaces ("task:CPU 0/KVM       state:D"), to 15 columns
    r'"echo 0 > /proc/sys/kernel/hung_task_timeout_secs"', r"task:.{1,15} state:",
    # (the free stack may fill its five columns: "a.out           D13272  7558   6931 0x00100084")
    r"\S.{14} [A-Z](?: +[0-9a-f]{8,16} +[0-9]+ | *[0-9]+ +[0-9]+ +[0-9]+ 0x[0-9a-f]{8}$)",
    r"Modules linked in:", r"---\[ end ",
    # the page a "BUG: Bad page state in process …" report found (dump_page): "page:00000000ce81ba6f refcount:0 mapcount:0 …"
    # (6.x "page: refcount:…", 4.x "page:ba4090b8 count:…"), a compound page's head, its flags, its struct page's raw words,
    # its memcg or mapping, and why it was dumped; the report's CPU line and stack follow, naming the task
    r"page:(?: ?[0-9a-f]{8,16})? (?:ref)?count:-?[0-9]+ mapcount:", r"head: ?(?:[0-9a-f]{8,16} )?order:[0-9]+ ",
    r"(?:anon |ksm )?flags: 0x[0-9a-f]+\(", r"page_type: 0x[0-9a-f]+", r"(?:raw|head): [0-9a-f]{8,16}(?: [0-9a-f]{8,16})+$",
    r"(?:memcg|page->mem_cgroup):[0-9a-f]+$", r"aops:\S", r"page dumped because: ", r"bad because of flags: 0x",
    # x86's protection-key register under the others (4.6+), and lockdep's last irq state changes under a soft lockup or a warning
    r"PKRU: [0-9a-f]{8}$", r"irq event stamp: [0-9]+$", r"(?:hard|soft)irqs last +(?:en|dis)abled at \(",
    # lockdep's list of the locks held, after a hung task or a victim the OOM reaper could not reap (4.6-4.16)
    r"Showing all locks held in the system:", r"[0-9]+ locks? held by \S",
    # an oops's (x86 before 4.10): the faulting address, the page-table walk, the task line, the stack heading;
    # arm64's: the abort's decoding, the page-table walk, the processor state; a panic's closing lines
    r"(?:IP: |RIP  )\[<", r"(?:PGD|P4D|PUD|PMD|PTE) [0-9a-f]+(?: |$)", r"task: [0-9a-f]{8,16} ", r"Stack:$",
    # x86's page-fault decoding since 5.1 ("#PF: supervisor read access in kernel mode", "#PF: error_code(0x0000) - …")
    r"#PF: ",
    # an RCU stall report's (its lines "rcu: "-prefixed since 4.20, or tab-indented), the backtraces it asks of the CPUs
    # that stall, and the task it names ("Task dump for CPU 0:", then the task's state line and stack)
    r"rcu: ", r"Sending NMI from CPU [0-9]+ to CPUs ", r"NMI backtrace for cpu [0-9]+", r"Task dump for CPU [0-9]+:",
    # the close of an "irq 16: nobody cared" report: the interrupt's handlers ("[<…>] usb_hcd_irq" under "handlers:"),
    # then the line disabling it (KERN_EMERG)
    r"handlers:$", r"Disabling IRQ #[0-9]+$",
    # (before 4.9 arm64, and 32-bit ARM, print the tables' base and walk as "pgd = ffffffc0edcf1000", "[00000000] *pgd=…",
    # and the faulting code's place as "PC is at vop_crtc_bandwidth+0x1f8/0x2dc", "LR is at …")
    r"(?:Mem|Data) abort info:", r"\S+ pgtable: ", r"\[[0-9a-f]{8,16}\] \*?(?:pgd=|address between)", r"pgd = [0-9a-f]{8,16}$",
    r"pstate: [0-9a-f]{8} ", r"(?:PC|LR) is at ",
    r"(?:SMP: stopping secondary CPUs|Kernel Offset: |PHYS_OFFSET: |CPU features: |Memory Limit: |Rebooting in [0-9]+ seconds)",
    # a stack frame whose indent a copy lost ("kernel: dump_stack_lvl+0x34/0x48", "kernel: ? __alloc_pages+0xe6/0x230",
    # 32-bit ARM's "kernel: show_stack from dump_stack_lvl+0x90/0xac")
    r"(?:\? )?(?:[A-Za-z_][A-Za-z0-9_.]* from )?[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+/0x[0-9a-f]+",
    # 32-bit ARM's stack dump: its heading (before 5.x), the exception stack's heading and rows ("9fa0: 00001004 …")
    r"Backtrace:", r"Exception stack\(", r"[0-9a-f]{4}: +[0-9a-f]{8}(?: |$)",
    r"mce: \[Hardware Error\]: (?:TSC|RIP|PROCESSOR|ADDR|MISC|PPIN|IPID|SYND|Run the above|Machine check: )",
    r"EDAC \S+ MC[0-9]+: (?:CPU [0-9]+: Machine Check|TSC|ADDR|MISC|PROCESSOR) ", r"EDAC MC[0-9]+: [0-9]+ [CU]E ",
    # a firmware-first record's lines, and the AER status the kernel decodes of its PCIe error for the device's driver
    # ("nvidia 0000:e3:00.0: aer_status: 0x00001000, aer_mask: 0x00000000")
    _PCI_DEVICE + r"(?: |AER: +TLP Header|aer_)", r"NVRM:  ", _GHES, _AMDGPU_ACA + r"aca entry\[",
    r"arm-smmu-v3 \S+: (?:\s*0x[0-9a-f]{8}|event: )",
)
_DUMP = "^(?:" + "|".join(_DUMP_STARTS) + ")"
# Every line any rule below reads starts with one of these or holds a keyword (the task-table
# row is the "[" start; the dump's cpuset line holds "cpuset=", and looking for it from the start
# would read every line to its end). The rest of a kernel log, nearly all of it, is noise that
# only needs a frame and a severity.
_RULE_STARTS = "^(?:" + "|".join((
    *(start for start in _DUMP_STARTS if start != _CPUSET_LINE),
    "CPU: ", "Pid: ", "Hardware name: ", "memory: usage ", "Task in ", "Tasks in ", "oom-kill:", "oom_reaper: ", r"\[",
    "INFO: task ", "INFO: rcu_", "BUG: ", "Oops: ", "general protection fault", "Kernel panic", "Unable to handle kernel ", "Internal error: ",
    "WARNING: ", "kernel BUG at ", "invalid opcode: ", "irq ", "SError ", "traps: ", "mce: ", "EDAC ", "SLUB: ",
    r"nvidia [0-9a-fA-F]{4}", r"amdgpu [0-9a-fA-F]{4}", "arm-smmu-v3 ", "audit: type=1701 ",
)) + ")"
_RULE_KEYWORDS = (
    r"invoked oom-killer: |cpuset=|Killed process |[Kk]ill process |NVRM: |fallen off the bus"
    r"|soft lockup|hard LOCKUP|page allocation failure|: vmalloc(?: error)?: |\]: segfault at |PCIe Bus Error: |SXid \("
    r"| due to hardware memory corruption| because of failure to unmap corrupted page|: Error sending signal to |^cgroup: fork rejected by pids controller "
)
_HEX64 = r"([0-9a-f]{64})"
# A program's own message written to /dev/kmsg (systemd and journald at boot, a daemon forwarding to it) reads
# "sshd[15537]: error: …" in dmesg, and so in the kernel lines a syslog daemon reads from there: its name and pid.
_USERSPACE = r"^(?<name>[A-Za-z0-9_.@/-]+)\[(?<pid>[0-9]+)\]: "
# The Mellanox mlx5 driver's errors and warnings (mlx5_core_err/_warn) name the function, the line and the task that ran
# it: "mlx5_core 0000:04:00.0: mlx5_cmd_check:795:(pid 9993): RTR2RTS_QP(0x504) op_mod(0x0) failed, …" (the task that
# issued the command, an NCCL or UCX rank setting up its queue pairs).
_DRIVER_TASK = r"\b[A-Za-z_][A-Za-z0-9_]*:[0-9]+:\(pid ([0-9]+)\): "
# A driver's line about its device (dev_printk) opens with the driver and the device's PCI address, a network driver's
# (netdev_printk) with the interface's name after it: "mlx5_core 0000:0d:00.0: poll_health:801:(pid 0): …", "mlx5_core
# 0000:3b:00.0 ens1f0: Link down", "nvme 0000:2a:00.0: …": the device the line is about. A PCIe port's ("pcieport
# 0000:00:03.1: AER: … received from 0000:07:00.0") is the bridge that reported an error below it, not a device a job used.
_DEVICE_PCI = rf"^[A-Za-z0-9_.-]+ ({_PCI_FUNCTION})(?: [^ :]+)?: "
# The device below the port that the port's AER report names ("… error received: 0000:01:00.0", "… error message received
# from 0000:3b:00.0"): that one is the device a job used (a GPU whose link failed). A source id of 0 (00:00.0) is none known.
_AER_SOURCE_PCI = rf"^pcieport \S+: AER: .*? received(?: from|:) ({_PCI_FUNCTION})\b"
# Lustre's and LNet's messages (libcfs_debug_msg) name the task that printed them, its pid and "external" pid, then the
# place: "LNetError: 4069:0:(lib-ptl.c:189:lnet_try_match_md()) Matching packet …", "Lustre: 128727:0:(client.c:2310:
# ptlrpc_expire_one_request()) @@@ Request sent has timed out …" (a client's RPC to a storage target, often the I/O of a
# training job's reader); console messages ("Lustre: fs-OST003a-osc-…: Connection to … was lost") name none.
_LIBCFS_TASK = r"^(?:Lustre|LNet)(?:Error)?: ([0-9]+):[0-9]+:\("
# ext4's errors name the task whose system call hit them (its comm, up to 15 characters, which may hold spaces and colons:
# "rs:main Q:Reg"), no pid: "EXT4-fs error (device sdd1): ext4_journal_check_start:83: comm rsync: Detected aborted journal",
# "… ext4_lookup:1706: inode #6291457: comm ls: deleted inode referenced: 6292032", a file's "… inode #12: block 34: comm
# python: path model.bin: …". The comm is the longest one a ": " follows, unless a ": path " does.
_EXT4_COMM = (
    r"^EXT[234]-fs error \(device [^)]+\): \S+:[0-9]+: (?:inode #[0-9]+: )?(?:block [0-9]+: )?comm "
    r"(?:(?<before_path>.{1,15}?): path |(?<comm>.{1,15}): )"
)
# The AMD GPU driver's reports of a job the GPU did not finish and of a GPU page fault name the process whose job or
# access it was. A hung job (KERN_ERR, a GPU reset follows): "amdgpu 0000:c5:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled
# seq=2662395, emitted seq=2662397", then "amdgpu 0000:c5:00.0: amdgpu:  Process code pid 1048641 thread code:cs0 pid
# 1048662" (before 6.x "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx timeout, signaled seq=…" and "… *ERROR* Process
# information: process picom pid 37593 thread picom:cs0 pid 37625"; 4.x "last signaled seq=…"). A page fault: "amdgpu
# 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:40 vmid:8 pasid:32785)", then " in process python3 pid 6318
# thread python3 pid 6318)" or " Process python pid 523991 thread …" (5.x on the fault's own line: "[mmhub0] no-retry page
# fault (src_id:0 … pasid:0, for process  pid 0 thread  pid 0)"; 4.x's GFX8 and older, on the fault's own line with no comma:
# "amdgpu 0005:01:00.0: GPU fault detected: 146 0x0000480c for process Media1190 pid 2828872 thread appstream:cs0 pid
# 2828891"). The process is the pid's thread group leader; pid 0 with no name is none the driver could find.
_AMDGPU_LINE = ("amdgpu ", "[drm:amdgpu_")
# amdkfd (the compute queues of a ROCm process) prints without the device, "amdgpu: " alone, the process it failed by its
# pid (KERN_ERR): "amdgpu: Failed to evict queues of process pid 2439413" (a GPU reset or a hang evicting a job's queues),
# "amdgpu: Failed to suspend process pid 1234", "amdgpu: Failed to restore queues of pid 1234".
_AMDKFD_TASK = r"^amdgpu: Failed to .*?\b(?:process )?pid ([0-9]+)\b"
_AMDGPU_TASK = r"(?:\bProcess(?: information: process)?|\bfor process| in process) (?<name>.*?) pid (?<pid>[0-9]+) thread .*? pid [0-9]+"
_AMDGPU_RING_TIMEOUT = r"\bring (\S+) timeout, (?:last )?signaled seq="
_AMDGPU_REPORT_HEAD = _AMDGPU_RING_TIMEOUT + r"|\] (?:(?:no-)?retry )?page fault \(src_id:"
# The Habana driver names a card by its device, "habanalabs hl2: failed to initialize the H/W", once that is made; the lines
# before it (and the probe's own) name the PCI function: "habanalabs 0000:1a:00.0: Failed to initialize hl2. Device is NOT
# usable !" and "habanalabs hl0: Successfully added device 0000:1a:00.0 to habanalabs driver" name both, pairing them.
_HL_CARD = r"^habanalabs (hl[0-9]+): "
_HL_PAIRS = (
    rf"^habanalabs (?<pci>{_PCI_FUNCTION}): .*?\b(?<card>hl[0-9]+)\b",
    rf"^habanalabs (?<card>hl[0-9]+): .*?\b(?<pci>{_PCI_FUNCTION})\b",
)
_FILE_ROWS = 1 << 40  # the rows of file N of a batch start at N << 40 (rca.sources.kernel._numbered)

# Talos' user-space OOM controller (machined, 1.12+) writes its zap lines to /dev/kmsg, where `talosctl dmesg` shows them:
# "[talos] Sending SIGKILL to cgroup {"component": "controller-runtime", "controller": "runtime.OOMController", "cgroup":
# "/sys/fs/cgroup/kubepods/burstable/pod<uid>"}" kills every process of a cgroup, as systemd-oomd does; "[talos] OOM
# controller triggered {…}" is the memory pressure (PSI) that set it off. The cgroup is named by its path under the mount.
_TALOS_OOM = r"^\[talos\] (?:Sending (?<signal>SIG[A-Z0-9]+) to cgroup (?<fields>\{.*)|(?<triggered>OOM controller triggered)\b)"
_TALOS_FIELD = r'"{}": "([^"]*)"'
_CGROUP_MOUNT = r"^/sys/fs/cgroup/"

# Block facts carried onto the kill line → whether the oom-kill: summary must name the same pid.
_CARRIED = {
    "memcg_used": False, "memcg_limit": False, "memcg_failcnt": False,
    "summary_constraint": True, "summary_nodemask": True, "summary_cpuset": True, "summary_mems_allowed": True,
    "summary_oom_memcg": True, "summary_task_memcg": True, "summary_uid": True, "summary_global_oom": True,
    "task_in_task": False, "task_in_memcg": False, "stats_memcg": False,
}


def sniff(head: Sequence[str]) -> float:
    """Share of the head that is kernel log: dmesg lines, ``kernel:`` syslog / journald lines, their continuations."""
    return one_head(sniff_heads, head)


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """:func:`sniff` of each head of :func:`~rca.sources._base.heads_frame`."""
    heads = _unindented(_uncolored(heads), "head")
    text = pl.col("text")
    # a line of `dmesg --json` counts in a head that holds its time line or its "dmesg": [ (braces alone are any JSON's)
    json_line = (text.str.contains(_JSON_FIELD) | text.str.contains(_JSON_SYNTAX)) & _json_anchor(text).any().over("head")
    dmesg, program = pl.col("dmesg"), pl.col("program")
    kinds = heads.with_columns(dmesg=_is_dmesg(text), program=_is_program_line(text)).with_columns(
        # journalctl's header lines and syslogd's "host last message repeated 5 times", which any file syslogd writes
        # holds (a kern.log too), vote for no source; its restart and exit lines (facility syslog) go to other files
        neutral=text.str.contains(_JOURNAL_HEADER) | _is_repeat_line(text),
        mine=dmesg & (~program | (dmesg & ~program).any().over("head")) | _is_kernel_envelope(text) | json_line | _is_compact_record(text)
        | _is_wall_line(text, "head"),
        bare=text.str.contains(_BARE_MESSAGE),
        crash=text.str.contains(_BARE_CRASH_HEAD),
        indented=text.str.contains(r"^\s"),
    ).with_columns(after_crash=pl.col("crash").cum_sum().over("head") > 0).with_columns(
        continued=pl.col("indented") & (pl.col("mine").cum_sum().over("head") > 0),
        bare=pl.col("bare") | pl.col("crash") | pl.col("indented") & (pl.col("bare").cum_sum().over("head") > 0)
        | pl.when(pl.col("after_crash")).then(text).str.contains(_DUMP).fill_null(False),
    )
    found = by_head(
        kinds.filter(~pl.col("neutral")), share=(pl.col("mine") | pl.col("continued")).mean(), bare=pl.col("bare").mean()
    )
    # Bare NVRM / OOM-killer lines (and the indented stack lines after them) make a file kernel only when
    # they are most of it: a few pasted into an application's log leave it the application's.
    return {head: float(row["share"] or 0.0) if (row["bare"] or 0.0) < 0.5 else 1.0 for head, row in found.items()}


def _is_repeat_line(text: pl.Expr) -> pl.Expr:
    """Whether a line is syslogd's own "last message repeated N times" (looked for where the literal is)."""
    repeat = pl.when(text.str.contains(" last message repeated ", literal=True)).then(text)
    return repeat.str.contains(_syslog.SYSLOGD_OWN_LINE).fill_null(False)


def _wall_lines(text: pl.Expr, within: str | None) -> tuple[pl.Expr, pl.Expr]:
    """Whether each line is the head of a syslogd broadcast (:data:`_WALL_HEAD`) a kernel line follows, and whether it is
    that kernel line (looked for where the literal " ..." is, and on the line after such a head)."""
    head = pl.when(text.str.contains(" ...", literal=True)).then(text).str.contains(_WALL_HEAD).fill_null(False)
    after_head = head.shift(1, fill_value=False)
    kernel = pl.when(after_head.over(within) if within else after_head).then(text).str.contains(_WALL_KERNEL).fill_null(False)
    before_kernel = kernel.shift(-1, fill_value=False)
    return head & (before_kernel.over(within) if within else before_kernel), kernel


def _is_wall_line(text: pl.Expr, within: str | None) -> pl.Expr:
    head, kernel = _wall_lines(text, within)
    return head | kernel


def _json_anchor(text: pl.Expr) -> pl.Expr:
    """Whether a line is one only `dmesg --json` (or its output through jq) writes: its "dmesg": [ line or a record's
    time line (looked for where the literals are)."""
    keyed = pl.when(text.str.contains('"time": ', literal=True) | text.str.contains('"dmesg": [', literal=True)).then(text)
    jq_time = pl.when(keyed.str.contains(_JQ_TIME)).then(text.shift(-1)).str.contains(_JSON_AFTER_TIME)
    return (keyed.str.contains(_JSON_ANCHOR) | jq_time | _is_compact_record(text)).fill_null(False)


def _is_compact_record(text: pl.Expr) -> pl.Expr:
    """Whether a line is a whole `dmesg --json` record on a line of its own (through ``jq -c``), looked for where
    the line opens an object."""
    return pl.when(text.str.starts_with("{") | text.str.contains(r"^[ \t]+\{")).then(text).str.contains(_JSON_COMPACT).fill_null(False)


def _uncolored(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` with their ``text`` rid of the colors of ``dmesg --color=always`` (a green stamp, a brown subsystem, a
    red or bold message); a batch without an escape byte, nearly every one, as it is."""
    if not lines["text"].str.contains("\x1b", literal=True).any():
        return lines
    return lines.with_columns(pl.col("text").str.replace_all(_SGR, ""))


def _unindented(lines: pl.DataFrame, within: str | None) -> pl.DataFrame:
    """``lines`` without the indent a pasted block of kernel lines shares: an issue's or a report's copy of `journalctl -k` or
    dmesg indented (a markdown code block, a tool's report section) under a heading line of its own ("* Kernel buffer tail
    (journalctl --no-hostname -k --lines 50):"). The indent is the least of every non-blank line of a file but its first,
    which, written less indented, is a heading and stays as it is; it is taken off only where a line of the block is a
    kernel line once it is (a dmesg stamp or a kernel envelope at its start), so that a block of other lines (a call trace
    under its head, a record's indented further lines) keeps its indent. A batch without such a block, nearly every one, as
    it is."""
    text = pl.col("text")
    if not lines.select((text.str.starts_with(" ") | text.str.starts_with("\t")).any()).item():
        return lines
    nonblank = text.str.strip_chars() != ""
    indent = text.str.len_chars() - text.str.strip_chars_start(" \t").str.len_chars()
    over = (lambda expr: expr.over(within)) if within else (lambda expr: expr)
    first = nonblank & (over(nonblank.cast(pl.Int32).cum_sum()) == 1)
    shared = over(pl.when(nonblank & ~first).then(indent).min()).fill_null(0)
    shapes = lines.select(shared=shared, block=nonblank & ~(first & (indent < shared)))
    if not (shapes["shared"] > 0).any():
        return lines
    dedented = text.str.slice(pl.col("shared"))
    in_block = pl.col("block") & (pl.col("shared") > 0)
    stamped = pl.when(in_block & dedented.str.contains(r"^[^ \t]")).then(dedented)
    kernel = over((_is_dmesg(stamped) | _is_kernel_envelope(stamped)).fill_null(False).any())
    return (
        lines.with_columns(shapes)
        .with_columns(text=pl.when(in_block & kernel).then(dedented).otherwise(text))
        .drop("shared", "block")
    )


# A program's own line under a boot stamp ("[   77.740597] systemd-oomd[659]: …"): dmesg holds a few (what systemd and
# udevd write to /dev/kmsg at boot) among the kernel's, a `journalctl -o short-monotonic` of programs nothing else.
# For sniffing they are the kernel's only beside lines of its own. The kernel's reports of a process's fault read
# alike ("python3[4242]: segfault at 0 ip …") and are its own.
_PROGRAM_UNDER_BOOT_STAMP = r"^\[ *[0-9]+\.[0-9]+\] (?:[^ \t\[\]]+ )?[A-Za-z0-9_.@/-]+\[[0-9]+\]: "
_PROCESS_FAULT = r"\]: (?:segfault at|general protection|trap )"


def _is_program_line(text: pl.Expr) -> pl.Expr:
    return text.str.contains(_PROGRAM_UNDER_BOOT_STAMP) & ~text.str.contains(_PROCESS_FAULT)


def _is_dmesg(text: pl.Expr) -> pl.Expr:
    # A ctime stamp with nothing after it is no kernel line: Snakemake writes "[Wed Nov 12 11:41:00 2025]" over each job.
    return (
        text.str.contains(_RAW) | (text.str.contains(_CTIME_SNIFF) & ~text.str.contains(_APACHE_ERROR_LINE)) | text.str.contains(_ISO)
        | text.str.contains(_RELTIME) | text.str.contains(_KMSG)
    )


def _is_kernel_envelope(text: pl.Expr) -> pl.Expr:
    program = pl.coalesce(
        text.str.extract_groups(_syslog.SHORT_LINE).struct.field("program"),
        text.str.extract_groups(_syslog.ISO_LINE).struct.field("program"),
    )
    journal = text.str.starts_with("{") & (
        (text.str.json_path_match("$._TRANSPORT") == "kernel") | (text.str.json_path_match("$.SYSLOG_IDENTIFIER") == "kernel")
    )
    return ((program == "kernel") & ~text.str.contains(_ISO)).fill_null(False) | text.str.contains(_BARE_KERNEL) | journal.fill_null(False)


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Frame the batch the way most of its lines are written, then apply the kernel message rules."""
    lines = _unindented(_uncolored(lines), within_file(lines))
    header = lines["text"].str.contains(_JOURNAL_HEADER)
    body = lines.filter(~header)
    skipped = {"header": int(header.sum())} if header.any() else {}
    if body.height == 0:
        return Parsed(events=pl.DataFrame(), skipped=skipped)
    # Each file of a batch is framed the way most of its own lines are written.
    families = _families(body)
    if "wall" in families.values():  # a broadcast's head line frames the kernel line after it and is no event (_parse_wall)
        skipped["header"] = skipped.get("header", 0) + _wall_head_count(body, [file for file, name in families.items() if name == "wall"])
    if not within_file(body):
        return Parsed(events=_parse_family(body, families[0], ctx), skipped=skipped)
    family = body.select(pl.col("batch_file").replace_strict(families, return_dtype=pl.String)).to_series()
    parts = [_parse_family(body.filter(family == name), name, ctx) for name in dict.fromkeys(families.values())]
    return Parsed(events=pl.concat(parts, how="diagonal_relaxed").sort("line", maintain_order=True), skipped=skipped)


def _parse_family(body: pl.DataFrame, family: str, ctx: ParseContext) -> pl.DataFrame:
    if family == "journal_json":
        return _syslog.dispatch(_syslog.frame_journal_json(body, ctx), ctx)
    if family == "syslog":
        return _syslog.dispatch(_syslog.frame_text(body, ctx), ctx)
    if family == "mixed":
        return _parse_mixed(body, ctx)
    if family == "dmesg_json":
        return _parse_dmesg_json(body, ctx)
    if family == "wall":
        return _parse_wall(body, ctx)
    return _dmesg_events(body, ctx)


def _parse_mixed(body: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """A file of dmesg lines and syslog / journald lines both (a grep of nvidia-bug-report.log, which copies
    the journal and dmesg): each run of lines read the way its first line is written, a line without
    either form with the run above it."""
    syslog, dmesg = _line_forms(body)
    run = pl.when(syslog).then(pl.lit(True)).when(dmesg).then(pl.lit(False)).forward_fill()
    in_syslog = body.select((run.over(within_file(body)) if within_file(body) else run).fill_null(False)).to_series()
    parts = [
        _dmesg_events(body.filter(~in_syslog), ctx),
        _syslog.dispatch(_syslog.frame_text(body.filter(in_syslog), ctx), ctx),
    ]
    # the lines of a batch's files are numbered on from one file to the next, and the parts keep no batch_file
    return pl.concat([part for part in parts if part.height], how="diagonal_relaxed").sort("line", maintain_order=True)


def _line_forms(lines: pl.DataFrame) -> tuple[pl.Expr, pl.Expr]:
    """Whether each line is a syslog / journald line and whether it is a dmesg line (by their heads)."""
    text = pl.col("text")
    if holds_newline(lines["text"]):
        raw, ctime, iso, reltime, kmsg, short, iso_line = _RAW, _CTIME, _ISO, _RELTIME, _KMSG, _syslog.SHORT_LINE, _syslog.ISO_LINE
    else:  # the ".*$" tail matches any rest of a line, so the heads decide alone and stop early
        raw, ctime, iso, reltime, kmsg, short, iso_line = (
            _RAW_HEAD, _CTIME_HEAD, _ISO_HEAD, _RELTIME_HEAD, _KMSG_HEAD, _syslog.SHORT_HEAD, _syslog.ISO_HEAD
        )
    dmesg = text.str.contains(raw) | text.str.contains(ctime) | text.str.contains(iso) | text.str.contains(reltime) | text.str.contains(kmsg)
    # syslogd's own tagless lines ("host last message repeated 2 times") have no "program:" for the short head, yet
    # are syslog's: above the first tagged line of a mixed file they would otherwise go to dmesg framing, timeless
    syslog = (
        text.str.contains(short)
        | text.str.contains(iso_line)
        | text.str.contains(_BARE_KERNEL)
        | text.str.contains(_SHORT_KERNEL_NO_HOST)
        | _syslog.is_syslogd_own_line(text)
    ) & ~text.str.contains(iso)
    return syslog, dmesg


def _families(lines: pl.DataFrame) -> dict[int, str]:
    """How each file is written (dmesg, syslog or journal_json: whichever most of its lines are; "mixed" for
    dmesg and syslog lines both; syslog for ``journalctl -o short-monotonic``, whose daemons' lines look like
    dmesg's), by its ``batch_file`` number (0 for the lines of one file), counted in one query."""
    text = pl.col("text")
    syslog, dmesg = _line_forms(lines)
    file = pl.col("batch_file") if within_file(lines) else pl.lit(0, pl.Int32).alias("batch_file")
    counts = lines.group_by(file, maintain_order=True).agg(
        dmesg=dmesg.sum(),
        syslog=syslog.sum(),
        monotonic=pl.when(text.str.starts_with("[")).then(text).str.contains(_MONOTONIC_JOURNAL).sum(),
        journal_json=text.filter(text.str.starts_with("{")).str.json_path_match("$.MESSAGE").is_not_null().sum(),
        # one time line a `dmesg --json` record, looked for where the literal is
        dmesg_json=_json_anchor(text).sum(),
        wall=_is_wall_line(text, None).sum(),  # (shifted within each file: an aggregation reads its group alone)
    )
    names = ("dmesg", "syslog", "journal_json", "dmesg_json", "wall")
    families = {}
    for row in counts.iter_rows(named=True):
        family = max(names, key=lambda name: row[name])
        if family == "dmesg" and row["monotonic"] and 2 * row["monotonic"] >= row["dmesg"]:
            family = "syslog"  # its kernel lines go to these rules through the syslog framing, the others to theirs
        families[row["batch_file"]] = "mixed" if family in ("dmesg", "syslog") and row["dmesg"] and row["syslog"] else family
    return families


def _wall_head_count(lines: pl.DataFrame, files: list[int]) -> int:
    """The number of syslogd broadcast heads (:data:`_WALL_HEAD`) in the given files of the batch."""
    within = within_file(lines)
    walled = lines.filter(pl.col("batch_file").is_in(files)) if within else lines
    return int(walled.select(_wall_lines(pl.col("text"), within)[0].sum()).item())


def _parse_wall(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """syslogd's broadcasts (:data:`_WALL_HEAD`): each kernel line framed by the head above it (its host, its time), the heads
    themselves no events (each line of the file after a head counts in an event)."""
    within = within_file(lines)
    text = pl.col("text")
    is_head, _ = _wall_lines(text, within)
    parts = lines.with_columns(is_head=is_head).with_columns(h=pl.when("is_head").then(text).str.extract_groups(_WALL_HEAD))
    h = pl.col("h").struct
    yearless = h.field("year").is_null()
    yearless_ts, yearless_quality = timeutil.yearless_to_utc(timeutil.month_number(h.field("mon")), h.field("day"), h.field("clock"), ctx, within=within)
    dated = timeutil.ctime_string(h.field("year"), h.field("mon"), h.field("day"), h.field("clock"))
    parts = parts.with_columns(dated_ts=map_distinct(parts.select(dated).to_series(), lambda clock: timeutil.dated_to_utc(clock, "%Y-%m-%d %H:%M:%S", ctx.tz)))
    stamped = parts.with_columns(
        ts=pl.when(yearless).then(yearless_ts).otherwise("dated_ts"),
        ts_raw=pl.concat_str(h.field("mon"), pl.lit(" "), h.field("day"), pl.lit(" "), h.field("clock")),
        ts_quality=pl.when(pl.col("is_head")).then(pl.when(yearless).then(yearless_quality).otherwise(pl.lit("exact"))),
        host=h.field("host"),
    )
    # a head's facts go to the lines after it, up to the next head; the lines above a file's first head have none
    opened = (pl.col("is_head") | starts_file(stamped)).cum_sum()
    filled = stamped.with_columns(
        [forward_fill_within(pl.col(name), opened) for name in ("ts", "ts_raw", "ts_quality", "host")]
    ).with_columns(ts_quality=pl.coalesce("ts_quality", pl.lit("missing")))
    framed = filled.filter(~pl.col("is_head")).select(
        "line", "text", *file_column(lines), "ts", "ts_raw", "ts_quality", "host", program=pl.lit("kernel"), pid=pl.lit(None, pl.Int64),
        message=text.str.replace(_WALL_KERNEL, ""), severity=pl.lit(None, pl.String), format=pl.lit("syslog_wall"),
        boot_seconds=pl.lit(None, pl.Float64),
    )
    return kernel_rules(framed, ctx)


def _dmesg_events(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """The events of dmesg lines: framed, a /dev/kmsg line's fragments joined into one row, read by the rules."""
    framed = _unescaped_kmsg(_frame_dmesg(lines, ctx))
    text = pl.col("text")
    # a "+" record is rare: the patterns read only the lines that hold ",+" and the lines above those
    fragment = pl.when(text.str.contains(",+", literal=True)).then(text).str.contains(_KMSG_FRAGMENT) & ~starts_file(framed)
    joined = framed.select(pl.when(fragment).then(text.shift(1)).str.contains(_KMSG_HEAD).fill_null(False)).to_series()
    if not joined.any():
        return kernel_rules(framed, ctx)
    piece = framed.with_columns(piece=(~joined).cum_sum())
    rows = piece.group_by("piece", maintain_order=True).agg(
        pl.exclude("message", "piece").first(), pl.col("message").str.join(""), record_lines=pl.len().cast(pl.Int32)
    )
    return _covering(kernel_rules(rows.drop("record_lines").select(framed.columns), ctx), rows)


def _unescaped_kmsg(framed: pl.DataFrame) -> pl.DataFrame:
    """``framed`` with the "\\xNN" escapes of its /dev/kmsg records' messages read back (:data:`_KMSG_ESCAPES`); a
    message whose bytes make no valid UTF-8 text as written. Only the records that hold one are read."""
    message = pl.col("message")
    escaped = framed.select((pl.col("format") == "dmesg_kmsg") & message.str.contains("\\x", literal=True)).to_series().fill_null(False)
    if not escaped.any():
        return framed
    hex_text = message.str.encode("hex").str.replace_many(list(_KMSG_ESCAPES), list(_KMSG_ESCAPES.values()))
    decoded = pl.when(hex_text.str.contains(_UTF8_HEX)).then(hex_text).str.decode("hex").cast(pl.String)
    read = framed.filter(escaped).select(pl.coalesce(decoded, message)).to_series()
    return framed.with_columns(framed["message"].scatter(escaped.arg_true(), read))


def _covering(events: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """``events`` of ``rows`` that each stand for ``record_lines`` lines (a ``dmesg --json`` record, a /dev/kmsg line
    in fragments), their ``n_lines`` counted in lines: an event of n rows starts at its first row's first line and ends
    at its last row's last one."""
    stop = pl.col("record_lines").cum_sum()
    bounds = rows.select("line", stop=stop, start=stop - pl.col("record_lines"), first=pl.int_range(pl.len()))
    covered = events.join(bounds.select("line", "first", "start"), on="line", how="left").with_columns(
        last=pl.col("first") + pl.col("n_lines") - 1
    ).join(bounds.select(last="first", last_stop="stop"), on="last", how="left")
    return covered.with_columns(
        n_lines=pl.coalesce((pl.col("last_stop") - pl.col("start")).cast(pl.Int32), "n_lines")
    ).drop("first", "start", "last", "last_stop")


def _frame_dmesg(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """dmesg lines → framed columns; a line without a time prefix inherits the line above's."""
    lines = _unglued(lines)
    one_line = not holds_newline(lines["text"])
    text = pl.col("text")
    # Nearly every line of a raw dmesg is "[  12.345678] message": cut apart, not captured.
    stamped = text.str.contains(_BOOT_STAMP) & ~text.str.contains(_HOST_AFTER_STAMP) & ~text.str.contains(_CTIME_HEAD)
    framed = split_rows(lines, stamped if one_line else pl.lit(False), _framed_boot_stamp, lambda rest: _framed(rest, ctx, one_line))
    carried = ["ts", "ts_raw", "boot_seconds", "host", "format"]
    inherited = inherit_frame(framed, carried).select(*_syslog.FRAMED_SCHEMA, "boot_seconds", *file_column(lines))
    return inherited.with_columns(lines["shared_line"]) if "shared_line" in lines.columns else inherited


def _unglued(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` with a kernel line written into another's (:data:`_GLUED_STAMP`) cut out into a row of its own on the
    same line, after the text before it (``shared_line``: it adds no line to an event's ``n_lines``); a batch without
    one, nearly every one, as it is."""
    text = pl.col("text")
    # A console writes the kernel's lines with dmesg's raw stamps; the ring buffer read back (dmesg -T, journalctl -k) has
    # no other writer's text to glue them into: a file without a raw stamp is not looked into.
    raw = lines.select(text.str.contains(_BOOT_STAMP)).to_series()
    if not raw.any():
        return lines
    in_console = pl.lit(raw).any().over(within) if (within := within_file(lines)) else pl.lit(True)
    # a line that opens with a stamp or another dmesg head is the kernel's own: only the others are looked into
    candidates = lines.select(pl.when(~pl.lit(raw) & in_console).then(text).str.contains(_GLUED_STAMP).fill_null(False)).to_series()
    if not candidates.any():
        return lines
    glued = candidates.clone().scatter(candidates.arg_true(), lines.filter(candidates).select(~_is_dmesg(text)).to_series())
    if not glued.any():
        return lines
    indexed = lines.with_columns(__row=pl.int_range(pl.len(), dtype=pl.Int64), __part=pl.lit(0, pl.Int8))
    cut = indexed.filter(glued).with_columns(cut=text.str.extract_groups(_GLUED))
    before, kernel = pl.col("cut").struct.field("before"), pl.col("cut").struct.field("kernel")
    rows = [
        indexed.filter(~glued),
        cut.with_columns(text=pl.coalesce(before, text)).drop("cut"),
        cut.filter(kernel.is_not_null()).with_columns(text=kernel, __part=pl.lit(1, pl.Int8)).drop("cut"),
    ]
    split = pl.concat(rows).sort("__row", "__part")
    return split.with_columns(shared_line=pl.col("__part") == 1).drop("__row", "__part")


def _parse_dmesg_json(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """``dmesg --json`` records: each framed as a dmesg line is (its boot seconds, its level) and read by the
    rules; an event then covers every line of the records it was made of."""
    compact = lines.select(_is_compact_record(pl.col("text"))).to_series()
    parts = []
    if not compact.all():
        parts.append(_json_records(lines.filter(~compact)))
    if compact.any():
        parts.append(_compact_records(lines.filter(compact)))
    records = pl.concat(parts).sort(*file_column(lines), "line")
    return _covering(kernel_rules(_framed_json(records), ctx), records)


def _compact_records(lines: pl.DataFrame) -> pl.DataFrame:
    """One row a record of `jq -c`'s one-line records, its fields as :func:`_json_records` gives them."""
    head = pl.col("text").str.extract_groups(_JSON_COMPACT).struct
    return lines.select(
        *file_column(lines), "line", record_lines=pl.lit(1, pl.Int32), fac=head.field("fac"),
        pri=head.field("pri").str.strip_chars('"'), time=head.field("time"), msg=pl.col("text").str.json_path_match("$.msg"),
    )


def _json_records(lines: pl.DataFrame) -> pl.DataFrame:
    """One row a ``dmesg --json`` record: its first line, the lines it spans and its fields (a string's quotes and
    escapes undone, the time as written)."""
    text = pl.col("text")
    field = text.str.extract_groups(_JSON_FIELD).struct
    opened = (text.str.contains(_JSON_OPEN) | starts_file(lines)).cum_sum()
    rows = lines.with_columns(opened=opened, name=field.field("field"), value=field.field("value"))
    # a column first: polars cannot nest this window in the per-file fills below
    rows = rows.with_columns(holds_msg=(pl.col("name") == "msg").any().over("opened"))
    # the lines of an "object" without a message (the outer "{" and "dmesg": [) go with the record after them,
    # the closing ones with the record they close
    own = pl.when(pl.col("holds_msg")).then(pl.col("opened"))
    within = within_file(lines)
    rows = rows.with_columns(
        record=pl.coalesce(*((fill.over(within) if within else fill) for fill in (own.backward_fill(), own.forward_fill())), pl.col("opened"))
    )
    return rows.group_by(*file_column(lines), "record", maintain_order=True).agg(
        pl.col("line").first(),
        record_lines=pl.len().cast(pl.Int32),
        **{name: pl.col("value").filter(pl.col("name") == name).first() for name in ("fac", "pri", "time", "msg")},
    ).select(*file_column(lines), "line", "record_lines", "fac", _json_value("pri"), "time", _json_value("msg"))


def _framed_json(records: pl.DataFrame) -> pl.DataFrame:
    # "pri" is a number (facility × 8 + level) or, decoded, a name
    msg, pri = pl.col("msg"), pl.col("pri")
    number = pri.cast(pl.Int32, strict=False)
    level = pl.coalesce((number % 8).cast(pl.String), pri)
    return records.select(
        "line", *file_column(records), text=msg, ts=pl.lit(None, _syslog.FRAMED_SCHEMA["ts"]),
        ts_raw=pl.col("time").str.strip_chars(), ts_quality=pl.lit(None, pl.String), host=pl.lit(None, pl.String),
        program=pl.lit("kernel"), pid=pl.lit(None, pl.Int64), message=msg.fill_null(""),
        severity=level.replace_strict(_SEVERITY_BY_LEVEL, default=None), format=pl.lit("dmesg_json"),
        boot_seconds=pl.col("time").str.strip_chars().cast(pl.Float64, strict=False),
    ).select(*_syslog.FRAMED_SCHEMA, "boot_seconds", *file_column(records))


def _json_value(field: str) -> pl.Expr:
    """A record field's value as JSON reads it (a string's quotes and escapes undone), else as written."""
    parsed = pl.concat_str(pl.lit('{"v":'), pl.col(field), pl.lit("}")).str.json_path_match("$.v")
    return pl.coalesce(parsed, pl.col(field)).alias(field)


def _framed_boot_stamp(lines: pl.DataFrame) -> pl.DataFrame:
    """What :func:`_framed` makes of lines that are a boot stamp and a message, and nothing else."""
    cut = lines.with_columns(pl.col("text").str.splitn("]", 2).struct.rename_fields(["stamp", "rest"]).alias("cut")).unnest("cut")
    stamped = cut.with_columns(ts_raw=pl.col("stamp").str.strip_prefix("[").str.strip_chars_start())
    return stamped.select(
        "line", "text", *file_column(lines), ts=pl.lit(None, _syslog.FRAMED_SCHEMA["ts"]), ts_raw="ts_raw", ts_quality=pl.lit(None, pl.String),
        boot_seconds=pl.col("ts_raw").cast(pl.Float64, strict=False), host=pl.lit(None, pl.String), program=pl.lit("kernel"),
        pid=pl.lit(None, pl.Int64), message=pl.col("rest").str.strip_prefix(" "), severity=pl.lit(None, pl.String),
        format=pl.lit("dmesg_raw"), framed=pl.lit(True),
    )


def _framed(lines: pl.DataFrame, ctx: ParseContext, one_line: bool) -> pl.DataFrame:
    parts = lines.with_columns(
        r=head_groups(pl.col("text"), _RAW_HEAD, one_line=one_line),
        c=head_groups(pl.col("text"), _CTIME_HEAD, one_line=one_line),
        i=head_groups(pl.col("text"), _ISO_HEAD, one_line=one_line),
        e=head_groups(pl.col("text"), _RELTIME_HEAD, one_line=one_line),
        # a /dev/kmsg record holds a ";" (cheap to look for): the others' lines skip its head
        k=head_groups(pl.when(pl.col("text").str.contains(";", literal=True)).then(pl.col("text")), _KMSG_HEAD, one_line=one_line),
    )
    r, c, i, e, k = pl.col("r").struct, pl.col("c").struct, pl.col("i").struct, pl.col("e").struct, pl.col("k").struct
    has_raw, has_ctime, has_iso, has_reltime, has_kmsg = (x.field("message").is_not_null() for x in (r, c, i, e, k))
    reltime_ts, reltime_quality = _reltime(parts, ctx) if parts.select(has_reltime.any()).item() else (pl.lit(None), pl.lit(None))
    yearless = has_ctime & c.field("year").is_null()
    yearless_ts, yearless_quality = (
        timeutil.yearless_to_utc(timeutil.month_number(c.field("mon")), c.field("day"), c.field("clock"), ctx, within=within_file(parts))
        if parts.select(yearless.any()).item() else (pl.lit(None), pl.lit(None))
    )
    ctime_clock = timeutil.ctime_string(c.field("year"), c.field("mon"), c.field("day"), c.field("clock"))
    kmsg_level = (k.field("kmsg_prio").cast(pl.Int32, strict=False) % 8).cast(pl.String)
    # microseconds written as dmesg's seconds ("3757433151" → "3757.433151"), so a stamp is the same float either way
    usec = k.field("usec").str.zfill(7)
    kmsg_seconds = pl.concat_str(usec.str.slice(0, usec.str.len_chars() - 6), pl.lit("."), usec.str.slice(-6))
    level = pl.coalesce(
        *((x.field("prio").cast(pl.Int32, strict=False) % 8).cast(pl.String) for x in (r, c, i, e)),
        *(x.field("level") for x in (r, c, i, e)), i.field("talos_level"), kmsg_level,
    )
    parts = parts.with_columns(
        ctime_ts=map_distinct(parts.select(ctime_clock).to_series(), lambda text: timeutil.dated_to_utc(text, "%Y-%m-%d %H:%M:%S", ctx.tz)),
        iso_ts=map_distinct(parts.select(pl.coalesce(i.field("iso"), i.field("talos"))).to_series(), lambda text: timeutil.iso_to_utc(text, ctx.tz)),
    )
    return parts.select(
        "line",
        "text",
        *file_column(lines),
        ts=pl.when(yearless).then(yearless_ts).when(has_ctime).then(pl.col("ctime_ts")).when(has_iso).then(pl.col("iso_ts"))
        .when(has_reltime).then(reltime_ts),
        ts_raw=pl.coalesce(r.field("boot"), c.field("when"), i.field("iso"), i.field("talos"), e.field("minute"), e.field("delta_raw"), e.field("notime_delta"), k.field("usec")),
        ts_quality=pl.when(yearless).then(yearless_quality).when(has_ctime | has_iso).then(pl.lit("exact")).when(has_reltime).then(reltime_quality),
        boot_seconds=pl.coalesce(r.field("boot"), kmsg_seconds).cast(pl.Float64, strict=False),
        host=pl.coalesce(r.field("host"), i.field("node")),
        program=pl.lit("kernel"),
        pid=pl.lit(None, pl.Int64),
        message=pl.coalesce(r.field("message"), c.field("message"), i.field("message"), e.field("message"), k.field("message"), pl.col("text")),
        severity=level.replace_strict(_SEVERITY_BY_LEVEL, default=None),
        format=pl.when(has_raw & r.field("journal").is_not_null()).then(pl.lit("journal_monotonic"))
        .when(has_raw).then(pl.lit("dmesg_raw")).when(has_ctime).then(pl.lit("dmesg_ctime")).when(has_iso).then(pl.lit("dmesg_iso"))
        .when(has_reltime).then(pl.lit("dmesg_reltime")).when(has_kmsg).then(pl.lit("dmesg_kmsg")),
        framed=has_raw | has_ctime | has_iso | has_reltime | has_kmsg,
    )


def _reltime(parts: pl.DataFrame, ctx: ParseContext) -> tuple[pl.Expr, pl.Expr]:
    """The time and its quality of each ``dmesg -e`` line (struct column ``e``): its minute's stamp plus the deltas since.

    The stamp drops the seconds, so a line's time is the start of its minute plus the deltas
    from the stamped line on: up to a minute early, never later. The stamp has no year either:
    it is resolved as a syslog stamp's is (timeutil.yearless_to_utc).
    """
    e = pl.col("e").struct
    anchor = e.field("mon").is_not_null()
    month = timeutil.month_number(e.field("mon"))
    stamp, quality = timeutil.yearless_to_utc(month, e.field("day"), pl.format("{}:00", e.field("clock")), ctx, within=within_file(parts))
    minute = (anchor | starts_file(parts)).cum_sum()
    elapsed = e.field("delta").cast(pl.Float64, strict=False).fill_null(0.0).cum_sum()
    since = elapsed - pl.when(anchor).then(elapsed).forward_fill().fill_null(0.0)
    offset = pl.duration(microseconds=(since * 1e6).round().cast(pl.Int64))
    return forward_fill_within(stamp, minute) + offset, forward_fill_within(quality, minute)


def kernel_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Kernel message rules over framed lines (``_syslog.FRAMED_SCHEMA`` columns, optionally ``boot_seconds``).

    Only lines a rule may read go through the rules: those that :data:`_RULE_STARTS` or
    :data:`_RULE_KEYWORDS` match and the lines of every multi-line record. Each other line is a
    log event of its own as it stands.
    """
    lines = _numbered(_timed(framed, ctx))
    message, continued = pl.col("message"), pl.col("continuation") | pl.col("continuation").shift(-1, fill_value=False)
    ruled = lines.select(
        (message.str.contains(_RULE_STARTS) | message.str.contains(_RULE_KEYWORDS) | continued | _is_warn_message(message))
        & ~pl.col("console_status")
    ).to_series()
    if not ruled.any():  # polars compiles each of the rules' regexes even for no rows: ~1 ms apiece
        plain = _plain(lines).with_columns(pid=pl.lit(None, pl.Int64), process=pl.lit(None, pl.String))
        return _with_talos_oom(_with_card_bus(_with_program(plain))).drop("row")
    # A terminal copy pads lines with blanks, and the rules anchor some patterns at the end of a line.
    facts = (
        lines.filter(ruled).with_columns(pl.col("message").str.strip_chars_end()).with_columns(_line_facts()).with_columns(_xid.line_columns())
        .with_columns(_amdgpu_task(), dump=pl.col("dump") | _xid.continues_sxid())
    )
    records = _with_oops_task(_group(_carry_block_facts(_with_keys(facts))))
    events = _assemble(_xid.record_columns(records, pl.col("position")))
    return _with_talos_oom(_with_card_bus(_with_program(pl.concat([events, _plain(lines.filter(~ruled))], how="diagonal").sort("row")))).drop("row")


def _with_talos_oom(events: pl.DataFrame) -> pl.DataFrame:
    """``events`` with Talos' OOM controller's lines (:data:`_TALOS_OOM`) read as systemd-oomd's are: its kill of a cgroup an
    ``oom_kill`` (error) of that cgroup and the pod it is, attrs oom=talos and the signal; its trigger ``memory_pressure``."""
    message = pl.col("message")
    if not events.select(message.str.starts_with("[talos] ").any()).item():
        return events
    talos = pl.when(message.str.starts_with("[talos] ")).then(message).str.extract_groups(_TALOS_OOM)
    fields = talos.struct.field("fields")
    killed, triggered = talos.struct.field("signal").is_not_null(), talos.struct.field("triggered").is_not_null()
    cgroup = pl.when(killed).then(fields.str.extract(_TALOS_FIELD.format("cgroup"), 1).str.replace(_CGROUP_MOUNT, "/"))
    own = {
        "oom": pl.when(killed).then(pl.lit("talos")),
        "signal": talos.struct.field("signal"),
        "controller": pl.when(killed | triggered).then(
            pl.coalesce(fields, message).str.extract(_TALOS_FIELD.format("controller"), 1)
        ),
    }
    def kept(name: str, found: pl.Expr) -> pl.Expr:
        # (a batch of plain lines alone has none of the rules' columns)
        return pl.coalesce(pl.col(name), found) if name in events.columns else found

    return events.with_columns(
        kind=pl.when(killed).then(pl.lit("oom_kill")).when(triggered).then(pl.lit("memory_pressure")).otherwise("kind"),
        severity=pl.when(killed).then(pl.lit("error")).when(triggered).then(pl.lit("warning")).otherwise("severity"),
        cgroup=kept("cgroup", cgroup),
        pod_uid=kept("pod_uid", memcg_pod_uid(cgroup)),
        container_id=kept("container_id", memcg_container_id(cgroup)),
        attrs=joined_json(kept("attrs", pl.lit(None, pl.String)), attrs_json(own)),
    )


def _with_card_bus(events: pl.DataFrame) -> pl.DataFrame:
    """``events`` (with ``row``) with the PCI address of the Habana card a "habanalabs hl2: …" line names by its device name,
    from a line of the same file that names both (:data:`_HL_PAIRS`)."""
    message = pl.col("message")
    if not events.select(message.str.starts_with("habanalabs ").any()).item():
        return events
    habana = pl.when(message.str.starts_with("habanalabs ")).then(message)
    card = habana.str.extract(_HL_CARD, 1)
    pairs = [habana.str.extract_groups(pattern) for pattern in _HL_PAIRS]
    paired_card = pl.coalesce(*(pair.struct.field("card") for pair in pairs))
    paired_pci = pl.coalesce(*(pair.struct.field("pci") for pair in pairs))
    file = pl.col("row") // _FILE_ROWS  # rows of file N of a batch start at N × _FILE_ROWS (_numbered)
    known = events.select(file.alias("f"), paired_card.alias("card"), paired_pci.alias("pci")).drop_nulls().unique(["f", "card"], keep="first")
    if known.is_empty():
        return events
    named = events.with_columns(f=file, card=card).join(known, on=["f", "card"], how="left", maintain_order="left")
    return named.with_columns(pci_bus=pl.coalesce("pci_bus", "pci")).drop("f", "card", "pci")


def _is_warn_message(message: pl.Expr) -> pl.Expr:
    """Whether a line is the message a WARN(cond, fmt, …) printed under its "WARNING: " banner, which is any text. Where
    warn_slowpath_fmt() prints it (x86 before 4.11, architectures without __WARN_FLAGS) it comes between the banner and
    the module list (__warn: banner, message, print_modules()); x86 and arm64 now print it above the banner instead, a
    line of its own."""
    return (
        message.shift(1).str.starts_with("WARNING: ") & message.shift(-1).str.starts_with("Modules linked in:")
        & ~message.str.starts_with("Modules linked in:")
    ).fill_null(False)


def _numbered(lines: pl.DataFrame) -> pl.DataFrame:
    """``row``: a line's place in its file's lines; in a batch of several files, file N's rows start at
    N × ``_FILE_ROWS``, so that no run, block or Xid report (rca.sources._xid looks two records back)
    reaches from one file into the next. ``seq``: the same count with a serial console's systemd status lines
    (``console_status``) left out: they are no kernel line, and a report the kernel printed around one goes on across it."""
    status = _is_console_status(pl.col("message"))
    if not within_file(lines):
        numbered = lines.with_row_index("row").with_columns(console_status=status)
        return numbered.with_columns(seq=pl.col("row").cast(pl.Int64) - pl.col("console_status").cast(pl.Int64).cum_sum())
    in_file = pl.int_range(pl.len(), dtype=pl.Int64).over("batch_file")
    numbered = lines.with_columns(row=in_file + pl.col("batch_file").cast(pl.Int64) * _FILE_ROWS, console_status=status)
    skipped = pl.col("console_status").cast(pl.Int64).cum_sum().over("batch_file")
    return numbered.with_columns(seq=pl.col("row") - skipped).select("row", pl.exclude("row"))


def _is_console_status(message: pl.Expr) -> pl.Expr:
    """Whether a line is one of systemd's status lines on a serial console (:data:`_SYSTEMD_STATUS`, :data:`_SYSTEMD_JOB`),
    looked for where the line opens with a bracket or the job lines' indent."""
    status = pl.when(message.str.starts_with("[")).then(message).str.contains(_SYSTEMD_STATUS).fill_null(False)
    return status | _is_systemd_job(message)


def _plain(lines: pl.DataFrame) -> pl.DataFrame:
    """Events of lines no rule reads: as framed, severity from the level or the wording."""
    return lines.select(
        "row", "line", _own_lines().alias("n_lines"), "message", "ts", "ts_raw", "ts_quality", "boot_seconds", "host",
        "format", kind=pl.lit("log"), severity=pl.coalesce("severity", _wording()),
    )


def _with_program(events: pl.DataFrame) -> pl.DataFrame:
    """``events`` with the name and pid of a program's line written to /dev/kmsg, or the task a driver names, where no rule
    named a process."""
    message = pl.col("message")
    program = pl.when(message.str.contains("]: ", literal=True)).then(message).str.extract_groups(_USERSPACE)
    ext4 = pl.when(message.str.contains("-fs error (device ", literal=True)).then(message).str.extract_groups(_EXT4_COMM)
    named = events.with_columns(program=program, ext4_comm=pl.coalesce(ext4.struct.field("before_path"), ext4.struct.field("comm")))
    # the gates null the other lines' messages first, so that each pattern reads only the lines that may hold it
    task = pl.coalesce(
        pl.when(message.str.contains(":(pid ", literal=True)).then(message).str.extract(_DRIVER_TASK, 1),
        pl.when(message.str.starts_with("Lustre") | message.str.starts_with("LNet")).then(message).str.extract(_LIBCFS_TASK, 1),
        pl.when(message.str.starts_with("amdgpu: ")).then(message).str.extract(_AMDKFD_TASK, 1),
    )
    # a driver's "(pid 0)": it printed from a timer or an interrupt on an idle CPU (mlx5's health poll), no task's doing
    task = pl.when(task != "0").then(task)
    on_device = message.str.contains(":[0-9a-fA-F]{2}\\.[0-7][ :]") & ~message.str.starts_with("pcieport ")
    below_port = pl.when(message.str.starts_with("pcieport ")).then(message).str.extract(_AER_SOURCE_PCI, 1)
    device = pl.coalesce(
        pl.when(on_device).then(message).str.extract(_DEVICE_PCI, 1), pl.when(~below_port.str.ends_with(":00:00.0")).then(below_port)
    )
    return named.with_columns(
        pci_bus=pl.coalesce("pci_bus", device) if "pci_bus" in events.columns else device,
        pid=pl.coalesce("pid", pl.coalesce(pl.col("program").struct.field("pid"), task).cast(pl.Int64, strict=False)),
        # a serial console's status lines are systemd's (PID 1 writes them to the console)
        process=pl.coalesce(
            "process", pl.col("program").struct.field("name"), "ext4_comm", pl.when(_is_console_status(message)).then(pl.lit("systemd"))
        ),
    ).drop("program", "ext4_comm")


def _timed(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    if "boot_seconds" not in framed.columns:
        framed = framed.with_columns(boot_seconds=pl.lit(None, pl.Float64))
    if "shared_line" not in framed.columns:
        framed = framed.with_columns(shared_line=pl.lit(False))
    embedded = head_groups(pl.col("message"), _EMBEDDED_BOOT_HEAD, one_line=not holds_newline(framed["message"]))
    peeled = framed.with_columns(embedded=embedded).with_columns(
        boot_seconds=pl.coalesce("boot_seconds", pl.col("embedded").struct.field("boot").cast(pl.Float64, strict=False)),
        message=pl.coalesce(pl.col("embedded").struct.field("message"), "message"),
    ).with_columns(boot_seconds=pl.when(pl.col("boot_seconds") < _MAX_BOOT_SECONDS).then("boot_seconds")).drop("embedded")
    boot_ts, boot_quality = timeutil.boot_to_utc(pl.col("boot_seconds"), ctx)
    from_boot = pl.col("ts").is_null() & pl.col("boot_seconds").is_not_null()
    inherited = pl.col("ts_quality") == "inherited"
    keeps_inherited = inherited if ctx.boot_time is not None else pl.lit(False)
    return peeled.with_columns(
        ts=pl.when(from_boot).then(boot_ts).otherwise("ts"),
        ts_quality=pl.when(from_boot & ~keeps_inherited.fill_null(False)).then(boot_quality).otherwise("ts_quality"),
        # a line of a multi-line record: indented in dmesg, or (journalctl, whose framing cut that margin off the
        # message) indented to the column the record's first message starts at
        continuation=(
            (inherited & (pl.col("message").str.contains(r"^\s") | pl.col("text").str.contains(r"^\s") | _goes_on_nvrm_message(framed)
                          | _is_wrapped_tail(pl.col("message")))
             | (_goes_on_nvrm_message(peeled) & _repeats_boot_stamp()))
            & ~_is_systemd_job(pl.col("message"))
        ).fill_null(False),
    )


def _is_wrapped_tail(message: pl.Expr) -> pl.Expr:
    """Whether a line without a stamp is the rest of the OOM killer's line above it that a mail client or a terminal
    wrapped at its left margin (no indent to tell it): a kill or reaper line's figures ("total-vm:…, anon-rss:…",
    "UID:0 pgtables:…"), or a task-table row's last columns ("0             0 oom01") under a row cut before its name."""
    row_cut = message.shift(1).str.contains(_TASK_ROW_CUT).fill_null(False)
    return message.str.contains(_KILL_FIGURES_TAIL) | row_cut & message.str.contains(r"^(?:-?[0-9]+ +)+\S")


def _goes_on_nvrm_message(framed: pl.DataFrame) -> pl.Expr:
    """Whether a line without a stamp of its own goes on with the NVIDIA driver's message above it: the driver prints one
    message as several "NVRM: " lines in one printk ("NVRM: This can occur when a driver such as: " / "NVRM: nouveau, rivafb,
    nvidiafb or rivatv " / …), which some dumps write unindented with no stamp after the first. An Xid is a printk of its own."""
    message = pl.col("message")
    nvrm = message.str.starts_with("NVRM: ")
    return nvrm & nvrm.shift(1) & ~message.str.starts_with("NVRM: Xid ") & ~starts_file(framed)


def _repeats_boot_stamp() -> pl.Expr:
    """Whether a line has the boot stamp of the line above it: in a syslog file, where a syslog daemon writes each line of
    one printk ("NVRM: A GPU crash dump has been created. If possible, please run" / "NVRM: nvidia-bug-report.sh as root
    …") as a line of its own, each with the record's boot stamp to the microsecond (the driver's next printk has its own)."""
    return pl.col("boot_seconds") == pl.col("boot_seconds").shift(1)


def _is_systemd_job(message: pl.Expr) -> pl.Expr:
    """Whether a line is systemd's console line of a job it starts (:data:`_SYSTEMD_JOB`), looked for where the line
    opens with its indent."""
    return pl.when(message.str.starts_with(" " * 9)).then(message).str.contains(_SYSTEMD_JOB).fill_null(False)


def _groups(pattern: str, prefix: str, text: pl.Expr | None = None) -> list[pl.Expr]:
    extracted = (pl.col("message") if text is None else text).str.extract_groups(pattern)
    return [extracted.struct.field(name).alias(f"{prefix}_{name}") for name in re.findall(r"\(\?<([0-9A-Za-z_]+)>", pattern)]


def _line_facts() -> list[pl.Expr]:
    message = pl.col("message")
    summary = message.str.extract(_OOM_SUMMARY, 1)
    killed = message.str.contains(_KILLED)
    header_args = message.str.extract(_OOM_HEADER, 2)
    cpu_rest = message.str.extract(_CPU, 3)
    unwrapped = _unwrapped_text()
    return [
        message.str.extract(_OOM_HEADER, 1).alias("header_name"),
        header_args.str.extract(r"gfp_mask=([^,]+)", 1).alias("header_gfp_mask"),
        header_args.str.extract(r"\border=(-?[0-9]+)", 1).cast(pl.Int64, strict=False).alias("header_order"),
        header_args.str.extract(r"oom_score_adj=(-?[0-9]+)", 1).cast(pl.Int64, strict=False).alias("header_oom_score_adj"),
        header_args.str.extract(r"nodemask=([^,]+)", 1).alias("header_nodemask"),
        message.str.extract(_CPU, 1).cast(pl.Int64, strict=False).alias("cpu_cpu"),
        message.str.extract(_CPU, 2).cast(pl.Int64, strict=False).alias("cpu_pid"),
        _named(pl.coalesce(cpu_rest.str.extract(r"^(.+?)(?: Kdump: \S+)? (?:Not tainted|Tainted:)", 1), cpu_rest.str.strip_chars()))
        .alias("cpu_comm"),
        cpu_rest.str.extract(r"(?:Not tainted|Tainted:[A-Z -]*?)\s*([0-9]\S*)", 1).alias("cpu_kernel"),
        *_groups(_CPUSET, "cpuset"),
        *_groups(_HARDWARE, "hw"),
        *_groups(_MEMCG_USAGE, "memcg"),
        *_groups(_TASK_IN, "task_in"),
        *_groups(_MEMCG_STATS, "stats"),
        *_groups(_OOM_GROUP, "oom_group"),
        *(summary.str.extract(rf"(?:^|,){key}=([^,]*)", 1).alias(f"summary_{key}")
          for key in ("constraint", "nodemask", "cpuset", "mems_allowed", "oom_memcg", "task_memcg", "task", "pid", "uid")),
        pl.when(summary.str.contains(r"(?:^|,)global_oom(?:,|$)")).then(pl.lit(True)).alias("summary_global_oom"),
        *_groups(_KILLED, "killed"),
        # Each number read with what the kernel prints after it: a figure a person regrouped ("anon-rss:153,700,88kB")
        # is no figure, rather than its first digits.
        *(pl.when(killed).then(unwrapped.str.extract(rf"\b{field}:(-?[0-9]+){after}", 1)).alias(f"killed_{name}")
          for field, name, after in (("total-vm", "total_vm", "kB"), ("anon-rss", "anon", "kB"), ("file-rss", "file", "kB"),
                                     ("shmem-rss", "shmem", "kB"), ("pgtables", "pgtables", "kB"), ("oom_score_adj", "adj", r"(?:[^0-9,]|$)"))),
        # "UID:0" since 4.x; "UID 0" before the name (2.6.32) or after it (3.10, RHEL 7).
        pl.when(killed).then(unwrapped.str.extract(r"\bUID:? ?(-?[0-9]+)", 1)).alias("killed_uid"),
        *_groups(_SELECTED, "selected"),
        *_groups(_REAPER, "reaper", unwrapped),
        *_groups(_PIDS_REJECTED, "pids"),
        *_groups(_AUDIT_ABEND, "abend", pl.when(message.str.starts_with("audit: type=1701 ")).then(message)),
        *_groups(_BAD_PAGE, "bad_page", pl.when(message.str.starts_with("BUG: Bad page ")).then(message)),
        *_groups(_HWPOISON_KILL, "hwpoison", pl.when(message.str.contains(" memory corruption| corrupted page|: Error sending signal to ")).then(message)),
        *_groups(_TASK_ROW, "task", unwrapped),
        *_groups(_TASK_STATE, "state", pl.when(message.str.starts_with("task:")).then(message)),
        *_groups(_BLOCK_HEAD, "head"),
        pl.when(message.str.starts_with("{")).then(message).str.extract(_GHES_DEVICE, 1).alias("ghes_pci"),
        ((message.str.contains(_DUMP) | _is_warn_message(message)) & ~pl.col("continuation")).alias("dump"),
    ]


def _named(comm: pl.Expr) -> pl.Expr:
    """A task's comm, or null where the kernel printed "(null)" for it (a task with no name yet, a kernel thread
    torn down): no process."""
    return pl.when(comm != "(null)").then(comm)


def _amdgpu_task() -> list[pl.Expr]:
    """The process an AMD GPU report names (:data:`_AMDGPU_TASK`), on the line that names it and on the report's head (a
    ring timeout, a page fault) when the line right after the head names it; the ring a hung job was on."""
    message = pl.col("message")
    amdgpu = pl.when(pl.any_horizontal(message.str.starts_with(start) for start in _AMDGPU_LINE)).then(message)
    task = pl.when(amdgpu.str.contains(" pid ", literal=True)).then(amdgpu).str.extract_groups(_AMDGPU_TASK)
    pid, name = task.struct.field("pid").cast(pl.Int64, strict=False), task.struct.field("name")
    head = amdgpu.str.contains(_AMDGPU_REPORT_HEAD).fill_null(False)
    named_below = head & pid.is_null() & (pl.col("row").shift(-1) == pl.col("row") + 1) & ~head.shift(-1, fill_value=False)
    task_pid = pl.when(named_below).then(pid.shift(-1)).otherwise(pid)
    task_name = pl.when(named_below).then(name.shift(-1)).otherwise(name)
    return [
        pl.when(task_pid > 0).then(task_pid).alias("amdgpu_pid"),
        pl.when(task_pid > 0).then(task_name).alias("amdgpu_process"),
        amdgpu.str.extract(_AMDGPU_RING_TIMEOUT, 1).alias("amdgpu_ring"),
    ]


def _unwrapped_text() -> pl.Expr:
    """A line as printed before a copy wrapped it: a terminal wraps a long task-table row onto an indented line of its own
    ("[   7899]     0  7899  6546210  3842522 39899136  1039052" / " 0 python"), a mail client a kill line at the margin
    ("Out of memory: Killed process 3261 (oom01)" / "total-vm:18905540kB, anon-rss:13397556kB, …"): read across the two."""
    message = pl.col("message")
    below = message.shift(-1)
    joint = pl.when(below.str.contains(r"^\s")).then(pl.lit("")).otherwise(pl.lit(" "))
    return pl.when(pl.col("continuation").shift(-1, fill_value=False)).then(message + joint + below).otherwise(message)


def _with_keys(lines: pl.DataFrame) -> pl.DataFrame:
    """``record``: the lines of one event; ``block``: one OOM killer run (header … kill line).

    ``lines`` are a batch's rule lines; ``row`` numbers them in the batch. A line left out is
    a record of its own that opens a dump run without a header (:func:`kernel_rules`), so
    ``position`` counts records in the batch, left-out ones included.
    """
    is_header = pl.col("header_name").is_not_null()
    opens_dump = is_header | pl.coalesce(*(pl.col(f"head_{name}") for name in re.findall(r"\(\?<([a-z_]+)>", _BLOCK_HEAD))).is_not_null()
    head = ~pl.col("continuation")
    row, seq = pl.col("row").cast(pl.Int64), pl.col("seq")
    new_file = starts_file(lines)
    # The line before a file's first is its file's -1 (numbered by _numbered), as if read alone; a console status line
    # between two lines is no gap.
    before = pl.when(new_file).then(seq - seq % _FILE_ROWS - 1).otherwise(seq.shift(1)).fill_null(-1)
    after_gap = seq != before + 1
    # Some reports' heads open their record though their words are a dump line's: a firmware-first record's first line is
    # one of its "{8}[Hardware Error]: " lines, an RCU stall's head one of its "rcu: " lines. (An SXid report's lines are
    # each an SXid head, and join the first: rca.sources._xid.continues_sxid.)
    dump = pl.col("dump") & pl.col("head_ghes_record").is_null() & pl.col("head_rcu_flavor").is_null()
    opens_run = head & ~dump
    rejoins = _rejoins_ghes_record(lines)
    run_has_header = (
        pl.when(opens_run).then(opens_dump).when(rejoins).then(pl.lit(True)).when(after_gap).then(pl.lit(False))
        .when(seq % _FILE_ROWS == 0).then(opens_dump).forward_fill()
    )
    opens_record = head & ~((run_has_header | _in_headless_dump(after_gap | new_file)) & dump) | new_file
    killed = pl.col("killed_pid").is_not_null()
    # a task state line that opens its record (no hung-task head above it) names the record's task
    headless_task = opens_record & pl.col("state_pid").is_not_null()
    return lines.with_columns(
        record=_record_ids(lines, opens_record, rejoins),
        headless_pid=pl.when(headless_task).then(pl.col("state_pid").cast(pl.Int64, strict=False)),
        headless_comm=pl.when(headless_task).then(pl.col("state_comm")),
        position=row - (~opens_record).cast(pl.Int64).cum_sum(),
        block=(is_header | killed.shift(1, fill_value=False) | new_file).cum_sum(),
        episode=(is_header | new_file).cum_sum(),
    )


def _in_headless_dump(breaks: pl.Expr) -> pl.Expr:
    """Whether a line goes on with a dump whose report's head is not there (a paste of an OOM report's middle): the
    dump lines after a task's CPU line ("CPU: 3 PID: 3974 Comm: apk …", where dump_stack() starts, or the "Hardware name:"
    line after it) or its state line ("task:python3 state:D … pid:15277 …", where sched_show_task() starts), the
    memory.stat lines under a "Memory cgroup stats for …:" line; each until a line of another form or a line left out of
    the rules (``breaks``)."""
    # A paste may start at the "Hardware name:" line, its CPU line cut (raspberrypi/linux#3872): it opens the run there,
    # unless a dump line just before it is that dump's (the CPU line, 6.10+'s "Tainted:" flags line).
    after_dump = pl.col("dump").shift(1, fill_value=False) & ~breaks
    hardware = pl.col("hw_hardware").is_not_null() & ~after_dump
    cpu = pl.col("cpu_pid").is_not_null() | pl.col("state_pid").is_not_null() | hardware
    stats = pl.col("stats_memcg").is_not_null()
    stat_line = pl.col("message").str.contains("^" + _STAT_LINE)

    def run(opens: pl.Expr, goes_on: pl.Expr) -> pl.Expr:
        return pl.when(opens).then(pl.lit(True)).when(~goes_on | breaks).then(pl.lit(False)).forward_fill().fill_null(False) & ~opens

    return run(cpu, pl.col("dump") | pl.col("continuation")) | run(stats, stat_line)


def _rejoins_ghes_record(lines: pl.DataFrame) -> pl.Expr:
    """Whether a line is a firmware-first record's (not its first) whose record is open: each of the record's lines
    carries its number ("{8}", counted up through the boot), so a line another CPU printed among them (an "mce:" line,
    a memory-failure notice) does not end the record, and its lines after that one go on with it."""
    if not lines["head_ghes_record"].is_not_null().any():
        return pl.lit(False)
    message = pl.col("message")
    number = pl.when(message.str.starts_with("{")).then(message.str.extract(_GHES_NUMBER, 1))
    return (pl.col("head_ghes_record").is_null() & (number == _filled_in_file(lines, pl.col("head_ghes_record")))).fill_null(False)


def _record_ids(lines: pl.DataFrame, opens_record: pl.Expr, rejoins: pl.Expr) -> pl.Expr:
    """Each line's record: the one its run of lines opened, or for a run a firmware-first record's line goes on with
    (``rejoins``) that record's, whatever was printed between."""
    run = (opens_record | rejoins).cum_sum()
    ghes_run = _filled_in_file(lines, pl.when(pl.col("head_ghes_record").is_not_null()).then(run))
    return pl.coalesce(pl.when(rejoins).then(ghes_run).when(opens_record).then(run).forward_fill(), run)


def _filled_in_file(lines: pl.DataFrame, value: pl.Expr) -> pl.Expr:
    """``value`` forward-filled within each file of the batch."""
    return forward_fill_within(value, pl.col("batch_file")) if within_file(lines) else value.forward_fill()


def _carry_block_facts(lines: pl.DataFrame) -> pl.DataFrame:
    """Carry the block's memcg usage and ``oom-kill:`` summary onto its kill line, and pick the kill's event line."""
    victim_pid = pl.coalesce("killed_pid", "selected_pid").cast(pl.Int64, strict=False)
    summary_pid = pl.col("summary_pid").cast(pl.Int64, strict=False)
    selected_pid = pl.col("selected_pid").cast(pl.Int64, strict=False)
    block = pl.col("block")
    carried_pid = forward_fill_within(summary_pid, block)
    killed_pid = pl.col("killed_pid").cast(pl.Int64, strict=False)
    next_killed = pl.when(block.shift(-1) == block).then(backward_fill_within(killed_pid, block).shift(-1))
    is_victim = victim_pid.is_not_null()
    # The summary and the selection line name the task chosen; a "Killed process" line after them names
    # the task killed, which may be a child the kernel sacrificed instead (3.x): one kill either way, of
    # the task the summary's cgroup and uid still describe.
    sacrificed = killed_pid.is_not_null() & (block.shift(1) == block) & (selected_pid.shift(1) == carried_pid)
    return lines.with_columns(
        [pl.when(is_victim & ((carried_pid == victim_pid) | sacrificed if by_pid else pl.lit(True)).fill_null(False))
         .then(forward_fill_within(pl.col(name), block)).alias(f"carried_{name}")
         for name, by_pid in _CARRIED.items()],
        # The kills of a memory.oom.group's other tasks, each a block of its own, are of the group's cgroup.
        group_cgroup=pl.when(killed_pid.is_not_null()).then(forward_fill_within(pl.col("oom_group_cgroup"), pl.col("episode"))),
        # A memcg OOM kills inside the memcg whose limit was hit: a kill the summary does not name (memory.oom.group's sweep
        # with its "Tasks in … are going to be killed" line cut from the copy) is of that memcg all the same.
        limited_cgroup=pl.when(killed_pid.is_not_null()).then(forward_fill_within(pl.col("summary_oom_memcg"), pl.col("episode"))),
        # memory.oom.group's sweep kills the chosen task again (6.x prints it twice; memory.events counts both): one kill
        killed_again=(pl.col("killed_pid").cum_count().over("episode", "killed_pid") > 1) & killed_pid.is_not_null(),
        summary_is_kill=summary_pid.is_not_null() & next_killed.is_null(),
        selected_is_kill=selected_pid.is_not_null() & next_killed.is_null(),
    )


def _group(lines: pl.DataFrame) -> pl.DataFrame:
    """One row per record; only the records of several lines are aggregated."""
    facts = [name for name in lines.columns if name not in ("record", "line", "message", "text", "continuation", "dump", "shared_line")]
    opens = pl.col("record").ne_missing(pl.col("record").shift(1))
    contiguous = lines["record"].is_sorted()
    # a firmware-first record's lines may have others between them (_rejoins_ghes_record): its lines wherever they are
    several = lines.select(~opens | ~opens.shift(-1, fill_value=True) if contiguous else pl.col("record").is_duplicated()).to_series()
    merged = lines.filter(several).group_by("record", maintain_order=True).agg(
        pl.col("line").first(),
        _own_lines().sum().cast(pl.Int32).alias("n_lines"),
        pl.col("message").str.join("\n"),
        *(pl.col(name).drop_nulls().first() for name in facts),
    )
    single = lines.filter(~several).select("record", "line", _own_lines().alias("n_lines"), "message", *facts)
    return pl.concat([merged, single]).sort("row")


# x86 reports a fault in the kernel in two records: "BUG: kernel NULL pointer dereference, address: 0000000000000090" (or
# "BUG: unable to handle page fault for address: …", before 4.19 "BUG: unable to handle kernel NULL pointer dereference at …")
# with the fault's decoding ("#PF: …" twice, the page-table walk "PGD 0 P4D 0"; "IP: …" before 4.10), then the oops, "Oops:
# 0000 [#1] SMP PTI", whose CPU line names the task that faulted. A BUG_ON() likewise: "kernel BUG at mm/huge_memory.c:2345!",
# then the trap it raised, "invalid opcode: 0000 [#1] SMP NOPTI" (6.x "Oops: invalid opcode: …", arm64 "Internal error: Oops -
# BUG: …") and its CPU line. arm64 and 32-bit ARM the same: "Unable to handle kernel paging request at virtual address …" (or
# "… NULL pointer dereference at …") with the abort's decoding and the page-table walk, then "Internal error: Oops: 96000004
# [#1] SMP" and its CPU line. The two stay events of their own (the oops's head is the report's), and the first names the
# oops's task where the oops is the next report and comes within _FAULT_DECODING_ROWS rows of the first's last line (a
# console line or two may come between).
_FAULT_DECODING_ROWS = 8
_NAMES_OOPS_TASK = ("BUG: ", "kernel BUG at ", "Unable to handle kernel ")
_OOPS_HEADS = ("Oops: ", "invalid opcode: ", "Internal error: ")


def _with_oops_task(records: pl.DataFrame) -> pl.DataFrame:
    """``records`` with a kernel fault's "BUG: " head (arm64's "Unable to handle kernel …"), or a BUG_ON()'s "kernel BUG at
    …", given the task of the oops right after it (``oops_pid``, ``oops_comm``)."""
    head = pl.col("head_other")
    report = pl.when(head.is_not_null()).then(pl.struct(next_head=head, oops_row="row", oops_pid="cpu_pid", oops_comm="cpu_comm"))
    following = records.select(report.shift(-1).backward_fill().struct.unnest())
    near = (
        head.is_in(_NAMES_OOPS_TASK) & pl.col("next_head").is_in(_OOPS_HEADS)
        & (pl.col("oops_row") - (pl.col("row") + pl.col("n_lines") - 1) <= _FAULT_DECODING_ROWS)
    )
    return records.with_columns(following).with_columns(
        oops_pid=pl.when(near).then("oops_pid"), oops_comm=pl.when(near).then("oops_comm")
    ).drop("oops_row", "next_head")


def _own_lines() -> pl.Expr:
    """The lines a row adds to its event's ``n_lines``: none for a kernel line cut out of another's (_unglued)."""
    return pl.when(pl.col("shared_line")).then(pl.lit(0, pl.Int32)).otherwise(pl.lit(1, pl.Int32))


def _kib_to_bytes(kb: pl.Expr) -> pl.Expr:
    number = kb.cast(pl.Int64, strict=False)
    return pl.when(number < _UNLIMITED_KB).then(number * 1024)


_IS_HEADER = pl.col("header_name").is_not_null()
# A "Task in … killed as a result of limit of …" line names the victim's memcg: its own event's and its kill's,
# not the OOM header's it is a dump line of (the task that invoked the killer may be another container's). Without
# it, the memcg whose stats the block prints holds the victim (it is chosen inside the memcg whose limit was hit).
_CGROUP = pl.coalesce(
    "summary_task_memcg", "carried_summary_task_memcg", pl.when(~_IS_HEADER).then(pl.col("task_in_task")), "carried_task_in_task",
    "group_cgroup", "oom_group_cgroup", pl.when(~_IS_HEADER).then(pl.col("stats_memcg")), "carried_stats_memcg", "limited_cgroup",
    "pids_cgroup",
)
_MEMCG_USED = pl.coalesce("memcg_used", "carried_memcg_used")
_MEMCG_LIMIT = pl.coalesce("memcg_limit", "carried_memcg_limit")
_CPUSET_VALUE = pl.coalesce("cpuset_cpuset", "summary_cpuset", "carried_summary_cpuset")
_HEAD_PIDS = ("head_hung_pid", "head_lockup_pid", "head_fault_pid", "head_trap_pid", "head_unreaped_pid", "head_warn_pid")
_HEAD_NAMES = (
    "head_hung_name", "head_lockup_name", "head_fault_name", "head_trap_name", "head_alloc_name", "head_vmalloc_name", "head_unreaped_name",
    "head_warn_name",
)


def _assemble(records: pl.DataFrame) -> pl.DataFrame:
    kind = _kind()
    container_from_cgroup = memcg_container_id(_CGROUP)
    # an audit record's own time where the line has none (raw dmesg, boot time unknown); a syslog stamp stays, as its
    # neighbours' do (read in the same zone as theirs)
    audit_time = pl.col("ts").is_null() & pl.col("abend_epoch_ms").is_not_null()
    return records.with_columns(kind=kind).select(
        "row", "line", "n_lines", "message", "ts_raw", "boot_seconds", "host", "format", "kind",
        # ("1787241386.129", seconds and milliseconds: the digits alone are epoch milliseconds)
        ts=pl.when(audit_time).then(timeutil.epoch_to_utc(pl.col("abend_epoch_ms").str.replace(".", "", literal=True))).otherwise("ts"),
        ts_quality=pl.when(audit_time).then(pl.lit("exact")).otherwise("ts_quality"),
        severity=_severity(pl.col("kind")),
        pid=pl.coalesce("killed_pid", "selected_pid", "summary_pid", "reaper_pid", "task_pid", *_HEAD_PIDS, "hwpoison_pid", "hwpoison_unsent_pid", "abend_pid",
                        "cpu_pid", "oops_pid", "headless_pid")
        .cast(pl.Int64, strict=False).fill_null(pl.coalesce("xid_pid", "nvrm_client_pid", "amdgpu_pid")),
        process=pl.coalesce("killed_name", "selected_name", "summary_task", "reaper_name", "task_name", *_HEAD_NAMES, "hwpoison_name", "hwpoison_unsent_name",
                            _audit.comm(pl.col("abend_name"), pl.col("abend_hex_name")),
                            "bad_page_name", "cpu_comm", "header_name", "xid_process", "nvrm_client", "amdgpu_process", "oops_comm",
                            "headless_comm"),
        cgroup=_CGROUP,
        pod_uid=memcg_pod_uid(_CGROUP),
        container_id=pl.coalesce(container_from_cgroup, pl.when(_IS_HEADER).then(_CPUSET_VALUE.str.extract(_HEX64, 1))),
        pci_bus=pl.coalesce("pci_bus", "ghes_pci"),
        gpu_uuid="gpu_uuid",
        xid="xid",
        mem_used_bytes=_kib_to_bytes(_MEMCG_USED),
        mem_total_bytes=_kib_to_bytes(_MEMCG_LIMIT),
        rss_bytes=_kib_to_bytes(pl.col("killed_anon")),
        attrs=attrs_json(_attr_fields()),
    )


def _kind() -> pl.Expr:
    is_kill = (pl.col("killed_pid").is_not_null() & ~pl.col("killed_again")) | pl.col("selected_is_kill") | pl.col("summary_is_kill")
    return (pl.when(_IS_HEADER).then(pl.lit("oom_invoked")).when(is_kill).then(pl.lit("oom_kill"))
            .when(pl.col("xid").is_not_null()).then(pl.lit("xid")).otherwise(pl.lit("log")))


def _severity(kind: pl.Expr) -> pl.Expr:
    """The Xid catalog's for Xids, fixed ones for the OOM killer, else the line's level or its wording."""
    return (
        pl.when(kind == "xid").then("xid_severity").when(kind == "oom_kill").then(pl.lit("error"))
        .when(kind == "oom_invoked").then(pl.lit("warning")).when(pl.col("fallen_off_bus")).then(pl.lit("critical"))
        .when(pl.col("sxid_severity").is_not_null()).then("sxid_severity")
        # the levels the kernel prints them at: a task in D state past the timeout, an interrupt nobody claimed (KERN_ERR), a failed
        # allocation the caller may survive (KERN_WARNING), a user process's trap (not the kernel's own GP fault)
        .when(pl.col("head_hung_pid").is_not_null() | pl.col("head_trap_pid").is_not_null() | pl.col("head_bad_irq").is_not_null())
        .then(pl.lit("error"))
        # a DMA the SMMU refused: the device's transfer failed, whatever level printed it
        .when(pl.col("head_smmu_event").is_not_null()).then(pl.lit("error"))
        # a job the GPU did not finish (KERN_ERR; "timeout" alone would read as a warning): a GPU reset follows
        .when(pl.col("amdgpu_ring").is_not_null()).then(pl.lit("error"))
        .when(pl.col("head_alloc_order").is_not_null() | pl.col("head_vmalloc_mode").is_not_null()).then(pl.lit("warning"))
        # a task dead of a signal (kauditd prints it at KERN_NOTICE): a crash whatever the signal, as only the signals that
        # dump core (and, before 3.5, seccomp's SIGKILL) are reported so
        .when(pl.col("abend_signal").is_not_null()).then(pl.lit("error"))
        # the OOM killer's choice (pr_err), its block's kill line after it the kill event
        .when(pl.col("selected_pid").is_not_null()).then(pl.lit("error"))
        # an oops, a general protection fault, a panic: the kernel's own crash, whatever level printed it (KERN_DEFAULT)
        .when(pl.col("head_other").is_in(_CRASH_HEADS)).then(pl.lit("critical"))
        .otherwise(pl.coalesce("severity", pl.when(pl.col("reaper_pid").is_not_null()).then(pl.lit("info")), _wording()))
    )


def _wording() -> pl.Expr:
    message = pl.col("message")
    libcfs_error = pl.any_horizontal(message.str.starts_with(prefix) for prefix in _LIBCFS_ERROR_PREFIXES)
    target_lost = pl.when(message.str.starts_with("Lustre: ")).then(message).str.contains(_LUSTRE_TARGET_LOST).fill_null(False)
    ratelimited = pl.when(message.str.contains(" callbacks suppressed", literal=True)).then(message).str.contains(_RATELIMITED).fill_null(False)
    return (
        pl.when(message.str.contains(_CRITICAL_WORDS)).then(pl.lit("critical"))
        .when(message.str.contains(_CORRECTED_WORDS) | ratelimited).then(pl.lit("warning"))
        .when(libcfs_error | message.str.contains(_ERROR_WORDS)).then(pl.lit("error"))
        .when(target_lost | message.str.contains(_WARNING_WORDS)).then(pl.lit("warning"))
    )


def _attr_fields() -> dict[str, pl.Expr]:
    col = pl.col

    def number(*names: str) -> pl.Expr:
        return pl.coalesce(*names).cast(pl.Int64, strict=False)

    def flag(condition: pl.Expr) -> pl.Expr:
        return pl.when(condition).then(pl.lit(True))

    return {
        "gfp_mask": pl.coalesce("header_gfp_mask", "head_alloc_mode", "head_vmalloc_mode"), "order": number("header_order", "head_alloc_order"), "cpu": col("cpu_cpu"), "kernel": col("cpu_kernel"),
        "hardware": col("hw_hardware"),
        "memcg_oom": flag(_IS_HEADER & col("message").str.contains("mem_cgroup_out_of_memory", literal=True)),
        "constraint": pl.coalesce("summary_constraint", "carried_summary_constraint",
                                  pl.when(col("killed_scope") == "Memory cgroup out of memory").then(pl.lit("CONSTRAINT_MEMCG"))),
        "global_oom": pl.coalesce("summary_global_oom", "carried_summary_global_oom"),
        "oom_group": flag(col("group_cgroup").is_not_null()),
        "kill_repeated": flag(col("killed_again")),
        "oom_memcg": pl.coalesce(
            "summary_oom_memcg", "carried_summary_oom_memcg", "carried_task_in_memcg", "task_in_memcg", "carried_stats_memcg", "stats_memcg"
        ),
        "nodemask": pl.coalesce("header_nodemask", "summary_nodemask", "carried_summary_nodemask"),
        "cpuset": _CPUSET_VALUE,
        "mems_allowed": pl.coalesce("cpuset_mems", "summary_mems_allowed", "carried_summary_mems_allowed"),
        "selected": flag(col("selected_pid").is_not_null()),
        "oom_score": number("selected_score"),
        "uid": number("killed_uid", "summary_uid", "carried_summary_uid", "task_uid"),
        "total_vm_kb": number("killed_total_vm"),
        "anon_rss_kb": number("killed_anon", "reaper_anon"),
        "file_rss_kb": number("killed_file", "reaper_file"),
        "shmem_rss_kb": number("killed_shmem", "reaper_shmem"),
        "pgtables_kb": number("killed_pgtables"),
        "oom_score_adj": number("header_oom_score_adj", "killed_adj", "task_adj"),
        "memcg_failcnt": number("memcg_failcnt", "carried_memcg_failcnt"),
        "memcg_unlimited": flag(_MEMCG_LIMIT.cast(pl.Int64, strict=False) >= _UNLIMITED_KB),
        "reaper": flag(col("reaper_pid").is_not_null()),
        "reap_failed": flag(col("head_unreaped_pid").is_not_null()),
        "task_table": flag(col("task_pid").is_not_null()),
        **{f"{name}_pages": number(f"task_{name}") for name in ("total_vm", "rss", "rss_anon", "rss_file", "rss_shmem")},
        "tgid": number("task_tgid"), "pgtables": number("task_pgtables"), "swapents": number("task_swapents"),
        "xid_name": col("xid_mnemonic"), "xid_description": col("xid_description"),
        "xid_resolution": col("xid_resolution"), "xid_investigation": col("xid_investigation"),
        "xid_recovery_action": col("xid_recovery_action"), "previous_xid": col("xid_previous"), "gpu_instance": col("xid_instance"),
        "compute_instance": col("xid_compute_instance"),
        "fallen_off_bus": col("fallen_off_bus"), "pci_id": col("pci_id"), "nvidia_driver": col("nvidia_driver"),
        "nvidia_client_version": col("nvrm_client_version"), "gpu_serial": col("gpu_serial"), "rm_init_error": col("nvrm_init_error"),
        "nvrm_status": col("nvrm_status"), "nvrm_failed_at": col("nvrm_failed_at"),
        "sxid": col("sxid"), "blocked_seconds": number("head_hung_seconds"), "stuck_seconds": number("head_lockup_seconds"),
        "lock_owner": col("head_owner_name"), "lock_owner_pid": number("head_owner_pid"),
        "fault_address": col("head_fault_address"), "fault_in": pl.coalesce("head_fault_in", "head_trap_in"), "trap": col("head_trap_what"),
        "ring": col("amdgpu_ring"), "signal": number("abend_signal"),
    }


SOURCE = register(
    Source(
        name="kernel",
        sniff=sniff,
        sniff_heads=sniff_heads,
        parse=parse,
        # every kernel line's form holds one, but a hung-task head pasted alone holds only its own words
        sniff_literals=("[", "kernel", ",", "INFO: task "),
        formats=("dmesg_raw", "dmesg_ctime", "dmesg_iso", "dmesg_reltime", "dmesg_kmsg", "journal_monotonic", "syslog", "syslog_iso", "syslog_bare", "journal_json",
                 "dmesg_json", "syslog_wall"),
        line_local=True,
        segmented=True,
    )
)
_syslog.register_program("kernel", "kernel", kernel_rules)
