"""DCGM exporter metrics: Prometheus text-exposition scrapes and Prometheus query-API JSON exports.

dcgm-exporter serves ``curl :9400/metrics`` as Prometheus text exposition::

    # HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
    # TYPE DCGM_FI_DEV_FB_USED gauge
    DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-…",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",
        Hostname="gpu-node-07",container="trainer",namespace="research",pod="llama-ft-0"} 40506

Samples may end in a millisecond timestamp (Prometheus ``/federate``, or a scrape saved
with one); a scrape without timestamps takes the file's modification time, and scrapes
saved one after another in one file are told apart by each series' occurrence number
(``attrs.scrape``). A range or instant query exported from Prometheus' HTTP API
(``{"status":"success","data":{"resultType":"matrix","result":[{"metric":{…},"values":[[t,"v"],…]}]}}``)
is one JSON document, read whole (:func:`parse_bytes`), so its size is no line length.

Events: one ``gpu_sample`` per GPU (and MIG instance) per timestamp, merging
``DCGM_FI_DEV_FB_USED`` / ``FB_FREE`` (MiB → ``mem_used_bytes``, ``mem_total_bytes`` =
used + free) and ``DCGM_FI_DEV_GPU_UTIL`` (``gpu_util_pct``), with the other DCGM fields in
``attrs`` (named ones like ``temp_c``, ``power_w``; the rest under their metric name). GPU,
UUID, pod, namespace and container come from the labels (``exported_*`` after Prometheus
relabelling). ``DCGM_FI_DEV_XID_ERRORS`` holds the last Xid seen, so an ``xid`` event is
written where it changes to a non-zero code, with the kernel source's catalog attrs; so is one
where the exporter's Xid counter (``DCGM_EXP_XID_ERRORS_COUNT{…,xid="42"}``) changes to a positive
count, the code from its ``xid`` label. DCGM's blank values (9223372036854775792 and up), NaN
and ±Inf are null. The ``Hostname`` label is the host (``host_in_content``) unless it names
the exporter's own pod; other metrics (go_*, process_*) are skipped as "other metric",
comments as "comment".

``dcgmi diag -r N`` prints a boxed table: a Metadata section (DCGM version, driver, device
ids) and sections of tests, each ``| Test | Pass |`` with per-GPU rows under it (DCGM 3:
``Fail - GPU: 0`` / ``Fail - All``; DCGM 4: ``GPU0: Pass``) and ``Warning`` / ``Info`` rows
whose text is cut into fixed-width chunks over several rows (mid-word). Each result row is
an event (Fail → error, Warn → warning, Pass/Skip → info), each Warning/Info its chunks
joined into one event; kind ``xid`` where the text names an Xid, else ``log``; test, result
and the metadata in ``attrs``. ``dcgmi discovery -l`` prints the same box, a GPU per row
(name, PCI bus id and UUID wrapped under its index): one ``log`` event per GPU carrying
them. The tables have no time: the file's modification time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from rca import schema
from rca.errors import FileFormatError
from rca.sources import _xid, register
from rca.sources._base import ParseContext, Parsed, Source, attrs_json, joined_json, map_distinct

MIB = 2**20
_DCGM_BLANK = 9.2233720368547758e18  # DCGM_*_BLANK and its NOT_FOUND / NOT_SUPPORTED / NOT_PERMISSIONED neighbours

_USED, _FREE, _UTIL, _XID = "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS"
# Metrics with an attribute name of their own, and the factor from the metric's unit.
_NAMED_ATTRS: dict[str, tuple[str, float]] = {
    "DCGM_FI_DEV_GPU_TEMP": ("temp_c", 1.0),
    "DCGM_FI_DEV_MEMORY_TEMP": ("memory_temp_c", 1.0),
    "DCGM_FI_DEV_POWER_USAGE": ("power_w", 1.0),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("mem_copy_util_pct", 1.0),
    "DCGM_FI_DEV_SM_CLOCK": ("sm_clock_mhz", 1.0),
    "DCGM_FI_DEV_MEM_CLOCK": ("mem_clock_mhz", 1.0),
    "DCGM_FI_DEV_FB_RESERVED": ("fb_reserved_bytes", float(MIB)),
    "DCGM_FI_DEV_FB_TOTAL": ("fb_total_bytes", float(MIB)),
    _XID: ("last_xid", 1.0),
}
_COLUMN_METRICS = (_USED, _FREE, _UTIL)

# label in the exposition -> column; the first of several labels that is set wins (see _LABEL_COLUMNS).
_LABELS = (
    "gpu", "UUID", "pci_bus_id", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION", "GPU_I_ID", "GPU_I_PROFILE",
    "pod", "namespace", "container", "exported_pod", "exported_namespace", "exported_container", "xid",
)
_LABEL_VALUE = r'"((?:[^"\\]|\\.)*)"'
_SAMPLE_LINE = (
    r'^(?P<metric>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>(?:[^}"]|"(?:[^"\\]|\\.)*")*)\})?'
    r"\s+(?P<value>\S+)(?:\s+(?P<stamp>-?[0-9]+))?\s*$"
)
_DCGM_COMMENT = r"^#\s*(?:HELP|TYPE)\s+DCGM_"
_DCGM_SAMPLE = r"^DCGM_[A-Z0-9_]+(?:\{|\s)"
_JSON_NUMBER = r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$"
_EXPORTER_POD = r"(?i)dcgm-exporter"

# dcgmi diag's table (and discovery -l's, the same box): header, section rules (`|-----  Metadata  ---+---|`, `+-----  Hardware  ---+---+`), borders, rows.
_DIAG_HEADER = r"^\|\s*(?:Diagnostic\s*\|\s*Result|(?<discovery>GPU ID)\s*\|\s*Device Information)\s*\|$"
_DIAG_SECTION = r"^[|+]-{3,}\s+([A-Za-z][^|+]*?)\s+-+\+-+[|+]$"
_DIAG_BORDER = r"^\+[-=]+\+[-=]+\+$"
_DIAG_ROW = r"^\|(?P<name>[^|]*)\| (?P<cell>.*) \|$"
_DIAG_RESULT = (
    r"^(?:GPU\s*(?P<gpu>[0-9]+):\s*)?(?P<result>Pass|Fail|Warn|Skip)[a-z]*"
    r"(?:\s*-\s*(?:All|GPUs?:\s*(?P<gpus>[0-9]+(?:\s*,\s*[0-9]+)*)))?$"
)
_DIAG_DETAILS = {"Warning": "warning", "Info": "info", "Error": "error"}
_DIAG_SEVERITY = {"Fail": "error", "Warn": "warning", "Pass": "info", "Skip": "info"}
_DIAG_METADATA = {"DCGM Version": "dcgm_version", "Driver Version Detected": "driver_version", "GPU Device IDs Detected": "gpu_device_ids"}
_XID_IN_TEXT = r"(?i)\bXID\s*(?:error\s*)?([0-9]+)"


def sniff(head: Sequence[str]) -> float:
    """0.95 when the head holds DCGM HELP/TYPE lines, is mostly DCGM samples or a dcgmi table; 0.9 for a JSON export of DCGM metrics."""
    if not head:
        return 0.0
    if _is_json_export(head):
        return 0.9
    lines = pl.DataFrame({"text": list(head)}, schema={"text": pl.String})
    found = lines.select(
        comment=pl.col("text").str.contains(_DCGM_COMMENT).any(),
        samples=pl.col("text").str.contains(_DCGM_SAMPLE).mean(),
        diag=_is_diag_line(pl.col("text")).any(),
        boxed=pl.col("text").str.strip_chars_start().str.contains(r"^[|+]").mean(),
    ).row(0, named=True)
    if found["comment"] or (found["samples"] or 0.0) >= 0.5:
        return 0.95
    if found["diag"] and (found["boxed"] or 0.0) >= 0.5:
        return 0.95  # a dcgmi table within a longer log (a job's preflight check) is left to the log's parser
    return 0.0


def _is_json_export(head: Sequence[str]) -> bool:
    joined = "\n".join(head)
    return joined.lstrip().startswith("{") and '"resultType"' in joined and "DCGM_" in joined


def _is_diag_line(text: pl.Expr) -> pl.Expr:
    """A ``dcgmi diag`` header or section rule (cheap literal first: most lines have neither)."""
    text = text.str.strip_chars_end()
    return text.str.contains_any(["Diagnostic", "Device Information", "-----  "]) & (text.str.contains(_DIAG_HEADER) | text.str.contains(_DIAG_SECTION))


def sniff_bytes(head: bytes) -> float:
    """0.95 for a Prometheus query-API JSON document about DCGM metrics."""
    start = head.lstrip()[:1]
    return 0.95 if start == b"{" and b'"resultType"' in head and b"DCGM_" in head else 0.0


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Text exposition: samples grouped into GPU events; comments skipped; other lines kept as ``log``.

    A JSON export handed over as lines (``rca.parse_text``) is parsed as one document covering them.
    """
    if _is_json_export(lines["text"].head(60).to_list()):
        try:
            parsed = parse_bytes("\n".join(lines["text"].to_list()).encode("utf-8"), ctx)
        except FileFormatError:
            return Parsed(events=lines.select("line", message="text", n_lines=pl.lit(1, pl.Int32)))
        first = pl.int_range(pl.len()) == 0
        covering = pl.when(first).then(pl.lit(lines.height)).otherwise(0).cast(pl.Int32)
        return Parsed(events=parsed.events.with_columns(line=pl.lit(lines["line"][0], pl.Int64), n_lines=covering),
                      skipped={} if parsed.events.height else {reason: lines.height for reason in parsed.skipped})
    if lines.select(_is_diag_line(pl.col("text")).any()).item():
        return _parse_diag(lines, ctx)
    text = pl.col("text").str.strip_chars()
    comment = text.str.starts_with("#")
    classified = lines.with_columns(comment=comment, sample=text.str.extract_groups(_SAMPLE_LINE))
    skipped = {"comment": int(classified["comment"].sum())} if classified["comment"].any() else {}
    candidates = classified.filter(~pl.col("comment"))
    is_sample = pl.col("sample").struct.field("metric").is_not_null()
    unparsed = candidates.filter(~is_sample).select("line", message="text", n_lines=pl.lit(1, pl.Int32))
    samples = _exposition_samples(candidates.filter(is_sample))
    events, other = _events(samples, ctx)
    if other:
        skipped["other metric"] = other
    return Parsed(events=pl.concat([events, unparsed], how="diagonal_relaxed").sort("line"), skipped=skipped)


def parse_bytes(data: bytes, ctx: ParseContext) -> Parsed:
    """A Prometheus query-API JSON export (matrix or vector): one document, counted as one line."""
    text = data.decode("utf-8", errors="replace")
    try:
        document = pl.DataFrame({"doc": [text]}).select(pl.col("doc").str.json_decode(_JSON_DTYPE).struct.unnest())
    except pl.exceptions.PolarsError as err:
        raise FileFormatError(f"not a readable Prometheus JSON export: {_first_line(str(err))}") from None
    result = document.select(pl.col("data").struct.field("resultType"), pl.col("data").struct.field("result"), "status")
    if result["status"][0] != "success" or result["resultType"][0] not in ("matrix", "vector"):
        raise FileFormatError("Prometheus JSON export without a successful matrix or vector result")
    samples = _json_samples(result.select("result"))
    events, other = _events(samples, ctx)
    if events.height == 0:
        return Parsed(events=events, skipped={"no DCGM samples" if not other else "other metric": 1})
    first = pl.int_range(pl.len()) == 0
    return Parsed(events=events.with_columns(
        line=pl.lit(1, pl.Int64), n_lines=pl.when(first).then(1).otherwise(0).cast(pl.Int32), format=pl.lit("prometheus_json"),
    ))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200] if text.strip() else "unknown error"


# --- dcgmi diag: the boxed table of test results ---------------------------------------------


def _parse_diag(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Result rows and joined Warning/Info rows as events; metadata into attrs; rules and borders skipped."""
    text = pl.col("text").str.strip_chars_end()
    name, cell = pl.col("row").struct.field("name").str.strip_chars(), pl.col("row").struct.field("cell")
    discovery = lines.select(text.str.extract(_DIAG_HEADER, 1).is_not_null().any()).item()
    framed = lines.with_columns(
        section=text.str.extract(_DIAG_SECTION, 1),
        border=text.str.contains(_DIAG_BORDER) | text.str.contains(_DIAG_HEADER),
        row=text.str.extract_groups(_DIAG_ROW),
    ).with_columns(pl.col("section").forward_fill().alias("in_section"), name=name, cell=cell)
    is_row = pl.col("cell").is_not_null() & pl.col("section").is_null() & ~pl.col("border")
    metadata = pl.col("in_section").str.to_lowercase() == "metadata"
    result = pl.col("cell").str.strip_chars().str.extract_groups(_DIAG_RESULT)
    detail = pl.col("name").is_in(list(_DIAG_DETAILS))
    framed = framed.with_columns(
        is_row=is_row, metadata=metadata.fill_null(False) & is_row,
        result=pl.when(is_row & ~detail & (not discovery)).then(result),
    ).with_columns(
        test=pl.when(pl.col("is_row") & ~pl.col("metadata") & (pl.col("name") != "") & ~detail & (not discovery)).then(pl.col("name")).forward_fill(),
        # A row without a name continues the one above, unless it holds a result of its own (a GPU's).
        record=(~pl.col("is_row") | (pl.col("name") != "") | pl.col("result").struct.field("result").is_not_null()).cum_sum(),
    )
    meta = framed.filter(pl.col("metadata") & (pl.col("name") != "")).select("name", value=pl.col("cell").str.strip_chars())
    meta_attrs = {_DIAG_METADATA.get(key, re.sub(r"[^0-9A-Za-z_]+", "_", key.lower()).strip("_")): value for key, value in meta.iter_rows()}
    skipped = {reason: count for reason, count in {
        "table border": framed["border"].sum(), "section": framed["section"].is_not_null().sum(), "metadata": framed["metadata"].sum(),
    }.items() if count}
    other = framed.filter(~pl.col("is_row") & ~pl.col("border") & pl.col("section").is_null())
    # Wrapped text is cut into chunks one narrower than the cell, mid-word: the last cell character is
    # padding. A chunk padded further ended at a word (another layout): one space stands for the padding.
    chunk = pl.col("cell").str.slice(0, pl.col("cell").str.len_chars() - 1)
    piece = pl.when(chunk.str.ends_with(" ")).then(chunk.str.strip_chars_end() + " ").otherwise(chunk)
    records = framed.filter(pl.col("is_row") & ~pl.col("metadata")).group_by("record", maintain_order=True).agg(
        pl.col("line").first(), pl.len().cast(pl.Int32).alias("n_lines"), pl.col("name").first(), pl.col("test").first(),
        pl.col("in_section").first(), pl.col("result").first(), text=piece.str.join("").str.strip_chars(),
    )
    outcome, gpus = pl.col("result").struct.field("result"), pl.col("result").struct.field("gpus")
    label = pl.when(pl.col("name").is_in(list(_DIAG_DETAILS))).then(pl.col("name"))
    gpu = pl.coalesce(
        pl.when(discovery).then(pl.col("name")),
        pl.col("result").struct.field("gpu"),
        pl.when(~gpus.str.contains(",")).then(gpus),
        pl.when(label.is_not_null()).then(pl.col("text").str.extract(r"\bGPU\s*([0-9]+)\b", 1)),
    ).cast(pl.Int32, strict=False)
    xid = pl.col("text").str.extract(_XID_IN_TEXT, 1).cast(pl.Int32, strict=False)
    events = records.select(
        "line", "n_lines",
        ts=pl.lit(ctx.reference_time, schema.UTC_MICROS),
        ts_quality=pl.lit("file_mtime" if ctx.reference_time else "missing"),
        kind=pl.when(xid.is_not_null()).then(pl.lit("xid")).otherwise(pl.lit("log")),
        format=pl.lit("discovery" if discovery else "diag"),
        severity=pl.coalesce(outcome.replace_strict(_DIAG_SEVERITY, default=None), label.replace_strict(_DIAG_DETAILS, default=None)),
        gpu_index=gpu,
        gpu_uuid=pl.col("text").str.extract(r"\bUUID:\s*(GPU-[0-9a-fA-F-]+)", 1),
        pci_bus=pl.col("text").str.extract(r"\bPCI Bus ID:\s*([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])", 1),
        xid=xid,
        message=pl.concat_str([pl.when(discovery).then(pl.format("GPU {}", pl.col("name"))), pl.col("test"), label, pl.col("text")],
                              separator=": ", ignore_nulls=True),
        attrs=attrs_json({
            "test": pl.col("test"), "section": pl.col("in_section"), "result": outcome,
            "gpus": pl.when(pl.col("text").str.contains(r"-\s*All$")).then(pl.lit("all")).otherwise(gpus),
            "detail": label.str.to_lowercase(),
            **_xid.catalog_attrs(xid),
            **{key: pl.lit(value) for key, value in meta_attrs.items()},
        }),
    )
    unparsed = other.select("line", message="text", n_lines=pl.lit(1, pl.Int32))
    return Parsed(events=pl.concat([events, unparsed], how="diagonal_relaxed").sort("line"), skipped=skipped)


# --- samples: one row per (metric, series, time) -----------------------------------------------


def _label_fields(labels: pl.Expr) -> pl.Expr:
    """The labels rca reads, as a struct (escaped quotes and backslashes undone)."""
    def label(name: str) -> pl.Expr:
        raw = labels.str.extract(rf"(?:^|,)\s*{re.escape(name)}\s*=\s*{_LABEL_VALUE}", 1)
        return raw.str.replace_all('\\"', '"', literal=True).str.replace_all("\\\\", "\\", literal=True).alias(name)

    return pl.struct([label(name) for name in _LABELS])


def _exposition_samples(rows: pl.DataFrame) -> pl.DataFrame:
    sample = pl.col("sample").struct
    labels = rows.select(sample.field("labels").fill_null("")).to_series()
    fields = map_distinct(labels, _label_fields).struct.unnest()
    stamp_ms = sample.field("stamp").cast(pl.Int64, strict=False)
    return pl.concat(
        [
            rows.select(
                "line",
                metric=sample.field("metric"),
                value=sample.field("value"),
                stamp_us=pl.when(stamp_ms.is_between(0, 10**14)).then(stamp_ms * 1000),
                message=pl.col("text"),
                n_lines=pl.lit(1, pl.Int32),
            ),
            fields,
        ],
        how="horizontal",
    )


_METRIC_DTYPE = pl.Struct({"__name__": pl.String(), **{name: pl.String() for name in _LABELS}, "node": pl.String(),
                           "kubernetes_node": pl.String()})
_RESULT_DTYPE = pl.List(pl.Struct({"metric": _METRIC_DTYPE, "values": pl.List(pl.List(pl.String())), "value": pl.List(pl.String())}))
_JSON_DTYPE = pl.Struct({"status": pl.String(), "data": pl.Struct({"resultType": pl.String(), "result": _RESULT_DTYPE})})


def _json_samples(frame: pl.DataFrame) -> pl.DataFrame:
    series = frame.explode("result").unnest("result").filter(pl.col("metric").is_not_null()).with_row_index("series_index")
    matrix = series.filter(pl.col("values").is_not_null()).explode("values").drop("value").rename({"values": "point"})
    vector = series.filter(pl.col("values").is_null()).drop("values").rename({"value": "point"})
    points = pl.concat([matrix, vector]).filter(pl.col("point").list.len() == 2)
    metric = pl.col("metric").struct
    seconds = pl.col("point").list.get(0).cast(pl.Float64, strict=False)
    value = pl.col("point").list.get(1)
    return points.select(
        line=pl.lit(1, pl.Int64),
        metric=metric.field("__name__"),
        value=value,
        stamp_us=(seconds * 1e6).round().cast(pl.Int64, strict=False),
        message=pl.concat_str([metric.field("__name__").fill_null(""), pl.lit('{gpu="'), metric.field("gpu").fill_null(""), pl.lit('",UUID="'),
                               metric.field("UUID").fill_null(""), pl.lit('"} '), value, pl.lit(" @"), pl.col("point").list.get(0)]),
        n_lines=pl.lit(1, pl.Int32),
        **{name: metric.field(name) for name in _LABELS if name != "Hostname"},
        Hostname=pl.coalesce(metric.field("Hostname"), metric.field("kubernetes_node"), metric.field("node")),
    ).select("line", "metric", "value", "stamp_us", "message", "n_lines", *_LABELS)


# --- events: samples of one GPU at one time merged ----------------------------------------------


def _events(samples: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, int]:
    """GPU events from samples, and how many sample lines were of metrics other than DCGM's."""
    is_dcgm = pl.col("metric").str.starts_with("DCGM_").fill_null(False)
    other = int(samples.filter(~is_dcgm)["n_lines"].sum() or 0)
    number = pl.col("value").cast(pl.Float64, strict=False)
    mtime = pl.lit(ctx.reference_time, schema.UTC_MICROS)
    # A GPU shared by several pods (time-slicing, MPS) has a series per pod: one event each.
    gpu_key = ["Hostname", "gpu", "UUID", "GPU_I_ID", "pod", "namespace", "container", "exported_pod", "exported_namespace", "exported_container"]
    dcgm = samples.filter(is_dcgm).with_columns(
        number=pl.when(number.is_finite() & (number.abs() < _DCGM_BLANK)).then(number),
        ts=pl.coalesce(pl.col("stamp_us").cast(schema.UTC_MICROS), mtime),
        ts_quality=pl.when(pl.col("stamp_us").is_not_null()).then(pl.lit("exact"))
        .otherwise(pl.lit("file_mtime" if ctx.reference_time else "missing")),
        # Without timestamps, the k-th sample of a GPU's metric belongs to the k-th scrape saved in the file.
        scrape=pl.when(pl.col("stamp_us").is_null()).then(pl.int_range(pl.len()).over("metric", *gpu_key)).cast(pl.Int32),
    ).sort([*gpu_key, "ts", "scrape"], nulls_last=True, maintain_order=True)
    # DCGM_FI_DEV_XID_ERRORS holds the last Xid; DCGM_EXP_XID_ERRORS_COUNT{…,xid="42"} how often Xid 42
    # occurred in the exporter's window. Either is an event where its value changes to a positive one.
    value = pl.col("number")
    of_xid = (pl.col("metric") == _XID) | pl.col("xid").is_not_null()
    changed = value.ne_missing(value.shift(1).over(*gpu_key, "metric", "xid")).fill_null(True)
    dcgm = dcgm.with_columns(xid_event=of_xid & (value > 0).fill_null(False) & changed)
    events = pl.concat(
        [_gpu_samples(dcgm.filter(~pl.col("xid_event")), gpu_key), _xid_events(dcgm.filter(pl.col("xid_event")))],
        how="diagonal_relaxed",
    )
    return events.sort("line", maintain_order=True), other


def _identity() -> dict[str, pl.Expr]:
    def present(expr: pl.Expr) -> pl.Expr:
        return pl.when(expr != "").then(expr)

    hostname = present(pl.col("Hostname"))
    return {
        "host": pl.when(~hostname.str.contains(_EXPORTER_POD)).then(hostname),
        "gpu_index": pl.col("gpu").cast(pl.Int32, strict=False),
        "gpu_uuid": present(pl.col("UUID")),
        "pci_bus": present(pl.col("pci_bus_id")),
        "pod": pl.coalesce(present(pl.col("pod")), present(pl.col("exported_pod"))),
        "namespace": pl.coalesce(present(pl.col("namespace")), present(pl.col("exported_namespace"))),
        "container": pl.coalesce(present(pl.col("container")), present(pl.col("exported_container"))),
    }


def _gpu_samples(rows: pl.DataFrame, gpu_key: list[str]) -> pl.DataFrame:
    metric, value = pl.col("metric"), pl.col("number")

    def reading(name: str) -> pl.Expr:
        return value.filter(metric == name).first()

    named = {attr: (value.filter(metric == name).first() * factor) for name, (attr, factor) in _NAMED_ATTRS.items()}
    json_value = pl.when(pl.col("number").is_not_null() & pl.col("value").str.contains(_JSON_NUMBER)).then(pl.col("value"))
    unnamed = pl.format('"{}":{}', metric, json_value.fill_null("null")).filter(~metric.is_in([*_COLUMN_METRICS, *_NAMED_ATTRS]))
    label_columns = ["pci_bus_id", "modelName", "DCGM_FI_DRIVER_VERSION", "GPU_I_PROFILE"]
    grouped = rows.group_by([*gpu_key, "ts", "ts_quality", "scrape"], maintain_order=True).agg(
        pl.col("line").min(),
        pl.col("n_lines").sum().cast(pl.Int32),
        *(pl.col(name).drop_nulls().first() for name in label_columns),
        used=reading(_USED),
        free=reading(_FREE),
        util=reading(_UTIL),
        unnamed=unnamed.str.join(","),
        **named,
    )
    used_bytes = (pl.col("used") * MIB).round().cast(pl.Int64, strict=False)
    total_bytes = ((pl.col("used") + pl.col("free")) * MIB).round().cast(pl.Int64, strict=False)
    attrs = attrs_json({
        "model_name": pl.col("modelName"),
        "driver_version": pl.col("DCGM_FI_DRIVER_VERSION"),
        "mig_device": pl.col("GPU_I_ID").cast(pl.Int64, strict=False),
        "mig_profile": pl.col("GPU_I_PROFILE"),
        "scrape": pl.when(pl.col("scrape") > 0).then(pl.col("scrape")),
        **{attr: _integral(pl.col(attr), attr) for attr, _ in _NAMED_ATTRS.values()},
    })
    return grouped.select(
        "line", "n_lines", "ts", "ts_quality",
        kind=pl.lit("gpu_sample"),
        severity=pl.lit("info"),  # as nvidia-smi's samples: a reading, not a problem
        format=pl.lit("exposition"),
        mem_used_bytes=pl.when(used_bytes >= 0).then(used_bytes),
        mem_total_bytes=pl.when(total_bytes >= 0).then(total_bytes).otherwise(pl.col("fb_total_bytes").round().cast(pl.Int64, strict=False)),
        gpu_util_pct=pl.col("util"),
        # the extra '"key":value' members of the metrics without a name of their own
        attrs=joined_json(attrs, pl.when(pl.col("unnamed").fill_null("") != "").then(pl.format("{{{}}}", "unnamed"))),
        message=pl.concat_str(
            [
                pl.format("DCGM gpu {} {}", pl.col("gpu").fill_null("?"), pl.col("UUID").fill_null("")),
                pl.format("fb_used {} MiB", pl.col("used").round().cast(pl.Int64, strict=False)),
                pl.format("fb_free {} MiB", pl.col("free").round().cast(pl.Int64, strict=False)),
                pl.format("util {}%", pl.col("util")),
            ],
            separator=", ",
            ignore_nulls=True,
        ),
        **_identity(),
    )


def _integral(value: pl.Expr, attr: str) -> pl.Expr:
    """Counts and byte sizes as integers in attrs; readings with a fraction (power) as they are."""
    return value.round().cast(pl.Int64, strict=False) if attr.endswith(("_bytes", "_mhz", "_c", "_xid")) else value


def _xid_events(rows: pl.DataFrame) -> pl.DataFrame:
    code = pl.coalesce(pl.col("xid").cast(pl.Int32, strict=False), pl.col("number").cast(pl.Int32, strict=False))
    return rows.select(
        "line", "n_lines", "ts", "ts_quality", "message",
        kind=pl.lit("xid"),
        format=pl.lit("exposition"),
        xid=code,
        severity=_xid.catalog_severity(code),
        attrs=attrs_json({**_xid.catalog_attrs(code), "model_name": pl.col("modelName")}),
        **_identity(),
    )


SOURCE = register(
    Source(
        name="dcgm",
        sniff=sniff,
        parse=parse,
        sniff_literals=("DCGM_", "Diagnostic", "Device Information", "-----  "),
        formats=("exposition", "prometheus_json"),
        host_in_content=True,
        sniff_bytes=sniff_bytes,
        parse_bytes=parse_bytes,
    )
)
