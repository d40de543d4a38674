"""nvidia-smi health figures an SRE reads after a failure: NVLink links that are down, lifetime ECC counts.

Real samples (tests/data/nvidia_smi, sources in tests/data/real_logs/SOURCES.md): ``nvidia-smi nvlink -s`` of a B200
whose links are all down and of a V100-SXM2 with two links inactive, both posted with the GPU's UUID hidden; a whole
``nvidia-smi -q`` of an L4 on driver 550 (lifetime ``Aggregate`` ECC counters, ``SRAM Threshold Exceeded``, the row
remapper's histogram). The variants with failing figures are those reports with one value changed, marked as such.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import rca
from tests.conftest import FIXED_MTIME

FOLDER = Path(__file__).parent / "data" / "nvidia_smi"
MIB = 2**20


def _events(text: str, name: str = "nvsmi.txt") -> pl.DataFrame:
    return rca.parse_text(text, file=name, reference_time=FIXED_MTIME)


def _fixture(name: str) -> pl.DataFrame:
    return _events((FOLDER / name).read_text(), name)


def _attrs(row: dict) -> dict:
    return json.loads(row["attrs"]) if row["attrs"] else {}


# --- nvlink -s: all links down, hidden UUIDs -----------------------------------------------------------------


def test_all_links_inactive_is_a_warning_of_the_gpu_above() -> None:
    events = _fixture("nvidia_smi_nvlink_all_links_inactive_b200_redacted_uuid_01.txt")
    assert events["source"].to_list() == ["nvidia_smi", "nvidia_smi"]
    gpu, down = events.sort("line").to_dicts()
    assert (gpu["kind"], gpu["format"], gpu["gpu_index"], gpu["gpu_uuid"], gpu["severity"]) == ("log", "list", 2, None, None)
    assert _attrs(gpu) == {"name": "NVIDIA B200"}
    assert (down["kind"], down["format"], down["gpu_index"], down["gpu_uuid"], down["severity"]) == ("log", "list", 2, None, "warning")
    assert _attrs(down) == {"nvlink_state": "all inactive"}


def test_all_links_inactive_in_the_590_spelling() -> None:
    # The wording of NVIDIA/open-gpu-kernel-modules issue #1150's title (driver 590.48.01), under a -L style GPU line.
    text = (
        "GPU 5: NVIDIA B200 (UUID: GPU-c0c859b5-876c-b6f1-c6d7-bde487c326a1)\n"
        "NVML:Unable to retrieve Nvlink information as all links are inActive\n"
    )
    down = _events(text).sort("line").row(1, named=True)
    assert (down["gpu_index"], down["gpu_uuid"], down["severity"]) == (5, "GPU-c0c859b5-876c-b6f1-c6d7-bde487c326a1", "warning")
    assert _attrs(down) == {"nvlink_state": "all inactive"}


def test_link_rows_under_a_hidden_uuid_take_the_gpu_index() -> None:
    events = _fixture("nvidia_smi_nvlink_s_v100_sxm2_inactive_redacted_uuid_01.txt").sort("line")
    assert set(events["source"]) == {"nvidia_smi"}
    links = events.filter(pl.col("line") >= 4)
    assert links["gpu_index"].to_list() == [3] * 6
    assert links["gpu_uuid"].to_list() == [None] * 6
    assert [_attrs(r)["nvlink_state"] for r in links.to_dicts()] == [
        "25.781 GB/s", "25.781 GB/s", "25.781 GB/s", "<inactive>", "25.781 GB/s", "<inactive>"
    ]
    # one inactive link is how a PCIe GPU without its bridge reads too: kept as printed, no severity
    assert links["severity"].to_list() == [None] * 6
    # the command line and the "...." cut mark above the GPU line are no GPU's
    assert events.filter(pl.col("line") <= 2)["gpu_index"].to_list() == [None, None]
    gpu = events.filter(pl.col("line") == 3).row(0, named=True)
    assert (gpu["gpu_index"], _attrs(gpu)) == (3, {"name": "Tesla V100-SXM2-32GB"})


def test_a_hidden_uuid_does_not_inherit_the_uuid_of_the_gpu_above() -> None:
    text = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9)\n"
        "\t Link 0: CRC Errors: 0\n"
        "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-xxx)\n"
        "\t Link 0: CRC Errors: 4\n"
    )
    rows = _events(text).sort("line").select("gpu_index", "gpu_uuid", "severity").rows()
    assert rows == [
        (0, "GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9", None), (0, "GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9", None),
        (1, None, None), (1, None, "warning"),
    ]


def test_a_gpu_line_of_another_shape_is_not_a_list_line() -> None:
    # "(UUID: " with spaces inside the parentheses is no hidden UUID: the line stays another program's.
    events = _events("GPU 0: training step 12 (UUID: not known yet) loss 0.25\n")
    assert events["gpu_index"].to_list() == [None]


# --- -q: lifetime ECC counts, SRAM threshold -----------------------------------------------------------------

L4_Q = "nvidia_smi_q_550_l4_remap_histogram_sram_threshold_01.txt"


def _l4_sample(text: str | None = None) -> dict:
    events = _events(text, L4_Q) if text is not None else _fixture(L4_Q)
    samples = events.filter(pl.col("kind") == "gpu_sample")
    assert samples.height == 1
    return samples.row(0, named=True)


def test_l4_550_report_reads_its_gpu_and_health_figures() -> None:
    sample = _l4_sample()
    assert (sample["source"], sample["format"], sample["line"], sample["severity"]) == ("nvidia_smi", "query_text", 8, "info")
    assert (sample["gpu_index"], sample["gpu_uuid"], sample["pci_bus"]) == (
        8, "GPU-453f8851-d1a3-e72d-4d85-3ef04418205b", "00000000:01:00.0"
    )
    assert (sample["mem_used_bytes"], sample["mem_total_bytes"], sample["gpu_util_pct"]) == (1 * MIB, 23034 * MIB, 0.0)
    attrs = _attrs(sample)
    assert {k: attrs[k] for k in (
        "volatile_uncorr_ecc", "volatile_sram_uncorr_ecc", "volatile_sram_uncorr_parity", "aggregate_uncorr_ecc",
        "aggregate_sram_uncorr_ecc", "aggregate_sram_uncorr_parity", "remapped_rows_pending", "remapped_rows_failure",
    )} == {
        "volatile_uncorr_ecc": "0", "volatile_sram_uncorr_ecc": 0, "volatile_sram_uncorr_parity": 0, "aggregate_uncorr_ecc": 0,
        "aggregate_sram_uncorr_ecc": 0, "aggregate_sram_uncorr_parity": 0, "remapped_rows_pending": "No", "remapped_rows_failure": "No",
    }
    # "No" is no flag; the retired page counts read N/A on a GPU that remaps rows instead
    assert "sram_threshold_exceeded" not in attrs
    assert "retired_pages_sbe" not in attrs and "retired_pages_dbe" not in attrs


def _l4_with(old: str, new: str) -> str:
    text = (FOLDER / L4_Q).read_text()
    assert text.count(old) == 1
    return text.replace(old, new)


def test_sram_threshold_exceeded_is_an_error() -> None:
    # The L4 report with one value changed: NVIDIA's replacement gate for SRAM errors.
    sample = _l4_sample(_l4_with("SRAM Threshold Exceeded       : No", "SRAM Threshold Exceeded       : Yes"))
    assert sample["severity"] == "error"
    assert _attrs(sample)["sram_threshold_exceeded"] == "Yes"


def test_lifetime_uncorrectable_count_is_kept_without_raising_severity() -> None:
    # The L4 report with the aggregate DRAM counter changed: errors of an earlier driver load, dealt with by a remap.
    text = (FOLDER / L4_Q).read_text()
    aggregate = text.index("        Aggregate\n")
    line = "            DRAM Uncorrectable            : 0\n"
    at = text.index(line, aggregate)
    sample = _l4_sample(text[:at] + line.replace(": 0", ": 3") + text[at + len(line):])
    attrs = _attrs(sample)
    assert (attrs["aggregate_uncorr_ecc"], attrs["volatile_uncorr_ecc"], sample["severity"]) == (3, "0", "info")


def test_retired_page_counts_of_a_pre_ampere_report() -> None:
    # A page retirement section in the layout drivers 450+ print for Volta / Turing (synthetic values).
    text = (
        "GPU 00000000:00:1E.0\n"
        "    Minor Number                          : 0\n"
        "    Retired Pages\n"
        "        Single Bit ECC                    : 2\n"
        "        Double Bit ECC                    : 1\n"
        "        Pending Page Blacklist            : Yes\n"
    )
    sample = _events(text).filter(pl.col("kind") == "gpu_sample").row(0, named=True)
    attrs = _attrs(sample)
    assert (attrs["retired_pages_sbe"], attrs["retired_pages_dbe"], attrs["retired_pages_pending"]) == (2, 1, "Yes")
    assert sample["severity"] == "warning"


# --- -q -x: the same figures from the XML report --------------------------------------------------------------


def test_xml_report_reads_lifetime_counts_and_threshold() -> None:
    name = "nvidia_smi_h200_q_x_580_01.xml"
    text = (FOLDER / name).read_text()
    sample = _events(text, name).filter(pl.col("kind") == "gpu_sample").row(0, named=True)
    attrs = _attrs(sample)
    assert (attrs["aggregate_uncorr_ecc"], attrs["aggregate_sram_uncorr_ecc"], attrs["aggregate_sram_uncorr_parity"]) == (0, 0, 0)
    assert "sram_threshold_exceeded" not in attrs
    # the same report with the threshold flag changed
    tag = "<sram_threshold_exceeded>{}</sram_threshold_exceeded>"
    flagged = text.replace(tag.format("No"), tag.format("Yes"), 1)
    sample = _events(flagged, name).filter(pl.col("kind") == "gpu_sample").row(0, named=True)
    assert (sample["severity"], _attrs(sample)["sram_threshold_exceeded"]) == ("error", "Yes")
