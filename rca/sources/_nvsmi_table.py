"""The default ``nvidia-smi`` table, any driver generation, any number of snapshots.

Each snapshot opens with a zone-less timestamp line (``Tue Jul 14 08:12:53 2026``) and a
version box; a GPU takes two rows (2014 layout) or three (the MIG-mode row of newer
drivers), a MIG device two (memory, BAR1), a process one. Rows are recognised by shape,
their continuation rows by position (a memory row only counts right after a GPU name row),
and continuations are pulled onto their first row with ``shift`` so no grouping is needed.

MIG device rows become ``gpu_sample`` events of the parent GPU (its index and bus id) with
``attrs.mig_device`` set (plus ``gi``/``ci``): a MIG slice is the unit a process runs out
of memory in. Whole-GPU samples never carry ``mig_device``, so per-GPU series filter on it.
Process rows get the bus id of their GPU in the same snapshot. The boxes of ``nvidia-smi mig
-lgi`` / ``-lci`` (instances that exist, no readings) are log rows of their GPU with the
instance's profile, ids and placement in ``attrs``; so are the two-row boxes of ``mig -lgip`` / ``-lcip``
(the profiles a GPU or GPU instance offers), each profile one event with its counts and engines.
"""

from __future__ import annotations

import polars as pl

from rca.sources._base import ParseContext, Parsed, map_distinct
from rca.sources._nvsmi_common import (
    CTIME_PATTERN,
    attrs_json,
    conform_events,
    ctime_to_utc,
    integer,
    known,
    log_rows,
    number,
    quality,
    to_bytes,
)

FORMAT = "table"

# Every row pattern allows an indent before its first bar: a table pasted into docs or a notebook's
# output cell keeps it, and the rows keep their shape after it.
TIMESTAMP_LINE = rf"^\s*{CTIME_PATTERN}\s*$"
BORDER_LINE = r"^\s*[+|][-=+|]*[-=]{3}[-=+|]*\s*$"
# Drivers 610+ name the versions "KMD Version" and "CUDA UMD Version".
VERSION_LINE = (
    r"^[ \t]*\|\s*NVIDIA-SMI\s+(?<smi>\S+)\s+(?:Driver|KMD) Version:\s*(?<driver>\S+)"
    r"(?:\s+CUDA (?:UMD )?Version:\s*(?<cuda>\S+))?\s*\|"
)
HEADER_LINE = (
    r"^[ \t]*\|.*(?:Persistence-M|Driver-Model|Pwr:Usage/Cap|MIG M\.|Processes:|Process name|MIG devices:"
    r"|GPU\s+GI\s+CI|\bID\s+ID\b|BAR1-Usage|Memory-Usage|GPU Memory|\bECC\s*\|"
    r"|(?:GPU|Compute) instance(?:s| profiles):|Placement\s*\||Profile\s+Instance|\bID\s+\|\s*$"
    r"|\bInstances\s+(?:Memory|Exclusive)\b|Free/Total|\bCE\s+JPEG\b)"
)
# ``nvidia-smi mig -lgi`` / ``-lci``: the GPU (or compute) instances that exist, one row each:
# ``|   0  MIG 3g.20gb       9        1          4:4     |`` (-lci puts the GPU instance before the name;
# older drivers print no placement there).
MIG_INSTANCE_ROW = (
    r"^[ \t]*\|\s*(?<gpu>[0-9]+)\s+(?:(?<parent_gi>[0-9]+)\s+)?MIG\s+(?<profile>\S+)\s+(?<profile_id>[0-9]+)\s+(?<id>[0-9]+)"
    r"(?:\s+(?<placement>[0-9]+:[0-9]+))?\s*\|\s*$"
)
# ``nvidia-smi mig -lgip``: a GPU instance profile over two rows, its free/total instances, memory (GiB), P2P,
# SM / DEC / ENC, then CE / JPEG / OFA under them:
# ``|   0  MIG 1g.6gb+me     21     1/1        5.81       No     14     1     0   |``.
MIG_GI_PROFILE_ROW = (
    r"^[ \t]*\|\s*(?<gpu>[0-9]+)\s+MIG\s+(?<profile>\S+)\s+(?<profile_id>[0-9]+)\s+(?<free>[0-9]+)/(?<total>[0-9]+)"
    r"\s+(?<memory>[0-9.]+)\s+(?<p2p>\S+)\s+(?<sm>[0-9]+)\s+(?<dec>[0-9]+)\s+(?<enc>[0-9]+)\s*\|\s*$"
)
# ``mig -lcip``: a compute instance profile of GPU instance ``gi``, the default one's id starred, exclusive SMs,
# shared DEC / ENC / OFA, then CE / JPEG under them: ``|   0      2       MIG 2g.12gb     1*     0/1     28   2   0   0   |``.
MIG_CI_PROFILE_ROW = (
    r"^[ \t]*\|\s*(?<gpu>[0-9]+)\s+(?<gi>[0-9]+)\s+MIG\s+(?<profile>\S+)\s+(?<profile_id>[0-9]+)(?<default>\*)?"
    r"\s+(?<free>[0-9]+)/(?<total>[0-9]+)\s+(?<sm>[0-9]+)\s+(?<dec>[0-9]+)\s+(?<enc>[0-9]+)\s+(?<ofa>[0-9]+)\s*\|\s*$"
)
# A profile's second row: the engine counts alone (lgip: CE JPEG OFA; lcip: CE JPEG), read only under a profile row.
MIG_PROFILE_MORE_ROW = r"^[ \t]*\|\s*(?<ce>[0-9]+)\s+(?<jpg>[0-9]+)(?:\s+(?<ofa>[0-9]+))?\s*\|\s*$"
_BUS = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]"
GPU_NAME_ROW = (
    r"^[ \t]*\|\s*(?<index>[0-9]+)\s+(?<name>.*?)(?:\s+(?<persistence>On|Off|WDDM|TCC|MCDM|N/A))?\s*\|"
    rf"\s*(?<bus>{_BUS}|N/A)\s+(?<disp>\S+)\s*\|\s*(?<ecc>\S*)\s*\|\s*$"
)
GPU_USAGE_ROW = (
    r"^[ \t]*\|\s*(?<fan>\S+)\s+(?<temp>\S+)\s+(?<perf>\S+)\s+(?<power>\S+)\s*/\s*(?<cap>\S+)\s*\|"
    r"\s*(?:(?<used>\S+)\s*/\s*(?<total>\S+)|Not Supported)\s*\|\s*(?<util>\S+)\s+(?<compute>.*?)\s*\|\s*$"
)
GPU_MIG_ROW = r"^[ \t]*\|\s*\|\s*\|\s*(?<mig>\S.*?)\s*\|\s*$"
MIG_DEVICE_ROW = (
    r"^[ \t]*\|\s*(?<gpu>[0-9]+)\s+(?<gi>[0-9]+)\s+(?<ci>[0-9]+)\s+(?<dev>[0-9]+)\s*\|\s*(?<used>\S+)\s*/\s*(?<total>\S+)\s*\|"
    r"\s*(?<sm>\S+)\s+(?<ecc>\S+)\s*\|\s*(?<ce>\S+)\s+(?<enc>\S+)\s+(?<dec>\S+)\s+(?<ofa>\S+)\s+(?<jpg>\S+)\s*\|\s*$"
)
MIG_BAR1_ROW = r"^[ \t]*\|\s*\|\s*(?<used>\S+)\s*/\s*(?<total>\S+)\s*\|\s*\|\s*\|\s*$"
PROCESS_ROW = (
    r"^[ \t]*\|\s*(?<gpu>[0-9]+|N/A)\s+(?:(?<gi>[0-9]+|N/A)\s+(?<ci>[0-9]+|N/A)\s+)?(?<pid>[0-9]+)\s+"
    r"(?:(?<type>C\+G|G\+C|M\+C|C\+M|C|G|M)\s+)?(?<name>\S.*?)\s+(?<mem>[0-9]+(?:\.[0-9]+)?[KMG]i?B|N/A)\s*\|\s*$"
)
NO_PROCESSES_ROW = r"^[ \t]*\|\s*No running (?:compute )?processes found\s*\|\s*$"

# A box row or border, and the rows only nvidia-smi's own boxes hold (its version row, its GPU and Processes headers): they tell
# its table from another program's box in the same log (pytest's, rich's, PyTorch's memory summary).
BOX_ROW = r"^[ \t]*[|+]"
OWN_ROW = rf"{VERSION_LINE}|^[ \t]*\|\s*GPU\s+Name\s.*(?:Persistence-M|Driver-Model)|^[ \t]*\|\s*(?:Compute )?[Pp]rocesses:"
OWN_LITERALS = ("NVIDIA-SMI", "Persistence-M", "Driver-Model", "rocesses:")


def in_table(text: pl.Expr, group: pl.Expr) -> pl.Expr:
    """Whether a line of another program's log (``text``, its lines in order, ``group`` apart) is a row of an nvidia-smi table
    printed there: a run of box rows, one of them nvidia-smi's own. (The blank line between its boxes never reaches a parser.)"""
    boxed = text.str.contains(BOX_ROW)
    run = (boxed.ne_missing(boxed.shift(1)) | group.ne_missing(group.shift(1))).cum_sum()
    return boxed & text.str.contains(OWN_ROW).any().over(run)


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Parse table lines: one gpu_sample per GPU or MIG row, one gpu_process per process row."""
    rows = _with_continuations(_snapshot_context(_classify(lines), ctx))
    cls = pl.col("cls")
    gpus = _gpu_samples(rows.filter(cls == "gpu"))
    parents = gpus.select("snapshot", "gpu_index", "pci_bus").unique(subset=["snapshot", "gpu_index"], keep="first")
    parts = [
        gpus,
        _mig_samples(rows.filter(cls == "mig")).join(parents, on=["snapshot", "gpu_index"], how="left"),
        _processes(rows.filter(cls == "process")).join(parents, on=["snapshot", "gpu_index"], how="left"),
        log_rows(rows.filter(cls.is_in(["log", "no_processes"])), FORMAT, **_inherited_time()),
        _mig_instances(rows.filter(cls == "mig_instance")),
        _mig_profiles(rows.filter(cls == "mig_profile")),
    ]
    counts = {"header": rows.filter(cls.is_in(["timestamp", "version", "header"])).height,
              "table border": rows.filter(cls == "border").height}
    events = pl.concat([conform_events(part) for part in parts])
    return Parsed(events=events, skipped={reason: n for reason, n in counts.items() if n})


def _classify(lines: pl.DataFrame) -> pl.DataFrame:
    text = pl.col("text")
    by_shape = (
        pl.when(text.str.contains(TIMESTAMP_LINE)).then(pl.lit("timestamp"))
        .when(text.str.contains(VERSION_LINE)).then(pl.lit("version"))
        .when(text.str.contains(BORDER_LINE)).then(pl.lit("border"))
        .when(text.str.contains(GPU_NAME_ROW)).then(pl.lit("gpu"))
        .when(text.str.contains(MIG_DEVICE_ROW)).then(pl.lit("mig"))
        .when(text.str.contains(PROCESS_ROW)).then(pl.lit("process"))
        .when(text.str.contains(NO_PROCESSES_ROW)).then(pl.lit("no_processes"))
        .when(text.str.contains(MIG_INSTANCE_ROW)).then(pl.lit("mig_instance"))
        .when(text.str.contains(MIG_GI_PROFILE_ROW) | text.str.contains(MIG_CI_PROFILE_ROW)).then(pl.lit("mig_profile"))
        .when(text.str.contains(HEADER_LINE)).then(pl.lit("header"))
        .otherwise(pl.lit("log"))
    )
    above = pl.col("cls").shift(1)
    by_position = (
        pl.when((above == "gpu") & text.str.contains(GPU_USAGE_ROW)).then(pl.lit("gpu_usage"))
        .when((above == "mig") & text.str.contains(MIG_BAR1_ROW)).then(pl.lit("mig_bar1"))
        .when((above == "mig_profile") & text.str.contains(MIG_PROFILE_MORE_ROW)).then(pl.lit("mig_profile_more"))
        .otherwise(pl.col("cls"))
    )
    third_row = pl.when((above == "gpu_usage") & text.str.contains(GPU_MIG_ROW)).then(pl.lit("gpu_mig")).otherwise(pl.col("cls"))
    return lines.with_columns(cls=by_shape).with_columns(cls=by_position).with_columns(cls=third_row)


def _snapshot_context(rows: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Carry each snapshot's timestamp and driver/CUDA versions onto its rows.

    A snapshot opens at its timestamp line, or at a version box with no timestamp just above.
    """
    is_stamp = pl.col("cls") == "timestamp"
    stamped_above = is_stamp.shift(1).fill_null(False) | is_stamp.shift(2).fill_null(False)
    opens = is_stamp | ((pl.col("cls") == "version") & ~stamped_above)
    version = pl.col("text").str.extract_groups(VERSION_LINE).struct
    framed = rows.with_columns(snapshot=opens.cum_sum()).with_columns(
        ts_raw=pl.when(is_stamp).then(pl.col("text").str.strip_chars()).first().over("snapshot"),
        driver=version.field("driver").forward_fill().over("snapshot"),
        cuda=known(version.field("cuda")).forward_fill().over("snapshot"),
    )
    return framed.with_columns(ts=map_distinct(framed["ts_raw"], lambda text: ctime_to_utc(text, ctx.tz)))


def _with_continuations(rows: pl.DataFrame) -> pl.DataFrame:
    """Put the text of each record's continuation rows on its first row."""
    def following(k: int, cls: str) -> pl.Expr:
        return pl.when(pl.col("cls").shift(-k) == cls).then(pl.col("text").shift(-k))

    return rows.with_columns(
        usage_text=following(1, "gpu_usage"),
        mig_mode_text=pl.when(pl.col("cls").shift(-1) == "gpu_usage").then(following(2, "gpu_mig")),
        bar1_text=following(1, "mig_bar1"),
        profile_more_text=following(1, "mig_profile_more"),
    )


def _mig_instances(rows: pl.DataFrame) -> pl.DataFrame:
    """``mig -lgi`` / ``-lci`` rows: a log row of the GPU naming the instance (no reading to sample)."""
    row = pl.col("text").str.extract_groups(MIG_INSTANCE_ROW).struct
    of_ci = row.field("parent_gi").is_not_null()
    return log_rows(
        rows, FORMAT, **_inherited_time(),
        gpu_index=integer(row.field("gpu")),
        attrs=attrs_json(
            mig_profile=row.field("profile"), mig_profile_id=integer(row.field("profile_id")),
            gi=integer(pl.coalesce(row.field("parent_gi"), row.field("id"))), ci=pl.when(of_ci).then(integer(row.field("id"))),
            placement=row.field("placement"),
        ),
    )


def _mig_profiles(rows: pl.DataFrame) -> pl.DataFrame:
    """``mig -lgip`` / ``-lcip`` profiles: a log row of the GPU per profile, its two rows one event."""
    rows = _with_parts(rows, gi_parts=("text", MIG_GI_PROFILE_ROW), ci_parts=("text", MIG_CI_PROFILE_ROW),
                       more_parts=("profile_more_text", MIG_PROFILE_MORE_ROW))
    gi, ci, more = pl.col("gi_parts").struct, pl.col("ci_parts").struct, pl.col("more_parts").struct

    def field(name: str) -> pl.Expr:  # a field both layouts print
        return pl.coalesce(gi.field(name), ci.field(name))

    return log_rows(
        rows, FORMAT, **_inherited_time(),
        n_lines=1 + pl.col("profile_more_text").is_not_null().cast(pl.Int32),
        message=_record_message("text", "profile_more_text"),
        gpu_index=integer(field("gpu")),
        attrs=attrs_json(
            mig_profile=field("profile"), mig_profile_id=integer(field("profile_id")), gi=integer(ci.field("gi")),
            default_profile=pl.when(ci.field("profile").is_not_null()).then(ci.field("default").is_not_null()),
            instances_free=integer(field("free")), instances_total=integer(field("total")),
            memory_gib=number(gi.field("memory")), p2p=gi.field("p2p"), sm_count=integer(field("sm")),
            decoders=integer(field("dec")), encoders=integer(field("enc")),
            ofa=integer(pl.coalesce(ci.field("ofa"), more.field("ofa"))),
            copy_engines=integer(more.field("ce")), jpg=integer(more.field("jpg")),
        ),
    )


def _inherited_time() -> dict[str, pl.Expr]:
    return {"ts": pl.col("ts"), "ts_raw": pl.col("ts_raw"), "ts_quality": quality(pl.col("ts"), "inherited")}


def _record_message(*texts: str) -> pl.Expr:
    return pl.concat_str([pl.col(t).str.strip_chars_end() for t in texts], separator="\n", ignore_nulls=True)


def _with_parts(rows: pl.DataFrame, **parts: tuple[str, str]) -> pl.DataFrame:
    """``rows`` with the groups of each (column, pattern) as a struct column.

    An expression is evaluated once per use, so a struct read field by field is built first.
    """
    return rows.with_columns(**{name: pl.col(column).str.extract_groups(pattern) for name, (column, pattern) in parts.items()})


def _gpu_samples(rows: pl.DataFrame) -> pl.DataFrame:
    rows = _with_parts(rows, name_parts=("text", GPU_NAME_ROW), usage_parts=("usage_text", GPU_USAGE_ROW),
                       mig_parts=("mig_mode_text", GPU_MIG_ROW))
    name, usage, mig = pl.col("name_parts").struct, pl.col("usage_parts").struct, pl.col("mig_parts").struct
    persistence = known(name.field("persistence"))
    driver_model = persistence.is_in(["WDDM", "TCC", "MCDM"])
    message = _record_message("text", "usage_text", "mig_mode_text")
    return rows.select(
        "line",
        "snapshot",
        n_lines=(1 + pl.col("usage_text").is_not_null().cast(pl.Int32) + pl.col("mig_mode_text").is_not_null().cast(pl.Int32)),
        kind=pl.lit("gpu_sample"),
        # ERR! is a reading NVML failed to get (a dead fan, a power sensor of a GPU about to drop off the bus);
        # an uncorrectable ECC error since the driver loaded means the GPU needs a reset (as in -q).
        severity=pl.when(message.str.contains("ERR!", literal=True) | (integer(known(name.field("ecc"))) > 0))
        .then(pl.lit("warning")).otherwise(pl.lit("info")),
        message=message,
        format=pl.lit(FORMAT),
        gpu_index=integer(name.field("index")),
        pci_bus=known(name.field("bus")),  # N/A on integrated GPUs (Jetson)
        mem_used_bytes=to_bytes(usage.field("used")),
        mem_total_bytes=to_bytes(usage.field("total")),
        gpu_util_pct=number(usage.field("util")),
        attrs=attrs_json(
            name=known(name.field("name")),
            temp_c=number(usage.field("temp")),
            power_w=number(usage.field("power")),
            power_cap_w=number(usage.field("cap")),
            pstate=known(usage.field("perf")),
            fan_pct=number(usage.field("fan")),
            persistence=pl.when(~driver_model).then(persistence),
            driver_model=pl.when(driver_model).then(persistence),
            driver=pl.col("driver"),
            cuda=pl.col("cuda"),
            display_active=known(name.field("disp")),
            volatile_uncorr_ecc=known(name.field("ecc")),
            compute_mode=known(usage.field("compute")),
            mig_mode=known(mig.field("mig")),
        ),
        **_inherited_time(),
    )


def _mig_samples(rows: pl.DataFrame) -> pl.DataFrame:
    rows = _with_parts(rows, dev_parts=("text", MIG_DEVICE_ROW), bar1_parts=("bar1_text", MIG_BAR1_ROW))
    dev, bar1 = pl.col("dev_parts").struct, pl.col("bar1_parts").struct
    return rows.select(
        "line",
        "snapshot",
        n_lines=1 + pl.col("bar1_text").is_not_null().cast(pl.Int32),
        kind=pl.lit("gpu_sample"),
        severity=pl.lit("info"),
        message=_record_message("text", "bar1_text"),
        format=pl.lit(FORMAT),
        gpu_index=integer(dev.field("gpu")),
        mem_used_bytes=to_bytes(dev.field("used")),
        mem_total_bytes=to_bytes(dev.field("total")),
        attrs=attrs_json(
            mig_device=integer(dev.field("dev")),
            gi=integer(dev.field("gi")),
            ci=integer(dev.field("ci")),
            sm_count=integer(dev.field("sm")),
            volatile_uncorr_ecc=known(dev.field("ecc")),
            bar1_used_bytes=to_bytes(bar1.field("used")),
            bar1_total_bytes=to_bytes(bar1.field("total")),
            copy_engines=integer(dev.field("ce")),
            encoders=integer(dev.field("enc")),
            decoders=integer(dev.field("dec")),
            ofa=integer(dev.field("ofa")),
            jpg=integer(dev.field("jpg")),
            driver=pl.col("driver"),
            cuda=pl.col("cuda"),
        ),
        **_inherited_time(),
    )


def _processes(rows: pl.DataFrame) -> pl.DataFrame:
    rows = _with_parts(rows, proc_parts=("text", PROCESS_ROW))
    proc = pl.col("proc_parts").struct
    return rows.select(
        "line",
        "snapshot",
        n_lines=pl.lit(1, pl.Int32),
        kind=pl.lit("gpu_process"),
        severity=pl.lit("info"),
        message=pl.col("text").str.strip_chars_end(),
        format=pl.lit(FORMAT),
        gpu_index=integer(proc.field("gpu")),
        pid=proc.field("pid").cast(pl.Int64, strict=False),
        process=proc.field("name"),
        mem_used_bytes=to_bytes(proc.field("mem")),
        attrs=attrs_json(type=known(proc.field("type")), gi=integer(known(proc.field("gi"))), ci=integer(known(proc.field("ci")))),
        **_inherited_time(),
    )
