"""Incident writers for the GPU failure modes.

The nvidia-smi curve before each failure has the shape of its cause: a sudden step for a
batch that is too large, a sawtooth for fragmentation, a straight climb for an autograd
leak, a stair per leaked CUDA context or LoRA adapter, a second process for contention,
memory frozen in place for the ranks an NCCL job leaves hanging.
"""

from __future__ import annotations

from rca.datasets._formats import klog_stamp
from rca.datasets._gpu import GpuProc
from rca.datasets._incidents import AppLog, Ctx, CudaOom, cuda_oom_text, rank_prefix, torch_capacity, torch_frames, train_traceback
from rca.datasets._lifecycle import exited
from rca.datasets._model import MIB, MINUTE, US, Pod, k8s_suffix
from rca.datasets._modes import died
from rca.datasets._prepare import NCCL_TIMEOUT_MS
from rca.datasets._sink import DEVICE_PLUGIN, Evidence


def _setup(ctx: Ctx, pod: Pod) -> tuple[int, float, float]:
    """Pick the failing GPU, make sure a capture covers the window; returns (gpu, level MiB, util)."""
    inc, rng = ctx.incident, ctx.rng
    gpu = rng.choice(pod.gpus)
    inc.gpu_index = gpu
    inc.pid = pod.gpu_pid(gpu)
    state = ctx.gpu()
    state.capture(inc.onset_us - rng.randint(5, 20) * MINUTE, inc.end_us + rng.randint(2, 6) * MINUTE)
    level, util = state.level(gpu, inc.onset_us)
    return gpu, level, util


def _shape_pod(ctx: Ctx, pod: Pod, gpu: int, points: list[tuple[int, float, float]]) -> None:
    """The failing GPU gets ``points``; the pod's other GPUs (DDP ranks) follow a little below it."""
    state = ctx.gpu()
    start, end = points[0][0], points[-1][0]
    for index in pod.gpus:
        scale = 1.0 if index == gpu else ctx.rng.uniform(0.975, 0.995)
        state.shape(index, start, end, [(t, v * scale, u) for t, v, u in points], mark=index == gpu)


def _marks(ctx: Ctx, pod: Pod, gpu: int, at: int) -> None:
    """Evidence in the nvidia-smi captures: the last sample before the failure and a table of the device."""
    state = ctx.gpu()
    state.sample_marks.append((gpu, at, ctx.ev("gpu_sample", "nvidia-smi sample of the failing GPU", gpu_index=gpu)))
    table_at = at - ctx.rng.randint(15, 80) * US
    state.snapshot(
        table_at, {(gpu, pod.gpu_pid(gpu)): ctx.ev("gpu_process", "process row of the failing GPU", pid=pod.gpu_pid(gpu), gpu_index=gpu)}
    )


def _oom(ctx: Ctx, gpu: int, at: int, requested: int, reserved_unallocated: int, processes: tuple[tuple[int, int], ...] = ()) -> CudaOom:
    state = ctx.gpu()
    used, _ = state.level(gpu, at)
    capacity = torch_capacity(state.total_mib)
    in_use = int(min(used - 420, capacity / MIB - 60) * MIB)
    allocated = max(in_use - reserved_unallocated - ctx.rng.randint(380, 900) * MIB, MIB)
    ctx.incident.oom = CudaOom(gpu, capacity, in_use, allocated, reserved_unallocated, requested, processes)
    return ctx.incident.oom


def crash(ctx: Ctx, pod: Pod, gpu: int, ts: int, text: str, evidence: Evidence, where: str = "forward") -> None:
    """The process dies on ``text``: a Python traceback for trainers, vLLM's engine error for servers."""
    log = ctx.app(pod)
    rng = ctx.rng
    if pod.role == "serve":
        _vllm_crash(ctx, log, pod, ts, text, evidence)
    else:
        lines: list = train_traceback(rng, "/workspace/train.py", torch_frames(rng, where))
        lines.append((text, evidence))
        log.raw(ts, lines, rank_prefix(pod, gpu))
    died(ctx, pod, pod.main, ts + rng.randint(2, 9) * US, 1, "Error")


def _vllm_crash(ctx: Ctx, log: AppLog, pod: Pod, ts: int, text: str, evidence: Evidence) -> None:
    rng = ctx.rng
    site = "/usr/local/lib/python3.12/dist-packages" if pod.app == "vllm_v1" else "/usr/local/lib/python3.10/dist-packages"
    frames = [
        "Traceback (most recent call last):",
        f'  File "{site}/vllm/engine/async_llm_engine.py", line {rng.choice((53, 64))}, in _log_task_completion',
        "    return_value = task.result()",
        f'  File "{site}/vllm/worker/model_runner.py", line {rng.choice((1654, 1703))}, in execute_model',
        "    hidden_or_intermediate_states = model_executable(",
        f'  File "{site}/torch/nn/modules/module.py", line 1553, in _wrapped_call_impl',
        "    return self._call_impl(*args, **kwargs)",
    ]
    if pod.app == "vllm_v1":
        evidence.pid = pod.main.pid  # the engine's prefix carries it
        src = f"core.py:{rng.choice((434, 581, 702))}"
        log.line(ts, "error", "EngineCore encountered a fatal error.", src=src, extra={"engine": True})
        for number, line in enumerate(frames):
            log.line(ts + number + 1, "error", line, src=src, extra={"engine": True})
        log.line(ts + len(frames) + 1, "error", text, src=src, extra={"engine": True}, evidence=evidence)
    else:
        log.line(ts, "error", "Engine background task failed", src="async_llm_engine.py:63")
        log.raw(ts + 1, [*frames, (text, evidence)])


def cuda_oom_batch_too_large(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    gpu, level, util = _setup(ctx, pod)
    total = ctx.gpu().total_mib
    step = inc.failure_us - rng.randint(25, 140) * US
    peak = total - rng.randint(200, 900)
    _shape_pod(ctx, pod, gpu, [(inc.onset_us, level, util), (step - 1, level, util), (step, peak, 99.0), (inc.failure_us, peak, 99.0)])
    batch = rng.choice((64, 96, 128, 256, 512))
    ctx.app(pod).line(
        step, "info", f"Running evaluation: per_device_eval_batch_size={batch} max_seq_length={rng.choice((4096, 8192, 16384))}"
    )
    capacity = torch_capacity(total)
    requested = int(capacity * rng.uniform(0.18, 0.45)) // MIB * MIB
    oom = _oom(ctx, gpu, inc.failure_us, requested, rng.randint(20, 600) * MIB)
    _marks(ctx, pod, gpu, inc.failure_us)
    crash(ctx, pod, gpu, inc.failure_us, cuda_oom_text(pod.torch, oom), ctx.ev("cuda_oom", "CUDA OOM with a large request", gpu_index=gpu))


def gpu_memory_fragmentation(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    gpu, level, util = _setup(ctx, pod)
    total = ctx.gpu().total_mib
    period = rng.randint(40, 150) * US
    points = [(inc.onset_us, level, util)]
    t, teeth = inc.onset_us, max(3, (inc.failure_us - inc.onset_us) // period)
    for k in range(int(teeth)):
        high = level + (total * 0.985 - level) * (k + 1) / teeth
        top = t + period * 4 // 5
        if top >= inc.failure_us:
            break
        points += [(top, high, util), (top + US, level * rng.uniform(0.82, 0.9), util)]
        t += period
    points.append((inc.failure_us, total - rng.randint(150, 400), util))
    _shape_pod(ctx, pod, gpu, points)
    capacity = torch_capacity(total)
    unallocated = int(capacity * rng.uniform(0.06, 0.14))
    requested = int(unallocated * rng.uniform(0.25, 0.8)) // MIB * MIB
    oom = _oom(ctx, gpu, inc.failure_us, requested, unallocated)
    _marks(ctx, pod, gpu, inc.failure_us)
    crash(
        ctx,
        pod,
        gpu,
        inc.failure_us,
        cuda_oom_text(pod.torch, oom),
        ctx.ev("cuda_oom", "CUDA OOM with much reserved-but-unallocated memory", gpu_index=gpu),
        where="backward",
    )


def gpu_memory_leak_autograd(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    gpu, level, util = _setup(ctx, pod)
    total = ctx.gpu().total_mib
    start_level = min(level, total * rng.uniform(0.4, 0.6))
    _shape_pod(ctx, pod, gpu, [(inc.onset_us, start_level, util), (inc.failure_us, total - rng.randint(100, 300), util)])
    oom = _oom(ctx, gpu, inc.failure_us, rng.randint(2, 512) * MIB, rng.randint(20, 200) * MIB)
    state = ctx.gpu()
    early = inc.onset_us + (inc.failure_us - inc.onset_us) // 4
    state.sample_marks.append((gpu, early, ctx.ev("gpu_sample", "GPU memory already climbing", gpu_index=gpu)))
    _marks(ctx, pod, gpu, inc.failure_us)
    crash(
        ctx,
        pod,
        gpu,
        inc.failure_us,
        cuda_oom_text(pod.torch, oom),
        ctx.ev("cuda_oom", "CUDA OOM after a steady climb", gpu_index=gpu),
        where="backward",
    )


def cuda_context_leak(ctx: Ctx) -> None:
    inc, rng, host = ctx.incident, ctx.rng, ctx.host
    pod = inc.pod
    assert pod is not None
    gpu, level, util = _setup(ctx, pod)
    state = ctx.gpu()
    total = state.total_mib
    count = rng.randint(5, 12)
    context = rng.uniform(350, 900)
    # The trainer itself grows a little, so the leaked contexts are what tips the device over.
    top = total * 0.985 - count * context
    start_level = level

    def main_at(t: int) -> float:
        return start_level + (max(top, start_level) - start_level) * (t - inc.onset_us) / (inc.failure_us - inc.onset_us)

    log = ctx.app(pod)
    points = [(inc.onset_us, level, util)]
    span = inc.failure_us - 2 * MINUTE - inc.onset_us
    stale = []
    for k in range(count):
        at = inc.onset_us + span * k // count + rng.randint(0, 20) * US
        pid = host.pid_at(rng, at)
        stale.append(pid)
        state.procs.append(GpuProc(gpu, pid, pod.exe, at, inc.failure_us + rng.randint(3, 40) * US, context))
        points += [(at, main_at(at) + context * k, util), (at + 2 * US, main_at(at) + context * (k + 1), util)]
        log.line(at - 300_000, "info", f"launched evaluation worker pid={pid} on cuda:{gpu}")
        log.line(at + rng.randint(30, 110) * US, "info", f"evaluation worker pid={pid} finished (exit code 0)")
    level = main_at(inc.failure_us)
    points.append((inc.failure_us, level + context * count, util))
    state.shape(gpu, inc.onset_us, inc.failure_us, points)
    table_at = inc.failure_us - rng.randint(20, 70) * US
    marks = {(gpu, pid): ctx.ev("gpu_process", "stale CUDA context still on the GPU", pid=pid, gpu_index=gpu) for pid in stale}
    marks[(gpu, pod.gpu_pid(gpu))] = ctx.ev("gpu_process", "main process on the GPU", pid=pod.gpu_pid(gpu), gpu_index=gpu)
    state.snapshot(table_at, marks)
    for pid in stale[-2:]:
        state.app_marks.append((gpu, pid, inc.failure_us, ctx.ev("gpu_process", "stale pid in compute-apps", pid=pid)))
    processes = ((pod.gpu_pid(gpu), int((level - 420) * MIB)),) + tuple((pid, int(context * MIB)) for pid in stale)
    oom = _oom(ctx, gpu, inc.failure_us, rng.randint(256, 2048) * MIB, rng.randint(40, 300) * MIB, processes)
    state.sample_marks.append((gpu, inc.failure_us, ctx.ev("gpu_sample", "GPU memory stepped up per context", gpu_index=gpu)))
    crash(ctx, pod, gpu, inc.failure_us, cuda_oom_text(pod.torch, oom), ctx.ev("cuda_oom", "CUDA OOM with stale processes", gpu_index=gpu))


def kv_cache_growth(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    gpu, level, util = _setup(ctx, pod)
    total = ctx.gpu().total_mib
    ctx.world.shape_app(pod, inc.onset_us, inc.failure_us, [(inc.onset_us, rng.uniform(25, 45), 0.0), (inc.failure_us, 99.6, 0.0)])
    _shape_pod(ctx, pod, gpu, [(inc.onset_us, level, util), (inc.failure_us, total - rng.randint(150, 350), 96.0)])
    log = ctx.app(pod)
    late = inc.onset_us + (inc.failure_us - inc.onset_us) * 3 // 4
    src = "scheduler.py:1560" if pod.app == "vllm_v0" else "scheduler.py:262"
    for k in range(rng.randint(3, 8)):
        at = rng.randint(late, inc.failure_us - US)
        log.line(
            at,
            "warning",
            f"Sequence group cmpl-{k8s_suffix(rng, 8)}{rng.getrandbits(64):016x}-0 is preempted by PreemptionMode.RECOMPUTE mode because there "
            "is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size "
            f"to provide more KV cache memory. total_num_cumulative_preemption={k + 1}",
            src=src,
            evidence=ctx.ev("log", "KV cache preemption") if k == 0 else None,
        )
    oom = _oom(ctx, gpu, inc.failure_us, rng.randint(256, 2048) * MIB, rng.randint(30, 400) * MIB)
    _marks(ctx, pod, gpu, inc.failure_us)
    crash(ctx, pod, gpu, inc.failure_us, cuda_oom_text(pod.torch, oom), _serve_oom_evidence(ctx, gpu, "CUDA OOM in the vLLM engine"))


def _serve_oom_evidence(ctx: Ctx, gpu: int, what: str) -> Evidence:
    return ctx.ev("cuda_oom", what, gpu_index=gpu)


def lora_adapter_leak(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    gpu, level, util = _setup(ctx, pod)
    total = ctx.gpu().total_mib
    loads = rng.randint(5, 14)
    step = (total * 0.99 - level) / loads
    log = ctx.app(pod)
    src = "serving_models.py:174" if pod.app == "vllm_v1" else "serving_engine.py:195"
    points = [(inc.onset_us, level, util)]
    span = inc.failure_us - MINUTE - inc.onset_us
    for k in range(loads):
        at = inc.onset_us + span * k // loads + rng.randint(0, 30) * US
        name = f"{rng.choice(('sql', 'support', 'legal', 'code', 'med', 'fin'))}-lora-v{rng.randint(2, 40)}"
        first_or_last = k in (0, loads - 1)
        log.line(
            at,
            "info",
            f"Loaded new LoRA adapter: name '{name}', path '/adapters/{name}'",
            src=src,
            evidence=ctx.ev("log", "LoRA adapter loaded") if first_or_last else None,
        )
        points += [(at, level + step * k, util), (at + US, level + step * (k + 1), util)]
        if rng.random() < 0.4:
            log.line(at + rng.randint(40, 120) * US, "info", f"Removed LoRA adapter: name '{name}'", src=src)
    points.append((inc.failure_us, level + step * loads, util))
    ctx.gpu().shape(gpu, inc.onset_us, inc.failure_us, points)
    oom = _oom(ctx, gpu, inc.failure_us, int(step * MIB * rng.uniform(0.8, 1.6)), rng.randint(30, 300) * MIB)
    _marks(ctx, pod, gpu, inc.failure_us)
    crash(ctx, pod, gpu, inc.failure_us, cuda_oom_text(pod.torch, oom), _serve_oom_evidence(ctx, gpu, "CUDA OOM after LoRA loads"))


def gpu_contention_shared_device(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod, intruder = inc.pods[0], inc.pods[1]
    gpu, level, util = _setup(ctx, pod)
    state = ctx.gpu()
    total = state.total_mib
    share = max(total * 0.985 - level, 1536)
    arrive = inc.onset_us + rng.randint(10, 120) * US
    ipid = intruder.main.pid
    intruder.exe = rng.choice(("/opt/conda/bin/python", "python", "/usr/bin/python3"))
    state.procs.append(GpuProc(gpu, ipid, intruder.exe, arrive, intruder.end_us, share))
    top = min(level + share, total - 120)
    state.shape(
        gpu,
        inc.onset_us,
        intruder.end_us + 1,
        [
            (inc.onset_us, level, util),
            (arrive, level, util),
            (arrive + 40 * US, top, 100.0),
            (inc.failure_us, top, 100.0),
            (inc.failure_us + 1, share, 100.0),
            (intruder.end_us, share, 100.0),
            (intruder.end_us + 1, state.idle_mib, 0.0),
        ],
    )
    if intruder.app is not None:
        ctx.app(intruder).line(
            arrive - 2 * US,
            "info",
            f"Using device cuda:{gpu} ({state.host.gpus[gpu].model.name})",
            pid=ipid,
            evidence=ctx.ev("log", "second pod picks the same GPU", pid=ipid) if intruder.app == "jsonl" else None,
        )
    marks = {
        (gpu, pod.gpu_pid(gpu)): ctx.ev("gpu_process", "victim on the shared GPU", pid=pod.gpu_pid(gpu), gpu_index=gpu),
        (gpu, ipid): ctx.ev("gpu_process", "other pod's process on the same GPU", pid=ipid, gpu_index=gpu),
    }
    state.snapshot(inc.failure_us - rng.randint(15, 60) * US, marks)
    state.app_marks.append((gpu, ipid, inc.failure_us, ctx.ev("gpu_process", "other pod's process in compute-apps", pid=ipid)))
    processes = ((pod.gpu_pid(gpu), int((level - 420) * MIB)), (ipid, int(share * MIB)))
    oom = _oom(ctx, gpu, inc.failure_us, rng.randint(1024, 8192) * MIB, rng.randint(20, 300) * MIB, processes)
    state.sample_marks.append((gpu, inc.failure_us, ctx.ev("gpu_sample", "shared GPU nearly full", gpu_index=gpu)))
    crash(ctx, pod, gpu, inc.failure_us, cuda_oom_text(pod.torch, oom), ctx.ev("cuda_oom", "CUDA OOM on a shared GPU", gpu_index=gpu))


_XID_TEXT = {
    48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition {p}, subpartition 0.",
    94: "Contained: SM (0x1). RST: No, D-RST: No",
    95: "Uncontained: FBHUB. RST: Yes, D-RST: No",
}


def gpu_hardware_fault(ctx: Ctx) -> None:
    inc, rng, host = ctx.incident, ctx.rng, ctx.host
    pod = inc.pod
    assert pod is not None
    gpu, level, util = _setup(ctx, pod)
    state = ctx.gpu()
    device = host.gpus[gpu]
    pid = pod.gpu_pid(gpu)
    comm = pod.main.comm
    xid = rng.choice((79, 48, 94, 95))
    t = inc.failure_us
    pci = device.kernel_pci
    lines: list = [f"NVRM: GPU at PCI:{pci}: {device.uuid}"]
    if xid == 79:
        lines += [
            (
                f"NVRM: Xid (PCI:{pci}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
                ctx.ev("xid", "Xid 79 GPU fallen off the bus", pci_bus=pci, xid=79),
            ),
            f"NVRM: GPU {pci}.0: GPU has fallen off the bus.",
            "NVRM: A GPU crash dump has been created. If possible, please run",
            "NVRM: nvidia-bug-report.sh as root to collect this data before",
            "NVRM: the NVIDIA kernel module is unloaded.",
        ]
        state.lost[gpu] = (t, t + rng.randint(20, 90) * MINUTE)  # until the node is drained and the GPU reset
        error = "RuntimeError: CUDA error: unspecified launch failure"
    else:
        if xid in (94, 95):
            ctx.sink.kernel(
                host,
                inc.onset_us + rng.randint(0, 60) * US,
                [
                    f"NVRM: Xid (PCI:{pci}): 63, pid={pid}, name={comm}, Row Remapper: New row (0x{rng.getrandbits(28):07x}) marked for remapping, "
                    "reset gpu to activate."
                ],
                rng,
            )
        lines += [
            (
                f"NVRM: Xid (PCI:{pci}): {xid}, pid={pid}, name={comm}, " + _XID_TEXT[xid].format(p=rng.randint(0, 15)),
                ctx.ev("xid", f"Xid {xid} uncorrectable memory error", pid=pid, pci_bus=pci, xid=xid),
            ),
            f"NVRM: Xid (PCI:{pci}): 45, pid={pid}, name={comm}, Ch 000000{rng.randint(8, 31):02x}",
        ]
        error = "RuntimeError: CUDA error: uncorrectable ECC error encountered"
    ctx.sink.kernel(host, t, lines, rng)
    state.shape(gpu, inc.onset_us, t + 1, [(inc.onset_us, level, util), (t, level, util), (t + 1, level, 0.0)])
    _marks(ctx, pod, gpu, t - 1)
    ctx.sink.line(
        host,
        DEVICE_PLUGIN,
        t + rng.randint(100_000, 900_000),
        f"XidCriticalError: Xid={xid} on Device={device.uuid}, the device will go unhealthy.",
        evidence=ctx.ev("xid", "device plugin marks the GPU unhealthy", xid=xid),
    )
    ctx.sink.line(host, DEVICE_PLUGIN, t + rng.randint(1_000_000, 2_000_000), f"'nvidia.com/gpu' device marked unhealthy: {device.uuid}")
    text = "\n".join(
        (
            error,
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        )
    )
    first, *rest = text.split("\n")
    evidence = ctx.ev("traceback", "CUDA error in the training process")
    if pod.role == "serve":
        crash(ctx, pod, gpu, t + rng.randint(50, 900) * 1000, first, evidence)
        return
    log = ctx.app(pod)
    lines_out: list = train_traceback(rng, "/workspace/train.py", torch_frames(rng, "forward"))
    lines_out += [(first, evidence), *rest]
    log.raw(t + rng.randint(50, 900) * 1000, lines_out, rank_prefix(pod, gpu))
    died(ctx, pod, pod.main, t + rng.randint(2, 9) * US, 1, "Error")


def nccl_timeout_cascade(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    root = inc.pods[0]
    gpu, level, util = _setup(ctx, root)
    offsets, rank = {}, 0
    for pod in inc.pods:
        offsets[pod.uid] = rank
        rank += len(pod.gpus)
    t = inc.failure_us
    total = ctx.gpu().total_mib
    step = t - rng.randint(10, 50) * US
    peak = total - rng.randint(150, 500)
    _shape_pod(ctx, root, gpu, [(inc.onset_us, level, util), (step - 1, level, util), (step, peak, 99.0), (t, peak, 99.0)])
    root_rank = offsets[root.uid] + root.gpus.index(gpu)
    oom = _oom(ctx, gpu, t, rng.randint(1024, 6144) * MIB, rng.randint(30, 500) * MIB)
    log = ctx.app(root)
    lines: list = train_traceback(rng, "/workspace/train.py", torch_frames(rng, "forward"))
    lines.append((cuda_oom_text(root.torch, oom), ctx.ev("cuda_oom", "the first rank runs out of GPU memory", gpu_index=gpu)))
    log.raw(t, lines, f"[rank{root_rank}]:")
    _marks(ctx, root, gpu, t)
    agent = root.main.pid
    for index in root.gpus:
        if index != gpu:
            log.raw(
                t + 900_000 + index,
                [
                    f"W{klog_stamp(t + 900_000 + index)} {agent} torch/distributed/elastic/multiprocessing/api.py:897] "
                    f"Sending process {root.gpu_pid(index)} closing signal SIGTERM"
                ],
            )
    log.raw(
        t + 4 * US,
        [
            (
                f"E{klog_stamp(t + 4 * US)} {agent} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
                f"local_rank: {root.gpus.index(gpu)} (pid: {root.gpu_pid(gpu)}) of binary: /usr/bin/python3",
                ctx.ev("log", "torchrun reports the failed rank"),
            )
        ],
    )
    died(ctx, root, root.main, t + 5 * US, 1, "Error")
    seq = rng.randint(400, 90000)
    numel = rng.choice((9801523, 2106881, 131334144, 50331648))
    began = t - rng.randint(1, 20) * US
    for pod, host in zip(inc.pods[1:], inc.hosts[1:], strict=True):
        plog = ctx.app(pod, host=host)
        ctx.world.gpu[host.name].capture(inc.onset_us - rng.randint(2, 10) * MINUTE, inc.end_us + rng.randint(2, 6) * MINUTE)
        timeout_at = began + NCCL_TIMEOUT_MS * 1000 + rng.randint(5, 60) * 1000
        for local in range(len(pod.gpus)):
            global_rank = offsets[pod.uid] + local
            at = timeout_at + rng.randint(0, 400_000)
            ran = (at - began) // 1000
            plog.raw(
                at,
                [
                    (
                        f"[rank{global_rank}]:[E{klog_stamp(at, nanos=True)} ProcessGroupNCCL.cpp:616] [Rank {global_rank}] Watchdog caught collective operation timeout: "
                        f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={NCCL_TIMEOUT_MS}) ran for {ran} milliseconds "
                        "before timing out.",
                        ctx.ev("nccl_timeout", "NCCL watchdog timeout on a surviving rank"),
                    ),
                    f"[rank{global_rank}]:[E{klog_stamp(at + 2500, nanos=True)} ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {global_rank}] "
                    f"Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq + 2}, last completed NCCL work: {seq - 1}.",
                    f"[rank{global_rank}]:[E{klog_stamp(at + 2700, nanos=True)} ProcessGroupNCCL.cpp:630] [Rank {global_rank}] Some NCCL operations have failed or timed "
                    "out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
                    f"[rank{global_rank}]:[E{klog_stamp(at + 2900, nanos=True)} ProcessGroupNCCL.cpp:636] [Rank {global_rank}] To avoid data inconsistency, we are "
                    "taking the entire process down.",
                ],
            )
        end = pod.end_us - 2 * US
        plog.raw(
            end,
            [
                f"E{klog_stamp(end)} {pod.main.pid} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 "
                f"(pid: {pod.gpu_pid(pod.gpus[0])}) of binary: /usr/bin/python3"
            ],
        )
        exited(ctx.sink, host, pod, pod.main, end, rng, 1, reason="Error")


GPU_MODE_WRITERS = {
    "cuda-oom-batch-too-large": cuda_oom_batch_too_large,
    "gpu-memory-fragmentation": gpu_memory_fragmentation,
    "kv-cache-growth": kv_cache_growth,
    "gpu-memory-leak-autograd": gpu_memory_leak_autograd,
    "cuda-context-leak": cuda_context_leak,
    "lora-adapter-leak": lora_adapter_leak,
    "gpu-contention-shared-device": gpu_contention_shared_device,
    "gpu-hardware-fault": gpu_hardware_fault,
    "nccl-timeout-cascade": nccl_timeout_cascade,
}
