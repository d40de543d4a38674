"""Who is who on a host: maps between pids, containers, pods and GPUs, learned from the events.

No single log names everything (the folder layout of container logs names a pod too). The kernel names a pid and its memcg path (so a
container id and pod uid), the kubelet names pod uid, pod and namespace, the runtime
names container ids, nvidia-smi names GPU index, UUID and PCI bus, and its compute-apps
rows name the pids on each GPU. :class:`IdentityMaps` learns those pairings per host from
the events themselves and fills the gaps of a few rows (the anchors), so that a kernel
kill, a kubelet OOMKilled and a CUDA OOM traceback can be seen to be the same failure.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

POD_FIELDS = ("pod_uid", "pod", "namespace", "container")
_PID_TOLERANCE = "1d"  # pids are reused: trust a pid ↔ container pairing for a day around the anchor
_PID_GPU_TOLERANCE = "1h"


# Kubernetes writes container logs as /var/log/pods/<namespace>_<pod>_<uid>/<container>/<n>.log and links them as
# /var/log/containers/<pod>_<namespace>_<container>-<container id>.log; neither name may hold an underscore.
_NAME = r"[a-z0-9][-a-z0-9.]*"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_POD_DIR = rf"(?:^|/)pods/(?P<namespace>{_NAME})_(?P<pod>{_NAME}?)(?:_(?P<pod_uid>{_UUID}))?/(?:(?P<container>{_NAME})/[0-9]+\.log)?"
_CONTAINER_LINK = rf"(?:^|/)containers/(?P<pod>{_NAME})_(?P<namespace>{_NAME})_(?P<container>{_NAME})-(?P<container_id>[0-9a-f]{{64}})\.log"


def layout_identity(events: pl.LazyFrame) -> pl.LazyFrame:
    """Fill pod, namespace, pod uid, container and container id from Kubernetes' log file layout, where missing.

    Not for Xid reports: a device plugin's log names the GPU's trouble, not its own pod's.
    """
    files = events.select("file").unique().collect()
    pod_dir = files.select("file", found=pl.col("file").str.extract_groups(_POD_DIR)).unnest("found")
    link = files.select("file", found=pl.col("file").str.extract_groups(_CONTAINER_LINK)).unnest("found")
    fields = ["pod", "namespace", "pod_uid", "container", "container_id"]
    table = (
        pl.concat([pod_dir, link], how="diagonal_relaxed")
        .drop_nulls("pod")
        .unique("file", keep="first")
        .select("file", *[pl.col(f).alias(f"{f}__layout") for f in fields])
    )
    if table.height == 0:
        return events
    return (
        events.join(table.lazy(), on="file", how="left", maintain_order="left")
        .with_columns([pl.when(pl.col("kind") != "xid").then(pl.coalesce(f, f"{f}__layout")).otherwise(pl.col(f)).alias(f) for f in fields])
        .drop([f"{f}__layout" for f in fields])
    )


def pci_key(column: str = "pci_bus") -> pl.Expr:
    """Bus and device of a PCI address, lowercase: NVRM's ``0000:3b:00`` and nvidia-smi's ``00000000:3B:00.0`` agree."""
    return pl.col(column).str.to_lowercase().str.extract(r"([0-9a-f]{2}:[0-9a-f]{2})(?:\.[0-7])?$", 1)


@dataclass(frozen=True)
class IdentityMaps:
    """Per-host pairings learned from events; :meth:`resolve` fills a frame's missing identities."""

    containers: pl.DataFrame  # host, container_id → pod_uid, pod, namespace, container
    pods: pl.DataFrame  # host, pod_uid → pod, namespace
    pod_uids: pl.DataFrame  # host, pod, ts → pod_uid, namespace (a name is reused by the next pod of a StatefulSet)
    gpus: pl.DataFrame  # host, gpu_uuid → gpu_index, pci
    gpu_indexes: pl.DataFrame  # host, gpu_index → gpu_uuid, pci
    pcis: pl.DataFrame  # host, pci → gpu_index, gpu_uuid
    pid_cgroups: pl.DataFrame  # host, pid, ts → container_id, pod_uid (pids are reused)
    pid_gpus: pl.DataFrame  # host, pid, ts → gpu_uuid, gpu_index

    @classmethod
    def learn(cls, events: pl.DataFrame) -> IdentityMaps:
        """Learn the pairings from events with columns host, ts, source, kind, pid and the identity columns.

        Every map is a lazy filter + aggregation, collected together so each fuses its
        filter into its aggregation instead of copying the matching rows first.
        """
        lazy = events.lazy()
        named = lazy.filter(pl.col("pod_uid").is_not_null() & pl.col("pod").is_not_null())
        gpu_table = (
            lazy.filter((pl.col("gpu_uuid").is_not_null() | pl.col("pci_bus").is_not_null()) & pl.col("gpu_index").is_not_null())
            .with_columns(pci=pci_key())
            .group_by("host", "gpu_index")
            .agg(_first("gpu_uuid"), _first("pci"))
        )
        timed_pids = lazy.filter(pl.col("pid").is_not_null() & pl.col("ts").is_not_null())
        containers, pods, pod_uids, gpu_indexes, pid_cgroups, pid_gpus = pl.collect_all([
            lazy.filter(pl.col("container_id").is_not_null()).group_by("host", "container_id").agg(*[_first(c) for c in POD_FIELDS]),
            named.group_by("host", "pod_uid").agg(_first("pod"), _first("namespace")),
            _sightings(named, ["host", "pod"], ["pod_uid", "namespace"]),
            gpu_table,
            _sightings(timed_pids.filter(pl.col("container_id").is_not_null() | pl.col("pod_uid").is_not_null()), ["host", "pid"],
                       ["container_id", "pod_uid"]),
            _sightings(timed_pids.filter((pl.col("kind") == "gpu_process") & (pl.col("gpu_uuid").is_not_null() | pl.col("gpu_index").is_not_null())),
                       ["host", "pid"], ["gpu_uuid", "gpu_index"]),
        ])
        return cls(
            containers=containers,
            pods=pods,
            pod_uids=pod_uids,
            gpus=gpu_indexes.drop_nulls("gpu_uuid").unique(subset=["host", "gpu_uuid"], keep="first").select("host", "gpu_uuid", "gpu_index", "pci"),
            gpu_indexes=gpu_indexes,
            pcis=gpu_indexes.drop_nulls("pci").unique(subset=["host", "pci"], keep="first").select("host", "pci", "gpu_index", "gpu_uuid"),
            pid_cgroups=pid_cgroups,
            pid_gpus=pid_gpus,
        )

    def resolve(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` (with a unique ``aid`` column) with identities filled from the maps; adds ``pci``."""
        filled = frame.with_columns(pci=pci_key())
        filled = _fill(filled, self.pcis, ["host", "pci"], ["gpu_index", "gpu_uuid"])
        filled = _fill(filled, self.gpus, ["host", "gpu_uuid"], ["gpu_index", "pci"])
        filled = _fill(filled, self.gpu_indexes, ["host", "gpu_index"], ["gpu_uuid", "pci"])
        filled = _fill_asof(filled, self.pid_cgroups, ["host", "pid"], ["container_id", "pod_uid"], _PID_TOLERANCE)
        filled = _fill_asof(filled, self.pid_gpus, ["host", "pid"], ["gpu_uuid", "gpu_index"], _PID_GPU_TOLERANCE)
        filled = _fill(filled, self.gpus, ["host", "gpu_uuid"], ["gpu_index", "pci"])
        filled = _fill(filled, self.gpu_indexes, ["host", "gpu_index"], ["gpu_uuid", "pci"])
        filled = _fill(filled, self.containers, ["host", "container_id"], list(POD_FIELDS))
        filled = _fill(filled, self.pods, ["host", "pod_uid"], ["pod", "namespace"])
        return _fill_asof(filled, self.pod_uids, ["host", "pod"], ["pod_uid", "namespace"], _PID_TOLERANCE)


def _sightings(rows: pl.LazyFrame, by: list[str], values: list[str]) -> pl.LazyFrame:
    """When each pairing was seen: its first and last time, two rows per pairing, sorted by time."""
    timed = rows.filter(pl.col("ts").is_not_null())
    spans = timed.group_by(*by, *values).agg(first=pl.col("ts").min(), last=pl.col("ts").max())
    return spans.unpivot(index=[*by, *values], on=["first", "last"], value_name="ts").drop("variable").unique().sort("ts")


def _first(column: str) -> pl.Expr:
    return pl.col(column).drop_nulls().first().alias(column)


def _fill(frame: pl.DataFrame, mapping: pl.DataFrame, on: list[str], columns: list[str]) -> pl.DataFrame:
    """Fill nulls of ``columns`` from ``mapping`` joined on ``on`` (rows with a null key are left as they are)."""
    renamed = mapping.select(*on, *[pl.col(c).alias(f"{c}__map") for c in columns])
    joined = frame.join(renamed, on=on, how="left", maintain_order="left")
    return joined.with_columns([pl.coalesce(c, f"{c}__map").cast(frame.schema[c]).alias(c) for c in columns]).drop(
        [f"{c}__map" for c in columns]
    )


def _fill_asof(frame: pl.DataFrame, table: pl.DataFrame, by: list[str], columns: list[str], tolerance: str) -> pl.DataFrame:
    """Fill ``columns`` from the row of ``table`` with the same ``by`` keys nearest in time."""
    timed = frame.filter(pl.all_horizontal([pl.col(k).is_not_null() for k in by]) & pl.col("ts").is_not_null()).select("aid", *by, "ts").sort("ts")
    if timed.height == 0 or table.height == 0:
        return frame
    found = timed.join_asof(
        table.select(*by, "ts", *[pl.col(c).alias(f"{c}__map") for c in columns]),
        on="ts", by=by, strategy="nearest", tolerance=tolerance, check_sortedness=False,
    ).select("aid", *[f"{c}__map" for c in columns])
    joined = frame.join(found, on="aid", how="left", maintain_order="left")
    return joined.with_columns([pl.coalesce(c, f"{c}__map").cast(frame.schema[c]).alias(c) for c in columns]).drop(
        [f"{c}__map" for c in columns]
    )
