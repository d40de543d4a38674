"""Kernel lines of accelerators other than NVIDIA's Xids: a Habana Gaudi the driver gave up on at probe, the NVIDIA driver
finding no GPU to drive, amdgpu's scheduler firmware past recovery, and 4.x amdgpu's "GPU fault detected … for process"
naming the process on the fault's own line (real samples under tests/data/kernel)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import event_on_line, parse_fixture, parse_log


def test_habana_device_not_usable_is_critical_and_names_its_pci_device() -> None:
    events = parse_fixture("dmesg_habanalabs_cpu_cp_timeout_device_not_usable_01.log")
    lost = {line: event_on_line(events, line) for line in (7, 11, 15)}
    assert [(e["severity"], e["pci_bus"]) for e in lost.values()] == [
        ("critical", "0000:1a:00.0"), ("critical", "0000:34:00.0"), ("critical", "0000:33:00.0"),
    ]
    # the firmware timeout before it is an error; a firmware load that worked is no error
    assert event_on_line(events, 4)["severity"] == "error"
    assert event_on_line(events, 1)["severity"] is None


def test_nvrm_no_adapter_and_probe_not_called_are_errors() -> None:
    events = parse_fixture("dmesg_nvrm_probe_routine_not_called_nouveau_01.log")
    assert event_on_line(events, 1)["severity"] == "error"
    assert event_on_line(events, 4)["severity"] == "error"
    # the nvlink core's (un)registration is routine
    assert event_on_line(events, 2)["severity"] is None


def test_amdgpu_mes_unrecoverable_is_an_error_and_reset_begin_stays_a_warning() -> None:
    events = parse_fixture("dmesg_amdgpu_mes_remove_queue_mode2_reset_gfx1151_01.log")
    mes = event_on_line(events, 3)
    assert (mes["severity"], mes["pci_bus"]) == ("error", "0000:c1:00.0")
    assert event_on_line(events, 5)["severity"] == "warning"
    assert event_on_line(events, 12)["severity"] is None


def test_legacy_amdgpu_gpu_fault_detected_names_the_process() -> None:
    events = parse_fixture("kern_log_amdgpu_gpu_fault_detected_reset_succeeded_01.log")
    for line in (1, 5):
        fault = event_on_line(events, line)
        assert (fault["severity"], fault["pid"], fault["process"], fault["pci_bus"]) == ("error", 2828872, "Media1190", "0005:01:00.0")
    # the register lines under it name no process
    assert event_on_line(events, 2)["pid"] is None


_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", min_size=1, max_size=15)


@settings(max_examples=12, deadline=None)
@given(name=_NAME, pid=st.integers(1, 4_194_304), thread=_NAME, tid=st.integers(1, 4_194_304), gpu=st.integers(0, 255))
def test_gpu_fault_detected_process_is_the_thread_group_leader(name: str, pid: int, thread: str, tid: int, gpu: int) -> None:
    line = (f"[  100.000000] amdgpu 0000:{gpu:02x}:00.0: GPU fault detected: 146 0x0000480c for process {name} pid {pid} "
            f"thread {thread}:cs0 pid {tid}\n")
    event = event_on_line(parse_log(line), 1)
    assert (event["pid"], event["process"], event["pci_bus"]) == (pid, name, f"0000:{gpu:02x}:00.0")
