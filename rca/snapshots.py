"""PyTorch CUDA memory snapshots: what the caching allocator held, where it was allocated, and what grew.

A snapshot is the pickle ``torch.cuda.memory._dump_snapshot()`` writes: ``{"segments": [...],
"device_traces": [[...], ...]}`` (or, from older releases, the bare list of segments), in the
shape ``torch.cuda.memory._snapshot`` documents and ``torch/cuda/_memory_viz.py`` reads. A
segment is one ``cudaMalloc`` (``total_size`` reserved, ``allocated_size`` in use) split into
blocks (``active_allocated``, ``active_pending_free`` / ``active_awaiting_free``, ``inactive``),
each with the stack (``frames``, innermost first; ``history[0].frames`` in old releases) of
the allocation. Trace entries (``alloc``, ``free_completed``, ``segment_alloc``, ``oom``, …)
carry ``size`` and ``time_us``.

Snapshots are read with :mod:`rca._safe_pickle`, so a file that names any class or function
is refused before anything in it runs.

An allocation site is the first *user* frame of a block's stack: the innermost frame that is
neither PyTorch itself (a path through ``/torch/``), the interpreter or C/C++, nor the
standard library; written like the memory visualiser writes frames, ``file.py:123:function``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import polars as pl

from rca import _safe_pickle, schema
from rca.errors import FileFormatError

PICKLE_PROTOCOLS = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")
ACTIVE_STATES = ("active_allocated", "active_pending_free", "active_awaiting_free")
TOP_SITES = 10

_FRAME = pl.Struct({"filename": pl.String(), "line": pl.Int64(), "name": pl.String()})
_BLOCK = pl.Struct({
    "size": pl.Int64(), "requested_size": pl.Int64(), "state": pl.String(), "frames": pl.List(_FRAME),
    "history": pl.List(pl.Struct({"real_size": pl.Int64(), "frames": pl.List(_FRAME)})),
})
_SEGMENT = pl.Struct({
    "device": pl.Int64(), "total_size": pl.Int64(), "allocated_size": pl.Int64(), "active_size": pl.Int64(),
    "segment_type": pl.String(), "blocks": pl.List(_BLOCK),
})
_TRACE = pl.Struct({"action": pl.String(), "size": pl.Int64(), "time_us": pl.Int64(), "device_free": pl.Int64()})

# A pickle may reference one object many times (the memo), and PyTorch's own snapshots share
# frames that way; a hostile one could nest such references until walking them never ends.
# Real references cost at least two bytes each, so counts far beyond the file's size are refused.
_REFERENCES_PER_BYTE = 64
_REFERENCE_FLOOR = 1_000_000

# Frames that are not the program's own: PyTorch, the interpreter, C/C++ and the standard library.
_NOT_USER = (
    r"/torch/|^torch/|\.(?:c|cc|cpp|cu|cuh|h|hpp)$|^\?\?$|^<|/lib/python3\.[0-9]+/(?:[^/]+\.py$|(?:importlib|concurrent|asyncio|"
    r"multiprocessing|threading|runpy|contextlib)/)|pythonrun\.c|ceval"
)


@dataclass(frozen=True)
class Snapshot:
    """A decoded snapshot as frames: one row per segment, per block and per trace entry."""

    segments: pl.DataFrame  # device, segment, total_size, allocated_size, active_size, segment_type
    blocks: pl.DataFrame  # device, segment, size, requested_size, state, site
    traces: pl.DataFrame  # device, entry, action, size, time_us, device_free


def looks_like_snapshot(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts a pickle holding snapshot keys."""
    return head[:2] in PICKLE_PROTOCOLS and (b"segments" in head or b"total_size" in head or b"device_traces" in head)


def read(path: str | os.PathLike[str]) -> Snapshot:
    """Read and decode the snapshot file at ``path`` (raises :class:`FileFormatError` when it is not one)."""
    with open(path, "rb") as handle:
        return decode(handle.read())


def decode(data: bytes) -> Snapshot:
    """Decode snapshot bytes; :class:`FileFormatError` for anything that is not a snapshot's plain data."""
    if data[:2] not in PICKLE_PROTOCOLS:
        raise FileFormatError("not a pickle (a snapshot starts with the pickle protocol 2-5 marker)")
    loaded = _safe_pickle.loads(data)
    if isinstance(loaded, list):
        loaded = {"segments": loaded, "device_traces": []}
    if not isinstance(loaded, dict) or not isinstance(loaded.get("segments"), list):
        raise FileFormatError("the pickle holds no snapshot: expected a dict with a 'segments' list")
    traces = loaded.get("device_traces") or []
    if not isinstance(traces, list):
        raise FileFormatError("the snapshot's 'device_traces' is not a list")
    _check_reference_counts(loaded["segments"], traces, len(data))
    try:
        segments = pl.Series("segment", loaded["segments"], dtype=_SEGMENT, strict=False).to_frame()
        per_device = pl.Series("entries", traces, dtype=pl.List(_TRACE), strict=False).to_frame()
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError) as err:
        raise FileFormatError(f"the snapshot's segments or traces have an unexpected shape: {str(err).splitlines()[0][:160]}") from None
    return Snapshot(*_segment_frames(segments), _trace_frame(per_device))


def _check_reference_counts(segments: list, traces: list, size: int) -> None:
    limit = size * _REFERENCES_PER_BYTE + _REFERENCE_FLOOR

    def length(value: object) -> int:
        return len(value) if isinstance(value, list) else 0

    def refuse() -> None:
        raise FileFormatError("the snapshot references far more blocks, frames or trace entries than its size can hold")

    if sum(length(t) for t in traces) > limit:
        refuse()
    blocks = [b for s in segments if isinstance(s, dict) for b in (s["blocks"] if isinstance(s.get("blocks"), list) else ())]
    if len(blocks) > limit:
        refuse()
    stacks = [b.get(key) for b in blocks if isinstance(b, dict) for key in ("frames", "history")]
    if sum(map(length, stacks)) > limit:
        refuse()
    history_frames = (h.get("frames") for b in blocks if isinstance(b, dict) for h in (b.get("history") or ()) if isinstance(h, dict))
    if sum(map(length, history_frames)) > limit:
        refuse()


def _segment_frames(segments: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    table = segments.unnest("segment").with_row_index("segment").with_columns(pl.col("device").fill_null(0))
    blocks = (
        table.select("device", "segment", "blocks").explode("blocks").filter(pl.col("blocks").is_not_null()).unnest("blocks")
        .with_columns(frames=pl.when(pl.col("frames").list.len() > 0).then("frames").otherwise(pl.col("history").list.first().struct.field("frames")))
        .select("device", "segment", "size", "requested_size", "state", site=_site(pl.col("frames")))
    )
    return table.drop("blocks"), blocks


def _site(frames: pl.Expr) -> pl.Expr:
    """``file.py:line:function`` of the first user frame (else the first frame; else ``<no stack>``)."""
    def text(frame: pl.Expr) -> pl.Expr:
        name = frame.struct.field("filename").fill_null("??").str.extract(r"([^/\\]*)$", 1)
        return pl.format("{}:{}:{}", name, frame.struct.field("line").fill_null(0), frame.struct.field("name").fill_null("??"))

    user = frames.list.eval(pl.element().filter(~pl.element().struct.field("filename").fill_null("??").str.contains(_NOT_USER))).list.first()
    return pl.coalesce(text(user), text(frames.list.first()), pl.lit("<no stack>"))


def _trace_frame(per_device: pl.DataFrame) -> pl.DataFrame:
    return (
        per_device.with_row_index("device").with_columns(pl.col("device").cast(pl.Int64)).explode("entries")
        .filter(pl.col("entries").is_not_null()).unnest("entries").with_row_index("entry")
    )


# --- per-device summary --------------------------------------------------------------------------

SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "device": pl.Int64(),
    "segments": pl.Int64(),
    "reserved_bytes": pl.Int64(),
    "allocated_bytes": pl.Int64(),
    "active_bytes": pl.Int64(),
    "inactive_split_bytes": pl.Int64(),  # free blocks inside segments that also hold live ones: cannot be released
    "largest_free_block_bytes": pl.Int64(),
    "fragmentation": pl.Float64(),  # 1 - allocated / reserved
    "peak_allocated_bytes": pl.Int64(),  # highest allocated over the trace window (null without a trace)
    "oom_events": pl.Int64(),
    "requested_at_oom_bytes": pl.Int64(),  # the last OOM's request
    "device_free_at_oom_bytes": pl.Int64(),  # what CUDA still had free at the last OOM
    "last_time_us": pl.Int64(),  # the latest trace entry's time
    "top_sites": pl.List(pl.Struct({"frame": pl.String(), "bytes": pl.Int64(), "count": pl.Int64()})),
}


def summary(snapshot: Snapshot, top: int = TOP_SITES) -> pl.DataFrame:
    """One row per device that has segments or trace entries (``SUMMARY_SCHEMA``)."""
    blocks = snapshot.blocks
    live = blocks.filter(pl.col("state") == "active_allocated")
    by_segment = blocks.group_by("device", "segment").agg(
        allocated=pl.col("size").filter(pl.col("state") == "active_allocated").sum(),
        active=pl.col("size").filter(pl.col("state").is_in(ACTIVE_STATES)).sum(),
        free=pl.col("size").filter(pl.col("state") == "inactive").sum(),
        largest_free=pl.col("size").filter(pl.col("state") == "inactive").max(),
    )
    segments = snapshot.segments.join(by_segment, on=["device", "segment"], how="left").with_columns(
        allocated=pl.coalesce("allocated_size", "allocated", pl.lit(0)),
        active=pl.coalesce("active_size", "active", pl.lit(0)),
    )
    memory = segments.group_by("device").agg(
        segments=pl.len().cast(pl.Int64),
        reserved_bytes=pl.col("total_size").sum(),
        allocated_bytes=pl.col("allocated").sum(),
        active_bytes=pl.col("active").sum(),
        inactive_split_bytes=pl.col("free").filter(pl.col("active") > 0).sum(),
        largest_free_block_bytes=pl.col("largest_free").max(),
    )
    sites = _site_table(live, ["device"]).sort("bytes", "count", "frame", descending=[True, True, False]).group_by("device").agg(
        top_sites=pl.struct("frame", "bytes", "count").head(top)
    )
    devices = pl.concat([memory.select("device"), snapshot.traces.select("device")]).unique()
    joined = devices.join(memory, on="device", how="left").join(_trace_summary(snapshot.traces, memory), on="device", how="left")
    joined = joined.join(sites, on="device", how="left").with_columns(
        pl.col("segments", "reserved_bytes", "allocated_bytes", "active_bytes", "inactive_split_bytes").fill_null(0),
    ).with_columns(
        fragmentation=pl.when(pl.col("reserved_bytes") > 0).then(1 - pl.col("allocated_bytes") / pl.col("reserved_bytes")),
        top_sites=pl.col("top_sites").fill_null(pl.lit([], dtype=SUMMARY_SCHEMA["top_sites"])),
    )
    return schema.conform(joined, SUMMARY_SCHEMA).sort("device")


def _trace_summary(traces: pl.DataFrame, memory: pl.DataFrame) -> pl.DataFrame:
    """Peak allocation over the trace (replayed backwards from the allocation the segments show), OOMs, last time."""
    delta = (
        pl.when(pl.col("action") == "alloc").then(pl.col("size"))
        .when(pl.col("action") == "free_completed").then(-pl.col("size"))
        .otherwise(0).fill_null(0)
    )
    replay = traces.sort("device", "entry").join(memory.select("device", "allocated_bytes"), on="device", how="left").with_columns(
        running=delta.cum_sum().over("device")
    )
    start = pl.col("allocated_bytes").first().fill_null(0) - pl.col("running").last()
    oom = pl.col("action") == "oom"
    return replay.group_by("device").agg(
        peak_allocated_bytes=pl.max_horizontal(start, (pl.col("running") + start).max()),
        oom_events=oom.sum().cast(pl.Int64),
        requested_at_oom_bytes=pl.col("size").filter(oom).last(),
        device_free_at_oom_bytes=pl.col("device_free").filter(oom).last(),
        last_time_us=pl.col("time_us").max(),
    )


# --- allocation sites and what grew ----------------------------------------------------------------

SITES_SCHEMA: dict[str, pl.DataType] = {"frame": pl.String(), "bytes": pl.Int64(), "count": pl.Int64()}
DIFF_SCHEMA: dict[str, pl.DataType] = {
    "frame": pl.String(),
    "bytes_before": pl.Int64(),
    "bytes_after": pl.Int64(),
    "bytes_growth": pl.Int64(),
    "count_before": pl.Int64(),
    "count_after": pl.Int64(),
    "count_growth": pl.Int64(),
}


def _site_table(live: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return live.group_by(*keys, pl.col("site").alias("frame")).agg(bytes=pl.col("size").sum(), count=pl.len().cast(pl.Int64))


def sites(snapshot: Snapshot, device: int | None = None) -> pl.DataFrame:
    """Live bytes and block count per allocation site (``SITES_SCHEMA``), largest first."""
    live = snapshot.blocks.filter(pl.col("state") == "active_allocated")
    if device is not None:
        live = live.filter(pl.col("device") == device)
    table = _site_table(live, []).sort("bytes", "count", "frame", descending=[True, True, False])
    return schema.conform(table, SITES_SCHEMA)


def diff(
    before: Snapshot | str | os.PathLike[str],
    after: Snapshot | str | os.PathLike[str],
    *,
    device: int | None = None,
    top: int | None = None,
) -> pl.DataFrame:
    """How each allocation site's live bytes and blocks changed from ``before`` to ``after`` (``DIFF_SCHEMA``).

    Sorted by byte growth, largest first (sites that shrank come last); ``top`` keeps that many rows.
    """
    old = sites(before if isinstance(before, Snapshot) else read(before), device)
    new = sites(after if isinstance(after, Snapshot) else read(after), device)
    joined = old.join(new, on="frame", how="full", coalesce=True, suffix="_after").select(
        "frame",
        bytes_before=pl.col("bytes").fill_null(0),
        bytes_after=pl.col("bytes_after").fill_null(0),
        count_before=pl.col("count").fill_null(0),
        count_after=pl.col("count_after").fill_null(0),
    ).with_columns(
        bytes_growth=pl.col("bytes_after") - pl.col("bytes_before"),
        count_growth=pl.col("count_after") - pl.col("count_before"),
    )
    ordered = joined.sort("bytes_growth", "count_growth", "frame", descending=[True, True, False])
    return schema.conform(ordered.head(top) if top is not None else ordered, DIFF_SCHEMA)
