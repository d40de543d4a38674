"""Shared machinery of the incident writers: the world they act on and the records they reuse.

The kernel's OOM report, PyTorch's CUDA OOM message (both generations), tracebacks and
application log lines are built here once, so every mode writes them in the same shapes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from rca.datasets._formats import iso_ms_text, torch_size
from rca.datasets._gpu import GpuState
from rca.datasets._model import MIB, Container, Host, Pod
from rca.datasets._plan import Incident
from rca.datasets._sink import Evidence, Sink, app_stream
from rca.datasets._tracks import Track


@dataclass
class World:
    """Everything the generator knows about the simulated week."""

    hosts: list[Host]
    start_us: int
    end_us: int
    sink: Sink = field(default_factory=Sink)
    gpu: dict[str, GpuState] = field(default_factory=dict)
    memory: dict[str, Track] = field(default_factory=dict)  # host -> used bytes
    app_tracks: dict[str, Track] = field(default_factory=dict)  # pod uid -> the role's own quantity
    app_shaped: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    ground_truth: list[dict] = field(default_factory=list)
    incidents: list[Incident] = field(default_factory=list)  # as written, for the artifacts collected around them

    def shape_app(self, pod: Pod, start: int, end: int, points: list[tuple[int, float, float]]) -> None:
        self.app_tracks[pod.uid].cut(start, end, points)
        self.app_shaped.setdefault(pod.uid, []).append((start, end))


@dataclass
class Ctx:
    """One incident being written."""

    world: World
    incident: Incident

    @property
    def rng(self) -> random.Random:
        return self.incident.rng

    @property
    def sink(self) -> Sink:
        return self.world.sink

    @property
    def host(self) -> Host:
        return self.incident.host

    def gpu(self, host: Host | None = None) -> GpuState:
        return self.world.gpu[(host or self.host).name]

    def ev(self, kind: str, what: str, **fields: object) -> Evidence:
        return Evidence(self.incident.key, self.incident.mode, kind, what, **fields)  # type: ignore[arg-type]

    def app(self, pod: Pod, container: Container | None = None, host: Host | None = None) -> AppLog:
        return AppLog(self.sink, host or self.host, pod, container or pod.main)


# --- application logs ---------------------------------------------------------------------

_TEXT_LEVEL = {"debug": "DEBUG", "info": "INFO", "warning": "WARNING", "error": "ERROR", "critical": "CRITICAL"}


@dataclass
class AppLog:
    """Writes lines into one container's log in that log's own style."""

    sink: Sink
    host: Host
    pod: Pod
    container: Container

    @property
    def stream(self) -> str:
        return app_stream(self.pod, self.container.name)

    @property
    def logger(self) -> str:
        return {
            "hf_trainer": "trainer.py:2433",
            "deepspeed": "engine.py:1971:step",
            "vllm_v0": "engine.py:312",
            "vllm_v1": "core.py:587",
            "jvm": "c.a.fs.api.FeatureController",
            "ci_github": "",
            "ci_gitlab": "",
        }.get(self.pod.app or "", "train")

    def line(
        self,
        ts: int,
        level: str,
        msg: str,
        *,
        evidence: Evidence | None = None,
        src: str | None = None,
        pid: int | None = None,
        rank: int = 0,
        extra: dict | None = None,
    ) -> None:
        """One log record; ``level`` is lowercase (info, warning, error)."""
        style = self.pod.app
        pid = pid if pid is not None else self.container.pid
        if style == "jsonl":
            record = {
                "ts": iso_ms_text(ts),
                "level": level,
                "logger": src or "train",
                "pod": self.pod.name,
                "pid": pid,
                "rank": rank,
                "msg": msg,
            }
            record.update(extra or {})
            self.sink.line(self.host, self.stream, ts, json.dumps(record, separators=(",", ":")), raw=True, evidence=evidence)
        elif style == "go_json":
            record = {"level": level, "ts": iso_ms_text(ts), "caller": src or "server/server.go:214", "msg": msg}
            record.update(extra or {})
            self.sink.line(self.host, self.stream, ts, json.dumps(record, separators=(",", ":")), raw=True, evidence=evidence)
        elif style in ("vllm_v0", "vllm_v1"):
            program, engine_pid = ("EngineCore_0", pid) if style == "vllm_v1" and extra and extra.get("engine") else (None, None)
            self.sink.line(
                self.host,
                self.stream,
                ts,
                msg,
                level=_TEXT_LEVEL[level],
                src=src or self.logger,
                program=program,
                pid=engine_pid,
                evidence=evidence,
            )
        elif style in ("ci_github", "ci_gitlab"):
            self.sink.line(self.host, self.stream, ts, msg, level="E" if level == "error" else "O", evidence=evidence)
        elif style == "jvm":
            self.sink.line(
                self.host,
                self.stream,
                ts,
                msg,
                level=_TEXT_LEVEL[level],
                src=src or self.logger,
                program=(extra or {}).get("thread", "main"),
                evidence=evidence,
            )
        else:
            self.sink.line(self.host, self.stream, ts, msg, level=_TEXT_LEVEL[level], src=src or self.logger, evidence=evidence)

    def raw(self, ts: int, lines: list[str | tuple[str, Evidence]], prefix: str = "") -> None:
        """Lines printed straight to the stream (a traceback, C++ stderr); ``prefix`` is torchrun's ``[rankN]:``."""
        prefixed = [(prefix + item) if isinstance(item, str) else (prefix + item[0], item[1]) for item in lines]
        self.sink.block(self.host, self.stream, ts, prefixed)


def rank_prefix(pod: Pod, gpu_index: int) -> str:
    """torchrun tags worker output with the global rank when it runs more than one worker."""
    if pod.role != "train" or len(pod.gpus) <= 1:
        return ""
    return f"[rank{pod.gpus.index(gpu_index)}]:"


# --- the kernel's OOM report --------------------------------------------------------------

_MEMCG_TRACE = (
    "mem_cgroup_out_of_memory+0x136/0x150",
    "try_charge_memcg+0x6c2/0x780",
    "charge_memcg+0x45/0xb0",
    "__mem_cgroup_charge+0x2d/0x80",
    "do_anonymous_page+0x110/0x3b0",
)
_GLOBAL_TRACE = (
    "__alloc_pages_slowpath.constprop.0+0xc71/0xd80",
    "__alloc_pages+0x2f3/0x320",
    "alloc_pages_vma+0x87/0x280",
    "do_anonymous_page+0x110/0x3b0",
)
_FAULT_TRACE = (
    "__handle_mm_fault+0x8a3/0xb30",
    "handle_mm_fault+0xd8/0x2c0",
    "do_user_addr_fault+0x1c2/0x670",
    "exc_page_fault+0x77/0x170",
    "asm_exc_page_fault+0x27/0x30",
)


@dataclass(frozen=True)
class Task:
    """A row of the OOM report's task table (sizes in pages)."""

    pid: int
    uid: int
    comm: str
    total_vm: int
    rss: int
    adj: int


def task_table(host: Host, tasks: list[Task]) -> list[str]:
    if host.kernel.startswith("5.4"):
        lines = [
            "Tasks state (memory values in pages):",
            "[ pid ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
        ]
        row = "[{pid:>5}] {uid:>5} {pid:>5} {vm:>8} {rss:>8} {pgt:>8} {swap:>8}         {adj:>5} {comm}"
    elif host.new_task_table:
        lines = [
            "Tasks state (memory values in pages):",
            "[  pid  ]   uid  tgid total_vm      rss rss_anon rss_file rss_shmem pgtables_bytes swapents oom_score_adj name",
        ]
        row = "[{pid:>7}] {uid:>5} {pid:>5} {vm:>8} {rss:>8} {anon:>8} {file:>8} {shmem:>9} {pgt:>8} {swap:>8}         {adj:>5} {comm}"
    else:
        lines = [
            "Tasks state (memory values in pages):",
            "[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
        ]
        row = "[{pid:>7}] {uid:>5} {pid:>5} {vm:>8} {rss:>8} {pgt:>8} {swap:>8}         {adj:>5} {comm}"
    for task in tasks:
        file_pages = min(task.rss, 1800 + task.rss // 300)
        lines.append(
            row.format(
                pid=task.pid,
                uid=task.uid,
                vm=task.total_vm,
                rss=task.rss,
                anon=task.rss - file_pages,
                file=file_pages,
                shmem=0,
                pgt=max(24576, task.rss * 8 // 4096 * 4096),
                swap=0,
                adj=task.adj,
                comm=task.comm,
            )
        )
    return lines


def oom_report(
    ctx: Ctx,
    host: Host,
    ts: int,
    *,
    trigger: Task,
    victim: Task,
    tasks: list[Task],
    victim_memcg: str,
    cpuset: str,
    oom_memcg: str | None,
    limit_kib: int = 0,
    evidence: dict[str, Evidence] | None = None,
) -> int:
    """The kernel's OOM-killer report; a memcg report when ``oom_memcg`` is given, else a global one.

    Returns the time of the kill line. ``evidence`` maps "invoked" and "killed" to manifest entries.
    """
    rng = ctx.rng
    marks = evidence or {}
    memcg = oom_memcg is not None
    old = host.kernel.startswith("5.4")
    gfp = "0xcc0(GFP_KERNEL)" if memcg else rng.choice(("0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP)", "0x100cca(GFP_HIGHUSER_MOVABLE)"))
    release, _, build = host.kernel.partition(" ")
    taint_width = 19 if host.kernel.startswith("6.") else 18
    invoked = f"{trigger.comm} invoked oom-killer: gfp_mask={gfp}, order=0, oom_score_adj={trigger.adj}"
    lines: list[str | tuple[str, Evidence]] = [
        (invoked, marks["invoked"]) if "invoked" in marks else invoked,
        f"CPU: {rng.randint(0, host.platform.cpus - 1)} PID: {trigger.pid} Comm: {trigger.comm} Tainted: {host.taint:<{taint_width}} {release} {build}",
        f"Hardware name: {host.platform.hardware}",
        "Call Trace:",
    ]
    if not old:
        lines.append(" <TASK>")
    lines.append(" dump_stack+0x6d/0x8b" if old else " dump_stack_lvl+0x4a/0x63")
    lines.extend([" dump_header+0x4a/0x1f4", " oom_kill_process.cold+0xb/0x10", " out_of_memory+0x1bd/0x4e0"])
    lines.extend(" " + frame for frame in (_MEMCG_TRACE if memcg else _GLOBAL_TRACE) + _FAULT_TRACE)
    rip = rng.getrandbits(44) | 0x7F0000000000
    lines.extend(
        [
            f"RIP: 0033:0x{rip:x}",
            f"Code: Unable to access opcode bytes at RIP 0x{rip - 0x16:x}.",
            f"RSP: 002b:00007ffd{rng.getrandbits(32):08x} EFLAGS: 00010206",
        ]
    )
    if not old:
        lines.append(" </TASK>")
    if memcg:
        usage = limit_kib
        lines.append(f"memory: usage {usage}kB, limit {limit_kib}kB, failcnt {rng.randint(1, 90000)}")
        if host.cgroup == "v1":
            lines.append(f"memory+swap: usage {usage}kB, limit 9007199254740988kB, failcnt 0")
            lines.append(f"kmem: usage {rng.randint(20_000, 400_000)}kB, limit 9007199254740988kB, failcnt 0")
        else:
            lines.append("swap: usage 0kB, limit 0kB, failcnt 0")
        lines.append(f"Memory cgroup stats for {oom_memcg}:")
    else:
        pages = host.memory_kib // 4
        lines.extend(
            [
                "Mem-Info:",
                f"active_anon:{rng.randint(10_000, 900_000)} inactive_anon:{int(pages * 0.93)} isolated_anon:0",
                f" active_file:{rng.randint(100, 9000)} inactive_file:{rng.randint(100, 9000)} isolated_file:0",
                " unevictable:0 dirty:0 writeback:0",
                f" slab_reclaimable:{rng.randint(40_000, 300_000)} slab_unreclaimable:{rng.randint(80_000, 900_000)}",
                f" mapped:{rng.randint(2000, 90_000)} shmem:{rng.randint(2000, 90_000)} pagetables:{rng.randint(50_000, 400_000)}",
                f" free:{rng.randint(30_000, 90_000)} free_pcp:{rng.randint(0, 4000)} free_cma:0",
                "Free swap  = 0kB",
                "Total swap = 0kB",
                f"{pages} pages RAM",
                "0 pages HighMem/MovableOnly",
                f"{pages // 60} pages reserved",
            ]
        )
    lines.extend(task_table(host, tasks))
    constraint = "CONSTRAINT_MEMCG" if memcg else "CONSTRAINT_NONE"
    scope = f"oom_memcg={oom_memcg}," if memcg else "global_oom,"
    lines.append(
        f"oom-kill:constraint={constraint},nodemask=(null),cpuset={cpuset},mems_allowed=0-1,{scope}task_memcg={victim_memcg},"
        f"task={victim.comm},pid={victim.pid},uid={victim.uid}"
    )
    anon_kib = victim.rss * 4
    file_kib = rng.randint(2_000, 90_000)
    head = "Memory cgroup out of memory" if memcg else "Out of memory"
    killed = (
        f"{head}: Killed process {victim.pid} ({victim.comm}) total-vm:{victim.total_vm * 4}kB, anon-rss:{anon_kib}kB, file-rss:{file_kib}kB, "
        f"shmem-rss:0kB, UID:{victim.uid} pgtables:{max(96, victim.rss // 500)}kB oom_score_adj:{victim.adj}"
    )
    lines.append((killed, marks["killed"]) if "killed" in marks else killed)
    kill_ts = ctx.sink.kernel(host, ts, lines, rng)
    ctx.sink.kernel(
        host,
        kill_ts + rng.randint(20_000, 900_000),
        [f"oom_reaper: reaped process {victim.pid} ({victim.comm}), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB"],
        rng,
    )
    return kill_ts


def pages(nbytes: int) -> int:
    return nbytes // 4096


# --- PyTorch -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CudaOom:
    """The numbers of one CUDA out-of-memory error."""

    gpu_index: int
    capacity: int
    in_use: int
    allocated: int
    reserved_unallocated: int
    requested: int
    processes: tuple[tuple[int, int], ...] = ()  # (pid, bytes): NVML's view, newest message form

    @property
    def free(self) -> int:
        return max(self.capacity - self.in_use, 0)


def torch_capacity(total_mib: int) -> int:
    """What ``torch.cuda.mem_get_info`` reports as the total: the board minus the driver's reserve."""
    return (total_mib - 562) * MIB


def cuda_oom_text(generation: str, oom: CudaOom) -> str:
    """The exception line PyTorch prints, in the wording of its ``generation`` (old / mid / new)."""
    tried = torch_size(oom.requested)
    if generation == "old":
        reserved = oom.allocated + oom.reserved_unallocated
        return (
            f"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate {tried} (GPU {oom.gpu_index}; {torch_size(oom.capacity)} total capacity; "
            f"{torch_size(oom.allocated)} already allocated; {torch_size(oom.free)} free; {torch_size(reserved)} reserved in total by PyTorch) "
            "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  "
            "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
        )
    if oom.processes:
        usage = "".join(f"Process {pid} has {torch_size(size)} memory in use. " for pid, size in oom.processes)
    else:
        usage = f"Including non-PyTorch memory, this process has {torch_size(oom.in_use)} memory in use. "
    body = (
        f"CUDA out of memory. Tried to allocate {tried}. GPU {oom.gpu_index} has a total capac{'ty' if generation == 'mid' else 'ity'} of "
        f"{torch_size(oom.capacity)} of which {torch_size(oom.free)} is free. {usage}Of the allocated memory {torch_size(oom.allocated)} is allocated "
        f"by PyTorch, and {torch_size(oom.reserved_unallocated)} is reserved by PyTorch but unallocated. "
    )
    if generation == "mid":
        return (
            "torch.cuda.OutOfMemoryError: " + body + "If reserved but unallocated memory is large try setting max_split_size_mb to avoid "
            "fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
        )
    return (
        "torch.OutOfMemoryError: " + body + "If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
    )


def train_traceback(rng: random.Random, script: str, frames: list[tuple[str, int, str, str]]) -> list[str]:
    """``Traceback (most recent call last):`` and its frames, innermost last."""
    lines = ["Traceback (most recent call last):", f'  File "{script}", line {rng.randint(300, 900)}, in <module>', "    main()"]
    for path, number, func, code in frames:
        lines.extend([f'  File "{path}", line {number}, in {func}', f"    {code}"])
    return lines


SITE = (
    "/usr/local/lib/python3.10/dist-packages",
    "/opt/conda/lib/python3.11/site-packages",
    "/usr/lib/python3/dist-packages",
    "/workspace/.venv/lib/python3.12/site-packages",
)


def torch_frames(rng: random.Random, where: str) -> list[tuple[str, int, str, str]]:
    site = rng.choice(SITE)
    forward = [
        (
            f"{site}/torch/nn/modules/module.py",
            rng.choice((1532, 1553, 1736, 1747)),
            "_wrapped_call_impl",
            "return self._call_impl(*args, **kwargs)",
        ),
        (f"{site}/torch/nn/modules/module.py", rng.choice((1541, 1562, 1747, 1750)), "_call_impl", "return forward_call(*args, **kwargs)"),
    ]
    if where == "backward":
        return [
            ("/workspace/train.py", rng.randint(120, 400), "train_step", "loss.backward()"),
            (f"{site}/torch/_tensor.py", rng.choice((522, 525, 581, 626)), "backward", "torch.autograd.backward("),
            (f"{site}/torch/autograd/__init__.py", rng.choice((266, 289, 347)), "backward", "_engine_run_backward("),
            (
                f"{site}/torch/autograd/graph.py",
                rng.choice((744, 768, 825)),
                "_engine_run_backward",
                "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
            ),
        ]
    return (
        [("/workspace/train.py", rng.randint(120, 400), "train_step", "outputs = model(**batch)")]
        + forward
        + [
            (
                f"{site}/transformers/models/llama/modeling_llama.py",
                rng.choice((603, 739, 1190)),
                "forward",
                "attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)",
            )
        ]
    )
