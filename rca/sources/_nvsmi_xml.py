"""``nvidia-smi -q -x``: ``<nvidia_smi_log>`` documents, possibly several, possibly cut short.

Line spans come from the lines (a ``<gpu id=…>`` opens a GPU, ``<process_info>`` and
``<mig_device>`` open its sub-records), values from the element tree, matched by order.
Each document goes through an incremental parser, so a truncated or broken document still
yields every element read before the damage: a GPU whose ``<gpu>`` line is there but whose
values are not keeps at least its bus id. Events are the same as for ``-q`` text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import polars as pl

from rca.sources._base import ParseContext, Parsed
from rca.sources._nvsmi_common import (
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

FORMAT = "query_xml"

DECLARATION_LINE = r"^\s*<\?xml\b"
DOCTYPE_LINE = r"^\s*<!DOCTYPE\s+nvidia_smi_log\b"
ROOT_LINE = r"^\s*<nvidia_smi_log\b"
_ROOT_END = r"</nvidia_smi_log>"
_GPU_START = r"^\s*<gpu\s+id=\"(?<bus>[^\"]*)\""
# An element holding what NVML answered instead of a reading (as -q's "Unknown Error" values).
_UNKNOWN_ERROR_ELEMENT = rf"<([A-Za-z0-9_]+)>\s*{UNKNOWN_ERROR}\s*</"
_SPANS = {
    "gpu": (_GPU_START, r"</gpu>"),
    "process": (r"^\s*<process_info>", r"</process_info>"),
    "mig": (r"^\s*<mig_device>", r"</mig_device>"),
}

_GPU_PATHS = {
    "name": ["product_name"],
    "uuid": ["uuid"],
    "minor": ["minor_number"],
    "used": ["fb_memory_usage/used"],
    "total": ["fb_memory_usage/total"],
    "free": ["fb_memory_usage/free"],
    "reserved": ["fb_memory_usage/reserved"],
    "util": ["utilization/gpu_util"],
    "temp": ["temperature/gpu_temp"],
    "power": ["gpu_power_readings/power_draw", "gpu_power_readings/average_power_draw",
              "gpu_power_readings/instant_power_draw", "power_readings/power_draw"],
    "cap": ["gpu_power_readings/current_power_limit", "gpu_power_readings/power_limit", "power_readings/power_limit"],
    "pstate": ["performance_state"],
    "fan": ["fan_speed"],
    "persistence": ["persistence_mode"],
    "driver_model": ["driver_model/current_dm"],
    "mig_mode": ["mig_mode/current_mig"],
    "compute_mode": ["compute_mode"],
    "uncorrectable": ["ecc_errors/volatile/dram_uncorrectable", "ecc_errors/volatile/double_bit/total"],
    "sram_uncorrectable": ["ecc_errors/volatile/sram_uncorrectable_secded", "ecc_errors/volatile/sram_uncorrectable"],
    "sram_parity": ["ecc_errors/volatile/sram_uncorrectable_parity"],
    "aggregate_uncorrectable": ["ecc_errors/aggregate/dram_uncorrectable", "ecc_errors/aggregate/double_bit/total"],
    "aggregate_sram_uncorrectable": ["ecc_errors/aggregate/sram_uncorrectable_secded", "ecc_errors/aggregate/sram_uncorrectable"],
    "aggregate_sram_parity": ["ecc_errors/aggregate/sram_uncorrectable_parity"],
    "sram_threshold": ["ecc_errors/aggregate/sram_threshold_exceeded"],
    "channel_repair": ["ecc_errors/channel_repair_pending"],
    "tpc_repair": ["ecc_errors/tpc_repair_pending"],
    "unrepairable": ["ecc_errors/unrepairable_memory"],
    "remap_pending": ["remapped_rows/remapped_row_pending"],
    "remap_failure": ["remapped_rows/remapped_row_failure"],
    "retire_pending": ["retired_pages/pending_blacklist", "retired_pages/pending_retirement"],
    "retired_dbe": ["retired_pages/double_bit_retirement/retired_count"],
    "retired_sbe": ["retired_pages/multiple_single_bit_retirement/retired_count"],
    # clocks_throttle_reasons/clocks_throttle_reason_* before driver 535
    "hw_slowdown": ["clocks_event_reasons/clocks_event_reason_hw_slowdown", "clocks_throttle_reasons/clocks_throttle_reason_hw_slowdown"],
    "hw_thermal": ["clocks_event_reasons/clocks_event_reason_hw_thermal_slowdown",
                   "clocks_throttle_reasons/clocks_throttle_reason_hw_thermal_slowdown"],
    "hw_power_brake": ["clocks_event_reasons/clocks_event_reason_hw_power_brake_slowdown",
                       "clocks_throttle_reasons/clocks_throttle_reason_hw_power_brake_slowdown"],
    "reset_required": ["gpu_reset_status/reset_required"],
    "drain_reset": ["gpu_reset_status/drain_and_reset_recommended"],
    "recovery_action": ["gpu_recovery_action"],
    "fabric_state": ["fabric/state"],
    "fabric_status": ["fabric/status"],
    "fabric_health": ["fabric/health/summary"],
    "fabric_clique": ["fabric/cliqueId"],
    "fabric_cluster": ["fabric/clusterUuid"],
}
_MIG_PATHS = {
    "index": ["index"],
    "gi": ["gpu_instance_id"],
    "ci": ["compute_instance_id"],
    "sm": ["device_attributes/shared/multiprocessor_count"],
    "used": ["fb_memory_usage/used"],
    "total": ["fb_memory_usage/total"],
}
_PROCESS_PATHS = {
    "pid": ["pid"],
    "type": ["type"],
    "name": ["process_name"],
    "mem": ["used_memory"],
    "gi": ["gpu_instance_id"],
    "ci": ["compute_instance_id"],
}


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Parse ``-q -x`` documents into GPU, MIG-device and process events."""
    rows = _spans(lines)
    documents = {doc: _read_document(group) for (doc,), group in rows.filter(pl.col("in_doc")).group_by("doc")}
    gpus = _values(documents, None, _GPU_PATHS)
    migs = _values(documents, "mig_devices/mig_device", _MIG_PATHS)
    processes = _values(documents, "processes/process_info", _PROCESS_PATHS)
    context = _gpu_context(rows, gpus, ctx)
    role = pl.col("role")
    parts = [
        _events(rows.filter(role == "gpu"), None, gpus, context, _gpu_columns()),
        _events(rows.filter(role == "mig"), "mig", migs, context, _mig_columns()),
        _events(rows.filter(role == "process"), "process", processes, context, _process_columns()),
        log_rows(rows.filter(role == "log"), FORMAT),
    ]
    headers = rows.filter(role == "header").height
    return Parsed(events=pl.concat([conform_events(p) for p in parts]), skipped={"header": headers} if headers else {})


def _spans(lines: pl.DataFrame) -> pl.DataFrame:
    """Document, GPU, process and MIG-device numbers of every line, and its role."""
    text = pl.col("text")
    above = text.shift(1).fill_null("")
    opens = (
        text.str.contains(DECLARATION_LINE)
        | (text.str.contains(DOCTYPE_LINE) & ~above.str.contains(DECLARATION_LINE))
        | (text.str.contains(ROOT_LINE) & ~above.str.contains(DOCTYPE_LINE) & ~above.str.contains(DECLARATION_LINE))
    )
    staged = lines.with_columns(doc=opens.cast(pl.Int32).cum_sum())
    staged = staged.with_columns(in_doc=(pl.col("doc") > 0) & ~_closed_above(_ROOT_END, ["doc"]))
    staged = staged.with_columns(_numbered("gpu", ["doc"]))
    staged = staged.with_columns(*_numbered("mig", ["doc", "gpu"]), *_numbered("process", ["doc", "gpu"]))
    role = (
        pl.when(~pl.col("in_doc")).then(pl.lit("log"))
        .when(~pl.col("in_gpu")).then(pl.lit("header"))
        .when(pl.col("in_process")).then(pl.lit("process"))
        .when(pl.col("in_mig")).then(pl.lit("mig"))
        .otherwise(pl.lit("gpu"))
    )
    return staged.with_columns(role=role)


def _closed_above(end: str, keys: list[str]) -> pl.Expr:
    """Whether an ``end`` tag occurred on an earlier line of the same ``keys`` group."""
    ends = pl.col("text").str.contains(end).cast(pl.Int32)
    return ((ends.cum_sum() - ends).over(keys)) > 0


def _numbered(name: str, keys: list[str]) -> list[pl.Expr]:
    """Number the ``name`` elements opened within ``keys`` and mark the lines inside one."""
    start, end = _SPANS[name]
    opened = pl.col("text").str.contains(start).cast(pl.Int32).cum_sum().over(keys)
    ends = pl.col("text").str.contains(end).cast(pl.Int32)
    closed_before = (ends.cum_sum() - ends).over(keys)
    return [opened.alias(name), (opened > closed_before).alias(f"in_{name}")]


def _read_document(rows: pl.DataFrame) -> ET.Element | None:
    """The root of one document, holding every element read before any damage.

    The pull parser queues a syntax error as an event instead of raising from ``feed``,
    so the root's start event (and the subtree built so far) is there even then.
    """
    parser = ET.XMLPullParser(events=("start",))
    parser.feed(rows.select(pl.col("text").str.join("\n")).item())
    try:
        for _, element in parser.read_events():
            return element
    except ET.ParseError:
        return None
    return None


def _text(element: ET.Element, paths: list[str]) -> str | None:
    for path in paths:
        found = element.findtext(path)
        if found is not None and found.strip():
            return found.strip()
    return None


def _values(documents: dict[int, ET.Element | None], child: str | None, fields: dict[str, list[str]]) -> pl.DataFrame:
    """One row per GPU (``child`` None) or per GPU sub-element, numbered as the line spans are."""
    records = []
    for doc, root in documents.items():
        for gpu, element in enumerate([] if root is None else root.findall("gpu"), start=1):
            items = [element] if child is None else element.findall(child)
            for number_, item in enumerate(items, start=1):
                values = {f"f_{key}": _text(item, paths) for key, paths in fields.items()}
                records.append({"doc": doc, "gpu": gpu, "child": number_, **values})
    schema = {"doc": pl.Int32, "gpu": pl.Int32, "child": pl.Int32, **{f"f_{key}": pl.String for key in fields}}
    return pl.DataFrame(records, schema=schema)


def _gpu_context(rows: pl.DataFrame, gpus: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Per GPU: the document's time and versions (read from the lines) and the GPU's identity."""
    def doc_value(tag: str) -> pl.Expr:
        return pl.col("text").str.extract(rf"<{tag}>\s*([^<]*?)\s*</{tag}>", 1).drop_nulls().first().over("doc")

    per_line = rows.with_columns(
        ts_raw=doc_value("timestamp"), driver=doc_value("driver_version"), cuda=doc_value("cuda_version")
    ).filter(pl.col("in_gpu"))
    spans = per_line.group_by(["doc", "gpu"]).agg(
        pl.col("ts_raw", "driver", "cuda").first(),
        pl.col("text").str.extract(_GPU_START, 1).drop_nulls().first().alias("pci_bus"),
    )
    identity = gpus.select("doc", "gpu", "f_minor", gpu_uuid=known(pl.col("f_uuid")))
    return spans.join(identity, on=["doc", "gpu"], how="left").select(
        "doc", "gpu", "ts_raw", "pci_bus", "gpu_uuid",
        ts=ctime_to_utc(pl.col("ts_raw"), ctx.tz),
        driver=known(pl.col("driver")),
        cuda=known(pl.col("cuda")),
        gpu_index=pl.coalesce(integer(known(pl.col("f_minor"))), (pl.col("gpu") - 1).cast(pl.Int32)),
    )


def _events(rows: pl.DataFrame, child: str | None, values: pl.DataFrame, context: pl.DataFrame,
            columns: dict[str, pl.Expr]) -> pl.DataFrame:
    """One event per span; the span's n-th element supplies the values (null when it was lost)."""
    keys = ["doc", "gpu"] if child is None else ["doc", "gpu", child]
    spans = rows.group_by(keys, maintain_order=True).agg(
        pl.col("line").first(),
        pl.len().cast(pl.Int32).alias("n_lines"),
        pl.col("text").str.strip_chars_end().str.join("\n").alias("message"),
        _unreadable_tags(),
    )
    by_position = values.drop("child") if child is None else values.rename({"child": child})
    joined = spans.join(by_position, on=keys, how="left").join(context, on=["doc", "gpu"], how="left")
    return joined.select(
        "line", "n_lines", "message", "ts", "ts_raw", "gpu_index", "gpu_uuid", "pci_bus",
        format=pl.lit(FORMAT), ts_quality=quality(pl.col("ts"), "inherited"), **{"severity": pl.lit("info"), **columns},
    )


def _unreadable_tags() -> pl.Expr:
    """The tags of a span's elements that read "Unknown Error" (a reading NVML failed to get: the table's "ERR!"),
    joined; null where there are none."""
    tags = pl.col("text").str.extract(_UNKNOWN_ERROR_ELEMENT, 1).drop_nulls()
    return pl.when(tags.len() > 0).then(tags.str.join(", ")).alias("unknown_error")


def _field(key: str) -> pl.Expr:
    return known(pl.col(f"f_{key}"))


def _gpu_columns() -> dict[str, pl.Expr]:
    health_attrs, severity = gpu_health(_field, pl.col("unknown_error"))
    return {
        "kind": pl.lit("gpu_sample"),
        "mem_used_bytes": to_bytes(_field("used")),
        "mem_total_bytes": to_bytes(_field("total")),
        "gpu_util_pct": number(_field("util")),
        "attrs": attrs_json(
            name=_field("name"), temp_c=number(_field("temp")), power_w=number(_field("power")),
            power_cap_w=number(_field("cap")), pstate=_field("pstate"), fan_pct=number(_field("fan")),
            persistence=_field("persistence"), driver_model=_field("driver_model"), driver=pl.col("driver"),
            cuda=pl.col("cuda"), mem_free_bytes=to_bytes(_field("free")), mem_reserved_bytes=to_bytes(_field("reserved")),
            mig_mode=_field("mig_mode"), compute_mode=_field("compute_mode"), **health_attrs,
        ),
        "severity": severity,
    }


def _mig_columns() -> dict[str, pl.Expr]:
    return {
        "kind": pl.lit("gpu_sample"),
        "mem_used_bytes": to_bytes(_field("used")),
        "mem_total_bytes": to_bytes(_field("total")),
        "attrs": attrs_json(
            mig_device=integer(_field("index")), gi=integer(_field("gi")), ci=integer(_field("ci")),
            sm_count=integer(_field("sm")), driver=pl.col("driver"), cuda=pl.col("cuda"),
        ),
    }


def _process_columns() -> dict[str, pl.Expr]:
    return {
        "kind": pl.lit("gpu_process"),
        "pid": integer(_field("pid")).cast(pl.Int64),
        "process": _field("name"),
        "mem_used_bytes": to_bytes(_field("mem")),
        "attrs": attrs_json(type=_field("type"), gi=integer(_field("gi")), ci=integer(_field("ci"))),
    }
