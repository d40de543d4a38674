"""Correlation: events → incidents, one per failure, seen from every source.

The steps, each a handful of polars joins over a small subset of the events:

1. **Align clocks** (:mod:`rca.align`): boot-relative kernel events get a wall time, lines
   printed without any time get one from the same failure seen elsewhere or from their
   neighbours, and inferred years are checked against the host's dated logs.
2. **Anchors**: the events that *are* a failure: kills, OOMKilled containers, CUDA OOMs,
   DataLoader deaths, evictions, exit 137, shm errors, NCCL timeouts, fatal Xids and the
   JVM's / Go runtime's own out-of-memory errors. Usually well under 1 % of the events.
3. **Identities** (:mod:`rca._identity`): each anchor's pid, container, pod and GPU are
   completed from pairings the host's other events reveal (and from the container-log
   folder layout); a kubelet line's pid is the kubelet's own and never an identity.
4. **Dedup**: anchors of one host within ``dedup`` of each other that share a pid,
   container id, pod uid, pod or GPU are one failure (linking consecutive sightings per
   identity, then a union-find over those edges), as are the kernel's OOM kills of one host
   moments apart under the same limit (one out-of-memory condition's victims, each its own
   pid: :func:`_cascade_edges`). An anchor with no identity at all joins
   the nearest failure of its host within ``dedup``; anchors without a time join by
   container id / pod uid / pid alone.
5. **NCCL root**: a group led by an NCCL timeout (its first anchor; the aborts that follow
   a watchdog timeout come after it) joins the failure whose time best
   explains it: ``timeout_ms`` before the timeout when the message says so, else the
   latest failure (any host) within ``nccl_window`` before it. The incident's ``host`` is
   the first failure's host; ``hosts`` lists every host involved.
   Steps 1–4 pair events of one host only, so they run host by host (:func:`host_stage`,
   in parallel through ``map_hosts``); the NCCL root is the one step across hosts.
6. **Links**: anchors; *evidence*: events of the same host sharing an identity (pid,
   container, pod, GPU index / UUID / PCI bus, or the pipeline log file of the anchor)
   from ``window`` before the first anchor to ``after`` past the last, the death of the
   same container or pod up to ``window`` past the last anchor, and the kernel's
   "invoked oom-killer" header just before a kill; *context*: other notable events of
   the host in the span.
7. **Signals** (:mod:`rca.signals`) per incident, from the links, the cgroup files' readings and the memory snapshots.

``incident_id`` is a hash of the root host and the earliest anchor's ``event_id``, so a
re-run over the same events gives the same ids.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import re
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

from rca import align, schema, signals, templates
from rca.messages import headline
from rca._identity import IdentityMaps, layout_identity, pci_key
from rca.signals import attr
from rca.sources.cgroup import merge_readings
from rca.store import Store

DEFAULT_WINDOW = timedelta(minutes=15)
DEFAULT_DEDUP = timedelta(minutes=2)
DEFAULT_NCCL_WINDOW = timedelta(minutes=35)
DEFAULT_AFTER = timedelta(minutes=2)
_NCCL_SLACK = timedelta(minutes=3)
# Above this many events (about 1 GB of work columns) each host's aligned events are spilled to
# a temporary Parquet file and read back lazily, so memory holds one host's events at a time. On
# the 1 GB corpus (8.3M events) that took correlation's peak RSS from 4.6 to 1.9 GB, at about
# 0.8 CPU-s per million events of writing.
_SPILL_ABOVE_ROWS = 4_000_000
_OOM_BLOCK = timedelta(seconds=10)  # the kernel prints "invoked oom-killer" a moment before its kill line
# Consecutive OOM kills of one host this close, under the same limit, are one out-of-memory condition (_cascade_edges).
_OOM_CASCADE = timedelta(seconds=5)
# Events of no known host (a log copied alone whose lines name none) are correlated file by file: each such file is
# a host of its own, so unrelated files never pair up, and the steps' joins and filters on the host find its rows
# (a null host matches nothing). What correlate returns has their host null again.
_FILE_AS_HOST = "\x00file:"

ANCHOR_KINDS = ("oom_kill", "container_oomkilled", "cuda_oom", "dataloader_killed", "eviction", "process_killed", "shm_error", "nccl_timeout")
# Xids that end the work on a GPU. 63 (a row remapped) and 92 (many corrected errors) are warnings NVIDIA says
# to ignore: they show up in an incident's xid_codes, they do not make one. 94 kills only the affected process.
FATAL_XIDS = (48, 64, 74, 79, 94, 95, 119, 120, 140)
_FATAL_RESOLUTION = r"^(?:RESET_GPU|RESTART_BM|RESTART_VM|REBOOT|WORKFLOW_XID_48|WORKFLOW_NVLINK_ERR|HW_RMA|DRAIN.*)$"
# Most specific first: the kind that names an incident when several sources saw it.
# An eviction outranks the container kill it causes; an NCCL timeout is only ever a consequence.
KIND_PRIORITY = ("xid", "cuda_oom", "dataloader_killed", "shm_error", "log", "traceback", "oom_kill", "eviction",
                 "container_oomkilled", "process_killed", "nccl_timeout")
CLUSTER_KEYS = ("container_id", "pod_uid", "pid", "pod", "gpu_index", "gpu_uuid", "pci")
EVIDENCE_KEYS = ("pid", "container_id", "pod_uid", "pod", "gpu_index", "gpu_uuid", "pci", "pipeline_file")
_TIMELESS_KEYS = ("container_id", "pod_uid", "pid")
_FOLLOW_KEYS = ("container_id", "pod_uid", "pod")
_QUIET_KINDS = ("log", "gpu_sample", "gpu_process")
_LOUD_SEVERITIES = ("warning", "error", "critical")
# klog headers and daemon syslog tags carry the logging daemon's pid, not the pid of the process a line is about
# (parsers that find a subject pid in the message, like the kubelet's OOM watcher, put it in pid instead).
_NODE_DAEMONS = ("kubelet", "containerd", "dockerd", "crio", "cri-o", "systemd", "systemd-journald", "systemd-oomd", "kube-proxy", "kernel")
_LOGGER_PID = (
    pl.col("process").str.to_lowercase().is_in(_NODE_DAEMONS).fill_null(False)
    | ((pl.col("source") == "pipeline") & (pl.col("format") == "klog")).fill_null(False)
)
_SIGNATURE_LINES = 6
_SIGNATURE_CHARS = 300
WORK_COLUMNS = [c for c in schema.EVENT_SCHEMA if c not in ("message", "ts_raw", "template_id", "cgroup")]


@dataclass(frozen=True)
class Correlation:
    """What :func:`correlate` found: incidents, their links to events, and a report."""

    incidents: pl.DataFrame
    links: pl.DataFrame
    report: dict


def parse_window(text: str) -> timedelta:
    """A duration such as ``15m``, ``90s``, ``1h30m`` or ``2h``; a bare number is minutes."""
    cleaned = text.strip().lower()
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", cleaned):
        return timedelta(minutes=float(cleaned))
    parts = re.findall(r"([0-9]+(?:\.[0-9]+)?)\s*(d|h|m|min|s)", cleaned)
    if not parts or "".join(f"{n}{u}" for n, u in parts) != re.sub(r"\s+", "", cleaned):
        raise ValueError(f"not a duration: {text!r} (use e.g. 15m, 90s, 1h30m)")
    seconds = {"d": 86400, "h": 3600, "m": 60, "min": 60, "s": 1}
    return timedelta(seconds=sum(float(n) * seconds[u] for n, u in parts))


def correlate(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    window: timedelta = DEFAULT_WINDOW,
    dedup: timedelta = DEFAULT_DEDUP,
    nccl_window: timedelta = DEFAULT_NCCL_WINDOW,
    after: timedelta = DEFAULT_AFTER,
    map_hosts: MapHosts = map,
) -> Correlation:
    """Group the events (``rca.schema.EVENT_SCHEMA``) into incidents with evidence links and signals.

    Steps 1–4 run host by host (:func:`host_stage`) through ``map_hosts``: the builtin
    ``map`` runs them one after the other, a process pool's or a Dask client's ``map``
    in parallel, with the same result. The NCCL root (step 5) is the one step across hosts.
    Above ``_SPILL_ABOVE_ROWS`` events each host's aligned events are spilled to a temporary
    folder (under ``TMPDIR``) that the later steps read: whatever runs the host stages must
    see that folder (the builtin ``map``, a local pool, a ``LocalCluster``).
    """
    started = time.perf_counter()
    lazy = events.lazy()
    schema.validate(lazy, schema.EVENT_SCHEMA, "events")
    ready = prepared(lazy)
    with contextlib.ExitStack() as cleanup:
        large = lazy.select(pl.len()).collect().item() > _SPILL_ABOVE_ROWS
        spill = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="rca-correlate-"))) if large else None
        stage = functools.partial(host_stage, dedup=dedup, reference=align.exact_reference(ready), spill=spill)
        taken = hosts_of_folders(lazy)
        alignment, anchors = joined_stages(list(map_hosts(stage, host_frames(lazy, taken))))
        return _correlated(lazy, alignment, anchors, taken, window=window, dedup=dedup, nccl_window=nccl_window, after=after, started=started)


def _correlated(lazy: pl.LazyFrame, alignment: align.Alignment, anchors: pl.DataFrame, taken: dict[str, str], *, window: timedelta,
                dedup: timedelta, nccl_window: timedelta, after: timedelta, started: float) -> Correlation:
    """Steps 5–7 on the hosts' joined stages, whose events are read lazily (from the spill, in :func:`correlate`)."""
    work = alignment.events.lazy().with_row_index("row")
    anchors = _name_incidents(_merge_nccl(anchors, nccl_window, dedup))
    linked = _links(anchors, work, window, after)
    links = linked.select(schema.INCIDENT_EVENTS_SCHEMA.keys())
    messages = _messages(lazy, anchors, links)
    anchors = anchors.join(messages, on="event_id", how="left")
    core = _incident_rows(anchors, links, messages)
    cgroups = merge_readings(lazy.filter(pl.col("kind") == "cgroup_memory").collect())
    snapshots = layout_identity(lazy.filter(pl.col("kind") == "memory_snapshot")).collect()
    signal_events = work.filter(signals.EVENT_ROWS).select(signals.EVENT_COLUMNS).collect(engine="streaming")
    signal_frame = signals.incident_signals(core, anchors, linked, signal_events, window, cgroups, snapshots)
    incidents = _hosts_named(schema.conform(core.join(signal_frame, on="incident_id", how="left"), schema.INCIDENT_SCHEMA))
    incidents = incidents.sort("start", "incident_id", nulls_last=True)
    alignment = dataclasses.replace(
        alignment, report=_hosts_named(alignment.report), year_shifts=_hosts_named(alignment.year_shifts), inherited=_hosts_named(alignment.inherited),
    )
    report = _report(work, anchors, incidents, links, alignment, taken, time.perf_counter() - started)
    return Correlation(incidents, _hosts_named(schema.conform(links, schema.INCIDENT_EVENTS_SCHEMA)), report)


def _file_as_host(events: pl.DataFrame) -> pl.DataFrame:
    """``events`` with each event of no known host on a host standing for its file (see ``_FILE_AS_HOST``)."""
    if not events["host"].has_nulls():  # a host's frame, nearly always: no text built for its millions of rows
        return events
    return events.with_columns(host=pl.coalesce("host", pl.lit(_FILE_AS_HOST) + pl.col("file")))


def _hosts_named(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the hosts standing for a file (:func:`_file_as_host`) null again, in ``host`` and, where it has it, ``hosts``."""
    named = {"host": _named(pl.col("host"))}
    if "hosts" in frame.columns:
        named["hosts"] = pl.col("hosts").list.eval(pl.element().filter(~pl.element().str.starts_with(_FILE_AS_HOST)))
    return frame.with_columns(**named)


def _named(host: pl.Expr) -> pl.Expr:
    return pl.when(~host.str.starts_with(_FILE_AS_HOST)).then(host)


def correlate_store(store: Store, *, window: timedelta = DEFAULT_WINDOW, **options: timedelta) -> dict:
    """Correlate a store's events and write ``incidents.parquet`` and ``incident_events.parquet``.

    Takes the store's lock: call it after an ingest's commit, not inside one. Returns the report.
    """
    with store.writing():
        result = correlate(store.scan_events(), window=window, **options)
        store.write_incidents(result.incidents, result.links, result.report)
    return result.report


# --- the per-host stage -----------------------------------------------------------------


def hosts_of_folders(events: pl.LazyFrame) -> dict[str, str]:
    """The files of no known host that are taken to be on a host: the one host the other files of their folder name.

    A node's logs copied into one folder, without the ``DIR/<host>/`` layout: ``kern.log``'s and
    the journal's lines name the node, ``train.log``'s name none, yet they are the same node's. A
    folder whose files name no host passes the question to the folder above it (a node's
    ``/var/log`` copied whole: its ``pods/…/0.log`` name none, its ``syslog`` the node); the
    nearest folder whose files name any host decides, and one that names several says nothing.
    """
    hostless = events.filter(pl.col("host").is_null()).select("file").unique().collect()["file"]
    if hostless.is_empty():
        return {}
    hosts_under: dict[str, set[str]] = {}
    for file, host in events.filter(pl.col("host").is_not_null()).select("file", "host").unique().collect().iter_rows():
        for folder in _folders_above(file):
            hosts_under.setdefault(folder, set()).add(host)
    taken = {}
    for file in hostless.drop_nulls():
        hosts = next((hosts_under[folder] for folder in _folders_above(file) if folder in hosts_under), set())
        if len(hosts) == 1:
            taken[file] = next(iter(hosts))
    return taken


def _folders_above(file: str) -> list[str]:
    """The folders a file lies in, its own first, up to the root: ``a/b/f.log`` → ``a/b``, ``a``, ``""``."""
    parts = file.split("/")[:-1]
    return ["/".join(parts[:depth]) for depth in range(len(parts), -1, -1)]


def host_frames(events: pl.LazyFrame, taken: dict[str, str] | None = None) -> Iterator[pl.DataFrame]:
    """Each host's :func:`prepared` events, collected one host at a time, hosts in order of first appearance.

    ``taken`` (:func:`hosts_of_folders`) puts files of no known host on a host: their events
    join that host's frame, with its name. Collecting host by host keeps one host's events in
    flight instead of the whole table and a partitioned copy of it (on the 1 GB corpus,
    ``partition_by`` held 9.5 GB). The host is chosen before :func:`prepared`, so that the
    store's reader skips the other hosts' parts.
    """
    taken = taken or {}
    hosts = events.select(pl.col("host").unique(maintain_order=True)).collect().to_series()
    if hosts.is_empty():
        yield prepared(events).collect()
    for host in hosts:
        if host is None:
            frame = events.filter(pl.col("host").is_null() & ~pl.col("file").is_in(list(taken)))
        elif mine := [file for file, on in taken.items() if on == host]:
            frame = events.filter((pl.col("host") == host) | pl.col("file").is_in(mine)).with_columns(host=pl.lit(host))
        else:
            frame = events.filter(pl.col("host") == host)
        # Streamed, the read holds half the memory (the largest host of the 1 GB store: 0.9 instead of 1.9 GB peak).
        collected = prepared(frame).collect(engine="streaming")
        if host is not None or not collected.is_empty():
            yield collected
        # Held here while the next host is read, the frame the stage is done with would double the peak (1.4 → 1.9 GB at 1 GB).
        del collected


MapHosts = Callable[[Callable[[pl.DataFrame], "HostStage"], Iterable[pl.DataFrame]], Iterable["HostStage"]]


@dataclass(frozen=True)
class HostStage:
    """Steps 1–4 on one host: its aligned events and its deduplicated anchors."""

    alignment: align.Alignment  # its events a LazyFrame over the spilled file when host_stage was given a spill folder
    anchors: pl.DataFrame  # aid, group and row count within the host until joined_stages numbers them across hosts
    rows: int  # of the host's events


def host_stage(events: pl.DataFrame, *, dedup: timedelta, reference: datetime | None, spill: Path | None = None) -> HostStage:
    """Clock alignment, identities, anchors and their dedup on one host's :func:`prepared` events.

    Reads nothing but ``events`` and ``reference``, every host's median exact time
    (:func:`rca.align.exact_reference`): every rule of these steps pairs events of one host.
    With a ``spill`` folder the aligned events are written there and read back lazily, so
    the hosts' stages hold one host's events at a time, not every host's.
    """
    alignment = align.align_clocks(_file_as_host(events), reference)
    work = alignment.events.with_row_index("row")
    anchors = IdentityMaps.learn(work).resolve(_anchors(work))
    if spill is not None:
        path = spill / f"{uuid.uuid4().hex}.parquet"
        alignment.events.write_parquet(path, compression="lz4")
        alignment = dataclasses.replace(alignment, events=pl.scan_parquet(path))
    return HostStage(alignment, _dedup(anchors, dedup), work.height)


def joined_stages(stages: list[HostStage]) -> tuple[align.Alignment, pl.DataFrame]:
    """The hosts' stages as one: events one host after another, anchors numbered in time order across hosts.

    An anchor's ``aid`` is its place in (ts, event_id) order, as if every host's anchors had
    been found together; a host's order is the same either way, so each group keeps its
    earliest anchor as representative.
    """
    offsets = [0]
    for stage in stages[:-1]:
        offsets.append(offsets[-1] + stage.rows)
    tagged = pl.concat([
        stage.anchors.with_columns(row=pl.col("row") + offset, stage=pl.lit(index, pl.Int32))
        for index, (stage, offset) in enumerate(zip(stages, offsets, strict=True))
    ])
    numbered = tagged.sort("ts", "event_id", nulls_last=True).with_columns(global_aid=pl.int_range(pl.len(), dtype=pl.Int64))
    groups = numbered.select("stage", group="aid", global_group="global_aid")
    anchors = (
        numbered.join(groups, on=["stage", "group"], how="left", maintain_order="left")
        .with_columns(aid="global_aid", group="global_group")
        .drop("stage", "global_aid", "global_group")
    )
    parts = [stage.alignment for stage in stages]
    alignment = align.Alignment(
        pl.concat([part.events for part in parts], how="vertical"),
        pl.concat([part.report for part in parts]).sort(align.GROUP, nulls_last=True),
        pl.concat([part.year_shifts for part in parts]).sort("host", "file", nulls_last=True),
        pl.concat([part.inherited for part in parts]).sort("host", "file", nulls_last=True),
    )
    return alignment, anchors


# --- anchors ---------------------------------------------------------------------------


def prepared(events: pl.LazyFrame) -> pl.LazyFrame:
    """The columns correlation reads, ready to serve as identities.

    Pids that name a logging daemon (a kubelet line's pid is the kubelet's) are nulled so
    they never act as identity; pods named only by the container-log folder layout are filled.
    A kernel line's text is kept as a hash (``kernel_text``), for clock alignment to find the
    same message in another kernel log; the other messages are not read.
    """
    subject = events.select(
        *WORK_COLUMNS, kernel_text=pl.when(pl.col("source") == "kernel").then(pl.col("message").hash())
    ).with_columns(pid=pl.when(_LOGGER_PID).then(None).otherwise(pl.col("pid")))
    return layout_identity(subject)


def _anchors(work: pl.DataFrame) -> pl.DataFrame:
    """The events that are a failure in themselves, numbered (``aid``) in time order.

    A cheap test on kind and a literal in attrs keeps the few candidates; the JSON of
    their attrs is decoded only then.
    """
    maybe = pl.col("kind").is_in([*ANCHOR_KINDS, "xid"]) | pl.col("attrs").str.contains('"oom"', literal=True).fill_null(False)
    fatal_xid = (pl.col("kind") == "xid") & (
        pl.col("xid").is_in(FATAL_XIDS).fill_null(False)
        | attr("xid_resolution").str.contains(_FATAL_RESOLUTION).fill_null(False)
        | (pl.col("severity") == "critical").fill_null(False)
    )
    runtime_oom = pl.col("kind").is_in(["log", "traceback"]) & attr("oom").is_not_null()
    # A rank that torchrun stopped with SIGTERM because another failed is that failure's aftermath, not a failure
    stopped_rank = (pl.col("kind") == "process_killed") & (pl.col("exit_code") == -15) & (attr("root_cause") == "false")
    anchor = (pl.col("kind").is_in(ANCHOR_KINDS) & ~stopped_rank.fill_null(False)) | fatal_xid | runtime_oom
    found = work.filter(maybe).filter(anchor).sort("ts", "event_id", nulls_last=True)
    return found.with_row_index("aid").with_columns(
        pl.col("aid").cast(pl.Int64),
        priority=pl.col("kind").replace_strict(KIND_PRIORITY, list(range(len(KIND_PRIORITY))), default=len(KIND_PRIORITY), return_dtype=pl.Int32),
        pipeline_file=pl.when(pl.col("source") == "pipeline").then(pl.col("file")),
    )


# --- dedup -----------------------------------------------------------------------------


def _dedup(anchors: pl.DataFrame, dedup: timedelta) -> pl.DataFrame:
    """Label each anchor with its failure ``group`` (an anchor id, the group's representative)."""
    has_id = pl.any_horizontal([pl.col(k).is_not_null() for k in CLUSTER_KEYS])
    anchors = anchors.with_columns(has_id=has_id)
    edges = pl.concat([_consecutive_edges(anchors, key, dedup) for key in CLUSTER_KEYS] + [_timeless_edges(anchors), _cascade_edges(anchors)])
    parent = _components(anchors.filter("has_id")["aid"].to_list(), edges.rows())
    grouped = anchors.with_columns(group=pl.col("aid").replace_strict(parent, default=None, return_dtype=pl.Int64))
    return _place_anonymous(grouped, dedup)


def _consecutive_edges(anchors: pl.DataFrame, key: str, dedup: timedelta) -> pl.DataFrame:
    """Edges between time-consecutive anchors of one host sharing ``key``: enough for the same components as all pairs."""
    keyed = anchors.filter(pl.col(key).is_not_null() & pl.col("ts").is_not_null()).sort("host", key, "ts")
    prev = pl.col("aid").shift(1).over("host", key)
    gap = pl.col("ts") - pl.col("ts").shift(1).over("host", key)
    return keyed.select(a=pl.col("aid"), b=prev, ok=gap <= dedup).filter("ok").select("a", "b")


def _cascade_edges(anchors: pl.DataFrame) -> pl.DataFrame:
    """Edges between consecutive kernel OOM kills of one host that are one out-of-memory condition (:data:`_OOM_CASCADE`).

    The OOM killer takes one victim per invocation; while the memory stays short it is invoked again at once, and a
    container's forked workers, or a node's biggest processes, die within moments of each other (docker/for-linux#1001:
    four python3 workers of one container in 33 ms). Each kill has its own pid, so no identity ties them: they are one
    failure when they are under the same limit (the same constraint, and the same ``oom_memcg`` where both name it) and
    nothing tells them apart (a known container or pod uid that differs, a memory cgroup's victims named differently
    where no cgroup is known).
    """
    # (Union-find runs over the anchors with an identity: a kill's pid is one.)
    kills = anchors.filter((pl.col("kind") == "oom_kill") & (pl.col("source") == "kernel") & pl.col("ts").is_not_null() & pl.col("has_id"))
    kills = kills.sort("host", "ts").with_columns(constraint=attr("constraint"), memcg=attr("oom_memcg"))

    def previous(column: str) -> pl.Expr:
        return pl.col(column).shift(1).over("host")

    def differs(column: str) -> pl.Expr:
        return (pl.col(column) != previous(column)).fill_null(False)

    same_memcg = (pl.col("memcg") == previous("memcg")).fill_null(False)
    told_apart = differs("memcg") | (~same_memcg & (differs("container_id") | differs("pod_uid")))
    whole_node = pl.col("constraint") == "CONSTRAINT_NONE"
    one_limit = pl.col("constraint").eq_missing(previous("constraint")) & (same_memcg | whole_node.fill_null(False) | pl.col("process").eq_missing(previous("process")))
    soon = (pl.col("ts") - previous("ts")) <= _OOM_CASCADE
    return kills.select(a=pl.col("aid"), b=previous("aid"), ok=(soon & one_limit & ~told_apart).fill_null(False)).filter("ok").select("a", "b")


def _timeless_edges(anchors: pl.DataFrame) -> pl.DataFrame:
    """An anchor without a time joins the earliest anchor of its host with the same container / pod uid / pid."""
    timeless = anchors.filter(pl.col("ts").is_null())
    if timeless.height == 0:
        return pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64})
    rank = {k: i for i, k in enumerate(_TIMELESS_KEYS)}
    long = _long(anchors, ["aid", "host", "ts"], _TIMELESS_KEYS).with_columns(rank=pl.col("key").replace_strict(rank, return_dtype=pl.Int32))
    lonely = long.filter(pl.col("ts").is_null())
    partners = long.filter(pl.col("ts").is_not_null())
    with_time = lonely.join(partners, on=["host", "key", "value"], suffix="_b").sort("aid", "rank", "ts_b").unique("aid", keep="first")
    among = lonely.sort("aid").group_by("host", "key", "value").agg(first=pl.col("aid").first(), aid=pl.col("aid")).explode("aid")
    return pl.concat([with_time.select(a="aid", b="aid_b"), among.filter(pl.col("aid") != pl.col("first")).select(a="aid", b="first")])


def _long(frame: pl.DataFrame, keep: list[str], keys: tuple[str, ...]) -> pl.DataFrame:
    """(keep…, key, value) rows: one per non-null identity of each row, values as text."""
    return (
        frame.select(*keep, *[pl.col(k).cast(pl.String) for k in keys])
        .unpivot(index=keep, on=list(keys), variable_name="key", value_name="value")
        .drop_nulls("value")
    )


def _components(nodes: list[int], edges: list[tuple[int, int]]) -> dict[int, int]:
    """Union-find over the anchor edges: node → the smallest node of its component."""
    parent = {n: n for n in nodes}

    def find(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {n: find(n) for n in nodes}


def _place_anonymous(anchors: pl.DataFrame, dedup: timedelta) -> pl.DataFrame:
    """Anchors with no identity join the nearest identified failure of their host, else group by time gaps."""
    known = anchors.filter(pl.col("group").is_not_null() & pl.col("ts").is_not_null()).select("host", "ts", near="group").sort("ts")
    anonymous = anchors.filter(pl.col("group").is_null())
    timed = anonymous.filter(pl.col("ts").is_not_null()).sort("ts")
    if known.height and timed.height:
        timed = timed.join_asof(known, on="ts", by="host", strategy="nearest", tolerance=dedup, check_sortedness=False)
    else:
        timed = timed.with_columns(near=pl.lit(None, pl.Int64))
    starts = ((pl.col("ts") - pl.col("ts").shift(1) > dedup) | (pl.col("host") != pl.col("host").shift(1))).fill_null(True)
    unplaced = timed.filter(pl.col("near").is_null()).sort("host", "ts").with_columns(run=starts.cum_sum())
    by_gap = unplaced.with_columns(gap_group=pl.col("aid").min().over("run")).select("aid", "gap_group")
    timed = timed.join(by_gap, on="aid", how="left").with_columns(group=pl.coalesce("near", "gap_group"))
    timeless = anonymous.filter(pl.col("ts").is_null()).with_columns(group=pl.col("aid").min().over("host", "file"))
    placed = pl.concat([timed.select(anchors.columns), timeless.select(anchors.columns)])
    return pl.concat([anchors.filter(pl.col("group").is_not_null()), placed]).sort("aid")


# --- NCCL root --------------------------------------------------------------------------


def _merge_nccl(anchors: pl.DataFrame, nccl_window: timedelta, dedup: timedelta) -> pl.DataFrame:
    """Fold groups that start with an NCCL timeout into the failure that explains them."""
    groups = anchors.sort("ts", "aid", nulls_last=True).group_by("group").agg(
        led_by_timeout=pl.col("kind").first() == "nccl_timeout",
        start=pl.col("ts").min(),
        timeout_us=(attr("timeout_ms").cast(pl.Float64, strict=False) * 1000).max().cast(pl.Int64),
    )
    failures = groups.filter(~pl.col("led_by_timeout") & pl.col("start").is_not_null()).select(pl.col("group").alias("root"), f_start="start").sort("f_start")
    timeouts = groups.filter(pl.col("led_by_timeout") & pl.col("start").is_not_null())
    if timeouts.height == 0:
        return anchors.with_columns(incident_group=pl.col("group"))
    expected = timeouts.with_columns(expect=pl.col("start") - pl.duration(microseconds=pl.col("timeout_us").fill_null(0))).sort("expect")
    explained = expected.filter(pl.col("timeout_us").is_not_null()).join_asof(
        failures, left_on="expect", right_on="f_start", strategy="nearest", tolerance=_NCCL_SLACK, check_sortedness=False
    ).filter(pl.col("f_start") <= pl.col("start")).select("group", by_timeout="root")
    latest = expected.sort("start").join_asof(
        failures, left_on="start", right_on="f_start", strategy="backward", tolerance=nccl_window, check_sortedness=False
    ).select("group", latest="root")
    target = timeouts.join(explained, on="group", how="left").join(latest, on="group", how="left").with_columns(
        root=pl.coalesce("by_timeout", "latest")
    )
    alone = target.filter(pl.col("root").is_null()).sort("start")
    runs = alone.with_columns(run=(pl.col("start") - pl.col("start").shift(1) > dedup).fill_null(True).cum_sum())
    runs = runs.with_columns(root=pl.col("group").first().over("run"))
    mapping = pl.concat([target.filter(pl.col("root").is_not_null()).select("group", "root"), runs.select("group", "root")])
    return anchors.join(mapping, on="group", how="left").with_columns(incident_group=pl.coalesce("root", "group")).drop("root")


def _name_incidents(anchors: pl.DataFrame) -> pl.DataFrame:
    """incident_id and root host of each anchor's incident, from its earliest anchor."""
    first = anchors.sort("ts", "event_id", nulls_last=True).group_by("incident_group", maintain_order=True).agg(
        root_host=pl.col("host").first(), first_event=pl.col("event_id").first()
    )
    keys = pl.format("{}\x00{}", _named(pl.col("root_host")).fill_null(""), pl.col("first_event"))
    ids = first.with_columns(incident_id=keys.map_elements(_incident_hash, return_dtype=pl.String))
    return anchors.join(ids.select("incident_group", "incident_id", "root_host"), on="incident_group").sort("aid")


def _incident_hash(key: str) -> str:
    return "inc-" + hashlib.blake2b(key.encode("utf-8"), digest_size=6).hexdigest()


# --- links -----------------------------------------------------------------------------


def _links(anchors: pl.DataFrame, work: pl.LazyFrame, window: timedelta, after: timedelta) -> pl.DataFrame:
    """Linked events with every work column plus incident_id and role (anchor, evidence, context).

    Spans and events meet through time buckets, so a join touches only events of the
    same host and bucket: the cost follows the events near incidents, not all events.
    The joins carry row numbers only; the linked rows are gathered once at the end.
    ``work`` (with its ``row`` numbers) is read in three streaming passes that keep only
    the rows near an incident, the timeless rows with an identity, and the linked rows.
    """
    spans = _span_buckets(anchors.filter(pl.col("ts").is_not_null()).group_by("incident_id", "host").agg(
        lo=pl.col("ts").min() - window, hi=pl.col("ts").max() + after, tail=pl.col("ts").max() + window
    ))
    keys = ["row", "host", "ts", "kind", "severity", "pid", "container_id", "pod_uid", "pod", "gpu_index", "gpu_uuid", "pci_bus", "source",
            "file", "exit_code", "attrs"]
    touched = spans.select("host", "bucket").unique()
    # The integer bucket test first: it drops most events before the (host, bucket) join hashes any host name.
    nearby = (
        work.select(keys)
        .with_columns(bucket=_bucket(pl.col("ts")))
        .filter(pl.col("bucket").is_in(touched["bucket"].unique().implode()))
        .join(touched.lazy(), on=["host", "bucket"], how="semi", maintain_order="left")
        .collect(engine="streaming")
    ).with_columns(pci=pci_key(), pipeline_file=pl.when(pl.col("source") == "pipeline").then(pl.col("file")))
    inside = pl.col("ts").is_between(pl.col("lo"), pl.col("hi"))
    # The container's death is part of its failure even when it comes minutes later (a JVM lingers after its OOM).
    follow = pl.col("ts").is_between(pl.col("hi"), pl.col("tail")) & pl.col("key").is_in(_FOLLOW_KEYS) & _termination()
    identified = [
        nearby.filter(pl.col(key).is_not_null())
        .select("row", "host", "bucket", "ts", "kind", "exit_code", "source", "attrs", key)
        .join(spans.join(anchors.select("incident_id", "host", key).drop_nulls().unique(), on=["incident_id", "host"]), on=["host", "bucket", key])
        .with_columns(key=pl.lit(key))
        .filter(inside | follow)
        .select("incident_id", "row")
        for key in EVIDENCE_KEYS
    ]
    untimed = work.filter(pl.col("ts").is_null() & pl.any_horizontal(pl.col(_TIMELESS_KEYS).is_not_null()))
    untimed = untimed.select("row", "host", *_TIMELESS_KEYS).collect(engine="streaming")
    timeless = [
        untimed.filter(pl.col(key).is_not_null())
        .select("row", "host", key)
        .join(anchors.select("incident_id", "host", key).drop_nulls().unique(), on=["host", key])
        .select("incident_id", "row")
        for key in _TIMELESS_KEYS
    ]
    kills = anchors.filter((pl.col("kind") == "oom_kill") & pl.col("ts").is_not_null()).select("incident_id", "host", kill_ts="ts")
    invoked = (
        nearby.filter(pl.col("kind") == "oom_invoked")
        .join(kills, on="host")
        .filter(pl.col("ts").is_between(pl.col("kill_ts") - _OOM_BLOCK, pl.col("kill_ts")))
        .select("incident_id", "row")
    )
    notable = ~pl.col("kind").is_in(_QUIET_KINDS) | pl.col("severity").is_in(_LOUD_SEVERITIES).fill_null(False)
    context = nearby.filter(notable).select("row", "host", "bucket", "ts").join(spans, on=["host", "bucket"]).filter(inside).select("incident_id", "row")
    ranked = pl.concat([
        anchors.select("incident_id", "row").with_columns(role=pl.lit("anchor")),
        pl.concat([*identified, invoked, *timeless]).with_columns(role=pl.lit("evidence")),
        context.with_columns(role=pl.lit("context")),
    ]).unique(subset=["incident_id", "row"], keep="first", maintain_order=True)
    rows = work.filter(pl.col("row").is_in(ranked["row"].unique().implode())).select("row", *WORK_COLUMNS).collect(engine="streaming")
    gathered = ranked.join(rows, on="row", how="left", maintain_order="left").drop("row")
    return gathered.sort("incident_id", "ts", "event_id", nulls_last=True)


_BUCKET_US = 5 * 60 * 1_000_000


def _termination() -> pl.Expr:
    """A process or container end: a kill, a non-zero exit, the kubelet's ContainerDied."""
    exited = (pl.col("exit_code").is_not_null() & (pl.col("exit_code") != 0)).fill_null(False)
    died = (pl.col("source") == "kubelet") & pl.col("attrs").str.contains('"ContainerDied"', literal=True).fill_null(False)
    return pl.col("kind").is_in(["oom_kill", "container_oomkilled", "process_killed", "dataloader_killed"]) | exited | died


def _bucket(moment: pl.Expr) -> pl.Expr:
    return moment.dt.epoch("us") // _BUCKET_US


def _span_buckets(spans: pl.DataFrame) -> pl.DataFrame:
    """One row per (span, time bucket it touches, up to the span's tail)."""
    return spans.with_columns(bucket=pl.int_ranges(_bucket(pl.col("lo")), _bucket(pl.col("tail")) + 1)).explode("bucket")


# --- incident rows ---------------------------------------------------------------------


def _messages(lazy: pl.LazyFrame, anchors: pl.DataFrame, links: pl.DataFrame) -> pl.DataFrame:
    """Messages of the anchors and of the non-routine evidence: all the signature needs."""
    wanted = pl.concat([
        anchors.select("event_id"),
        links.filter((pl.col("role") == "evidence") & ~pl.col("kind").is_in(_QUIET_KINDS)).select("event_id"),
    ]).unique()
    return lazy.filter(pl.col("event_id").is_in(wanted["event_id"].implode())).select("event_id", "message").collect()


def _incident_rows(anchors: pl.DataFrame, links: pl.DataFrame, messages: pl.DataFrame) -> pl.DataFrame:
    on_root = anchors.filter(pl.col("host") == pl.col("root_host")).sort("incident_id", "priority", "ts", "aid", nulls_last=True)
    identity = on_root.group_by("incident_id", maintain_order=True).agg(
        host=pl.col("host").first(),
        anchor_kind=pl.col("kind").first(),
        **{c: pl.col(c).drop_nulls().first() for c in ("pid", "process", "pod", "namespace", "container", "gpu_index", "gpu_uuid")},
    )
    spans = anchors.group_by("incident_id").agg(
        hosts=pl.col("host").drop_nulls().unique().sort(), start=pl.col("ts").min(), end=pl.col("ts").max(), n_anchors=pl.len().cast(pl.Int32)
    )
    counts = links.group_by("incident_id").agg(
        n_events=pl.len().cast(pl.Int32),
        sources=pl.col("source").filter(pl.col("role") != "context").drop_nulls().unique().sort(),
    )
    return identity.join(spans, on="incident_id").join(counts, on="incident_id", how="left").join(
        _signatures(anchors, links, messages), on="incident_id", how="left"
    )


def _signatures(anchors: pl.DataFrame, links: pl.DataFrame, messages: pl.DataFrame) -> pl.DataFrame:
    """The incident's key evidence as masked text: anchors by priority, then the notable evidence."""
    anchor_lines = anchors.select("incident_id", "kind", "event_id", order=pl.col("priority"), ts="ts")
    evidence_lines = links.filter((pl.col("role") == "evidence") & ~pl.col("kind").is_in(_QUIET_KINDS)).select(
        "incident_id", "kind", "event_id", order=pl.lit(len(KIND_PRIORITY) + 1, pl.Int32), ts="ts"
    )
    lines = (
        pl.concat([anchor_lines, evidence_lines])
        .join(messages.select("event_id", "message"), on="event_id")
        .with_columns(text=pl.format("{}: {}", "kind", templates.mask(headline("message")).str.slice(0, _SIGNATURE_CHARS)))
        .sort("incident_id", "order", "ts", "event_id", nulls_last=True)
        .unique(subset=["incident_id", "text"], keep="first", maintain_order=True)
    )
    return lines.group_by("incident_id", maintain_order=True).agg(signature=pl.col("text").head(_SIGNATURE_LINES).str.join("\n"))


def _report(work: pl.LazyFrame, anchors: pl.DataFrame, incidents: pl.DataFrame, links: pl.DataFrame,
            alignment: align.Alignment, taken: dict[str, str], seconds: float) -> dict:
    counts = work.select(events=pl.len(), untimed=pl.col("ts").null_count()).collect().row(0, named=True)
    return {
        "events": counts["events"],
        "anchors": anchors.height,
        "incidents": incidents.height,
        "multi_host_incidents": int((incidents["hosts"].list.len() > 1).sum()),
        "links": links.height,
        "events_without_time": counts["untimed"],
        "alignment": [_jsonable(row) for row in alignment.report.to_dicts()],
        "year_shifts": alignment.year_shifts.to_dicts(),
        "inherited_times": alignment.inherited.to_dicts(),
        "hosts_of_folders": [{"file": file, "host": host} for file, host in sorted(taken.items())],
        "seconds": round(seconds, 3),
    }


def _jsonable(row: dict) -> dict:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
