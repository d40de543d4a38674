"""cgroup memory files as support bundles copy them out of a node or a container.

cgroup v1 (``memory.usage_in_bytes``, ``memory.max_usage_in_bytes``, ``memory.limit_in_bytes``,
``memory.failcnt``, ``memory.oom_control``, ``memory.stat``) and v2 (``memory.current``,
``memory.peak``, ``memory.max``, ``memory.events``, ``memory.stat``), as the kernel documents
them (Documentation/admin-guide/cgroup-v1/memory.rst and cgroup-v2.rst).

Most of these files hold one number, so there is nothing to sniff: they are claimed by name
(:func:`claims_name`) when no content sniffer claims them; ``memory.stat``, ``memory.events``
and ``memory.oom_control`` are ``key value`` tables and are also sniffed by content.

Each file gives exactly one ``cgroup_memory`` event (its ``key value`` or value lines folded
into it; any other line stays a ``log`` event) carrying the facts of that file only:

==========================================  ====================================================
file                                        fields
==========================================  ====================================================
memory.current / memory.usage_in_bytes      mem_used_bytes
memory.max / memory.limit_in_bytes          mem_total_bytes (null when unlimited: "max", or
                                            v1's page-counter maximum); attrs.unlimited
memory.peak / memory.max_usage_in_bytes     attrs.peak_bytes
memory.failcnt                              attrs.failcnt
memory.events                               attrs.oom, oom_kill, max_events, events.<other key>
memory.oom_control                          attrs.oom_kill_disable, under_oom, oom_kill
memory.stat                                 attrs."stat.<key>" for every entry
==========================================  ====================================================

plus ``attrs.cgroup_version`` (1 or 2) and ``attrs.cgroup_file``. The files of one folder
share ``cgroup`` (from the folder layout: what follows ``sys/fs/cgroup`` without v1's
``memory`` controller folder, else from the first ``kubepods`` folder, else the folder as
given) and the ``pod_uid`` / ``container_id`` parsed from it as the kernel source parses
memcg paths. :func:`merge_readings` folds a folder's events into one reading. The files carry
no time: ``ts`` is the file's modification time (``ts_quality="file_mtime"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

import polars as pl

from rca import schema
from rca.sources import register
from rca.sources._base import ParseContext, Parsed, Source
from rca.sources._kube import memcg_container_id, memcg_pod_uid

# file name -> (attribute it sets, cgroup version); "used" and "limit" go to the mem_* columns.
SINGLE_VALUE_FILES: dict[str, tuple[str, int]] = {
    "memory.current": ("used", 2),
    "memory.usage_in_bytes": ("used", 1),
    "memory.max": ("limit", 2),
    "memory.limit_in_bytes": ("limit", 1),
    "memory.peak": ("peak_bytes", 2),
    "memory.max_usage_in_bytes": ("peak_bytes", 1),
    "memory.failcnt": ("failcnt", 1),
    "memory.high": ("high_bytes", 2),
    "memory.low": ("low_bytes", 2),
    "memory.min": ("min_bytes", 2),
    "memory.swap.current": ("swap_bytes", 2),
    "memory.swap.max": ("swap_max_bytes", 2),
    "memory.soft_limit_in_bytes": ("soft_limit_bytes", 1),
    "memory.memsw.usage_in_bytes": ("memsw_used_bytes", 1),
    "memory.memsw.limit_in_bytes": ("memsw_limit_bytes", 1),
    "memory.memsw.max_usage_in_bytes": ("memsw_peak_bytes", 1),
}
KEYED_FILES = {"memory.events": "events", "memory.events.local": "events_local", "memory.oom_control": "oom_control", "memory.stat": "stat"}

# v1 has no "max": an unlimited counter reads PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KiB pages).
UNLIMITED_BYTES = 1 << 60

_VALUE = r"(?:0|[1-9][0-9]*)"
_SINGLE_LINE = rf"^\s*(?P<value>{_VALUE}|max)\s*$"
_KEYED_LINE = rf"^\s*(?P<key>[a-z][a-z0-9_]*)\s+(?P<value>-?{_VALUE})\s*$"
_EVENTS_KEYS = {"low", "high", "max", "oom", "oom_kill", "oom_group_kill"}
_OOM_CONTROL_KEYS = {"oom_kill_disable", "under_oom", "oom_kill"}
# Keys of memory.events and memory.oom_control that have attribute names of their own.
_KEY_ATTRS = {
    "events": {"max": "max_events", "oom": "oom", "oom_kill": "oom_kill"},
    "oom_control": {"oom_kill_disable": "oom_kill_disable", "under_oom": "under_oom", "oom_kill": "oom_kill"},
}
_KEY_PREFIX = {"events": "events.", "events_local": "events_local.", "oom_control": "oom_control.", "stat": "stat."}
_V1_STAT_KEYS = {"cache", "rss", "mapped_file", "hierarchical_memory_limit", "total_rss"}


def sniff(head: Sequence[str]) -> float:
    """0.95 for a memory.events or memory.oom_control table, 0.9 for memory.stat; 0 otherwise."""
    keys = _keys(head)
    if keys is None:
        return 0.0
    if keys <= _OOM_CONTROL_KEYS and "under_oom" in keys:
        return 0.95
    if keys <= _EVENTS_KEYS and {"max", "oom_kill"} <= keys:
        return 0.95
    if "pgfault" in keys and ({"anon", "file"} <= keys or {"cache", "rss"} <= keys):
        return 0.9
    return 0.0


def claims_name(path: str, head: Sequence[str]) -> float:
    """0.9 for a cgroup memory file by its name whose content is what that file holds."""
    name = PurePosixPath(path.replace("\\", "/")).name
    if name in SINGLE_VALUE_FILES:
        return 0.9 if head and pl.Series(list(head), dtype=pl.String).str.contains(_SINGLE_LINE).all() else 0.0
    if name in KEYED_FILES:
        return 0.9 if _keys(head) is not None else 0.0
    return 0.0


def _keys(head: Sequence[str]) -> set[str] | None:
    """The keys of a head made only of ``key value`` lines, else None."""
    keys = pl.Series(list(head), dtype=pl.String).str.extract(_KEYED_LINE, 1)
    if keys.len() == 0 or keys.null_count():
        return None
    return set(keys.to_list())


def cgroup_path(file: str) -> str:
    """The cgroup a file's folder stands for (see the module docstring)."""
    folder = PurePosixPath(file.replace("\\", "/")).parent.as_posix()
    mounted = re.search(r"(?:^|/)sys/fs/cgroup(/.*)?$", folder)
    if mounted:
        rest = mounted.group(1) or "/"
        return re.sub(r"^/memory(?:,[a-z_]+)*(?=/|$)", "", rest) or "/"
    kubepods = re.search(r"(?:^|/)(kubepods[^/]*(?:/.*)?)$", folder)
    return "/" + kubepods.group(1) if kubepods else folder


def _file_role(name: str, keys: set[str]) -> tuple[str, str | None, int | None]:
    """(role, single-value attribute, version) of a file: by its name, else by the keys it holds."""
    if name in SINGLE_VALUE_FILES:
        attribute, version = SINGLE_VALUE_FILES[name]
        return "single", attribute, version
    role = KEYED_FILES.get(name)
    if role is None:
        role = "oom_control" if "under_oom" in keys else "events" if "oom_kill" in keys and "pgfault" not in keys else "stat"
    version = {"events": 2, "events_local": 2, "oom_control": 1}.get(role)
    if role == "stat":
        version = 1 if keys & _V1_STAT_KEYS else 2
    return role, None, version


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """One ``cgroup_memory`` event for the file's value lines; other lines stay ``log``."""
    name = PurePosixPath(ctx.file.replace("\\", "/")).name
    keyed = lines.with_columns(kv=pl.col("text").str.extract_groups(_KEYED_LINE))
    keys = set(keyed["kv"].struct.field("key").drop_nulls().to_list())
    role, attribute, version = _file_role(name, keys)
    if role == "single":
        value = lines["text"].str.extract(_SINGLE_LINE, 1)
        first = value.is_not_null().arg_true()
        is_record = pl.int_range(pl.len()) == (first[0] if first.len() else -1)
        rows = lines.with_columns(key=pl.lit(None, pl.String), value=value)
    else:
        rows = keyed.with_columns(key=pl.col("kv").struct.field("key"), value=pl.col("kv").struct.field("value")).drop("kv")
        is_record = pl.col("key").is_not_null()
    flagged = rows.with_columns(is_record=is_record)
    record = flagged.filter(pl.col("is_record"))
    others = flagged.filter(~pl.col("is_record")).select("line", message="text", n_lines=pl.lit(1, pl.Int32))
    events = [others]
    if record.height:
        events.insert(0, _reading(record, ctx, name, role, attribute, version))
    return Parsed(events=pl.concat(events, how="diagonal_relaxed").sort("line"))


def _reading(record: pl.DataFrame, ctx: ParseContext, name: str, role: str, attribute: str | None, version: int | None) -> pl.DataFrame:
    cgroup = cgroup_path(ctx.file)
    value = pl.col("value")
    number = value.cast(pl.Int64, strict=False)
    unlimited = (value == "max") | (number >= UNLIMITED_BYTES)
    if role == "single":
        member = _single_member(attribute or "value", value, unlimited)
    else:
        mapped = pl.col("key").replace_strict(_KEY_ATTRS.get(role, {}), default=None, return_dtype=pl.String)
        member = pl.format('"{}":{}', pl.coalesce(mapped, pl.lit(_KEY_PREFIX[role]) + pl.col("key")), value)
    header = json.dumps({"cgroup_version": version, "cgroup_file": name}, separators=(",", ":"))[:-1]
    body = member.drop_nulls().str.join(",")
    no_number = pl.lit(None, pl.Int64)
    summary = record.select(
        line=pl.col("line").min(),
        n_lines=pl.len().cast(pl.Int32),
        attrs=pl.lit(header) + pl.when(body == "").then(pl.lit("")).otherwise(pl.lit(",") + body) + pl.lit("}"),
        message=pl.lit(f"{name}: ") + pl.format("{} {}", pl.col("key"), value).fill_null(value).str.join(", "),
        mem_used_bytes=number.first() if attribute == "used" else no_number,
        mem_total_bytes=pl.when(~unlimited).then(number).first() if attribute == "limit" else no_number,
        alarming=_alarming(role, attribute, number),
    )
    ts = ctx.reference_time
    return summary.with_columns(
        kind=pl.lit("cgroup_memory"),
        format=pl.lit(f"cgroup_v{version}"),
        severity=pl.when(pl.col("alarming")).then(pl.lit("warning")).otherwise(pl.lit("info")),
        ts=pl.lit(ts, schema.UTC_MICROS),
        ts_quality=pl.lit("file_mtime" if ts else "missing"),
        cgroup=pl.lit(cgroup),
        pod_uid=memcg_pod_uid(pl.lit(cgroup)),
        container_id=memcg_container_id(pl.lit(cgroup)),
    ).drop("alarming")


def _single_member(attribute: str, value: pl.Expr, unlimited: pl.Expr) -> pl.Expr:
    """The attrs member of a one-number file: the number; for the limit, whether there is none."""
    if attribute == "used":
        return pl.lit(None, pl.String)
    if attribute == "limit":
        return pl.when(unlimited).then(pl.lit('"unlimited":true')).otherwise(pl.lit('"unlimited":false'))
    return pl.when(value == "max").then(pl.lit(f'"{attribute}":null,"{attribute}_unlimited":true')).otherwise(
        pl.format('"{}":{}', pl.lit(attribute), value)
    )


def _alarming(role: str, attribute: str | None, number: pl.Expr) -> pl.Expr:
    """Whether the file reports a limit hit: OOM kills, a failcnt, a cgroup under OOM."""
    if role == "single":
        return (number > 0).any() if attribute == "failcnt" else pl.lit(False)
    key = pl.col("key")
    return (key.is_in(["oom", "oom_kill", "under_oom"]) & (number > 0)).any()


# --- one reading per folder ---------------------------------------------------------------

CGROUP_READING_SCHEMA: dict[str, pl.DataType] = {
    "host": pl.String(),
    "cgroup": pl.String(),
    "pod_uid": pl.String(),
    "container_id": pl.String(),
    "folder": pl.String(),  # the folder of the files, as their ``file`` names it
    "ts": schema.UTC_MICROS,  # the latest modification time among the folder's files
    "cgroup_version": pl.Int32(),
    "mem_used_bytes": pl.Int64(),  # memory.current / memory.usage_in_bytes
    "mem_total_bytes": pl.Int64(),  # memory.max / memory.limit_in_bytes; null when unlimited
    "peak_bytes": pl.Int64(),  # memory.peak / memory.max_usage_in_bytes
    "failcnt": pl.Int64(),
    "oom": pl.Int64(),
    "oom_kill": pl.Int64(),
    "max_events": pl.Int64(),
    "under_oom": pl.Boolean(),
    "oom_kill_disable": pl.Boolean(),
    "stat": pl.String(),  # JSON object of memory.stat's entries, keys as the file writes them
    "event_ids": pl.List(pl.String()),
    "files": pl.List(pl.String()),
}
"""One row per cgroup folder reading, from :func:`merge_readings`."""


def merge_readings(events: pl.DataFrame) -> pl.DataFrame:
    """Fold the ``cgroup_memory`` events of each folder into one reading (``CGROUP_READING_SCHEMA``).

    ``events`` may hold any events; only the cgroup source's are read.
    """
    readings = events.filter((pl.col("source") == "cgroup") & (pl.col("kind") == "cgroup_memory"))
    if readings.height == 0:
        return schema.empty(CGROUP_READING_SCHEMA)
    attrs = pl.col("attrs")

    def number(key: str) -> pl.Expr:
        return attrs.str.json_path_match(f"$.{key}").cast(pl.Int64, strict=False)

    stat_members = attrs.str.extract_all(r'"stat\.[a-z0-9_]+":-?[0-9]+').list.eval(pl.element().str.replace(r'^"stat\.', '"'))
    prepared = readings.with_columns(
        folder=pl.col("file").str.replace(r"[/\\][^/\\]*$", ""),
        cgroup_version=number("cgroup_version").cast(pl.Int32),
        peak_bytes=number("peak_bytes"),
        failcnt=number("failcnt"),
        oom=number("oom"),
        oom_kill=number("oom_kill"),
        max_events=number("max_events"),
        under_oom=number("under_oom") > 0,
        oom_kill_disable=number("oom_kill_disable") > 0,
        stat=pl.when(stat_members.list.len() > 0).then(pl.lit("{") + stat_members.list.join(",") + pl.lit("}")),
    )
    facts = [name for name in CGROUP_READING_SCHEMA if name not in ("host", "cgroup", "folder", "ts", "event_ids", "files")]
    merged = prepared.group_by("host", "cgroup", "folder", maintain_order=True).agg(
        pl.col("ts").max(),
        *(pl.col(name).drop_nulls().first() for name in facts),
        pl.col("event_id").alias("event_ids"),
        pl.col("file").alias("files"),
    )
    return schema.conform(merged, CGROUP_READING_SCHEMA)


SOURCE = register(
    Source(
        name="cgroup",
        sniff=sniff,
        parse=parse,
        sniff_literals=("oom_kill", "under_oom", "pgfault"),
        formats=("cgroup_v1", "cgroup_v2"),
        claims_name=claims_name,
    )
)
