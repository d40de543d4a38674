"""What nvidia-smi prints instead of any report, saved on its own (a health check's output, a node's console).

No driver ("NVIDIA-SMI has failed because it couldn't communicate …"), no GPU ("No devices were found"), a GPU it
cannot reach ("Unable to determine the device handle for GPU …: Unknown Error"), NVML refused ("Failed to initialize
NVML: …", "GPU access blocked by the operating system") are errors; an option the GPU or the command line does not take
("Changing power management limit is not supported for GPU: …", "Not supported on the device(s)", "Failed to process
command line") is a warning, the run goes on. A file of these alone is nvidia-smi's; one such line in a program's
output is not.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from tests.conftest import fixture_path, head_lines

PL_REFUSED = "nvidia_smi_pl_not_supported_rtx4080_laptop_01.txt"
BLOCKED = "nvidia_smi_nvml_access_blocked_wsl2_l40s_01.txt"
SHORT_DOMAIN = "nvidia_smi_handle_unknown_error_short_domain_01.txt"
MISMATCH = "nvidia_smi_nvml_driver_library_mismatch_535_01.txt"
NO_DEVICES = "nvidia_smi_no_devices_found_rtx5090_01.txt"
NO_DRIVER = "nvidia_smi_failed_couldnt_communicate_440_01.txt"
DETECT = "nvidia_smi_handle_detect_wording_a10_gpu_pv_01.txt"
ALL = (PL_REFUSED, BLOCKED, SHORT_DOMAIN, MISMATCH, NO_DEVICES, NO_DRIVER, DETECT)

ERRORS = (
    "No devices were found",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
    "Failed to initialize NVML: GPU access blocked by the operating system",
    "Failed to properly shut down NVML: GPU access blocked by the operating system",
    "GPU access blocked by the operating system",
    "Failed to initialize NVML: Driver/library version mismatch",
)
WARNINGS = ("Not supported on the device(s)", "Failed to process command line")


def _parse(name: str) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_text(encoding="utf-8"), file=name)


def _by_line(events: pl.DataFrame) -> dict[int, dict]:
    return {row["line"]: row for row in events.to_dicts()}


def test_answer_only_files_are_sniffed_as_nvidia_smi() -> None:
    for name in ALL:
        source, score = sources.sniff(head_lines(fixture_path(name)))
        assert source is not None and source.name == "nvidia_smi", name
        assert score >= 0.9


def test_refused_power_limit_is_a_warning_on_its_gpu() -> None:
    rows = _by_line(_parse(PL_REFUSED))
    assert rows[1]["severity"] == "warning"
    assert rows[1]["pci_bus"] == "00000000:01:00.0"
    assert rows[2]["severity"] is None and rows[3]["severity"] is None  # "Treating as warning …", "All done."


def test_nvml_refused_lines_are_errors() -> None:
    rows = _by_line(_parse(BLOCKED))
    assert [rows[1]["severity"], rows[2]["severity"]] == ["error", "error"]
    mismatch = _by_line(_parse(MISMATCH))
    assert mismatch[1]["severity"] == "error" and mismatch[2]["severity"] is None


def test_lost_gpu_keeps_a_short_domain_bus_id() -> None:
    row = _by_line(_parse(SHORT_DOMAIN))[1]
    assert (row["source"], row["severity"], row["pci_bus"]) == ("nvidia_smi", "error", "000:BA:80.0")


def test_detect_wording_of_a_lost_handle_is_an_error_on_its_gpu() -> None:
    row = _by_line(_parse(DETECT))[1]
    assert (row["source"], row["severity"], row["pci_bus"]) == ("nvidia_smi", "error", "0000:B1:00.0")
    other_reason = rca.parse_text("Unable to detect the device handle for GPU0000:B1:00.0: Insufficient Permissions\n", file="x")
    assert other_reason["severity"].to_list() == ["error"]


def test_no_device_and_no_driver_are_errors() -> None:
    for name in (NO_DEVICES, NO_DRIVER):
        row = _by_line(_parse(name))[1]
        assert (row["source"], row["kind"], row["severity"], row["ts_quality"]) == ("nvidia_smi", "log", "error", "missing")


def test_one_answer_in_a_program_log_is_not_nvidia_smi() -> None:
    head = [f"step {n} loss 0.{n}" for n in range(9)] + ["No devices were found"]
    source, _ = sources.sniff(head)
    assert source is None or source.name != "nvidia_smi"


_BUS = st.tuples(st.sampled_from(["00000000", "0000", "000"]), *[st.sampled_from(["01", "3B", "BA", "65"])] * 2, st.integers(0, 7))


@settings(max_examples=30, deadline=None)
@given(
    lines=st.lists(st.sampled_from(ERRORS + WARNINGS), min_size=1, max_size=5),
    bus=_BUS,
    what=st.sampled_from(["power management limit", "persistence mode", "application clocks"]),
)
def test_any_mix_of_answers_gets_its_severities(lines: list[str], bus: tuple, what: str) -> None:
    bus_id = f"{bus[0]}:{bus[1]}:{bus[2]}.{bus[3]}"
    text = [*lines, f"Changing {what} is not supported for GPU: {bus_id}.", f"Unable to determine the device handle for GPU{bus_id}: Unknown Error"]
    source, _ = sources.sniff(text)
    assert source is not None and source.name == "nvidia_smi"
    rows = _by_line(rca.parse_text("\n".join(text) + "\n", file="x"))
    for number, line in enumerate(lines, start=1):
        assert rows[number]["severity"] == ("warning" if line in WARNINGS else "error"), line
    refused, lost = rows[len(lines) + 1], rows[len(lines) + 2]
    assert (refused["severity"], refused["pci_bus"]) == ("warning", bus_id)
    assert (lost["severity"], lost["pci_bus"]) == ("error", bus_id)
