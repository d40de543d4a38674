"""Misreads a red team found on real training and serving logs (helper-233's report):

- Ray's C++ log names its component after the header ("[… E 329 329] (raylet) node_manager.cc:3069: …"): the process, as the
  driver's "(raylet) " tag before such a line names it (ray-project/ray#34695, #29800).
- A CUDA OOM line pasted as markdown's inline code ("`torch.cuda.OutOfMemoryError: …`") keeps its exception's type and
  message (vllm-project/vllm#2140).
- nvidia-smi's "GPU is lost.  Reboot the system to recover this GPU": the error is NVML's "GPU is lost", also where the
  Windows console broke the advice onto a line of its own (AlexeyAB/darknet#86; marian-nmt/marian#251 unbroken).

Every line below is a real one (the fixtures' rows in tests/data/real_logs/SOURCES.md, or the URL beside it).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl

import rca
from rca import sources
from rca.ingest import parse_lines
from rca.sources import pipeline
from rca.sources._base import ParseContext
from tests.conftest import FIXED_MTIME, fixture_path

REFERENCE = datetime(2025, 1, 1, tzinfo=UTC)


def _pipeline(text: str) -> pl.DataFrame:
    ctx = ParseContext(file="t.log", tz="UTC", year=2025, reference_time=REFERENCE)
    return parse_lines(sources.lines_frame(text), ctx, pipeline.SOURCE)[0]


def _fixture(name: str) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_bytes().decode("utf-8"), file=name, reference_time=FIXED_MTIME)


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


# --- Ray's component after its C++ header ---------------------------------------------------------------------------


def test_raylet_out_oom_summary_names_the_raylet_by_its_component() -> None:
    events = _fixture("ray_raylet_out_component_tag_oom_summary_01.log")
    [killed] = events.to_dicts()
    assert {k: killed[k] for k in ("line", "kind", "severity", "format", "pid", "process", "ts_raw", "ts_quality")} == {
        "line": 2, "kind": "process_killed", "severity": "error", "format": "ray", "pid": 329, "process": "raylet",
        "ts_raw": "2023-04-19 16:22:19,798", "ts_quality": "exact",
    }
    assert _attrs(killed) == {"signal": "SIGKILL", "workers_killed": 13, "oom": "ray_memory_monitor"}
    # the component stays in the message, as where the driver's tag is before the line
    assert killed["message"].startswith("(raylet) node_manager.cc:3069: 13 Workers (tasks / actors) killed due to memory pressure")


def test_driver_tag_and_component_agree_and_a_line_without_component_names_no_process() -> None:
    events = _pipeline(
        # ray-project/ray#29800: the driver's tag, then raylet's own line
        "(raylet) [2022-10-28 13:00:31,947 E 90952 90952] (raylet) node_manager.cc:3077: 6 Workers (tasks / actors) killed due to"
        " memory pressure (OOM), 0 Workers crashed due to other reasons at node"
        " (ID: 28b65794b30840d656df62dff0cfe84933253e1885d7672568c378b9, IP: 172.17.0.2) over the last time period. To see more information about the workers killed on this node, use"
        " `ray logs raylet.out -ip 172.17.0.2`\n"
        # a gcs_server.out line, as quoted in a public write-up of Ray's GCS event stats (public-code index id 66188883966)
        "[2026-05-09 15:42:01,138 I 74 74] (gcs_server) gcs_server.cc:926: ray_syncer_io_context Event stats:\n"
        # tests/data/pipeline/ray_absl_sigsegv_bare_fatal_python_error_01.log: a core worker's C++ line, no component
        "[2022-09-27 00:21:27,008 E 73412 73420] logging.cc:361: *** SIGSEGV received at time=1664230887 on cpu 14 ***\n"
    )
    assert events.select("line", "format", "pid", "process").rows() == [
        (1, "ray", 90952, "raylet"), (2, "ray", 74, "gcs_server"), (3, "ray", 73412, None),
    ]
    assert events["message"][1] == "(gcs_server) gcs_server.cc:926: ray_syncer_io_context Event stats:"


# --- an exception line in markdown's backticks ----------------------------------------------------------------------


def test_backticked_cuda_oom_line_keeps_its_exception_type_and_message() -> None:
    [oom] = _fixture("vllm_cuda_oom_markdown_backtick_capacty_01.log").to_dicts()
    assert {k: oom[k] for k in ("line", "kind", "severity", "gpu_index", "mem_requested_bytes", "mem_used_bytes", "mem_total_bytes")} == {
        "line": 1, "kind": "cuda_oom", "severity": "error", "gpu_index": 0, "mem_requested_bytes": 3758096384,
        "mem_used_bytes": 22119081575, "mem_total_bytes": 25436943811,
    }
    attrs = _attrs(oom)
    assert attrs["exc_type"] == "torch.cuda.OutOfMemoryError"
    # both backticks are markdown's, not the message's
    assert attrs["exc_message"].startswith("CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacty of 23.69 GiB")
    assert attrs["exc_message"].endswith("See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
    assert oom["message"].startswith("`torch.cuda.OutOfMemoryError: ") and oom["message"].endswith("`")


def test_an_unquoted_cuda_oom_line_reads_as_before() -> None:
    # studio-dots-ai/dots.ocr#196, the description's first line
    line = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 74.16 GiB. GPU 0 has a total capacity of 44.40 GiB of which"
        " 29.89 GiB is free. Process 2684311 has 14.51 GiB memory in use. Of the allocated memory 13.44 GiB is allocated by PyTorch,"
        " and 738.96 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting"
        " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management "
        " (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
    )
    [oom] = _pipeline(line).to_dicts()
    assert oom["kind"] == "cuda_oom"
    assert _attrs(oom)["exc_type"] == "torch.OutOfMemoryError"
    assert _attrs(oom)["exc_message"] == line.rstrip("\n").removeprefix("torch.OutOfMemoryError: ")


# --- nvidia-smi's lost GPU and its advice ---------------------------------------------------------------------------

# AlexeyAB/darknet#86 (https://github.com/AlexeyAB/darknet/issues/86), the second code block as pasted (indented), the
# answer wrapped by the Windows console at 80 columns. Not a fixture: no source claims the file by its head (the Windows
# prompt before nvidia-smi's line keeps the nvidia_smi source off it), so it is read as text.
_WINDOWS_WRAPPED = (
    "\n"
    "        C:\\Program Files\\NVIDIA Corporation\\NVSMI>nvidia-smi\n"
    "        Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot\n"
    "         the system to recover this GPU\n"
)


def test_console_wrapped_lost_gpu_names_nvmls_error_not_the_cut_advice() -> None:
    events = _pipeline(_WINDOWS_WRAPPED)
    lost = events.filter(pl.col("line") == 3).row(0, named=True)
    assert (lost["kind"], lost["severity"], lost["pci_bus"]) == ("log", "error", "0000:03:00.0")
    assert _attrs(lost) == {"cuda_error": "GPU is lost"}
    # The rest of the advice stays a line of its own: one wrapped line is no evidence of a wrap width (the hard-wrap
    # repair wants three breaks in the file), and its indentation is that of a line of its own.
    assert events.filter(pl.col("line") == 4)["message"].to_list() == ["         the system to recover this GPU"]


def test_unbroken_lost_gpu_line_gives_the_same_error_and_other_errors_read_whole() -> None:
    events = _pipeline(
        # marian-nmt/marian#251 (wingsyuan, 2019-02-27)
        "Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot the system to recover this GPU\n"
        # pdbear/syno_nvidia_gpu_driver#22: the bus glued to "GPU"
        "Unable to determine the device handle for GPU0000:07:00.0: Unknown Error\n"
    )
    assert events.select("severity", "pci_bus").rows() == [("error", "0000:03:00.0"), ("error", "0000:07:00.0")]
    assert [_attrs(e)["cuda_error"] for e in events.to_dicts()] == ["GPU is lost", "Unknown Error"]
