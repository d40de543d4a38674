"""Syslog and journald framing shared by the sources whose lines arrive through them.

``kern.log``, ``/var/log/messages`` (RFC 3164 or RFC 5424), ``journalctl`` short / short-iso /
short-full / short-unix / short-monotonic / short-delta / with-unit / -o json all wrap a program's message in the same
envelope: time, host (left out by ``--no-hostname``), program[pid] (with-unit: the unit that wrote it). journalctl prints the further lines of a multi-line message
indented under its first: they keep its envelope and lose the indent; its short times are in the zone its
banner names. ``journalctl -o verbose``, ``-o json-pretty`` and ``-o export`` print a record over many lines, its fields
one a line: a record is one row, its envelope read from its fields.
This module peels the envelope off whole columns at once; the message rules of each program (the kernel's OOM
killer, kubelet's eviction manager) are registered here by their source modules with
:func:`register_program`, so a mixed journal is parsed by the right rules line by line.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from rca import timeutil
from rca.sources import _zones
from rca.sources._base import (
    MESSAGE_TAIL,
    ParseContext,
    attrs_json,
    file_column,
    head_groups,
    holds_newline,
    inherit_frame,
    joined_json,
    map_distinct,
    within_file,
)

MessageRules = Callable[[pl.DataFrame, ParseContext], pl.DataFrame]

_PROGRAM_RULES: dict[str, tuple[str | None, MessageRules]] = {}
# Applications (a training job run as a systemd unit, a container logging to journald) go by
# names nobody can list: one source reads the lines of any other program whose messages it recognises.
_APPLICATIONS: list[tuple[str, MessageRules, pl.Expr]] = []
# Programs whose every line is about the job they run, read by the applications' rules whatever they say:
# Slurm's step daemon reports the step's OOM kills and limits ("error: Detected 1 oom_kill event in StepId=…").
_JOB_PROGRAMS = ("slurmstepd",)
# Programs whose own messages are told without an envelope (see register_bare_messages): program -> its wordings.
_BARE_MESSAGES: dict[str, str] = {}

# A host name has a lower-case letter or a digit: that keeps log levels ("ERROR", "[INFO]")
# of application lines that start with a date from being read as a syslog host. It does not end
# in a colon: "systemd[1]:" after the time is the program of `journalctl --no-hostname`, not a host.
_REAL_HOST = r"(?<host>[^ \t]*[a-z0-9](?:[^ \t]*[^ \t:])?)"
# Each envelope is a head and MESSAGE_TAIL; the head alone is captured (see head_groups).
# The heads captured for framing take any host and have it checked after (_with_real_host):
# written so that a field can end in one place only (at a space or tab, which it cannot hold),
# they are captured 2.7x faster (a 356k-line journal: 0.54 -> 0.20 s for the short head).
# rsyslog writes an empty host as nothing between two spaces ("11:19:17  cadvisor: …"): the host is then "".
_ANY_HOST = r"(?<host>[^ \t]*)"
# journalctl --no-hostname leaves the host out: the lines the heads with a host miss (or misread, taking
# "systemd[1]:" for the host) are tried again without one; the empty group keeps the heads' fields alike.
_NO_HOST = "(?<host>)"
# rsyslog keeps a tag as the program sent it: "Fledge[16823] ERROR: …" has no colon after the pid. Slurm's
# step daemon before 15.08 tagged its lines with the node too: "slurmd[node21][2747]: …". A unit's name
# (journalctl -o with-unit) escapes a "-" in a name it holds: "app-gnome-firefox\x2dw-2504.scope[87]:".
# An entry whose message is empty ends at its tag: "homeassistant 7588f50d8707[471]:" (the space after it lost
# where the output was copied), a line of its own rather than a further line of the entry above.
# RFC 5424 opens a UTF-8 MSG with a byte order mark (U+FEFF), a marker and no text of the message: one is taken off after the
# tag (shown "ï»¿" where the bytes were read as Latin-1). A message sent as RFC 5424 and written by rsyslog's traditional
# templates keeps the app-name as its tag, without a colon: "esp32-1 RC-Switch \ufeffTemperature …". The mark tells that tag from
# a tagless message; without it such a line stays unread as before.
_BOM = r"(?:\x{FEFF}|\x{EF}\x{BB}\x{BF})"
# RFC 5424's procid is any word, and rsyslog writes it in the tag as a pid: "OpenDTU[e4975f6a] WiFi got ip: …" (a boot's random id,
# no colon after it). Not a pid: the program's line has none.
_NAMED_PROCID = rf"\[[^\]\s]*[^\]\s0-9][^\]\s]*\]:?[ \t]{_BOM}?"
_PROGRAM = (
    r"(?<program>[A-Za-z0-9_.\-/@()\\]+)(?:\[[^\]\s0-9][^\]\s]*\])?"
    rf"(?:\[(?<pid>[0-9]+)\](?::?[ \t]{_BOM}?|:$)|:[ \t]{_BOM}?|[ \t]{_BOM}|{_NAMED_PROCID})"
)
# A host of capitals alone ("PC", "H") is a host where the program gives its pid: a log level is
# not followed by "program[pid]:".
_PROGRAM_WITH_PID = r"(?<program>[A-Za-z0-9_.\-/@()\\]+)\[(?<pid>[0-9]+)\]:?[ \t]"
_NAMED_PROGRAM = r"(?<program>[A-Za-z0-9_.\-/@()]+):[ \t]"


# RFC 3164 as it goes over the wire opens with its priority, facility x 8 + severity: a relay, a listener (`nc -l 514`), Docker's
# syslog driver or BusyBox' syslogd writing what it received or sends ("<30>Jun 21 00:35:33 host dhclient[7445]: …").
_RFC3164_PRI = r"(?:<(?<pri>[0-9]{1,3})>)?"
# BusyBox' syslogd (without -S) writes the priority by name between host and tag, "facility.level" as syslog.conf spells them:
# "Sep 13 14:28:02 ccgx user.err kernel: [43131.542608] INFO: task …". Only these names are taken: a program's tag ends in
# ":" or "[pid]", so a line that had a head before keeps the same one.
_NAMED_FACILITIES = {
    "kern": 0, "user": 1, "mail": 2, "daemon": 3, "auth": 4, "security": 4, "syslog": 5, "lpr": 6, "news": 7, "uucp": 8, "cron": 9,
    "authpriv": 10, "ftp": 11, **{f"local{n}": 16 + n for n in range(8)},
}
_NAMED_LEVELS = {
    "emerg": 0, "panic": 0, "alert": 1, "crit": 2, "err": 3, "error": 3, "warn": 4, "warning": 4, "notice": 5, "info": 6, "debug": 7,
}
_NAMED_PRIORITY = rf"(?<named_facility>{'|'.join(_NAMED_FACILITIES)})\.(?<named_level>{'|'.join(sorted(_NAMED_LEVELS, key=len, reverse=True))})"
_FACILITY_LEVEL = rf"(?:{_NAMED_PRIORITY}[ \t])?"


def _short_head(host: str, program: str = _PROGRAM) -> str:
    """The short head; ``host`` holds its own separator after it (none without a host)."""
    clock = r"(?<clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?)"
    return rf"^{_RFC3164_PRI}(?<stamp>(?<mon>{timeutil.MONTH_NAME_PATTERN})[ \t]+(?<day>[0-9]{{1,2}})[ \t]{clock})[ \t]{host}{_FACILITY_LEVEL}{program}"


# RFC 5424 (rsyslog's RSYSLOG_SyslogProtocol23Format, in a file or on the wire with its "<PRI>1 "):
# "2024-04-10T10:15:57.163826-07:00 host kernel - - - message": app-name, procid, msgid and structured
# data, each "-" when empty, where RFC 3164 has "program[pid]:". rsyslog 7 wrote the version as 0
# ("<12>0 2017-02-15T16:01:07.614260+01:00 vmlsfw test - - -  test 4"). A template of facility and severity
# apart (openSUSE's syslog-ng, rsyslog's "<%syslogfacility%.%syslogseverity%>") writes "<0.4> 2019-07-25 18:19:19 host kernel - - - …".
_RFC5424_PRI = r"(?:<(?<pri>[0-9]{1,3})> ?[01] |<(?<pri_facility>[0-9]{1,2})\.(?<pri_severity>[0-7])> )?"
# Its message may be left out (NILVALUE-less "SD" ending the line), and a param value escapes "]" as "\]".
# As in _PROGRAM, "program[pid]:" may end the line (an entry with an empty message). rsyslog's message property keeps the
# space after the tag's colon ("dhclient[1641]: DHCPREQUEST…" gives " DHCPREQUEST…"): after the separator the RFC defines it
# writes that space too ("dhclient 1641 - -  DHCPREQUEST…"), which is taken off as the colon's space is in RFC 3164.
_PROGRAM_OR_5424 = (
    r"(?<program>[A-Za-z0-9_.\-/@()\\]+)"
    rf"(?:\[(?<pid>[0-9]+)\]:(?:[ \t]{_BOM}?|$)|:[ \t]{_BOM}?|{_NAMED_PROCID}| (?:-|(?<procid>[0-9]+)) \S+ (?:-|(?:\[(?:[^\]\\]|\\.)*\])+)(?:[ \t] ?{_BOM}?|$))"
)


# journalctl -o short-full: "Thu 2024-01-04 12:00:01 UTC host program[pid]: message" (the zone as
# an abbreviation, or as an offset where the zone has none: "+07"; see timeutil.zone_minutes).
_FULL = (
    r"(?<weekday>[A-Z][a-z]{2}) (?<full>[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?)"
    r" (?<zone>[A-Z][A-Za-z0-9+-]{1,5}|[+-][0-9][0-9](?::?[0-9][0-9])?)"
)
# journalctl's lines between entries (its banner, a new boot, an empty result) are lines of their own, not the further
# lines of a message; the banner names the zone of its output: "-- Logs begin at Sat 2020-04-04 12:49:26 +09, end at …"
# (before systemd 249), "-- Journal begins at Mon 2026-10-05 01:02:11 UTC, ends at … --".
_JOURNAL_SEPARATOR = (
    r"^-- (?<separator>(?:Logs begin at|Journal begins at) \S+ [0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] (?<zone>[^\s,.]+)"
    r"|Boot [0-9a-f]{32} --|Reboot --|No entries --)"
)
# journalctl's and systemctl status' notes under (or above) the entries they print are no lines of the message above them:
# "Hint: Some lines were ellipsized, use -l to show in full.", "Warning: Journal has been rotated since unit was started.
# Log output is incomplete or unavailable." (systemd 254 and later: "Notice: journal has been rotated since unit was
# started, output may be incomplete."), "Hint: You are currently not seeing messages from other users and the system.",
# "Warning: some journal files were not opened due to insufficient permissions.".
_JOURNALCTL_NOTE_OPENINGS = ["Hint: ", "Warning: ", "Notice: "]
_JOURNALCTL_NOTE = (
    r"^(?:Hint: (?:Some lines were ellipsized|You are currently not seeing messages)"
    r"|(?:Warning|Notice): (?:[Jj]ournal has been rotated since unit was started|[Ss]ome journal files were not opened))"
)
# journalctl -o verbose: a record a block, its time (the weekday in the locale's words, the zone as in
# short-full, the cursor after it, or "..." where a pager cut it) over its fields, one a line, indented by 4;
# a value's further lines are indented past its "FIELD=".
_VERBOSE_HEADER = (
    r"^[ \t]*[^\s0-9]\S* (?<stamp>[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?)"
    r" (?<zone>[A-Za-z][A-Za-z0-9+-]{1,5}|[+-][0-9][0-9](?::?[0-9][0-9])?)(?: \[.*|\.\.\.)?$"
)
_VERBOSE_FIELD = r"^    (?<field>[A-Z0-9_]+)=(?<value>.*)$"
# journalctl -o json-pretty: a record a JSON object, "{" and "}" on lines of their own, a field a line
# (`        "MESSAGE" : "…",`; a value JSON: a string, or an array of bytes).
_PRETTY_OPEN, _PRETTY_CLOSE = r"^[ \t]*\{[ \t]*$", r"^[ \t]*\},?[ \t]*$"
_PRETTY_FIELD = r'^[ \t]+"(?<field>[A-Z0-9_]+)" : (?<value>.*?),?[ \t]*$'
# A field line of either (for telling a file of records from one of lines).
_RECORD_FIELD = r'^(?:    [A-Z0-9_]+=|[ \t]+"[A-Z0-9_]+" : )'
_RECORD_LINE = "|".join(f"(?:{pattern})" for pattern in (_VERBOSE_HEADER, _RECORD_FIELD, _PRETTY_OPEN, _PRETTY_CLOSE))
# journalctl -o export (the stream systemd-journal-remote reads, a journal moved between hosts): a record a block of fields, one a
# line and not indented ("MESSAGE=…"), opened by its cursor ("__CURSOR=s=…;i=…") and its time in microseconds since the epoch
# ("__REALTIME_TIMESTAMP=1592391301176116"). A value that is no plain text (a message of several lines, control characters) is
# written as the field's name alone on a line, then the value's length in 8 binary bytes, the value and a newline: its lines run
# on to the next field. Such a file is told by its records' times: a line of "NAME=value" alone is any environment's dump.
EXPORT_OPENING = "__REALTIME_TIMESTAMP="
_EXPORT_CURSOR = "__CURSOR="
_EXPORT_FIELD = r"^(?<field>[A-Z_][A-Z0-9_]*)=(?<value>.*)$"
_EXPORT_BINARY_NAME = r"^[A-Z_][A-Z0-9_]*$"
# The binary length before a value: little-endian, its high bytes NUL (the bytes cut at a newline among them start a line of their own).
_EXPORT_LENGTH = r"^[^\x00]{0,6}\x00+"
# The fields of a record that make its envelope.
_RECORD_FIELDS = (
    "__REALTIME_TIMESTAMP", "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "_COMM", "_PID", "SYSLOG_PID", "_HOSTNAME", "_TRANSPORT",
    "_SOURCE_REALTIME_TIMESTAMP", "_SYSTEMD_UNIT", "_SYSTEMD_USER_UNIT", "UNIT", "USER_UNIT", "_SYSTEMD_CGROUP", "CONTAINER_ID_FULL",
    "CONTAINER_NAME",
)
# journalctl -o short-unix: "1701684000.123456 host program[pid]: message" (epoch seconds, microseconds).
_UNIX = r"(?<epoch>[0-9]{9,10}\.[0-9]{6})"


def _iso_head(host: str, program: str = _PROGRAM_OR_5424) -> str:
    """The ISO / short-full / short-unix head; ``host`` holds its own separator after it (none without a host)."""
    iso = r"(?<iso>[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]+)?(?:Z|[+-][0-9][0-9]:?[0-9][0-9])?)"
    return rf"^{_RFC5424_PRI}(?:{iso}|{_FULL}|{_UNIX})[ \t]{host}{program}"


_HOSTED, _MAYBE_HOSTED = rf"{_ANY_HOST}[ \t]", rf"(?:{_ANY_HOST}[ \t])?"
# A paste that blanked the host out leaves three blanks between time and program ("Apr 18 00:37:34   kernel: …"): the short
# head allows a blank more after the host, which is then "" (no host), as rsyslog's empty one is.
SHORT_HEAD, ISO_HEAD = _short_head(rf"{_ANY_HOST}[ \t]{{1,2}}"), _iso_head(_HOSTED)
_SHORT_NO_HOST_HEAD, _ISO_NO_HOST_HEAD = _short_head(_NO_HOST), _iso_head(_NO_HOST)
_SHORT_PROGRAM, _ISO_PROGRAM = _short_head(_MAYBE_HOSTED, _NAMED_PROGRAM), _iso_head(_MAYBE_HOSTED, _NAMED_PROGRAM)
_BARE_HEAD = rf"^{_PROGRAM}"
# journalctl -o short-monotonic: "[  127.535494] localhost systemd[1]: message" (seconds since boot; the host
# left out by --no-hostname). A host holds no bracket: "systemd[352]: a: b" is a program's line without one.
# -o short-delta (systemd 252+) adds the time since the line before: "[    5.858059 <   19.580722*>]" ("*": measured on the
# wall clock, across a boot), sixteen spaces on the first line.
_DELTA_MARK = r"(?: <[ 0-9]+\.[0-9]{6}[ *]>| {16})"
_DELTA = rf"{_DELTA_MARK}?"
# A short-delta line of any program (the kernel's too: no dmesg prints a delta), for sniffing.
MONOTONIC_DELTA_LINE = rf"^\[ *[0-9]+\.[0-9]{{6}}{_DELTA_MARK}\][ \t]"
MONOTONIC_HEAD = rf"^\[ *(?<boot>[0-9]+\.[0-9]{{6}}){_DELTA}\][ \t](?:(?<host>[^ \t\[\]]*[^ \t:\[\]])[ \t])?{_PROGRAM}"

# An RFC 5424 message that a relay took for RFC 3164 (syslog-ng's default network source) is written whole after the
# relay's short stamp and host: "Nov 26 15:54:41 127.0.0.1 1 2019-11-26T15:54:41.272535+00:00 ubu-srv-nfs root - - […] msg" (on the
# wire after the relay's priority: "<78>Jan 1 12:15:00 nas.example 1 1970-01-01T12:15:00.005048-00:00 nas.example /usr/sbin/cron …").
# The group is the message's own header on: its time (with its zone) and the sender's host.
RELAYED_5424 = (
    rf"^(?:<[0-9]{{1,3}}>)?{timeutil.MONTH_NAME_PATTERN}[ \t]+[0-9]{{1,2}}[ \t][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?"
    r"[ \t][^ \t]+[ \t]1 "
    r"([0-9]{4}-[0-9][0-9]-[0-9][0-9]T.*)$"
)

# OpenWrt's `logread` prints its ring buffer with ctime's stamp, the year after the clock (local time, no zone), no host and
# the priority by name: "Tue Nov 28 23:33:47 2023 kern.info kernel: [783707.226626] device wl1-ap0 left promiscuous mode".
# `logread -t` adds the moment in epoch seconds (UTC) with milliseconds: "Tue Apr 29 07:08:24 2025 [1745896104.164] kern.info …".
# A message logged without an ident has an empty tag: "Sun Feb  1 12:05:13 2026 user.notice : Added device handler type: veth".
LOGREAD_LINE = (
    rf"^(?<stamp>[A-Z][a-z]{{2}} (?<mon>{timeutil.MONTH_NAME_PATTERN}) +(?<day>[0-9]{{1,2}}) (?<clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9])"
    rf" (?<year>[0-9]{{4}}))(?: \[(?<epoch>[0-9]{{9,10}}\.[0-9]{{3}})\])? {_NAMED_PRIORITY} (?:{_PROGRAM}|:[ \t])" + MESSAGE_TAIL
)
# (rsyslog's empty host, too: two spaces after the time; a host blanked out: three.)
SHORT_LINE = _short_head(rf"(?:{_REAL_HOST}[ \t]|[ \t]{{1,2}})?") + MESSAGE_TAIL
# An application's line may start with an ISO time and "name:" too (python logging): without a host, only a
# program with its pid makes an envelope for sniffing.
ISO_LINE = _iso_head(rf"{_REAL_HOST}[ \t]") + MESSAGE_TAIL
ISO_PID_LINE = _iso_head(_MAYBE_HOSTED, _PROGRAM_WITH_PID) + MESSAGE_TAIL
# The short lines of a host of capitals (journalctl of a machine named "PC"), for sniffing.
SHORT_PID_LINE = _short_head(_MAYBE_HOSTED, _PROGRAM_WITH_PID) + MESSAGE_TAIL
# A short-monotonic line of a program with its pid, for sniffing: dmesg has few of them (systemd's and udevd's
# early lines through /dev/kmsg), a `journalctl -o short-monotonic` has little else.
MONOTONIC_PID_LINE = rf"^\[ *[0-9]+\.[0-9]{{6}}{_DELTA}\][ \t](?:[^ \t\[\]]*[^ \t:\[\]][ \t])?{_PROGRAM_WITH_PID}" + MESSAGE_TAIL

# A container runtime's own log read bare, without an envelope (k3s' and rke2's agent/containerd/containerd.log,
# `journalctl -u containerd -o cat`, dockerd's or CRI-O's log file): logrus' text lines, opened by the moment of writing with
# its zone ("time="2024-05-01T12:00:05.1Z" level=info msg="…""; CRI-O's with a space for the "T"). Such a line is the runtime's
# only in a file that holds the runtime's own wordings: a generic Go program writes the same lines. The wordings tell the
# runtime too: dockerd's log names containerd's shims and plugins, not the reverse; CRI-O's neither.
LOGRUS_LINE = (
    r'^time="(?<stamp>[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?(?:Z|[+-][0-9][0-9]:?[0-9][0-9]))"'
    r" level=[a-z]+ msg="
)
# The same lines as logrus writes them on a terminal (dockerd or containerd run in the foreground, `docker logs` of a
# docker:dind container): "ERRO[2019-10-09T07:10:03.707613785+08:00] Failed to start container …   key=value".
LOGRUS_TTY_LINE = (
    r"^(?<level>PANI|FATA|ERRO|WARN|INFO|DEBU|TRAC)\[(?<stamp>[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?"
    r"(?:Z|[+-][0-9][0-9]:?[0-9][0-9]))\] "
)
# A container runtime's event stream saved to a file: `docker events` ("<RFC 3339 time> <type> <action> <id> (<key>=<value>, …)";
# an exec's command or a health status after the action and a colon; before Docker 1.10 "<time> <id>: (from <image>) <action>")
# or `podman events` (its time in Go's layout and the zone's name, attributes only for some objects: "… system refresh"). Only
# these shapes are taken: an application's ISO-stamped line may read "<time> node joined worker-3 (10.0.0.3)".
DOCKER_EVENT_TIME = r"[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?(?:Z|[+-][0-9][0-9]:[0-9][0-9])"
PODMAN_EVENT_TIME = r"[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)? [+-][0-9]{4}"
_EVENT_ATTRIBUTES = r" \([^=()\s]+="
RUNTIME_EVENT_LINE = (
    rf"^(?:(?<docker>{DOCKER_EVENT_TIME}) (?:container [a-z_]+(?::[^\n]*?)? [0-9a-f]{{12,64}}(?:{_EVENT_ATTRIBUTES}|$)"
    rf"|(?:image|network|volume|plugin|daemon|service|node|secret|config|builder) [a-z_]+ \S+{_EVENT_ATTRIBUTES}"
    r"|[0-9a-f]{12,64}: \(from [^)]*\) [a-z_]+$)"
    rf"|(?<podman>{PODMAN_EVENT_TIME}) \S+ (?:container|image|pod|volume|network|system|secret|machine) [a-z_]+(?::? |$))"
)
# `docker events --format '{{json .}}'` (or the API's /events stream) saved to a file: an object an event, its time last
# ('…,"time":1487235877,"timeNano":1487235877854997858}').
RUNTIME_EVENT_JSON = r'"time":[0-9]+,"timeNano":([0-9]{10,19})\}\s*$'
_TTY_SEVERITY = {"PANI": "critical", "FATA": "critical", "ERRO": "error", "WARN": "warning", "INFO": "info", "DEBU": "debug", "TRAC": "debug"}
# logrus' text format names the level after the stamp it opens with: "time="2024-04-03T16:19:48Z" level=error msg="…"".
LOGRUS_LEVEL = r'^time="[^"]*" level=(?<level>[a-z]+) '
LOGRUS_SEVERITY = {"trace": "debug", "debug": "debug", "info": "info", "warning": "warning", "error": "error", "fatal": "critical", "panic": "critical"}
RUNTIME_WORDINGS = {
    "dockerd": (
        'msg="Loading containers: ', 'msg="API listen on ', 'msg="Docker daemon"', 'msg="Daemon has completed initialization"',
        "module=libcontainerd",
    ),
    "crio": (
        'msg="Starting CRI-O', 'msg="Ran pod sandbox ', 'msg="Got pod network ', "name=/runtime.v1.", 'msg="Checking image status',
        'msg="Could not restore sandbox ', 'msg="Could not restore container ', 'msg="Deleting all containers under sandbox ',
    ),
    "containerd": (
        'msg="starting containerd"', 'msg="loading plugin', "io.containerd.", 'msg="TaskOOM event', 'msg="TaskExit event',
        'msg="received exit event', 'msg="RunPodSandbox for', 'msg="StartContainer for', 'msg="CreateContainer within sandbox',
        'msg="StopPodSandbox for', 'msg="StopContainer for', 'msg="shim disconnected"', 'msg="ImageCreate event', "containerd-shim",
    ),
}


# A log shipper, or a log viewer's export, may write its own stamp before a runtime's bare logrus line, with no host or tag
# between: "2022-03-18T10:01:17+00:00<TAB>time="2022-03-18T10:01:17.056016241Z" level=info msg=…" (containerd#6080), or a
# syslog stamp alone, "Aug  7 19:07:50 time="…" level=error msg=…". The line after that stamp is the bare line: its own
# zoned stamp is its time.
_SHIPPER_STAMP = (
    rf"^(?:{timeutil.MONTH_NAME_PATTERN}[ \t]+[0-9]{{1,2}}[ \t][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?"
    r"|[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]+)?(?:Z|[+-][0-9][0-9]:?[0-9][0-9])?)[ \t]+"
)
_SHIPPED_LOGRUS = _SHIPPER_STAMP + r'time="[0-9]{4}-'


def _is_shipped_logrus(text: pl.Expr) -> pl.Expr:
    """Whether ``text`` is a bare logrus line under a shipper's stamp (:data:`_SHIPPER_STAMP`); tried where the literal is."""
    gate = text.str.contains('time="', literal=True) & ~text.str.starts_with('time="')
    return pl.when(gate).then(text).str.contains(_SHIPPED_LOGRUS).fill_null(False)


def unshipped(text: pl.Expr) -> pl.Expr:
    """``text`` without the stamp a shipper wrote before a bare logrus line (:data:`_SHIPPER_STAMP`); other lines as they are."""
    return pl.when(_is_shipped_logrus(text)).then(text.str.replace(_SHIPPER_STAMP, "")).otherwise(text)


def runtime_of_bare_lines(text: pl.Expr, within: str | None) -> pl.Expr:
    """The runtime (containerd, dockerd, crio) whose bare logrus line ``text`` is (under a shipper's stamp or not), by the
    wordings of its file (``within`` tells the files of a batch apart); null on other lines and in files without such wordings."""
    text = unshipped(text)
    # (On a terminal a message is not quoted: "] API listen on …" where a file has 'msg="API listen on …"'.)
    spelled = {runtime: [*wordings, *("] " + w.removeprefix('msg="').rstrip('"') for w in wordings if w.startswith('msg="'))] for runtime, wordings in RUNTIME_WORDINGS.items()}
    named = {runtime: text.str.contains_any(wordings).any() for runtime, wordings in spelled.items()}
    if within:
        named = {runtime: said.over(within) for runtime, said in named.items()}
    runtime = pl.when(named["dockerd"]).then(pl.lit("dockerd")).when(named["crio"]).then(pl.lit("crio")).when(named["containerd"]).then(pl.lit("containerd"))
    return pl.when(text.str.contains(LOGRUS_LINE) | text.str.contains(LOGRUS_TTY_LINE)).then(runtime)


def opens_like_logrus(text: pl.Expr) -> pl.Expr:
    """The cheap test of a line that may be a bare logrus line (:data:`LOGRUS_LINE`, :data:`LOGRUS_TTY_LINE`)."""
    return text.str.starts_with('time="') | (text.str.slice(4, 1) == "[") | _is_shipped_logrus(text)


def is_runtime_event(text: pl.Expr) -> pl.Expr:
    """Whether ``text`` is a saved runtime event: a line (:data:`RUNTIME_EVENT_LINE`) or Docker's JSON (:data:`RUNTIME_EVENT_JSON`)."""
    return text.str.contains(RUNTIME_EVENT_LINE) | (text.str.starts_with("{") & text.str.contains(RUNTIME_EVENT_JSON))


def runtime_event(text: pl.Expr) -> pl.Expr:
    """The runtime (dockerd, podman) whose saved event ``text`` is, and the event's time: a struct of ``runtime`` and ``stamp``
    (an RFC 3339 or Go time, or nanoseconds since the epoch)."""
    found = pl.when(text.str.contains(RUNTIME_EVENT_LINE)).then(text).str.extract_groups(RUNTIME_EVENT_LINE).struct
    nanos = pl.when(text.str.starts_with("{")).then(text).str.extract(RUNTIME_EVENT_JSON, 1)
    runtime = (
        pl.when(found.field("docker").is_not_null() | nanos.is_not_null()).then(pl.lit("dockerd"))
        .when(found.field("podman").is_not_null()).then(pl.lit("podman"))
    )
    return pl.struct(runtime.alias("runtime"), pl.coalesce(found.field("docker"), found.field("podman"), nanos).alias("stamp"))


_SEVERITY_BY_PRIORITY = {"0": "critical", "1": "critical", "2": "critical", "3": "error", "4": "warning", "5": "notice", "6": "info", "7": "debug"}

# What a line without an envelope takes from the line above (rca.sources._base.inherit_frame); "indent"
# is the width of that line's envelope.
_CARRIED = ("ts", "ts_raw", "boot_seconds", "host", "program", "pid", "format", "indent")

FRAMED_SCHEMA = {
    "line": pl.Int64(),
    "text": pl.String(),
    "ts": pl.Datetime("us", "UTC"),
    "ts_raw": pl.String(),
    "ts_quality": pl.String(),
    "host": pl.String(),
    "program": pl.String(),
    "pid": pl.Int64(),
    "message": pl.String(),
    "severity": pl.String(),
    "format": pl.String(),
}


def message_level(message: pl.Expr) -> pl.Expr:
    """The severity a message names first, where its envelope gives none: daemons that write no syslog level name it
    first (Slurm's, sshd's, munged's "error: …"; DCGM's nv-hostengine's and Go command-line tools' "Error: …"); a Go daemon
    logging with logrus after its stamp (k3s' and rke2's own lines, which go to the kubelet's rules: those read a klog
    letter alone)."""
    return (
        pl.when(message.str.starts_with("error: ") | message.str.starts_with("Error: ")).then(pl.lit("error"))
        .when(message.str.starts_with("fatal: ")).then(pl.lit("critical"))
        .when(message.str.starts_with('time="')).then(message.str.extract(LOGRUS_LEVEL, 1).replace_strict(LOGRUS_SEVERITY, default=None))
    )


def is_registered_program_line(text: pl.Expr) -> pl.Expr:
    """Whether ``text`` is the line of a program with rules of its own, whatever its host ("апр 28 01:23:30 PC
    kernel: …": a host of capitals, no pid; "2024-12-04T10:00:00+0000 kernel: …" no host), for sniffing."""
    program = pl.coalesce(
        text.str.extract_groups(_SHORT_PROGRAM + MESSAGE_TAIL).struct.field("program"), text.str.extract_groups(_ISO_PROGRAM + MESSAGE_TAIL).struct.field("program")
    )
    return program.is_in(list(_PROGRAM_RULES)).fill_null(False)


def register_program(program: str, source: str | None, rules: MessageRules) -> None:
    """Route messages of syslog ``program`` (e.g. "kernel") to ``rules``, labelled ``source`` (None: the file's source)."""
    _PROGRAM_RULES[program] = (source, rules)


def register_bare_messages(program: str, pattern: str) -> None:
    """Take a line that matches ``pattern`` (anchored: the program's own wordings) for ``program``'s message written bare,
    without an envelope: the program run on a terminal (its stderr saved), or ``journalctl -u <unit> -o cat``."""
    _BARE_MESSAGES[program] = pattern


def own_bare_program(text: pl.Expr) -> pl.Expr:
    """The program whose own message (:func:`register_bare_messages`) ``text`` is, written bare; null on other lines."""
    found = pl.lit(None, pl.String)
    for program, pattern in _BARE_MESSAGES.items():
        found = pl.when(text.str.contains(pattern)).then(pl.lit(program)).otherwise(found)
    return found


def _with_own_bare_messages(bare: pl.Expr) -> pl.Expr:
    """The bare head ``bare`` (a struct of head, program, pid, message), or the program's own message written bare: a line
    of earlyoom's stderr ("mem avail:  1524 of 13855 MiB …") has no "program:" to read, its wordings tell whose it is.
    The further lines of such a message (earlyoom's indented limits) and the lines between them keep the envelope above."""
    if not _BARE_MESSAGES:
        return bare
    own = own_bare_program(pl.col("text"))
    return pl.when(own.is_not_null()).then(
        pl.struct(head=pl.lit(None, pl.String), program=own, pid=pl.lit(None, pl.String), message=pl.col("text"))
    ).otherwise(bare)


def register_applications(source: str, rules: MessageRules, recognises: pl.Expr) -> None:
    """Route the lines of a program without rules of its own to ``rules``, labelled ``source``, when
    ``recognises`` (an expression over ``message``) holds for a line of the same program and pid."""
    _APPLICATIONS[:] = [(source, rules, recognises)]


def frame_text(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Peel the syslog/journald envelope off each line.

    Lines without an envelope (continuations, stack dumps) keep ``message`` = the line and
    inherit the time, host and program of the line above.
    """
    one_line = not holds_newline(lines["text"])
    short = head_groups(pl.col("text"), SHORT_HEAD, one_line=one_line)
    # (A relay's lines are rare: the text is copied only where there are some.)
    relayed = lines.select(pl.when(pl.col("text").str.contains(" 1 ", literal=True)).then(pl.col("text")).str.extract(RELAYED_5424, 1)).to_series()
    iso_text = pl.coalesce(pl.lit(relayed), pl.col("text")) if relayed.is_not_null().any() else pl.col("text")
    iso = head_groups(iso_text, ISO_HEAD, one_line=one_line)
    bare = head_groups(pl.col("text"), _BARE_HEAD, one_line=one_line)
    # (A dmesg line starts with "[" too: the pattern is tried on those lines only.)
    monotonic = head_groups(pl.when(pl.col("text").str.starts_with("[")).then(pl.col("text")), MONOTONIC_HEAD, one_line=one_line)
    parts = lines.with_columns(short.alias("s"), iso.alias("i"), _with_own_bare_messages(bare).alias("b"), monotonic.alias("m"))
    parts = _with_or_without_host(_with_or_without_host(parts, "s", _SHORT_NO_HOST_HEAD, one_line), "i", _ISO_NO_HOST_HEAD, one_line)
    parts = _with_syslogd_own_lines(parts)
    parts = _with_spaced_programs(parts, one_line)
    parts = _with_real_host(parts, "s", "i", empty_host_envelopes=("s",))
    parts = _with_logread_lines(parts, ctx)
    parts = _with_bare_runtime_lines(parts, within_file(lines))
    # A saved runtime event is no ISO-stamped syslog line ("<time> container health_status: …" reads as host "container").
    parts = parts.with_columns(i=pl.when(pl.col("runtime").is_null()).then(pl.col("i")))
    s, i, b, m = pl.col("s").struct, pl.col("i").struct, pl.col("b").struct, pl.col("m").struct
    full = pl.when(i.field("zone").is_not_null()).then(pl.concat_str(i.field("full"), timeutil.offset_text(timeutil.zone_minutes(i.field("zone")))))
    full = pl.coalesce(full, i.field("full"))
    iso_ts = map_distinct(parts.select(pl.coalesce(i.field("iso"), full)).to_series(), lambda text: timeutil.iso_to_utc(text, ctx.tz))
    parts = parts.with_columns(iso_ts=pl.coalesce(timeutil.epoch_to_utc(i.field("epoch").str.replace(".", "", literal=True)), iso_ts))
    short_ts, short_quality = timeutil.yearless_to_utc(
        timeutil.month_number(s.field("mon")), s.field("day"), s.field("clock"), ctx, within=within_file(lines)
    )
    # Short stamps are in the zone of the host journalctl ran on: its banner names that zone, when the file has it.
    # (Each part of a file of several journalctl outputs, by the banner nearest above it.)
    separator = pl.when(pl.col("text").str.starts_with("-- ")).then(pl.col("text")).str.extract_groups(_JOURNAL_SEPARATOR).struct
    banner = timeutil.zone_minutes(separator.field("zone"))
    banner_minutes = banner.forward_fill().backward_fill()
    banner_minutes = banner_minutes.over(within) if (within := within_file(lines)) else banner_minutes
    short_ts = pl.when(banner_minutes.is_not_null()).then(_at_offset(short_ts.dt.convert_time_zone(ctx.tz).dt.replace_time_zone(None), banner_minutes)).otherwise(short_ts)
    # (A logread line's stamp states its year: it is read as it is, neither a year nor a zone inferred for it.)
    dated = pl.col("dated_ts").is_not_null()
    short_ts, short_quality = pl.coalesce("dated_ts", short_ts), pl.when(dated).then(pl.lit("exact")).otherwise(short_quality)
    has_short = s.field("message").is_not_null()
    has_iso = i.field("message").is_not_null()
    has_bare = b.field("message").is_not_null() & b.field("program").is_in(list(_PROGRAM_RULES))
    # A dmesg line ("[    5.1] usb 1-1: new device") has no program[pid] after its stamp, nor a program with rules.
    has_monotonic = m.field("message").is_not_null() & (m.field("pid").is_not_null() | m.field("program").is_in(list(_PROGRAM_RULES)))
    # A runtime's bare logrus line: its own time (with its zone) and the runtime as its program; no host, no pid.
    has_runtime = pl.col("runtime").is_not_null()
    runtime_stamp = pl.col("runtime_stamp")
    runtime_ts = pl.when(runtime_stamp.str.contains("^[0-9]+$")).then(timeutil.epoch_to_utc(runtime_stamp)).otherwise(timeutil.iso_to_utc(runtime_stamp, ctx.tz))
    boot_seconds = pl.when(has_monotonic).then(m.field("boot").cast(pl.Float64))
    boot_ts, boot_quality = timeutil.boot_to_utc(boot_seconds, ctx)
    message = pl.coalesce(s.field("message"), i.field("message"), m.field("message"))
    level = message_level(message)
    facility_severity = i.field("pri_facility").cast(pl.Int32, strict=False) * 8 + i.field("pri_severity").cast(pl.Int32, strict=False)
    pri = pl.coalesce(
        s.field("pri").cast(pl.Int32, strict=False), _named_priority(s.field("named_facility"), s.field("named_level")),
        i.field("pri").cast(pl.Int32, strict=False), facility_severity,
    )
    pri = pl.when(pri < len(_FACILITIES) * 8).then(pri)
    program = (
        pl.when(has_short).then(s.field("program")).when(has_iso).then(i.field("program"))
        .when(has_monotonic).then(m.field("program")).when(has_bare).then(b.field("program")).when(has_runtime).then(pl.col("runtime"))
    )
    framed = parts.with_columns(
        ts=pl.when(has_short).then(short_ts).when(has_iso).then(pl.col("iso_ts")).when(has_monotonic).then(boot_ts).when(has_runtime).then(runtime_ts),
        ts_raw=pl.when(has_short).then(s.field("stamp"))
        .when(has_iso).then(pl.coalesce(i.field("iso"), pl.format("{} {} {}", i.field("weekday"), i.field("full"), i.field("zone")), i.field("epoch")))
        .when(has_monotonic).then(m.field("boot")).when(has_runtime).then(pl.col("runtime_stamp")),
        ts_quality=pl.when(has_short).then(short_quality).when(has_iso).then(pl.lit("exact")).when(has_monotonic).then(boot_quality)
        .when(has_runtime).then(pl.lit("exact")),
        boot_seconds=boot_seconds,
        host=pl.coalesce(s.field("host"), i.field("host"), pl.when(has_monotonic).then(m.field("host"))),
        program=_nil_app_name(program, pri),
        # strict=False: a pid past 2**63 (damage, not a process) is null rather than an error for the whole batch.
        pid=pl.coalesce(
            s.field("pid"), i.field("pid"), i.field("procid"), pl.when(has_monotonic).then(m.field("pid")), pl.when(has_bare).then(b.field("pid"))
        ).cast(pl.Int64, strict=False),
        message=pl.when(has_short).then(s.field("message")).when(has_iso).then(i.field("message"))
        .when(has_monotonic).then(m.field("message")).when(has_bare).then(b.field("message"))
        .when(has_runtime).then(unshipped(pl.col("text"))).otherwise(pl.col("text")),
        severity=pl.coalesce(
            (pri % 8).cast(pl.String).replace_strict(_SEVERITY_BY_PRIORITY, default=None), level,
            pl.when(has_runtime).then(pl.col("runtime_level")),
        ),
        facility=(pri // 8).replace_strict(list(range(len(_FACILITIES))), _FACILITIES, default=None, return_dtype=pl.String),
        format=pl.when(has_short).then(pl.lit("syslog")).when(has_iso).then(pl.lit("syslog_iso"))
        .when(has_monotonic).then(pl.lit("journal_monotonic")).when(has_bare).then(pl.lit("syslog_bare")).when(has_runtime).then(pl.col("runtime_format")),
        framed=has_short | has_iso | has_monotonic | has_bare | has_runtime | separator.field("separator").is_not_null() | _is_journalctl_note(pl.col("text")),
        indent=pl.when(has_short | has_iso | has_monotonic).then(pl.col("text")).str.len_chars()
        - pl.when(has_short).then(s.field("message")).when(has_iso).then(i.field("message")).when(has_monotonic).then(m.field("message")).str.len_chars(),
    )
    # A short stamp's zone may be told by the line's own zoned stamp (containerd's time="…+08:00").
    framed = _zones.envelope_zone_corrected(framed, has_short & ~dated & banner_minutes.is_null(), within_file(lines))
    framed = _zones.with_confirmed_years(framed, has_short & ~dated, within_file(lines))
    # A line whose envelope gives no time of its own (no stamp; seconds since boot) may open with the runtime's zoned stamp.
    framed = _zones.with_opening_stamp_times(framed, ~has_short & ~has_iso & (has_bare | has_monotonic))
    inherited = inherit_frame(framed, _CARRIED)
    # journalctl prints the further lines of a multi-line message (a traceback a unit logged) indented to
    # the column its first line's message starts at: without that margin they read as the program wrote them.
    # (Measured on the lines without an envelope alone: string functions skip nulls.)
    unframed = pl.when(~pl.col("framed")).then(pl.col("text"))
    margin = unframed.str.len_chars() - unframed.str.strip_chars_start(" ").str.len_chars()
    continued = (margin >= pl.col("indent")).fill_null(False)
    message = pl.when(continued).then(unframed.str.slice(pl.col("indent"))).otherwise(pl.col("message"))
    # (The escapes are looked for only in batches that hold one.)
    if lines.select(pl.col("text").str.contains(_RSYSLOG_ESCAPE_GATE, literal=True).any()).item():
        message = _rsyslog_unescaped(message)
    return inherited.with_columns(message=message).select(*FRAMED_SCHEMA, "boot_seconds", "facility", *file_column(lines))


# The facility of a line's priority (pri // 8), by rsyslog's names for them (its "syslogfacility-text").
_FACILITIES = [
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp", "ntp", "audit", "alert", "clock",
    *(f"local{n}" for n in range(8)),
]


def _named_priority(facility: pl.Expr, level: pl.Expr) -> pl.Expr:
    """The priority (facility x 8 + severity) of BusyBox' "facility.level" (:data:`_FACILITY_LEVEL`); null without one."""
    facility = facility.replace_strict(_NAMED_FACILITIES, default=None, return_dtype=pl.Int32)
    return facility * 8 + level.replace_strict(_NAMED_LEVELS, default=None, return_dtype=pl.Int32)


def _nil_app_name(program: pl.Expr, pri: pl.Expr) -> pl.Expr:
    """``program`` with RFC 5424's nil app-name ("-") read as none, or as the kernel's where the priority's facility is the
    kernel's (0): no program but the kernel may log with it (a process writing to /dev/kmsg is given the user facility)."""
    return pl.when(program != "-").then(program).when(pri < 8).then(pl.lit("kernel"))


# rsyslog writes a message's control characters as "#" and their octal code ($EscapeControlCharactersOnReceive, on by
# default): a multi-line record a program logged (a Python traceback, an NVRM record) arrives as one line,
# "…by zero#012Traceback (most recent call last):#012  File …". Its newlines and tabs are given back so that the
# record's rules read its lines. A terminal's colours and erases (gitlab-runner's "#033[31;1mERROR: Job failed…#033[0;m",
# logrus' "#033[33mWARN#033[0m[0006]") and the controls a terminal's output carries (ESC, CR, BEL) are dropped, as the
# journal's byte arrays' escapes are (:func:`bytes_text`): the rules read the text the program wrote, not its styling.
# Other codes are left as written: "#0017" or "#003366" in a message is more likely a number or a colour than a control.
_RSYSLOG_ESCAPE_GATE = "#0"
_RSYSLOG_TERMINAL_ESCAPE = r"#033\[[0-9;?]*[A-Za-z]"
_RSYSLOG_DECODED = {"#012": "\n", "#011": "\t", "#033": "", "#015": "", "#007": ""}


def _rsyslog_unescaped(message: pl.Expr) -> pl.Expr:
    """``message`` with rsyslog's escaped terminal sequences dropped and its other escapes decoded (:data:`_RSYSLOG_DECODED`:
    a newline, a tab; ESC, CR and BEL dropped)."""
    escaped = message.str.contains(_RSYSLOG_ESCAPE_GATE, literal=True)
    plain = message.str.replace_all(_RSYSLOG_TERMINAL_ESCAPE, "").str.replace_many(list(_RSYSLOG_DECODED), list(_RSYSLOG_DECODED.values()))
    return pl.when(escaped).then(plain).otherwise(message)


def _is_journalctl_note(text: pl.Expr) -> pl.Expr:
    """Whether a line is one of journalctl's notes (:data:`_JOURNALCTL_NOTE`); its openings tried first."""
    return pl.when(text.str.contains_any(_JOURNALCTL_NOTE_OPENINGS)).then(text.str.contains(_JOURNALCTL_NOTE)).fill_null(False)


def _with_bare_runtime_lines(parts: pl.DataFrame, within: str | None) -> pl.DataFrame:
    """``parts`` with the ``runtime`` whose bare line each is, a logrus line (:func:`runtime_of_bare_lines`) or a saved event
    (:func:`runtime_event`), its ``runtime_stamp``, ``runtime_level`` and ``runtime_format``."""
    text = pl.col("text")
    # (Most files have neither: the wordings and the events' fields are looked for in those that have such lines.)
    logrus, events = parts.select(opens_like_logrus(text).any().alias("logrus"), is_runtime_event(text).any().alias("events")).row(0)
    if not (logrus or events):
        return parts.with_columns(**dict.fromkeys(("runtime", "runtime_stamp", "runtime_level", "runtime_format"), pl.lit(None, pl.String)))
    event = runtime_event(text).struct if events else pl.struct(runtime=pl.lit(None, pl.String), stamp=pl.lit(None, pl.String)).struct
    logrus_runtime = runtime_of_bare_lines(text, within) if logrus else pl.lit(None, pl.String)
    parts = parts.with_columns(logrus_runtime=logrus_runtime, event_runtime=event.field("runtime"), event_stamp=event.field("stamp"))
    logrus_text = pl.when(pl.col("logrus_runtime").is_not_null()).then(unshipped(text))
    tty = logrus_text.str.extract_groups(LOGRUS_TTY_LINE).struct
    return parts.with_columns(
        runtime=pl.coalesce("logrus_runtime", "event_runtime"),
        runtime_stamp=pl.coalesce(logrus_text.str.extract(LOGRUS_LINE, 1), tty.field("stamp"), "event_stamp"),
        # (A file's line names its level in the message, "level=error", which the runtime's rules read.)
        runtime_level=tty.field("level").replace_strict(_TTY_SEVERITY, default=None),
        runtime_format=pl.when(pl.col("logrus_runtime").is_not_null()).then(pl.lit("logrus"))
        .when(pl.col("event_runtime").is_not_null()).then(pl.format("{}_events", pl.col("event_runtime").replace("dockerd", "docker"))),
    ).drop("logrus_runtime", "event_runtime", "event_stamp")


# An application's own level at the start of the message it gave the journal: klog's letter ("E0206 01:02:05.123456 …"); after
# the application's own stamp, capnslog's (etcd before 3.4: "2019-02-06 01:02:03.123456 W | …") or a level word in capitals
# ("21-08-29 10:08:57 WARNING (MainThread) …", "2024-05-01 12:00:00.000 ERROR [77:80] …").
_LEVEL_WORDS = "DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRITICAL|CRIT|FATAL|PANIC"
_APPLICATION_LEVEL = (
    r"^(?:(?<klog>[IWEF])(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01]) [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"
    r"|[0-9]{2,4}-[0-9][0-9]-[0-9][0-9][ T][0-9][0-9]:[0-9][0-9]:[0-9][0-9][0-9.,]*(?:Z|[+-][0-9][0-9]:?[0-9][0-9])? "
    rf"(?:(?<capnslog>[DINWEC]) \| |\[?(?<word>{_LEVEL_WORDS})\]?(?::? |:$|$))"
    # Without a stamp of its own a word is a level only marked as one: "[WARN] …", "ERROR: …" ("CRITICAL section …" is none),
    # also after the name of the tool that printed it, as kmod's rmmod and modprobe do under a daemon that ran them
    # ("bumblebeed[489]: rmmod: ERROR: Module nvidia is in use by: nvidia_modeset", "modprobe: FATAL: Module nvidia not found …").
    rf"|\[(?<bracketed>{_LEVEL_WORDS})\](?::? |$)|(?:[a-z][0-9a-z_.\-]*: )?(?<colon>{_LEVEL_WORDS}):(?: |$)"
    # ... or a bracketed word after the seconds since the program started, as bumblebeed writes its own lines
    # ("[    4.694684] [ERROR]Unloading nvidia driver timed out.")
    rf"|\[ *[0-9]+\.[0-9]+\] \[(?<uptime>{_LEVEL_WORDS})\]"
    # A JSON logger's line that names its level (zerolog's and zap's first: '{"level":"warn",…'; logrus' JSON formatter sorts its
    # keys: '{"@time":"…","host":"…","level":"info",…'); a "level" inside a nested object is none of the line's.
    r'|\{(?:[^{}]*?,)?"level":"(?<json>[A-Za-z]+)"[,}]'
    # logrus' text formatter on a terminal, its colours gone: "WARN[0006] config.Allowed = false" (seconds since its start)
    r"|(?<tty>PANI|FATA|ERRO|WARN|INFO|DEBU|TRAC)\[[0-9]{4,}\] )"
)
_APPLICATION_SEVERITY = {
    "I": "info", "W": "warning", "E": "error", "F": "critical", "D": "debug", "N": "notice", "C": "critical",
    "DEBUG": "debug", "INFO": "info", "NOTICE": "notice", "WARN": "warning", "WARNING": "warning", "ERROR": "error", "ERR": "error",
    "CRITICAL": "critical", "CRIT": "critical", "FATAL": "critical", "PANIC": "critical",
}


def application_level(message: pl.Expr) -> pl.Expr:
    """The severity an application's own log line names at the start of a syslog message (:data:`_APPLICATION_LEVEL`)."""
    found = message.str.extract_groups(_APPLICATION_LEVEL).struct
    named = pl.coalesce(
        found.field("klog"), found.field("capnslog"), found.field("word"), found.field("bracketed"), found.field("colon"),
        found.field("uptime"), found.field("json").str.to_uppercase(),
    )
    return pl.coalesce(named.replace_strict(_APPLICATION_SEVERITY, default=None), found.field("tty").replace_strict(_TTY_SEVERITY, default=None))


def _at_offset(naive: pl.Expr, minutes: pl.Expr) -> pl.Expr:
    """UTC of a zone-less time read at ``minutes`` east of UTC."""
    return (naive.cast(pl.Datetime("us")) - pl.duration(minutes=minutes)).dt.replace_time_zone("UTC")


def _with_or_without_host(parts: pl.DataFrame, hosted: str, no_host_head: str, one_line: bool) -> pl.DataFrame:
    """``parts`` with the groups of a head with a host (column ``hosted``) taken, where that head missed or misread
    a line ("systemd[1]:" is no host), from the same head without one (``no_host_head``, its host null)."""
    missed = pl.col(hosted).struct.field("message").is_null() | pl.col(hosted).struct.field("host").str.ends_with(":")
    without = parts.select(pl.when(missed).then(pl.col("text")).str.contains(no_host_head).fill_null(False)).to_series()
    # Most files have a host on every line: the groups are captured, and struct columns merged, only where needed.
    if not without.any():
        return parts
    no_host = head_groups(pl.when(without).then(pl.col("text")), no_host_head, one_line=one_line).struct.with_fields(host=pl.lit(None, pl.String))
    return parts.with_columns(pl.when(without).then(no_host).otherwise(pl.col(hosted)).alias(hosted))


# node-problem-detector's klog (its unit "node-problem-detector", AKS' "node-problem-detector-startup.sh", any tag) logs each
# status it sends: "New status generated: &{Source:kernel-monitor Events:[{Severity:warn Timestamp:… Reason:OOMKilling
# Message:…}] Conditions:[…]}". The node's own kernel line it quotes (the kill, the hung task, the oops) is the event: the
# status stays a log (see _detector_status; the kubelet source reads its event).
NPD_STATUS = (
    r"New status generated: &\{Source:(?<monitor>\S+) Events:\[\{Severity:(?<severity>[a-z]+) Timestamp:[^}]*?"
    r" Reason:(?<reason>[0-9A-Za-z_]+) Message:"
)


def _detector_status(events: pl.DataFrame) -> pl.DataFrame:
    """``events`` with node-problem-detector's status lines (:data:`NPD_STATUS`) that no rules read as more than a log: a
    warning where the event they send is one, its reason and the monitor that sends it ("source", as an event's From) in
    attrs."""
    if not {"kind", "message", "severity", "attrs"} <= set(events.columns):
        return events
    message = pl.col("message")
    status = pl.when((pl.col("kind") == "log") & message.str.contains("New status generated: &{", literal=True)).then(message)
    found = status.str.extract_groups(NPD_STATUS).struct
    return events.with_columns(
        severity=pl.when(found.field("severity") == "warn").then(pl.lit("warning")).otherwise(pl.col("severity")),
        attrs=pl.when(found.field("reason").is_not_null())
        .then(joined_json(pl.col("attrs"), attrs_json({"reason": found.field("reason"), "source": found.field("monitor")})))
        .otherwise(pl.col("attrs")),
    )


# sysklogd (and BusyBox' syslogd) write their own lines with the host and no program tag: "Oct  7 07:53:07 localhost last message
# repeated 2 times" (that many more of the line before), "… localhost exiting on signal 15", "… localhost syslogd 1.4.1#16ubuntu6:
# restart.", "… host -- MARK --". Each is a line of its own, syslogd's, not a further line of the message above it.
_SYSLOGD_OWN_OPENINGS = ["last message repeated ", "exiting on signal ", "syslogd ", "-- MARK --"]
SYSLOGD_OWN_LINE = _short_head(_HOSTED, "(?<program>)(?<pid>)") + (
    r"(?<message>(?:last message repeated [0-9]+ times|exiting on signal [0-9]+|syslogd [0-9][^ \t:]*: .*|-- MARK --)[ \t]*)$"
)


def is_syslogd_own_line(text: pl.Expr) -> pl.Expr:
    """Whether ``text`` is one of syslogd's own tagless lines (:data:`SYSLOGD_OWN_LINE`); its openings tried first."""
    return pl.when(text.str.contains_any(_SYSLOGD_OWN_OPENINGS)).then(text.str.contains(SYSLOGD_OWN_LINE)).fill_null(False)


# macOS names a process by its bundle's name, spaces and all: "Jul  4 23:22:09 host Microsoft Word[14463]: …", "… Google
# Chrome[35628]: …", "… BezelServices 255.10[94]: …". Only with its pid and colon is such a name a tag: "host some words: …" is not.
_SPACED_PROGRAM_HEAD = _short_head(_HOSTED, r"(?<program>[A-Za-z0-9_.\-/@()\\]+(?: [A-Za-z0-9_.\-/@()\\]+)+)\[(?<pid>[0-9]+)\]:[ \t]")


def _with_spaced_programs(parts: pl.DataFrame, one_line: bool) -> pl.DataFrame:
    """``parts`` with the short head (column ``s``) of the lines whose program's name holds spaces (:data:`_SPACED_PROGRAM_HEAD`),
    which it missed; without it each would be read as a further line of the message above."""
    missed = pl.col("s").struct.field("message").is_null() & pl.col("text").str.contains("]:", literal=True)
    spaced = parts.select(pl.when(missed).then(pl.col("text")).str.contains(_SPACED_PROGRAM_HEAD).fill_null(False)).to_series()
    if not spaced.any():
        return parts
    found = head_groups(pl.when(spaced).then(pl.col("text")), _SPACED_PROGRAM_HEAD, one_line=one_line)
    return parts.with_columns(pl.when(spaced).then(found).otherwise(pl.col("s")).alias("s"))


def _with_syslogd_own_lines(parts: pl.DataFrame) -> pl.DataFrame:
    """``parts`` with the short head (column ``s``) of syslogd's own tagless lines (:data:`SYSLOGD_OWN_LINE`), which it missed;
    their program is ``syslogd``."""
    text = pl.col("text")
    missed = pl.col("s").struct.field("message").is_null()
    # (Looked for on the lines the head missed alone: string functions skip nulls.)
    own = parts.select(is_syslogd_own_line(pl.when(missed).then(text))).to_series()
    if not own.any():
        return parts
    groups = pl.when(own).then(text).str.extract_groups(SYSLOGD_OWN_LINE).struct
    found = {"program": pl.lit("syslogd"), "pid": pl.lit(None, pl.String), "head": pl.lit(None, pl.String)}
    fields = [field.name for field in parts.schema["s"].fields]
    head = pl.struct(**{name: found[name] if name in found else groups.field(name) for name in fields})
    return parts.with_columns(s=pl.when(own).then(head).otherwise(pl.col("s")))


def is_logread_line(text: pl.Expr) -> pl.Expr:
    """Whether ``text`` is a line of OpenWrt's ``logread`` (:data:`LOGREAD_LINE`)."""
    return text.str.contains(LOGREAD_LINE)


def _with_logread_lines(parts: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """``parts`` with the short head (column ``s``) of OpenWrt's ``logread`` lines (:data:`LOGREAD_LINE`), which it missed,
    and their time in ``dated_ts`` (null on other lines): ``logread -t``'s epoch where printed, else the dated stamp read in
    ``ctx.tz``."""
    text = pl.col("text")
    missed = pl.col("s").struct.field("message").is_null()
    logread = parts.select(is_logread_line(pl.when(missed & text.str.slice(3, 1).eq(" ")).then(text)).fill_null(False)).to_series()
    if not logread.any():
        return parts.with_columns(dated_ts=pl.lit(None, pl.Datetime("us", "UTC")))
    groups = pl.when(logread).then(text).str.extract_groups(LOGREAD_LINE).struct
    found = {"pri": pl.lit(None, pl.String), "host": pl.lit(None, pl.String), "head": pl.lit(None, pl.String)}
    fields = [field.name for field in parts.schema["s"].fields]
    head = pl.struct(**{name: found[name] if name in found else groups.field(name) for name in fields})
    stamp = pl.format("{} {} {} {}", groups.field("year"), groups.field("mon"), groups.field("day"), groups.field("clock"))
    dated = pl.coalesce(
        timeutil.epoch_to_utc(groups.field("epoch").str.replace(".", "", literal=True)), timeutil.dated_to_utc(stamp, "%Y %b %d %H:%M:%S", ctx.tz)
    )
    return parts.with_columns(s=pl.when(logread).then(head).otherwise(pl.col("s")), dated_ts=dated)


def _with_real_host(parts: pl.DataFrame, *envelopes: str, empty_host_envelopes: tuple[str, ...] = ()) -> pl.DataFrame:
    """The ``envelopes`` (struct columns of head groups) nulled where the host is missing or has no lower-case
    letter or digit, unless the program gives its pid or is one with rules of its own ("PC kernel:" is a host
    of capitals, "ERROR main:" a log level, "2024-12-04T10:00:00Z root: …" python logging). rsyslog's empty host
    in its traditional format (two spaces after the time, captured as ""), in ``empty_host_envelopes``, is no log
    level: it is an envelope, its host null. A host of no letter or digit at all is one its poster hid ("...",
    "***"), and so is a placeholder in angle brackets ("<hostname>", which no host name can hold): the envelope
    stands, its host null."""
    real = {}
    for name in envelopes:
        host, program = pl.col(name).struct.field("host"), pl.col(name).struct.field("program")
        plausible = (
            host.str.contains("(?:^$|[a-z0-9])" if name in empty_host_envelopes else "[a-z0-9]").fill_null(False)
            | pl.col(name).struct.field("pid").is_not_null() | program.is_in(list(_PROGRAM_RULES))
        )
        named = pl.when(pl.field("host").str.contains("[A-Za-z0-9]") & ~pl.field("host").str.starts_with("<")).then(pl.field("host"))
        real[name] = pl.when(plausible).then(pl.col(name).struct.with_fields(host=named))
    return parts.with_columns(**real)


_JOURNAL_JSON = pl.Struct(
    {
        "__REALTIME_TIMESTAMP": pl.String(),
        "_HOSTNAME": pl.String(),
        "SYSLOG_IDENTIFIER": pl.String(),
        "_COMM": pl.String(),
        "_PID": pl.String(),
        "SYSLOG_PID": pl.String(),
        "MESSAGE": pl.String(),
        "PRIORITY": pl.String(),
        "_TRANSPORT": pl.String(),
        "CONTAINER_ID_FULL": pl.String(),
        "CONTAINER_NAME": pl.String(),
    }
)


def _envelope_program(identifier: pl.Expr, comm: pl.Expr, transport: pl.Expr, container_id: pl.Expr, container: pl.Expr) -> pl.Expr:
    """The program of a journal entry: the kernel's, else its identifier (else the command that wrote it). An entry of Docker's or
    Podman's journald log driver (``container_id``: CONTAINER_ID_FULL) is a container's line that the runtime wrote for it: where
    no tag names it (the identifier left out, or the runtime's own: Podman's "conmon"), the container's name is its program."""
    runtime_named = identifier.is_null() | identifier.eq_missing(comm)
    return (
        pl.when(transport == "kernel").then(pl.lit("kernel"))
        .when(container_id.is_not_null() & container.is_not_null() & runtime_named).then(container)
        .otherwise(pl.coalesce(identifier, comm))
    )


def _envelope_pid(syslog_pid: pl.Expr, pid: pl.Expr, container_id: pl.Expr) -> pl.Expr:
    """The pid of a journal entry; a log driver's entry has the runtime's (_PID: dockerd's, conmon's), not the container's process'."""
    return pl.coalesce(syslog_pid, pl.when(container_id.is_null()).then(pid)).cast(pl.Int64, strict=False)


# journald writes a field holding control characters (an application's colours, a terminal's escapes) as an array of its
# bytes: `"MESSAGE":[27,91,51,49,109,…]`.
_HEX_BYTES = [f"{byte:02x}" for byte in range(256)]
_ANSI_ESCAPE = r"\x1b\[[0-9;?]*[A-Za-z]"
# UTF-8 spelled in hex pairs (RFC 3629's table): the bytes decoded to text only where they are UTF-8.
_CONT = "[89ab][0-9a-f]"
_UTF8_HEX = (
    rf"^(?:[0-7][0-9a-f]|(?:c[2-9a-f]|d[0-9a-f]){_CONT}|e0[ab][0-9a-f]{_CONT}|(?:e[1-9a-c]|e[ef]){_CONT}{_CONT}|ed[89][0-9a-f]{_CONT}"
    rf"|f0[9ab][0-9a-f]{_CONT}{_CONT}|f[1-3]{_CONT}{_CONT}{_CONT}|f48[0-9a-f]{_CONT}{_CONT})*$"
)


def bytes_text(array: pl.Expr) -> pl.Expr:
    """A journal field written as an array of bytes (JSON text, null where it is none) as the UTF-8 text it holds, its ANSI
    escape sequences dropped; null where the bytes are no UTF-8 or hold escapes alone."""
    # (Decoded where it is a whole array of numbers alone: a line cut short is no JSON.)
    whole = pl.when(array.str.contains(r"^\[[ 0-9,]*\]$")).then(array)
    hex_codes = whole.str.json_decode(pl.List(pl.Int64)).list.eval(pl.element().replace_strict(list(range(256)), _HEX_BYTES, default=None))
    utf8 = hex_codes.list.join("")
    utf8 = pl.when(utf8.str.contains(_UTF8_HEX)).then(utf8)
    text = utf8.str.decode("hex").cast(pl.String).str.replace_all(_ANSI_ESCAPE, "")
    # Escapes alone (a colour reset) are no text: the array stays.
    return pl.when(text.str.len_chars() > 0).then(text)


def frame_journal_json(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Frame ``journalctl -o json`` lines (one JSON object a line)."""
    # json_path_match, unlike json_decode, yields null for a truncated or non-JSON line instead of raising.
    decoded = lines.with_columns(
        j=pl.struct([pl.col("text").str.json_path_match(f"$.{field.name}").alias(field.name) for field in _JOURNAL_JSON.fields])
    )
    j = pl.col("j").struct
    driver = j.field("CONTAINER_ID_FULL")
    program = _envelope_program(j.field("SYSLOG_IDENTIFIER"), j.field("_COMM"), j.field("_TRANSPORT"), driver, j.field("CONTAINER_NAME"))
    ok = j.field("MESSAGE").is_not_null()
    return decoded.with_columns(
        ts=timeutil.epoch_to_utc(j.field("__REALTIME_TIMESTAMP")),
        ts_raw=j.field("__REALTIME_TIMESTAMP"),
        ts_quality=pl.when(j.field("__REALTIME_TIMESTAMP").is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("missing")),
        host=j.field("_HOSTNAME"),
        program=program,
        pid=_envelope_pid(j.field("SYSLOG_PID"), j.field("_PID"), driver),
        message=pl.coalesce(
            # (journalctl before 231 spaced its separators: '"MESSAGE" : [ …'.)
            bytes_text(pl.when(pl.col("text").str.contains_any(['"MESSAGE":[', '"MESSAGE" : ['])).then(j.field("MESSAGE"))),
            pl.when(ok).then(j.field("MESSAGE")).otherwise(pl.col("text")),
        ),
        severity=j.field("PRIORITY").replace_strict(_SEVERITY_BY_PRIORITY, default=None),
        format=pl.lit("journal_json"),
        log_driver=driver.is_not_null(),
    ).select(*FRAMED_SCHEMA, "log_driver", *file_column(lines))


def is_record_line(text: pl.Expr) -> pl.Expr:
    """Whether ``text`` is a line of a ``journalctl -o verbose`` or ``-o json-pretty`` record (its time or
    brace, or a field), for sniffing."""
    return text.str.contains(_RECORD_LINE)


def _is_record_field(text: pl.Expr) -> pl.Expr:
    # Most lines are not indented: the pattern is tried on those that are.
    indented = text.str.starts_with(" ") | text.str.starts_with("\t")
    return pl.when(indented).then(text).str.contains(_RECORD_FIELD).fill_null(False)


def is_export_field(text: pl.Expr, within: str | None) -> pl.Expr:
    """Whether ``text`` is a field of a ``journalctl -o export`` record ("NAME=value", or a binary value's name alone), in a
    file (``within`` tells the files, or the sniffed heads, apart) that holds a record's time (:data:`EXPORT_OPENING`)."""
    exported = text.str.starts_with(EXPORT_OPENING).any()
    exported = exported.over(within) if within else exported
    # (The patterns are tried on the lines of such files alone: string functions skip nulls.)
    in_export = pl.when(exported).then(text)
    return (in_export.str.contains(_EXPORT_FIELD) | in_export.str.contains(_EXPORT_BINARY_NAME)).fill_null(False)


def frame_journal_records(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Frame ``journalctl -o verbose``, ``-o json-pretty`` and ``-o export`` records: one row a record, at its first line (the
    time, the "{", the cursor), with the number of lines it holds in ``record_lines``; the lines outside records (journalctl's
    banner, a shell's prompt) are rows of their own."""
    within = within_file(lines)
    text = pl.col("text")
    header = text.str.extract_groups(_VERBOSE_HEADER).struct
    pretty = text.str.contains(_PRETTY_OPEN)
    # An export record opens with its cursor, or its time where the cursor was left out.
    after_cursor = text.shift(1).str.starts_with(_EXPORT_CURSOR)
    after_cursor = after_cursor.over(within) if within else after_cursor
    export_opening = text.str.starts_with(_EXPORT_CURSOR) | (text.str.starts_with(EXPORT_OPENING) & ~after_cursor.fill_null(False))
    is_header = header.field("stamp").is_not_null() | pretty | export_opening
    exported = text.str.starts_with(EXPORT_OPENING).any()
    exported = exported.over(within) if within else exported
    export_field = pl.when(exported).then(text).str.extract_groups(_EXPORT_FIELD).struct
    binary_name = pl.when(exported).then(text).str.contains(_EXPORT_BINARY_NAME).fill_null(False)
    # A binary value's lines follow its name, up to the next field.
    in_binary = pl.when(export_field.field("field").is_not_null()).then(pl.lit(False)).when(binary_name).then(pl.lit(True))
    in_binary = (in_binary.forward_fill().over(within) if within else in_binary.forward_fill()).fill_null(False) & ~binary_name
    # A line neither opening a record nor indented under it (a pager's or a shell's) ends the record; so does a line not an export
    # record's field in a file of those.
    closing = text.str.contains(_PRETTY_CLOSE)
    indented = text.str.starts_with(" ") | text.str.starts_with("\t")
    inside = indented | closing | export_field.field("field").is_not_null() | binary_name | in_binary
    opened = pl.when(is_header).then(pl.col("line")).when(~inside).then(pl.lit(-1))
    opened = opened.forward_fill().over(within) if within else opened.forward_fill()
    record = pl.when(opened >= 0).then(opened).otherwise(pl.col("line"))
    verbose_field = text.str.extract_groups(_VERBOSE_FIELD).struct
    pretty_field = text.str.extract_groups(_PRETTY_FIELD).struct
    # A JSON value read as JSON: a string unquoted and unescaped, an array of bytes as its text.
    json_value = pretty_field.field("value")
    json_value = pl.coalesce(
        bytes_text(pl.when(json_value.str.starts_with("[")).then(json_value)),
        pl.concat_str(pl.lit('{"v":'), json_value, pl.lit("}")).str.json_path_match("$.v"), json_value,
    )
    # A verbose value's further lines follow its field's line, indented past "FIELD=".
    name = pl.when((is_header & ~export_opening) | closing).then(pl.lit("")).otherwise(
        pl.coalesce(verbose_field.field("field"), pretty_field.field("field"), export_field.field("field"), pl.when(binary_name).then(text))
    )
    value = pl.coalesce(
        verbose_field.field("value"), json_value, export_field.field("value"),
        pl.when(in_binary).then(text.str.replace(_EXPORT_LENGTH, "")), text.str.strip_chars_start(" "),
    )
    rows = lines.with_columns(
        record=record, stamp=header.field("stamp"), zone=header.field("zone"),
        name=name.forward_fill().over(record),
        # (A binary value's name holds none of it.)
        value=pl.when(~binary_name).then(value),
    )
    fields = {
        wanted: pl.when((pl.col("name") == wanted).any()).then(pl.col("value").filter(pl.col("name") == wanted).str.join("\n"))
        for wanted in _RECORD_FIELDS
    }
    records = rows.group_by(*file_column(lines), "record", maintain_order=True).agg(
        pl.col("line", "text", "stamp", "zone").first(), record_lines=pl.len().cast(pl.Int32), **fields,
    )
    minutes = timeutil.zone_minutes(pl.col("zone"))
    stamped = pl.col("stamp").str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us")
    # The record's time at its zone; where that zone is not known, the time its sender gave (exact), else --tz.
    ts = pl.when(minutes.is_not_null()).then(_at_offset(stamped, minutes))
    ts = pl.coalesce(
        ts, timeutil.epoch_to_utc(pl.col("__REALTIME_TIMESTAMP")), timeutil.epoch_to_utc(pl.col("_SOURCE_REALTIME_TIMESTAMP")),
        timeutil.naive_to_utc(stamped, ctx.tz),
    )
    driver = pl.col("CONTAINER_ID_FULL")
    program = _envelope_program(pl.col("SYSLOG_IDENTIFIER"), pl.col("_COMM"), pl.col("_TRANSPORT"), driver, pl.col("CONTAINER_NAME"))
    verbose, pretty = pl.col("stamp").is_not_null(), pl.col("text").str.contains(_PRETTY_OPEN)
    export = pl.col("text").str.starts_with(_EXPORT_CURSOR) | pl.col("text").str.starts_with(EXPORT_OPENING)
    return records.with_columns(
        ts=ts,
        ts_raw=pl.when(verbose).then(pl.format("{} {}", "stamp", "zone")).otherwise(pl.col("__REALTIME_TIMESTAMP")),
        ts_quality=pl.when(ts.is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("missing")),
        host=pl.col("_HOSTNAME"),
        program=program,
        pid=_envelope_pid(pl.col("SYSLOG_PID"), pl.col("_PID"), driver),
        message=pl.coalesce("MESSAGE", "text"),
        severity=pl.col("PRIORITY").replace_strict(_SEVERITY_BY_PRIORITY, default=None),
        format=pl.when(verbose).then(pl.lit("journal_verbose")).when(pretty).then(pl.lit("journal_json"))
        .when(export).then(pl.lit("journal_export")),
        # The unit a message is about (systemd's about a unit it ran), else the one that wrote it.
        unit=pl.coalesce("USER_UNIT", "UNIT", "_SYSTEMD_USER_UNIT", "_SYSTEMD_UNIT"),
        cgroup=pl.col("_SYSTEMD_CGROUP"),
        log_driver=driver.is_not_null(),
        driver_container_id=driver,
        driver_container=pl.col("CONTAINER_NAME"),
    ).select(*FRAMED_SCHEMA, "record_lines", "unit", "cgroup", "log_driver", *_RECORD_CONTAINER, *file_column(lines))


def frame(lines: pl.DataFrame, ctx: ParseContext, journal_json: pl.Expr) -> pl.DataFrame:
    """Frame the lines of each file as ``journalctl -o json`` where most of its lines are (``journal_json``
    tells of a line), as ``-o verbose`` / ``-o json-pretty`` records where most are those, else as text: a file is written one
    way or the other, and its neighbours in a batch may be written another way.

    The rows carry ``record_lines`` (the lines each frames: more than 1 for a record) and, from a record, the
    ``unit`` and ``cgroup`` of the process that wrote it, and ``log_driver``: whether the entry is a container's line that Docker's
    or Podman's journald log driver wrote (its PRIORITY then tells the stream, stdout or stderr); :func:`dispatch` uses them."""
    within = within_file(lines)
    share = journal_json.mean().over(within) if within else journal_json.mean()
    # A file of records is nearly all fields: 20 to 30 a record.
    field = _is_record_field(pl.col("text"))
    if lines.select(pl.col("text").str.starts_with(EXPORT_OPENING).any()).item():
        field = field | is_export_field(pl.col("text"), within)
    record_share = field.mean().over(within) if within else field.mean()

    def one_line_each(framed: pl.DataFrame) -> pl.DataFrame:
        return framed.with_columns(
            record_lines=pl.lit(1, pl.Int32), unit=pl.lit(None, pl.String), cgroup=pl.lit(None, pl.String),
            **dict.fromkeys(_RECORD_CONTAINER, pl.lit(None, pl.String)),
            log_driver=pl.col("log_driver") if "log_driver" in framed.columns else pl.lit(False),
        )

    def text_or_records(part: pl.DataFrame) -> pl.DataFrame:
        # (Not split_rows: a file of records has fewer rows framed than lines.)
        flags = part.select((record_share > 0.5).fill_null(False)).to_series()
        if not flags.any():
            return one_line_each(frame_text(part, ctx))
        if flags.all():
            return frame_journal_records(part, ctx)
        parts = [frame_journal_records(part.filter(flags), ctx), one_line_each(frame_text(part.filter(~flags), ctx))]
        return pl.concat(parts, how="diagonal_relaxed").sort("line")

    if not lines.select((share > 0.5).any()).item():
        return text_or_records(lines)
    flags = lines.select((share > 0.5).fill_null(False)).to_series()
    json = one_line_each(frame_journal_json(lines.filter(flags), ctx))
    return pl.concat([json, text_or_records(lines.filter(~flags))], how="diagonal_relaxed").sort("line") if (~flags).any() else json


# The container a log driver's record names (its CONTAINER_ID_FULL and CONTAINER_NAME), carried from framing to its event.
_RECORD_CONTAINER = ("driver_container_id", "driver_container")
_DRIVER_COLUMNS = ("container_id", "container", "pod", "namespace", "pod_uid")
# Docker's and Podman's journald log driver name a container's lines in fields of the entry (read from a journal file too).
LOG_DRIVER_FIELDS = ("CONTAINER_ID_FULL", "CONTAINER_NAME")


# Kubernetes' dockershim names a pod's container "k8s_<container>_<pod>_<namespace>_<pod uid>_<attempt>": a log driver's
# CONTAINER_NAME on a node that ran pods on Docker.
DOCKERSHIM_NAME = (
    r"^k8s_(?<container>[a-z0-9-]+)_(?<pod>[a-z0-9.-]+)_(?<namespace>[a-z0-9-]+)_(?<pod_uid>[0-9a-f-]{32,36})_[0-9]+$"
)


def driver_container(name: pl.Expr) -> dict[str, pl.Expr]:
    """The ``container``, ``pod``, ``namespace`` and ``pod_uid`` a log driver's CONTAINER_NAME tells (:data:`DOCKERSHIM_NAME`;
    any other name is the container's alone)."""
    k8s = pl.when(name.str.starts_with("k8s_")).then(name).str.extract_groups(DOCKERSHIM_NAME).struct
    return {
        "container": pl.coalesce(k8s.field("container"), name), "pod": k8s.field("pod"), "namespace": k8s.field("namespace"),
        "pod_uid": k8s.field("pod_uid"),
    }


def with_log_driver_containers(events: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """``events`` with the container (and a pod's container, its pod) that their ``journalctl -o json`` entry's log-driver fields
    name, where the message named none (an entry is one line of ``lines``, and the line of its event)."""
    text = pl.col("text")
    named = lines.filter(text.str.starts_with("{") & text.str.contains('"CONTAINER_', literal=True))
    if named.is_empty() or events.is_empty():
        return events
    entry = {"container_id": text.str.json_path_match("$.CONTAINER_ID_FULL"), **driver_container(text.str.json_path_match("$.CONTAINER_NAME"))}
    by_line = named.select("line", **{f"{column}_entry": value for column, value in entry.items()})
    filled = events.join(by_line, on="line", how="left").with_columns(
        pl.coalesce(*([column] if column in events.columns else []), f"{column}_entry").alias(column) for column in entry
    )
    # A 12-character id the line's tag gave (Docker's default tag, "{{.ID}}") is the entry's full id cut short.
    full = pl.col("container_id_entry")
    filled = filled.with_columns(container_id=pl.when(full.str.starts_with(pl.col("container_id"))).then(full).otherwise(pl.col("container_id")))
    return filled.drop(f"{column}_entry" for column in entry)


def as_syslog(events: pl.DataFrame) -> pl.DataFrame:
    """:func:`dispatch`'s ``events`` with the ``source`` it left null (a program without rules of its own) set to
    ``syslog``: for a source whose files are not syslog's but whose lines are (a binary journal, a fabric manager's log)."""
    if events.width == 0:
        return events
    source = pl.col("source").fill_null("syslog") if "source" in events.columns else pl.lit("syslog")
    return events.with_columns(source=source)


def dispatch(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Apply each registered program's rules to its lines, and the applications' rules to the programs
    they recognise; other programs' lines stay ``kind=log`` (their ``source`` is left null, so the
    driver labels them with the file's source).

    Each program's rules get the framed columns (``line, text, ts, ts_raw, ts_quality,
    host, program, pid, message, severity, format``, and ``boot_seconds`` of text) and return event rows;
    the record columns of :func:`frame` are applied to the events after.
    """
    facilities = None
    if "facility" in framed.columns:
        if framed.select(pl.col("facility").is_not_null().any()).item():
            facilities = framed.filter(pl.col("facility").is_not_null()).select("line", "facility")
        framed = framed.drop("facility")
    records = None
    if "record_lines" in framed.columns:
        if framed.select((pl.col("record_lines") > 1).any()).item():
            records = framed.select("line", "pid", "record_lines", "unit", "cgroup", *_RECORD_CONTAINER)
        framed = framed.drop("record_lines", "unit", "cgroup", *_RECORD_CONTAINER)
    if "log_driver" not in framed.columns:
        framed = framed.with_columns(log_driver=pl.lit(False))
    # A program started by its path may tag its lines with it ("/usr/bin/podman[109389]:"): its rules are its name's.
    if framed.select(pl.col("program").str.contains("/", literal=True).any()).item():
        named = pl.col("program").str.extract(r"/([^/]+)$", 1)
        framed = framed.with_columns(program=pl.when(named.is_in(list(_PROGRAM_RULES))).then(named).otherwise(pl.col("program")))
    framed = _wrapped_runtimes(_programs_of_units(framed))
    parts = []
    for program, (source, rules) in _PROGRAM_RULES.items():
        mine = framed.filter(pl.col("program") == program)
        if mine.height:
            parts.append(rules(mine.drop("log_driver"), ctx).with_columns(source=pl.lit(source, pl.String)))
    rest = framed.filter(pl.col("program").is_null() | ~pl.col("program").is_in(list(_PROGRAM_RULES)))
    for source, rules, recognises in _APPLICATIONS:
        claimed = (recognises.fill_null(False) | pl.col("program").is_in(_JOB_PROGRAMS)).any().over([*file_column(rest), "host", "program", "pid"])
        applications = rest.filter(claimed)
        if applications.height:
            # What the rules made nothing of stays the file's, as other programs' lines do.
            events = rules(applications.drop("log_driver"), ctx)
            parts.append(events.with_columns(source=pl.when(pl.col("kind") != "log").then(pl.lit(source))))
            rest = rest.filter(~claimed)
    if rest.height:
        program, message = pl.col("program"), pl.col("message")
        # rsyslog's "message repeated 3 times: [ …]" (syslogd's and rsyslog 5's "last message repeated 4 times") stands for that
        # many more of the line before it.
        repeated = pl.when(message.str.contains("message repeated ", literal=True)).then(message).str.extract(_REPEATED, 1)
        rest = _repeats_hosted(rest, repeated)
        # Docker's syslog logging driver tags a container's lines "docker/<its 12-character id>"; its journald driver
        # (Home Assistant OS's) by that id alone ("7588f50d8707[471]:", the default tag "{{.ID}}").
        tagged = program.str.strip_prefix("docker/")
        container_id = pl.when(tagged.str.len_chars().is_in([12, 64])).then(tagged)
        # A program without rules may still name its line's level: where the envelope gave none, and where the journal's
        # PRIORITY is the info that journald gives every line a service writes to its stdout or stderr (SyslogLevel=), whatever
        # the line says ("level=error", "E0101 …", '{"level":"warn",…'); and where it is the error or info that Docker's and Podman's
        # journald log drivers give every line a container writes to its stderr or stdout (moby#23645, podman#20728). A syslog
        # line's priority is such a default as often (Docker's syslog driver: daemon.info for stdout, daemon.err for stderr; rsyslog
        # forwarding the journal's): the line's own level goes first there too.
        journal_default = pl.col("format").is_in(["syslog", "syslog_iso"]) | (
            pl.col("format").is_in(["journal_json", "journal_verbose", "journal_export"])
            & ((pl.col("severity") == "info") | (pl.col("log_driver") & (pl.col("severity") == "error")))
        )
        own_level = pl.coalesce(message_level(message), application_level(message))
        parts.append(program_events(
            rest,
            severity=pl.when(pl.col("severity").is_null() | journal_default).then(pl.coalesce(own_level, pl.col("severity")))
            .otherwise(pl.col("severity")),
            container_id=pl.when(container_id.str.contains("^[0-9a-f]+$")).then(container_id),
            attrs=attrs_json({"repeated": repeated.cast(pl.Int64, strict=False)}),
        ))
    events = pl.concat(parts, how="diagonal_relaxed").sort("line") if parts else pl.DataFrame()
    events = _detector_status(events) if events.height else events
    events = _with_records(events, records) if records is not None and events.height else events
    return _with_facilities(events, facilities) if facilities is not None and events.height else events


def _with_facilities(events: pl.DataFrame, facilities: pl.DataFrame) -> pl.DataFrame:
    """``events`` with the facility of the priority their line opened with (``facilities``: by line) in attrs."""
    if "attrs" not in events.columns:
        events = events.with_columns(attrs=pl.lit(None, pl.String))
    joined = events.join(facilities, on="line", how="left")
    return joined.with_columns(attrs=joined_json(pl.col("attrs"), attrs_json({"facility": pl.col("facility")}))).drop("facility")


_REPEATED = r"^(?:last )?message repeated ([0-9]+) times"


def _repeats_hosted(rest: pl.DataFrame, repeated: pl.Expr) -> pl.DataFrame:
    """``rest`` with the host of each repeat line (``repeated`` not null) that has none taken from the line it repeats, the
    same program's line before it: rsyslog 5 wrote those lines with an empty host ("Jan  5 06:43:16  ntop[2298]: last
    message repeated 4 times")."""
    hostless = repeated.is_not_null() & pl.col("host").is_null()
    if not rest.select(hostless.any()).item():
        return rest
    within = file_column(rest)

    def before(column: str) -> pl.Expr:
        shifted = pl.col(column).shift(1)
        return shifted.over(within) if within else shifted

    same_program = before("program").eq_missing(pl.col("program")) & before("pid").eq_missing(pl.col("pid"))
    hosted = rest.with_columns(host=pl.when(hostless & same_program).then(before("host")).otherwise(pl.col("host")))
    # The lines that go on a repeat line's message took its empty host with its frame: they take the one found for it.
    record = (pl.col("ts_quality") != "inherited").cum_sum()
    went_on = (pl.col("ts_quality") == "inherited") & pl.col("host").is_null()
    return hosted.with_columns(host=pl.when(went_on).then(pl.col("host").first().over(record)).otherwise(pl.col("host")))


def _wrapped_runtimes(framed: pl.DataFrame) -> pl.DataFrame:
    """``framed`` with the lines of a shell script that runs a container runtime given the runtime's rules: a node's
    wrapper ("start-containerd.sh[1562]: time="…" level=info msg="TaskExit event &TaskExit{…}"", containerd#11682) execs the
    runtime, whose lines keep the script's name as their identifier. The runtime is the one its wordings name
    (:data:`RUNTIME_WORDINGS`), in the lines of that script's process."""
    program = pl.col("program")
    script = program.str.ends_with(".sh") & ~program.is_in(list(_PROGRAM_RULES))
    if not framed.select(script.any()).item():
        return framed
    message = pl.when(script).then(pl.col("message"))
    process = [*file_column(framed), "host", "program", "pid"]
    named = {runtime: message.str.contains_any(list(wordings)).any().over(process) for runtime, wordings in RUNTIME_WORDINGS.items()}
    runtime = (
        pl.when(named["dockerd"])
        .then(pl.lit("dockerd"))
        .when(named["crio"])
        .then(pl.lit("crio"))
        .when(named["containerd"])
        .then(pl.lit("containerd"))
    )
    return framed.with_columns(program=pl.coalesce(pl.when(script).then(runtime), program))


def _programs_of_units(framed: pl.DataFrame) -> pl.DataFrame:
    """``framed`` with the lines ``journalctl -o with-unit`` names by their unit given the rules of its program: it prints
    the unit that wrote a line (``_SYSTEMD_UNIT``, ``/_SYSTEMD_USER_UNIT`` after it) where the others print its identifier,
    so "kubelet.service[2480]:" is kubelet's line and "init.scope[1]:" (a user manager's ".../init.scope[2122]:") systemd's.
    A snap's service is "snap.<snap>.<app>.service", whose lines snapd tags "<snap>.<app>" (its SyslogIdentifier=): that is
    their program, as in the other outputs ("snap.microk8s.daemon-kubelite.service[123]:" is "microk8s.daemon-kubelite")."""
    program = pl.col("program")
    units = program.str.ends_with(".service") | program.str.ends_with("init.scope")
    if not framed.select(units.any()).item():
        return framed
    service = program.str.strip_suffix(".service")
    snap = pl.when(program.str.starts_with("snap.") & program.str.ends_with(".service")).then(service.str.strip_prefix("snap."))
    manager = (program == "init.scope") | program.str.ends_with("/init.scope")
    return framed.with_columns(
        program=pl.when(manager).then(pl.lit("systemd")).when(snap.is_not_null()).then(snap)
        .when(service.is_in(list(_PROGRAM_RULES))).then(service).otherwise(program)
    )


def _with_records(events: pl.DataFrame, records: pl.DataFrame) -> pl.DataFrame:
    """``events`` of ``journalctl -o verbose`` / ``-o json-pretty`` records (:func:`frame_journal_records`): each covers the lines of
    the records it was made of, and an event about the process that wrote its record takes that process's cgroup,
    and its unit in attrs where the rules left none; the event of a log driver's record, the container it names."""
    bounds = records.with_columns(stop=pl.col("record_lines").cum_sum()).with_columns(
        first=pl.int_range(pl.len()), start=pl.col("stop") - pl.col("record_lines")
    )
    events = events.with_columns(
        *(pl.lit(None, pl.String).alias(name) for name in ("cgroup", "attrs", *_DRIVER_COLUMNS) if name not in events.columns)
    )
    joined = events.join(
        bounds.select("line", "first", "start", *_RECORD_CONTAINER, writer="pid", writer_unit="unit", writer_cgroup="cgroup"), on="line", how="left"
    ).with_columns(last=pl.col("first") + pl.col("n_lines") - 1)
    joined = joined.join(bounds.select(last="first", last_stop="stop"), on="last", how="left")
    own = pl.col("pid").eq_missing(pl.col("writer")) & pl.col("writer").is_not_null()
    return joined.with_columns(
        n_lines=pl.when((pl.col("n_lines") > 0) & pl.col("last_stop").is_not_null())
        .then((pl.col("last_stop") - pl.col("start")).cast(pl.Int32)).otherwise(pl.col("n_lines")),
        cgroup=pl.coalesce("cgroup", pl.when(own).then(pl.col("writer_cgroup"))),
        attrs=pl.coalesce("attrs", attrs_json({"unit": pl.col("writer_unit")})),
        container_id=pl.coalesce("container_id", "driver_container_id"),
        **{column: pl.coalesce(column, named) for column, named in driver_container(pl.col("driver_container")).items()},
    ).drop("first", "start", "writer", "writer_unit", "writer_cgroup", "last", "last_stop", *_RECORD_CONTAINER)


def program_events(framed: pl.DataFrame, victim_pid: pl.Expr | None = None, **facts: pl.Expr) -> pl.DataFrame:
    """One event a framed line: the envelope's time, host and format, and ``facts`` (a ``kind=log`` line of its
    program by default), for the rules of programs that read one line at a time.

    The envelope's pid is the program's own: a line about another process, a unit or a cgroup (a ``process``
    other than the program) does not keep it, and a line that names the pid it acted on takes ``victim_pid``.
    The lines without an envelope under a line (a multi-line message: systemd-coredump's stack trace) are its
    event's, as its first line says.
    """
    columns = {"kind": pl.lit("log"), "severity": pl.col("severity"), "process": pl.col("program"), **facts}
    own_pid = pl.when(pl.col("process").eq_missing(pl.col("program"))).then(pl.col("pid"))
    envelope = ["ts_raw", "host", "program", "envelope_pid", *file_column(framed)]
    # Seconds since boot (journalctl -o short-monotonic) let the correlation stage place a line without a time.
    boot = [name for name in ("boot_seconds",) if name in framed.columns]
    events = framed.select(
        "line", "ts", "ts_raw", "ts_quality", "host", "message", "format", "pid", "program", *boot, *file_column(framed), n_lines=pl.lit(1, pl.Int32),
        victim_pid=pl.lit(None, pl.Int64) if victim_pid is None else victim_pid, envelope_pid="pid", **columns,
    ).with_columns(pid=pl.coalesce("victim_pid", own_pid)).drop("victim_pid")
    # A line without an envelope carries the one above it (blank lines, dropped, may lie between).
    same = pl.all_horizontal(pl.col(name).eq_missing(pl.col(name).shift(1)) for name in envelope)
    # (A framed line without a time of its own, a bare one, has no quality yet: it opens a record.)
    continued = pl.col("ts_quality").eq_missing("inherited") & same
    if events.select(continued.any()).item():
        events = events.group_by((~continued).cum_sum().alias("record"), maintain_order=True).agg(
            pl.exclude("record", "message", "n_lines").first(), message=pl.col("message").str.join("\n"),
            n_lines=pl.len().cast(pl.Int32),
        )
    return events.drop("record", "program", "envelope_pid", *file_column(framed), strict=False)
