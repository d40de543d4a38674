"""Files that mix formats: a log that prints an nvidia-smi table is its own log's source's, not nvidia-smi's."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

import rca
from rca.sources import sniff_many

REFERENCE = datetime(2026, 12, 5, tzinfo=UTC)
TABLE = """Fri Dec  4 17:27:06 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |
| N/A   47C    P0            126W /  700W |     787MiB / 143771MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
"""
LOGRUS = (
    'time="2026-12-04T17:27:00Z" level=info msg="Attempting to validate a pre-installed driver on the host"\n'
    + TABLE
    + 'time="2026-12-04T17:28:00Z" level=error msg="failed to validate the driver" error="exit status 1"\n'
    + 'time="2026-12-04T17:28:01Z" level=warning msg="retrying after 5 seconds"\n'
)
TRAINING = (
    TABLE
    + "2026-12-04 17:28:00,123 - INFO - Starting training\n"
    + "Traceback (most recent call last):\n"
    + '  File "train.py", line 10, in <module>\n'
    + "    loss.backward()\n"
    + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.72 GiB"
    + " of which 1.23 GiB is free.\n"
)
KLOG = (
    "I1204 17:27:01.000000       1 main.go:199] Starting FS watcher.\n"
    + TABLE
    + "E1204 17:28:00.000000       1 main.go:123] Failed to initialize NVML: could not load NVML library.\n"
    + "W1204 17:28:01.000000       1 server.go:222] Retrying\n"
)


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="mixed.log", reference_time=REFERENCE)


def _claimed_by(text: str) -> str | None:
    source, _ = sniff_many([[line for line in text.splitlines() if line.strip()]])[0]
    return source.name if source else None


@pytest.mark.parametrize(
    ("text", "owner"), [(LOGRUS, "pipeline"), (TRAINING, "pipeline"), (KLOG, "kubelet")], ids=["logrus", "training", "klog"]
)
def test_a_log_with_a_table_inside_is_its_own_sources(text: str, owner: str) -> None:
    assert _claimed_by(text) == owner


def test_logrus_lines_around_a_table_keep_their_levels_and_times() -> None:
    events = _parse(LOGRUS).filter(pl.col("format") == "logfmt")
    assert events["severity"].to_list() == ["info", "error", "warning"]
    assert events["ts"].dt.strftime("%H:%M:%S").to_list() == ["17:27:00", "17:28:00", "17:28:01"]


def test_a_training_logs_oom_after_a_table_is_a_cuda_oom() -> None:
    oom = _parse(TRAINING).filter(pl.col("kind") == "cuda_oom")
    assert oom.select("severity", "gpu_index").rows() == [("error", 0)]


def test_klog_lines_around_a_table_keep_their_levels() -> None:
    events = _parse(KLOG).filter(pl.col("format") == "klog", pl.col("ts").is_not_null())
    assert events["severity"].to_list() == ["info", "error", "warning"]


def test_a_table_with_one_log_line_beside_it_stays_nvidia_smis() -> None:
    text = TABLE + 'time="2026-12-04T17:28:00Z" level=info msg="done"\n'
    assert _claimed_by(text) == "nvidia_smi"
    assert _parse(text).filter(pl.col("kind") == "gpu_sample")["gpu_index"].to_list() == [0]


def test_a_table_among_plain_lines_stays_nvidia_smis() -> None:
    text = "=== snapshot ===\n" + TABLE + "Segmentation fault\n"
    assert _claimed_by(text) == "nvidia_smi"
