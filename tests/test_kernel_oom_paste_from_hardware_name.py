"""A paste of a dump_stack() report that starts at its "Hardware name:" line (the header and the CPU line above it cut,
as in raspberrypi/linux#3872) is one event: the hardware line opens it and the backtrace, exception-stack and Mem-Info
lines after it go on with it. After a dump line (the CPU line, 6.10+'s "Tainted:" flags line) the hardware line stays
with that line's report."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import rca
from tests.conftest import DATA

_FRAMES = [
    " unwind_backtrace from show_stack+0x18/0x1c",
    " show_stack from dump_stack_lvl+0x90/0xac",
    " dump_header from oom_kill_process+0x23c/0x248",
    " out_of_memory+0x3dc/0x5c0",
    "Call Trace:",
    " <TASK>",
]


def _events(text: str) -> list[dict]:
    return rca.parse_text(text, file="x").to_dicts()


def test_arm32_oom_paste_from_the_hardware_line_is_one_event() -> None:
    text = (DATA / "kernel" / "dmesg_oom_paste_from_hardware_name_arm32_rpi_01.log").read_text()
    (event,) = _events(text)
    assert (event["line"], event["n_lines"], event["kind"], event["boot_seconds"]) == (1, 21, "log", 500.62667)
    assert event["attrs"] == '{"hardware":"BCM2711"}'
    assert event["message"].splitlines()[-1].strip() == "slab_reclaimable:3541 slab_unreclaimable:8733"


def test_hardware_line_after_a_cpu_and_taint_line_stays_with_the_cpu_line() -> None:
    events = _events(
        "[ 5.000001] CPU: 3 UID: 0 PID: 77 Comm: python Tainted: P           O       6.12.8 #1\n"
        "[ 5.000002] Tainted: [P]=PROPRIETARY_MODULE, [O]=OOT_MODULE\n"
        "[ 5.000003] Hardware name: QEMU Standard PC (Q35 + ICH9, 2009)\n"
        "[ 5.000004] Call Trace:\n"
    )
    assert [(e["line"], e["n_lines"], e["pid"]) for e in events] == [(1, 4, 77)]


def test_hardware_line_after_an_ordinary_line_opens_its_own_event() -> None:
    events = _events(
        "[ 5.000001] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n"
        "[ 5.000003] Hardware name: BCM2711\n"
        "[ 5.000004]  show_stack from dump_stack_lvl+0x90/0xac\n"
        "[ 5.000005] usb 1-1: New USB device found\n"
    )
    assert [(e["line"], e["n_lines"]) for e in events] == [(1, 1), (2, 2), (4, 1)]


@given(st.lists(st.sampled_from(_FRAMES), min_size=0, max_size=12))
def test_every_dump_line_after_the_hardware_line_joins_it(frames: list[str]) -> None:
    lines = ["[  500.626670] Hardware name: BCM2711"] + [f"[  500.6{i:05d}] {frame}" for i, frame in enumerate(frames)]
    events = _events("\n".join(lines) + "\n")
    assert [(e["line"], e["n_lines"]) for e in events] == [(1, len(lines))]
