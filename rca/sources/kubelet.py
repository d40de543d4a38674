"""kubelet logs: bare klog, klog inside journald/syslog, and structured klog.

The kubelet writes klog lines (``I1201 03:17:05.123456    2345 file.go:123] msg``), either
to a file or through journald (``Dec 01 03:17:05 host kubelet[2345]: I1201 …``). Since
Kubernetes 1.21 most messages are structured (``"Eviction manager: attempting to reclaim"
resourceName="memory"``); with ``--logging-format=json`` each line is a JSON object whose
epoch "ts" is exact, rewritten into the structured form for the same rules. NVIDIA's device
plugin logs klog too: its Xid and unhealthy-GPU lines are read here; so are Volcano's scheduler
and job controller, whose evictions and requests name their pods, and kube-controller-manager's recorded events (a Job
that failed as a whole, BackoffLimitExceeded …, is an error). The envelope is peeled by :mod:`rca.sources._syslog`; the rules
here read the klog header and the message: the eviction manager's sequence (reclaim,
rank, evict), node memory pressure, container OOM kills and the system OOMs the kubelet
reports (cAdvisor's ``Created an OOM event in container "/kubepods/…/pod<uid>/<id>"`` names the OOM's cgroup, pod and
container); a pod worker's ``… with CrashLoopBackOff: "back-off 5m0s restarting failed container=…"`` keeps the
back-off in attrs (``back_off``): the container keeps dying. klog carries no year and no zone: the year comes from the context
(``timeutil.yearless_to_utc``) and the zone is ``ctx.tz``, or inside a journal the zone its envelope
was read in (journalctl's banner, a short-iso offset). ``talosctl logs kubelet`` puts the node before
each JSON line: it becomes the host. A pasted excerpt whose klog headers an author cut to "..." keeps its rules, without
time or severity; the CRI labels the container log manager prints (``io.kubernetes.pod.name`` …) name the pod.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from rca import timeutil
from rca.sources import _syslog, _xid, register
from rca.sources._base import (
    ParseContext,
    Parsed,
    Source,
    attrs_json,
    by_head,
    head_groups,
    holds_newline,
    one_head,
    starts_file,
    within_file,
)
from rca.sources._kube import (
    QUANTITY,
    SYNC_ERROR_CONTAINER,
    UNDERSCORE_POD_REF,
    admission_devices,
    event_kind,
    eviction_fields,
    insufficient_resource,
    insufficient_resources,
    memcg_container_id,
    memcg_pod_uid,
    oom_victim,
    quantity_bytes,
    raised_severity,
    storage_attrs,
)

# OpenShift 4 ran the kubelet as ``hyperkube kubelet`` (its journal lines tagged ``hyperkube``); since 4.11 OpenShift
# and OKD run it through the ``kubenswrapper`` script, which tags them so. A snap's service is tagged "<snap>.<app>":
# Charmed Kubernetes' kubelet snap ``kubelet.daemon``, MicroK8s' kubelet before 1.21 (kubelite since)
# ``microk8s.daemon-kubelet``.
KUBELET_PROGRAMS = (
    "kubelet", "k3s", "k3s-agent", "microk8s.daemon-kubelite", "microk8s.daemon-kubelet", "kubelet.daemon", "hyperkube", "kubenswrapper",
)

# A bare klog file (no envelope names its program) is the kubelet's unless its callers are another component's own
# files: kube-scheduler's scheduling cycle (schedule_one.go since 1.25, its queue, binder and preemption), and
# kube-controller-manager's (its main, the node controller, nodecontroller.go before 1.10, the workload controllers).
# Volcano's controllers have a garbagecollector.go and a job_controller.go of their own: the first is no sign, and of
# the second only the Job controller's structured lines (1.26+; the JSON format's "caller") are kube-controller-manager's.
_SCHEDULER_FILES = ("schedule_one", "scheduling_queue", "default_binder", "default_preemption")
_CONTROLLER_MANAGER_FILES = (
    "controllermanager", "nodecontroller", "node_lifecycle_controller", "replica_set", "deployment_controller",
    "ttlafterfinished_controller", "cronjob_controllerv2", "endpointslice_controller", "taint_manager", "taint_eviction",
)
_COMPONENT_CALLERS = (
    ("kube-scheduler", rf'\b(?:{"|".join(_SCHEDULER_FILES)})\.go:[0-9]+(?:\] |")'),
    ("kube-controller-manager", rf'\b(?:{"|".join(_CONTROLLER_MANAGER_FILES)})\.go:[0-9]+(?:\] |")|\bjob_controller\.go:[0-9]+(?:\] "|")'),
)
# What a line must hold for any of those callers to match: a file with none of them is the kubelet's, unread.
_COMPONENT_LITERALS = [f"{name}.go:" for name in (*_SCHEDULER_FILES, *_CONTROLLER_MANAGER_FILES, "job_controller")]

# NVIDIA's k8s-device-plugin logs klog too (`kubectl logs` of its pod): its banner, its resource manager (rm.go) and
# health checker's NVML events (health.go), which the kubelet has no files of, and its own messages (its FS watcher of
# the kubelet's device-plugins folder, its registration with the kubelet, an Xid it marks a GPU unhealthy for) name it.
# main.go and server.go are no sign alone: the kubelet logs from a server.go of its own, other components from a
# main.go; nor is health.go alone: the DRA driver's kubelet plugin serves its gRPC health check from one.
_DEVICE_PLUGIN = "nvidia-device-plugin"
_DEVICE_PLUGIN_LITERALS = [
    "Starting NVIDIA Device Plugin", "rm.go:", "health.go:", "XidCriticalError", "device marked unhealthy", "Starting FS watcher",
    "Registered device plugin for '", "Starting GRPC server for '",
]
_DEVICE_PLUGIN_SIGNS = (
    r"^[IWEF][0-9]{4} [0-9:.]+\s+[0-9]+ (?:rm\.go:[0-9]+\] |health\.go:[0-9]+\] (?:Skipping non-nvmlEventType|Processing event ))"
    r"|\bStarting NVIDIA Device Plugin\b|\bXidCriticalError: Xid=|' device marked unhealthy: |\bStarting FS watcher(?:\.$| for /var/lib/kubelet/device-plugins)"
    r"|\bRegistered device plugin for '[^']+' with Kubelet|\bStarting GRPC server for '"
)

# The GPU operator's other klog operands name themselves the same way, each by lines no kubelet writes.
# gpu-feature-discovery shares the device plugin's start-up (its OS watcher, its config dump): its labeling loop
# ("Creating Labels", "Sleeping for <ns>", its labelers' errors) and its own name name it.
_GFD = "gpu-feature-discovery"
_GFD_LITERALS = ["Creating Labels", "Sleeping for ", "labels to output file", "labels generated from any source", "labeler", "gpu-feature-discovery"]
_GFD_SIGNS = (
    r"^[IWEF][0-9]{4} [0-9:.]+\s+[0-9]+ main\.go:[0-9]+\] (?:Creating Labels|Sleeping for [0-9]+)$"
    r"|\bWriting labels to output file\b|\bno labels generated from any source\b|\b(?:error creating|failed to construct) [A-Za-z0-9 -]*labeler\b"
    r"|\bRunning gpu-feature-discovery in version\b"
)
# NVIDIA's DRA driver (k8s-dra-driver-gpu: its gpu and compute-domain kubelet plugins, its ComputeDomain controller):
# the files of its own the kubelet has none of, and the ComputeDomain it prepares channels and daemons for.
_DRA_DRIVER = "nvidia-dra-driver-gpu"
_DRA_DRIVER_LITERALS = [
    "device_state.go:", "device_health.go:", "computedomain.go:", "cdstatus.go:", "cliqueconfigmap.go:", "vfio-device.go:", "ComputeDomain",
    "compute-domain", "gpu-kubelet-plugin",
]
_DRA_DRIVER_SIGNS = (
    r"^[IWEF][0-9]{4} [0-9:.]+\s+[0-9]+ (?:device_state|device_health|computedomain|cdstatus|cliqueconfigmap|vfio-device)\.go:[0-9]+\] "
    r"|\bComputeDomain\b|\b(?:compute-domain|gpu)-kubelet-plugin\b|\bcompute-domain-(?:daemon|controller)\b"
)
# The device plugin first: its config dump names gpu-feature-discovery's flags too.
_GPU_COMPONENTS = (
    (_DEVICE_PLUGIN, _DEVICE_PLUGIN_LITERALS, _DEVICE_PLUGIN_SIGNS),
    (_GFD, _GFD_LITERALS, _GFD_SIGNS),
    (_DRA_DRIVER, _DRA_DRIVER_LITERALS, _DRA_DRIVER_SIGNS),
)
_GPU_COMPONENT_SIGNS = "|".join(f"(?:{signs})" for _, _, signs in _GPU_COMPONENTS)

# The programs whose journal lines are klog, read by these rules: the kubelet's, the other components' ("kube-scheduler[6154]:
# I0612 …"), and their snaps' daemons, tagged "<snap>.<app>": MicroK8s ran each component as a daemon of its own before
# kubelite (1.21), Charmed Kubernetes ships each as a snap of its own.
KLOG_PROGRAMS = (
    *KUBELET_PROGRAMS, *(name for name, _ in _COMPONENT_CALLERS), *(name for name, _, _ in _GPU_COMPONENTS), "kube-apiserver", "kube-proxy",
    "microk8s.daemon-apiserver", "microk8s.daemon-controller-manager", "microk8s.daemon-scheduler", "microk8s.daemon-proxy",
    "kube-apiserver.daemon", "kube-controller-manager.daemon", "kube-scheduler.daemon", "kube-proxy.daemon",
)

# The klog header before the message (MESSAGE_TAIL); the head alone is captured (see head_groups). A syslog-ng
# template with the ${LEVEL} macro (StarlingX: "… controller-0 kubelet[75599]: info I0419 …") writes the syslog
# level before it: the klog letter, the kubelet's own, stays the severity. An author who pastes lines may elide the
# header up to the caller ("... eviction_manager.go:368] msg"): the line keeps its message and caller, but no time,
# thread or severity.
KLOG_HEAD = (
    r"^(?:(?:(?:emerg|alert|crit|err|warning|notice|info|debug) )?(?<severity>[IWEF])(?<month>[0-9][0-9])(?<day>[0-9][0-9]) (?<clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?)\s+(?<thread>[0-9]+) "
    r"|(?:\.\.\.|…) )(?<caller>[^\s:\]]+:[0-9]+)\] ?"
)
_KLOG_GO_LINE = r"^(?:[IWEF][0-9]{4} [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?\s+[0-9]+|\.\.\.|…) [^\s:\]]+\.go:[0-9]+\] "
# klog's JSON format (``--logging-format=json``): ``{"ts":<epoch ms>,"caller":"pkg/file.go:N","msg":"…","v":0,…}``;
# "v" marks an info line (errors carry none). The key/value pairs after it are kept as ``fields``. A named logger
# (contextual logging) writes its name between the time and the caller: ``{"ts":…,"logger":"…","caller":…}``.
_JSON_LINE = (
    r'^\{"ts":(?<ts>[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)(?:,"logger":"[^"]*")?(?:,"caller":"(?<caller>[^"]*)")?,"msg":"(?<msg>(?:[^"\\]|\\.)*)"'
    r'(?:,"v":(?<v>[0-9]+))?,?(?<fields>.*?)\}\s*$'
)
# A key and its value at the top level of those fields: a string, a flat object or array, or a bare scalar.
_JSON_PAIR = r'(?:^|,)"(?<key>[A-Za-z_][0-9A-Za-z_]*)":(?<value>"(?:[^"\\]|\\.)*"|\{[^{}]*\}|\[[^\[\]]*\]|[^,{}\[\]]*)'
# klog.KObj in JSON: {"name":"pod","namespace":"ns"}, written as the text format writes it ("ns/pod").
_JSON_OBJECT_REF = r'\{"name":"(?<name>[^"]*)","namespace":"(?<namespace>[^"]*)"\}'
# `talosctl logs kubelet` puts the node before each JSON line: "10.200.1.3: {"ts":…}".
_NODE_PREFIX = r"^([0-9A-Za-z][-0-9A-Za-z.:]*): \{"
_JSON_KLOG_LINE = r'^(?:[0-9A-Za-z][-0-9A-Za-z.:]*: )?\{"ts":[0-9.eE+-]+(?:,"logger":"[^"]*")?(?:,"caller":"[^"]*\.go:[0-9]+")?,"msg":"'
_KUBELET_CALLER = (
    r"\b(?:eviction_manager|kubelet|kubelet_pods|kuberuntime_[0-9A-Za-z_]+|pod_workers|prober|generic|status_manager|oom_watcher[0-9A-Za-z_]*)\.go:[0-9]+\] "
    # The JSON format's caller keeps the package: the kubelet's own ones.
    r'|"caller":"(?:kubelet|eviction|kuberuntime|pleg|prober|status|oom|topologymanager|cm|volumemanager|nodestatus|images|nodeshutdown)/'
)

_SEVERITY_BY_LETTER = {"I": "info", "W": "warning", "E": "error", "F": "critical"}

# pod="ns/name" (structured), or "pod ns/name" / "pod <ns/name>" in the text of klog lines (Volcano's scheduler:
# "Evicting pod default/job-b-test-2, because of preempted by …"); Volcano's job controller names the job's
# namespace and the pod apart: "Try to handle request <Queue: q, Job: ns/job, Task:t, Pod:name, Event:PodEvicted, …>".
_SLASH_POD = (
    r'\bpod(?:="?| <?)(?<namespace>[a-z0-9][-a-z0-9]*)/(?<pod>[a-z0-9][-a-z0-9.]*)"?'
    r"|\bJob: (?<job_namespace>[a-z0-9][-a-z0-9]*)/[^,\s]+, Task:[^,]*, Pod:(?<job_pod>[a-z0-9][-a-z0-9.]*),"
    # The taint manager before 1.20: "NoExecuteTaintManager is deleting Pod: ns/name".
    r"|\bis deleting Pod: (?<taint_namespace>[a-z0-9][-a-z0-9]*)/(?<taint_pod>[a-z0-9][-a-z0-9.]*)"
)
# The pod killer's lines name a pod by its name alone: "Killing unwanted pod" podName="x", "Failed killing the pod" … podName="x".
_POD_NAME_ONLY = r'\bpodName="?([a-z0-9][-a-z0-9.]*)"?(?:\s|$)'
# A pod list of one pod names it: "SyncLoop DELETE" source="api" pods=["ns/name"] (unquoted before 1.24).
_ONE_POD_LIST = r'\bpods=\["?(?<namespace>[a-z0-9][-a-z0-9]*)/(?<pod>[a-z0-9][-a-z0-9.]*)"?\]'
# podUID="…" (structured), or the volume manager's pod "<uid>" (UID: "<uid>") (its quotes escaped in a structured message), or
# the device manager's "Needs to allocate 1 "nvidia.com/gpu" for pod "<uid>" container "c"" (before 1.21).
_POD_UID = r'(?:\bpod(?:UID|ID)="?|\(UID: \\?"|\bfor pod \\?")([0-9a-fA-F-]{32,36})'
_EVENT_POD_UID = r'event=&?\{"?ID"?:"?([0-9a-fA-F-]{32,36})'
# The topology manager of 1.18–1.20 writes "[topologymanager] RemoveContainer - Container ID: <id>"; kuberuntime's
# "Kill container failed" prints the kubecontainer.ContainerID struct unquoted: containerID={Type:containerd ID:<id>};
# newer kubelets' "DeleteContainer returned error" as JSON: containerID={"Type":"containerd","ID":"<id>"}.
# Before 1.21 kuberuntime names the container it kills by its URI, Killing container "docker://<id>" with 30 second grace
# period, or by the struct's %v (quoted fields): Killing container {"docker" "<id>"}, but using 0 second grace period override.
# With dockershim its cAdvisor and log readers name a container by its folder: /var/lib/docker/containers/<id>[/<id>-json.log].
_CONTAINER_ID = (
    r'(?:\bcontainerID"?[=:]\s*"?|\bData"?:"?|with id |\bContainer ID: |\bcontainer(?:Status)?ID=\{"Type":"[a-z-]+","ID":"|\bcontainerID=\{Type:[a-z-]+ ID:'
    r'|\bKilling container "|\bKilling container \{"[a-z-]+" "|/docker/containers/)'
    # the runtime's scheme: docker://, containerd://, cri-o:// (CRI-O's has a hyphen)
    r"(?:[a-z-]+://)?([0-9a-f]{12,64})\b"
)

# The CRI labels the kubelet puts on each container name its pod, namespace, uid and container: the container log
# manager prints them (labels={"io.kubernetes.container.name":"c","io.kubernetes.pod.name":"p",…}, quotes escaped in
# the JSON format), its id= the container's.
_CRI_LABELS = "io.kubernetes.pod."
_CRI_LABEL = r'\\*"io\.kubernetes\.{}\\*":\\*"([0-9A-Za-z][-0-9A-Za-z.]*)'
_CRI_CONTAINER_ID = r'\bid=\\*"([0-9a-f]{64})\\*"'

# The last key=value of a line cut by a pager: its value runs, without a "=" or "<", to the ">" that marks the cut.
_CHOPPED_FIELD = r"\s[A-Za-z][0-9A-Za-z]*=[^=<]*>$"

# Stages of the eviction manager's sequence, in the order the rules are tried.
_EVICTION_STAGES: tuple[tuple[str, str], ...] = (
    ("reclaim_attempt", r"(?i)eviction manager:? attempting to reclaim"),
    ("must_evict", r"(?i)must evict pod\(s\) to reclaim"),
    ("ranked", r"(?i)pods ranked for eviction"),
    ("critical_pod_skipped", r"(?i)cannot evict a critical"),
    ("cleanup_wait", r"(?i)evicted, waiting for pods? to be cleaned up"),
    # The wait's end: the evicted pods' resources reclaimed, or not within the manager's timeout (30 s) — a node that
    # stays under pressure with its evicted pods still around. Each names pods already evicted: no eviction of its own.
    ("cleaned_up", r"(?i)eviction manager:? pods successfully cleaned up"),
    ("cleanup_timeout", r"(?i)eviction manager:? timed out waiting for pods to be cleaned up"),
    ("evicting", r"(?i)\bevicting pod\b"),
    # kube-controller-manager's taint manager deletes each pod that does not tolerate a NoExecute taint (a node gone
    # NotReady or unreachable): "NoExecuteTaintManager is deleting Pod: ns/name" (1.6–1.19), then structured
    # "NoExecuteTaintManager is deleting pod" pod="ns/name", and since 1.29 "Deleting pod" controller="taint-eviction-controller".
    ("taint_eviction", r'(?i)\bNoExecuteTaintManager is deleting pod\b|^"Deleting pod" controller="taint-eviction-controller"'),
    ("evicted", r"(?i)\bis evicted successfully|\bpod \S+ evicted successfully|\bevicted pod\b"),
    ("admission_rejected", r'(?i)failed to admit pod.*(?:node has conditions|nodeCondition)|^"Pod admission denied" .*\breason="Evicted"'),
)

# The stages that name the pods the manager evicted (and waits on), and those that end the wait.
_CLEANUP_END_STAGES = ("cleaned_up", "cleanup_timeout")
_CLEANUP_STAGES = ("cleanup_wait", *_CLEANUP_END_STAGES)


def sniff(head: Sequence[str]) -> float:
    """Share of the head that is kubelet klog (bare, or inside a kubelet journald envelope)."""
    return one_head(sniff_heads, head)


_JOURNAL_JSON_IDENTIFIER = rf'"SYSLOG_IDENTIFIER"\s*:\s*"(?:{"|".join(re.escape(program) for program in KLOG_PROGRAMS)})"'


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """:func:`sniff` of each head of :func:`~rca.sources._base.heads_frame`."""
    short = pl.col("text").str.extract_groups(_syslog.SHORT_LINE).struct
    iso = pl.col("text").str.extract_groups(_syslog.ISO_LINE).struct
    program = pl.coalesce(short.field("program"), iso.field("program"))
    scored = heads.select(
        "head",
        bare=pl.col("text").str.contains(_KLOG_GO_LINE) | pl.col("text").str.contains(_JSON_KLOG_LINE),
        journal=program.is_in(KLOG_PROGRAMS).fill_null(False),
        journal_json=pl.col("text").str.contains(_JOURNAL_JSON_IDENTIFIER),
        kubelet_caller=pl.col("text").str.contains(_KUBELET_CALLER),
        gpu_component=pl.col("text").str.contains(_GPU_COMPONENT_SIGNS),
        e2e=pl.col("text").str.contains(_E2E_LINE)
        | pl.col("text").str.contains(_GINKGO_STEP)
        | pl.col("text").str.contains(_GINKGO_REPORT_CLOSE),
    )
    shares = by_head(
        scored,
        bare=pl.col("bare").mean(),
        journal=(pl.col("journal") | pl.col("journal_json")).mean(),
        caller=pl.col("kubelet_caller").any(),
        # The device plugin and gpu-feature-discovery print their whole config (dozens of JSON lines) after a few klog
        # lines, the DRA driver its flags: their own signs, on klog lines, name the file however few of its lines are klog.
        gpu_component=(pl.col("gpu_component") & pl.col("bare")).any() & (pl.col("bare").sum() >= 2),
        # The e2e framework's stamp is its own (StampMilli and a colon): a build log that has it is an e2e run's,
        # however few of its lines (a failure's report among Ginkgo's output) wear it; so is Ginkgo v2's, after an "@".
        e2e=pl.col("e2e").any(),
    )
    return {
        head: float(
            max(share["journal"] * 0.95, share["bare"] * (0.95 if share["caller"] else 0.85), 0.9 * share["gpu_component"], 0.8 * share["e2e"])
        )
        for head, share in shares.items()
    }


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Parse kubelet lines; lines of other programs in a journal go to their own rules."""
    framed = _syslog.frame(lines, ctx, pl.col("text").str.contains(r'^\s*\{.*"__REALTIME_TIMESTAMP"'))
    # A talosctl node prefix is no envelope the framer knows: the message keeps it, and gives it up as the host here.
    message = pl.col("message")
    node = pl.when(pl.col("host").is_null() & message.str.contains(': {"ts":', literal=True)).then(message.str.extract(_NODE_PREFIX, 1))
    framed = (
        framed.with_columns(node=node)
        .with_columns(
            message=pl.when(pl.col("node").is_not_null()).then(message.str.slice(pl.col("node").str.len_chars() + 2)).otherwise(message),
            host=pl.coalesce("host", "node"),
            program=pl.col("program").fill_null(_bare_component(framed)),
        )
        .drop("node")
    )
    return Parsed(events=_syslog.dispatch(framed, ctx))


def _bare_component(framed: pl.DataFrame) -> pl.Expr:
    """The program a file's lines without an envelope are: the component its callers name (:data:`_COMPONENT_CALLERS`),
    for the whole file (a caller of its own is on few of its lines), else the kubelet."""
    bare = pl.col("program").is_null()
    component = pl.lit("kubelet")
    candidates = list(_COMPONENT_CALLERS) if framed.select((bare & pl.col("message").str.contains_any(_COMPONENT_LITERALS)).any()).item() else []
    for name, literals, signs in _GPU_COMPONENTS:
        if framed.select((bare & pl.col("message").str.contains_any(literals)).any()).item():
            candidates.append((name, signs))
    for name, callers in reversed(candidates):
        names = (bare & pl.col("message").str.contains(callers)).any()
        names = names.over(within) if (within := within_file(framed)) else names
        component = pl.when(names).then(pl.lit(name)).otherwise(component)
    return component


def klog_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for framed kubelet lines (the rules registered with the syslog framer)."""
    records = _records(framed)
    return _classify(_years_of_dated_lines(_dumped_event_time(_ginkgo_lines(_e2e_framework_lines(_resolve_header(records, ctx), ctx), ctx)), ctx))


# The e2e framework's own log lines before it logged through klog (framework.Logf, and the failure Ginkgo reports): Go's
# time.StampMilli, a colon, the level ("Aug 24 15:46:06.501: INFO: At … - event for …"); a Jenkins console put its own
# clock before each ("09:01:32 Aug 24 …"). No syslog line has a colon right after its clock.
_E2E_LINE = (
    r"(?s)^(?:[0-9]{2}:[0-9]{2}:[0-9]{2} )?(?<stamp>(?<month>[A-Z][a-z]{2}) +(?<day>[0-9]{1,2}) (?<clock>[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3})): "
    r"(?:(?<level>INFO|WARNING|ERROR|FAIL): )?(?<message>.*)$"
)
_SEVERITY_BY_E2E_LEVEL = {"INFO": "info", "WARNING": "warning", "ERROR": "error", "FAIL": "error"}


def _e2e_framework_lines(records: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """An e2e framework line keeps its message without the stamp, timed by the stamp (year-less, in ``ctx.tz``)."""
    if not records.select(pl.col("body").str.contains(_E2E_LINE).any()).item():
        return records
    e2e = pl.col("e2e").struct
    framework = e2e.field("clock").is_not_null() & ~pl.col("has_header") & pl.col("ts").is_null()
    parts = records.with_columns(e2e=pl.col("body").str.extract_groups(_E2E_LINE))
    month = timeutil.month_number(e2e.field("month"))
    stamp_ts, stamp_quality = timeutil.yearless_to_utc(month, e2e.field("day"), e2e.field("clock"), ctx, within=within_file(records))
    return parts.with_columns(
        ts=pl.when(framework).then(stamp_ts).otherwise(pl.col("ts")),
        ts_quality=pl.when(framework).then(stamp_quality).otherwise(pl.col("ts_quality")),
        # as written: StampMilli pads a one-digit day with a space ("Feb  4"), as syslog does
        ts_raw=pl.when(framework).then(e2e.field("stamp")).otherwise(pl.col("ts_raw")),
        severity=pl.when(framework).then(e2e.field("level").replace_strict(_SEVERITY_BY_E2E_LEVEL, default=None)).otherwise(pl.col("severity")),
        body=pl.when(framework).then(e2e.field("message")).otherwise(pl.col("body")),
        format=pl.when(framework).then(pl.lit("e2e_framework")).otherwise(pl.col("format")),
    ).drop("e2e")


# Ginkgo v2 (the e2e suites since Kubernetes 1.26) stamps each step and each failure's report with the moment, full date
# in the runner's zone (its "01/02/06 15:04:05.999": trailing zeros of the milliseconds dropped): "STEP: Creating a kubernetes
# client @ 04/28/26 08:05:49.396"; a report opens with its state and closes with where it happened: "[FAILED] Timed out …"
# … "In [It] at: k8s.io/kubernetes/test/e2e/node/gpu.go:430 @ 04/28/26 08:15:49.513" (a JUnit view wraps it in "{ failed …}").
_GINKGO_STAMP = r"[0-9]{2}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,3})?"
_GINKGO_STAMPED = rf" @ {_GINKGO_STAMP}\s*$"
_GINKGO_STEP = rf"^\s*STEP: .* @ {_GINKGO_STAMP}\s*$"
_GINKGO_REPORT_OPEN = r"^\s*(?:\{ failed )?\[(?:FAILED|PANICKED|TIMEDOUT)\] "
_GINKGO_REPORT_CLOSE = rf"^\s*In \[[A-Za-z]+\] at: \S+ @ {_GINKGO_STAMP}\s*$"
_GINKGO_RECORD = (
    rf"(?s)^(?<text>\s*(?:\{{ failed )?(?:\[(?<state>FAILED|PANICKED|TIMEDOUT)\] |STEP: )?.*?"
    rf"(?:In \[[A-Za-z]+\] at: (?<location>\S+))?) @ (?<stamp>{_GINKGO_STAMP})\s*$"
)


def _ginkgo_lines(records: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """A Ginkgo v2 step or failure report keeps its text without the stamp, timed by it; a failure is an error, a step
    info, and the report's location (the test's file and line) is kept in attrs as ``test_location``."""
    if not records.select(pl.col("body").str.contains(_GINKGO_STAMPED).any()).item():
        return records.with_columns(test_location=pl.lit(None, pl.String))
    ginkgo = pl.col("ginkgo").struct
    own = ginkgo.field("stamp").is_not_null() & ~pl.col("has_header") & pl.col("ts").is_null()
    parts = records.with_columns(ginkgo=pl.col("body").str.extract_groups(_GINKGO_RECORD))
    stamp_ts = timeutil.dated_to_utc(ginkgo.field("stamp"), "%m/%d/%y %H:%M:%S%.f", ctx.tz)
    severity = pl.when(ginkgo.field("state").is_not_null()).then(pl.lit("error")).otherwise(pl.lit("info"))
    return parts.with_columns(
        ts=pl.when(own).then(stamp_ts).otherwise(pl.col("ts")),
        ts_quality=pl.when(own).then(pl.lit("exact")).otherwise(pl.col("ts_quality")),
        ts_raw=pl.when(own).then(ginkgo.field("stamp")).otherwise(pl.col("ts_raw")),
        severity=pl.when(own).then(severity).otherwise(pl.col("severity")),
        body=pl.when(own).then(ginkgo.field("text").str.strip_chars()).otherwise(pl.col("body")),
        format=pl.when(own).then(pl.lit("ginkgo_v2")).otherwise(pl.col("format")),
        test_location=pl.when(own).then(ginkgo.field("location")),
    ).drop("ginkgo")


# The e2e framework's dump of an event (its dump.go klog; framework.Logf before it), one line per event of a namespace:
# "At 2024-07-12 15:49:58 +0000 UTC - event for POD: {kubelet NODE} Evicted: The node was low on resource: …".
# It prints the event's own time (Go's time.Time), minutes before the moment of the dump itself: the event happened
# then. Its offset makes it exact; the zone's name after it adds nothing.
_DUMPED_EVENT_HEAD = r"^At (?<when>(?<stamp>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+ [-+][0-9]{4}) \S+) - event for "
_DUMPED_EVENT = _DUMPED_EVENT_HEAD + r"(?<name>[a-z0-9][-a-z0-9.]*): \{(?<source>[^}]*)\} (?<reason>[0-9A-Za-z_]+): (?<message>.*)$"


def _dumped_event_time(records: pl.DataFrame) -> pl.DataFrame:
    """A dumped event's line takes the event's own time, not the moment the e2e framework logged it, and the node its
    source names as its host: "{kubelet NODE}", "{kernel-monitor NODE}" ("{default-scheduler }" names none)."""
    if not records.select(pl.col("body").str.starts_with("At ").any()).item():
        return records
    head = pl.col("body").str.extract_groups(_DUMPED_EVENT_HEAD + r"(?:[^:\s]+: \{[^ }]+ (?<node>[^ }]+)\} )?").struct
    own = head.field("stamp").str.to_datetime("%Y-%m-%d %H:%M:%S%.f %z", strict=False, time_unit="us").dt.convert_time_zone("UTC")
    dated = records.with_columns(own_ts=own, dumped_when=head.field("when"), dumped_node=head.field("node"))
    has_own = pl.col("own_ts").is_not_null()
    return dated.with_columns(
        host=pl.coalesce("dumped_node", "host"),
        ts=pl.when(has_own).then(pl.col("own_ts")).otherwise(pl.col("ts")),
        ts_raw=pl.when(has_own).then(pl.col("dumped_when")).otherwise(pl.col("ts_raw")),
        ts_quality=pl.when(has_own).then(pl.lit("exact")).otherwise(pl.col("ts_quality")),
    ).drop("own_ts", "dumped_when", "dumped_node")


# The year-less stamps of a klog header ("0912 11:53:05.724978", as ts_raw keeps it) and of the e2e framework
# ("Jul 31 13:58:14.575", "Feb  4 …").
_YEARLESS_RAW = (
    r"^(?:(?<month>[0-9]{2})(?<day>[0-9]{2})|(?<month_name>[A-Z][a-z]{2}) +(?<name_day>[0-9]{1,2})) "
    r"(?<clock>[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)$"
)
_YEARLESS_FORMATS = ("klog", "e2e_framework")


def _years_of_dated_lines(records: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """A klog or e2e framework stamp (no year) among lines of full date of the same file (Ginkgo v2's "@ 09/12/24 …",
    a dumped event's own time, a Go log stamp) takes the year that puts it nearest the dated line before it (else
    after it), where its year was the file mtime's: an e2e run's output states its year there, and the file's mtime may be
    years later."""
    dated = pl.col("ts_quality") == "exact"
    # Only a year guessed from the file's mtime gives way: one given (--year) or read from the file's lines stays.
    yearless = pl.col("format").is_in(_YEARLESS_FORMATS) & (pl.col("ts_quality") == "year_from_mtime") & pl.col("ts_raw").is_not_null()
    if not records.select(dated.any() & yearless.any()).item():
        return records
    within = within_file(records)
    near = pl.when(dated).then(pl.col("ts"))
    near = near.forward_fill().backward_fill()
    near = near.over(within) if within else near
    raw = pl.col("yearless").struct
    month = pl.coalesce(raw.field("month").cast(pl.Int32, strict=False), timeutil.month_number(raw.field("month_name")))
    day = pl.coalesce(raw.field("day"), raw.field("name_day"))
    parts = records.with_columns(near=near, yearless=pl.when(yearless).then(pl.col("ts_raw").str.extract_groups(_YEARLESS_RAW)))
    nearest = timeutil.nearest_year_to_utc(month, day, raw.field("clock"), pl.col("near"), ctx.tz)
    stated = parts.with_columns(nearest=pl.when(pl.col("near").is_not_null()).then(nearest))
    found = pl.col("nearest").is_not_null()
    return stated.with_columns(
        ts=pl.when(found).then(pl.col("nearest")).otherwise(pl.col("ts")),
        ts_quality=pl.when(found).then(pl.lit("year_inferred")).otherwise(pl.col("ts_quality")),
    ).drop("near", "yearless", "nearest")


def _records(framed: pl.DataFrame) -> pl.DataFrame:
    """One row per klog record; indented lines after a header are its continuation.

    Only the records of several lines are aggregated; the others pass as they are.
    """
    ginkgo = framed.select(pl.col("message").str.contains(_GINKGO_STAMPED).any()).item()
    if ginkgo:
        # Ginkgo indents a spec's output by two spaces, the klog lines it captured too, and the e2e framework's own
        # (before it logged through klog): they are records of their own.
        framed = framed.with_columns(
            pl.col("message").str.replace(
                r"^\s+([IWEF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}[.0-9]*\s+[0-9]+ |[A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}: )", "$1"
            )
        )
    header = head_groups(pl.col("message"), KLOG_HEAD, one_line=not holds_newline(framed["message"]))
    lines = framed.with_columns(klog=header, klog_json=pl.col("message").str.extract_groups(_JSON_LINE)).with_columns(
        has_header=pl.col("klog").struct.field("message").is_not_null(),
        body=pl.coalesce(pl.col("klog").struct.field("message"), _json_body(pl.col("klog_json").struct), pl.col("message")),
    )
    # A header with nothing after it ("main.go:314]") starts a message on the next line: the device plugin's
    # "\nRunning with config:\n{…}" runs, unindented, to the next header.
    opened_empty = pl.when(pl.col("has_header")).then(pl.col("body") == "").forward_fill()
    opened_empty = opened_empty.over(within) if (within := within_file(framed)) else opened_empty
    joined = pl.col("message").str.contains(r"^(?:\s|>$)") | opened_empty.fill_null(False)
    if ginkgo:
        joined = _ginkgo_joined(joined, within)
    continuation = ~pl.col("has_header") & joined & (pl.int_range(pl.len()) > 0) & ~starts_file(framed)
    grouped = lines.with_columns(record=(~continuation).cum_sum())
    opens = pl.col("record").ne_missing(pl.col("record").shift(1))
    several = grouped.select(~opens | ~opens.shift(-1, fill_value=True)).to_series()
    merged = grouped.filter(several).group_by("record", maintain_order=True).agg(
        pl.exclude("body", "message").first(),
        pl.col("body").str.join("\n"),
        pl.len().cast(pl.Int32).alias("n_lines"),
    )
    single = grouped.filter(~several).with_columns(n_lines=pl.lit(1, pl.Int32)).select(merged.columns)
    return pl.concat([merged, single]).sort("record")


def _ginkgo_joined(joined: pl.Expr, within: str | None) -> pl.Expr:
    """A Ginkgo v2 failure report runs from its opening state to its "In [It] at: … @ stamp", unindented lines (its
    "Expected …") too; each step and each report opens a record of its own, however Ginkgo indents it."""
    message = pl.col("message")
    opens = message.str.contains(_GINKGO_REPORT_OPEN)
    step = message.str.contains(_GINKGO_STEP)
    closed = message.str.contains(_GINKGO_REPORT_CLOSE).shift(1, fill_value=False)
    if within:
        closed = closed.over(within)
    in_report = pl.when(opens).then(True).when(closed | pl.col("has_header") | step).then(False).forward_fill()
    in_report = in_report.over(within) if within else in_report
    return (joined | in_report.fill_null(False)) & ~opens & ~step


def _json_body(json: pl.Expr) -> pl.Expr:
    """A JSON line's message and fields as the text format writes them (``"msg" pod="ns/name" exitCode=137``),
    so that one set of rules reads both; nested objects stay JSON, as the text format prints them too."""
    fields = json.field("fields").str.replace_all(_JSON_OBJECT_REF, '"${namespace}/${name}"').str.replace_all(_JSON_PAIR, " ${key}=${value}")
    return pl.format('"{}"{}', json.field("msg"), fields)


def _json_time(stamp: pl.Expr) -> pl.Expr:
    """The JSON format's "ts": epoch milliseconds (the KEP's examples show seconds, so small values are seconds)."""
    value = stamp.cast(pl.Float64, strict=False)
    micros = pl.when(value >= 1e11).then(value * 1e3).otherwise(value * 1e6).round()
    return micros.cast(pl.Int64, strict=False).cast(pl.Datetime("us", "UTC"))


def _resolve_header(records: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    k = pl.col("klog").struct
    j = pl.col("klog_json").struct
    is_json = j.field("msg").is_not_null()
    month = k.field("month").cast(pl.Int32, strict=False)
    klog_ts, klog_quality = timeutil.yearless_to_utc(month, k.field("day"), k.field("clock"), ctx, within=within_file(records))
    # An envelope of full date (journalctl -o json, short-iso) gives the klog stamp its year: the file's may be unknown.
    if records.select((pl.col("ts_quality") == "exact").any()).item():
        dated = pl.col("ts_quality") == "exact"
        klog_ts = pl.when(dated).then(timeutil.nearest_year_to_utc(month, k.field("day"), k.field("clock"), pl.col("ts"), ctx.tz)).otherwise(klog_ts)
        klog_quality = pl.when(dated).then(pl.lit("year_inferred")).otherwise(klog_quality)
    has_header = pl.col("has_header")
    # The klog stamp is the kubelet's own clock; the envelope's only stands in when the stamp
    # cannot be resolved (no year known) — journald's exact time is better than none.
    # A column, not an expression: it is read four times and an expression is evaluated per read.
    stamped = records.with_columns(klog_ts=klog_ts, json_ts=_json_time(j.field("ts"))).with_columns(klog_ts=_in_envelope_zone(pl.col("klog_ts")))
    use_klog = has_header & (pl.col("klog_ts").is_not_null() | pl.col("ts").is_null())
    # Inside an envelope of full date and zone (journalctl -o short-iso, RFC 5424) that agrees with it to the moment
    # journald took to receive the line, the klog stamp's year is no longer inferred: the envelope states it.
    confirmed = (pl.col("ts_quality") == "exact") & ((pl.col("klog_ts") - pl.col("ts")).abs() < pl.duration(minutes=2))
    # A JSON line's epoch stamp is exact, better than the envelope's year-less one.
    use_json = is_json & pl.col("json_ts").is_not_null()
    # The GPU operands print some lines with Go's log package between their klog ones: a full date, in the local zone.
    go_stamp = pl.when(~has_header & pl.col("ts").is_null()).then(pl.col("body").str.extract(_GO_LOG_STAMP, 1))
    stamped = stamped.with_columns(go_raw=go_stamp).with_columns(go_ts=timeutil.dated_to_utc(pl.col("go_raw"), "%Y/%m/%d %H:%M:%S", ctx.tz))
    use_go = pl.col("go_ts").is_not_null()
    return stamped.with_columns(
        ts=pl.when(use_klog).then(pl.col("klog_ts")).when(use_json).then(pl.col("json_ts")).when(use_go).then(pl.col("go_ts")).otherwise(pl.col("ts")),
        ts_quality=pl.when(use_klog & confirmed).then(pl.lit("exact")).when(use_klog).then(klog_quality)
        .when(use_json | use_go).then(pl.lit("exact")).otherwise(pl.col("ts_quality")),
        ts_raw=pl.when(use_klog)
        .then(pl.format("{}{} {}", k.field("month"), k.field("day"), k.field("clock")))
        .when(use_json)
        .then(j.field("ts"))
        .when(use_go)
        .then(pl.col("go_raw"))
        .otherwise(pl.col("ts_raw")),
        severity=pl.when(has_header)
        .then(k.field("severity").replace_strict(_SEVERITY_BY_LETTER, default=None))
        .when(is_json)
        .then(pl.when(j.field("v").is_not_null()).then(pl.lit("info")).otherwise(pl.lit("error")))
        .otherwise(pl.col("severity")),
        pid=pl.when(has_header).then(k.field("thread").cast(pl.Int64, strict=False)).otherwise(pl.col("pid")),
        caller=pl.coalesce(k.field("caller"), j.field("caller")),
        format=pl.col("format").fill_null(pl.when(is_json).then(pl.lit("klog_json")).otherwise(pl.lit("klog"))),
    ).drop("klog_ts", "json_ts", "go_ts", "go_raw")


# Go's standard log prefix (log.LstdFlags): "2024/05/22 06:06:01 Writing labels to output file …".
_GO_LOG_STAMP = r"^([0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}) "


def _in_envelope_zone(klog_ts: pl.Expr) -> pl.Expr:
    """The klog stamp (read in ``ctx.tz``) moved into the zone of the envelope that carries it.

    The kubelet and journald write the same local clock, but journalctl's banner (or a short-iso offset) may
    name a zone other than ``--tz``: the envelope's time then differs from the klog stamp by that zone's offset
    (whole quarter hours, at most 14 h) plus the moment journald took to receive the line.
    """
    gap = (pl.col("ts") - klog_ts).dt.total_seconds()
    quarters = (gap / 900).round()
    # A gap far from a whole offset is a late line (a stalled journald), not a zone: the stamp stays.
    zone = quarters.abs().is_between(1, 56) & ((gap - quarters * 900).abs() < 120)
    return pl.when(zone).then(klog_ts + pl.duration(seconds=quarters * 900)).otherwise(klog_ts)


# Lines that may carry an eviction, pressure or OOM fact; the rest only need pod fields,
# so the costlier rules run on this subset alone.
_NOTABLE = (
    r"(?i)evict|admit pod|admission denied|threshold|pressure|insufficient|node condition|observation|oom|exit_?code|victim|event occurred|xid"
    r"|unhealthy|noexecutetaintmanager|taint-eviction|devices to allocate|needs to allocate|allocation request for device|pre-allocated devices|devices unavailable"
    # (1.6-1.9: the kubelet's own GPU manager's admission failure, "requested number of GPUs unavailable. Requested: 4, …")
    r"|number of gpus unavailable"
    # (an event recorder's line before 1.20, whatever its reason: "Event(v1.ObjectReference{Kind:\"Pod\", …}): type: …")
    r"|objectreference\{"
    # (the e2e framework's dump of an event, whatever its reason: its object is the pod it names)
    r"|^at [^\n]* - event for "
    # (the e2e framework's report of a pod that failed, whatever its status reason)
    r"|\bfailed with reason: "
    # (a device the runtime or a DRA driver could not give a pod: its ResourceClaim unprepared, its CDI devices unresolved)
    r"|failed to prepare dynamic resources|container claim info state|unresolvable cdi devices"
    # (node-problem-detector's status with the events it sends, whatever their reason: TaskHung, KernelOops, DockerHung, …)
    r"|new status generated: &\{source:\S+ events:\[\{"
)

# NVIDIA's device plugin (a GPU operator operand) logs klog too, read by these rules: the NVML Xid event that
# takes a GPU out of the node's allocatable, and the resource it is taken from. A UUID an author shortened
# ("GPU-455e672a-...") keeps its hex part; one redacted ("GPU-XX-X-X-XX-XX") is none, the Xid and resource stay.
_GPU_UUID = r"(?:GPU|MIG)-[0-9a-fA-F-]*[0-9a-fA-F]\b"
_XID_CRITICAL = rf"XidCriticalError: Xid=(?<xid>[0-9]+) on Device=(?<uuid>{_GPU_UUID})?"
_DEVICE_UNHEALTHY = rf"'(?<resource>[^'\s]+)' device marked unhealthy: (?<uuid>{_GPU_UUID})?"
# The kubelet's device manager names the devices it asks a plugin to allocate to a container: structured (1.21+, V(4)
# since 1.26 with the pod and container) `"Making allocation request for device plugin" devices=[GPU-… GPU-…]
# resourceName="nvidia.com/gpu"` (the slice quoted, ["GPU-…","GPU-…"], by newer klog), before
# "Making allocation request for devices [GPU-…] for device plugin nvidia.com/gpu"; after a restart it finds those a
# container holds: "Found pre-allocated devices for resource on pod" … devices=[…]. It counts those a container still
# needs: "Need devices to allocate for pod" deviceNumber=1 resourceName=…, before `Needs to allocate 1 "nvidia.com/gpu"
# for pod "<uid>" container "c"`.
_ALLOCATED_DEVICES = (
    r'(?:^"(?:Making allocation request for device plugin|Found pre-allocated devices for resource on pod)" .*?\bdevices=|'
    r"\bMaking allocation request for devices )\[(?<devices>[^\]]*)\]"
)
_DEVICE_RESOURCE = (
    r'^"(?:Making allocation request for device plugin|Found pre-allocated devices for resource on pod|Need devices to allocate for pod)" '
    r'.*?\bresourceName="?(?<structured>[^"\s]+)'
    r'|\bMaking allocation request for devices \[[^\]]*\] for device plugin (?<legacy>\S+)'
    r'|\bNeeds to allocate [0-9]+ \\?"(?<needs>[^"\\]+)\\?"'
)
_DEVICES_NEEDED = r'^"Need devices to allocate for pod" .*?\bdeviceNumber=([0-9]+)|\bNeeds to allocate ([0-9]+) '


# What keeps a pod from its devices since DRA (1.29+: "Failed to prepare dynamic resources" err="…" pod="ns/name", the
# claim the kubelet then finds no state for, "Unable to get container claim info state" err="… for ResourceClaim <name>")
# and CDI (the runtime's "unresolvable CDI devices nvidia.com/gpu=…" in the error the kubelet logs): the failure, the DRA
# driver it names ("DRA driver <name> is not registered", "plugin name <name> not found in the list of registered DRA
# plugins", "failed to get gRPC client for driver <name>"), the claim ("for claim ns/name", "for ResourceClaim name",
# "not allowed to use resource claim name(uid)") and the CDI devices.
_DEVICE_FAILURES = (
    ("dra_prepare", r'^"Failed to prepare dynamic resources"'),
    ("dra_claim_info", r'^"Unable to get container claim info state"'),
    ("cdi_injection", r"\bunresolvable CDI devices "),
)
_DRA_DRIVER_NAMED = (
    r"\bDRA driver (?<registered>[a-z0-9][-a-z0-9.]*) is not registered"
    r"|\bplugin name (?<listed>[a-z0-9][-a-z0-9.]*) not found in the list of registered DRA plugins"
    r"|\bfailed to get gRPC client for driver (?<client>[a-z0-9][-a-z0-9.]*):"
)
_RESOURCE_CLAIM_NAMED = (
    r"\bfor claim (?<claim>[a-z0-9][-a-z0-9.]*/[a-z0-9][-a-z0-9.]*)\b"
    r"|\bfor ResourceClaim (?<resource_claim>[a-z0-9][-a-z0-9.]*(?:/[a-z0-9][-a-z0-9.]*)?)\b"
    r"|\bnot allowed to use resource claim (?<allowed>[a-z0-9][-a-z0-9.]*)\("
)
_CDI_DEVICES = r"\bunresolvable CDI devices ([^\s\\\"]+(?:, [^\s\\\"]+)*)"


def _device_failure_facts() -> list[pl.Expr]:
    """A DRA or CDI failure that keeps a pod from its devices: what failed, the driver, the claim, the CDI devices."""
    body = pl.col("body")
    failure = pl.lit(None, pl.String)
    for name, pattern in reversed(_DEVICE_FAILURES):
        failure = pl.when(body.str.contains(pattern)).then(pl.lit(name)).otherwise(failure)
    failed = pl.when(failure.is_not_null()).then(body)  # the patterns below read these rows alone
    driver = failed.str.extract_groups(_DRA_DRIVER_NAMED).struct
    claim = failed.str.extract_groups(_RESOURCE_CLAIM_NAMED).struct
    return [
        failure.alias("device_failure"),
        pl.coalesce(driver.field("registered"), driver.field("listed"), driver.field("client")).alias("dra_driver"),
        pl.coalesce(claim.field("claim"), claim.field("resource_claim"), claim.field("allowed")).alias("resource_claim"),
        failed.str.extract(_CDI_DEVICES, 1).alias("cdi_devices"),
    ]


def _classify(records: pl.DataFrame) -> pl.DataFrame:
    notable = records.select(pl.col("body").str.contains(_NOTABLE)).to_series()
    events = [_notable_events(records.filter(notable)), _plain_events(records.filter(~notable))]
    return pl.concat(events, how="diagonal").sort("line")


def _notable_events(records: pl.DataFrame) -> pl.DataFrame:
    facts = records.with_columns(_pod_facts()).with_columns(*_oom_facts(), *_recorded_event(), stage=_eviction_stage())
    facts = facts.with_columns(*_eviction_facts(), *_gpu_facts(), *_device_failure_facts())
    kind = (
        pl.when(pl.col("xid").is_not_null())
        .then(pl.lit("xid"))
        .when(pl.col("event_kind").is_not_null() & (pl.col("event_kind") != "log"))
        .then(pl.col("event_kind"))
        .when(pl.col("system_oom"))
        .then(pl.lit("oom_kill"))
        .when(pl.col("stage").is_not_null() & ~pl.col("stage").is_in(_CLEANUP_END_STAGES))
        .then(pl.lit("eviction"))
        .when(pl.col("oom_evidence").is_not_null())
        .then(pl.lit("container_oomkilled"))
        .when(pl.col("memory_pressure"))
        .then(pl.lit("memory_pressure"))
        .otherwise(pl.lit("log"))
    )
    # A ranked list names candidates, and a critical pod is one the manager may not evict: neither is
    # the pod evicted, so both stay in attrs only.
    single_pod = ~pl.col("stage").fill_null("").is_in(["ranked", "critical_pod_skipped"])
    return facts.with_columns(kind=kind, raised=raised_severity(pl.col("event_reason"), pl.col("body"))).select(
        "line",
        "n_lines",
        "kind",
        "ts",
        "ts_raw",
        "ts_quality",
        "format",
        "xid",
        "gpu_uuid",
        pl.col("body").alias("message"),
        # The kernel's kill recorded as an event of a Node (node-problem-detector's OOMKilling, the kubelet's SystemOOM) struck
        # that node, whose own component logged it: the node is the host a bare line names none for.
        host=pl.coalesce(
            pl.col("host"), pl.when(pl.col("kind") == "oom_kill").then(pl.col("event_object").str.extract(r"^Node/([^/\s]+)$", 1))
        ),
        # An Xid takes a GPU away whatever level the plugin logged it at: the catalog's severity, as the kernel's.
        severity=pl.when(pl.col("kind") == "xid")
        .then(_xid.report_severity(pl.col("xid"), pl.col("body")))
        # A Job failed as a whole (kube-controller-manager's klog, read by these rules), a pod rejected for devices the
        # kubelet counted, a container the runtime could not create: an error, not the Warning it is sent as; a pod no
        # scale-up will place (cluster-autoscaler's klog): a warning, not the Normal event it is. (The kubelet's own
        # UnexpectedAdmissionError line stays the Warning it records: the pod's status and event say the error.)
        # A dumped event is the Event itself, as `kubectl get events` lists it: its raised severity stands.
        .when(
            pl.col("raised").is_not_null()
            & ((pl.col("event_reason") != "UnexpectedAdmissionError") | pl.col("body").str.starts_with("At ") | pl.col("failed_pod"))
        )
        .then(pl.col("raised"))
        # The recorder logs every event it sends at info: a Warning event is a warning.
        .when((pl.col("event_type") == "Warning") & (pl.col("severity") == "info"))
        .then(pl.lit("warning"))
        .otherwise(pl.col("severity")),
        # An Xid's process is the one that faulted (the kernel's Xid names it), not the device plugin that reports it.
        pid=pl.when(pl.col("kind") == "oom_kill").then(pl.col("victim_pid")).when(pl.col("kind") != "xid").then(pl.col("pid")),
        # The device plugin's lines are not the kubelet's, whatever program a bare file was read as.
        process=pl.when(pl.col("kind") == "oom_kill")
        .then(pl.col("victim_process"))
        .when(pl.col("xid").is_null() & pl.col("gpu_resource").is_null())
        .then(pl.col("program")),
        rss_bytes=pl.when(pl.col("kind") == "oom_kill").then(pl.col("victim_rss")),
        pod=pl.when(single_pod).then(pl.coalesce("pod", "event_pod")),
        namespace=pl.when(single_pod).then(pl.coalesce("namespace", "event_namespace")),
        pod_uid=pl.when(single_pod).then(pl.coalesce(pl.col("pod_uid"), memcg_pod_uid(pl.col("victim_cgroup")))),
        container=pl.coalesce("container", "oom_container", pl.col("evicted").struct.field("container")),
        container_id=pl.coalesce("oom_container_id", "container_id", memcg_container_id(pl.col("victim_cgroup"))),
        cgroup="victim_cgroup",
        exit_code=pl.col("exit_code").cast(pl.Int32, strict=False),
        mem_used_bytes=pl.col("evicted").struct.field("used_bytes"),
        mem_requested_bytes=pl.col("evicted").struct.field("requested_bytes"),
        attrs=attrs_json(_attr_fields()),
    )


def _plain_events(records: pl.DataFrame) -> pl.DataFrame:
    """Events of records no OOM, eviction or event-recorder rule can match: pod fields only."""
    return records.with_columns(_pod_facts()).select(
        "line", "n_lines", kind=pl.lit("log"), ts="ts", ts_raw="ts_raw", ts_quality="ts_quality", host="host", severity="severity",
        format="format", message="body", pid="pid", process="program", pod="pod", namespace="namespace", pod_uid="pod_uid",
        container="container", container_id="container_id", cgroup=pl.lit(None, pl.String), exit_code=pl.lit(None, pl.Int32),
        mem_used_bytes=pl.lit(None, pl.Int64), mem_requested_bytes=pl.lit(None, pl.Int64),
        attrs=attrs_json({name: value for name, value in _attr_fields().items() if name in _PLAIN_ATTRS}),
    )


def _unchopped(body: pl.Expr) -> pl.Expr:
    """The body without a field that `systemctl status` (less -S) chopped at the terminal's width, marking the cut
    with ">": ``pod="openshift-marketplace/cert>`` names no pod. A whole value may end with ">" only after its "<"
    (``err=<nil>``, ``pod <ns/name>``)."""
    return pl.when(body.str.ends_with(">")).then(body.str.replace(_CHOPPED_FIELD, "")).otherwise(body)


def _pod_facts() -> list[pl.Expr]:
    """Pod, container and PLEG fields that any kubelet message may carry."""
    body = _unchopped(pl.col("body"))
    slash = body.str.extract_groups(_SLASH_POD).struct
    under = body.str.extract_groups(UNDERSCORE_POD_REF).struct
    listed = pl.when(body.str.contains("pods=[", literal=True)).then(body).str.extract_groups(_ONE_POD_LIST).struct
    labeled = pl.when(body.str.contains(_CRI_LABELS, literal=True)).then(body)
    # Older kubelets quote a container by its runtime id as often as by its name: `the terminated container "<64 hex>"`.
    quoted = body.str.extract(r'\bcontainer "([a-z0-9][-a-z0-9.]*)"', 1)
    quoted_is_id = quoted.str.contains(r"^[0-9a-f]{64}$").fill_null(False)

    def label(key: str) -> pl.Expr:
        return labeled.str.extract(_CRI_LABEL.format(key.replace(".", r"\.")), 1)

    return [
        pl.coalesce(
            slash.field("pod"), under.field("pod"), slash.field("job_pod"), slash.field("taint_pod"), listed.field("pod"), label("pod.name"), body.str.extract(_POD_NAME_ONLY, 1)
        ).alias("pod"),
        pl.coalesce(
            slash.field("namespace"), under.field("namespace"), slash.field("job_namespace"), slash.field("taint_namespace"), listed.field("namespace"),
            label("pod.namespace"),
        ).alias("namespace"),
        pl.coalesce(body.str.extract(_POD_UID, 1), body.str.extract(_EVENT_POD_UID, 1), under.field("pod_uid"), label("pod.uid")).alias("pod_uid"),
        pl.coalesce(
            # Structured klog names it containerName= or (kuberuntime's own lines) container=; a
            # container name is a DNS label, which keeps out older lines' "container=&Container{…}".
            body.str.extract(r'\bcontainer(?:Name)?="?([a-z0-9][-a-z0-9]*)(?:"|\s|$)', 1),
            pl.when(~quoted_is_id).then(quoted),
            # The event recorder's object reference names the container by its field path:
            # fieldPath="spec.containers{c}" (structured), FieldPath:"spec.initContainers{init}" (before 1.20).
            pl.when(body.str.contains("ieldPath", literal=True))
            .then(body)
            .str.extract(r'\b[Ff]ieldPath[=:]"spec\.(?:initC|c|ephemeralC)ontainers\{([a-z0-9][-a-z0-9.]*)\}"', 1),
            label("container.name"),
            body.str.extract(SYNC_ERROR_CONTAINER, 1),
        ).alias("container"),
        pl.coalesce(body.str.extract(_CONTAINER_ID, 1), labeled.str.extract(_CRI_CONTAINER_ID, 1), pl.when(quoted_is_id).then(quoted))
        .alias("container_id"),
        body.str.extract(r'"SyncLoop \(PLEG\): event for pod".*?\bType"?:"?([0-9A-Za-z_]+)', 1).alias("pleg_event"),
        _failed_probe(body).alias("probe_failed"),
        # A container in a crash loop: the kubelet waits this long ("5m0s", the cap) before restarting it again.
        pl.when(body.str.contains("CrashLoopBackOff", literal=True)).then(body)
        .str.extract(r'with CrashLoopBackOff: \\*"[Bb]ack-off ([0-9hms.]+) restarting failed container', 1).alias("back_off"),
    ]


# A container's probe that failed (named in attrs; the line keeps the info level the kubelet logs it at, though it records
# a Warning "Unhealthy" event for it):
# "Probe failed" probeType="Liveness" … (1.20+; "Probe errored" when it could not run), the sync loop's "SyncLoop (probe)"
# probe="readiness" status="not ready" ("unhealthy" for liveness and startup), and before 1.20
# `Liveness probe for "pod_ns(uid):container" failed (failure): …`.
_FAILED_PROBE = (
    r'^"Probe (?:failed|errored)" .*?\bprobeType="?(?<structured>[A-Za-z]+)'
    r'|^"SyncLoop \(probe\)" probe="(?<sync>[a-z]+)" status="(?:unhealthy|not ready)"'
    r'|^(?<legacy>Liveness|Readiness|Startup) probe for "[^"]*" (?:failed|errored)\b'
)


def _failed_probe(body: pl.Expr) -> pl.Expr:
    """The kind of a probe a line says failed ("liveness", "readiness", "startup"), else null."""
    found = body.str.extract_groups(_FAILED_PROBE).struct
    return pl.coalesce(found.field("structured"), found.field("sync"), found.field("legacy")).str.to_lowercase()


def _oom_facts() -> list[pl.Expr]:
    """Container OOM kills (status patches, exit 137) and the system OOMs the kubelet reports."""
    body = pl.col("body")
    status = body.str.replace_all(r'\\+"', '"')
    last_state = status.str.extract_groups(
        r'"lastState":\{"terminated":\{(?<block>[^{}]*"reason":"OOMKilled"[^{}]*)\}\},"name":"(?<name>[^"]+)"'
    ).struct
    state = status.str.extract_groups(
        r'"name":"(?<name>[^"]+)"[^{}]*"state":\{"terminated":\{(?<block>[^{}]*"reason":"OOMKilled"[^{}]*)\}'
    ).struct
    oom_block = pl.coalesce(last_state.field("block"), state.field("block"))
    exit_code = pl.coalesce(
        oom_block.str.extract(r'"exitCode":(-?[0-9]+)', 1),
        status.str.extract(r'(?i)\bexit[ _]?code"?\s*[=:]\s*"?(-?[0-9]+)', 1),
    ).cast(pl.Int64, strict=False)
    died = body.str.contains(r"(?i)container finished|ContainerDied|containerStatuses")
    # Infof("Got sys oom event: %v") of the cAdvisor OomInstance prints its fields without names.
    positional = body.str.extract_groups(r"sys oom event:? &\{(?<pid>[0-9]+) (?<process>[^\s}]+)").struct
    # The SystemOOM event's "victim process: x, pid: n", or the kernel's kill line node-problem-detector quotes.
    victim = oom_victim(body).struct
    return [
        pl.coalesce(
            last_state.field("name"),
            state.field("name"),
            body.str.extract(r'(?i)\bcontainer "?([a-z0-9][-a-z0-9.]*)"? (?:in pod \S+ )?(?:was |is )?OOM ?Killed', 1),
        ).alias("oom_container"),
        oom_block.str.extract(r'"containerID":"(?:[a-z-]+://)?([0-9a-f]{12,64})"', 1).alias("oom_container_id"),
        exit_code.alias("exit_code"),
        pl.when(status.str.contains(r"OOM ?Killed"))
        .then(pl.lit("reason_oomkilled"))
        .when(died & (exit_code == 137))
        .then(pl.lit("exit_code_137"))
        .alias("oom_evidence"),
        body.str.contains(r"(?i)got sys oom event|system oom encountered").alias("system_oom"),
        pl.coalesce(body.str.extract(r"\bPid:([0-9]+)", 1).cast(pl.Int64), positional.field("pid").cast(pl.Int64), victim.field("pid"))
        .alias("victim_pid"),
        pl.coalesce(body.str.extract(r"\bProcessName:([^\s,}]+)", 1), positional.field("process"), victim.field("process")).alias(
            "victim_process"
        ),
        victim.field("rss_bytes").alias("victim_rss"),
        # cAdvisor's Infof("Created an OOM event in container %q at %v") names a memory cgroup of the OOM: the killed task's
        # (oom-kill:…,task_memcg=), or on kernels before 4.19 that of the task or of the limit, as cAdvisor's release reads them.
        pl.coalesce(
            body.str.extract(r"\bVictimContainerName:([^\s,}]+)", 1), body.str.extract(r'\bCreated an OOM event in container "([^"]+)"', 1)
        ).alias("victim_cgroup"),
    ]


def _gpu_facts() -> list[pl.Expr]:
    """The device plugin's Xid and unhealthy-device lines: Xid, GPU UUID, the resource name."""
    xid = pl.col("body").str.extract_groups(_XID_CRITICAL).struct
    unhealthy = pl.col("body").str.extract_groups(_DEVICE_UNHEALTHY).struct
    devices = _allocated_devices(pl.col("body"))
    # The first GPU (or MIG slice) allocated is the event's GPU; the list stays in attrs, whatever a plugin names its devices.
    first_gpu = devices.list.eval(pl.element().filter(pl.element().str.contains(rf"^{_GPU_UUID}$"))).list.first()
    resource = pl.col("body").str.extract_groups(_DEVICE_RESOURCE).struct
    needed = pl.col("body").str.extract_groups(_DEVICES_NEEDED).struct
    # A device admission failure (its event, "Pod admission denied", the device manager's error) counts the devices.
    admission = admission_devices(pl.col("body")).struct
    return [
        # kube-scheduler's "Unable to schedule pod; no fit; waiting" … err="0/8 nodes are available: 8 Insufficient nvidia.com/gpu."
        # and the FailedScheduling event it records: the resources no node had enough of.
        insufficient_resources(pl.col("body")).alias("insufficient"),
        admission.field("resource").alias("admission_resource"),
        admission.field("requested").alias("devices_requested"),
        admission.field("available").alias("devices_available"),
        xid.field("xid").cast(pl.Int32, strict=False).alias("xid"),
        pl.coalesce(xid.field("uuid"), unhealthy.field("uuid"), first_gpu).alias("gpu_uuid"),
        unhealthy.field("resource").alias("gpu_resource"),
        devices.alias("devices"),
        pl.coalesce(resource.field("structured"), resource.field("legacy"), resource.field("needs")).alias("device_resource"),
        pl.coalesce(needed.field("1"), needed.field("2")).cast(pl.Int64, strict=False).alias("devices_needed"),
    ]


def _allocated_devices(body: pl.Expr) -> pl.Expr:
    """The device ids of a device manager's allocation line, in its order: "[a b]", or '["a","b"]' of newer klog."""
    listed = body.str.extract(_ALLOCATED_DEVICES, 1)
    ids = listed.str.extract_all(r'[^\s",\[\]]+')
    return pl.when(ids.list.len() > 0).then(ids)


# The scheduler's events, whatever scheduler sends them ("{default-scheduler }", a second profile's name): each is about a pod.
_SCHEDULER_REASONS = ("Scheduled", "FailedScheduling", "Preempted")
_ASSIGNED_POD = r"^Successfully assigned ([a-z0-9][-a-z0-9]*)/([a-z0-9][-a-z0-9.]*) to "
# The e2e framework's error for a pod that failed while it waited for it to run or succeed, quoting the pod's status reason
# and message ("pod %q failed with reason: %q, message: %q"); Gomega's dump of the error (its s: "…") escapes the quotes.
_FAILED_POD = (
    r'\bpod \\?"(?<pod>[a-z0-9][-a-z0-9.]*)\\?" failed with reason: \\?"(?<reason>[0-9A-Za-z_]+)\\?"(?:, message: \\?"(?<message>[^\n]*))?'
)


def _recorded_event() -> list[pl.Expr]:
    """What the kubelet's event recorder logs: the Event's kind, pod and namespace.

    Structured (1.20+): ``"Event occurred" object="ns/pod" kind="Pod" … reason="Evicted" message="…"``;
    before: ``Event(v1.ObjectReference{Kind:"Pod", Namespace:"ns", Name:"pod", …}): type: 'Warning' reason: 'Evicted' …``
    (``api.ObjectReference`` in 1.3-1.5, before the v1 client types).
    node-problem-detector's klog, parsed by these rules too, logs the node events it is about to send:
    ``New status generated: &{Source:kernel-monitor Events:[{Severity:warn Timestamp:… Reason:OOMKilling Message:…}] …}``.
    """
    structured = pl.col("body").str.extract_groups(
        r'"Event occurred" object="(?<object>[^"]*)".*?\bkind="(?<kind>[0-9A-Za-z_]+)"(?:.*?\btype="(?<type>[A-Za-z]+)")?'
        r'.*?\breason="(?<reason>[0-9A-Za-z_]+)"(?: message="(?<message>.*?)"?\s*$)?'
    ).struct
    legacy = pl.col("body").str.extract_groups(
        r'Event\((?:v1|api)\.ObjectReference\{Kind:"(?<kind>[0-9A-Za-z_]+)", Namespace:"(?<namespace>[^"]*)", Name:"(?<name>[^"]*)".*?\}\):'
        r" type: '(?<type>[A-Za-z]+)' reason: '(?<reason>[0-9A-Za-z_]+)' ?(?<message>.*)$"
    ).struct
    dumped = pl.col("body").str.extract_groups(_DUMPED_EVENT).struct
    detector = pl.col("body").str.extract_groups(
        _syslog.NPD_STATUS + r"(?<message>[^}]*)\}"
    ).struct
    # The kubelet's own line for a pod it rejects at admission (1.22+), which it records as a Warning event of that
    # reason and message: "Pod admission denied" podUID=… pod="ns/name" reason="UnexpectedAdmissionError" message="…".
    denied = pl.col("body").str.extract_groups(
        r'^"Pod admission denied" .*?\breason="(?<reason>[0-9A-Za-z_./-]+)"(?: message="(?<message>.*?)"?\s*$)?'
    ).struct
    failed = pl.col("body").str.extract_groups(_FAILED_POD).struct
    parts = (structured, legacy, dumped, detector, denied, failed)
    reason = pl.coalesce(*(part.field("reason") for part in parts))
    message = pl.coalesce(*(part.field("message") for part in parts))
    kind_of_event = event_kind(reason, message.fill_null(""))
    # The dump names no kind: a kubelet's event is about a pod, or about its own node (named as the source's host); a
    # scheduler's is about the pod it placed or could not place.
    by_kubelet = dumped.field("source").str.starts_with("kubelet") & (dumped.field("name") != dumped.field("source").str.extract(r"\s(\S+)$", 1))
    by_scheduler = dumped.field("reason").is_in(_SCHEDULER_REASONS)
    object_kind = pl.coalesce(
        structured.field("kind"), legacy.field("kind"), pl.when(by_kubelet | by_scheduler | failed.field("pod").is_not_null()).then(pl.lit("Pod"))
    )
    on_pod = object_kind == "Pod"
    # An object an author replaced with a placeholder ("<namespace>/<podname>") names no pod.
    named = (
        pl.coalesce(structured.field("object"), legacy.field("name"), dumped.field("name"), failed.field("pod")).str.contains("<", literal=True).not_()
    )
    return [
        pl.when(reason.is_not_null()).then(kind_of_event).alias("event_kind"),
        reason.alias("event_reason"),
        pl.coalesce(
            structured.field("type"),
            legacy.field("type"),
            pl.when(denied.field("reason").is_not_null()).then(pl.lit("Warning")),
            # node-problem-detector sends a "warn" event as a Warning (an "info" one as Normal).
            pl.when(detector.field("severity") == "warn").then(pl.lit("Warning")),
            # The dump prints no type; an eviction or OOM event, or a pod no node fits, is only ever sent as a Warning.
            pl.when(dumped.field("reason").is_not_null() & ((kind_of_event != "log") | (reason == "FailedScheduling"))).then(
                pl.lit("Warning")
            ),
        ).alias("event_type"),
        pl.when(on_pod & named)
        .then(
            pl.coalesce(
                structured.field("object").str.extract(r"/(.+)$", 1), legacy.field("name"), dumped.field("name"), failed.field("pod")
            )
        )
        .alias("event_pod"),
        # The e2e framework's report of a failed pod quotes the pod's own status: its reason is the pod's failure.
        failed.field("pod").is_not_null().alias("failed_pod"),
        # Any namespaced object names its namespace (a Job's BackoffLimitExceeded the job's); a node has none.
        pl.when(named)
        .then(
            pl.coalesce(
                structured.field("object").str.extract(r"^([^/]+)/", 1),
                legacy.field("namespace").replace("", None),
                # a dumped Scheduled event names the pod it placed with its namespace: "Successfully assigned ns/pod to node"
                pl.when(dumped.field("message").str.extract(_ASSIGNED_POD, 2) == dumped.field("name")).then(
                    dumped.field("message").str.extract(_ASSIGNED_POD, 1)
                ),
            )
        )
        .alias("event_namespace"),
        # Any other object (a Job, a Node) is named in attrs as "Kind/name".
        pl.when(named & ~on_pod)
        .then(pl.format("{}/{}", object_kind, pl.coalesce(structured.field("object").str.extract(r"([^/]+)$", 1), legacy.field("name"))))
        .alias("event_object"),
    ]


def _eviction_stage() -> pl.Expr:
    """Which step of the eviction manager's cycle a line reports, if any."""
    stage = pl.lit(None, pl.String)
    for name, pattern in reversed(_EVICTION_STAGES):
        stage = pl.when(pl.col("body").str.contains(pattern)).then(pl.lit(name)).otherwise(stage)
    return stage


def _eviction_facts() -> list[pl.Expr]:
    """Fields of the eviction manager's and memory-pressure lines (``stage`` is a column already)."""
    body = pl.col("body")
    stage = pl.col("stage")
    pods_list = pl.coalesce(
        body.str.extract(r'\bpods="?\[([^\]]*)\]', 1),
        body.str.extract(r"(?i)ranked for eviction: (.*)$", 1),
        body.str.extract(r"(?i)\bpods (.*?) evicted, waiting", 1),
    )
    signal = body.str.extract(r'\bsignal="?([0-9A-Za-z_.]+)"?', 1)
    conditions = body.str.extract(r"(?i)(?:node ha(?:s|d) conditions?: |nodeConditions?=|node conditions - [0-9A-Za-z_ ]+: )\[([^\]]*)\]", 1)
    threshold = quantity_bytes(body.str.extract(rf'\bquantity="?({QUANTITY})"?', 1))
    observed = quantity_bytes(
        pl.coalesce(body.str.extract(rf"\bobserved ({QUANTITY})\b", 1), body.str.extract(rf'\bavailable="({QUANTITY})"', 1))
    )
    is_threshold = body.str.contains(r"(?i)eviction manager:?.*threshold") & threshold.is_not_null()
    memory_signal = signal.str.contains(r"(?i)memory").fill_null(False)
    # Only the eviction manager's figures are a signal's: an admission denial's "capacity: 8" counts devices.
    of_eviction = body.str.contains(r"(?i)evict|threshold|signal=|observation")
    return [
        pl.when(stage.is_in(["reclaim_attempt", "must_evict"]))
        .then(pl.coalesce(body.str.extract(r'\bresourceName="?([0-9A-Za-z_./-]+)"?', 1), body.str.extract(r"(?i)reclaim ([0-9A-Za-z_./-]+)", 1)))
        .alias("resource"),
        pl.when(stage.is_in(["ranked", *_CLEANUP_STAGES])).then(_pod_list(pods_list)).alias("pods"),
        pl.when(stage.is_in(["ranked", *_CLEANUP_STAGES]))
        .then(pods_list.str.extract_all(r"\(([0-9a-fA-F-]{8,36})\)").list.eval(pl.element().str.strip_chars("()")))
        .alias("pod_uids"),
        conditions.str.extract_all(r"[A-Za-z]+").alias("conditions"),
        signal.alias("signal"),
        threshold.alias("threshold"),
        observed.alias("observed"),
        pl.when(of_eviction).then(quantity_bytes(body.str.extract(rf'\bavailable[=:]\s*"?({QUANTITY})"?', 1))).alias("available"),
        pl.when(of_eviction).then(quantity_bytes(body.str.extract(rf'\bcapacity[=:]\s*"?({QUANTITY})"?', 1))).alias("capacity"),
        body.str.extract(r"\btime[=:]\s*\"?([0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)? [+-][0-9]{4})", 1).alias("observed_at"),
        (
            (is_threshold & memory_signal)
            | conditions.str.contains("MemoryPressure").fill_null(False)
            | body.str.contains(r"NodeHasInsufficientMemory")
        ).alias("memory_pressure"),
        pl.when(
            body.str.contains(
                r'(?i)\bevicting pod\b|"Event occurred".*\breason="Evicted"|\breason: \'Evicted\' |^At .* - event for \S+: \{[^}]*\} Evicted: '
                r'|\bfailed with reason: \\?"Evicted\\?"'
            )
        )
        .then(eviction_fields(body))
        .alias("evicted"),
    ]


def _pod_list(text: pl.Expr) -> pl.Expr:
    """'ns/a ns/b', '"ns/a","ns/b"' or 'a_ns(uid), b_ns(uid)' as a list of 'ns/name'."""
    slash = text.str.extract_all(r"[a-z0-9][-a-z0-9]*/[a-z0-9][-a-z0-9.]*")
    under = text.str.extract_all(UNDERSCORE_POD_REF).list.eval(pl.element().str.replace(UNDERSCORE_POD_REF, "$namespace/$pod"))
    return pl.when(slash.list.len() > 0).then(slash).otherwise(under)


# The attrs a record without OOM, eviction or event facts can have (the others are null there).
_PLAIN_ATTRS = ("caller", "structured", "pleg_event", "back_off", "probe_failed", "test_location")


def _attr_fields() -> dict[str, pl.Expr]:
    byte_signal = pl.col("signal").is_null() | ~pl.col("signal").str.contains(r"(?i)inodes|pid")
    evicted = pl.col("evicted").struct
    return {
        "caller": pl.col("caller"),
        "structured": pl.when(pl.col("body").str.starts_with('"')).then(pl.lit(True)),
        "eviction_stage": pl.col("stage"),
        "reason": pl.col("event_reason"),
        "object": pl.col("event_object"),
        "resource": pl.coalesce(
            pl.col("resource"),
            evicted.field("resource"),
            pl.col("gpu_resource"),
            pl.col("device_resource"),
            pl.col("admission_resource"),
            insufficient_resource(pl.col("insufficient")),
        ),
        "insufficient_resources": pl.col("insufficient"),
        "devices": pl.col("devices"),
        "devices_requested": pl.col("devices_requested"),
        "devices_available": pl.col("devices_available"),
        "devices_needed": pl.col("devices_needed"),
        "device_failure": pl.col("device_failure"),
        "dra_driver": pl.col("dra_driver"),
        "resource_claim": pl.col("resource_claim"),
        "cdi_devices": pl.col("cdi_devices"),
        "ranked_pods": pl.when(pl.col("stage") == "ranked").then(pl.col("pods")),
        "critical_pod": pl.when(pl.col("stage") == "critical_pod_skipped").then(
            pl.format("{}/{}", pl.coalesce("namespace", "event_namespace"), pl.coalesce("pod", "event_pod"))
        ),
        "evicted_pods": pl.when(pl.col("stage").is_in(_CLEANUP_STAGES)).then(pl.col("pods")),
        "pod_uids": pl.when(pl.col("pod_uids").list.len() > 0).then(pl.col("pod_uids")),
        "conditions": pl.when(pl.col("conditions").list.len() > 0).then(pl.col("conditions")),
        "signal": pl.col("signal"),
        "threshold_bytes": pl.when(byte_signal).then(pl.coalesce(pl.col("threshold"), evicted.field("threshold_bytes"))),
        "observed_bytes": pl.when(byte_signal).then(pl.col("observed")),
        "available_bytes": pl.when(byte_signal).then(pl.coalesce(pl.col("available"), evicted.field("available_bytes"))),
        **storage_attrs(pl.col("evicted")),
        "capacity_bytes": pl.when(byte_signal).then(pl.col("capacity")),
        "threshold_count": pl.when(~byte_signal).then(pl.col("threshold")),
        "available_count": pl.when(~byte_signal).then(pl.col("available")),
        "capacity_count": pl.when(~byte_signal).then(pl.col("capacity")),
        "observed_at": pl.col("observed_at"),
        "oom_evidence": pl.col("oom_evidence"),
        "pleg_event": pl.col("pleg_event"),
        "back_off": pl.col("back_off"),
        "probe_failed": pl.col("probe_failed"),
        "test_location": pl.col("test_location"),
        "klog_pid": pl.when(pl.col("system_oom")).then(pl.col("pid")),
        "reporter_pid": pl.when(pl.col("kind") == "xid").then(pl.col("pid")),
        "health": pl.when(pl.col("xid").is_not_null() | pl.col("gpu_resource").is_not_null()).then(pl.lit("unhealthy")),
        **_xid.catalog_attrs(pl.col("xid")),
    }


SOURCE = register(
    Source(
        name="kubelet",
        sniff=sniff,
        sniff_heads=sniff_heads,
        parse=parse,
        # (the e2e framework's levels after its stamp: a file of its lines alone names no .go file nor the kubelet)
        sniff_literals=(".go:", "kubelet", "k3s", "kubelite", "STEP: ", *(f": {level}: " for level in _SEVERITY_BY_E2E_LEVEL)),
        formats=("klog", "klog_json", "e2e_framework", "ginkgo_v2", "syslog", "syslog_iso", "syslog_bare", "journal_json"),
        line_local=True,
        segmented=True,
    )
)

# The other components' journal lines ("kube-scheduler[6154]: I0612 …") are klog as well.
for _program in KLOG_PROGRAMS:
    _syslog.register_program(_program, "kubelet", klog_rules)
