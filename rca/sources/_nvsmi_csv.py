"""``nvidia-smi --query-gpu=… / --query-compute-apps=… --format=csv[,noheader][,nounits]``.

Any column subset and order: a header line names the columns of the rows under it, until
the next header (loops and scripts repeat it), and only a row with as many cells; its cells
are what lies between its commas, since nvidia-smi quotes none. A row with a header-less layout is recognised only when it
matches one of a few column orders published by NVIDIA and common tools
(:data:`NOHEADER_LAYOUTS`); any other header-less row stays ``kind=log``, with the GPU UUID,
bus id and timestamp read from the cells that have their unmistakable shapes.

A block whose columns include ``pid`` is per-process (``gpu_process``); one with memory,
utilization or similar per-GPU columns is ``gpu_sample``; anything else (retired pages)
is ``log`` with its fields in ``attrs`` (a page retired for a double bit ECC error a warning, for multiple single bit ones info).
"""

from __future__ import annotations

import polars as pl

from rca import schema, timeutil
from rca.sources._base import ParseContext, Parsed, map_distinct
from rca.sources._nvsmi_common import attrs_json, conform_events, integer, known, log_rows, number, quality, recovery_needed, to_bytes

FORMAT = "query_csv"

# A header cell: a field name with an optional "[unit]" (cells are split on commas, so none inside).
_FIELD = r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*(?:\s*\[[^\],]+\])?"
_DOTTED_PREFIXES = (
    "pci", "pcie", "memory", "utilization", "temperature", "power", "enforced", "clocks", "clocks_throttle_reasons",
    "clocks_event_reasons", "clocks_event_reasons_counters", "fan", "ecc", "retired_pages", "remapped_rows", "mig",
    "inforom", "accounting", "driver_model", "gom", "encoder", "gsp", "protected_memory", "fabric", "platform", "module",
    "power_smoothing", "dramEncryption", "vgpu_driver_capability", "vgpu_device_capability", "c2c",
)
_GPU_SPECIFIC = (
    "uuid", "gpu_uuid", "gpu_bus_id", "gpu_name", "gpu_serial", "used_gpu_memory", "used_memory", "process_name",
    "driver_version", "pstate", "vbios_version", "compute_mode", "persistence_mode", "compute_cap", "max_memory_usage",
    "gpu_recovery_action",
)
# Substrings one of which every header holds: the sniff's cheap pre-test (a header may name no memory or
# utilization column: "index, name, fabric.state, fabric.status").
HEADER_LITERALS = (*(f"{prefix}." for prefix in _DOTTED_PREFIXES), *_GPU_SPECIFIC)
_DOTTED = rf"(?:{'|'.join(_DOTTED_PREFIXES)})\.[A-Za-z0-9_.]+(?:\s*\[[^\],]+\])?"
_SPECIFIC = rf"(?:{'|'.join(_GPU_SPECIFIC)})(?:\s*\[[^\],]+\])?"
# Whole-line forms, so a line is tested without splitting it: every cell a field name, some cell GPU-specific.
HEADER_SHAPE = rf"^\s*{_FIELD}\s*(?:,\s*{_FIELD}\s*)*$"
_SOME_SPECIFIC = rf"(?:^|,)\s*(?:{_DOTTED}|{_SPECIFIC})\s*(?:,|$)"

# Column spellings that name the same quantity; the header always prints the canonical one,
# hand-written headers of wrapper scripts sometimes the alias.
_ALIASES = {"gpu_name": "name", "gpu_bus_id": "pci.bus_id", "gpu_uuid": "uuid", "gpu_serial": "serial", "gpu_index": "index"}

_SAMPLE_COLUMNS = ("memory.", "utilization.", "temperature.", "power.", "clocks.", "fan.", "pstate", "index")

_VALUE = {
    "timestamp": r"[0-9]{4}/[0-9][0-9]/[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?",
    "name": r"[^,]*[A-Za-z][^,]*",
    "pci.bus_id": r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]",
    "uuid": r"GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}",
    "driver_version": r"[0-9]+\.[0-9]+(?:\.[0-9]+)?",
    "pstate": r"P[0-9]{1,2}",
    "index": r"[0-9]+",
    "pid": r"[0-9]+",
    # Not starting with a digit: "0, 100 MiB, 81559 MiB" (index, memory.used, memory.total) is no process row.
    "process_name": r"[^,\s0-9][^,]*",
    "gpu_serial": r"[^,]+",
    "display_active": r"Enabled|Disabled",
    "display_mode": r"Enabled|Disabled",
    "memory": r"[0-9]+ MiB",
    "memory_nounits": r"[0-9]+",
    "percent": r"[0-9]+ %",
    "percent_nounits": r"[0-9]+",
    "integer": r"[0-9]+",
}

# Header-less column orders that are recognisable from the values alone: each layout pins
# at least a timestamp, a bus id or a UUID, so a stray comma-separated line never matches.
NOHEADER_LAYOUTS: dict[str, tuple[tuple[str, str], ...]] = {
    # NVIDIA's "Useful nvidia-smi queries" logging example, with units.
    "nvidia_kb_logging": (
        ("timestamp", "timestamp"), ("name", "name"), ("pci.bus_id", "pci.bus_id"), ("driver_version", "driver_version"),
        ("pstate", "pstate"), ("pcie.link.gen.max", "integer"), ("pcie.link.gen.current", "integer"),
        ("temperature.gpu", "integer"), ("utilization.gpu [%]", "percent"), ("utilization.memory [%]", "percent"),
        ("memory.total [MiB]", "memory"), ("memory.free [MiB]", "memory"), ("memory.used [MiB]", "memory"),
    ),
    # GPUtil's query (noheader, nounits).
    "gputil": (
        ("index", "index"), ("uuid", "uuid"), ("utilization.gpu [%]", "percent_nounits"),
        ("memory.total [MiB]", "memory_nounits"), ("memory.used [MiB]", "memory_nounits"),
        ("memory.free [MiB]", "memory_nounits"), ("driver_version", "driver_version"), ("name", "name"),
        ("gpu_serial", "gpu_serial"), ("display_active", "display_active"), ("display_mode", "display_mode"),
        ("temperature.gpu", "integer"),
    ),
    # gpustat's query before it moved to NVML (noheader, nounits), the command many bug reports paste.
    "gpustat": (
        ("index", "index"), ("uuid", "uuid"), ("name", "name"), ("temperature.gpu", "integer"),
        ("utilization.gpu [%]", "percent_nounits"), ("memory.used [MiB]", "memory_nounits"), ("memory.total [MiB]", "memory_nounits"),
    ),
    # The usual per-process check, with units (without them it is three bare numbers and a name).
    "compute_apps_basic": (("pid", "pid"), ("process_name", "process_name"), ("used_memory [MiB]", "memory")),
}


def _layout_pattern(columns: tuple[tuple[str, str], ...]) -> str:
    cell = r"(?:{}|\[[^\],]*\])"
    return r"^\s*" + r",\s*".join(cell.format(_VALUE[kind]) for _, kind in columns) + r"\s*$"


_LAYOUT_PATTERNS = {name: _layout_pattern(columns) for name, columns in NOHEADER_LAYOUTS.items()}


def _cell(value: str) -> str:
    """A whole cell holding ``value`` (captured as group 1)."""
    return rf"(?:^|,)\s*({value})\s*(?:,|$)"


# A header-less row of any other column order names its GPU by a cell only a GPU UUID or a
# bus id looks like; of it only those and a timestamp cell are read (which figure is used,
# free or total memory is unknowable without the header).
IDENTIFIED_ROW = rf"^\s*(?:{_VALUE['uuid']}|{_VALUE['pci.bus_id']})\s*,|,\s*(?:{_VALUE['uuid']}|{_VALUE['pci.bus_id']})\s*(?:,|$)"
IDENTIFIED = "identified"
LAYOUT_PATTERNS = tuple(_LAYOUT_PATTERNS.values())


def header_expr(text: pl.Expr) -> pl.Expr:
    """Whether a line is a ``--format=csv`` header: every cell a field name, one of them GPU-specific."""
    return text.str.contains(HEADER_SHAPE) & text.str.contains(_SOME_SPECIFIC) & text.str.contains(r"[A-Za-z]")


def noheader_layout_expr(text: pl.Expr) -> pl.Expr:
    """The name of the one header-less layout a line matches, else null."""
    matches = [pl.when(text.str.contains(pattern)).then(pl.lit(name)) for name, pattern in _LAYOUT_PATTERNS.items()]
    count = pl.sum_horizontal([m.is_not_null().cast(pl.Int32) for m in matches])
    return pl.when(count == 1).then(pl.coalesce(matches))


def identified_expr(text: pl.Expr) -> pl.Expr:
    """Whether a line is a CSV row with a cell only a GPU UUID or bus id looks like (:data:`IDENTIFIED` rows)."""
    return text.str.contains(IDENTIFIED_ROW)


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Parse CSV query output; rows that fit no header or layout are kept as ``kind=log``.

    ``lines`` come cut by :mod:`rca.sources.nvidia_smi`: ``segment`` numbers the runs of
    CSV lines, and ``csv_header`` / ``csv_layout`` hold :func:`header_expr` and
    :func:`noheader_layout_expr` of each line (computed there on the few lines that can match).
    """
    rows = _assign_columns(lines)
    unread = rows.filter(pl.col("columns").is_null() & ~pl.col("is_header"))
    parts = [_identified(unread, ctx)]
    for (columns,), group in rows.filter(pl.col("columns").is_not_null()).group_by("columns", maintain_order=True):
        fields = _field_names(columns)
        parts.append(_events(group.hstack(_read(group, [name for name, _ in fields])), fields, ctx))
    headers = rows.filter(pl.col("is_header"))
    events = pl.concat([conform_events(part) for part in parts])
    return Parsed(events=events, skipped={"header": headers.height} if headers.height else {}, skipped_by_file=_headers_by_file(headers))


def _identified(rows: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Rows no header describes, as log lines; of a row that names its GPU, its UUID, bus id and time."""
    named = pl.col("layout") == IDENTIFIED

    def cell(value: str) -> pl.Expr:
        return pl.when(named).then(pl.col("text").str.extract(_cell(value), 1))

    cells = rows.with_columns(stamp=cell(_VALUE["timestamp"]))
    ts = map_distinct(cells["stamp"], lambda text: timeutil.iso_to_utc(text, ctx.tz))
    return log_rows(
        cells.with_columns(ts=ts),
        FORMAT,
        ts=pl.col("ts"),
        ts_raw=pl.col("stamp"),
        ts_quality=quality(pl.col("ts"), "exact"),
        gpu_uuid=cell(_VALUE["uuid"]),
        pci_bus=cell(_VALUE["pci.bus_id"]),
    )


def _headers_by_file(headers: pl.DataFrame) -> dict[int, dict[str, int]] | None:
    """Of the lines of several files, each file's header lines."""
    if "batch_file" not in headers.columns:
        return None
    counts = headers.group_by("batch_file").len()
    return {number: {"header": count} for number, count in counts.iter_rows()}


def _assign_columns(lines: pl.DataFrame) -> pl.DataFrame:
    """Give each data row the header text that describes it (a real header or a layout's).

    A header reaches down to the end of its segment only: after another sub-format's
    output, rows must bring their own header (or a recognisable layout).
    """
    text = pl.col("text")
    cells = text.str.count_matches(",") + 1
    marked = lines.rename({"csv_header": "is_header", "csv_layout": "layout"}).with_columns(cells=cells, block=pl.col("segment"))
    header = pl.when(pl.col("is_header")).then(text.str.strip_chars()).forward_fill().over("block")
    header_cells = pl.when(pl.col("is_header")).then(pl.col("cells")).forward_fill().over("block")
    under_header = marked.with_columns(header=header, header_cells=header_cells)
    layout_header = pl.col("layout").replace_strict(
        {name: ", ".join(col for col, _ in cols) for name, cols in NOHEADER_LAYOUTS.items()}, default=None, return_dtype=pl.String
    )
    fits_header = ~pl.col("is_header") & (pl.col("cells") == pl.col("header_cells"))
    return under_header.with_columns(
        columns=pl.when(fits_header).then(pl.col("header")).when(~pl.col("is_header")).then(layout_header)
    )


def _field_names(header: str) -> list[tuple[str, str | None]]:
    """``memory.used [MiB]`` → ("memory.used", "MiB"), aliases canonical, repeats numbered."""
    fields: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for cell in header.split(","):
        name, _, unit = cell.strip().partition("[")
        name = _ALIASES.get(name.strip(), name.strip())
        unique = name
        while unique in seen:
            unique = f"{unique}_"
        seen.add(unique)
        fields.append((unique, unit.rstrip("]").strip() or None))
    return fields


def _read(group: pl.DataFrame, names: list[str]) -> pl.DataFrame:
    """The rows' cells as string columns named ``names`` (stripped, an empty cell null).

    Every row of a group has that many cells (:func:`_assign_columns`, and no layout's cell
    holds a comma), so splitting the column at its commas is the whole read: a third of the
    cost of joining the rows and reading them back as CSV.
    """
    columns = [f"v:{name}" for name in names]
    cells = group.select(pl.col("text").str.split_exact(",", len(names) - 1).struct.rename_fields(columns)).unnest("text")
    return cells.select(pl.all().str.strip_chars().replace("", None))


# Per-GPU columns that have a column of their own in the event schema, or a common attrs key.
_SCHEMA_FIELDS = {"timestamp", "index", "uuid", "pci.bus_id", "memory.used", "memory.total", "utilization.gpu", "pid",
                  "process_name", "used_memory", "used_gpu_memory"}
_NAMED_ATTRS = {
    "name": ("name", "text"), "temperature.gpu": ("temp_c", "number"), "power.draw": ("power_w", "number"),
    "power.limit": ("power_cap_w", "number"), "pstate": ("pstate", "text"), "fan.speed": ("fan_pct", "number"),
    "persistence_mode": ("persistence", "text"), "driver_version": ("driver", "text"),
    "memory.free": ("mem_free_bytes", "bytes"), "memory.reserved": ("mem_reserved_bytes", "bytes"),
    "max_memory_usage": ("max_memory_bytes", "bytes"), "type": ("type", "text"),
    "utilization.memory": ("mem_util_pct", "number"),  # as dmon's "mem" column
    # --query-accounted-apps: a process's share of time with a kernel running / memory busy over its life, and that life.
    "gpu_utilization": ("gpu_util_pct", "number"), "mem_utilization": ("mem_util_pct", "number"), "time": ("time_ms", "number"),
    "fabric.state": ("fabric_state", "text"), "fabric.status": ("fabric_status", "text"),  # as -q's
    # Later spellings of a reading -q also falls back to (Instantaneous / Average Power Draw, the enforced limit):
    # the first one a header holds names it.
    "power.draw.instant": ("power_w", "number"), "power.draw.average": ("power_w", "number"),
    "enforced.power.limit": ("power_cap_w", "number"), "temperature.memory": ("mem_temp_c", "number"),  # dmon's mtemp
    # Clocks in MHz under dmon's names (pclk: SM, mclk: memory) and -ac's (the applications clocks it sets).
    "clocks.current.sm": ("pclk_mhz", "number"), "clocks.sm": ("pclk_mhz", "number"),
    "clocks.current.memory": ("mclk_mhz", "number"), "clocks.mem": ("mclk_mhz", "number"),
    "clocks.current.graphics": ("gr_clock_mhz", "number"), "clocks.gr": ("gr_clock_mhz", "number"),
    "clocks.current.video": ("video_clock_mhz", "number"), "clocks.video": ("video_clock_mhz", "number"),
    "clocks.max.sm": ("max_pclk_mhz", "number"), "clocks.max.memory": ("max_mclk_mhz", "number"),
    "clocks.max.mem": ("max_mclk_mhz", "number"), "clocks.max.graphics": ("max_gr_clock_mhz", "number"),
    "clocks.max.gr": ("max_gr_clock_mhz", "number"),
    "clocks.applications.memory": ("app_clocks_mem_mhz", "number"), "clocks.applications.mem": ("app_clocks_mem_mhz", "number"),
    "clocks.applications.graphics": ("app_clocks_sm_mhz", "number"), "clocks.applications.gr": ("app_clocks_sm_mhz", "number"),
}


# A hardware slowdown as each spelling of the query names it: the umbrella flag and the two causes nvidia-smi lists
# under it (a query may ask for a cause alone), in the 535+ "event" and the older "throttle" names.
_HW_SLOWDOWN_FLAGS = tuple(
    f"{prefix}.{reason}"
    for prefix in ("clocks_event_reasons", "clocks_throttle_reasons")
    for reason in ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown")
)
# The reasons as one bitmask ("0x0000000000000048"); nvml.h's HW Slowdown 0x8, HW Thermal 0x40, HW Power Brake 0x80.
_REASON_MASKS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")
_HW_SLOWDOWN_BITS = 0x08 | 0x40 | 0x80
# Per-location uncorrected counters (dram, sram, device_memory, l2_cache, ...) stand for the total when it is not asked for.
_UNCORRECTED_VOLATILE = "ecc.errors.uncorrected.volatile."


def _hw_slowdown_bits(mask: pl.Expr) -> pl.Expr:
    """Whether a clocks-reasons bitmask has a hardware slowdown bit set (null where it is no hex number)."""
    return (mask.str.strip_prefix("0x").str.to_integer(base=16, strict=False) & _HW_SLOWDOWN_BITS) != 0


def _events(rows: pl.DataFrame, fields: list[tuple[str, str | None]], ctx: ParseContext) -> pl.DataFrame:
    units = dict(fields)

    def value(name: str) -> pl.Expr:
        return known(pl.col(f"v:{name}")) if name in units else pl.lit(None, pl.String)

    def memory(name: str) -> pl.Expr:
        return to_bytes(value(name), units.get(name) or "MiB")

    def converted(name: str, how: str) -> pl.Expr:
        return {"text": value(name), "number": number(value(name)), "bytes": memory(name)}[how]

    names = set(units)
    per_process = "pid" in names
    per_gpu = any(n.startswith(_SAMPLE_COLUMNS) for n in names)
    kind = "gpu_process" if per_process else "gpu_sample" if per_gpu else "log"
    stamp = value("timestamp")
    if "timestamp" in units:
        rows = rows.with_columns(ts=map_distinct(rows.select(stamp).to_series(), lambda text: timeutil.iso_to_utc(text, ctx.tz)))
    else:  # a query without one (the usual one-off listing of several GPUs) has no time
        rows = rows.with_columns(ts=pl.lit(None, schema.UTC_MICROS))
    ts = pl.col("ts")
    # --query-remapped-rows: a failed remap means the GPU is to be replaced; a pending one that it needs a reset.
    # fabric.state / fabric.status as in -q (gpu_health): a GPU of an NVLink fabric the fabric manager has not
    # registered yet cannot run CUDA; one it finished registering without success never will.
    # A bracketed cell is what NVML answered instead of a reading: a GPU that is lost or needs a reset
    # is failing; an unknown error (a fan, a power sensor) is worth a look. As in -q, a page pending
    # retirement, an uncorrectable ECC error since the driver loaded (the total or any location's count), a
    # hardware slowdown (clocks held down by heat or a power brake: a flag, or its bit in the reasons mask) or a
    # reset (driver 570+: any gpu_recovery_action but None) the driver asks for are warnings too.
    text = pl.col("text")
    needs_care = pl.any_horizontal(
        value("remapped_rows.pending") == "Yes", value("retired_pages.pending") == "Yes",
        *(number(value(name)) > 0 for name in names if name.startswith(_UNCORRECTED_VOLATILE)),
        *(value(name) == "Active" for name in _HW_SLOWDOWN_FLAGS), *(_hw_slowdown_bits(value(name)) for name in _REASON_MASKS),
        value("reset_status.reset_required") == "Yes", value("reset_status.drain_and_reset_recommended") == "Yes",
        recovery_needed(value("gpu_recovery_action")),
        text.str.contains("[Unknown Error]", literal=True), value("fabric.state").is_in(["Not Started", "In Progress"]),
    )
    fabric_failed = (value("fabric.state") == "Completed") & (value("fabric.status") != "Success")
    # --query-retired-pages: a page retired for a double bit ECC error lost data there (uncorrectable), a warning about
    # its GPU; one retired for multiple single bit errors was corrected each time and is the driver's routine
    # prevention, a fact (info), as -q's retired-page counts are no problem until they near the GPU's limit.
    retired_for = value("retired_pages.cause").str.to_lowercase()
    severity = (
        pl.when((value("remapped_rows.failure") == "Yes") | fabric_failed | text.str.contains_any(["[GPU is lost]", "[GPU requires reset]"]))
        .then(pl.lit("error"))
        .when(needs_care | retired_for.str.contains("double bit", literal=True)).then(pl.lit("warning"))
        .when(retired_for.str.contains("single bit", literal=True)).then(pl.lit("info"))
        .otherwise(pl.lit("info" if kind != "log" else None, pl.String))
    )
    readings: dict[str, list[pl.Expr]] = {}
    for name, (key, how) in _NAMED_ATTRS.items():
        if name in names:
            readings.setdefault("gpu_name" if per_process and key == "name" else key, []).append(converted(name, how))
    named = {key: pl.coalesce(exprs) for key, exprs in readings.items()}
    raw = {name: value(name) for name in units if name not in _SCHEMA_FIELDS and name not in _NAMED_ATTRS}
    return rows.select(
        "line",
        n_lines=pl.lit(1, pl.Int32),
        kind=pl.lit(kind),
        severity=severity,
        message=pl.col("text").str.strip_chars(),
        format=pl.lit(FORMAT),
        ts=ts,
        ts_raw=stamp,
        ts_quality=quality(ts, "exact"),
        gpu_index=integer(value("index")),
        gpu_uuid=value("uuid"),
        pci_bus=value("pci.bus_id"),
        pid=integer(value("pid")).cast(pl.Int64),
        process=value("process_name"),
        mem_used_bytes=pl.coalesce(memory("memory.used"), memory("used_gpu_memory"), memory("used_memory")),
        mem_total_bytes=memory("memory.total"),
        gpu_util_pct=number(value("utilization.gpu")),
        attrs=attrs_json(**{**raw, **named}),
    )
