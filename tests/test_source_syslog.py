"""The syslog source: mixed system logs, each program's lines routed to its own rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.ingest import parse_lines
from rca.sources import _syslog, kernel, lines_frame
from rca.sources._base import ParseContext
from tests.conftest import DATA, FIXED_MTIME

FOLDER = DATA / "syslog"
KI = 1024


def _text(name: str) -> str:
    return (FOLDER / name).read_text()


def _events(name: str) -> pl.DataFrame:
    return rca.parse_text(_text(name), file=name, reference_time=FIXED_MTIME)


@pytest.mark.parametrize("path", sorted(FOLDER.iterdir()), ids=lambda p: p.name)
def test_mixed_files_are_sniffed_as_syslog(path: Path) -> None:
    head = [line for line in path.read_text().splitlines() if line.strip()][:60]
    assert sources.sniff(head)[0].name == "syslog"


def test_single_program_files_stay_with_their_source() -> None:
    kern_log = [f"May 15 23:09:{i:02d} node kernel: [  514.6828{i:02d}] eth0: link up" for i in range(10)]
    klog = [f"Jun 14 10:02:{i:02d} node kubelet[2480]: I0614 10:02:{i:02d}.402117    2480 kubelet.go:2404] SyncLoop" for i in range(10)]
    assert sources.sniff(kern_log)[0].name == "kernel"
    assert sources.sniff(klog)[0].name == "kubelet"


def test_other_programs_keep_time_host_process_and_pid() -> None:
    events = rca.parse_text(
        "Nov 24 06:30:17 ip-10-0-240-15 containerd[953]: time=\"2026-11-24T06:30:17.747768517Z\" level=info msg=\"ExecSync\"\n"
        "Nov 24 06:31:06 ip-10-0-240-15 systemd[1]: Started Session 12 of user core.\n",
        year=2026,
    )
    assert events.select("source", "kind", "host", "process", "pid").rows() == [
        ("syslog", "log", "ip-10-0-240-15", "containerd", 953),
        ("syslog", "log", "ip-10-0-240-15", "systemd", 1),
    ]
    assert events["ts"].to_list() == [datetime(2026, 11, 24, 6, 30, 17, tzinfo=UTC), datetime(2026, 11, 24, 6, 31, 6, tzinfo=UTC)]


def test_mixed_syslog_routes_kernel_lines_to_the_kernel_rules() -> None:
    events = _events("kern_log_mixed_syslog_01.log")
    assert events["kind"].to_list() == ["log", "oom_invoked", "log", "oom_kill", "process_killed", "log"]
    assert events["process"].to_list()[-2:] == [None, "sshd"]  # containerd's TaskExit is about the container's process
    assert events["source"].to_list() == ["syslog", "kernel", "kernel", "kernel", "syslog", "syslog"]
    invoked = events.row(1, named=True)
    assert (invoked["n_lines"], invoked["pid"], invoked["process"], invoked["boot_seconds"]) == (8, 551902, "dataloader", 81234.118027)
    kill = events.row(3, named=True)
    assert (kill["pid"], kill["pod_uid"], kill["mem_used_bytes"]) == (551880, "9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a", 16 * KI**3)
    task_exit = events.row(4, named=True)
    assert (task_exit["pid"], task_exit["container_id"], task_exit["exit_code"]) == (551880, kill["container_id"], 137)


def test_kernel_rules_are_registered_for_the_syslog_program() -> None:
    assert _syslog._PROGRAM_RULES["kernel"] == ("kernel", kernel.kernel_rules)
    framed = _syslog.frame_text(lines_frame(_text("kern_log_mixed_syslog_01.log")), ParseContext(file="m", year=2024))
    routed = _syslog.dispatch(framed, ParseContext(file="m", year=2024))
    assert routed.filter(pl.col("source") == "kernel")["kind"].to_list() == ["oom_invoked", "log", "oom_kill"]


def test_mixed_journal_routes_each_program_to_its_rules() -> None:
    events = _events("kubelet_journal_mixed_oomkilled.log")
    assert events["source"][0] == "kernel"
    assert events["source"].to_list()[2:] == ["kubelet"] * 4
    containerd = events.row(1, named=True)  # containerd's TaskOOM: the runtime's view of the kill in the container
    assert (containerd["source"], containerd["kind"], containerd["pid"], containerd["container_id"]) == (
        "syslog", "oom_kill", None, "9f3e1b2c4d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c",
    )
    assert events["host"].unique().to_list() == ["gpu-worker-3"]
    restarted = events.filter(pl.col("kind") == "container_oomkilled").row(-1, named=True)
    assert (restarted["pod"], restarted["container"], restarted["exit_code"]) == ("data-loader-6c8b7f9d4-k7p2m", "loader", 137)
    # The klog stamp (with its fraction) wins over the journald second.
    assert restarted["ts"] == datetime(2024, 6, 14, 9, 58, 52, 310544, tzinfo=UTC)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=30), st.sampled_from(sorted(FOLDER.iterdir())))
def test_any_text_spliced_into_a_syslog_file_is_accounted_for(noise: list[str], path: Path) -> None:
    real = path.read_text().splitlines()
    mixed = [line for pair in zip(real, noise + [""] * len(real)) for line in pair if "\n" not in line and "\r" not in line]
    lines = lines_frame("\n".join(mixed) + "\n")
    events, skipped = parse_lines(lines, ParseContext(file="x", year=2024), sources.get("syslog"))
    assert int(events["n_lines"].sum() or 0) + sum(skipped.values()) == lines.height


def test_application_lines_starting_with_a_date_and_a_level_are_not_syslog() -> None:
    text = (
        "2026-11-24T10:00:00Z ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB "
        "(GPU 0; 79.15 GiB total capacity; 70.00 GiB already allocated; 1.00 GiB free; 75.00 GiB reserved in total by PyTorch)\n"
        "2026-11-24T10:00:01Z INFO trainer: step 10 loss 1.2\n"
    )
    assert sources.sniff(text.splitlines())[0].name == "pipeline"
    events = rca.parse_text(text)
    assert events.select("source", "kind", "gpu_index").rows() == [("pipeline", "cuda_oom", 0), ("pipeline", "log", None)]


def test_ts_raw_is_the_stamp_as_written_padding_included() -> None:
    events = rca.parse_text("Dec  2 11:38:27 worker4 kernel: NVRM: loading\nDec 12 11:38:28 worker4 systemd[1]: Started x.\n", file="syslog", year=2025)
    assert events["ts_raw"].to_list() == ["Dec  2 11:38:27", "Dec 12 11:38:28"]


SYSTEMD_UNIT_LINES = """\
Jul  8 03:15:02 gpu-worker-11 systemd[1]: cri-containerd-a3c1e9f07b2d4c8e9f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70.scope: A process of this unit has been killed by the OOM killer.
Jul  8 03:15:02 gpu-worker-11 systemd[1]: train.service: Main process exited, code=killed, status=9/KILL
Jul  8 03:15:02 gpu-worker-11 systemd[1]: train.service: Main process exited, code=dumped, status=11/SEGV
Jul  8 03:15:02 gpu-worker-11 systemd[1]: train.service: Failed with result 'oom-kill'.
Jul  8 03:15:03 gpu-worker-11 systemd[1]: Started Session 12 of User ubuntu.
"""


def test_systemd_tells_of_kills_in_its_units() -> None:
    events = rca.parse_text(SYSTEMD_UNIT_LINES, file="syslog", reference_time=FIXED_MTIME)
    rows = events.select("kind", "severity", "process", "pid", "exit_code").rows()
    assert rows == [
        ("oom_kill", "error", "cri-containerd-a3c1e9f07b2d4c8e9f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70.scope", None, None),
        ("process_killed", "error", "train.service", None, 137),
        ("log", "error", "train.service", None, None),  # a segfault is not a kill
        ("log", "error", "train.service", None, None),
        ("log", None, "systemd", 1, None),
    ]
    assert events["container_id"][0] == "a3c1e9f07b2d4c8e9f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"
    assert [json.loads(a) for a in events["attrs"][1:4]] == [
        {"unit": "train.service", "signal": "SIGKILL"},
        {"unit": "train.service", "signal": "SIGSEGV"},
        {"unit": "train.service", "result": "oom-kill"},
    ]


def test_rfc5424_lines_take_time_host_program_procid_and_severity() -> None:
    text = (
        "<4>1 2024-04-10T10:15:57.163826-07:00 T01 kernel - - - [25523.801864] WARNING: CPU: 12 PID: 42870 at fs/smb/client/file.c:3341\n"
        "2024-04-10T10:16:01.000001-07:00 T01 kernel - - - Memory cgroup out of memory: Killed process 63214 (uwsgi) total-vm:3149468kB, "
        "anon-rss:164992kB, file-rss:52176kB, shmem-rss:92kB, UID:0 pgtables:1372kB oom_score_adj:986\n"
        '<30>1 2024-04-10T10:16:02.5Z T01 systemd 1 - [meta sequenceId="7"] Started Session 3 of user x.\n'
    )
    events = rca.parse_text(text, file="syslog", format="syslog")
    assert events["kind"].to_list() == ["log", "oom_kill", "log"]
    assert events["host"].unique().to_list() == ["T01"]
    assert events["ts"].to_list() == [datetime(2024, 4, 10, 17, 15, 57, 163826, tzinfo=UTC), datetime(2024, 4, 10, 17, 16, 1, 1, tzinfo=UTC),
                                      datetime(2024, 4, 10, 10, 16, 2, 500000, tzinfo=UTC)]
    assert events["severity"].to_list() == ["warning", "error", "info"]
    assert events.row(0, named=True)["message"].startswith("WARNING: CPU: 12")
    assert events.select("pid", "process").rows()[1:] == [(63214, "uwsgi"), (1, "systemd")]
    assert events.row(2, named=True)["message"] == "Started Session 3 of user x."


def test_journalctl_short_full_reads_the_weekday_date_and_zone() -> None:
    text = (
        "Thu 2024-01-04 12:00:01 UTC gpu-node-1 kernel: NVRM: Xid (PCI:0000:cb:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
        "Thu 2024-01-04 12:00:02 UTC gpu-node-1 systemd[1]: Stopped Session 3 of user x.\n"
        "Thu 2024-01-04 13:00:03 CET gpu-node-1 systemd[1]: Started Session 4 of user x.\n"
    )
    events = rca.parse_text(text, file="journal", tz="Europe/Berlin")
    assert events.select("kind", "host", "pid").rows() == [("xid", "gpu-node-1", 1), ("log", "gpu-node-1", 1), ("log", "gpu-node-1", 1)]
    assert events["ts"].to_list() == [datetime(2024, 1, 4, 12, 0, 1, tzinfo=UTC), datetime(2024, 1, 4, 12, 0, 2, tzinfo=UTC),
                                      datetime(2024, 1, 4, 12, 0, 3, tzinfo=UTC)]
    assert events["ts_raw"][0] == "Thu 2024-01-04 12:00:01 UTC" and set(events["ts_quality"]) == {"exact"}


CONTAINERD_TASK_EVENTS = """\
Nov 27 18:29:58 node-a containerd[753]: time="2026-11-27T18:29:58.992738166Z" level=info msg="TaskOOM event &TaskOOM{ContainerID:93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76,XXX_unrecognized:[],}"
Nov 27 18:29:58 node-a containerd[753]: time="2026-11-27T18:29:58.993Z" level=info msg="TaskOOM event container_id:\\"93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76\\""
Nov 27 18:29:59 node-a containerd[753]: time="2026-11-27T18:29:59.1Z" level=info msg="TaskExit event &TaskExit{ContainerID:93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76,ID:93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76,Pid:4242,ExitStatus:137,ExitedAt:2026-11-27 18:29:59.1 +0000 UTC,XXX_unrecognized:[],}"
Nov 27 18:29:59 node-a containerd[753]: time="2026-11-27T18:29:59.2Z" level=info msg="TaskExit event in podsandbox handler container_id:\\"93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76\\" id:\\"93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76\\" pid:4250 exit_status:1 exited_at:{seconds:1764268199 nanos:200000000}"
Nov 27 18:29:59 node-a containerd[753]: time="2026-11-27T18:29:59.3Z" level=error msg="failed to reload cni configuration"
"""


def test_containerd_task_events_are_the_runtime_view_of_a_container() -> None:
    events = rca.parse_text(CONTAINERD_TASK_EVENTS, file="syslog", reference_time=FIXED_MTIME)
    container = "93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76"
    assert events.select("kind", "severity", "pid", "process", "container_id", "exit_code").rows() == [
        ("oom_kill", "error", None, None, container, None),
        ("oom_kill", "error", None, None, container, None),
        ("process_killed", "error", 4242, None, container, 137),
        ("log", "info", 4250, None, container, 1),
        ("log", "error", 753, "containerd", None, None),
    ]
