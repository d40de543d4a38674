"""Kubernetes vocabulary shared by the kubelet and k8s sources.

Resource quantities ("1275700Ki", "15Gi", "-2097758044639028Ki"), pod references as the
kubelet and kubectl print them ("ns/name", "name_ns(uid)"), the kubelet's eviction
message, and the attrs JSON builder. All of it works on whole columns.
"""

from __future__ import annotations

import polars as pl

from rca.sources._base import evaluated_once

QUANTITY = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?(?:[KMGTPE]i|[kKMGTPEm])?"

_QUANTITY_PARTS = r"^(?<number>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)(?<unit>[KMGTPE]i|[kKMGTPEm])?B?$"

_UNIT_FACTORS: dict[str, int] = {
    "": 1,
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
    "Pi": 1 << 50,
    "Ei": 1 << 60,
    "k": 10**3,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}

_INT64_LIMIT = 9.2e18

# Pod and namespace names are DNS labels, so "_" separates them unambiguously.
UNDERSCORE_POD_REF = r"(?<pod>[a-z0-9][-a-z0-9.]*)_(?<namespace>[a-z0-9][-a-z0-9]*)\((?<pod_uid>[0-9a-fA-F-]{8,36})\)"
SLASH_POD_REF = r"^(?<namespace>[a-z0-9][-a-z0-9]*)/(?<pod>[a-z0-9][-a-z0-9.]*)$"

EVICTION_MESSAGE = "The node was low on resource"


def quantity_bytes(text: pl.Expr) -> pl.Expr:
    """A Kubernetes quantity ("87608Ki", "15Gi", "100M", "-3Ki", "1.5Gi") as an Int64 count.

    Integers are multiplied exactly (Int128), so huge and negative values survive;
    anything that is not a quantity, or does not fit in Int64, is null.
    """
    def converted(parts: pl.Expr) -> pl.Expr:
        number = parts.struct.field("number")
        unit = parts.struct.field("unit").fill_null("")
        factor = unit.replace_strict(_UNIT_FACTORS, default=None, return_dtype=pl.Int64)
        exact = (number.cast(pl.Int128, strict=False) * factor.cast(pl.Int128)).cast(pl.Int64, strict=False)
        scale = pl.when(unit == "m").then(pl.lit(1e-3)).otherwise(factor.cast(pl.Float64))
        approx = (number.cast(pl.Float64, strict=False) * scale).round()
        approx_int = pl.when(approx.abs() < _INT64_LIMIT).then(approx).cast(pl.Int64, strict=False)
        return pl.coalesce(exact, approx_int)

    return evaluated_once(text.str.strip_chars().str.extract_groups(_QUANTITY_PARTS), converted)


# The kubelet's evictions for a local storage limit (not node pressure): a container's, the pod's total, an emptyDir's
# ("Container app exceeded its local ephemeral storage limit "20Mi".", "Pod ephemeral local storage usage exceeds the
# total limit of containers 5Mi.", "Usage of EmptyDir volume "cache" exceeds the limit "1Gi"."), alone or in the message="…"
# of the kubelet's "Evicting pod" line.
_LOCAL_STORAGE_LIMIT = (
    r"exceeded its local ephemeral storage limit|\bPod ephemeral local storage usage exceeds|\bUsage of EmptyDir volume .* exceeds the limit"
)

# The limit such an eviction quotes: the container's ("limit "20Mi"."), the pod's total ("containers 5Mi."), an emptyDir's.
# (A kubelet's structured line quotes the message, its quotes escaped: limit \"1Gi\".)
_LOCAL_STORAGE_LIMIT_FIGURE = rf'(?:local ephemeral storage limit|total limit of containers|exceeds the limit) \\?"?({QUANTITY})'


def eviction_fields(message: pl.Expr) -> pl.Expr:
    """Fields of the kubelet's eviction message, as a struct.

    "The node was low on resource: memory. [Threshold quantity: 100Mi, available: 87608Ki.]
    Container X was using 1275700Ki, which exceeds its request of 0." — and the newer
    "request is 15Gi, has larger consumption of memory." wording. The EvictionThresholdMet
    event's "Attempting to reclaim memory" names the resource too. A container's usage and
    request are memory figures only where the resource is memory (or not named): an
    ephemeral-storage eviction's are disk (``storage_*_bytes``), with the limit a local
    storage eviction quotes.
    """
    resource = pl.coalesce(
        message.str.extract(r"low on resource: ([0-9A-Za-z_./-]+?)\.?(?:\s|$)", 1),
        message.str.extract(r"^Attempting to reclaim ([0-9A-Za-z_./-]+)$", 1),
        pl.when(message.str.contains(_LOCAL_STORAGE_LIMIT)).then(pl.lit("ephemeral-storage")),
    )
    of_memory = resource.is_null() | (resource == "memory")
    of_storage = resource == "ephemeral-storage"
    used = quantity_bytes(message.str.extract(rf"was using ({QUANTITY})", 1))
    requested = quantity_bytes(message.str.extract(rf"(?:exceeds its request of|request is) ({QUANTITY})", 1))

    def held(quantity: pl.Expr, of_resource: pl.Expr) -> pl.Expr:
        # what a container uses or requests is never below zero: a negative figure is damage, no reading
        return pl.when(of_resource & (quantity >= 0)).then(quantity)

    return pl.struct(
        resource=resource,
        threshold_bytes=quantity_bytes(message.str.extract(rf"Threshold quantity: ({QUANTITY})", 1)),
        # The threshold's own "available: 87608Ki", not a scheduler's "0/2 nodes are available: 1 Insufficient …".
        available_bytes=quantity_bytes(message.str.extract(rf"Threshold quantity: {QUANTITY}, available: ({QUANTITY})", 1)),
        container=message.str.extract(r"Container ([a-z0-9][-a-z0-9.]*) (?:was using|exceeded its local ephemeral storage limit)", 1),
        containers=message.str.extract_all(r"Container [a-z0-9][-a-z0-9.]* was using").list.eval(
            pl.element().str.extract(r"Container (\S+) was using", 1)
        ),
        used_bytes=held(used, of_memory),
        requested_bytes=held(requested, of_memory),
        storage_used_bytes=held(used, of_storage),
        storage_requested_bytes=held(requested, of_storage),
        storage_limit_bytes=held(quantity_bytes(message.str.extract(_LOCAL_STORAGE_LIMIT_FIGURE, 1)), of_storage),
    )


def storage_attrs(evicted: pl.Expr, of_eviction: pl.Expr | None = None) -> dict[str, pl.Expr]:
    """The attrs of an ephemeral-storage eviction's figures (``storage_used_bytes``, ``storage_requested_bytes``,
    ``storage_limit_bytes``) from :func:`eviction_fields`' struct, null where ``of_eviction`` (if given) is false. A
    memory eviction's usage and request have columns of their own (``mem_used_bytes``, ``mem_requested_bytes``); disk has none."""
    names = ("storage_used_bytes", "storage_requested_bytes", "storage_limit_bytes")
    if of_eviction is None:
        return {name: evicted.struct.field(name) for name in names}
    return {name: pl.when(of_eviction).then(evicted.struct.field(name)) for name in names}


# A device plugin's GPUs (nvidia.com/gpu, MIG slices, amd.com/gpu, alpha.kubernetes.io/nvidia-gpu before 1.8, shared or
# virtual GPUs of other plugins): none of them allocatable, or none found, is a node that runs no GPU work.
GPU_RESOURCE = r"/(?:.*[Gg][Pp][Uu]|mig-)|^(?:nvidia|amd)\.com/"


# The scheduler's (and Volcano's) verdict on a pod no node fits: "0/8 nodes are available: 8 Insufficient nvidia.com/gpu.
# preemption: 0/8 nodes are available: 8 No preemption victims found for incoming pod." (1.10+; "are unavailable" in
# Volcano), before "No nodes are available that match all of the following predicates:: Insufficient
# alpha.kubernetes.io/nvidia-gpu (1)." A resource name ends with a letter or digit: the sentence's "." is none of it.
# "hugepages-2Mi" holds capitals.
_INSUFFICIENT = r"\bInsufficient ([a-z0-9](?:[-A-Za-z0-9.]*[A-Za-z0-9])?(?:/[-A-Za-z0-9_.]*[A-Za-z0-9_])?)"
# cluster-autoscaler's NotTriggerScaleUp counts node groups the same way: "pod didn't trigger scale-up (it wouldn't fit if
# a new node is added): 3 Insufficient nvidia.com/gpu, 1 max node group size reached".
_UNSCHEDULABLE = r"\bnodes are (?:un)?available:|\bNo nodes are available that match|\bpod didn't trigger scale-up\b"
_NODES_AVAILABLE = r"\b(?<available>[0-9]+)/(?<total>[0-9]+) nodes are (?:un)?available:"


def insufficient_resources(message: pl.Expr) -> pl.Expr:
    """The resources a scheduling failure names as insufficient, in order and once each (null where it names none)."""
    found = (
        pl.when(message.str.contains(_UNSCHEDULABLE))
        .then(message.str.extract_all(_INSUFFICIENT))
        .list.eval(pl.element().str.strip_prefix("Insufficient "))
        .list.unique(maintain_order=True)
    )
    return pl.when(found.list.len() > 0).then(found)


def insufficient_resource(resources: pl.Expr) -> pl.Expr:
    """Of the resources :func:`insufficient_resources` found, the one a GPU job waits on: a GPU resource first, else the first."""
    gpu = resources.list.eval(pl.element().filter(pl.element().str.contains(GPU_RESOURCE))).list.first()
    return pl.coalesce(gpu, resources.list.first())


def scheduling_counts(message: pl.Expr) -> dict[str, pl.Expr]:
    """The figures of a scheduling failure, as attrs fields ``nodes_available``, ``nodes_total``, ``insufficient_count``: of
    "0/8 nodes are available: 2 Insufficient nvidia.com/gpu, …", 0 of 8 nodes fit and 2 lack the resource
    :func:`insufficient_resource` chose (a GPU's first); cluster-autoscaler's count is of node groups. Null elsewhere."""
    nodes = message.str.extract_groups(_NODES_AVAILABLE).struct
    counted = pl.when(message.str.contains(_UNSCHEDULABLE)).then(message.str.extract_all(rf"\b[0-9]+ {_INSUFFICIENT}"))
    named = pl.element().str.extract(r"Insufficient (\S+)$", 1)
    gpu = counted.list.eval(pl.element().filter(named.str.contains(GPU_RESOURCE))).list.first()
    short = pl.coalesce(gpu, counted.list.first())
    return {
        "nodes_available": nodes.field("available").cast(pl.Int64, strict=False),
        "nodes_total": nodes.field("total").cast(pl.Int64, strict=False),
        "insufficient_count": short.str.extract(r"^([0-9]+)", 1).cast(pl.Int64, strict=False),
    }


def devices_lost(resource: pl.Expr, capacity: pl.Expr, allocatable: pl.Expr) -> pl.Expr:
    """Whether a node's resource lost devices: an extended resource ("vendor/name") whose allocatable count is below its
    capacity (its plugin marked devices unhealthy, or lost them), or a GPU resource counted 0. ``describe node``'s
    Capacity / Allocatable blocks and a Node object's ``status.capacity`` / ``status.allocatable`` both read so."""
    lost = resource.str.contains("/", literal=True) & (allocatable < capacity)
    none = resource.str.contains(GPU_RESOURCE) & (pl.coalesce(allocatable, capacity) == 0)
    return (lost | none).fill_null(False)


def devices_lost_message(resource: pl.Expr, capacity: pl.Expr, allocatable: pl.Expr) -> pl.Expr:
    """The message of a resource that lost devices: "nvidia.com/gpu allocatable 0 of capacity 16"."""
    return pl.concat_str(resource, pl.format(" allocatable {}", allocatable), pl.format(" of capacity {}", capacity), ignore_nulls=True)


# A memory cgroup path names its pod and container the way the kubelet lays them out: cgroupfs
# ("/kubepods/burstable/pod<uid>/<container id>") or systemd ("/kubepods.slice/kubepods-burstable.slice/
# kubepods-burstable-pod<uid with _>.slice/cri-containerd-<container id>.scope"). A static pod's uid is the hash of its
# manifest, 32 hex digits with no dashes ("/kubepods/burstable/pod3f5f1a2b9c8d4e7f6a5b4c3d2e1f0a9b/…").
MEMCG_POD_UID = (
    r"(?:^|[/-])pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32})(?:\.slice)?(?:/|$)"
)
MEMCG_CONTAINER_ID = r"(?:^|/)(?:(?:cri-containerd|containerd|docker|crio|libpod)-)?([0-9a-f]{64})(?:\.scope)?$"


def memcg_pod_uid(cgroup: pl.Expr) -> pl.Expr:
    """The pod uid in a memory cgroup path, with the systemd driver's "_" turned back into "-"."""
    return cgroup.str.extract(MEMCG_POD_UID, 1).str.replace_all("_", "-")


def memcg_container_id(cgroup: pl.Expr) -> pl.Expr:
    """The 64-hex container id a memory cgroup path ends with, if it ends with one."""
    return cgroup.str.extract(MEMCG_CONTAINER_ID, 1)


_OOM_KILL_REASONS = ("OOMKilling", "SystemOOM")
# The kernel's kill line as node-problem-detector forwards it, old ("Kill process N (name) score S or
# sacrifice child") and new ("Killed process N (name) total-vm:…").
_KERNEL_KILL = r"(?:Memory cgroup out of memory|Out of memory): Kill(?:ed)? process [0-9]+ \("


# The node controller's events for each pod it deletes from a node that does not answer: the taint manager's
# TaintManagerEviction "Marking for deletion Pod ns/name" (the same reason's "Cancelling deletion of Pod" is none), and
# before taints (1.5 and older) NodeControllerEviction "Marking for deletion Pod name from Node node".
_NODE_EVICTION = "Marking for deletion Pod "

# runc's error when the memory limit kills the container's init before it starts (a Failed event of the kubelet).
_RUNC_INIT_OOM = "container init was OOM-killed"


def event_kind(reason: pl.Expr, message: pl.Expr) -> pl.Expr:
    """The event kind a Kubernetes Event's reason (and message) stands for.

    OOMKilling (node-problem-detector) and SystemOOM (kubelet) report the kernel's OOM
    killer, and so does any event whose message is the kernel's kill line (a custom
    node-problem-detector rule such as PodOOMKilling) or the kubelet's "… OOM encountered,
    victim process: x, pid: n" (a CgroupOOM event of patched kubelets); runc's "container init
    was OOM-killed" in a Failed event is the container's OOM kill; EvictionThresholdMet
    is the kubelet starting to reclaim; Evicted names the pod, Kueue's EvictedDueTo… the workload, the node controller's
    "Marking for deletion Pod …" a pod of a node gone NotReady.
    """
    evicted = (message.str.contains(EVICTION_MESSAGE, literal=True) | message.str.starts_with(_NODE_EVICTION)).fill_null(False)
    kernel_kill = (message.str.contains(_KERNEL_KILL) | message.str.contains("OOM encountered, victim process:", literal=True)).fill_null(False)
    return (
        pl.when(reason.is_in(_OOM_KILL_REASONS) | kernel_kill)
        .then(pl.lit("oom_kill"))
        .when((reason == "OOMKilled") | message.str.contains(_RUNC_INIT_OOM, literal=True).fill_null(False))
        .then(pl.lit("container_oomkilled"))
        # Kueue evicts a whole workload: "EvictedDueToPodsReadyTimeout", "EvictedDueToPreempted", ….
        .when(reason.is_in(["Evicted", "EvictionThresholdMet"]) | reason.str.starts_with("EvictedDueTo") | evicted)
        .then(pl.lit("eviction"))
        # Karpenter's "Status condition transitioned, Type: MemoryPressure, Status: False -> Unknown"
        # is the condition going away (or unknown), not pressure.
        .when(reason.is_in(["NodeHasInsufficientMemory", "MemoryPressure"]) & ~message.str.contains(r"Status: [0-9A-Za-z_]+ -> (?:False|Unknown)\b"))
        .then(pl.lit("memory_pressure"))
        .otherwise(pl.lit("log"))
    )


# The job controller's reasons for a Job that failed as a whole, on its Failed condition and on the Warning event
# it records with it: its pods failed past .spec.backoffLimit, it ran past activeDeadlineSeconds, a podFailurePolicy
# rule with action FailJob matched, or an indexed Job's failed indexes passed maxFailedIndexes.
JOB_FAILED_REASONS = ("BackoffLimitExceeded", "DeadlineExceeded", "PodFailurePolicy", "MaxFailedIndexesExceeded")


def job_failed(reason: pl.Expr) -> pl.Expr:
    """Whether an event's reason is a Job failing as a whole: an error (the event is only a Warning), its pods gone."""
    return reason.is_in(JOB_FAILED_REASONS).fill_null(False)


# The container runtime's failure to create a container the kubelet reports as a Failed event (the container's Last
# State then StartError / ContainerCannotRun, exit code 128): "Error: failed to create containerd task: failed to create
# shim task: OCI runtime create failed: … nvidia-container-cli: initialization error: …". The pod's container will not
# start until its node is fixed. (CRI-O's "container create failed: … runc create failed: container init was OOM-killed"
# is the container's memory limit, a warning as sent.) A hook that fails is the same failure in any runtime's wording:
# runc's "error running hook #0: error running hook: exit status 1", CRI-O's (OpenShift's) "Error: container create
# failed: error executing hook `/usr/local/nvidia/toolkit/nvidia-container-runtime-hook` (exit code: 1)".
_RUNTIME_CREATE_FAILED = (
    r"\bOCI runtime (?:create|start) failed\b|\bfailed to create (?:containerd|shim) task\b|\berror (?:executing|running) hook\b"
)


def raised_severity(reason: pl.Expr, message: pl.Expr) -> pl.Expr:
    """The severity an event has beyond its type, null where its type (Normal, Warning) tells it: an error for a Job
    failed as a whole, a pod the kubelet rejected for want of devices it counted ("Requested: 4, Available: 0"), or a
    container the runtime could not create; a warning for cluster-autoscaler's NotTriggerScaleUp (a Normal event whose
    pod stays pending: no node group it may grow would fit it)."""
    counted_rejection = (reason == "UnexpectedAdmissionError") & admission_devices(message).struct.field("requested").is_not_null()
    runtime_failed = (reason == "Failed") & message.str.contains(_RUNTIME_CREATE_FAILED)
    return (
        pl.when(job_failed(reason) | counted_rejection.fill_null(False) | runtime_failed.fill_null(False))
        .then(pl.lit("error"))
        .when(reason == "NotTriggerScaleUp")
        .then(pl.lit("warning"))
    )


def oom_victim(message: pl.Expr) -> pl.Expr:
    """Victim pid and process named in an OOM event message, as a struct.

    "System OOM encountered, victim process: python, pid: 1234" (kubelet) and
    "Memory cgroup out of memory: Kill process 25169 (hyperkube) …" (node-problem-detector), with
    the victim's ``rss_bytes`` where the kill line gives its anon-rss.
    """
    kubelet = message.str.extract_groups(r"victim process: (?<process>[^,]+), pid: (?<pid>[0-9]+)").struct
    kernel = message.str.extract_groups(r"Kill(?:ed)? process (?<pid>[0-9]+) \((?<process>[^)]*)\)").struct
    return pl.struct(
        pid=pl.coalesce(kubelet.field("pid"), kernel.field("pid")).cast(pl.Int64, strict=False),
        process=pl.coalesce(kubelet.field("process"), kernel.field("process")),
        # As the kernel source reads its kill line: the victim's anonymous resident memory.
        rss_bytes=message.str.extract(r"\banon-rss:([0-9]+)kB", 1).cast(pl.Int64, strict=False) * 1024,
    )


# The pod worker's sync error names the container whose start (or kill) failed: `failed to "StartContainer" for "x" with
# ImagePullBackOff: …` (FailedSync events before 1.10; the kubelet's "Error syncing pod" line, its quotes escaped in a
# structured one's err="…"). The pod's sandbox ("POD", upper case) is no container of the pod's spec.
SYNC_ERROR_CONTAINER = r'failed to \\*"(?:Start|Kill)Container\\*" for \\*"([a-z0-9][-a-z0-9.]*)\\*" with '


def message_container(message: pl.Expr) -> pl.Expr:
    """The container an event message names ("Stopping container x", "restarting failed container x"; before
    Kubernetes 1.10, FailedSync's "restarting failed container=x pod=…" and `failed to "StartContainer" for "x"`; the
    Killing event of a failed probe, "Container x failed liveness probe, will be restarted")."""
    return pl.coalesce(
        # kubelets of 2025 (kubernetes PR #130471) write "Created container: x".
        message.str.extract(r"(?:Stopping|Started|Created|Killing|restarting failed) container(?:[ =]|: )([a-z0-9][-a-z0-9.]*)\b", 1),
        message.str.extract(r"^Container ([a-z0-9][-a-z0-9.]*) (?:failed (?:liveness|startup) probe|definition changed)", 1),
        message.str.extract(SYNC_ERROR_CONTAINER, 1),
    )


# The device manager's admission failures (pkg/kubelet/cm/devicemanager), as the kubelet's Warning event, its log line
# and the rejected pod's status message carry them: "requested number of devices unavailable for nvidia.com/gpu.
# Requested: 1, Available: 0" (1.10+; "Requested:1" in some builds), "no healthy devices present; cannot allocate
# unhealthy devices nvidia.com/gpu" (1.24+). Before the device manager (1.6-1.9), the kubelet's own GPU manager failed a
# pod with "requested number of GPUs unavailable. Requested: 4, Available: 0", naming no resource. The rejected pod's status
# message opens "Pod was rejected: " (1.26+, PR #112644) or just "Pod " before it ("Pod Allocate failed due to …", "Pod
# Update plugin resources failed due to …"). A YAML dump may fold the message, leaving a run of spaces between words.
_ADMISSION_DEVICES = (
    r"(?:(?:devices unavailable for|cannot allocate unhealthy devices)\s+(?<resource>[a-z0-9][-a-z0-9.]*/[-A-Za-z0-9_.]*[A-Za-z0-9_])"
    r"|number of GPUs unavailable)"
    r"(?:\.? Requested: ?(?<requested>[0-9]+), Available: ?(?<available>[0-9]+))?"
)
ADMISSION_REJECTED = (
    r"^\s*(?:Message:\s+)?['\"]?Pod (?:was rejected: |rejected: )?(?:Allocate failed due to |Update plugin resources failed due to "
    r"|Unexpected error while attempting to recover from admission failure)"
)


def admission_devices(message: pl.Expr) -> pl.Expr:
    """The device resource an admission failure names and, where it counts them, the devices the pod requested and
    those the kubelet had (struct ``resource``, ``requested``, ``available``; all null elsewhere)."""
    found = message.str.extract_groups(_ADMISSION_DEVICES).struct
    return pl.struct(
        resource=found.field("resource"),
        requested=found.field("requested").cast(pl.Int64, strict=False),
        available=found.field("available").cast(pl.Int64, strict=False),
    )
