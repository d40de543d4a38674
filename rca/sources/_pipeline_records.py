"""Multi-line records of the pipeline source: Python tracebacks (also as rich and IPython draw them), Java and Go stack dumps.

Each family is found with whole-column shape tests and shifted neighbours, then a
cumulative-sum key numbers its records. Neighbours are taken within a *partition* (one
rank, one worker pid, one pod/container) so tracebacks of ranks that print at the same
time are kept apart. A timestamped line followed by untimestamped indented lines is a
multi-line log record too (a logging call whose message spans lines).
"""

from __future__ import annotations

import re

import polars as pl
import polars.selectors as cs

# A paste may lower its first letter (a Markdown editor's or a note's autocorrect: "traceback (most recent call last):").
_PY_HEADER = r"[Tt]raceback \(most recent call last\):"
# Ray's RayTaskError prints a remote task's traceback with its header replaced by the task's process title and place:
# "ray::WorkerDict.update_actor() (pid=118848, ip=10.130.71.7, actor_id=…)", after the exception line of the caller's
# traceback ("ray.exceptions.RayTaskError(OutOfMemoryError): ray::…") or the driver's "Unhandled error (suppress with …): ray::…".
RAY_TASK_HEADER = r"ray::[^\s()]+\(\) \(pid=[0-9]+, ip="
# Chain separators: Python's own two; TensorFlow 1.x's, under a failed op's traceback, above the frames of the Python code
# that built the op ("Caused by op 'zeros_12', defined at:", u'zeros_12' under Python 2), the error printed once more under
# them ("InternalError (see above for traceback): …").
_PY_CHAIN = (
    r"^\s*(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:"
    r"|Caused by op u?'[^'\n]*', defined at:"
    # torch.multiprocessing.spawn's ProcessRaisedException carries the failed child's traceback as its message, after a
    # blank line: the child's exception is what the parent's stands for
    r"|-- Process [0-9]+ terminated with the following error:)\s*$"
)
_INDENTED = r"^\s+\S"
# An exception whose message ends where the exception it wraps begins, on the next line: torch.compile's
# "BackendCompilerFailed: backend='inductor' raised:" above "OutOfMemoryError: CUDA out of memory. …".
_WRAPS_NEXT = " raised:"
# rich's traceback (rich.traceback, Lightning, typer): the frames drawn in a box ("╭─── Traceback (most recent call
# last) ───╮", "│ … │" lines, "╰───╯"), or between two rules without one, then the exception line under it.
RICH_TITLE = " Traceback (most recent call last) ─"
_RICH_OPEN = r"^\s*(?:╭─+|─{3,}) Traceback \(most recent call last\) ─+╮?\s*$"
_RICH_CLOSE = r"^\s*(?:╰─+╯|─{10,})\s*$"
_PY_FRAME = r'^\s+File "[^"]*", line [0-9]+'
# A traceback pasted (or logged) with its indentation lost: an unindented frame line, the code line under it and
# Python 3.11+'s "^^^^"/"~~~^~~" markers under that. They count as a traceback's indented lines only in an unbroken run
# under its header, or from a partition's first line when a log is cut inside one (a frame, or the code and markers
# of the frame cut above it), so "File "…", line 3 …" elsewhere in a log stays a line of its own.
_FLAT_FRAME = r'^File "[^"]*", line [0-9]+'
_FLAT_MARKERS = r"^[~^]*\^[~^]*\s*$"
# IPython's (Jupyter's) traceback: "XlaRuntimeError                           Traceback (most recent call last)" under a
# rule of dashes, its frames ("Cell In[3], line 92, in inference(…)", "File ~/x.py:12, in f()") and numbered code lines
# ("---> 92 outputs = …") apart by blank lines, then the exception line.
_IPYTHON_TITLE = " Traceback (most recent call last)"
_IPYTHON_HEADER = r"^[A-Za-z_][0-9A-Za-z_.]* +Traceback \(most recent call last\)$"
# The last line of a traceback: "pkg.ExcType: message", "ExcType:" or a bare exception name. A tqdm bar's description
# has the same shape ("Processing:  99%|▉| 1732/1744 [08:43<00:03, …]"), often with an error glued to its end: a
# message that opens with a percentage and a bar's "|" is no exception's. Spelled without lookahead (polars' regex has
# none) and without crossing a line end (_pipeline_rules looks for it in whole multi-line messages).
_EXCEPTION_TEXT = r"[ \t\r]*|[ \t\r]+(?:[^0-9\s]|[0-9]+(?:[^0-9%\n]|%[^|\n]|%?$)).*"
PY_EXCEPTION_LINE = rf"^[A-Za-z_][0-9A-Za-z_.]*(?::(?:{_EXCEPTION_TEXT})|Error|Exception|Interrupt|Exit|Iteration|Warning)$"

# warnings.warn's output: "path.py:75: UserWarning: message", then the source line that warned, stripped and indented
# by two spaces. Unanchored: logging.captureWarnings puts "WARNING:py.warnings:" before it, and a Windows path has spaces.
PY_WARNING_LINE = r"\.py:[0-9]+: [A-Za-z_][0-9A-Za-z_]*Warning: "
_PY_WARNING_LITERAL = "Warning: "

_JAVA_FRAME = r"^\s+at [0-9A-Za-z_$.<>/\-]+\("
_JAVA_CONTINUATION = r"^\s+at [0-9A-Za-z_$.<>/\-]+\(|^\s+\.\.\. [0-9]+ (?:more|common frames omitted)|^\s*(?:Caused by|Suppressed): "

_GO_PRELUDE = r"^runtime: (?:out of memory|VirtualAlloc of [0-9]+ bytes failed)"
_GO_FATAL = r"^(?:fatal error|panic): "
# A frame's file line is indented by a tab, which a log viewer may drop (Docker Desktop's: "runner.go:851 +0x375").
_GO_CONTINUATION = (
    r"^(?:\s+\S|goroutine [0-9]+ .*\]:$|runtime stack:$|created by |\[signal |exit status [0-9]+$"
    r"|\[recovered\]|[0-9A-Za-z_$./*()\-]+\(.*\)$|\S+\.go:[0-9]+(?: \+0x[0-9a-f]+)?$)"
)

# What C++ cores append to an error's message. c10 (PyTorch's): the ``what():`` of a C++ exception
# that terminated the process, the hints of a CUDA error, and the C++ stack ("Exception raised
# from … (most recent call first):", then "frame #N: symbol + 0x… (0x… in /…/libc10.so)"). XLA's:
# the buffer assignment behind a RESOURCE_EXHAUSTED (its stats and peak buffers, indented under them); its TPU compiler's
# report of the HBM a program needs ("Total hbm usage >= 65.05G:", "Program hbm requirement 63.80G:", their items indented).
# CPython's faulthandler ("Fatal Python error: Segmentation fault"): each thread's stack (one thread's "Stack (most recent call
# first):"), its frames indented. TensorRT-LLM's: its C++ stack, numbered frames.
# TensorFlow's error message: the ops it failed in ("\t [[{{node conv1/Conv2D}}]]"), its OOM hint, the function
# (" [Op:__inference_train_function_1234]") and, for several, each root error ("  (0) Resource exhausted: OOM …");
# 2.x's "Graph execution error:" puts the error on lines of its own, after the node and where it was defined.
# NCCL's error names its result code and, on a line of its own, the last error it saw ("Last error:"); Ray's
# OutOfMemoryError the memory of the node and of the task it killed.
CPP_TAIL = (
    r"^(?:\s+what\(\): |frame #[0-9]+: |Exception raised from \S+ at \S+ \(most recent call first\):"
    r"|CUDA kernel errors might be asynchronously reported|For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    r"|Compile with `TORCH_USE_CUDA_DSA`|Search for `cuda[A-Za-z]+' in |BufferAssignment OOM Debugging\.$|BufferAssignment stats:$|Peak buffers:$"
    r"|\s*Exceeded hbm capacity by |Total hbm usage >= |Output size \S+; shares |Program hbm requirement "
    r"|(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):$|Stack \(most recent call first\):$|Extension modules: "
    # Py_FatalError's line under its message (Python 3.8+)
    r"|Python runtime state: "
    # TensorRT-LLM's C++ stack under its error ("1       0x7fe5480abca5 void tensorrt_llm::common::check<cudaError>(…) + 149"),
    # and the boost stacktrace Triton Inference Server prints under "Signal (11) received." (" 0# 0x000055E8FF51477D in tritonserver")
    r"|[0-9]+ {2,}0x[0-9a-f]+ | ?[0-9]{1,3}# \S"
    # YARN's NodeManager dumps the process tree of a container it kills over its memory limit under its diagnostics
    # ("Dump of the process-tree for container_… :", then "|- PID PPID …" and a "|- 8795 8788 …" row per process).
    r"|Dump of the process-tree for \S+ :$|\s*\|- (?:PID |[0-9]+ )"
    r"|\s+\[\[.*\]\]|Hint: If you want to see a list of allocated tensors|\s+\[Op:[^\]\s]+\]|\s+\([0-9]+\) [A-Z][a-z]+(?: [a-z]+)*: "
    r"|OOM when allocating tensor |Detected at node '|Node: '"
    r"|nccl(?:[A-Z][A-Za-z]*Error|InvalidArgument|InvalidUsage): |Last error:$|Memory on the node \(IP: "
    # ggml's CUDA error (llama.cpp, Ollama) names the device on a line of its own: "current device: 0" (before 2024),
    # "  current device: 1, in function ggml_backend_cuda_synchronize at ggml-cuda.cu:2317" since
    r"|current device: [0-9]+$|\s+current device: [0-9]+, in function "
    # Abseil's (XLA's, TensorFlow's, JAX's, Ray's) C++ stack under a CHECK that failed ("F0912 … Check failed: …", then
    # "*** Check failure stack trace: ***" and "    @     0x7f0e2365c1d4  absl::…" frames) or under a fatal signal: the
    # program counter ("PC: @     0x7f0bf42e100b  (unknown)  raise") and the handler's own note when it faults again
    # ("[failure_signal_handler.cc : 331] RAW: Signal 11 raised at PC=0x… while already in AbslFailureSignalHandler()").
    r"|\*\*\* Check failure stack trace: \*\*\*$|PC: @ +0x[0-9a-f]+ |\[failure_signal_handler\.cc : [0-9]+\] RAW: "
    # ProcessGroupNCCL's "Stack trace of the failed collective:" (torch 2.6+, from its flight recorder): the Python (and C++)
    # frames that enqueued it, a line each, "#0 all_reduce from /…/torch/distributed/distributed_c10d.py:3068"; a frozen
    # module's file has a space ("#18 _run_code from <frozen runpy>:88"), a C++ frame's may be unknown ("from ??:0", "from :0")
    r"|#[0-9]+ \S.* from (?:<[^>]+>|\S*):[0-9]+\s*$)"
)

# CPython's fatal error ("Fatal Python error: Segmentation fault", "… Aborted"): the interpreter dying, a record of its own
# with or without the stacks faulthandler dumps under it (Ray's log deduplication or a cut log leaves them out).
_PY_FATAL = r"^Fatal Python error: "
# Abseil's failure signal handler (absl::InstallFailureSignalHandler: XLA, TensorFlow, JAX, Ray's workers): the signal
# and its epoch second ("*** SIGSEGV received at time=1664230886 on cpu 14 ***"; no cpu before 2021), then the program
# counter and a frame a line, each with its stack frame's size ("    @     0x7f0bf2c986f2        144  std::…"): one record.
ABSL_SIGNAL = r"^\*\*\* (SIG[A-Z0-9]+) received at time=([0-9]+)(?: on cpu [0-9]+)? \*\*\*$"

# A multi-line record needs a line of one of these shapes, or an indented line without a time. A Python frame is one:
# a file cut inside a traceback opens its record there, and a framework's header may stamp every line of it.
_OPENS_RECORD = "|".join(
    (
        _PY_HEADER, _PY_FRAME, _FLAT_FRAME, RAY_TASK_HEADER, re.escape(_IPYTHON_TITLE) + "$", _RICH_OPEN, _PY_CHAIN, _JAVA_FRAME, _GO_PRELUDE, _GO_FATAL,
        _PY_FATAL, ABSL_SIGNAL, CPP_TAIL,
    )
)

# group_keys sorts lines by (partition, line), so a partition's lines are contiguous and
# every run below is a contiguous block: neighbours and run starts need no hashed windows.
_NEW_PARTITION = pl.col("new_partition")
# Each shape is matched once, into a column the record logic reads as often as it needs.
# text-generation-inference's launcher prints a shard's event with its span's fields after the message, so the
# traceback a shard printed ends in a line " rank=0".
_SPAN_FIELDS = r"^ rank=[0-9]+$"
# A line of another writer's log that a logging level opens ("INFO:     Application startup complete.", uvicorn's),
# which Python never prints as an exception line: its classes are not named in capitals.
_LEVEL_LINE = r"^[A-Z]+:(?:\s|$)"
_SHAPES = {
    "level_line": _LEVEL_LINE,
    "span_fields": _SPAN_FIELDS, "header": _PY_HEADER, "ray_header": RAY_TASK_HEADER, "chain": _PY_CHAIN, "indented": _INDENTED, "py_frame": _PY_FRAME, "exception": PY_EXCEPTION_LINE,
    "java_continuation": _JAVA_CONTINUATION, "java_frame": _JAVA_FRAME,
    "go_prelude": _GO_PRELUDE, "go_fatal": _GO_FATAL, "go_continuation": _GO_CONTINUATION, "cpp_tail": CPP_TAIL, "py_fatal": _PY_FATAL,
    "absl_signal": ABSL_SIGNAL,
}


def _shape(name: str) -> pl.Expr:
    return pl.col(f"is_{name}")


def _prev(expr: pl.Expr) -> pl.Expr:
    return pl.when(_NEW_PARTITION).then(False).otherwise(expr.shift(1)).fill_null(False)


def _next(expr: pl.Expr) -> pl.Expr:
    return pl.when(pl.col("last_of_partition")).then(False).otherwise(expr.shift(-1)).fill_null(False)


def _at_run_start(value: pl.Expr, opens_run: pl.Expr) -> pl.Expr:
    """``value`` as it was on the first line of each contiguous run."""
    return pl.when(opens_run).then(value).forward_fill()


def _runs_started_by(start: pl.Expr, continuation: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Lines in runs that open with ``start`` and go on with ``continuation`` lines, and each run's first line."""
    opens_run = ~continuation | _NEW_PARTITION
    member = (start | continuation) & _at_run_start(start & ~continuation, opens_run)
    return member, _at_run_start(pl.col("line"), opens_run)


def _closed_before(closing: pl.Expr, opens_segment: pl.Expr) -> pl.Expr:
    """Whether a closing line came before each line in its segment."""
    closings_before = closing.cum_sum() - closing
    return closings_before - _at_run_start(closings_before, opens_segment) > 0


def _flat_frames() -> dict[str, pl.Expr]:
    """``is_indented`` and ``is_py_frame`` with the unindented frames, code lines and markers of a traceback included."""
    body = pl.col("body")
    frame, markers = body.str.contains(_FLAT_FRAME), body.str.contains(_FLAT_MARKERS)
    code = _prev(frame) & ~frame & ~markers & ~_shape("exception") & ~_shape("header") & ~_shape("chain") & body.str.contains(r"\S")
    cut_above = _NEW_PARTITION & (frame | (markers & _next(frame)) | (_next(markers) & _next(_next(frame))))
    continuation = frame | code | (markers & _prev(code | markers | cut_above)) | _shape("indented")
    flat, _ = _runs_started_by(_shape("header") | cut_above, continuation & ~cut_above)
    flat = flat & ~_shape("header") & ~_shape("indented")
    return {"is_indented": _shape("indented") | flat, "is_py_frame": _shape("py_frame") | (flat & frame)}


def _python_steps() -> list[dict[str, pl.Expr]]:
    """``py_member`` and ``py_start`` of Python tracebacks, as steps of columns that later steps read by name.

    The steps' own columns (``_py_…``) are scratch. Each is a column rather than an expression nested in the
    next: nested, the record logic repeats them, and the one expression grew to 140 kB, whose planning cost a
    12-line traceback 115 ms.
    """
    chain, exception, cpp_tail, ray_header, indented = _shape("chain"), _shape("exception"), _shape("cpp_tail"), _shape("ray_header"), _shape("indented")
    header, frame_like, start = pl.col("_py_header"), pl.col("_py_frame_like"), pl.col("_py_start")
    interleaved, closing, opens_segment = pl.col("_py_interleaved"), pl.col("_py_closing"), pl.col("_py_opens_segment")
    frame = _shape("py_frame")
    # A Ray task's header under the frames of an open traceback is that traceback's exception line, and its frames go on
    # in the same record: the caller's traceback and the task's are one failure.
    steps = [{"_py_header": _shape("header") | (ray_header & ~_prev(indented))}, {"_py_frame_like": header | ray_header | chain | indented}]
    # An exception line directly followed by a chain separator opens a record even when its
    # own frames went missing (interleaved ranks, cut-down pastes); so does a frame that a
    # file (or a rank's lines) starts with, or the code lines of the frame cut above it: a log
    # cut or rotated inside a traceback.
    cut_above = _NEW_PARTITION & (frame | (indented & (_next(frame) | _next(_next(frame)))))
    steps.append({
        "_py_start": (header & ~_prev(chain)) | (exception & _next(chain) & ~_prev(frame_like)) | cut_above,
        # Another writer's log line printed amid the frames (a server thread's, while the traceback was being written)
        # neither belongs to the traceback nor ends it.
        "_py_interleaved": _shape("level_line") & _prev(frame_like) & _next(indented),
    })
    # A c10 error's tail follows its exception line (RuntimeError: CUDA error: …) and stays with it.
    # Python prints a traceback's exception line right under its last frame: one after a blank line
    # ("Note: …" below a cut traceback) is a line of the log.
    wraps = exception & pl.col("body").str.ends_with(_WRAPS_NEXT)
    steps.append({
        "_py_closing": (~frame_like & ~interleaved & ~wraps & ~_next(chain) & ~_next(cpp_tail) & ~(cpp_tail & _next(indented))).cast(pl.Int64)
    })
    # A chain separator under no open record opens the record of the traceback it introduces: its cause was cut off, or
    # printed without frames on a line another writer's output shares (JAX's "jax.errors.SimplifiedTraceback: …" behind
    # a progress bar). Opening it there changes no earlier line, so the first pass's segments decide what is open.
    first_segment = start | _NEW_PARTITION
    open_before = _prev(_at_run_start(start, first_segment) & ~_closed_before(closing, first_segment))
    steps.append({"_py_start": start | (chain & ~open_before)})
    steps.append({"_py_opens_segment": start | _NEW_PARTITION})
    # better_exceptions and loguru's diagnose leave a blank line between the last frame's annotations ("└ …") and the exception;
    # text-generation-inference's shard output one after every frame, so there the exception's blank line is one more.
    gap_frames = (pl.col("after_gap") & frame).cast(pl.Int64)
    gapped = gap_frames.cum_sum() - _at_run_start(gap_frames.cum_sum() - gap_frames, opens_segment) > 0
    after_frame = exception & ~(pl.col("after_gap") & ~_prev(chain) & ~_prev(pl.col("body").str.contains("└", literal=True)) & ~gapped)
    steps.append({
        "py_member": _at_run_start(start, opens_segment) & ~_closed_before(closing, opens_segment) & ~interleaved
        & (frame_like | after_frame | _next(chain) | cpp_tail),
        "py_start": _at_run_start(pl.col("line"), opens_segment),
    })
    return steps


# Lines of an exception's message that rich wrapped at the console's width, followed at most.
_RICH_WRAPPED_LINES = 3


def _rich_traceback(body: pl.Expr) -> list[pl.Expr]:
    """``rich_member`` and ``rich_start`` of rich's tracebacks: the title's line to the closing rule, and the exception line under it.

    rich wraps a long exception message at the console's width, the width of its title's rule: a line
    under it is the message's when its first word would not have fitted on the line above.
    """
    opens, closes = body.str.contains(_RICH_OPEN), body.str.contains(_RICH_CLOSE)
    inside = pl.when(opens).then(True).when(_NEW_PARTITION | _prev(closes)).then(False).forward_fill()
    message = _prev(closes) & _prev(inside) & _shape("exception")
    width = pl.when(opens).then(body.str.len_chars()).forward_fill()
    overflows = _prev(body.str.len_chars()) + 1 + body.str.extract(r"^(\S+)", 1).str.len_chars() > width
    wraps = (~pl.col("after_gap") & pl.col("ts_raw").is_null() & overflows).fill_null(False)
    for _ in range(_RICH_WRAPPED_LINES):
        message = message | (_prev(message) & wraps)
    member = inside | message
    return [member.alias("rich_member"), pl.when(member).then(pl.when(opens).then(pl.col("line")).forward_fill()).alias("rich_start")]


def _ipython_traceback(free: pl.Expr) -> list[pl.Expr]:
    """``ipython_member`` and ``ipython_start`` of IPython's tracebacks: the header (and the rule above it) to the exception line,
    its unindented frame lines included. After a blank line only a frame or the exception goes on; a line with a time of its
    own ends one cut before its exception."""
    body = pl.col("body")
    header = pl.when(body.str.ends_with(_IPYTHON_TITLE)).then(body).str.contains(_IPYTHON_HEADER).fill_null(False)
    rule = body.str.contains(r"^-{20,}$") & _next(header)
    start = free & (rule | (header & ~_prev(rule)))
    exception = _shape("exception") & ~_shape("indented") & ~header
    frame = pl.when(pl.col("after_gap")).then(body).str.contains(r"^(?:Cell In\[[0-9]+\], line |File \S|\S+\.py in |\s+\[\.\.\. skipping )")
    after_gap = pl.col("after_gap") & ~exception & ~frame.fill_null(False)
    wraps = exception & body.str.ends_with(_WRAPS_NEXT)
    continuation = free & ~start & pl.col("ts_raw").is_null() & ~(_prev(exception) & ~_prev(wraps)) & ~after_gap
    member, start_line = _runs_started_by(start, continuation)
    return [member.alias("ipython_member"), start_line.alias("ipython_start")]


def _python_warning(free: pl.Expr) -> list[pl.Expr]:
    """``warning_member`` and ``warning_start`` of Python warnings: the warning's line and the indented source line under it."""
    body = pl.col("body")
    warning = free & pl.when(body.str.contains(_PY_WARNING_LITERAL, literal=True)).then(body.str.contains(PY_WARNING_LINE)).otherwise(False)
    source_line = free & _prev(warning) & _shape("indented")
    start = pl.when(warning).then(pl.col("line")).when(source_line).then(pl.col("line").shift(1))
    # A warning without its source line (python -W, a cut log) stays a line of its own.
    return [(source_line | _next(source_line)).alias("warning_member"), start.alias("warning_start")]


def records(framed: pl.DataFrame) -> pl.DataFrame:
    """One row per record: a multi-line record's lines joined, every other line as it is.

    A batch with no line that could open or continue a record, nor a glog line whose bare next lines
    take its time (:func:`_glog_continued`), skips the grouping.
    """
    if "after_gap" not in framed.columns:
        framed = framed.with_columns(after_gap=pl.lit(False))
    body = pl.col("body")
    multi_line = body.str.contains(_OPENS_RECORD) | (body.str.contains(_INDENTED) & pl.col("ts_raw").is_null()) | _GLOG_LINE
    if not framed.select(multi_line.any()).item():
        single = framed.with_columns(family=pl.lit(None, pl.String), message=body, n_lines=pl.lit(1, pl.Int32))
        return single.select(_RECORD_COLUMNS).sort("line")
    return collapse(group_keys(framed))


# A line's partition is its file's and writer's keys, then its tags (rank|local_rank|pid|pod|container): an untagged line's
# ends in "||||".
_UNTAGGED = "||||"


def _with_tails_tagged(framed: pl.DataFrame) -> pl.DataFrame:
    """Untagged C++ tail lines (``is_cpp_tail``) moved into the partition of the tagged line they follow.

    ``framed`` is in line order, each file's and writer's lines in a run.

    torch's launcher tags a line a rank prints ("[rank0]:[E219 …] … terminated with exception: CUDA error: …"),
    but the hints and c10 frames of the same message come out on lines of their own, untagged.
    """
    partition = pl.col("partition")
    # What NCCL's "Last error:" introduces (under a watchdog's tagged line: "socketProgressOpt: Call to recv … failed") is its tail too.
    after_last_error = pl.col("body").shift(1).str.ends_with("Last error:").fill_null(False)
    untagged_tail = (
        (_shape("cpp_tail") | after_last_error) & partition.str.ends_with(_UNTAGGED)
        & pl.all_horizontal(pl.col(name).is_null() for name in ("rank", "pid", "pod", "container"))
    )
    before = pl.when(untagged_tail).then(None).otherwise(partition).forward_fill()
    # Only a line of the same file and writer (whose partition starts with the same keys) passes its tags on.
    same_writer = before.str.starts_with(partition.str.strip_suffix(_UNTAGGED))
    return framed.with_columns(partition=pl.when(untagged_tail & same_writer).then(before).otherwise(partition))


# Ray's ActorDiedError (RayActorError before 2.9) states the actor on lines of its own under its message, its first field
# always the class ("\tclass_name: Runner", then "\tactor_id: …" and maybe "\tpid: 159258", "\tname: …", "\tnamespace: …",
# "\tip: …"; a paste may turn the tab into spaces), then why it died on one more, unindented ("The actor is dead because
# its worker process has died. Worker exit type: SYSTEM_ERROR …"). Tails of the exception line, in a traceback or not.
ACTOR_DIED = "The actor died unexpectedly before finishing this task."
_ACTOR_FIELD = r"^\s+(?:class_name|actor_id|pid|name|namespace|ip): \S"
_ACTOR_CAUSE = r"^The actor (?:is dead because|never ran)"


def _actor_died_tail() -> pl.Expr:
    """Whether a line is the class line or the cause line of an ActorDiedError's message (in (partition, line) order)."""
    body = pl.col("body")
    first_field = body.str.contains(r"^\s+class_name: \S") & _prev(body.str.ends_with(ACTOR_DIED))
    return first_field | (body.str.contains(_ACTOR_CAUSE) & _prev(body.str.contains(_ACTOR_FIELD)))


def group_keys(framed: pl.DataFrame) -> pl.DataFrame:
    """Add ``family`` (null for one-line records) and ``record`` (the record's first line).

    The rows come back in (partition, line) order.
    """
    partition = pl.col("partition")
    shapes = {f"is_{name}": pl.col("body").str.contains(pattern) for name, pattern in _SHAPES.items()}
    shaped = _with_tails_tagged(framed.with_columns(**shapes, file_prev_line=pl.col("line").shift(1)))
    keyed = shaped.sort("partition", "line").with_columns(
        new_partition=partition.ne_missing(partition.shift(1)),
        last_of_partition=partition.ne_missing(partition.shift(-1)),
    )
    # What NCCL's "Last error:" introduces is the line under it, whatever it says.
    keyed = keyed.with_columns(is_cpp_tail=pl.col("is_cpp_tail") | _prev(pl.col("body").str.ends_with("Last error:")) | _actor_died_tail())
    if keyed.select(pl.col("body").str.contains(RICH_TITLE, literal=True).any()).item():
        keyed = keyed.with_columns(_rich_traceback(pl.col("body")))
    else:
        keyed = keyed.with_columns(rich_member=pl.lit(False), rich_start=pl.lit(None, pl.Int64))
    steps = keyed.lazy().with_columns(**_flat_frames())
    for step in _python_steps():
        steps = steps.with_columns(**step)
    keyed = steps.collect().with_columns(py_member=pl.col("py_member") & ~pl.col("rich_member")).drop(cs.starts_with("_py_"))
    keyed = keyed.with_columns(py_member=pl.col("py_member") | (_shape("span_fields") & _prev(pl.col("py_member")) & ~_NEW_PARTITION))
    if keyed.select(pl.col("body").str.ends_with(_IPYTHON_TITLE).any()).item():
        keyed = keyed.with_columns(_ipython_traceback(~pl.col("py_member") & ~pl.col("rich_member")))
    else:
        keyed = keyed.with_columns(ipython_member=pl.lit(False), ipython_start=pl.lit(None, pl.Int64))
    keyed = keyed.with_columns(_python_warning(~pl.col("py_member") & ~pl.col("rich_member") & ~pl.col("ipython_member")))
    free = ~pl.col("py_member") & ~pl.col("rich_member") & ~pl.col("ipython_member") & ~pl.col("warning_member")

    java_continuation = _shape("java_continuation") & free
    java_start = free & ~java_continuation & _next(_shape("java_frame"))
    java_member, java_start_line = _runs_started_by(java_start, java_continuation)
    go_prelude = _shape("go_prelude") & free
    go_fatal = _shape("go_fatal") & free
    go_start = go_prelude | (go_fatal & ~_prev(go_prelude))
    go_continuation = (_shape("go_continuation") | (go_fatal & _prev(go_prelude))) & free & ~go_start
    go_member, go_start_line = _runs_started_by(go_start, go_continuation)
    keyed = keyed.with_columns(java_member=java_member, java_start=java_start_line, go_member=go_member, go_start=go_start_line)

    # Outside a traceback a c10 tail belongs to the line before it (terminate called after throwing
    # an instance of 'c10::Error', a c10d watchdog's error); one a partition starts with opens its own record.
    cpp_free = free & ~pl.col("java_member") & ~pl.col("go_member")
    cpp_continuation = (_shape("cpp_tail") | (_shape("indented") & pl.col("ts_raw").is_null())) & cpp_free & ~_NEW_PARTITION
    cpp_start = cpp_free & ~cpp_continuation & (_next(_shape("cpp_tail")) | _shape("py_fatal") | _shape("absl_signal"))
    cpp_member, cpp_start_line = _runs_started_by(cpp_start, cpp_continuation)
    keyed = keyed.with_columns(cpp_member=cpp_member, cpp_start=cpp_start_line)

    loose = cpp_free & ~pl.col("cpp_member")
    stamped = pl.col("ts_raw").is_not_null()
    # A logging call's next lines come right under it: an indented line after a blank one is another writer's.
    indented_unstamped = _shape("indented") & ~stamped & loose & ~pl.col("after_gap")
    continued_member, continued_start = _runs_started_by(stamped & loose & _next(indented_unstamped), indented_unstamped)
    keyed = keyed.with_columns(continued_member=continued_member, continued_start=continued_start)

    # rich's and IPython's tracebacks are Python tracebacks drawn otherwise.
    members = {
        "python": "py", "java": "java", "go": "go", "cpp": "cpp", "continued": "continued", "rich": "rich", "ipython": "ipython",
        "warning": "warning",
    }
    family = pl.coalesce([
        pl.when(pl.col(f"{prefix}_member")).then(pl.lit("python" if name in {"rich", "ipython"} else name))
        for name, prefix in members.items()
    ])
    record = pl.coalesce([pl.when(pl.col(f"{prefix}_member")).then(pl.col(f"{prefix}_start")) for prefix in members.values()])
    scratch = [f"{prefix}_{part}" for prefix in members.values() for part in ("member", "start")]
    scratch += ["new_partition", "last_of_partition", *(f"is_{name}" for name in _SHAPES)]
    keyed = keyed.with_columns(family=family, record=record.fill_null(pl.col("line")))
    return _headed_by_empty_lines(_span_fields_joined(keyed)).drop(scratch)


def _span_fields_joined(keyed: pl.DataFrame) -> pl.DataFrame:
    """A text-generation-inference span's fields line (" rank=0") ends the record above it, whose shard's rank it names.

    The launcher prints what a shard wrote to its standard error, then the span's fields on a line of their own: under
    a traceback (joined to it by the Python steps) or under whatever else the shard printed last (a cut traceback's
    exception line alone).
    """
    span = _shape("span_fields") & ~_NEW_PARTITION
    if not keyed.select(span.any()).item():
        return keyed
    ends_record = span & pl.col("family").is_null()
    closed = ends_record.shift(-1).fill_null(False) & ~pl.col("last_of_partition")
    return keyed.with_columns(
        family=pl.when(ends_record).then(pl.col("family").shift(1).fill_null("continued"))
        .when(closed).then(pl.col("family").fill_null("continued")).otherwise(pl.col("family")),
        record=pl.when(ends_record).then(pl.col("record").shift(1)).otherwise(pl.col("record")),
        rank=pl.when(span).then(pl.col("body").str.extract(r"rank=([0-9]+)", 1).cast(pl.Int64)).otherwise(pl.col("rank")),
    )


def _headed_by_empty_lines(keyed: pl.DataFrame) -> pl.DataFrame:
    """A stamped line with no message heads the record the next line of the same logging call opens.

    A logging call whose message starts with a line break (vLLM's ``ERROR 05-10 12:00:00 engine.py:123] `` over the
    traceback it logged, each line under the same prefix or bare) leaves its first line empty: it is that record's
    header, giving it its time and level, not an event of its own.
    """
    stamped = pl.col("ts_raw")
    opens_record = pl.col("record") == pl.col("line")
    # As for a logging call's indented lines, what comes after a blank line is another writer's.
    same_call = (stamped.shift(-1).is_null() | (stamped.shift(-1) == stamped)) & ~_next(pl.col("after_gap"))
    heads_next = (
        stamped.is_not_null() & (pl.col("body").str.strip_chars() == "") & same_call & _next(opens_record) & ~pl.col("last_of_partition")
    )
    keyed = keyed.with_columns(heads_next=heads_next)
    if not keyed.select(pl.col("heads_next").any()).item():
        return keyed.drop("heads_next")
    # The shift reads the line above in the whole frame, so it is taken before the window over each record.
    keyed = keyed.with_columns(headed_by=pl.when(opens_record & _prev(pl.col("heads_next"))).then(pl.col("line").shift(1)))
    header = pl.col("headed_by").max().over("partition", "record")
    headed = header.is_not_null() | pl.col("heads_next")
    family = pl.when(pl.col("heads_next")).then(pl.col("family").shift(-1)).otherwise(pl.col("family"))
    return keyed.with_columns(
        family=pl.when(headed).then(family.fill_null("continued")).otherwise(pl.col("family")),
        record=pl.coalesce(header, pl.col("record")),
    ).drop("heads_next", "headed_by")


# glog's and absl's C++ log (XLA, TensorFlow) prefix only the first line of a message that spans lines: an XLA
# error's HLO dump and its status' "=== Source Location Trace: ===" come bare under it. A glog line, by its format:
_GLOG_LINE = pl.col("ts_raw").is_not_null() & pl.col("format").is_in(["klog", "tensorflow"])


def _glog_continued(lines: pl.DataFrame, new_partition: pl.Expr) -> pl.DataFrame:
    """``glog_ts`` and ``glog_raw`` of the unstamped one-line records right under a glog line (in ``lines``' (partition, line) order):
    its time, until a blank line, another stamped line, another writer's line or a record of its own (a traceback
    under it, which inherits the time itself) comes between.
    """
    stamped = pl.col("ts_raw").is_not_null()
    if not lines.select(_GLOG_LINE.any()).item():
        return lines.with_columns(glog_ts=pl.lit(None, lines.schema["ts"]), glog_raw=pl.lit(None, pl.String))
    row = pl.int_range(pl.len())
    in_record = pl.col("family").is_not_null() & (pl.col("family") != "continued")
    opens_run = stamped | new_partition | pl.col("after_gap") | ~pl.col("prev_adjacent") | in_record
    under_glog = ~stamped & (pl.when(opens_run).then(row).forward_fill() == pl.when(_GLOG_LINE).then(row).forward_fill())
    return lines.with_columns(
        glog_ts=pl.when(under_glog).then(pl.when(_GLOG_LINE).then(pl.col("ts")).forward_fill()),
        glog_raw=pl.when(under_glog).then(pl.when(_GLOG_LINE).then(pl.col("ts_raw")).forward_fill()),
    )


# (line_attrs: a ready JSON run of what a line's own format names, such as a supercomputer's node)
_CARRIED = ("severity", "pid", "process", "host", "host_named", "pod", "namespace", "container", "rank", "gpu_index", "node_ip", "line_attrs")
_RECORD_COLUMNS = ["line", "n_lines", "family", "message", "ts", "ts_raw", "ts_quality", "format", *_CARRIED, "repeated"]


def collapse(keyed: pl.DataFrame) -> pl.DataFrame:
    """One row per record of ``keyed`` (in (partition, line) order): bodies joined with newlines, time and tags of its first line.

    A traceback or stack dump without a time of its own that directly follows a timed line
    is the tail of that logging call, so it inherits the time ("inherited"); an untagged one
    under another writer's lines (an NCCL_DEBUG line's pid, a rank's tag) follows no line of its own.
    A line without a time under a glog line is that message's next line, and inherits its time too.
    """
    new_partition = pl.col("partition").ne_missing(pl.col("partition").shift(1))
    # The unstamped lines of a multi-line log record carry its time: a traceback under them (NeMo's "Model instantiation
    # failed!" prints one indented after its "Target class:" and "Error(s):" lines) is still that logging call's tail.
    # A record's lines are contiguous and its first is stamped, so a forward fill within the partition (a file's, a
    # writer's) reaches no other record's time.
    continued = pl.col("family") == "continued"
    with_prev = keyed.with_columns(
        prev_ts=pl.when(new_partition).then(None).otherwise(
            pl.when(continued).then(pl.col("ts").forward_fill().over("partition")).otherwise(pl.col("ts")).shift(1)
        ),
        prev_raw=pl.when(new_partition).then(None).otherwise(
            pl.when(continued).then(pl.col("ts_raw").forward_fill().over("partition")).otherwise(pl.col("ts_raw")).shift(1)
        ),
        # An untagged line's neighbour in its partition is the line above only when no tagged writer's lines came between.
        prev_adjacent=~pl.col("partition").str.ends_with(_UNTAGGED) | (pl.col("line").shift(1) == pl.col("file_prev_line")),
    )
    with_prev = _glog_continued(with_prev, new_partition)
    single = with_prev.filter(pl.col("family").is_null()).with_columns(
        message=pl.col("body"), n_lines=pl.lit(1, pl.Int32),
        ts=pl.coalesce("ts", "glog_ts"), ts_raw=pl.coalesce("ts_raw", "glog_raw"),
        ts_quality=pl.when(pl.col("glog_raw").is_not_null()).then(pl.lit("inherited")).otherwise(pl.col("ts_quality")),
    )
    grouped = (
        with_prev.filter(pl.col("family").is_not_null())
        .group_by(["partition", "family", "record"], maintain_order=True)
        .agg(
            pl.col("line").first(),
            pl.len().cast(pl.Int32).alias("n_lines"),
            # less the empty first line of a record an empty header heads (_headed_by_empty_lines)
            pl.col("body").str.join("\n").str.replace(r"^[ \t]*\n", "").alias("message"),
            pl.col("ts", "ts_raw", "ts_quality", "format", "prev_ts", "prev_raw", "prev_adjacent").first(),
            *(pl.col(name).drop_nulls().first() for name in _CARRIED),
            # Ray's count of a record's last line: a traceback's exception line
            pl.col("repeated").last(),
        )
    )
    inherits = pl.col("ts_raw").is_null() & pl.col("prev_raw").is_not_null() & pl.col("prev_adjacent") & pl.col("family").is_in(["python", "java", "go", "cpp"])
    grouped = grouped.with_columns(
        ts=pl.when(inherits).then(pl.col("prev_ts")).otherwise(pl.col("ts")),
        ts_raw=pl.when(inherits).then(pl.col("prev_raw")).otherwise(pl.col("ts_raw")),
        ts_quality=pl.when(inherits).then(pl.lit("inherited")).otherwise(pl.col("ts_quality")),
    )
    return pl.concat([single.select(_RECORD_COLUMNS), grouped.select(_RECORD_COLUMNS)], how="vertical_relaxed").sort("line")


# Hard-wrapped pastes. A terminal, a web form or a mail client that broke a log's long lines at a fixed width leaves
# every long line exactly that wide and puts the rest of each on the next line, with no prefix of its own: an NCCL
# watchdog message split inside "ran f|or 1800010 milliseconds", a c10 frame's path inside "lib/python|3.11/…". A
# file has such a width when its longest lines share one length (no line is longer) and at least _MIN_BREAKS of them,
# not all the same text, are followed by a bare line: then each bare line under a line of that width is the rest of
# it. A normal log's lines vary in length, so it has no width and no line of it is joined.
_MIN_WIDTH, _MAX_WIDTH = 72, 500
_MIN_BREAKS = 3
# A terminal that pads each row to its width with spaces (tmux, a console's copy) marks the row where a line ended.
_PADDED = "  "
_COLUMN_GAP = "   "
# Tags a line wears that the rest of a wrapped line never does.
_OWN_TAGS = ("ts_raw", "rank", "pid", "pod", "container", "host")
# Lines that open a record of their own (a traceback, a chained exception) are never the rest of the line above.
_OWN_LINE = r"^(?:Traceback \(most recent call last\):|During handling of the above exception|The above exception was)"


def wrap_width_rows(lines: pl.DataFrame, keys: list[str]) -> pl.DataFrame | None:
    """``line`` (and ``keys``) of the lines exactly as wide as their file's wrap width and not padded there; None when
    no file of ``lines`` (its ``text`` as read) looks wrapped at all."""
    file_keys = [key for key in keys if key == "batch_file"]
    width = pl.col("text").str.len_chars()
    long = pl.when((width >= _MIN_WIDTH) & (width <= _MAX_WIDTH)).then(width)
    mode = long.drop_nulls().mode().max()
    mode = mode.over(file_keys) if file_keys else mode
    longest = width.max().over(file_keys) if file_keys else width.max()
    at_width = (width == mode) & (mode == longest) & ~pl.col("text").str.ends_with(_PADDED)
    rows = lines.select("line", *keys, at_width=at_width.fill_null(False)).filter("at_width")
    return rows.drop("at_width") if rows.height >= _MIN_BREAKS else None


def joined_wraps(framed: pl.DataFrame, at_width: pl.DataFrame | None, keys: list[str]) -> pl.DataFrame:
    """``framed`` (in line order within each file) with each wrapped line's rest joined to its body, on its first row;
    the rows of the rest are ``continued``. See :func:`wrap_width_rows`."""
    if at_width is None:
        return framed
    file_keys = [key for key in keys if key == "batch_file"]
    flagged = framed.join(at_width.with_columns(at_width=pl.lit(True)), on=["line", *keys], how="left", maintain_order="left")
    body = pl.col("body")

    def per_file(expr: pl.Expr) -> pl.Expr:
        return expr.over(file_keys) if file_keys else expr

    def prev(expr: pl.Expr) -> pl.Expr:
        return per_file(expr.shift(1)).fill_null(False)

    bare = pl.all_horizontal(pl.col(name).is_null() for name in _OWN_TAGS) & (pl.col("format") == "text")
    # A fixed-width table (sacct's, a status table) has rows as wide as each other, its columns apart by runs of spaces.
    columned = body.str.strip_chars_end().str.contains(_COLUMN_GAP, literal=True)
    # An indented line under a line of the width is a traceback's or a warning's source line, not the rest of it.
    # A line that opens a record, or starts with the word the line above starts with (a logger's next line, in a log cut
    # to a fixed width), is a line of its own. (A word of 4 characters or more: the rests of two wrapped lines may both
    # open with a word's last letter.)
    first_word = body.str.extract(r"^ ?(\S{4,})", 1)
    own_line = body.str.contains(_OWN_LINE) | (first_word == per_file(first_word.shift(1))).fill_null(False)
    rest = (
        prev(pl.col("at_width").fill_null(False) & ~columned) & bare & ~columned & ~pl.col("blank")
        & body.str.contains(r"^ ?\S") & ~pl.col("continued") & ~own_line
    )
    flagged = flagged.with_columns(rest=rest).with_columns(breaks=per_file(pl.col("rest").shift(-1)).fill_null(False))

    # Evidence is a file's own: enough breaks, and one line printed again and again is none (the lines that break,
    # and their rests, differ).
    evidence = (
        (per_file(pl.col("rest").sum()) >= _MIN_BREAKS)
        & (per_file(body.filter(pl.col("rest")).n_unique()) >= 2)
        & (per_file(body.filter(pl.col("breaks")).n_unique()) >= 2)
    )
    flagged = flagged.with_columns(rest=pl.col("rest") & evidence)
    if not flagged.select(pl.col("rest").any()).item():
        return framed
    joined = flagged.with_columns(whole=per_file((~pl.col("rest")).cum_sum())).with_columns(
        body=pl.when(~pl.col("rest")).then(body.str.join("").over([*file_keys, "whole"])).otherwise(body),
        continued=pl.col("continued") | pl.col("rest"),
    )
    return joined.drop("at_width", "rest", "breaks", "whole")
