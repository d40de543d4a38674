"""Line framing for the pipeline source: peel the prefixes a line wears and resolve its time.

A training or CI log line is an onion: `docker compose logs`' service tag, a CI agent's timestamp
(Buildkite, GitHub Actions, GitLab) or a recorder's time of day, a `kubectl logs --prefix` tag, `srun --label`'s
task number, a distributed-rank tag (``[rank1]:``), a worker tag (``(EngineCore_0 pid=5839)``,
``(VllmWorker rank=3 pid=226)``), an NCCL_DEBUG tag (``host:pid:tid [dev]``), then one application
header (vLLM, transformers, PyTorch c10d, glog, Go log, logfmt, python logging, NeMo, loguru, rich,
epoch, or a JSON-lines object). The outer layers are one anchored regex of optional groups in that order, and the
application headers one anchored alternation, so a line costs two matches whatever it wears;
what is left is the ``body`` the rules and the record grouping read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache

import polars as pl

from rca import timeutil
from rca.sources import _pipeline_hpc as hpc
from rca.sources._base import ParseContext, any_of, per_file
from rca.sources._grep import file_share as _share
from rca.sources._grep import without_grep_prefix as _without_grep_prefix
from rca.sources._pipeline_attrs import json_number, json_run
from rca.sources._pipeline_records import joined_wraps, wrap_width_rows

LEVEL_WORDS = "TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL"

# Level words, glog/klog letters (I W E F), and numeric levels.
_SEVERITY = {
    "TRACE": "debug", "DEBUG": "debug",
    "INFO": "info", "I": "info",
    "NOTICE": "notice",
    "WARNING": "warning", "WARN": "warning", "W": "warning",
    "ERROR": "error", "ERR": "error", "E": "error",
    "CRITICAL": "critical", "FATAL": "critical", "PANIC": "critical", "F": "critical",
    # syslog's (and Apache httpd's) EMERG and ALERT
    "EMERG": "critical", "ALERT": "critical",
    # Google Cloud Logging's LogSeverity (its DEFAULT is no level)
    "EMERGENCY": "critical",
    # log15's four-letter words (Grafana's "lvl=eror"); NeMo's D(EBUG) and C(RITICAL); loguru's SUCCESS
    "DBUG": "debug", "EROR": "error", "CRIT": "critical", "D": "debug", "C": "critical", "SUCCESS": "info",
    # logrus' text formatter's four letters
    "TRAC": "debug", "DEBU": "debug", "ERRO": "error", "FATA": "critical", "PANI": "critical",
    # TensorRT's V(ERBOSE)
    "V": "debug",
    # oslo.log's AUDIT; logcat's A(ssert); Windows CBS's Perf (timings)
    "AUDIT": "notice", "A": "critical", "PERF": "info",
    # bunyan / pino
    # the GitHub Actions runner's VERB(OSE), Omniverse Kit's Verbose; a Kubernetes event's type Normal (the other is Warning)
    "VERB": "debug", "VERBOSE": "debug", "NORMAL": "info",
    # java.util.logging's (Jenkins')
    "SEVERE": "error", "CONFIG": "debug", "FINE": "debug", "FINER": "debug", "FINEST": "debug",
    # npm's log prefixes ("npm ERR!" up to npm 8, "npm error" since 9; "npm sill" its silly level)
    "ERR!": "error", "SILL": "debug",
    "10": "debug", "20": "debug", "30": "info", "40": "warning", "50": "error", "60": "critical",
}

_UTC = pl.Datetime("us", "UTC")
_PID_MAX_LIMIT = 4_194_304
# Airflow 2.3+ writes "2022-11-09, 09:59:40 UTC".
_ISO = r"[0-9]{4}-[0-9][0-9]-[0-9][0-9](?:[T ]|, )[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]+)?(?:Z|[+-][0-9][0-9]:?[0-9][0-9]| UTC| [+-][0-9]{4})?"
_GITLAB_STAMP = r"[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?Z"
# A time of day alone ("18:11:06.680 "), as a terminal recorder or `ts` writes it; its date is the file's (see _clock_dated).
_CLOCK = r"[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]+)?"
# A tag ends at a space or a tab (Ray's driver log puts one after its stamp), which it takes, or at the end of the line.
_ENDS_TAG = r"(?:[ \t]|$)"

_NOISE = r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|section_(?:start|end):[0-9]+:[0-9A-Za-z_.\-]+(?:\[[^\]]*\])?"
# tqdm's bar ("{desc}: {percentage}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}{postfix}]") ends without a newline:
# what the program logs next is printed on the bar's line ("100%|██████████| 88/88 [01:01<00:00,  1.64it/s][INFO|trainer.py:
# 1977] 2023-08-05 05:10:26,977 >>", DeepSpeed's "…it/s][2023-02-08 13:52:24,187] [INFO] …"), its stamp and level behind the bar.
# The bar goes where a header follows it (bracketed, or an ISO date) or an exception line ("…[00:01<00:02]torch.
# OutOfMemoryError: CUDA out of memory."), whose type would otherwise be the bar's description; other text stays as printed.
# A postfix may hold lists ("execution_providers=['CUDAExecutionProvider']"), and a bar cut at the terminal's width never
# closes its bracket: there a bracketed tag glued to it ("…execution_thre[ONNXRuntimeError] : 1 : FAIL") is what follows.
_TQDM_POSTFIX = r"[^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*"
_GLUED_EXCEPTION = r"(?:[A-Za-z_][0-9A-Za-z_]*\.)*[A-Za-z_][0-9A-Za-z_]*(?:Error|Exception|Interrupt|Warning|Exit)(?::[ \t]|$)"
_TQDM_BAR = (
    rf"^[^|\n]*[0-9]%\|[^|\n]*\| *[^\s|/]+/[^\s|/]+ \[{_TQDM_POSTFIX}"
    rf"(?:\]((?:\[|[0-9]{{4}}-[0-9][0-9]-[0-9][0-9][T ]|{_GLUED_EXCEPTION}).*)|(\[[A-Za-z][^\]\n]*\].*))$"
)
# Terminal control codes, CI section markers, carriage-return redraws and a progress bar leave a line as it
# was unless it spells one of these; only those lines are cleaned.
# A carriage return shown as "^M" (`cat -v`, vim, a paste of either) is one too.
_NOISY = pl.col("text").str.contains_any(["\x1b", "section_", "\r", "^M", "%|"])
_CLEANED = (
    pl.col("text").str.replace_all(_NOISE, "").str.strip_chars_end("\r").str.strip_suffix("^M")
    .str.replace(r"^.*\r([^\r]*[^\r\s][^\r]*)$", "${1}")
    .str.replace(_TQDM_BAR, "${1}${2}")
)

# Docker's json-file driver writes each line a container prints as {"log": "<line>\n", "stream": …, "time": …},
# "log" first; it is rewritten as the CRI runtime writes the same line (a line cut at 16 KiB lacks its
# newline: a partial one), so that one layer peels both and the line's own headers are read as usual.
_DOCKER_JSON = pl.col("text").str.starts_with('{"log":"')
_DOCKER_LOG = pl.col("text").str.json_path_match("$.log")
_DOCKER_AS_CRI = pl.format(
    "{} {} {} {}",
    pl.col("text").str.json_path_match("$.time"),
    pl.col("text").str.json_path_match("$.stream"),
    pl.when(_DOCKER_LOG.str.ends_with("\n")).then(pl.lit("F")).otherwise(pl.lit("P")),
    _DOCKER_LOG.str.strip_suffix("\n"),
)

# Fluent Bit's stdout output (its default msgpack form) prints each record as "[<n>] <tag>: [<epoch>, {<record>}]"
# ("[[<epoch>, {<metadata>}], {…}]" since 2.1), the record's keys and strings as '"key"=>"value"', the strings as they
# are, unescaped: a line's own newline ends the printed line, and what follows it (', "stream"=>"stdout", …}]') is a
# line of its own, left blank. A record is rewritten as the JSON-lines record it holds: its time (the epoch), its line
# ("log", or "message" / "msg"), level and stream, and the pod, namespace and container of its kubernetes map or, where
# it has none, of its tail tag ("kube.var.log.containers.<pod>_<namespace>_<container>-<id>.log").
_FLB_KEY = r'"[^"\s=]+"=>'
_FLB_RECORD = (
    r"^\[[0-9]+\] (?<tag>[^\s\[\]]+): \[\[?(?<epoch>[0-9]{9,10}(?:\.[0-9]+)?)(?:, \{[^{}]*\}\])?, \{(?<record>.*)$"
)
_FLB_TAIL = rf'^", {_FLB_KEY}.*\}}\]$'
_FLB_LINE = pl.col("text").str.starts_with("[") & pl.col("text").str.contains(_FLB_RECORD)


def _flb_string(key: str) -> pl.Expr:
    """The string printed under ``key`` in a Fluent Bit record: up to the next key, the record's end or the line's."""
    value = rf'"{key}"=>"(.*?)(?:", {_FLB_KEY}|"\}}\]$|$)'
    return pl.col("record").str.extract(value, 1)


def _flb_as_json(records: pl.DataFrame) -> pl.DataFrame:
    groups = records.select(pl.col("text").str.extract_groups(_FLB_RECORD).alias("g")).unnest("g")
    kubernetes = pl.col("record").str.extract(r'"kubernetes"=>\{(.*)$', 1)
    from_tag = pl.col("tag").str.extract_groups(_STREAM_POD).struct

    def named(key: str, group: str) -> pl.Expr:
        return pl.coalesce(kubernetes.str.extract(rf'"{key}"=>"([^"]*)"', 1), from_tag.field(group))

    log = pl.coalesce(_flb_string("log"), _flb_string("message"), _flb_string("msg"))
    fields = pl.struct(
        time=pl.col("epoch"),
        stream=_flb_string("stream"),
        level=pl.coalesce(_flb_string("level"), _flb_string("severity")),
        log=log,
        pod_name=named("pod_name", "pod"),
        namespace_name=named("namespace_name", "namespace"),
        container_name=named("container_name", "container"),
        **{"kubernetes.host": kubernetes.str.extract(r'"host"=>"([^"]*)"', 1)},
    )
    # the members left null are left out: "time" is never null, so each is a ',"key":null' after it. A record of no line
    # (a metrics input's, {"cpu_p"=>97.25, …}) stays as printed: its fields are all it says.
    encoded = fields.struct.json_encode().str.replace_all(r',"[^"]+":null', "")
    return groups.select(flb_json=pl.when(log.is_not_null()).then(encoded))


def _without_flb_stdout(lines: pl.DataFrame) -> pl.DataFrame:
    """Fluent Bit's stdout records as JSON lines, and the rest of a record cut by its line's newline blank."""
    # The record's pattern is tried on the lines opening with its bracket only: most files have none.
    bracketed = lines.lazy().filter(pl.col("text").str.starts_with("["))
    if not bracketed.select(pl.col("text").str.contains(_FLB_RECORD).any()).collect().item():
        return lines
    rewritten = _where(lines, _FLB_LINE, _flb_as_json, {"flb_json": pl.String()})
    tail = pl.col("text").str.starts_with('", "') & pl.col("text").str.contains(_FLB_TAIL)
    return rewritten.with_columns(text=pl.when(tail).then(pl.lit("")).otherwise(pl.coalesce("flb_json", "text"))).drop("flb_json")


# An Elasticsearch / OpenSearch hit a line of its own (elasticdump's output, a search answer's hits through `jq -c`):
# the record is its "_source", read as the JSON-lines record it is.
_ES_HIT = pl.col("text").str.starts_with('{"_index":')  # compact, as elasticdump and `jq -c` write it
_ES_SOURCE = pl.col("text").str.json_path_match("$._source")


# Ray's own processes, whose output the driver tags with their name alone.
_RAY_DAEMONS = "raylet|gcs_server|autoscaler|monitor|log_monitor|dashboard|dashboard_agent|runtime_env_agent"


def _worker_tag(suffix: str) -> str:
    """A Ray or vLLM worker's tag, its groups named with ``suffix``: ``(RayTrainWorker pid=123, ip=10.0.0.1)``,
    Ray's older ``(pid=123)``, vLLM V1's ``(VllmWorker rank=3 pid=226)`` and ``(VllmWorker TP2 pid=47571)``
    (its parallel ranks are part of the name, as in ``(Worker_TP0 pid=512)``), or a Ray daemon's ``(raylet)``.
    Ray Serve names a replica's actor by its application and deployment, apart by colons
    (``(ServeReplica:default:HyphaRayAppManager pid=2712)``).
    A rank is captured with the name (a group costs every line a capture) and split off in _peel_outer.
    Ray names the node of a worker on another node than the driver's (``ip=``)."""
    return (
        rf"\s*\((?:(?:(?<process{suffix}>[A-Za-z_][0-9A-Za-z_.:\-]*(?: [A-Z]+P[0-9]+)*(?: rank=[0-9]+)?) )?"
        rf"pid=(?<worker_pid{suffix}>[0-9]+)"
        rf"|(?<daemon{suffix}>{_RAY_DAEMONS}))(?:, ip=(?<node_ip{suffix}>[^,)\s]+)[^)]*)?\) ?"
    )


_OUTER_LAYERS = (
    # The line number a job platform's log viewer puts before each line when a log is copied from it ("[80746] [rank0]:[E321 …",
    # "[1744] " on an empty line), outside all else. Kept only in a file most of whose lines wear it (_without_stray_tags).
    r"\[(?<viewer_line>[0-9]{1,9})\](?: |$)",
    # `docker compose logs`: "<service>-<n>  | " (v2; "<project>_<service>_<n>" in v1), padded to the longest name
    # (kept only in a file most of whose lines wear it: _without_stray_tags). A service given a container_name has no
    # number ("ollama  | "): v2 pads every name a column past its end, which text's "Train | loss 0.5" is not.
    r"(?<compose>[A-Za-z][A-Za-z0-9_.\-]*(?:[\-_][1-9][0-9]? *| {2,}))\| ",
    # `kubectl logs --prefix`'s "[pod/<pod>/<container>] "; Alibaba PAI-DLC's job log puts its replica's pod, "<job id>-master-0"
    # or "-worker-N", the same way ("[dlc163vnre3d5pv3-master-0] ").
    r"\[(?:pod/(?<pod>[^/\]\s]+)/(?<container>[^\]\s]+)|(?<dlc_pod>dlc[0-9a-z]+-(?:master|worker)-[0-9]+))\]" + _ENDS_TAG,
    # Ray tags a worker's output outside what the worker prints (its stamps, torch's rank tags);
    # a CI runner's stamp is outside Ray's tag.
    _worker_tag(""),
    # The gutter is what Buildkite's web UI adds when a log is copied from it; the short hex id
    # and "||" after the stamp, Determined's (its task's allocation); the stream and P(artial) or
    # F(ull) tag, the container runtime's (CRI) log file under /var/log/pods. A bare time of day is
    # a recorder's stamp (a bracketed one is rich's header: _APP_HEADERS). Google Cloud Logging's console puts each entry's
    # severity before its time ("ERROR 2024-08-22T06:28:01.550152336Z ", GKE's ERROR for any line written to stderr: the
    # line's own level wins) and a summary field's chip after it ("[resource.labels.containerName: init]").
    # GitLab's runner (17.0+, FF_TIMESTAMPS) follows its stamp, always UTC to the microsecond with a "T" and a "Z", with the
    # stream, two hex digits and O(ut) or E(rr), then a space, or a "+" and no space where the runner split a line at a
    # carriage return ("00O+Preparing the "shell" executor"); after any other stamp such a word is the line's ("07:07:07 a0O").
    # Jenkins' Timestamper pads its time of day with two spaces ("10:15:32  [Pipeline] sh"): the pad is no part of the line.
    # The name of the file a line came from, before its stamp: `grep -H`'s "nova-api.log:2017-05-16 …", or a space where logs of
    # several files were concatenated ("nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 …", Loghub's OpenStack);
    # only with a stamp after it, so that "train.log saved" keeps its words. A Windows CBS.log stamp ends in a comma ("2016-09-28
    # 04:30:30, Info  CBS  …").
    rf"\s*(?:\|\s)?(?:(?<ci_gitlab>{_GITLAB_STAMP})\s[0-9a-f][0-9a-f][OE](?:\+|[ \t]|$)"
    rf"|(?:\[(?<ci_bracketed>{_ISO})\]|(?:(?<ci_level>{LEVEL_WORDS}) |[0-9A-Za-z_.\-]+\.log(?:\.[0-9A-Za-z_:\-]+)*[ :])?(?<ci_plain>{_ISO})|(?<clock>{_CLOCK}) ?)"
    r"(?: -|:|,| [0-9a-f]{8} \|\|| (?<cri_stream>stdout|stderr) (?<cri_tag>[PF])"
    r"| \[resource\.labels\.container_?[Nn]ame: (?<gcl_container>[^\]\s]+)\])?" + _ENDS_TAG + ")",
    # BuildKit's plain progress (`docker build --progress=plain`, and the excerpt of a failed step under its error): a step's
    # output behind the step's number and the seconds since it started ("#8 15.89 [NeMo W …]", "129.5     Traceback …").
    # Kept only in a file most of whose lines wear it (_without_stray_tags).
    r"(?:#[0-9]{1,4} )?(?<build_secs>[0-9]{1,5}\.[0-9]{1,3})(?: |$)",
    # pdsh's (DeepSpeed's multi-node runner's, `pdsh -w`'s) host before each line a remote task printed: "10.141.250.231: ",
    # "etuning-worker-0: ", "localhost: ". A host named by its address or a label with a digit in it: "Error: " is no host.
    # Kept only in a file most of whose lines wear it (_without_stray_tags).
    r"(?<pdsh_host>(?:[0-9]{1,3}\.){3}[0-9]{1,3}|localhost|[A-Za-z][0-9A-Za-z_\-]*[0-9][0-9A-Za-z_\-]*(?:\.[0-9A-Za-z_\-]+)*): ",
    # `srun --label`'s task number, right-aligned: " 0: ", "12: " (kept only in a file most of whose lines wear it:
    # _without_stray_tags).
    r" *(?<task>[0-9]{1,6}): ",
    # Open MPI's `mpirun --tag-output` ("[1,0]<stderr>:", the job then the rank) and horovodrun's ("[0]<stdout>:");
    # a launcher's "stderr: " before the lines of a child it captured (accelerate's tests, LlamaFactory).
    r"(?:\[(?:[0-9]+,)?(?<mpi_rank>[0-9]+)\]<(?:stdout|stderr|stddiag)>:|(?:stdout|stderr): )",
    _worker_tag("_inner"),
    # torchrun's `--tee`/`--redirects` tag ("[default1]:", the role, "default" unless `--role` names one, then the worker's rank
    # on its node: node 2's first worker is "[default0]:" too), outside torch's own tag of the global rank ("[rank9]:").
    # Another role's ("[trainer0]:") is kept only in a file most of whose lines wear that role's tags (_without_stray_tags);
    # torch's own "[rank9]:" fits the shape too, and is read as the rank's (_TORCH_RANK_TAG).
    r"\s*\[(?:default|(?<torchrun_role>[A-Za-z][A-Za-z_\-]*))(?<local_rank>[0-9]+)\]: ?",
    r"\s*\[rank(?<rank>[0-9]+)\]: ?",
    # ... and inside torch's rank tag when torch's launcher runs the Ray (or vLLM) workers.
    _worker_tag("_ranked"),
    # NCCL_DEBUG output: "hostname:pid:tid [cuda device] ..."
    r"\s*(?<nccl_host>[A-Za-z][0-9A-Za-z_.\-]*):(?<nccl_pid>[0-9]+):[0-9]+ \[(?<nccl_device>[0-9]+)\]" + _ENDS_TAG,
)
# Each layer may be missing; one that is there is peeled off before the next is looked for.
_OUTER = "^(?<outer>" + "".join(f"(?:{layer})?" for layer in _OUTER_LAYERS) + ")"
# Layers that are text on the few lines of a file that look so (BuildKit's seconds, a task number), outermost first.
_STRAY_LAYERS = ("viewer_line", "build_secs", "pdsh_host", "task", "torchrun_role")
_LAYER_AT = {group: next(n for n, layer in enumerate(_OUTER_LAYERS) if f"(?<{group}>" in layer) for group in _STRAY_LAYERS}
# The layers outside each (for the lines where it is text), and the groups of it and those inside it.
_ABOVE = {group: "^" + "".join(f"(?:{layer})?" for layer in _OUTER_LAYERS[:at]) for group, at in _LAYER_AT.items()}
_GROUPS_FROM = {group: tuple(re.findall(r"\(\?<([a-z_]+)>", "".join(_OUTER_LAYERS[at:]))) for group, at in _LAYER_AT.items()}

# name → header; the first that fits wins (no line fits two).
_APP_HEADERS = {
    "vllm": (
        rf"(?<vllm_level>{LEVEL_WORDS}) (?<vllm_raw>(?<vllm_mon>[0-9][0-9])-(?<vllm_day>[0-9][0-9]) (?<vllm_clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?))"
        r" (?:\[[^\]\s]+\]|[0-9A-Za-z_.\-]+:[0-9]+\])"
    ),
    # What a python logging format of "%(asctime)s %(levelname)s %(process)d [%(filename)s:%(lineno)d] " leaves
    # after its stamp (peeled as an outer one, whose format the line keeps); the pid may be left out, the level
    # padded ("%(levelname)-5s") or cut to its letter ("%(levelname).1s": "2024-06-28 18:35:58 I [logging_utils.py:135] ", the
    # SageMaker model-parallel examples'). DCGM's own logs (nv-hostengine, nvvs) put "[pid:tid]" there instead.
    "python_caller": (
        rf"(?<caller_level>{LEVEL_WORDS}|[DIWEC])(?: +(?<caller_pid>[0-9]+))? +"
        r"\[(?:(?<caller_dcgm_pid>[0-9]+):[0-9]+|[0-9A-Za-z_.\-]+:[0-9]+)\]"
    ),
    # KServe's model servers after the stamp ("%(asctime)s.%(msecs)03d " peeled as an outer one): "%(process)s %(name)s
    # %(levelname)s [%(filename)s:%(funcName)s():%(lineno)s] " ("1 kserve ERROR [__main__.py:<module>():254] ").
    "kserve": rf"(?<kserve_pid>[0-9]+) [0-9A-Za-z_.\-]+ (?<kserve_level>{LEVEL_WORDS}) \[[^\]\s]+:[0-9]+\]",
    # oslo.log's (OpenStack's nova, neutron, cinder…) after its stamp (peeled as an outer one): "%(process)d %(levelname)s %(name)s
    # [%(request_id)s …] " ("25746 INFO nova.osapi_compute.wsgi.server [req-38101a0b-… ] "), "[-]" where there is no request;
    # oslo's AUDIT level is a notice. The request's bracket is kept in the body (_peel_application): it says which request.
    "oslo": (
        r"(?<oslo_pid>[0-9]+) (?<oslo_level>TRACE|DEBUG|INFO|AUDIT|WARNING|ERROR|CRITICAL) [A-Za-z_][0-9A-Za-z_.]*"
        r" (?<oslo_context>\[[^\]\n]*\])"
    ),
    # Android's `logcat -v threadtime` (the default, and what bug reports hold): "03-17 16:13:38.811  1702  2395 D WindowManager: ",
    # a yearless stamp, the pid and the thread right-aligned, the priority's letter (A: assert), then the tag, which stays in the body.
    "logcat": (
        r"(?<logcat_raw>(?<logcat_mon>[0-9][0-9])-(?<logcat_day>[0-9][0-9]) (?<logcat_clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]{3}))"
        r" +(?<logcat_pid>[0-9]+) +[0-9]+ (?<logcat_sev>[VDIWEFA])"
    ),
    # Windows' CBS.log / DISM.log after its stamp and comma (peeled as an outer one): the level, padded, then the component
    # ("Info                  CBS    Loaded Servicing Stack …").
    "windows_cbs": r"(?<cbs_level>Info|Warning|Error|Perf) {2,}[A-Z][0-9A-Za-z]*(?: {2,}|$)",
    "hf_transformers": rf"\[(?<hf_level>[A-Z]+)\|[^\]\s]+\] (?<hf_iso>{_ISO}) >>",
    # Abseil's log before absl::InitializeLog() (XLA's, JAX's, TensorFlow's since 2.16) writes glog's header with no date and
    # the epoch second where the clock goes: "E0000 00:00:1775556782.173781    2657 cuda_dnn.cc:8579] ".
    # glog 0.5+ writes the year before the month ("I20211221 20:18:47.295809  6740 config.cc:27] "); klog never does.
    # PyTorch's torch._logging (torch.distributed's and torchrun's log since 2.4) writes it with a Python module for the file
    # and V (debug) and C (critical) letters too: "E0227 10:17:45.789000 4242 torch/distributed/run.py:793] ". Its number
    # is the process's pid since 2.5, 2.4's was the thread's id (140066961602368): only a number a pid can be is one.
    # libnvidia-container (nvidia-container-cli's --debug log, its `info`) writes it too, its number the process's pid, from
    # its nvc*.c files: "I0418 18:12:58.648174 217303 nvc.c:376] initializing library context (version=1.9.0, …)".
    "klog": (
        r"\s*(?<glog_bracket>\[)?(?<glog_sev>[IWEFVC])(?:0000 00:00:(?<glog_epoch>1[4-9][0-9]{8}\.[0-9]+)"
        r"|(?<glog_raw>(?<glog_year>(?:19|20)[0-9][0-9])?(?<glog_mon>[0-9]{1,2})(?<glog_day>[0-9][0-9])"
        r" (?<glog_clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+)))"
        r"(?: (?<glog_py_pid>[0-9]{1,7}) [^\]\s]+\.py:[0-9]+\]|\s+(?<glog_nvc_pid>[0-9]{1,7}) nvc(?:_[a-z]+)?\.c:[0-9]+\]"
        r"|(?:\s+[0-9]+)? [^\]\s]+:[0-9]+\])"
    ),
    "c10d_old": r"\s*\[(?<c10d_sev>[IWEF]) [^\]\s]+:[0-9]+\]",
    # gunicorn's after its stamp (peeled as an outer one): the pid of the process that wrote the line, then the level
    # ("[2020-09-12 05:37:52 +0000] [18] [ERROR] Worker (pid:21) was sent SIGKILL! Perhaps out of memory?").
    "gunicorn": rf"\[(?<gunicorn_pid>[0-9]+)\] \[(?<gunicorn_level>{LEVEL_WORDS})\]",
    # Go's log package (log.LstdFlags, Lmicroseconds), with log.Lshortfile the caller too ("2025/02/02 09:23:09 routes.go:1187: "),
    # which Ollama follows with its level ("INFO server config …": read as the message's leading level).
    "go_log": (
        r"(?<go_stamp>[0-9]{4}/[0-9][0-9]/[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?)(?: [0-9A-Za-z_.\-]+\.go:[0-9]+:)?"
    ),
    # PaddleOCR's logger: "[%(asctime)s] %(name)s %(levelname)s: " with a "%Y/%m/%d %H:%M:%S" date ("[2024/08/27 19:14:23] ppocr INFO: ").
    "paddle": (
        r"\[(?<paddle_stamp>[0-9]{4}/[0-9][0-9]/[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9])\] [0-9A-Za-z_.\-]+"
        rf" (?<paddle_level>{LEVEL_WORDS}):"
    ),
    # pingcap/log's (TiDB, PD, TiKV's Go side, Milvus): "[2023/01/15 23:08:42.416 +00:00] [DEBUG] [querynode/flow_graph_insert_node.go:201] ",
    # then the message in brackets and quotes and its fields, each bracketed.
    "pingcap": (
        r"\[(?<pingcap_stamp>[0-9]{4}/[0-9][0-9]/[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)? [+-][0-9][0-9]:[0-9][0-9])\]"
        r" \[(?<pingcap_level>DEBUG|INFO|WARN|ERROR|FATAL)\] \[[^\]\s]+:[0-9]+\]"
    ),
    # Gin's access log (Ollama's server): "[GIN] 2024/08/19 - 14:13:01 | 404 |     414.019µs |       127.0.0.1 | POST …".
    "gin": r"\[GIN\] (?<gin_stamp>[0-9]{4}/[0-9][0-9]/[0-9][0-9] - [0-9][0-9]:[0-9][0-9]:[0-9][0-9]) \|",
    # log4j's "yy/MM/dd HH:mm:ss LEVEL Logger: ", Spark's and Hadoop's default layout (the logger is checked
    # in _peel_application: a "dd/MM/yy" log without one must not be read as yy/MM/dd).
    "log4j": (
        r"(?<log4j_raw>(?<log4j_yy>[0-9][0-9])/(?<log4j_mon>[0-9][0-9])/(?<log4j_day>[0-9][0-9])"
        r" (?<log4j_clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9])) (?<log4j_level>TRACE|DEBUG|INFO|WARN|ERROR|FATAL)"
    ),
    # log4j's "yyMMdd HHmmss" date, the thread's number, then the level: Hadoop 0.x's HDFS daemons ("081109 203615 148 INFO
    # dfs.DataNode$PacketResponder: "); the thread is no process, and the logger stays in the body as log4j's does.
    "log4j_compact": (
        r"(?<compact_raw>[0-9]{6} [0-9]{6})(?: [0-9]+)? (?<compact_level>TRACE|DEBUG|INFO|WARN|ERROR|FATAL)"
    ),
    # log4j2's "[%-5p] %t %c - " after its ISO stamp (peeled as an outer one): TorchServe's ts_log.log and model_log.log
    # ("2023-11-07T05:11:40,049 [INFO ] W-9000-yolo_tiny_1.0-stdout MODEL_LOG - Traceback (most recent call last):"), the
    # thread a worker's own output came through, then the logger. The level is padded to five columns ("INFO ", "WARN "):
    # "[INFO] Epoch 1 - loss 0.5" is a message.
    "log4j2": r"\[(?<log4j2_level>TRACE|DEBUG|INFO |WARN |ERROR|FATAL)\] (?<log4j2_thread>[^\s\]]+) [0-9A-Za-z_.$]+ -",
    # torch_npu's (Ascend NPUs) error code line: "[ERROR] 2025-06-09-06:57:54 (PID:92380, Device:0, RankID:-1) ERR99999 …", the date
    # and the time joined by "-", then the process, its NPU and its rank (-1 where it has none). CANN's error message under it
    # gives the process and a stamp to the microsecond, after its code ("EZ9999: [PID: 3513] 2025-10-10-14:03:52.302.004 …",
    # since CANN 8.2 "EZ9999[PID: 24481] 2025-10-29-03:18:08.948.444 (EZ9999):  …") or before it ("[PID: 366]
    # 2025-12-29-13:22:34.070.507 AclNN_Runtime_Error(EZ9903): …"); before CANN 8 it named no process ("EJ0001: 2024-05-21-11:57:54.167.645
    # Failed to initialize the HCCP process. …"). The code stays the body's first word (_peel_application).
    # torch_npu's C++ logger: "[rank:0]:[366] [2025-12-29 13:22:34:096] torch.distributed: [ERROR] [546] ", the rank where
    # known, the pid, the time to the millisecond, the logger, the level and the thread.
    "torch_npu": (
        rf"\[(?<npu_level>{LEVEL_WORDS})\] (?<npu_stamp>[0-9]{{4}}-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]:[0-9][0-9]:[0-9][0-9])"
        r" \(PID:(?<npu_pid>[0-9]+), Device:(?<npu_device>-?[0-9]+), RankID:(?<npu_rank>-?[0-9]+)\)"
    ),
    "cann": (
        r"(?:(?<cann_code>E[0-9A-Z][0-9]{4})(?::? ?\[PID: (?<cann_pid>[0-9]+)\]|:)|\[PID: (?<cann_pid_first>[0-9]+)\])"
        r" (?<cann_stamp>[0-9]{4}-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{3}\.[0-9]{3})?)"
        r"(?: \(E[0-9A-Z][0-9]{4}\):)?"
    ),
    "torch_npu_log": (
        r"(?:\[rank:(?<npu_log_rank>[0-9]+)\]:)?\[(?<npu_log_pid>[0-9]+)\]"
        r" \[(?<npu_log_stamp>[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]:[0-9]{3})\]"
        rf" [0-9A-Za-z_.]+: \[(?<npu_log_level>{LEVEL_WORDS})\] \[[0-9]+\]"
    ),
    # Ray's C++ processes (raylet, gcs_server): "[2024-08-25 19:21:02,241 E 1111013 1111013]", the last two pid and thread.
    "ray": rf"\[(?<ray_iso>{_ISO}) (?<ray_sev>[IWEF]) (?<ray_pid>[0-9]+) [0-9]+\]",
    # logfmt as logrus, slog, go-kit and Argo write it: time="…" (or ts=…), maybe caller=…, then level=…;
    # Loki, Thanos and Prometheus put level=… (and caller=…) first, Grafana (log15) a logger=… and "lvl=";
    # slog names the caller source=…. A tool that follows several containers' logs at once names each line's container
    # before it ("driver-validation time=\"…\" level=info msg=…", the GPU operator's validator's init containers), and
    # only before logrus' quoted time ("step ts=… loss=0.31" is a trainer's line of its own, no container's).
    "logfmt": (
        r'(?:(?<logfmt_container>[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?) time="'
        r'|(?:(?:caller|logger)=\S+ |(?:level|lvl)=(?<logfmt_level_first>[A-Za-z]+) )*(?:time|ts|t)="?)'
        rf'(?<logfmt_time>{_ISO})"?(?: caller=\S+)?(?: (?:level|lvl)=(?<logfmt_level>[A-Za-z]+))?(?: (?:caller|source)=\S+)?'
    ),
    # llama.cpp's log with --log-prefix and --log-timestamps: the time since it started ("minutes.ss.ms.us", no clock
    # time) and the level's letter ("1.06.520.077 E ggml_backend_cuda_buffer_type_alloc_buffer: …").
    "llama_cpp": r"[0-9]+\.[0-9][0-9]\.[0-9]{3}\.[0-9]{3} (?<llama_sev>[IWED])",
    # logrus' text formatter on a terminal (Go operators run locally, Docker's CLI): the level cut to four letters, then
    # the seconds since the program started, no clock time ("ERRO[0012] failed to reconcile  job=default.x").
    "logrus_text": r"(?<logrus_level>TRAC|DEBU|INFO|WARN|ERRO|FATA|PANI)\[[0-9]{4,}\]",
    # zap's EpochTimeEncoder (controller-runtime's default before v0.15: the Kubeflow Training Operator, KubeRay) prints
    # the float seconds as Go's %g does: "1.7085078566441019e+09\tDEBUG\tevents\t…".
    "epoch": r"\[?(?<epoch>1[4-9][0-9]{8}(?:\.[0-9]{1,9})?|1[4-9][0-9]{11}|1\.[4-9][0-9]{0,16}e\+09)\]?",
    # A C ctime in brackets: Snakemake's stamp over each job ("[Wed Nov 12 11:40:15 2025]", on a line of its own), Apache's
    # error log to the microsecond ("[Wed Oct 11 14:32:52.123456 2000] [core:error] ").
    "ctime": (
        r"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?<ctime_mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?<ctime_day>[0-9]{1,2})"
        r" (?<ctime_clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?) (?<ctime_year>[0-9]{4})\]"
    ),
    # date(1)'s default output, which shell scripts echo before a step ("Tue Mar  5 15:17:06 UTC 2019: starting"; a 12-hour
    # clock in some locales; a zone name, an offset or none), and Python's time.ctime() ("Tue Mar  5 15:17:09 2019").
    "date_cmd": (
        r"(?<date_raw>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? +(?<date_mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?<date_day>[0-9]{1,2})"
        r" (?<date_clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?)(?: (?<date_half>[AP]M))?(?: (?<date_zone>[A-Z]{1,5}|[+-][0-9]{4}))?"
        r" (?<date_year>[0-9]{4}))(?::| -)?"
    ),
    # Jupyter's servers and tornado: "[W 2025-05-12 09:51:40.123 ServerApp] ", the level's first letter and the app
    # (the classic notebook server a time of day alone: "[I 09:51:40.123 NotebookApp] ").
    "tornado": rf"\[(?<tornado_sev>[DIWEC]) (?:(?<tornado_iso>{_ISO})|(?<tornado_clock>{_CLOCK})) [A-Za-z][0-9A-Za-z_.]*\]",
    # InvokeAI's "[2025-02-10 21:49:50,346]::[InvokeAI]::INFO --> " names its logger and level too.
    # SGLang puts its data/tensor/pipeline/expert-parallel ranks inside the bracket: "[2025-05-19 23:22:28 DP1 TP3]".
    # Google Cloud Logging's console puts each entry's severity before its time ("INFO 2024-03-20T12:09:07.685051946Z …").
    # The GitHub Actions runner's own diagnostic log (_diag/Runner_*.log, Worker_*.log): "[2024-09-02 05:19:40Z INFO JobDispatcher] ",
    # its level padded to four columns ("ERR ", "VERB"), then the component (a class of the runner, not a process) that wrote the line.
    "actions_runner": rf"\[(?<runner_iso>{_ISO}) (?<runner_level>INFO|WARN|ERR|VERB) +[A-Za-z][0-9A-Za-z_.]*\]",
    # torchtitan names itself before its python logging stamp: "[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200 …".
    # SageMaker's model parallelism library (SMP) puts the level's letter and the caller inside the bracket:
    # "[2024-06-28 18:30:50.171: W torch/sagemaker/distributed/fsdp/fully_sharded_data_parallel.py:38] "; TensorFlow's C++ log
    # reads so where its stamp is no outer one (under mpirun's tag: "2019-08-26 18:41:15.943905: E …/cuda_driver.cc:828] ").
    # Celery's worker log (its default "[%(asctime)s: %(levelname)s/%(processName)s] "): "[2022-06-10 10:08:01,828: WARNING/ForkPoolWorker-1] ",
    # the process MainProcess, ForkPoolWorker-N (PoolWorker-N before Celery 4), Beat…; a task's lines go on with its name and id
    # ("tasks.add[<uuid>]: "), which stay in the body. Where an outer stamp took the time ("2017-07-06 12:13:37,999: " a paste cut
    # at its bracket), the level and the process are what is left of it.
    "celery": rf"(?:\[(?<celery_iso>{_ISO}): )?(?<celery_level>{LEVEL_WORDS})/(?<celery_process>[A-Za-z][0-9A-Za-z_.\-]*)\]",
    # Bazel's console with --show_timestamps: "(15:27:35) ERROR: …", a time of day alone before each line it prints (its level,
    # where it gives one, is the body's first word: "INFO: ", "WARNING: ", "ERROR: "); its date is the file's, or that of the
    # "INFO: Current date is 2019-05-20" it prints first (_resolve).
    "bazel": rf"\((?<bazel_clock>[0-9][0-9]:[0-9][0-9]:[0-9][0-9])\)",
    # A bracketed stamp with the next tag glued to it, as C++ loggers' patterns write ("[2024-05-01 12:00:00.123][error][1234] "):
    # the tag stays the body's first word (_peel_application).
    "iso8601_glued": rf"\[(?<glued_iso>{_ISO})\](?<glued_tag>\[[^\]\s]+\])",
    "iso8601": rf"(?:(?<iso_level_first>{LEVEL_WORDS}) |\[titan\] )?"
    rf"\[?(?<app_iso>{_ISO})(?: (?:[DTPE]P[0-9]+ ?)+)?\]?(?: -|::\[[^\]\s]+\]::(?<iso_level>{LEVEL_WORDS}) -->"
    r"|: (?<smp_sev>[DIWEFC]) [^\]\s]+:[0-9]+\]|:)?",
    # TensorFlow's and XLA's C++ log after its stamp ("2019-06-08 03:44:36.084180: ", peeled as an outer stamp), and Triton
    # Inference Server's with --log-format ISO8601, whose pid follows the level ("2024-03-20T12:09:36Z E 58 server.cc:634] ").
    "tensorflow": r"(?<tsl_sev>[IWEF])(?: (?<tsl_pid>[0-9]+))? [^\]\s]+\.(?:cc|h):[0-9]+\]",
    # NeMo's logging: "[NeMo W 2024-01-02 03:04:05 nemo_logging:349] ", the level's first letter.
    "nemo": rf"\[NeMo (?<nemo_sev>[DIWEC]) (?<nemo_iso>{_ISO}) [^\]\s]+:[0-9]+\]",
    # loguru's default after its stamp (peeled as an outer one): "| ERROR    | module:function:12 - ".
    "loguru": r"\| (?<loguru_level>TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL) *\|(?: [^\s|]+:[^\s|]*:[0-9]+ -)?",
    # The month-first "%m/%d/%Y %H:%M:%S" of transformers' and accelerate's example scripts ("01/17/2024 13:47:27 - INFO - ");
    # a first number over 12 is the day; a 12-hour clock says AM or PM after it (.NET's and Windows' "G" format).
    # nanotron's "08/31/2024 14:37:22 [INFO|DP=0|PP=0|TP=0]: " (a host after the ranks on several nodes) has the same stamp.
    "us_date": (
        r"(?<us_stamp>[0-9][0-9]/[0-9][0-9]/[0-9]{4} [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]+)?)(?: (?<us_half>[AP]M))?"
        rf"(?: \[(?<nanotron_level>{LEVEL_WORDS})\|DP=[0-9]+\|PP=[0-9]+\|TP=[0-9]+(?:\|[^\]\s]+)?\]:)?"
    ),
    # NVIDIA Cosmos' (imaginaire) logging: "[11-30 13:18:47|WARNING|cosmos_predict2/pipelines/video2world.py:320:from_config] ",
    # maybe with tags before the level ("|job=|"); a yearless stamp, cut up in _resolve.
    "cosmos": (
        r"\[(?<cosmos_stamp>[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?)(?:\|[0-9A-Za-z_]+=[^|\]\s]*)*"
        rf"\|(?<cosmos_level>{LEVEL_WORDS}|SUCCESS)\|[^\]\s]+:[0-9]+:[^\]\s]+\]"
    ),
    # TensorRT's logger and TensorRT-LLM's Python one ("[05/08/2024-20:47:56] [TRT] [E] ", "[09/17/2025-21:24:19] [TRT-LLM]
    # [RANK 2] [E] ", a month-first stamp cut up in _resolve, the rank read in _peel_application), and TensorRT-LLM's C++ one
    # ("[TensorRT-LLM][ERROR] ", no time).
    "tensorrt": (
        r"(?:\[(?<trt_stamp>[0-9][0-9]/[0-9][0-9]/[0-9]{4}-[0-9][0-9]:[0-9][0-9]:[0-9][0-9])\] \[TRT(?:-LLM)?\](?: \[RANK [0-9]+\])?"
        rf" \[(?<trt_sev>[VIWEF])\]|\[TensorRT-LLM\]\[(?<trtllm_level>{LEVEL_WORDS})\])"
    ),
    # rich's logging handler (accelerate, ms-swift, NeMo): "[15:58:29] WARNING  message   api.py:699", the level padded
    # to its column and the caller at the console's right edge (_RICH_CALLER); "[%x %X]" stamps ("[11/30/26 09:15:02]")
    # give the date too. The stamp is one group, cut up in _resolve (a group costs every line a capture). rich leaves a
    # stamp that repeats the line above's blank: its width in spaces.
    "rich": (
        r"(?:\[(?<rich_stamp>(?:[0-9][0-9]/[0-9][0-9]/[0-9][0-9] )?[0-9][0-9]:[0-9][0-9]:[0-9][0-9])\]| {10}| {19})"
        rf" (?<rich_level>{LEVEL_WORDS}) *"
    ),
}
# Every header but the glued stamp ends where a space (or the line) does.
_APP = "^(?<app>" + "|".join(f"{header}{'' if name == 'iso8601_glued' else _ENDS_TAG}" for name, header in _APP_HEADERS.items()) + ")"
# The group that is set exactly when each header won (python_caller's, kserve's and loguru's lines are of their stamp's format;
# nemo, us_date and cosmos have none of their own).
_APP_WITNESS = {
    "vllm": "vllm_level", "oslo": "oslo_level", "logcat": "logcat_sev", "windows_cbs": "cbs_level", "hf_transformers": "hf_iso", "klog": "glog_sev", "c10d_old": "c10d_sev", "gunicorn": "gunicorn_level",
    "go_log": "go_stamp", "paddle": "paddle_stamp", "pingcap": "pingcap_stamp", "gin": "gin_stamp", "log4j": "log4j_level", "log4j_compact": "compact_level", "log4j2": "log4j2_level", "ray": "ray_sev",
    "logfmt": "logfmt_time", "epoch": "epoch", "iso8601_glued": "glued_iso", "iso8601": "app_iso",
    "tensorflow": "tsl_sev", "rich": "rich_level", "ctime": "ctime_year", "tensorrt": "trt_sev", "date_cmd": "date_year",
    "tornado": "tornado_sev", "actions_runner": "runner_level", "torch_npu": "npu_level", "cann": "cann_stamp",
    "torch_npu_log": "npu_log_level", "celery": "celery_level", "bazel": "bazel_clock",
    # logrus' text formatter on a terminal ("INFO[0000] msg", the seconds since start): a log of its own, though it dates nothing
    "logrus_text": "logrus_level",
}
_RICH_CALLER = r"\s{2,}[0-9A-Za-z_.\-]+:[0-9]+$"
# The logger before the level may be bracketed ("[mlserver.grpc] ERROR - ", MLServer's) or name its caller
# ("seldon_core.wrapper:handle_generic_exception:53 - ERROR: ", Seldon Core's Python wrapper).
_LEADING_LEVEL = (
    r"^[\s\-|:\[(]*(?:[0-9A-Za-z_.]+(?:\s+-|:)\s+|[0-9A-Za-z_.]+\] |[0-9A-Za-z_.]+:[0-9A-Za-z_<>]+:[0-9]+ - )?"
    rf"[\[(|]?\s*(?<level>{LEVEL_WORDS})\b"
    # (numbered as dcgm-exporter numbers its start-up warnings: "Warning #2: dcgm-exporter doesn't have sufficient privileges …")
    r"|^(?<title>Error|Warning|Fatal|error|warning|fatal)(?: #[0-9]+)?:|^(?:##\[|::)(?<gh>error|warning|notice|debug)"
    # spdlog's default pattern ("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] "): the logger's name, then the level in lower case.
    r"|^(?:\[[0-9A-Za-z_.:\-]+\] ?)?\[(?<spdlog>trace|debug|info|warning|warn|error|err|critical|fatal)\]"
    # NCCL names its file and line, maybe the function too ("include/alloc.h:320 (ncclCuMemAlloc) NCCL WARN …").
    r"|^(?:[0-9A-Za-z_./\-]+:[0-9]+ (?:\([0-9A-Za-z_]+\) )?)?NCCL (?<nccl>INFO|WARN|ERROR|TRACE)\b"
    # A tool's diagnostic ("srun: error: …", "slurmstepd: error: …"), and Airflow's "{file.py:N} LEVEL - …".
    r"|^[a-z][0-9a-z_.\-]*(?:\[[0-9]+\])?: (?<tool>error|warning|fatal):|^\{[^{}\s]+\} (?<airflow>" + LEVEL_WORDS + r") - "
    # A bracketed capitalised level: a Kubernetes event's type as KubeSpawner's progress log gives it ("[Warning] 0/3 nodes
    # are available: …", "[Normal] Successfully assigned …"), and Omniverse Kit's (Isaac Sim, Isaac Lab) after the time
    # since it started ("[4,250ms] [Error] [gpu.foundation.plugin] …").
    r"|^(?:\[[0-9,]+ms\] )?\[(?<titled>Verbose|Info|Normal|Warning|Error|Fatal)\] "
    # The C++ header of Triton's ISO8601 format (or TensorFlow's) whose stamp an outer one left to the application's
    # header: Google Cloud Logging's console puts its own before it
    # ("ERROR 2024-03-20T12:09:36.741697566Z 2024-03-20T12:09:36Z I 58 server.cc:634]").
    r"|^(?<cpp>[IWEF])(?: [0-9]+)? [^\]\s]+\.(?:cc|h):[0-9]+\]"
    # Python logging's "%(asctime)s %(name)s %(levelname)s: %(message)s" after its stamp (maskrcnn-benchmark and the
    # detection codebases built on it: "tan.trainer INFO: eta: 2:11:46 …"): the logger, one space, the level and a colon.
    r"|^[A-Za-z_][0-9A-Za-z_.]* (?<logger_level>" + LEVEL_WORDS + r"):(?:\s|$)"
    # Apache httpd's error log after its ctime stamp (peeled as an outer one): the level in brackets, 2.4's after its module
    # ("[notice] workerEnv.init() ok …", "[core:error] [pid 35708:tid 4328636416] …"); trace1 to trace8 are debug.
    r"|^\[(?:[a-z_0-9]+:)?(?<apache>emerg|alert|crit|error|warn|notice|info|debug|trace)[1-8]?\] "
    # Jenkins' controller log after its stamp (java.util.logging through its formatter): the thread's id, then the level
    # between tabs ("[id=683]\tSEVERE\to.c.j.p.k.KubernetesSlave#_terminate: …"; a paste may have made them spaces).
    r"|^\[id=[0-9]+\]\s+(?<jul>SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST)\s"
    # npm's prefix of what it logs at a level: "npm ERR! " (npm 8 and before) and "npm error " (9+), "npm WARN " / "npm warn ",
    # "npm notice ", "npm verb ", "npm sill ", "npm info "; a line of its own (a child npm's lines it quotes: "npm error npm warn …",
    # are its level's).
    r"|^npm (?<npm>ERR!|WARN|error|warn|notice|info|verb|sill)(?: |$)"
)

_OUTER_GROUPS = pl.col("text").str.extract_groups(_OUTER).alias("layers")
# A line that starts with no layer has none: one pass of this rules it out before the capture.
_ANY_OUTER = "^(?:" + any_of(*_OUTER_LAYERS) + ")"
_OUTER_FIELDS = {name: pl.String() for name in pl.select(pl.lit("").str.extract_groups(_OUTER)).to_series().struct.fields}
_APP_GROUPS = pl.col("inner").str.extract_groups(_APP)
# A printed level is looked for only in lines whose header gave none.
_LEADING_GROUPS = pl.when(pl.col("header_level").is_null()).then(pl.col("body")).str.extract_groups(_LEADING_LEVEL)

# A log service's export names what the node's file did not: Google Cloud Logging's LogEntry (`gcloud logging read
# --format=json`) puts the line in "textPayload", or "jsonPayload" ("MESSAGE" of a k8s_node's journal entry), the pod in
# "resource.labels", the node in "labels" under a key spelled with dots (written here with its dots escaped); Grafana
# Loki's `logcli --output=jsonl` puts it in "line", its stream's labels in "labels"; CloudWatch Logs' events name their
# stream (see _STREAM_POD).
_JSON_KEYS = {
    "time": ("time", "timestamp", "ts", "@timestamp", "asctime", "created"),  # created: python-json-logger's epoch
    "level": ("level", "severity", "levelname", "lvl", "log.level"),
    "msg": ("msg", "message", "@message", "log", "event", "textPayload", "jsonPayload.message", "jsonPayload.MESSAGE"),
    "exc": ("exc_info", "exception", "stack_trace", "traceback", "error.stack_trace"),
    "pod": ("pod", "pod_name", "kubernetes.pod_name", "k8s.pod.name", "resource.labels.pod_name", "labels.pod"),
    "namespace": (
        "namespace", "namespace_name", "kubernetes.namespace_name", "k8s.namespace.name", "resource.labels.namespace_name",
        "labels.namespace",
    ),
    "container": (
        "container", "container_name", "kubernetes.container_name", "k8s.container.name", "resource.labels.container_name",
        "labels.container",
    ),
    # The node a collector names (Fluent Bit's and Fluentd's kubernetes block, Cloud Logging's node, a Loki stream's labels
    # from logcli --output=jsonl): where the record was written, over its file's folder.
    "node": (
        "kubernetes.host", "resource.labels.node_name", r"labels.compute\.googleapis\.com/resource_name",
        "labels.node_name", "labels.hostname", "labels.host",
    ),
    # The application's own host keys: its machine, or a peer it talks of ("host": "db-1:5432").
    "host": ("hostname", "host.name", "host"),
    "pid": ("pid", "process"),
    # Loki's line is read as the message only where it is text: elsewhere "line" is a source line's number.
    "loki_line": ("line",),
    "stream": ("logStreamName",),
    # Fluent Bit's json / json_lines output puts a record's time under "date", as an epoch (its json_date_format's
    # default): read as the time where the record gives none of its own, and only as such an epoch.
    "flb_date": ("date",),
}

_NAMES = ("pod", "namespace", "container", "host", "node")

FRAMED_COLUMNS = (
    "line", "blank", "enveloped_blank", "continued", "folded", "object_lines", "body", "ts", "ts_raw", "ts_quality", "severity", "format",
    "pid", "process", "host", "host_named", "pod", "namespace", "container", "rank", "gpu_index", "node_ip", "line_attrs", "repeated",
    "partition",
)


def _key_parts(name: str) -> list[str]:
    """The keys of a nested reading of ``name``: apart at each dot not escaped by a backslash."""
    return [part.replace("\\.", ".") for part in re.split(r"(?<!\\)\.", name)]


def _json_paths(names: tuple[str, ...]) -> list[str]:
    """One JSONPath union over the literal keys, in preference order, then each nested reading.

    "a.b" is a literal key in ECS-style logs and a nested one in fluent-bit's kubernetes block.
    """
    literal = [name for name in names if "\\" not in name]
    union = "$[" + ",".join(f"'{name}'" for name in literal) + "]"
    nested = ["$" + "".join(f"['{part}']" for part in _key_parts(name)) for name in names if "." in name]
    return [union, *nested] if literal else nested


def _scalar(value: pl.Expr) -> pl.Expr:
    # An object or array under a key (ECS's "host": {...}) is not the scalar asked for.
    return pl.when(~value.str.starts_with("{") & ~value.str.starts_with("[")).then(value)


_JSON_STRING = r'"[^"\\\x00-\x1f]*"'
_JSON_SPACE = r"[ \t\n\r]*"
# Bounded so that no number can overflow a double (the parser rejects those).
_JSON_NUMBER = r"-?(?:0|[1-9][0-9]{0,199})(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,2})?"
_JSON_MEMBER = rf"{_JSON_STRING}:{_JSON_SPACE}(?:{_JSON_STRING}|{_JSON_NUMBER}|true|false|null){_JSON_SPACE}"
_FLAT_JSON = rf"^{_JSON_SPACE}\{{{_JSON_SPACE}(?:{_JSON_MEMBER}(?:,{_JSON_SPACE}{_JSON_MEMBER})*)?\}}{_JSON_SPACE}$"
_JSON_KEY_NAMES = [name for names in _JSON_KEYS.values() for name in names]
_KEY_OF_INTEREST = '"(?:' + "|".join(map(re.escape, _JSON_KEY_NAMES)) + ')":'
# A key we read whose value json_path_match would not print as written: null, a decimal, or
# an integer it holds as a double.
_REWRITTEN_VALUE = rf"{_KEY_OF_INTEREST}{_JSON_SPACE}(?:null|-0|-?[0-9]+[.eE]|-?[1-9][0-9]{{16}})"
# A flat object of escape-free strings and plain values whose keys we read are each given
# once, as strings, integers or booleans: a regex per key reads them as json_path_match
# does, without parsing the text once per field.
_FLAT_JSON_TEXT = pl.when(
    pl.col("json_text").str.contains(_FLAT_JSON)
    & ~pl.col("json_text").str.contains(_REWRITTEN_VALUE)
    & (pl.col("json_keys").list.n_unique() == pl.col("json_keys").list.len())
).then(pl.col("json_text"))


@cache
def _flat_value(name: str) -> pl.Expr:
    """The value under key ``name`` of a flat object, as json_path_match prints it."""
    member = rf'"{re.escape(name)}":{_JSON_SPACE}(?:"(?<string>[^"]*)"|(?<literal>[-0-9a-z]+))'
    value = pl.col("json_flat").str.extract_groups(member).struct
    return pl.coalesce(value.field("string"), value.field("literal"))


def _json_spelling(names: tuple[str, ...]) -> list[str]:
    """What a JSON text that holds one of ``names`` spells: the key, or a \\ escape a key could hide behind."""
    return sorted({f'"{part}"' for name in names for part in (name, _key_parts(name)[0])} | {"\\"})


def _where(
    frame: pl.DataFrame,
    mask: pl.Expr,
    compute: Callable[[pl.DataFrame], pl.DataFrame],
    columns: Mapping[str, pl.DataType],
) -> pl.DataFrame:
    """``frame`` with the ``columns`` that ``compute`` gives its rows where ``mask`` holds, null elsewhere.

    An expression costs a pass over every row, null or not; what only some rows need is
    computed on those rows alone and put back in place.
    """
    rows = frame.select(pl.arg_where(mask)).to_series()
    if rows.len() == 0:
        return frame.with_columns(pl.lit(None, dtype).alias(name) for name, dtype in columns.items())
    if 2 * rows.len() > frame.height:
        # Taking most rows out and back costs more than passing over the few others.
        computed = compute(frame)
        return frame.with_columns(pl.when(mask).then(computed[name]).alias(name) for name in columns)
    computed = compute(frame[rows])
    return frame.with_columns(
        pl.repeat(None, frame.height, dtype=dtype, eager=True).scatter(rows, computed[name]).alias(name)
        for name, dtype in columns.items()
    )


_JSON_FIELDS = {f"j_{field}": pl.String() for field in (*_JSON_KEYS, "body")}


def _json_fields(layers: pl.DataFrame) -> pl.DataFrame:
    """``j_<field>`` of each JSON-lines object: the value of its first key present, as text.

    A flat object is read with a regex per key it gives; any other is parsed with
    json_path_match (which never raises on malformed JSON) for each field whose key it spells.
    """
    return _where(layers, pl.col("json_text").is_not_null(), _read_objects, _JSON_FIELDS)


# A record a log shipper exported (Loki's "line", CloudWatch's "message", Cloud Logging's "textPayload", a collector's
# "log") whose message is itself a JSON-lines object written as a string ("{\"level\":\"error\",\"msg\":…}"): the
# inner record's message is the event's, its level over the shipper's (which names the stream, not the line), its time
# where the shipper gave none.
_INNER_FIELDS = {f"inner_{field}": pl.String() for field in ("time", "level", "body")}
_OBJECT_TEXT = r"^\s*\{.*\}\s*$"


def _inner_records(objects: pl.DataFrame) -> pl.DataFrame:
    inner = _read_objects(objects.select(json_text="j_inner"), inner=False)
    return inner.select(inner_time="j_time", inner_level="j_level", inner_body="j_body")


def _read_objects(objects: pl.DataFrame, *, inner: bool = True) -> pl.DataFrame:
    objects = objects.select("json_text", json_keys=pl.col("json_text").str.extract_all(_KEY_OF_INTEREST)).with_columns(
        json_flat=_FLAT_JSON_TEXT
    )
    given = set(objects.select(pl.col("json_keys").explode().drop_nulls().unique()).to_series())
    flat = {
        f"flat_{field}": pl.coalesce([_flat_value(name) for name in names if f'"{name}":' in given])
        for field, names in _JSON_KEYS.items() if any(f'"{name}":' in given for name in names)
    }
    parsed = {f"parsed_{field}": pl.String() for field in (*_JSON_KEYS, "inner")}
    objects = _where(objects.with_columns(**flat), pl.col("json_flat").is_null(), _parse_objects, parsed)
    read = {
        field: pl.coalesce(*([_scalar(pl.col(f"flat_{field}"))] if f"flat_{field}" in flat else []), pl.col(f"parsed_{field}"))
        for field in _JSON_KEYS
    }
    # An empty name is no name (Karpenter logs "namespace":"" for cluster-scoped objects).
    fields = objects.select(
        "json_text",
        "parsed_inner",
        *((pl.when(value != "").then(value) if field in _NAMES else value).alias(f"j_{field}") for field, value in read.items()),
    )
    fields = fields.with_columns(
        j_msg=pl.coalesce("j_msg", pl.when(~pl.col("j_loki_line").str.contains(r"^-?[0-9]+$")).then(pl.col("j_loki_line"))),
        **_stream_names(pl.col("j_stream")),
    )
    epoch_date = pl.when(pl.col("j_flb_date").str.contains(r"^[0-9]{9,10}(?:\.[0-9]+)?$")).then(pl.col("j_flb_date"))
    fields = fields.with_columns(j_time=pl.coalesce("j_time", epoch_date))
    if inner:
        inner_text = pl.col("parsed_inner")
        nested = pl.when(pl.col("j_msg").is_null() & inner_text.str.contains(_OBJECT_TEXT)).then(inner_text)
        fields = _where(fields.with_columns(j_inner=nested), pl.col("j_inner").is_not_null(), _inner_records, _INNER_FIELDS)
        fields = fields.with_columns(
            j_msg=pl.coalesce("j_msg", "inner_body"),
            j_level=pl.coalesce("inner_level", "j_level"),
            j_time=pl.coalesce("j_time", "inner_time"),
        )
    # An object is a JSON-lines record when it gives a time, a level or a message.
    message = pl.when(pl.col("j_exc").is_not_null()).then(
        pl.concat_str([pl.col("j_msg").fill_null(""), pl.col("j_exc")], separator="\n")
    ).otherwise(pl.col("j_msg").fill_null(pl.col("json_text"))).str.strip_chars_end()
    record = pl.any_horizontal(pl.col("j_time", "j_level", "j_msg").is_not_null())
    return fields.with_columns(j_body=pl.when(record).then(message))


# Fluent Bit's (and Container Insights') CloudWatch stream of a container's log is named for its file under
# /var/log/containers: "<host>-application.var.log.containers.<pod>_<namespace>_<container>-<container id>.log".
_STREAM_POD = (
    r"(?:^(?<host>[^\s]+?)-application\.|^|\.)var\.log\.containers\."
    r"(?<pod>[^_\s]+)_(?<namespace>[^_\s]+)_(?<container>[^\s]+)-[0-9a-f]{64}\.log$"
)


def _stream_names(stream: pl.Expr) -> dict[str, pl.Expr]:
    """The pod, namespace, container and node a CloudWatch stream's name gives, where the record names none."""
    names = stream.str.extract_groups(_STREAM_POD).struct
    named = {"pod": "pod", "namespace": "namespace", "container": "container", "node": "host"}
    return {f"j_{field}": pl.coalesce(f"j_{field}", names.field(group)) for field, group in named.items()}


def _parse_objects(objects: pl.DataFrame) -> pl.DataFrame:
    text = pl.col("json_text")
    spelling = {field: text.str.contains_any(_json_spelling(names)) for field, names in _JSON_KEYS.items()}
    spelled = objects.select(mask.any().alias(field) for field, mask in spelling.items()).row(0, named=True)
    paths = {
        f"path_{field}_{n}": pl.when(spelling[field]).then(text).str.json_path_match(path)
        for field, names in _JSON_KEYS.items() if spelled[field] for n, path in enumerate(_json_paths(names))
    }
    readings = objects.with_columns(**paths)
    # the first message key's text that is an object (a record written as a string): read as a record of its own
    objects_read = [
        pl.when(pl.col(name).str.starts_with("{")).then(pl.col(name))
        for prefix in ("path_msg_", "path_loki_line_") for name in paths if name.startswith(prefix)
    ]
    none = [pl.lit(None, pl.String)]
    return readings.select(
        *(
            pl.coalesce([_scalar(pl.col(name)) for name in paths if name.startswith(f"path_{field}_")] or none).alias(f"parsed_{field}")
            for field in _JSON_KEYS
        ),
        pl.coalesce(objects_read or none).alias("parsed_inner"),
    )


# A log tailer's prefix before each line it streams: stern's "<pod> <container> " (its colors went with the terminal's
# codes: _CLEANED), "<pod> <container> <stamp> " with --timestamps; kubetail's "[<pod>] " ("[<pod> <container>] " where a
# pod has several); `aws logs tail`'s "<stamp> <stream> ", its stamp Python's isoformat (microseconds where nonzero) and its
# stream Fluent Bit's for a pod's file (_STREAM_POD) or any other name with a separator in it ("ecs/app/<task id>"); Grafana
# Loki's `logcli query`'s "<stamp> {<labels>} ", the labels padded to a column. A pod's name has a dash ("trainer-0"), and two
# words at a line's start are no stern prefix unless most of the file's lines start with a few such pairs. Stern says "+ <pod> ›
# <container>" when it starts tailing a container ("-" when it stops): a line of its own, not of the log, left blank. With
# --all-namespaces (-A) each prefix starts with the namespace: "<namespace> <pod> <container> ", "+ <namespace> <pod> ›
# <container>". `logcli query` writes the labels its lines all share once, above them ("Common labels: {…}"), and leaves
# them out of each line's braces (often "{}"): that line is the tailer's too, left blank, its labels each line's.
_TAILER_NAMESPACE = r"[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?"
_TAILER_POD = r"[a-z0-9][a-z0-9.]*(?:-[a-z0-9.]+)+"
_TAILER_CONTAINER = r"[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?"
_TAILER_STAMP = r"[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?(?:Z|[+-][0-9][0-9]:[0-9][0-9])"
_TAILER_PREFIX = (
    rf"^(?<tail_prefix>(?<loki_ts>{_TAILER_STAMP}) (?<loki_labels>\{{[^{{}}\n]*\}})(?: +|$)"
    r"|Common labels: (?<loki_common>\{[^{}\n]*\})$"
    rf"|(?<aws_ts>[0-9]{{4}}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{{6}})?[+-][0-9][0-9]:[0-9][0-9])"
    r" (?<aws_stream>[^\s/._\-]*[/._\-][^\s]*)(?: |$)"
    rf"|\[(?<kubetail_pod>{_TAILER_POD})(?: (?<kubetail_container>{_TAILER_CONTAINER}))?\](?: |$)"
    rf"|(?<stern_ns>{_TAILER_NAMESPACE}) (?<stern_ns_pod>{_TAILER_POD}) (?<stern_ns_container>{_TAILER_CONTAINER})"
    rf"(?: (?<stern_ns_ts>{_TAILER_STAMP}))?(?: |$)"
    rf"|(?<stern_pod>{_TAILER_POD}) (?<stern_container>{_TAILER_CONTAINER})(?: (?<stern_ts>{_TAILER_STAMP}))?(?: |$)"
    rf"|[+-] (?:(?<stern_seen_ns>{_TAILER_NAMESPACE}) )?(?<stern_seen_pod>{_TAILER_POD}) › (?<stern_seen_container>{_TAILER_CONTAINER})$)"
)
# The tailer of each prefix, by the groups only it fills.
_TAILER_WITNESS = {
    "loki": ("loki_ts", "loki_common"), "aws": ("aws_ts",), "kubetail": ("kubetail_pod",), "stern": ("stern_ns", "stern_pod", "stern_seen_pod"),
}
_TAILER_FIELDS = {name: pl.String() for name in re.findall(r"\(\?<([a-z_]+)>", _TAILER_PREFIX)}
_TAILED_COLUMNS = ("tail_pod", "tail_container", "tail_namespace", "tail_host", "tail_ts")
# The share of a file's lines a tailer's prefix must start, and how many lines each of stern's streams must have on average.
_TAILED_SHARE = 0.75
_LINES_A_STREAM = 2


def _loki_label(*names: str) -> pl.Expr:
    """The value of the first of ``names`` among the labels of a `logcli` line (any order), else among its common labels."""
    labels = ("loki_labels", "loki_common")
    return pl.coalesce(pl.col(column).str.extract(rf'[{{ ,]{name}="([^"]*)"', 1) for column in labels for name in names)


def _tailer_groups(rows: pl.DataFrame) -> pl.DataFrame:
    groups = rows.select(pl.col("text").str.extract_groups(_TAILER_PREFIX).alias("groups")).unnest("groups")
    kind = pl.coalesce(
        pl.when(pl.any_horizontal(pl.col(groups).is_not_null())).then(pl.lit(name)) for name, groups in _TAILER_WITNESS.items()
    )
    return groups.with_columns(tail_kind=kind)


def _with_stern_namespaces(tailed: pl.DataFrame, by_file: list[str]) -> pl.DataFrame:
    """stern's three words read as "<namespace> <pod> <container>" (--all-namespaces) in a file most of whose stern lines
    have them, from few streams; elsewhere as "<pod> <container>" before a line whose first word looked like a container
    ("trainer-0 pytorch-main epoch 1 …": the third word varies with the line). Each line's stream (``tail_stream``)."""
    three = pl.col("stern_ns").is_not_null()
    streams = pl.concat_str("stern_ns", "stern_ns_pod", "stern_ns_container", separator=" ")
    few = streams.filter(three).n_unique() * _LINES_A_STREAM <= three.sum()
    most = three.sum() >= _TAILED_SHARE * (three | pl.col("stern_pod").is_not_null()).sum()
    read_three = three & (few & most).over(by_file) if by_file else three & few & most
    read = tailed.with_columns(
        stern_pod=pl.coalesce("stern_pod", pl.when(read_three).then("stern_ns_pod").otherwise("stern_ns")),
        stern_container=pl.coalesce("stern_container", pl.when(read_three).then("stern_ns_container").otherwise("stern_ns_pod")),
        stern_ts=pl.coalesce("stern_ts", pl.when(read_three).then("stern_ns_ts")),
        stern_ns=pl.coalesce(pl.when(read_three).then("stern_ns"), "stern_seen_ns"),
        tail_prefix=pl.when(three & ~read_three).then(pl.concat_str("stern_ns", pl.lit(" "), "stern_ns_pod", pl.lit(" "))).otherwise("tail_prefix"),
    )
    pod, container = pl.coalesce("stern_pod", "stern_seen_pod"), pl.coalesce("stern_container", "stern_seen_container")
    stern = pl.concat_str("stern_ns", pod, container, separator=" ", ignore_nulls=True)
    return read.with_columns(tail_stream=pl.coalesce("loki_labels", "aws_stream", stern, "kubetail_pod"))


def _without_tailer_prefix(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` without the prefix a log tailer put on them, with the pod, container, namespace, host and time it named
    (``tail_*``), in a file most of whose lines wear one tailer's prefix, from a few streams (each batch file decides)."""
    shaped = pl.col("text").str.contains(_TAILER_PREFIX)
    if not lines.select((_share(shaped, lines) >= _TAILED_SHARE).any()).item():
        return lines.with_columns(pl.lit(None, pl.String).alias(name) for name in _TAILED_COLUMNS)
    batch = "batch_file" in lines.columns
    tailed = _where(lines, shaped, _tailer_groups, {**_TAILER_FIELDS, "tail_kind": pl.String()})
    tailed = _with_stern_namespaces(tailed, ["batch_file"] if batch else [])
    # the common labels logcli wrote above the lines, on each of them
    common = pl.col("loki_common").forward_fill()
    tailed = tailed.with_columns(loki_common=common.over("batch_file") if batch else common)
    kind = pl.col("tail_kind")
    commonest = kind.drop_nulls().mode().first()
    # the lines that wear the prefix of the file's commonest tailer
    worn = (kind == (commonest.over("batch_file") if batch else commonest)).fill_null(False)
    by_kind = ["batch_file", "tail_kind"] if batch else ["tail_kind"]
    # Only stern's two words and kubetail's bracket could be a line's own (a CI step's tag: "[build-step] Killed"); a stamp
    # before braces or a stream's path is a tailer's.
    few_streams = ~kind.is_in(["stern", "kubetail"]) | (pl.col("tail_stream").n_unique().over(by_kind) * _LINES_A_STREAM <= pl.len().over(by_kind))
    peel = worn & (_share(worn, tailed) >= _TAILED_SHARE) & few_streams
    from_stream = pl.col("aws_stream").str.extract_groups(_STREAM_POD).struct
    named = {
        "tail_pod": pl.coalesce("stern_pod", "stern_seen_pod", "kubetail_pod", _loki_label("pod", "pod_name"), from_stream.field("pod")),
        "tail_container": pl.coalesce(
            "stern_container",
            "stern_seen_container",
            "kubetail_container",
            _loki_label("container", "container_name"),
            from_stream.field("container"),
        ),
        "tail_namespace": pl.coalesce("stern_ns", _loki_label("namespace", "namespace_name"), from_stream.field("namespace")),
        "tail_host": pl.coalesce(_loki_label("node_name", "hostname", "host", "node"), from_stream.field("host")),
        "tail_ts": pl.coalesce("loki_ts", "aws_ts", "stern_ts"),
    }
    return tailed.with_columns(
        text=pl.when(peel).then(pl.col("text").str.slice(pl.col("tail_prefix").str.len_chars())).otherwise("text"),
        **{name: pl.when(peel).then(value) for name, value in named.items()},
    ).select(*lines.columns, *_TAILED_COLUMNS)


def frame(lines: pl.DataFrame, ctx: ParseContext, *, join_pieces: bool = True) -> pl.DataFrame:
    """One row per input line with its body, time, level and the tags its prefixes carried.

    ``blank`` marks lines that held nothing but terminal control codes and CI section markers,
    ``enveloped_blank`` those that held nothing but their envelope (a stamp, a stream tag).
    With ``join_pieces``, a line the container runtime wrote in pieces is one line, on the row of
    its first piece; ``continued`` marks the rows of the others (see :func:`_joined_pieces`).
    The lines of several files (a ``batch_file`` column), and of several writers (an ``envelope``
    column: the program and pid of a syslog line), get partitions of their own.
    """
    keys = _partition_keys(lines)
    lines = _without_flb_stdout(lines)
    lines = _where(lines, _ES_HIT, lambda hits: hits.select(source=_ES_SOURCE), {"source": pl.String()})
    lines = lines.select("line", *keys, text=pl.coalesce(pl.when(pl.col("source").str.starts_with("{")).then("source"), "text"))
    lines = _where(lines, _DOCKER_JSON, lambda records: records.select(unwrapped=_DOCKER_AS_CRI), {"unwrapped": pl.String()})
    lines = lines.select("line", *keys, text=pl.coalesce("unwrapped", "text"))
    cleaned = _where(lines, _NOISY, lambda noisy: noisy.select(cleaned=_CLEANED), {"cleaned": pl.String()})
    cleaned = cleaned.select("line", *keys, text=pl.coalesce("cleaned", "text"))
    # a hard-wrapped paste's width, read on the lines as they were pasted (._pipeline_records)
    at_width = wrap_width_rows(cleaned, keys) if join_pieces else None
    layers = _peel_outer(_without_tailer_prefix(_without_grep_prefix(cleaned)))
    layers = _joined_pieces(layers) if join_pieces else layers.with_columns(continued=pl.lit(False))
    unjoined = {"folded": pl.lit(False), "object_lines": pl.lit(None, pl.Int32)}
    layers = _joined_objects(layers, keys) if join_pieces else layers.with_columns(**unjoined)
    framed = _with_elastic_events(_with_hpc(_without_ray_repeats(_resolve(_peel_application(layers), ctx))))
    framed = joined_wraps(framed, at_width, keys)
    if keys:
        framed = framed.with_columns(partition=pl.concat_str([*keys, "partition"], separator="|", ignore_nulls=True))
    framed = _stamps_above_messages(framed) if join_pieces else framed
    return framed.select(FRAMED_COLUMNS)


# A list of events some UIs copy out (TrueNAS's, a dashboard's) puts each event's time on a line of its own, above its
# message: "2024-03-14 14:22:04" / "Allocate failed due to …". A line that is only a stamp, right above a line with no time
# of its own, is that line's time: the message goes on the stamp's row (the record's first line), the message's row is
# folded into it (a line of the record, not a line skipped). A stamp above a timed line stays an empty line of the log.
_MESSAGE_TAGS = ("pid", "process", "pod", "namespace", "container", "rank", "gpu_index", "node_ip", "line_attrs", "repeated")


def _stamps_above_messages(framed: pl.DataFrame) -> pl.DataFrame:
    """``framed`` with each stamp-only line's time on the untimed message line right below it (see above)."""
    stamp_only = pl.col("enveloped_blank") & ~pl.col("continued") & pl.col("ts").is_not_null() & pl.col("ts_raw").is_not_null()
    untimed = ~pl.col("blank") & ~pl.col("enveloped_blank") & ~pl.col("continued") & pl.col("ts").is_null() & pl.col("ts_raw").is_null()

    def below(expr: pl.Expr) -> pl.Expr:
        return expr.shift(-1).over("partition")

    stamp_above = stamp_only & below(untimed).fill_null(False) & (below(pl.col("line")) == pl.col("line") + 1).fill_null(False)
    if not framed.select(stamp_above.any()).item():
        return framed
    marked = framed.with_columns(_above=stamp_above).with_columns(_merged=pl.col("_above").shift(1).over("partition").fill_null(False))
    above = pl.col("_above")
    format_below = below(pl.col("format"))
    return marked.with_columns(
        enveloped_blank=pl.col("enveloped_blank") & ~above,
        continued=pl.col("continued") | pl.col("_merged"),
        folded=pl.col("folded") | pl.col("_merged"),
        object_lines=pl.when(above).then(below(pl.col("object_lines")).fill_null(1) + 1).otherwise(pl.col("object_lines")).cast(pl.Int32),
        body=pl.when(above).then(below(pl.col("body"))).otherwise(pl.col("body")),
        severity=pl.when(above).then(pl.coalesce(below(pl.col("severity")), pl.col("severity"))).otherwise(pl.col("severity")),
        format=pl.when(above & (format_below != "text")).then(format_below).otherwise(pl.col("format")),
        host=pl.when(above).then(pl.coalesce(below(pl.col("host")), pl.col("host"))).otherwise(pl.col("host")),
        host_named=pl.when(above & below(pl.col("host")).is_not_null()).then(below(pl.col("host_named"))).otherwise(pl.col("host_named")),
        **{name: pl.when(above).then(pl.coalesce(below(pl.col(name)), pl.col(name))).otherwise(pl.col(name)) for name in _MESSAGE_TAGS},
    ).drop("_above", "_merged")


def _with_hpc(framed: pl.DataFrame) -> pl.DataFrame:
    """Loghub's supercomputer lines (:mod:`._pipeline_hpc`) read as such; ``line_attrs``, the JSON run of what they name
    (or of the SGLang ranks a line's stamp names, and the local rank of torchrun's tag)."""
    local_rank = json_run({"local_rank": json_number(pl.col("local_rank"))}).replace("", None)
    ranks = pl.concat_str([pl.col("parallel_ranks"), local_rank], separator=",", ignore_nulls=True).replace("", None)
    if not framed.select(hpc.LINE.any()).item():
        return framed.with_columns(line_attrs=ranks)
    overlaid = hpc.overlay(_where(framed, hpc.LINE, hpc.fields, hpc.COLUMNS))
    return overlaid.with_columns(line_attrs=pl.coalesce("line_attrs", ranks))


# torchelastic's worker-status events (torch 1.9 and 1.10 print them to stdout as JSON lines): {"name":
# "torchelastic.worker.status.FAILED", "source": "WORKER", "timestamp": 0, "metadata": {"run_id": …, "global_rank": 3,
# "group_rank": 0, "worker_id": "11376", "role": "default", "hostname": …, "state": "FAILED", …}}. What matters is nested
# under "metadata", where no JSON-lines key is looked for: the local agent names a worker by its pid, and the state is
# the event's level. Their "timestamp" is always 0 (see _resolve).
_ELASTIC_EVENT = r'^\{"name": "torchelastic\.worker\.status\.[A-Z]+", "source": "(?:WORKER|AGENT)",'
_ELASTIC_STATE_SEVERITY = {"FAILED": "error", "UNHEALTHY": "warning", "SUCCEEDED": "info", "HEALTHY": "info", "INIT": "info", "STOPPED": "info"}
_ELASTIC_COLUMNS = {"elastic_pid": pl.Int64(), "elastic_rank": pl.Int64(), "elastic_host": pl.String(), "elastic_severity": pl.String()}


def _elastic_fields(events: pl.DataFrame) -> pl.DataFrame:
    def field(key: str) -> pl.Expr:
        return pl.col("body").str.json_path_match(f"$.metadata.{key}")

    return events.select(
        elastic_pid=field("worker_id").cast(pl.Int64, strict=False),
        elastic_rank=field("global_rank").cast(pl.Int64, strict=False),
        elastic_host=field("hostname"),
        elastic_severity=field("state").replace_strict(_ELASTIC_STATE_SEVERITY, default=None, return_dtype=pl.String),
    )


def _with_elastic_events(framed: pl.DataFrame) -> pl.DataFrame:
    """torchelastic's worker-status events with the worker's pid, rank, host and the level its state says."""
    event = (pl.col("format") == "json_lines") & pl.col("body").str.contains(_ELASTIC_EVENT)
    if not framed.select(event.any()).item():
        return framed
    read = _where(framed, event, _elastic_fields, _ELASTIC_COLUMNS)
    return read.with_columns(
        pid=pl.coalesce("elastic_pid", "pid"),
        rank=pl.coalesce("elastic_rank", "rank"),
        host=pl.coalesce("elastic_host", "host"),
        host_named=pl.when(pl.col("elastic_host").is_null()).then("host_named").otherwise(pl.lit(False)),
        severity=pl.coalesce("elastic_severity", "severity"),
    ).drop(*_ELASTIC_COLUMNS)


# Ray's driver (2.5+) prints a line its workers printed alike within a few seconds once more, with how many more times
# ("… [repeated 6x across cluster]"); the first such line of a run says so ("(Ray deduplicates logs by default. Set
# RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/… for more options.)").
_RAY_REPEATED_LITERAL = "x across cluster]"
_RAY_REPEATED = r" ?\[repeated ([0-9]+)x across cluster\](?: \(Ray deduplicates logs by default\. [^\n]*\))?\s*$"


def _without_ray_repeats(framed: pl.DataFrame) -> pl.DataFrame:
    """The body without Ray's count of repeats, kept as ``repeated``; a blank line it counted is a blank line."""
    body = pl.col("body")
    repeated = pl.when(body.str.contains(_RAY_REPEATED_LITERAL, literal=True)).then(body).str.extract(_RAY_REPEATED, 1)
    framed = framed.with_columns(repeated=repeated.cast(pl.Int64, strict=False))
    counted = pl.col("repeated").is_not_null()
    if not framed.select(counted.any()).item():
        return framed
    stripped = pl.when(counted).then(body).str.replace(_RAY_REPEATED, "")
    return framed.with_columns(
        body=pl.coalesce(stripped, body),
        enveloped_blank=pl.col("enveloped_blank") | (counted & ~stripped.str.contains(r"\S")),
    )


def _partition_keys(lines: pl.DataFrame) -> list[str]:
    return [name for name in ("batch_file", "envelope") if name in lines.columns]


def _peel_outer(lines: pl.DataFrame) -> pl.DataFrame:
    text = pl.col("text")
    layers = _where(lines, text.str.contains(_ANY_OUTER), lambda rows: rows.select(_OUTER_GROUPS).unnest("layers"), _OUTER_FIELDS)
    layers = _without_stray_tags(layers)
    # vLLM's "VllmWorker rank=3": the name, and the rank. Where tags nest, the innermost names the writer: vLLM's engine
    # prints what its Ray workers print behind its own tag ("(EngineCore_DP0 pid=118283) (RayWorkerWrapper pid=26344,
    # ip=10.0.104.230) INFO …").
    def wears(suffix: str) -> pl.Expr:
        return pl.col(f"worker_pid{suffix}").is_not_null() | pl.col(f"daemon{suffix}").is_not_null()

    def innermost(field: str) -> pl.Expr:
        # the field of the innermost tag the line wears, null where that tag lacks it
        ranked, inner = pl.col(f"{field}_ranked"), pl.col(f"{field}_inner")
        return pl.when(wears("_ranked")).then(ranked).when(wears("_inner")).then(inner).otherwise(pl.col(field))

    worker = pl.coalesce(innermost("process"), innermost("daemon")).str.split_exact(" rank=", 1).struct
    torch_rank = pl.when(_TORCH_RANK_TAG).then("local_rank")
    return layers.select(
        "line",
        *_partition_keys(lines),
        "nccl_host",
        "pdsh_host",
        *_TAILED_COLUMNS[2:],
        pod=pl.coalesce("pod", "dlc_pod", "tail_pod"),
        container=pl.coalesce("container", pl.col("compose").str.strip_chars_end(), "gcl_container", "tail_container"),
        ci_level="ci_level",
        process=worker.field("field_0"),
        blank=~text.str.contains(r"\S"),
        # A line that is only its envelope (a runtime's or CI runner's stamp) is an empty line of the log.
        enveloped_blank=text.str.contains(r"\S") & ~text.str.strip_prefix(pl.col("outer").fill_null("")).str.contains(r"\S"),
        ci_iso=pl.coalesce("ci_bracketed", "ci_plain", "ci_gitlab"),
        cri_stream="cri_stream",
        piece=(pl.col("cri_tag") == "P").fill_null(False),
        rank=pl.coalesce("rank", torch_rank, worker.field("field_1"), "mpi_rank", "task").cast(pl.Int64, strict=False),
        local_rank=pl.when(~_TORCH_RANK_TAG).then("local_rank").cast(pl.Int64, strict=False),
        clock="clock",
        pid=pl.coalesce(innermost("worker_pid"), "nccl_pid").cast(pl.Int64, strict=False),
        node_ip=innermost("node_ip"),
        gpu_index=pl.col("nccl_device").cast(pl.Int32, strict=False),
        inner=text.str.strip_prefix(pl.col("outer").fill_null("")),
    )


def _joined_pieces(layers: pl.DataFrame) -> pl.DataFrame:
    """A line the container runtime cut into pieces as one line.

    containerd and CRI-O write a line longer than 16 KiB as pieces: each but the last tagged
    P(artial), the last F(ull), in order within its stream (stdout and stderr interleave). The
    pieces' text goes on the first piece's row; the rows of the others are ``continued``.
    """
    if not layers.select(pl.col("piece").any()).item():
        return layers.with_columns(continued=pl.lit(False))
    stream = [*_partition_keys(layers), "cri_stream"]
    continued = pl.col("piece").shift(1).over(stream).fill_null(False) & pl.col("cri_stream").is_not_null()
    first = pl.col("piece") & ~pl.col("continued")
    joined = pl.col("inner").str.join("").over([*stream, "whole_line"])
    return (
        layers.with_columns(continued=continued)
        .with_columns(whole_line=(~pl.col("continued")).cum_sum().over(stream))
        .with_columns(inner=pl.when(first).then(joined).otherwise(pl.col("inner")))
        .with_columns(
            enveloped_blank=pl.when(pl.col("continued")).then(False)
            .when(first).then(~pl.col("inner").str.contains(r"\S"))
            .otherwise(pl.col("enveloped_blank")),
        )
        .drop("whole_line")
    )


# A log's JSON records pretty-printed (`kubectl logs … | jq`, `json.dumps(record, indent=2)`, an array of them as `jq -s`
# writes one): an object over several lines, its "{" and its "}" (or "},") alone on lines of their own at the same indent,
# at the file's margin or at the items' indent of a "[" alone there, every line between them indented deeper. Such an
# object that is valid JSON and names a record's time, level or message is that record, read as its JSON line would be.
_OBJECT_OPEN = r"^[ \t]*\{[ \t\r]*$"
_RECORD_KEY = '"(?:' + "|".join(re.escape(name) for field in ("time", "level", "msg") for name in _JSON_KEYS[field]) + ')": '


def _joined_objects(layers: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Each pretty-printed JSON record as one line: its lines' text joined on the row of its "{" (``object_lines``: how many
    lines it spans), the rows of the others ``continued`` and ``folded`` (lines of the record, not lines skipped)."""
    inner = pl.col("inner")
    none = {"folded": pl.lit(False), "object_lines": pl.lit(None, pl.Int32)}
    if not layers.select((inner.str.contains(_OBJECT_OPEN) & ~pl.col("continued")).any()).item():
        return layers.with_columns(**none)

    def within(expr: pl.Expr, *more: str) -> pl.Expr:
        return expr.over([*keys, *more]) if keys or more else expr

    shown = ~pl.col("blank") & ~pl.col("enveloped_blank") & ~pl.col("continued")
    indent = inner.str.len_chars() - inner.str.strip_chars_start(" \t").str.len_chars()
    rows = layers.with_columns(
        _shown=shown, _indent=pl.when(shown).then(indent), _stripped=pl.when(shown).then(inner.str.strip_chars())
    )
    # The items of a top-level array are at the indent of the line under its "[".
    margin = pl.col("_shown") & (pl.col("_indent") == 0)
    rows = rows.with_columns(_top=within(margin.cum_sum()), _below=within(pl.col("_indent").shift(-1)).fill_null(0))
    array = within(pl.col("_stripped").first() == "[", "_top") & ~margin
    rows = rows.with_columns(_base=pl.when(array).then(within(pl.col("_below").first(), "_top")).otherwise(0))
    at_base = ~pl.col("_shown") | (pl.col("_indent") <= pl.col("_base"))
    opening = pl.col("_stripped").is_in(["{"]) & (pl.col("_indent") == pl.col("_base"))
    closing = pl.col("_stripped").is_in(["}", "},"]) & (pl.col("_indent") == pl.col("_base"))
    rows = rows.with_columns(_segment=within(at_base.cum_sum()), _closing=closing.fill_null(False), _opening=opening.fill_null(False))
    rows = rows.with_columns(_closed_next=within(pl.col("_closing").shift(-1)).fill_null(False))
    # A segment opened by "{" whose next line is its "}": an object, that closing line with it.
    whole = within(pl.col("_opening").first() & pl.col("_closed_next").last(), "_segment")
    rows = rows.with_columns(_whole=whole)
    member = pl.col("_whole") | (pl.col("_closing") & within(pl.col("_whole").shift(1)).fill_null(False))
    opener = pl.when(pl.col("_whole") & pl.col("_opening")).then(pl.col("line"))
    rows = rows.with_columns(_object=pl.when(member).then(within(opener.forward_fill())))
    objects = rows.filter(pl.col("_object").is_not_null())
    if objects.is_empty():
        return layers.with_columns(**none)
    joined = objects.group_by(*keys, "_object").agg(
        pl.col("_stripped").str.join(" ").alias("_text"), pl.len().cast(pl.Int32).alias("_lines"),
    ).with_columns(_text=pl.col("_text").str.strip_suffix(","))
    # Valid JSON (json_path_match reads nothing of any other text) that names a record's time, level or message.
    joined = joined.filter(pl.col("_text").str.json_path_match("$").is_not_null() & pl.col("_text").str.contains(_RECORD_KEY))
    if joined.is_empty():
        return layers.with_columns(**none)
    rows = rows.join(joined, on=[*keys, "_object"], how="left", maintain_order="left")
    joined_row = pl.col("_lines").is_not_null()
    # An array's "[" and "]" are lines of its first and last records, where every line between them is a record's.
    opens_array = margin & (pl.col("_stripped") == "[")
    rows = rows.with_columns(
        _array_whole=within((joined_row | ~pl.col("_shown") | opens_array).all() & joined_row.any() & opens_array.any(), "_top"),
        _first_object=within(pl.col("_object").drop_nulls().first(), "_top"),
        _object_above=within(pl.col("_object").forward_fill()),
    )
    closes_array = margin & pl.col("_stripped").is_in(["]", "],"]) & within(pl.col("_array_whole").shift(1)).fill_null(False)
    bracket_of = pl.when(opens_array & pl.col("_array_whole")).then(pl.col("_first_object"))
    rows = rows.with_columns(_bracket_of=bracket_of.when(closes_array).then(pl.col("_object_above")))
    brackets = rows.filter(pl.col("_bracket_of").is_not_null()).group_by("_bracket_of").agg(_brackets=pl.len().cast(pl.Int32))
    rows = rows.join(brackets, left_on="line", right_on="_bracket_of", how="left", maintain_order="left")
    first = joined_row & (pl.col("line") == pl.col("_object"))
    folded = (joined_row & (pl.col("line") != pl.col("_object"))) | pl.col("_bracket_of").is_not_null()
    return rows.with_columns(
        inner=pl.when(first).then(pl.col("_text")).otherwise(inner),
        continued=pl.col("continued") | folded,
        folded=folded,
        object_lines=pl.when(first).then(pl.col("_lines") + pl.col("_brackets").fill_null(0)),
    ).select(*layers.columns, "folded", "object_lines")


def _numbered_as_the_file(layers: pl.DataFrame) -> pl.Expr:
    """Whether a line's bracketed number goes up with the file's lines as a viewer's does: its distance from the line's
    number is the file's commonest. MPICH's ``-prepend-rank`` and Intel MPI's ``-l`` label lines "[0] …", "[1] …" by rank."""
    offset = pl.col("viewer_line").cast(pl.Int64, strict=False) - pl.col("line")
    usual = offset.drop_nulls().mode().first()
    return offset == (usual.over("batch_file") if "batch_file" in layers.columns else usual)


def _count(tagged: pl.Expr, layers: pl.DataFrame) -> pl.Expr:
    return tagged.sum().over("batch_file") if "batch_file" in layers.columns else tagged.sum()


def _without_stray_tags(layers: pl.DataFrame) -> pl.DataFrame:
    """Undo the layers of lines whose compose-like tag ("epoch_1 | loss 0.5") or task number ("1: install
    the driver") or BuildKit-like seconds ("0.5 of the GPUs") are text: in a file written by `docker compose logs`, `srun --label`
    or `docker build` most lines wear one; elsewhere a few that look so are lines of the log. A stray task number or BuildKit
    prefix keeps the layers outside it."""
    # A level padded to its column ("INFO     | message", loguru without its stamp) is no service.
    compose = pl.col("compose").str.strip_chars_end()
    stray_compose = compose.is_not_null() & (
        (_share(compose.is_not_null(), layers) < 0.5) | compose.str.to_uppercase().is_in(LEVEL_WORDS.split("|"))
    )
    stray = layers.select(compose=stray_compose.any(), **{group: _stray(group, layers).any() for group in _STRAY_LAYERS}).row(0, named=True)
    if stray["compose"]:
        layers = layers.with_columns(pl.when(~stray_compose).then(pl.col(name)).alias(name) for name in _OUTER_FIELDS)
    for group in (group for group in _STRAY_LAYERS if stray[group]):
        stray_rows = _stray(group, layers)
        outside = pl.col("text").str.extract(_ABOVE[group], 0)
        above = _where(layers, stray_rows, lambda rows, outside=outside: rows.select(above=outside), {"above": pl.String()})
        layers = above.with_columns(
            *(pl.when(~stray_rows).then(pl.col(name)).alias(name) for name in _GROUPS_FROM[group]),
            outer=pl.coalesce("above", "outer"),
        ).drop("above")
    return layers


# What a training script numbers at a line's start ("rank0: ", "epoch3: ", "step_120: ") has pdsh's host shape: a label.
# So has a program whose name holds a digit, before its diagnostic: GCC's passes and linker wrapper ("collect2: fatal error:
# ld terminated with signal 9", "cc1plus: warning: …"), a tool named for its target or its version ("x86_64-linux-gnu-gcc:
# error: …", "gcc-11: fatal error: …", "python3: can't open file …"). Not node.js: "node01" is a cluster's commonest host name.
_NOT_A_HOST = (
    r"^(?i:rank|epoch|step|iter|iteration|batch|layer|gpu|cuda|device|thread|proc|process|job|task|worker)[_\-]?[0-9]+$"
    r"|^(?:collect2|cc1(?:plus|obj|objplus)?|lto1|f951)$"
    r"|^(?:[0-9A-Za-z_]+-)*(?:gcc|cc|cpp|gfortran|clang|ld|as|ar|nm|strip|objcopy|ranlib|nvcc)(?:-[0-9]+(?:\.[0-9]+)*)?$"
    r"|^(?:python|pypy|pip|perl|ruby|java|cmake|bash)[0-9]+(?:\.[0-9]+)*$"
)
_NOT_THE_LAYER = {"pdsh_host": _NOT_A_HOST}
# torch's tag of the global rank where no torchrun tag is outside it (the regex crate has no look-ahead to keep it out).
_TORCH_RANK_TAG = (pl.col("torchrun_role") == "rank").fill_null(False)


def _role_share(layers: pl.DataFrame) -> pl.Expr:
    """The share of its file's lines that wear the same torchrun role's tag as a line ("[trainer0]:", "[trainer3]:")."""
    file = ["batch_file"] if "batch_file" in layers.columns else []
    same_role = pl.len().over([*file, "torchrun_role"])
    return same_role / (pl.len().over(file) if file else pl.len())


# A viewer numbers every line it shows, blank ones too; a program's "[pid] " on one line of two is no viewer's, nor a
# number on a line or two (a file of one line "[80817] " is a pid's tag, not a viewer's count).
_WORN_SHARE = {"viewer_line": 0.9}
_LEAST_WORN = {"viewer_line": 3}


def _stray(group: str, layers: pl.DataFrame) -> pl.Expr:
    """Lines wearing the layer of ``group`` in a file most of whose lines do not, or whose layer is text by its words."""
    worn = pl.col(group).is_not_null()
    if group in _NOT_THE_LAYER:
        worn = worn & ~pl.col(group).str.contains(_NOT_THE_LAYER[group])
    if group == "viewer_line":
        worn = worn & _numbered_as_the_file(layers)
    if group == "torchrun_role":
        return worn & ~_TORCH_RANK_TAG & (_role_share(layers) < 0.5)
    few = _count(worn, layers) < _LEAST_WORN.get(group, 1)
    return pl.col(group).is_not_null() & (~worn | (_share(worn, layers) < _WORN_SHARE.get(group, 0.5)) | few)


def _peel_application(peeled: pl.DataFrame) -> pl.DataFrame:
    inner = pl.col("inner")
    layers = peeled.with_columns(
        json_text=pl.when(inner.str.contains(r"^\s*\{.*\}\s*$")).then(inner),
        app=_APP_GROUPS,
    ).unnest("app")
    layers = _without_loggerless_log4j(layers)
    layers = _json_fields(layers)
    app_format = pl.when(pl.col("j_body").is_not_null()).then(pl.lit("json_lines"))
    for name, witness in _APP_WITNESS.items():
        app_format = app_format.when(pl.col(witness).is_not_null()).then(pl.lit(name))
    # CANN's code is its message's first word ("EZ1001: tensor 0 not implemented for DT_UINT64, …").
    cann_body = pl.when(pl.col("cann_code").is_not_null()).then(
        pl.format("{}: {}", "cann_code", inner.str.strip_prefix(pl.col("app")).str.strip_chars_start())
    )
    glued_body = pl.when(pl.col("glued_tag").is_not_null()).then(pl.concat_str("glued_tag", inner.str.strip_prefix(pl.col("app"))))
    oslo_body = pl.when(pl.col("oslo_context").is_not_null()).then(pl.format("{} {}", "oslo_context", inner.str.strip_prefix(pl.col("app"))))
    layers = layers.with_columns(
        app_format=app_format, body=pl.coalesce("j_body", cann_body, glued_body, oslo_body, inner.str.strip_prefix(pl.col("app")), inner)
    )
    # Ray's C++ log names its component after the header ("[2023-04-19 16:22:19,798 E 329 329] (raylet) node_manager.cc:3069: …",
    # raylet.out and gcs_server.out as written): the process, as the driver's "(raylet) " tag before a line names it. A tag
    # outside the line (the driver's, a worker's) is kept; the component stays in the message.
    ray_component = pl.when(pl.col("ray_sev").is_not_null()).then(pl.col("body")).str.extract(rf"^\(({_RAY_DAEMONS})\)(?:[ \t]|$)", 1)
    layers = layers.with_columns(process=pl.coalesce("process", ray_component, "celery_process"))
    # logrus' text formatter pads a message to 44 columns (for the fields after it): the padding is no part of the message.
    padded = pl.col("logrus_level").is_not_null()
    layers = layers.with_columns(body=pl.when(padded).then(pl.col("body").str.strip_chars_end(" ")).otherwise(pl.col("body")))
    # SGLang's tensor-parallel rank in its stamp's bracket ("[2025-05-19 23:22:28 TP3]") is the worker's rank where no
    # data, pipeline or expert-parallel rank is given beside it. Only the first line of a message wears it: unlike a
    # rank's tag, it does not set the line's partition.
    sglang_ranks = pl.when(pl.col("app_iso").is_not_null()).then(pl.col("app")).str.extract(_SGLANG_RANKS, 1)
    tp_rank = sglang_ranks.str.extract(r"^TP([0-9]+)$", 1)
    trt_rank = pl.when(pl.col("trt_sev").is_not_null()).then(pl.col("app")).str.extract(r"\[RANK ([0-9]+)\]", 1)
    npu_rank = pl.when(~pl.col("npu_rank").str.starts_with("-")).then(pl.col("npu_rank"))
    # text-generation-inference's launcher names the shard it lost by its rank: "Shard 0 failed to start", "Shard 1 crashed",
    # "Shard terminated rank=1" ("shard terminated rank=3" in 2.x).
    tgi = pl.when(pl.col("body").str.contains(r"text_generation_launcher: [Ss]hard ")).then(pl.col("body"))
    tgi_rank = pl.coalesce(
        tgi.str.extract(r"Shard ([0-9]+) (?:failed to start|crashed)$", 1), tgi.str.extract(r"[Ss]hard terminated rank=([0-9]+)$", 1)
    )
    layers = layers.with_columns(
        header_rank=pl.coalesce(tp_rank, trt_rank, npu_rank, "npu_log_rank", tgi_rank).cast(pl.Int64, strict=False),
        parallel_ranks=_sglang_parallel_ranks(sglang_ranks),
    )
    if not layers.select(pl.col("rich_level").is_not_null().any()).item():
        return layers
    # rich's caller, at the end of the line, is no part of the message.
    rich_body = pl.when(pl.col("rich_level").is_not_null()).then(pl.col("body")).str.replace(_RICH_CALLER, "")
    return layers.with_columns(body=pl.coalesce(rich_body, "body"))


# The ranks in SGLang's stamp bracket ("[2025-09-22 10:25:22 DP1 PP1]": "DP1 PP1").
_SGLANG_RANKS = r"^\[[0-9T:.,\- ]+ ((?:[DTPE]P[0-9]+ ?)+)\]"


def _sglang_parallel_ranks(ranks: pl.Expr) -> pl.Expr:
    """SGLang's stamp ``ranks`` by their parallelism ("DP1 PP1": ``"dp_rank":1,"pp_rank":1``), a ``line_attrs`` run.

    Beside a data-, pipeline- or expert-parallel rank no one of them is the worker's global rank (how they combine depends
    on the server's settings), so each is kept by its name; a tensor-parallel rank alone is the rank (header_rank).
    """
    named = {
        f"{kind.lower()}_rank": json_number(ranks.str.extract(rf"\b{kind}([0-9]+)", 1).cast(pl.Int64)) for kind in ("DP", "TP", "PP", "EP")
    }
    return pl.when(ranks.str.contains(r"\b[DPE]P[0-9]")).then(json_run(named))


_LOG4J_GROUPS = tuple(re.findall(r"\(\?<(log4j_[a-z]+)>", _APP_HEADERS["log4j"]))


def _without_loggerless_log4j(layers: pl.DataFrame) -> pl.DataFrame:
    """Undo a log4j header that no ``Logger: `` follows, leaving the line headerless."""
    loggerless = pl.col("log4j_level").is_not_null() & ~pl.col("inner").str.strip_prefix(pl.col("app")).str.contains(
        r"^[A-Za-z_][0-9A-Za-z_.$]*: "
    )
    if not layers.select(loggerless.any()).item():
        return layers
    return layers.with_columns(pl.when(~loggerless).then(pl.col(name)).alias(name) for name in ("app", *_LOG4J_GROUPS))


def _torch_glog_pid() -> pl.Expr:
    # (Linux's PID_MAX_LIMIT: torch 2.4's thread ids are far above it.) A line that names a pid is of that process, not
    # of the agent that logged it ("failed (exitcode: 1) local_rank: 3 (pid: 33054) of binary: …").
    number = pl.col("glog_py_pid").cast(pl.Int64, strict=False)
    return pl.when((number <= _PID_MAX_LIMIT) & ~pl.col("body").str.contains(r"\bpid\b")).then(number)


def _severity(word: pl.Expr) -> pl.Expr:
    return word.str.to_uppercase().replace_strict(_SEVERITY, default=None, return_dtype=pl.String)


def _dated(rows: pl.DataFrame, tz: str) -> pl.DataFrame:
    # Every format is tried (and compiled) only for a batch whose stamps are not all of a common shape.
    shaped = rows.select(timeutil.iso_shaped(pl.col("dated_raw")).all()).item()
    to_utc = timeutil.iso_shaped_to_utc if shaped else timeutil.iso_to_utc
    return rows.select(ts_dated=to_utc(pl.col("dated_raw"), tz))


def _clock_dated(stamped: pl.DataFrame, resolved: pl.Expr, ctx: ParseContext, batch: bool) -> pl.DataFrame:
    """``stamped`` with ``ts_clock`` and ``clock_quality`` of its lines that give a time of day alone.

    The day is that of the last line before it (in its file) that gives a full time, a day
    later where the clock went back more than 12 hours; before any, that of the file's
    reference time (its mtime), a day earlier where the line would land after it.
    """
    stamped = stamped.with_columns(clock_last=resolved.forward_fill().over("batch_file") if batch else resolved.forward_fill())
    references = [reference for _, reference in ctx.files] if batch and ctx.files else [ctx.reference_time]
    reference = per_file(references, _UTC) if batch and ctx.files else pl.lit(ctx.reference_time, _UTC)
    last = pl.col("clock_last")

    def on_day_of(moment: pl.Expr) -> pl.Expr:
        day = moment.dt.convert_time_zone(ctx.tz).dt.strftime("%Y-%m-%d")
        return timeutil.iso_to_utc(pl.format("{} {}", day, pl.col("clock_raw")), ctx.tz)

    def dated(rows: pl.DataFrame) -> pl.DataFrame:
        half_day, day = pl.duration(hours=12), pl.duration(days=1)
        rows = rows.with_columns(after_last=on_day_of(last), on_reference_day=on_day_of(reference) if any(references) else None)
        after_last = pl.when(pl.col("after_last") < last - half_day).then(pl.col("after_last") + day).otherwise(pl.col("after_last"))
        on_reference_day = pl.col("on_reference_day").cast(_UTC)
        before_reference = pl.when(on_reference_day > reference).then(on_reference_day - day).otherwise(on_reference_day)
        return rows.select(
            ts_clock=pl.coalesce(after_last, before_reference),
            clock_quality=pl.when(last.is_not_null()).then(pl.lit("year_inferred")).otherwise(pl.lit("year_from_mtime")),
        )

    # Only the lines that need it pay for the dates.
    return _where(stamped, pl.col("clock_raw").is_not_null(), dated, {"ts_clock": _UTC, "clock_quality": pl.String()})


def _on_24_hours(clock: pl.Expr, half: pl.Expr) -> pl.Expr:
    """A time of day ("HH:MM:SS…") on the 24-hour clock, where ``half`` (AM, PM or null) says it was on the 12-hour one."""
    hour = clock.str.slice(0, 2).cast(pl.Int32, strict=False)
    hour = pl.when(half == "PM").then(hour % 12 + 12).when(half == "AM").then(hour % 12).otherwise(hour)
    return pl.format("{}{}", hour.cast(pl.String).str.zfill(2), clock.str.slice(2))


def _date_command_stamp() -> pl.Expr:
    """date(1)'s or ctime's stamp as ISO text: 24-hour, with its offset where it gives one (a zone name whose offset is
    not in doubt, :data:`rca.timeutil.ZONE_MINUTES`, or a number; any other is read in --tz, as a stamp without one)."""
    c = pl.col
    clock = _on_24_hours(c("date_clock"), c("date_half"))
    offset = pl.format(" {}", timeutil.offset_text(timeutil.zone_minutes(c("date_zone"))))
    stamp = timeutil.ctime_string(c("date_year"), c("date_mon"), c("date_day"), clock)
    return pl.when(c("date_year").is_not_null()).then(pl.concat_str(stamp, offset.fill_null("")))


def _resolve(layers: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    c = pl.col
    # A time of 0 is a field left unset (torchelastic's events all give "timestamp": 0), not the epoch's first second.
    json_time = pl.when((c("app_format") == "json_lines") & ~c("j_time").str.contains(r"^0+(?:\.0+)?$")).then(c("j_time"))
    json_epoch = json_time.str.contains(r"^[0-9]{9,19}(?:\.[0-9]+)?$")
    log4j = pl.when(c("log4j_level").is_not_null()).then(
        pl.format("20{}-{}-{} {}", c("log4j_yy"), c("log4j_mon"), c("log4j_day"), c("log4j_clock"))
    )
    compact = c("compact_raw")
    log4j_compact = pl.format(
        "20{}-{}-{} {}:{}:{}", compact.str.slice(0, 2), compact.str.slice(2, 2), compact.str.slice(4, 2),
        compact.str.slice(7, 2), compact.str.slice(9, 2), compact.str.slice(11, 2),
    )
    batch = "batch_file" in layers.columns
    if layers.select(c("rich_level").is_not_null().any()).item():
        # rich's blank stamp repeats the one above.
        stamp_above = c("rich_stamp").forward_fill().over("batch_file") if batch else c("rich_stamp").forward_fill()
        layers = layers.with_columns(rich_stamp=pl.when(c("rich_level").is_not_null()).then(pl.coalesce("rich_stamp", stamp_above)))
    rich_stamp = c("rich_stamp")
    rich_dated = rich_stamp.str.len_bytes() > 8
    rich = pl.when(rich_dated).then(
        pl.format("20{}-{}-{} {}", rich_stamp.str.slice(6, 2), rich_stamp.str.slice(0, 2), rich_stamp.str.slice(3, 2), rich_stamp.str.slice(9))
    )
    us_stamp = c("us_stamp")
    month_first = us_stamp.str.slice(0, 2).cast(pl.Int32, strict=False) <= 12
    us_date = pl.format(
        "{}-{}-{} {}", us_stamp.str.slice(6, 4), pl.when(month_first).then(us_stamp.str.slice(0, 2)).otherwise(us_stamp.str.slice(3, 2)),
        pl.when(month_first).then(us_stamp.str.slice(3, 2)).otherwise(us_stamp.str.slice(0, 2)), _on_24_hours(us_stamp.str.slice(11), c("us_half")),
    )
    # Gin's "2024/08/19 - 14:13:01" as Go's log writes it.
    gin = pl.concat_str(c("gin_stamp").str.slice(0, 10), c("gin_stamp").str.slice(12))
    trt_stamp = c("trt_stamp")
    trt = pl.format("{}-{}-{} {}", trt_stamp.str.slice(6, 4), trt_stamp.str.slice(0, 2), trt_stamp.str.slice(3, 2), trt_stamp.str.slice(11))
    ctime = pl.when(c("ctime_year").is_not_null()).then(timeutil.ctime_string(c("ctime_year"), c("ctime_mon"), c("ctime_day"), c("ctime_clock")))
    glog_dated = pl.when(c("glog_year").is_not_null()).then(
        pl.format("{}-{}-{} {}", "glog_year", c("glog_mon").str.zfill(2), "glog_day", "glog_clock")
    )
    date_cmd = _date_command_stamp()
    # torch_npu's and CANN's stamps ("2025-10-10-14:03:52.302.004", "2025-12-29 13:22:34:096"): the date, the time, then the
    # fraction of a second in groups of three digits.
    npu_stamp = pl.coalesce("npu_stamp", "cann_stamp", "npu_log_stamp")
    npu_fraction = npu_stamp.str.slice(19).str.replace_all(r"[^0-9]", "")
    npu = pl.format("{} {}", npu_stamp.str.slice(0, 10), npu_stamp.str.slice(11, 8)) + pl.when(npu_fraction != "").then(
        pl.format(".{}", npu_fraction)
    ).otherwise(pl.lit(""))
    # Bazel's first line with --show_timestamps gives the date of its time of day ("(15:24:07) INFO: Current date is 2019-05-20").
    bazel_day = pl.when(c("bazel_clock").is_not_null()).then(c("body")).str.extract(r"^INFO: Current date is ([0-9]{4}-[0-9][0-9]-[0-9][0-9])\s*$", 1)
    dated = pl.coalesce(
        "ci_iso", "hf_iso", "celery_iso", pl.format("{} {}", bazel_day, c("bazel_clock")), "app_iso", "go_stamp", "paddle_stamp", "pingcap_stamp", gin, log4j, log4j_compact, "ray_iso", "logfmt_time", rich, "nemo_iso", us_date, ctime,
        trt, date_cmd, "tornado_iso", npu,
        "runner_iso", glog_dated, "glued_iso",
        pl.when(json_time.is_not_null() & ~json_epoch).then(json_time),
        # a tailer's time, where the line gives none of its own
        "tail_ts",
    )
    header_level = pl.coalesce(
        "vllm_level", "oslo_level", "logcat_sev", "cbs_level", "hf_level", "glog_sev", "c10d_sev", "log4j_level", "compact_level", c("log4j2_level").str.strip_chars_end(), "kserve_level",
        "paddle_level", "pingcap_level", "ray_sev", "logfmt_level", "logfmt_level_first", "iso_level", "iso_level_first", "tsl_sev",
        "caller_level", "rich_level", "nemo_sev", "loguru_level", "nanotron_level", "cosmos_level", "trt_sev", "trtllm_level", "tornado_sev",
        "llama_sev", "runner_level", "smp_sev", "celery_level", "logrus_level", "npu_level", "npu_log_level", "gunicorn_level",
        # CANN prints its error messages only
        pl.when(c("cann_stamp").is_not_null()).then(pl.lit("ERROR")),
        pl.when(c("app_format") == "json_lines").then(c("j_level")),
    )
    stamped = layers.with_columns(
        dated_raw=dated,
        epoch_any=pl.coalesce("epoch", "glog_epoch", pl.when(json_epoch).then(json_time)),
        yearless_any=pl.coalesce("vllm_raw", "logcat_raw", pl.when(c("glog_year").is_null()).then(c("glog_raw")), "cosmos_stamp"),
        header_level=header_level,
    ).with_columns(
        epoch_raw=pl.when(c("dated_raw").is_null()).then(c("epoch_any")),
        yearless_raw=pl.when(c("dated_raw").is_null() & c("epoch_any").is_null()).then(c("yearless_any")),
        # A time of day counts where the line gives no other time.
        clock_raw=pl.when(c("dated_raw").is_null() & c("epoch_any").is_null() & c("yearless_any").is_null())
        .then(pl.coalesce("clock", pl.when(~rich_dated).then(rich_stamp), "tornado_clock", "bazel_clock")),
        leading=_LEADING_GROUPS,
    )
    stamped = _where(stamped, c("dated_raw").is_not_null(), lambda rows: _dated(rows, ctx.tz), {"ts_dated": _UTC})
    stamped = _where(
        stamped, c("epoch_raw").is_not_null(), lambda rows: rows.select(ts_epoch=timeutil.epoch_to_utc(c("epoch_raw"))),
        {"ts_epoch": _UTC},
    )
    # A yearless line's year can depend on the lines before it that give a month.
    cosmos = c("cosmos_stamp")
    month = pl.coalesce("vllm_mon", "logcat_mon", "glog_mon", cosmos.str.slice(0, 2)).cast(pl.Int32, strict=False)
    yearless_ts, yearless_quality = timeutil.yearless_to_utc(
        month, pl.coalesce("vllm_day", "logcat_day", "glog_day", cosmos.str.slice(3, 2)),
        pl.coalesce("vllm_clock", "logcat_clock", "glog_clock", cosmos.str.slice(6)), ctx,
        within="batch_file" if batch else None,
    )
    any_yearless = stamped.select(c("yearless_raw").is_not_null().any()).item()
    stamped = _where(
        stamped, month.is_not_null() & any_yearless, lambda rows: rows.select(ts_yearless=yearless_ts), {"ts_yearless": _UTC}
    )
    resolved = pl.coalesce("ts_dated", "ts_epoch", pl.when(c("yearless_raw").is_not_null()).then(c("ts_yearless")))
    if stamped.select(c("clock_raw").is_not_null().any()).item():
        stamped = _clock_dated(stamped, resolved, ctx, batch)
    else:
        stamped = stamped.with_columns(ts_clock=pl.lit(None, _UTC), clock_quality=pl.lit(None, pl.String))
    quality = (
        pl.when(c("dated_raw").is_not_null() | c("epoch_raw").is_not_null()).then(pl.lit("exact"))
        .when(c("yearless_raw").is_not_null()).then(yearless_quality)
        .when(c("ts_clock").is_not_null()).then(c("clock_quality"))
        .otherwise(pl.lit("missing"))
    )
    leading = c("leading").struct
    printed_level = pl.coalesce(
        c("header_level"), leading.field("level"), leading.field("title"), leading.field("gh"), leading.field("nccl"),
        leading.field("tool"), leading.field("airflow"), leading.field("titled"), leading.field("spdlog"), leading.field("cpp"),
        leading.field("logger_level"), leading.field("apache"), leading.field("jul"), leading.field("npm"), c("ci_level"),
    )
    is_c10d = c("glog_bracket").is_not_null() | c("c10d_sev").is_not_null()
    # The lines without a stamp under a log4j2 line (the stack trace log4j prints of the exception it logs) are its thread's.
    any_stamp = pl.any_horizontal(c(name).is_not_null() for name in ("dated_raw", "epoch_raw", "yearless_raw", "clock_raw"))
    thread = pl.when(any_stamp).then(c("log4j2_thread").fill_null("")).forward_fill()
    thread = thread.over(writers) if (writers := _partition_keys(stamped)) else thread
    node = pl.coalesce("j_node", "tail_host")
    host = pl.coalesce(node, "j_host", "nccl_host", "pdsh_host")
    return stamped.with_columns(
        ts=pl.coalesce(resolved, "ts_clock"),
        ts_raw=pl.coalesce(
            pl.when(c("dated_raw") == log4j).then(c("log4j_raw")), pl.when(c("dated_raw") == date_cmd).then(c("date_raw")),
            pl.when(c("dated_raw") == npu).then(npu_stamp), pl.when(c("dated_raw") == log4j_compact).then(compact),
            "dated_raw", "epoch_raw", "yearless_raw", "clock_raw",
        ),
        ts_quality=quality,
        severity=_severity(printed_level),
        format=pl.coalesce(
            pl.when(is_c10d).then(pl.lit("torch_c10d")).otherwise(c("app_format")),
            pl.when(c("nccl_host").is_not_null()).then(pl.lit("nccl")),
            pl.when(c("ci_iso").is_not_null()).then(pl.lit("iso8601")),
            pl.lit("text"),
        ),
        pid=pl.coalesce(
            c("pid"),
            pl.coalesce(
                "ray_pid", "oslo_pid", "logcat_pid", "caller_pid", "caller_dcgm_pid", "kserve_pid", "gunicorn_pid", "tsl_pid", "npu_pid", "cann_pid", "cann_pid_first", "npu_log_pid", "j_pid",
            ).cast(pl.Int64, strict=False),
            _torch_glog_pid(),
            c("glog_nvc_pid").cast(pl.Int64, strict=False),
        ),
        # torch_npu's Device (-1 where it could not tell)
        gpu_index=pl.coalesce(
            "gpu_index", pl.when(~c("npu_device").str.starts_with("-")).then(c("npu_device")).cast(pl.Int32, strict=False)
        ),
        host=host,
        # The host a collector or a tailer named is the node the line came from (see rca.ingest.finish_batch_events);
        # null where the line names no host, so that a record's flag is its host's line's.
        host_named=pl.when(host.is_not_null()).then(node.is_not_null()),
        pod=pl.coalesce("pod", "j_pod"),
        namespace=pl.coalesce("tail_namespace", "j_namespace"),
        container=pl.coalesce("container", "j_container", "logfmt_container"),
        rank=pl.coalesce("rank", "header_rank"),
        # The tags the line's prefixes carried, not what its JSON says: records never span them. A log4j2 line's thread
        # is its writer (a TorchServe worker's output comes a line an entry, between the frontend's lines about it).
        # pdsh's host keeps the lines of two nodes' tasks apart (both print "[rank0]: …").
        partition=pl.concat_str(
            [c("pdsh_host")] + [c(name).cast(pl.String).fill_null("") for name in ("rank", "local_rank", "pid", "pod")]
            + [pl.coalesce(c("container"), thread).fill_null("")],
            separator="|",
            ignore_nulls=True,
        ),
    )
