"""What an SRE collects around an OOM besides the logs: cgroup files, DCGM metrics, PyTorch memory snapshots.

Each OOM-class mode has one stage of the OOM walk that explains it (:data:`EXPLAIN_STAGES`,
written to the ground truth), and its incidents get the data that stage reads:

- ``cgroup``: the memory files of the cgroups the incident recorded (an OOM hook copied
  them at the kill) under ``<host>/oom-snapshots/<time>/sys/fs/cgroup/...``;
- ``gpu_processes``: a Prometheus range-query export of the GPU's DCGM memory and
  utilization over the incident (``<host>/prometheus/``), and the dcgm-exporter scrape the
  hook saved at the failure, one series per pod on each GPU (``<host>/dcgm/``);
- ``allocator``: the same DCGM export, and PyTorch snapshots of the failing rank
  (``<host>/pods/<ns>_<pod>/memory-snapshots/``): two for a leak (a third of the way in,
  and at the OOM, where the leaking site has grown), one at the OOM otherwise (a
  fragmented arena, or a request larger than anything free).

Files carry the time they were taken as their modification time.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

from rca.datasets import _cgroups, _snapshots
from rca.datasets._formats import moment
from rca.datasets._incidents import CudaOom, World
from rca.datasets._model import MIB, MINUTE, US, Host, Pod
from rca.datasets._plan import Incident
from rca.datasets._snapshots import Allocation
from rca.datasets._writer import Tally

EXPLAIN_STAGES = {
    "container-memory-limit": "cgroup",
    "node-memory-overcommit": "cgroup",
    "eviction-memory-pressure": "cgroup",
    "sidecar-memory-contention": "cgroup",
    "dataloader-host-memory": "cgroup",
    "host-memory-leak-process": "cgroup",
    "cuda-context-leak": "gpu_processes",
    "gpu-contention-shared-device": "gpu_processes",
    "kv-cache-growth": "gpu_processes",
    "cuda-oom-batch-too-large": "allocator",
    "gpu-memory-fragmentation": "allocator",
    "gpu-memory-leak-autograd": "allocator",
    "lora-adapter-leak": "allocator",
}
"""The stage of ``rca explain``'s walk whose data explains each mode's incidents (modes not listed: none)."""

_LEAKS = ("gpu-memory-leak-autograd", "lora-adapter-leak")
_DRIVER_RESERVE_MIB = 562  # DCGM's FB_RESERVED: what FB_USED + FB_FREE leave out of the board's memory
_CONTEXT_MIB = 420  # the CUDA context of a process, outside PyTorch's allocator
_DCGM_METRICS = (
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
)


def write_artifacts(world: World, out: Path, tally: Tally, seed: int) -> None:
    """Write every incident's artifacts under ``out/logs``."""
    for incident in world.incidents:
        rng = random.Random(f"{seed}:artifacts:{incident.key}")
        stage = EXPLAIN_STAGES.get(incident.mode)
        for reading in incident.cgroups:
            _cgroup_folder(out, tally, incident.host, reading, rng)
        if stage in ("gpu_processes", "allocator") and incident.gpu_index is not None and incident.pod is not None:
            _dcgm_export(world, incident, out, tally, rng)
            if stage == "gpu_processes":
                _dcgm_scrape(world, incident, out, tally, rng)
            elif incident.oom is not None:
                _allocator_snapshots(world, incident, incident.oom, out, tally, rng)


def _put(out: Path, tally: Tally, path: str, data: bytes, at_us: int, lines: int) -> None:
    if path in tally.written:
        raise RuntimeError(f"two artifacts were written to {path}")
    tally.written.add(path)
    target = out / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    os.utime(target, (at_us / US, at_us / US))
    tally.files += 1
    tally.bytes += len(data)
    tally.lines += lines
    tally.incident_lines += lines


def _stamp(ts: int) -> str:
    return f"{moment(ts):%Y%m%dT%H%M%SZ}"


# --- cgroup files ------------------------------------------------------------------------------


def _cgroup_folder(out: Path, tally: Tally, host: Host, reading: _cgroups.CgroupReading, rng: random.Random) -> None:
    taken = reading.at_us + rng.randint(200, 3_000) * 1000
    controller = "/memory" if host.cgroup == "v1" else ""
    folder = f"logs/{host.name}/oom-snapshots/{_stamp(reading.at_us)}/sys/fs/cgroup{controller}{reading.path}"
    for name, text in _cgroups.files(reading, host.cgroup, rng).items():
        _put(out, tally, f"{folder}/{name}", text.encode(), taken, text.count("\n"))


# --- DCGM ----------------------------------------------------------------------------------------


def _instance(host: Host, rng: random.Random) -> str:
    found = re.search(r"([0-9]+)-([0-9]+)-([0-9]+)-([0-9]+)", host.name)
    address = ".".join(found.groups()) if found else f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"
    return f"{address}:9400"


def _dcgm_export(world: World, incident: Incident, out: Path, tally: Tally, rng: random.Random) -> None:
    """A range query of the incident GPU's memory and utilization, exported as the Prometheus API answers it."""
    host, gpu, pod = incident.host, incident.gpu_index, incident.pod
    assert gpu is not None and pod is not None
    state = world.gpu[host.name]
    start, end = incident.onset_us - 10 * MINUTE, incident.failure_us + 2 * MINUTE
    step = max(15, -(-((end - start) // US) // 2250) * 15) * US  # about 150 points, on 15 s boundaries
    times = [t for t in range(start - start % step + step, end, step) if not state.is_lost(gpu, t)]
    readings = [state.level(gpu, t) for t in times]
    capacity = state.total_mib - _DRIVER_RESERVE_MIB
    device = host.gpus[gpu]
    labels = {"Hostname": host.name, "UUID": device.uuid, "container": pod.main.name, "device": f"nvidia{gpu}", "gpu": str(gpu),
              "instance": _instance(host, rng), "job": "nvidia-dcgm-exporter", "modelName": device.model.name, "namespace": pod.namespace,
              "pci_bus_id": device.bus_id, "pod": pod.name}
    fb_used = [min(round(used), capacity) for used, _ in readings]
    values = {
        "DCGM_FI_DEV_FB_USED": fb_used,
        "DCGM_FI_DEV_FB_FREE": [capacity - used for used in fb_used],
        "DCGM_FI_DEV_GPU_UTIL": [round(util) for _, util in readings],
    }
    result = [{"metric": {"__name__": name, **labels}, "values": [[t // US, str(v)] for t, v in zip(times, series, strict=True)]}
              for name, series in values.items()]
    document = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}, separators=(",", ":"))
    exported = incident.end_us + rng.randint(5, 40) * MINUTE
    _put(out, tally, f"logs/{host.name}/prometheus/dcgm-gpu{gpu}-{_stamp(incident.failure_us)}.json", document.encode() + b"\n", exported, 1)


def _pods_on(host: Host, gpu: int, ts: int) -> list[Pod]:
    return [pod for pod in host.pods if gpu in pod.gpus and pod.start_us <= ts < pod.end_us]


def _dcgm_scrape(world: World, incident: Incident, out: Path, tally: Tally, rng: random.Random) -> None:
    """``curl :9400/metrics`` as the OOM hook saved it: every GPU of the node, a series per pod using it."""
    host = incident.host
    state = world.gpu[host.name]
    taken = incident.failure_us - rng.randint(2, 40) * US
    capacity = state.total_mib - _DRIVER_RESERVE_MIB
    lines = []
    for name, kind, text in _DCGM_METRICS:
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
        for device in host.gpus:
            level, util = state.level(device.index, taken)
            used = min(round(level), capacity)
            value = {
                "DCGM_FI_DEV_FB_FREE": capacity - used,
                "DCGM_FI_DEV_FB_USED": used,
                "DCGM_FI_DEV_GPU_UTIL": round(util),
                "DCGM_FI_DEV_XID_ERRORS": 0,
            }[name]
            for pod in _pods_on(host, device.index, taken) or [None]:
                where = f'container="{pod.main.name}",namespace="{pod.namespace}",pod="{pod.name}"' if pod else 'container="",namespace="",pod=""'
                lines.append(
                    f'{name}{{gpu="{device.index}",UUID="{device.uuid}",pci_bus_id="{device.bus_id}",device="nvidia{device.index}",'
                    f'modelName="{device.model.name}",Hostname="{host.name}",DCGM_FI_DRIVER_VERSION="{host.driver}",{where}}} {value}'
                )
    text = "\n".join(lines) + "\n"
    _put(out, tally, f"logs/{host.name}/dcgm/metrics-{_stamp(taken)}.txt", text.encode(), taken, len(lines))


# --- PyTorch snapshots ------------------------------------------------------------------------------

_TRAIN_SITES = {
    "weights": ("/workspace/model.py:58:__init__", "linear"),
    "state": ("/workspace/train.py:211:main", "optimizer"),
    "activations": ("/workspace/model.py:131:forward", "linear"),
    "leak": ("/workspace/train.py:274:train_step", "backward"),  # the loss kept with its graph: history.append(loss)
    "caller": "/workspace/train.py:402:main",
}
_VLLM = "/usr/local/lib/python3.10/dist-packages/vllm"
_SERVE_SITES = {
    "weights": (f"{_VLLM}/model_executor/model_loader/loader.py:398:load_model", "empty"),
    "state": (f"{_VLLM}/worker/cache_engine.py:85:_allocate_kv_cache", "empty"),
    "activations": (f"{_VLLM}/worker/model_runner.py:1703:execute_model", "linear"),
    "leak": (f"{_VLLM}/lora/models.py:356:from_local_checkpoint", "empty"),  # adapters loaded and never evicted
    "caller": f"{_VLLM}/worker/worker.py:342:execute_model",
}


def _allocator_snapshots(world: World, incident: Incident, oom: CudaOom, out: Path, tally: Tally, rng: random.Random) -> None:
    host, pod, gpu = incident.host, incident.pod, incident.gpu_index
    assert pod is not None and gpu is not None
    state = world.gpu[host.name]
    rank = pod.gpus.index(gpu)
    sites = _SERVE_SITES if pod.role == "serve" else _TRAIN_SITES
    base = _allocated_at(state.level(gpu, incident.onset_us)[0], oom)
    leak_block = rng.choice((24, 42, 64, 96, 128)) * MIB if incident.mode == "gpu-memory-leak-autograd" else rng.randint(300, 1400) * MIB
    early = incident.onset_us + (incident.failure_us - incident.onset_us) // 3
    moments = [early, incident.failure_us] if incident.mode in _LEAKS else [incident.failure_us]
    for taken in moments:
        at_oom = taken == incident.failure_us
        allocated = oom.allocated if at_oom else _allocated_at(state.level(gpu, taken)[0], oom)
        leaked = max(allocated - base, 0) if incident.mode in _LEAKS else 0
        allocations = _program(sites, incident, base if leaked else allocated, leaked, leak_block, oom, taken, rng)
        failed = (incident.failure_us, oom.requested, oom.free) if at_oom else None
        snapshot = _snapshots.build(allocations, device=rank, oom=failed, taken_us=taken + 1000)
        path = f"logs/{host.name}/pods/{pod.namespace}_{pod.name}/memory-snapshots/rank{rank}-{_stamp(taken)}.pickle"
        _put(out, tally, path, _snapshots.dumps(snapshot), taken + rng.randint(1, 5) * US, 0)


def _allocated_at(used_mib: float, oom: CudaOom) -> int:
    """What PyTorch had allocated when nvidia-smi showed ``used_mib``: less its context and the cache it kept."""
    return max(int((used_mib - _CONTEXT_MIB) * MIB) - oom.reserved_unallocated, 64 * MIB)


def _program(sites: dict, incident: Incident, steady: int, leaked: int, leak_block: int, oom: CudaOom, taken: int,
             rng: random.Random) -> list[Allocation]:
    """The live tensors of the failing process at ``taken``: weights, optimizer state or KV cache, activations, the leak."""
    caller = sites["caller"]
    loaded = incident.onset_us - rng.randint(20, 240) * MINUTE
    allocations = []

    def blocks(role: str, total: int, count: int, since: int, until: int, freed: bool = False, arena: str | None = None) -> None:
        site, via = sites[role]
        size = max(total // count // 512 * 512, 512)
        for k in range(count):
            at = since + (until - since) * k // max(count, 1)
            allocations.append(Allocation(site, size, at, freed_us=at + 1000 if freed else None, via=via, caller=caller, arena=arena))

    blocks("weights", int(steady * 0.55), 32, loaded, loaded + 30 * US)
    blocks("state", int(steady * 0.25), 16, loaded + 40 * US, loaded + 60 * US)
    activations = steady - int(steady * 0.55) // 32 * 32 - int(steady * 0.25) // 16 * 16
    if incident.mode == "gpu-memory-fragmentation":
        # Live activations with the holes freed ones left between them, carved from one cached block: no hole holds the request.
        holes = 24
        site, via = sites["activations"]
        live, hole = max(activations // holes // 512 * 512, 512), max(oom.reserved_unallocated // holes // 512 * 512, 512)
        for k in range(holes):
            at = taken - 5 * MINUTE + k * 10 * US
            allocations.append(Allocation(site, live, at, via=via, caller=caller, arena="activations"))
            allocations.append(Allocation(site, hole, at + 1, freed_us=taken - 2 * MINUTE, via=via, caller=caller, arena="activations"))
    else:
        blocks("activations", activations, 24, taken - MINUTE, taken - 2 * US)
        blocks("activations", activations // 24 * 8, 8, taken - 2 * MINUTE, taken - MINUTE, freed=True)
    if leaked >= leak_block:
        blocks("leak", leak_block * (leaked // leak_block), leaked // leak_block, incident.onset_us, taken - 3 * US)
    return allocations
