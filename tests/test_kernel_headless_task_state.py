"""A task's state line ("task:python3 state:D … pid:N …") opens a dump of its own where no hung-task head is above it
(a SysRq-w "Show Blocked State" dump, a hung-task report pasted from its state line on): one event, of that task."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import rca
from tests.conftest import DATA


def _events(text: str) -> list[dict]:
    return rca.parse_text(text, file="x").to_dicts()


def test_reltime_paste_from_the_state_line_is_one_event_of_the_task() -> None:
    text = (DATA / "kernel" / "dmesg_reltime_headless_task_state_uvm_ioctl_01.log").read_text()
    (event,) = _events(text)
    assert (event["pid"], event["process"], event["n_lines"], event["line"]) == (15277, "python3.11", 24, 1)
    assert event["format"] == "dmesg_reltime"
    assert event["message"].splitlines()[-1].endswith("uvm_thread_context_add+0x65/0xc0 [nvidia_uvm]")


def test_arm32_backtrace_and_register_lines_stay_with_the_task() -> None:
    text = (DATA / "kernel" / "dmesg_headless_task_state_arm32_backtrace_rpi_01.log").read_text()
    (event,) = _events(text)
    assert (event["pid"], event["process"], event["n_lines"], event["boot_seconds"]) == (19868, "kworker/u2:1", 17, 82015.916407)


def test_state_line_under_a_hung_task_head_keeps_the_head_task() -> None:
    # flatcar/Flatcar issue #847: the 5.15 hung-task report, the state line inside it
    text = (
        "[1282119.153912] INFO: task jbd2/sda9-8:544 blocked for more than 122 seconds.\n"
        "[1282119.157088]       Not tainted 5.15.63-flatcar #1\n"
        '[1282119.159281] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.\n'
        "[1282119.162723] task:jbd2/sda9-8     state:D stack:    0 pid:  544 ppid:     2 flags:0x00004000\n"
        "[1282119.166441] Call Trace:\n"
        "[1282119.167640]  <TASK>\n"
        "[1282119.168675]  __schedule+0x2eb/0x8d0\n"
    )
    (event,) = _events(text)
    assert (event["pid"], event["process"], event["severity"], event["n_lines"]) == (544, "jbd2/sda9-8", "error", 7)


_COMM = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789_./:- "), min_size=1, max_size=15).filter(
    lambda comm: comm.strip() == comm and "state:" not in comm
)


@given(comms=st.lists(_COMM, min_size=1, max_size=4), pids=st.lists(st.integers(1, 4_194_304), min_size=4, max_size=4))
def test_each_task_of_a_blocked_state_dump_is_its_own_event(comms: list[str], pids: list[int]) -> None:
    # the 6.x state line (kernel/sched/core.c sched_show_task: "task:%-15.15s state:%c stack:%-5lu pid:%-5d tgid:%-5d …")
    lines = ["[   31.789435] sysrq: Show Blocked State"]
    for comm, pid in zip(comms, pids, strict=False):
        lines += [
            f"[   31.793298] task:{comm:<15} state:D stack:0     pid:{pid:<5} tgid:{pid:<5} ppid:2      flags:0x00000010",
            "[   31.804545] Call Trace:",
            "[   31.804546]  __schedule+0x2eb/0x8d0",
        ]
    events = _events("\n".join(lines) + "\n")
    assert len(events) == 1 + len(comms)
    assert [(e["pid"], e["process"], e["n_lines"]) for e in events[1:]] == [(p, c, 3) for c, p in zip(comms, pids, strict=False)]
