"""The generator's driver: build the fleet, place the incidents, then write every host's files.

Each stream gets a share of the byte budget; injected and lifecycle lines are measured
first and background noise fills the rest. A running correction spreads any error (what
gzip saves on rotated parts, rounding) over the streams still to come, so the total lands
near the target.
"""

from __future__ import annotations

import csv
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from rca.datasets._appnoise import AppEnv, app_noise, formatter_style
from rca.datasets._artifacts import EXPLAIN_STAGES, write_artifacts
from rca.datasets._formats import ROW_SCHEMA, Style, format_lines
from rca.datasets._gpu import GpuState, apps_frame, plan_sessions, query_frame, table_frame
from rca.datasets._incidents import Ctx, World
from rca.datasets._lifecycle import finished, started
from rca.datasets._model import DAY, HOUR, MINUTE, US, Host, Pod, build_hosts
from rca.datasets._modes import MODE_WRITERS
from rca.datasets._modes_app import APP_MODE_WRITERS
from rca.datasets._modes_gpu import GPU_MODE_WRITERS
from rca.datasets._noise import KERNEL_TEMPLATES, KUBELET_TEMPLATES, SYSTEM_TEMPLATES, Env, as_rows, mix
from rca.datasets._plan import Incident, Windows, background_pods, daemonset_pods, schedule
from rca.datasets._prepare import prepare
from rca.datasets._sink import DEVICE_PLUGIN, KERNEL, KUBELET, SYSTEM, app_stream
from rca.datasets._tracks import Track
from rca.datasets._vec import Draw
from rca.datasets._writer import Part, Tally, merge, rotation, utc_text, write

WRITERS = {**MODE_WRITERS, **GPU_MODE_WRITERS, **APP_MODE_WRITERS}
SHARES = {"kernel": 0.10, "kubelet": 0.22, "system": 0.15, "gpu": 0.26, "table": 0.03, "apps": 0.24}
_KERNEL_FILES = {"dmesg_raw": "dmesg.log", "dmesg_ctime": "dmesg-T.log", "kern_log": "kern.log", "journal_k": "journalctl-k.log"}
_ROLE_WEIGHT = {"train": 1.0, "serve": 1.2, "jvm": 0.6, "go": 0.6, "batch": 0.5, "ci": 0.4}
_PILOT = 400


@dataclass
class Job:
    """One stream to write, with its planned share of the bytes."""

    name: str
    budget: float
    run: Callable[[float], None]


def build_world(seed: int, start_us: int, end_us: int, n_hosts: int, per_mode: int) -> tuple[World, list[Incident]]:
    hosts = build_hosts(random.Random(f"{seed}:hosts"), n_hosts, start_us)
    incidents = schedule(random.Random(f"{seed}:schedule"), hosts, start_us, end_us, per_mode)
    busy = Windows()
    for incident in incidents:
        prepare(incident, busy)
    world = World(hosts, start_us, end_us)
    for host in hosts:
        rng = random.Random(f"{seed}:pods:{host.name}")
        host.pods.extend(daemonset_pods(rng, host, start_us, end_us))
        host.pods.extend(background_pods(rng, host, busy, start_us, end_us))
        state = GpuState.for_host(host, rng)
        for pod in host.pods:
            state.add_pod(pod, rng)
            world.app_tracks[pod.uid] = _app_track(rng, pod, start_us, end_us)
        world.gpu[host.name] = state
        world.memory[host.name] = _memory_track(rng, host, start_us, end_us)
    for incident in incidents:
        WRITERS[incident.mode](Ctx(world, incident))
        world.ground_truth.append(_truth(incident))
        world.incidents.append(incident)
    for host in hosts:
        rng = random.Random(f"{seed}:lifecycle:{host.name}")
        for pod in sorted(host.pods, key=lambda p: p.start_us):
            if pod.role != "daemon":
                started(world.sink, host, pod, rng, (start_us, end_us))
                finished(world.sink, host, pod, rng, (start_us, end_us))
    return world, incidents


def _truth(incident: Incident) -> dict:
    pod = incident.pod
    return {
        "incident_key": incident.key,
        "mode_id": incident.mode,
        "host": incident.host.name,
        "start_utc": utc_text(incident.onset_us),
        "end_utc": utc_text(incident.end_us),
        "pid": incident.pid,
        "pod": pod.name if pod else None,
        "namespace": pod.namespace if pod else None,
        "gpu_index": incident.gpu_index,
        "explain_stage": EXPLAIN_STAGES.get(incident.mode),
    }


def _walk(rng: random.Random, start: int, end: int, low: float, high: float, every: tuple[int, int]) -> list[tuple[int, float, float]]:
    points, at = [], start
    while at < end:
        points.append((at, rng.uniform(low, high), 0.0))
        at += rng.randint(*every)
    points.append((end, rng.uniform(low, high), 0.0))
    return points


def _memory_track(rng: random.Random, host: Host, start_us: int, end_us: int) -> Track:
    capacity = host.memory_kib * 1024
    return Track(_walk(rng, start_us - DAY, end_us + DAY, capacity * 0.15, capacity * 0.45, (HOUR, 4 * HOUR)))


def _app_track(rng: random.Random, pod: Pod, start_us: int, end_us: int) -> Track:
    begin, stop = max(pod.start_us, start_us - DAY), min(pod.end_us, end_us + DAY)
    if pod.role in ("train", "batch"):
        level = pod.memory_limit * rng.uniform(0.1, 0.35)
        return Track([(begin, level, 0.0), (stop, level * rng.uniform(0.97, 1.03), 0.0)])
    if pod.role == "serve":
        return Track(_walk(rng, begin, stop, 3.0, 55.0, (10 * MINUTE, 40 * MINUTE)))
    if pod.role == "jvm":
        heap = pod.memory_limit * 0.75 / 2**20
        return Track(_walk(rng, begin, stop, heap * 0.3, heap * 0.55, (20 * MINUTE, 90 * MINUTE)))
    if pod.role == "go":
        return Track(_walk(rng, begin, stop, 150.0, 900.0, (15 * MINUTE, 60 * MINUTE)))
    return Track([(begin, 0.0, 0.0)])


# --- writing ---------------------------------------------------------------------------------


class Plan:
    """Runs the jobs in order, rescaling each one's budget by what is left of the target."""

    def __init__(self, target: float, tally: Tally) -> None:
        self.target = target
        self.tally = tally
        self.jobs: list[Job] = []
        self.averages: dict[str, float] = {}  # mean line length per kind of stream

    def add(self, name: str, budget: float, run: Callable[[float], None]) -> None:
        self.jobs.append(Job(name, budget, run))

    def run(self) -> None:
        planned = sum(job.budget for job in self.jobs)
        scale = self.target / planned if planned else 0.0
        remaining = planned * scale
        for job in self.jobs:
            share = job.budget * scale
            left = self.target - self.tally.bytes
            budget = max(share * left / remaining, 0.0) if remaining > 0 else 0.0
            remaining -= share
            job.run(budget)


def _bytes(rows: pl.DataFrame, style: Style) -> float:
    if rows.height == 0:
        return 0.0
    return float(format_lines(rows, style).str.len_bytes().sum() + rows.height)


def _noise_rows(
    seed_key: str,
    style: Style,
    budget: float,
    fixed: float,
    factory: Callable[[Draw, int], pl.DataFrame],
    averages: dict[str, float],
    kind: str,
) -> pl.DataFrame:
    """As many rows from ``factory`` as fill ``budget`` bytes once ``fixed`` bytes are counted.

    The mean line length of a ``kind`` of stream is measured once, on a small pilot draw.
    """
    if kind not in averages:
        pilot = factory(Draw(random.Random(f"pilot:{seed_key}")), _PILOT)
        averages[kind] = _bytes(pilot, style) / max(pilot.height, 1)
    average = averages[kind]
    # A stream full of injected lines still gets background around them; the running correction evens it out.
    count = int(max(budget - fixed, budget / 2) / average) if average else 0
    return factory(Draw(random.Random(seed_key)), count)


def schedule_host(plan: Plan, world: World, host: Host, out: Path, host_budget: float, seed: int) -> None:
    """Queue the jobs that write one host's files."""
    sink, window = world.sink, (world.start_us, world.end_us)
    env = Env.build(host, Draw(random.Random(f"{seed}:env:{host.name}")), world.start_us, world.end_us, world.memory[host.name])
    root = f"logs/{host.name}"
    tally = plan.tally
    mirrored: list[pl.DataFrame] = []

    def kernel(budget: float) -> None:
        style = Style(host.kernel_style, host)
        parts = (
            rotation(f"{root}/kern.log", *window, compress=True)
            if host.kernel_style == "kern_log"
            else [Part(f"{root}/{_KERNEL_FILES[host.kernel_style]}", window[0] - 400 * DAY, window[1] + 400 * DAY)]
        )
        fixed = sink.frame(host.name, KERNEL)
        noise = _noise_rows(
            f"{seed}:{host.name}:kernel",
            style,
            budget,
            _bytes(fixed, style),
            lambda d, n: mix(d, n, env, KERNEL_TEMPLATES),
            plan.averages,
            f"{host.name}:kernel",
        )
        if host.kernel_style == "dmesg_raw":
            # journald keeps the same NIC link messages with wall-clock times: the anchor for the boot offset.
            link = noise.filter(pl.col("body").str.starts_with("mlx5_core "))
            mirrored.append(link.with_columns(program=pl.lit("kernel"), pid=pl.lit(None, pl.Int64)))
        write(out, parts, merge(noise, fixed, sink.blocks.get((host.name, KERNEL), [])), style, sink.evidence, tally)

    def kubelet(budget: float) -> None:
        style = Style("klog", host)
        parts = rotation(f"{root}/kubelet.log", *window, compress=True)
        fixed = sink.frame(host.name, KUBELET)
        noise = _noise_rows(
            f"{seed}:{host.name}:kubelet",
            style,
            budget,
            _bytes(fixed, style),
            lambda d, n: mix(d, n, env, KUBELET_TEMPLATES).with_columns(pid=pl.lit(host.kubelet_pid, pl.Int64)),
            plan.averages,
            f"{host.name}:kubelet",
        )
        write(out, parts, merge(noise, fixed, []), style, sink.evidence, tally)

    def system(budget: float) -> None:
        journald = host.kubelet_style == "journald"
        style = Style("journal" if journald else "syslog", host)
        parts = (
            [Part(f"{root}/journal.log", window[0] - 400 * DAY, window[1] + 400 * DAY)]
            if journald
            else rotation(f"{root}/syslog", *window, compress=True)
        )
        fixed = sink.frame(host.name, SYSTEM)
        if journald:
            fixed = pl.concat([fixed, sink.frame(host.name, KUBELET)])
        extra = pl.concat(mirrored) if mirrored else as_rows(pl.DataFrame({"ts": [], "body": []}))
        fixed_bytes = _bytes(fixed, style) + _bytes(extra, style)
        kubelet_share = SHARES["kubelet"] / (SHARES["kubelet"] + SHARES["system"]) if journald else 0.0

        def factory(d: Draw, n: int) -> pl.DataFrame:
            parts_rows = [mix(d, n - int(n * kubelet_share), env, SYSTEM_TEMPLATES)]
            if journald:
                parts_rows.append(
                    mix(d, int(n * kubelet_share), env, KUBELET_TEMPLATES).with_columns(
                        program=pl.lit("kubelet"), pid=pl.lit(host.kubelet_pid, pl.Int64)
                    )
                )
            return pl.concat(parts_rows)

        noise = pl.concat(
            [
                _noise_rows(
                    f"{seed}:{host.name}:system",
                    style,
                    budget,
                    fixed_bytes,
                    factory,
                    plan.averages,
                    f"{host.name}:system",
                ),
                extra,
            ]
        )
        write(out, parts, merge(noise, fixed, []), style, sink.evidence, tally)

    plan.add(f"{host.name}:kernel", host_budget * SHARES["kernel"], kernel)
    if host.kubelet_style == "klog":
        plan.add(f"{host.name}:kubelet", host_budget * SHARES["kubelet"], kubelet)
        plan.add(f"{host.name}:system", host_budget * SHARES["system"], system)
    else:
        plan.add(f"{host.name}:journal", host_budget * (SHARES["kubelet"] + SHARES["system"]), system)
    plan.add(f"{host.name}:device-plugin", 0.0, lambda budget: _device_plugin(world, host, out, seed, tally))
    _schedule_apps(plan, world, host, out, host_budget * SHARES["apps"], seed, tally)
    # A host's nvidia-smi output grows with its GPU count.
    gpus = min(max(len(host.gpus) / (sum(len(h.gpus) for h in world.hosts) / len(world.hosts)), 0.25), 2.0)
    plan.add(f"{host.name}:gpu", host_budget * SHARES["gpu"] * gpus, lambda budget: _gpu_captures(world, host, out, budget, seed, tally))
    plan.add(f"{host.name}:table", host_budget * SHARES["table"], lambda budget: _gpu_tables(world, host, out, budget, seed, tally))


def _device_plugin(world: World, host: Host, out: Path, seed: int, tally: Tally) -> None:
    plugin = next((p for p in host.pods if p.name.startswith("nvidia-device-plugin")), None)
    if plugin is None:
        return
    rng = random.Random(f"{seed}:plugin:{host.name}")
    boot = plugin.start_us
    startup = [
        "Loading NVML",
        "Starting FS watcher.",
        "Starting OS watcher.",
        "Starting Plugins.",
        "Loading configuration.",
        "Initializing NVML.",
        "Retreiving plugins.",
        "Starting GRPC server for 'nvidia.com/gpu'",
        "Starting to serve 'nvidia.com/gpu' on /var/lib/kubelet/device-plugins/nvidia-gpu.sock",
        "Registered device plugin for 'nvidia.com/gpu' with Kubelet",
    ]
    rows = [(boot + k * rng.randint(1000, 300_000), 0, line, None, None, None, None, False, False, None) for k, line in enumerate(startup)]
    fixed = pl.concat([pl.DataFrame(rows, schema=ROW_SCHEMA, orient="row"), world.sink.frame(host.name, DEVICE_PLUGIN)])
    path = f"logs/{host.name}/pods/{plugin.namespace}_{plugin.name}/{plugin.main.name}.log"
    write(
        out,
        [Part(path, boot - DAY, world.end_us + DAY)],
        merge(fixed.head(0), fixed, []),
        Style("go_log", host),
        world.sink.evidence,
        tally,
    )


def _schedule_apps(plan: Plan, world: World, host: Host, out: Path, budget: float, seed: int, tally: Tally) -> None:
    window = (world.start_us, world.end_us)
    logged = [p for p in host.pods if p.app is not None and p.start_us < window[1] and p.end_us > window[0]]
    weights = {p.uid: (min(p.end_us, window[1]) - max(p.start_us, window[0])) * _ROLE_WEIGHT[p.role] for p in logged}
    total = sum(weights.values()) or 1.0
    for pod in logged:
        plan.add(f"{host.name}:{pod.name}", budget * weights[pod.uid] / total, _app_job(world, host, pod, out, seed, tally, plan.averages))


def _app_job(world: World, host: Host, pod: Pod, out: Path, seed: int, tally: Tally, averages: dict[str, float]) -> Callable[[float], None]:
    def run(budget: float) -> None:
        rng = random.Random(f"{seed}:app:{pod.uid}")
        start, end = max(pod.start_us, world.start_us), min(pod.end_us, world.end_us)
        state = world.gpu[host.name]
        gpu = state.tracks[pod.gpus[0]] if pod.gpus else None
        step_us = rng.randint(300_000, 4_000_000)
        env = AppEnv(
            pod,
            start,
            end,
            gpu,
            world.app_tracks[pod.uid],
            rng.choice(("__main__", "train", "trainer", "llm.train")),
            max(1000, (pod.end_us - pod.start_us) // step_us),
            step_us,
        )
        style = Style(formatter_style(pod.app or ""), host)
        stream = app_stream(pod)
        fixed = world.sink.frame(host.name, stream)
        noise = _noise_rows(
            f"{seed}:{host.name}:{stream}",
            style,
            budget,
            _bytes(fixed, style),
            lambda d, n: app_noise(d, n, env),
            averages,
            f"{host.name}:{pod.role}:{pod.app}",
        )
        shaped = world.app_shaped.get(pod.uid, [])
        if shaped:
            noise = noise.with_columns(inc=pl.any_horizontal([pl.col("ts").is_between(a, b) for a, b in shaped]))
        path = f"logs/{host.name}/pods/{pod.namespace}_{pod.name}/{pod.main.name}.log"
        write(
            out,
            [Part(path, start - DAY, end + DAY)],
            merge(noise, fixed, world.sink.blocks.get((host.name, stream), [])),
            style,
            world.sink.evidence,
            tally,
        )

    return run


def _gpu_captures(world: World, host: Host, out: Path, budget: float, seed: int, tally: Tally) -> None:
    state = world.gpu[host.name]
    rng = random.Random(f"{seed}:smi:{host.name}")
    sessions = plan_sessions(state, rng, int(budget), world.start_us, world.end_us)
    draw = Draw(rng)
    raw = Style("raw", host)
    for begin, stop in sessions:
        stamp = f"{utc_text(begin)[:19].replace('-', '').replace(':', '').replace('T', '-')}"
        for kind, frame in (
            ("query", query_frame(state, (begin, stop), draw, world.sink)),
            ("apps", apps_frame(state, (begin, stop), draw, world.sink)),
        ):
            part = Part(f"logs/{host.name}/gpu/nvidia-smi-{kind}-{stamp}.csv", begin - HOUR, stop + HOUR)
            write(out, [part], frame.sort("ts", "sub", maintain_order=True), raw, world.sink.evidence, tally)


def _gpu_tables(world: World, host: Host, out: Path, budget: float, seed: int, tally: Tally) -> None:
    state = world.gpu[host.name]
    rng = random.Random(f"{seed}:tables:{host.name}")
    per_table = (24 + 5 * len(host.gpus)) * 91
    count = max(int(budget / per_table) - len(state.snapshots), 0)
    span = world.end_us - world.start_us
    times = [world.start_us + span * k // count + rng.randint(0, 59) * US for k in range(count)] if count else []
    frame = table_frame(state, times, world.sink)
    if frame.height:
        part = Part(f"logs/{host.name}/gpu/nvidia-smi.log", world.start_us - DAY, world.end_us + DAY)
        write(out, [part], frame.sort("ts", "sub", maintain_order=True), Style("raw", host), world.sink.evidence, tally)


def write_corpus(world: World, out: Path, target: int, seed: int) -> Tally:
    """Write every host's logs, the ground truth and the evidence manifest under ``out``."""
    tally = Tally()
    plan = Plan(target * 0.995, tally)
    rng = random.Random(f"{seed}:budget")
    weights = [rng.uniform(0.8, 1.2) for _ in world.hosts]
    # The artifacts are written first, so the noise that follows fills what they leave of the target.
    write_artifacts(world, out, tally, seed)
    for host, weight in zip(world.hosts, weights, strict=True):
        schedule_host(plan, world, host, out, target * weight / sum(weights), seed)
    plan.run()
    _write_truth(world, out, tally)
    return tally


def _write_truth(world: World, out: Path, tally: Tally) -> None:
    columns = ["incident_key", "mode_id", "host", "start_utc", "end_utc", "pid", "pod", "namespace", "gpu_index", "explain_stage"]
    path = out / "ground_truth.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in sorted(world.ground_truth, key=lambda r: r["incident_key"]):
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    placed = sorted((e for e in world.sink.evidence if e.file), key=lambda e: (e.incident_key, e.file, e.line))
    manifest = out / "evidence.jsonl"
    manifest.write_text("".join(e.to_json() + "\n" for e in placed), encoding="utf-8")
    for written in (path, manifest):
        os.utime(written, (world.end_us / US, world.end_us / US))
        tally.bytes += written.stat().st_size
    tally.files += 2
