"""Line framing for the pipeline source: peel the prefixes a line wears and resolve its time.

A training or CI log line is an onion: a CI agent's timestamp (Buildkite, GitHub Actions,
GitLab), a `kubectl logs --prefix` tag, a distributed-rank tag (``[rank1]:``), a worker tag
(``(EngineCore_0 pid=5839)``), an NCCL_DEBUG tag (``host:pid:tid [dev]``), then one application header (vLLM, transformers, PyTorch
c10d, glog, Go log, python logging, epoch, or a JSON-lines object). Each layer is one regex
over the whole column; what is left is the ``body`` the rules and the record grouping read.
"""

from __future__ import annotations

import polars as pl

from rca import timeutil
from rca.sources._base import ParseContext

LEVEL_WORDS = "TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL"

# Level words, glog/klog letters (I W E F), and numeric levels.
_SEVERITY = {
    "TRACE": "debug", "DEBUG": "debug",
    "INFO": "info", "I": "info",
    "NOTICE": "notice",
    "WARNING": "warning", "WARN": "warning", "W": "warning",
    "ERROR": "error", "ERR": "error", "E": "error",
    "CRITICAL": "critical", "FATAL": "critical", "PANIC": "critical", "F": "critical",
    # bunyan / pino
    "10": "debug", "20": "debug", "30": "info", "40": "warning", "50": "error", "60": "critical",
}

_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d| UTC)?"
_REST = r"(?: (?<rest>.*))?$"

_NOISE = r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|section_(?:start|end):\d+:[\w.\-]+(?:\[[^\]]*\])?"
_KUBECTL = r"^\[pod/(?<pod>[^/\]\s]+)/(?<container>[^\]\s]+)\]" + _REST
# The gutter is what Buildkite's web UI adds when a log is copied from it.
_STAMP = rf"^\s*(?:\|\s)?(?:\[(?<b>{_ISO})\]|(?<p>{_ISO}))(?:\s\d\d[OE]\+?| -|:)?" + _REST
_RANK = r"^\s*\[(?:rank|default)(?<rank>\d+)\]:" + r"(?: ?(?<rest>.*))?$"
_WORKER = r"^\s*\((?<proc>[A-Za-z_][\w.\-]*) pid=(?<pid>\d+)(?:, ip=[^)]*)?\)" + r"(?: ?(?<rest>.*))?$"
# NCCL_DEBUG output: "hostname:pid:tid [cuda device] ..."
_NCCL = r"^\s*(?<host>[A-Za-z][\w.\-]*):(?<pid>\d+):\d+ \[(?<dev>\d+)\]" + _REST
_VLLM = (
    rf"^(?<level>{LEVEL_WORDS}) (?<raw>(?<mon>\d\d)-(?<day>\d\d) (?<clock>\d\d:\d\d:\d\d(?:\.\d+)?))"
    r" (?:\[[^\]\s]+\]|[\w.\-]+:\d+\])" + _REST
)
_HF = rf"^\[(?<level>[A-Z]+)\|[^\]\s]+\] (?<iso>{_ISO}) >>" + _REST
_GLOG = (
    r"^\s*(?<bracket>\[)?(?<sev>[IWEF])(?<raw>(?<mon>\d{1,2})(?<day>\d\d) (?<clock>\d\d:\d\d:\d\d\.\d+))"
    r"(?:\s+\d+)? [^\]\s]+:\d+\]" + _REST
)
_C10D_OLD = r"^\s*\[(?<sev>[IWEF]) [^\]\s]+:\d+\]" + _REST
_GO = r"^(?<stamp>\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?)" + _REST
_EPOCH = r"^\[?(?<epoch>1[4-9]\d{8}(?:\.\d{1,9})?|1[4-9]\d{11})\]?" + _REST
_APP_ISO = rf"^\[?(?<iso>{_ISO})\]?(?: -|:)?" + _REST
_LEADING_LEVEL = (
    rf"^[\s\-|:\[(]*(?:[\w.]+\s+-\s+)?[\[(|]?\s*(?<level>{LEVEL_WORDS})\b"
    r"|^(?<title>Error|Warning|Fatal):|^(?:##\[|::)(?<gh>error|warning|notice|debug)"
    r"|^(?:[\w./\-]+:\d+ )?NCCL (?<nccl>INFO|WARN|ERROR|TRACE)\b"
)

_JSON_KEYS = {
    "time": ("time", "timestamp", "ts", "@timestamp", "asctime"),
    "level": ("level", "severity", "levelname", "lvl", "log.level"),
    "msg": ("msg", "message", "@message", "log", "event"),
    "exc": ("exc_info", "exception", "stack_trace", "traceback", "error.stack_trace"),
    "pod": ("pod", "pod_name", "kubernetes.pod_name", "k8s.pod.name"),
    "namespace": ("namespace", "namespace_name", "kubernetes.namespace_name", "k8s.namespace.name"),
    "container": ("container", "container_name", "kubernetes.container_name", "k8s.container.name"),
    "host": ("hostname", "host.name", "kubernetes.host", "host"),
    "pid": ("pid", "process"),
}

FRAMED_COLUMNS = (
    "line", "blank", "body", "ts", "ts_raw", "ts_quality", "severity", "format", "pid", "process",
    "host", "pod", "namespace", "container", "rank", "gpu_index", "partition",
)


def _json_paths(names: tuple[str, ...]) -> list[str]:
    """One JSONPath union over the literal keys, in preference order, then each nested reading.

    "a.b" is a literal key in ECS-style logs and a nested one in fluent-bit's kubernetes block.
    """
    union = "$[" + ",".join(f"'{name}'" for name in names) + "]"
    nested = ["$" + "".join(f"['{part}']" for part in name.split(".")) for name in names if "." in name]
    return [union, *nested]


def _json_field(json_text: pl.Expr, names: tuple[str, ...]) -> pl.Expr:
    # json_path_match never raises on malformed JSON, unlike json_decode; an object or array
    # under a key (ECS's "host": {...}) is not the scalar asked for.
    values = [json_text.str.json_path_match(path) for path in _json_paths(names)]
    return pl.coalesce([pl.when(~v.str.starts_with("{") & ~v.str.starts_with("[")).then(v) for v in values])


def _layer(text: pl.Expr, pattern: str, name: str) -> pl.Expr:
    return text.str.extract_groups(pattern).alias(name)


def _rest_of(layer: str, fallback: pl.Expr, matched: pl.Expr) -> pl.Expr:
    return pl.when(matched).then(pl.col(layer).struct.field("rest").fill_null("")).otherwise(fallback)


def frame(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """One row per input line with its body, time, level and the tags its prefixes carried.

    ``blank`` marks lines that held nothing but terminal control codes and CI section markers.
    """
    cleaned = (
        pl.col("text").str.replace_all(_NOISE, "").str.strip_chars_end("\r")
        .str.replace(r"^.*\r([^\r]*[^\r\s][^\r]*)$", "${1}")
    )
    peeled = _peel_outer(lines.select("line", cleaned.alias("text")))
    return _resolve(_peel_application(peeled), ctx).select(FRAMED_COLUMNS)


def _peel_outer(lines: pl.DataFrame) -> pl.DataFrame:
    kube = lines.with_columns(_layer(pl.col("text"), _KUBECTL, "kube"))
    kube_hit = pl.col("kube").struct.field("pod").is_not_null()
    stamp = kube.with_columns(after_kube=_rest_of("kube", pl.col("text"), kube_hit)).with_columns(
        _layer(pl.col("after_kube"), _STAMP, "stamp")
    )
    stamp_iso = pl.coalesce(pl.col("stamp").struct.field("b"), pl.col("stamp").struct.field("p"))
    rank = stamp.with_columns(
        ci_iso=stamp_iso, after_stamp=_rest_of("stamp", pl.col("after_kube"), stamp_iso.is_not_null())
    ).with_columns(_layer(pl.col("after_stamp"), _RANK, "rank_tag"))
    rank_hit = pl.col("rank_tag").struct.field("rank").is_not_null()
    worker = rank.with_columns(after_rank=_rest_of("rank_tag", pl.col("after_stamp"), rank_hit)).with_columns(
        _layer(pl.col("after_rank"), _WORKER, "worker")
    )
    worker_hit = pl.col("worker").struct.field("pid").is_not_null()
    nccl = worker.with_columns(after_worker=_rest_of("worker", pl.col("after_rank"), worker_hit)).with_columns(
        _layer(pl.col("after_worker"), _NCCL, "nccl")
    )
    nccl_hit = pl.col("nccl").struct.field("pid").is_not_null()
    return nccl.select(
        "line",
        "ci_iso",
        blank=pl.col("text").str.strip_chars() == "",
        pod=pl.col("kube").struct.field("pod"),
        container=pl.col("kube").struct.field("container"),
        rank=pl.col("rank_tag").struct.field("rank").cast(pl.Int64, strict=False),
        process=pl.col("worker").struct.field("proc"),
        pid=pl.coalesce(pl.col("worker").struct.field("pid"), pl.col("nccl").struct.field("pid")).cast(pl.Int64, strict=False),
        nccl_host=pl.col("nccl").struct.field("host"),
        gpu_index=pl.col("nccl").struct.field("dev").cast(pl.Int32, strict=False),
        inner=_rest_of("nccl", pl.col("after_worker"), nccl_hit),
    )


def _peel_application(peeled: pl.DataFrame) -> pl.DataFrame:
    inner = pl.col("inner")
    looks_json = pl.col("json_text").is_not_null()
    layers = peeled.with_columns(json_text=pl.when(inner.str.contains(r"^\s*\{.*\}\s*$")).then(inner)).with_columns(
        *(_json_field(pl.col("json_text"), names).alias(f"j_{field}") for field, names in _JSON_KEYS.items()),
        _layer(inner, _VLLM, "vllm"),
        _layer(inner, _HF, "hf"),
        _layer(inner, _GLOG, "glog"),
        _layer(inner, _C10D_OLD, "c10d_old"),
        _layer(inner, _GO, "go"),
        _layer(inner, _EPOCH, "epoch"),
        _layer(inner, _APP_ISO, "app_iso"),
    )
    hit = {
        "json_lines": looks_json & pl.any_horizontal(pl.col("j_time", "j_level", "j_msg").is_not_null()),
        "vllm": pl.col("vllm").struct.field("level").is_not_null(),
        "hf_transformers": pl.col("hf").struct.field("iso").is_not_null(),
        "klog": pl.col("glog").struct.field("sev").is_not_null(),
        "c10d_old": pl.col("c10d_old").struct.field("sev").is_not_null(),
        "go_log": pl.col("go").struct.field("stamp").is_not_null(),
        "epoch": pl.col("epoch").struct.field("epoch").is_not_null(),
        "iso8601": pl.col("app_iso").struct.field("iso").is_not_null(),
    }
    layer_of = {
        "vllm": "vllm", "hf_transformers": "hf", "klog": "glog", "c10d_old": "c10d_old",
        "go_log": "go", "epoch": "epoch", "iso8601": "app_iso",
    }
    json_body = pl.when(pl.col("j_exc").is_not_null()).then(
        pl.concat_str([pl.col("j_msg").fill_null(""), pl.col("j_exc")], separator="\n")
    ).otherwise(pl.col("j_msg").fill_null(inner)).str.strip_chars_end()
    body = pl.when(hit["json_lines"]).then(json_body)
    app_format = pl.when(hit["json_lines"]).then(pl.lit("json_lines"))
    for name, layer in layer_of.items():
        body = body.when(hit[name]).then(pl.col(layer).struct.field("rest").fill_null(""))
        app_format = app_format.when(hit[name]).then(pl.lit(name))
    return layers.with_columns(body=body.otherwise(inner), app_format=app_format)


def _severity(word: pl.Expr) -> pl.Expr:
    return word.str.to_uppercase().replace_strict(_SEVERITY, default=None, return_dtype=pl.String)


def _resolve(layers: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    fmt = pl.col("app_format")
    vllm, hf, glog, go, epoch, app_iso = (pl.col(n).struct for n in ("vllm", "hf", "glog", "go", "epoch", "app_iso"))
    is_vllm, is_glog = fmt == "vllm", fmt == "klog"
    json_time = pl.when(fmt == "json_lines").then(pl.col("j_time"))
    json_epoch = json_time.str.contains(r"^\d{9,19}(?:\.\d+)?$")
    yearless_ts, yearless_quality = timeutil.yearless_to_utc(
        pl.when(is_vllm).then(vllm.field("mon")).when(is_glog).then(glog.field("mon")).cast(pl.Int32, strict=False),
        pl.when(is_vllm).then(vllm.field("day")).when(is_glog).then(glog.field("day")),
        pl.when(is_vllm).then(vllm.field("clock")).when(is_glog).then(glog.field("clock")),
        ctx,
    )
    dated_raw = pl.coalesce(
        pl.col("ci_iso"),
        pl.when(fmt == "hf_transformers").then(hf.field("iso")),
        pl.when(fmt == "iso8601").then(app_iso.field("iso")),
        pl.when(fmt == "go_log").then(go.field("stamp")),
        pl.when(json_time.is_not_null() & ~json_epoch).then(json_time),
    )
    epoch_raw = pl.when(dated_raw.is_null()).then(
        pl.coalesce(pl.when(fmt == "epoch").then(epoch.field("epoch")), pl.when(json_epoch).then(json_time))
    )
    yearless_raw = pl.when(dated_raw.is_null() & epoch_raw.is_null()).then(
        pl.when(is_vllm).then(vllm.field("raw")).when(is_glog).then(glog.field("raw"))
    )
    leading = pl.col("body").str.extract_groups(_LEADING_LEVEL)
    printed_level = pl.coalesce(
        pl.when(is_vllm).then(vllm.field("level")),
        pl.when(fmt == "hf_transformers").then(hf.field("level")),
        pl.when(is_glog).then(glog.field("sev")),
        pl.when(fmt == "c10d_old").then(pl.col("c10d_old").struct.field("sev")),
        pl.when(fmt == "json_lines").then(pl.col("j_level")),
        leading.struct.field("level"),
        leading.struct.field("title"),
        leading.struct.field("gh"),
        leading.struct.field("nccl"),
    )
    is_c10d = (is_glog & glog.field("bracket").is_not_null()) | (fmt == "c10d_old")
    app_format = pl.when(is_c10d).then(pl.lit("torch_c10d")).otherwise(fmt)
    return layers.with_columns(
        ts=pl.when(dated_raw.is_not_null()).then(timeutil.iso_to_utc(dated_raw, ctx.tz))
        .when(epoch_raw.is_not_null()).then(timeutil.epoch_to_utc(epoch_raw))
        .when(yearless_raw.is_not_null()).then(yearless_ts),
        ts_raw=pl.coalesce(dated_raw, epoch_raw, yearless_raw),
        ts_quality=pl.when(dated_raw.is_not_null() | epoch_raw.is_not_null()).then(pl.lit("exact"))
        .when(yearless_raw.is_not_null()).then(yearless_quality)
        .otherwise(pl.lit("missing")),
        severity=_severity(printed_level),
        format=pl.coalesce(
            app_format,
            pl.when(pl.col("nccl_host").is_not_null()).then(pl.lit("nccl")),
            pl.when(pl.col("ci_iso").is_not_null()).then(pl.lit("iso8601")),
            pl.lit("text"),
        ),
        pid=pl.coalesce(pl.col("pid"), pl.col("j_pid").cast(pl.Int64, strict=False)),
        host=pl.coalesce(pl.col("j_host"), pl.col("nccl_host")),
        pod=pl.coalesce(pl.col("pod"), pl.col("j_pod")),
        namespace=pl.col("j_namespace"),
        container=pl.coalesce(pl.col("container"), pl.col("j_container")),
        partition=pl.concat_str(
            [pl.col(c).cast(pl.String).fill_null("") for c in ("rank", "pid", "pod", "container")], separator="|"
        ),
    )
