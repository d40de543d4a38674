"""Kernel lines that name a task that crashed or was chosen to die: the audit record of a task dead of a signal (its pid,
comm, signal, and the record's own time where the line has none), the page allocator's "Bad page state in process …",
and the OOM killer's "Kill process … or sacrifice child" choice (an error, the kill itself still one event)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import DATA

_ABEND = (
    "audit: type=1701 audit({epoch}:{serial}): auid=4294967295 uid=1000 gid=1000 ses=4294967295 subj=unconfined "
    'pid={pid} comm={comm} exe="/usr/bin/python3.10" sig={signal} res=1'
)


def _events(text: str) -> list[dict]:
    return rca.parse_text(text, file="x").to_dicts()


def _abend(pid: int, comm: str, signal: int, epoch: str = "1700000000.123") -> str:
    return _ABEND.format(epoch=epoch, serial=456, pid=pid, comm=f'"{comm}"', signal=signal)


def test_a_task_dead_of_a_signal_names_its_pid_comm_and_signal() -> None:
    lines = [f"[ 1234.{row:06d}] " + _abend(12345 + row, "python3", signal) for row, signal in enumerate((11, 6, 7, 9))]
    events = _events("\n".join(lines) + "\n")
    assert [(event["kind"], event["severity"], event["pid"], event["process"]) for event in events] == [
        ("log", "error", 12345 + row, "python3") for row in range(4)
    ]
    assert [json.loads(event["attrs"])["signal"] for event in events] == [11, 6, 7, 9]


def test_the_record_time_dates_a_raw_dmesg_line() -> None:
    (event,) = _events("[   27.359988] " + _abend(313, "python3", 11, epoch="1648621070.228") + "\n")
    assert (event["ts"], event["ts_quality"], event["boot_seconds"]) == (
        datetime(2022, 3, 30, 6, 17, 50, 228000, tzinfo=UTC),
        "exact",
        27.359988,
    )


def test_a_syslog_stamp_stays_the_line_time() -> None:
    text = "Jun 14 17:04:48 820g3 kernel: " + _abend(4556, "PCSX2:gdrv0", 6, epoch="1623661488.019") + "\n"
    (event,) = rca.parse_text(text, file="x", reference_time=datetime(2021, 6, 20, tzinfo=UTC)).to_dicts()
    assert (event["ts"], event["ts_quality"], event["pid"], event["process"]) == (
        datetime(2021, 6, 14, 17, 4, 48, tzinfo=UTC),
        "year_from_mtime",
        4556,
        "PCSX2:gdrv0",
    )


def test_a_comm_written_in_hex_is_read_back() -> None:
    line = _ABEND.format(epoch="1700000000.123", serial=9, pid=77, comm="707974686F6E2033", signal=11)
    (event,) = _events("[    5.000000] " + line + "\n")
    assert (event["pid"], event["process"]) == (77, "python 3")


def test_the_real_abend_lines_name_the_crashed_task() -> None:
    events = _events((DATA / "kernel" / "dmesg_audit_avc_denied_anom_abend_qemu_static_podman_01.log").read_text())
    assert [(event["severity"], event["pid"], event["process"], event["ts"]) for event in events] == [
        (None, None, None, None),  # the SELinux denial before it: no crash
        ("error", 32544, "dumb-init", datetime(2025, 6, 9, 17, 8, 38, 807000, tzinfo=UTC)),
    ]


@settings(max_examples=5, deadline=None)
@given(
    tasks=st.lists(
        st.tuples(
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_./:()-]{0,14}", fullmatch=True),
            st.integers(min_value=1, max_value=4_194_304),
            st.sampled_from((4, 5, 6, 7, 8, 11, 24, 25, 31)),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_any_comm_pid_and_signal_come_back(tasks: list[tuple[str, int, int]]) -> None:
    text = "".join(f"[  100.{row:06d}] " + _abend(pid, comm, signal) + "\n" for row, (comm, pid, signal) in enumerate(tasks))
    events = _events(text)
    assert [(event["pid"], event["process"], json.loads(event["attrs"])["signal"]) for event in events] == [
        (pid, comm, signal) for comm, pid, signal in tasks
    ]


def test_bad_page_state_names_the_task_that_hit_it() -> None:
    events = _events((DATA / "kernel" / "dmesg_bad_page_state_in_process_virtio_net_xdp_01.log").read_text())
    assert [(event["severity"], event["process"]) for event in events[:2]] == [
        ("critical", "swapper/0"),
        ("critical", "systemd-resolve"),
    ]
    # the oops after them keeps the task its CPU line names
    assert (events[-1]["pid"], events[-1]["process"]) == (1181, "kubelet")


def test_a_comm_with_a_space_before_the_pfn() -> None:
    (event,) = _events("[   31.067600] BUG: Bad page state in process rs:main Q:Reg  pfn:7fe84\n")
    assert event["process"] == "rs:main Q:Reg"


def test_the_oom_selection_is_an_error_and_the_kill_one_event() -> None:
    text = (
        "[11686.043641] Out of memory: Kill process 2603 (flasherav) score 761 or sacrifice child\n"
        "[11686.043647] Killed process 2603 (flasherav) total-vm:1498536kB, anon-rss:721784kB, file-rss:4228kB\n"
    )
    selection, kill = _events(text)
    assert (selection["kind"], selection["severity"], selection["pid"]) == ("log", "error", 2603)
    assert (kill["kind"], kill["severity"], kill["pid"]) == ("oom_kill", "error", 2603)
