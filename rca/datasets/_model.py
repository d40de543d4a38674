"""The simulated fleet: hosts, their GPUs, the pods they run, and how each host logs.

Everything here is plain data drawn once from the seeded generator; the noise and
incident writers read it so that a pid, pod uid, container id or GPU index means the
same thing in every file of a host.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

US = 1_000_000
MINUTE = 60 * US
HOUR = 60 * MINUTE
DAY = 24 * HOUR
KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
PID_MAX = 4_194_304

K8S_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(frozen=True)
class GpuModel:
    name: str
    memory_mib: int
    power_cap_w: int
    idle_power_w: int
    pci_device: str


GPU_MODELS = {
    "A100": GpuModel("NVIDIA A100-SXM4-80GB", 81920, 400, 62, "10de:20b2"),
    "H100": GpuModel("NVIDIA H100 80GB HBM3", 81559, 700, 72, "10de:2330"),
    "L4": GpuModel("NVIDIA L4", 23034, 72, 16, "10de:27b8"),
    "A10G": GpuModel("NVIDIA A10G", 23028, 300, 25, "10de:2237"),
}

_BUS_IDS = {
    "dgx": ["07", "0F", "47", "4E", "87", "90", "B7", "BD"],
    "hgx": ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"],
    "cloud": ["10", "1C", "53", "5B", "A0", "A8", "C0", "C8"],
}


@dataclass(frozen=True)
class Platform:
    """A kind of machine: what its kernel prints as hardware, and which images it runs."""

    gpu: str
    gpu_counts: tuple[int, ...]
    hardware: str
    memory_gib: int
    cpus: int
    bus_layout: str
    kernels: tuple[str, ...]
    naming: str


PLATFORMS = (
    Platform(
        "A100",
        (8,),
        "Amazon EC2 p4d.24xlarge/, BIOS 1.0 10/16/2017",
        1152,
        96,
        "cloud",
        ("5.15.0-1056-aws #61~20.04.1-Ubuntu", "5.10.225-213.878.amzn2.x86_64 #1 SMP"),
        "aws",
    ),
    Platform(
        "H100",
        (8,),
        "Amazon EC2 p5.48xlarge/, BIOS 1.0 10/16/2017",
        2048,
        192,
        "cloud",
        ("6.8.0-1015-aws #16-Ubuntu", "6.1.112-122.189.amzn2023.x86_64 #1 SMP PREEMPT_DYNAMIC"),
        "aws",
    ),
    Platform(
        "H100",
        (8,),
        "NVIDIA DGXH100/DGXH100, BIOS 1.1.3 11/02/2023",
        2048,
        224,
        "hgx",
        ("5.15.0-1042-nvidia #42-Ubuntu", "6.5.0-1024-nvidia #25-Ubuntu"),
        "onprem",
    ),
    Platform(
        "A100",
        (8,),
        "NVIDIA DGXA100 920-23687-2530-000/DGXA100, BIOS 1.21 06/15/2023",
        1024,
        256,
        "dgx",
        ("5.15.0-122-generic #132-Ubuntu", "5.4.0-196-generic #216-Ubuntu"),
        "onprem",
    ),
    Platform(
        "L4",
        (4, 8),
        "Google Google Compute Engine/Google Compute Engine, BIOS Google 08/09/2024",
        192,
        48,
        "cloud",
        ("6.1.100+ #1 SMP PREEMPT_DYNAMIC Sat Aug 24 16:19:44 UTC 2024", "5.15.0-1067-gke #73-Ubuntu"),
        "gke",
    ),
    Platform(
        "A10G",
        (1, 4),
        "Amazon EC2 g5.12xlarge/, BIOS 1.0 10/16/2017",
        192,
        48,
        "cloud",
        ("5.10.225-213.878.amzn2.x86_64 #1 SMP", "6.1.112-122.189.amzn2023.x86_64 #1 SMP PREEMPT_DYNAMIC"),
        "aws",
    ),
    Platform(
        "H100",
        (8,),
        "Dell Inc. PowerEdge XE9680/0RR2VK, BIOS 1.6.10 02/21/2024",
        2048,
        224,
        "hgx",
        ("5.14.0-427.42.1.el9_4.x86_64 #1 SMP PREEMPT_DYNAMIC Fri Oct 18 14:35:40 EDT 2024",),
        "onprem",
    ),
)

# (driver, CUDA version) pairs as nvidia-smi reports them.
DRIVERS = (
    ("535.161.08", "12.2"),
    ("535.183.06", "12.2"),
    ("550.54.15", "12.4"),
    ("550.90.07", "12.4"),
    ("560.35.03", "12.6"),
    ("570.124.06", "12.8"),
    ("570.158.01", "12.8"),
    ("580.65.06", "13.0"),
)

KUBELET_VERSIONS = ("v1.27.16", "v1.28.13", "v1.29.8", "v1.30.4", "v1.31.1")


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str
    bus_id: str  # as nvidia-smi prints it: 00000000:07:00.0
    model: GpuModel

    @property
    def kernel_pci(self) -> str:
        """The bus as NVRM prints it in Xid lines: 0000:07:00 (lowercase, no function)."""
        return "0000:" + self.bus_id[9:14].lower()


@dataclass
class Container:
    name: str
    cid: str
    pid: int
    comm: str  # the kernel's 15-character task name
    image: str


@dataclass
class Pod:
    """A pod on one host; ``gpus`` are host GPU indices, ``app`` names its log file style."""

    name: str
    namespace: str
    uid: str
    qos: str  # guaranteed / burstable / besteffort
    containers: list[Container]
    start_us: int
    end_us: int
    role: str
    gpus: list[int] = field(default_factory=list)
    app: str | None = None
    memory_limit: int = 0  # bytes; 0 = no limit
    memory_request: int = 0
    gpu_mib: int = 0  # steady GPU memory per GPU while running
    exe: str = "python3"  # the process name nvidia-smi shows
    torch: str = "new"  # which generation of PyTorch's CUDA OOM message it prints: old / mid / new

    def gpu_pid(self, gpu_index: int) -> int:
        """The pid of the process on one of the pod's GPUs: one worker per GPU (torchrun ranks, vLLM workers)."""
        if len(self.gpus) <= 1 or self.role not in ("train", "serve"):
            return self.main.pid
        return self.main.pid + 9 + 2 * self.gpus.index(gpu_index)

    @property
    def main(self) -> Container:
        return self.containers[0]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class Host:
    """One node and the way its logs were collected."""

    name: str
    platform: Platform
    gpus: list[Gpu]
    kernel: str
    driver: str
    cuda: str
    kubelet_version: str
    boot_us: int
    memory_kib: int
    kubelet_pid: int
    containerd_pid: int
    kernel_style: str  # dmesg_raw / dmesg_ctime / kern_log / journal_k
    kubelet_style: str  # klog / journald
    kubelet_dialect: str  # structured / legacy
    cgroup: str  # v1 / v2
    smi_columns: tuple[str, ...]
    smi_units: bool
    smi_interval_s: int = 5
    gpu_group: int = 8
    pods: list[Pod] = field(default_factory=list)
    pod_names: set[str] = field(default_factory=set)  # namespace/name pairs in use, so log paths never collide
    pid_rate: float = 4.0  # pids handed out per second: the pid counter runs with the clock

    @property
    def taint(self) -> str:
        open_module = self.driver >= "560"
        return "G           OE" if open_module else "P           OE"

    @property
    def new_task_table(self) -> bool:
        return self.kernel.startswith("6.")

    def claim(self, rng: random.Random, namespace: str, name: str) -> str:
        """``name`` if no pod of ``namespace`` on this host has it yet, else a variant with a fresh suffix."""
        candidate = name
        while f"{namespace}/{candidate}" in self.pod_names:
            candidate = f"{name}-{k8s_suffix(rng)}"
        self.pod_names.add(f"{namespace}/{candidate}")
        return candidate

    def pid_at(self, rng: random.Random, ts_us: int) -> int:
        """A pid handed out at ``ts_us``: the counter grows with uptime and wraps at pid_max."""
        counter = int((ts_us - self.boot_us) / US * self.pid_rate) + rng.randint(0, 900)
        return 1000 + counter % (PID_MAX - 1000)

    def cgroup_path(self, pod: Pod, container: Container | None) -> str:
        """The memcg path the kernel prints for a pod (and one of its containers)."""
        qos = pod.qos
        if self.cgroup == "v1":
            base = "/kubepods" if qos == "guaranteed" else f"/kubepods/{qos}"
            path = f"{base}/pod{pod.uid}"
            return path if container is None else f"{path}/{container.cid}"
        uid = pod.uid.replace("-", "_")
        if qos == "guaranteed":
            path = f"/kubepods.slice/kubepods-pod{uid}.slice"
        else:
            path = f"/kubepods.slice/kubepods-{qos}.slice/kubepods-{qos}-pod{uid}.slice"
        return path if container is None else f"{path}/cri-containerd-{container.cid}.scope"


def uuid4(rng: random.Random) -> str:
    value = rng.getrandbits(128)
    text = f"{value:032x}"
    variant = "89ab"[value & 3]
    return f"{text[:8]}-{text[8:12]}-4{text[13:16]}-{variant}{text[17:20]}-{text[20:32]}"


def gpu_uuid(rng: random.Random) -> str:
    text = f"{rng.getrandbits(128):032x}"
    return f"GPU-{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:32]}"


def hex_id(rng: random.Random, digits: int = 64) -> str:
    return f"{rng.getrandbits(4 * digits):0{digits}x}"


def k8s_suffix(rng: random.Random, length: int = 5) -> str:
    return "".join(rng.choice(K8S_ALPHABET) for _ in range(length))


def host_name(rng: random.Random, platform: Platform, ordinal: int, taken: set[str]) -> str:
    while True:
        if platform.naming == "aws":
            name = f"ip-10-{rng.randint(0, 63)}-{rng.randint(0, 255)}-{rng.randint(2, 254)}"
        elif platform.naming == "gke":
            cluster = rng.choice(("ml", "train", "prod-gpu", "research"))
            name = f"gke-{cluster}-{platform.gpu.lower()}-pool-{hex_id(rng, 8)}-{k8s_suffix(rng, 4)}"
        else:
            stem = rng.choice(("dgx", "gpu", "hgx", "node"))
            name = f"{stem}-{platform.gpu.lower()}-{ordinal + rng.randint(1, 40):02d}"
        if name not in taken:
            taken.add(name)
            return name


SMI_COLUMN_ORDERS = (
    ("timestamp", "index", "uuid", "pci.bus_id", "memory.used", "memory.total", "utilization.gpu"),
    ("timestamp", "name", "index", "memory.total", "memory.used", "utilization.gpu", "pci.bus_id"),
    ("index", "timestamp", "pci.bus_id", "uuid", "utilization.gpu", "memory.used", "memory.total"),
    ("timestamp", "index", "name", "uuid", "memory.used", "memory.free", "memory.total", "utilization.gpu", "temperature.gpu"),
)


def build_hosts(rng: random.Random, count: int, start_us: int) -> list[Host]:
    """``count`` hosts with styles spread so that every log format appears when there are enough hosts."""
    kernel_styles = _spread(rng, count, ("dmesg_raw", "kern_log", "dmesg_ctime", "journal_k"))
    kubelet_styles = _spread(rng, count, ("klog", "journald"))
    platforms = _spread(rng, count, PLATFORMS)
    units = _spread(rng, count, (True, False))
    column_orders = _spread(rng, count, SMI_COLUMN_ORDERS)
    taken: set[str] = set()
    hosts = []
    for ordinal in range(count):
        platform = platforms[ordinal]
        model = GPU_MODELS[platform.gpu]
        n_gpus = rng.choice(platform.gpu_counts)
        buses = _BUS_IDS[platform.bus_layout]
        gpus = [Gpu(i, gpu_uuid(rng), f"00000000:{buses[i]}:00.0", model) for i in range(n_gpus)]
        kernel = rng.choice(platform.kernels)
        driver, cuda = rng.choice(DRIVERS)
        # An uptime of days to weeks: boot-relative stamps are large and differ per host.
        boot_us = start_us - rng.randint(2 * 3600, 40 * 86400) * US - rng.randint(0, US - 1)
        kubelet_style = kubelet_styles[ordinal]
        groups = [g for g in (1, 2, 4, 8) if g <= n_gpus]
        host = Host(
            name=host_name(rng, platform, ordinal, taken),
            platform=platform,
            gpus=gpus,
            kernel=kernel,
            driver=driver,
            cuda=cuda,
            kubelet_version=rng.choice(KUBELET_VERSIONS),
            boot_us=boot_us,
            memory_kib=platform.memory_gib * 1024 * 1024 - rng.randint(2, 9) * 1024 * 1024,
            kubelet_pid=rng.randint(1200, 4800),
            containerd_pid=rng.randint(700, 1190),
            kernel_style=kernel_styles[ordinal],
            kubelet_style=kubelet_style,
            kubelet_dialect="structured",
            cgroup="v2" if kernel.startswith(("6.", "5.14")) or (kernel.startswith("5.15") and rng.random() < 0.5) else "v1",
            smi_columns=column_orders[ordinal],
            smi_units=units[ordinal],
            gpu_group=rng.choice(groups[-2:]) if len(groups) > 1 else groups[0],
        )
        host.pid_rate = rng.uniform(0.5, 6.0)
        if rng.random() < 0.3:
            host.kubelet_dialect, host.kubelet_version = "legacy", rng.choice(("v1.19.16", "v1.20.15"))
        hosts.append(host)
    return hosts


def _spread(rng: random.Random, count: int, options: tuple) -> list:
    """``count`` picks that use every option once before repeating, in shuffled order."""
    picks: list = []
    while len(picks) < count:
        batch = list(options)
        rng.shuffle(batch)
        picks.extend(batch)
    return picks[:count]
