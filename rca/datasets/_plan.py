"""When and where each incident happens, and the pods that live on each host.

Incidents get exclusive windows on the hosts they touch, so the shaped curves of two
incidents never overlap; background pods then fill the GPU time the incident pods leave.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rca.datasets._cgroups import CgroupReading
from rca.datasets._model import DAY, GIB, HOUR, MINUTE, Container, Host, Pod, hex_id, k8s_suffix, uuid4

if TYPE_CHECKING:
    from rca.datasets._incidents import CudaOom

MODES = (
    "container-memory-limit",
    "node-memory-overcommit",
    "eviction-memory-pressure",
    "sidecar-memory-contention",
    "dataloader-host-memory",
    "shm-exhaustion",
    "cuda-oom-batch-too-large",
    "gpu-memory-fragmentation",
    "kv-cache-growth",
    "gpu-memory-leak-autograd",
    "cuda-context-leak",
    "lora-adapter-leak",
    "gpu-contention-shared-device",
    "gpu-hardware-fault",
    "nccl-timeout-cascade",
    "jvm-heap-metaspace",
    "go-goroutine-leak",
    "host-memory-leak-process",
)


@dataclass(frozen=True)
class ModeShape:
    lead_min: tuple[int, int]  # how long the cause builds up before the first failure
    tail_min: int  # how long evidence keeps arriving after it
    role: str  # the workload the incident pod runs ("" = a host service, no pod)


MODE_SHAPES = {
    "container-memory-limit": ModeShape((8, 40), 4, "train|batch|ci"),
    "node-memory-overcommit": ModeShape((10, 30), 4, "batch"),
    "eviction-memory-pressure": ModeShape((15, 45), 6, "batch"),
    "sidecar-memory-contention": ModeShape((10, 40), 4, "serve|train"),
    "dataloader-host-memory": ModeShape((10, 30), 3, "train"),
    "shm-exhaustion": ModeShape((3, 10), 3, "train"),
    "cuda-oom-batch-too-large": ModeShape((6, 20), 3, "train"),
    "gpu-memory-fragmentation": ModeShape((15, 40), 3, "train"),
    "kv-cache-growth": ModeShape((15, 45), 3, "serve"),
    "gpu-memory-leak-autograd": ModeShape((35, 90), 3, "train"),
    "cuda-context-leak": ModeShape((20, 60), 3, "train"),
    "lora-adapter-leak": ModeShape((20, 60), 3, "serve"),
    "gpu-contention-shared-device": ModeShape((8, 30), 3, "train"),
    "gpu-hardware-fault": ModeShape((2, 6), 5, "train|serve"),
    "nccl-timeout-cascade": ModeShape((3, 8), 14, "train"),
    "jvm-heap-metaspace": ModeShape((20, 90), 3, "jvm"),
    "go-goroutine-leak": ModeShape((30, 120), 3, "go"),
    "host-memory-leak-process": ModeShape((120, 300), 4, ""),
}

# The modes whose ground truth names a GPU.
GPU_MODES = frozenset(
    {
        "cuda-oom-batch-too-large",
        "gpu-memory-fragmentation",
        "kv-cache-growth",
        "gpu-memory-leak-autograd",
        "cuda-context-leak",
        "lora-adapter-leak",
        "gpu-contention-shared-device",
        "gpu-hardware-fault",
        "nccl-timeout-cascade",
    }
)

_GUARD = 10 * MINUTE


@dataclass
class Incident:
    """One injected failure; ``hosts[0]`` is the root host (the first to fail)."""

    key: str
    mode: str
    hosts: list[Host]
    onset_us: int
    failure_us: int
    end_us: int
    rng: random.Random
    pods: list[Pod] = field(default_factory=list)  # pods[0] is the one that fails first
    pid: int | None = None
    gpu_index: int | None = None
    gpu: int | None = None  # the device the incident happens on, chosen when its pod is placed
    cgroups: list[CgroupReading] = field(default_factory=list)  # what the memory cgroups said when it struck
    oom: CudaOom | None = None  # the CUDA OOM it ends in

    @property
    def host(self) -> Host:
        return self.hosts[0]

    @property
    def pod(self) -> Pod | None:
        return self.pods[0] if self.pods else None


@dataclass
class Windows:
    """Busy intervals per key (a host, or a host's GPU group)."""

    busy: dict[tuple, list[tuple[int, int]]] = field(default_factory=dict)

    def free(self, key: tuple, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in self.busy.get(key, []))

    def take(self, key: tuple, start: int, end: int) -> None:
        self.busy.setdefault(key, []).append((start, end))
        self.busy[key].sort()


def schedule(rng: random.Random, hosts: list[Host], start_us: int, end_us: int, per_mode: int) -> list[Incident]:
    """Place ``per_mode`` incidents of every mode in exclusive per-host windows."""
    wanted = [mode for mode in MODES for _ in range(per_mode)]
    rng.shuffle(wanted)
    load = {host.name: 0 for host in hosts}
    windows = Windows()
    incidents = []
    for number, mode in enumerate(wanted, 1):
        shape = MODE_SHAPES[mode]
        lead = rng.randint(*shape.lead_min) * MINUTE + rng.randint(0, 59_999_999)
        tail = shape.tail_min * MINUTE
        width = 1 if mode != "nccl-timeout-cascade" else min(len(hosts), rng.randint(2, 4))
        placed = _place(rng, hosts, load, windows, start_us, end_us, lead, tail, width)
        if placed is None:
            raise ValueError(f"cannot fit {len(wanted)} incidents into the time range: use more days or hosts, or fewer incidents per mode")
        chosen, failure = placed
        for host in chosen:
            load[host.name] += 1
        incident_rng = random.Random(f"{rng.random()}:{mode}:{number}")
        incidents.append(Incident(f"INC-{number:04d}", mode, chosen, failure - lead, failure, failure + tail, incident_rng))
    incidents.sort(key=lambda inc: inc.failure_us)
    for number, incident in enumerate(incidents, 1):
        incident.key = f"INC-{number:04d}"
    return incidents


def _place(
    rng: random.Random,
    hosts: list[Host],
    load: dict[str, int],
    windows: Windows,
    start_us: int,
    end_us: int,
    lead: int,
    tail: int,
    width: int,
) -> tuple[list[Host], int] | None:
    earliest = start_us + lead + HOUR
    latest = end_us - tail - 40 * MINUTE
    if latest <= earliest:
        return None
    for _ in range(400):
        by_load = sorted(hosts, key=lambda h: (load[h.name], rng.random()))
        chosen = by_load[:width] if rng.random() < 0.8 else rng.sample(hosts, width)
        failure = rng.randint(earliest, latest)
        window = (failure - lead - _GUARD, failure + tail + _GUARD)
        if all(windows.free((h.name,), *window) for h in chosen):
            for host in chosen:
                windows.take((host.name,), *window)
            return chosen, failure
    return None


# --- pods -------------------------------------------------------------------------------

_TRAIN_JOBS = (
    "llama3-8b-sft",
    "mistral-7b-dpo",
    "bert-large-pretrain",
    "vit-h14-finetune",
    "whisper-distill",
    "sdxl-lora-train",
    "qwen2-7b-grpo",
    "t5-xl-summarize",
    "resnet152-imagenet",
    "deberta-v3-rerank",
    "gemma-2b-sft",
    "clip-vitl-contrastive",
    "mixtral-8x7b-ft",
    "phi3-mini-sft",
    "olmo-1b-pretrain",
    "detr-coco-train",
    "wav2vec2-ctc",
    "llava-1.5-13b-ft",
)
_SERVE_MODELS = ("llama3-70b", "mistral-7b", "qwen2-72b", "llama3-8b", "mixtral-8x7b", "gemma2-27b", "phi3-medium", "codellama-34b")
_TRAIN_NS = ("ml-train", "research", "team-nlp", "team-vision", "llm-finetune", "kubeflow")
_SERVE_NS = ("llm-serving", "inference", "model-serving")
_BATCH_JOBS = ("feature-extract", "embed-backfill", "tokenize-shards", "dedup-corpus", "parquet-compact", "index-builder", "eval-harness")
_JVM_APPS = ("feature-store", "kafka-connect", "model-registry", "search-indexer", "spark-exec", "trino-worker")
_GO_APPS = ("model-gateway", "inference-router", "metrics-proxy", "batch-scheduler", "token-broker", "artifact-cache")
_TRAIN_IMAGES = (
    "nvcr.io/nvidia/pytorch:24.05-py3",
    "nvcr.io/nvidia/pytorch:24.10-py3",
    "pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime",
    "ghcr.io/acme/llm-train:2024.11.3",
    "registry.internal/ml/trainer:7f3c2a1",
)
_TRAIN_COMMS = ("python3", "python", "pt_main_thread")
_EXES = ("/usr/bin/python3", "/opt/conda/bin/python", "python3", "/usr/local/bin/python", "/workspace/.venv/bin/python3")
SIDECARS = (
    ("istio-proxy", "envoy", "docker.io/istio/proxyv2:1.22.3"),
    ("fluent-bit", "fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.1.9"),
    ("vector", "vector", "timberio/vector:0.41.1-debian"),
    ("otel-collector", "otelcol-contrib", "otel/opentelemetry-collector-contrib:0.110.0"),
)
DAEMONSETS = (
    ("kube-proxy", "kube-system", "kube-proxy"),
    ("calico-node", "kube-system", "calico-node"),
    ("nvidia-device-plugin-daemonset", "gpu-operator", "nvidia-device-plugin"),
    ("nvidia-dcgm-exporter", "gpu-operator", "dcgm-exporter"),
    ("node-exporter", "monitoring", "node_exporter"),
    ("fluent-bit", "logging", "fluent-bit"),
)


def _container(rng: random.Random, host: Host, at_us: int, name: str, comm: str, image: str) -> Container:
    return Container(name, hex_id(rng), host.pid_at(rng, at_us), comm, image)


def make_pod(rng: random.Random, host: Host, role: str, start_us: int, end_us: int, gpus: list[int]) -> Pod:
    """A pod of ``role`` with names, ids and limits in the style such workloads have."""
    rs = k8s_suffix(rng, rng.choice((9, 10)))
    if role == "train":
        job = rng.choice(_TRAIN_JOBS)
        name = rng.choice((f"{job}-worker-{rng.randint(0, 7)}", f"{job}-master-0", f"{job}-{k8s_suffix(rng)}"))
        namespace = rng.choice(_TRAIN_NS)
        main = _container(
            rng, host, start_us, rng.choice(("trainer", "pytorch", "main")), rng.choice(_TRAIN_COMMS), rng.choice(_TRAIN_IMAGES)
        )
        app = rng.choice(("py_logging", "jsonl", "hf_trainer", "deepspeed"))
        limit = rng.choice((64, 128, 256, 384)) * GIB
    elif role == "serve":
        model = rng.choice(_SERVE_MODELS)
        name = f"vllm-{model}-{rs}-{k8s_suffix(rng)}"
        namespace = rng.choice(_SERVE_NS)
        v1 = rng.random() < 0.5
        image = "vllm/vllm-openai:v0.8.5" if v1 else "vllm/vllm-openai:v0.6.3.post1"
        main = _container(rng, host, start_us, "vllm", "python3", image)
        app = "vllm_v1" if v1 else "vllm_v0"
        limit = rng.choice((64, 96, 128)) * GIB
    elif role == "ci":
        gitlab = rng.random() < 0.5
        if gitlab:
            name = f"runner-{k8s_suffix(rng, 8)}-project-{rng.randint(10, 900)}-concurrent-{rng.randint(0, 3)}-{k8s_suffix(rng)}"
            namespace, cname, app = "gitlab-runner", "build", "ci_gitlab"
        else:
            name = f"arc-gpu-runners-{k8s_suffix(rng)}-runner-{k8s_suffix(rng)}"
            namespace, cname, app = "arc-runners", "runner", "ci_github"
        main = _container(rng, host, start_us, cname, rng.choice(("python3", "pytest", "bash")), "ghcr.io/acme/ci-cuda:12.4-py311")
        limit = rng.choice((16, 32, 48)) * GIB
    elif role == "batch":
        name = f"{rng.choice(_BATCH_JOBS)}-{rng.randint(28000000, 29999999)}-{k8s_suffix(rng)}"
        namespace = rng.choice(("data-platform", "ml-data", "batch"))
        main = _container(rng, host, start_us, "worker", rng.choice(("python3", "python")), "ghcr.io/acme/data-jobs:3.11-slim")
        app = rng.choice(("py_logging", "jsonl"))
        limit = rng.choice((8, 16, 24, 32, 48)) * GIB
    elif role == "jvm":
        base = rng.choice(_JVM_APPS)
        name = f"{base}-{rs}-{k8s_suffix(rng)}" if base != "kafka-connect" else f"{base}-{rng.randint(0, 2)}"
        namespace = rng.choice(("feature-store", "data-platform", "platform"))
        main = _container(
            rng, host, start_us, "app", "java", rng.choice(("eclipse-temurin:17-jre", "eclipse-temurin:21-jre", "amazoncorretto:17"))
        )
        app = "jvm"
        limit = rng.choice((4, 6, 8, 12)) * GIB
    elif role == "go":
        base = rng.choice(_GO_APPS)
        name = f"{base}-{rs}-{k8s_suffix(rng)}"
        namespace = rng.choice(("platform", "llm-serving", "gateway"))
        main = _container(
            rng,
            host,
            start_us,
            base.split("-")[0],
            base.replace("-", "")[:15],
            f"ghcr.io/acme/{base}:v1.{rng.randint(3, 19)}.{rng.randint(0, 9)}",
        )
        app = "go_json"
        limit = rng.choice((1, 2, 4)) * GIB
    elif role == "notebook":
        user = rng.choice(("alice", "bob", "chen", "dana", "emre", "farah", "gopal", "hana"))
        name, namespace = f"jupyter-{user}", "jupyterhub"
        main = _container(rng, host, start_us, "notebook", "python", "quay.io/jupyter/pytorch-notebook:cuda12-2024-11-18")
        app = None
        limit = 32 * GIB
    else:
        raise ValueError(f"unknown role {role!r}")
    qos = "guaranteed" if rng.random() < 0.2 else "burstable"
    request = limit if qos == "guaranteed" else limit // rng.choice((2, 4, 8))
    name = host.claim(rng, namespace, name)
    pod = Pod(name, namespace, uuid4(rng), qos, [main], start_us, end_us, role, gpus, app, limit, request)
    pod.exe = rng.choice(_EXES) if role in ("train", "ci", "notebook") else "python3"
    pod.torch = "new" if role == "serve" else rng.choice(("old", "mid", "new", "new"))
    return pod


def add_sidecar(rng: random.Random, host: Host, pod: Pod) -> Container:
    name, comm, image = rng.choice(SIDECARS)
    sidecar = _container(rng, host, pod.start_us, name, comm, image)
    pod.containers.append(sidecar)
    return sidecar


def daemonset_pods(rng: random.Random, host: Host, start_us: int, end_us: int) -> list[Pod]:
    """The per-node agents: running since before the window, never ending inside it."""
    pods = []
    for base, namespace, cname in DAEMONSETS:
        if base.startswith("nvidia") and not host.gpus:
            continue
        since = start_us - rng.randint(1, 30) * DAY - rng.randint(0, DAY)
        container = Container(
            cname,
            hex_id(rng),
            host.pid_at(rng, host.boot_us + rng.randint(60, 900) * 1_000_000),
            cname[:15],
            f"registry.k8s.io/{cname}:stable",
        )
        pods.append(
            Pod(
                host.claim(rng, namespace, f"{base}-{k8s_suffix(rng)}"),
                namespace,
                uuid4(rng),
                "burstable",
                [container],
                since,
                end_us + DAY,
                "daemon",
            )
        )
    return pods


def gpu_groups(host: Host) -> list[list[int]]:
    size = max(1, host.gpu_group)
    indices = [gpu.index for gpu in host.gpus]
    return [indices[i : i + size] for i in range(0, len(indices), size)]


def background_pods(rng: random.Random, host: Host, busy: Windows, start_us: int, end_us: int) -> list[Pod]:
    """GPU workloads filling each GPU group's free time, plus a few long-running CPU services."""
    pods: list[Pod] = []
    for number, group in enumerate(gpu_groups(host)):
        key = (host.name, "group", number)
        cursor = start_us - rng.randint(0, 2 * DAY)
        while cursor < end_us:
            role = rng.choices(("train", "serve", "ci"), weights=(55, 35, 6))[0]
            duration = rng.randint(20, 70) * MINUTE if role == "ci" else rng.randint(3 * HOUR, 2 * DAY)
            stop = cursor + duration
            blockers = [a for a, b in busy.busy.get(key, []) if b > cursor]
            next_busy = min(blockers) if blockers else end_us + 2 * DAY
            if next_busy <= cursor:
                cursor = max(b for a, b in busy.busy[key] if a <= cursor) + rng.randint(2, 20) * MINUTE
                continue
            stop = min(stop, next_busy - rng.randint(2, 15) * MINUTE)
            if stop - cursor >= 20 * MINUTE:
                pods.append(make_pod(rng, host, role, cursor, stop, list(group)))
            cursor = max(stop, cursor) + rng.randint(1, 45) * MINUTE
    for role in rng.sample(("jvm", "go", "batch"), rng.randint(1, 3)):
        pods.append(make_pod(rng, host, role, start_us - rng.randint(1, 5) * DAY, end_us + DAY, []))
    return pods
