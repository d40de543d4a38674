"""The GPUs of one host over the window: memory curves, processes, and nvidia-smi captures.

Background pods put plateaus on the curves; incidents cut their own shapes in (a leak's
ramp, a batch's sudden step, fragmentation's sawtooth, a stair per LoRA adapter) and add
processes (stale contexts, a second pod on the same device). The capture sessions are
``nvidia-smi -l`` loops an operator left running: every GPU incident window is covered,
background sessions fill the rest of the byte budget.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl

from rca.datasets._formats import ROW_SCHEMA, utc
from rca.datasets._model import MINUTE, US, Host, Pod
from rca.datasets._sink import Evidence, Sink
from rca.datasets._smi import APPS_COLUMNS, GpuReading, ProcReading, apps_header, query_header, query_rows, table
from rca.datasets._tracks import Track, evaluate
from rca.datasets._vec import Draw

INTERVALS_S = (5, 10, 15, 30, 60)


@dataclass
class GpuProc:
    """A process holding memory on one GPU; ``fixed_mib`` None means "the rest of what the curve shows"."""

    gpu: int
    pid: int
    name: str
    start: int
    end: int
    fixed_mib: float | None = None


@dataclass
class GpuState:
    host: Host
    idle_mib: int
    tracks: dict[int, Track] = field(default_factory=dict)
    procs: list[GpuProc] = field(default_factory=list)
    lost: dict[int, tuple[int, int]] = field(default_factory=dict)  # gpu -> (fell off the bus, back after the node's reset)
    required: list[tuple[int, int]] = field(default_factory=list)
    snapshots: dict[int, dict[tuple[int, int], Evidence]] = field(default_factory=dict)  # table time -> {(gpu, pid): evidence}
    shaped: list[tuple[int, int, int]] = field(default_factory=list)  # (gpu, start, end) drawn by an incident
    sample_marks: list[tuple[int, int, Evidence]] = field(default_factory=list)  # (gpu, at or before ts, evidence)
    app_marks: list[tuple[int, int, int, Evidence]] = field(default_factory=list)  # (gpu, pid, at or before ts, evidence)
    apps_columns: tuple[str, ...] = APPS_COLUMNS[0]

    @classmethod
    def for_host(cls, host: Host, rng: random.Random) -> GpuState:
        state = cls(host, rng.choice((0, 1, 4)), apps_columns=rng.choice(APPS_COLUMNS))
        for gpu in host.gpus:
            state.tracks[gpu.index] = Track([(host.boot_us, state.idle_mib, 0.0)])
        return state

    @property
    def total_mib(self) -> int:
        return self.host.gpus[0].model.memory_mib

    def add_pod(self, pod: Pod, rng: random.Random) -> None:
        """A plateau per GPU of the pod: load, hold steady, free everything at the end."""
        if not pod.gpus:
            return
        if not pod.gpu_mib:
            share = {"train": (0.55, 0.9), "serve": (0.86, 0.94), "ci": (0.1, 0.55), "notebook": (0.05, 0.4)}[pod.role]
            pod.gpu_mib = int(self.total_mib * rng.uniform(*share))
        util = {"train": (88, 99), "serve": (25, 75), "ci": (40, 92), "notebook": (0, 30)}[pod.role]
        load = pod.start_us + rng.randint(20, 240) * US
        for index in pod.gpus:
            level = pod.gpu_mib * rng.uniform(0.985, 1.015)
            busy = rng.uniform(*util)
            ramp = load + rng.randint(30, 200) * US
            self.tracks[index].add(
                [(load, self.idle_mib, 0.0), (ramp, level, busy), (pod.end_us, level, busy), (pod.end_us + 1, self.idle_mib, 0.0)]
            )
            self.procs.append(GpuProc(index, pod.gpu_pid(index), pod.exe, load, pod.end_us))

    def shape(self, gpu: int, start: int, end: int, points: list[tuple[int, float, float]], mark: bool = True) -> None:
        """Draw an incident's curve on ``gpu``; ``mark`` counts its samples as incident lines."""
        self.tracks[gpu].cut(start, end, points)
        if mark:
            self.shaped.append((gpu, start, end))

    def level(self, gpu: int, ts: int) -> tuple[float, float]:
        return self.tracks[gpu].value_at(ts)

    def is_lost(self, gpu: int, ts: int) -> bool:
        since, until = self.lost.get(gpu, (0, 0))
        return since <= ts < until

    def capture(self, start: int, end: int) -> None:
        self.required.append((start, end))

    def snapshot(self, ts: int, marks: dict[tuple[int, int], Evidence] | None = None) -> None:
        self.snapshots.setdefault(ts, {}).update(marks or {})


def row_bytes(host: Host) -> int:
    probe = pl.DataFrame({"ts": [0], "gpu": [0], "used": [12345], "util": [97], "temp": [61]})
    return len(probe.select(query_rows(probe, host)).item()) + 1


def plan_sessions(state: GpuState, rng: random.Random, budget: int, start_us: int, end_us: int) -> list[tuple[int, int]]:
    """Pick the loop interval that fits the required windows in ``budget``, then add background sessions."""
    host = state.host
    per_sample = row_bytes(host) * len(host.gpus)
    required = _merge([(max(a, start_us), min(b, end_us)) for a, b in state.required])

    def cost(sessions: list[tuple[int, int]], interval: int) -> float:
        seconds = sum(b - a for a, b in sessions) / US
        return seconds / interval * per_sample * 1.25  # compute-apps snapshots ride along

    interval = INTERVALS_S[-1]
    for seconds in INTERVALS_S:
        if cost(required, seconds) <= 0.35 * budget:
            interval = seconds
            break
    host.smi_interval_s = interval
    sessions = list(required)
    spent = cost(sessions, interval)
    for _ in range(400):
        if spent >= budget * 0.97 or sum(b - a for a, b in sessions) >= (end_us - start_us) * 0.97:
            break
        length = rng.randint(20, 360) * MINUTE
        begin = rng.randint(start_us, max(start_us, end_us - length))
        candidate = _merge(sessions + [(begin, min(end_us, begin + length))])
        extra = cost(candidate, interval) - spent
        if spent + extra > budget:
            room = (budget - spent) / per_sample / 1.25 * interval * US
            if room < 10 * MINUTE:
                continue
            candidate = _merge(sessions + [(begin, min(end_us, begin + int(room)))])
        sessions = candidate
        spent = cost(sessions, interval)
    return sessions


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1] + MINUTE:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _rows(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns([pl.lit(None, dtype).alias(name) for name, dtype in ROW_SCHEMA.items() if name not in frame.columns]).select(
        [pl.col(name).cast(dtype) for name, dtype in ROW_SCHEMA.items()]
    )


def _lost(state: GpuState) -> pl.Expr:
    """Rows of a GPU while it is off the bus."""
    lost = pl.lit(False)
    for gpu, (since, until) in state.lost.items():
        lost = lost | (pl.col("gpu").eq(gpu) & pl.col("ts").is_between(since, until, closed="left"))
    return lost


def _inc(frame: pl.DataFrame, shaped: list[tuple[int, int, int]]) -> pl.Expr:
    flags = [pl.col("gpu").eq(g) & pl.col("ts").is_between(a, b) for g, a, b in shaped]
    return pl.any_horizontal(flags) if flags else pl.lit(False)


def session_samples(state: GpuState, session: tuple[int, int], draw: Draw) -> pl.DataFrame:
    """One row per GPU per loop iteration: ts, gpu, used, util, temp (the GPU's readings)."""
    host = state.host
    period = host.smi_interval_s * US + draw.rng.randint(2_000, 30_000)
    start = session[0] + draw.rng.randint(0, US - 1)
    count = max(1, (session[1] - start) // period)
    times = pl.int_range(0, count, eager=True) * period + start
    gpus = pl.Series("gpu", [g.index for g in host.gpus], dtype=pl.Int64)
    samples = pl.DataFrame({"ts": times}).join(pl.DataFrame({"gpu": gpus}), how="cross")
    samples = evaluate(samples, state.tracks, "gpu")
    n = samples.height
    jitter = draw.floats(n, -1.0, 1.0)
    busy = pl.col("value") > 64
    return (
        samples.with_columns(jitter=jitter)
        .with_columns(
            used=pl.when(busy)
            .then(pl.col("value") + pl.col("jitter") * pl.col("value") * 0.002)
            .otherwise(pl.col("value"))
            .round(0)
            .clip(0, state.total_mib - 1)
            .cast(pl.Int64),
            util=pl.when(pl.col("util") > 0).then(pl.col("util") + pl.col("jitter") * 6).otherwise(0).round(0).clip(0, 100).cast(pl.Int64),
        )
        .with_columns(temp=(pl.lit(31) + pl.col("util") * 0.36 + pl.col("jitter") * 2).round(0).cast(pl.Int64))
        .drop("value", "jitter")
    )


def query_frame(state: GpuState, session: tuple[int, int], draw: Draw, sink: Sink) -> pl.DataFrame:
    """The rows of one ``--query-gpu`` capture file."""
    host = state.host
    samples = session_samples(state, session, draw)
    lost = _lost(state)
    bus = pl.col("gpu").replace_strict({g.index: g.bus_id for g in host.gpus}, return_dtype=pl.String)
    error = pl.format("Unable to determine the device handle for GPU{}: Unknown Error", bus)
    body = pl.when(lost).then(error).otherwise(query_rows(samples, host))
    frame = samples.with_columns(body=body, sub=pl.col("gpu"), raw=pl.lit(True), inc=_inc(samples, state.shaped) | lost)
    frame = _mark(frame, state.sample_marks, sink, host, lambda g, p: pl.col("gpu").eq(g))
    header = pl.DataFrame({"ts": [frame["ts"].min()], "sub": [-1], "body": [query_header(host)], "raw": [True], "inc": [False]})
    return pl.concat([_rows(header), _rows(frame)])


def _mark(frame: pl.DataFrame, marks: list[tuple], sink: Sink, host: Host, match: Callable[[int, int | None], pl.Expr]) -> pl.DataFrame:
    """Attach evidence ids to the last matching row at or before each mark's time."""
    ids = pl.Series("ev", [None] * frame.height, dtype=pl.Int64)
    positions = frame.with_row_index("_pos")
    for mark in marks:
        *keys, ts, evidence = mark
        gpu, pid = keys[0], keys[1] if len(keys) > 1 else None
        hit = positions.filter(match(gpu, pid) & (pl.col("ts") <= ts))
        if hit.height and ts - hit["ts"].max() < 5 * MINUTE:
            position = hit["_pos"][-1]
            ids[position] = sink.register(evidence, host)
    return frame.with_columns(ev=ids)


def apps_frame(state: GpuState, session: tuple[int, int], draw: Draw, sink: Sink) -> pl.DataFrame:
    """The rows of one ``--query-compute-apps`` capture file (a snapshot every few loop periods)."""
    host = state.host
    every = max(15, 3 * host.smi_interval_s) * US + draw.rng.randint(1_000, 20_000)
    start = session[0] + draw.rng.randint(0, US - 1)
    count = max(1, (session[1] - start) // every)
    header = pl.DataFrame({"ts": [start], "sub": [-1], "body": [apps_header(state.apps_columns)], "raw": [True], "inc": [False]})
    procs = pl.DataFrame(
        [(p.gpu, p.pid, p.name, p.start, p.end, p.fixed_mib) for p in state.procs if p.start < session[1] and p.end > session[0]],
        schema={"gpu": pl.Int64, "pid": pl.Int64, "name": pl.String, "p_start": pl.Int64, "p_end": pl.Int64, "fixed": pl.Float64},
        orient="row",
    ).with_row_index("order")
    times = pl.DataFrame({"ts": pl.int_range(0, count, eager=True) * every + start})
    lost = _lost(state)
    rows = times.join(procs, how="cross").filter((pl.col("ts") >= pl.col("p_start")) & (pl.col("ts") < pl.col("p_end")) & ~lost)
    if rows.height == 0:
        return _rows(header)
    rows = (
        evaluate(rows, state.tracks, "gpu")
        .with_columns(
            fixed_sum=pl.col("fixed").fill_null(0.0).sum().over("ts", "gpu"),
        )
        .with_columns(
            used=pl.when(pl.col("fixed").is_not_null())
            .then(pl.col("fixed"))
            .otherwise((pl.col("value") - pl.col("fixed_sum") - 420).clip(0))
            .round(0)
            .cast(pl.Int64),
        )
        .sort("ts", "gpu", "order")
    )
    by_index = {g.index: g for g in host.gpus}
    used = pl.format("{} MiB", "used") if host.smi_units else pl.col("used").cast(pl.String)
    values = {
        "timestamp": utc(pl.col("ts")).dt.strftime("%Y/%m/%d %H:%M:%S%.3f"),
        "gpu_uuid": pl.col("gpu").replace_strict({i: g.uuid for i, g in by_index.items()}, return_dtype=pl.String),
        "gpu_name": pl.lit(host.gpus[0].model.name),
        "gpu_bus_id": pl.col("gpu").replace_strict({i: g.bus_id for i, g in by_index.items()}, return_dtype=pl.String),
        "pid": pl.col("pid").cast(pl.String),
        "process_name": pl.col("name"),
        "used_gpu_memory": used,
    }
    frame = rows.with_columns(
        body=pl.concat_str([values[c] for c in state.apps_columns], separator=", "),
        sub=pl.int_range(pl.len()).over("ts"),
        raw=pl.lit(True),
        inc=_inc(rows, state.shaped),
    )
    frame = _mark(frame, state.app_marks, sink, host, lambda g, p: pl.col("gpu").eq(g) & pl.col("pid").eq(p))
    return pl.concat([_rows(header), _rows(frame.select("ts", "sub", "body", "raw", "inc", "ev"))])


def _active(state: GpuState, ts: int) -> dict[int, list[GpuProc]]:
    active: dict[int, list[GpuProc]] = {}
    for proc in state.procs:
        if proc.start <= ts < proc.end and not state.is_lost(proc.gpu, ts):
            active.setdefault(proc.gpu, []).append(proc)
    return dict(sorted(active.items()))


def table_frame(state: GpuState, times: list[int], sink: Sink) -> pl.DataFrame:
    """Default ``nvidia-smi`` tables at ``times`` (and at every time an incident asked for one)."""
    host = state.host
    rows: list[tuple] = []
    for ts in sorted(set(times) | set(state.snapshots)):
        readings, procs = [], []
        active = _active(state, ts)
        for gpu in host.gpus:
            if state.is_lost(gpu.index, ts):
                continue
            value, util = state.level(gpu.index, ts)
            used, busy = int(round(value)), int(round(util))
            readings.append(
                GpuReading(
                    gpu,
                    used,
                    busy,
                    31 + int(busy * 0.36),
                    gpu.model.idle_power_w + int(busy / 100 * (gpu.model.power_cap_w - gpu.model.idle_power_w) * 0.85),
                )
            )
            fixed = sum(p.fixed_mib or 0.0 for p in active.get(gpu.index, []))
            for proc in active.get(gpu.index, []):
                mib = proc.fixed_mib if proc.fixed_mib is not None else max(value - fixed - 420, 0)
                procs.append(ProcReading(gpu.index, proc.pid, proc.name, int(mib)))
        lines = table(ts, host, readings, procs)
        marks = state.snapshots.get(ts, {})
        first_proc = len(lines) - 1 - len(procs)
        for number, text in enumerate(lines):
            evidence = None
            if first_proc <= number < len(lines) - 1:
                row = procs[number - first_proc]
                evidence = marks.get((row.gpu_index, row.pid))
            ev = sink.register(evidence, host) if evidence is not None else None
            rows.append((ts, number, text, True, evidence is not None, ev))
    schema = {"ts": pl.Int64, "sub": pl.Int64, "body": pl.String, "raw": pl.Boolean, "inc": pl.Boolean, "ev": pl.Int64}
    return _rows(pl.DataFrame(rows, schema=schema, orient="row"))
