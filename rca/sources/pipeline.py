"""The pipeline source: training jobs, inference servers, CI runners, and every other text file.

It claims files with unmistakable ML-pipeline or CI markers (PyTorch OOMs and tracebacks,
NCCL watchdogs, vLLM and transformers log headers, GitHub Actions / GitLab / Buildkite
lines) and is the catch-all for text nobody else claims, with a low score for plain text.

Parsing runs in three whole-column passes: :mod:`._pipeline_frame` peels prefixes and
resolves time per line, :mod:`._pipeline_records` groups tracebacks and stack dumps into
records, and :mod:`._pipeline_rules` (with :mod:`._pipeline_attrs`) decides each record's
kind, facts and attrs. Most lines of a training log are routine, so records are first sorted
by what the rules may make of them: nothing (a plain log line, which skips the rules), only
progress attrs (losses, vLLM metrics), or anything (incidents and multi-line records).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import polars as pl

from rca import timeutil
from rca.sources import _log_exports, _nvsmi_table, _pipeline_batch, _pipeline_slurm, _syslog, register
from rca.sources._base import (
    ParseContext, Parsed, Source, add_skipped, by_head, file_column, forward_fill_within, joined_json, one_head, split_rows, starts_file,
    within_file,
)
from rca.sources._pipeline_attrs import json_flag, json_number, json_object, json_text, with_attrs
from rca.sources._pipeline_frame import frame
from rca.sources._pipeline_records import PY_WARNING_LINE, RAY_TASK_HEADER, records
from rca.sources._pipeline_rules import (
    GGML_BUFFER,
    INCIDENT_RULE,
    INCIDENTS,
    PROGRESS,
    PROGRESS_RULE,
    exception_facts,
    extract,
    gate_families,
    kind_and_severity,
    spells,
)

FORMATS = (
    "json_lines", "vllm", "oslo", "logcat", "windows_cbs", "hf_transformers", "torch_c10d", "klog", "gunicorn", "go_log", "paddle", "pingcap", "gin", "log4j", "log4j_compact", "log4j2", "ray", "logfmt", "iso8601_glued",
    "iso8601", "epoch", "tensorflow", "nccl", "rich", "ctime", "tensorrt", "actions_runner", "date_cmd", "tornado", "torch_npu", "cann",
    "torch_npu_log", "logrus_text", "celery", "bazel", "bgl_ras", "hpc_syslog", "text",
    "table",  # an nvidia-smi table printed in the log, read by the nvidia_smi source's table parser
)

_MARKERS = "|".join(
    (
        r"(?:CUDA|HIP|XPU|NPU|MPS backend) out of memory", r"OutOfMemoryError", r"[Tt]raceback \(most recent call last\)(?::|$)", r"ProcessGroupNCCL",
        r"Watchdog caught collective operation timeout", r"DataLoader worker \(pid", r"insufficient shared memory \(shm\)",
        r"^(?:[0-9]{4}-[0-9][0-9]-[0-9][0-9]T\S+ )?(?:##\[(?:error|warning|group|endgroup)\]|::(?:error|warning|group)::)",
        # GitLab's runner (17.0+, FF_TIMESTAMPS) stamps each line and names its stream ("2026-05-08T09:28:43.725057Z 00O+Preparing …")
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9:.]+Z [0-9a-f][0-9a-f][OE](?:\+| |$)",
        r"Process completed with exit code [0-9]+", r"ERROR: Job failed",
        # GCC's driver of a compiler pass a signal ended, Docker's legacy builder of a failed step, Jenkins losing its agent
        r"(?:fatal|internal compiler) error: [A-Z][a-z]+(?: [a-z]+)* (?:signal terminated program|\(program) ",
        # ... and collect2's of the linker ("collect2: fatal error: ld terminated with signal 9 [Killed]")
        r"^collect2: (?:fatal )?error: \S+ terminated with signal [0-9]+",
        # ... nvcc's of a CUDA compiler pass ("nvcc error   : 'cicc' died due to signal 9"), Bazel's client of its lost build
        # server, pytest-xdist's controller of a worker that crashed mid-test
        r"nvcc error +: '[^']+' died due to signal [0-9]+", r"Server terminated abruptly \(error code: [0-9]+",
        # the NVIDIA container toolkit refusing a GPU container's start ("nvidia-container-cli: device error: 3: unknown device")
        r"nvidia-container-cli: [a-z]+ error: ",
        r"\] node down: Not properly terminated\s*$", r"^worker '[^']+' crashed while running ",
        # Jenkins' durable-task losing its sh step's wrapper script (before "script returned exit code -1")
        r"wrapper script does not seem to be touching the log file in ",
        r"returned a non-zero code: -?[0-9]+", r"^Cannot contact \S+: (?:java|hudson)\.", r"script returned exit code -?[0-9]+",  # Jenkins' sh step r"^Running with gitlab-runner",
        r"^(?:\[[0-9T:.Z-]+\] )?(?:~~~|---|\+\+\+) (?:Running|Preparing|Setting up|Cleaning)", r"exited with status -?[0-9]+",
        r"The runner has received a shutdown signal", r"lost communication with the server\.", r"line [0-9]+: +[0-9]+ (?:Killed|Terminated|Aborted|Segmentation fault|Bus error)(?: |$)", r"^Killed$",
        r"=+ test session starts =+", r"XidCriticalError: Xid=", r"device marked unhealthy",
        # the GPU operator's driver container and the legacy dcgm-exporter's wrapper script, on their consoles
        r"^=+ NVIDIA Software Installer =+$", r"^(?:Starting|Stopping) NVIDIA host engine\.\.\.$",
        # libnvidia-container's debug log (nvidia-container-cli), and a device plugin's admission failure of an unhealthy GPU
        r"\bnvc(?:_[a-z]+)?\.c:[0-9]+\] ", r"cannot allocate unhealthy devices ",
        # a JS monorepo's build in CI: yarn's report of a script's end, lerna's of a package's, Yarn 2+'s of a workspace's
        r'error Command failed with (?:exit code [0-9]+|signal "SIG[A-Z0-9]+")\.', r"^lerna ERR! ",
        # ... and npm's error block of a script that failed ("npm ERR! code ELIFECYCLE", 7+'s "npm ERR! signal SIGKILL", later "npm error")
        r"^npm (?:ERR!|error) (?:code|errno|signal|command failed)\b", r"\bYN[0-9]{4}: .*Process exited \(exit code [0-9]+\)",
        # ... npm's warnings (npm 8 and before in capitals: "npm WARN deprecated …", "npm warn old lockfile")
        r"^npm (?:WARN|warn) ",
        # Celery's worker log header, maybe behind docker compose's service ("[2018-01-10 10:58:09,805: INFO/MainProcess] ")
        r"\[[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:]{8},[0-9]{3}: (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)/[A-Za-z][0-9A-Za-z_.\-]*\] ",
        # Bazel's console: its time of day with --show_timestamps before its level ("(15:27:35) ERROR: "), and its build's summary
        r"^\([0-9][0-9]:[0-9][0-9]:[0-9][0-9]\) (?:INFO|WARNING|ERROR|DEBUG): ", r"^(?:\([0-9:]{8}\) )?INFO: Elapsed time: [0-9.]+s, Critical Path: ",
        r"^(?:@[a-z0-9][a-z0-9._\-]*/[a-z0-9][a-z0-9._\-]*: |➤ YN[0-9]{4}: \[[^\]]+\]: )Killed$",
        # the Trainer's dict, also behind a job platform's log viewer's line number ("[1757] {'loss': …")
        r"\*{5} Running [0-9A-Za-z_]+ \*{5}", r"^(?:\[[0-9]{1,9}\] )?\{'(?:loss|eval_loss|train_runtime|train_loss)'", r"# GPU blocks: [0-9]+",
        r"KV cache", r"EngineCore", r"text_generation_launcher: ", r"Memory profiling results", r"(?:Loading model weights|Model loading) took",
        r"torch\.distributed", r"BackendCompilerFailed: backend=",
        # SGLang's refusal to start for want of memory for its KV-cache pool; Lightning's watcher of the ranks it launched
        r"Please try to increase --mem-fraction-static", r"Forcefully terminating all other processes to avoid zombies",
        # the replica tag of Alibaba PAI-DLC's job log ("[dlc163vnre3d5pv3-master-0] ")
        r"^\[dlc[0-9a-z]+-(?:master|worker)-[0-9]+\] ",
        # stern's word when it starts or stops tailing a container ("+ trainer-0 › pytorch", "+ ml trainer-0 › pytorch" with
        # --all-namespaces); Loki's `logcli query` before each line ("2024-05-01T12:00:00Z {pod="trainer-0"} "), the stream's
        # labels in braces, and the labels all its lines share above them ("Common labels: {namespace="ml"}")
        r"^[+-] (?:[a-z0-9][a-z0-9\-]* )?[a-z0-9][a-z0-9.\-]* › [a-z0-9][a-z0-9\-]*$", r'^Common labels: \{[A-Za-z_][0-9A-Za-z_]*="',
        r'^[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9:.]+(?:Z|[+-][0-9][0-9]:[0-9][0-9]) \{(?:[A-Za-z_][0-9A-Za-z_]*="[^"]*"(?:, )?)*\}(?: |$)',
        # Jenkins' controller log: its stamp, the thread's id, the java.util.logging level between tabs
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:.]+[+-][0-9]{4} \[id=[0-9]+\]\s+(?:SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST)\s",
        # torch_npu's error-code line and CANN's error message (Ascend NPUs), the date and the time joined by "-"
        r"\(PID:[0-9]+, Device:-?[0-9]+, RankID:-?[0-9]+\)", r"^E[0-9A-Z][0-9]{4}:? ?(?:\[PID: [0-9]+\] )?[0-9]{4}-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]:",
        # torchrun's ChildFailedError table, cut from the launcher's traceback above it; Ray's count of a line's repeats
        r"^\s*(?:exitcode\s*: -?[0-9]+ \(pid: [0-9]+\)|Root Cause(?: \(first observed failure\))?:$)", r"\[repeated [0-9]+x across cluster\]",
        r"NCCL (?:WARN|INFO|error)", r"java\.lang\.OutOfMemoryError",
        # Loghub's supercomputer logs (Blue Gene/L's RAS log, Thunderbird's syslog): an alert label, the epoch second, the date
        r"^(?:-|[A-Z][0-9A-Z_]*) 1[0-9]{9} [0-9]{4}\.[0-9][0-9]\.[0-9][0-9] \S+ (?:[0-9]{4}-[0-9][0-9]-[0-9][0-9]-[0-9.]{15} |[A-Z][a-z][a-z] +[0-9]{1,2} [0-9:]{8} )",
        r"fatal error: (?:runtime: )?out of memory", r"NVIDIA driver on your system is too old",
        # nvidia-smi failing in a job or a container (no driver libraries mounted, the driver gone)
        r"NVIDIA-SMI couldn't find libnvidia-ml\.so", r"NVIDIA-SMI has failed because",
        # the GPU operator's validator before each command of a check it runs ("running command chroot with args
        # [/run/nvidia/driver nvidia-smi]")
        r"running command \S+ with args \[",
        # CircleCI's task agent, of a step's process a signal ended (Go's name of it)
        r'^Received "(?:killed|terminated|segmentation fault|aborted|bus error)" signal\s*$',
        # bitsandbytes' CUDA check ("Error named symbol not found at line 116 in file bitsandbytes/csrc/ops.cu")
        r"^Error [a-z][a-z ]*[a-z] at line [0-9]+ in file \S+\.cuh?$",
        # Vulkan's device out of memory (ggml's Vulkan backend, Omniverse Kit, Mesa)
        r"Device memory allocation of size [0-9]+ failed", r"ERROR_OUT_OF_DEVICE_MEMORY",
        # PaddlePaddle's GPU allocator out of memory
        r"Out of memory error on GPU [0-9]+\. Cannot allocate",
        # ggml's CUDA check before 2024 ("CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory")
        r"CUDA error [0-9]+ at \S+:[0-9]+: ",
        # KubeSpawner's spawn progress (a Kubernetes event's time and type), Omniverse Kit's log (the time since it started,
        # a capitalised level), Triton's --log-format ISO8601, log4j2's TorchServe layout (the level padded to five columns)
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9:.]+(?:Z|[+-][0-9][0-9]:?[0-9][0-9]) \[(?:Normal|Warning)\] ",
        r"^\s*[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9:]+Z? \[[0-9,]+ms\] \[(?:Verbose|Info|Warning|Error|Fatal)\] ",
        r"[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9:]+Z [IWEF] [0-9]+ [^\]\s]+\.(?:cc|h):[0-9]+\]",
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9:]+,[0-9]{3} \[(?:TRACE|DEBUG|INFO |WARN |ERROR|FATAL)\] \S+ [0-9A-Za-z_.$]+ - ",
        # pingcap/log's (TiDB, PD, Milvus): a slashed stamp with its offset, the level and the caller, each bracketed
        r"^\[[0-9]{4}/[0-9][0-9]/[0-9][0-9] [0-9:.]+ [+-][0-9][0-9]:[0-9][0-9]\] \[(?:DEBUG|INFO|WARN|ERROR|FATAL)\] \[[^\]\s]+:[0-9]+\] ",
        # PaddleOCR's logger
        r"^\[[0-9]{4}/[0-9][0-9]/[0-9][0-9] [0-9:]+\] [0-9A-Za-z_.\-]+ (?:DEBUG|INFO|WARNING|ERROR|CRITICAL): ",
        # Gin's access log (Ollama's server), a request's status and time
        r"\[GIN\] [0-9]{4}/[0-9][0-9]/[0-9][0-9] - [0-9:]+ \| [0-9]{3} \|",
        # torchtitan's logger ("[titan] 2025-06-16 22:30:50,322 - root - INFO - "), under torchrun's rank tag or not
        r"^(?:\[rank[0-9]+\]:)?\[titan\] [0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:,]+ - ",
        # MLServer's ("2024-06-05 14:36:17,236 [mlserver.parallel] DEBUG - "), MLflow's ("2024/06/05 14:36:19 WARNING mlflow.pyfunc: ")
        # and Seldon Core's Python wrapper ("2022-03-08 05:11:35,696 - seldon_core.gunicorn_utils:load:103 - INFO: ")
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:,]+ \[mlserver(?:\.[0-9A-Za-z_]+)*\] [A-Z]+ - ",
        r"^[0-9]{4}/[0-9][0-9]/[0-9][0-9] [0-9:]+ (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [0-9A-Za-z_.]+: ",
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:,]+ - seldon_core\.[0-9A-Za-z_.]+:[0-9A-Za-z_<>]+:[0-9]+ - [A-Z]+: ",
        # KServe's model servers ("2024-07-01 07:28:04.488 1 kserve ERROR [__main__.py:<module>():254] ")
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:.]+ [0-9]+ [0-9A-Za-z_.\-]+ (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \[[^\]\s]+:[0-9]+\] ",
        # Go operators' (the Kubeflow Training Operator's) two console loggers: zap's, stamped with the epoch float in Go's %g or
        # an ISO time, tab-separated ("1.7085078566441019e+09\tDEBUG\tevents\t…"), and logrus' text formatter on a terminal
        # (the level cut to four letters, then seconds since start: "INFO[0289] ")
        r"^(?:1\.[4-9][0-9]*e\+09|[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9:.]+(?:Z|[+-][0-9][0-9]:[0-9][0-9]))\t(?:DEBUG|INFO|WARN|ERROR|DPANIC|PANIC|FATAL)\t",
        r"^(?:TRAC|DEBU|INFO|WARN|ERRO|FATA|PANI)\[[0-9]{4,}\] ",
        # logfmt (logrus, go-kit, Argo; maybe behind the name of the container that wrote it), Airflow's task log, Slurm's
        # diagnostics, python-json-logger
        r'^(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])? time="|(?:level=[A-Za-z]+ )?(?:time|ts)="?)[0-9]{4}-[0-9][0-9]-[0-9][0-9]T\S+"? (?:caller=\S+ |level=[A-Za-z]+ |msg=)', r"^\[[0-9]{4}-[0-9][0-9]-[0-9][0-9],? [0-9:,.]+(?: UTC)?\] \{[^{}\s]+:[0-9]+\} [A-Z]+ - ",
        # (grep may name the file and line before it: "job-2321682.err:slurmstepd: error: …")
        r"^(?:\S+\.(?:err|out|log|txt):(?:[0-9]+:)?)?(?:slurmstepd(?:-[^:\s]+)?|srun|sbatch|salloc): (?:error|warning): ", r'^\{"created": [0-9.]+, ',
        # the other batch schedulers' word on a job: PBS's kill line, its mail's and qstat -f's exit status; LSF's job report;
        # Grid Engine's qacct record (exit_status, failed) and its mail of an aborted job
        r"=>> PBS: job killed: ", r"^PBS Job Id: ", r"^\s*Exit_status\s*=\s*-?[0-9]+\s*$", r"^TERM_[A-Z]+: job killed after reaching LSF ",
        r"^# LSBATCH: User input", r"^exit_status:? +-?[0-9]+\s*$", r"^failed:? +[0-9]+ *: ", r"^\s*Exit Status\s+= -?[0-9]+\s*$",
        # Slurm's daemons' own log files (slurmctld.log, slurmd.log: "[2022-06-23T22:55:06.384] _job_complete: JobId=…")
        r"^\[[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{3})?(?:[+-][0-9][0-9]:?[0-9][0-9])?\] \S",
        # torchelastic's worker-status events (torch 1.9, 1.10), JSON lines on the launcher's stdout
        r'^\{"name": "torchelastic\.worker\.status\.',
        # the GitHub Actions runner's diagnostic log ("[2024-09-02 05:19:40Z INFO JobDispatcher] …")
        r"^\[[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:]+Z (?:INFO|WARN|ERR |VERB) [A-Za-z][0-9A-Za-z_.]*\] ",
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:,]+\t(?:DEBUG|INFO|WARNING|ERROR) [0-9A-Za-z_.]+:[0-9]+ -- ",  # Ray's driver
        r"^(?:\((?:raylet|gcs_server)\) )?\[[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:,]+ [IWEF] [0-9]+ [0-9]+\]",  # Ray's C++ daemons
        r"killed due to memory pressure \(OOM\)", r"[Ww]orker exit type: [A-Z_]+",
        # Ray's exceptions as a caller gets them (a traceback cut above them too): "ray.exceptions.ActorDiedError: The actor died …"
        r"^ray\.exceptions\.[A-Za-z]+Error(?:\([A-Za-z]+\))?: ",
        # YARN's kill of a container over its memory limit, as Spark and the NodeManager report it
        r"Container killed by YARN for exceeding ", r"memory limits?\. Current usage: ",
        # TensorRT's logger and TensorRT-LLM's
        r"^\[[0-9][0-9]/[0-9][0-9]/[0-9]{4}-[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\] \[TRT(?:-LLM)?\] ", r"\[TensorRT-LLM\]\[[A-Z]+\] ",
        # `srun -l`: each line behind the number of the task that printed it
        r"^ {0,3}[0-9]{1,4}: \S",
        # C++ cores' errors and dumps (c10, cuBLAS, XLA, CPython's faulthandler), Open MPI's launcher, TensorFlow's C++ log
        r"CUDA (?:driver )?error: ", r"CUBLAS_STATUS_[A-Z_]+", r"RESOURCE_EXHAUSTED", r"CUDA_ERROR_[A-Z_]+", r"cuda runtime error \([0-9]+\)",
        r"CUDNN_STATUS_[A-Z_]+", r"OOM when allocating tensor", r"cudaMalloc failed: out of memory", r"^frame #[0-9]+: ",
        # XLA's TPU compiler out of the chip's HBM, and the header Ray's RayTaskError gives a remote task's traceback
        r"Ran out of memory in memory space hbm\.", RAY_TASK_HEADER,
        r"^Exception raised from \S+ at ",
        # Abseil's (XLA's, JAX's, TensorFlow's): its log before InitializeLog (glog's header with the epoch second for a date),
        # the stack under a CHECK that failed, its failure signal handler
        r"^[IWEF]0000 00:00:1[4-9][0-9]{8}\.[0-9]+ +[0-9]+ [^\]\s]+:[0-9]+\] ", r"^\*\*\* Check failure stack trace: \*\*\*$",
        r"\*\*\* SIG[A-Z0-9]+ received at time=[0-9]+",
        # PyTorch's torch._logging (torchrun's, torch.distributed's since 2.4), a rank before it once the process group is up
        # ("[rank3]:E0227 10:17:45.789000 4242 torch/distributed/elastic/multiprocessing/api.py:869] "): glog's header
        # with a Python module for the file (klog's and glog's C++ name .go and .cc files)
        r"^(?:\[rank[0-9]+\]:)?[IWEFVC][0-9]{4} [0-9:.]+ +[0-9]+ [^\]\s]+\.py:[0-9]+\]",
        # (a Ray worker's, behind its tag)
        r"^(?:\([0-9A-Za-z_. ]*pid=[0-9]+[^()]*\) )?Fatal Python error: ", r"^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):$",
        # Python's warnings ("path.py:75: UserWarning: …")
        PY_WARNING_LINE,
        r"exited on signal [0-9]+ \(", r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:.]+: [IWEF] \S+\.cc:[0-9]+\] ",
        # line headers of vLLM, transformers, PyTorch c10d and DeepSpeed ("[asctime] [LEVEL] [file.py:line:function]")
        r"^\[[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:,.]+\] \[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \[[0-9A-Za-z_.]+:[0-9]+:",
        r"^(?:\([0-9A-Za-z_]+ pid=[0-9]+\) )?(?:DEBUG|INFO|WARNING|ERROR) [0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] ",
        r"^\[[A-Z]+\|[0-9A-Za-z_.]+:[0-9]+\] [0-9]{4}-[0-9][0-9]-[0-9][0-9] ", r"^\s*\[rank[0-9]+\]:", r"^\[[IWEF] [0-9A-Za-z_.]+:[0-9]+\] ",
        # nanotron's ("08/31/2024 14:37:22 [INFO|DP=0|PP=0|TP=0]: ") and NVIDIA Cosmos' ("[04-14 02:44:17|INFO|path.py:149:train] ")
        r"^[0-9][0-9]/[0-9][0-9]/[0-9]{4} [0-9:]+ \[[A-Z]+\|DP=[0-9]+\|PP=[0-9]+\|TP=", r"^\[[0-9][0-9]-[0-9][0-9] [0-9:.]+(?:\|[0-9A-Za-z_]+=[^|\]\s]*)*\|[A-Z]+\|\S+:[0-9]+:\S+\] ",
        # SGLang's stamp with the worker's parallel ranks ("[2025-09-22 10:25:22 DP1 PP1] ", "[2025-05-19 23:22:28 TP3] ")
        r"^\[[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:]+(?: [DTPE]P[0-9]+)+\] ",
        # gunicorn's arbiter and workers ("[2020-09-12 05:37:52 +0000] [18] [ERROR] "), and its report of a worker a signal ended
        r"^\[[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:]+ [+-][0-9]{4}\] \[[0-9]+\] \[[A-Z]+\] ",
        r"Worker \(pid:[0-9]+\) was sent SIG|Worker with pid [0-9]+ was terminated due to signal ",
        # text-generation-inference's (and LoRAX's) warmup OOM, as its shard, router and launcher each word it
        r"Not enough memory to handle [0-9]+ (?:prefill|total) tokens",
        _pipeline_slurm.SNIFF_MARKER,
        # NCCL's RAS report (`ncclras`): a finding about a communicator, and the ranks it lists ("  Rank 12 -- GPU 4 managed by
        # process 323032 on node 10.137.190.124"); DeepSpeed's launcher reporting a rank's end, whatever precedes its header
        r"^#[0-9]+-[0-9]+ \([0-9a-f]{16}\) (?:MISMATCH|ERROR|INCOMPLETE)\s*$",
        r"^ +Rank [0-9]+ [^\n]*-- GPU [0-9]+(?: \(NVML [0-9]+\))? managed by process [0-9]+ on node ",
        r"\[launch\.py:[0-9]+:sigkill_handler\] ",
        # Application headers of other services' logs (see _pipeline_frame._APP_HEADERS): Android's logcat -v threadtime, oslo.log
        # (OpenStack) behind its stamp, Windows' CBS.log, Hadoop 0.x's compact log4j date
        r"^[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]{3} +[0-9]+ +[0-9]+ [VDIWEFA] ",
        r"[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:]{8}\.[0-9]{3} [0-9]+ (?:TRACE|DEBUG|INFO|AUDIT|WARNING|ERROR|CRITICAL) [A-Za-z_][0-9A-Za-z_.]* \[",
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:]{8}, (?:Info|Warning|Error|Perf) {2,}[A-Z]",
        r"^[0-9]{6} [0-9]{6} [0-9]+ (?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL) [A-Za-z_$.]+: ",
        # Python logging's "%(asctime)s %(name)s %(levelname)s: " (maskrcnn-benchmark's trainer and the codebases built on it)
        r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9:]{8},[0-9]{3} [A-Za-z_][0-9A-Za-z_.]* (?:DEBUG|INFO|WARNING|ERROR|CRITICAL): ",
        # Apache httpd's error log: a ctime stamp, then the level in brackets (2.4: after the module)
        r"^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8}(?:\.[0-9]+)? [0-9]{4}\] \[(?:[a-z_0-9]+:)?(?:emerg|alert|crit|error|warn|notice|info|debug|trace[1-8])\] ",
    )
)
_PLAIN_TEXT_SCORE = 0.1


def sniff(head: Sequence[str]) -> float:
    """Low for any text; 0.5–0.8 with ML-pipeline or CI markers, growing with their share."""
    return one_head(sniff_heads, head)


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """:func:`sniff` of each head of :func:`~rca.sources._base.heads_frame`."""
    # A traceback or an OOM in a syslog envelope is an application's line in a journal: the syslog source's to read.
    marked = pl.col("text").str.contains(_MARKERS) & ~pl.col("text").str.contains(_syslog.SHORT_HEAD)
    found = by_head(heads, hits=marked.sum(), lines=pl.len())
    return {head: 0.5 + 0.3 * min(1.0, 3 * row["hits"] / row["lines"]) if row["hits"] else _PLAIN_TEXT_SCORE for head, row in found.items()}


# the host a record of a killed process names (the node it ran on, not the one whose log tells of it)
_KILLED_HOST = pl.when(pl.col("kind") == "process_killed").then(pl.coalesce("f_named_host", "f_slurm_node", "f_yarn_host"))
_BOOT = pl.coalesce(pl.when(pl.col("kind") == "xid").then(pl.col("f_nvrm_boot")), "f_kernel_boot")
_OUTPUT = {
    "line": pl.col("line"),
    "n_lines": pl.col("n_lines"),
    "kind": pl.col("kind"),
    "severity": pl.col("severity"),
    "message": pl.col("message"),
    "ts": pl.col("ts"),
    # A record without a time of its own may state one (slurmstepd's "CANCELLED AT …", Abseil's signal handler's epoch
    # second): read in _times_stated.
    "ts_raw": pl.coalesce("ts_raw", pl.when(pl.col("ts").is_null()).then(pl.coalesce("f_slurm_cancel_at", "f_named_epoch"))),
    # (a kernel line's dmesg stamp: seconds since boot, as the kernel source gives them; with no time of its own, the line's
    # time is boot-relative)
    "ts_quality": pl.when(pl.col("ts").is_null() & _BOOT.is_not_null()).then(pl.lit("boot_relative")).otherwise(pl.col("ts_quality")),
    "boot_seconds": _BOOT,
    "format": pl.col("format"),
    "host": pl.coalesce(_KILLED_HOST, "host"),
    # (not an event column: rca.ingest.finish_batch_events reads it, then drops it)
    "host_named": pl.when(_KILLED_HOST.is_null()).then(pl.col("host_named")),
    # the pod a controller says ended over the tags of the controller's own pod (its namespace too, even where unnamed)
    "pod": pl.coalesce("f_exit_pod", "pod"),
    "namespace": pl.when(pl.col("f_exit_pod").is_not_null()).then(pl.col("f_exit_namespace")).otherwise(pl.col("namespace")),
    "pid": pl.coalesce(
        "f_dataloader_pid", "f_bash_pid", "f_named_pid", "f_exit_child_pid", "f_ray_task_pid", "f_ray_worker_pid", "f_yarn_pid",
        "f_kernel_oom_pid",
        # the Ray task whose traceback a record holds over the process that printed it (a driver, an actor that awaited it)
        pl.when(pl.col("kind") == "process_killed").then(pl.col("f_exit_pid")), "f_nvrm_pid", "f_ray_task_failed_pid",
        # the process of the rank NCCL's RAS report lists (the report's writer, a client, is none of the job's)
        "f_ras_pid", "pid",
        # the process that made the shared memory segment an error names, where no line names a process
        pl.when(pl.col("kind") == "shm_error").then(pl.col("f_shm_pid")),
    ),
    # (the raylet's tag on its report of a worker's death names the reporter, not the worker; so does Celery's header on its
    # pool's report of a child a signal ended: "[…: ERROR/MainProcess] Process 'ForkPoolWorker-3' pid:27 exited with …")
    "process": pl.coalesce(
        pl.col("f_bash_command").str.extract(r"^(?:\S*/)?(\S+)"), "f_kernel_oom_process",
        "f_exit_process", "f_named_process", "f_ray_actor_class", "f_ray_task_failed_process",
        pl.when(pl.col("f_ray_worker_pid").is_null() & ~((pl.col("kind") == "process_killed") & (pl.col("format") == "celery")).fill_null(False))
        .then(pl.col("process")),
    ),
    # (the container of the pod a controller says ended, as its pod, over the controller's own)
    "container": pl.when(pl.col("f_exit_pod").is_not_null()).then(pl.col("f_exit_container")).otherwise(pl.coalesce(
        pl.col("container"), pl.when(pl.col("kind") == "process_killed").then(pl.coalesce("f_yarn_container", "f_container"))
    )),
    "container_id": pl.when(pl.col("kind") == "process_killed").then(pl.col("f_container_id")),
    "gpu_index": pl.coalesce(
        pl.when(pl.col("kind") == "cuda_oom").then(pl.col("f_gpu_index").cast(pl.Int32, strict=False)),
        "f_dcgm_health_gpu", "f_unknown_device_index", "f_ras_gpu", "gpu_index",
    ),
    "gpu_uuid": pl.col("f_gpu_uuid"),
    "pci_bus": pl.col("f_pci_bus"),
    "xid": pl.when(pl.col("kind") == "xid").then(pl.col("f_xid")),
    "exit_code": pl.coalesce("f_exit_code", "f_yarn_exit_status", "f_slurm_exit_code"),
    "mem_requested_bytes": pl.when(pl.col("kind") == "cuda_oom").then(pl.col("f_requested"))
    .when(pl.col("f_go_oom")).then(pl.col("f_go_request"))
    .when(pl.col("f_cpu_alloc_request").is_not_null()).then(pl.col("f_cpu_alloc_request")),
    "mem_total_bytes": pl.when(pl.col("kind") == "cuda_oom").then(pl.col("f_total"))
    .otherwise(pl.coalesce("f_ray_node_total", "f_slurm_limit", "f_yarn_total", "f_trt_total")),
    # What Ray's memory monitor saw: the node's memory and the killed task's; what Slurm's accounting saw: the job's use and limit;
    # what YARN's saw: the container's use of the memory whose limit it broke, and that limit.
    # and what a CUDA OOM's device had in use: its capacity less its free memory
    "mem_used_bytes": pl.when(pl.col("kind") == "cuda_oom").then(pl.col("f_used"))
    .otherwise(pl.coalesce("f_ray_node_used", "f_slurm_limit_used", "f_yarn_used")),
    # (the kernel's kill: its anon-rss, as the kernel source reads it)
    "rss_bytes": pl.coalesce("f_ray_task_rss", "f_kernel_rss"),
    "attrs": pl.col("attrs"),
}
# A record no rule concerns is a log line with the time, level and tags its line carried.
_PLAIN = {
    **{name: pl.col(name) for name in _OUTPUT if name not in {
        "kind", "ts_quality", "boot_seconds", "container_id", "gpu_uuid", "pci_bus", "xid", "exit_code",
        "mem_requested_bytes", "mem_total_bytes", "mem_used_bytes", "rss_bytes", "attrs",
    }},
    "kind": pl.lit("log"),
    "ts_quality": pl.col("ts_quality"),
    **{name: pl.lit(None, dtype) for name, dtype in (
        ("boot_seconds", pl.Float64),
        ("container_id", pl.String), ("gpu_uuid", pl.String), ("pci_bus", pl.String), ("xid", pl.Int32), ("exit_code", pl.Int32),
        ("mem_requested_bytes", pl.Int64), ("mem_total_bytes", pl.Int64), ("mem_used_bytes", pl.Int64), ("rss_bytes", pl.Int64),
    )},
    "attrs": json_object({"rank": json_number(pl.col("rank")), "node_ip": json_text(pl.col("node_ip"))}, raw=[pl.col("line_attrs")]),
}


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Every line becomes part of exactly one event; lines matching no rule are ``kind=log``."""
    # sacct's tables are read by their header's columns, and a row's step id is no BuildKit prefix (_pipeline_slurm)
    sacct = _pipeline_slurm.table_cells(lines)
    framed = _pipeline_slurm.unpeeled(frame(lines, ctx), lines, sacct)
    framed, tables = _without_nvidia_smi_tables(framed, lines, ctx)
    skipped, skipped_by_file = _skipped(framed, lines)
    # Blank lines never reach the parser and blank envelopes are dropped here: both leave a gap in the line numbers
    # (the pieces of a cut line, whose text is on its first piece's row, do not).
    kept = framed.filter(~pl.col("blank") & ~pl.col("enveloped_blank")).with_columns(after_gap=(pl.col("line").diff() > 1).fill_null(False))
    grouped = _cuda_reports_folded(_with_object_lines(records(kept.filter(~pl.col("continued"))), kept), lines)
    events = _times_stated(_torchrun_failures(_repeated_cuda_ooms(_classify(grouped), lines), ctx.tz), ctx.tz)
    events = _pipeline_batch.with_job_figures(_pipeline_slurm.with_table_facts(events, sacct, ctx.tz), lines)
    return _with_tables(Parsed(events=events, skipped=skipped, skipped_by_file=skipped_by_file), tables)


def _with_object_lines(records: pl.DataFrame, kept: pl.DataFrame) -> pl.DataFrame:
    """``records`` (in line order) with the further lines of each pretty-printed JSON record (``object_lines`` of its first line,
    see ``_pipeline_frame._joined_objects``) counted in the record that holds its first line: lines merged, not skipped."""
    opened = kept.filter(pl.col("object_lines").is_not_null()).select("line", _more=pl.col("object_lines") - 1)
    if opened.is_empty():
        return records
    held = opened.join_asof(records.select("line", _record=pl.col("line")), on="line", strategy="backward")
    more = held.group_by("_record").agg(pl.col("_more").sum())
    return records.join(more, left_on="line", right_on="_record", how="left", maintain_order="left").with_columns(
        n_lines=(pl.col("n_lines") + pl.col("_more").fill_null(0)).cast(pl.Int32)
    ).drop("_more")


# XLA's cudaMallocAsync allocator logs what CUDA reported under its failure, on a line of the same message indented by one
# space (" Reported by CUDA: Free memory/Total memory: 22635544576/85095874560"). A paste that lost that space leaves it a
# record of its own: it is still the failure's (or, where a paste puts it under it, the failure's JAX error's), and its figures
# (the device's total and free memory) with it.
_CUDA_REPORT_LITERAL = "Reported by CUDA: "
_CUDA_REPORT = r"^Reported by CUDA: Free memory/Total memory: [0-9]+/[0-9]+\s*$"
_ALLOCATOR_FAILED = r"cuMemAllocAsync failed to allocate [0-9]+ bytes|RESOURCE_EXHAUSTED: Out of memory while trying to allocate [0-9]+ bytes"


def _cuda_reports_folded(records: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """``records`` (in line order) with each bare CUDA report joined to the allocator failure on the line right above it in
    its file (of ``lines``)."""
    message, line, n_lines = pl.col("message"), pl.col("line"), pl.col("n_lines")
    if not records.select(message.str.contains(_CUDA_REPORT_LITERAL, literal=True).any()).item():
        return records
    report = (
        message.str.contains(_CUDA_REPORT) & (line == line.shift(1) + n_lines.shift(1))
        & ~line.is_in(lines.filter(starts_file(lines))["line"].implode()) & message.shift(1).str.contains(_ALLOCATOR_FAILED)
    )
    marked = records.with_columns(_report=report.fill_null(False))
    above = pl.col("_report").shift(-1).fill_null(False)
    return marked.with_columns(
        message=pl.when(above).then(pl.concat_str([message, message.shift(-1)], separator="\n")).otherwise(message),
        n_lines=pl.when(above).then(n_lines + n_lines.shift(-1)).otherwise(n_lines),
    ).filter(~pl.col("_report")).drop("_report")


def _without_nvidia_smi_tables(framed: pl.DataFrame, lines: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, Parsed | None]:
    """The framed lines less the nvidia-smi tables a job printed among them (a training job's, a CI job's or an entrypoint's
    ``nvidia-smi`` first thing), and those tables read by the nvidia_smi source's table parser.

    A table's rows take the time of the line above it (its ``date`` stamp line, the log line before it) and the tags the
    lines wore (a runtime's or kubectl's prefix is peeled off them as off any other line).
    """
    if not lines["text"].str.contains_any(list(_nvsmi_table.OWN_LITERALS)).any():
        return framed, None
    file = file_column(lines)
    rows = framed.join(lines.select("line", *file), on="line", how="left") if file else framed
    shown = rows.filter(~pl.col("blank") & ~pl.col("enveloped_blank") & ~pl.col("continued"))
    group = pl.col("batch_file") if file else pl.repeat(0, pl.len(), dtype=pl.Int32)
    marked = shown.with_columns(in_table=_nvsmi_table.in_table(pl.col("body"), group))
    if not marked["in_table"].any():
        return framed, None
    before = {name: forward_fill_within(pl.when(~pl.col("in_table")).then(name), group) for name in ("ts", "ts_raw")}
    table = marked.with_columns(**{f"above_{name}": value for name, value in before.items()}).filter("in_table")
    events, skipped, by_file = [], {}, {} if file else None
    for part in table.partition_by(*file, maintain_order=True) if file else [table]:
        parsed = _nvsmi_table.parse(part.select("line", text="body"), ctx)
        events.append(parsed.events)
        add_skipped(skipped, parsed.skipped)
        if by_file is not None:
            add_skipped(by_file.setdefault(part["batch_file"][0], {}), parsed.skipped)
    # (No stamp line is a box row: the table parser finds none, and its rows take the time from above.)
    tags = table.select("line", "host", "host_named", "pod", "namespace", "container", ts="above_ts", ts_raw="above_ts_raw")
    read = pl.concat(events).drop(*tags.columns[1:], strict=False).join(tags, on="line", how="left")
    # (nvidia-smi's events, as the nvidia_smi source gives them from a file of its own)
    timed = read.with_columns(
        source=pl.lit("nvidia_smi"), ts_quality=pl.when(pl.col("ts").is_not_null()).then(pl.lit("inherited")).otherwise(pl.lit("missing"))
    )
    left = framed.filter(~pl.col("line").is_in(table["line"].implode()))
    return left, Parsed(events=timed, skipped=skipped, skipped_by_file=by_file)


def _with_tables(parsed: Parsed, tables: Parsed | None) -> Parsed:
    """The log's events and the nvidia-smi tables' together, and the lines of each that no event holds."""
    if tables is None:
        return parsed
    add_skipped(parsed.skipped, tables.skipped)
    by_file = parsed.skipped_by_file
    if tables.skipped_by_file is not None:
        by_file = by_file or {}
        for number, counts in tables.skipped_by_file.items():
            add_skipped(by_file.setdefault(number, {}), counts)
    events = pl.concat([parsed.events, tables.events], how="diagonal_relaxed").sort("line")
    return Parsed(events=events, skipped=parsed.skipped, skipped_by_file=by_file)


_SKIPPED_BY_REASON = {
    "terminal control codes": pl.col("blank"),
    "blank": pl.col("enveloped_blank"),
    # a piece the container runtime cut off, the rest of a hard-wrapped line
    "joined to the line it continues": pl.col("continued") & ~pl.col("folded"),
}


def _skipped(framed: pl.DataFrame, lines: pl.DataFrame) -> tuple[dict[str, int], dict[int, dict[str, int]] | None]:
    """The lines no event holds, by reason, and of several files' lines (``lines``' ``batch_file``) by file too, so
    that each file's count is known without reading it alone."""
    counts = [flag.sum().alias(reason) for reason, flag in _SKIPPED_BY_REASON.items()]
    skipped = {reason: count for reason, count in framed.select(counts).row(0, named=True).items() if count}
    if not skipped or not within_file(lines):
        return skipped, None
    owned = framed.select("line", **_SKIPPED_BY_REASON).join(lines.select("line", "batch_file"), on="line", how="left")
    by_file = owned.group_by("batch_file").agg(pl.col(reason).sum() for reason in _SKIPPED_BY_REASON).iter_rows(named=True)
    return skipped, {row.pop("batch_file"): {reason: count for reason, count in row.items() if count} for row in by_file}


def _classify(grouped: pl.DataFrame) -> pl.DataFrame:
    """One event per record, each through only the rules that may concern it."""
    message = pl.col("message")
    tiered = grouped.with_columns(
        tier=pl.when(pl.col("family").is_not_null() | spells(message, INCIDENT_RULE)).then(2)
        .when(spells(message, PROGRESS_RULE)).then(1)
        .otherwise(0)
    )
    return _ggml_echoes(split_rows(tiered, pl.col("tier") > 0, _by_rules, _plain))


# ggml's allocator names the buffer it could not get ("ggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size …") on
# the line after CUDA's own "allocating … on device 1: cudaMalloc failed": one failure told twice, so that echo stays a log
# line (an error). Alone (Ollama's error quotes it without the line above) it is the OOM, with the only device and size.
_GGML_CUDA_MALLOC = r"\ballocating [0-9.]+ [KMG]iB on device [0-9]+: cudaMalloc failed"


def _ggml_echoes(events: pl.DataFrame) -> pl.DataFrame:
    oom, message, line = pl.col("kind") == "cuda_oom", pl.col("message"), pl.col("line")
    if not events.select((oom & message.str.contains(GGML_BUFFER)).any()).item():
        return events
    ordered = events.with_row_index("_order").sort("line")
    after = (line.shift(1) == line - 1) & (pl.col("kind").shift(1) == "cuda_oom") & message.shift(1).str.contains(_GGML_CUDA_MALLOC)
    if "batch_file" in events.columns:  # lines numbered on from one small file to the next: the line above is in the same file
        after = after & (pl.col("batch_file").shift(1) == pl.col("batch_file"))
    echo = (oom & message.str.contains(GGML_BUFFER) & after).fill_null(False)  # the first line has no line above
    return ordered.with_columns(
        kind=pl.when(echo).then(pl.lit("log")).otherwise("kind"),
        severity=pl.when(echo).then(pl.lit("error")).otherwise("severity"),
        **{column: pl.when(~echo).then(column) for column in ("gpu_index", "mem_requested_bytes", "attrs")},
    ).sort("_order").drop("_order")


# One CUDA OOM a training process tells several times within a few lines: Megatron's logger as a warning when it catches it
# ("WARNING:megatron.core.utils:CUDA out of memory. …"), the uncaught exception's traceback, a script's print of the
# formatted traceback (a list's repr). The same file, writer (host, pod, torchrun's local rank, torch's rank, pid), device
# and sentence (to the byte figures) and time make one failure: the uncaught exception's event (else the first) stays the
# OOM; the others are the lines they are (a log line, a printed traceback). Another rank's OOM or a later one is its own.
_OOM_REPEAT_LINES = 10
# what the sentence says up to the device's free memory (the rest, a hint, a list repr's quoting, differs between its tellings)
_OOM_SENTENCE = r"CUDA out of memory\. Tried to allocate [^\n']*?free"
_OOM_WRITER_ATTRS = ("rank", "local_rank")


def _repeated_cuda_ooms(events: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """``events`` with each CUDA OOM told again within a few lines of its file (of ``lines``) by the same writer kept
    as the line it is, not as another OOM."""
    oom, line = pl.col("kind") == "cuda_oom", pl.col("line")
    if events.select(oom.sum()).item() < 2:
        return events
    attrs = pl.col("attrs")
    writer = [column for column in ("file", "host", "pod", "pid", "gpu_index", "ts") if column in events.columns]
    opened = lines.filter(starts_file(lines))["line"]  # where each file of a batch after its first begins
    staged = events.with_row_index("_order").with_columns(
        _file=opened.search_sorted(events["line"], side="right"),
        _sentence=pl.when(oom).then(pl.col("message").str.extract(_OOM_SENTENCE, 0)),
        **{f"_{name}": attrs.str.json_path_match(f"$.{name}") for name in _OOM_WRITER_ATTRS},
    )
    key = [*writer, "_file", "_sentence", "_local_rank"]
    # torch tags only the uncaught exception with the global rank: an untagged report of the same local rank is the same process
    same_rank = pl.col("_rank").is_null() | pl.col("_rank").shift(1).is_null() | (pl.col("_rank") == pl.col("_rank").shift(1))
    near = line - (line.shift(1) + pl.col("n_lines").shift(1)) <= _OOM_REPEAT_LINES
    repeat = (near & same_rank).fill_null(False)
    failures = (
        staged.filter(pl.col("_sentence").is_not_null()).sort("line")
        .with_columns(_repeat=repeat.over(key)).with_columns(_failure=(~pl.col("_repeat")).cum_sum().over(key))
        .with_columns(_uncaught=attrs.str.json_path_match("$.exc_type").is_not_null())
        # the failure's kept event: its uncaught exception's, else its first
        .with_columns(_kept=pl.col("_order").sort_by(~pl.col("_uncaught"), "line").first().over([*key, "_failure"]))
    )
    echoes = failures.filter(pl.col("_order") != pl.col("_kept"))["_order"].implode()
    echo = pl.col("_order").is_in(echoes)
    printed = pl.col("message").str.contains("Traceback (most recent call last)", literal=True)
    return staged.with_columns(
        kind=pl.when(echo).then(pl.when(printed).then(pl.lit("traceback")).otherwise(pl.lit("log"))).otherwise("kind"),
        **{column: pl.when(~echo).then(column) for column in ("gpu_index", "mem_requested_bytes", "mem_total_bytes")},
    ).drop("_order", "_file", "_sentence", *(f"_{name}" for name in _OOM_WRITER_ATTRS))


def _by_rules(tiered: pl.DataFrame) -> pl.DataFrame:
    return split_rows(tiered, pl.col("tier") == 2, lambda rows: _ruled(rows, PROGRESS + INCIDENTS), lambda rows: _ruled(rows, PROGRESS))


def _plain(tiered: pl.DataFrame) -> pl.DataFrame:
    return tiered.select(**_PLAIN).select(list(_OUTPUT))


def _ruled(grouped: pl.DataFrame, families: tuple[str, ...]) -> pl.DataFrame:
    gated, present = gate_families(grouped, families)
    facts = kind_and_severity(exception_facts(extract(gated, present)), present)
    return with_attrs(facts, present).select(**_OUTPUT)


# torchrun's ChildFailedError table gives each failed rank as "[n]:" then its fields, under "Root Cause (first observed
# failure):" or "Failures:" (the other ranks: failed too, or stopped by the launcher with SIGTERM). Since torch 1.10 they are
# "time : 2026-12-04_17:27:27" (the launcher's local time), "host : …", "rank : 1 (local_rank: 1)", "exitcode : -9 (pid: 679)"
# (later torch adds the signal's name after the pid); torch 1.9's table, "Root Cause:" then "Other Failures:", has no host line.
_TORCHRUN_EXIT = r"^\s*exitcode\s*: -?[0-9]+ \(pid: ([0-9]+)\)(?: \(?SIG[A-Z0-9]+\)?)?\s*$"
_TORCHRUN_TIME = r"^\s*time\s*: ([0-9]{4}-[0-9][0-9]-[0-9][0-9])_([0-9][0-9]:[0-9][0-9]:[0-9][0-9])\s*$"
_TORCHRUN_HOST = r"^\s*host\s*: (\S+)\s*$"
_TORCHRUN_RANK = r"^\s*rank\s*: ([0-9]+) \(local_rank: ([0-9]+)\)\s*$"
_TORCHRUN_ROOT = r"^\s*Root Cause(?: \(first observed failure\))?:\s*$"
_TORCHRUN_OTHERS = r"^\s*(?:Other )?Failures:\s*$"
# The fields above an entry's exitcode line: time, host (since 1.10) and rank.
_TORCHRUN_FIELD_LINES = (1, 2, 3)
# The elastic agent's own line about the same death: "failed (exitcode: -9) local_rank: 1 (pid: 679) of binary: …".
_AGENT = r"\bfailed \(exitcode: -?[0-9]+\) local_rank: (?<local_rank>[0-9]+) \(pid: (?<pid>[0-9]+)\)"


def _torchrun_failures(events: pl.DataFrame, tz: str) -> pl.DataFrame:
    """The pid, rank, local rank, host and time of each failure in torchrun's table on its exitcode line's event
    (and the pid and local rank on the elastic agent's line).

    The table's root cause is marked (``root_cause``); a rank under "Failures:" that the launcher
    stopped with SIGTERM once another had failed is a consequence, a warning.
    """
    message, line = pl.col("message"), pl.col("line")
    if not events.select(message.str.contains_any(["exitcode", "local_rank: "]).any()).item():
        return events
    table_exit = message.str.contains(_TORCHRUN_EXIT)
    agent = message.str.contains("local_rank: ", literal=True) & message.str.contains(_AGENT)

    def field(pattern: str, group: int = 1) -> pl.Expr:
        # The entry's line of the field among those right above (the table has no blank lines); read on entries only.
        return pl.coalesce(
            pl.when(table_exit & (line.shift(rows) == line - rows)).then(message.shift(rows)).str.extract(pattern, group)
            for rows in _TORCHRUN_FIELD_LINES
        )

    root_cause = (
        pl.when(message.str.contains(_TORCHRUN_ROOT)).then(True)
        .when(message.str.contains(_TORCHRUN_OTHERS)).then(False)
        .forward_fill()
    )
    agent_line = pl.when(agent).then(message).str.extract_groups(_AGENT).struct
    table = events.with_columns(
        t_entry=table_exit,
        t_pid=pl.coalesce(message.str.extract(_TORCHRUN_EXIT, 1), agent_line.field("pid")).cast(pl.Int64, strict=False),
        t_date=field(_TORCHRUN_TIME), t_clock=field(_TORCHRUN_TIME, 2),
        t_host=field(_TORCHRUN_HOST),
        t_rank=field(_TORCHRUN_RANK).cast(pl.Int64, strict=False),
        t_local_rank=pl.coalesce(field(_TORCHRUN_RANK, 2), agent_line.field("local_rank")).cast(pl.Int64, strict=False),
        t_root_cause=root_cause,
    )
    entry = pl.col("t_entry")
    stamped = entry & pl.col("ts").is_null() & pl.col("t_date").is_not_null()
    table_stamp = pl.format("{}_{}", "t_date", "t_clock")
    return table.with_columns(
        ts=pl.when(stamped).then(timeutil.iso_to_utc(pl.format("{} {}", "t_date", "t_clock"), tz)).otherwise(pl.col("ts")),
        ts_raw=pl.when(stamped).then(table_stamp).otherwise(pl.col("ts_raw")),
        ts_quality=pl.when(stamped).then(pl.lit("exact")).otherwise(pl.col("ts_quality")),
        host=pl.coalesce("host", pl.when(entry).then(pl.col("t_host"))),
        pid=pl.coalesce("pid", "t_pid"),
        severity=pl.when(entry & ~pl.col("t_root_cause").fill_null(True) & (pl.col("exit_code") == -15))
        .then(pl.lit("warning")).otherwise(pl.col("severity")),
        attrs=joined_json(pl.col("attrs"), json_object({
            "rank": json_number(pl.when(entry & ~pl.col("attrs").str.contains('"rank":', literal=True).fill_null(False)).then(pl.col("t_rank"))),
            "local_rank": json_number(pl.when(entry | agent).then(pl.col("t_local_rank"))),
            "root_cause": json_flag(pl.when(entry).then(pl.col("t_root_cause"))),
        })),
    ).drop("t_entry", "t_pid", "t_date", "t_clock", "t_host", "t_rank", "t_local_rank", "t_root_cause")


def _times_stated(events: pl.DataFrame, tz: str) -> pl.DataFrame:
    """The time of records that had none of their own but state one (``ts_raw`` from the rules)."""
    stated = pl.col("ts").is_null() & pl.col("ts_raw").is_not_null()
    if not events.select(stated.any()).item():
        return events
    # Only the stated stamps are read: the others are null before the conversion, which costs per value.
    stated_raw = pl.when(stated).then(pl.col("ts_raw"))
    # a stated epoch second (Abseil's handler) is UTC already
    epoch = pl.when(stated_raw.str.contains(r"^[0-9]{10}$")).then(timeutil.epoch_to_utc(stated_raw))
    read = events.with_columns(stated_ts=pl.coalesce(epoch, timeutil.iso_to_utc(pl.when(epoch.is_null()).then(stated_raw), tz)))
    return read.with_columns(
        ts=pl.coalesce("ts", "stated_ts"),
        ts_quality=pl.when(pl.col("stated_ts").is_not_null()).then(pl.lit("exact")).otherwise(pl.col("ts_quality")),
    ).drop("stated_ts")


_CI_RUNNERS = ("gitlab-runner", "gitlab-ci-multi-runner", "buildkite-agent", "Runner.Listener", "Runner.Worker")


def enveloped(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Events of an application's messages in a syslog or journald envelope (framed by :mod:`._syslog`).

    Each message is read as a line of its own log, the lines of each host, program and pid grouped
    apart (a traceback is logged a line an entry). The envelope's time, host and format stand:
    they are the same for every line of the file, where an application's own stamp may lack a zone.
    An empty message is kept as the envelope's line, and ends a cut traceback as a blank line does.
    """
    writer = pl.concat_str([pl.col(name).cast(pl.String).fill_null("") for name in ("host", "program", "pid")], separator="|")
    # Each message is its envelope's: a runtime's pieces are not joined across entries.
    framed = frame(lines.select("line", *file_column(lines), text="message", envelope=writer), ctx, join_pieces=False)
    empty = pl.col("blank") | pl.col("enveloped_blank")
    framed = framed.with_columns(after_gap=empty.shift(1, fill_value=False).over("partition"))
    events = _classify(records(framed.filter(~empty)))
    envelope = lines.select(
        "line", "ts", "ts_raw", "ts_quality", "format",
        envelope_host="host", envelope_pid="pid", program="program", envelope_severity="severity",
    )
    # The envelope names the writer: an event about another process (a worker torchrun signalled, a DataLoader worker
    # killed: a pid in the text) is not the writer's, nor is a job a CI runner's service logs the end of ("Job failed:
    # exit code 137": the runner lives on).
    job_end = (pl.col("kind") == "process_killed") & pl.col("program").is_in(_CI_RUNNERS)
    writers = ~job_end & (pl.col("pid").is_null() | (pl.col("pid") == pl.col("envelope_pid")))
    read = events.drop("ts", "ts_raw", "ts_quality", "format").join(envelope, on="line", how="left").with_columns(
        host=pl.coalesce("envelope_host", "host"),
        host_named=pl.when(pl.col("envelope_host").is_null()).then("host_named"),
        pid=pl.coalesce("pid", pl.when(~job_end).then("envelope_pid")),
        process=pl.coalesce("process", pl.when(writers).then("program")),
        severity=pl.coalesce("severity", "envelope_severity"),
    ).select(list(_OUTPUT))
    kept_empty = _syslog.program_events(lines.join(framed.filter(empty).select("line"), on="line"))
    return pl.concat([read, kept_empty], how="diagonal_relaxed").sort("line")


def parse_bytes(data: bytes, ctx: ParseContext) -> Parsed:
    """A log service's export document (:mod:`rca.sources._log_exports`): its records parsed as JSON lines, one line each.
    An export spans a cluster's nodes: the node a record names is its host, over the folder's."""
    lines = _log_exports.record_lines(data)
    parsed = parse(lines, ctx)
    return dataclasses.replace(parsed, events=parsed.events.with_columns(host_named=pl.col("host").is_not_null()), lines=lines.height)


SOURCE = register(Source(
    name="pipeline", sniff=sniff, sniff_heads=sniff_heads, parse=parse, formats=FORMATS, line_local=True, segmented=True,
    carried_lines=_pipeline_slurm.carried_lines, sniff_bytes=_log_exports.sniff_bytes, parse_bytes=parse_bytes,
))
# A program is read as an application when one of its messages is what only an application prints:
# a daemon's line that mentions an exit code or a kill (containerd's TaskExit) leaves the daemon's lines as they are.
_APPLICATION_MARKERS = (
    "Traceback (most recent call last):", "out of memory", "OutOfMemoryError", "OOM when allocating", "RESOURCE_EXHAUSTED",
    "NCCL", "DataLoader worker", "torch.distributed", "Job failed: exit code",
)
_syslog.register_applications(SOURCE.name, enveloped, pl.col("message").str.contains_any(list(_APPLICATION_MARKERS)))
