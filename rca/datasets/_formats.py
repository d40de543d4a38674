"""Line envelopes: the time, host and program prefixes each log format puts before a message.

Noise and injected lines go through the same formatter, a whole column at a time, so an
injected line cannot differ in shape from the noise around it. The shapes follow the real
samples in ``shared/real_logs`` (dmesg's ``[%5lu.%06lu]``, syslog's space-padded day,
journald's zero-padded one, klog's ``%7d`` pid column, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from rca.datasets._model import US, Host

ROW_SCHEMA: dict[str, pl.DataType] = {
    "ts": pl.Int64(),  # µs since the epoch, UTC
    "sub": pl.Int64(),  # order among rows of one record
    "body": pl.String(),
    "level": pl.String(),
    "src": pl.String(),  # klog file:line, python logger, JVM logger, ...
    "program": pl.String(),  # syslog program (kernel, kubelet, containerd, ...) or JVM thread
    "pid": pl.Int64(),
    "raw": pl.Boolean(),  # print the body as it is, with no envelope
    "inc": pl.Boolean(),  # written by an incident, not background noise
    "ev": pl.Int64(),  # evidence id, for the manifest
}


@dataclass(frozen=True)
class Style:
    """How one physical file frames its lines."""

    name: str
    host: Host
    pod_name: str | None = None


def utc(ts: pl.Expr) -> pl.Expr:
    return ts.cast(pl.Datetime("us", "UTC"))


def iso_ms(ts: pl.Expr) -> pl.Expr:
    """2026-11-23T03:17:05.123Z"""
    return utc(ts).dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")


def boot_stamp(ts: pl.Expr, host: Host) -> pl.Expr:
    """The kernel's ``[%5lu.%06lu]`` seconds since boot."""
    since = ts - host.boot_us
    return pl.format("[{}.{}]", (since // US).cast(pl.String).str.pad_start(5, " "), (since % US).cast(pl.String).str.zfill(6))


def klog_prefix(ts: pl.Expr, level: pl.Expr, pid: pl.Expr, src: pl.Expr) -> pl.Expr:
    """``I1123 03:17:05.123456    2345 kubelet.go:2447] ``"""
    return pl.format("{}{} {} {}] ", level, utc(ts).dt.strftime("%m%d %H:%M:%S%.6f"), pid.cast(pl.String).str.pad_start(7, " "), src)


def _syslog_line(ts: pl.Expr, host: str, program: pl.Expr, pid: pl.Expr, message: pl.Expr, day: str) -> pl.Expr:
    stamp = utc(ts).dt.strftime(f"%b {day} %H:%M:%S")
    tag = pl.when(pid.is_null()).then(program).otherwise(pl.format("{}[{}]", program, pid.cast(pl.String)))
    return pl.format("{} {} {}: {}", stamp, pl.lit(host), tag, message)


def _inner(frame_cols: dict[str, pl.Expr]) -> pl.Expr:
    """A journald/syslog message: klog-framed when the row carries a klog source."""
    klog = pl.concat_str([klog_prefix(frame_cols["ts"], frame_cols["level"], frame_cols["pid"], frame_cols["src"]), frame_cols["body"]])
    return pl.when(frame_cols["src"].is_not_null()).then(klog).otherwise(frame_cols["body"])


def format_lines(rows: pl.DataFrame, style: Style) -> pl.Series:
    """The finished text of every row under ``style`` (raw rows are left as they are)."""
    c = {name: pl.col(name) for name in ROW_SCHEMA}
    ts, body, level, src, program, pid = c["ts"], c["body"], c["level"], c["src"], c["program"], c["pid"]
    host = style.host
    name = style.name
    if name == "dmesg_raw":
        framed = pl.format("{} {}", boot_stamp(ts, host), body)
    elif name == "dmesg_ctime":
        framed = pl.format("[{}] {}", utc(ts).dt.strftime("%a %b %e %H:%M:%S %Y"), body)
    elif name == "kern_log":
        framed = pl.format("{} {} kernel: {} {}", utc(ts).dt.strftime("%b %e %H:%M:%S"), pl.lit(host.name), boot_stamp(ts, host), body)
    elif name == "journal_k":
        framed = pl.format("{} {} kernel: {}", utc(ts).dt.strftime("%b %d %H:%M:%S"), pl.lit(host.name), body)
    elif name == "klog":
        framed = pl.concat_str([klog_prefix(ts, level, pid, src), body])
    elif name == "journal":
        framed = _syslog_line(ts, host.name, program, pid, _inner(c), "%d")
    elif name == "syslog":
        framed = _syslog_line(ts, host.name, program, pid, _inner(c), "%e")
    elif name == "py_logging":
        framed = pl.format("{} - {} - {} - {}", utc(ts).dt.strftime("%Y-%m-%d %H:%M:%S,%3f"), src, level, body)
    elif name == "hf_trainer":
        framed = pl.format("[{}|{}] {} >> {}", level, src, utc(ts).dt.strftime("%Y-%m-%d %H:%M:%S,%3f"), body)
    elif name == "deepspeed":
        framed = pl.format("[{}] [{}] [{}] {}", utc(ts).dt.strftime("%Y-%m-%d %H:%M:%S,%3f"), level, src, body)
    elif name == "vllm_v0":
        framed = pl.format("{} {} {}] {}", level, utc(ts).dt.strftime("%m-%d %H:%M:%S"), src, body)
    elif name == "vllm_v1":
        plain = pl.format("{} {} [{}] {}", level, utc(ts).dt.strftime("%m-%d %H:%M:%S"), src, body)
        framed = pl.when(pid.is_null()).then(plain).otherwise(pl.format("({} pid={}) {}", program, pid.cast(pl.String), plain))
    elif name == "ci_github":
        framed = pl.format("{}{}Z {}", utc(ts).dt.strftime("%Y-%m-%dT%H:%M:%S%.6f"), (ts % 10).cast(pl.String), body)
    elif name == "ci_gitlab":
        stream = pl.when(level == "E").then(pl.lit("00E")).otherwise(pl.lit("00O"))
        framed = pl.format("{} {} {}", utc(ts).dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"), stream, body)
    elif name == "jvm":
        gc = pl.format(
            "[{}][{}][{}] {}",
            utc(ts).dt.strftime("%Y-%m-%dT%H:%M:%S%.3f+0000"),
            level.str.to_lowercase(),
            src.str.strip_prefix("jvm:"),
            body,
        )
        app = pl.format("{} {} [{}] {} - {}", utc(ts).dt.strftime("%Y-%m-%d %H:%M:%S%.3f"), level.str.pad_end(5, " "), program, src, body)
        framed = pl.when(src.str.starts_with("jvm:")).then(gc).otherwise(app)
    elif name == "go_log":
        framed = pl.format("{} {}", utc(ts).dt.strftime("%Y/%m/%d %H:%M:%S"), body)
    elif name == "raw":
        framed = body
    else:
        raise ValueError(f"unknown style {name!r}")
    return rows.select(pl.when(c["raw"]).then(body).otherwise(framed).alias("text")).to_series()


def torch_size(nbytes: float) -> str:
    """A size the way PyTorch's allocator prints it (``format_size``)."""
    if nbytes < 1024:
        return f"{int(nbytes)} bytes"
    if nbytes < 1024**2:
        return f"{nbytes / 1024:.2f} KiB"
    if nbytes < 1024**3:
        return f"{nbytes / 1024**2:.2f} MiB"
    return f"{nbytes / 1024**3:.2f} GiB"


def moment(ts: int) -> datetime:
    """The UTC datetime of a µs timestamp (for the few lines built one at a time)."""
    return datetime.fromtimestamp(ts // US, UTC).replace(microsecond=ts % US)


def iso_ms_text(ts: int) -> str:
    """The same text :func:`iso_ms` gives a column: 2026-11-23T03:17:05.123Z."""
    return f"{moment(ts):%Y-%m-%dT%H:%M:%S}.{ts // 1000 % 1000:03d}Z"


def iso_nanos(ts: int) -> str:
    """RFC 3339 with nanoseconds, as Go programs print it: 2026-11-23T03:17:05.123456789Z."""
    return f"{moment(ts):%Y-%m-%dT%H:%M:%S.%f}{(ts * 7) % 1000:03d}Z"


def klog_stamp(ts: int, nanos: bool = False) -> str:
    """klog's MMDD HH:MM:SS.ffffff (PyTorch's c10 logger prints nanoseconds)."""
    text = f"{moment(ts):%m%d %H:%M:%S.%f}"
    return text + f"{(ts * 13) % 1000:03d}" if nanos else text
