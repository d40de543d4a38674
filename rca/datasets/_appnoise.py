"""Background lines of application logs: training steps, vLLM stats, JVM GC, Go services, CI jobs.

Values that incidents shape (GPU memory, host RSS, KV-cache use, heap, goroutines) are read
off the pod's curves, so the steady lines before an incident already show its cause.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from rca.datasets._formats import iso_ms
from rca.datasets._model import GIB, US, Pod
from rca.datasets._noise import as_rows, by_case
from rca.datasets._tracks import Track, evaluate
from rca.datasets._vec import Draw, fixed

JSON_STYLES = frozenset({"jsonl", "go_json"})


@dataclass
class AppEnv:
    pod: Pod
    start_us: int
    end_us: int
    gpu: Track | None  # memory (MiB) of the pod's first GPU
    app: Track  # the role's own quantity: host RSS bytes, KV-cache %, heap MiB, goroutines
    logger: str
    total_steps: int
    step_us: int


def _read(track: Track | None, ts: pl.Series) -> pl.Series:
    if track is None:
        return pl.Series([0.0] * ts.len())
    frame = pl.DataFrame({"ts": ts, "k": pl.Series([0] * ts.len(), dtype=pl.Int64)})
    return evaluate(frame, {0: track}, "k")["value"]


def _sci(expr: pl.Expr) -> pl.Expr:
    """A positive float as ``9.8120e-05``."""
    exponent = expr.log10().floor()
    mantissa = expr / pl.lit(10.0).pow(exponent)
    sign = pl.when(exponent < 0).then(pl.lit("-")).otherwise(pl.lit("+"))
    return pl.format("{}e{}{}", fixed(mantissa, 4), sign, exponent.abs().cast(pl.Int64).cast(pl.String).str.zfill(2))


def _training_values(d: Draw, ts: pl.Series, env: AppEnv) -> pl.DataFrame:
    elapsed = (ts - env.pod.start_us).cast(pl.Float64)
    n = ts.len()
    return pl.DataFrame({"ts": ts}).with_columns(
        step=(ts - env.pod.start_us) // env.step_us,
        loss=(pl.lit(0.9) + 2.4 * (-(pl.Series(elapsed) / (6 * 3600 * US))).exp() + d.floats(n, -0.06, 0.06)).round(4),
        lr=(3e-4 * 0.5 * (1 + (3.14159265 * (pl.Series(elapsed) / (env.total_steps * env.step_us)).clip(0, 1)).cos()) + 1e-7),
        grad=(0.4 + d.floats(n, 0, 0.9)).round(3),
        tps=(d.floats(n, 0.97, 1.03) * 38_000).round(0).cast(pl.Int64),
        gpu_gb=(_read(env.gpu, ts) / 1024).round(1),
        rss_gb=(_read(env.app, ts) / GIB).round(2),
        info=d.floats(n) < 0.04,
    )


def train_lines(d: Draw, ts: pl.Series, env: AppEnv) -> pl.DataFrame:
    style = env.pod.app
    values = _training_values(d, ts, env)
    pid = env.pod.gpu_pid(env.pod.gpus[0]) if env.pod.gpus else env.pod.main.pid
    total = env.total_steps
    checkpoint = pl.format("Saving model checkpoint to /checkpoints/{}/step_{}", pl.lit(env.pod.name), (pl.col("step") // 500) * 500)
    if style == "jsonl":
        record = pl.struct(
            ts=iso_ms(pl.col("ts")),
            level=pl.lit("info"),
            logger=pl.lit(env.logger),
            pod=pl.lit(env.pod.name),
            pid=pl.lit(pid),
            rank=pl.lit(0),
            step=pl.col("step"),
            loss=pl.col("loss"),
            lr=pl.col("lr").round(8),
            tokens_per_s=pl.col("tps"),
            gpu_mem_gb=pl.col("gpu_gb"),
            host_rss_gb=pl.col("rss_gb"),
        ).struct.json_encode()
        info = pl.struct(
            ts=iso_ms(pl.col("ts")),
            level=pl.lit("info"),
            logger=pl.lit(env.logger),
            pod=pl.lit(env.pod.name),
            pid=pl.lit(pid),
            rank=pl.lit(0),
            msg=checkpoint,
        ).struct.json_encode()
        return as_rows(
            by_case(
                values, pl.col("info"), [(True, [pl.col("ts"), info.alias("body")]), (False, [pl.col("ts"), record.alias("body")])]
            ).with_columns(raw=pl.lit(True))
        )
    if style == "hf_trainer":
        epoch = fixed(pl.col("step") / (total / 3), 2)
        row = pl.format(
            "{{'loss': {}, 'grad_norm': {}, 'learning_rate': {}, 'epoch': {}}}",
            fixed(pl.col("loss"), 4),
            pl.col("grad"),
            _sci(pl.col("lr")),
            epoch,
        )
        return as_rows(
            by_case(
                values,
                pl.col("info"),
                [
                    (True, [pl.col("ts"), checkpoint.alias("body"), pl.lit(False).alias("raw")]),
                    (False, [pl.col("ts"), row.alias("body"), pl.lit(True).alias("raw")]),
                ],
            ).with_columns(level=pl.lit("INFO"), src=pl.lit("trainer.py:3705"))
        )
    if style == "deepspeed":
        step_line = pl.format("[Rank 0] step={}, skipped=0, lr=[{}], mom=[(0.9, 0.95)]", "step", _sci(pl.col("lr")))
        timer = pl.format(
            "epoch=0/micro_step={}/global_step={}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB",
            pl.col("step") * 4,
            "step",
            fixed(pl.col("tps") / 120, 3),
            fixed(pl.col("tps") / 118, 3),
            pl.col("gpu_gb"),
            fixed(pl.col("gpu_gb") * 1.04, 1),
        )
        second = (pl.col("step") % 2) == 0
        return as_rows(
            by_case(
                values,
                second,
                [
                    (True, [pl.col("ts"), step_line.alias("body"), pl.lit("logging.py:128:log_dist").alias("src")]),
                    (False, [pl.col("ts"), timer.alias("body"), pl.lit("timer.py:264:stop").alias("src")]),
                ],
            ).with_columns(level=pl.lit("INFO"))
        )
    line = pl.format(
        "step {}/{} | loss {} | lr {} | grad_norm {} | {} tok/s | gpu_mem {}GiB",
        "step",
        pl.lit(total),
        fixed(pl.col("loss"), 4),
        _sci(pl.col("lr")),
        pl.col("grad"),
        "tps",
        pl.col("gpu_gb"),
    )
    return as_rows(
        by_case(
            values, pl.col("info"), [(True, [pl.col("ts"), checkpoint.alias("body")]), (False, [pl.col("ts"), line.alias("body")])]
        ).with_columns(level=pl.lit("INFO"), src=pl.lit(env.logger))
    )


def serve_lines(d: Draw, ts: pl.Series, env: AppEnv) -> pl.DataFrame:
    n = ts.len()
    v1 = env.pod.app == "vllm_v1"
    frame = pl.DataFrame({"ts": ts}).with_columns(
        kv=pl.Series(_read(env.app, ts)).clip(0, 100),
        prompt=d.floats(n, 200, 2400),
        gen=d.floats(n, 40, 900),
        running=d.ints(n, 1, 48),
        hit=d.floats(n, 5, 70),
        access=d.floats(n) < 0.7,
        a=d.ints(n, 0, 255),
        b=d.ints(n, 2, 254),
        port=d.ints(n, 32768, 60999),
        path=d.pick(
            n,
            (
                'POST /v1/chat/completions HTTP/1.1" 200 OK',
                'POST /v1/completions HTTP/1.1" 200 OK',
                'GET /health HTTP/1.1" 200 OK',
                'GET /metrics HTTP/1.1" 200 OK',
            ),
        ),
    )
    if v1:
        stats = pl.format(
            "Engine 000: Avg prompt throughput: {} tokens/s, Avg generation throughput: {} tokens/s, Running: {} reqs, Waiting: 0 reqs, "
            "GPU KV cache usage: {}%, Prefix cache hit rate: {}%",
            fixed(pl.col("prompt"), 1),
            fixed(pl.col("gen"), 1),
            "running",
            fixed(pl.col("kv"), 1),
            fixed(pl.col("hit"), 1),
        )
        src = "loggers.py:116"
    else:
        stats = pl.format(
            "Avg prompt throughput: {} tokens/s, Avg generation throughput: {} tokens/s, Running: {} reqs, Swapped: 0 reqs, Pending: 0 reqs, "
            "GPU KV cache usage: {}%, CPU KV cache usage: 0.0%.",
            fixed(pl.col("prompt"), 1),
            fixed(pl.col("gen"), 1),
            "running",
            fixed(pl.col("kv"), 1),
        )
        src = "metrics.py:351"
    access = pl.format('INFO:     10.244.{}.{}:{} - "{}', "a", "b", "port", "path")
    return as_rows(
        by_case(
            frame,
            pl.col("access"),
            [
                (True, [pl.col("ts"), access.alias("body"), pl.lit(True).alias("raw")]),
                (False, [pl.col("ts"), stats.alias("body"), pl.lit(False).alias("raw")]),
            ],
        ).with_columns(level=pl.lit("INFO"), src=pl.lit(src))
    )


def jvm_lines(d: Draw, ts: pl.Series, env: AppEnv) -> pl.DataFrame:
    n = ts.len()
    heap_max = int(env.pod.memory_limit * 0.75 / 2**20)
    frame = (
        pl.DataFrame({"ts": ts})
        .with_columns(
            after=pl.Series(_read(env.app, ts)).round(0).cast(pl.Int64),
            grow=d.ints(n, 150, 900),
            ms=d.floats(n, 3, 40),
            gc=d.floats(n) < 0.4,
            served=d.ints(n, 20, 600),
            lat=d.ints(n, 4, 90),
            thread=d.ints(n, 1, 48),
        )
        .with_columns(before=(pl.col("after") + pl.col("grow")).clip(0, heap_max), number=(pl.col("ts") - env.pod.start_us) // (20 * US))
    )
    gc = pl.format(
        "GC({}) Pause Young (Normal) (G1 Evacuation Pause) {}M->{}M({}M) {}ms",
        "number",
        "before",
        "after",
        pl.lit(heap_max),
        fixed(pl.col("ms"), 3),
    )
    app = pl.format("Served {} feature lookups in {} ms", "served", "lat")
    thread = pl.format("http-nio-8080-exec-{}", "thread").alias("program")
    return as_rows(
        by_case(
            frame,
            pl.col("gc"),
            [
                (True, [pl.col("ts"), gc.alias("body"), pl.lit("jvm:gc").alias("src"), thread]),
                (False, [pl.col("ts"), app.alias("body"), pl.lit("c.a.fs.api.FeatureController").alias("src"), thread]),
            ],
        ).with_columns(level=pl.lit("INFO"))
    )


def go_lines(d: Draw, ts: pl.Series, env: AppEnv) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"ts": ts}).with_columns(
        goroutines=pl.Series(_read(env.app, ts)).round(0).cast(pl.Int64),
        stats=d.floats(n) < 0.2,
        status=d.pick(n, ("200", "200", "200", "204", "429")),
        latency=d.ints(n, 1, 180),
        route=d.pick(n, ("/v1/route", "/v1/models", "/v1/chat/completions", "/healthz")),
        gc=(ts - env.pod.start_us) // (45 * US),
    )
    request = pl.format(
        '{{"level":"info","ts":"{}","caller":"server/handler.go:88","msg":"request served","route":"{}","status":{},"latency_ms":{}}}',
        iso_ms(pl.col("ts")),
        "route",
        "status",
        "latency",
    )
    stats = pl.format(
        '{{"level":"info","ts":"{}","caller":"telemetry/runtime.go:41","msg":"runtime stats","goroutines":{},"heap_alloc_mb":{},"num_gc":{}}}',
        iso_ms(pl.col("ts")),
        "goroutines",
        (pl.col("goroutines") * 0.011 + 40).round(0).cast(pl.Int64),
        "gc",
    )
    return as_rows(
        by_case(
            frame, pl.col("stats"), [(True, [pl.col("ts"), stats.alias("body")]), (False, [pl.col("ts"), request.alias("body")])]
        ).with_columns(raw=pl.lit(True))
    )


def batch_lines(d: Draw, ts: pl.Series, env: AppEnv) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"ts": ts}).with_columns(
        shard=(ts - env.pod.start_us) // (40 * US),
        rows=d.ints(n, 120_000, 260_000),
        rss=(pl.Series(_read(env.app, ts)) / 2**20).round(0).cast(pl.Int64),
        took=d.floats(n, 8, 60),
    )
    message = pl.format(
        "processed shard {}/{} rows={} rss_mb={} elapsed_s={}", "shard", pl.lit(env.total_steps), "rows", "rss", fixed(pl.col("took"), 1)
    )
    if env.pod.app == "jsonl":
        record = pl.struct(
            ts=iso_ms(pl.col("ts")),
            level=pl.lit("info"),
            logger=pl.lit(env.logger),
            pod=pl.lit(env.pod.name),
            pid=pl.lit(env.pod.main.pid),
            msg=message,
        ).struct.json_encode()
        return as_rows(frame.select("ts", body=record, raw=pl.lit(True)))
    return as_rows(frame.select("ts", body=message, level=pl.lit("INFO"), src=pl.lit(env.logger)))


def ci_lines(d: Draw, ts: pl.Series, env: AppEnv) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"ts": ts}).with_columns(
        c=d.weighted(n, (6, 2, 2, 1)),
        mod=d.pick(n, ("model", "tokenizer", "attention", "kernels", "data", "export")),
        case=d.pick(n, ("forward", "backward", "fp16_parity", "bf16_parity", "save_load", "compile")),
        pct=d.ints(n, 1, 100),
        pkg=d.pick(n, ("torch==2.5.1", "numpy==2.1.3", "transformers==4.46.3", "safetensors==0.4.5", "triton==3.1.0")),
        size=d.floats(n, 0.2, 900),
    )
    body = (
        pl.when(pl.col("c") == 0)
        .then(
            pl.format(
                "tests/test_{}.py::test_{}[cuda] PASSED {}[{}%]",
                "mod",
                "case",
                pl.lit(" " * 12),
                pl.col("pct").cast(pl.String).str.pad_start(3, " "),
            )
        )
        .when(pl.col("c") == 1)
        .then(pl.format("Collecting {}", "pkg"))
        .when(pl.col("c") == 2)
        .then(pl.format("  Downloading {}-py3-none-any.whl ({} MB)", pl.col("pkg").str.replace("==", "-"), fixed(pl.col("size"), 1)))
        .otherwise(pl.lit("Requirement already satisfied: pip in /usr/local/lib/python3.11/site-packages (24.3.1)"))
    )
    return as_rows(frame.select("ts", body=body, level=pl.lit("O")))


ROLE_LINES = {"train": train_lines, "serve": serve_lines, "jvm": jvm_lines, "go": go_lines, "batch": batch_lines, "ci": ci_lines}


def app_noise(d: Draw, n: int, env: AppEnv) -> pl.DataFrame:
    ts = d.times(n, env.start_us, env.end_us)
    return ROLE_LINES[env.pod.role](d, ts, env)


def formatter_style(app: str) -> str:
    """The envelope :func:`rca.datasets._formats.format_lines` applies to an app log."""
    return "raw" if app in JSON_STYLES else app
