"""Incident writers for the application and host-service failure modes.

A JVM dies of its own OutOfMemoryError (heap or Metaspace climbing in the GC log), a Go
service of ``fatal error: runtime: out of memory`` after its goroutine count ran away, and
a host service's steady leak ends in a global OOM kill outside any pod.
"""

from __future__ import annotations

from rca.datasets._cgroups import CgroupReading
from rca.datasets._formats import moment
from rca.datasets._incidents import Ctx, Task, oom_report, pages
from rca.datasets._lifecycle import oom_event
from rca.datasets._model import MIB, MINUTE, US
from rca.datasets._modes import died, ramp
from rca.datasets._sink import Evidence


def jvm_heap_metaspace(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    heap_max = pod.memory_limit * 0.75 / MIB
    metaspace = rng.random() < 0.35
    log = ctx.app(pod)
    t = inc.failure_us
    if metaspace:
        start_k, cap_k = rng.randint(90_000, 140_000), rng.choice((262144, 524288))
        for k in range(12):
            at = inc.onset_us + (t - inc.onset_us) * k // 12
            used = int(start_k + (cap_k * 0.995 - start_k) * k / 11)
            log.line(
                at,
                "info",
                f"GC({9000 + k * 37}) Metaspace: {used}K({cap_k}K)->{used - rng.randint(0, 300)}K({cap_k}K) NonClass: "
                f"{int(used * 0.86)}K({int(cap_k * 0.86)}K) Class: {int(used * 0.14)}K({int(cap_k * 0.14)}K)",
                src="jvm:gc,metaspace",
            )
        error = "java.lang.OutOfMemoryError: Metaspace"
        frames = [
            "\tat java.base/java.lang.ClassLoader.defineClass1(Native Method)",
            "\tat java.base/java.lang.ClassLoader.defineClass(ClassLoader.java:1027)",
            "\tat java.base/java.security.SecureClassLoader.defineClass(SecureClassLoader.java:150)",
            "\tat org.codehaus.janino.ByteArrayClassLoader.findClass(ByteArrayClassLoader.java:77)",
        ]
    else:
        ctx.world.shape_app(pod, inc.onset_us, t, ramp(inc.onset_us, t, heap_max * 0.45, heap_max * 0.995, 3))
        for k in range(rng.randint(3, 6)):
            at = t - (6 - k) * rng.randint(4, 12) * US
            log.line(
                at,
                "info",
                f"GC({88000 + k}) Pause Full (G1 Compaction Pause) {int(heap_max) - k}M->{int(heap_max) - 3 - k}M({int(heap_max)}M) "
                f"{rng.uniform(900, 4200):.3f}ms",
                src="jvm:gc",
            )
        error = "java.lang.OutOfMemoryError: Java heap space"
        frames = [
            "\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)",
            "\tat java.base/java.util.ArrayList.grow(ArrayList.java:237)",
            "\tat com.acme.fs.cache.FeatureCache.put(FeatureCache.java:141)",
            "\tat com.acme.fs.api.FeatureController.lookup(FeatureController.java:88)",
        ]
    thread = rng.choice(("http-nio-8080-exec-12", "kafka-consumer-1", "main", "ForkJoinPool.commonPool-worker-3"))
    log.raw(t, [(f'Exception in thread "{thread}" {error}', ctx.ev("log", "java OutOfMemoryError")), *frames])
    log.raw(t + 40_000, [(f"Terminating due to {error}", ctx.ev("log", "JVM exits on OutOfMemoryError"))])
    died(ctx, pod, pod.main, t + 60_000, 3, "Error")
    inc.pid = pod.main.pid


def go_goroutine_leak(ctx: Ctx) -> None:
    inc, rng = ctx.incident, ctx.rng
    pod = inc.pod
    assert pod is not None
    t = inc.failure_us
    peak = rng.randint(150_000, 900_000)
    ctx.world.shape_app(pod, inc.onset_us, t, ramp(inc.onset_us, t, rng.randint(2000, 9000), peak, 2))
    log = ctx.app(pod)
    for k in range(rng.randint(2, 5)):
        at = t - rng.randint(10, 300) * US
        log.raw(
            at,
            [
                f"{moment(at):%Y/%m/%d %H:%M:%S} http: Accept error: accept tcp [::]:8080: accept4: too many open files; retrying in {5 * 2**k}ms"
            ],
        )
    stack: list[str | tuple[str, Evidence]] = [
        ("fatal error: runtime: out of memory", ctx.ev("log", "go runtime out of memory")),
        "",
        "runtime stack:",
        f"runtime.throw({{0x{rng.getrandbits(24):x}?, 0x{rng.getrandbits(16):x}?}})",
        f"\t/usr/local/go/src/runtime/panic.go:1023 +0x5c fp=0x7ffd{rng.getrandbits(32):08x} sp=0x7ffd{rng.getrandbits(32):08x} pc=0x{rng.getrandbits(24):x}",
        f"runtime.sysMapOS(0xc0{rng.getrandbits(24):07x}000, 0x4000000)",
        "\t/usr/local/go/src/runtime/mem_linux.go:167 +0x11b",
        "runtime.(*mheap).grow(0x2c7a5e0, 0x8?)",
        "\t/usr/local/go/src/runtime/mheap.go:1513 +0x1fe",
        "",
        f"goroutine {rng.randint(100_000, peak)} [running]:",
        f"net/http.(*conn).serve(0xc00{rng.getrandbits(24):06x}0, {{0x1d3c7e8, 0xc000{rng.getrandbits(24):06x}}})",
        "\t/usr/local/go/src/net/http/server.go:2039 +0x8b4",
        "",
        f"goroutine {rng.randint(100, 99_999)} [chan receive, {rng.randint(30, 400)} minutes]:",
        "github.com/acme/gateway/internal/stream.(*Fanout).wait(...)",
        "\t/src/internal/stream/fanout.go:118",
    ]
    log.raw(t, stack)
    died(ctx, pod, pod.main, t + 30_000, 2, "Error")
    inc.pid = pod.main.pid


_SERVICES = (
    ("telegraf", "telegraf", "The plugin-driven server agent for reporting metrics into InfluxDB"),
    ("td-agent", "ruby", "td-agent: Fluentd based data collector for Treasure Data"),
    ("node-problem-detector", "node-problem-de", "Kubernetes node problem detector"),
    ("gpu-telemetry", "python3", "GPU telemetry collector"),
    ("amazon-cloudwatch-agent", "amazon-cloudwat", "Amazon CloudWatch Agent"),
)


def host_memory_leak_process(ctx: Ctx) -> None:
    inc, rng, host = ctx.incident, ctx.rng, ctx.host
    unit, comm, description = rng.choice(_SERVICES)
    pid = host.pid_at(rng, host.boot_us + rng.randint(20, 90) * US)
    capacity = host.memory_kib * 1024
    memory = ctx.world.memory[host.name]
    used0, _ = memory.value_at(inc.onset_us)
    t = inc.failure_us
    memory.cut(inc.onset_us, t + 5 * MINUTE, ramp(inc.onset_us, t, used0, capacity * 0.996, 6) + [(t + 5 * MINUTE, used0, 0.0)])
    leaked = int(capacity * 0.996 - used0)
    victim = Task(pid, 0, comm, pages(leaked) * 2, pages(leaked), 0)
    tasks = sorted(
        [
            Task(host.kubelet_pid, 0, "kubelet", 1_200_000, 90_000, -999),
            Task(host.containerd_pid, 0, "containerd", 900_000, 40_000, -999),
            Task(rng.randint(300, 700), 0, "systemd-journal", 40_000, 9_000, -250),
            victim,
        ],
        key=lambda task: task.pid,
    )
    marks = {
        "invoked": ctx.ev("oom_invoked", "global oom-killer invoked", pid=pid),
        "killed": ctx.ev("oom_kill", "global oom kill of a host service", pid=pid),
    }
    kill = oom_report(
        ctx,
        host,
        t,
        trigger=victim,
        victim=victim,
        tasks=tasks,
        victim_memcg=f"/system.slice/{unit}.service",
        cpuset="/",
        oom_memcg=None,
        evidence=marks,
    )
    oom_event(
        ctx.sink,
        host,
        kill,
        pid,
        comm,
        f"/system.slice/{unit}.service",
        "CONSTRAINT_NONE",
        ctx.ev("oom_kill", "kubelet system oom", pid=pid),
    )
    ctx.incident.cgroups.append(CgroupReading(f"/system.slice/{unit}.service", kill, leaked, leaked + leaked // 200, None, oom_kill=1))
    sink = ctx.sink
    sink.systemd(host, kill + 40_000, f"{unit}.service: A process of this unit has been killed by the OOM killer.")
    sink.systemd(host, kill + 90_000, f"{unit}.service: Main process exited, code=killed, status=9/KILL")
    sink.systemd(host, kill + 91_000, f"{unit}.service: Failed with result 'oom-kill'.")
    hours = (t - inc.onset_us) // (3600 * US) + rng.randint(5, 60)
    sink.systemd(host, kill + 92_000, f"{unit}.service: Consumed {hours}h {rng.randint(0, 59)}min {rng.uniform(0, 59):.3f}s CPU time.")
    sink.systemd(host, kill + 10 * US, f"{unit}.service: Scheduled restart job, restart counter is at 1.")
    sink.systemd(host, kill + 10 * US + 3000, f"Stopped {unit}.service - {description}.")
    sink.systemd(host, kill + 10 * US + 9000, f"Started {unit}.service - {description}.")
    inc.pid = pid


APP_MODE_WRITERS = {
    "jvm-heap-metaspace": jvm_heap_metaspace,
    "go-goroutine-leak": go_goroutine_leak,
    "host-memory-leak-process": host_memory_leak_process,
}
