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
from datetime import datetime
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
    """One ``cgroup_memory`` event for each file's value lines; other lines stay ``log``.

    The lines of several files (a ``batch_file`` column) are read at once: each file's role
    comes from its own name and keys (:func:`_file_role`), its time from its own mtime.
    """
    alone = "batch_file" not in lines.columns
    numbered = lines.with_columns(batch_file=pl.lit(0, pl.Int32)) if alone else lines
    values = numbered.with_columns(kv=pl.col("text").str.extract_groups(_KEYED_LINE), single=pl.col("text").str.extract(_SINGLE_LINE, 1))
    keys = values.group_by("batch_file").agg(pl.col("kv").struct.field("key").drop_nulls().unique())
    files = _files(ctx.files or ((ctx.file, ctx.reference_time),), dict(keys.iter_rows()))
    rows = values.join(files, on="batch_file", how="left").with_columns(_record_fields())
    record = rows.filter(pl.col("is_record"))
    others = rows.filter(~pl.col("is_record")).select("line", "batch_file", message="text", n_lines=pl.lit(1, pl.Int32))
    events = pl.concat([_readings(record), others], how="diagonal_relaxed").sort("line")
    return Parsed(events=events.drop("batch_file") if alone else events)


def _files(files: Sequence[tuple[str, datetime | None]], keys: dict[int, list[str]]) -> pl.DataFrame:
    """One row per file of the batch: what its name and keys make of it (``_FILE_COLUMNS``)."""
    rows = []
    for number, (file, mtime) in enumerate(files):
        name = PurePosixPath(file.replace("\\", "/")).name
        role, attribute, version = _file_role(name, set(keys.get(number, ())))
        header = json.dumps({"cgroup_version": version, "cgroup_file": name}, separators=(",", ":"))[:-1]
        rows.append((number, name, role, attribute, version, header, cgroup_path(file), mtime))
    return pl.DataFrame(rows, schema=_FILE_COLUMNS, orient="row")


_FILE_COLUMNS = {
    "batch_file": pl.Int32(), "name": pl.String(), "role": pl.String(), "attribute": pl.String(), "version": pl.Int32(),
    "header": pl.String(), "cgroup": pl.String(), "mtime": schema.UTC_MICROS,
}


def _record_fields() -> list[pl.Expr]:
    """``key``, ``value`` and ``is_record`` of a line: a one-number file's first number, or a table's ``key value`` line."""
    single = pl.col("role") == "single"
    first_number = pl.col("line") == pl.col("line").filter(pl.col("single").is_not_null()).min().over("batch_file")
    return [
        pl.when(~single).then(pl.col("kv").struct.field("key")).alias("key"),
        pl.when(single).then(pl.col("single")).otherwise(pl.col("kv").struct.field("value")).alias("value"),
        pl.when(single).then(first_number.fill_null(False)).otherwise(pl.col("kv").struct.field("key").is_not_null()).alias("is_record"),
    ]


def _readings(record: pl.DataFrame) -> pl.DataFrame:
    """Each file's record lines folded into its ``cgroup_memory`` event."""
    value, attribute = pl.col("value"), pl.col("attribute")
    number = value.cast(pl.Int64, strict=False)
    unlimited = (value == "max") | (number >= UNLIMITED_BYTES)
    body = _member(value, unlimited).drop_nulls().str.join(",")
    summary = record.group_by("batch_file", maintain_order=True).agg(
        pl.col("name", "role", "attribute", "version", "header", "cgroup", "mtime").first(),
        line=pl.col("line").min(),
        n_lines=pl.len().cast(pl.Int32),
        body=body,
        listed=pl.format("{} {}", pl.col("key"), value).fill_null(value).str.join(", "),
        mem_used_bytes=number.filter(attribute == "used").first(),
        mem_total_bytes=pl.when(~unlimited).then(number).filter(attribute == "limit").first(),
        alarming=_alarming(number).any(),
    )
    return summary.select(
        "batch_file", "line", "n_lines", "mem_used_bytes", "mem_total_bytes", "cgroup",
        attrs=pl.col("header") + pl.when(pl.col("body") == "").then(pl.lit("")).otherwise(pl.lit(",") + pl.col("body")) + pl.lit("}"),
        message=pl.col("name") + pl.lit(": ") + pl.col("listed"),
        kind=pl.lit("cgroup_memory"),
        format=pl.format("cgroup_v{}", pl.col("version")),
        severity=pl.when(pl.col("alarming")).then(pl.lit("warning")).otherwise(pl.lit("info")),
        ts=pl.col("mtime"),
        ts_quality=pl.when(pl.col("mtime").is_not_null()).then(pl.lit("file_mtime")).otherwise(pl.lit("missing")),
        pod_uid=memcg_pod_uid(pl.col("cgroup")),
        container_id=memcg_container_id(pl.col("cgroup")),
    )


def _member(value: pl.Expr, unlimited: pl.Expr) -> pl.Expr:
    """A record line's attrs member: a table's ``"prefix.key":value``; a one-number file's number
    under its attribute (none for the usage, which has a column; for the limit, whether there is none)."""
    role, attribute, key = pl.col("role"), pl.col("attribute"), pl.col("key")
    named = pl.concat_str([role, key], separator="|").replace_strict(_KEY_ATTR_BY_ROLE, default=None, return_dtype=pl.String)
    keyed = pl.format('"{}":{}', pl.coalesce(named, role.replace_strict(_KEY_PREFIX, default="", return_dtype=pl.String) + key), value)
    limit = pl.when(unlimited).then(pl.lit('"unlimited":true')).otherwise(pl.lit('"unlimited":false'))
    counter = pl.when(value == "max").then(pl.format('"{}":null,"{}_unlimited":true', attribute, attribute)).otherwise(
        pl.format('"{}":{}', attribute, value)
    )
    return (
        pl.when(role != "single").then(keyed)
        .when(attribute == "used").then(pl.lit(None, pl.String))
        .when(attribute == "limit").then(limit)
        .otherwise(counter)
    )


_KEY_ATTR_BY_ROLE = {f"{role}|{key}": name for role, names in _KEY_ATTRS.items() for key, name in names.items()}


def _alarming(number: pl.Expr) -> pl.Expr:
    """Whether a record line reports a limit hit: OOM kills, a failcnt, a cgroup under OOM."""
    failcnt = (pl.col("role") == "single") & (pl.col("attribute") == "failcnt")
    oom_key = (pl.col("role") != "single") & pl.col("key").is_in(["oom", "oom_kill", "under_oom"])
    return (failcnt | oom_key) & (number > 0)


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
        segmented=True,
    )
)
