"""``nvidia-smi -q`` from drivers before ~340 names the GPU temperature ``Temperature/Gpu`` ("Gpu : 49 C").

Newer drivers print ``GPU Current Temp``; the old key must give the same ``attrs.temp_c``, whether the report is
the whole ``-q`` (331.79, GTX TITAN Black) or only ``-q -d TEMPERATURE`` (304.108 and 325.15). A value that is not a
reading (``N/A``) stays out of attrs, never 0.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import fixture_path

FULL_331 = "nvidia_smi_q_331_titan_black_gpu_temp_key_01.txt"
TEMPERATURE_ONLY = "nvidia_smi_q_d_temperature_304_325_gpu_key_01.txt"


def _samples(name: str) -> pl.DataFrame:
    text = fixture_path(name).read_text(encoding="utf-8")
    return rca.parse_text(text, file=name).filter(pl.col("kind") == "gpu_sample").sort("line")


def _report(temp: str, indent: int = 36) -> str:
    key = lambda k: f"{k:<{indent}}: "  # noqa: E731 - the report pads keys to one column
    return "\n".join([
        "==============NVSMI LOG==============", "",
        key("Timestamp") + "Thu Oct 10 08:12:46 2013", key("Driver Version") + "304.108", "",
        key("Attached GPUs") + "1", "GPU 0000:01:05.0", "    Temperature", "        " + f"{'Gpu':<{indent - 8}}: " + temp, "",
    ])


def test_full_331_report_reads_temperature_and_memory() -> None:
    row = _samples(FULL_331).row(0, named=True)
    attrs = json.loads(row["attrs"])
    assert attrs["temp_c"] == 29.0
    assert attrs["fan_pct"] == 26.0
    assert row["gpu_uuid"] == "GPU-fcff168f-a045-2f95-7a4f-8e1cf26a24eb"
    assert row["pci_bus"] == "0000:01:00.0"
    assert row["mem_used_bytes"] == 39 * 2**20
    assert row["mem_total_bytes"] == 6143 * 2**20
    assert row["gpu_util_pct"] is None  # "Gpu : N/A" under Utilization
    assert row["ts_quality"] == "inherited"
    assert "power_w" not in attrs  # "Power Draw : N/A"


def test_full_331_report_has_no_process_rows() -> None:
    text = fixture_path(FULL_331).read_text(encoding="utf-8")
    events = rca.parse_text(text, file=FULL_331)
    assert events.filter(pl.col("kind") == "gpu_process").height == 0  # "Compute Processes : N/A"


def test_temperature_only_reports_each_give_their_reading() -> None:
    samples = _samples(TEMPERATURE_ONLY)
    assert samples["pci_bus"].to_list() == ["0000:01:05.0", "0000:03:00.0"]
    assert [json.loads(a)["temp_c"] for a in samples["attrs"]] == [49.0, 39.0]
    assert [json.loads(a)["driver"] for a in samples["attrs"]] == ["304.108", "325.15"]


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=120), st.integers(min_value=24, max_value=44))
def test_old_key_reads_any_reading_at_any_padding(celsius: int, indent: int) -> None:
    events = rca.parse_text(_report(f"{celsius} C", indent), file="q.txt")
    sample = events.filter(pl.col("kind") == "gpu_sample").row(0, named=True)
    assert json.loads(sample["attrs"])["temp_c"] == float(celsius)


def test_old_key_not_available_is_absent_not_zero() -> None:
    events = rca.parse_text(_report("N/A"), file="q.txt")
    sample = events.filter(pl.col("kind") == "gpu_sample").row(0, named=True)
    assert "temp_c" not in json.loads(sample["attrs"] or "{}")
