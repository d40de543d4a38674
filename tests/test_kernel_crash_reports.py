"""Kernel crash reports name their task on a CPU line a few lines under the head ("CPU: 12 PID: 4242 Comm: python3
Tainted: …"): the oops's event carries it, and so does a head printed just before the oops (a BUG_ON()'s "kernel BUG at
…", a fault's "BUG: unable to handle …"); a "Bad page state" report's page dump joins its event up to that CPU line;
hung-task and soft-lockup heads name their task themselves, with or without the "watchdog: " prefix (before 4.5)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import rca


def _events(*messages: str) -> list[dict]:
    text = "".join(f"[  100.{row:06d}] {message}\n" for row, message in enumerate(messages))
    return rca.parse_text(text, file="x").to_dicts()


def _tasks(events: list[dict]) -> list[tuple]:
    return [(event["line"], event["n_lines"], event["severity"], event["pid"], event["process"]) for event in events]


_CPU_5X = "CPU: 12 PID: 4242 Comm: python3 Tainted: P           OE     5.15.0-91-generic #101-Ubuntu"
_CPU_6X = "CPU: 12 UID: 0 PID: 4242 Comm: python3 Tainted: P           OE      6.8.0-45-generic #45-Ubuntu"
_HARDWARE = "Hardware name: Supermicro SYS-421GE-TNRT/X13DEG-OAD, BIOS 1.2 01/02/2024"


def test_a_bug_on_names_the_task_of_the_oops_under_it() -> None:
    events = _events("kernel BUG at mm/huge_memory.c:2345!", "invalid opcode: 0000 [#1] SMP NOPTI", _CPU_5X, _HARDWARE)
    assert _tasks(events) == [(1, 1, "critical", 4242, "python3"), (2, 3, "critical", 4242, "python3")]


def test_a_6x_oops_line_and_an_arm64_internal_error_name_it_too() -> None:
    events = _events(
        "kernel BUG at mm/huge_memory.c:2345!",
        "Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI",
        _CPU_6X,
        "kernel BUG at fs/ext4/inode.c:1234!",
        "Internal error: Oops - BUG: 00000000f2000800 [#1] SMP",
        "Modules linked in: nvidia_uvm(POE) nvidia(POE)",
        "CPU: 71 PID: 5151 Comm: pt_main_thread Tainted: P           OE      6.8.0-1013-nvidia-64k #14-Ubuntu",
    )
    assert [(event["line"], event["pid"], event["process"]) for event in events] == [
        (1, 4242, "python3"),
        (2, 4242, "python3"),
        (4, 5151, "pt_main_thread"),
        (5, 5151, "pt_main_thread"),
    ]


def test_a_page_fault_head_names_the_task_of_its_oops() -> None:
    events = _events(
        "BUG: unable to handle page fault for address: ffffc90000123000",
        "#PF: supervisor read access in kernel mode",
        "#PF: error_code(0x0000) - not-present page",
        "PGD 100000067 P4D 100000067 PUD 0",
        "Oops: 0000 [#1] PREEMPT SMP NOPTI",
        _CPU_6X,
    )
    assert _tasks(events) == [(1, 4, "critical", 4242, "python3"), (5, 2, "critical", 4242, "python3")]


def test_an_oops_far_below_names_no_task_above() -> None:
    console = [f"usb 1-{port}: new high-speed USB device number {port} using xhci_hcd" for port in range(8)]
    events = _events("kernel BUG at mm/huge_memory.c:2345!", *console, "invalid opcode: 0000 [#1] SMP NOPTI", _CPU_5X)
    assert (events[0]["pid"], events[0]["process"]) == (None, None)
    assert (events[-1]["line"], events[-1]["pid"]) == (10, 4242)


def test_a_null_comm_names_no_process() -> None:
    events = _events(
        "general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP NOPTI",
        "CPU: 3 PID: 917 Comm: (null) Not tainted 5.15.0 #1",
    )
    assert _tasks(events) == [(1, 2, "critical", 917, None)]


def test_a_report_before_another_report_takes_no_oops_task() -> None:
    events = _events(
        "BUG: Bad page state in process systemd-resolve  pfn:053b7",
        "kernel BUG at include/linux/mm.h:720!",
        "invalid opcode: 0000 [#1] PREEMPT SMP NOPTI",
        _CPU_5X,
    )
    assert [(event["pid"], event["process"]) for event in events] == [
        (None, "systemd-resolve"),
        (4242, "python3"),
        (4242, "python3"),
    ]


def test_a_bad_page_report_is_one_event_through_its_cpu_line() -> None:
    events = _events(
        "BUG: Bad page state in process python3  pfn:1a2b3c",
        "page: refcount:0 mapcount:-128 mapping:0000000000000000 index:0x0 pfn:0x1a2b3c",
        "head: order:9 mapcount:0 entire_mapcount:0 nr_pages_mapped:0 pincount:0",
        "flags: 0x17ffffc0000000(node=0|zone=2|lastcpupid=0x1fffff)",
        "page_type: 0xffffff7f(buddy)",
        "raw: 0017ffffc0000000 dead000000000100 dead000000000122 0000000000000000",
        "raw: 0000000000000000 0000000000000000 00000000ffffff7f 0000000000000000",
        "page dumped because: nonzero mapcount",
        "Modules linked in: nvidia_uvm(POE) nvidia(POE)",
        _CPU_6X,
        "Call Trace:",
        "Disabling lock debugging due to kernel taint",
    )
    assert _tasks(events)[0] == (1, 11, "critical", 4242, "python3")
    assert events[1]["message"] == "Disabling lock debugging due to kernel taint"


def test_a_4x_page_dump_joins_its_report() -> None:
    events = _events(
        "BUG: Bad page state in process tvh:mtimer  pfn:5fff1",
        "page:ba4090b8 count:1387088643 mapcount:0 mapping:a5b8a24d index:0x1",
        "flags: 0x9f290fb3(locked|error|dirty|lru|slab)",
        "page dumped because: page still charged to cgroup",
        "page->mem_cgroup:9f8cb31d",
        "bad because of flags: 0x90fb3(locked|error|dirty|lru|slab)",
        "CPU: 3 PID: 521 Comm: tvh:mtimer Tainted: G    B           4.9.45-v7+ #1031",
    )
    assert _tasks(events) == [(1, 7, "critical", 521, "tvh:mtimer")]


def test_hung_task_and_soft_lockup_heads_name_their_task() -> None:
    hung = _events("INFO: task python3:4242 blocked for more than 120 seconds.")
    lockups = _events(
        "watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [python3:4242]",
        "irq event stamp: 92",
        "BUG: soft lockup - CPU#10 stuck for 23s! [migration/10:346]",
    )
    assert _tasks(hung) == [(1, 1, "error", 4242, "python3")]
    assert _tasks(lockups) == [(1, 2, "critical", 4242, "python3"), (3, 1, "critical", 346, "migration/10")]
    assert [json.loads(event["attrs"])["stuck_seconds"] for event in lockups] == [22, 23]


@settings(max_examples=8, deadline=None)
@given(
    pid=st.integers(min_value=1, max_value=4_194_304),
    comm=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-./:", min_size=1, max_size=15),
    uid=st.booleans(),
)
def test_any_task_on_the_cpu_line_is_the_bug_on_task(pid: int, comm: str, uid: bool) -> None:
    cpu = f"CPU: 5 {'UID: 1000 ' if uid else ''}PID: {pid} Comm: {comm} Not tainted 6.8.0 #1"
    events = _events("kernel BUG at mm/page_alloc.c:1234!", "Oops: invalid opcode: 0000 [#1] SMP", cpu)
    assert [(event["pid"], event["process"]) for event in events] == [(pid, comm)] * 2
