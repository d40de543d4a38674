"""``nvidia-smi -q`` text: ``==NVSMI LOG==`` documents of indented ``Key : Value`` lines.

Every line gets its section path from the indentation (``FB Memory Usage/Used``,
``GPU Power Readings/Current Power Limit``) by forward-filling the title seen at each
indent level, so a field is found by path whatever the driver version puts around it.
A GPU block (``GPU 00000000:01:00.0`` … next top-level line) is one ``gpu_sample``; its
``MIG Device`` blocks are ``gpu_sample`` rows with ``attrs.mig_device`` (as in the table);
each record under ``Processes`` (and ``-d ACCOUNTING``'s ``Accounted Processes``) is one ``gpu_process``. An excerpt pasted without the banner
(from its ``Timestamp`` line on, ``[...]`` where lines were cut) reads the same; so does one cut below the
timestamp (from ``Driver Version`` or ``Attached GPUs`` on), without a time of its own, and one
cut to GPU blocks (from a ``GPU 00000000:02:00.0`` line on). A health section grepped out of a report
(``Fabric``, ``Remapped Rows``, ``Clocks Event Reasons``, ``GPU Reset Status``, without its GPU line) is a block of its own. A GPU without ``Minor Number`` takes
its index from its order only under a report's head: in a cut to GPU blocks the order tells nothing.
"""

from __future__ import annotations

import polars as pl

from rca.sources._base import ParseContext, Parsed
from rca.sources._nvsmi_common import (
    CTIME_PATTERN,
    UNKNOWN_ERROR,
    attrs_json,
    conform_events,
    ctime_to_utc,
    gpu_health,
    integer,
    known,
    log_rows,
    number,
    quality,
    to_bytes,
)

FORMAT = "query_text"

# A report pasted into docs or a notebook's output keeps their indent: its lines are read relative to the banner's.
BANNER_LINE = r"^[ \t]*=+NVSMI LOG=+\s*$"
# The first line under the banner; an excerpt pasted without the banner starts with it.
STAMP_LINE = rf"^[ \t]*Timestamp\s+:\s+{CTIME_PATTERN}\s*$"
# The lines under it, which only -q prints at its left margin: an excerpt cut below the timestamp (to hide the
# date, or a forum post's tail of a long report) starts with one of them.
HEAD_LINE = r"^[ \t]*(?:Driver Version|KMD Version|Attached GPUs)\s+:\s+\S"
GPU_LINE = r"^[ \t]*GPU\s+(?<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$"
# A GPU block's health section titles that ``nvidia-smi -q | grep -A4 Fabric`` (or ``-C3 CliqueId``, ``-A3 "Remapped Rows"``,
# ``-A8 "Clocks Throttle"``, ``-A3 "Reset Status"``: its two fields and the GPU Recovery Action under them) keeps without the GPU
# line above them: such a fragment is read as a block of its own. A section is a field of the GPU
# block, four columns in; a fragment pasted flush left is read as if it were (its margin is four less).
SECTION_LINE = r"^[ \t]*(?:Fabric|Remapped Rows|Clocks (?:Event|Throttle) Reasons|GPU Reset Status)\s*$"
# ``-q -d MEMORY`` trimmed to its readings (a post's "trimmed" output): the memory section without the GPU line above it.
# A MIG device block nests the same title deeper, so only a title above any GPU line or report head is a fragment's.
MEMORY_SECTION_LINE = r"^[ \t]*FB Memory Usage\s*$"
_SECTION_INDENT = 4
_KEY_VALUE = r"^(?<key>[^:]*?\S)\s*:(?:\s+(?<value>.*?))?\s*$"
# The report's head fields at its left margin (drivers 610+ add KMD / CUDA UMD versions; `-q --unit` counts units). Any other line there
# outside a GPU block is nvidia-smi's own complaint ("Unable to determine the device handle for GPU1: …"), a log row.
_HEAD_KEYS = ("Timestamp", "Driver Version", "KMD Version", "CUDA Version", "CUDA UMD Version", "Attached GPUs", "Attached Units")
_LEVELS = (4, 8, 12, 16, 20)
_RECORD_KEYS = ["doc", "gpu"]

_GPU_FIELDS = {
    "name": ["Product Name"],
    "used": ["FB Memory Usage/Used"],
    "total": ["FB Memory Usage/Total"],
    "free": ["FB Memory Usage/Free"],
    "reserved": ["FB Memory Usage/Reserved"],
    "util": ["Utilization/GPU", "Utilization/Gpu"],
    # Drivers before ~340 print the reading as "Temperature/Gpu : 49 C".
    "temp": ["Temperature/GPU Current Temp", "Temperature/Gpu"],
    "power": ["GPU Power Readings/Power Draw", "GPU Power Readings/Average Power Draw",
              "GPU Power Readings/Instantaneous Power Draw", "Power Readings/Power Draw"],
    "cap": ["GPU Power Readings/Current Power Limit", "GPU Power Readings/Power Limit", "Power Readings/Power Limit",
            "GPU Power Readings/GPU Ceiling Power Limit/Current Power Limit"],
    "pstate": ["Performance State"],
    "fan": ["Fan Speed"],
    "persistence": ["Persistence Mode"],
    "driver_model": ["Driver Model/Current"],
    "mig_mode": ["MIG Mode/Current"],
    "compute_mode": ["Compute Mode"],
    "uncorrectable": ["ECC Errors/Volatile/DRAM Uncorrectable", "ECC Errors/Volatile/Double Bit/Total"],
    # Blackwell's (driver 575+) SRAM counters split parity from SEC-DED; Hopper's before them had one "SRAM Uncorrectable".
    "sram_uncorrectable": ["ECC Errors/Volatile/SRAM Uncorrectable SEC-DED", "ECC Errors/Volatile/SRAM Uncorrectable"],
    "sram_parity": ["ECC Errors/Volatile/SRAM Uncorrectable Parity"],
    # The lifetime counters (InfoROM), and whether the SRAM errors crossed NVIDIA's replacement threshold (driver 550+).
    "aggregate_uncorrectable": ["ECC Errors/Aggregate/DRAM Uncorrectable", "ECC Errors/Aggregate/Double Bit/Total"],
    "aggregate_sram_uncorrectable": ["ECC Errors/Aggregate/SRAM Uncorrectable SEC-DED", "ECC Errors/Aggregate/SRAM Uncorrectable"],
    "aggregate_sram_parity": ["ECC Errors/Aggregate/SRAM Uncorrectable Parity"],
    "sram_threshold": ["ECC Errors/Aggregate/SRAM Threshold Exceeded"],
    "channel_repair": ["ECC Errors/Channel Repair Pending"],
    "tpc_repair": ["ECC Errors/TPC Repair Pending"],
    "unrepairable": ["ECC Errors/Unrepairable Memory"],
    "remap_pending": ["Remapped Rows/Pending"],
    "remap_failure": ["Remapped Rows/Remapping Failure Occurred"],
    # Page retirement (pre-Ampere): "Pending Page Blacklist", "Pending" before driver 450.
    "retire_pending": ["Retired Pages/Pending Page Blacklist", "Retired Pages/Pending"],
    "retired_dbe": ["Retired Pages/Double Bit ECC"],
    "retired_sbe": ["Retired Pages/Single Bit ECC"],
    # "Clocks Throttle Reasons" before driver 535
    "hw_slowdown": ["Clocks Event Reasons/HW Slowdown", "Clocks Throttle Reasons/HW Slowdown"],
    "hw_thermal": ["Clocks Event Reasons/HW Slowdown/HW Thermal Slowdown", "Clocks Throttle Reasons/HW Slowdown/HW Thermal Slowdown"],
    "hw_power_brake": ["Clocks Event Reasons/HW Slowdown/HW Power Brake Slowdown",
                       "Clocks Throttle Reasons/HW Slowdown/HW Power Brake Slowdown"],
    "reset_required": ["GPU Reset Status/Reset Required"],
    "drain_reset": ["GPU Reset Status/Drain and Reset Recommended"],
    # Driver 570+: the action the driver asks for (the two fields above then read "Requested functionality has been deprecated").
    "recovery_action": ["GPU Recovery Action"],
    # NVSwitch systems (HGX, GB200 NVL): whether the fabric manager has registered the GPU with the NVLink fabric.
    "fabric_state": ["Fabric/State"],
    "fabric_status": ["Fabric/Status"],
    "fabric_health": ["Fabric/Health/Summary"],
    "fabric_clique": ["Fabric/CliqueId"],
    "fabric_cluster": ["Fabric/ClusterUUID"],
}
_MIG_FIELDS = {
    "index": ["Index"],
    "gi": ["GPU Instance ID"],
    "ci": ["Compute Instance ID"],
    "sm": ["Device Attributes/Shared/Multiprocessor count"],
    "used": ["Shared FB Memory Usage/Used", "FB Memory Usage/Used"],
    "total": ["Shared FB Memory Usage/Total", "FB Memory Usage/Total"],
}
_PROCESS_FIELDS = {
    "pid": ["Process ID"],
    "type": ["Type"],
    "name": ["Name"],
    "mem": ["Used GPU Memory"],
    "gi": ["GPU instance ID"],
    "ci": ["Compute instance ID"],
    # An accounted process (``-q -d ACCOUNTING``, accounting mode on): its peak memory and its life's shares, as
    # ``--query-accounted-apps`` names them.
    "max_mem": ["Max memory usage"],
    "gpu_util": ["GPU Utilization"],
    "mem_util": ["Memory Utilization"],
    "time": ["Time"],
    "running": ["Is Running"],
}
_PROCESS_SECTIONS = ["Processes", "Accounted Processes"]


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Parse ``-q`` documents into GPU, MIG-device and process events."""
    rows = _records(_paths(lines), ctx)
    role = pl.col("role")
    parts = [
        _gpu_samples(rows.filter(role == "gpu")),
        _mig_samples(rows.filter(role == "mig")),
        _processes(rows.filter(role == "process")),
        log_rows(rows.filter(role == "log"), FORMAT),
    ]
    headers = rows.filter(role == "header").height
    return Parsed(events=pl.concat([conform_events(p) for p in parts]), skipped={"header": headers} if headers else {})


def _paths(lines: pl.DataFrame) -> pl.DataFrame:
    """Indentation, key, value and the section path of every line."""
    stripped = pl.col("text").str.strip_chars()
    kv = stripped.str.extract_groups(_KEY_VALUE).struct
    # Signed: a grepped section pasted flush left has a margin below zero.
    own_indent = (pl.col("text").str.len_chars() - pl.col("text").str.strip_chars_start().str.len_chars()).cast(pl.Int32)
    # The indent of the banner (or the first head or GPU line of an excerpt) is the report's left margin.
    head = _is_head(pl.col("text"))
    opens = head | pl.col("text").str.contains(GPU_LINE)
    memory_fragment = pl.col("text").str.contains(MEMORY_SECTION_LINE) & ~opens.cum_max()
    section = pl.col("text").str.contains(SECTION_LINE) | memory_fragment
    margin = pl.when(opens).then(own_indent).when(section).then(own_indent - _SECTION_INDENT).forward_fill().fill_null(0)
    staged = lines.with_columns(
        # A line at the file's left edge nests in nothing, even under a fragment pasted flush left (grep's "--").
        indent=pl.when((own_indent == 0) & ~section).then(0).otherwise(_level((own_indent - margin).clip(lower_bound=0))),
        section=section,
        is_kv=kv.field("key").is_not_null(),
        name=pl.coalesce(kv.field("key"), stripped),
        value=kv.field("value"),
        doc=pl.col("text").str.contains(BANNER_LINE).cast(pl.Int32).cum_sum(),
        headed=head.cum_max(),
    )
    indent = pl.col("indent")
    ancestors = [
        pl.when(indent == level).then(pl.col("name")).when(indent < level).then(pl.lit("")).forward_fill().over("doc").alias(f"a{level}")
        for level in _LEVELS
    ]
    staged = staged.with_columns(ancestors)
    above = [pl.when((indent > level) & (pl.col(f"a{level}") != "")).then(pl.col(f"a{level}")) for level in _LEVELS]
    return staged.with_columns(path=pl.concat_str([*above, pl.col("name")], separator="/", ignore_nulls=True))


def _level(indent: pl.Expr) -> pl.Expr:
    """An indent on nvidia-smi's four-column grid: a report re-indented in a doc by three or five columns a level
    (one posted with fields 3 in, records 6 in) nests as printed; the report's own indents are unchanged."""
    return (indent + 2) // 4 * 4


def _records(rows: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Each line with its role and record numbers (:func:`_roles`), and its record's time and GPU."""
    return _roles(rows).with_columns(
        ts=ctime_to_utc(pl.col("stamp"), ctx.tz),
        gpu_index=pl.coalesce(
            integer(_block_value("Minor Number")), pl.when(pl.col("headed")).then(pl.col("gpu") - 1).first().cast(pl.Int32),
        ).over(_RECORD_KEYS),
        gpu_uuid=_block_value("GPU UUID").over(_RECORD_KEYS),
        pci_bus=pl.col("text").str.extract(GPU_LINE, 1).drop_nulls().first().over(_RECORD_KEYS),
    )


def _roles(rows: pl.DataFrame) -> pl.DataFrame:
    """Assign each line its role (gpu / mig / process / header / log) and record numbers."""
    text, indent = pl.col("text"), pl.col("indent")
    is_gpu_line = text.str.contains(GPU_LINE)
    top = indent == 0
    in_gpu = pl.when(top).then(is_gpu_line).forward_fill().fill_null(False).over("doc")
    # A section title outside any GPU block is a fragment's: it opens a block of its own.
    opens = is_gpu_line | (pl.col("section") & (indent == _SECTION_INDENT) & ~in_gpu)
    staged = rows.with_columns(
        gpu=opens.cast(pl.Int32).cum_sum().over("doc"),
        in_block=pl.when(top | opens).then(opens).forward_fill().fill_null(False).over("doc"),
        stamp=pl.when(top & (pl.col("name") == "Timestamp")).then(pl.col("value")).forward_fill().over("doc"),
        # 610+ print "KMD Version" / "CUDA UMD Version" too, and only them once the old names go.
        driver=pl.when(top & pl.col("name").is_in(["Driver Version", "KMD Version"])).then(_without_note(pl.col("value")))
        .forward_fill().over("doc"),
        cuda=pl.when(top & pl.col("name").is_in(["CUDA Version", "CUDA UMD Version"])).then(_without_note(pl.col("value")))
        .forward_fill().over("doc"),
    )
    # A record opens at its section's first key: "Process ID" (or "GPU instance ID" under MIG) under "Processes",
    # "Process ID" over its figures under -d ACCOUNTING's "Accounted Processes".
    in_processes = pl.col("a4").is_in(_PROCESS_SECTIONS) & (indent >= 8) & pl.col("in_block")
    first_process_key = pl.when(in_processes & (indent == 8)).then(pl.col("name")).drop_nulls().first().over([*_RECORD_KEYS, "a4"])
    mig_start = (pl.col("name") == "MIG Device") & ~pl.col("is_kv") & pl.col("in_block")
    staged = staged.with_columns(
        in_processes=in_processes,
        process=(in_processes & (indent == 8) & (pl.col("name") == first_process_key)).cum_sum().over(_RECORD_KEYS),
        mig=mig_start.cum_sum().over(_RECORD_KEYS),
        mig_path=pl.when(mig_start).then(pl.lit("")).otherwise(pl.col("path").str.extract(r"(?:^|/)MIG Device/(.*)$", 1)),
    )
    role = (
        pl.when(pl.col("in_block") & pl.col("mig_path").is_not_null()).then(pl.lit("mig"))
        .when(pl.col("in_processes") & (pl.col("process") > 0)).then(pl.lit("process"))
        .when(pl.col("in_block")).then(pl.lit("gpu"))
        .when(text.str.contains(BANNER_LINE) | (pl.col("is_kv") & pl.col("name").is_in(_HEAD_KEYS)) | (indent > 0)).then(pl.lit("header"))
        .otherwise(pl.lit("log"))
    )
    return staged.with_columns(role=role, block_opens=opens)


def carried_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """What the lines after the last need of the report they end in (``nvidia-smi -q -l`` read in batches).

    Its head (the time, driver and CUDA version of every GPU in it) and the first line of each GPU block
    before the one the lines end in (a GPU without ``Minor Number`` takes its index from its order). The
    record the lines end in is held back and read again below these lines (rca._carry): a GPU block whole,
    or a process or MIG device record, with its block's lines above it (its GPU, its section). Nothing when
    the report has no line past its banner.
    """
    ended_blank = lines["text"][-1].strip() == ""
    content = lines.filter(pl.col("text").str.strip_chars() != "")
    # (read from the last report's banner on: a batch of a -q -l loop holds many reports, the lines after it need one)
    banners = content.filter(pl.col("text").str.contains(BANNER_LINE))["line"]
    report = _roles(_paths(content.filter(pl.col("line") >= banners[-1]) if banners.len() else content))
    report = report.filter(pl.col("doc") == pl.col("doc").last())
    if report.is_empty():
        return report.select("line", "text")
    last = report.row(-1, named=True)
    in_open = pl.col("gpu") == last["gpu"]
    kept = ((pl.col("gpu") == 0) & (pl.col("role") == "header")) | (pl.col("block_opens") & (pl.col("gpu") < last["gpu"]))
    if ended_blank or last["role"] in ("header", "log"):
        kept |= in_open & pl.col("block_opens")  # the block is done: its place in the order is all the next lines need
    elif last["role"] in ("process", "mig"):
        record = pl.col(last["role"]) == last[last["role"]]
        kept |= in_open & (pl.col("line") < report.filter(in_open & record)["line"].min())
    carried = report.filter(kept).select("line", "text")
    return carried if carried.height > 1 or report["gpu"].max() > 0 else carried.clear()


def _is_head(text: pl.Expr) -> pl.Expr:
    """A line that heads a report: the banner, the timestamp under it, or the driver / GPU count lines below that."""
    return text.str.contains(BANNER_LINE) | text.str.contains(STAMP_LINE) | text.str.contains(HEAD_LINE)


def _without_note(value: pl.Expr) -> pl.Expr:
    """A value without the bracketed note drivers 6xx append ("610.62 [Deprecated; … Use KMD Version instead]")."""
    return value.str.replace(r"\s*\[[^\]]*\]$", "")


def _block_value(path: str) -> pl.Expr:
    """The value at ``path`` in the line's GPU block (use with ``over``)."""
    return known(pl.when(pl.col("in_block") & (pl.col("path") == path)).then(pl.col("value")).drop_nulls().first())


def _fields(table: dict[str, list[str]], path: str) -> list[pl.Expr]:
    """Aggregations taking each wanted field from the first of its candidate paths with a value (not N/A)."""
    return [
        pl.coalesce([known(pl.col("value")).filter(pl.col(path) == p).first() for p in paths]).alias(f"f_{key}")
        for key, paths in table.items()
    ]


def _record_head() -> list[pl.Expr]:
    return [
        pl.col("line").first(),
        pl.len().cast(pl.Int32).alias("n_lines"),
        pl.col("text").str.strip_chars_end().str.join("\n").alias("message"),
        pl.col("ts").first(),
        pl.col("stamp").first().alias("ts_raw"),
        pl.col("driver").first(),
        pl.col("cuda").first(),
        pl.col("gpu_index").first(),
        pl.col("gpu_uuid").first(),
        pl.col("pci_bus").first(),
    ]


def _sample_columns(attrs: pl.Expr, severity: pl.Expr | None = None) -> dict[str, pl.Expr]:
    return {
        "kind": pl.lit("gpu_sample"),
        "severity": pl.lit("info") if severity is None else severity,
        "format": pl.lit(FORMAT),
        "ts_quality": quality(pl.col("ts"), "inherited"),
        "attrs": attrs,
    }


def _gpu_samples(rows: pl.DataFrame) -> pl.DataFrame:
    grouped = rows.group_by(_RECORD_KEYS, maintain_order=True).agg(
        *_record_head(), *_fields(_GPU_FIELDS, "path"), _unreadable_fields(),
    )
    f = {key: known(pl.col(f"f_{key}")) for key in _GPU_FIELDS}
    health_attrs, severity = gpu_health(f.__getitem__, pl.col("unknown_error"))
    return grouped.select(
        "line", "n_lines", "message", "ts", "ts_raw", "gpu_index", "gpu_uuid", "pci_bus",
        mem_used_bytes=to_bytes(f["used"]),
        mem_total_bytes=to_bytes(f["total"]),
        gpu_util_pct=number(f["util"]),
        **_sample_columns(
            attrs_json(
                name=f["name"], temp_c=number(f["temp"]), power_w=number(f["power"]), power_cap_w=number(f["cap"]),
                pstate=f["pstate"], fan_pct=number(f["fan"]), persistence=f["persistence"],
                driver_model=f["driver_model"], driver=known(pl.col("driver")), cuda=known(pl.col("cuda")),
                mem_free_bytes=to_bytes(f["free"]), mem_reserved_bytes=to_bytes(f["reserved"]),
                mig_mode=f["mig_mode"], compute_mode=f["compute_mode"], **health_attrs,
            ),
            severity,
        ),
    )


def _unreadable_fields() -> pl.Expr:
    """The paths of a GPU block's fields that read "Unknown Error" (what NVML answered instead of a reading), joined;
    null where there are none."""
    paths = pl.col("path").filter(pl.col("value") == UNKNOWN_ERROR)
    return pl.when(paths.len() > 0).then(paths.str.join(", ")).alias("unknown_error")


def _mig_samples(rows: pl.DataFrame) -> pl.DataFrame:
    grouped = rows.group_by([*_RECORD_KEYS, "mig"], maintain_order=True).agg(*_record_head(), *_fields(_MIG_FIELDS, "mig_path"))
    f = {key: known(pl.col(f"f_{key}")) for key in _MIG_FIELDS}
    return grouped.select(
        "line", "n_lines", "message", "ts", "ts_raw", "gpu_index", "gpu_uuid", "pci_bus",
        mem_used_bytes=to_bytes(f["used"]),
        mem_total_bytes=to_bytes(f["total"]),
        **_sample_columns(
            attrs_json(mig_device=integer(f["index"]), gi=integer(f["gi"]), ci=integer(f["ci"]), sm_count=integer(f["sm"]),
                       driver=known(pl.col("driver")), cuda=known(pl.col("cuda")))
        ),
    )


def _processes(rows: pl.DataFrame) -> pl.DataFrame:
    grouped = rows.group_by([*_RECORD_KEYS, "process"], maintain_order=True).agg(*_record_head(), *_fields(_PROCESS_FIELDS, "name"))
    f = {key: known(pl.col(f"f_{key}")) for key in _PROCESS_FIELDS}
    return grouped.select(
        "line", "n_lines", "message", "ts", "ts_raw", "gpu_index", "gpu_uuid", "pci_bus",
        kind=pl.lit("gpu_process"),
        severity=pl.lit("info"),
        format=pl.lit(FORMAT),
        ts_quality=quality(pl.col("ts"), "inherited"),
        pid=integer(f["pid"]).cast(pl.Int64),
        process=f["name"],
        mem_used_bytes=to_bytes(f["mem"]),
        attrs=attrs_json(type=f["type"], gi=integer(f["gi"]), ci=integer(f["ci"]), max_memory_bytes=to_bytes(f["max_mem"]),
                         gpu_util_pct=number(f["gpu_util"]), mem_util_pct=number(f["mem_util"]), time_ms=number(f["time"]),
                         is_running=f["running"]),
    )
