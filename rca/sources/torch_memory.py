"""PyTorch CUDA allocator state: ``_dump_snapshot`` pickles and ``torch.cuda.memory_summary()`` tables.

A snapshot pickle (read whole, safely, by :mod:`rca.snapshots`) gives one ``memory_snapshot``
event per device: ``mem_used_bytes`` allocated, ``mem_total_bytes`` reserved,
``mem_requested_bytes`` the request of the last OOM in the trace, and in ``attrs``
``snapshot_format="pickle"``, ``segments``, ``active_bytes``, ``inactive_split_bytes``,
``fragmentation`` (1 - allocated / reserved), ``largest_free_block_bytes``,
``peak_allocated_bytes`` (when the snapshot holds a trace), ``oom_events``,
``device_free_at_oom_bytes`` and ``top_sites`` (the ten allocation sites holding most live
bytes: ``{"frame": "file.py:123:fn", "bytes": N, "count": k}``). Its time is the latest trace
entry's ``time_us`` (``exact``), else the file's modification time (``file_mtime``); the file
counts as one line, covered by the first device's event.

A ``memory_summary()`` table (as torch/cuda/memory.py prints it: a title with the device,
the OOM and retry counts, then Cur/Peak/Tot Alloc/Tot Freed per metric) gives the same event
with ``snapshot_format="memory_summary"``: sizes are as printed (whole KiB/MiB/GiB, rounded
down), ``peak_allocated_bytes`` is the Peak column, and ``cuda_ooms`` / ``cudamalloc_retries``
come from its header. PyTorch before 2.0 prints its 1024-based sizes as "KB", "MB", "GB". A summary carries no
time: ``ts`` is the file's modification time, or the time of the stamped log line right above it (``inherited``).
The lines around the tables (the training log that printed them) are read by the pipeline source.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rca import schema, snapshots
from rca.sources import get, register
from rca.sources._base import ParseContext, Parsed, Source, attrs_json

TITLE = "PyTorch CUDA memory summary, device ID"
_TITLE_LINE = r"^\|\s*PyTorch CUDA memory summary, device ID (?P<device>[0-9]+)\s*\|$"
_BORDER_LINE = r"^\|[=-]{20,}\|$"
_OOM_LINE = r"CUDA OOMs: (?P<ooms>[0-9]+)\s*\|\s*cudaMalloc retries: (?P<retries>[0-9]+)"
_AMOUNT = r"\s*(?P<{0}>[0-9]+) (?P<{0}_unit>B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB|K|M)?\s*"
_ROW_LINE = rf"^\|\s*(?P<metric>[A-Z][A-Za-z -]*?)\s*\|{_AMOUNT.format('cur')}\|{_AMOUNT.format('peak')}\|"
# Sizes are 1024-based whatever their unit: PyTorch before 2.0 (and torch_npu's and IPEX's copies of its summary) print
# "KB", "MB", "GB"; counts take a decimal "K" or "M".
_UNITS = {
    "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50,
    "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40, "PB": 2**50, "K": 10**3, "M": 10**6,
}
# The summary's row names -> attribute (the Cur column); Allocated and reserved go to the mem_* columns.
_ROWS = {
    "Allocated memory": "allocated",
    "Active memory": "active_bytes",
    "Requested memory": "requested_bytes",
    "GPU reserved memory": "reserved",
    "Non-releasable memory": "inactive_split_bytes",
    "Allocations": "allocations",
    "Active allocs": "active_allocs",
    "GPU reserved segments": "segments",
    "Non-releasable allocs": "inactive_split_allocs",
    "Oversize allocations": "oversize_allocations",
    "Oversize GPU segments": "oversize_segments",
}
_EPOCH_2001_US = 978_307_200_000_000  # earlier time_us values count from something other than the Unix epoch


def sniff(head: Sequence[str]) -> float:
    """0.95 when the head holds a memory_summary() title."""
    return 0.95 if any(TITLE in line for line in head) else 0.0


def sniff_bytes(head: bytes) -> float:
    """0.95 for a pickle that holds snapshot keys."""
    return 0.95 if snapshots.looks_like_snapshot(head) else 0.0


# --- _dump_snapshot pickles ------------------------------------------------------------------------


def parse_bytes(data: bytes, ctx: ParseContext) -> Parsed:
    """One event per device of the snapshot (raises FileFormatError for a pickle that is not plain snapshot data)."""
    devices = snapshots.summary(snapshots.decode(data))
    if devices.height == 0:
        return Parsed(events=schema.empty(schema.EVENT_SCHEMA), skipped={"empty snapshot": 1})
    timed = pl.col("last_time_us") >= _EPOCH_2001_US
    mtime = pl.lit(ctx.reference_time, schema.UTC_MICROS)
    first = pl.int_range(pl.len()) == 0
    events = devices.select(
        line=pl.lit(1, pl.Int64),
        n_lines=pl.when(first).then(1).otherwise(0).cast(pl.Int32),
        ts=pl.when(timed).then(pl.col("last_time_us").cast(schema.UTC_MICROS)).otherwise(mtime),
        ts_quality=pl.when(timed).then(pl.lit("exact")).otherwise(pl.lit("file_mtime" if ctx.reference_time else "missing")),
        kind=pl.lit("memory_snapshot"),
        format=pl.lit("pickle"),
        severity=pl.when(pl.col("oom_events") > 0).then(pl.lit("warning")).otherwise(pl.lit("info")),
        gpu_index=pl.col("device").cast(pl.Int32, strict=False),
        mem_used_bytes="allocated_bytes",
        mem_total_bytes="reserved_bytes",
        mem_requested_bytes="requested_at_oom_bytes",
        message=_message(pl.lit("snapshot"), pl.col("device"), pl.col("allocated_bytes"), pl.col("reserved_bytes"),
                         pl.col("top_sites").list.first().struct.field("frame")),
        attrs=attrs_json({
            "snapshot_format": pl.lit("pickle"),
            "segments": pl.col("segments"),
            "active_bytes": pl.col("active_bytes"),
            "inactive_split_bytes": pl.col("inactive_split_bytes"),
            "fragmentation": pl.col("fragmentation").round(4),
            "largest_free_block_bytes": pl.col("largest_free_block_bytes"),
            "peak_allocated_bytes": pl.col("peak_allocated_bytes"),
            "oom_events": pl.col("oom_events"),
            "device_free_at_oom_bytes": pl.col("device_free_at_oom_bytes"),
            "top_sites": pl.col("top_sites"),
        }),
    )
    return Parsed(events=events)


def _message(what: pl.Expr, device: pl.Expr, allocated: pl.Expr, reserved: pl.Expr, site: pl.Expr) -> pl.Expr:
    mib = 2**20
    head = pl.format("{} device {}: allocated {} MiB of {} MiB reserved", what, device, (allocated / mib).round(1), (reserved / mib).round(1))
    return pl.concat_str([head, pl.format("top site {}", site)], separator=", ", ignore_nulls=True)


# --- memory_summary() tables -------------------------------------------------------------------------


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """One event per summary table; the lines around the tables are the pipeline source's to read.

    A table is the run of boxed lines ("|…|") from its title on. The program that printed it wrote the
    rest (fairseq's and ComfyUI's out-of-memory handlers print the summary right under the CUDA OOM):
    those lines are read as the pipeline source reads a training log, and labelled with its name.
    """
    text = pl.col("text").str.strip_chars()
    is_title = text.str.contains(_TITLE_LINE)
    is_border = text.str.contains(_BORDER_LINE)
    opens = (is_border & is_title.shift(-1, fill_value=False)) | (is_title & ~is_border.shift(1, fill_value=False))
    boxed = text.str.starts_with("|") & text.str.ends_with("|")
    framed = lines.with_columns(opens=opens.cast(pl.Int32), boxed=boxed).with_columns(
        table=pl.col("opens").cum_sum(), run=(~pl.col("boxed")).cum_sum()
    ).with_columns(in_table=pl.col("boxed") & (pl.col("opens").cum_sum().over("run") > 0))
    tables = framed.filter(pl.col("in_table")).with_columns(text=text)
    loose = framed.filter(~pl.col("in_table")).drop("opens", "boxed", "table", "run", "in_table")
    summaries = _summaries(tables, ctx) if tables.height else None
    if not loose.height:
        return Parsed(events=schema.empty(schema.EVENT_SCHEMA) if summaries is None else summaries)
    around = get("pipeline").parse(loose, ctx)
    logged = around.events.with_columns(source=pl.lit("pipeline"))
    if summaries is None:
        return Parsed(events=logged, skipped=around.skipped)
    return Parsed(events=pl.concat([_timed_by_the_line_above(summaries, logged), logged], how="diagonal_relaxed").sort("line"),
                  skipped=around.skipped)


def _timed_by_the_line_above(summaries: pl.DataFrame, logged: pl.DataFrame) -> pl.DataFrame:
    """A table right under a stamped log line takes that line's time: a logger's call that printed it (fairseq's
    ``logger.warning(torch.cuda.memory_summary())`` stamps the table's first border) or the line just before it."""
    above = logged.filter(pl.col("ts").is_not_null()).select(
        line=pl.col("line") + pl.col("n_lines"), above_ts="ts", above_quality="ts_quality"
    )
    stamped = pl.col("above_ts").is_not_null()
    return summaries.join(above, on="line", how="left").with_columns(
        ts=pl.coalesce("above_ts", "ts"),
        ts_quality=pl.when(stamped & (pl.col("above_quality") == "exact")).then(pl.lit("inherited"))
        .when(stamped).then(pl.col("above_quality")).otherwise(pl.col("ts_quality")),
    ).drop("above_ts", "above_quality")


def _summaries(tables: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    row = pl.col("text").str.extract_groups(_ROW_LINE).struct

    def amount(column: str) -> pl.Expr:
        unit = row.field(f"{column}_unit").fill_null("B").replace_strict(_UNITS, default=1, return_dtype=pl.Int64)
        return row.field(column).cast(pl.Int64, strict=False) * unit

    rows = tables.with_columns(metric=row.field("metric"), cur=amount("cur"), peak=amount("peak"))
    oom = pl.col("text").str.extract_groups(_OOM_LINE).struct

    def cur(name: str) -> pl.Expr:
        return pl.col("cur").filter(pl.col("metric") == name).first()

    merged = rows.group_by("table", maintain_order=True).agg(
        line=pl.col("line").min(),
        n_lines=pl.len().cast(pl.Int32),
        device=pl.col("text").str.extract(_TITLE_LINE, 1).drop_nulls().first().cast(pl.Int32, strict=False),
        cuda_ooms=oom.field("ooms").drop_nulls().first().cast(pl.Int64, strict=False),
        cudamalloc_retries=oom.field("retries").drop_nulls().first().cast(pl.Int64, strict=False),
        peak_allocated_bytes=pl.col("peak").filter(pl.col("metric") == "Allocated memory").first(),
        **{attr: cur(name) for name, attr in _ROWS.items()},
    )
    allocated, reserved = pl.col("allocated"), pl.col("reserved")
    return merged.select(
        "line", "n_lines",
        ts=pl.lit(ctx.reference_time, schema.UTC_MICROS),
        ts_quality=pl.lit("file_mtime" if ctx.reference_time else "missing"),
        kind=pl.lit("memory_snapshot"),
        format=pl.lit("memory_summary"),
        severity=pl.when(pl.col("cuda_ooms") > 0).then(pl.lit("warning")).otherwise(pl.lit("info")),
        gpu_index=pl.col("device"),
        mem_used_bytes=allocated,
        mem_total_bytes=reserved,
        message=_message(pl.lit("memory_summary"), pl.col("device"), allocated, reserved, pl.lit(None, pl.String)),
        attrs=attrs_json({
            "snapshot_format": pl.lit("memory_summary"),
            "segments": pl.col("segments"),
            "active_bytes": pl.col("active_bytes"),
            "inactive_split_bytes": pl.col("inactive_split_bytes"),
            "requested_bytes": pl.col("requested_bytes"),
            "fragmentation": pl.when(reserved > 0).then((1 - allocated / reserved).round(4)),
            "peak_allocated_bytes": pl.col("peak_allocated_bytes"),
            "allocations": pl.col("allocations"),
            "cuda_ooms": pl.col("cuda_ooms"),
            "cudamalloc_retries": pl.col("cudamalloc_retries"),
        }),
    )


SOURCE = register(
    Source(
        name="torch_memory",
        sniff=sniff,
        parse=parse,
        sniff_literals=(TITLE,),
        formats=("pickle", "memory_summary"),
        sniff_bytes=sniff_bytes,
        parse_bytes=parse_bytes,
    )
)
