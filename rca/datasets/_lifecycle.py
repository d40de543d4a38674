"""Pod lifecycle lines across kubelet, containerd, systemd and the kernel's bridge.

A pod's start and end leave a trail in four streams that all name the same pod uid,
sandbox and container ids; an incident's container death adds the kill's aftermath
(containerd's TaskOOM, kubelet's PLEG event, exit code and OOMKilled status).
"""

from __future__ import annotations

import json
import random

from rca.datasets._formats import moment
from rca.datasets._model import US, Container, Host, Pod, hex_id, k8s_suffix
from rca.datasets._sink import Evidence, Sink


def _legacy_ref(pod: Pod) -> str:
    return f"{pod.name}_{pod.namespace}({pod.uid})"


def pleg(host: Host, pod: Pod, kind: str, data: str) -> tuple[str, str]:
    """A PLEG event line (source, body) in the host's kubelet dialect."""
    if host.kubelet_dialect == "legacy":
        body = f'SyncLoop (PLEG): "{_legacy_ref(pod)}", event: &pleg.PodLifecycleEvent{{ID:"{pod.uid}", Type:"{kind}", Data:"{data}"}}'
        return "kubelet.go:1951", body
    event = json.dumps({"ID": pod.uid, "Type": kind, "Data": data}, separators=(",", ":"))
    return "kubelet.go:2453", f'"SyncLoop (PLEG): event for pod" pod="{pod.ref}" event={event}'


def _slice(host: Host, pod: Pod) -> str:
    uid = pod.uid.replace("-", "_")
    return f"kubepods-pod{uid}.slice" if pod.qos == "guaranteed" else f"kubepods-{pod.qos}-pod{uid}.slice"


def started(sink: Sink, host: Host, pod: Pod, rng: random.Random, window: tuple[int, int]) -> None:
    """The start trail of a pod, if it starts inside the window."""
    t = pod.start_us
    if not window[0] <= t < window[1]:
        return
    sandbox = hex_id(rng)
    token = k8s_suffix(rng)
    veth = f"veth{hex_id(rng, 8)}"
    legacy = host.kubelet_dialect == "legacy"
    if legacy:
        sink.kubelet(host, t, "I", "kubelet.go:1908", f'SyncLoop (ADD, "api"): "{_legacy_ref(pod)}"', inc=False)
        sink.kubelet(
            host,
            t + 41_000,
            "I",
            "reconciler.go:224",
            f'operationExecutor.VerifyControllerAttachedVolume started for volume "default-token-{token}" (UniqueName: '
            f'"kubernetes.io/secret/{pod.uid}-default-token-{token}") pod "{pod.name}" (UID: "{pod.uid}")',
            inc=False,
        )
        sink.kubelet(
            host,
            t + 190_000,
            "I",
            "kuberuntime_manager.go:439",
            f'No sandbox for pod "{_legacy_ref(pod)}" can be found. Need to start a new one',
            inc=False,
        )
    else:
        sink.kubelet(host, t, "I", "kubelet.go:2404", f'"SyncLoop ADD" source="api" pods=["{pod.ref}"]', inc=False)
        volume = f"kube-api-access-{token}"
        unique = f"kubernetes.io/projected/{pod.uid}-{volume}"
        sink.kubelet(
            host,
            t + 38_000,
            "I",
            "reconciler_common.go:258",
            f'"operationExecutor.VerifyControllerAttachedVolume started for volume \\"{volume}\\" (UniqueName: \\"{unique}\\") pod \\"{pod.name}\\" '
            f'(UID: \\"{pod.uid}\\") " pod="{pod.ref}"',
            inc=False,
        )
        if pod.role == "train":
            sink.kubelet(
                host,
                t + 39_000,
                "I",
                "reconciler_common.go:258",
                f'"operationExecutor.VerifyControllerAttachedVolume started for volume \\"dshm\\" (UniqueName: \\"kubernetes.io/empty-dir/{pod.uid}-dshm\\") '
                f'pod \\"{pod.name}\\" (UID: \\"{pod.uid}\\") " pod="{pod.ref}"',
                inc=False,
            )
        sink.kubelet(
            host,
            t + 152_000,
            "I",
            "operation_generator.go:721",
            f'"MountVolume.SetUp succeeded for volume \\"{volume}\\" (UniqueName: \\"{unique}\\") pod \\"{pod.name}\\" (UID: \\"{pod.uid}\\") " pod="{pod.ref}"',
            inc=False,
        )
        sink.kubelet(
            host, t + 201_000, "I", "util.go:30", f'"No sandbox for pod can be found. Need to start a new one" pod="{pod.ref}"', inc=False
        )
    meta = f"&PodSandboxMetadata{{Name:{pod.name},Uid:{pod.uid},Namespace:{pod.namespace},Attempt:0,}}"
    sink.containerd(host, t + 205_000, "info", f"RunPodSandbox for {meta}", inc=False)
    if host.cgroup == "v2":
        slice_name = _slice(host, pod)
        sink.systemd(host, t + 230_000, f"Created slice {slice_name} - libcontainer container {slice_name}.", inc=False)
    port = rng.randint(2, 60)
    at = t + rng.randint(400_000, 900_000)
    sink.kernel(
        host,
        at,
        [
            f"cni0: port {port}({veth}) entered blocking state",
            f"cni0: port {port}({veth}) entered disabled state",
            f"device {veth} entered promiscuous mode",
            f"IPv6: ADDRCONF(NETDEV_CHANGE): {veth}: link becomes ready",
            f"cni0: port {port}({veth}) entered blocking state",
            f"cni0: port {port}({veth}) entered forwarding state",
        ],
        rng,
        inc=False,
    )
    sink.containerd(host, at + 60_000, "info", f'RunPodSandbox for {meta} returns sandbox id "{sandbox}"', inc=False)
    at += rng.randint(300_000, 4_000_000)
    for container in pod.containers:
        cmeta = f"&ContainerMetadata{{Name:{container.name},Attempt:0,}}"
        sink.containerd(host, at, "info", f'CreateContainer within sandbox "{sandbox}" for container {cmeta}', inc=False)
        sink.containerd(
            host,
            at + 31_000,
            "info",
            f'CreateContainer within sandbox "{sandbox}" for {cmeta} returns container id "{container.cid}"',
            inc=False,
        )
        sink.containerd(host, at + 33_000, "info", f'StartContainer for "{container.cid}"', inc=False)
        sink.systemd(
            host, at + 35_000, f"Started cri-containerd-{container.cid}.scope - libcontainer container {container.cid}.", inc=False
        )
        sink.containerd(host, at + 120_000, "info", f'StartContainer for "{container.cid}" returns successfully', inc=False)
        at += rng.randint(150_000, 900_000)
    for data in [sandbox] + [c.cid for c in pod.containers]:
        src, body = pleg(host, pod, "ContainerStarted", data)
        sink.kubelet(host, at, "I", src, body, inc=False)
        at += rng.randint(200, 3000)
    if not legacy:
        took = (at - t) / US
        created = moment(t - 1_100_000)
        sink.kubelet(
            host,
            at + 900,
            "I",
            "pod_startup_latency_tracker.go:104",
            f'"Observed pod startup duration" pod="{pod.ref}" podStartSLOduration={took:.6f} podStartE2EDuration="{took:.6f}s" '
            f'podCreationTimestamp="{created:%Y-%m-%d %H:%M:%S} +0000 UTC"',
            inc=False,
        )


def finished(sink: Sink, host: Host, pod: Pod, rng: random.Random, window: tuple[int, int]) -> None:
    """The trail of a pod whose containers exit 0 and which is then deleted."""
    t = pod.end_us
    if not window[0] <= t < window[1]:
        return
    for container in pod.containers:
        if container.cid not in sink.exited:
            exited(sink, host, pod, container, t, rng, 0, inc=False)
        t += rng.randint(1000, 200_000)
    t += rng.randint(1, 20) * US
    if host.kubelet_dialect == "legacy":
        sink.kubelet(host, t, "I", "kubelet.go:1924", f'SyncLoop (DELETE, "api"): "{_legacy_ref(pod)}"', inc=False)
        sink.kubelet(host, t + 30_000, "I", "kubelet.go:1918", f'SyncLoop (REMOVE, "api"): "{_legacy_ref(pod)}"', inc=False)
    else:
        sink.kubelet(host, t, "I", "kubelet.go:2420", f'"SyncLoop DELETE" source="api" pods=["{pod.ref}"]', inc=False)
        sink.kubelet(host, t + 30_000, "I", "kubelet.go:2414", f'"SyncLoop REMOVE" source="api" pods=["{pod.ref}"]', inc=False)
    veth = f"veth{hex_id(rng, 8)}"
    port = rng.randint(2, 60)
    sink.kernel(
        host,
        t + 50_000,
        [
            f"cni0: port {port}({veth}) entered disabled state",
            f"device {veth} left promiscuous mode",
            f"cni0: port {port}({veth}) entered disabled state",
        ],
        rng,
        inc=False,
    )


def exited(
    sink: Sink,
    host: Host,
    pod: Pod,
    container: Container,
    ts: int,
    rng: random.Random,
    exit_code: int,
    *,
    reason: str | None = None,
    evidence: dict[str, Evidence] | None = None,
    inc: bool = True,
) -> int:
    """A container's exit as kubelet, containerd and systemd report it; returns the time of the last line.

    ``evidence`` maps "finished", "died" and "status" to the manifest entries of those lines.
    """
    marks = evidence or {}
    legacy = host.kubelet_dialect == "legacy"
    sink.exited.add(container.cid)
    t = ts + rng.randint(2_000, 40_000)
    sink.containerd(host, t, "info", "shim disconnected", tail=f"id={container.cid} namespace=k8s.io", inc=inc)
    sink.containerd(host, t + 300, "warning", "cleaning up after shim disconnected", tail=f"id={container.cid} namespace=k8s.io", inc=inc)
    sink.systemd(host, t + 2_000, f"cri-containerd-{container.cid}.scope: Deactivated successfully.", inc=inc)
    t += rng.randint(300_000, 1_500_000)
    if not legacy:
        sink.kubelet(
            host,
            t,
            "I",
            "generic.go:334",
            f'"Generic (PLEG): container finished" podID="{pod.uid}" containerID="{container.cid}" exitCode={exit_code}',
            evidence=marks.get("finished"),
            inc=inc,
        )
    src, body = pleg(host, pod, "ContainerDied", container.cid)
    sink.kubelet(host, t + 500, "I", src, body, evidence=marks.get("died"), inc=inc)
    if reason is not None:
        t += rng.randint(200_000, 1_800_000)
        finished_at = moment(ts)
        terminated = {
            "containerID": f"containerd://{container.cid}",
            "exitCode": exit_code,
            "finishedAt": f"{finished_at:%Y-%m-%dT%H:%M:%SZ}",
            "reason": reason,
            "startedAt": f"{moment(pod.start_us):%Y-%m-%dT%H:%M:%SZ}",
        }
        patch = {
            "metadata": {"uid": pod.uid},
            "status": {
                "containerStatuses": [
                    {
                        "containerID": f"containerd://{container.cid}",
                        "image": container.image,
                        "lastState": {"terminated": terminated},
                        "name": container.name,
                        "ready": False,
                        "restartCount": 1,
                    }
                ]
            },
        }
        text = json.dumps(patch, separators=(",", ":"))
        if legacy:
            sink.kubelet(
                host,
                t,
                "I",
                "status_manager.go:572",
                f'Patch status for pod "{_legacy_ref(pod)}" with "{text}"',
                evidence=marks.get("status"),
                inc=inc,
            )
        else:
            escaped = text.replace("\\", "\\\\").replace('"', '\\"')
            sink.kubelet(
                host,
                t,
                "I",
                "status_manager.go:877",
                f'"Patch status for pod" pod="{pod.ref}" podUID="{pod.uid}" patch="{escaped}"',
                evidence=marks.get("status"),
                inc=inc,
            )
    return t


def oom_event(sink: Sink, host: Host, ts: int, pid: int, comm: str, victim_cgroup: str, constraint: str, evidence: Evidence | None) -> None:
    """kubelet's OOM watcher picking the kernel kill up (and, for a global kill, recording SystemOOM)."""
    stamp = moment(ts)
    death = f"{stamp:%Y-%m-%d %H:%M:%S}.{stamp.microsecond:06d}{(ts * 3) % 1000:03d} +0000 UTC"
    container = victim_cgroup if constraint == "CONSTRAINT_MEMCG" else "/"
    event = (
        f"&{{Pid:{pid} ProcessName:{comm} TimeOfDeath:{death} ContainerName:{container} VictimContainerName:{victim_cgroup} "
        f"Constraint:{constraint}}}"
    )
    at = ts + 1_000 + (ts % 90_000)
    if host.kubelet_dialect == "legacy":
        sink.kubelet(host, at, "I", "oom_watcher_linux.go:72", f"Got sys oom event: {event}", evidence=evidence)
    else:
        sink.kubelet(host, at, "I", "oom_watcher_linux.go:76", f'"Got sys oom event" event="{event}"', evidence=evidence)
    if constraint == "CONSTRAINT_NONE":
        message = f"System OOM encountered, victim process: {comm}, pid: {pid}"
        if host.kubelet_dialect == "legacy":
            sink.kubelet(
                host,
                at + 200,
                "I",
                "event.go:291",
                f'Event(v1.ObjectReference{{Kind:"Node", Namespace:"", Name:"{host.name}", UID:"{host.name}", APIVersion:"", ResourceVersion:"", '
                f"FieldPath:\"\"}}): type: 'Warning' reason: 'SystemOOM' {message}",
            )
        else:
            sink.kubelet(
                host,
                at + 200,
                "I",
                "event.go:389",
                f'"Event occurred" object="{host.name}" fieldPath="" kind="Node" apiVersion="" type="Warning" reason="SystemOOM" message="{message}"',
            )


def task_oom(sink: Sink, host: Host, ts: int, container: Container, evidence: Evidence | None = None) -> None:
    """containerd's TaskOOM event for a container whose cgroup hit its limit."""
    sink.containerd(
        host,
        ts + 3_000 + ts % 20_000,
        "info",
        f"TaskOOM event &TaskOOM{{ContainerID:{container.cid},XXX_unrecognized:[],}}",
        evidence=evidence,
    )
    if host.cgroup == "v2":
        sink.systemd(host, ts + 25_000, f"cri-containerd-{container.cid}.scope: A process of this unit has been killed by the OOM killer.")


def backoff(sink: Sink, host: Host, pod: Pod, container: Container, ts: int) -> None:
    """kubelet refusing to restart a crash-looping container straight away."""
    if host.kubelet_dialect == "legacy":
        body = (
            f'Error syncing pod {pod.uid} ("{_legacy_ref(pod)}"), skipping: failed to "StartContainer" for "{container.name}" with '
            f'CrashLoopBackOff: "back-off 10s restarting failed container={container.name} pod={_legacy_ref(pod)}"'
        )
        sink.kubelet(host, ts, "E", "pod_workers.go:191", body)
        return
    body = (
        f'"Error syncing pod, skipping" err="failed to \\"StartContainer\\" for \\"{container.name}\\" with CrashLoopBackOff: '
        f'\\"back-off 10s restarting failed container={container.name} pod={_legacy_ref(pod)}\\"" pod="{pod.ref}" podUID="{pod.uid}"'
    )
    sink.kubelet(host, ts, "E", "pod_workers.go:1301", body)
