"""dcgmi / NVVS lines printed without a table (a GPU the diagnostic refuses, dcgmi's own errors) are dcgm's events;
nvidia-smi's retired pages are facts of their GPU, a double bit ECC retirement a warning."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from rca import sources
from tests.conftest import event_on_line, parse_fixture, parse_log

_REFUSED = "GPU {}'s MIG configuration is incompatible with the diagnostic because it prevents access to the entire GPU."
_RETIRED_HEADER = "gpu_uuid, retired_pages.address, retired_pages.cause"
_UUID = "GPU-a22537c7-6eaa-7bdb-0ba4-45e67e84e963"


def test_nvvs_banner_and_refused_gpu_read_from_the_real_sample() -> None:
    events = parse_fixture("dcgm_nvvs_418_mig_incompatible_01.txt")
    banner, refused = event_on_line(events, 3), event_on_line(events, 5)
    assert (banner["source"], banner["severity"], json.loads(banner["attrs"])) == ("dcgm", "info", {"diag_version": "418"})
    assert (refused["severity"], refused["gpu_index"], refused["format"]) == ("warning", 0, "dcgmi_text")
    assert json.loads(refused["attrs"]) == {"diag_refused": "mig_configuration"}


def test_dcgmi_error_names_the_group_and_return_code() -> None:
    row = event_on_line(parse_fixture("dcgm_diag_mig_incompatible_empty_group_01.txt"), 5)
    assert (row["severity"], row["gpu_index"]) == ("error", None)
    assert json.loads(row["attrs"]) == {"group_id": 1, "return_code": -35}


def test_health_watches_not_enabled_is_a_dcgm_error() -> None:
    events = parse_fixture("dcgm_health_check_watches_not_enabled_336_01.txt")
    assert events["source"].to_list() == ["dcgm", "dcgm"]
    assert event_on_line(events, 2)["severity"] == "error"
    assert event_on_line(events, 1)["severity"] is None  # the command itself is no finding


@settings(max_examples=15, deadline=None)
@given(gpu=st.integers(min_value=0, max_value=15), prompt=st.sampled_from(["", "% ", "$ sudo "]))
def test_refused_gpu_index_is_the_one_named(gpu: int, prompt: str) -> None:
    events = parse_log(f"{prompt}dcgmi diag -i {gpu} -r 1\n{_REFUSED.format(gpu)}\n")
    row = event_on_line(events, 2)
    assert (row["source"], row["severity"], row["gpu_index"]) == ("dcgm", "warning", gpu)


def test_refusal_inside_a_longer_log_is_left_to_that_log() -> None:
    lines = [f"2024-05-01 10:00:{second:02d} INFO step {second} loss 0.5" for second in range(10)] + [_REFUSED.format(0)]
    source, _ = sources.sniff(lines)
    assert source is not None and source.name != "dcgm"


def test_bare_error_line_without_dcgmi_is_not_claimed() -> None:
    source, _ = sources.sniff(["Error: Unable to connect to host engine."])
    assert source is None or source.name != "dcgm"


def test_short_job_log_that_ran_dcgmi_then_failed_stays_the_jobs() -> None:
    # "Error: …" is no word of dcgmi's alone: the job's own failure after its preflight command is read as the job's
    events = parse_log("+ dcgmi diag -r 1\nError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert (events["source"].to_list(), event_on_line(events, 2)["kind"]) == (["pipeline", "pipeline"], "cuda_oom")
    traceback = parse_log("Running preflight: dcgmi diag -r 1\nError: torch.cuda.OutOfMemoryError\nTraceback (most recent call last):\n")
    assert (traceback["line"].to_list(), event_on_line(traceback, 3)["kind"]) == ([1, 2, 3], "traceback")


def test_retired_page_severity_follows_its_cause() -> None:
    text = f"{_RETIRED_HEADER}\n{_UUID}, 0x000000000071e6b8, Double Bit ECC\n{_UUID}, 0x00000000001a2f33, Single Bit ECC\n"
    events = parse_log(text)
    double, single = event_on_line(events, 2), event_on_line(events, 3)
    assert (double["source"], double["kind"], double["severity"], double["gpu_uuid"]) == ("nvidia_smi", "log", "warning", _UUID)
    assert json.loads(double["attrs"]) == {"retired_pages.address": "0x000000000071e6b8", "retired_pages.cause": "Double Bit ECC"}
    assert (single["severity"], single["gpu_uuid"]) == ("info", _UUID)


def test_retired_page_address_not_available_is_null() -> None:
    row = event_on_line(parse_log(f"{_RETIRED_HEADER}\n{_UUID}, [N/A], Double Bit ECC\n"), 2)
    assert row["severity"] == "warning"
    assert json.loads(row["attrs"]) == {"retired_pages.cause": "Double Bit ECC"}


def test_a_two_word_line_among_samples_is_kept_not_taken_for_a_sample() -> None:
    scrape = (
        "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1f027ee8-6e1e-2b8c-0108-3d370e5f0418",Hostname="node-1"} 87\n'
        "Error: timeout\n"
        'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-9e5b8fec-61bf-5124-a0a9-079af1b65cc6",Hostname="node-1"} NaN\n'
    )
    events = parse_log(scrape)
    assert event_on_line(events, 4)["message"] == "Error: timeout"
    assert events.filter(events["line"].is_in([3, 5]))["gpu_index"].to_list() == [0, 1]
