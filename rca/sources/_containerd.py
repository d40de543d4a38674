"""The container runtimes' lines about the containers they run (containerd, dockerd, CRI-O and conmon): their view of
an OOM kill or an exit.

The kubelet learns that a container was OOM-killed from containerd, which logs the events
it gets from the shim before the kubelet acts on them:

* ``msg="TaskOOM event &TaskOOM{ContainerID:<id>,XXX_unrecognized:[],}"`` (1.4–1.6) or
  ``msg="TaskOOM event container_id:\\"<id>\\""`` (1.7+) → ``oom_kill`` in that container;
* ``msg="TaskExit event &TaskExit{ContainerID:<id>,ID:<id>,Pid:<pid>,ExitStatus:137,…}"`` or
  ``msg="TaskExit event in podsandbox handler container_id:\\"<id>\\" id:\\"<id>\\" pid:<pid> exit_status:137 …"``
  → the container's process and exit status: ``process_killed`` for 137 (SIGKILL), but not from the
  sandbox's handler (the pod's pause process, SIGKILLed whenever a pod is torn down); 2.x's
  ``TaskExit event in podsandbox handler container_id:… id:… pid:131544 exited_at:{…}`` leaves out a zero status.

dockerd writes the same logrus lines (``level=error msg="…"``) and is registered with the same rules, for the level;
its libcontainerd client logs the events it gets from containerd with their fields (logrus sorts them by name):
``msg=event ExitStatus=137 ExitedAt=… Pid=4138572 ProcessID=<id> containerID=<id> module=libcontainerd namespace=moby
topic=/tasks/exit`` is the container's exit (an exec'd process's when ``ProcessID`` is not the container), ``topic=/tasks/oom``
its OOM event. containerd's ``Received exit event &TaskExit{…}`` / ``received exit event container_id:…`` lines repeat a
TaskExit (often at debug level, where the TaskExit line may be missing): they give the container's process and exit status,
and are not a kill of their own.

CRI-O (``crio``) logs with logrus too, its level kept; its ``Stopping container <id> with stop signal timed out.
Killing`` names the container it SIGKILLs at a stop's timeout (a teardown, not a kill of a running job). conmon, its
per-container monitor, tells of the container's exit when it is not 0: ``conmon f1ee30489db2a0242ef1 <ninfo>: container
258213 exited with status 139`` → the container's pid and exit status (128 + the signal: 139 a SIGSEGV, 137 a SIGKILL →
``process_killed``), and of its OOM kill: ``conmon f1ee30489db2a0242ef1 <ninfo>: OOM received`` → ``oom_kill`` (its
``OOM event received`` just before, where it watches a cgroup v1 eventfd, is the same kill: not counted); the id there is
cut to 20 characters, kept in attrs (on its other lines too, which keep conmon's pid; their tag, ``<ninfo>``, ``<nwarn>``,
``<error>`` …, is their level). dockerd's ``Container <id> failed to exit
within 30 seconds of signal 15 - using the force`` (since Docker 23 ``Container failed to exit within 10s of signal 15 - using
the force`` container=<id>) is the same SIGKILL at a stop's timeout (its ``Container <short id>
failed to exit within 10 seconds of kill - trying direct SIGKILL`` the next try, the 12-character id kept in attrs).

Podman has no daemon: each ``podman`` command writes the events of the containers it acts on to the journal
(its default events backend), one line each, opened by the moment in Go's ``time.Time`` layout:
``podman[1265274]: 2025-12-21 18:01:34.529303815 -0500 EST m=+11.707569919 container died <id> (image=…, name=actual,
PODMAN_SYSTEMD_UNIT=podman-actual.service)``. ``died`` is the container's exit (the line holds no exit status: the
unit's ``Main process exited`` line beside it has it); ``create``, ``init``, ``start``, ``remove`` … name the container
podman acts on. ``docker events`` (and ``podman events``) saved to a file give the same lines bare, Docker's in RFC 3339
(``2017-02-16T10:04:37.854997858+01:00 container die <id> (exitCode=137, image=…, name=…)``) or as JSON objects
(``--format '{{json .}}'``, the API's stream). Docker's ``oom`` is the container's OOM kill (``oom_kill``), its ``die``
the exit with its code (137: ``process_killed``), its ``kill`` the signal it sends (kept in attrs); a pod's container
carries the kubelet's labels (``io.kubernetes.pod.name=…``), which name its pod, namespace, uid and container. Either
way the id and the ``name=`` (the container's name) are kept, the event and image in attrs.

The runtimes' lines about a container a CRI call acts on (CRI-O's ``Stopping container: <id> (timeout: 30s)``,
``Started container`` … ``containerID=<id>``; containerd's ``StopContainer for \\"<id>\\"``) name it: container_id.

Registered with :mod:`rca.sources._syslog` as the rules of programs ``containerd``, ``dockerd``, ``crio``,
``conmon``, MicroK8s' ``microk8s.daemon-containerd``, ``podman``, ``docker`` (dockerd before 1.12), ``dockerd-current`` (RHEL 7's
dockerd) and ``cri-dockerd``.
containerd's lines are logfmt (``time="…" level=… msg="…"``), or JSON with ``[debug] format = "json"``
(``{"level":"info","msg":"TaskOOM event …","time":"…"}``); the level is kept, the envelope's time stands. A runtime's own
log file read bare (k3s' containerd.log, ``journalctl -u containerd -o cat``, dockerd's or CRI-O's log) has no envelope: its
lines come here with the logrus stamp as their time and the runtime its wordings name as their program
(:data:`rca.sources._syslog.LOGRUS_LINE`).
"""

from __future__ import annotations

import re
import signal

import polars as pl

from rca.sources import _syslog
from rca.sources._base import ParseContext, attrs_json, file_column

_ID_LENGTH = 64
_ID = rf"[0-9a-f]{{{_ID_LENGTH}}}"
# (On a terminal logrus writes the message bare after the level and time, "INFO[…] TaskOOM event container_id:"<id>"", where a
# file has it quoted, its quotes escaped.)
_TASK_EVENT = (
    r"(?:(?:msg=|\"msg\":)\"|\] )(?:Task(?<event>OOM|Exit) event (?<sandbox>in podsandbox handler )?|(?<repeat>[Rr]eceived exit event ))"
    r".*?(?:ContainerID:|container_id:\\?\")(?<container_id>" + _ID + ")"
    r"(?:.*?(?:Pid:|pid:)(?<pid>[0-9]+))?(?:.*?(?:ExitStatus:|exit_status:)(?<status>[0-9]+))?"
)
_DOCKERD_EVENT = (
    r"(?:msg=event |\] event +)(?:ExitStatus=(?<status>[0-9]+) .*?Pid=(?<pid>[0-9]+) ProcessID=(?<process_id>\S+) )?"
    r"containerID=(?<container_id>" + _ID + r") .*?topic=/tasks/(?<event>exit|oom)\b"
)
_CRIO_CONMON = (
    r"^conmon (?<short_id>[0-9a-f]{12,64}) <[a-z]+>: (?:container (?<pid>[0-9]+) exited with status (?<status>[0-9]+)|(?<oom>OOM received)$)"
    r"|msg=\"Stopping container (?<stopped>" + _ID + r") with stop signal timed out\. Killing"
    r"|msg=\"Container (?<forced>[0-9a-f]{12,64}) failed to exit within [0-9]+ seconds of (?:signal [0-9]+ - using the force|kill - trying direct SIGKILL)"
    r"|msg=\"Container failed to exit within [0-9]+s of signal [0-9]+ - using the force\" .*?\bcontainer=(?<forced_field>" + _ID + ")"
)
# The container a runtime's CRI call acts on: CRI-O's "Stopping container: <id> (timeout: 30s)", "Created container <id>: …",
# "Started container" … containerID=<id>; containerd's CRI calls, each named by its method and the container's id
# ("StopContainer for \"<id>\"", "ContainerStatus for \"<id>\" failed", a probe's "ExecSync for \"<id>\" with command […]"),
# "Container to stop \"<id>\" …",
# "CreateContainer within sandbox \"<sandbox>\" for &ContainerMetadata{Name:<name>,Attempt:<n>,} returns container id \"<id>\""
# (its name, and the how-manieth restart; "\u0026" for "&" in JSON); dockerd's "ignoring event" … container=<id>; podman's
# "Cleaning up container <id>", "Container <id> storage is already unmounted". containerd quotes the id it names in a
# message ("Failed to pipe stdout of container \"<id>\""), and names a task by its container's id in an "id=" field ("shim
# reaped" id=<id>); dockerd names it in the API call that failed ("Handler for POST /v1.38/containers/<id>/start returned
# error: …") or opens its message with it ("<id> cleanup: failed to delete container from containerd"); dockerd and CRI-O name
# it after what of the container failed ("failed removing container name resolution for <id>", "Failed to update container
# state for <id>"); containerd repeats a task event it failed to handle ("failed to handle container TaskExit event
# &TaskExit{ContainerID:<id>,…}", "Failed to handle backOff event container_id:\"<id>\" …"): its own error about that container,
# not the container's exit. A pod's sandbox (its pause container) is named as such: CRI-O's "Stopping pod sandbox: <id>",
# containerd's "StopPodSandbox for \"<id>\"", "PodSandboxStatus for \"<id>\" failed", "PortForward for \"<id>\" port [8080]".
_NAMED_CONTAINER = (
    r"msg=\"(?:(?:Stopping|Removing|Starting|Created|Removed|Stopped) container:? "
    r"|(?:[A-Z][A-Za-z]*Container[A-Za-z]*|ExecSync|Exec|Attach) for \\\"|Container to stop \\\")"
    r"(?<id>" + _ID + r")|\b(?:container(?:ID)?|id)=(?<field>" + _ID + r")\b|\b[Cc]ontainer (?:\\\")?(?<plain>" + _ID + r")\b"
    r"|/containers/(?<api>" + _ID + r")/|msg=\"(?<lead>" + _ID + r") |\b[Cc]ontainer (?:[a-z]+ ){1,3}for (?<part>" + _ID + r")\b"
    r"|\bevent (?:&Task[A-Za-z]+\{ContainerID:|container_id:\\\")(?<handled>" + _ID + ")"
    r"|msg=\"(?:(?:Stopping|Stopped|Removing|Removed) pod sandbox:? |(?:[A-Z][A-Za-z]*PodSandbox[A-Za-z]*|PortForward) for \\\")"
    r"(?<sandbox>" + _ID + ")"
)
_CREATED_CONTAINER = r"ContainerMetadata\{Name:(?<name>[^,}]+),Attempt:(?<attempt>[0-9]+),\} returns container id \\\"(?<created>" + _ID + ")"
# CRI-O names a container it acts on by its pod too ("<namespace>/<pod>/<container>"): "Creating container: default/x/y",
# "Created container <id>: …", "Started container" … description=…; "Got pod network &{Name:<pod> Namespace:<ns> ID:<sandbox>
# UID:<pod uid> …}" names the pod whose network it sets up, "Running pod sandbox: <ns>/<pod>/POD" and "Ran pod sandbox <id> with
# infra container: <ns>/<pod>/POD" the pod whose sandbox it runs.
_DNS_LABEL = r"[a-z0-9][-a-z0-9.]*"
# A pod's uid: RFC 4122, or a static pod's 32 hex digits (the kubelet's hash of its manifest: kube-apiserver, etcd, a node's
# own GPU agent run from a manifest).
_POD_UID = r"(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})"
_CRIO_POD = (
    r"(?:msg=\"(?:Creating|Created|Removed|Stopped) container:? (?:" + _ID + r": )?|\bdescription=)"
    r"(?<namespace>" + _DNS_LABEL + r")/(?<pod>" + _DNS_LABEL + r")/(?<container>" + _DNS_LABEL + r")"
    r"|Got pod network &\{Name:(?<network_pod>" + _DNS_LABEL + r") Namespace:(?<network_namespace>" + _DNS_LABEL + r") ID:[0-9a-f]+"
    r" UID:(?<pod_uid>" + _POD_UID + ")"
    r"|msg=\"(?:Running pod sandbox: |Ran pod sandbox " + _ID + r" with infra container: )"
    r"(?<sandbox_namespace>" + _DNS_LABEL + r")/(?<sandbox_pod>" + _DNS_LABEL + r")/POD\b"
)
# A CRI call names the pod it acts on: containerd's "RunPodSandbox for &PodSandboxMetadata{Name:<pod>,Uid:<uid>,Namespace:<ns>,
# Attempt:<n>,}"; dockershim and CRI-O name a container "k8s_<container>_<pod>_<namespace>_<pod uid>_<attempt>" (its pod's
# sandbox "k8s_POD_…": no container of the pod's spec).
_CRI_POD = (
    r"PodSandboxMetadata\{Name:(?<sandbox_pod>" + _DNS_LABEL + r"),Uid:(?<sandbox_uid>[0-9a-f-]+),Namespace:(?<sandbox_namespace>" + _DNS_LABEL + "),"
    r"|\bk8s_(?<container>[^_\s]+)_(?<pod>" + _DNS_LABEL + r")_(?<namespace>" + _DNS_LABEL + r")_(?<pod_uid>[0-9a-f-]{32,36})_[0-9]+\b"
)
# The kubelet's log paths name the pod a container belongs to: "/var/log/pods/<namespace>_<pod>_<pod uid>/<container>/<restart>.log"
# (containerd's "Finish redirecting stream \"stdout\" to log file \"…\"", "Getting EOF from stream …") and its link
# "/var/log/containers/<pod>_<namespace>_<container>-<container id>.log". (Neither a namespace nor a pod's name holds "_".)
# A pod's own directory "/var/lib/kubelet/pods/<pod uid>/" (a volume the runtime mounts into a container) names its uid alone.
_LOG_PATH = (
    r"/var/log/pods/(?<namespace>" + _DNS_LABEL + r")_(?<pod>" + _DNS_LABEL + r")_(?<pod_uid>" + _POD_UID + ")"
    r"/(?<container>" + _DNS_LABEL + r")/[0-9]+\.log"
    r"|/var/log/containers/(?<link_pod>" + _DNS_LABEL + r")_(?<link_namespace>" + _DNS_LABEL + r")_(?<link_container>" + _DNS_LABEL + r")"
    r"-(?<link_id>" + _ID + r")\.log"
    r"|/var/lib/kubelet/pods/(?<volume_uid>" + _POD_UID + ")/"
)
# A container's event as Podman and Docker tell it: "<time> container <event> <id> (<attribute>=<value>, …)". Podman's time is in
# Go's layout (in the journal with its monotonic reading "m=+11.7" when the process that made the event writes it), Docker's
# in RFC 3339 (`docker events` saved to a file; an exec's command or a health status after its event and a colon; before
# Docker 1.10 "<time> <id>: (from <image>) <event>"). Docker sorts the attributes by name (a container's labels among them),
# so each is looked for on its own.
_CONTAINER_EVENT = (
    rf"^(?:{_syslog.PODMAN_EVENT_TIME} \S+ (?:m=[+-][0-9.]+ )?|{_syslog.DOCKER_EVENT_TIME} )"
    r"(?:container (?<event>[a-z_]+)(?::? (?<detail>[^\n]*?))? (?<id>[0-9a-f]{12,64})(?: \((?<attributes>.*)|>)?$"
    r"|(?<old_id>[0-9a-f]{12,64}): \(from (?<old_image>[^)]*)\) (?<old_event>[a-z_]+)$)"
)
_SIGNAL_NAMES = {str(number.value): number.name for number in signal.Signals}
# conmon opens each line it writes to syslog with the container's id cut to 20 characters and its own level's tag:
# "conmon 0644511bc2734f5ff9f9 <ninfo>: terminal_ctrl_fd: 12" (<error> for a failure it exits on, <pwarn> and <nwarn> a
# warning, <ninfo>, <ndebug>, <ntrace>). It sends all but <error> at syslog's info: the tag is the line's level.
_CONMON_HEAD = r"^conmon (?<cid>[0-9a-f]{12,64}) <(?<tag>error|pwarn|nwarn|ninfo|ndebug|ntrace)>: "
_CONMON_SEVERITY = {"error": "error", "pwarn": "warning", "nwarn": "warning", "ninfo": "info", "ndebug": "debug", "ntrace": "debug"}


# `docker events --format '{{json .}}'`: '…"Type":"container","Action":"die","Actor":{"ID":"<id>","Attributes":{"exitCode":"137",…}}…';
# before Docker 1.10 only '{"status":"oom","id":"<id>","from":"<image>","time":…}'.
# (A label's value may hold braces: the attributes end where the Actor does.)
_CONTAINER_EVENT_JSON = (
    r'"Type":"container","Action":"(?<action>[a-z_]+)(?:: ?(?<detail>[^"]*))?","Actor":\{"ID":"(?<id>[0-9a-f]{12,64})","Attributes":\{(?<attributes>.*?)\}\}'
    r'|^\{"status":"(?<status>[a-z_]+)","id":"(?<old_id>[0-9a-f]{12,64})","from":"(?<image>[^"]*)","time"'
)


def _attribute(name: str) -> pl.Expr:
    """A container event's attribute ``name``: Podman's and Docker's "(name=value, …)", or Docker's JSON '"name":"value"'
    (read from the frame's ``event_attributes`` and ``event_json_attributes``, set by :func:`containerd_rules`)."""
    # (journalctl cuts a line past the terminal's width with ">".)
    listed = pl.col("event_attributes").str.extract(rf"(?:^|, ){re.escape(name)}=([^,)>]*)", 1)
    return pl.coalesce(listed, pl.col("event_json_attributes").str.extract(rf'(?:^|,)"{re.escape(name)}":"([^"]*)"', 1))


_LEVEL = r"(?:(?:^|\s)level=|\"level\":\")(?<level>[a-z]+)"
_SIGKILLED = 137


def _runtime_kill_signal(framed: pl.DataFrame) -> pl.Expr:
    """The signal (its number, "" when not told) the runtime last sent the container whose death event a line is, with
    no OOM or start between; null on other lines."""
    event_name = pl.col("event_name")
    marker = (
        pl.when(event_name == "kill").then(pl.format("kill:{}", pl.coalesce(_attribute("signal"), pl.lit(""))))
        .when(event_name.is_in(["start", "oom", "restart"])).then(pl.lit("other"))
    )
    last = marker.forward_fill().over([*file_column(framed), "event_id"])
    return pl.when(event_name.is_in(["died", "die"]) & last.str.starts_with("kill:")).then(last.str.strip_prefix("kill:"))


def containerd_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for the container runtimes' lines: a container's OOM event, its process's exit, the container a line acts on."""
    # Each wording is matched once (an expression is evaluated wherever it is used), the rarer ones on the lines
    # that hold their literals only.
    message = pl.col("message")
    framed = framed.with_columns(
        task=message.str.extract_groups(_TASK_EVENT),
        dockerd=pl.when(message.str.contains_any(["msg=event ", "] event "])).then(message).str.extract_groups(_DOCKERD_EVENT),
        crio=pl.when(message.str.contains_any([" exited with status ", " with stop signal timed out", " failed to exit within ", ": OOM received"]))
        .then(message).str.extract_groups(_CRIO_CONMON),
        # (Podman's and Docker's events: read on their lines alone.)
        event=pl.when(pl.when(pl.col("program").is_in(["podman", "dockerd"])).then(message).str.contains_any([" container ", ": (from "]))
        .then(message).str.extract_groups(_CONTAINER_EVENT),
        json_event=pl.when(pl.when(pl.col("program") == "dockerd").then(message).str.starts_with("{")).then(message).str.extract_groups(_CONTAINER_EVENT_JSON),
        created=pl.when(message.str.contains("returns container id", literal=True)).then(message).str.extract_groups(_CREATED_CONTAINER),
        cri_pod=pl.when(message.str.contains_any(["PodSandboxMetadata{Name:", "k8s_"])).then(message).str.extract_groups(_CRI_POD),
        log_path=pl.when(message.str.contains_any(["/var/log/pods/", "/var/log/containers/", "/var/lib/kubelet/pods/"])).then(message).str.extract_groups(_LOG_PATH),
        # (conmon's head, and CRI-O's wordings: read on their own lines alone.)
        conmon=pl.when(pl.col("program") == "conmon").then(message).str.extract_groups(_CONMON_HEAD),
        crio_pod=pl.when(
            pl.when(pl.col("program") == "crio").then(message)
            .str.contains_any(["Creating container: ", "ed container ", "description=", "Got pod network", " pod sandbox"])
        ).then(message).str.extract_groups(_CRIO_POD),
    )
    event, json_event = pl.col("event").struct, pl.col("json_event").struct
    framed = framed.with_columns(
        event_name=pl.coalesce(event.field("event"), event.field("old_event"), json_event.field("action"), json_event.field("status")),
        event_id=pl.coalesce(event.field("id"), event.field("old_id"), json_event.field("id"), json_event.field("old_id")),
        event_detail=pl.coalesce(event.field("detail"), json_event.field("detail")),
        event_attributes=event.field("attributes"),
        event_json_attributes=json_event.field("attributes"),
    )
    task, dockerd, crio, created, crio_pod, cri_pod, log_path = (
        pl.col(name).struct for name in ("task", "dockerd", "crio", "created", "crio_pod", "cri_pod", "log_path")
    )
    event_name = pl.col("event_name")
    # A container's death is about the container; the runtime's other events name the container it acts on.
    died = event_name.is_in(["died", "die"])
    oom = (task.field("event") == "OOM") | (dockerd.field("event") == "oom") | crio.field("oom").is_not_null() | (event_name == "oom")
    # 1.7+ writes the event as protobuf text, which leaves out a field at its zero value: a TaskExit without
    # exit_status exited 0.
    exited = (task.field("event") == "Exit") | (dockerd.field("event") == "exit") | crio.field("status").is_not_null()
    # Docker's "die" tells the container's exit code (Podman's "died" does not); an exec'd process's "exec_die" is not the container's.
    died_with = pl.when(died).then(_attribute("exitCode"))
    exited = exited | died_with.is_not_null()
    # "received exit event …" repeats a TaskExit logged beside it: its process and status, not a second kill.
    repeat = task.field("repeat").is_not_null()
    status = pl.coalesce(task.field("status"), dockerd.field("status"), crio.field("status"), died_with).cast(pl.Int32, strict=False)
    # (A status given but out of range, such as a Windows container's 3221225477, stays unknown.)
    status = pl.coalesce(status, pl.when((exited | repeat) & died_with.is_null()).then(pl.lit(0, pl.Int32)))
    # The sandbox's handler reports the pod's pause process, which a pod's teardown stops with SIGKILL:
    # its 137 is a pod going away, not a kill; nor is an exec'd process's 137 the container's.
    sandbox = task.field("sandbox").is_not_null()
    exec_process = dockerd.field("process_id") != dockerd.field("container_id")
    # Docker tells the signals it sends itself ("kill … signal=15", then "signal=9" at a stop's timeout, `docker kill`): the
    # death after them, with no OOM or start between, is the runtime's stop (a 137 there no failure).
    runtime_signal = _runtime_kill_signal(framed) if framed.select(pl.col("event_id").is_not_null().any()).item() else pl.lit(None, pl.String)
    stopped_by_runtime = runtime_signal.is_not_null()
    killed = exited & (status == _SIGKILLED) & ~sandbox & ~exec_process.fill_null(False) & ~stopped_by_runtime
    # dockerd names a container by its full id at the stop's timeout, by its 12-character short id when it kills it directly.
    forced = pl.coalesce(crio.field("forced"), crio.field("forced_field"))
    full_forced = pl.when(forced.str.len_chars() == _ID_LENGTH).then(forced)
    event_id = pl.col("event_id")
    full_event_id = pl.when(event_id.str.len_chars() == _ID_LENGTH).then(event_id)
    container_id = pl.coalesce(
        task.field("container_id"), dockerd.field("container_id"), crio.field("stopped"), full_forced, pl.when(died | oom).then(full_event_id)
    )
    # The runtime's own lines about a container it creates, starts, stops or removes: the runtime stays their process.
    # (The wordings' literals: a container's, a shim's task "id=", a sandbox's.)
    named_gate = message.str.contains_any(["ontainer", "shim", "od sandbox", "PodSandbox for", ' for \\"'])
    named = pl.when(named_gate).then(message).str.extract_groups(_NAMED_CONTAINER).struct
    acted_on = pl.coalesce(
        *(named.field(group) for group in ("id", "field", "plain", "api", "lead", "part", "handled", "sandbox")), created.field("created"), full_event_id,
    )
    id_prefix = pl.coalesce(crio.field("short_id"), pl.when(full_forced.is_null()).then(forced), pl.when(full_event_id.is_null()).then(event_id))
    stop_killed = crio.field("stopped").is_not_null() | forced.is_not_null()
    # (An event's id cut short, by Docker's short form or a pager's width, makes a death about the container, as a full one does.)
    about_a_container = (
        container_id.is_not_null() | crio.field("short_id").is_not_null() | forced.is_not_null()
        | ((died | oom) & full_event_id.is_null() & event_id.is_not_null()).fill_null(False)
    )
    level = pl.coalesce(
        pl.col("message").str.extract(_LEVEL, 1).replace_strict(_syslog.LOGRUS_SEVERITY, default=None),
        pl.col("conmon").struct.field("tag").replace_strict(_CONMON_SEVERITY, default=None),
    )
    name = _attribute("name")
    # A health check's result: "health_status: unhealthy" (Docker's event), "health_status=unhealthy" (Podman's attribute).
    unhealthy = (pl.col("event_name") == "health_status") & (pl.coalesce(pl.col("event_detail"), _attribute("health_status")).str.strip_chars() == "unhealthy")
    return _syslog.program_events(
        framed,
        victim_pid=pl.coalesce(task.field("pid"), dockerd.field("pid"), crio.field("pid")).cast(pl.Int64, strict=False),
        kind=pl.when(oom).then(pl.lit("oom_kill")).when(killed).then(pl.lit("process_killed")).otherwise(pl.lit("log")),
        # conmon tells of an exit only when its status is not 0; Docker of every container's.
        severity=pl.when(oom | killed | crio.field("status").is_not_null() | ((died_with != "0") & ~stopped_by_runtime)).then(pl.lit("error"))
        .when((stopped_by_runtime & (died_with != "0")) | unhealthy).then(pl.lit("warning")).otherwise(pl.coalesce(level, pl.col("severity"))),
        # A task event is about a container's process, not about the runtime.
        process=pl.when(~about_a_container).then(pl.col("program")),
        # (A log path names the container last: what the line says of the container it acts on stands.)
        container_id=pl.coalesce(container_id, acted_on, log_path.field("link_id")),
        # A pod's container carries the kubelet's labels (dockershim names it "k8s_<container>_<pod>_…", read below).
        container=pl.coalesce(
            _attribute("io.kubernetes.container.name"), pl.when(~name.str.starts_with("k8s_")).then(name), created.field("name"),
            crio_pod.field("container"), pl.when(cri_pod.field("container") != "POD").then(cri_pod.field("container")),
            log_path.field("container"), log_path.field("link_container"),
        ),
        pod=pl.coalesce(
            _attribute("io.kubernetes.pod.name"), crio_pod.field("pod"), crio_pod.field("network_pod"), crio_pod.field("sandbox_pod"),
            cri_pod.field("sandbox_pod"), cri_pod.field("pod"),
            log_path.field("pod"), log_path.field("link_pod"),
        ),
        namespace=pl.coalesce(
            _attribute("io.kubernetes.pod.namespace"), crio_pod.field("namespace"), crio_pod.field("network_namespace"), crio_pod.field("sandbox_namespace"),
            cri_pod.field("sandbox_namespace"), cri_pod.field("namespace"), log_path.field("namespace"), log_path.field("link_namespace"),
        ),
        pod_uid=pl.coalesce(_attribute("io.kubernetes.pod.uid"), crio_pod.field("pod_uid"), cri_pod.field("sandbox_uid"), cri_pod.field("pod_uid"),
            log_path.field("pod_uid"), log_path.field("volume_uid"),
        ),
        exit_code=status,
        attrs=attrs_json({
            "attempt": created.field("attempt").cast(pl.Int64, strict=False),
            "runtime_event": event_name,
            "health": pl.when(pl.col("event_name") == "health_status").then(pl.coalesce(pl.col("event_detail"), _attribute("health_status"))),
            "image": pl.coalesce(_attribute("image"), event.field("old_image"), json_event.field("image")),
            # (Docker's "kill" event is the signal it sends; a death after it is by that signal.)
            "signal": pl.when(killed | stop_killed).then(pl.lit("SIGKILL"))
            .otherwise(pl.coalesce(runtime_signal, _attribute("signal")).replace_strict(_SIGNAL_NAMES, default=None)),
            "runtime": pl.when(about_a_container).then(pl.col("program")),
            "sandbox": pl.when(sandbox | named.field("sandbox").is_not_null()).then(pl.lit(True)),
            "runtime_stop": pl.when(stopped_by_runtime).then(pl.lit(True)),
            # (conmon's other lines keep the cut id too, but stay conmon's own: its process and pid.)
            "container_id_prefix": pl.coalesce(id_prefix, pl.when(container_id.is_null()).then(pl.col("conmon").struct.field("cid"))),
        }),
    )


# Not a source of its own: its lines are the file's, as other programs' lines are.
_syslog.register_program("containerd", None, containerd_rules)
# MicroK8s runs its own containerd as a snap daemon; Docker's daemon was "docker" before 1.12 renamed it; RHEL 7's and
# CentOS 7's docker package (1.13) runs it as "dockerd-current"; cri-dockerd (the kubelet's shim to Docker since 1.24)
# writes the same logrus lines.
for _runtime in ("dockerd", "crio", "conmon", "microk8s.daemon-containerd", "podman", "docker", "dockerd-current", "cri-dockerd"):
    _syslog.register_program(_runtime, None, containerd_rules)
