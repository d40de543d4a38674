"""The three stages of :func:`rca.explain.explain`, each from one incident's evidence to a :class:`Stage`.

Every stage reads the incident's linked events (``Walk.linked``: event columns, role, the
clock-aligned time) and, for what correlation does not link (cgroup files and snapshots are
often copied long after the failure, kubectl describe blocks carry no time), the events of the
incident's root host (``Walk.host_events``), always through filters on rare kinds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import polars as pl

from rca import signals
from rca._identity import layout_identity
from rca.correlate import prepared
from rca.signals import attr, attr_int
from rca.messages import headline
from rca.sources._kube import QUANTITY, quantity_bytes
from rca.sources.cgroup import merge_readings

GIB = 1024**3
LIMIT_HIT_SHARE = 0.98  # a peak this close to the limit is the limit reached (reclaim keeps usage just under it)
OTHERS_SHARE_OF_GPU = 0.10  # without a failed request to compare with, others holding this much of the GPU decide
SITE_GROWTH_BYTES = 256 * 1024**2  # an allocation site that grew this much between two snapshots leaks
FRAGMENTED_SHARE = 0.25  # reserved-but-unallocated share of the cache that is fragmentation in itself
FRAGMENTED_SHARE_WITH_ROOM = 0.08  # ... or this share, when the cache held more free bytes than the failed request
LIVE_TENSORS_SHARE = 0.85  # the allocator holding this much of the GPU means its own tensors filled it
_TEXT_CHARS = 200
_OOM_PROCESS = r"Process ([0-9]+) has ([0-9.]+ [KMGT]?i?B) memory in use"
_OWN_PROCESS = r"this process has ([0-9.]+ [KMGT]?i?B) memory in use"
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


@dataclass(frozen=True)
class Evidence:
    """One line behind a verdict: where it was logged and what it says."""

    file: str | None
    line: int | None
    source: str | None
    kind: str | None
    text: str

    @property
    def location(self) -> str:
        """``file:line`` (``?`` for what is unknown)."""
        return f"{self.file or '?'}:{self.line if self.line is not None else '?'}"


@dataclass(frozen=True)
class Stage:
    """One stage of the walk: its question, verdict, the figures behind it and the evidence lines.

    ``explains`` is whether this verdict accounts for the failure; ``missing`` says what data
    would have answered the question when there was none (verdict ``no_data``).
    """

    name: str
    question: str
    verdict: str
    explains: bool
    summary: str
    figures: dict[str, Any] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    missing: str | None = None


@dataclass(frozen=True)
class Walk:
    """What the stages read about one incident."""

    incident: dict[str, Any]  # its row of incidents.parquet
    frame: pl.DataFrame  # the same row as a frame
    linked: pl.DataFrame  # its linked events: every event column, role, and ts after clock alignment
    host_events: pl.LazyFrame  # every event of its root host, as stored
    window: timedelta

    @property
    def subject(self) -> str:
        row = self.incident
        if row["pod"]:
            return "pod " + "/".join(part for part in (row["namespace"], row["pod"]) if part)
        return f"pid {row['pid']}" if row["pid"] is not None else f"the failing process on {host_name(row['host'])}"

    def kinds(self, *kinds: str) -> pl.DataFrame:
        """Its anchor and evidence events of these kinds, in time order."""
        return self.linked.filter(pl.col("kind").is_in(kinds) & (pl.col("role") != "context")).sort("ts", "event_id", nulls_last=True)


def host_name(host: str | None) -> str:
    """A host as a sentence names it: a log copied alone may name none."""
    return host if host is not None else "an unknown host"


def size(value: float | None) -> str:
    """Bytes in binary units: ``1.5 GiB``, ``512.0 MiB``; ``?`` when unknown."""
    if value is None:
        return "?"
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(value) >= factor:
            return f"{value / factor:.1f} {unit}"
    return f"{int(value)} B"


def evidence(frame: pl.DataFrame, text: pl.Expr | None = None) -> tuple[Evidence, ...]:
    """Evidence lines of events (file, line, source, kind, message): the message's headline unless ``text`` says otherwise.

    The headline (:func:`rca.timeline.headline`) is a traceback's exception, a ``kubectl describe`` excerpt's
    ``Message:``, else the block's first line (never an OOM report's last stack frame or process-table header).
    """
    if frame.is_empty():
        return ()
    chosen = text if text is not None else headline("message")
    shown = frame.select("file", "line", "source", "kind", text=chosen.str.slice(0, _TEXT_CHARS))
    return tuple(Evidence(**row) for row in shown.unique(maintain_order=True).iter_rows(named=True))


def _ratio(part: float | None, whole: float | None) -> float | None:
    return part / whole if part is not None and whole else None


# --- stage 1: the cgroup -----------------------------------------------------------------


CGROUP_QUESTION = "Did the container or pod hit its cgroup memory limit?"


def cgroup_stage(walk: Walk) -> Stage:
    """Peak against limit from the pod's cgroup files, else the kernel's and kubelet's account of the kill."""
    resources = _pod_resources(walk)
    readings = _cgroup_readings(walk)
    # Kubernetes' account of the kernel's kill (kubelet's SystemOOM event, node-problem-detector's quote of the kill
    # line) stands in for the kernel log when it tells which OOM killer struck.
    kills = walk.kinds("oom_kill").filter((pl.col("source") == "kernel") | signals.kill_constraint().is_not_null())
    if readings.height:
        stage = _from_readings(walk, readings, kills)
    elif kills.height:
        stage = _from_kernel(kills)
    elif walk.kinds("container_oomkilled").height:
        stage = _from_kubelet(walk.kinds("container_oomkilled"))
    elif walk.kinds("eviction").height:
        stage = _from_eviction(walk.kinds("eviction"))
    else:
        return Stage(
            "cgroup", CGROUP_QUESTION, "no_data", False,
            f"no cgroup files and no OOM-killer or kubelet kill lines for {walk.subject}",
            figures=resources[0], evidence=resources[1],
            missing=(f"no cgroup files for {walk.subject}: collect memory.peak, memory.max, memory.events and memory.stat (cgroup v2; "
                     "v1: memory.max_usage_in_bytes, memory.limit_in_bytes, memory.failcnt, memory.oom_control) of its container's "
                     "cgroup next time, with the node's dmesg for the OOM killer's report"),
        )
    return Stage(stage.name, stage.question, stage.verdict, stage.explains, stage.summary, {**stage.figures, **resources[0]},
                 stage.evidence + resources[1])


def _cgroup_readings(walk: Walk) -> pl.DataFrame:
    """The incident's cgroup folders (one row per folder reading), the best account of its failure first."""
    people = walk.linked.filter(pl.col("role") != "context").select(
        "incident_id", "host", "container_id", "pod_uid", cgroup=pl.coalesce("cgroup", attr("oom_memcg"))
    )
    # A node's whole cgroup tree may be in the store: read only the folders of this incident's pod, container or memcg.
    mine = pl.any_horizontal([pl.col(key).is_in(people[key].drop_nulls().unique().implode()) for key in ("pod_uid", "container_id", "cgroup")])
    files = walk.host_events.filter((pl.col("source") == "cgroup") & (pl.col("kind") == "cgroup_memory") & mine).collect()
    return signals.incident_cgroups(people, merge_readings(files))


def _from_readings(walk: Walk, readings: pl.DataFrame, kills: pl.DataFrame) -> Stage:
    """The verdict of the incident's best cgroup reading.

    The limit was hit when the cgroup counted an OOM at its limit (v2 memory.events ``oom``, v1
    ``under_oom``) or peaked at 98 % of it. Its ``oom_kill`` count alone does not say so: the kernel
    counts a process killed by any OOM killer, the node's global one included.
    """
    best = readings.row(0, named=True)
    peak = best["peak_bytes"] if best["peak_bytes"] is not None else best["mem_used_bytes"]
    limit = best["mem_total_bytes"]
    ratio = _ratio(peak, limit)
    figures = {
        "cgroup": best["cgroup"], "cgroup_version": best["cgroup_version"], "peak_bytes": peak, "limit_bytes": limit,
        "peak_over_limit": ratio, "oom_events": best["oom"], "oom_kills": best["oom_kill"], "failcnt": best["failcnt"],
        "cgroup_folders": readings.height,
    }
    lines = evidence(walk.host_events.filter(pl.col("event_id").is_in(best["event_ids"])).sort("file").collect()) + evidence(kills)
    where = f"{best['cgroup']} peaked at {size(peak)}" + (f", {ratio:.0%} of its {size(limit)} limit" if ratio is not None else "")
    counter = "memory.events" if best["cgroup_version"] == 2 else "memory.oom_control"
    killed = f"; {counter} counts {best['oom_kill']} OOM kill(s)" if best["oom_kill"] else ""
    if kills.filter(signals.kill_constraint() == "system").height:
        return Stage("cgroup", CGROUP_QUESTION, "node_exhausted", True,
                     f"no, the node ran out: the kernel's global OOM killer struck; {where}{killed}", {**figures, "constraint": "system"}, lines)
    if (best["oom"] or 0) > 0 or best["under_oom"] or (ratio is not None and ratio >= LIMIT_HIT_SHARE):
        return Stage("cgroup", CGROUP_QUESTION, "limit_hit", True, f"yes: {where}{killed}", figures, lines)
    if best["oom_kill"]:
        return Stage("cgroup", CGROUP_QUESTION, "below_limit", False,
                     f"no: {where}; an OOM killer above this cgroup (its parent's limit, or the node's) killed {best['oom_kill']} of its "
                     "processes", figures, lines)
    if limit is None:
        return Stage("cgroup", CGROUP_QUESTION, "unlimited", False, f"no limit: {where} and its limit is unlimited", figures, lines)
    return Stage("cgroup", CGROUP_QUESTION, "below_limit", False, f"no: {where}, and it counted no OOM", figures, lines)


def _from_kernel(kills: pl.DataFrame) -> Stage:
    first = kills.with_columns(constraint=signals.kill_constraint()).sort("role", "ts", nulls_last=True).row(0, named=True)  # "anchor" < "evidence"
    info = json.loads(first["attrs"]) if first["attrs"] else {}
    limit, usage = first["mem_total_bytes"], first["mem_used_bytes"]
    anon = info["anon_rss_kb"] * 1024 if isinstance(info.get("anon_rss_kb"), int) else first["rss_bytes"]
    victim = f"pid {first['pid']} ({first['process']})" if first["pid"] is not None else "a process"
    figures = {
        "constraint": first["constraint"], "cgroup": info.get("oom_memcg") or first["cgroup"], "usage_bytes": usage, "limit_bytes": limit,
        "anon_rss_bytes": anon, "anon_rss_over_limit": _ratio(anon, limit), "failcnt": info.get("memcg_failcnt"), "oom_kills": kills.height,
    }
    lines = evidence(kills)
    if first["constraint"] == "memcg":
        at = f": its cgroup {figures['cgroup']} was at {size(usage)} of its {size(limit)} limit" if limit else ""
        rss = f", anon-rss {size(anon)} ({figures['anon_rss_over_limit']:.0%} of the limit)" if figures["anon_rss_over_limit"] else ""
        return Stage("cgroup", CGROUP_QUESTION, "limit_hit", True, f"yes: the memory-cgroup OOM killer killed {victim}{at}{rss}", figures, lines)
    rss = f" (anon-rss {size(anon)})" if anon is not None else ""
    told = "" if first["source"] == "kernel" else f", as {first['source']} reports it"
    return Stage("cgroup", CGROUP_QUESTION, "node_exhausted", True,
                 f"no, the node ran out: the kernel's {first['constraint'] or 'global'} OOM killer killed {victim}{rss}{told}, not a cgroup limit",
                 figures, lines)


def _from_kubelet(killed: pl.DataFrame) -> Stage:
    first = killed.row(0, named=True)
    container = first["container"] or "the container"
    figures = {"oom_kills": killed.height, "exit_code": first["exit_code"]}
    return Stage("cgroup", CGROUP_QUESTION, "limit_hit", True,
                 f"yes: Kubernetes reports {container} OOMKilled ({_exit_told(first['exit_code'])}): the kernel killed it at its cgroup "
                 "limit (no kernel log or cgroup files to show the figures)", figures, evidence(killed))


def _exit_told(exit_code: int | None) -> str:
    if exit_code is None:
        return "no exit code given"
    # The OOM killer took one of the container's processes, not its main one, which then exited on its own.
    return "exit 0: a process in it was killed, its main process then exited cleanly" if exit_code == 0 else f"exit {exit_code}"


def _from_eviction(evictions: pl.DataFrame) -> Stage:
    """The kubelet's eviction: the one line that gives the node's and the container's figures, else the first."""
    told = evictions.with_columns(_figures=pl.col("mem_used_bytes").is_not_null() | attr("available_bytes").is_not_null())
    first = told.sort("_figures", descending=True, maintain_order=True).row(0, named=True)
    info = json.loads(first["attrs"]) if first["attrs"] else {}
    figures = {
        "available_bytes": info.get("available_bytes"), "threshold_bytes": info.get("threshold_bytes"),
        "container_usage_bytes": first["mem_used_bytes"], "container_request_bytes": first["mem_requested_bytes"],
    }
    node = f" (available {size(info['available_bytes'])}, threshold {size(info.get('threshold_bytes'))})" if info.get("available_bytes") else ""
    usage = (f"; the container used {size(first['mem_used_bytes'])} against a request of {size(first['mem_requested_bytes'])}"
             if first["mem_used_bytes"] else "")
    return Stage("cgroup", CGROUP_QUESTION, "node_exhausted", True,
                 f"no, the node ran out: the kubelet evicted the pod for memory pressure{node}{usage}", figures, evidence(evictions))


_RESOURCE = r"(?is){}:[ \t]*\n(?:[ \t]+[0-9A-Za-z_./-]+:[^\n]*\n)*?[ \t]+memory:[ \t]*\"?({})"


def _pod_resources(walk: Walk) -> tuple[dict[str, Any], tuple[Evidence, ...]]:
    """The pod spec's memory limit and request of the container, from kubectl describe / get -o yaml output of its host."""
    row = walk.incident
    if not row["pod"]:
        return {}, ()
    same = (pl.col("pod") == row["pod"]) & (pl.col("namespace") == row["namespace"]).fill_null(True)
    if row["container"]:
        same &= (pl.col("container") == row["container"]).fill_null(True)
    blocks = (
        walk.host_events.filter((pl.col("source") == "k8s") & same & pl.col("message").str.contains("(?i)limits:"))
        .with_columns(
            limit=quantity_bytes(pl.col("message").str.extract(_RESOURCE.format("limits", QUANTITY), 1)),
            request=quantity_bytes(pl.col("message").str.extract(_RESOURCE.format("requests", QUANTITY), 1)),
        )
        .filter(pl.col("limit").is_not_null() | pl.col("request").is_not_null())
        .sort("file", "line")
        .collect()
    )
    if blocks.is_empty():
        return {}, ()
    first = blocks.head(1)
    limit, request = first["limit"][0], first["request"][0]
    text = pl.format("pod spec: memory limit {}, request {}", pl.lit(size(limit) if limit else "none"), pl.lit(size(request) if request else "none"))
    return {"pod_memory_limit_bytes": limit, "pod_memory_request_bytes": request}, evidence(first, text)


# --- stage 2: the GPU's processes ----------------------------------------------------------


GPU_QUESTION = "Which processes held the GPU's memory at that moment?"


def gpu_stage(walk: Walk) -> Stage:
    """The holders of the incident's GPU (compute-apps rows, DCGM's pod labels, the processes a CUDA OOM lists)."""
    row = walk.incident
    if row["gpu_index"] is None and row["gpu_uuid"] is None:
        return Stage("gpu_processes", GPU_QUESTION, "no_data", False, "the incident names no GPU",
                     missing="no GPU named by the failure: a host-memory failure needs no GPU holders; for a GPU job, log the device "
                             "(CUDA_VISIBLE_DEVICES, torch.cuda.current_device()) with its errors")
    gpu = f"GPU {row['gpu_index'] if row['gpu_index'] is not None else row['gpu_uuid']} of {host_name(row['host'])}"
    need, total = _need(walk)
    holders = _holders(walk)
    pods = _dcgm_pods(walk)
    others_pods = sorted(set(pods["pod"].to_list()) - {row["pod"]})
    figures: dict[str, Any] = {"gpu": gpu, "need_bytes": need, "gpu_total_bytes": total, "dcgm_pods": pods["pod"].n_unique() if pods.height else None}
    lines = evidence(pods.unique("pod", keep="first", maintain_order=True), pl.format("DCGM sample of pod {}", "pod")) if pods.height else ()
    if holders.height:
        return _from_holders(gpu, holders, need, figures, lines, others_pods)
    listed = _listed_by_oom(walk)
    if listed is not None:
        return _from_oom_listing(gpu, listed, need, figures, lines)
    if others_pods:
        return Stage("gpu_processes", GPU_QUESTION, "shared", True,
                     f"shared: DCGM labels {gpu} with other pods too ({', '.join(others_pods)})", figures, lines)
    if pods.height:
        return Stage("gpu_processes", GPU_QUESTION, "sole_holder", False, f"only {', '.join(pods['pod'].unique().sort())} on {gpu} per DCGM",
                     figures, lines)
    return Stage("gpu_processes", GPU_QUESTION, "no_data", False, f"no process list of {gpu} around the incident", figures,
                 missing=(f"no nvidia-smi compute-apps rows or DCGM samples for {gpu} around the incident: log "
                          "`nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory --format=csv -l 10` on the node, "
                          "or scrape dcgm-exporter with its pod labels, next time"))


def _need(walk: Walk) -> tuple[int | None, int | None]:
    """The memory the failure needed (the failed request) and the GPU's capacity, where known."""
    row = walk.incident
    samples = walk.kinds("gpu_sample").filter(pl.col("mem_total_bytes").is_not_null())
    ooms = walk.kinds("cuda_oom").filter(pl.col("mem_total_bytes").is_not_null())
    total = samples["mem_total_bytes"].max() if samples.height else (ooms["mem_total_bytes"].max() if ooms.height else None)
    if row["requested_bytes"] is not None:
        return row["requested_bytes"], total
    return (int(OTHERS_SHARE_OF_GPU * total) if total else None), total


def _holders(walk: Walk) -> pl.DataFrame:
    """signals.gpu_holders for this incident, with each holder's compute-apps row."""
    pids = walk.kinds("gpu_process")["pid"].drop_nulls().unique()
    if pids.is_empty():
        return pl.DataFrame(schema=signals.HOLDER_SCHEMA)
    heard = prepared(walk.host_events).filter(pl.col("pid").is_in(pids.implode())).collect()
    holders = signals.gpu_holders(walk.frame, walk.linked, heard, walk.window)
    return holders.join(walk.linked.select("event_id", "file", "line", "source", "kind", "message"), on="event_id", how="left")


def _from_holders(gpu: str, holders: pl.DataFrame, need: int | None, figures: dict[str, Any], lines: tuple[Evidence, ...],
                  others_pods: list[str]) -> Stage:
    others = holders.filter(~pl.col("own"))
    own = holders.filter("own").row(0, named=True)
    other_bytes, stale_bytes = int(others["mem_used_bytes"].sum()), int(others.filter("stale")["mem_used_bytes"].sum())
    figures = {
        **figures, "processes": holders.height, "pods": holders["pod"].drop_nulls().n_unique() or None, "own_pid": own["pid"],
        "own_bytes": own["mem_used_bytes"], "other_bytes": other_bytes, "stale_bytes": stale_bytes, "stale_processes": others["stale"].sum(),
    }
    role = pl.when(pl.col("own")).then(pl.lit("the job")).when(pl.col("stale")).then(pl.lit("stale: logs nothing")).otherwise(pl.lit("live"))
    text = pl.format("pid {} ({}) holds {} MiB, {}{}", "pid", pl.col("process").fill_null("?"), (pl.col("mem_used_bytes") / 2**20).round(0).cast(pl.Int64),
                     role, pl.when(pl.col("pod").is_not_null()).then(pl.format(", pod {}", "pod")).otherwise(pl.lit("")))
    lines = evidence(holders, text) + lines
    held = f"{holders.height} process(es) held {size(holders['mem_used_bytes'].sum())} of {gpu}"
    if need is not None and other_bytes >= need:
        if stale_bytes * 2 >= other_bytes:
            return Stage("gpu_processes", GPU_QUESTION, "stale_holders", True,
                         f"stale holders: {held}; {figures['stale_processes']} that log nothing held {size(stale_bytes)}, "
                         f"at least the {size(need)} the job needed", figures, lines)
        return Stage("gpu_processes", GPU_QUESTION, "shared", True,
                     f"shared: {held}; other live processes held {size(other_bytes)}, at least the {size(need)} the job needed", figures, lines)
    if others_pods:
        return Stage("gpu_processes", GPU_QUESTION, "shared", True,
                     f"shared: {held}, and DCGM labels the GPU with other pods too ({', '.join(others_pods)})", figures, lines)
    return Stage("gpu_processes", GPU_QUESTION, "sole_holder", False,
                 f"the job held it: {held}, pid {own['pid']} {size(own['mem_used_bytes'])}; the others held {size(other_bytes)}", figures, lines)


def _dcgm_pods(walk: Walk) -> pl.DataFrame:
    """DCGM samples of the incident's GPU before it that carry a pod label, latest first."""
    samples = signals.gpu_series(walk.frame, walk.linked, walk.window, "gpu_sample")
    return (
        samples.filter((pl.col("source") == "dcgm") & pl.col("pod").is_not_null())
        .select("event_id", "pod")
        .join(walk.linked.select("event_id", "file", "line", "source", "kind", "message"), on="event_id")
        .reverse()
    )


def _listed_by_oom(walk: Walk) -> pl.DataFrame | None:
    """The other processes a CUDA OOM message lists on the GPU ("Process 812 has 30.50 GiB memory in use"), and the job's own bytes.

    PyTorch lists every process it can see; the job's own is "this process", or its pid.
    """
    oom = walk.kinds("cuda_oom").filter(pl.col("message").str.contains("memory in use", literal=True)).head(1)
    listed = oom.select(
        "file", "line", "source", "kind",
        text=pl.col("message").str.extract_all(_OOM_PROCESS),
        own_bytes=_text_bytes(pl.col("message").str.extract(_OWN_PROCESS, 1)),
    ).explode("text").with_columns(
        pid=pl.col("text").str.extract(_OOM_PROCESS, 1).cast(pl.Int64),
        mem_used_bytes=_text_bytes(pl.col("text").str.extract(_OOM_PROCESS, 2)),
    )
    own_pid = walk.incident["pid"]
    others = listed.filter(pl.col("pid").is_not_null() if own_pid is None else pl.col("pid") != own_pid)
    return others if others.height else None


def _text_bytes(text: pl.Expr) -> pl.Expr:
    parts = text.str.extract_groups(r"^(?<n>[0-9.]+) (?<unit>[KMGT]?i?B)$")
    factor = parts.struct.field("unit").replace_strict(_UNITS, default=None, return_dtype=pl.Float64)
    return (parts.struct.field("n").cast(pl.Float64, strict=False) * factor).round().cast(pl.Int64)


def _from_oom_listing(gpu: str, listed: pl.DataFrame, need: int | None, figures: dict[str, Any], lines: tuple[Evidence, ...]) -> Stage:
    other_bytes = int(listed["mem_used_bytes"].sum())
    figures = {**figures, "processes": listed.height + 1, "own_bytes": listed["own_bytes"][0], "other_bytes": other_bytes}
    text = pl.format("the CUDA OOM lists pid {} holding {} MiB", "pid", (pl.col("mem_used_bytes") / 2**20).round(0).cast(pl.Int64))
    lines = evidence(listed, text) + lines
    if need is not None and other_bytes >= need:
        return Stage("gpu_processes", GPU_QUESTION, "shared", True,
                     f"shared: the CUDA OOM lists {listed.height} other process(es) holding {size(other_bytes)} of {gpu}, at least the "
                     f"{size(need)} the job needed", figures, lines)
    return Stage("gpu_processes", GPU_QUESTION, "sole_holder", False,
                 f"the job held it: the other processes the CUDA OOM lists held only {size(other_bytes)}", figures, lines)


# --- stage 3: the PyTorch allocator --------------------------------------------------------


ALLOCATOR_QUESTION = "What inside the process held it (the PyTorch caching allocator)?"


def allocator_stage(walk: Walk) -> Stage:
    """The CUDA OOM's allocator figures and the process's memory snapshots: growth, fragmentation or live tensors."""
    figures = _oom_figures(walk)
    snapshots = _snapshots(walk)
    lines = evidence(walk.kinds("cuda_oom").head(1)) + evidence(snapshots)
    if snapshots.height:
        latest = snapshots.row(-1, named=True)
        info = json.loads(latest["attrs"]) if latest["attrs"] else {}
        known = {name: value for name, value in figures.items() if value is not None}  # the OOM's own figures are of the very moment
        figures = {
            "allocated_bytes": latest["mem_used_bytes"], "reserved_bytes": latest["mem_total_bytes"],
            "requested_bytes": latest["mem_requested_bytes"], "gpu_total_bytes": _need(walk)[1], **known,
            "snapshots": snapshots.height, "segments": info.get("segments"), "largest_free_block_bytes": info.get("largest_free_block_bytes"),
            "top_sites": info.get("top_sites", [])[:5],
        }
        if figures.get("reserved_unallocated_bytes") is None and latest["mem_total_bytes"] is not None and latest["mem_used_bytes"] is not None:
            figures["reserved_unallocated_bytes"] = latest["mem_total_bytes"] - latest["mem_used_bytes"]
            figures["reserved_unallocated_frac"] = _ratio(figures["reserved_unallocated_bytes"], latest["mem_total_bytes"])
    if snapshots.height >= 2:
        growth = signals.site_growth(snapshots).drop("incident_id").to_dicts()
        figures["site_growth"] = growth[:5]
        figures["allocated_growth_bytes"] = _difference(snapshots["mem_used_bytes"][-1], snapshots["mem_used_bytes"][0])
        if growth and growth[0]["bytes_growth"] >= SITE_GROWTH_BYTES:
            top = growth[0]
            return Stage("allocator", ALLOCATOR_QUESTION, "leak", True,
                         f"a leak: {top['frame']} grew by {size(top['bytes_growth'])} ({top['count_before']} → {top['count_after']} blocks) "
                         f"between the first and the last of {snapshots.height} snapshots", figures, lines)
    if all(figures.get(name) is None for name in ("allocated_bytes", "reserved_bytes", "reserved_unallocated_bytes")):
        return Stage("allocator", ALLOCATOR_QUESTION, "no_data", False, "no allocator figures for the failing process", figures,
                     missing=("no allocator figures (a PyTorch CUDA OOM message, a memory snapshot) of the process: call "
                              "torch.cuda.memory._record_memory_history() "
                              "at start-up and torch.cuda.memory._dump_snapshot() when it fails (or log torch.cuda.memory_summary()) next "
                              "time; two snapshots minutes apart show what grew"))
    return _allocator_verdict(figures, lines)


def _difference(later: int | None, earlier: int | None) -> int | None:
    return later - earlier if later is not None and earlier is not None else None


def _allocator_verdict(figures: dict[str, Any], lines: tuple[Evidence, ...]) -> Stage:
    unallocated, frac = figures.get("reserved_unallocated_bytes"), figures.get("reserved_unallocated_frac")
    requested, allocated, total = figures.get("requested_bytes"), figures.get("allocated_bytes"), figures.get("gpu_total_bytes")
    room = requested is not None and unallocated is not None and unallocated >= requested
    if frac is not None and (frac >= FRAGMENTED_SHARE or (room and frac >= FRAGMENTED_SHARE_WITH_ROOM)):
        return Stage("allocator", ALLOCATOR_QUESTION, "fragmentation", True,
                     f"fragmentation: {size(unallocated)} ({frac:.0%} of the cache) was reserved but unallocated"
                     + (f", more than the {size(requested)} request, yet not in one piece" if room else ""), figures, lines)
    held = _ratio(allocated, total)
    if held is not None and held >= LIVE_TENSORS_SHARE:
        return Stage("allocator", ALLOCATOR_QUESTION, "live_tensors", True,
                     f"live tensors filled the GPU: PyTorch had {size(allocated)} allocated of {size(total)} ({held:.0%}), "
                     f"{size(unallocated)} cached free" + (f"; the {size(requested)} request could not fit" if requested else ""), figures, lines)
    if held is not None:
        return Stage("allocator", ALLOCATOR_QUESTION, "outside_allocator", False,
                     f"not the allocator: PyTorch had only {size(allocated)} of the {size(total)} GPU ({held:.0%}) allocated; the rest was "
                     "held outside it (other processes, CUDA contexts, NCCL buffers)", figures, lines)
    return Stage("allocator", ALLOCATOR_QUESTION, "inconclusive", False,
                 f"{size(allocated)} allocated, {size(unallocated)} reserved but unallocated; the GPU's capacity is unknown", figures, lines)


def _oom_figures(walk: Walk) -> dict[str, Any]:
    """Allocated, reserved, request, free and capacity from the first CUDA OOM anchor's message (as rca.signals reads it)."""
    oom = walk.linked.filter((pl.col("kind") == "cuda_oom") & (pl.col("role") == "anchor")).sort("ts", nulls_last=True).head(1)
    if oom.is_empty():
        return {}
    reserved = pl.coalesce(attr_int("reserved_total_bytes"), attr_int("allocated_bytes") + attr_int("reserved_unallocated_bytes"))
    read = oom.select(
        allocated_bytes=attr_int("allocated_bytes"),
        reserved_bytes=reserved,
        reserved_unallocated_bytes=pl.coalesce(attr_int("reserved_unallocated_bytes"), reserved - attr_int("allocated_bytes")),
        requested_bytes=pl.coalesce(pl.col("mem_requested_bytes"), attr_int("requested_bytes")),
        free_bytes=attr_int("free_bytes"),
        gpu_total_bytes=pl.col("mem_total_bytes"),
    ).row(0, named=True)
    read["reserved_unallocated_frac"] = _ratio(read["reserved_unallocated_bytes"], read["reserved_bytes"])
    return read


def _snapshots(walk: Walk) -> pl.DataFrame:
    """The failing process's memory snapshots (:func:`rca.signals.incident_snapshots`), in time order."""
    taken = layout_identity(walk.host_events.filter((pl.col("source") == "torch_memory") & (pl.col("kind") == "memory_snapshot"))).collect()
    return signals.incident_snapshots(walk.frame, taken)
