"""nvidia-smi -q / -q -x: a field NVML could not read ("Unknown Error", the table's ERR!) makes the GPU sample a warning."""

from __future__ import annotations

import json
from pathlib import Path

import rca
from hypothesis import given, settings
from hypothesis import strategies as st

DATA = Path(__file__).parent / "data" / "nvidia_smi"

_HEAD = (
    "==============NVSMI LOG==============\n\nTimestamp                                 : Tue Apr 30 21:16:21 2024\n"
    "Driver Version                            : 535.161.08\n\nAttached GPUs                             : 1\n"
    "GPU 00000000:00:16.0\n    Product Name                          : NVIDIA A10G\n"
)


def _samples(text: str):
    events = rca.parse_text(text, file="x").to_pandas()
    return events[events["kind"] == "gpu_sample"]


def test_real_a10g_report_with_unknown_error_brand_is_warning() -> None:
    rows = _samples((DATA / "nvidia_smi_q_535_a10g_product_brand_unknown_error_01.txt").read_text())
    assert len(rows) == 1
    row = rows.iloc[0]
    assert (row["severity"], row["pci_bus"], row["line"], row["n_lines"]) == ("warning", "00000000:00:16.0", 8, 4)
    assert json.loads(row["attrs"])["unknown_error"] == "Product Brand"


def test_report_without_unknown_error_stays_info() -> None:
    row = _samples(_HEAD + "    Product Brand                         : NVIDIA\n").iloc[0]
    assert row["severity"] == "info"
    assert "unknown_error" not in json.loads(row["attrs"])


def test_health_error_is_not_lowered_by_unknown_error() -> None:
    text = _HEAD + (
        "    Fan Speed                             : Unknown Error\n    Remapped Rows\n"
        "        Pending                           : No\n        Remapping Failure Occurred        : Yes\n"
    )
    row = _samples(text).iloc[0]
    assert row["severity"] == "error"
    assert json.loads(row["attrs"])["unknown_error"] == "Fan Speed"


def test_xml_element_with_unknown_error_is_warning() -> None:
    text = (
        '<?xml version="1.0" ?>\n<nvidia_smi_log>\n\t<timestamp>Sun Dec  1 15:30:44 2019</timestamp>\n'
        '\t<gpu id="00000000:29:00.0">\n\t\t<product_name>GeForce GTX 1660 Ti</product_name>\n'
        "\t\t<fan_speed>Unknown Error</fan_speed>\n\t\t<performance_state>P8</performance_state>\n\t</gpu>\n</nvidia_smi_log>\n"
    )
    row = _samples(text).iloc[0]
    assert row["severity"] == "warning"
    assert json.loads(row["attrs"])["unknown_error"] == "fan_speed"


_FIELDS = ["Product Brand", "Fan Speed", "Performance State", "Persistence Mode", "Serial Number"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_FIELDS), st.booleans()), min_size=1, max_size=5, unique_by=lambda t: t[0]))
def test_warning_exactly_when_some_field_reads_unknown_error(fields) -> None:
    body = "".join(f"    {name:<38}: {'Unknown Error' if bad else 'N/A'}\n" for name, bad in fields)
    row = _samples(_HEAD + body).iloc[0]
    bad = [name for name, flag in fields if flag]
    assert row["severity"] == ("warning" if bad else "info")
    assert json.loads(row["attrs"]).get("unknown_error") == (", ".join(bad) if bad else None)


def test_lowercase_device_handle_failure_keeps_its_bus_id() -> None:
    events = rca.parse_text((DATA / "nvidia_smi_list_handle_lost_lowercase_gpu_rtx2080ti_01.txt").read_text(), file="x").to_pandas()
    lost = events[events["line"] == 1].iloc[0]
    assert (lost["source"], lost["kind"], lost["severity"], lost["pci_bus"]) == ("nvidia_smi", "log", "error", "0000:18:00.0")
    listed = events[events["line"] > 1]
    assert listed["gpu_index"].tolist() == [1, 2, 3]
    assert listed["gpu_uuid"].iloc[0] == "GPU-f0f3ae96-fe93-f5c8-4295-bf657e5a25da"


@given(st.sampled_from(["GPU", "gpu"]), st.sampled_from(["", " "]), st.sampled_from(["0000:18:00.0", "00000000:3B:00.0"]))
def test_handle_pattern_reads_bus_in_either_case(word: str, gap: str, bus: str) -> None:
    import re

    from rca.sources._nvsmi_common import HANDLE_GPU

    line = f"Unable to determine the device handle for {word}{gap}{bus}: Unknown Error"
    match = re.search(HANDLE_GPU.replace("(?<", "(?P<"), line)
    assert match is not None and match.group("bus") == bus
