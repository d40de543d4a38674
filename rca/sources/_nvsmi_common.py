"""Value conversions shared by the nvidia-smi sub-format parsers.

nvidia-smi prints the same quantities in several spellings: ``19818MiB`` in the table,
``19818 MiB`` in ``-q`` and CSV, ``19818`` under ``nounits``; ``MB`` in old drivers means
MiB too. ``N/A`` (bracketed in CSV) and ``Not Found`` mean unknown, never zero. Everything here is a
polars expression so each sub-format converts whole columns at once.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from rca import timeutil
from rca.sources._base import evaluated_once

MIB = 2**20
# nvidia-smi's (NVML's) report of a GPU it cannot reach (a lost GPU, after an Xid 79), in the forms it has printed: the bus id
# alone ("… for GPU0000:3B:00.0: Unknown Error", "… for GPU 0000:09:00.0: …", the domain in three digits "000:BA:80.0"),
# the index and bus id ("… for GPU3: 0000:04:00.0: Unknown Error"), or the index alone ("… for GPU2: Unknown Error"),
# and in lower case ("… for gpu 0000:18:00.0: Unknown Error", printed before `nvidia-smi -L`'s rows of the other GPUs).
# Read by this source and by the pipeline's rules, where such a line lands in a job's log.
HANDLE_LITERAL = "device handle for "
HANDLE_BUS = r"[0-9A-Fa-f]{3,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?"
HANDLE_GPU = rf"{HANDLE_LITERAL}(?:GPU|gpu) ?(?:(?<index>[0-9]+): )?(?<bus>{HANDLE_BUS})?"

_BYTES_PER_UNIT = {
    "B": 1,
    "KiB": 2**10,
    "KB": 2**10,
    "MiB": MIB,
    "MB": MIB,
    "GiB": 2**30,
    "GB": 2**30,
    "TiB": 2**40,
    "TB": 2**40,
}

# "Not Found": the CUDA version of a host with no CUDA driver (a vGPU host).
_UNKNOWN = ["N/A", "[N/A]", "", "Not Found"]

_MEMORY = r"^\s*[0-9]+(?:\.[0-9]+)?\s*(?:[KMGT]i?B|B)?\s*$"

CTIME_PATTERN = (
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+(?<mon>[A-Z][a-z]{2})\s+(?<day>[0-9]{1,2})\s+"
    r"(?<clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9])\s+(?<year>[0-9]{4})"
)

EVENT_COLUMNS = {
    "line": pl.Int64(),
    "n_lines": pl.Int32(),
    "kind": pl.String(),
    "severity": pl.String(),
    "message": pl.String(),
    "ts": pl.Datetime("us", "UTC"),
    "ts_raw": pl.String(),
    "ts_quality": pl.String(),
    "format": pl.String(),
    "pid": pl.Int64(),
    "process": pl.String(),
    "gpu_index": pl.Int32(),
    "gpu_uuid": pl.String(),
    "pci_bus": pl.String(),
    "mem_used_bytes": pl.Int64(),
    "mem_total_bytes": pl.Int64(),
    "gpu_util_pct": pl.Float64(),
    "attrs": pl.String(),
}


def known(value: pl.Expr) -> pl.Expr:
    """The stripped value, or null where nvidia-smi printed N/A / [N/A] / nothing."""
    return value.str.strip_chars().replace(_UNKNOWN, None)


def number(value: pl.Expr) -> pl.Expr:
    """A number printed alone or with a unit (``59C``, ``629W``, ``100 %``, ``1980 MHz``); else null."""
    return value.str.extract(r"^\s*([-+]?[0-9]+(?:\.[0-9]+)?)\s*(?:[A-Za-z]+|%)?\s*$", 1).cast(pl.Float64, strict=False)


def to_bytes(value: pl.Expr, default_unit: str | pl.Expr = "MiB") -> pl.Expr:
    """Memory printed as ``19818MiB``, ``19818 MiB``, ``14MB`` or a bare number in ``default_unit``."""
    fallback = default_unit if isinstance(default_unit, pl.Expr) else pl.lit(default_unit)

    def amount(text: pl.Expr) -> pl.Expr:
        # Checked whole, then cut by stripping: capturing the parts of every value costs more.
        number = pl.when(text.str.contains(_MEMORY)).then(text.str.strip_chars_end("KMGTiB").str.strip_chars_end())
        unit = pl.coalesce(text.str.strip_chars_start("0123456789.").str.strip_chars_start().replace("", None), fallback)
        return number.cast(pl.Float64, strict=False) * unit.replace_strict(_BYTES_PER_UNIT, default=None, return_dtype=pl.Float64)

    def exact(value: pl.Expr) -> pl.Expr:
        return pl.when(value < 2.0**62).then(value.round()).cast(pl.Int64, strict=False)

    return evaluated_once(evaluated_once(value.str.strip_chars(), amount), exact)


def integer(value: pl.Expr) -> pl.Expr:
    """A plain decimal integer that fits in 32 bits; anything else is null."""
    digits = value.str.extract(r"^\s*([0-9]{1,9})\s*$", 1)
    return digits.cast(pl.Int32, strict=False)


def ctime_to_utc(text: pl.Expr, tz: str) -> pl.Expr:
    """``Tue Jul 14 08:12:53 2026`` (the stamp nvidia-smi prints, zone-less) in ``tz`` → UTC."""
    parts = text.str.extract_groups(rf"^\s*{CTIME_PATTERN}\s*$").struct
    dated = timeutil.ctime_string(parts.field("year"), parts.field("mon"), parts.field("day"), parts.field("clock"))
    return timeutil.dated_to_utc(dated, "%Y-%m-%d %H:%M:%S", tz)


def quality(ts: pl.Expr, resolved: str) -> pl.Expr:
    """``resolved`` where a time was found, ``missing`` where it was not."""
    return pl.when(ts.is_not_null()).then(pl.lit(resolved)).otherwise(pl.lit("missing"))


# The value -q prints for a field NVML could not read on a GPU it still reaches (the table shows "ERR!", CSV "[Unknown Error]").
UNKNOWN_ERROR = "Unknown Error"


def gpu_health(field: Callable[[str], pl.Expr], unreadable: pl.Expr) -> tuple[dict[str, pl.Expr], pl.Expr]:
    """A GPU report's health (``-q`` and ``-q -x``): its attrs and its severity.

    ``field`` reads a health field of the report by key (uncorrectable, sram_uncorrectable,
    sram_parity, aggregate_uncorrectable, aggregate_sram_uncorrectable, aggregate_sram_parity, sram_threshold,
    channel_repair, tpc_repair, unrepairable, remap_pending, remap_failure, retire_pending, retired_dbe, retired_sbe,
    hw_slowdown, hw_thermal, hw_power_brake, reset_required, drain_reset, recovery_action, fabric_state, fabric_status,
    fabric_health, fabric_clique, fabric_cluster). A failed row remap, memory Blackwell calls
    unrepairable or SRAM errors past NVIDIA's threshold (``SRAM Threshold Exceeded``, under the lifetime
    ``Aggregate`` counters) mean the GPU is to be replaced; so is, for the jobs on it, a fabric the
    fabric manager finished registering it with without success (``Completed`` with a status
    such as ``Insufficient Resources``: no NVLink peer access). A pending remap, a pending
    channel or TPC repair (Blackwell), a page pending retirement (pre-Ampere GPUs) or an
    uncorrectable ECC error (DRAM or SRAM) since the driver loaded, that it needs a reset
    before it can be trusted; a hardware slowdown
    (thermal, power brake) holding the clocks down, a reset the driver asks for (driver 570+ names it in
    ``GPU Recovery Action``: ``Reset``, ``Reboot``, ``Drain P2P``, ``Drain and Reset``; until it is done CUDA
    cannot use the GPU, while its ECC and remap counters may all read 0), or an
    NVSwitch GPU not yet registered with its fabric (``Not Started`` / ``In Progress``: CUDA
    fails with error 802, "system not yet initialized", until it is) are warnings too, as is a registered GPU
    whose fabric health summary (driver 570+) is ``Unhealthy`` or ``Limited Capacity`` (routes or bandwidth lost:
    its NVLink peers slow down or fail). The attrs keep the flags only where they are set, the fabric's state,
    status, health, clique id and cluster UUID where printed, as are the lifetime (``Aggregate``) uncorrectable ECC
    counts and the retired page counts, which alone raise no severity (a row remap or page retirement has dealt with
    them; the flags above tell when it has not). ``unreadable`` names the fields NVML read as
    :data:`UNKNOWN_ERROR` (null where none did): such a report is a warning too (a dead fan, a GPU about to drop off the bus).
    """
    def when_set(key: str, flag: str) -> pl.Expr:
        return pl.when(field(key) == flag).then(field(key))

    attrs = {
        "volatile_uncorr_ecc": field("uncorrectable"),
        "volatile_sram_uncorr_ecc": integer(field("sram_uncorrectable")), "volatile_sram_uncorr_parity": integer(field("sram_parity")),
        "channel_repair_pending": when_set("channel_repair", "Yes"), "tpc_repair_pending": when_set("tpc_repair", "Yes"),
        "unrepairable_memory": when_set("unrepairable", "Yes"), "remapped_rows_pending": field("remap_pending"),
        "remapped_rows_failure": field("remap_failure"), "retired_pages_pending": field("retire_pending"),
        "retired_pages_dbe": integer(field("retired_dbe")), "retired_pages_sbe": integer(field("retired_sbe")),
        "aggregate_uncorr_ecc": integer(field("aggregate_uncorrectable")),
        "aggregate_sram_uncorr_ecc": integer(field("aggregate_sram_uncorrectable")),
        "aggregate_sram_uncorr_parity": integer(field("aggregate_sram_parity")),
        "sram_threshold_exceeded": when_set("sram_threshold", "Yes"),
        "hw_slowdown": when_set("hw_slowdown", "Active"),
        "hw_thermal_slowdown": when_set("hw_thermal", "Active"), "hw_power_brake_slowdown": when_set("hw_power_brake", "Active"),
        "reset_required": when_set("reset_required", "Yes"), "drain_and_reset_recommended": when_set("drain_reset", "Yes"),
        "gpu_recovery_action": pl.when(recovery_needed(field("recovery_action"))).then(field("recovery_action")),
        "fabric_state": field("fabric_state"), "fabric_status": field("fabric_status"), "fabric_health": field("fabric_health"),
        "fabric_clique_id": field("fabric_clique"), "fabric_cluster_uuid": field("fabric_cluster"),
        "unknown_error": unreadable,
    }
    uncorrected = (number(field("uncorrectable")) > 0) | (number(field("sram_uncorrectable")) > 0) | (number(field("sram_parity")) > 0)
    repair = (field("remap_pending") == "Yes") | (field("channel_repair") == "Yes") | (field("tpc_repair") == "Yes")
    pending = repair | (field("retire_pending") == "Yes") | uncorrected
    unregistered = field("fabric_state").is_in(["Not Started", "In Progress"])
    degraded = field("fabric_health").is_in(["Unhealthy", "Limited Capacity"])
    asked = (field("reset_required") == "Yes") | (field("drain_reset") == "Yes") | recovery_needed(field("recovery_action"))
    flagged = (field("hw_slowdown") == "Active") | asked | unregistered | degraded | unreadable.is_not_null()
    fabric_failed = (field("fabric_state") == "Completed") & (field("fabric_status") != "Success")
    severity = (
        pl.when((field("remap_failure") == "Yes") | (field("unrepairable") == "Yes") | (field("sram_threshold") == "Yes") | fabric_failed)
        .then(pl.lit("error"))
        .when(pending | flagged).then(pl.lit("warning"))
        .otherwise(pl.lit("info"))
    )
    return attrs, severity


def recovery_needed(action: pl.Expr) -> pl.Expr:
    """Whether a GPU Recovery Action (``-q``, ``-q -x``, ``--query-gpu=gpu_recovery_action``) asks for one.

    Any action but ``None``: NVML has added actions since (IMEX domain recovery, bus reset), so the known
    spellings are not listed; a bracketed or "Not Supported" answer is no action.
    """
    return action.is_not_null() & ~action.is_in(["None", "Not Supported"]) & ~action.str.starts_with("[")


def attrs_json(**fields: pl.Expr) -> pl.Expr:
    """A JSON object of ``fields`` with the null ones left out (null when there are no fields)."""
    if not fields:
        return pl.lit(None, pl.String)
    encoded = pl.struct(**fields).struct.json_encode()
    key = r'"(?:[^"\\]|\\.)*":null'
    return encoded.str.replace_all(rf",{key}", "").str.replace_all(rf"\{{{key},?", "{")


def log_rows(lines: pl.DataFrame, fmt: str, **columns: pl.Expr) -> pl.DataFrame:
    """Lines no rule claims, kept one event each as ``kind=log``."""
    text = pl.col("text").str.strip_chars_end()
    # Terminal styling nvidia-smi writes to files too (the underlined header of ``topo -m``).
    styled = text.str.contains("\x1b", literal=True)
    defaults = {
        "n_lines": pl.lit(1, pl.Int32),
        "kind": pl.lit("log"),
        "message": pl.when(styled).then(text.str.replace_all(r"\x1b\[[0-9;]*m", "")).otherwise(text),
        "format": pl.lit(fmt),
    }
    return lines.select("line", **(defaults | columns))  # a record of several rows gives its own n_lines and message


def empty_events() -> pl.DataFrame:
    """No events, with the common column set."""
    return pl.DataFrame(schema=EVENT_COLUMNS)


def conform_events(frame: pl.DataFrame) -> pl.DataFrame:
    """Give a sub-parser's rows the common column set, so the parts concatenate cleanly."""
    return frame.select(
        [
            (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype, strict=False).alias(name)
            for name, dtype in EVENT_COLUMNS.items()
        ]
    )
