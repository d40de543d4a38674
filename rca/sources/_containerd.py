"""containerd's lines about the containers it runs: the runtime's view of an OOM kill.

The kubelet learns that a container was OOM-killed from containerd, which logs the events
it gets from the shim before the kubelet acts on them:

* ``msg="TaskOOM event &TaskOOM{ContainerID:<id>,XXX_unrecognized:[],}"`` (1.4–1.6) or
  ``msg="TaskOOM event container_id:\\"<id>\\""`` (1.7+) → ``oom_kill`` in that container;
* ``msg="TaskExit event &TaskExit{ContainerID:<id>,ID:<id>,Pid:<pid>,ExitStatus:137,…}"`` or
  ``msg="TaskExit event in podsandbox handler container_id:\\"<id>\\" id:\\"<id>\\" pid:<pid> exit_status:137 …"``
  → the container's process and exit status: ``process_killed`` for 137 (SIGKILL), but not from the
  sandbox's handler (the pod's pause process, SIGKILLed whenever a pod is torn down); 2.x's
  ``TaskExit event in podsandbox handler container_id:… id:… pid:131544 exited_at:{…}`` leaves out a zero status.

dockerd writes the same logrus lines (``level=error msg="…"``) and is registered with the same rules, for the level.

Registered with :mod:`rca.sources._syslog` as the rules of program ``containerd``. Its lines
are logfmt (``time="…" level=… msg="…"``), or JSON with ``[debug] format = "json"``
(``{"level":"info","msg":"TaskOOM event …","time":"…"}``); the level is kept, the envelope's time stands.
"""

from __future__ import annotations

import polars as pl

from rca.sources import _syslog
from rca.sources._base import ParseContext, attrs_json

_ID = r"[0-9a-f]{64}"
_TASK_EVENT = (
    r"(?:msg=|\"msg\":)\"Task(?<event>OOM|Exit) event (?<sandbox>in podsandbox handler )?.*?(?:ContainerID:|container_id:\\\")(?<container_id>" + _ID + ")"
    r"(?:.*?(?:Pid:|pid:)(?<pid>[0-9]+))?(?:.*?(?:ExitStatus:|exit_status:)(?<status>[0-9]+))?"
)
_LEVEL = r"(?:(?:^|\s)level=|\"level\":\")(?<level>[a-z]+)"
_SEVERITY = {"trace": "debug", "debug": "debug", "info": "info", "warning": "warning", "error": "error", "fatal": "critical", "panic": "critical"}
_SIGKILLED = 137


def containerd_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for containerd's lines: a container's OOM event, a container process's exit."""
    task = pl.col("message").str.extract_groups(_TASK_EVENT).struct
    oom = task.field("event") == "OOM"
    # 1.7+ writes the event as protobuf text, which leaves out a field at its zero value: a TaskExit without
    # exit_status exited 0.
    exited = task.field("event") == "Exit"
    status = pl.coalesce(task.field("status").cast(pl.Int32, strict=False), pl.when(exited).then(pl.lit(0, pl.Int32)))
    # The sandbox's handler reports the pod's pause process, which a pod's teardown stops with SIGKILL:
    # its 137 is a pod going away, not a kill.
    sandbox = task.field("sandbox").is_not_null()
    killed = exited & (status == _SIGKILLED) & ~sandbox
    about_a_container = task.field("container_id").is_not_null()
    level = pl.col("message").str.extract(_LEVEL, 1).replace_strict(_SEVERITY, default=None)
    return _syslog.program_events(
        framed,
        victim_pid=task.field("pid").cast(pl.Int64, strict=False),
        kind=pl.when(oom).then(pl.lit("oom_kill")).when(killed).then(pl.lit("process_killed")).otherwise(pl.lit("log")),
        severity=pl.when(oom | killed).then(pl.lit("error")).otherwise(pl.coalesce(level, pl.col("severity"))),
        # A task event is about a container's process, not about containerd.
        process=pl.when(~about_a_container).then(pl.col("program")),
        container_id=task.field("container_id"),
        exit_code=status,
        attrs=attrs_json({
            "signal": pl.when(killed).then(pl.lit("SIGKILL")),
            "runtime": pl.when(about_a_container).then(pl.lit("containerd")),
            "sandbox": pl.when(sandbox).then(pl.lit(True)),
        }),
    )


# Not a source of its own: its lines are the file's, as other programs' lines are.
_syslog.register_program("containerd", None, containerd_rules)
_syslog.register_program("dockerd", None, containerd_rules)
