"""The ``attrs`` JSON object of the pipeline source's events, leaving out missing keys.

Each key's value is computed once into a column and then encoded as a JSON number, string
or flag: an expression is evaluated wherever it is used, and most values are regexes. A
key whose rule family no record spells is left out up front.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from rca.sources import _xid
from rca.sources._pipeline_rules import ci_event, first, gated, num, size

_TRAINER_DICT = (
    r"^\{(?<inner>[\"'][0-9A-Za-z_/.\-]+[\"']: -?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
    r"(?:, [\"'][0-9A-Za-z_/.\-]+[\"']: -?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)*)\}$"
)
_NUMBER = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_HF_SETTING = r"^\s*(?<label>[A-Z][A-Za-z .()&,\-]*?) = (?<value>[0-9][0-9,]*)\s*$"
_HF_SETTING_KEYS = {
    "Num examples": "num_examples", "Num Epochs": "num_epochs",
    "Instantaneous batch size per device": "per_device_batch_size",
    "Total train batch size (w. parallel, distributed & accumulation)": "total_train_batch_size",
    "Gradient Accumulation steps": "gradient_accumulation_steps", "Total optimization steps": "total_optimization_steps",
    "Number of trainable parameters": "trainable_parameters", "Batch size": "batch_size",
}
_PG = gated("pg").str.extract_groups(
    r"\[PG (?:ID )?(?<pg>[0-9]+) (?:PG GUID (?<guid>[^\s(\]]+))?\s*(?:\((?<name>[^)\]]*)\))?\s*Rank (?<rank>[0-9]+)\]"
).struct
_SETTING = gated("setting").str.extract_groups(_HF_SETTING).struct


def json_number(value: pl.Expr) -> pl.Expr:
    """A number as JSON text; null (key left out) when missing or not finite."""
    return pl.when(value.cast(pl.Float64, strict=False).is_finite()).then(value.cast(pl.String))


# What JSON escapes in a string, spelled as polars' JSON writer spells it.
_JSON_ESCAPES = {
    "\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
    **{chr(code): f"\\u{code:04x}" for code in range(0x20) if chr(code) not in "\b\f\n\r\t"},
}


def json_text(value: pl.Expr) -> pl.Expr:
    """A string as a quoted, escaped JSON string (null stays null)."""
    return pl.concat_str([pl.lit('"'), value.str.replace_many(_JSON_ESCAPES), pl.lit('"')])


def json_numbers(values: pl.Expr) -> pl.Expr:
    """A list of integers as a JSON array; null when missing or empty."""
    return pl.when(values.list.len() > 0).then(pl.concat_str([pl.lit("["), values.cast(pl.List(pl.String)).list.join(","), pl.lit("]")]))


def json_flag(value: pl.Expr) -> pl.Expr:
    """A boolean as JSON ``true``/``false``."""
    return pl.when(value).then(pl.lit("true")).when(value.not_()).then(pl.lit("false"))


def json_members(fields: Mapping[str, pl.Expr]) -> list[pl.Expr]:
    """``"key":value`` of each JSON-encoded value (null where the value is)."""
    return [pl.concat_str([pl.lit(f'"{name}":'), value]) for name, value in fields.items()]


def json_run(fields: Mapping[str, pl.Expr]) -> pl.Expr:
    """The members of ``fields`` with a value as one ``"k":v,…`` run without braces (empty when none has one), a ``raw``
    run for :func:`json_object`."""
    return pl.concat_str(json_members(fields), separator=",", ignore_nulls=True)


def json_object(fields: Mapping[str, pl.Expr], raw: Sequence[pl.Expr] = ()) -> pl.Expr:
    """``{"key": value, ...}`` from JSON-encoded values; ``raw`` are ready-made ``"k":v`` runs.

    Null when no key has a value.
    """
    members = json_members(fields)
    if not members and not raw:
        return pl.lit(None, pl.String)
    body = pl.concat_str([*members, *raw], separator=",", ignore_nulls=True)
    return pl.concat_str([pl.lit("{"), body, pl.lit("}")]).replace("{}", None)


Encoder = Callable[[pl.Expr], pl.Expr]
# key → how its value is encoded, and the value.
Fields = dict[str, tuple[Encoder, pl.Expr]]


def _numbers(values: Mapping[str, pl.Expr]) -> Fields:
    return {name: (json_number, value) for name, value in values.items()}


def _vllm() -> Fields:
    m = gated("vllm")
    blocks = m.str.extract_groups(r"# GPU blocks: (?<gpu>[0-9]+), # CPU blocks: (?<cpu>[0-9]+)").struct
    concurrency = m.str.extract_groups(r"Maximum concurrency for (?<tokens>[0-9]+) tokens per request: (?<x>[0-9]+(?:\.[0-9]+)?)x").struct
    return _numbers({
        "gpu_blocks": num(blocks.field("gpu")),
        "cpu_blocks": num(blocks.field("cpu")),
        # vLLM V1's startup check words both sides of a shortage: "(16.00 GiB KV cache is needed, which is larger than the
        # available KV cache memory (0.71 GiB). Based on the available memory, the estimated maximum model length is 5632."
        "kv_cache_available_bytes": pl.coalesce(
            size(m, r"Available KV cache memory: {size}"), size(m, r"available KV cache memory \({size}\)"),
        ),
        "kv_cache_needed_bytes": size(m, r"\({size} KV cache is needed"),
        "max_model_len_estimate": num(first(m, r"estimated maximum model length is ([0-9]+)")),
        "kv_cache_bytes": pl.coalesce(size(m, r"kv_cache_size={size}"), size(m, r"reserved for KV Cache is {size}")),
        "total_gpu_memory_bytes": size(m, r"total_gpu_memory[= ]\(?{size}"),
        "gpu_memory_utilization": num(first(m, r"gpu_memory_utilization[= ]\(?([0-9]+(?:\.[0-9]+)?)"), pl.Float64()),
        "model_memory_bytes": size(m, r"(?:Loading model weights|Model loading) took {size}"),
        "max_seq_len": num(first(m, r"max seq len \(([0-9]+)\)")),
        "kv_cache_tokens": num(first(m, r"stored in KV cache \(([0-9]+)\)")),
        "tokens_per_request": num(concurrency.field("tokens")),
        "max_concurrency": num(concurrency.field("x"), pl.Float64()),
        "gpu_kv_cache_usage_pct": num(first(m, r"GPU KV cache usage: ([0-9]+(?:\.[0-9]+)?)%"), pl.Float64()),
        "running_requests": num(first(m, r"Running: ([0-9]+) reqs")),
        "waiting_requests": num(first(m, r"(?:Pending|Waiting): ([0-9]+) reqs")),
    })


_VLLM = _vllm()


def _nccl(present: set[str]) -> tuple[Fields, Fields]:
    """The work item's keys, and the process group's and watchdog's (which follow ``pg_*``)."""
    if "nccl_work" not in present:
        return {}, {}
    work = gated("nccl_work")
    item: Fields = {
        "seq": (json_number, num(first(work, r"SeqNum=([0-9]+)"))),
        "op": (json_text, first(work, r"OpType=([0-9A-Za-z_]+)")),
        **_numbers({
            "numel_in": num(first(work, r"NumelIn=([0-9]+)")), "numel_out": num(first(work, r"NumelOut=([0-9]+)")),
            "timeout_ms": num(first(work, r"Timeout\(ms\)=([0-9]+)")), "ran_for_ms": num(first(work, r"ran for ([0-9]+) milliseconds")),
        }),
    }
    # "Timeout at NCCL work: N" (2.3+) names the failed work as the watchdog line does; -1 is "none yet". Since 2.6 the
    # watchdog says "failure detected by watchdog at work sequence id: N PG status: last enqueued work: N, last completed
    # work: N" (a timeout or an NCCL error), and its dump signal "Last enqueued NCCL work: N" (capitalised).
    watchdog = _numbers({
        "failed_seq": num(first(work, r"(?:detected by watchdog at work(?: sequence id)?|Timeout at NCCL work): ([0-9]+)")),
        "last_enqueued_seq": num(first(work, r"[Ll]ast enqueued (?:NCCL )?work: (-?[0-9]+)")),
        "last_completed_seq": num(first(work, r"[Ll]ast completed (?:NCCL )?work: (-?[0-9]+)")),
    })
    return item, watchdog


def _fields(present: set[str]) -> Fields:
    c = pl.col
    kind = c("kind")
    ranks = [num(first(gated("rank"), r"\[Rank ([0-9]+)\]"))] if "rank" in present else []
    ranks += [num(_PG.field("rank"))] if "pg" in present else []
    ranks += [c("f_named_rank")] if "named_signal" in present else []
    ranks += [c("f_exit_rank")] if "exit" in present else []
    ranks += [c("f_ras_rank")] if "nccl_ras" in present else []
    # (and torch 2.6+'s "failure detected by watchdog at work sequence id: …", which names neither)
    nccl_scope = gated("pg").str.contains("ProcessGroupNCCL|WorkNCCL|NCCL work|detected by watchdog")
    signalled = present & {"dataloader", "bash", "killed", "exit", "named_signal", "reason", "slurm_oom", "ray_oom", "yarn"}
    work_item, watchdog = _nccl(present)
    fields: Fields = {
        "rank": (json_number, pl.coalesce(*ranks, c("rank"))),
        # the node of the Ray worker whose tag the line wears (a host's address, not its name); on NCCL's RAS report, the node
        # of the rank or process the line lists (the report's writer is a client of no rank)
        "node_ip": (json_text, pl.coalesce(c("f_ras_node"), c("node_ip"))),
        # how many more times Ray's driver saw the record's line across the cluster: an error many workers hit
        "repeated": (json_number, c("repeated")),
        "exc_type": (json_text, c("exc_type")),
        "exc_message": (json_text, c("exc_message")),
        "last_frame": (json_text, c("last_frame")),
    }
    if "cuda" in present:
        fields |= _numbers({name: pl.when(kind == "cuda_oom").then(c(f"f_{name}")) for name in (
            "free_bytes", "process_in_use_bytes", "in_use_pid", "listed_processes_in_use_bytes", "allocated_bytes",
            "reserved_unallocated_bytes", "reserved_total_bytes")})
        fields["listed_process_pids"] = (json_numbers, pl.when(kind == "cuda_oom").then(c("f_listed_process_pids")))
    if signalled:
        fields["signal"] = (json_text, pl.when(kind.is_in(["process_killed", "dataloader_killed"])).then(c("f_signal")))
    if "dataloader" in present:
        fields["signal_text"] = (json_text, pl.when(kind == "dataloader_killed").then(c("f_dataloader_signal")))
        fields["memory_class"] = (json_flag, pl.when(kind == "dataloader_killed").then(c("f_signal") == "SIGKILL"))
        fields["worker_exited_unexpectedly"] = (json_flag, pl.when(c("f_dataloader_exited")).then(True))
    if "trt_memory" in present:
        # TensorRT-LLM's free memory when it sized its KV cache, under the key a CUDA OOM's free memory has
        oom_free = [fields["free_bytes"][1]] if "free_bytes" in fields else []
        fields["free_bytes"] = (json_number, pl.coalesce(*oom_free, c("f_trt_available")))
    fields |= work_item
    if "pg" in present:
        fields["pg_id"] = (json_number, pl.when(nccl_scope).then(num(_PG.field("pg"))))
        fields["pg_name"] = (json_text, pl.when(nccl_scope).then(_PG.field("name")))
    fields |= watchdog
    optional: list[tuple[str, str, Encoder, pl.Expr]] = [
        ("shm", "shm_path", json_text, pl.when(kind == "shm_error").then(c("f_shm_path"))),
        ("bash", "command", json_text, c("f_bash_command")),
        # the CI step, script or package whose command a lone "Killed" line reports
        ("killed", "ci_step", json_text, pl.when(kind == "process_killed").then(c("f_lone_step"))),
        ("reason", "reason", json_text, pl.when(kind == "process_killed").then(c("f_reason"))),
        ("failure", "failure_class", json_text, c("f_failure_class")),
        ("slurm_oom", "slurm_step", json_text, c("f_slurm_step")),
        ("slurm_oom", "cancel_reason", json_text, c("f_slurm_cancel_reason")),
        ("slurm_oom", "slurm_state", json_text, c("f_slurm_state")),
        ("slurm_oom", "pbs_limit", json_text, c("f_pbs_limit")),
        ("slurm_oom", "lsf_term", json_text, c("f_lsf_term")),
        ("slurm_oom", "sge_limit", json_text, c("f_sge_limit")),
        ("slurm_oom", "sge_failed", json_number, c("f_sge_failed")),
        ("ray_oom", "workers_killed", json_number, c("f_ray_workers_killed")),
        ("ray_worker", "ray_exit_type", json_text, c("f_ray_worker_exit_type")),
        # NCCL's RAS report: the finding a header names and its communicator; a listed rank's status, last operation, error
        ("nccl_ras", "ras_finding", json_text, c("f_ras_finding")),
        ("nccl_ras", "comm_hash", json_text, c("f_ras_comm")),
        ("nccl_ras", "ras_status", json_text, c("f_ras_status")),
        ("nccl_ras", "ras_last_op", json_number, c("f_ras_op")),
        ("nccl_ras", "nccl_error", json_text, c("f_ras_error")),
        ("yarn", "yarn_limit", json_text, c("f_yarn_limit")),
        ("ci_event", "ci_event", json_text, ci_event()),
        ("xid", "health", json_text, pl.when(c("f_gpu_uuid").is_not_null() & c("f_unhealthy")).then(pl.lit("unhealthy"))),
        ("xid", "resource", json_text, c("f_resource")),
        ("dcgm_health", "health_system", json_text, c("f_dcgm_health_system")),
        *(("xid", name, json_text, pl.when(kind == "xid").then(value)) for name, value in _xid.catalog_attrs(c("f_xid")).items()),
        ("xid", "xid_recovery_action", json_text, pl.when(kind == "xid").then(c("f_xid_recovery_action"))),
        # the OOM killer's lines under the kernel source's keys
        ("kernel_oom", "gfp_mask", json_text, pl.when(kind == "oom_invoked").then(c("f_kernel_gfp_mask"))),
        ("kernel_oom", "order", json_number, pl.when(kind == "oom_invoked").then(c("f_kernel_order"))),
        ("kernel_oom", "constraint", json_text, pl.when(c("f_kernel_memcg")).then(pl.lit("CONSTRAINT_MEMCG"))),
        ("kernel_oom", "selected", json_flag, pl.when(c("f_kernel_selected_pid").is_not_null()).then(True)),
        ("kernel_oom", "oom_score", json_number, c("f_kernel_oom_score")),
        *(("kernel_oom", f"{name}_kb", json_number, c(f"f_kernel_{name}_kb")) for name in ("total_vm", "anon_rss", "file_rss", "shmem_rss")),
        ("cuda_error", "cuda_error", json_text, pl.when(kind != "cuda_oom").then(c("f_cuda_error"))),
    ]
    fields |= {name: (encoder, value) for family, name, encoder, value in optional if family in present}
    fields["oom"] = (json_text, c("f_oom"))
    if "vllm" in present:
        fields |= _VLLM
    if "sglang_memory" in present:
        # SGLang's memory at startup, under the keys a CUDA OOM's free memory and vLLM's weights and KV cache have
        for name, fact in (("free_bytes", "f_sglang_available"), ("model_memory_bytes", "f_sglang_weights"), ("kv_cache_bytes", "f_sglang_kv")):
            said = [fields[name][1]] if name in fields else []
            fields[name] = (json_number, pl.coalesce(*said, c(fact)))
    if "vllm_error" in present:
        fields["vllm_error"] = (json_text, c("f_vllm_error"))
    return fields | _trainer(present)


def _trainer(present: set[str]) -> Fields:
    fields: Fields = {}
    if "loss" in present:
        # ``loss_text`` is read first: step and epoch are read only beside a loss.
        beside_loss = pl.col("loss_text").is_not_null()
        fields["loss"] = (json_number, num(pl.col("loss_text"), pl.Float64()))
        fields["step"] = (json_number, pl.when(beside_loss).then(num(first(gated("loss"), r"(?i)\b(?:(?:global_)?step|iteration)\s*[:=]?\s*([0-9]+)"))))
        fields["epoch"] = (
            json_number, pl.when(beside_loss).then(num(first(gated("loss"), r"(?i)\bepoch\s*[:=]?\s*([0-9]+(?:\.[0-9]+)?)"), pl.Float64())),
        )
    if "phase" in present:
        fields["phase"] = (json_text, first(gated("phase"), r"\*{5} Running ([A-Za-z ]+?) \*{5}").str.to_lowercase())
    return fields


def _trainer_runs(present: set[str]) -> dict[str, pl.Expr]:
    """The trainer's ready-made ``"k":v`` runs: a metrics dict, a setting."""
    runs = {}
    if "trainer_dict" in present:
        runs["metrics"] = first(gated("trainer_dict"), _TRAINER_DICT).str.replace_all("'", '"')
    if "setting" in present:
        key = _SETTING.field("label").replace_strict(_HF_SETTING_KEYS, default=None, return_dtype=pl.String)
        value = num(_SETTING.field("value").str.replace_all(",", ""))
        runs["setting"] = pl.when(key.is_not_null() & value.is_not_null()).then(pl.format('"{}":{}', key, value.cast(pl.String)))
    return runs


def with_attrs(facts: pl.DataFrame, present: set[str]) -> pl.DataFrame:
    """``facts`` with its ``attrs`` column: the JSON object of every key that has a value.

    A key no record of the batch has a value for is left out of the encoding altogether.
    """
    runs = _trainer_runs(present)
    staged = facts.with_columns(**{f"a_{name}": run for name, run in runs.items()})
    scratch = [f"a_{name}" for name in runs]
    if "loss" in present:
        # The training loss as Lightning, Megatron, NeMo and nanotron name it too ("train_loss", "reduced_train_loss",
        # "lm loss", "lm_loss"), not "val_loss".
        loss = first(gated("loss"), rf"(?i)\b(?:reduced_|lm_)?(?:train_)?loss\s*[:=]?\s*({_NUMBER})")
        staged = staged.with_columns(loss_text=pl.when(pl.col("a_metrics").is_null()).then(loss) if "metrics" in runs else loss)
        scratch.append("loss_text")
    fields = _fields(present)
    staged = staged.with_columns(**{f"a_{name}": value for name, (_, value) in fields.items()})
    scratch += [f"a_{name}" for name in fields]
    valued = staged.select(pl.col(name).is_not_null().any() for name in scratch).row(0, named=True)
    encoded = {name: encoder(pl.col(f"a_{name}")) for name, (encoder, _) in fields.items() if valued[f"a_{name}"]}
    # and what the line's own format named (_pipeline_hpc's node)
    joined = [pl.col(f"a_{name}") for name in runs if valued[f"a_{name}"]] + [pl.col("line_attrs")]
    raw = [pl.concat_str(joined, separator=",", ignore_nulls=True).replace("", None)] if joined else []
    return staged.with_columns(attrs=json_object(encoded, raw=raw)).drop(scratch)
