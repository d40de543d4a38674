"""Message rules of the pipeline source: what each record means and the facts it carries.

Every rule is a regex over the whole ``message`` column of the records (one-line events and
grouped tracebacks alike). Sizes are 1024-based ("GB" included, as PyTorch and vLLM compute
them) and rounded to whole bytes.
"""

from __future__ import annotations

import polars as pl

from rca.sources._base import split_rows
from rca.sources._pipeline_attrs import json_flag, json_number, json_object, json_text
from rca.sources._pipeline_records import PY_EXCEPTION_LINE

_UNIT_BYTES = {
    "B": 1, "bytes": 1, "KiB": 1024, "kB": 1024, "KB": 1024, "MiB": 1024**2, "MB": 1024**2,
    "GiB": 1024**3, "GB": 1024**3, "TiB": 1024**4, "TB": 1024**4,
}
_SIZE = r"(?<n>-?\d+(?:\.\d+)?) ?(?<u>bytes|B|KiB|kB|KB|MiB|MB|GiB|GB|TiB|TB)\b"

CUDA_OOM = (
    r"CUDA out of memory|HIP out of memory|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED"
    r"|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|RESOURCE_EXHAUSTED: Out of memory|OOM when allocating tensor"
)
DATALOADER = (
    r"DataLoader worker \(pid(?:\(s\))? (?<pid>\d+)[^)\n]*\) "
    r"(?:is killed by signal: (?<signal>[A-Za-z](?:[A-Za-z ]*[A-Za-z])?)|(?<exited>exited unexpectedly))"
)
NCCL_TIMEOUT = r"Watchdog caught collective operation timeout"
SHM = (
    r"insufficient shared memory \(shm\)|No space left on device[^\n]*/dev/shm|/dev/shm[^\n]*No space left on device"
    r"|unable to (?:write to file|open shared memory object|mmap \d+ bytes from file) </torch_"
    r"|Error while creating shared memory segment|failed to extend /dev/shm|posix_fallocate failed"
    r"|unable to allocate shared memory"
)
_SHM_PATH = r"(/dev/shm/[^\s'\"():,]+)|<(/torch_[^>\s]+)>"

_BASH_KILL = (
    r"line \d+: +(?<pid>\d+) (?<signal>Killed|Terminated|Segmentation fault|Aborted|Bus error|Hangup"
    r"|Illegal instruction|Floating point exception|Quit|Interrupt)(?: \(core dumped\))? +(?<command>\S.*)$"
)
_LONE_KILLED = r"^\s*Killed\s*$"
_EXIT_CODE = (
    r"(?i)(?:exit(?:ed with)? (?:code|status)|exitcode)\s*[:=]?\s*(?<code>-?\d{1,4})\b"
    r"|make(?:\[\d+\])?: \*\*\* .*?Error (?<make>\d{1,4})\b"
)
_SIGNAL_NAMED = (
    r"died with <Signals\.(?<died>SIG[A-Z0-9]+): \d+>|Signal \d+ \((?<torchrun>SIG[A-Z0-9]+)\) received by PID (?<pid>\d+)"
    r"|\bsignal: (?<go>killed|terminated|segmentation fault|aborted|bus error)\b"
)
_EXIT_PID = r"\(pid: (\d+)\)"

_SIGNAL_BY_WORD = {
    "killed": "SIGKILL", "terminated": "SIGTERM", "segmentation fault": "SIGSEGV", "aborted": "SIGABRT",
    "bus error": "SIGBUS", "hangup": "SIGHUP", "illegal instruction": "SIGILL", "floating point exception": "SIGFPE",
    "quit": "SIGQUIT", "interrupt": "SIGINT",
}
_SIGNAL_BY_NUMBER = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
                     9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}

_XID_PLUGIN = r"XidCriticalError: Xid=(?<xid>\d+) on Device=(?<uuid>(?:GPU|MIG)-[0-9a-fA-F\-]+)"
_XID_NVRM = r"NVRM: Xid \(PCI:(?<pci>[0-9a-fA-F:.]+)\): (?<xid>\d+)"
_UNHEALTHY = r"'(?<resource>[\w./\-]+)' device marked unhealthy: (?<uuid>(?:GPU|MIG)-[0-9a-fA-F\-]+)"

_JAVA_OOM = r"java\.lang\.OutOfMemoryError(?::\s*(?<what>[^\n]*))?"
_JAVA_OOM_KINDS = (
    ("Java heap space", "jvm_heap"), ("Metaspace", "jvm_metaspace"), ("GC overhead limit exceeded", "jvm_gc_overhead"),
    ("native thread", "jvm_native_thread"), ("Direct buffer memory", "jvm_direct_buffer"),
    ("Requested array size", "jvm_array_size"), ("Compressed class space", "jvm_compressed_class"),
)
_GO_OOM = r"fatal error: (?:runtime: )?out of memory|^runtime: out of memory|runtime: VirtualAlloc of \d+ bytes failed"
_GO_REQUEST = r"cannot allocate (\d+)-byte block|VirtualAlloc of (\d+) bytes failed"

_TRAINER_DICT = (
    r"^\{(?<inner>[\"'][\w/.\-]+[\"']: -?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
    r"(?:, [\"'][\w/.\-]+[\"']: -?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)*)\}$"
)
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_HF_SETTING = r"^\s*(?<label>[A-Z][A-Za-z .()&,\-]*?) = (?<value>\d[\d,]*)\s*$"
_HF_SETTING_KEYS = {
    "Num examples": "num_examples", "Num Epochs": "num_epochs",
    "Instantaneous batch size per device": "per_device_batch_size",
    "Total train batch size (w. parallel, distributed & accumulation)": "total_train_batch_size",
    "Gradient Accumulation steps": "gradient_accumulation_steps", "Total optimization steps": "total_optimization_steps",
    "Number of trainable parameters": "trainable_parameters", "Batch size": "batch_size",
}
# warnings.warn() output: "path.py:614: UserWarning: message"
_PYTHON_WARNING = r"^\S+\.py:\d+: \w*Warning: "
_CI_EVENTS = (
    ("The runner has received a shutdown signal", "runner_shutdown"), ("The operation was canceled", "canceled"),
    ("has exceeded the maximum execution time", "timeout"), ("lost communication with the server", "runner_lost"),
)


def _msg() -> pl.Expr:
    return pl.col("message")


def _first(pattern: str, group: int = 1) -> pl.Expr:
    return _msg().str.extract(pattern, group)


def _num(text: pl.Expr, dtype: pl.DataType = pl.Int64()) -> pl.Expr:
    """A number read from matched text; null when it does not fit ``dtype``."""
    return text.cast(dtype, strict=False)


def _size(pattern: str) -> pl.Expr:
    """Bytes of the first size matched by ``pattern``, whose ``{size}`` stands for a number and unit."""
    parts = _msg().str.extract_groups(pattern.replace("{size}", _SIZE)).struct
    factor = parts.field("u").replace_strict(_UNIT_BYTES, default=None, return_dtype=pl.Float64)
    return (parts.field("n").cast(pl.Float64, strict=False) * factor).round().cast(pl.Int64, strict=False)


def _cuda_oom_facts() -> dict[str, pl.Expr]:
    in_use_by_pid = _msg().str.extract_groups(r"Process (?<pid>\d+) has " + _SIZE + " memory in use").struct
    in_use_by_pid_bytes = (
        in_use_by_pid.field("n").cast(pl.Float64, strict=False)
        * in_use_by_pid.field("u").replace_strict(_UNIT_BYTES, default=None, return_dtype=pl.Float64)
    ).round().cast(pl.Int64, strict=False)
    return {
        "gpu_index": pl.coalesce(_first(r"\(GPU (\d+);"), _first(r"GPU (\d+) has a total capac")),
        "requested": pl.coalesce(_size(r"Tried to allocate {size}"), _size(r"Out of memory while trying to allocate {size}")),
        "total": pl.coalesce(_size(r"; {size} total capacity"), _size(r"total capaci?ty of {size}")),
        "free_bytes": pl.coalesce(_size(r"of which {size} is free"), _size(r"{size} free[;)]")),
        "process_in_use_bytes": pl.coalesce(_size(r"this process has {size} memory in use"), in_use_by_pid_bytes),
        "in_use_pid": _num(in_use_by_pid.field("pid")),
        "allocated_bytes": pl.coalesce(_size(r"{size} already allocated"), _size(r"{size} is allocated by PyTorch")),
        "reserved_unallocated_bytes": _size(r"{size} is reserved by PyTorch but unallocated"),
        "reserved_total_bytes": pl.coalesce(_size(r"{size} reserved in total by PyTorch"), _size(r"{size} cached\)")),
    }


def _signal_of_exit(code: pl.Expr) -> pl.Expr:
    number = pl.when(code.is_between(129, 159)).then(code - 128).when(code.is_between(-31, -1)).then(-code)
    return number.replace_strict(_SIGNAL_BY_NUMBER, default=None, return_dtype=pl.String)


def _signal_of_word(word: pl.Expr) -> pl.Expr:
    return word.str.to_lowercase().replace_strict(_SIGNAL_BY_WORD, default=None, return_dtype=pl.String)


def _label(haystack: pl.Expr, needles: tuple[tuple[str, str], ...]) -> pl.Expr:
    """The label of the first needle found in ``haystack``, else null."""
    return pl.coalesce([pl.when(haystack.str.contains(needle, literal=True)).then(pl.lit(name)) for needle, name in needles])


def _java_oom(what: pl.Expr) -> pl.Expr:
    return _label(what, _JAVA_OOM_KINDS).fill_null("jvm")


def extract(records: pl.DataFrame) -> pl.DataFrame:
    """Add the raw facts every rule needs as columns (prefixed ``f_``)."""
    msg = _msg()
    dataloader = msg.str.extract_groups(DATALOADER).struct
    bash = msg.str.extract_groups(_BASH_KILL).struct
    exit_code = msg.str.extract_groups(_EXIT_CODE).struct
    named = msg.str.extract_groups(_SIGNAL_NAMED).struct
    xid_plugin = msg.str.extract_groups(_XID_PLUGIN).struct
    xid_nvrm = msg.str.extract_groups(_XID_NVRM).struct
    unhealthy = msg.str.extract_groups(_UNHEALTHY).struct
    java_oom = msg.str.extract_groups(_JAVA_OOM).struct
    code = _num(pl.coalesce(exit_code.field("code"), exit_code.field("make")), pl.Int32())
    cuda = {f"f_{name}": expr for name, expr in _cuda_oom_facts().items()}
    return records.with_columns(
        f_cuda_oom=msg.str.contains(CUDA_OOM),
        f_dataloader_pid=_num(dataloader.field("pid")),
        f_dataloader_signal=dataloader.field("signal").str.strip_chars(),
        f_dataloader_exited=dataloader.field("exited").is_not_null(),
        f_nccl_timeout=msg.str.contains(NCCL_TIMEOUT),
        f_shm=msg.str.contains(SHM),
        f_shm_path=pl.coalesce(_first(_SHM_PATH, 1), _first(_SHM_PATH, 2)),
        f_bash_pid=_num(bash.field("pid")),
        f_bash_signal=_signal_of_word(bash.field("signal")),
        f_bash_command=bash.field("command").str.strip_chars(),
        f_lone_killed=msg.str.contains(_LONE_KILLED),
        f_exit_code=code,
        f_exit_signal=_signal_of_exit(code),
        f_named_signal=pl.coalesce(named.field("died"), named.field("torchrun"), _signal_of_word(named.field("go"))),
        f_named_pid=_num(named.field("pid")),
        f_exit_pid=_num(_first(_EXIT_PID)),
        f_xid=_num(pl.coalesce(xid_plugin.field("xid"), xid_nvrm.field("xid")), pl.Int32()),
        f_gpu_uuid=pl.coalesce(xid_plugin.field("uuid"), unhealthy.field("uuid")),
        f_pci_bus=xid_nvrm.field("pci"),
        f_nvrm_pid=_num(pl.when(xid_nvrm.field("xid").is_not_null()).then(_first(r"\bpid=(\d+)"))),
        f_resource=unhealthy.field("resource"),
        f_unhealthy=msg.str.contains(r"unhealthy"),
        f_java_oom=pl.when(msg.str.contains("java.lang.OutOfMemoryError", literal=True))
        .then(_java_oom(java_oom.field("what").fill_null(""))),
        f_go_oom=msg.str.contains(_GO_OOM),
        f_go_request=_num(pl.coalesce(_first(_GO_REQUEST, 1), _first(_GO_REQUEST, 2))),
        f_reason=_first(r"reason[:=]\s*['\"]?([A-Za-z]+)"),
        f_failure_class=_first(r"Job failed \(([a-z ]+ failure)\)"),
        f_container=_first(r"\bcontainer[: ]+\"?([a-z0-9][\w.\-]*)\"?"),
        f_vllm_error=pl.when(msg.str.contains("No available memory for the cache blocks", literal=True)).then(pl.lit("no_cache_blocks"))
        .when(msg.str.contains(r"max seq len \(\d+\)[^\n]*KV cache")).then(pl.lit("kv_cache_insufficient"))
        .when(msg.str.contains("EngineCore failed to start", literal=True)).then(pl.lit("engine_start_failed")),
        **cuda,
    )


def kind_and_severity(facts: pl.DataFrame) -> pl.DataFrame:
    """Decide each record's kind and severity (the printed level wins over the kind's default)."""
    c = pl.col
    python = (c("family") == "python").fill_null(False)
    stack = c("family").is_in(["java", "go"]).fill_null(False)
    signal = pl.coalesce(
        c("f_dataloader_signal").pipe(_signal_of_word), c("f_bash_signal"), c("f_named_signal"),
        pl.when(c("f_lone_killed")).then(pl.lit("SIGKILL")),
        c("f_exit_signal"),
        pl.when(c("f_reason") == "OOMKilled").then(pl.lit("SIGKILL")),
    )
    oom = pl.coalesce(
        c("f_java_oom"),
        pl.when(c("f_go_oom")).then(pl.lit("go_runtime")),
        pl.when(c("message").str.contains("JavaScript heap out of memory", literal=True)).then(pl.lit("node_heap")),
        pl.when(c("exc_type").str.contains(r"(?:^|\.)_?(?:Array)?MemoryError$")).then(pl.lit("python_memory_error")),
    )
    killed = pl.when(python).then(c("f_named_signal").is_not_null()).otherwise(
        pl.any_horizontal(
            c("f_bash_signal").is_not_null(), c("f_named_signal").is_not_null(), c("f_lone_killed"),
            c("f_exit_signal").is_not_null(), c("f_reason") == "OOMKilled",
        )
    )
    kind = (
        pl.when(c("f_cuda_oom")).then(pl.lit("cuda_oom"))
        .when(c("f_dataloader_pid").is_not_null()).then(pl.lit("dataloader_killed"))
        .when(c("f_nccl_timeout")).then(pl.lit("nccl_timeout"))
        .when(c("f_shm")).then(pl.lit("shm_error"))
        .when(c("f_xid").is_not_null() & ~python).then(pl.lit("xid"))
        .when(killed).then(pl.lit("process_killed"))
        .when(python | (stack & oom.is_null())).then(pl.lit("traceback"))
        .otherwise(pl.lit("log"))
    )
    return facts.with_columns(kind=kind, f_signal=signal, f_oom=oom).with_columns(
        severity=pl.coalesce(
            c("severity"),
            pl.when(c("kind").is_in(["cuda_oom", "dataloader_killed", "nccl_timeout", "shm_error", "xid", "process_killed", "traceback"]))
            .then(pl.lit("error")),
            pl.when(c("f_oom").is_not_null()).then(pl.lit("critical")),
            pl.when(c("f_vllm_error").is_not_null()).then(pl.lit("error")),
            pl.when(c("f_exit_code").is_not_null() & (c("f_exit_code") != 0)).then(pl.lit("error")),
            pl.when(c("message").str.contains(_PYTHON_WARNING)).then(pl.lit("warning")),
        )
    )


_EXCEPTION_COLUMNS = {"exc_type": pl.String, "exc_message": pl.String, "last_frame": pl.String}


def exception_facts(records: pl.DataFrame) -> pl.DataFrame:
    """``exc_type``, ``exc_message`` and ``last_frame`` of tracebacks and exception lines."""
    # Only stack records and lines naming an anchor error can hold an exception worth naming;
    # the costly multi-line regexes run on those alone.
    candidate = pl.col("family").is_not_null() | _msg().str.contains(f"{CUDA_OOM}|DataLoader worker|{NCCL_TIMEOUT}|{SHM}")
    return split_rows(
        records,
        candidate,
        lambda rows: rows.with_columns(**_exception_columns()),
        lambda rows: rows.with_columns(pl.lit(None, dtype).alias(name) for name, dtype in _EXCEPTION_COLUMNS.items()),
    )


def _exception_columns() -> dict[str, pl.Expr]:
    msg = _msg()
    multiline_exception = PY_EXCEPTION_LINE.replace(r"(?:\s.*)?", r"(?:[ \t][^\n]*)?")
    marker_line = pl.coalesce(
        _first(rf"(?m)^([A-Za-z_][\w.]*:[ \t][^\n]*(?:{marker})[^\n]*)$")
        for marker in (CUDA_OOM, r"DataLoader worker \(pid", NCCL_TIMEOUT, SHM)
    )
    python_line = pl.coalesce(marker_line, msg.str.extract_all(f"(?m){multiline_exception}").list.last())
    java_line = _first(r"(?m)^(?:Exception in thread \"[^\"\n]*\" )?((?:[\w$]+\.)*[\w$]*(?:Exception|Error|Throwable)(?::[^\n]*)?)$")
    go_line = _first(r"(?m)^((?:fatal error|panic): [^\n]*)$")
    family = pl.col("family")
    exception_line = (
        pl.when(family == "java").then(java_line)
        .when(family == "go").then(go_line)
        .when(family == "python").then(python_line)
        .otherwise(marker_line)
    )
    parts = exception_line.str.extract_groups(r"^(?<type>[\w.$]+(?: error)?)(?::[ \t]*(?<text>.*))?$").struct
    cut = pl.when(exception_line.is_not_null()).then(msg.str.find(exception_line, literal=True))
    before = msg.str.slice(0, cut.fill_null(msg.str.len_chars()))
    py_frame = before.str.extract_all(r"File \"[^\"\n]+\", line \d+, in [^\n]+").list.last().str.extract_groups(
        r"^File \"(?<file>[^\"]+)\", line (?<line>\d+), in (?<func>.+)$"
    ).struct
    last_frame = (
        pl.when(family == "java").then(_first(r"(?m)^\s+at ([\w$.<>/\-]+\([^)\n]*\))"))
        .when(py_frame.field("file").is_not_null())
        .then(pl.format("{}:{} in {}", py_frame.field("file"), py_frame.field("line"), py_frame.field("func")))
    )
    # An all-capitals "type" is a log level ("ERROR: ..."), not an exception class.
    is_exception = parts.field("type") != parts.field("type").str.to_uppercase()
    return {
        "exc_type": pl.when(is_exception).then(parts.field("type")),
        "exc_message": pl.when(is_exception).then(parts.field("text").replace("", None)),
        "last_frame": pl.when(exception_line.is_not_null() | (family == "python")).then(last_frame),
    }


def _vllm_facts() -> dict[str, pl.Expr]:
    msg = _msg()
    blocks = msg.str.extract_groups(r"# GPU blocks: (?<gpu>\d+), # CPU blocks: (?<cpu>\d+)").struct
    concurrency = msg.str.extract_groups(r"Maximum concurrency for (?<tokens>\d+) tokens per request: (?<x>\d+(?:\.\d+)?)x").struct
    return {
        "gpu_blocks": json_number(_num(blocks.field("gpu"))),
        "cpu_blocks": json_number(_num(blocks.field("cpu"))),
        "kv_cache_available_bytes": json_number(_size(r"Available KV cache memory: {size}")),
        "kv_cache_bytes": json_number(pl.coalesce(_size(r"kv_cache_size={size}"), _size(r"reserved for KV Cache is {size}"))),
        "total_gpu_memory_bytes": json_number(_size(r"total_gpu_memory[= ]\(?{size}")),
        "gpu_memory_utilization": json_number(_num(_first(r"gpu_memory_utilization[= ]\(?(\d+(?:\.\d+)?)"), pl.Float64())),
        "model_memory_bytes": json_number(_size(r"(?:Loading model weights|Model loading) took {size}")),
        "max_seq_len": json_number(_num(_first(r"max seq len \((\d+)\)"))),
        "kv_cache_tokens": json_number(_num(_first(r"stored in KV cache \((\d+)\)"))),
        "tokens_per_request": json_number(_num(concurrency.field("tokens"))),
        "max_concurrency": json_number(_num(concurrency.field("x"), pl.Float64())),
        "gpu_kv_cache_usage_pct": json_number(_num(_first(r"GPU KV cache usage: (\d+(?:\.\d+)?)%"), pl.Float64())),
        "running_requests": json_number(_num(_first(r"Running: (\d+) reqs"))),
        "waiting_requests": json_number(_num(_first(r"(?:Pending|Waiting): (\d+) reqs"))),
        "vllm_error": json_text(pl.col("f_vllm_error")),
    }


def _trainer_facts() -> tuple[dict[str, pl.Expr], pl.Expr]:
    msg = _msg()
    metrics = msg.str.extract(_TRAINER_DICT, 1).str.replace_all("'", '"')
    loose = metrics.is_null()
    setting = msg.str.extract_groups(_HF_SETTING).struct
    setting_key = setting.field("label").replace_strict(_HF_SETTING_KEYS, default=None, return_dtype=pl.String)
    setting_value = _num(setting.field("value").str.replace_all(",", ""))
    setting_fragment = pl.when(setting_key.is_not_null() & setting_value.is_not_null()).then(
        pl.format('"{}":{}', setting_key, setting_value.cast(pl.String))
    )
    loss = pl.when(loose).then(_first(rf"(?i)\bloss\s*[:=]?\s*({_NUMBER})"))
    facts = {
        "loss": json_number(_num(loss, pl.Float64())),
        "step": json_number(pl.when(loss.is_not_null()).then(_num(_first(r"(?i)\b(?:global_)?step\s*[:=]?\s*(\d+)")))),
        "epoch": json_number(pl.when(loss.is_not_null()).then(_num(_first(r"(?i)\bepoch\s*[:=]?\s*(\d+(?:\.\d+)?)"), pl.Float64()))),
        "phase": json_text(_first(r"\*{5} Running ([A-Za-z ]+?) \*{5}").str.to_lowercase()),
    }
    return facts, pl.concat_str([metrics, setting_fragment], separator=",", ignore_nulls=True).replace("", None)


def attrs() -> pl.Expr:
    """The ``attrs`` JSON object of each classified record; keys with no value are left out."""
    c = pl.col
    kind = c("kind")
    cuda = kind == "cuda_oom"
    nccl_scope = c("message").str.contains("ProcessGroupNCCL|WorkNCCL|NCCL work")
    pg = c("message").str.extract_groups(
        r"\[PG (?:ID )?(?<pg>\d+) (?:PG GUID (?<guid>[^\s(\]]+))?\s*(?:\((?<name>[^)\]]*)\))?\s*Rank (?<rank>\d+)\]"
    ).struct
    vllm = _vllm_facts()
    trainer, trainer_raw = _trainer_facts()
    ci_event = _label(c("message"), _CI_EVENTS)
    fields = {
        "rank": json_number(pl.coalesce(_num(_first(r"\[Rank (\d+)\]")), _num(pg.field("rank")), c("rank"))),
        "exc_type": json_text(c("exc_type")),
        "exc_message": json_text(c("exc_message")),
        "last_frame": json_text(c("last_frame")),
        **{name: json_number(pl.when(cuda).then(c(f"f_{name}"))) for name in (
            "free_bytes", "process_in_use_bytes", "in_use_pid", "allocated_bytes", "reserved_unallocated_bytes", "reserved_total_bytes")},
        "signal": json_text(pl.when(kind.is_in(["process_killed", "dataloader_killed"])).then(c("f_signal"))),
        "signal_text": json_text(pl.when(kind == "dataloader_killed").then(c("f_dataloader_signal"))),
        "memory_class": json_flag(pl.when(kind == "dataloader_killed").then(c("f_signal") == "SIGKILL")),
        "worker_exited_unexpectedly": json_flag(pl.when(c("f_dataloader_exited")).then(True)),
        "seq": json_number(_num(_first(r"SeqNum=(\d+)"))),
        "op": json_text(_first(r"OpType=(\w+)")),
        "numel_in": json_number(_num(_first(r"NumelIn=(\d+)"))),
        "numel_out": json_number(_num(_first(r"NumelOut=(\d+)"))),
        "timeout_ms": json_number(_num(_first(r"Timeout\(ms\)=(\d+)"))),
        "ran_for_ms": json_number(_num(_first(r"ran for (\d+) milliseconds"))),
        "pg_id": json_number(pl.when(nccl_scope).then(_num(pg.field("pg")))),
        "pg_name": json_text(pl.when(nccl_scope).then(pg.field("name"))),
        "failed_seq": json_number(_num(_first(r"detected by watchdog at work: (\d+)"))),
        "last_enqueued_seq": json_number(_num(_first(r"last enqueued NCCL work: (\d+)"))),
        "last_completed_seq": json_number(_num(_first(r"last completed NCCL work: (\d+)"))),
        "shm_path": json_text(pl.when(kind == "shm_error").then(c("f_shm_path"))),
        "command": json_text(c("f_bash_command")),
        "reason": json_text(pl.when(kind == "process_killed").then(c("f_reason"))),
        "failure_class": json_text(c("f_failure_class")),
        "ci_event": json_text(ci_event),
        "health": json_text(pl.when(c("f_gpu_uuid").is_not_null() & c("f_unhealthy")).then(pl.lit("unhealthy"))),
        "resource": json_text(c("f_resource")),
        "oom": json_text(c("f_oom")),
        **vllm,
        **trainer,
    }
    return json_object(fields, raw=[trainer_raw])
