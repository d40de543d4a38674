"""``nvidia-smi -q -l N`` read in batches reads as it does whole: a GPU after a batch's cut keeps its report's time.

Each report of the loop is a banner, a head (``Timestamp``, driver and CUDA versions) and GPU blocks; a batch
that starts inside a report is read below the report's head, and the GPU block (or process record) it starts
inside is held back and read whole there (rca._carry, ``nvidia_smi.carried_lines``).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from rca import sources
from rca.ingest import IngestOptions, parse_rows
from rca.sources import nvidia_smi
from rca.sources._base import ParseContext
from tests.conftest import DATA, ingested, numbered_lines, parse_in_batches

REPORTS = ["nvidia_smi_h200_q_580_01.txt", "nvidia_smi_q_d_accounting_525_3gpu_none_01.txt",
           "nvidia_smi_q_d_performance_ecc_555_a100_indented_01.txt", "nvidia_smi_q_610_wddm_deprecated_versions_01.txt"]
_CLOCK = re.compile(r"(\d\d):(\d\d):(\d\d)( \d{4})\s*$")


def _loop(name: str, repeats: int) -> list[str]:
    """The fixture's report printed ``repeats`` times, ten seconds apart (as ``-q -l 10`` does)."""
    report = (DATA / "nvidia_smi" / name).read_text().splitlines()

    def later(line: str, step: int) -> str:
        def shifted(match: re.Match[str]) -> str:
            seconds = int(match[1]) * 3600 + int(match[2]) * 60 + int(match[3]) + 10 * step
            return f"{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}{match[4]}"
        return _CLOCK.sub(shifted, line) if "Timestamp" in line else line

    return [later(line, step) for step in range(repeats) for line in report]


_lines = numbered_lines


def _in_batches(texts: list[str], cuts: list[int]) -> tuple[pl.DataFrame, dict[str, int]]:
    return parse_in_batches(texts, cuts, sources.get("nvidia_smi"), ParseContext(file="q.log", host="gpu-node-1", tz="UTC", year=2026))


def _whole(texts: list[str]) -> tuple[pl.DataFrame, dict[str, int]]:
    source, ctx = sources.get("nvidia_smi"), ParseContext(file="q.log", host="gpu-node-1", tz="UTC", year=2026)
    rows, skipped, _ = parse_rows(_lines(texts), ctx, source)
    return rows.sort("line"), {reason: count for reason, count in skipped.items() if count}


@settings(max_examples=6, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=89), min_size=1, max_size=3, unique=True),
       name=st.sampled_from(REPORTS[:3]))
def test_any_cut_of_a_q_loop_reads_as_the_whole(cuts: list[int], name: str) -> None:
    texts = _loop(name, 4)[:90]
    rows, skipped = _in_batches(texts, cuts)
    whole, whole_skipped = _whole(texts)
    assert_frame_equal(rows, whole, check_column_order=False)
    assert skipped == whole_skipped


def test_a_gpu_after_the_cut_keeps_its_report_time_and_index() -> None:
    texts = _loop("nvidia_smi_q_d_accounting_525_3gpu_none_01.txt", 3)
    cut = texts.index("GPU 00000000:37:00.0", 21) + 2  # inside the second report's second GPU block
    rows, skipped = _in_batches(texts, [cut])
    second = rows.filter(pl.col("line") > 21).head(3)
    assert second["gpu_index"].to_list() == [0, 1, 2]
    assert second["pci_bus"].to_list() == ["00000000:13:00.0", "00000000:37:00.0", "00000000:D8:00.0"]
    assert second["ts_raw"].unique().to_list() == ["Mon Jul  3 10:50:53 2023"]
    assert (second["ts_quality"] == "inherited").all()
    assert second["n_lines"].to_list() == [4, 4, 4]
    whole, whole_skipped = _whole(texts)
    assert_frame_equal(rows, whole)
    assert skipped == whole_skipped == {"blank": 12, "header": 15}


def test_a_process_record_after_the_cut_keeps_its_gpu() -> None:
    texts = _loop("nvidia_smi_q_610_wddm_deprecated_versions_01.txt", 2)
    cut = texts.index("        Process ID                        : 14808")  # its record's third line is the next batch's first
    rows, _ = _in_batches(texts, [cut])
    whole, _ = _whole(texts)
    processes = rows.filter(pl.col("kind") == "gpu_process")
    assert_frame_equal(processes, whole.filter(pl.col("kind") == "gpu_process"))
    cut_one = processes.filter(pl.col("pid") == 14808).row(0, named=True)
    assert (cut_one["gpu_index"], cut_one["pci_bus"], cut_one["process"]) == (0, "00000000:0C:00.0", texts[cut + 2].split(": ")[1])
    assert cut_one["ts_raw"] == "Wed Jun 24 10:17:56 2026"
    # the GPU's figures too (its sample's last lines, "Capabilities" below its processes, are read with the next batch)
    figures = ["ts", "gpu_index", "mem_used_bytes", "gpu_util_pct", "attrs"]
    assert_frame_equal(rows.filter(pl.col("kind") == "gpu_sample").select(figures), whole.filter(pl.col("kind") == "gpu_sample").select(figures))


def test_only_a_report_past_its_banner_is_carried() -> None:
    texts = _loop("nvidia_smi_q_d_accounting_525_3gpu_none_01.txt", 1)
    assert nvidia_smi.carried_lines(_lines(texts[:1])).is_empty()
    head = [texts[0], *texts[2:5], texts[6]]
    # the first GPU's block is done (a blank line under it): its line keeps the next GPUs' places in the order
    assert nvidia_smi.carried_lines(_lines(texts[:12]))["text"].to_list() == [*head, texts[7]]
    # the second GPU's block is held back whole: above it only the head and the first GPU's line
    assert nvidia_smi.carried_lines(_lines(texts[:15]))["text"].to_list() == [*head, texts[7]]


@pytest.mark.usefixtures("small_reads")
def test_a_q_loop_ingested_in_batches_reads_as_whole(tmp_path: Path) -> None:
    host = tmp_path / "logs" / "gpu-node-1"
    host.mkdir(parents=True)
    (host / "nvidia-smi-q.log").write_text("\n".join(_loop(REPORTS[0], 4)) + "\n")
    whole, whole_manifest = ingested(tmp_path / "logs", tmp_path / "whole", IngestOptions(batch_bytes=1 << 30, year=2026))
    batched, manifest = ingested(tmp_path / "logs", tmp_path / "batched", IngestOptions(batch_bytes=4096, year=2026))
    assert manifest["bytes"][0] > 8 * 4096
    assert_frame_equal(batched, whole)
    assert_frame_equal(manifest, whole_manifest)
    samples = batched.filter(pl.col("kind") == "gpu_sample")
    assert samples.height == 4
    assert samples["ts"].is_not_null().all() and samples["ts"].n_unique() == 4
    assert (samples["mem_total_bytes"] == 143771 * 2**20).all()
