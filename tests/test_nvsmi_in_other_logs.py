"""An nvidia-smi table printed inside another program's log (a training job's, a CI job's, an entrypoint's first command).

The pipeline source keeps the file; the table's rows are read by the nvidia_smi source's table parser, so its GPUs are
``gpu_sample`` events and its process rows ``gpu_process``, timed by the line above the table. The rest of the file
reads as it did without the table.
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

REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
MIB = 1024**2

TABLE = """\
Tue May  7 10:00:01 2024
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM4-80GB  On  | 00000000:07:00.0 Off |                    0 |
| N/A   34C    P0    61W / 400W |   1024MiB / 81920MiB |     17%      Default |
|                               |                      |             Disabled |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|        ID   ID                                                   Usage      |
|=============================================================================|
|    0   N/A  N/A      1234      C   python                          1000MiB |
+-----------------------------------------------------------------------------+
"""
BEFORE = "2024-05-07 10:00:00,001 - INFO - Starting training job\n"
AFTER = """\
2024-05-07 10:00:05,001 - INFO - epoch 1 loss 0.5
Traceback (most recent call last):
  File "train.py", line 10, in <module>
    x = torch.zeros(1000000000000, device="cuda")
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 79.15 GiB total capacity; \
1.00 GiB already allocated; 2.00 GiB free; 3.00 GiB reserved in total by PyTorch)
"""
TRAINING_LOG = BEFORE + TABLE + AFTER
TABLE_LINES = range(3, 22)  # the table's box rows, the stamp line above them (2) being the log's own


def _parse(text: str, name: str = "train.log") -> pl.DataFrame:
    return rca.parse_text(text, file=name, reference_time=REFERENCE)


def _one(events: pl.DataFrame, kind: str) -> dict:
    rows = events.filter(pl.col("kind") == kind)
    assert rows.height == 1, rows.select("line", "kind", "message").to_dicts()
    return rows.row(0, named=True)


def test_the_tables_gpu_is_a_sample_timed_by_the_stamp_line_above() -> None:
    events = _parse(TRAINING_LOG)
    # the table's rows are nvidia-smi's events, the log's lines the pipeline's
    assert dict(events.group_by("source").agg(pl.col("kind").unique().sort()).rows()) == {
        "nvidia_smi": ["gpu_process", "gpu_sample"], "pipeline": ["cuda_oom", "log"],
    }
    sample = _one(events, "gpu_sample")
    assert (sample["line"], sample["n_lines"], sample["format"]) == (10, 3, "table")
    assert (sample["gpu_index"], sample["pci_bus"]) == (0, "00000000:07:00.0")
    assert (sample["mem_used_bytes"], sample["mem_total_bytes"], sample["gpu_util_pct"]) == (1024 * MIB, 81920 * MIB, 17.0)
    assert (sample["ts"], sample["ts_quality"]) == (datetime(2024, 5, 7, 10, 0, 1, tzinfo=UTC), "inherited")
    assert json.loads(sample["attrs"])["name"] == "NVIDIA A100-SXM4-80GB"


def test_the_tables_process_row_is_a_gpu_process_of_its_gpu() -> None:
    process = _one(_parse(TRAINING_LOG), "gpu_process")
    assert (process["line"], process["pid"], process["process"]) == (20, 1234, "python")
    assert (process["mem_used_bytes"], process["gpu_index"], process["pci_bus"]) == (1000 * MIB, 0, "00000000:07:00.0")
    assert process["ts"] == datetime(2024, 5, 7, 10, 0, 1, tzinfo=UTC)


def test_the_rest_of_the_log_reads_as_without_the_table() -> None:
    events = _parse(TRAINING_LOG)
    alone = _parse(BEFORE + TABLE.splitlines()[0] + "\n" + AFTER)
    outside = events.filter(~pl.col("line").is_in(list(TABLE_LINES))).with_columns(
        line=pl.when(pl.col("line") > max(TABLE_LINES)).then(pl.col("line") - len(TABLE_LINES)).otherwise("line")
    )
    columns = ["line", "kind", "severity", "ts", "gpu_index", "mem_requested_bytes", "mem_total_bytes", "message"]
    assert outside.select(columns).to_dicts() == alone.select(columns).to_dicts()
    assert _one(events, "cuda_oom")["line"] == 23
    assert events.filter(pl.col("line").is_in(list(TABLE_LINES)) & (pl.col("kind") == "log")).height == 0


def test_every_line_is_an_events_or_counted_skipped() -> None:
    lines = sources.lines_frame(TRAINING_LOG)
    ctx = ParseContext(file="train.log", tz="UTC", year=2024, reference_time=REFERENCE)
    events, skipped = parse_lines(lines, ctx, pipeline.SOURCE)
    assert int(events["n_lines"].sum()) + sum(skipped.values()) == lines.height
    assert skipped["table border"] >= 4 and skipped["header"] >= 5


def test_a_table_behind_a_kubectl_prefix_keeps_the_pods_tags() -> None:
    prefixed = "".join(f"[pod/trainer-0/pytorch] {line}\n" for line in TRAINING_LOG.splitlines() if line)
    events = _parse(prefixed)
    sample = _one(events, "gpu_sample")
    assert (sample["pod"], sample["container"], sample["mem_used_bytes"]) == ("trainer-0", "pytorch", 1024 * MIB)
    assert _one(events, "gpu_process")["pid"] == 1234
    assert _one(events, "cuda_oom")["pod"] == "trainer-0"


def test_a_table_behind_ci_timestamps_takes_the_time_of_the_line_above() -> None:
    stamped = "".join(f"2024-05-07T10:00:{second:02d}.5000000Z {line}\n" for second, line in enumerate(TRAINING_LOG.splitlines()) if line)
    events = _parse(stamped, "ci_job.log")
    sample = _one(events, "gpu_sample")
    assert (sample["gpu_index"], sample["mem_total_bytes"]) == (0, 81920 * MIB)
    assert sample["ts"] == datetime(2024, 5, 7, 10, 0, 1, 500000, tzinfo=UTC)  # the stamp line's own prefix
    assert _one(events, "gpu_process")["process"] == "python"


def test_another_programs_box_in_the_same_log_is_not_the_tables() -> None:
    summary = """\
2024-05-07 10:00:02,001 - INFO - memory summary
|===========================================================================|
|                  PyTorch CUDA memory summary, device ID 0                 |
|---------------------------------------------------------------------------|
| Allocated memory      |    6263 MB |    9375 MB |  142033 MB |  135769 MB |
|===========================================================================|
"""
    events = _parse(BEFORE + TABLE + summary + AFTER)
    assert _one(events, "gpu_sample")["line"] == 10
    assert _one(events, "memory_snapshot")["line"] == 23  # PyTorch's summary, as the pipeline reads it alone
