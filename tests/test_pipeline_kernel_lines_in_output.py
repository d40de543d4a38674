"""Pipeline source: the kernel's OOM-killer and NVRM lines inside a program's output (a board's stdout, a serial console,
`dmesg` pasted into a job log), read as the kernel source reads the same lines: the kill, the kernel's choice, the header,
with the dmesg stamp's seconds since boot."""

from __future__ import annotations

import json

import pytest

import rca
from tests.conftest import event_on_line, fixture_path, parse_fixture

_FIXTURE = "hpc_shoc_jetson_tk1_stdout_kernel_oom_killed_01.log"

_COLUMNS = ("kind", "severity", "pid", "process", "rss_bytes", "boot_seconds", "ts_quality")


def _events(*lines: str) -> list[dict]:
    events = rca.parse_text("\n".join(lines) + "\n", file="x.log", format="pipeline")
    assert set(events["source"]) == {"pipeline"}, events
    return events.to_dicts()


def _picked(event: dict) -> tuple:
    return tuple(event[name] for name in _COLUMNS)


def test_jetson_console_kill_is_read_as_the_kernel_reads_it() -> None:
    events = parse_fixture(_FIXTURE)
    assert events["source"].unique().to_list() == ["pipeline"]
    choice, kill, shell = event_on_line(events, 2), event_on_line(events, 3), event_on_line(events, 4)
    assert _picked(choice) == ("log", "error", 2700, "DeviceMemory", None, 80.7433, "boot_relative")
    assert json.loads(choice["attrs"]) == {"selected": True, "oom_score": 1}
    assert _picked(kill) == ("oom_kill", "error", 2700, "DeviceMemory", 2632 * 1024, 80.751793, "boot_relative")
    assert json.loads(kill["attrs"]) == {"total_vm_kb": 1838376, "anon_rss_kb": 2632, "file_rss_kb": 628}
    assert (shell["kind"], shell["boot_seconds"]) == ("process_killed", None)


def test_same_lines_alone_give_the_kernel_sources_events() -> None:
    kernel_lines = fixture_path(_FIXTURE).read_text().splitlines(keepends=True)[1:3]
    kernel = rca.parse_text("".join(kernel_lines), file="k.log")
    assert kernel["source"].unique().to_list() == ["kernel"]
    piped = parse_fixture(_FIXTURE)
    columns = ["kind", "severity", "pid", "process", "rss_bytes", "boot_seconds", "attrs"]
    assert piped.filter(piped["line"].is_in([2, 3])).select(columns).to_dicts() == kernel.select(columns).to_dicts()


def test_a_choice_with_no_kill_line_under_it_is_the_kill() -> None:
    choice, _ = _events("Out of memory: Kill process 77 (java) score 900 or sacrifice child", "Killed")
    assert _picked(choice) == ("oom_kill", "error", 77, "java", None, None, "missing")


def test_a_choice_is_no_kill_where_the_next_oom_line_kills() -> None:
    events = _events(
        "epoch 3 step 1", "[  5.5] Out of memory: Kill process 77 (java) score 900 or sacrifice child", "epoch 3 step 2", "epoch 3 step 3",
        "[  5.6] Killed process 78 (java) total-vm:10kB, anon-rss:8kB, file-rss:0kB", "epoch 3 step 4",
    )
    # the lines of the job's output between them aside; the task killed may be a child of the one chosen (3.x)
    assert [(e["line"], e["kind"], e["pid"]) for e in events if e["pid"]] == [(2, "log", 77), (5, "oom_kill", 78)]
    assert events[4]["rss_bytes"] == 8192


def test_a_choice_is_the_kill_where_the_next_oom_line_is_another_episode() -> None:
    events = _events(
        "epoch 3 step 1", "Out of memory: Kill process 77 (java) score 900 or sacrifice child", "epoch 3 step 2",
        "java invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
        "Killed process 78 (java) total-vm:10kB, anon-rss:8kB, file-rss:0kB",
    )
    assert [(e["kind"], e["pid"]) for e in events if e["kind"] != "log"] == [("oom_kill", 77), ("oom_invoked", None), ("oom_kill", 78)]


def test_syslog_envelope_and_memcg_scope() -> None:
    _, kill = _events(
        "step 10 loss 0.5",
        "Jun 13 14:35:38 node1 kernel: [12345.678901] Memory cgroup out of memory: Killed process 3504804 (kubectl) "
        "total-vm:753508kB, anon-rss:58776kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0",
    )
    assert _picked(kill) == ("oom_kill", "error", 3504804, "kubectl", 58776 * 1024, 12345.678901, "boot_relative")
    assert json.loads(kill["attrs"]) == {
        "constraint": "CONSTRAINT_MEMCG", "total_vm_kb": 753508, "anon_rss_kb": 58776, "file_rss_kb": 0, "shmem_rss_kb": 0,
    }


def test_header_takes_the_pid_of_its_cpu_line_and_keeps_the_lines_time() -> None:
    header, cpu = _events(
        "2024-03-01T10:00:00.123Z [  80.75] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
        "2024-03-01T10:00:00.124Z [  80.75] CPU: 3 PID: 1517 Comm: python Not tainted 5.4.0-1 #1",
    )
    assert _picked(header)[:6] == ("oom_invoked", "warning", 1517, "python", None, 80.75)
    assert (header["ts"].isoformat(), header["ts_quality"]) == ("2024-03-01T10:00:00.123000+00:00", "exact")
    assert json.loads(header["attrs"]) == {"gfp_mask": "0x100cca(GFP_HIGHUSER_MOVABLE)", "order": 0}
    assert (cpu["kind"], cpu["pid"]) == ("log", None)


def test_header_of_another_task_than_the_cpu_lines_keeps_no_pid() -> None:
    header, _ = _events(
        "[ 80.75] python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
        "[ 80.75] CPU: 3 PID: 1517 Comm: python3 Not tainted 5.4.0-1 #1",
    )
    assert (header["kind"], header["pid"], header["process"]) == ("oom_invoked", None, "python")


def test_nvrm_xid_in_output_keeps_its_boot_seconds() -> None:
    _, xid = _events("Chose device: name='GK20A' index=0", "[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.")
    assert (xid["kind"], xid["xid"], xid["pci_bus"], xid["pid"], xid["boot_seconds"]) == ("xid", 79, "0000:3b:00", 1234, 1234.5)


@pytest.mark.parametrize(
    "line",
    [
        "We killed process 12 (python) because it was idle",  # not at a kernel line's start
        "kill process 12 (python) manually if it hangs",  # a choice names its score
        "CPU: 3 PID: 1517 Comm: python Not tainted",  # the CPU line alone is no OOM
    ],
)
def test_lookalikes_stay_log_lines(line: str) -> None:
    (event,) = _events("epoch 1", line)[1:]
    assert (event["kind"], event["pid"], event["rss_bytes"], event["boot_seconds"]) == ("log", None, None, None)


def test_a_program_s_own_killed_process_words_are_no_kernel_kill() -> None:
    # (The kernel's line names whose OOM it was, the victim's figures or uid, or comes with its stamp or envelope.)
    text = "step 1 loss 0.5\nKilled process 1234 (python) after the 30s grace period\n"
    events = rca.parse_text(text, format="pipeline")
    assert events.select("kind", "pid", "process").rows() == [("log", None, None), ("log", None, None)]
