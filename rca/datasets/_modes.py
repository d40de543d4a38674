"""Incident writers for the host-memory failure modes, and the kill aftermath all modes share.

Each writer leaves the evidence an SRE would use to tell its mode apart: a memcg kill with
the pod's RSS at its limit, a global kill with CONSTRAINT_NONE, kubelet evictions with no
kernel kill at all, a sidecar's container path in the kill, a DataLoader worker's pid in
both the kernel and the training log, a bus error from a full /dev/shm.
"""

from __future__ import annotations

from rca.datasets._cgroups import CgroupReading
from rca.datasets._incidents import AppLog, Ctx, Task, oom_report, pages, train_traceback
from rca.datasets._lifecycle import backoff, exited, oom_event, task_oom
from rca.datasets._model import GIB, MIB, MINUTE, US, Container, Host, Pod, k8s_suffix
from rca.datasets._sink import Evidence

# --- shared pieces ------------------------------------------------------------------------


def oom_adj(host: Host, pod: Pod) -> int:
    """The oom_score_adj kubelet gives a container: by QoS class and memory request."""
    if pod.qos == "guaranteed":
        return -997
    return max(2, min(999, 1000 - (1000 * pod.memory_request) // (host.memory_kib * 1024)))


def pause_task(ctx: Ctx, pod: Pod) -> Task:
    return Task(pod.main.pid - ctx.rng.randint(30, 400), 65535, "pause", 255, 1, -998)


def memcg_kill(
    ctx: Ctx,
    pod: Pod,
    container: Container,
    ts: int,
    *,
    victim_pid: int,
    victim_comm: str,
    rss: int,
    limit: int,
    pod_level: bool = False,
    others: tuple[Task, ...] = (),
    container_dies: bool = True,
    exit_code: int = 137,
) -> int:
    """A memcg OOM kill in ``pod`` and its aftermath in containerd and kubelet; returns the kill time."""
    host, rng = ctx.host, ctx.rng
    victim_cg = host.cgroup_path(pod, container)
    oom_memcg = host.cgroup_path(pod, None) if pod_level else victim_cg
    cpuset = container.cid if host.cgroup == "v1" else f"cri-containerd-{container.cid}.scope"
    victim = Task(victim_pid, 0, victim_comm, pages(rss) * 5 // 2 + rng.randint(1000, 90000), pages(rss), oom_adj(host, pod))
    tasks = sorted([pause_task(ctx, pod), *others, victim], key=lambda t: t.pid)
    marks = {
        "invoked": ctx.ev("oom_invoked", "memcg oom-killer invoked", pid=victim_pid),
        "killed": ctx.ev("oom_kill", "memcg oom kill", pid=victim_pid, container_id=container.cid, pod_uid=pod.uid),
    }
    kill_ts = oom_report(
        ctx,
        host,
        ts,
        trigger=victim,
        victim=victim,
        tasks=tasks,
        victim_memcg=victim_cg,
        cpuset=cpuset,
        oom_memcg=oom_memcg,
        limit_kib=limit // 1024,
        evidence=marks,
    )
    task_oom(ctx.sink, host, kill_ts, container)
    # The cgroup that hit its limit: usage pinned at it, one OOM and one kill.
    ctx.incident.cgroups.append(CgroupReading(oom_memcg, kill_ts, limit - 4096 * 37, limit, limit, oom=1, oom_kill=1))
    oom_event(
        ctx.sink,
        host,
        kill_ts,
        victim_pid,
        victim_comm,
        victim_cg,
        "CONSTRAINT_MEMCG",
        ctx.ev("oom_kill", "kubelet oom watcher", pid=victim_pid),
    )
    if container_dies:
        died(ctx, pod, container, kill_ts, exit_code, "OOMKilled")
    return kill_ts


def died(ctx: Ctx, pod: Pod, container: Container, ts: int, exit_code: int, reason: str) -> int:
    """kubelet's view of a container that exited with ``exit_code``."""
    killed = exit_code == 137
    marks = {
        "finished": ctx.ev(
            "container_oomkilled" if killed else "log",
            "kubelet container finished",
            exit_code=exit_code,
            container_id=container.cid,
            pod_uid=pod.uid,
        ),
        "died": ctx.ev(
            "log", "kubelet PLEG ContainerDied", pod=pod.name, namespace=pod.namespace, container_id=container.cid, pod_uid=pod.uid
        ),
        "status": ctx.ev(
            "container_oomkilled" if reason == "OOMKilled" else "log",
            f"kubelet status {reason}",
            pod=pod.name,
            namespace=pod.namespace,
            container_id=container.cid,
            exit_code=exit_code,
        ),
    }
    last = exited(ctx.sink, ctx.host, pod, container, ts, ctx.rng, exit_code, reason=reason, evidence=marks)
    if pod.role in ("serve", "jvm", "go"):
        backoff(ctx.sink, ctx.host, pod, container, last + ctx.rng.randint(1, 12) * US)
    return last


def ramp(start: int, end: int, low: float, high: float, steps: int = 1) -> list[tuple[int, float, float]]:
    """A straight climb from ``low`` to ``high`` (with ``steps`` even bumps along it)."""
    points = [(start, low, 0.0)]
    for k in range(1, steps + 1):
        points.append((start + (end - start) * k // steps, low + (high - low) * k / steps, 0.0))
    return points


def crash_tail(
    ctx: Ctx, log: AppLog, ts: int, exception: str, evidence: Evidence, frames: list[tuple[str, int, str, str]], prefix: str = ""
) -> None:
    """An uncaught exception as the interpreter prints it to stderr."""
    lines: list = train_traceback(ctx.rng, "/workspace/train.py", frames)
    lines.append((exception, evidence))
    log.raw(ts, lines, prefix)


# --- the modes ------------------------------------------------------------------------------


def container_memory_limit(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    limit = pod.memory_limit
    ctx.world.shape_app(
        pod, inc.onset_us, inc.failure_us, ramp(inc.onset_us, inc.failure_us, limit * rng.uniform(0.4, 0.6), limit * 0.995, 3)
    )
    victim_pid, comm = pod.main.pid, pod.main.comm
    log = ctx.app(pod)
    if pod.app == "ci_github":
        victim_pid, comm = ctx.host.pid_at(rng, inc.onset_us), "pytest"
        memcg_kill(
            ctx,
            pod,
            pod.main,
            inc.failure_us,
            victim_pid=victim_pid,
            victim_comm=comm,
            rss=int(limit * 0.97),
            limit=limit,
            container_dies=False,
        )
        script = f"/home/runner/_work/_temp/{rng.getrandbits(128):032x}.sh"
        log.line(
            inc.failure_us + 40_000,
            "error",
            f"{script}: line 1: {victim_pid:>5} Killed                  pytest -x -n 4 tests/",
            evidence=ctx.ev("process_killed", "runner shell reports the kill", pid=victim_pid),
        )
        log.line(
            inc.failure_us + 90_000,
            "error",
            "##[error]Process completed with exit code 137.",
            evidence=ctx.ev("process_killed", "runner step exit 137", exit_code=137),
        )
    else:
        kill = memcg_kill(ctx, pod, pod.main, inc.failure_us, victim_pid=victim_pid, victim_comm=comm, rss=int(limit * 0.985), limit=limit)
        if pod.app == "ci_gitlab":
            log.line(
                kill + 2 * US,
                "error",
                "ERROR: Job failed (system failure): Error in container build: exit code: 137, reason: 'OOMKilled'",
                evidence=ctx.ev("process_killed", "gitlab job failed OOMKilled", exit_code=137),
            )
    inc.pid = victim_pid


def node_memory_overcommit(ctx: Ctx) -> None:
    inc, rng, host = ctx.incident, ctx.rng, ctx.host
    capacity = host.memory_kib * 1024
    used0, _ = ctx.world.memory[host.name].value_at(inc.onset_us)
    shares = [rng.uniform(0.25, 0.45) for _ in inc.pods]
    scale = (capacity * 0.99 - used0) / sum(shares)
    for pod, share in zip(inc.pods, shares, strict=True):
        pod.memory_limit = int(capacity * 0.6)
        pod.memory_request = int(pod.memory_limit * rng.uniform(0.05, 0.2))
        ctx.world.shape_app(pod, inc.onset_us, inc.failure_us, ramp(inc.onset_us, inc.failure_us, 2 * GIB, share * scale, 4))
    memory = ctx.world.memory[host.name]
    memory.cut(
        inc.onset_us,
        inc.failure_us + 2 * MINUTE,
        ramp(inc.onset_us, inc.failure_us, used0, capacity * 0.997, 4) + [(inc.failure_us + 2 * MINUTE, used0 + capacity * 0.1, 0.0)],
    )
    ranked = sorted(zip(inc.pods, shares, strict=True), key=lambda ps: -(ps[1] * 1000 + oom_adj(host, ps[0])))
    victim_pod = ranked[0][0]
    trigger_pod = ranked[-1][0]
    inc.pods.remove(victim_pod)
    inc.pods.insert(0, victim_pod)
    tasks = [
        Task(host.kubelet_pid, 0, "kubelet", 1_200_000, 90_000, -999),
        Task(host.containerd_pid, 0, "containerd", 900_000, 40_000, -999),
    ]
    for pod, share in zip(inc.pods, shares, strict=True):
        tasks.append(Task(pod.main.pid, 0, pod.main.comm, pages(int(share * scale)) * 2, pages(int(share * scale)), oom_adj(host, pod)))
    victim = next(t for t in tasks if t.pid == victim_pod.main.pid)
    trigger = next(t for t in tasks if t.pid == trigger_pod.main.pid)
    cid = victim_pod.main.cid
    cpuset = cid if host.cgroup == "v1" else f"cri-containerd-{cid}.scope"
    victim_cg = host.cgroup_path(victim_pod, victim_pod.main)
    marks = {
        "invoked": ctx.ev("oom_invoked", "global oom-killer invoked", pid=trigger.pid),
        "killed": ctx.ev("oom_kill", "global oom kill", pid=victim.pid, container_id=cid, pod_uid=victim_pod.uid),
    }
    kill = oom_report(
        ctx,
        host,
        inc.failure_us,
        trigger=trigger,
        victim=victim,
        tasks=sorted(tasks, key=lambda t: t.pid),
        victim_memcg=victim_cg,
        cpuset=cpuset,
        oom_memcg=None,
        evidence=marks,
    )
    oom_event(
        ctx.sink,
        host,
        kill,
        victim.pid,
        victim.comm,
        victim_cg,
        "CONSTRAINT_NONE",
        ctx.ev("oom_kill", "kubelet system oom", pid=victim.pid),
    )
    # The victim's cgroup was under its own limit; the node's pods as a whole had filled the node.
    victim_rss = victim.rss * 4096
    ctx.incident.cgroups += [
        CgroupReading(victim_cg, kill, victim_rss, victim_rss + victim_rss // 50, victim_pod.memory_limit, oom_kill=1),
        CgroupReading(_kubepods(host), kill, int(capacity * 0.985), int(capacity * 0.997), None, oom_kill=1),
    ]
    victim_pod.end_us = kill
    died(ctx, victim_pod, victim_pod.main, kill, 137, "OOMKilled")
    for pod in inc.pods[1:]:
        pod.end_us = kill + rng.randint(20, 90) * MINUTE
    inc.pid = victim.pid


def _kubepods(host: Host) -> str:
    """The cgroup every pod of the node lives under."""
    return "/kubepods" if host.cgroup == "v1" else "/kubepods.slice"


def eviction_memory_pressure(ctx: Ctx) -> None:
    inc, rng, host = ctx.incident, ctx.rng, ctx.host
    capacity = host.memory_kib * 1024
    used0, _ = ctx.world.memory[host.name].value_at(inc.onset_us)
    threshold_mi = rng.choice((100, 200, 500, 750))
    victim = inc.pod
    assert victim is not None
    victim.qos = "burstable"
    victim.memory_limit = 0
    victim.memory_request = rng.choice((2, 4, 8)) * GIB
    peak = capacity - used0 - threshold_mi * MIB * 0.8
    ctx.world.shape_app(victim, inc.onset_us, inc.failure_us, ramp(inc.onset_us, inc.failure_us, 3 * GIB, peak * 0.85, 3))
    memory = ctx.world.memory[host.name]
    memory.cut(
        inc.onset_us,
        inc.failure_us + 3 * MINUTE,
        ramp(inc.onset_us, inc.failure_us, used0, capacity - threshold_mi * MIB * 0.85, 3) + [(inc.failure_us + 3 * MINUTE, used0, 0.0)],
    )
    available_ki = int(threshold_mi * 1024 * rng.uniform(0.6, 0.95))
    using_ki = int(peak * 0.85) // 1024
    # No kill: the pods as a whole pressed the node to its eviction threshold, no limit was hit.
    pods_usage = int(capacity * 0.96 - threshold_mi * MIB)  # the node minus its system services and the threshold
    inc.cgroups.append(CgroupReading(_kubepods(host), inc.failure_us, pods_usage, pods_usage + threshold_mi * MIB // 4, None))
    ranked = [victim] + inc.pods[1:]
    legacy = host.kubelet_dialect == "legacy"
    t = inc.failure_us
    pressure = ctx.ev("memory_pressure", "node condition MemoryPressure")
    if legacy:
        ctx.sink.kubelet(
            host,
            t - 9 * US,
            "I",
            "helpers.go:826",
            f"eviction manager: thresholds - ignoring grace period: threshold [signal=memory.available, quantity={threshold_mi}Mi] observed {available_ki}Ki",
        )
        ctx.sink.kubelet(
            host,
            t - 9 * US + 300,
            "I",
            "eviction_manager.go:288",
            "eviction manager: node conditions - observed: [MemoryPressure]",
            evidence=pressure,
        )
        ctx.sink.kubelet(
            host,
            t,
            "W",
            "eviction_manager.go:332",
            "eviction manager: attempting to reclaim memory",
            evidence=ctx.ev("eviction", "eviction manager reclaiming memory"),
        )
        ctx.sink.kubelet(host, t + 200, "I", "eviction_manager.go:343", "eviction manager: must evict pod(s) to reclaim memory")
        ranked_text = ", ".join(f"{p.name}_{p.namespace}({p.uid})" for p in ranked)
        ctx.sink.kubelet(host, t + 500, "I", "eviction_manager.go:361", f"eviction manager: pods ranked for eviction: {ranked_text}")
        done = t + rng.randint(2, 30) * US
        ctx.sink.kubelet(
            host,
            done,
            "I",
            "eviction_manager.go:574",
            f"eviction manager: pod {victim.name}_{victim.namespace}({victim.uid}) is evicted successfully",
            evidence=ctx.ev("eviction", "pod evicted", pod=victim.name, namespace=victim.namespace, pod_uid=victim.uid),
        )
        ctx.sink.kubelet(
            host, t - 8 * US, "I", "kubelet_node_status.go:486", f"Recording NodeHasInsufficientMemory event message for node {host.name}"
        )
    else:
        ctx.sink.kubelet(
            host,
            t - 8 * US,
            "I",
            "kubelet_node_status.go:724",
            f'"Recording event message for node" node="{host.name}" event="NodeHasInsufficientMemory"',
            evidence=pressure,
        )
        ctx.sink.kubelet(
            host,
            t,
            "I",
            "eviction_manager.go:366",
            '"Eviction manager: attempting to reclaim" resourceName="memory"',
            evidence=ctx.ev("eviction", "eviction manager reclaiming memory"),
        )
        ctx.sink.kubelet(
            host, t + 200, "I", "eviction_manager.go:377", '"Eviction manager: must evict pod(s) to reclaim" resourceName="memory"'
        )
        refs = ",".join(f'"{p.ref}"' for p in ranked)
        ctx.sink.kubelet(host, t + 500, "I", "eviction_manager.go:395", f'"Eviction manager: pods ranked for eviction" pods=[{refs}]')
        message = (
            f"The node was low on resource: memory. Threshold quantity: {threshold_mi}Mi, available: {available_ki}Ki. Container {victim.main.name} "
            f"was using {using_ki}Ki, request is {victim.memory_request // GIB}Gi, has larger consumption of memory. "
        )
        ctx.sink.kubelet(
            host,
            t + 900,
            "I",
            "event.go:389",
            f'"Event occurred" object="{victim.ref}" fieldPath="" kind="Pod" apiVersion="v1" type="Warning" reason="Evicted" message="{message}"',
            evidence=ctx.ev("eviction", "Evicted event", pod=victim.name, namespace=victim.namespace),
        )
        ctx.sink.kubelet(
            host,
            t + 1400,
            "I",
            "kuberuntime_container.go:779",
            f'"Killing container with a grace period" pod="{victim.ref}" podUID="{victim.uid}" containerName="{victim.main.name}" '
            f'containerID="containerd://{victim.main.cid}" gracePeriod=0',
        )
        done = t + rng.randint(2, 30) * US
        ctx.sink.kubelet(
            host,
            done,
            "I",
            "eviction_manager.go:616",
            f'"Eviction manager: pod is evicted successfully" pod="{victim.ref}"',
            evidence=ctx.ev("eviction", "pod evicted", pod=victim.name, namespace=victim.namespace),
        )
    ctx.app(victim).line(t + 1600, "warning", "received SIGTERM, flushing partial shard and exiting")
    victim.end_us = done
    exited(ctx.sink, host, victim, victim.main, t + 3 * US, rng, 137, inc=True)
    for pod in inc.pods[1:]:
        pod.end_us = inc.failure_us + rng.randint(20, 90) * MINUTE
    inc.pid = victim.main.pid


def sidecar_memory_contention(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    sidecar = pod.containers[-1]
    limit = rng.choice((256, 512, 1024, 2048)) * MIB
    memcg_kill(ctx, pod, sidecar, inc.failure_us, victim_pid=sidecar.pid, victim_comm=sidecar.comm, rss=int(limit * 0.99), limit=limit)
    inc.pid = sidecar.pid


def dataloader_host_memory(ctx: Ctx) -> None:
    inc, rng, host = ctx.incident, ctx.rng, ctx.host
    pod = inc.pod
    assert pod is not None
    limit = pod.memory_limit
    workers = [host.pid_at(rng, pod.start_us + 90 * US) + k for k in range(rng.choice((4, 6, 8, 12, 16)))]
    ctx.world.shape_app(pod, inc.onset_us, inc.failure_us, ramp(inc.onset_us, inc.failure_us, limit * 0.45, limit * 0.99, 4))
    per_worker = int(limit * 0.9 / (len(workers) + 1))
    victim = rng.choice(workers)
    rank_pid = pod.gpu_pid(pod.gpus[0])
    others = tuple(
        Task(p, 0, pod.main.comm, pages(per_worker) * 2, pages(per_worker), oom_adj(host, pod)) for p in [rank_pid] + workers if p != victim
    )
    kill = memcg_kill(
        ctx,
        pod,
        pod.main,
        inc.failure_us,
        victim_pid=victim,
        victim_comm=pod.main.comm,
        rss=per_worker + per_worker // 9,
        limit=limit,
        others=others,
        container_dies=False,
    )
    site = rng.choice(("/usr/local/lib/python3.10/dist-packages", "/opt/conda/lib/python3.11/site-packages"))
    frames = [
        ("/workspace/train.py", rng.randint(150, 420), "train_epoch", "for step, batch in enumerate(loader):"),
        (f"{site}/torch/utils/data/dataloader.py", rng.choice((630, 701, 708)), "__next__", "data = self._next_data()"),
        (f"{site}/torch/utils/data/dataloader.py", rng.choice((1448, 1458, 1465)), "_next_data", "idx, data = self._get_data()"),
        (f"{site}/torch/utils/data/dataloader.py", rng.choice((1402, 1412, 1428)), "_get_data", "success, data = self._try_get_data()"),
        (
            f"{site}/torch/utils/data/dataloader.py",
            rng.choice((1256, 1264, 1284)),
            "_try_get_data",
            "raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e",
        ),
    ]
    log = ctx.app(pod)
    text = f"RuntimeError: DataLoader worker (pid {victim}) is killed by signal: Killed. "
    crash_tail(
        ctx,
        log,
        kill + rng.randint(1, 5) * US,
        text,
        ctx.ev("dataloader_killed", "DataLoader worker killed", pid=victim),
        frames,
        prefix=_prefix(pod),
    )
    died(ctx, pod, pod.main, kill + 8 * US, 1, "Error")
    inc.pid = victim


def _prefix(pod: Pod) -> str:
    return "[rank0]:" if pod.role == "train" and len(pod.gpus) > 1 else ""


def shm_exhaustion(ctx: Ctx) -> None:
    inc, rng, host = ctx.incident, ctx.rng, ctx.host
    pod = inc.pod
    assert pod is not None
    log = ctx.app(pod)
    t = inc.failure_us
    if len(pod.gpus) > 1 and rng.random() < 0.5:
        rank_pid = pod.gpu_pid(pod.gpus[-1])
        segment = f"/dev/shm/nccl-{k8s_suffix(rng, 6)}"
        size = rng.choice((9637888, 33030144, 4194304 * 3))
        node = host.name.split(".")[0]
        log.raw(
            t,
            [
                (
                    f"{node}:{rank_pid}:{rank_pid + 40} [{len(pod.gpus) - 1}] misc/shmutils.cc:72 NCCL WARN Error: failed to extend {segment} to {size} bytes",
                    ctx.ev("shm_error", "NCCL cannot extend /dev/shm", pid=rank_pid),
                ),
                f"{node}:{rank_pid}:{rank_pid + 40} [{len(pod.gpus) - 1}] NCCL INFO proxy.cc:1252 -> 2",
            ],
        )
        inc.pid = rank_pid
    else:
        worker = host.pid_at(rng, pod.start_us + 80 * US) + rng.randint(0, 7)
        log.raw(
            t,
            [
                (
                    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
                    ctx.ev("shm_error", "bus error in DataLoader worker"),
                )
            ],
            _prefix(pod),
        )
        site = rng.choice(("/usr/local/lib/python3.10/dist-packages", "/opt/conda/lib/python3.11/site-packages"))
        frames = [
            ("/workspace/train.py", rng.randint(150, 420), "train_epoch", "for step, batch in enumerate(loader):"),
            (f"{site}/torch/utils/data/_utils/signal_handling.py", 66, "handler", "_error_if_any_worker_fails()"),
        ]
        text = (
            f"RuntimeError: DataLoader worker (pid {worker}) is killed by signal: Bus error. It is possible that dataloader's workers are out of "
            "shared memory. Please try to raise your shared memory limit."
        )
        crash_tail(ctx, log, t + 30_000, text, ctx.ev("dataloader_killed", "DataLoader worker bus error", pid=worker), frames, _prefix(pod))
        inc.pid = worker
    died(ctx, pod, pod.main, t + 2 * US, 1, "Error")


MODE_WRITERS = {
    "container-memory-limit": container_memory_limit,
    "node-memory-overcommit": node_memory_overcommit,
    "eviction-memory-pressure": eviction_memory_pressure,
    "sidecar-memory-contention": sidecar_memory_contention,
    "dataloader-host-memory": dataloader_host_memory,
    "shm-exhaustion": shm_exhaustion,
}
