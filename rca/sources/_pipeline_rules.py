"""Message rules of the pipeline source: what each record means and the facts it carries.

Every rule is a regex over the whole ``message`` column of the records (one-line events and
grouped tracebacks alike). Sizes are 1024-based ("GB" included, as PyTorch and vLLM compute
them) and rounded to whole bytes.

Rules come in families, each with literals (or a cheap regex) that every rule of the family
needs in the message. A family's rules read only the messages that spell its literals, and a
family no record of a batch spells is not evaluated (nor its regexes compiled) at all: on
every other message its rules could match nothing anyway.
"""

from __future__ import annotations

import re

import polars as pl

from rca.sources import _xid, kernel
from rca.sources._base import backward_fill_within, split_rows
from rca.sources._nvsmi_common import HANDLE_BUS, HANDLE_GPU
from rca.sources._pipeline_records import ACTOR_DIED, CPP_TAIL, PY_EXCEPTION_LINE, PY_WARNING_LINE, RICH_TITLE

_UNIT_BYTES = {
    "B": 1, "bytes": 1, "KiB": 1024, "kB": 1024, "KB": 1024, "MiB": 1024**2, "MB": 1024**2,
    "GiB": 1024**3, "GB": 1024**3, "TiB": 1024**4, "TB": 1024**4,
    # XLA's TPU compiler writes a 1024-based size with its prefix alone ("21.90G", "530.00M")
    "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4,
}
# CuPy groups the digits of a byte count ("200,000,000,000 bytes").
_SIZE = r"(?<n>-?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?) ?(?<u>bytes|B|KiB|kB|KB|MiB|MB|GiB|GB|TiB|TB)\b"

# ggml's allocators (llama.cpp, Ollama) naming the backend device whose buffer they could not get ("ggml_gallocr_reserve_n:
# failed to allocate CUDA0 buffer of size 838447104").
GGML_BUFFER = r"failed to allocate (?:CUDA|ROCm|Vulkan)[0-9]+ buffer\b"
CUDA_OOM = (
    # torch's "CUDA driver error: …" is a driver API call's (cuMemCreate, a custom op's allocation)
    r"CUDA out of memory|HIP out of memory|CUDA (?:driver )?error: out of memory|CUBLAS_STATUS_ALLOC_FAILED"
    r"|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|(?:RESOURCE_EXHAUSTED|Resource exhausted): (?:Out of memory|Failed to allocate)"
    r"|OOM when allocating tensor"
    # the legacy generation's CUDA checks of cudaErrorMemoryAllocation (2): Caffe2's enforce ("[enforce fail at
    # context_gpu.cu:343] error == cudaSuccess. 2 vs 0. Error at: …/context_gpu.cu:343: out of memory") and Caffe's glog
    # CHECK ("Check failed: error == cudaSuccess (2 vs. 0)  out of memory")
    r"|error == cudaSuccess(?:\. 2 vs 0\. Error at: [^\n]*?:| \(2 vs\. 0\)) +out of memory"
    # TensorRT-LLM's CUDA check ("CUDA runtime error in ::cudaMallocAsync(…): out of memory (…tllmBuffers.h:112)"), TensorRT's allocator
    r"|CUDA runtime error in [^\n]*?: out of memory|Cuda Runtime \(out of memory\)"
    r"|Requested amount of GPU memory \([0-9]+ bytes\) could not be allocated"
    # NCCL 2.19+ puts the CUDA error's number before its text ("NCCL WARN Cuda failure 2 'out of memory'")
    r"|NCCL WARN Cuda failure (?:[0-9]+ )?'out of memory'"
    # ... and PyTorch's THC check's (before 1.x's caching allocator: "THCudaCheck FAIL file=…/THCStorage.cu line=58 error=2 : out
    # of memory"), nccl-tests' ("gpu5: Test CUDA failure common.cu:891 'out of memory'")
    r"|THCudaCheck FAIL file=\S+ line=[0-9]+ error=2 : out of memory|Test CUDA failure \S+:[0-9]+ 'out of memory'"
    # CuPy's memory pool (cupy.cuda.memory.OutOfMemoryError)
    r"|Out of memory allocating [0-9,]+ bytes \(allocated so far: "
    # PyTorch's Apple-silicon backend (MPS), bound by its high-watermark limit rather than the device
    r"|MPS backend out of memory"
    # PyTorch's allocators of Intel GPUs (XPU) and of torch_npu (Ascend NPUs), worded as CUDA's: "XPU out of memory. Tried to
    # allocate 8.00 GiB. GPU 0 has a total capacity of 15.11 GiB.", "NPU out of memory. Tried to allocate 30.00 MiB (NPU 3; …)"
    r"|XPU out of memory|NPU out of memory"
    # ggml's CUDA backend (llama.cpp, Ollama): "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 3257.82 MiB on device 0:
    # cudaMalloc failed: out of memory" (the ROCm build words it so too)
    r"|cudaMalloc failed: out of memory"
    # ... and ggml's allocators after it, naming the backend device and the bytes in full ("ggml_gallocr_reserve_n: failed to
    # allocate CUDA0 buffer of size 838447104", "alloc_tensor_range: …"); Ollama's error quotes this line without the one above
    rf"|{GGML_BUFFER}"
    # vLLM (0.9+) refusing to start on a GPU whose free memory is short of its share (another process holds the rest)
    r"|on startup is less than desired GPU memory utilization"
    # ... and TensorRT-LLM's PyTorch executor (1.0+) not fitting a component (KV cache, sampler) in what the GPU has left:
    # "[TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed due to insufficient GPU memory."
    # (its per-component table follows on lines of their own, read by no rule)
    r"|Executor creation failed due to insufficient GPU memory"
    # XLA's TPU compiler, of a program whose buffers do not fit the chip's HBM (JAX's "RESOURCE_EXHAUSTED: XLA:TPU compile
    # permanent error.", TensorFlow's "Resource exhausted: Compilation failure:"); its on-chip vmem/smem are no device memory
    r"|Ran out of memory in memory space hbm\."
    # Vulkan's: ggml's Vulkan backend (llama.cpp, Ollama: "ggml_vulkan: Device memory allocation of size 118497280 failed.")
    # and the VkResult that Omniverse Kit (Isaac Sim) and Mesa print ("VkResult: ERROR_OUT_OF_DEVICE_MEMORY")
    r"|Device memory allocation of size [0-9]+ failed|ERROR_OUT_OF_DEVICE_MEMORY"
    # PaddlePaddle's allocator, under its "ResourceExhaustedError:" ("Out of memory error on GPU 0. Cannot allocate 128.000000MB
    # memory on GPU 0, 7.995605GB memory has been allocated and available memory is only 0.000000B.")
    r"|Out of memory error on GPU [0-9]+\. Cannot allocate"
    # ggml's CUDA check before 2024 (llama.cpp): "CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory"
    r"|CUDA error [0-9]+ at \S+: out of memory"
    # text-generation-inference's (and LoRAX's) warmup, of the torch OOM its largest batch hit: "RuntimeError: Not enough memory
    # to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`" (before 1.0: "… handle 16000 total tokens
    # with 2 prefill tokens …"); the router's "Server error: …" and the launcher's "Error: Warmup(…)" after it echo the same OOM
    r"|RuntimeError: Not enough memory to handle [0-9]+ (?:prefill|total) tokens"
    # TensorFlow's copy into a tensor its GPU allocator could not give memory ("InternalError: Dst tensor is not initialized.",
    # TF 1.x and 2.x alike; its issue #7025: "… when really the problem is out of GPU memory")
    r"|Dst tensor is not initialized\."
    # ONNX Runtime's CUDA check of cudaErrorMemoryAllocation (2), in its provider's "[ONNXRuntimeError] : 1 : FAIL : …
    # onnxruntime::CudaCall CUDA failure 2: out of memory ; GPU=0 ; hostname=… ; expr=…" (Triton's onnxruntime backend quotes it)
    r"|CUDA failure 2: out of memory"
)
DATALOADER = (
    r"DataLoader worker \(pid(?:\(s\))? (?<pid>[0-9]+)[^)\n]*\) "
    r"(?:is killed by signal: (?<signal>[A-Za-z](?:[A-Za-z ]*[A-Za-z])?)|(?<exited>exited unexpectedly))"
)
# A collective that timed out, and (PyTorch 2.2+) the heartbeat monitor finding the watchdog itself hung.
NCCL_TIMEOUT_LITERALS = ("Watchdog caught collective operation timeout", "Heartbeat monitor timed out", "watchdog got stuck for ")
NCCL_TIMEOUT = "|".join(map(re.escape, NCCL_TIMEOUT_LITERALS))
SHM = (
    r"insufficient shared memory \(shm\)|No space left on device[^\n]*/dev/shm|/dev/shm[^\n]*No space left on device"
    r"|unable to (?:write to file|open shared memory object|mmap [0-9]+ bytes from file) </torch_"
    r"|Error while creating shared memory segment|failed to extend /dev/shm|posix_fallocate failed"
    r"|unable to allocate shared memory"
)
_SHM_PATH = r"(/dev/shm/[^\s'\"():,]+)|<(/torch_[^>\s]+)>"
# PyTorch names a tensor's shared memory segment for the process that made it: /torch_<pid>_<random>[_<n>]
_TORCH_SEGMENT_PID = r"^(?:/dev/shm)?/torch_([0-9]+)_[0-9]"

# bash's report of a job a signal ended ("script.sh: line 9:   298 Killed   python train.py"), the signal's name padded
# to a column ("Aborted                 (core dumped) litgpt …"); a paste may lack the command.
_BASH_KILL = (
    r"line [0-9]+: +(?<pid>[0-9]+) (?<signal>Killed|Terminated|Segmentation fault|Aborted|Bus error|Hangup"
    r"|Illegal instruction|Floating point exception|Quit|Interrupt)(?: +\(core dumped\))?(?: +(?<command>\S.*))?\s*$"
)
# bash's report of a foreground job a signal ended, on a line of its own: "Killed" (SIGKILL: the OOM killer, a CI
# runner's hard stop), "Terminated" (SIGTERM: GitLab's runner at a job's timeout).
# A workflow runner may put the step's name before it: Tekton's `tkn … logs` ("[build : compile] Killed"), Argo's and
# `kubectl logs`' container as a DNS label ("main: Killed": a capitalised "State: Terminated" is a field, no kill).
# The shell's report of a foreground job a signal ended, alone on its line ("Killed", "Segmentation fault (core dumped)").
# A JS monorepo's runner prefixes the package or script whose command it was: lerna and pnpm the package ("@packages/net-
# stubbing: Killed"), npm-run-all the script in padded brackets ("[extensions-ci   ] Killed"), Yarn 2+ the workspace after
# its message code ("➤ YN0000: [@scope/site]: Killed").
_LONE_SIGNAL = (
    r"^\s*(?:\[(?<bracket>[0-9A-Za-z_.:\- ]+)\] *|(?<label>[a-z0-9][a-z0-9.\-]*|@[a-z0-9][a-z0-9._\-]*/[a-z0-9][a-z0-9._\-]*): "
    r"|➤ YN[0-9]{4}: \[(?<workspace>@?[0-9A-Za-z_.\-/]+)\]: )?"
    r"(?<signal>Killed|Terminated|Segmentation fault|Bus error|Aborted|Illegal instruction|Floating point exception)(?: \(core dumped\))?\s*$"
)
_EXIT_CODE = (
    # Azure Pipelines quotes the code: "Bash exited with code '137'.", "exit code: `137`;"; YARN's NodeManager says
    # "Container killed on request. Exit code is 137".
    # Docker's builder before BuildKit: "The command '/bin/sh -c npm install' returned a non-zero code: 137".
    r"(?i)(?:exit(?:ed)?(?: with)? (?:status )?(?:code|status)|exitcode|exits with return code|returned a non-zero code)"
    r"\s*[:=]?\s*(?:is )?['`]?(?<code>-?[0-9]{1,4})\b"
    r"|make(?:\[[0-9]+\])?: \*\*\* .*?Error (?<make>[0-9]{1,4})\b"
    # Travis CI's 'The command "…" exited with 137.', a Kubernetes hook's "command '…' exited with 137: "
    r"|\bexited with (?<bare>-?[0-9]{1,4})(?:[.:,]|\s*$)"
    # lerna's report of a package's script that failed: "lerna ERR! yarn run build-prod exited 137 in '@packages/net-stubbing'"
    r"|\bexited (?<lerna>-?[0-9]{1,4}) in '"
    # Lightning's (2.1+) watcher of the ranks it launched, of one whose process ended (its Popen return code: -N for a signal),
    # on the rank (the child's index + 1), before it kills the others: "[rank: 1] Child process with PID 2084751 terminated
    # with code 1. Forcefully terminating all other processes to avoid zombies 🧟"
    r"|(?:\[rank: (?<child_rank>[0-9]+)\] )?Child process with PID (?<child_pid>[0-9]+) terminated with code (?<child>-?[0-9]{1,4})\."
    # Bazel's report of an action whose command failed, the command's exit code in brackets (128 + N for a signal's kill):
    # "C++ compilation of rule '//tensorflow/core/kernels:conv_ops' failed (Exit 1)", later "Compiling absl/hash/internal/hash.cc
    # [for tool] failed: (Exit 1): gcc failed: error executing CppCompile command …".
    r"|\bfailed:? \(Exit (?<bazel>[0-9]{1,4})\)"
)
_HOOK_STATUS = r"error running hook: exit status -?[0-9]+"
# Docker's legacy builder's failed RUN step: "The command '/bin/sh -c make' returned a non-zero code: 2", Docker 1.7's CLI
# under logrus' info level and with the command in brackets ("INFO[0000] The command [/bin/sh -c make] returned …").
_DOCKER_STEP_FAILED = r"^The command (?:'.*'|\[.*\]) returned a non-zero code: "
# The Kubeflow Training Operator's report of a replica's pod that ended, "namespace.pod" (a namespace is a DNS label, no
# dot; a pod's name may hold dots): "Pod: kubeflow.pytorch-simple-worker-0 exited with code 1", and its event of the
# container's end, the pod without its namespace but with the container ("Error pod pytorch-simple-worker-0 container pytorch
# exitCode: 1").
_EXITED_POD = (
    r"\bPod: (?<namespace>[a-z0-9][a-z0-9-]*)\.(?<pod>[a-z0-9][a-z0-9.-]*) exited with code "
    r"|\bError pod (?<bare_pod>[a-z0-9][a-z0-9.-]*) container (?<container>[a-z0-9][a-z0-9-]*) exitCode: "
)
# strsignal(3)'s words for the signals that end a program (glibc's), as GCC's driver prints them.
_STRSIGNAL = "Killed|Terminated|Segmentation fault|Aborted|Bus error|Hangup|Illegal instruction|Floating point exception|Quit|Interrupt"
_SIGNAL_NAMED = (
    r"died with <Signals\.(?<died>SIG[A-Z0-9]+): [0-9]+>|Signal [0-9]+ \((?<torchrun>SIG[A-Z0-9]+)\) received by PID (?<pid>[0-9]+)"
    # Triton Inference Server's handler of a fatal signal, on its own line above its stack ("Signal (11) received."); a signal
    # it shuts down on it words "Interrupt signal (15) received.".
    r"|(?m:^Signal \((?<triton>[0-9]{1,2})\) received\.$)"
    r"|\bsignal: (?<go>killed|terminated|segmentation fault|aborted|bus error)\b"
    # Yarn 1's run of a script whose process a signal ended: 'error Command failed with signal "SIGKILL".'
    r'|\bCommand failed with signal "(?<yarn_signal>SIG[A-Z0-9]+)"'
    # npm's (7+) of a script whose process a signal ended, one line of its error block ("npm ERR! command failed", "npm ERR!
    # signal SIGKILL", "npm ERR! command sh -c -- node scripts/build.js"); later npm writes its level "npm error".
    r"|(?m:\bnpm (?:ERR!|error) signal (?<npm_signal>SIG[A-Z0-9]+)[ \t]*$)"
    # A process a signal ended, by its number, as Bazel words a spawn's end ("build-runfiles …): Process terminated by signal 9")
    # and PostgreSQL's postmaster a backend's ("server process (PID 25011) was terminated by signal 9: Killed").
    r"|\b[Pp]rocess(?: \(PID (?<by_pid>[0-9]+)\))?(?: was)? terminated by signal (?<by_signal>[0-9]{1,2})\b"
    # joblib's loky executor of a worker process that died under it, its exit code as the signal it names: "TerminatedWorkerError:
    # A worker process managed by the executor was unexpectedly terminated. … The exit codes of the workers are {SIGKILL(-9)}"
    r"|The exit codes of the workers are \{(?<loky>SIG[A-Z0-9]+)\(-[0-9]{1,2}\)"
    # Celery's prefork pool (billiard) of a child process a signal ended, then the WorkerLostError it fails the child's task with:
    # "Process 'ForkPoolWorker-1' pid:109 exited with 'signal 9 (SIGKILL)'", "WorkerLostError: Worker exited prematurely: signal
    # 9 (SIGKILL) Job: 2." (an exit, not a signal, is "exited with 'exitcode 2'", read as the exit code).
    r"|Process '(?<billiard_process>[^'\n]+)' pid:(?<billiard_pid>[0-9]+) exited with 'signal (?<billiard_signal>[0-9]{1,2})\b"
    r"|Worker exited prematurely: signal (?<lost_signal>[0-9]{1,2})\b"
    # CircleCI's task agent (Go), of a step's process a signal ended (the executor's OOM killer), on a line of its own after the
    # step's output: 'Received "killed" signal' (Go's name of the signal, as in "signal: killed").
    rf'|(?m:^Received "(?<circleci>{_STRSIGNAL.lower()})" signal[ \t]*$)'
    # torch.multiprocessing.spawn's: "ProcessExitedException: process 0 terminated with signal SIGKILL".
    r"|process [0-9]+ terminated with signal (?<spawn>SIG[A-Z0-9]+)"
    # GNU make's report of a recipe killed by a signal: "make: *** [Makefile:22: test] Terminated".
    r"|make(?:\[[0-9]+\])?: \*\*\* \[[^\]\n]*\] (?<make>Killed|Terminated|Segmentation fault|Aborted|Bus error)"
    # Open MPI's mpirun / mpiexec: "mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed)."
    r"|process rank (?<mpi_rank>[0-9]+) with PID (?<mpi_pid>[0-9]+) on node (?<mpi_node>[^\s,]+) exited on signal (?<mpi_signal>[0-9]+)"
    # subprocess' CalledProcessError for a child a signal ended, as Python 2 and 3.5 word it ("returned non-zero exit status -9").
    r"|returned non-zero exit status -(?<status_signal>[0-9]{1,2})\b"
    # text-generation-inference's launcher, of a shard (or its download or webserver process) a signal ended, the shard's
    # rank in its span's fields: "Shard process was signaled to shutdown with signal 4 rank=0".
    r"|process was signaled to shutdown with signal (?<tgi_signal>[0-9]{1,2})(?: rank=(?<tgi_rank>[0-9]+))?"
    # Abseil's failure signal handler, opening its record with the signal and the epoch second it came at
    # ("*** SIGABRT received at time=1725140764 on cpu 12 ***"; _pipeline_records.ABSL_SIGNAL).
    r"|(?m:^\*\*\* (?<absl>SIG[A-Z0-9]+) received at time=(?<absl_time>[0-9]+)\b)"
    # GCC's driver, of a compiler pass a signal ended (the OOM killer in a parallel build), in strsignal's words: "g++: fatal
    # error: Killed signal terminated program cc1plus" (GCC 8+), "g++-4.8: internal compiler error: Killed (program cc1plus)"
    # (before), and collect2's of the linker: "collect2: fatal error: ld terminated with signal 9 [Killed]".
    rf"|fatal error: (?<gcc>{_STRSIGNAL}) signal terminated program (?<gcc_program>[0-9A-Za-z_.+\-]+)"
    rf"|internal compiler error: (?<gcc_ice>{_STRSIGNAL}) \(program (?<gcc_ice_program>[0-9A-Za-z_.+\-]+)\)"
    r"|fatal error: (?<collect2_program>[0-9A-Za-z_.+\-]+) terminated with signal (?<collect2_signal>[0-9]{1,2})\b"
    # nvcc's driver, of a CUDA compiler pass a signal ended (the OOM killer in a parallel build, as GCC's above): "nvcc error   :
    # 'cicc' died due to signal 9 (Kill signal)", "'cudafe++' died due to signal 9", "'ptxas' died due to signal 11 (…)".
    r"|nvcc error +: '(?<nvcc_program>[0-9A-Za-z_.+\-]+)' died due to signal (?<nvcc_signal>[0-9]{1,2})\b"
    # torchrun's elastic agent, itself sent a signal (Slurm's scancel or a pod's deletion: 15, a closed terminal: 1), ends on
    # the exception its handler raises: "torch.distributed.elastic.multiprocessing.api.SignalException: Process 2349 got signal: 15"
    r"|SignalException: Process (?<elastic_pid>[0-9]+) got signal: (?<elastic_signal>[0-9]{1,2})\b"
    # ... and its agent stopping its workers (one has failed, or the agent was signalled): "Sending process 62499 closing signal
    # SIGTERM" (torch/distributed/elastic/multiprocessing/api.py; 2.5+: "Closing process 293866 via signal SIGTERM"), a signal
    # sent, not one a process died of: only the pid it was sent to is read
    r"|Sending process (?<elastic_sent_pid>[0-9]+) closing signal SIG[A-Z0-9]+\b|Closing process (?<elastic_closed_pid>[0-9]+) via signal SIG"
    # gunicorn's arbiter on a worker a signal ended (model servers: MLflow's, KServe's, a Flask or FastAPI app): "Worker
    # (pid:21) was sent SIGKILL! Perhaps out of memory?" (20.1+), "Worker with pid 55 was terminated due to signal 9" (20.0).
    r"|Worker \(pid:(?<gunicorn_pid>[0-9]+)\) was sent (?<gunicorn_signal>SIG[A-Z0-9]+)!"
    r"|Worker with pid (?<gunicorn_old_pid>[0-9]+) was terminated due to signal (?<gunicorn_old_signal>[0-9]{1,2})\b"
    # PyTorch Lightning's (1.9+) SIGTERM handler (Slurm's time limit or scancel, a pod's deletion), on the rank's local number:
    # "[rank: 0] Received SIGTERM: 15"; the trainer stops at its next step (2.1+: SIGTERMException). Its "Bypassing SIGTERM: 15"
    # after it repeats the same signal.
    r"|(?m:\[rank: (?<lightning_rank>[0-9]+)\] Received (?<lightning>SIG[A-Z0-9]+): [0-9]{1,2}[ \t]*$)"
)
_EXIT_PID = r"\(pid: ([0-9]+)\)"
# DeepSpeed's launcher names the rank process that ended by its command, the local rank among its arguments: "['/usr/bin/python3',
# '-u', 'main.py', '--local_rank=0', …] exits with return code = -9"; so does torch.distributed.launch (before torchrun), in the
# CalledProcessError it raises for the first that failed: "Command '['/opt/conda/bin/python', '-u', 'tools/train.py',
# '--local_rank=3', …]' died with <Signals.SIGKILL: 9>." ("… returned non-zero exit status 1.").
_DEEPSPEED_CHILD_RANK = (
    r"\['[^\n]*?'--local_rank=([0-9]+)'[^\n]*\](?: exits with return code = |' returned non-zero exit status |' died with <Signals\.)"
)
# The last field of a failure in torchrun's ChildFailedError table (torch 1.9's "msg:", later "traceback :") repeats what
# the entry's exitcode line says: "Signal 9 (SIGKILL) received by PID 14750", 1.9's "Process failed with exitcode 1".
_TORCHRUN_ECHO = r'^\s*(?:traceback|msg)\s*: "?(?:Signal [0-9]+ \(SIG[A-Z0-9]+\) received by PID|Process failed with exitcode) '

_SIGNAL_BY_WORD = {
    "killed": "SIGKILL", "terminated": "SIGTERM", "segmentation fault": "SIGSEGV", "aborted": "SIGABRT",
    "bus error": "SIGBUS", "hangup": "SIGHUP", "illegal instruction": "SIGILL", "floating point exception": "SIGFPE",
    "quit": "SIGQUIT", "interrupt": "SIGINT",
}
_SIGNAL_BY_NUMBER = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
                     9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}

# A CUDA, cuDNN or NCCL error other than running out of memory (kept as cuda_oom): what it says, for the
# correlation with the GPU's Xids (an illegal memory access, an uncorrectable ECC error, a lost device).
_CUDA_ERROR = (
    r"CUDA (?:driver )?error: (?<runtime>[^\n`']+?)(?: when calling|\s*$|\n|')|cuda runtime error \([0-9]+\) : (?<thc>[^\n]+?) at \S+:[0-9]+"
    r"|(?<cudnn>CUDNN_STATUS_[A-Z_]+)|(?<nccl_code>nccl(?:Unhandled[A-Za-z]*|System|Internal|Remote|InvalidUsage|InvalidArgument)Error)"
    # NCCL's phrase for its result code, after the place torch checked it ("NCCL error in: …/NCCLUtils.hpp:268, remote process
    # exited or there was a network error, NCCL version 2.21.5") or, from ProcessGroupNCCL's watchdog, after a colon
    # ("… watchdog thread terminated with exception: NCCL error: unhandled system error, NCCL version …", "Got a NCCL error: …")
    r"|NCCL error(?: in: \S+,|:) (?<nccl>[a-z][a-z ]+[a-z])|(?<driver>CUDA_ERROR_[A-Z_]+)"
    # the runtime API's name of it, as CuPy's CUDARuntimeError and C++ CUDA programs print it ("cudaErrorIllegalAddress: …")
    r"|(?<runtime_name>cudaError[A-Z][A-Za-z]+)"
    # TensorRT-LLM's CUDA check, the failed call, then the runtime's text and the check's place (Triton's backend quotes it):
    # "[TensorRT-LLM][ERROR] CUDA runtime error in cudaDeviceGetDefaultMemPool(&memPool, device): operation not supported
    # (/app/…/bufferManager.cpp:170)"; the call's own "::" and parentheses hold no ": "
    r"|CUDA runtime error in [^\n]*?: (?<trtllm>[a-z][^\n(]*?) \(\S+:[0-9]+\)"
    # The GPU or its driver gone, as nvidia-smi, NVML and the container toolkit tell it ("Unable to determine the device
    # handle for GPU 0000:09:00.0: Unknown Error" after an Xid 79, "nvml error: driver not loaded", torch's "Found no NVIDIA driver"),
    # or nvidia-smi not finding NVML's library at all (a container the toolkit gave no driver libraries: "NVIDIA-SMI couldn't find
    # libnvidia-ml.so library in your system."). (Its forms: rca.sources._nvsmi_common.HANDLE_GPU.) NVML's error ends where
    # nvidia-smi's advice after it begins, two spaces after a full stop ("GPU is lost.  Reboot the system to recover this
    # GPU"), so the error reads the same where a console broke the advice onto a line of its own.
    rf"|device handle for GPU ?(?:(?:[0-9]+: )?{HANDLE_BUS}|[0-9]+): (?<handle>[^\n]+?)(?:\.  [^\n]*)?(?:\n|$)"
    r"|(?<smi>couldn't communicate with the NVIDIA driver|couldn't find libnvidia-ml\.so)"
    r"|Failed to initialize NVML: (?<nvml_init>[^\n]+)|nvml error: (?<nvml>[^:\n]+)|(?<no_driver>Found no NVIDIA driver)"
    # A driver older than the CUDA the framework was built for (an image upgraded past its nodes): PyTorch's wording
    # ("The NVIDIA driver on your system is too old (found version 12080)") and the CUDA runtime's (cudaErrorInsufficientDriver).
    r"|(?<old_driver>NVIDIA driver on your system is too old(?: \(found version [0-9]+\))?|CUDA driver version is insufficient for CUDA runtime version)"
    # A GPU container that could not start (its log or job's holds the only trace): the container toolkit's CLI refusing a
    # device that is not there or a driver older than the image's CUDA ("nvidia-container-cli: device error: 3: unknown device",
    # "requirement error: unsatisfied condition: cuda>=12.4, please update your driver …", enroot's hook: "container error: file
    # lookup failed: …"), Docker with no GPU runtime at all, and PyTorch finding no device it may use. (Its "initialization
    # error: nvml error: …" is read by nvml above.)
    r"|nvidia-container-cli: (?<container_cli>(?:device|requirement|container|mount|ldcache) error: [^\n\\]*?)(?:: unknown\.?)?(?:\\|\n|$)"
    r'|(?<no_gpu_runtime>could not select device driver "[^"\n]*" with capabilities: \[\[gpu\]\])|(?<no_gpus>No CUDA GPUs are available)'
    # bitsandbytes' CUDA check before it exits: "Error named symbol not found at line 116 in file bitsandbytes/csrc/ops.cu" (the
    # runtime's cudaGetErrorString, the kernel source's line), on a line of its own or after a progress bar's last draw
    r"|(?m:\bError (?<bnb>[a-z][a-z ]*[a-z]) at line [0-9]+ in file \S+\.cuh?$)"
    # vLLM's CUDACHECK in its own kernels, printed before the worker exits ("Failed: Cuda error
    # /workspace/csrc/custom_all_reduce.cuh:455 'an illegal memory access was encountered'"), and NCCL's CUDA check
    # ("misc/strongstream.cc:343 NCCL WARN Cuda failure 'an illegal memory access was encountered'", 2.19+ with the number)
    r"|Cuda error \S+:[0-9]+ '(?<cuda_check>[^'\n]+)'|NCCL WARN Cuda failure (?:[0-9]+ )?'(?<nccl_cuda>[^'\n]+)'"
    # PyTorch's CUDA check of its THC generation (0.4 to 1.x: "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp
    # line=271 error=4 : unspecified launch failure"), the runtime's text up to the end or a terminal's padding after it; and
    # nccl-tests' checks after the failing host's name ("gpu5: Test NCCL failure common.cu:343 'unhandled cuda error'", NCCL's
    # result phrase, 2.13+ with its last error after " / "; "Test CUDA failure common.cu:891 'an illegal memory access …'")
    r"|THCudaCheck FAIL file=\S+ line=[0-9]+ error=[0-9]+ : (?<thc_check>[^\n]*?\S)(?: {2,}|\s*(?:\n|$))"
    r"|Test NCCL failure \S+:[0-9]+ '(?<nccl_test>[a-z][a-z ]*[a-z])|Test CUDA failure \S+:[0-9]+ '(?<cuda_test>[^'\n]+)'"
)

# A UUID ends on a hex digit: one an author shortened ("GPU-455e672a-...") keeps no trailing dash.
_UUID = r"(?:GPU|MIG)-[0-9a-fA-F-]*[0-9a-fA-F]"
# A redacted device ("Device=GPU-XX-X-X-XX-XX") still reports the Xid.
_XID_PLUGIN = rf"XidCriticalError: Xid=(?<xid>[0-9]+) on Device=(?:(?<uuid>{_UUID})|\S+)"
_XID_NVRM = r"NVRM: Xid \(PCI:(?<pci>[0-9a-fA-F:.]+)\): (?<xid>[0-9]+)"
# The container toolkit's CLI refusing a GPU it was asked for that the node does not have (an index past its count, a UUID
# of another node): "nvidia-container-cli: device error: 3: unknown device".
_UNKNOWN_DEVICE = rf"nvidia-container-cli: device error: (?:(?<uuid>{_UUID})|(?<index>[0-9]+)): unknown device"
_UNHEALTHY = rf"'(?<resource>[0-9A-Za-z_./\-]+)' device marked unhealthy: (?<uuid>{_UUID})"
# libnvidia-container's listing of the devices it found (nvidia-container-cli --debug, `nvidia-container-cli -k -d /dev/tty
# info`): "nvc_info.c:520] listing device /dev/nvidia0 (GPU-03bb5927-… at 00000000:05:00.0)", the one line that ties a
# device node's index to its GPU's UUID and bus
_NVC_LISTING = rf"listing device /dev/nvidia(?<index>[0-9]+) \((?<uuid>{_UUID}) at (?<bus>[0-9a-fA-F]{{4,8}}:[0-9a-fA-F]{{2}}:[0-9a-fA-F]{{2}}\.[0-7])\)"
# kubelet's device manager refusing a pod the devices its plugin marked unhealthy ("Allocate failed due to no healthy devices
# present; cannot allocate unhealthy devices amd.com/gpu, which is unexpected", as an events list shows it)
_NO_HEALTHY = r"cannot allocate unhealthy devices ([0-9A-Za-z_./\-]*[0-9A-Za-z_\-])"

_JAVA_OOM = r"java\.lang\.OutOfMemoryError(?::\s*(?<what>[^\n]*))?"
_JAVA_OOM_KINDS = (
    ("Java heap space", "jvm_heap"), ("Metaspace", "jvm_metaspace"), ("GC overhead limit exceeded", "jvm_gc_overhead"),
    ("native thread", "jvm_native_thread"), ("Direct buffer memory", "jvm_direct_buffer"),
    ("Requested array size", "jvm_array_size"), ("Compressed class space", "jvm_compressed_class"),
)
_GO_OOM = r"fatal error: (?:runtime: )?out of memory|^runtime: out of memory|runtime: VirtualAlloc of [0-9]+ bytes failed"
# YARN's NodeManager kills a container whose process tree outgrows its share, and says so in the container's
# diagnostics: "Container [pid=8788,containerID=container_…] is running beyond physical memory limits. Current usage:
# 9.8 GB of 9.8 GB physical memory used; 43.0 GB of 47.6 TB virtual memory used. Killing container." (Hadoop 3.1+:
# "is running 1234B beyond the 'PHYSICAL' memory limit."); Spark's YARN backend repeats it for the executor it lost:
# "Container killed by YARN for exceeding memory limits. 8.2 GB of 8 GB physical memory used." (Spark 3: "exceeding physical
# memory limits"). Sizes are Hadoop's 1024-based "9.8 GB".
# Spark names the container of an executor that failed and its node: "Container marked as failed:
# container_1516900607498_6585_01_000008 on host: node1.example.com. Exit status: 137. Diagnostics: …".
_YARN_LITERALS = (
    "Container killed by YARN for exceeding ", "memory limits. Current usage: ", "memory limit. Current usage: ", "Container marked as failed: ",
)
_YARN_FAILED = r"Container marked as failed: (?<id>container_[0-9a-z_]+)(?: on host: (?<host>[0-9A-Za-z_.\-]*[0-9A-Za-z_\-]))?"
_YARN_LIMIT = r"(?i)(?:exceeding|beyond) (?:the ')?(physical|virtual)\b"
_YARN_AMOUNT = r"(?<used>[0-9]+(?:\.[0-9]+)?) ?(?<used_unit>[KMGT]?B) of (?<total>[0-9]+(?:\.[0-9]+)?) ?(?<total_unit>[KMGT]?B) {} memory used"
_YARN_CONTAINER = r"Container \[pid=(?<pid>[0-9]+),containerID=(?<id>container_[0-9a-z_]+)\]"
_GO_REQUEST = r"cannot allocate ([0-9]+)-byte block|VirtualAlloc of ([0-9]+) bytes failed"
# PyTorch's host-memory allocator (c10), out of RAM (ZeRO-Offload's pinned buffers, a checkpoint loaded to the CPU): "RuntimeError:
# [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 21474836480 bytes.
# Error code 12 (Cannot allocate memory)"; Windows' build words it "not enough memory".
_CPU_ALLOC = r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate ([0-9]+) bytes"

CI_EVENTS = (
    ("The runner has received a shutdown signal", "runner_shutdown"), ("The operation was canceled", "canceled"),
    ("has exceeded the maximum execution time", "timeout"), ("lost communication with the server", "runner_lost"),
    # Jenkins' durable-task sh step: the script's wrapper stopped touching its log (the agent or the script died; its exit
    # code is then -1), and a build that survived a restart of the controller.
    ("wrapper script does not seem to be touching the log file", "script_lost"), ("Resuming build after Jenkins restart", "controller_restart"),
    # GitLab's runner stopping a job at its timeout: the step's warning and the job's failure.
    ("could not run to completion because the timeout was exceeded", "timeout"), ("Job failed: execution took longer than", "timeout"),
    # CircleCI's, of a step that printed nothing for its no_output_timeout (it kills the step)
    ("Too long with no output (exceeded ", "timeout"),
    # Azure Pipelines' job that no agent of its pool ever took ("##[error]The agent did not connect within the alloted
    # time of 45 minute(s).", "alloted" as Azure spells it).
    ("did not connect within the alloted time", "runner_unavailable"),
    # Bazel's client, of its build server (a JVM) that died under it, the OOM killer's usual victim in a CI container:
    # "Server terminated abruptly (error code: 14, error message: 'Socket closed', log file: '…/server/jvm.out')".
    ("Server terminated abruptly (error code: ", "build_server_lost"),
    # pytest-xdist's controller, of a worker process that died mid-test (a segfault, the OOM killer): "[gw2] node down: Not
    # properly terminated", and (2.5+) "worker 'gw3' crashed while running 'tests/test_x.py::test_y'".
    ("] node down: Not properly terminated", "test_worker_crashed"), ("' crashed while running", "test_worker_crashed"),
)
# Jenkins' durable-task step losing the agent its script runs on ("Cannot contact Ubuntu-1604-1: java.lang.InterruptedException",
# "…: hudson.remoting.ChannelClosedException"): only with Jenkins' exception after it, since an application's own
# "Cannot contact the metadata server" is no CI runner's.
_JENKINS_AGENT_LOST = ("Cannot contact ", r"Cannot contact \S+: (?:java|hudson)\.")
# The level the runner gives the events that end a job (GitHub's raw log prints them under "##[error]", its web UI and a
# paste of it without): a lost or stopped runner, a timeout or a lost script failed the job; a cancellation may be a user's.
_CI_EVENT_SEVERITY = {
    "runner_shutdown": "error", "runner_lost": "error", "runner_unavailable": "error", "timeout": "error", "script_lost": "error",
    "build_server_lost": "error", "test_worker_crashed": "error",
    "canceled": "warning",
}


_DATALOADER_LITERAL = "DataLoader worker"
# vLLM's frontend, of an engine that never came up: 0.6's multiprocessing frontend ("RuntimeError: Engine process failed to
# start"), V1's client (0.8+: "RuntimeError: Engine core initialization failed. See root cause above."), and V1's engine core
# of a worker process that died starting ("Exception: WorkerProc initialization failed due to an exception in a background
# process. See stack trace for root cause.").
_VLLM_ENGINE_START_FAILED = ("Engine process failed to start", "Engine core initialization failed", "WorkerProc initialization failed")
# ... and of one that died serving: V1's engine core on the exception that ends its busy loop ("EngineCore encountered a fatal
# error."), the frontend's EngineDeadError ("EngineCore encountered an issue. See stack trace (above) for the root cause."), and
# its client's watcher of the core's process ("Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.").
_VLLM_ENGINE_DEAD = ("EngineCore encountered a fatal error", "EngineDeadError", "died unexpectedly, shutting down client")
# V1's multiproc executor of one of its worker processes ("Worker proc VllmWorker-2 died unexpectedly (exit code: None),
# shutting down executor."; before 0.10 without the exit code): its death was seen, not a kill, so it is no process_killed.
_VLLM_WORKER_DIED = r"\bWorker proc \S+ died unexpectedly\b"
_VLLM_WORKER_LITERAL = "Worker proc "
_JAVA_OOM_LITERAL = "java.lang.OutOfMemoryError"

# family → what each of its rules needs in the message: literals (any of them) or a regex.
_FAMILIES: dict[str, tuple[str, ...] | str] = {
    "cuda": CUDA_OOM,
    "dataloader": ("DataLoader worker (pid",),
    "shm": SHM,
    "bash": ("line ",),
    "killed": ("Killed", "Terminated", "Segmentation fault", "Bus error", "Aborted", "Illegal instruction", "Floating point exception"),
    # subprocess' CalledProcessError for a child a signal ended names the launcher's child ("died with <Signals.SIGKILL: 9>.")
    "exit": r"(?i)exit|make|non-zero code|terminated with code|died with <Signals\.",
    "named_signal": (
        "died with <Signals.", ") received by PID ", ") received.", "signal: ", "exited on signal ", "*** [", " terminated with signal SIG",
        "returned non-zero exit status -", "process was signaled to shutdown with signal ", " received at time=",
        " signal terminated program ", "internal compiler error: ", " terminated with signal ", " got signal: ", ") was sent SIG",
        " was terminated due to signal ", '" signal', "' died due to signal ", " closing signal SIG", " via signal SIG",
        'Command failed with signal "', "npm ERR! signal SIG", "npm error signal SIG", "rocess terminated by signal ",
        " was terminated by signal ", "The exit codes of the workers are {SIG",
        " exited with 'signal ", "Worker exited prematurely: signal ",
        "] Received SIG",
    ),
    "exit_pid": ("(pid: ",),
    "xid": ("XidCriticalError: Xid=", "NVRM: Xid (PCI:", "unhealthy", "device handle for GPU", ": unknown device", "listing device /dev/nvidia"),
    # the kernel's OOM killer on a console a job's output holds (_kernel_oom_facts); its CPU line names the invoking task's pid
    "kernel_oom": ("invoked oom-killer: ", "Killed process ", "Kill process ", "kill process ", " PID: ", "Pid: "),
    "dcgm_health": ("[[Health]] Detected ",),
    "java_oom": (_JAVA_OOM_LITERAL,),
    "go_oom": ("out of memory", "VirtualAlloc of "),
    "cpu_alloc": ("DefaultCPUAllocator: ",),
    "cuda_error": (
        "CUDA error: ", "CUDA driver error: ", "cuda runtime error", "CUDA runtime error in ", "CUDNN_STATUS_", "NCCL error", "ncclUnhandled", "ncclSystemError",
        "ncclInternalError", "ncclRemoteError", "ncclInvalid", "CUDA_ERROR_", "cudaError",
        "device handle for GPU", "couldn't communicate with the NVIDIA driver", "couldn't find libnvidia-ml.so",
        "Failed to initialize NVML", "nvml error: ", "Found no NVIDIA driver", "NVIDIA driver on your system is too old",
        "CUDA driver version is insufficient", " in file ", "nvidia-container-cli: ", "could not select device driver ",
        "No CUDA GPUs are available", "Cuda error ", "NCCL WARN Cuda failure ", "THCudaCheck FAIL ", "Test NCCL failure ", "Test CUDA failure ",
    ),
    "reason": ("reason:", "reason=", "OOMKilled"),
    "failure": ("Job failed (",),
    "slurm_oom": (
        "oom-kill event", "oom_kill event", "Out Of Memory", "srun: error: ", " CANCELLED AT ", " exceeded memory limit (",
        "srun: Job step aborted: ",
        "OUT_OF_ME", "TIMEOUT", "NODE_FAIL", "FAILED",
        # slurmctld's own lines about a job (_CTLD_*)
        "OOM failure", " WEXITSTATUS ", "Time limit exhausted for ", " due to failure of node ", " on failed node ", " due to failed node ",
        "REQUEST_KILL_JOB",
        "Kill task failed",
        # the other batch schedulers' kills of a job over a limit (_PBS_KILL, _LSF_TERM)
        "PBS: job killed: ", "TERM_MEMLIMIT: ", "TERM_RUNLIMIT: ",
        # ... and their accounting of a job's end (_PBS_EXIT, _SGE_EXIT, _SGE_FAILED, _SGE_LIMIT, _SGE_DIED)
        "Exit_status", "exit_status", "failed  ", "failed: ", " enforced h_", "exceeds job hard limit", " died through signal ",
    ),
    "yarn": _YARN_LITERALS,
    "ray_oom": (
        "killed due to memory pressure (OOM)", "killed due to the node running low on memory", "System memory low at node",
        "% of the memory on node ",
    ),
    "ray_worker": ("Worker exit type: ", "worker exit type: "),
    # NCCL's RAS report (2.24+, what `ncclras` or a STATUS query of its socket prints): _NCCL_RAS
    "nccl_ras": (
        r"^#[0-9]+-[0-9]+ \([0-9a-f]{16}\) [A-Z]| managed by process [0-9]| -- \[process information not found\]"
        r"|^ +Process [0-9]+ on node [^\n]* managing GPU|considered dead \(unreachable via the RAS network\)"
        r"|^ +Missing communicator data from "
    ),
    "container": ("container",),
    "ray_task": ("ray::",),
    "vllm_error": (
        "No available memory for the cache blocks", "max seq len (", "EngineCore failed to start",
        "Not enough memory. Please try to increase --mem-fraction-static", *_VLLM_ENGINE_START_FAILED, *_VLLM_ENGINE_DEAD,
        _VLLM_WORKER_LITERAL,
    ),
    "python_warning": ("Warning: ",),
    "rank": ("[Rank ",),
    "pg": ("[PG ",),
    "nccl_work": (
        "SeqNum=", "OpType=", "NumelIn=", "NumelOut=", "Timeout(ms)=", "ran for ", "detected by watchdog at work: ", "NCCL work: ",
        # torch 2.6+: "failure detected by watchdog at work sequence id: 2847 PG status: last enqueued work: 2855, …"
        "work sequence id: ", "enqueued work: ",
    ),
    "vllm": (
        "# GPU blocks: ", "Maximum concurrency for ", "Available KV cache memory: ", "kv_cache_size=", "reserved for KV Cache is ",
        "total_gpu_memory", "gpu_memory_utilization", " took ", "max seq len (", "stored in KV cache (", "GPU KV cache usage: ",
        "Running: ", "Pending: ", "Waiting: ",
    ),
    # TensorRT-LLM sizing its paged KV cache: "Memory usage when calculating max tokens in paged kv cache: total: 39.39 GiB,
    # available: 21.89 GiB" (the device's memory, and what is free of it and of the runtime's pool)
    "trt_memory": ("Memory usage when calculating max tokens in paged kv cache: ",),
    # SGLang's startup: the GPU's free memory after the weights are loaded and after the KV cache's pool is made ("Load
    # weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=12.25 GB, mem usage=15.06 GB.", "Memory pool end.
    # avail mem=2.44 GB"), the pool's size ("KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB")
    "sglang_memory": ("avail mem=", "KV Cache is allocated. "),
    "trainer_dict": r"^\{",
    "setting": (" = ",),
    "loss": r"(?i)loss",
    "phase": ("***** Running ",),
    "ci_event": (*(needle for needle, _ in CI_EVENTS), _JENKINS_AGENT_LOST[0]),
}
# Families that read routine progress (losses, vLLM metrics, trainer settings) into attrs (TensorRT-LLM's KV-cache sizing
# into the device's total memory too);
# only the others, with the exception anchors, can give a record a kind or other facts.
PROGRESS = ("vllm", "trt_memory", "sglang_memory", "trainer_dict", "setting", "loss")
INCIDENTS = tuple(family for family in _FAMILIES if family not in PROGRESS)
# Families whose facts only matter once another family has decided the kind.
_KIND_BOUND = {"exit_pid", "container", "ray_task"}


# Alternatives a rule's regex holds at most. Past ~56 the regex engine drops its literal prefilter and
# a pass costs 2.4x (measured on 150k pipeline lines: 57 alternatives 10.6 ms, 58 or more 24 ms); two
# passes of fewer each cost 11.8 ms.
_RULE_ALTERNATIVES = 48


def _spelled(families: tuple[str, ...], *literals: str) -> tuple[str, ...]:
    """Regexes of which one matches what a record spells if one of ``families`` may concern it."""
    gates = [_FAMILIES[family] for family in families if family not in _KIND_BOUND]
    pieces = [(f"(?:{gate})", gate.count("|") + 1) if isinstance(gate, str) else ("|".join(map(re.escape, gate)), len(gate)) for gate in gates]
    pieces += [(re.escape(literal), 1) for literal in literals]
    rules: list[list[str]] = [[]]
    held = 0
    for piece, alternatives in pieces:
        if held + alternatives > _RULE_ALTERNATIVES and rules[-1]:
            rules.append([])
            held = 0
        rules[-1].append(piece)
        held += alternatives
    return tuple("|".join(rule) for rule in rules)


def spells(text: pl.Expr, rules: tuple[str, ...]) -> pl.Expr:
    """Whether ``text`` matches one of ``rules`` (from :func:`_spelled`)."""
    return pl.any_horizontal(text.str.contains(rule) for rule in rules)


PROGRESS_RULE = _spelled(PROGRESS)
# What kind_and_severity reads from a record's message alone: a host out of memory (C++'s, the kernel's answer), a full disk.
_HOST_FAILURE_LITERALS = ("std::bad_alloc", "[Errno 12] Cannot allocate memory", "No space left on device")
# Failures that inference servers print with no level of their own: ggml's loader after a buffer it could not get (llama.cpp,
# Ollama's runner: "llama_model_load: error loading model: unable to allocate CUDA0 buffer", "llama_load_model_from_file: failed
# to load model", "llama_new_context_with_model: failed to allocate compute buffers", and the host-memory "alloc_tensor_range:
# failed to allocate CPU buffer of size …"), Ollama's scheduler of a runner that died ("error starting llama runner: llama runner
# process has terminated"), and ONNX Runtime's status ("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : …", "… Failed to allocate
# memory for requested buffer of size N" of its BFC arena).
_UNLEVELLED_FAILURES = (
    "error loading model: ", ": failed to load model", "failed to allocate compute buffers", "_alloc_buffer: failed to allocate buffer",
    "alloc_tensor_range: failed to allocate", "error starting llama runner", "[ONNXRuntimeError] : ",
    "Failed to allocate memory for requested buffer of size",
    # a command that could not be run at all (the GPU operator's driver-validation without a driver root: "chroot: failed to
    # run command 'nvidia-smi': No such file or directory", a shell's "nvidia-smi: command not found"), and CUDA refusing
    # the validator's workload (the CUDA sample's "Failed to allocate device vector A (error code …)!")
    "chroot: failed to run command ", ": command not found", "Failed to allocate device vector ",
    "Failed to create CUDA context", "failed to create CUDA context",
    # a container that never started, as the runtime or the scheduler's plugin tells it with no level of its own: the OCI runtime
    # under Docker's CLI ("docker: Error response from daemon: failed to create shim task: OCI runtime create failed: …";
    # the daemon's other answers, "No such container: x" of a cleanup's `docker rm`, are routine), pyxis (Slurm's container
    # plugin: "pyxis: container start failed with error code: 1", "pyxis: couldn't start container")
    "OCI runtime create failed", "container start failed with error code", "couldn't start container",
    # SGLang's scheduler of a forward pass stuck past --watchdog-timeout ("[2025-03-09 00:57:15 TP4] Watchdog timeout
    # (self.watchdog_timeout=300)"), and the server's parent it then signals, which kills its process tree ("Received sigquit
    # from a child proces. It usually means the child failed."): both logged at error under a format that prints no level
    "Watchdog timeout (self.watchdog_timeout=", "Received sigquit from a child proces",
    # the GPU stack's own failures, printed with no level: the driver container's installer that cannot unload the modules
    # it replaces ("Could not unload NVIDIA driver kernel modules, driver is in use": the container restarts), DCGM's
    # nv-hostengine whose daemonised child never signalled it was up ("Got error 11 while waiting for SIGUSR1 from child process.")
    "Could not unload NVIDIA driver kernel modules", " while waiting for SIGUSR1 from child process",
    # kubelet's device manager that cannot admit a pod for want of a healthy device (the k8s source's admission failure)
    "cannot allocate unhealthy devices ",
)
# ... and their warnings: nv-hostengine asked to stop one it finds none of ("Unable to terminate host engine, it may not be
# running.", as dcgm-exporter 1.x's script stopping it after a failed start prints it).
_UNLEVELLED_WARNINGS = ("Unable to terminate host engine",)
INCIDENT_RULE = _spelled(
    INCIDENTS, _DATALOADER_LITERAL, *NCCL_TIMEOUT_LITERALS, *_HOST_FAILURE_LITERALS, *_UNLEVELLED_FAILURES, *_UNLEVELLED_WARNINGS,
)


def _msg() -> pl.Expr:
    return pl.col("message")


def gated(family: str) -> pl.Expr:
    """The message where it spells what ``family``'s rules need, else null."""
    return pl.col(f"m_{family}")


def _gate(gate: tuple[str, ...] | str) -> pl.Expr:
    spelled = _msg().str.contains(gate) if isinstance(gate, str) else _msg().str.contains_any(list(gate))
    return pl.when(spelled).then(_msg())


def gate_families(records: pl.DataFrame, families: tuple[str, ...]) -> tuple[pl.DataFrame, set[str]]:
    """``records`` with each family's gated message (``m_<family>``), and the families some record spells.

    Families other than ``families`` are taken to be spelled by none of ``records``.
    """
    gated_records = records.with_columns(_gate(_FAMILIES[family]).alias(f"m_{family}") for family in families)
    spelled = gated_records.select(gated(family).is_not_null().any().alias(family) for family in families).row(0, named=True)
    return gated_records, {family for family, some in spelled.items() if some}


def first(text: pl.Expr, pattern: str, group: int = 1) -> pl.Expr:
    return text.str.extract(pattern, group)


def num(text: pl.Expr, dtype: pl.DataType = pl.Int64()) -> pl.Expr:
    """A number read from matched text; null when it does not fit ``dtype``."""
    return text.cast(dtype, strict=False)


def size(text: pl.Expr, pattern: str) -> pl.Expr:
    """Bytes of the first size matched by ``pattern``, whose ``{size}`` stands for a number and unit."""
    parts = text.str.extract_groups(pattern.replace("{size}", _SIZE)).struct
    return _bytes(parts.field("n"), parts.field("u"))


def _bytes(number: pl.Expr, unit: pl.Expr) -> pl.Expr:
    factor = unit.replace_strict(_UNIT_BYTES, default=None, return_dtype=pl.Float64)
    return (number.str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False) * factor).round().cast(pl.Int64, strict=False)


def _pbs_bytes(number: pl.Expr, unit: pl.Expr) -> pl.Expr:
    """A size on a PBS kill line: its units are lower case and 1024-based ("38427376kb"), bytes without one."""
    return _bytes(number, unit.fill_null("b").str.to_uppercase())


def _signal_of_exit(code: pl.Expr) -> pl.Expr:
    number = pl.when(code.is_between(129, 159)).then(code - 128).when(code.is_between(-31, -1)).then(-code)
    return number.replace_strict(_SIGNAL_BY_NUMBER, default=None, return_dtype=pl.String)


def _signal_of_word(word: pl.Expr) -> pl.Expr:
    return word.str.to_lowercase().replace_strict(_SIGNAL_BY_WORD, default=None, return_dtype=pl.String)


def ci_event() -> pl.Expr:
    """What a CI runner's line says happened to the job (CI_EVENTS), else null."""
    line = gated("ci_event")
    return pl.coalesce(label(line, CI_EVENTS), pl.when(line.str.contains(_JENKINS_AGENT_LOST[1])).then(pl.lit("runner_lost")))


def label(haystack: pl.Expr, needles: tuple[tuple[str, str], ...]) -> pl.Expr:
    """The label of the first needle found in ``haystack``, else null."""
    return pl.coalesce([pl.when(haystack.str.contains(needle, literal=True)).then(pl.lit(name)) for needle, name in needles])


def _java_oom(what: pl.Expr) -> pl.Expr:
    return label(what, _JAVA_OOM_KINDS).fill_null("jvm")


def _cuda_facts() -> dict[str, pl.Expr]:
    m = gated("cuda")
    # PyTorch lists the device's processes: itself as "this process has X memory in use", every
    # other one as "Process N has X memory in use" (itself too, when NVML reports a pid of another
    # pid namespace, as in a container). One such clause and no "this process" is taken as this process.
    listed = m.str.extract_all(r"Process [0-9]+ has -?[0-9]+(?:\.[0-9]+)? ?[A-Za-z]+ memory in use")
    listed_pids = listed.list.eval(pl.element().str.extract(r"Process ([0-9]+)", 1).cast(pl.Int64, strict=False))
    listed_bytes = listed.list.eval(size(pl.element(), r"has {size} memory in use"))
    this_process = size(m, r"this process has {size} memory in use")
    alone = this_process.is_null() & (listed.list.len() == 1)
    several = listed.list.len() > pl.when(this_process.is_null()).then(1).otherwise(0)
    # vLLM's "Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB)":
    # the free and total memory share one unit; the share it wanted is what it could not have.
    startup = m.str.extract_groups(
        r"Free memory on device[^(\n]*\((?<free>[0-9]+(?:\.[0-9]+)?)/(?<total>[0-9]+(?:\.[0-9]+)?) ?(?<u>[KMGT]i?B)\) on startup"
    ).struct
    # XLA's TPU compiler: "Used 21.90G of 7.48G hbm.", what the program needs of what the chip has.
    hbm = m.str.extract_groups(
        r"memory space hbm\. Used (?<used>[0-9]+(?:\.[0-9]+)?)(?<uu>[KMGT]|B) of (?<cap>[0-9]+(?:\.[0-9]+)?)(?<cu>[KMGT]|B) hbm\."
    ).struct
    # MPS's "max allowed" is the most its allocator may hold: the bound the allocation hit.
    total = pl.coalesce(
        size(m, r"; {size} total capacity"), size(m, r"total capaci?ty of {size}"), size(m, r"max allowed: {size}"),
        _bytes(startup.field("total"), startup.field("u")), _bytes(hbm.field("cap"), hbm.field("cu")),
        # what CUDA told XLA's cudaMallocAsync allocator: " Reported by CUDA: Free memory/Total memory: 22635544576/85095874560"
        num(first(m, r"Free memory/Total memory: [0-9]+/([0-9]+)")),
    )
    free = pl.coalesce(
        size(m, r"of which {size} is free"), size(m, r"{size} free[;)]"), _bytes(startup.field("free"), startup.field("u")),
        num(first(m, r"Free memory/Total memory: ([0-9]+)/")), size(m, r"available memory is only {size}"),
    )
    return {
        "cuda_oom": m.is_not_null(),
        "gpu_index": pl.coalesce(
            first(m, r"\((?:GPU|NPU) +([0-9]+);"), first(m, r"GPU ([0-9]+) has a total capac"),
            # TensorFlow's, XLA's ("on device ordinal 0"; JAX's "with allocator GPU_0_bfc on device 0.")
            first(m, r"/device:GPU:([0-9]+)"), first(m, r"on device (?:ordinal |cuda:)?([0-9]+)\b"),
            # TensorFlow 1.x's older device names ("_device=\"/job:localhost/replica:0/task:0/gpu:0\"")
            first(m, r"/task:[0-9]+/gpu:([0-9]+)\b"),
            # XLA's and TensorFlow's cudaMallocAsync allocator is named for the CUDA device: "gpu_async_1 cuMemAllocAsync failed …"
            first(m, r"\bgpu_async_([0-9]+) cuMemAllocAsync failed"), first(m, r"Out of memory error on GPU ([0-9]+)\."),
            # the device ggml names under its CUDA error ("current device: 0", "  current device: 1, in function …")
            first(m, r"\ncurrent device: ([0-9]+)"), first(m, r"\n\s+current device: ([0-9]+), in function "),
            first(m, r"failed to allocate (?:CUDA|ROCm|Vulkan)([0-9]+) buffer\b"),
            # ONNX Runtime's CUDA check names the device after the error ("CUDA failure 2: out of memory ; GPU=0 ; …")
            first(m, r"CUDA failure 2: out of memory ; GPU=([0-9]+) ;"),
        ),
        # TensorFlow's and XLA's: "failed to allocate 3.39G (3640655872 bytes) from device", "Failed to allocate request for 3.39GiB (3640655872B)".
        "requested": pl.coalesce(
            size(m, r"Tried to allocate {size}"), size(m, r"Out of memory (?:while trying to allocate|allocating) {size}"),
            size(m, r"(?i:failed to allocate) [^(\n]*\({size}\)"), size(m, r"Requested amount of GPU memory \({size}\)"),
            size(m, r"\ballocating {size} on device [0-9]+: cudaMalloc failed"),
            num(first(m, r"failed to allocate (?:CUDA|ROCm|Vulkan)[0-9]+ buffer of size ([0-9]+)")),
            size(m, r"desired GPU memory utilization \([0-9.]+, {size}\)"),
            size(m, r"(?i:failed to allocate) {size}"), _bytes(hbm.field("used"), hbm.field("uu")),
            num(first(m, r"Device memory allocation of size ([0-9]+) failed")), size(m, r"Cannot allocate {size} memory on GPU"),
        ),
        "total": total,
        "free_bytes": free,
        # the device's memory in use as nvidia-smi's memory.used reads it, where the text states both its capacity and what was
        # free (PyTorch's both generations, vLLM's startup check, XLA's cudaMallocAsync allocator)
        "used": total - free,
        "process_in_use_bytes": pl.coalesce(this_process, pl.when(alone).then(listed_bytes.list.first())),
        "in_use_pid": pl.when(alone).then(listed_pids.list.first()),
        "listed_process_pids": pl.when(several).then(listed_pids),
        "listed_processes_in_use_bytes": pl.when(several).then(listed_bytes.list.sum()),
        "allocated_bytes": pl.coalesce(
            size(m, r"{size} already allocated"), size(m, r"{size} is allocated by PyTorch"), size(m, r"\(allocated so far: {size}\)"),
            size(m, r"MPS allocated: {size}"), size(m, r"{size} memory has been allocated"),
        ),
        "reserved_unallocated_bytes": size(m, r"{size} is reserved by PyTorch but unallocated"),
        "reserved_total_bytes": pl.coalesce(size(m, r"{size} reserved in total by PyTorch"), size(m, r"{size} cached\)")),
    }


def _dataloader_facts() -> dict[str, pl.Expr]:
    dataloader = gated("dataloader").str.extract_groups(DATALOADER).struct
    return {
        "dataloader_pid": num(dataloader.field("pid")),
        "dataloader_signal": dataloader.field("signal").str.strip_chars(),
        "dataloader_exited": dataloader.field("exited").is_not_null(),
    }


def _shm_facts() -> dict[str, pl.Expr]:
    m = gated("shm")
    path = pl.coalesce(first(m, _SHM_PATH, 1), first(m, _SHM_PATH, 2))
    return {"shm": m.is_not_null(), "shm_path": path, "shm_pid": num(first(path, _TORCH_SEGMENT_PID))}


def _bash_facts() -> dict[str, pl.Expr]:
    bash = gated("bash").str.extract_groups(_BASH_KILL).struct
    return {
        "bash_pid": num(bash.field("pid")),
        "bash_signal": _signal_of_word(bash.field("signal")),
        "bash_command": bash.field("command").str.strip_chars(),
    }


def _lone_signal_facts() -> dict[str, pl.Expr]:
    lone = gated("killed").str.extract_groups(_LONE_SIGNAL).struct
    bracket = lone.field("bracket").str.strip_chars()
    # a bracket of digits or a log level ("[05:07:35]", "[ERROR]") is a time or a level, no step's name
    step = pl.coalesce(pl.when(bracket.str.contains("[a-z]")).then(bracket), lone.field("label"), lone.field("workspace"))
    return {"lone_signal": _signal_of_word(lone.field("signal")), "lone_step": step}


def _exit_facts() -> dict[str, pl.Expr]:
    # An OCI runtime's prestart hook that failed ("error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: …")
    # is the hook's status: the container never started, and Docker's CLI exits with its own code (125) for that.
    said = gated("exit").str.replace_all(_HOOK_STATUS, "")
    exit_code = pl.when(~said.str.contains(_TORCHRUN_ECHO)).then(said).str.extract_groups(_EXIT_CODE).struct
    code = num(pl.coalesce(*(exit_code.field(name) for name in ("code", "make", "bare", "lerna", "child", "bazel"))), pl.Int32())
    # Jenkins' sh step reports a wrapper script it lost track of as "script returned exit code -1": its Java launcher
    # gives a killed script 128+N, so a negative code there names no signal (Python's launchers' -N does).
    sentinel = (code < 0) & gated("exit").str.contains("script returned exit code", literal=True)
    # GitHub Actions' toolkit names the program that failed: "The process '/usr/bin/bash' failed with exit code 137"
    # (a Windows runner's "C:\Program Files\Git\bin\bash.exe"); its file name is the process.
    program = first(gated("exit"), r"The process '(?:[^'\n]*[/\\])?([^'/\\\n]+)' failed with exit code")
    pod = gated("exit").str.extract_groups(_EXITED_POD).struct
    return {
        "exit_code": code, "exit_signal": pl.when(~sentinel).then(_signal_of_exit(code)), "exit_process": program,
        # Docker's builder before BuildKit stops the build at a step that failed, whatever level its CLI logged it at
        "exit_build_failed": (code != 0) & gated("exit").str.contains(_DOCKER_STEP_FAILED),
        "exit_pod": pl.coalesce(pod.field("pod"), pod.field("bare_pod")), "exit_namespace": pod.field("namespace"),
        "exit_container": pod.field("container"),
        # the process (and rank) whose end a launcher reports, not the launcher's own
        "exit_child_pid": num(exit_code.field("child_pid")),
        "exit_rank": num(pl.coalesce(exit_code.field("child_rank"), first(gated("exit"), _DEEPSPEED_CHILD_RANK))),
    }


def _named_signal_facts() -> dict[str, pl.Expr]:
    m = gated("named_signal")
    named = m.str.extract_groups(_SIGNAL_NAMED).struct
    torchrun = pl.when(~m.str.contains(_TORCHRUN_ECHO)).then(named.field("torchrun"))
    return {
        "named_signal": pl.coalesce(
            named.field("died"), torchrun, named.field("spawn"), named.field("absl"), named.field("gunicorn_signal"), named.field("lightning"),
            named.field("yarn_signal"), named.field("npm_signal"), named.field("loky"), _signal_of_word(pl.coalesce(named.field("go"), named.field("make"), named.field("gcc"), named.field("gcc_ice"), named.field("circleci"))),
            _signal_of_exit(-num(
                pl.coalesce(
                    named.field("mpi_signal"), named.field("status_signal"), named.field("triton"), named.field("tgi_signal"),
                    named.field("collect2_signal"), named.field("elastic_signal"), named.field("gunicorn_old_signal"),
                    named.field("nvcc_signal"), named.field("by_signal"), named.field("billiard_signal"),
                    named.field("lost_signal"),
                ),
                pl.Int32(),
            )),
        ),
        # the program a signal ended, where the report names it (GCC's or nvcc's compiler pass, collect2's linker)
        "named_process": pl.coalesce(
            named.field("gcc_program"), named.field("gcc_ice_program"), named.field("collect2_program"), named.field("nvcc_program"),
            named.field("billiard_process"),
        ),
        # Open MPI prints PID 0 for a process whose pid it never learnt.
        "named_pid": num(pl.coalesce(
            pl.when(torchrun.is_not_null()).then(named.field("pid")), named.field("mpi_pid").replace("0", None), named.field("elastic_pid"),
            named.field("gunicorn_pid"), named.field("gunicorn_old_pid"), named.field("elastic_sent_pid"),
            named.field("elastic_closed_pid"), named.field("by_pid"), named.field("billiard_pid"),
        )),
        "named_rank": num(pl.coalesce(named.field("mpi_rank"), named.field("tgi_rank"), named.field("lightning_rank"))),
        "named_host": named.field("mpi_node"),
        # the epoch second Abseil's handler caught the signal at: the record's time where no line of it has one
        "named_epoch": named.field("absl_time"),
    }


# A row of sacct's table ("3801897.bat+      batch   rc_admin   1 OUT_OF_ME+    0:125 ", its default columns) or of its
# --parsable2 output ("3801897.batch|OUT_OF_MEMORY|0:125|…"): the job or step id first (an array task's "123_4", a step's
# ".batch", ".extern", ".0", cut to 12 characters with a "+"), the State then the ExitCode ("code:signal") where the columns
# put them side by side. A state cut to its column's width ends in "+" ("OUT_OF_ME+"); scancel's is "CANCELLED by <uid>".
_SACCT_ROW = (
    r"^ *(?<id>[0-9]+(?:_[0-9]+)?(?:\.[0-9A-Za-z]+\+?)?)[ |](?:.*[ |])?"
    r"(?<state>OUT_OF_ME(?:MORY|\+)|TIMEOUT|NODE_FAIL|FAILED|COMPLETED|CANCELLED(?: by [0-9]+|\+)?|PREEMPTED) *\|? *"
    r"(?<code>[0-9]+):(?<signal>[0-9]+)(?:[ |]|$)"
)
# The accounting's states that name the kill slurmstepd's "*** JOB … CANCELLED AT … DUE TO <reason> ***" reported.
_SACCT_KILL_REASON = {"TIMEOUT": "time_limit", "NODE_FAIL": "node_failure"}
# A job (or step) as slurmctld names it: "JobId=123" (%pJ, since 20.02; an array task "JobId=123_4(125)"), before that
# "job_id 123"; a step "StepId=123.0" (%pS).
_CTLD_ID = r"(?:JobId=|job_id |StepId=)(?<id>[0-9]+(?:_[0-9]+)?(?:\.[0-9a-z]+)?)(?:\([0-9]+\))?"
# slurmctld's verdict on a job's end: "_job_complete: JobId=42943 OOM failure" (its step's cgroup OOM-killed a task) or
# "_job_complete: JobId=42801 WEXITSTATUS 2" (the batch script's exit status; "WTERMSIG n" is no status and is left alone).
_CTLD_COMPLETE = rf"\b_job_complete: {_CTLD_ID} (?:(?<oom>OOM failure)|WEXITSTATUS (?<code>[0-9]+))$"
# slurmctld killing a job for its time limit ("Time limit exhausted for JobId=41981"), or because a node of it failed
# ("Killing JobId=1234 on failed node gpu01", "Killing StepId=1234.0 due to failed node gpu01", and a job it requeues
# instead: "requeue job JobId=44827 due to failure of node cpu15"; before 20.02 "requeue job 123 …").
_CTLD_TIME_LIMIT = rf"\bTime limit exhausted for {_CTLD_ID}"
_CTLD_NODE_FAIL = (
    r"\b(?:Killing (?:JobId=|job_id |StepId=)|requeue job (?:JobId=)?)(?<id>[0-9]+(?:_[0-9]+)?(?:\.[0-9a-z]+)?)(?:\([0-9]+\))?"
    r" (?:on failed node|due to failed node|due to failure of node) (?<node>[A-Za-z0-9][A-Za-z0-9_.\-]*)"
)


# PBS Pro's and Torque's MOM killing a job over a resource limit, the line it appends to the job's output:
# "=>> PBS: job killed: mem 38427376kb exceeded limit 33554432kb", PBS Pro 19+ "mem job total 115343360 kb exceeded limit …",
# Torque's vmem in bare bytes ("vmem 3372163072 exceeded limit 2147483648"), "walltime 3610 exceeded limit 3600" (seconds).
_PBS_KILL = (
    r"=>> PBS: job killed: (?<res>[a-z_]+)(?: job total)? (?<used>[0-9]+) ?(?<used_unit>[kmgt]?b)?"
    r" exceeded limit (?<limit>[0-9]+) ?(?<limit_unit>[kmgt]?b)?(?:\s|$)"
)
# PBS's sizes are 1024-based ("kb" is KiB); a bare number is bytes.
_PBS_MEMORY = ("mem", "vmem", "pmem", "pvmem")
# IBM Spectrum LSF's reason for a job's end in its output report: "TERM_MEMLIMIT: job killed after reaching LSF memory usage
# limit." (the job's exit code, "Exited with exit code 143.", follows on its own line), "TERM_RUNLIMIT: job killed after
# reaching LSF run time limit."
_LSF_TERM = r"^TERM_(MEMLIMIT|RUNLIMIT): job killed after reaching LSF "
# PBS's exit status of a job, in its end mail and tracejob ("Exit_status=271") and `qstat -f` ("    Exit_status = 271", Torque's
# "    exit_status = 271"): above 256 a signal killed the job's shell (256 + its number); below 0 PBS itself ended it
# (JOB_EXEC_* codes: -10 over a limit).
_PBS_EXIT = r"(?:^|\s)[Ee]xit_status ?= ?(-?[0-9]+)(?:\s|$)"
# Grid Engine's `qacct -j`: "exit_status  137" (Open Cluster Scheduler: "exit_status: 140"), 128 + a signal's number where
# one killed the job; "failed       0    ", "failed: 100 : assumedly after job", "failed 37 : qmaster enforced h_rt, h_cpu, or
# h_vmem limit" (non-zero: the job failed; 37 and 38 a limit's kill).
_SGE_EXIT = r"^exit_status:? +(-?[0-9]+)(?: +\([^)]*\))? *$"
_SGE_FAILED = r"^failed:? +([0-9]+) *(?:: *\S.*)?$"
_SGE_LIMIT_KILLS = (37, 38)
# ... its end mail's reason ("failed execd enforced h_vmem limit because:") and its execd's kill ("job 12.1 exceeds job hard
# limit "h_vmem" of queue …"), naming the limit; the mail's "job 7921630.1 died through signal KILL (9)."
_SGE_LIMIT = r"(?:\bfailed (?:execd|qmaster) enforced |\bexceeds job hard limit \"?)([hs]_[a-z]+)\b"
_SGE_DIED = r"\bjob [0-9]+(?:\.[0-9]+)? died through signal [A-Z0-9]+ \(([0-9]+)\)"
_SGE_MEMORY = ("h_vmem", "s_vmem", "h_rss", "s_rss", "h_data", "s_data")


def _slurm_oom_facts() -> dict[str, pl.Expr]:
    """Slurm's report of its cgroup's OOM killer ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=…",
    since 21.08 "Detected 1 oom_kill event in StepId=…") and of the tasks it killed ("srun: error: node: task 4:
    Out Of Memory", "tasks 0-2,5: Out Of Memory"), srun's report of tasks a signal killed ("task 289: Bus error"), and
    slurmstepd's of a job or step it cancelled ("*** JOB 494583 ON node1 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***":
    a kill for its reason; without one, scancel's or srun's after a task failed, which is no kill of its own).
    Without a cgroup OOM killer, slurmstepd kills a job or step its accounting found over its memory limit:
    "slurmstepd-node1: error: Step 1141810.0 exceeded memory limit (52917772 > 20971520), being killed" (KiB).
    The accounting's verdict after the job: a row of sacct's (:data:`_SACCT_ROW`), seff's "State: OUT_OF_MEMORY (exit code 0)" and
    scontrol's "JobState=OUT_OF_MEMORY" are the cgroup OOM kill that slurmstepd reported; TIMEOUT and NODE_FAIL the kill that
    its "CANCELLED AT … DUE TO TIME LIMIT" / "DUE TO NODE FAILURE" reported."""
    m = gated("slurm_oom")
    row = m.str.extract_groups(_SACCT_ROW).struct
    verdict = pl.coalesce(
        row.field("state"), first(m, r"^(?:# )?State: +(OUT_OF_MEMORY) \(exit code [0-9]+\)"), first(m, r"\bJobState=(OUT_OF_MEMORY)\b"),
    )
    over_limit = m.str.extract_groups(
        r"(?:Job|Step) (?<id>[0-9]+(?:\.[0-9a-z]+)?) exceeded memory limit \((?<used>[0-9]+) > (?<limit>[0-9]+)\), being killed"
    ).struct
    task = m.str.extract_groups(
        r"^srun: error: (?<node>[^\s:]+): tasks? [0-9][0-9,\-]*: (?<what>Out Of Memory|Killed|Terminated|Bus error|Segmentation fault|Aborted)$"
    ).struct
    cancelled = m.str.extract_groups(
        r"\*\*\* (?:JOB|STEP) (?<id>[0-9]+(?:\.[0-9a-z]+)?) ON (?<node>\S+) CANCELLED AT (?<at>[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9:]{8})"
        r"(?: DUE TO (?<reason>[A-Z](?:[A-Z ]*[A-Z])?))?"
    ).struct
    at = cancelled.field("at")
    complete, node_fail = m.str.extract_groups(_CTLD_COMPLETE).struct, m.str.extract_groups(_CTLD_NODE_FAIL).struct
    time_limit = first(m, _CTLD_TIME_LIMIT)
    pbs, lsf = m.str.extract_groups(_PBS_KILL).struct, first(m, _LSF_TERM)
    pbs_memory = pbs.field("res").is_in(_PBS_MEMORY)
    pbs_exit, sge_exit = num(first(m, _PBS_EXIT), pl.Int32()), num(first(m, _SGE_EXIT), pl.Int32())
    sge_limit = first(m, _SGE_LIMIT)
    return {
        "slurm_cancel_at": at,
        "slurm_cancel_reason": pl.coalesce(
            cancelled.field("reason").str.to_lowercase().str.replace_all(" ", "_", literal=True),
            verdict.replace_strict(_SACCT_KILL_REASON, default=None, return_dtype=pl.String),
            pl.when(time_limit.is_not_null()).then(pl.lit("time_limit")),
            pl.when(node_fail.field("id").is_not_null()).then(pl.lit("node_failure")),
            pl.when((pbs.field("res") == "walltime") | (lsf == "RUNLIMIT") | sge_limit.is_in(["h_rt", "s_rt"])).then(pl.lit("time_limit")),
        ),
        "slurm_oom_kill": (
            m.str.contains(r"Detected [0-9]+ oom[-_]kill events?(?:\(s\))?") | verdict.str.starts_with("OUT_OF_ME")
            | complete.field("oom").is_not_null()
        ).fill_null(False),
        "slurm_task_oom": m.str.contains(r"\btasks? [0-9][0-9,\-]*: Out Of Memory").fill_null(False),
        # srun tearing a step down once it was cancelled or a task failed: the kill is reported on lines of its own
        "slurm_step_aborted": m.str.starts_with("srun: Job step aborted: ").fill_null(False),
        "slurm_task_signal": _signal_of_word(task.field("what")),
        # An author may have cut the node's name ("ON ... CANCELLED").
        "slurm_node": pl.coalesce(
            task.field("node"), cancelled.field("node").str.extract(r"^([0-9A-Za-z][0-9A-Za-z_.\-]*)$", 1),
            # slurmstepd names its node after a dash when the node's daemon logs ("slurmstepd-node1: error: …").
            pl.when(over_limit.field("id").is_not_null()).then(first(m, r"^slurmstepd-([^\s:]+): ")),
            node_fail.field("node"),
        ),
        "slurm_step": pl.coalesce(
            first(m, r"(?:StepId=| step )([0-9]+(?:\.[0-9a-z]+)?)"), cancelled.field("id"), over_limit.field("id"), row.field("id"),
            complete.field("id"), node_fail.field("id"), time_limit,
            # any other slurmctld line about a job ("REQUEST_KILL_JOB JobId=42802 uid 548200045", "error running JobId=48294 …")
            first(m, r"\bJobId=([0-9]+(?:_[0-9]+)?)\b"),
        ),
        # sacct's row: the state as printed, the ExitCode's code (the job script's, or its failed step's); its signal part is
        # the signal that ended it
        "slurm_state": row.field("state"),
        "slurm_exit_code": pl.coalesce(num(pl.coalesce(row.field("code"), complete.field("code")), pl.Int32()), pbs_exit, sge_exit),
        "slurm_limit_kill": over_limit.field("id").is_not_null(),
        # (PBS's memory kill is the same fact: the scheduler's accounting found the job over its memory limit)
        "slurm_limit_used": pl.coalesce(
            num(over_limit.field("used")) * 1024, pl.when(pbs_memory).then(_pbs_bytes(pbs.field("used"), pbs.field("used_unit")))
        ),
        "slurm_limit": pl.coalesce(
            num(over_limit.field("limit")) * 1024, pl.when(pbs_memory).then(_pbs_bytes(pbs.field("limit"), pbs.field("limit_unit")))
        ),
        # the limit PBS killed the job over ("mem", "vmem", "walltime", "cput", "ncpus"), LSF's TERM_ reason
        "pbs_limit": pbs.field("res"),
        "lsf_term": lsf,
        # the signal that killed a PBS or Grid Engine job, by its exit status (or the mail's "died through signal")
        "sched_signal": pl.coalesce(
            pl.when(pbs_exit.is_between(257, 287)).then(pbs_exit - 256).replace_strict(_SIGNAL_BY_NUMBER, default=None, return_dtype=pl.String),
            _signal_of_exit(sge_exit),
            num(first(m, _SGE_DIED)).replace_strict(_SIGNAL_BY_NUMBER, default=None, return_dtype=pl.String),
        ),
        "sge_failed": num(first(m, _SGE_FAILED), pl.Int32()),
        "sge_limit": sge_limit,
    }


def _ray_oom_facts() -> dict[str, pl.Expr]:
    """Ray's memory monitor killing workers ("12 Workers (tasks / actors) killed due to memory pressure (OOM)", from
    the raylet) and a task learning it was one of them (ray.exceptions.OutOfMemoryError)."""
    m = gated("ray_oom")
    workers = num(first(m, r"([0-9]+) Workers \(tasks / actors\) killed due to memory pressure \(OOM\)"))
    # Ray 2.0 and 2.1 name the one task they kill: "System memory low at node with IP …, killing latest task with name …".
    one_killed = m.str.contains(r"System memory low at node [^\n]*, killing ").fill_null(False)
    # "Memory on the node (IP: …) where the task (…, pid=4331, memory used=2.22GB) was running was 59.49GB / 62.58GB" (Ray 2.1
    # names neither the task nor its memory: "where the task was running was 54.86GB / 57.60GB");
    # Ray 2.0: "Used memory (23.63GB) / total capacity (33.28GB)".
    # Before 2.0 the memory monitor raised in the task itself, ray.memory_monitor.RayOutOfMemoryError (1.x: ray._private.
    # memory_monitor): "More than 95% of the memory on node suwi is used (30.47 / 31.3 GB). The top 10 memory consumers are:"
    # (both figures in GB, the second's unit not written).
    def amount(name: str) -> str:
        return rf"(?<{name}>[0-9]+(?:\.[0-9]+)?) ?(?<{name}_unit>[KMGT]i?B)"

    memory = m.str.extract_groups(
        rf"where the (?:task|actor) (?:\([^)\n]*\bpid=(?<pid>[0-9]+), memory used={amount('rss')}\) )?"
        rf"was running was {amount('used')} / {amount('total')}"
        rf"|Used memory \({amount('used_2')}\) / total capacity \({amount('total_2')}\)"
        r"|More than [0-9]+(?:\.[0-9]+)?% of the memory on node \S+ is used "
        r"\((?<used_3>[0-9]+(?:\.[0-9]+)?) / (?<total_3>[0-9]+(?:\.[0-9]+)?) GB\)"
    ).struct
    legacy = memory.field("total_3").is_not_null()

    def read(name: str) -> pl.Expr:
        return _bytes(memory.field(name), memory.field(f"{name}_unit"))

    return {
        "ray_task_pid": num(memory.field("pid")),
        "ray_task_rss": read("rss"),
        "ray_node_used": pl.coalesce(read("used"), read("used_2"), _bytes(memory.field("used_3"), pl.lit("GB"))),
        "ray_node_total": pl.coalesce(read("total"), read("total_2"), _bytes(memory.field("total_3"), pl.lit("GB"))),
        "ray_workers_killed": pl.coalesce(workers, pl.when(one_killed).then(1)),
        "ray_oom_kill": (workers > 0).fill_null(False) | one_killed,
        "ray_task_oom": m.str.contains("killed due to the node running low on memory", literal=True).fill_null(False)
        | legacy.fill_null(False),
    }


# NCCL's RAS report (2.24+: the `ncclras` client, or a STATUS query of its socket, localhost:28028) lists, under a finding
# about a communicator ("#0-0 (fa93daea854b060b) MISMATCH", "… ERROR", "… INCOMPLETE") or the job ("DEAD", "INCOMPLETE"), the
# ranks or processes it concerns, one a line, indented by two spaces: "Rank 12 -- GPU 4 managed by process 323032 on node
# 10.137.190.124", a lone outlier with what sets it apart ("Rank 3 has status ABORT -- GPU …", "Rank 3 has launched up to
# operation 641 -- GPU …", "Rank 3 has not launched any operations -- GPU …", "Rank 3 reported Remote process error -- GPU
# …"), where its process is unknown "Rank 3 -- [process information not found]"; and a process as "Process 323032 on node
# 10.137.190.124 managing GPU 4" ("GPUs 0,1"). A GPU is CUDA's index, then NVML's where they differ ("4 (NVML 6)"); the node
# is the process's address. A finding's header names the communicator's hash.
_NCCL_RAS_RANK = (
    r"^ +Rank (?<rank>[0-9]+)(?: has status (?<status>[A-Z]+)| has launched up to operation (?<op>[0-9]+)"
    r"| has not launched any operations| reported (?<error>[A-Z][A-Za-z ]*[a-z]))? -- "
    r"(?:GPU (?<gpu>[0-9]+)(?: \(NVML [0-9]+\))? managed by process (?<pid>[0-9]+) on node (?<node>[0-9A-Fa-f.:]*)"
    r"|\[process information not found\])\s*$"
)
_NCCL_RAS_PROCESS = (
    r"^ +Process (?<pid>[0-9]+) on node (?<node>[0-9A-Fa-f.:]*) managing GPUs? (?<gpus>[0-9]+(?:,[0-9]+)*)(?: \(NVML [0-9,]+\))?\s*$"
)
_NCCL_RAS_FINDING = r"^#[0-9]+-[0-9]+ \((?<comm>[0-9a-f]{16})\) (?<finding>MISMATCH|ERROR|INCOMPLETE)\s*$"
_NCCL_RAS_DEAD = r"^ +[0-9]+ job process(?:es are| is) considered dead \(unreachable via the RAS network\)\s*$"
_NCCL_RAS_MISSING = r"^ +Missing communicator data from [0-9]+ (?:job process(?:es)?|ranks?)\s*$"


def _nccl_ras_facts() -> dict[str, pl.Expr]:
    m = gated("nccl_ras")
    rank = m.str.extract_groups(_NCCL_RAS_RANK).struct
    process = m.str.extract_groups(_NCCL_RAS_PROCESS).struct
    finding = m.str.extract_groups(_NCCL_RAS_FINDING).struct
    dead = m.str.contains(_NCCL_RAS_DEAD).fill_null(False)
    missing = m.str.contains(_NCCL_RAS_MISSING).fill_null(False)
    listed = rank.field("rank").is_not_null() | process.field("pid").is_not_null()
    gpus = process.field("gpus")
    return {
        "ras_rank": num(rank.field("rank")),
        "ras_pid": num(pl.coalesce(rank.field("pid"), process.field("pid"))),
        # a process managing several GPUs names no one device
        "ras_gpu": num(pl.coalesce(rank.field("gpu"), pl.when(~gpus.str.contains(",", literal=True)).then(gpus)), pl.Int32()),
        "ras_node": pl.coalesce(rank.field("node"), process.field("node")).replace("", None),
        "ras_status": rank.field("status"),
        "ras_op": num(rank.field("op")),
        "ras_error": rank.field("error"),
        "ras_finding": pl.coalesce(finding.field("finding"), pl.when(dead).then(pl.lit("DEAD"))),
        "ras_comm": finding.field("comm"),
        # an error found (a rank's NCCL error, dead processes) over a discrepancy (mismatched counts or status, missing data)
        "ras_severity": pl.when((finding.field("finding") == "ERROR") | dead | rank.field("error").is_not_null()).then(pl.lit("error"))
        .when(finding.field("finding").is_not_null() | missing | listed).then(pl.lit("warning")),
    }


def _ray_worker_facts() -> dict[str, pl.Expr]:
    """A Ray worker process that ended while it ran a task, as the raylet reports it: "A worker died or was killed while
    executing a task by an unexpected system error. … Worker PID: 89513 Worker exit type: SYSTEM_ERROR Worker exit detail: …".
    Ray does not know the signal (its detail lists the OOM killer among the possible causes, and a crash), so the kill
    has none; an exit Ray intended, or a task's own exception (USER_ERROR), is no death.
    Also an actor's death as its caller gets it, in an ActorDiedError: the actor's pid is a field of the message, and the
    cause under it names its worker's exit type, or its owner's where the actor went with the owner ("Owner worker exit type:
    SYSTEM_ERROR Worker exit detail: Owner's node has crashed.")."""
    m = gated("ray_worker")
    exit_type = first(m, r"[Ww]orker exit type: ([A-Z_]+)")
    actor_pid = first(m, re.escape(ACTOR_DIED) + r"\n(?:[ \t]+[a-z_]+: [^\n]*\n)*?[ \t]+pid: ([0-9]+)\n")
    return {
        "ray_worker_pid": num(pl.coalesce(first(m, r"Worker PID: ([0-9]+)"), actor_pid)),
        # the actor's class, as Ray tags its process's output ("create_colocated_worker_cls.<locals>.WorkerDict": WorkerDict)
        "ray_actor_class": first(m, re.escape(ACTOR_DIED) + r"\n[ \t]+class_name: (?:[^\n]*\.)?([^\s.]+)\n"),
        "ray_worker_exit_type": exit_type,
        "ray_worker_died": (exit_type == "SYSTEM_ERROR").fill_null(False),
    }


def _ray_task_facts() -> dict[str, pl.Expr]:
    """The Ray task a traceback's exception was raised in: the last (innermost) of the headers Ray's RayTaskError puts on the
    traceback of each task it passes through ("ray::WorkerDict.update_actor() (pid=400862, ip=10.128.0.9, actor_id=…)").
    Its name is Ray's tag of the process's output: an actor's class, a task's function."""
    header = gated("ray_task").str.extract_groups(
        r"(?s:.*)ray::(?<name>[^\s().]+)(?:\.[^\s()]+)?\(\) \(pid=(?<pid>[0-9]+), ip="
    ).struct
    return {"ray_task_failed_pid": num(header.field("pid")), "ray_task_failed_process": header.field("name")}


def _yarn_facts() -> dict[str, pl.Expr]:
    """YARN's kill of a container over its physical or virtual memory limit: the limit it broke, that memory's use and
    size (Spark's message names one kind of memory; the NodeManager's both, the broken one in its verb), the container's
    process and id, and the container's exit status as the ApplicationMaster got it ("exitStatus=-104": KILLED_EXCEEDED_PMEM).
    Also the container and node Spark names for an executor that failed (whether it was killed is its exit status' to say)."""
    m = gated("yarn")
    # Spark 2 says only "exceeding memory limits": the one kind of memory it then quotes is the one exceeded.
    limit = pl.coalesce(first(m, _YARN_LIMIT), first(m, _YARN_AMOUNT.format("(physical|virtual)"), 5)).str.to_lowercase()
    physical = m.str.extract_groups(_YARN_AMOUNT.format("physical")).struct
    virtual = m.str.extract_groups(_YARN_AMOUNT.format("virtual")).struct
    container = m.str.extract_groups(_YARN_CONTAINER).struct
    failed = m.str.extract_groups(_YARN_FAILED).struct

    def read(name: str) -> pl.Expr:
        return pl.when(limit == "virtual").then(_bytes(virtual.field(name), virtual.field(f"{name}_unit"))).otherwise(
            _bytes(physical.field(name), physical.field(f"{name}_unit"))
        )

    return {
        "yarn_limit_kill": limit.is_not_null(),
        "yarn_limit": limit,
        "yarn_used": read("used"),
        "yarn_total": read("total"),
        "yarn_pid": num(container.field("pid")),
        "yarn_container": pl.coalesce(container.field("id"), failed.field("id")),
        "yarn_host": failed.field("host"),
        "yarn_exit_status": num(first(m, r"\bexitStatus=(-?[0-9]+)"), pl.Int32()),
    }


def _xid_facts() -> dict[str, pl.Expr]:
    m = gated("xid")
    xid_plugin = m.str.extract_groups(_XID_PLUGIN).struct
    xid_nvrm = m.str.extract_groups(_XID_NVRM).struct
    unhealthy = m.str.extract_groups(_UNHEALTHY).struct
    unknown_device = m.str.extract_groups(_UNKNOWN_DEVICE).struct
    listed = m.str.extract_groups(_NVC_LISTING).struct
    xid = num(pl.coalesce(xid_plugin.field("xid"), xid_nvrm.field("xid")), pl.Int32())
    return {
        "xid": xid,
        # the kernel source's reading of the code (rca.sources._xid): the catalog's, or what Xid 154 asks for
        "xid_severity": _xid.report_severity(xid, m),
        "xid_recovery_action": pl.when(xid == 154).then(_xid.recovery_action(m)),
        "gpu_uuid": pl.coalesce(xid_plugin.field("uuid"), unhealthy.field("uuid"), unknown_device.field("uuid"), listed.field("uuid")),
        # the index a device error names, or the /dev/nvidiaN a listed device is
        "unknown_device_index": num(pl.coalesce(unknown_device.field("index"), listed.field("index")), pl.Int32()),
        "pci_bus": pl.coalesce(xid_nvrm.field("pci"), m.str.extract_groups(HANDLE_GPU).struct.field("bus"), listed.field("bus")),
        "nvrm_pid": num(pl.when(xid_nvrm.field("xid").is_not_null()).then(first(m, r"\bpid=([0-9]+)"))),
        "resource": pl.coalesce(unhealthy.field("resource"), first(m, _NO_HEALTHY)),
        "unhealthy": m.str.contains("unhealthy", literal=True).fill_null(False),
        "nvrm_boot": pl.when(xid_nvrm.field("xid").is_not_null()).then(kernel_text(m)[1]),
    }


# A kernel line a job's output holds (a board's or a serial console's stdout, `dmesg` run in a job, a syslog line pasted in a
# CI log) may open with a syslog or journal envelope up to the kernel's tag ("Jun 13 14:35:38 node1 kernel: "), then the
# kernel source's heads: the dmesg stamp ("[   80.751793] ", seconds since boot) or dmesg -T's ("[Mon Jun 13 14:35:38 2023] ").
_KERNEL_ENVELOPE = r"^(?:[^\n]*? )?kernel: "


def kernel_text(m: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """A kernel line's message without its envelope and stamp, and the stamp's seconds since boot."""
    body = pl.when(m.str.contains(kernel._RAW_HEAD)).then(m).otherwise(m.str.replace(_KERNEL_ENVELOPE, ""))
    boot = num(body.str.extract_groups(kernel._RAW_HEAD).struct.field("boot"), pl.Float64())
    return body.str.replace(kernel._RAW_HEAD, "").str.replace(kernel._CTIME_HEAD, ""), boot


def _kernel_oom_facts() -> dict[str, pl.Expr]:
    """The OOM killer's lines, read with the kernel source's patterns (rca.sources.kernel): the victim's "Killed process 2700
    (DeviceMemory) total-vm:1838376kB, anon-rss:2632kB, …" ("Out of memory: " or "Memory cgroup out of memory: " before it or
    not), the kernel's choice "Out of memory: Kill process 2700 (DeviceMemory) score 1 or sacrifice child" (before 4.19; the
    kill itself where no "Killed process" line follows it), the header "python invoked oom-killer: gfp_mask=…", and the CPU
    line under it ("CPU: 3 PID: 1517 Comm: python Not tainted …"), which names the invoking task's pid."""
    line = gated("kernel_oom")
    text, boot = kernel_text(line)
    killed = text.str.extract_groups(kernel._KILLED).struct
    selected = text.str.extract_groups(kernel._SELECTED).struct
    header = text.str.extract_groups(kernel._OOM_HEADER).struct
    cpu = text.str.extract_groups(kernel._CPU).struct
    # A bare "Killed process 1234 (python) after the grace period" is a program's words: the kernel's kill line says whose
    # OOM it was, prints the victim's figures or uid, or came with the kernel's stamp or envelope.
    kernel_said = killed.field("scope").is_not_null() | text.str.contains(r"\btotal-vm:|, UID [0-9]+,") | (text != line)
    is_killed = killed.field("pid").is_not_null() & kernel_said

    def figure(field: str) -> pl.Expr:
        return num(pl.when(is_killed).then(first(text, rf"\b{field}:(-?[0-9]+)kB")))

    kernel_line = is_killed | selected.field("pid").is_not_null() | header.field("name").is_not_null()
    return {
        "kernel_killed_pid": num(pl.when(is_killed).then(killed.field("pid"))),
        "kernel_selected_pid": num(selected.field("pid")),
        "kernel_oom_process": pl.coalesce(pl.when(is_killed).then(killed.field("name")), selected.field("name"), header.field("name")),
        "kernel_invoked": header.field("name").is_not_null().fill_null(False),
        "kernel_cpu_pid": num(cpu.field("pid")),
        "kernel_cpu_comm": cpu.field("rest"),
        "kernel_oom_score": num(selected.field("score")),
        "kernel_memcg": pl.coalesce(killed.field("scope"), selected.field("scope")) == "Memory cgroup out of memory",
        "kernel_gfp_mask": first(header.field("args"), r"gfp_mask=([^,]+)"),
        "kernel_order": num(first(header.field("args"), r"\border=(-?[0-9]+)")),
        **{f"kernel_{name}_kb": figure(field) for name, field in (
            ("total_vm", "total-vm"), ("anon_rss", "anon-rss"), ("file_rss", "file-rss"), ("shmem_rss", "shmem-rss"))},
        # (the kill's anon-rss, as the kernel source reads it)
        "kernel_rss": kernel._kib_to_bytes(figure("anon-rss")),
        "kernel_boot": pl.when(kernel_line).then(boot),
    }


# DCGM's host engine logs what its health watches find: "[[Health]] Detected a WARNING in health system Thermal:
# 'Detected clocks event due to thermal violation in GPU 2. Verify that the cooling …" (its level is ERROR either way).
_DCGM_HEALTH = r"\[\[Health\]\] Detected an? (?<result>[A-Z]+) in health system (?<system>[^:]+):(?:.*?\bGPU (?<gpu>[0-9]+)\b)?"
_DCGM_HEALTH_SEVERITY = {"WARNING": "warning", "FAILURE": "error", "FAIL": "error", "ERROR": "error"}


def _dcgm_health_facts() -> dict[str, pl.Expr]:
    health = gated("dcgm_health").str.extract_groups(_DCGM_HEALTH).struct
    return {
        "dcgm_health_severity": health.field("result").replace_strict(_DCGM_HEALTH_SEVERITY, default=None, return_dtype=pl.String),
        "dcgm_health_system": health.field("system"),
        "dcgm_health_gpu": num(health.field("gpu"), pl.Int32()),
    }


def _go_oom_facts() -> dict[str, pl.Expr]:
    m = gated("go_oom")
    return {
        "go_oom": m.str.contains(_GO_OOM).fill_null(False),
        "go_request": num(pl.coalesce(first(m, _GO_REQUEST, 1), first(m, _GO_REQUEST, 2))),
    }


def _cuda_error_facts() -> dict[str, pl.Expr]:
    error = gated("cuda_error").str.extract_groups(_CUDA_ERROR).struct
    return {"cuda_error": pl.coalesce(*(error.field(name) for name in (
        "runtime", "thc", "cudnn", "nccl_code", "nccl", "driver", "runtime_name", "trtllm", "handle", "smi", "nvml_init", "nvml", "no_driver",
        "old_driver", "container_cli", "no_gpu_runtime", "no_gpus", "bnb", "cuda_check", "nccl_cuda", "thc_check", "nccl_test", "cuda_test")))}


# A container's name after a label ("container: trainer") or marked as one: quoted ('container "build"') or closed by a
# colon ("Error in container build: exit code: 137"); a bare word after "container" is the sentence's ("failed to wait for
# main container to complete"). Or, as Azure Pipelines' Docker-exec report words it, its id ("container id: `81c9…`"),
# whose label "id" is no name.
_CONTAINER = (
    r"\bcontainer(?:[ _](?:id|ID)[: ]+[`'\"]?(?<id>[0-9a-f]{12,64})\b"
    r"|: +[\"']?(?<label>[a-z0-9][0-9A-Za-z_.\-]*)| [\"']?(?<name>[a-z0-9][0-9A-Za-z_.\-]*)[\"':])"
)


def _container_facts() -> dict[str, pl.Expr]:
    container = gated("container").str.extract_groups(_CONTAINER).struct
    name = pl.coalesce(container.field("label"), container.field("name"))
    return {"container": pl.when(name.str.to_lowercase() != "id").then(name), "container_id": container.field("id")}


def _sglang_memory_facts() -> dict[str, pl.Expr]:
    m = gated("sglang_memory")
    return {
        "sglang_available": size(m, r"\bavail mem={size}"),
        "sglang_weights": size(m, r"\bmem usage={size}"),
        "sglang_kv": pl.coalesce(size(m, r"\bK size: {size}") + size(m, r"\bV size: {size}"), size(m, r"\bKV size: {size}")),
    }


def _vllm_error_facts() -> dict[str, pl.Expr]:
    m = gated("vllm_error")
    return {
        # SGLang's startup check of the same shortage (weights leave no room for a KV-cache pool), so the same value: "RuntimeError:
        # Not enough memory. Please try to increase --mem-fraction-static." (0.4.x: "… Current value: …mem_fraction_static=0.2")
        "vllm_error": pl.when(m.str.contains_any(["No available memory for the cache blocks", "Please try to increase --mem-fraction-static"]))
        .then(pl.lit("no_cache_blocks"))
        .when(m.str.contains(r"max seq len \([0-9]+\)[^\n]*KV cache")).then(pl.lit("kv_cache_insufficient"))
        .when(m.str.contains_any(["EngineCore failed to start", *_VLLM_ENGINE_START_FAILED])).then(pl.lit("engine_start_failed"))
        .when(m.str.contains_any(list(_VLLM_ENGINE_DEAD))).then(pl.lit("engine_dead"))
        .when(m.str.contains(_VLLM_WORKER_DIED)).then(pl.lit("worker_died")),
    }


# family → its raw facts (columns named f_<fact>), as the kind and the attrs read them.
_FACTS: dict[str, dict[str, pl.Expr]] = {
    "cuda": _cuda_facts(),
    "dataloader": _dataloader_facts(),
    "shm": _shm_facts(),
    "bash": _bash_facts(),
    "killed": _lone_signal_facts(),
    "exit": _exit_facts(),
    "named_signal": _named_signal_facts(),
    "exit_pid": {"exit_pid": num(first(gated("exit_pid"), _EXIT_PID))},
    "xid": _xid_facts(),
    "kernel_oom": _kernel_oom_facts(),
    "dcgm_health": _dcgm_health_facts(),
    "java_oom": {
        "java_oom": pl.when(gated("java_oom").is_not_null())
        .then(_java_oom(gated("java_oom").str.extract_groups(_JAVA_OOM).struct.field("what").fill_null("")))
    },
    "go_oom": _go_oom_facts(),
    "cpu_alloc": {"cpu_alloc_request": num(first(gated("cpu_alloc"), _CPU_ALLOC))},
    "cuda_error": _cuda_error_facts(),
    # The runtime's reason for a container's end: GitLab's "reason: 'OOMKilled'"; an OOM kill named elsewhere too, as Argo's
    # step message ("OOMKilled (exit code 137)") and Jenkins' Kubernetes agents' ("…, Reason: OOMKilled)") name it.
    "reason": {"reason": pl.coalesce(
        first(gated("reason"), r"reason[:=]\s*['\"]?([A-Za-z]+)"), first(gated("reason"), r"\b(OOMKilled)\b"),
    )},
    "failure": {"failure_class": first(gated("failure"), r"Job failed \(([a-z ]+ failure)\)")},
    "slurm_oom": _slurm_oom_facts(),
    "ray_oom": _ray_oom_facts(),
    "ray_worker": _ray_worker_facts(),
    "nccl_ras": _nccl_ras_facts(),
    "yarn": _yarn_facts(),
    "container": _container_facts(),
    "ray_task": _ray_task_facts(),
    "vllm_error": _vllm_error_facts(),
    "trt_memory": {
        "trt_total": size(gated("trt_memory"), r"paged kv cache: total: {size}"),
        "trt_available": size(gated("trt_memory"), r"paged kv cache: total: [^,\n]*, available: {size}"),
    },
    "sglang_memory": _sglang_memory_facts(),
}


def _absent(facts: dict[str, pl.Expr]) -> list[pl.Expr]:
    """What ``facts`` are on a record that spells none of their family's literals: false or null."""
    schema = pl.LazyFrame(schema={f"m_{name}": pl.String for name in _FAMILIES}).select(**facts).collect_schema()
    return [(pl.lit(False) if dtype == pl.Boolean else pl.lit(None, dtype)).alias(f"f_{name}") for name, dtype in schema.items()]


_ABSENT = {family: _absent(facts) for family, facts in _FACTS.items()}


def extract(records: pl.DataFrame, present: set[str]) -> pl.DataFrame:
    """Add the raw facts every rule needs as columns (prefixed ``f_``)."""
    columns: list[pl.Expr] = [_msg().str.contains_any(list(NCCL_TIMEOUT_LITERALS)).alias("f_nccl_timeout")]
    for family, facts in _FACTS.items():
        columns += [expr.alias(f"f_{name}") for name, expr in facts.items()] if family in present else _ABSENT[family]
    return records.with_columns(columns)


def _kernel_oom_below(facts: pl.DataFrame) -> dict[str, pl.Expr]:
    """What the kernel's OOM lines after a kernel OOM line of its file say (the lines of a job's output between them
    aside): whether the next one kills a task, which makes the kernel's choice above it no kill of its own, as in the
    kernel source; the pid of each line's task, the invoking task's from the CPU line right under the header."""
    c = pl.col
    file = c("batch_file") if "batch_file" in facts.columns else pl.repeat(0, pl.len())
    oom_line = c("f_kernel_killed_pid").is_not_null() | c("f_kernel_selected_pid").is_not_null() | c("f_kernel_invoked")
    # the next OOM line of the file: a kill (its pid) or another choice or header (0)
    killed = pl.when(oom_line).then(c("f_kernel_killed_pid").fill_null(0))
    next_killed = backward_fill_within(killed.shift(-1), file.shift(-1))
    below = (c("line").shift(-1) == c("line") + c("n_lines")) & (file.shift(-1) == file)
    cpu_pid = pl.when(below & c("f_kernel_invoked") & c("f_kernel_cpu_comm").shift(-1).str.starts_with(c("f_kernel_oom_process") + " "))
    return {
        "f_kernel_kill_below": pl.when((file.shift(-1) == file) & (next_killed > 0)).then(next_killed),
        "f_kernel_oom_pid": pl.coalesce("f_kernel_killed_pid", "f_kernel_selected_pid", cpu_pid.then(c("f_kernel_cpu_pid").shift(-1))),
    }


def kind_and_severity(facts: pl.DataFrame, present: set[str]) -> pl.DataFrame:
    """Decide each record's kind and severity (the printed level wins over the kind's default)."""
    c = pl.col
    python = (c("family") == "python").fill_null(False)
    stack = c("family").is_in(["java", "go", "cpp"]).fill_null(False)
    signal = pl.coalesce(
        c("f_dataloader_signal").pipe(_signal_of_word), c("f_bash_signal"), c("f_named_signal"),
        c("f_lone_signal"),
        c("f_exit_signal"),
        pl.when(c("f_reason") == "OOMKilled").then(pl.lit("SIGKILL")),
        pl.when(c("f_slurm_task_oom") | c("f_ray_oom_kill") | c("f_slurm_limit_kill")).then(pl.lit("SIGKILL")), c("f_slurm_task_signal"),
        c("f_sched_signal"),
    )
    oom = pl.coalesce(
        pl.when(c("f_slurm_oom_kill") | c("f_slurm_task_oom")).then(pl.lit("slurm_cgroup")),
        pl.when(c("f_slurm_limit_kill")).then(pl.lit("slurm_memory_limit")),
        pl.when(c("f_pbs_limit").is_in(_PBS_MEMORY)).then(pl.lit("pbs_memory_limit")),
        pl.when(c("f_lsf_term") == "MEMLIMIT").then(pl.lit("lsf_memory_limit")),
        pl.when(c("f_sge_limit").is_in(_SGE_MEMORY)).then(pl.lit("sge_memory_limit")),
        pl.when(c("f_ray_oom_kill") | c("f_ray_task_oom")).then(pl.lit("ray_memory_monitor")),
        pl.when(c("f_yarn_limit_kill")).then(pl.lit("yarn_memory_limit")),
        c("f_java_oom"),
        pl.when(c("f_go_oom")).then(pl.lit("go_runtime")),
        pl.when(c("f_cpu_alloc_request").is_not_null()).then(pl.lit("torch_cpu_allocator")),
        pl.when(c("message").str.contains("JavaScript heap out of memory", literal=True)).then(pl.lit("node_heap")),
        # C++'s allocation failure ("terminate called after throwing an instance of 'std::bad_alloc'", its "what():  std::bad_alloc"),
        # and the kernel refusing a process memory (a DataLoader's fork: "OSError: [Errno 12] Cannot allocate memory")
        pl.when(c("message").str.contains("std::bad_alloc", literal=True)).then(pl.lit("cpp_bad_alloc")),
        pl.when(c("message").str.contains("[Errno 12] Cannot allocate memory", literal=True)).then(pl.lit("enomem")),
        pl.when(c("exc_type").str.contains(r"(?:^|\.)_?(?:Array)?MemoryError$")).then(pl.lit("python_memory_error")),
    )
    # A traceback reports a kill where its exception names a signal a child died of, or an actor Ray saw die.
    killed = pl.when(python).then(c("f_named_signal").is_not_null() | c("f_ray_worker_died")).otherwise(
        pl.any_horizontal(
            c("f_bash_signal").is_not_null(), c("f_named_signal").is_not_null(), c("f_lone_signal").is_not_null(),
            c("f_exit_signal").is_not_null(), c("f_reason") == "OOMKilled", c("f_slurm_task_oom"), c("f_slurm_task_signal").is_not_null(),
            c("f_ray_oom_kill"), c("f_slurm_cancel_reason").is_not_null(), c("f_slurm_limit_kill"), c("f_yarn_limit_kill"),
            c("f_pbs_limit").is_not_null(), c("f_lsf_term").is_not_null(), c("f_sched_signal").is_not_null(),
            c("f_sge_limit").is_not_null(), c("f_sge_failed").is_in(_SGE_LIMIT_KILLS),
            c("f_ray_worker_died"),
        )
    )
    kind = (
        pl.when(c("f_cuda_oom")).then(pl.lit("cuda_oom"))
        .when(c("f_dataloader_pid").is_not_null()).then(pl.lit("dataloader_killed"))
        .when(c("f_nccl_timeout")).then(pl.lit("nccl_timeout"))
        .when(c("f_shm")).then(pl.lit("shm_error"))
        .when(c("f_xid").is_not_null() & ~python).then(pl.lit("xid"))
        .when(c("f_kernel_killed_pid").is_not_null() | c("f_kernel_selected_pid").is_not_null() & c("f_kernel_kill_below").is_null())
        .then(pl.lit("oom_kill"))
        .when(c("f_kernel_invoked")).then(pl.lit("oom_invoked"))
        .when(c("f_slurm_oom_kill")).then(pl.lit("oom_kill"))
        .when(killed).then(pl.lit("process_killed"))
        .when(python | (stack & oom.is_null())).then(pl.lit("traceback"))
        .otherwise(pl.lit("log"))
    )
    warned = gated("python_warning").str.contains(PY_WARNING_LINE)
    warning = [pl.when(warned).then(pl.lit("warning"))] if "python_warning" in present else []
    ci_severity = [ci_event().replace_strict(_CI_EVENT_SEVERITY, default=None, return_dtype=pl.String)] if "ci_event" in present else []
    return facts.with_columns(**_kernel_oom_below(facts)).with_columns(kind=kind, f_signal=signal, f_oom=oom).with_columns(
        severity=pl.coalesce(
            # an Xid's reading wins over the level it was logged at (the device plugin logs critical Xids at info),
            # as does what a DCGM health watch found (its host engine logs every finding at ERROR)
            pl.when(c("kind") == "xid").then(c("f_xid_severity")),
            # the OOM killer's, as the kernel source gives them: its header a warning, its choice and its kill errors
            pl.when(c("f_kernel_invoked") & (c("kind") == "oom_invoked")).then(pl.lit("warning")),
            pl.when(c("f_kernel_oom_pid").is_not_null() & ~c("f_kernel_invoked")).then(pl.lit("error")),
            c("f_dcgm_health_severity"),
            # a traceback a wrapper logged at its stdout's level ("[INFO ] W-9000-… MODEL_LOG - Traceback …": TorchServe's
            # worker) is an uncaught exception all the same; one logged as a warning was handled
            pl.when((c("kind") == "traceback") & (c("family") == "python") & c("severity").is_in(["info", "debug"])).then(pl.lit("error")),
            # a controller that logs a replica's exit at info restarts it; Docker's builder gives up the build
            pl.when(c("f_exit_build_failed")).then(pl.lit("error")),
            c("severity"),
            # what NCCL's RAS report found (the report prints no level; a logger that forwards it may)
            c("f_ras_severity"),
            pl.when(c("kind").is_in(["cuda_oom", "dataloader_killed", "nccl_timeout", "shm_error", "xid", "process_killed", "traceback", "oom_kill"]))
            .then(pl.lit("error")),
            pl.when(c("f_oom").is_not_null()).then(pl.lit("critical")),
            pl.when(c("f_vllm_error").is_not_null() | c("f_cuda_error").is_not_null()).then(pl.lit("error")),
            # a full disk stops a job's checkpoint, its dataset cache or its container's writes
            pl.when(c("message").str.contains("No space left on device", literal=True)).then(pl.lit("error")),
            pl.when(c("message").str.contains_any(list(_UNLEVELLED_FAILURES))).then(pl.lit("error")),
            pl.when(c("f_exit_code").is_not_null() & (c("f_exit_code") != 0)).then(pl.lit("error")),
            pl.when((c("f_slurm_state") == "FAILED") | (c("f_slurm_exit_code") != 0) | (c("f_sge_failed") > 0)).then(pl.lit("error")),
            *ci_severity,
            *warning,
            pl.when(c("message").str.contains_any(list(_UNLEVELLED_WARNINGS))).then(pl.lit("warning")),
            pl.when(c("f_slurm_step_aborted")).then(pl.lit("warning")),
        )
    )


_EXCEPTION_COLUMNS = {"exc_type": pl.String, "exc_message": pl.String, "last_frame": pl.String}


def exception_facts(records: pl.DataFrame) -> pl.DataFrame:
    """``exc_type``, ``exc_message`` and ``last_frame`` of tracebacks and exception lines."""
    # Only stack records and lines naming an anchor error can hold an exception worth naming;
    # the costly multi-line regexes run on those alone.
    candidate = (
        pl.col("family").is_not_null() | pl.col("f_cuda_oom") | _msg().str.contains(_DATALOADER_LITERAL, literal=True)
        | pl.col("f_nccl_timeout") | pl.col("f_shm")
    )
    return split_rows(
        records,
        candidate,
        _exceptions,
        lambda rows: rows.with_columns(pl.lit(None, dtype).alias(name) for name, dtype in _EXCEPTION_COLUMNS.items()),
    )


# anchor → a record that may name it, and the line that names it ("pkg.Error: ... anchor ..."). A line pasted as markdown's
# inline code keeps its opening backtick ("`torch.cuda.OutOfMemoryError: CUDA out of memory. …`"): cut off, with its closing
# one, in _unquoted.
_ANCHORS = {
    anchor: (named, rf"(?m)^(`?[A-Za-z_][0-9A-Za-z_.]*:[ \t][^\n]*(?:{anchor})[^\n]*)$")
    for anchor, named in (
        (CUDA_OOM, pl.col("f_cuda_oom")),
        (r"DataLoader worker \(pid", _msg().str.contains("DataLoader worker (pid", literal=True)),
        (NCCL_TIMEOUT, pl.col("f_nccl_timeout")),
        (SHM, pl.col("f_shm")),
    )
}
_PY_LAST_EXCEPTION = "(?m)" + PY_EXCEPTION_LINE.replace(r"(?:\s.*)?", r"(?:[ \t][^\n]*)?")
# A traceback printed inside a multi-line log message (NeMo's "Model instantiation failed!") is indented as a whole:
# its exception line sits at its header's indentation, the frames' code lines deeper.
_PY_INDENTED_TRACEBACK = r"^[ \t]+Traceback \(most recent call last\):"
_PY_INDENTED_EXCEPTION = _PY_LAST_EXCEPTION.replace("(?m)^", "(?m)^[ \t]+")
_JAVA_EXCEPTION = r"(?m)^(?:Exception in thread \"[^\"\n]*\" )?((?:[0-9A-Za-z_$]+\.)*[0-9A-Za-z_$]*(?:Exception|Error|Throwable)(?::[^\n]*)?)$"
_GO_EXCEPTION = r"(?m)^((?:fatal error|panic): [^\n]*)$"
# What a C++ exception that terminated the process said ("terminate called after throwing …" then "  what():  …").
_CPP_WHAT = r"(?m)^\s+what\(\):\s+([^\n]*)$"
# ... or the exception line the tail is under ("RuntimeError: CUDA error: …", "ResourceExhaustedError: 2 root error(s) found.").
_CPP_UNDER = r"^([A-Za-z_][0-9A-Za-z_.]*(?:Error|Exception)(?::[ \t][^\n]*)?)(?:\n|$)"
# What follows the last rule of rich's traceback (its box's bottom, or a bare rule): the exception, maybe wrapped.
_RICH_EXCEPTION = r"(?s)^.*\n[ \t]*(?:╰─+╯|─{10,})[ \t]*\n(.+)$"
# A function's name is one word: a traceback printed as a list's repr ("['Traceback …\\n', '  File …\\n', …]") holds all its
# frames on one line, each ended by a written "\\n", so the name stops at whitespace or a backslash.
_PY_FRAME = r"File \"[^\"\n]+\", line [0-9]+, in [^\s\\]+"
_PY_FRAME_PARTS = r"^File \"(?<file>[^\"]+)\", line (?<line>[0-9]+), in (?<func>\S+)$"
_EXCEPTION_PARTS = pl.col("exception_line").str.extract_groups(r"^(?<type>[0-9A-Za-z_.$]+(?: error)?)(?::[ \t]*(?<text>.*))?$")


def _unquoted(line: pl.Expr) -> pl.Expr:
    """``line`` without the backticks of markdown's inline code around it: the opening one, and a closing one at its end."""
    quoted = line.str.starts_with("`")
    return pl.when(quoted).then(line.str.strip_prefix("`").str.strip_suffix("`")).otherwise(line)


def _last_exception(msg: pl.Expr, pattern: str) -> pl.Expr:
    """The last line of ``msg`` of an exception's shape that is not a C++ tail's line."""
    return msg.str.extract_all(pattern).list.eval(pl.element().filter(~pl.element().str.contains(CPP_TAIL))).list.last()


def _indented_exception(msg: pl.Expr) -> pl.Expr:
    """The exception line of an indented traceback, unindented: the last exception-shaped line at its header's indentation
    (a deeper one is a frame's code line, "else:", left last by a traceback cut above its exception)."""
    indent = msg.str.extract(r"^([ \t]+)Traceback", 1)
    line = _last_exception(msg, _PY_INDENTED_EXCEPTION)
    at_header = line.str.starts_with(indent) & ~line.str.slice(indent.str.len_chars(), 1).is_in([" ", "\t"])
    return pl.when(at_header).then(line.str.strip_chars_start())


def _exceptions(rows: pl.DataFrame) -> pl.DataFrame:
    """The exception facts of candidate records; a family or anchor none of them has is not looked for."""
    msg, family = _msg(), pl.col("family")
    seen = rows.select(
        *(named.any().alias(anchor) for anchor, (named, _) in _ANCHORS.items()),
        *((family == name).any().alias(name) for name in ("python", "java", "go", "cpp")),
        framed=msg.str.contains('File "', literal=True).any(),
        indented=msg.str.contains(_PY_INDENTED_TRACEBACK).any(),
        rich=msg.str.contains(RICH_TITLE, literal=True).any(),
    ).row(0, named=True)
    marker_line = _unquoted(pl.coalesce(
        [first(msg, line) for anchor, (_, line) in _ANCHORS.items() if seen[anchor]] or [pl.lit(None, pl.String)]
    ))
    exception_line = marker_line
    # rich wraps a long exception message at the console's width: the lines under its box's closing rule are one line.
    rich_exception = pl.lit(None, pl.String)
    if seen["rich"]:
        rich_exception = first(msg, _RICH_EXCEPTION).str.replace_all(r"[ \t]*\n", " ")
    for name, line in (
        # The last exception line above the tail of its message (TensorFlow's "Hint: …", NCCL's result code).
        ("python", pl.coalesce(
            marker_line, rich_exception,
            _last_exception(msg, _PY_LAST_EXCEPTION),
            _indented_exception(msg) if seen["indented"] else pl.lit(None, pl.String),
        )),
        ("go", first(msg, _GO_EXCEPTION)),
        ("java", first(msg, _JAVA_EXCEPTION)),
        ("cpp", pl.coalesce(marker_line, first(msg, _CPP_WHAT), first(msg, _CPP_UNDER))),
    ):
        if seen[name]:
            exception_line = pl.when(family == name).then(line).otherwise(exception_line)
    rows = rows.with_columns(exception_line=exception_line)
    named = pl.col("exception_line")
    last_frame = pl.lit(None, pl.String)
    if seen["framed"]:
        before = msg.str.slice(0, pl.when(named.is_not_null()).then(msg.str.find(named, literal=True)).fill_null(msg.str.len_chars()))
        py_frame = before.str.extract_all(_PY_FRAME).list.last().str.extract_groups(_PY_FRAME_PARTS).struct
        last_frame = pl.when(py_frame.field("file").is_not_null()).then(
            pl.format("{}:{} in {}", py_frame.field("file"), py_frame.field("line"), py_frame.field("func"))
        )
    if seen["java"]:
        last_frame = pl.when(family == "java").then(first(msg, r"(?m)^\s+at ([0-9A-Za-z_$.<>/\-]+\([^)\n]*\))")).otherwise(last_frame)
    rows = rows.with_columns(
        parts=_EXCEPTION_PARTS,
        frame_named=pl.when(named.is_not_null() | (family == "python")).then(last_frame),
    )
    parts = pl.col("parts").struct
    # An all-capitals "type" is a log level ("ERROR: ..."), not an exception class; one without a capital or a dot is a C
    # function's name (ggml's "ggml_backend_cuda_buffer_type_alloc_buffer: allocating …") or a wrapped line's tail, where
    # an exception class is named in CamelCase or by its module. Go's "panic" and "fatal error" are the runtime's own words.
    exc_type = parts.field("type")
    is_exception = (exc_type != exc_type.str.to_uppercase()) & (exc_type.str.contains(r"[A-Z.]") | (family == "go"))
    return rows.with_columns(
        exc_type=pl.when(is_exception).then(exc_type),
        exc_message=pl.when(is_exception).then(parts.field("text").replace("", None)),
        last_frame=pl.col("frame_named"),
    ).drop("exception_line", "parts", "frame_named")
