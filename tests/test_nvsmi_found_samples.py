"""``nvidia-smi -q -d MEMORY`` trimmed to its memory section (no banner, no GPU line) is still nvidia-smi's reading.

The lines are synthetic, in the shape of a post's "trimmed" output; a MIG device's nested FB Memory Usage
section in a whole report must keep reading as the MIG device's, not open a fragment block.
"""

from __future__ import annotations

import polars as pl

import rca
from tests.conftest import FIXED_MTIME

MIB = 1024 * 1024

TRIMMED_MEMORY = """\
    FB Memory Usage
        Total                                           : 23034 MiB
        Reserved                                        : 471 MiB
        Used                                             : 7532 MiB
        Free                                             : 15032 MiB
    BAR1 Memory Usage
        Total                                           : 32768 MiB
        Used                                             : 7533 MiB
        Free                                             : 25235 MiB
"""


def _samples(text: str) -> pl.DataFrame:
    events = rca.parse_text(text, file="trimmed.txt", reference_time=FIXED_MTIME)
    return events.filter(pl.col("kind") == "gpu_sample")


def test_trimmed_memory_section_is_one_gpu_sample_with_fb_memory() -> None:
    samples = _samples(TRIMMED_MEMORY)
    assert samples["source"].to_list() == ["nvidia_smi"]
    assert samples["mem_used_bytes"].to_list() == [7532 * MIB]
    assert samples["mem_total_bytes"].to_list() == [23034 * MIB]


def test_memory_section_under_a_gpu_line_stays_that_gpus() -> None:
    text = "GPU 00000000:00:03.0\n    Minor Number                          : 3\n" + TRIMMED_MEMORY
    samples = _samples(text)
    assert samples.select("gpu_index", "pci_bus", "mem_used_bytes").rows() == [(3, "00000000:00:03.0", 7532 * MIB)]
