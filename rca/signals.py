"""Numeric signals per incident: the figures that tell one cause of an OOM from another.

Every signal is a column of ``rca.schema.INCIDENT_SCHEMA`` and is null when the evidence
to compute it is missing (no GPU samples, no CUDA OOM message, ...), never a guess.

- GPU memory of the incident's GPU over ``window`` before the first anchor (nvidia-smi's
  samples, else DCGM's): peak percent,
  headroom at the last sample, least-squares growth rate, the longest run of sample
  intervals growing faster than :data:`GROWTH_ALERT_BYTES_PER_S` (the classic alert:
  more than 5 MB/s for 10 s), and the curve's shape (:func:`growth_shape`).
- GPU utilization period (:func:`oscillation_period`): a DataLoader that cannot keep up
  shows as a regular busy/idle cycle.
- CUDA OOM figures from the allocator's message: reserved-but-unallocated bytes and
  their share of everything reserved (fragmentation), requested vs free.
- Sharing: processes and pods on the GPU (compute-apps rows, DCGM's pod labels), and
  memory held by processes that no longer log anything (stale contexts).
- Host OOM: the victim's RSS against its cgroup limit, the OOM constraint, and whether
  the victim was the process whose memory grew.
- cgroup files: peak usage of the incident's cgroup against its limit, and its OOM kills.
- PyTorch memory snapshots: the allocation site that grew most between the first and the
  last snapshot of the incident's process.
- History: Xid codes seen on the host, the pod's restart count, JVM / Go runtime markers.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import polars as pl

from rca import schema
from rca.sources.cgroup import CGROUP_READING_SCHEMA

GROWTH_ALERT_BYTES_PER_S = 5e6
XID_LOOKBACK = timedelta(days=1)
_FLAT_SHARE = 0.02  # a rise under 2 % of the GPU (or under 256 MiB) is no growth at all
_FLAT_BYTES = 256 * 1024 * 1024
_GIVEN_BACK = 0.3  # a climb that gives back less than this share of what it gained is monotone
_MIN_PERIOD_PEAK = 0.3
_KILL_SLACK = timedelta(seconds=30)  # the kill line itself (with the victim's RSS) may trail the first anchor
_AFTERMATH = timedelta(minutes=2)  # freed memory this close before the anchor is the failure's aftermath
_LIMIT_KEYS = ("cgroup_limit_bytes", "memcg_limit_bytes", "limit_bytes", "memory_limit_bytes", "mem_limit_bytes")
_CONSTRAINTS = {"memcg": "memcg", "none": "system", "cpuset": "cpuset", "memory_policy": "mempolicy", "mempolicy": "mempolicy"}


def attr(name: str) -> pl.Expr:
    """The value of key ``name`` in the ``attrs`` JSON (as text; null when absent or not JSON)."""
    return pl.col("attrs").str.json_path_match(f"$.{name}")


def attr_int(name: str) -> pl.Expr:
    """An integer ``attrs`` value (JSON numbers may come as 1.0e9)."""
    return attr(name).cast(pl.Float64, strict=False).round().cast(pl.Int64)


# The columns incident_signals reads of ``events``, and the rows: those with a pid, and Xids.
EVENT_COLUMNS = ("host", "ts", "pid", "pod", "source", "kind", "gpu_index", "gpu_uuid", "mem_used_bytes", "rss_bytes", "xid")
EVENT_ROWS = pl.col("pid").is_not_null() | (pl.col("kind") == "xid")


def incident_signals(incidents: pl.DataFrame, anchors: pl.DataFrame, linked: pl.DataFrame, events: pl.DataFrame,
                     window: timedelta, cgroups: pl.DataFrame | None = None, snapshots: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row of signals per incident.

    ``incidents``: incident_id, host, start, end, pid, gpu_index, gpu_uuid. ``anchors``:
    the anchor events with incident_id, root_host, priority and message. ``linked``: the
    linked events (event columns plus incident_id and role). ``events``: all (aligned)
    events, read only through filters on rare kinds (Xids, RSS reports, pids); :data:`EVENT_ROWS`
    of :data:`EVENT_COLUMNS` are enough. ``cgroups``:
    the cgroup folder readings of the events (``rca.sources.cgroup.merge_readings``), if any;
    ``snapshots``: their ``memory_snapshot`` events, if any.
    """
    base = incidents.select("incident_id")
    frames = [
        _gpu_memory(incidents, linked, window),
        _cuda_oom(anchors),
        _sharing(incidents, linked, events, window),
        _host_oom(incidents, anchors, linked, events, window),
        _cgroup_peak(anchors, linked, cgroups if cgroups is not None else schema.empty(CGROUP_READING_SCHEMA)),
        _snapshot_growth(incidents, snapshots if snapshots is not None else schema.empty(schema.EVENT_SCHEMA)),
        _xid_history(incidents, events),
        _evidence_attrs(anchors, linked),
    ]
    for frame in frames:
        base = base.join(frame, on="incident_id", how="left")
    # Without a limit in the kernel's report, the one the cgroup files show.
    limit = pl.coalesce("cgroup_limit_bytes", "reading_limit_bytes")
    return base.with_columns(
        cgroup_limit_bytes=limit,
        rss_over_limit=pl.coalesce("rss_over_limit", pl.when(limit > 0).then(pl.col("killed_rss_bytes") / limit)),
    ).drop("reading_limit_bytes")


# --- GPU memory and utilization ---------------------------------------------------------


def gpu_series(incidents: pl.DataFrame, linked: pl.DataFrame, window: timedelta, kind: str) -> pl.DataFrame:
    """Evidence rows of ``kind`` on each incident's own GPU and root host, from ``window`` before the anchor up to it."""
    on_gpu = (pl.col("gpu_index") == pl.col("inc_gpu_index")).fill_null(False) | (pl.col("gpu_uuid") == pl.col("inc_gpu_uuid")).fill_null(False)
    owners = incidents.select("incident_id", "start", root=pl.col("host"), inc_gpu_index=pl.col("gpu_index"), inc_gpu_uuid=pl.col("gpu_uuid"))
    return (
        linked.filter((pl.col("kind") == kind) & (pl.col("role") == "evidence"))
        .select("incident_id", "event_id", "host", "ts", "source", "gpu_index", "gpu_uuid", "pid", "process", "pod", "mem_used_bytes",
                "mem_total_bytes", "gpu_util_pct")
        .join(owners, on="incident_id")
        .filter(on_gpu & (pl.col("host") == pl.col("root")) & pl.col("ts").is_between(pl.col("start") - window, pl.col("start")))
        .sort("incident_id", "ts")
    )


def _gpu_memory(incidents: pl.DataFrame, linked: pl.DataFrame, window: timedelta) -> pl.DataFrame:
    samples = _one_tool(gpu_series(incidents, linked, window, "gpu_sample")).with_columns(t=pl.col("ts").dt.epoch("us") / 1e6)
    # A failure's time can trail the crash by seconds (the kill is logged after the process died): samples that
    # show the memory already given back, at the very end, describe the aftermath, not the build-up.
    released = pl.col("mem_used_bytes") < 0.5 * pl.col("mem_used_bytes").cum_max()
    aftermath = released.cast(pl.Int8).reverse().cum_min().reverse().over("incident_id") == 1
    used = samples.filter(pl.col("mem_used_bytes").is_not_null()).filter(~(aftermath & (pl.col("ts") >= pl.col("start") - _AFTERMATH)))
    rate = (pl.col("mem_used_bytes").diff() / pl.col("t").diff()).over("incident_id")
    dt = pl.col("t").diff().over("incident_id")
    growing = used.with_columns(fast=(rate > GROWTH_ALERT_BYTES_PER_S).fill_null(False), dt=dt)
    runs = (
        growing.with_columns(run=(pl.col("fast") != pl.col("fast").shift(1)).fill_null(True).cum_sum().over("incident_id"))
        .filter("fast")
        .group_by("incident_id", "run")
        .agg(pl.col("dt").sum())
        .group_by("incident_id")
        .agg(sustained=pl.col("dt").max())
    )
    figures = used.group_by("incident_id").agg(
        gpu_mem_peak_pct=(pl.col("mem_used_bytes") / pl.col("mem_total_bytes")).max() * 100,
        gpu_mem_headroom_bytes=(pl.col("mem_total_bytes") - pl.col("mem_used_bytes")).last(),
        gpu_mem_growth_bytes_per_s=pl.when(pl.len() >= 2).then(pl.cov("t", "mem_used_bytes") / pl.col("t").var()),
        t=pl.col("t"),
        used=pl.col("mem_used_bytes"),
        total=pl.col("mem_total_bytes").max(),
    )
    shapes = figures.with_columns(
        gpu_mem_growth_shape=pl.struct("t", "used", "total").map_elements(
            lambda row: growth_shape(np.array(row["t"]), np.array(row["used"], dtype=float), row["total"]), return_dtype=pl.String
        )
    )
    util = samples.filter(pl.col("gpu_util_pct").is_not_null()).group_by("incident_id").agg(t=pl.col("t"), util=pl.col("gpu_util_pct"))
    periods = util.select(
        "incident_id",
        gpu_util_period_s=pl.struct("t", "util").map_elements(
            lambda row: oscillation_period(np.array(row["t"]), np.array(row["util"], dtype=float)), return_dtype=pl.Float64
        ),
    )
    return (
        shapes.drop("t", "used", "total")
        .join(runs, on="incident_id", how="left")
        .with_columns(gpu_mem_growth_sustained_s=pl.when(pl.col("gpu_mem_growth_bytes_per_s").is_not_null()).then(pl.col("sustained").fill_null(0.0)))
        .drop("sustained")
        .join(periods, on="incident_id", how="full", coalesce=True)
    )


def _one_tool(samples: pl.DataFrame) -> pl.DataFrame:
    """nvidia-smi's samples of an incident's GPU where it has any, else DCGM's; one reading per moment.

    Two tools' readings of one GPU interleaved would read as noise, and DCGM repeats the
    device's figures in the series of every pod on it.
    """
    rank = pl.when(pl.col("source") == "nvidia_smi").then(0).otherwise(1)
    return (
        samples.with_columns(_rank=rank)
        .filter(pl.col("_rank") == pl.col("_rank").min().over("incident_id"))
        .unique(["incident_id", "ts"], keep="first", maintain_order=True)
        .drop("_rank")
    )


def growth_shape(t: np.ndarray, used: np.ndarray, total: float | None) -> str | None:
    """flat, steady_leak, single_step, sawtooth or irregular: the shape of a memory curve before a failure.

    The curve is first smoothed with a 3-sample running median, so one noisy sample is no step.

    - flat: it rose by less than 2 % of the GPU (or less than 256 MiB).
    - sawtooth: it dropped by a third of its range at least twice, giving back half of what it gained.
    - single_step: one interval holds at least half of the whole rise and little was given back.
    - steady_leak: it climbed in small steps or a ramp (none over half of the rise), giving back little.
    """
    if len(used) < 3:
        return None
    order = np.argsort(t, kind="stable")
    used = _median3(used[order])
    rise = float(used.max() - used.min())
    scale = float(total) if total else float(used.max())
    if rise < max(_FLAT_SHARE * scale, _FLAT_BYTES):
        return "flat"
    steps = np.diff(used)
    gained = float(steps[steps > 0].sum())
    given_back = float(-steps[steps < 0].sum())
    big_drops = int((steps < -rise / 3).sum())
    if big_drops >= 2 and given_back >= 0.5 * gained:
        return "sawtooth"
    if given_back <= _GIVEN_BACK * gained and steps.max() >= 0.5 * rise:
        return "single_step"
    if given_back <= _GIVEN_BACK * gained and used[-1] - used[0] >= 0.5 * rise:
        return "steady_leak"
    return "irregular"


def _median3(values: np.ndarray) -> np.ndarray:
    if len(values) < 5:
        return values
    inner = np.median(np.stack([values[:-2], values[1:-1], values[2:]]), axis=0)
    return np.concatenate([values[:1], inner, values[-1:]])


def oscillation_period(t: np.ndarray, values: np.ndarray) -> float | None:
    """Seconds per cycle of a periodic series (first strong autocorrelation peak), or None.

    The series is resampled onto an even grid at its median sampling interval; the peak
    must reach 0.3 and is refined by a parabola through it and its neighbours.
    """
    if len(values) < 8:
        return None
    order = np.argsort(t, kind="stable")
    t, values = t[order], values[order]
    step = float(np.median(np.diff(t)))
    if step <= 0:
        return None
    grid = np.arange(t[0], t[-1] + step / 2, step)
    series = np.interp(grid, t, values)
    series = series - series.mean()
    energy = float((series**2).sum())
    if len(series) < 8 or energy <= 1e-9 * len(series):
        return None
    n = len(series)
    acf = np.correlate(series, series, mode="full")[n - 1 :] / energy
    below = np.nonzero(acf < 0)[0]
    if not len(below):
        return None
    lags = np.arange(below[0], n // 2)
    peaks = [k for k in lags if 0 < k < n - 1 and acf[k] >= acf[k - 1] and acf[k] >= acf[k + 1] and acf[k] >= _MIN_PERIOD_PEAK]
    if not peaks:
        return None
    best = max(acf[k] for k in peaks)
    lag = next(k for k in peaks if acf[k] >= 0.8 * best)
    left, mid, right = acf[lag - 1], acf[lag], acf[lag + 1]
    curvature = left - 2 * mid + right
    shift = 0.5 * (left - right) / curvature if curvature < 0 else 0.0
    return float((lag + shift) * step)


# --- CUDA OOM ---------------------------------------------------------------------------


def _cuda_oom(anchors: pl.DataFrame) -> pl.DataFrame:
    first = anchors.filter(pl.col("kind") == "cuda_oom").sort("incident_id", "ts", "aid", nulls_last=True).unique("incident_id", keep="first")
    reserved = attr_int("reserved_unallocated_bytes")
    allocated = attr_int("allocated_bytes")
    requested = pl.coalesce(pl.col("mem_requested_bytes"), attr_int("requested_bytes"))
    free = attr_int("free_bytes")
    return first.select(
        "incident_id",
        reserved_unallocated_bytes=reserved,
        reserved_unallocated_frac=pl.when((reserved + allocated) > 0).then(reserved / (reserved + allocated)),
        requested_bytes=requested,
        free_bytes=free,
        requested_over_free=pl.when(free > 0).then(requested / free),
    )


# --- sharing ----------------------------------------------------------------------------


HOLDER_SCHEMA: dict[str, pl.DataType] = {
    "incident_id": pl.String(),
    "pid": pl.Int64(),
    "process": pl.String(),
    "mem_used_bytes": pl.Int64(),
    "ts": pl.Datetime("us", "UTC"),
    "event_id": pl.String(),  # the compute-apps row read
    "pod": pl.String(),
    "own": pl.Boolean(),
    "stale": pl.Boolean(),
}
"""The columns of :func:`gpu_holders`."""


def gpu_holders(incidents: pl.DataFrame, linked: pl.DataFrame, events: pl.DataFrame, window: timedelta) -> pl.DataFrame:
    """The processes holding memory on each incident's GPU: one row per (incident, pid), biggest first.

    A holder is a pid of the compute-apps rows (``gpu_process``) of the incident's GPU and root
    host in ``window`` before the anchor; its last row counts. ``pod`` is the pod another event of
    the host pairs the pid with. ``own`` marks the job itself: the incident's pid when it is on the
    GPU, else the biggest holder (a job may log from another process than the one holding the GPU,
    as vLLM's API server does). ``stale`` marks another process that no source but nvidia-smi
    mentions within ``window`` of the anchor: a context that holds memory and does no work.
    """
    rows = gpu_series(incidents, linked, window, "gpu_process").filter(pl.col("pid").is_not_null())
    if rows.height == 0:
        return pl.DataFrame(schema=HOLDER_SCHEMA)
    latest = rows.sort("ts").group_by("incident_id", "pid").agg(
        pl.col("process", "mem_used_bytes", "ts", "event_id").last(), root=pl.col("root").first(), start=pl.col("start").first()
    )
    pod_of = (
        events.filter(pl.col("pid").is_not_null() & pl.col("pod").is_not_null())
        .select("host", "pid", "pod")
        .sort("host", "pid", "pod")
        .unique(["host", "pid"], keep="first", maintain_order=True)
    )
    heard = events.filter((pl.col("source") != "nvidia_smi") & pl.col("pid").is_not_null() & pl.col("ts").is_not_null()).select(
        "host", "pid", heard_ts="ts"
    )
    talking = (
        latest.join(heard, left_on=["root", "pid"], right_on=["host", "pid"])
        .filter(pl.col("heard_ts").is_between(pl.col("start") - window, pl.col("start") + window))
        .select("incident_id", "pid")
        .unique()
        .with_columns(talks=pl.lit(True))
    )
    biggest = latest.sort("incident_id", "mem_used_bytes", "pid", descending=[False, True, False], nulls_last=True).unique(
        "incident_id", keep="first", maintain_order=True
    )
    present = latest.join(incidents.select("incident_id", "pid"), on=["incident_id", "pid"], how="semi")
    own = biggest.select("incident_id", big="pid").join(present.select("incident_id", present="pid"), on="incident_id", how="left")
    return (
        latest.join(own.select("incident_id", own_pid=pl.coalesce("present", "big")), on="incident_id", how="left")
        .join(pod_of, left_on=["root", "pid"], right_on=["host", "pid"], how="left")
        .join(talking, on=["incident_id", "pid"], how="left")
        .with_columns(own=pl.col("pid") == pl.col("own_pid"))
        .with_columns(stale=~pl.col("own") & pl.col("talks").is_null())
        .select([pl.col(name).cast(dtype) for name, dtype in HOLDER_SCHEMA.items()])
        .sort("incident_id", "mem_used_bytes", "pid", descending=[False, True, False], nulls_last=True)
    )


def _sharing(incidents: pl.DataFrame, linked: pl.DataFrame, events: pl.DataFrame, window: timedelta) -> pl.DataFrame:
    """Processes and pods on the incident's GPU (:func:`gpu_holders`, and the pods DCGM labels its samples with), stale memory."""
    holders = gpu_holders(incidents, linked, events, window)
    dcgm_pods = gpu_series(incidents, linked, window, "gpu_sample").filter(pl.col("source") == "dcgm").select("incident_id", "pod")
    pods = pl.concat([holders.select("incident_id", "pod"), dcgm_pods]).drop_nulls().group_by("incident_id").agg(
        gpu_pods=pl.col("pod").n_unique().cast(pl.Int32)
    )
    counts = holders.group_by("incident_id").agg(
        gpu_processes=pl.len().cast(pl.Int32),
        stale_gpu_bytes=pl.col("mem_used_bytes").filter("stale").sum().cast(pl.Int64),
    )
    return counts.join(pods, on="incident_id", how="full", coalesce=True)


# --- host OOM ---------------------------------------------------------------------------


def _host_oom(incidents: pl.DataFrame, anchors: pl.DataFrame, linked: pl.DataFrame, events: pl.DataFrame, window: timedelta) -> pl.DataFrame:
    """RSS of the killed process against its cgroup limit, the constraint, and whether the victim grew."""
    kills = anchors.filter(pl.col("kind") == "oom_kill").sort("incident_id", "ts", "aid", nulls_last=True).unique("incident_id", keep="first")
    kernel = linked.filter((pl.col("role") != "context") & (pl.col("source") == "kernel"))
    # The kernel parser puts the memcg's "memory: usage …, limit …" in mem_used/mem_total of the OOM block's events.
    limit = pl.coalesce([*[attr_int(k) for k in _LIMIT_KEYS], pl.col("mem_total_bytes")])
    facts = kernel.group_by("incident_id").agg(
        limit=limit.drop_nulls().first(), constraint=_summary_constraint().drop_nulls().first()
    )
    victims = kills.select(
        "incident_id",
        killed_rss_bytes=pl.col("rss_bytes"),
        kill_limit=limit,
        kill_constraint=kill_constraint(),
    )
    merged = victims.join(facts, on="incident_id", how="full", coalesce=True).with_columns(
        cgroup_limit_bytes=pl.coalesce("kill_limit", "limit"),
        oom_constraint=pl.coalesce("kill_constraint", "constraint"),
    )
    return merged.join(_grower(incidents, anchors, linked, events, window), on="incident_id", how="full", coalesce=True).select(
        "incident_id",
        "killed_rss_bytes",
        "cgroup_limit_bytes",
        rss_over_limit=pl.when(pl.col("cgroup_limit_bytes") > 0).then(pl.col("killed_rss_bytes") / pl.col("cgroup_limit_bytes")),
        oom_constraint="oom_constraint",
        victim_was_grower="victim_was_grower",
    )


def _summary_constraint() -> pl.Expr:
    return attr("constraint").str.to_lowercase().str.strip_prefix("constraint_").replace(_CONSTRAINTS)


def kill_constraint() -> pl.Expr:
    """memcg / system / cpuset / mempolicy of a kernel kill line (or kubelet's SystemOOM): its ``oom-kill:`` summary, else its wording."""
    from_message = (
        pl.when(pl.col("message").str.contains("(?i)memory cgroup out of memory")).then(pl.lit("memcg"))
        .when(pl.col("message").str.contains("(?i)out of memory")).then(pl.lit("system"))
        # kubelet's SystemOOM event: its OOM watcher saw the kernel kill in the root cgroup, the node's own OOM killer.
        .when(pl.col("message").str.contains("(?i)system oom encountered")).then(pl.lit("system"))
    )
    return pl.coalesce(_summary_constraint(), from_message)


def _grower(incidents: pl.DataFrame, anchors: pl.DataFrame, linked: pl.DataFrame, events: pl.DataFrame, window: timedelta) -> pl.DataFrame:
    """Whether the victim (the root anchor's pid) is the process whose memory rose most on the host over the window.

    Memory is the RSS any source reports per pid, and the GPU memory of compute-apps rows on the incident's GPU.
    """
    on_gpu = (pl.col("gpu_index") == pl.col("inc_gpu_index")).fill_null(False) | (pl.col("gpu_uuid") == pl.col("inc_gpu_uuid")).fill_null(False)
    memory = pl.when(pl.col("kind") == "gpu_process").then(pl.when(on_gpu).then(pl.col("mem_used_bytes"))).otherwise(pl.col("rss_bytes"))
    owners = incidents.filter(pl.col("start").is_not_null()).select(
        "incident_id", "host", "start", inc_gpu_index=pl.col("gpu_index"), inc_gpu_uuid=pl.col("gpu_uuid")
    )
    columns = ["host", "ts", "pid", "kind", "gpu_index", "gpu_uuid", "mem_used_bytes", "rss_bytes"]
    rss = events.filter(pl.col("rss_bytes").is_not_null() & pl.col("pid").is_not_null() & pl.col("ts").is_not_null()).select(columns).join(owners, on="host")
    on_device = linked.filter((pl.col("kind") == "gpu_process") & pl.col("pid").is_not_null()).select("incident_id", *columns).join(
        owners, on=["incident_id", "host"]
    )
    series = (
        pl.concat([rss, on_device.select(rss.columns)])
        .filter(pl.col("ts").is_between(pl.col("start") - window, pl.col("start") + _KILL_SLACK))
        .with_columns(memory=memory)
        .filter(pl.col("memory").is_not_null())
    )
    growth = (
        series.sort("ts")
        .group_by("incident_id", "pid")
        .agg(rise=pl.col("memory").last() - pl.col("memory").first(), samples=pl.len())
        .filter(pl.col("samples") >= 2)
    )
    grower = growth.filter(pl.col("rise") > 0).sort("incident_id", "rise", "pid", descending=[False, True, False]).unique("incident_id", keep="first")
    victim = anchors.filter(pl.col("host") == pl.col("root_host")).sort("incident_id", "priority", "ts", nulls_last=True).group_by(
        "incident_id", maintain_order=True
    ).agg(victim=pl.col("pid").drop_nulls().first())
    return victim.join(grower.select("incident_id", grower="pid"), on="incident_id").select(
        "incident_id", victim_was_grower=pl.col("victim") == pl.col("grower")
    )


# --- cgroup files -------------------------------------------------------------------------


def incident_cgroups(people: pl.DataFrame, readings: pl.DataFrame) -> pl.DataFrame:
    """The cgroup folder readings of each incident, the best account of its failure first.

    ``people``: (incident_id, host, container_id, pod_uid, cgroup) of the incident's anchors and
    evidence; ``readings``: ``rca.sources.cgroup.CGROUP_READING_SCHEMA`` rows. A reading belongs to
    an incident when it is the folder of one of its containers, of its pod (the pod's own folder
    and its containers'), or the cgroup the kernel named. Readings that counted an OOM come
    first (the folder whose limit was hit), then the container's own, the pod's, a sibling
    container's, then by peak over limit. Columns: incident_id, then the reading's.
    """
    columns = ["incident_id", *CGROUP_READING_SCHEMA]
    matched = []
    for key, rank in (("container_id", 0), ("cgroup", 0), ("pod_uid", 1)):
        keys = people.select("incident_id", "host", key).drop_nulls().unique()
        matched.append(keys.join(readings, on=["host", key]).select(columns).with_columns(_rank=pl.lit(rank)))
    found = pl.concat(matched)
    if found.is_empty():
        return found.select(columns)
    sibling = (pl.col("_rank") == 1) & pl.col("container_id").is_not_null()
    peak = pl.coalesce("peak_bytes", "mem_used_bytes")
    return (
        found.with_columns(
            _rank=pl.when(sibling).then(2).otherwise(pl.col("_rank")),
            _counted=(pl.col("oom_kill").fill_null(0) > 0) | (pl.col("oom").fill_null(0) > 0) | pl.col("under_oom").fill_null(False),
            _ratio=pl.when(pl.col("mem_total_bytes") > 0).then(peak / pl.col("mem_total_bytes")),
        )
        .sort("incident_id", "_counted", "_rank", "_ratio", "folder", descending=[False, True, False, True, False], nulls_last=True)
        .unique(["incident_id", "host", "cgroup", "folder"], keep="first", maintain_order=True)
        .select(columns)
    )


def _cgroup_peak(anchors: pl.DataFrame, linked: pl.DataFrame, readings: pl.DataFrame) -> pl.DataFrame:
    """Peak against limit and OOM kills of the incident's cgroup (:func:`incident_cgroups`' first reading)."""
    identity = ["incident_id", "host", "container_id", "pod_uid"]
    people = pl.concat([
        anchors.select(*identity, cgroup=attr("oom_memcg")),
        linked.filter(pl.col("role") != "context").select(*identity, cgroup=attr("oom_memcg")),
    ])
    best = incident_cgroups(people, readings).unique("incident_id", keep="first", maintain_order=True)
    peak = pl.coalesce("peak_bytes", "mem_used_bytes")
    return best.select(
        "incident_id",
        cgroup_peak_bytes=peak,
        cgroup_peak_over_limit=pl.when(pl.col("mem_total_bytes") > 0).then(peak / pl.col("mem_total_bytes")),
        cgroup_oom_kills=pl.col("oom_kill").cast(pl.Int32),
        reading_limit_bytes=pl.col("mem_total_bytes"),
    )


# --- PyTorch memory snapshots -----------------------------------------------------------------

SNAPSHOT_LOOKBACK = timedelta(hours=6)  # a leak is caught by a snapshot taken well before the OOM
SNAPSHOT_AFTER = timedelta(minutes=30)  # the snapshot an OOM handler dumps lands just after the failure
_SITES = pl.List(pl.Struct({"frame": pl.String(), "bytes": pl.Int64(), "count": pl.Int64()}))
SITE_GROWTH_SCHEMA: dict[str, pl.DataType] = {
    "incident_id": pl.String(),
    "frame": pl.String(),  # the allocation site
    "bytes_before": pl.Int64(),
    "bytes_after": pl.Int64(),
    "bytes_growth": pl.Int64(),
    "count_before": pl.Int64(),  # live blocks
    "count_after": pl.Int64(),
}
"""The columns of :func:`site_growth`."""


def incident_snapshots(incidents: pl.DataFrame, snapshots: pl.DataFrame) -> pl.DataFrame:
    """Each incident's ``memory_snapshot`` events, in time order: incident_id, then the events' columns.

    A snapshot belongs to an incident of its host taken from :data:`SNAPSHOT_LOOKBACK` before
    its start to :data:`SNAPSHOT_AFTER` past its end, whose pod and pid agree with the
    snapshot's wherever both name one (a snapshot's pod comes from the pod folder it was
    copied into). Its gpu_index is the device index inside the process, not the host's GPU,
    so it only keeps one process's series apart from another's: the series of the latest
    snapshot that recorded an OOM, else of the latest one.
    """
    spans = incidents.filter(pl.col("start").is_not_null()).select(
        "incident_id", "host", _lo=pl.col("start") - SNAPSHOT_LOOKBACK, _hi=pl.coalesce("end", "start") + SNAPSHOT_AFTER,
        _pod=pl.col("pod"), _pid=pl.col("pid"),
    )
    agrees = [(pl.col(column) == pl.col(other)).fill_null(True) for column, other in (("pod", "_pod"), ("pid", "_pid"))]
    matched = (
        snapshots.filter(pl.col("kind") == "memory_snapshot")
        .join(spans, on="host")
        .filter(pl.col("ts").is_between(pl.col("_lo"), pl.col("_hi")), *agrees)
        .select("incident_id", *snapshots.columns)
        .sort("incident_id", "ts", "event_id")
    )
    failed = (attr_int("oom_events").fill_null(0) > 0).cast(pl.Int8)
    device = pl.col("gpu_index").sort_by(failed, pl.col("ts")).last().over("incident_id")
    return matched.filter(pl.col("gpu_index").eq_missing(device))


def site_growth(snapshots: pl.DataFrame) -> pl.DataFrame:
    """The allocation sites that grew between each incident's first and last snapshot, most growth first (``SITE_GROWTH_SCHEMA``).

    ``snapshots``: :func:`incident_snapshots` rows; the sites are their ``attrs.top_sites``.
    """
    ends = snapshots.sort("incident_id", "ts", "event_id").group_by("incident_id", maintain_order=True).agg(
        before=pl.col("attrs").first(), after=pl.col("attrs").last(), n=pl.len()
    ).filter(pl.col("n") >= 2)

    def sites(column: str) -> pl.DataFrame:
        decoded = pl.col(column).str.json_decode(pl.Struct({"top_sites": _SITES})).struct.field("top_sites")
        return ends.select("incident_id", site=decoded).explode("site").drop_nulls("site").unnest("site")

    joined = sites("before").join(sites("after"), on=["incident_id", "frame"], how="full", coalesce=True, suffix="_after")
    grown = joined.with_columns(pl.col("bytes", "bytes_after", "count", "count_after").fill_null(0)).select(
        "incident_id", "frame", bytes_before="bytes", bytes_after="bytes_after", bytes_growth=pl.col("bytes_after") - pl.col("bytes"),
        count_before="count", count_after="count_after",
    )
    ordered = grown.filter(pl.col("bytes_growth") > 0).sort("incident_id", "bytes_growth", "frame", descending=[False, True, False])
    return schema.conform(ordered, SITE_GROWTH_SCHEMA)


def _snapshot_growth(incidents: pl.DataFrame, snapshots: pl.DataFrame) -> pl.DataFrame:
    """The allocation site that grew most between the incident's first and last snapshot, and by how much."""
    grown = site_growth(incident_snapshots(incidents, snapshots)).unique("incident_id", keep="first", maintain_order=True)
    return grown.select("incident_id", snapshot_growth_site="frame", snapshot_growth_bytes="bytes_growth")


# --- history and runtime markers ---------------------------------------------------------


def _xid_history(incidents: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    xids = events.filter((pl.col("kind") == "xid") & pl.col("xid").is_not_null() & pl.col("ts").is_not_null()).select("host", "ts", "xid")
    return (
        incidents.filter(pl.col("start").is_not_null())
        .select("incident_id", "host", "start", "end")
        .join(xids, on="host")
        .filter(pl.col("ts").is_between(pl.col("start") - XID_LOOKBACK, pl.col("end")))
        .group_by("incident_id")
        .agg(xid_codes=pl.col("xid").unique().sort())
    )


def _evidence_attrs(anchors: pl.DataFrame, linked: pl.DataFrame) -> pl.DataFrame:
    """Restart count and runtime OOM markers, wherever in the anchors and evidence they appear."""
    with_attrs = linked.filter((pl.col("role") == "evidence") & pl.col("attrs").is_not_null()).select("incident_id", "kind", "attrs", order=pl.lit(1))
    rows = pl.concat([anchors.select("incident_id", "kind", "attrs", order=pl.lit(0)), with_attrs]).filter(pl.col("attrs").is_not_null())
    return rows.sort("order").group_by("incident_id").agg(
        restart_count=pl.max_horizontal(attr_int("restart_count"), attr_int("restarts")).max().cast(pl.Int32),
        # Only a runtime's own log line names its OOM; a cgroup reading's "oom" is a count.
        runtime_oom=attr("oom").filter(pl.col("kind").is_in(["log", "traceback"])).drop_nulls().first(),
    )
