"""The pods each incident happens to, created before the background fills the GPUs.

A GPU incident's pod reserves a GPU group for its whole life, so no background job is
scheduled onto the same devices; an NCCL job gets one pod per host under a shared job name.
"""

from __future__ import annotations

import random

from rca.datasets._model import MINUTE, US, Host, Pod, k8s_suffix
from rca.datasets._plan import MODE_SHAPES, Incident, Windows, add_sidecar, gpu_groups, make_pod

_GPU_ROLES = ("train", "serve", "ci")
NCCL_TIMEOUT_MS = 600_000


def prepare(incident: Incident, busy: Windows) -> None:
    """Create the pods an incident happens to, reserving GPU groups for the GPU ones."""
    rng, host, mode = incident.rng, incident.host, incident.mode
    start = incident.onset_us - rng.randint(20 * MINUTE, 10 * 60 * MINUTE)
    if mode == "host-memory-leak-process":
        return
    if mode == "nccl-timeout-cascade":
        job = None
        for number, member in enumerate(incident.hosts):
            end = incident.failure_us + (2 * US if number == 0 else NCCL_TIMEOUT_MS * 1000 + rng.randint(20, 90) * US)
            pod = _gpu_pod(rng, member, busy, "train", start, end, incident)
            job = job or f"{pod.name.rsplit('-', 2)[0]}-{k8s_suffix(rng)}"
            pod.namespace = incident.pods[0].namespace if incident.pods else pod.namespace
            pod.name = member.claim(rng, pod.namespace, f"{job}-worker-{number}")
            pod.app = "py_logging" if pod.app in ("hf_trainer", "jsonl") else pod.app
            incident.pods.append(pod)
        return
    if mode in ("node-memory-overcommit", "eviction-memory-pressure"):
        for _ in range(rng.randint(2, 3)):
            incident.pods.append(_cpu_pod(rng, host, "batch", start, incident.failure_us))
        return
    role = rng.choice(MODE_SHAPES[mode].role.split("|"))
    end = incident.failure_us + (rng.randint(3, 9) * MINUTE if mode == "sidecar-memory-contention" else 0)
    if role in _GPU_ROLES:
        pod = _gpu_pod(rng, host, busy, role, start, end, incident)
    else:
        pod = _cpu_pod(rng, host, role, start, end)
    incident.pods.append(pod)
    if mode == "sidecar-memory-contention":
        add_sidecar(rng, host, pod)
    if mode == "gpu-contention-shared-device":
        intruder = make_pod(
            rng,
            host,
            rng.choice(("notebook", "train")),
            incident.onset_us - rng.randint(0, 4 * MINUTE),
            incident.failure_us + rng.randint(1, 4) * MINUTE,
            [],
        )
        host.pods.append(intruder)
        incident.pods.append(intruder)


def _cpu_pod(rng: random.Random, host: Host, role: str, start: int, end: int) -> Pod:
    pod = make_pod(rng, host, role, start, end, [])
    host.pods.append(pod)
    return pod


def _gpu_pod(rng: random.Random, host: Host, busy: Windows, role: str, start: int, end: int, incident: Incident) -> Pod:
    groups = gpu_groups(host)
    for begin in (start, incident.onset_us - 2 * 60 * MINUTE, incident.onset_us - 20 * MINUTE, incident.onset_us - 5 * MINUTE):
        free = [n for n in range(len(groups)) if busy.free((host.name, "group", n), begin - 5 * MINUTE, end + 5 * MINUTE)]
        if free:
            number = rng.choice(free)
            busy.take((host.name, "group", number), begin - 5 * MINUTE, end + 5 * MINUTE)
            pod = make_pod(rng, host, role, begin, end, list(groups[number]))
            host.pods.append(pod)
            return pod
    raise ValueError(f"no free GPUs on {host.name} for {incident.mode}: use more days or hosts")
