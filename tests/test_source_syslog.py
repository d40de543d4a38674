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
from tests.conftest import DATA, FIXED_MTIME, fixture_path

FOLDER = DATA / "syslog"
KI = 1024


def _text(name: str) -> str:
    return (FOLDER / name).read_text()


def _events(name: str) -> pl.DataFrame:
    return rca.parse_text(_text(name), file=name, reference_time=FIXED_MTIME)


def _lines_parsed(lines: list[str], file: str) -> pl.DataFrame:
    return rca.parse_text("\n".join(lines) + "\n", file=file, reference_time=FIXED_MTIME)


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
    # containerd's TaskExit from the sandbox's handler is about the pod's process, and not a kill of its own
    assert events["kind"].to_list() == ["log", "oom_invoked", "log", "oom_kill", "log", "log"]
    assert events["process"].to_list()[-2:] == [None, "sshd"]
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


@settings(max_examples=30, deadline=None)
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
        ("log", "error", "train.service", None, 139),  # a segfault is not a kill; 128 + 11, as a runtime reports it
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


_TASK_CONTAINER = "93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76"
# kind, severity, pid, process, container_id and exit_code of CONTAINERD_TASK_EVENTS' task lines, envelope or not.
_TASK_EVENT_ROWS = [
    ("oom_kill", "error", None, None, _TASK_CONTAINER, None),
    ("oom_kill", "error", None, None, _TASK_CONTAINER, None),
    ("process_killed", "error", 4242, None, _TASK_CONTAINER, 137),
    ("log", "info", 4250, None, _TASK_CONTAINER, 1),
]


def test_containerd_task_events_are_the_runtime_view_of_a_container() -> None:
    events = rca.parse_text(CONTAINERD_TASK_EVENTS, file="syslog", reference_time=FIXED_MTIME)
    assert events.select("kind", "severity", "pid", "process", "container_id", "exit_code").rows() == [
        *_TASK_EVENT_ROWS, ("log", "error", 753, "containerd", None, None),
    ]


def test_a_host_named_in_capitals_is_a_host_where_the_program_gives_its_pid() -> None:
    # systemd/systemd pull #22032: a test VM named "H"; earlyoom issue #179: a desktop named "PC".
    events = _events("journal_systemd_oomd_user_manager_host_caps_01.log")
    assert set(events["source"]) == {"syslog"} and set(events["host"]) == {"H"}
    assert (events["ts"][0].month, events["ts"][0].day, events["ts"][0].hour, events["ts"][0].minute) == (1, 9, 14, 32)
    signalled = events.filter(pl.col("kind") == "process_killed", pl.col("exit_code").is_null())
    # systemd-oomd names each pid it signalled; the name is not systemd-oomd's, nor its pid 70.
    assert signalled.select("pid", "process").rows() == [(113, None), (118, None), (108, None)]
    units = events.filter(pl.col("exit_code") == 137)
    assert units.select("process", "pid").rows() == [("testsuite-55-testbloat.service", None), ("testsuite-55-testchill.service", None)]


def test_a_capital_word_after_a_date_without_a_pid_is_still_not_a_host() -> None:
    text = "Jan  9 14:32:25 ERROR trainer: step 10 failed\nJan  9 14:32:26 ERROR trainer: step 11 failed\n"
    assert sources.sniff(text.splitlines())[0].name != "syslog"
    framed = _syslog.frame_text(lines_frame(text), ParseContext(file="m", year=2024))
    assert framed["host"].to_list() == [None, None]


def test_control_process_exit_status_is_the_unit_exit_code() -> None:
    # NVIDIA/gpu-operator issue #610: fabric manager failing to start, a zh_CN journal ("11月 15").
    events = _events("journal_fabricmanager_control_process_zh_01.log")
    failed = events.row(2, named=True)
    assert (failed["kind"], failed["severity"], failed["process"], failed["pid"], failed["exit_code"]) == (
        "log", "error", "nvidia-fabricmanager.service", None, 1,
    )
    assert json.loads(failed["attrs"]) == {"unit": "nvidia-fabricmanager.service", "unit_process": "control"}
    assert events["ts"][2].month == 11 and events["ts"][2].day == 15 and events["host"][2] == "leon-NF5468M6"
    assert events.row(1, named=True)["pid"] == 4177  # nv-fabricmanager's own line keeps its pid


def test_containerd_2_task_exit_without_a_status_exited_zero() -> None:
    # containerd/containerd issue #11836 (containerd 2.1): protobuf text leaves out exit_status 0.
    events = _events("journal_containerd2_podsandbox_taskexit_01.log")
    assert events.select("kind", "pid", "process", "exit_code").rows() == [("log", 131544, None, 0), ("log", 131566, None, 0)]
    assert events["container_id"][0] == "a63d55fffc860bf75715774c3b302a970fc4df138d6ef041df53d040c4b52f04"
    # The envelope's time stands: 09:51:40 written by a host at +08:00 with no zone in the short stamp.
    assert events["host"].to_list() == ["k8s-192-168-0-19"] * 2


def test_containerd_1_7_task_exit_137_takes_the_container_process_not_containerd() -> None:
    # containerd/containerd issue #9309.
    events = _events("journal_containerd_taskexit_137_01.log")
    assert events.select("kind", "severity", "pid", "process", "exit_code").rows() == [
        ("log", "error", 31892, "containerd", None),
        ("process_killed", "error", 12930, None, 137),
        ("log", "error", 31892, "containerd", None),  # a failure to handle the event is containerd's own
    ]


def test_dockerd_logrus_level_is_the_severity() -> None:
    # containerd/containerd issue #5708: dockerd on an EKS node, under journalctl's "-- Logs begin" banner.
    events = _events("journal_dockerd_eks_ignoring_event_01.log")
    assert events.select("kind", "severity", "process", "pid").rows()[1:] == [
        ("log", "info", "dockerd", 4325), ("log", "info", "dockerd", 4325), ("log", "info", "dockerd", 4325), ("log", "error", "dockerd", 4325),
    ]
    assert events["ts"][4] == datetime(2021, 7, 7, 3, 40, 44, tzinfo=UTC)


def test_earlyoom_kills_are_oom_kills_of_the_process_it_signalled() -> None:
    # rfjakob/earlyoom issue #309 (earlyoom 1.7).
    events = _events("journal_earlyoom_sigterm_01.log")
    assert events["kind"].to_list() == ["log", "memory_pressure", "oom_kill", "log"] * 2
    kills = events.filter(pl.col("kind") == "oom_kill")
    assert kills.select("pid", "process", "rss_bytes", "severity").rows() == [
        (29410, "cluster", 23964 * KI**2, "error"), (11567, "electron", 17 * KI**2, "error"),
    ]
    assert json.loads(kills["attrs"][0]) == {"oom": "earlyoom", "signal": "SIGTERM", "uid": 1000, "badness": 1264}
    assert events.filter(pl.col("kind") == "log")["pid"].unique().to_list() == [1233]  # earlyoom's own
    low = json.loads(events["attrs"][1])
    assert (low["mem_limit_pct"], low["swap_limit_pct"], events["severity"][1]) == (10.0, 10.0, "warning")


def test_earlyoom_other_releases() -> None:
    text = (
        'May  5 10:00:00 box earlyoom[811]: sending SIGKILL to process 997 uid 1000 "python3": oom_score 1146, oom_score_adj 0, '
        'VmRSS 23007 MiB, cmdline "python3 train.py"\n'
        'May  5 10:00:01 box earlyoom[811]: killing process 27541 "bash" with signal 15: badness 550, VmRSS 7609 MiB\n'
    )
    text += "Feb 19 11:29:08 erik3 earlyoom[15368]: Killing process 'tail' with signal 15, pid: 24059, badness: 997, VmRSS: 4278 MiB\n"
    # Its settings at startup are no kill.
    text += "Apr 04 21:53:13 PC earlyoom[1579]: sending SIGTERM when mem <=  4.00% and swap <= 10.00%,\n"
    events = rca.parse_text(text, file="syslog", year=2026)
    assert events.select("kind", "pid", "process", "rss_bytes").rows() == [
        ("oom_kill", 997, "python3", 23007 * KI**2), ("oom_kill", 27541, "bash", 7609 * KI**2), ("oom_kill", 24059, "tail", 4278 * KI**2),
        ("log", 1579, "earlyoom", None),
    ]
    assert [json.loads(a)["signal"] for a in events["attrs"][:3]] == ["SIGKILL", "SIGTERM", "SIGTERM"]
    assert json.loads(events["attrs"][0])["oom_score"] == 1146


def test_kernel_oom_among_systemd_lines_keeps_each_program() -> None:
    # docker/for-linux issue #1001: systemd's view and the kernel's of the same OOM.
    events = _events("journal_systemd_killed_kernel_oom_01.log")
    assert events.select("source", "kind", "pid", "process", "exit_code").rows()[:3] == [
        ("syslog", "process_killed", None, "networkd-dispatcher.service", 137),
        ("syslog", "log", None, "networkd-dispatcher.service", None),
        ("kernel", "oom_kill", 401, "systemd-journal", None),
    ]


def test_systemd_kills_left_at_a_stop_timeout_name_each_process() -> None:
    # A user manager's journal in short-iso (+01:00), public-code index id 68908333514.
    events = _events("journal_short_iso_user_unit_stop_timeout_sigkill_01.log")
    killed = events.filter(pl.col("kind") == "process_killed")
    assert killed.select("pid", "process", "exit_code").rows() == [
        (3655692, "uv", None), (3655756, "python3", None), (1289425, "git", None), (None, "fused-memory.service", 137),
    ]
    assert killed["ts"][0] == datetime(2026, 9, 16, 11, 8, 22, tzinfo=UTC)
    assert json.loads(killed["attrs"][0]) == {"unit": "fused-memory.service", "signal": "SIGKILL"}
    consumed = events.row(9, named=True)
    assert (consumed["kind"], consumed["pid"], json.loads(consumed["attrs"])["memory_peak_bytes"]) == ("log", None, round(3.2 * KI**3))
    assert events.row(10, named=True)["pid"] == 2626  # the user manager's own line keeps its pid


def test_unit_exit_status_without_a_signal_name_and_its_memory_peak() -> None:
    # A notes file quoting `journalctl -u uvtest2.service` (systemd 256), public-code index id 29954213042.
    events = _events("journal_unit_exit_143_na_memory_peak_01.log")
    exited = events.row(6, named=True)
    assert (exited["kind"], exited["severity"], exited["pid"], exited["exit_code"]) == ("log", "error", None, 143)
    assert json.loads(events["attrs"][9]) == {"unit": "uvtest2.service", "memory_peak_bytes": round(38.4 * KI**2)}


def test_failed_to_start_a_gpu_daemon_is_an_error() -> None:
    # ollama/ollama issue #11932: rsyslog's RFC 3339 stamps (-04:00) on a Pop!_OS box whose driver would not load.
    events = _events("journal_rsyslog_iso_persistenced_failed_01.log")
    assert events.select("severity", "process", "exit_code").rows()[:3] == [
        ("error", "nvidia-persistenced.service", 1), ("error", "nvidia-persistenced.service", None), ("error", "systemd", None),
    ]
    assert events["ts"][0] == datetime(2025, 8, 16, 4, 3, 3, 937586, tzinfo=UTC)
    assert events.select("source", "process", "pid").rows()[3:6] == [("kernel", None, None), ("kernel", None, None), ("syslog", "(udev-worker)", 106246)]


def test_journald_tells_of_the_messages_it_lost() -> None:
    # systemd/systemd issues #7506 (v235, rate limit) and #11104 (kmsg overrun at boot).
    text = (
        "Nov 29 20:10:51 pluto systemd-journald[26393]: Suppressed 4499764 messages from run-r73aef5eb7df847df961a1031c2e5d1e2.service\n"
        "Dec 09 03:24:51 ubuntu systemd-journald[363]: Missed 81 kernel messages\n"
        "Dec 09 03:24:52 ubuntu systemd-journald[363]: Journal started\n"
    )
    events = rca.parse_text(text, file="syslog", year=2018)
    assert events.select("kind", "severity", "process", "pid").rows() == [
        ("log", "warning", "systemd-journald", 26393), ("log", "warning", "systemd-journald", 363), ("log", None, "systemd-journald", 363),
    ]
    assert [json.loads(a) if a else None for a in events["attrs"]] == [
        {"messages_lost": 4499764, "lost_from": "run-r73aef5eb7df847df961a1031c2e5d1e2.service"},
        {"messages_lost": 81, "lost_from": "kernel"},
        None,
    ]


def test_containerd_json_log_format_takes_the_same_rules() -> None:
    container = "93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76"
    task_oom = f'TaskOOM event container_id:\\"{container}\\"'
    stamp = "Nov 27 18:29:58 node-a containerd[753]: "
    as_json = (f'{stamp}{{"level":"info","msg":"{task_oom}","time":"2026-11-27T18:29:58.993Z"}}\n'
               f'{stamp}{{"level":"error","msg":"failed to reload cni configuration","time":"2026-11-27T18:29:59.3Z"}}\n')
    as_logfmt = (f'{stamp}time="2026-11-27T18:29:58.993Z" level=info msg="{task_oom}"\n'
                 f'{stamp}time="2026-11-27T18:29:59.3Z" level=error msg="failed to reload cni configuration"\n')
    json_facts, logfmt_facts = (
        rca.parse_text(text, file="syslog", year=2026).select("kind", "severity", "pid", "container_id").rows() for text in (as_json, as_logfmt)
    )
    assert json_facts == logfmt_facts == [("oom_kill", "error", None, container), ("log", "error", 753, None)]

def test_a_pod_sandbox_stopped_with_sigkill_is_not_a_kill() -> None:
    """A pod's teardown SIGKILLs its pause process; containerd reports that exit from the sandbox's handler."""
    cid = "93f3c8f1030de7193833d2f79dacdd4884e21b5c0990f74450b8b1f8796f1d76"
    exit_event = 'pid:4242 exit_status:137 exited_at:{seconds:1764268199 nanos:100000000}'
    text = (
        f'Nov 27 18:29:59 node-a containerd[753]: time="2026-11-27T18:29:59.1Z" level=info msg="TaskExit event in podsandbox handler '
        f'container_id:\\"{cid}\\" id:\\"{cid}\\" {exit_event}"\n'
        f'Nov 27 18:29:59 node-a containerd[753]: time="2026-11-27T18:29:59.2Z" level=info msg="TaskExit event '
        f'container_id:\\"{cid}\\" id:\\"{cid}\\" {exit_event}"\n'
    )
    events = rca.parse_text(text, file="syslog", year=2026)
    assert events.select("kind", "exit_code", "container_id").rows() == [("log", 137, cid), ("process_killed", 137, cid)]
    assert json.loads(events["attrs"][0]) == {"runtime": "containerd", "sandbox": True}


def test_an_empty_host_between_two_spaces_is_no_host() -> None:
    # radiasoft/devops issue #134: rsyslog wrote a kernel line with an empty host name.
    text = (
        "Feb 23 03:28:16 srv1 kernel: EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x0 offset:0x0 grain:32)\n"
        "Feb 23 03:28:16  kernel: EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x0 offset:0x0 grain:32)\n"
    )
    events = rca.parse_text(text, file="messages", year=2021)
    assert events.select("line", "source", "host").rows() == [(1, "kernel", "srv1"), (2, "kernel", None)]
    assert events["message"][1].startswith("EDAC MC0: 1 CE memory read error") and events["ts"][1] == events["ts"][0]


def test_journalctl_no_hostname_lines_keep_program_and_pid() -> None:
    # `journalctl --no-hostname`: the program follows the time ("systemd[1]:" is not a host).
    events = rca.parse_text(
        "Dec 04 10:00:00 systemd[1]: Started nvidia-persistenced.service - NVIDIA Persistence Daemon.\n"
        "Dec 04 10:00:01 kernel: Memory cgroup out of memory: Killed process 4242 (python3) total-vm:100000kB, anon-rss:90000kB, "
        "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0\n"
        "Dec 04 10:00:01 systemd[1]: train.service: A process of this unit has been killed by the OOM killer.\n"
        "Dec 04 10:00:01 systemd[1]: train.service: Main process exited, code=killed, status=9/KILL\n"
        "Dec 04 10:00:02 ERROR: not a program\n",
        year=2026,
    )
    assert events.select("source", "kind", "host", "process", "pid", "exit_code").rows()[:4] == [
        ("syslog", "log", None, "systemd", 1, None),
        ("kernel", "oom_kill", None, "python3", 4242, None),
        ("syslog", "oom_kill", None, "train.service", None, None),
        ("syslog", "process_killed", None, "train.service", None, 137),
    ]
    assert events["ts"][2] == datetime(2026, 12, 4, 10, 0, 1, tzinfo=UTC)
    # A log level after the time is no program: the line is the one above's continuation.
    assert events.height == 4
    assert events.row(3, named=True)["message"].splitlines() == ["train.service: Main process exited, code=killed, status=9/KILL", "Dec 04 10:00:02 ERROR: not a program"]


def test_journalctl_continuation_lines_stay_with_their_message() -> None:
    # journalctl indents the further lines of a multi-line message to the column its message starts at.
    text = (
        "Dec 04 10:00:00 gpu-node-1 systemd[1]: Started train.service - Trainer.\n"
        "Dec 04 10:00:05 gpu-node-1 python3[4242]: Traceback (most recent call last):\n"
        "                                            File \"/opt/train.py\", line 10, in <module>\n"
        "                                              main()\n"
        "                                          torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        "GPU 0 has a total capacity of 79.19 GiB of which 1.00 GiB is free.\n"
        "Dec 04 10:00:06 gpu-node-1 systemd[1]: train.service: Main process exited, code=exited, status=1/FAILURE\n"
    )
    assert sources.sniff(text.splitlines())[0].name == "syslog"
    events = rca.parse_text(text, year=2026)
    assert events.select("line", "source", "kind", "n_lines").rows() == [(1, "syslog", "log", 1), (2, "pipeline", "cuda_oom", 4), (6, "syslog", "log", 1)]
    oom = events.row(1, named=True)
    assert (oom["host"], oom["pid"], oom["process"], oom["gpu_index"], oom["mem_requested_bytes"]) == ("gpu-node-1", 4242, "python3", 0, 2 * KI**3)
    assert oom["message"].splitlines()[1:3] == ['  File "/opt/train.py", line 10, in <module>', "    main()"]


def test_a_host_of_capitals_without_a_pid_is_a_host_for_programs_with_rules() -> None:
    # rfjakob/earlyoom issue #121: a desktop named "PC", kernel lines without a pid, Russian months.
    name = "journal_capitals_host_kernel_oom_ru_01.log"
    assert sources.sniff(_text(name).splitlines())[0].name == "syslog"
    kill = _events(name).row(1, named=True)
    assert (kill["source"], kill["kind"], kill["host"], kill["pid"], kill["process"]) == ("kernel", "oom_kill", "PC", 27541, "bash")
    assert (kill["ts"].month, kill["ts"].day) == (4, 28)


def test_an_rsyslog_tag_without_a_colon_after_its_pid() -> None:
    # fledge-iot/fledge pull #1039: "Fledge[16823] ERROR: …".
    events = _events("journal_rsyslog_tag_without_colon_01.log")
    assert set(events.select("host", "process", "pid").rows()) == {("aj-ThinkPad-E450", "Fledge", 16823)}
    assert events["message"][0].startswith("ERROR: audit: ")


def test_leading_blanks_of_a_message_with_its_own_envelope_are_kept() -> None:
    # linyinfeng/angrr issue #40: one journal entry per line of a debug dump.
    events = _events("journal_unit_messages_leading_blanks_01.log")
    assert events["message"].to_list()[1:] == ["    command: Run(", "        RunOptions {", "            interactive: Never,"]
    assert events["pid"].to_list()[1:] == [1912906] * 3


def test_older_systemd_writes_main_process_in_lower_case() -> None:
    # systemd 219 (RHEL 7): "main process exited", no pid after "systemd".
    events = rca.parse_text("Dec 03 11:05:40 gpu01 systemd: hatohol.service: main process exited, code=killed, status=9/KILL\n", year=2026)
    assert events.select("kind", "process", "exit_code", "severity").row(0) == ("process_killed", "hatohol.service", 137, "error")


def test_earlyoom_signalling_its_victim_again_is_one_kill() -> None:
    # rfjakob/earlyoom issue #205: the victim outlived the SIGTERM ("kill failed: Timer expired") and got another.
    events = rca.parse_text(
        "Jun 12 06:39:16 pi earlyoom[397]: low memory! at or below SIGTERM limits: mem 10.00%, swap 15.00%\n"
        'Jun 12 06:39:16 pi earlyoom[397]: sending SIGTERM to process 696 uid 1001 "ipfs": badness 757, VmRSS 637 MiB\n'
        "Jun 12 06:39:26 pi earlyoom[397]: kill failed: Timer expired\n"
        "Jun 12 06:39:26 pi earlyoom[397]: low memory! at or below SIGTERM limits: mem 10.00%, swap 15.00%\n"
        'Jun 12 06:39:26 pi earlyoom[397]: sending SIGTERM to process 696 uid 1001 "ipfs": badness 799, VmRSS 656 MiB\n'
        'Jun 12 06:40:02 pi earlyoom[397]: sending SIGTERM to process 712 uid 1001 "ipfs": badness 801, VmRSS 660 MiB\n',
        year=2026,
    )
    assert events.select("kind", "pid").rows() == [
        ("memory_pressure", 397), ("oom_kill", 696), ("log", 397), ("memory_pressure", 397), ("log", 696), ("oom_kill", 712),
    ]
    assert json.loads(events["attrs"][4])["resent"] is True


def test_dockerd_libcontainerd_events_and_containerd_repeats() -> None:
    # containerd/containerd issue #7111 (dockerd's /tasks/exit event); the 137 and OOM lines take its fields as logrus sorts them.
    cid = "2e371a15a3e19c007fff0320579f890c136057f13d1079615c13c83b6070f9aa"
    exec_id = "9544e28db28ff21d4dd3b2b4810929da2ed685296bc1d96a1d26a295119258ce"
    head = '2022-06-09T08:20:23.536728+08:00 bj2-ops-k8s-job-01 dockerd: time="2022-06-09T08:20:23.482480525+08:00" level=info msg=event '
    exited = 'ExitStatus={} ExitedAt="2022-06-09 00:20:23.452637293 +0000 UTC" Pid=4138572 ProcessID={} containerID={} module=libcontainerd namespace=moby topic=/tasks/exit\n'
    events = rca.parse_text(
        head + exited.format(0, cid, cid) + head + exited.format(137, cid, cid) + head + exited.format(137, exec_id, cid)
        + head + f"containerID={cid} module=libcontainerd namespace=moby topic=/tasks/oom\n"
        # containerd's own repeat of a TaskExit (1.3 and 1.7 wordings): the process and its status, not a second kill.
        + f'2022-06-09T08:20:24+08:00 bj2-ops-k8s-job-01 containerd[953]: time="2022-06-09T08:20:24Z" level=debug msg="Received exit event '
        f'&TaskExit{{ContainerID:{cid},ID:{cid},Pid:4138572,ExitStatus:137,}}"\n'
        f'2022-06-09T08:20:24+08:00 bj2-ops-k8s-job-01 containerd[953]: time="2022-06-09T08:20:24Z" level=info msg="received exit event '
        f'container_id:\\"{cid}\\"  id:\\"{cid}\\"  pid:4138572  exit_status:137  exited_at:{{seconds:1724407529  nanos:889854119}}"\n',
    )
    assert events.select("kind", "pid", "exit_code", "container_id").rows() == [
        ("log", 4138572, 0, cid), ("process_killed", 4138572, 137, cid), ("log", 4138572, 137, cid), ("oom_kill", None, None, cid),
        ("log", 4138572, 137, cid), ("log", 4138572, 137, cid),
    ]


def test_fabric_manager_nvswitch_errors_and_failures() -> None:
    # Fabric Manager's own header and messages as leptonai/gpud's matchers quote them, in a journal envelope.
    events = rca.parse_text(
        "Jul 23 07:53:55 dgx-07 nv-fabricmanager[1929]: [Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 "
        "on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33\n"
        "Jul 23 07:53:56 dgx-07 nv-fabricmanager[1929]: [Jul 23 2024 07:53:56] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 "
        "on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61\n"
        "Jul 23 07:53:57 dgx-07 nv-fabricmanager[1929]: detected number of NVSwitches don't match with any supported system topology, aborting fabric manager\n"
        "Jul 23 07:53:58 dgx-07 nv-fabricmanager[1929]: [Jul 23 2024 07:53:58] [INFO] [tid 1808] multicast group 1 is allocated.\n",
        year=2024,
    )
    assert events.select("kind", "severity", "pid", "process", "pci_bus", "xid").rows() == [
        ("log", "critical", 1929, "nv-fabricmanager", "00000000:86:00.0", None),
        ("log", "warning", 1929, "nv-fabricmanager", "00000000:86:00.0", None),
        ("log", "error", 1929, "nv-fabricmanager", None, None),
        ("log", "info", 1929, "nv-fabricmanager", None, None),
    ]
    assert json.loads(events["attrs"][0]) == {"sxid": 20034, "nvswitch_physical_id": 3, "nvswitch_port": 33}
    assert json.loads(events["attrs"][2]) == {"fabric_manager": "failed"}
    start = _events("journal_fabricmanager_start_nothing_to_do_01.log")
    assert start.select("severity", "pid", "exit_code").rows()[1:3] == [("error", 4756, None), ("error", 4753, 1)]


def test_journalctl_short_unix_lines() -> None:
    # `journalctl -o short-unix`: epoch seconds with microseconds where the time is.
    events = rca.parse_text(
        "1701684000.123456 gpu-node-1 systemd[1]: train.service: Main process exited, code=killed, status=9/KILL\n"
        "1701684000.223456 gpu-node-1 kernel: Memory cgroup out of memory: Killed process 4242 (python3) total-vm:100000kB, "
        "anon-rss:90000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0\n"
    )
    assert events.select("source", "kind", "host", "pid", "exit_code", "ts_raw", "ts_quality").rows() == [
        ("syslog", "process_killed", "gpu-node-1", None, 137, "1701684000.123456", "exact"),
        ("kernel", "oom_kill", "gpu-node-1", 4242, None, "1701684000.223456", "exact"),
    ]
    assert events["ts"][1] == datetime(2023, 12, 4, 10, 0, 0, 223456, tzinfo=UTC)


def test_a_slice_counting_an_oom_kill_repeats_the_kill_of_a_unit_below_it() -> None:
    # bennettoxford/openprescribing issue #5431: one kill, reported by the service and by each slice above it.
    events = _events("journal_rsyslog_iso_oom_counted_in_slices_01.log")
    assert events.select("kind", "severity", "process").rows() == [
        ("log", "warning", "user-1021.slice"), ("log", "warning", "system-postgresql.slice"), ("oom_kill", "error", "user@1021.service"),
        ("log", "warning", "user.slice"), ("log", "warning", "system.slice"),
    ]
    assert json.loads(events["attrs"][3]) == {"unit": "user.slice", "oom": "counted_below"}
    # A pod's slice names the pod.
    pod = rca.parse_text(
        "Jul 23 18:56:46 node systemd[1]: kubepods-burstable-pod17efb6ec_09ab_4eec_8ad6_f953eb1a7466.slice: "
        "A process of this unit has been killed by the OOM killer.\n",
        year=2023,
    )
    assert pod.select("kind", "pod_uid").row(0) == ("log", "17efb6ec-09ab-4eec-8ad6-f953eb1a7466")


def test_containerd_received_exit_event_at_debug_level() -> None:
    # kubernetes/kubernetes pull #119670: containerd 1.7's debug line after a memory.oom.group kill.
    exit_event = _events("journal_containerd_received_exit_event_oom_group_01.log").row(1, named=True)
    assert (exit_event["kind"], exit_event["pid"], exit_event["exit_code"], exit_event["severity"], exit_event["process"]) == (
        "log", 38265, 137, "debug", None,
    )
    assert exit_event["container_id"] == "98bac6c4b73cfd4c647647aa80248208b67de059874d4ddfdd1aa43ea3967e54"


def test_slurm_step_daemon_lines_go_to_the_job_rules() -> None:
    # The step daemon's messages as nextflow issue #5932 (Slurm 21.08+) and lanl/PyBNF issue #118 (older) quote them.
    events = rca.parse_text(
        "Dec 04 10:00:00 gpu-node-1 slurmd[2665]: launch task StepId=11300781.0 request from UID:1000 GID:1000 HOST:10.0.0.1 PORT:55555\n"
        "Dec 04 10:05:00 gpu-node-1 slurmstepd[2747]: error: Detected 1 oom_kill event in StepId=11300781.0. "
        "Some of the step tasks have been OOM Killed.\n"
        "Dec 04 10:05:01 gpu-node-1 slurmstepd[2750]: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup.\n",
        year=2026,
    )
    assert events.select("source", "kind", "pid", "process", "host").rows() == [
        ("syslog", "log", 2665, "slurmd", "gpu-node-1"),
        ("pipeline", "oom_kill", 2747, "slurmstepd", "gpu-node-1"),
        ("pipeline", "oom_kill", 2750, "slurmstepd", "gpu-node-1"),
    ]
    assert [json.loads(a)["slurm_step"] for a in events["attrs"][1:]] == ["11300781.0", "3756240.batch"]
    assert events["ts"][1] == datetime(2026, 12, 4, 10, 5, tzinfo=UTC)


def test_a_multi_line_journal_message_is_one_event() -> None:
    # bryonbaker/sigsegv-demo: systemd-coredump's stack trace under its first line, and conmon's exit line after it.
    events = _events("journal_coredump_conmon_exit_139_ocp_01.log")
    dump = events.filter(pl.col("process") == "systemd-coredump").row(0, named=True)
    assert (dump["line"], dump["n_lines"], dump["pid"]) == (4, 7, 259187)  # the blank line of the message is not counted
    assert dump["message"].splitlines()[:3] == [
        "Process 258213 (sigsegv) of user 1000660000 dumped core.", "Stack trace of thread 1:",
        "#0  0x00007ff52d488c91 __memmove_avx_unaligned_erms (libc.so.6)",
    ]
    exited = events.filter(pl.col("line") == 12).row(0, named=True)
    assert (exited["kind"], exited["pid"], exited["exit_code"], exited["severity"], exited["process"]) == ("log", 258213, 139, "error", None)
    assert json.loads(exited["attrs"]) == {"runtime": "conmon", "container_id_prefix": "f1ee30489db2a0242ef1"}
    assert events["line"].to_list() == [1, 3, 4, 12, 13, 14]


def test_conmon_exit_137_is_a_kill_and_crio_keeps_its_level() -> None:
    events = rca.parse_text(
        "May 11 09:32:33 node-0 conmon[258200]: conmon f1ee30489db2a0242ef1 <ninfo>: container 258213 exited with status 137\n",
        year=2023,
    )
    assert events.select("kind", "pid", "exit_code", "severity").row(0) == ("process_killed", 258213, 137, "error")
    stop = _events("journal_crio_stop_timeout_kill_01.log")
    assert set(stop.select("kind", "severity", "container_id").rows()) == {
        ("log", "warning", "cfad21ee605f5acec412c1b0d1f4f1141af640fbf0037b0dbe917e29f351cb1d"),
    }


def test_journalctl_short_iso_without_host_names() -> None:
    # `journalctl -o short-iso --no-hostname`: a program with its pid, or one with rules, right after the time.
    text = (
        "2024-12-04T10:00:00+0000 systemd[1]: train.service: Main process exited, code=killed, status=9/KILL\n"
        "2024-12-04T10:00:00+0000 kernel: Memory cgroup out of memory: Killed process 4242 (python3) total-vm:100000kB, "
        "anon-rss:90000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0\n"
    )
    assert sources.sniff(text.splitlines())[0].name == "syslog"
    assert rca.parse_text(text).select("source", "kind", "host", "pid", "exit_code").rows() == [
        ("syslog", "process_killed", None, None, 137), ("kernel", "oom_kill", None, 4242, None),
    ]
    # python logging's "time name: message" is no envelope.
    logging_lines = "2024-12-04 10:00:00,123 root: starting\n2024-12-04 10:00:02,123 trainer: loss 1.0\n"
    assert sources.sniff(logging_lines.splitlines())[0].name == "pipeline"
    assert rca.parse_text(logging_lines)["source"].to_list() == ["pipeline", "pipeline"]


_VERBOSE = """\
Thu 2024-12-05 10:00:01.000001 UTC [s=abc;i=1]
    _TRANSPORT=kernel
    PRIORITY=3
    SYSLOG_IDENTIFIER=kernel
    _HOSTNAME=gpu-node-7
    MESSAGE=Out of memory: Killed process 4242 (python3) total-vm:123456kB, anon-rss:65536kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:512kB oom_score_adj:0
Thu 2024-12-05 10:00:02.000002 UTC [s=abc;i=2]
    PRIORITY=4
    SYSLOG_IDENTIFIER=systemd
    _PID=1
    _HOSTNAME=gpu-node-7
    _SYSTEMD_UNIT=init.scope
    UNIT=train.service
    MESSAGE=train.service: A process of this unit has been killed by the OOM killer.
Thu 2024-12-05 10:00:03.000003 UTC [s=abc;i=3]
    PRIORITY=3
    SYSLOG_IDENTIFIER=python3
    _PID=4300
    _HOSTNAME=gpu-node-7
    _SYSTEMD_UNIT=train.service
    _SYSTEMD_CGROUP=/system.slice/train.service
    MESSAGE=Traceback (most recent call last):
              File "train.py", line 1, in <module>
            torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free.
"""


def test_journalctl_verbose_records_are_one_event_each_by_their_fields() -> None:
    assert sources.sniff(_VERBOSE.splitlines())[0].name == "syslog"
    events = rca.parse_text(_VERBOSE, file="journal.txt")
    assert events.select("line", "n_lines", "source", "kind", "host", "pid", "process", "severity").rows() == [
        (1, 6, "kernel", "oom_kill", "gpu-node-7", 4242, "python3", "error"),
        (7, 8, "syslog", "oom_kill", "gpu-node-7", None, "train.service", "error"),
        (15, 10, "pipeline", "cuda_oom", "gpu-node-7", 4300, "python3", "error"),
    ]
    assert events["ts"].to_list() == [datetime(2024, 12, 5, 10, 0, s, s, tzinfo=UTC) for s in (1, 2, 3)]
    # A value's further lines (the traceback) are the message's; the writer's cgroup is its own event's.
    assert events.row(2, named=True)["message"].splitlines()[-1].startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert events["cgroup"].to_list() == [None, None, "/system.slice/train.service"]


def test_journalctl_verbose_file_reconciles(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "journal.txt").write_text("-- Journal begins at Thu 2024-12-05 09:00:00 UTC. --\n" + _VERBOSE + "-- No more entries --\n")
    files = rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1).files
    assert files.select("lines", "events", "merged_lines", "skipped_lines").row(0) == (26, 5, 21, 0)


def test_journalctl_verbose_time_is_read_in_its_zone() -> None:
    assert _events("journal_verbose_rhel_edt_01.log")["ts"].to_list() == [datetime(2022, 3, 15, 9, 10, 32, 625470, tzinfo=UTC)]
    assert _events("journal_verbose_banner_minus05_sshd_01.log")["ts"][1] == datetime(2016, 9, 14, 3, 35, 49, 589544, tzinfo=UTC)
    catalan = _events("journal_verbose_catalan_cest_driver_01.log")
    assert catalan.select("ts", "pid", "process").row(1) == (datetime(2016, 9, 15, 17, 55, 7, 160306, tzinfo=UTC), None, "systemd-journald")
    paged = _events("journal_verbose_pager_plus07_01.log")
    assert paged.select("line", "n_lines").rows() == [(1, 1), (2, 1), (3, 1), (4, 29), (33, 1)]
    assert paged["ts"][3] == datetime(2019, 2, 21, 11, 31, 14, 509128, tzinfo=UTC)
    assert json.loads(paged["attrs"][3]) == {"unit": "dnf-makecache.service"}
    # A zone of no certain offset (CST) leaves the time the sender gave, in UTC.
    odd = "Thu 2024-12-05 18:00:01.000001 CST [s=abc]\n    _SOURCE_REALTIME_TIMESTAMP=1733392801000001\n    MESSAGE=hello\n"
    assert rca.parse_text(odd, format="syslog")["ts"].to_list() == [datetime(2024, 12, 5, 10, 0, 1, 1, tzinfo=UTC)]


def test_journalctl_banner_zone_applies_to_short_lines() -> None:
    events = _events("journal_earlyoom_banner_zone_ru_01.log")
    assert events["ts"][1] == datetime(2020, 4, 4, 12, 53, 13, tzinfo=UTC)
    banner = "-- Journal begins at Mon 2026-10-05 01:02:11 CEST, ends at Mon 2026-10-05 09:00:00 CEST. --\n"
    line = "Oct 05 08:00:00 node systemd[1]: Started x.service.\n"
    assert rca.parse_text(banner + line, year=2026)["ts"][1] == datetime(2026, 10, 5, 6, 0, tzinfo=UTC)
    assert rca.parse_text(line, year=2026)["ts"][0] == datetime(2026, 10, 5, 8, 0, tzinfo=UTC)


def test_journalctl_short_full_zone_offset() -> None:
    text = "Thu 2019-02-21 18:31:14 +07 host systemd[1]: Started dnf makecache.\nThu 2019-02-21 06:31:14 EST host systemd[1]: Started x.\n"
    assert rca.parse_text(text)["ts"].to_list() == [datetime(2019, 2, 21, 11, 31, 14, tzinfo=UTC), datetime(2019, 2, 21, 11, 31, 14, tzinfo=UTC)]


def test_persistenced_failures_are_errors_and_its_devices_name_their_bus() -> None:
    events = _events("journal_persistenced_numa_failed_gh200_01.log")
    assert events.filter(pl.col("process") == "nvidia-persistenced").select("line", "severity").rows() == [
        (1, None), (2, None), (3, "error"), (4, "error"), (5, "error"), (6, None), (8, None),
    ]
    devices = _events("journal_persistenced_no_pid_azure_01.log").filter(pl.col("pci_bus").is_not_null())
    assert devices.select("line", "pid", "pci_bus").rows() == [
        (7, None, "44857:00:00.0"), (8, None, "50479:00:00.0"), (9, None, "56370:00:00.0"), (10, None, "63091:00:00.0"),
    ]


def test_docker_syslog_driver_tag_names_the_container_and_repeats_are_counted() -> None:
    events = _events("journal_rsyslog_docker_tag_repeated_01.log")
    assert events.select("container_id", "pid", "host").rows() == [
        ("1c236792e21e", 9551, "localhost"), ("0098bc85e1cd", 9551, "osboxes"), ("021aa50ce718", 9551, "localhost"), ("e089853aae03", 9551, "localhost"),
    ]
    assert json.loads(events["attrs"][2]) == {"repeated": 2}
    assert events["attrs"].null_count() == 3


def test_systemd_oomd_failing_to_kill_is_an_error() -> None:
    events = _events("journal_systemd_oomd_user_manager_host_caps_01.log")
    assert events.filter(pl.col("line") == 9).select("kind", "severity", "process", "pid").row(0) == ("log", "error", "systemd-oomd", 70)


def test_journalctl_json_pretty_records_are_one_event_each() -> None:
    events = _events("journal_json_pretty_sudo_01.log")
    assert events.select("line", "n_lines", "host", "pid", "process", "severity", "format").rows() == [
        (1, 1, None, None, None, None, "syslog"),
        (2, 28, "fueltank-2.cloud.bbdops.com", 20747, "sudo", "info", "journal_json"),
    ]
    assert events["ts"][1] == datetime(2020, 3, 25, 5, 37, 52, 27448, tzinfo=UTC)
    assert events["message"][1] == "pam_unix(sudo:session): session opened for user root by admin(uid=0)"
    # Several records, a kernel one among them, a value with JSON escapes, one of bytes.
    text = (
        '{\n\t"__REALTIME_TIMESTAMP" : "1733392801000001",\n\t"_TRANSPORT" : "kernel",\n\t"_HOSTNAME" : "gpu-7",\n'
        '\t"MESSAGE" : "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:100000kB, anon-rss:90000kB, '
        'file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0"\n}\n'
        '{\n\t"__REALTIME_TIMESTAMP" : "1733392802000000",\n\t"SYSLOG_IDENTIFIER" : "train",\n\t"_PID" : "77",\n'
        '\t"MESSAGE" : "saved \\"ckpt\\" to /tmp\\tok"\n}\n'
        '{\n\t"__REALTIME_TIMESTAMP" : "1733392803000000",\n\t"SYSLOG_IDENTIFIER" : "train",\n\t"MESSAGE" : [ 27, 91, 48, 109 ]\n}\n'
    )
    assert sources.sniff(text.splitlines())[0].name == "syslog"
    parsed = rca.parse_text(text)
    assert parsed.select("line", "n_lines", "source", "kind", "pid", "host").rows() == [
        (1, 6, "kernel", "oom_kill", 4242, "gpu-7"), (7, 6, "syslog", "log", 77, None), (13, 5, "syslog", "log", None, None),
    ]
    # (A message of bytes that are escapes alone, no text, stays their list.)
    assert parsed["message"].to_list()[1:] == ['saved "ckpt" to /tmp\tok', "[27,91,48,109]"]


def test_journalctl_export_records_are_one_event_each_by_their_fields() -> None:
    events = _events("journal_export_cron_binary_selinux_field_01.log")
    assert events.select("line", "n_lines", "source", "kind", "host", "pid", "process", "severity", "format", "cgroup").rows() == [
        (1, 29, "syslog", "log", "nas", 350359, "CRON", "info", "journal_export", "/system.slice/cron.service"),
    ]
    assert events["ts"].to_list() == [datetime(2020, 6, 17, 10, 55, 1, 176116, tzinfo=UTC)]
    assert events["message"].to_list() == ["pam_unix(cron:session): session closed for user root"]
    # A message of several lines is a binary field: its name alone, its length in 8 bytes, its lines; a record without its cursor
    # opens with its time; a shell's line after the records is no record's.
    traceback = b'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\ntorch.OutOfMemoryError: CUDA out of memory.'
    data = (
        b"__CURSOR=s=aa;i=1\n__REALTIME_TIMESTAMP=1733392801000001\n_HOSTNAME=gpu-7\nSYSLOG_IDENTIFIER=python3\n_PID=4242\n"
        + b"PRIORITY=3\nMESSAGE\n"
        + len(traceback).to_bytes(8, "little") + traceback + b"\n_TRANSPORT=stdout\n\n"
        + b"__REALTIME_TIMESTAMP=1733392802000000\n_HOSTNAME=gpu-7\nSYSLOG_IDENTIFIER=systemd\n_PID=1\nUNIT=train.service\n"
        + b"MESSAGE=train.service: Main process exited, code=killed, status=9/KILL\n\nuser@gpu-7:~$ exit\n"
    )
    text = data.decode()
    assert sources.sniff([line for line in text.splitlines() if line.strip()])[0].name == "syslog"
    parsed = rca.parse_text(text)
    assert parsed.select("line", "n_lines", "source", "kind", "pid", "process", "exit_code", "format").rows() == [
        (1, 11, "pipeline", "cuda_oom", 4242, "python3", None, "journal_export"),
        (13, 6, "syslog", "process_killed", None, "train.service", 137, "journal_export"),
        (20, 1, "syslog", "log", None, None, None, "syslog"),
    ]
    assert parsed["message"][0].splitlines()[0] == "Traceback (most recent call last):"
    # Lines of NAME=value alone (an environment's dump) are no journal's.
    assert sources.sniff(["PATH=/usr/bin", "HOME=/root", "LANG=C"])[0].name != "syslog"


def test_journalctl_short_monotonic_lines_keep_program_pid_and_seconds_since_boot() -> None:
    text = (
        "[    5.487436] localhost mount[570]: mount: mount /dev/mapper/centos-root on /sysroot failed: Structure needs cleaning\n"
        "[    5.487681] localhost systemd[1]: sysroot.mount mount process exited, code=exited status=32\n"
        "[   44.913895] testsuite-55.sh[364]: + systemctl start --user testsuite-55-testchill.service\n"
        "[   53.055305] systemd[352]: a.service: Main process exited, code=killed, status=9/KILL\n"
        "[   53.100000] localhost kernel: Out of memory: Killed process 4242 (python3) total-vm:100000kB, anon-rss:90000kB, "
        "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0\n"
    )
    events = rca.parse_text(text, format="syslog")
    assert events.select("line", "host", "pid", "process", "kind", "exit_code", "ts_quality").rows() == [
        (1, "localhost", 570, "mount", "log", None, "boot_relative"),
        (2, "localhost", 1, "systemd", "log", None, "boot_relative"),
        (3, None, 364, "testsuite-55.sh", "log", None, "boot_relative"),
        (4, None, None, "a.service", "process_killed", 137, "boot_relative"),
        (5, "localhost", 4242, "python3", "oom_kill", None, "boot_relative"),
    ]
    assert events["boot_seconds"].to_list() == [5.487436, 5.487681, 44.913895, 53.055305, 53.1]
    booted = rca.parse_text(text, format="syslog", boot_time=datetime(2024, 12, 5, 10, 0, tzinfo=UTC))
    assert booted["ts"][0] == datetime(2024, 12, 5, 10, 0, 5, 487436, tzinfo=UTC)
    # A dmesg line has no program[pid] after its stamp: it stays unframed.
    dmesg = rca.parse_text("Oct 05 08:00:00 node systemd[1]: Started x.\n[    5.100000] usb 1-1: new high-speed USB device\n", format="syslog", year=2026)
    assert dmesg.select("line", "n_lines").rows() == [(1, 2)]


def test_journalctl_boot_separators_are_lines_of_their_own() -> None:
    text = (
        "Oct 05 08:00:00 node systemd[1]: Started x.\n-- Boot 0123456789abcdef0123456789abcdef --\n"
        "Oct 05 08:10:00 node systemd[1]: Started y.\n-- Reboot --\nOct 05 08:20:00 node systemd[1]: Started z.\n"
    )
    events = rca.parse_text(text, year=2026)
    assert events.select("line", "n_lines", "message").rows() == [
        (1, 1, "Started x."), (2, 1, "-- Boot 0123456789abcdef0123456789abcdef --"), (3, 1, "Started y."), (4, 1, "-- Reboot --"), (5, 1, "Started z."),
    ]
    assert events["ts"].null_count() == 2


def test_daemon_level_words_and_slurm_node_tags() -> None:
    events = _events("journal_slurmd_node_tag_stepd_01.log")
    assert events.select("line", "host", "process", "pid", "message").rows() == [
        (1, "localhost", "slurmstepd", 2747, "jobacct NONE plugin loaded"), (2, "localhost", "slurmd", 2747, "done with job"),
    ]
    text = (
        "2015-04-15T08:53:54+08:00 nod0138 slurmstepd[3122]: error: execve(): orted: No such file or directory\n"
        "2015-04-15T08:53:55+08:00 nod0138 sshd[77]: fatal: Access denied for user x by PAM account configuration\n"
        "2015-04-15T08:53:56+08:00 nod0138 sshd[78]: Accepted publickey for x\n"
    )
    assert rca.parse_text(text).select("process", "severity").rows() == [("slurmstepd", "error"), ("sshd", "critical"), ("sshd", None)]


def test_rsyslog_empty_host_frames_the_lines_of_every_program() -> None:
    # Notes on cgroups (public-code index id 13582992531): a /var/log/messages whose host rsyslog left empty
    # (two spaces after the time); cadvisor and stress-ng give no pid and have no rules, yet are envelopes.
    events = _events("journal_rsyslog_empty_host_cadvisor_memcg_kill_01.log")
    assert events["process"].to_list() == ["stress-ng-vm", "stress-ng-vm", "cadvisor", "stress-ng", "stress-ng-vm", "stress-ng-vm", "stress-ng"]
    assert events["host"].null_count() == events.height
    assert events["message"][3].startswith("memory (MB): total 63979.26")
    # The year is the file's own (cadvisor's "at 2021-03-10 …"), not the reference time's.
    assert events["ts"].to_list()[2:4] == [datetime(2021, 3, 10, 11, 19, 17, tzinfo=UTC)] * 2
    assert set(events["ts_quality"]) == {"year_inferred"}
    kills = events.filter(pl.col("kind") == "oom_kill")
    assert kills.select("pid", "process", "rss_bytes").rows() == [(3691, "stress-ng-vm", 292 * 1024), (3692, "stress-ng-vm", 292 * 1024)]


def test_a_log_level_after_the_time_is_still_no_host() -> None:
    # Only rsyslog's empty host (two spaces) vouches for an envelope of a program without pid or rules.
    events = rca.parse_text("Mar 10 11:19:17 ERROR main: failed\nMar 10 11:19:17  main: started\n", year=2021)
    assert events["process"].to_list() == [None, "main"]


def test_dockerd_stop_timeout_kills_name_their_container() -> None:
    # deckhouse/deckhouse issue #336: dockerd at +03:00 forcing containers that outlived their stop signal.
    events = _events("journal_dockerd_stop_timeout_force_kill_msk_01.log")
    # The envelope's time, in the zone of dockerd's own stamp.
    assert events["ts"][0] == datetime(2021, 11, 30, 11, 50, 40, tzinfo=UTC)
    assert events["container_id"].to_list() == [
        None, "4dc52d08f25a7940f3e47283871df3eabf6534f59c1561d547002b8c907346f9", None,
        "7873876b33108c21164fff75a98946706d915628e30c5c9e4c562ee55805233c", None,
    ]
    attrs = [json.loads(a) for a in events["attrs"]]
    assert {a["signal"] for a in attrs} == {"SIGKILL"}
    assert [a.get("container_id_prefix") for a in attrs] == ["7873876b3310", None, "4dc52d08f25a", None, "7873876b3310"]
    # A stop's teardown, not a kill of a running job.
    assert set(events["kind"]) == {"log"}
    assert set(events["host"]) == {"kube-master-3"}


def test_openshift_hyperkube_lines_are_read_as_the_kubelet_klog() -> None:
    # Public-code index id 9982345903 (OpenShift 4.10 etcd-restore notes): `systemctl status kubelet.service`, whose
    # journal lines are tagged hyperkube (ellipsized by systemctl); their klog headers give level and microseconds.
    events = _events("journal_systemctl_status_hyperkube_ocp410_01.log")
    klog = events.filter(pl.col("process") == "hyperkube")
    assert klog.height == 10 and set(klog["source"]) == {"kubelet"}
    assert klog["severity"].to_list() == ["info"] * 3 + ["error"] * 5 + ["warning", "error"]
    assert klog["ts"][0] == datetime(2022, 10, 24, 2, 2, 8, 812398, tzinfo=UTC)
    assert set(klog.select("host", "pid").rows()) == {("master2.ocp4.example.com", 58674)}
    assert json.loads(klog["attrs"][4])["caller"] == "kubelet.go:2484"


def test_runtime_lines_name_the_container_a_cri_call_acts_on() -> None:
    # cri-o/cri-o issue #7053: CRI-O at -07:00 stopping a container, then its pod's sandbox (the pause container: flagged as such).
    crio = _events("journal_crio_stop_container_timeout_pdt_01.log")
    container, sandbox = "4bbbc006f606958022cb32f65bdbd0b64159e1247142d34ee43b395cad213207", "2f2c5585344a94eddce318399e51081f6547466202b755f6057d2f624bc38b81"
    assert crio["container_id"].to_list() == [container, sandbox, container, sandbox]
    assert [json.loads(attrs or "{}").get("sandbox") for attrs in crio["attrs"]] == [None, True, None, True]
    assert set(crio["process"]) == {"crio"} and set(crio["severity"]) == {"info"}
    assert crio["ts"][0] == datetime(2023, 6, 15, 6, 50, 37, tzinfo=UTC)
    # canonical/microk8s issue #651: the snap's containerd, its lines ellipsized by journalctl.
    microk8s = _events("journal_microk8s_containerd_container_to_stop_nb_01.log")
    assert microk8s["severity"].to_list() == ["debug"] + ["info"] * 5
    assert microk8s["container_id"].to_list()[1:3] == [
        "4ae29c7f87b4a08b42472853c23d09f33c8837ccf4a33a75b3735597dcfdfc46", "d26e733826de704fd2cf7b1875bdcfa07bc61fe5b066d0c533d76ce729ba4e17",
    ]
    assert microk8s["ts"][0] == datetime(2020, 10, 29, 14, 5, 55, tzinfo=UTC)


def test_docker_before_dockerd_and_cri_dockerd_keep_their_logrus_level() -> None:
    # moby/moby issue #19728: Docker 1.9's daemon tagged "docker", at +02:00.
    docker = _events("journal_docker_daemon_pre_dockerd_warning_eet_01.log")
    assert docker["severity"].to_list() == ["info", "info", None, "info", "info", "warning", "warning", "warning"]
    assert docker["ts"][0] == datetime(2016, 2, 5, 9, 37, 59, tzinfo=UTC)
    # kubernetes/minikube PR #20630: cri-dockerd 0.3.15 starting before the Docker daemon.
    cri_dockerd = _events("journal_cri_dockerd_start_minikube_01.log")
    assert cri_dockerd.select("process", "severity").rows()[1:] == [("cri-dockerd", "info")] * 2


def test_podman_journal_events_name_their_container() -> None:
    # arsfeld/nixos issue #152: podman's "container died" event under a `systemctl status` of the unit that ran it.
    events = _events("journal_podman_container_died_status_est_01.log")
    died = events.filter(pl.col("line") == 13).row(0, named=True)
    assert died["container_id"] == "fda645c04037bf8687d590b83c5b8881cea56a6c941c5fd43a6ca12ff921ce4d"
    assert died["container"] == "actual"
    # The container's exit, not podman's: neither podman nor its pid is the process.
    assert (died["kind"], died["process"], died["pid"], died["exit_code"]) == ("log", None, None, None)
    attrs = json.loads(died["attrs"])
    assert (attrs["runtime_event"], attrs["runtime"], attrs["image"]) == ("died", "podman", "ghcr.io/actualbudget/actual-server:latest")
    assert (died["host"], died["ts"].year) == ("storage", 2025)


def test_podman_acting_on_a_container_stays_podman_and_names_it() -> None:
    # arsfeld/nixos issue #297 (journalctl -r): podman removes the container a SIGKILL stopped; systemd tells the 137.
    events = _events("journal_podman_termix_exit_137_reverse_01.log")
    removed = events.filter(pl.col("line") == 8).row(0, named=True)
    assert (removed["process"], removed["pid"], removed["container"]) == ("podman", 3060462, "termix")
    assert removed["container_id"] == "278c60eb3c50137a27ecb7b4c26ba941f078382dddd76e6dfcdaac792072ea22"
    # A volume's event names no container.
    assert events.filter(pl.col("line") == 7)["container_id"].to_list() == [None]
    main = events.filter(pl.col("line") == 5).row(0, named=True)
    assert (main["exit_code"], main["severity"], main["process"]) == (137, "error", "podman-termix.service")


def test_earlyoom_limits_under_ten_percent_are_padded() -> None:
    # rfjakob/earlyoom issue #354: earlyoom 1.9 under --no-hostname, its SIGTERM limit 1.66 % printed "mem  1.66%".
    events = _events("journal_earlyoom_padded_limit_no_hostname_01.log")
    pressure = events.filter(pl.col("kind") == "memory_pressure")
    assert pressure["line"].to_list() == [2, 8]
    assert json.loads(pressure["attrs"][0]) == {"signal": "SIGTERM", "mem_limit_pct": 1.66, "swap_limit_pct": 10.0}
    kill = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["line"], kill["pid"], kill["process"], kill["rss_bytes"]) == (3, 906175, "java", 43912 * KI * KI)
    assert json.loads(kill["attrs"])["oom_score"] == 1170
    # The same SIGTERM again after "kill failed: Timer expired": the same kill.
    assert json.loads(events.filter(pl.col("line") == 9)["attrs"][0])["resent"] is True
    # The victim outlived the signal ("process 906175 did not exit", "kill failed: Timer expired"); its memory was not released.
    assert events.filter(pl.col("severity") == "warning")["line"].to_list() == [2, 4, 5, 6, 8, 10, 11]
    assert events["host"].null_count() == events.height


def test_earlyoom_1_7_victim_and_its_crash() -> None:
    # rfjakob/earlyoom issue #321: earlyoom v1.7-41 signals cellxgene, then dumps core (SIGSYS).
    events = _events("journal_earlyoom_cmdline_line_coredump_01.log")
    kill = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (kill["pid"], kill["process"], kill["rss_bytes"], kill["host"]) == (2595764, "cellxgene", 52562 * KI * KI, "server.name")
    assert events.filter(pl.col("kind") == "memory_pressure")["line"].to_list() == [6]
    crash = events.filter(pl.col("line") == 9).row(0, named=True)
    assert (crash["exit_code"], crash["severity"], crash["pid"]) == (128 + 31, "error", None)


def test_systemd_oomd_248_pressure_wording_and_a_cut_podman_event() -> None:
    # systemd/systemd issue #19142: Fedora Rawhide's systemd 248 rc (its oomd's first wording) and a rootless podman container.
    events = _events("journal_oomd_248_pressure_libpod_podman_died_01.log")
    pressure = events.row(0, named=True)
    assert (pressure["kind"], pressure["severity"], pressure["cgroup"]) == ("memory_pressure", "warning", "/user.slice/user-1000.slice/user@1000.service")
    assert json.loads(pressure["attrs"]) == {"limit_pct": 10.0}
    container = "d46b85cb439c68f0e614a2fd6aef42b2bc0b6747e83721793f7c236e57b9ed5e"
    # The container's scope and podman's "container died" (its line cut by journalctl at "…-latest>") name it.
    assert events["container_id"].to_list() == [None, container, container, container, None]
    died = events.row(3, named=True)
    assert (died["process"], died["container"], json.loads(died["attrs"])["image"]) == (
        None, None, "dev-registry.sbis.ru/local_stand/inside:21.2100-latest",
    )
    # The year is podman's (2021), not the reference's.
    assert events["ts"][0].year == 2021


def test_short_monotonic_journal_lines_of_programs_count_for_syslog() -> None:
    # systemd/systemd pull #42321: TEST-55-OOMD's journal in `-o short-monotonic`. Every line is a program's under a
    # boot stamp: the kernel's sniffer does not count such lines as its own, so the file is the syslog source's.
    path = fixture_path("journal_monotonic_oomd_marked_journald_01.log")
    text = path.read_text()
    assert sources.get("syslog").sniff(text.splitlines()) == pytest.approx(0.85)
    assert sources.get("kernel").sniff(text.splitlines()) == 0.0
    events = rca.parse_text(text, file=path.name)
    assert set(events["source"].to_list()) == {"syslog"}
    assert events.select("line", "kind", "pid", "process").filter(pl.col("kind") != "log").rows() == [
        (1, "memory_pressure", None, "system.slice"),
        (6, "process_killed", 407, None),
        (7, "oom_kill", None, "systemd-journald.service"),
        (8, "process_killed", None, "systemd-journald.service"),
    ]
    assert events["boot_seconds"][6] == 77.74967


def test_an_rfc5424_message_a_relay_wrote_after_its_own_stamp_is_read_by_its_header() -> None:
    # PakshNina/syslog-ng-radius README: syslog-ng's udp() source took `logger -n`'s RFC 5424 message for RFC 3164.
    events = _events("journal_syslog_ng_relayed_rfc5424_logger_01.log")
    row = events.row(0, named=True)
    # The sender's time (its zone, its year) and host, not the relay's "Nov 26 15:54:41 127.0.0.1".
    assert (row["ts"], row["ts_quality"], row["host"]) == (datetime(2019, 11, 26, 15, 54, 41, 272535, tzinfo=UTC), "exact", "ubu-srv-nfs")
    assert (row["process"], row["pid"], row["format"]) == ("root", None, "syslog_iso")
    assert row["message"].startswith("Passed-Authentication: Authentication succeeded")


def test_containerd_cri_calls_name_the_container_by_their_method() -> None:
    events = _events("journal_containerd_execsync_probe_zh_month_01.log")
    probe = "19c9b03a332d15f9141926a8bb1a0e8d188c36b665ec8b17f751d184c01e45a9"
    # An exec's own id (its pipes, its exit) is no container's.
    assert events.select("line", "container_id", "process").rows() == [
        (1, None, "containerd"), (2, None, "containerd"), (3, probe, "containerd"), (4, probe, "containerd"),
    ]
    sandbox, container = "a" * 64, "b" * 64
    head = 'May 19 10:49:41 node containerd[980]: time="2022-05-19T10:49:41Z"'
    lines = [
        f'{head} level=error msg="UpdateContainerResources for \\"{container}\\" failed"',
        f'{head} level=info msg="PortForward for \\"{sandbox}\\" port [8080]"',
        f'{head} level=info msg="Attach for \\"{container}\\" with tty true and stdin true"',
    ]
    parsed = _lines_parsed(lines, "containerd.log")
    assert parsed.select("container_id", "severity").rows() == [(container, "error"), (sandbox, "info"), (container, "info")]
    assert json.loads(parsed["attrs"][1])["sandbox"] is True


def test_containerd_create_container_names_the_container_its_id_and_attempt() -> None:
    # containerd/containerd issue #9070: containerd 1.7 logging JSON under --no-hostname; "&" written "\u0026".
    events = _events("journal_containerd_json_create_container_attempt_01.log")
    created = events.row(0, named=True)
    assert (created["container"], created["container_id"]) == ("liveness-probe", "d22beb2e1c464b954bc23a38e2c74743dfa6584796f389224713dd02f5e9ccd5")
    # The 7th restart of that container; the sandbox named before it is not the container.
    assert json.loads(created["attrs"]) == {"attempt": 7}
    assert (created["process"], created["pid"], created["severity"], created["host"]) == ("containerd", 19975, "info", None)
    assert events["severity"].to_list() == ["info", "debug", "debug"]


def test_dockerd_ignoring_event_names_its_container() -> None:
    # moby/moby issue #44300: an EKS-style node at -07:00 (containerd's and dockerd's logrus stamps tell the zone).
    events = _events("journal_dockerd_ignoring_event_container_pdt_01.log")
    assert events["container_id"].to_list() == [None, "bbe37c4cd54bcc5e9ebb6aeb302da23e620f8c362eab1e38ee7a8ec1ee12f8b0", None, None, None]
    assert events.row(1, named=True)["process"] == "dockerd"
    assert events["ts"][0] == datetime(2022, 10, 15, 0, 12, 48, tzinfo=UTC)
    assert events["source"].to_list() == ["syslog", "syslog", "syslog", "kubelet", "syslog"]
    # systemd's "Created slice libcontainer container kubepods-pod<uid>.slice.": the pod whose cgroup the kubelet made.
    assert events.row(4, named=True)["pod_uid"] == "4f77ad1d-26a8-4bb8-8170-eaf152f6a77a"


def test_a_program_tagged_with_its_path_gets_its_rules() -> None:
    # podman-container-tools/podman issue #18103: a rootless quadlet's podman, tagged "/usr/bin/podman[109389]", at -07:00.
    events = _events("journal_podman_path_tag_logrus_debug_pdt_01.log")
    assert set(events["process"]) == {"podman"} and set(events["pid"]) == {109389}
    # logrus' level, and the container its cleanup names.
    assert set(events["severity"]) == {"debug"}
    container = "c2382b59523f528f9fe0ada162c4f3dbcd601c714a8f60b3231e1ecd3f4ff2c9"
    assert events["container_id"].to_list() == [container, None, container, container, container, None, None]
    assert events["ts"][0] == datetime(2023, 4, 12, 20, 4, 13, tzinfo=UTC)


def test_crio_names_the_pod_of_a_container_it_creates_and_of_a_network_it_sets_up() -> None:
    # cri-o/cri-o issue #5709: a devstack node's journal in `-o short-precise`, CRI-O 1.2x at info.
    events = _events("journal_crio_short_precise_creating_container_pod_01.log")
    rows = events.select("namespace", "pod", "container", "pod_uid").rows()
    assert rows == [
        (None, None, None, None),
        ("default", "kuryr-pod-90821034", "kuryr-pod-90821034", None),
        ("default", "kuryr-pod-98895157", None, "1d0c6009-46e1-4633-9b2c-8b9cab2b718f"),
        (None, None, None, None),
    ]
    # The envelope's microseconds, and CRI-O stays the process.
    assert events["ts"][1] == datetime(2022, 3, 6, 13, 30, 35, 277165, tzinfo=UTC)
    assert set(events["process"]) == {"crio"} and set(events["severity"]) == {"info"}


def test_a_host_its_poster_hid_is_no_host() -> None:
    # gpud #70 and others paste journal lines with the host replaced by "...": the line is still framed, with no host.
    events = rca.parse_text(
        "Dec  1 03:17:05 ... kernel: [ 7063.100000] Memory cgroup out of memory: Killed process 4242 (python) total-vm:100kB, "
        "anon-rss:50kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:10kB oom_score_adj:0\n"
        "Dec  1 03:17:06 gpu-1 kernel: [ 7064.100000] eth0: link up\n",
        reference_time=FIXED_MTIME,
    )
    assert events.select("host", "kind", "pid", "boot_seconds").rows() == [(None, "oom_kill", 4242, 7063.1), ("gpu-1", "log", None, 7064.1)]


def test_nohang_signal_to_its_victim_is_an_oom_kill_of_the_victim_its_report_named() -> None:
    # hakavlad/nohang issue #85: nohang-desktop's report, each line its own journal entry; the excerpt starts after the victim's
    # PID and Name lines, so the kill has no pid or name, but its memory, cgroup and badness.
    events = _events("journal_nohang_desktop_victim_report_01.log")
    kill = events.filter(pl.col("kind") == "oom_kill")
    assert kill.select("line", "severity", "pid", "process", "rss_bytes", "cgroup", "host").rows() == [
        (12, "error", None, None, 10432 * KI * KI, "/user.slice/user-1000.slice/session-17.scope", "laptop")
    ]
    assert json.loads(kill["attrs"][0]) == {"oom": "nohang", "signal": "SIGTERM", "badness": 824}
    assert events.filter(pl.col("kind") == "log")["pid"].unique().to_list() == [11871]  # nohang-desktop's own
    # nohang 0.1 (issue #20): "Victim VmRSS: … KiB", Russian month names.
    old = _events("journal_nohang_send_sigterm_victim_ru_01.log").filter(pl.col("kind") == "oom_kill")
    assert old.select("line", "rss_bytes", "host").rows() == [(6, 3268608 * KI, "user-VirtualBox")]


def test_nohang_victim_status_names_the_pid_and_process_of_the_signal_after_it() -> None:
    # hakavlad/nohang issue #85: a victim status block (nohang 0.1.x) cut before nohang acted on it: no kill, the memory
    # status that requires an action is pressure.
    text = _text("journal_nohang_desktop_victim_status_pid_01.log")
    events = rca.parse_text(text, reference_time=FIXED_MTIME)
    assert events.filter(pl.col("kind") != "log").select("line", "kind", "severity", "pid").rows() == [(6, "memory_pressure", "warning", 32532)]
    # The signal that would follow (its wording as nohang writes it), and a second report whose victim is another process:
    # each signal takes the victim named since the one before it.
    then = (
        "Feb 12 12:32:22 laptop nohang-desktop[32532]: Implement a corrective action:\n"
        "Feb 12 12:32:22 laptop nohang-desktop[32532]:   Send SIGTERM to the victim; total response time: 600 ms\n"
        "Feb 12 12:32:40 laptop nohang-desktop[32532]:   PID:       4242, name: tail, state: R (running), EUID: 1000, SID: 11439 (bash), lifetime: 3 sec\n"
        "Feb 12 12:32:40 laptop nohang-desktop[32532]:   Vm, MiB:   Size: 9000, RSS: 8000, Swap: 0\n"
        "Feb 12 12:32:40 laptop nohang-desktop[32532]: Implementing a corrective action:\n"
        "Feb 12 12:32:40 laptop nohang-desktop[32532]:   Sending SIGKILL to the victim\n"
    )
    kills = rca.parse_text(text + then, reference_time=FIXED_MTIME).filter(pl.col("kind") == "oom_kill")
    assert kills.select("pid", "process", "rss_bytes").rows() == [(32706, "python3", None), (4242, "tail", 8000 * KI * KI)]
    assert [json.loads(attrs)["signal"] for attrs in kills["attrs"]] == ["SIGTERM", "SIGKILL"]


def test_one_container_oom_kill_told_by_the_kernel_systemd_and_containerd_names_its_container() -> None:
    # An AKS node's /var/log/syslog (public notes on exit codes): the kernel's kill, systemd's line of the container's scope
    # and containerd's TaskOOM name one container; node-problem-detector (tagged by its start script) quotes the kernel's
    # kill line: its line stays its own, no second kill.
    events = _events("journal_aks_memcg_oom_taskoom_npd_01.log")
    container = "25a38b5b8d556d7983d975577f5ac75ebbcfb4b269e6deaa0a0440c1ffc969ca"
    kills = events.filter(pl.col("kind") == "oom_kill")
    assert kills.select("line", "source", "pid", "process", "container_id").rows() == [
        (2, "kernel", 183960, "stress-ng-vm", container),
        (3, "syslog", None, f"cri-containerd-{container}.scope", container),
        (4, "syslog", None, None, container),
    ]
    assert events.filter(pl.col("line") == 5).select("kind", "pid", "process").rows() == [("log", 3240, "node-problem-detector-startup.sh")]


def test_systemd_oomd_swap_rule_keeps_its_figures_and_a_killed_scope_names_its_container_or_pod() -> None:
    # The swap rule's wording of systemd 249+ and of 247–248 (src/oom/oomd-manager.c); a container's scope and a pod's slice.
    docker = "85218894dbf37131575eeb1555f137493d396606214aad2b6bead07a3a55c800"
    libpod = "d46b85cb439c68f0e614a2fd6aef42b2bc0b6747e83721793f7c236e57b9ed5e"
    events = rca.parse_text(
        f"Jul 25 14:31:34 box systemd-oomd[1332]: Marked /system.slice/docker-{docker}.scope for killing due to memory used "
        "(60776927232) / total (66940563456) and swap used (61069553664) / total (67830013952) being more than 90.00%\n"
        f"Mar 29 01:08:45 fedora systemd-oomd[1003]: Killed /user.slice/user-1000.slice/user@1000.service/libpod-{libpod}.scope "
        "due to swap used (8589910016) / total (8589930496) being more than 90.00%\n"
        "Mar 29 01:08:46 node1 systemd-oomd[50]: Killed /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5931aa75_4603_4e65_"
        "b552_7c71cf55cfb5.slice due to memory pressure for /kubepods.slice being 85.03% > 80.00% for > 20s with reclaim activity\n",
        reference_time=FIXED_MTIME,
    )
    assert events.select("kind", "container_id", "pod_uid", "mem_used_bytes", "mem_total_bytes").rows() == [
        ("oom_kill", docker, None, 60776927232, 66940563456),
        ("oom_kill", libpod, None, None, None),
        ("oom_kill", None, "5931aa75-4603-4e65-b552-7c71cf55cfb5", None, None),
    ]
    attrs = [json.loads(row) for row in events["attrs"]]
    assert [(a["limit_pct"], a.get("swap_used_bytes"), a.get("swap_total_bytes")) for a in attrs] == [
        (90.0, 61069553664, 67830013952), (90.0, 8589910016, 8589930496), (80.0, None, None)
    ]


def test_journalctl_with_unit_lines_are_read_by_the_rules_of_the_unit_program() -> None:
    # `journalctl -o with-unit` (OpenShift CI's journal.log) prints the unit that wrote a line where the identifier is
    # (src/shared/logs-show.c): PID 1 is "init.scope[1]", a user manager ".../init.scope", daemons "<name>.service".
    container = "25a38b5b8d556d7983d975577f5ac75ebbcfb4b269e6deaa0a0440c1ffc969ca"
    events = rca.parse_text(
        f"Thu 2023-10-12 19:00:20 UTC node init.scope[1]: cri-containerd-{container}.scope: A process of this unit has been "
        "killed by the OOM killer.\n"
        f'Thu 2023-10-12 19:00:20 UTC node containerd.service[2388]: time="2023-10-12T19:00:20.879932879Z" level=info '
        f'msg="TaskOOM event container_id:\\"{container}\\""\n'
        'Thu 2023-10-12 19:34:45 UTC node kubelet.service[2480]: I1012 19:34:45.445172    2480 eviction_manager.go:595] '
        '"Eviction manager: pod is evicted successfully" pod="default/nginx"\n'
        "Thu 2023-10-12 19:35:00 UTC node user@1000.service/init.scope[2122]: app-foo.scope: A process of this unit has been "
        "killed by the OOM killer.\n"
        "Thu 2023-10-12 19:35:01 UTC node sshd.service[700]: Accepted publickey for core\n"
        # A unit's name escapes the "-" of a name it holds.
        "Thu 2023-10-12 19:35:02 UTC node user@1000.service/app-gnome-firefox\\x2dw-2504.scope[2504]: hello\n",
        reference_time=FIXED_MTIME,
    )
    assert events.select("source", "kind", "process", "container_id", "pod").rows() == [
        ("syslog", "oom_kill", f"cri-containerd-{container}.scope", container, None),
        ("syslog", "oom_kill", None, container, None),
        ("kubelet", "eviction", "kubelet", None, "nginx"),
        ("syslog", "oom_kill", "app-foo.scope", None, None),
        ("syslog", "log", "sshd.service", None, None),
        ("syslog", "log", "user@1000.service/app-gnome-firefox\\x2dw-2504.scope", None, None),
    ]
    assert events["pid"][-1] == 2504
    assert events["ts"][0] == datetime(2023, 10, 12, 19, 0, 20, tzinfo=UTC)


def test_rfc5424_message_may_be_left_out_and_a_param_value_may_hold_an_escaped_bracket() -> None:
    # RFC 5424 section 6.5, example 4: structured data and no MSG; section 6.3.3: '"', '\' and ']' escaped in a PARAM-VALUE.
    events = rca.parse_text(
        '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource='
        '"Application" eventID="1011"][examplePriority@32473 class="high"]\n'
        '<165>1 2003-10-11T22:14:16.003Z mymachine.example.com evntslog 77 ID47 [exampleSDID@32473 note="a\\]b"] msg\n',
        reference_time=FIXED_MTIME,
    )
    assert events.select("line", "host", "process", "pid", "message", "severity").rows() == [
        (1, "mymachine.example.com", "evntslog", None, "", "notice"),
        (2, "mymachine.example.com", "evntslog", 77, "msg", "notice"),
    ]


def test_earlyoom_1_8_kill_by_oom_score_with_its_cmdline_and_1_3_kill_without_a_uid() -> None:
    # rfjakob/earlyoom issue #344 (Debian 13): oom_score without oom_score_adj, the cmdline, process_mrelease's report.
    events = _events("journal_earlyoom_oom_score_kill_release_debian13_01.log")
    kill = events.filter(pl.col("kind") == "oom_kill")
    assert kill.select("line", "pid", "process", "rss_bytes", "host").rows() == [(3, 1024668, "Web Content", 79 * KI * KI, "qaa")]
    assert json.loads(kill["attrs"][0]) == {"oom": "earlyoom", "signal": "SIGTERM", "uid": 1000, "oom_score": 823}
    assert events.filter(pl.col("line").is_in([4, 5])).select("kind", "pid").rows() == [("log", 1308), ("log", 1308)]
    # earlyoom 1.3 (Ubuntu 20.04; issue #131 quotes its output) names no uid.
    old = rca.parse_text(
        'Apr 29 10:00:00 box earlyoom[900]: sending SIGTERM to process 12006 "python3": badness 209, VmRSS 2891 MiB\n',
        reference_time=FIXED_MTIME,
    )
    assert old.select("kind", "pid", "process", "rss_bytes").rows() == [("oom_kill", 12006, "python3", 2891 * KI * KI)]


def test_a_host_placeholder_in_angle_brackets_is_no_host() -> None:
    # rfjakob/earlyoom issue #261: the poster wrote "<hostname>" for the host; no host name holds "<".
    events = _events("journal_earlyoom_placeholder_host_padded_limit_01.log")
    assert events["host"].null_count() == events.height
    assert events.filter(pl.col("kind") == "oom_kill").select("line", "pid", "process").rows() == [(4, 57834, "code"), (8, 57192, "code")]
    assert events.filter(pl.col("kind") == "memory_pressure")["line"].to_list() == [3, 7, 11]


def test_journalctl_short_delta_lines_keep_their_boot_seconds() -> None:
    # systemd pull request #24686 (the format's author's own output): `-o short-delta`, the delta measured on the wall
    # clock ("*"); the first line of an output has sixteen spaces for its delta.
    events = rca.parse_text(
        "[    5.858059 <   19.580722*>] zeus systemd[1]: Starting Network Configuration...\n"
        "[    1.000000                ] zeus systemd[1]: Started Journal Service.\n",
        reference_time=FIXED_MTIME,
    )
    assert events.select("source", "format", "boot_seconds", "host", "process", "pid", "message").rows() == [
        ("syslog", "journal_monotonic", 5.858059, "zeus", "systemd", 1, "Starting Network Configuration..."),
        ("syslog", "journal_monotonic", 1.0, "zeus", "systemd", 1, "Started Journal Service."),
    ]


def test_journal_json_message_written_as_bytes_is_its_text_without_colours() -> None:
    # journald writes a field holding control characters as an array of bytes (systemd's journalctl(1), -o json; moby
    # issue #15722 shows it for a TTY container's output): an application that colours its log lines.
    events = rca.parse_text(
        '{"__REALTIME_TIMESTAMP":"1700000000000000","_HOSTNAME":"gpu1","SYSLOG_IDENTIFIER":"python3","_PID":"42","PRIORITY":"3",'
        '"MESSAGE":[27,91,51,49,59,49,109,101,114,114,111,114,58,27,91,48,109,32,228,184,173]}\n'
        '{ "__REALTIME_TIMESTAMP" : "1700000001000000", "_HOSTNAME" : "gpu1", "MESSAGE" : [ 104, 105 ] }\n'
        '{"__REALTIME_TIMESTAMP":"1700000002000000","_HOSTNAME":"gpu1","MESSAGE":"[1, 2]"}\n'
        '{"__REALTIME_TIMESTAMP":"1700000003000000","_HOSTNAME":"gpu1","MESSAGE":[255,254]}\n',
        reference_time=FIXED_MTIME,
    )
    assert events["message"].to_list() == ["error: 中", "hi", "[1, 2]", "[255,254]"]


def test_conmon_oom_received_is_the_oom_kill_of_its_container() -> None:
    # conmon's ninfo("OOM received") (src/cgroup.c, syslog "conmon %.20s <ninfo>: %s"), and "OOM event received" before it
    # where it reads a cgroup v1 eventfd: one kill; the container's exit with 137 after it.
    events = rca.parse_text(
        "Jan 09 10:08:20 node-3 conmon[330022]: conmon 0644511bc2734f5ff9f9 <ninfo>: OOM event received\n"
        "Jan 09 10:08:20 node-3 conmon[330022]: conmon 0644511bc2734f5ff9f9 <ninfo>: OOM received\n"
        "Jan 09 10:08:20 node-3 conmon[330022]: conmon 0644511bc2734f5ff9f9 <ninfo>: container 330031 exited with status 137\n",
        reference_time=FIXED_MTIME,
    )
    assert events.select("kind", "pid", "exit_code").rows() == [("log", 330022, None), ("oom_kill", None, None), ("process_killed", 330031, 137)]
    assert json.loads(events["attrs"][1]) == {"runtime": "conmon", "container_id_prefix": "0644511bc2734f5ff9f9"}


def test_journalctl_k_short_delta_is_the_syslog_sources_and_the_kernel_rules_read_it() -> None:
    # `journalctl -k -o short-delta`: kernel lines alone, under a stamp no dmesg writes (the delta); the kill is the kernel's.
    text = (
        "[    0.000000                ] zeus kernel: Linux version 6.9.5\n"
        "[  517.923918 <  517.923918 >] zeus kernel: Out of memory: Killed process 401 (systemd-journal) total-vm:32724kB, "
        "anon-rss:1112kB, file-rss:8888kB, shmem-rss:4kB\n"
    )
    assert sources.sniff(text.splitlines())[0].name == "syslog"
    events = rca.parse_text(text, reference_time=FIXED_MTIME)
    assert events.select("source", "kind", "pid", "boot_seconds", "host").rows() == [
        ("kernel", "log", None, 0.0, "zeus"), ("kernel", "oom_kill", 401, 517.923918, "zeus"),
    ]


def _bare(envelope_lines: str) -> str:
    """The logrus lines of a journal with their envelopes cut off, as a runtime writes them to its own file."""
    return "".join(line.split(": ", 1)[1] + "\n" for line in envelope_lines.splitlines())


def test_a_bare_containerd_log_is_read_with_the_runtimes_rules() -> None:
    # k3s' and rke2's agent/containerd/containerd.log, `journalctl -u containerd -o cat`: no envelope, the same lines.
    text = _bare(CONTAINERD_TASK_EVENTS)
    assert sources.sniff(text.splitlines())[0].name == "syslog"
    events = rca.parse_text(text, file="containerd.log", reference_time=FIXED_MTIME)
    assert events.select("kind", "severity", "pid", "process", "container_id", "exit_code").rows() == [
        *_TASK_EVENT_ROWS, ("log", "error", None, "containerd", None, None),  # no envelope: no pid
    ]
    assert set(events["source"]) == {"syslog"} and set(events["format"]) == {"logrus"} and events["host"].null_count() == events.height
    assert set(events["ts_quality"]) == {"exact"} and events["ts"][0] == datetime(2026, 11, 27, 18, 29, 58, 992738, tzinfo=UTC)
    assert events["ts_raw"][2] == "2026-11-27T18:29:59.1Z"


def test_a_bare_runtime_log_is_the_runtime_its_wordings_name() -> None:
    dockerd = (
        'time="2024-05-01T12:00:00.1Z" level=info msg="API listen on /var/run/docker.sock"\n'
        'time="2024-05-01T12:00:01.2Z" level=info msg="shim disconnected" id=4296b9e2c1d8a7f6e5d4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a2918f7e6\n'
    )
    events = rca.parse_text(dockerd, file="docker.log", reference_time=FIXED_MTIME)
    assert events.select("source", "process").rows() == [("syslog", "dockerd"), ("syslog", "dockerd")]


def test_a_go_programs_own_logrus_lines_stay_the_pipelines() -> None:
    text = 'time="2024-05-01T12:00:00Z" level=info msg="server started" port=8080\ntime="2024-05-01T12:00:01Z" level=error msg="request failed"\n'
    assert sources.sniff(text.splitlines())[0].name == "pipeline"


def test_k3s_containerd_log_read_bare_keeps_the_stamps_zone() -> None:
    # k3s-io/k3s issues #2961 (containerd 1.4, UTC) and #11973 (containerd 2.0, +01:00).
    old = _events("journal_k3s_containerd_log_bare_plugins_01.log")
    assert set(old["process"]) == {"containerd"} and set(old["severity"]) == {"info"} and set(old["ts_quality"]) == {"exact"}
    assert old["ts"][0] == datetime(2021, 3, 4, 18, 13, 14, 213018, tzinfo=UTC)
    new = _events("journal_k3s_containerd2_log_bare_plugin_ids_cet_01.log")
    assert set(new["source"]) == {"syslog"} and set(new["process"]) == {"containerd"}
    assert new["ts"][0] == datetime(2025, 3, 15, 11, 7, 55, 654247, tzinfo=UTC) and new["ts_raw"][0] == "2025-03-15T12:07:55.654247488+01:00"


def test_crio_log_read_bare_names_the_pod_of_a_k8s_container_name() -> None:
    # cri-o/cri-o issue #5569: CRI-O's stamps ("2022-01-25 22:39:47.503233946+08:00"); "k8s_POD_<pod>_<namespace>_<uid>_0" is a pod's sandbox.
    events = _events("journal_crio_bare_restore_sandbox_cst_01.log")
    assert set(events["process"]) == {"crio"} and set(events["severity"]) == {"warning"}
    assert events["ts"][0] == datetime(2022, 1, 25, 14, 39, 47, 503233, tzinfo=UTC)
    assert events.select("pod", "namespace", "pod_uid", "container").row(1) == ("zhaoyangsun-sun-3", "tispace", "f86ce375-c518-4d61-a1e4-b10474ca42c0", None)
    assert events["pod"].null_count() == 3


def test_containerd_run_pod_sandbox_names_its_pod() -> None:
    line = (
        'Jun 15 11:56:54 k8s-master containerd[34171]: time="2023-06-15T11:56:54.3Z" level=info msg="RunPodSandbox for '
        '&PodSandboxMetadata{Name:etcd-fedora,Uid:0fb6f2418c919ed2b7682b30e5168935,Namespace:kube-system,Attempt:0,}"\n'
    )
    events = rca.parse_text(line, file="syslog", reference_time=FIXED_MTIME)
    assert events.select("process", "pod", "namespace", "pod_uid").row(0) == ("containerd", "etcd-fedora", "kube-system", "0fb6f2418c919ed2b7682b30e5168935")


def test_docker_daemon_log_read_bare_is_dockerds() -> None:
    # moby/moby issue #19331: /var/log/docker.log of Docker 1.9, each line ending in a space.
    events = _events("journal_docker_log_bare_api_listen_cet_01.log")
    assert set(events["source"]) == {"syslog"} and set(events["process"]) == {"dockerd"} and events["host"].null_count() == events.height
    assert events["severity"].to_list() == ["info", "warning", "info", "warning", "info"]
    assert events["ts"][0] == datetime(2016, 1, 15, 13, 44, 4, 995587, tzinfo=UTC)


def test_dockerd_logrus_on_a_terminal_keeps_its_time_and_level() -> None:
    # moby/moby issue #40066: "ERRO[<stamp>] message   key=value", dockerd run in the foreground.
    events = _events("journal_dockerd_tty_nvidia_runtime_missing_cst_01.log")
    assert set(events["source"]) == {"syslog"} and set(events["process"]) == {"dockerd"} and set(events["kind"]) == {"log"}
    assert events["severity"].to_list() == ["info", "error", "error", "error", "error", "info", "warning"]
    assert events["ts"][4] == datetime(2019, 10, 8, 23, 10, 3, 707613, tzinfo=UTC) and set(events["ts_quality"]) == {"exact"}
    assert events["container_id"][4] == "41a3c0b43d384b93a83a822ec58499b0651de23fcc850d23f99d655f15dc7f34"


def test_containerd_on_a_terminal_tells_its_oom_and_exit_events_unquoted() -> None:
    # containerd 1.7 in the foreground: logrus' terminal lines put the message bare, its protobuf text's quotes unescaped.
    container = "4296b9e2c1d6f0e5a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0"
    text = (
        'INFO[2024-05-01T12:00:00.000000000Z] starting containerd                           revision=1234 version=v1.7.13\n'
        f'INFO[2024-05-01T12:00:05.000000000Z] TaskOOM event container_id:"{container}"\n'
        f'INFO[2024-05-01T12:00:05.100000000Z] TaskExit event in podsandbox handler container_id:"{container}" id:"{container}"'
        " pid:4242 exit_status:137 exited_at:{seconds:1714564805 nanos:100000000}\n"
    )
    events = rca.parse_text(text, file="containerd.log", reference_time=FIXED_MTIME)
    assert events.select("kind", "container_id", "pid", "exit_code").rows()[1:] == [("oom_kill", container, None, None), ("log", container, 4242, 137)]
    assert events["ts"][1] == datetime(2024, 5, 1, 12, 0, 5, tzinfo=UTC)


def test_a_go_programs_own_logrus_lines_on_a_terminal_are_not_a_runtimes() -> None:
    text = "INFO[2024-05-01T12:00:00Z] server started                                port=8080\nERRO[2024-05-01T12:00:01Z] request failed\n"
    assert sources.sniff(text.splitlines())[0].name != "syslog"


def test_a_bare_runtime_head_sniffed_with_others_leaves_their_scores() -> None:
    from rca.sources import syslog
    from rca.sources._base import heads_frame

    bare = _bare(CONTAINERD_TASK_EVENTS).splitlines()
    journal = ["Nov 27 18:29:58 node-a kernel: Memory cgroup out of memory: Killed process 4242 (python)"]
    together = syslog.sniff_heads(heads_frame([bare, journal]))
    assert together == {0: syslog.sniff(bare), 1: syslog.sniff(journal)} and together[1] < together[0]


def test_docker_events_saved_to_a_file_give_the_oom_and_the_kubelets_labels() -> None:
    # docker/for-linux issue #670: `docker events` on a dockershim node, a JupyterHub pod's container OOM-killed
    # (the paste wraps the line inside the sandbox id: one event).
    events = _events("docker_events_k8s_dockershim_oom_labels_01.log")
    assert events.height == 1
    oom = events.row(0, named=True)
    assert (oom["source"], oom["format"], oom["kind"], oom["severity"], oom["n_lines"]) == ("syslog", "docker_events", "oom_kill", "error", 2)
    assert (oom["ts"], oom["ts_quality"]) == (datetime(2019, 5, 4, 23, 5, 45, 11072, tzinfo=UTC), "exact")
    assert oom["container_id"] == "29d72966e0beb17d9b0b9fbcbfc734e2df2eb5428690115f9b24430357de08e5"
    assert (oom["pod"], oom["namespace"], oom["container"], oom["pod_uid"]) == (
        "jupyter-******", "jhub-prod", "notebook", "efa75591-6e89-11e9-bf85-001a4a16016d",
    )
    # The container's OOM, not the daemon's.
    assert (oom["process"], json.loads(oom["attrs"])["runtime"]) == (None, "dockerd")


def test_docker_events_die_tells_the_exit_code_and_kill_the_signal_sent() -> None:
    # A tutorial's `docker events` (public-code index file id 1759192825): a run, an exit 1, and a `docker stop` that
    # sent SIGTERM, then SIGKILL ten seconds later.
    events = _events("docker_events_stop_kill_die_137_01.log")
    assert set(events["format"]) == {"docker_events"} and set(events["ts_quality"]) == {"exact"}
    died = events.filter(pl.col("line").is_in([6, 9, 14])).select("kind", "severity", "exit_code", "container").rows()
    # The 137 after the SIGKILL Docker sent itself at the stop's timeout is the stop, not a failure.
    assert died == [("log", None, 0, "flamboyant_hawking"), ("log", "error", 1, "mystifying_rosalind"), ("log", "warning", 137, "boring_heisenberg")]
    assert json.loads(events.filter(pl.col("line") == 14)["attrs"].item())["runtime_stop"] is True
    assert events.filter(pl.col("line") == 14)["container_id"].item() == "7f5bb63030f2d64f0d94e6e1512ea35261d9b8af8a09903caa00b29b3f11b77d"
    signals = [json.loads(attrs)["signal"] for attrs in events.filter(pl.col("line").is_in([12, 13]))["attrs"]]
    assert signals == ["SIGTERM", "SIGKILL"]
    # The daemon acting on a container stays its process; a network's event names the container it disconnects.
    assert events.filter(pl.col("line") == 16).select("process", "container").row(0) == ("dockerd", "boring_heisenberg")
    assert events.filter(pl.col("line") == 15)["container_id"].item() == "7f5bb63030f2d64f0d94e6e1512ea35261d9b8af8a09903caa00b29b3f11b77d"
    assert events["ts"][0] == datetime(2017, 2, 16, 9, 2, 53, 530980, tzinfo=UTC)


def test_docker_events_as_json_give_the_oom_and_the_exit_code() -> None:
    # moby/moby issue #18470: Docker 1.9's /events stream (status, id, from); then a 1.10+ object with its Actor's attributes.
    events = _events("docker_events_api_json_oom_01.log")
    assert set(events["format"]) == {"docker_events"} and events["kind"].to_list() == ["log", "log", "log", "oom_kill"]
    oom = events.row(3, named=True)
    assert (oom["ts"], oom["ts_quality"]) == (datetime(2015, 12, 7, 14, 17, 51, 593721, tzinfo=UTC), "exact")
    assert oom["container_id"] == "36eb96d6c134895854e77f65ac47955b6ee08eb62bceee37cc605157f1c9482b"
    assert json.loads(oom["attrs"])["image"] == "9e0d5e071a2b"
    died = rca.parse_text(
        '{"status":"die","id":"7f5bb63030f2d64f0d94e6e1512ea35261d9b8af8a09903caa00b29b3f11b77d","from":"alpine","Type":"container","Action":"die",'
        '"Actor":{"ID":"7f5bb63030f2d64f0d94e6e1512ea35261d9b8af8a09903caa00b29b3f11b77d","Attributes":{"exitCode":"137","image":"alpine",'
        '"name":"boring"}},"scope":"local","time":1487235877,"timeNano":1487235877854997858}\n',
        file="docker-events.json", reference_time=FIXED_MTIME,
    ).row(0, named=True)
    assert (died["source"], died["kind"], died["exit_code"], died["container"]) == ("syslog", "process_killed", 137, "boring")


def test_podman_events_saved_to_a_file_keep_their_go_time() -> None:
    # podman-container-tools/podman PR #2621: the first "container died" event, as `podman events` prints it.
    line = (
        "2019-03-12 16:25:27.088574667 -0400 EDT container died 70f01ba82a02575d3efc3579ee5951f1b3b3383243b204a54c21989e4b2d41fa"
        " (image=docker.io/library/fedora:latest, name=pensive_payne)"
    )
    died = rca.parse_text(line + "\n", file="podman-events.log", reference_time=FIXED_MTIME).row(0, named=True)
    assert (died["source"], died["format"], died["ts"], died["ts_quality"]) == ("syslog", "podman_events", datetime(2019, 3, 12, 20, 25, 27, 88574, tzinfo=UTC), "exact")
    assert (died["container"], died["container_id"][:12], died["kind"]) == ("pensive_payne", "70f01ba82a02", "log")


def test_a_file_of_iso_stamped_lines_is_not_a_runtimes_events() -> None:
    text = "2024-05-01T12:00:00.123Z container start took 3 s (cold cache)\n2024-05-01T12:00:01Z image pull done\n2024-05-01T12:00:02Z volume mount ok\n"
    events = rca.parse_text(text, file="app.log", reference_time=FIXED_MTIME)
    assert set(events["source"]) == {"pipeline"}


_LABEL_VALUES = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=30)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["io.x/label", "maintainer", "org.version", "annotation.ports"]), _LABEL_VALUES), max_size=4), st.integers(0, 255))
def test_a_docker_die_event_keeps_its_container_and_exit_code_whatever_its_labels(labels: list[tuple[str, str]], code: int) -> None:
    container = "c2bae9196988677a65583af8b768f08588ec86745c2cc429e59f734fa3f2e2cf"
    attributes = sorted([("exitCode", str(code)), ("image", "bad_dog"), ("name", "mybad_dog"), *labels])
    line = f"2019-09-19T23:36:39.709344777Z container die {container} ({', '.join(f'{k}={v}' for k, v in attributes)})"
    events = rca.parse_text(line + "\n" + line + "\n", file="docker-events.log", reference_time=FIXED_MTIME)
    assert events.height == 2 and set(events["container_id"]) == {container} and set(events["exit_code"]) == {code}
    assert set(events["kind"]) == {"process_killed" if code == 137 else "log"}


def test_a_docker_kill_before_a_restart_does_not_excuse_the_next_137() -> None:
    container = "c2bae9196988677a65583af8b768f08588ec86745c2cc429e59f734fa3f2e2cf"
    lines = [
        f"2019-09-19T23:36:39.621984668Z container kill {container} (image=bad_dog, name=mybad_dog, signal=9)",
        f"2019-09-19T23:36:39.709344777Z container die {container} (exitCode=137, image=bad_dog, name=mybad_dog)",
        f"2019-09-19T23:40:00.000000000Z container start {container} (image=bad_dog, name=mybad_dog)",
        f"2019-09-19T23:45:00.000000000Z container die {container} (exitCode=137, image=bad_dog, name=mybad_dog)",
    ]
    events = _lines_parsed(lines, "docker-events.log")
    assert events["kind"].to_list() == ["log", "log", "log", "process_killed"]


def test_docker_journald_driver_tag_of_the_short_id_names_the_container() -> None:
    # home-assistant/operating-system#1518: Docker's journald driver tags a container's entries with its short id.
    events = _events("journal_haos_docker_journald_id_tag_empty_message_01.log")
    assert events.height == 15 and set(events["n_lines"]) == {1}
    assert set(events.select("container_id", "process", "pid", "host").rows()) == {("7588f50d8707", "7588f50d8707", 471, "homeassistant")}
    assert events.filter(pl.col("line") == 2)["message"].to_list() == ["Data locked: NO"]
    assert events["ts"][0] == datetime(2021, 8, 29, 10, 8, 57, tzinfo=UTC) and set(events["ts_quality"]) == {"year_inferred"}
    # cybozu-go/cke#126: etcd on a Kubernetes node, `journalctl CONTAINER_NAME=etcd` under its banner.
    etcd = _events("journal_cke_docker_journald_short_id_tag_etcd_01.log").filter(pl.col("line") > 1)
    assert set(etcd.select("container_id", "pid", "host").rows()) == {("c6953fe39bbf", 820, "node1")}
    assert etcd["ts"][0] == datetime(2019, 2, 6, 1, 1, 18, tzinfo=UTC)


def test_an_entry_with_an_empty_message_is_a_line_of_its_own() -> None:
    text = "Aug 29 10:08:57 homeassistant sshd[471]: first\nAug 29 10:08:57 homeassistant sshd[471]:\nAug 29 10:08:58 homeassistant sshd[471]: third\n"
    events = rca.parse_text(text, file="syslog", reference_time=FIXED_MTIME)
    assert events.select("line", "message", "n_lines", "pid").rows() == [(1, "first", 1, 471), (2, "", 1, 471), (3, "third", 1, 471)]


def test_a_program_named_like_a_short_id_but_not_hex_names_no_container() -> None:
    text = "Aug 29 10:08:57 homeassistant docker/zzzzzzzzzzzz[471]: up\nAug 29 10:08:57 homeassistant networkd1234[47]: up\n"
    events = rca.parse_text(text, file="syslog", reference_time=FIXED_MTIME)
    assert events["container_id"].null_count() == 2


def test_systemd_oom_killer_line_of_a_docker_scope_names_the_container() -> None:
    # home-assistant/operating-system#2595: the unit's line and the kernel's kill name the same container.
    events = _events("journal_haos_docker_scope_oom_killer_unit_01.log")
    container = "7f399a191dea38b318f7e9419a85423dbde2229c5ef7cc972154f53a3b648b66"
    assert events.select("line", "source", "kind").rows() == [(1, "syslog", "log"), (2, "syslog", "oom_kill"), (3, "kernel", "oom_kill"), (4, "kernel", "oom_kill")]
    assert events.filter(pl.col("line") != 3)["container_id"].to_list() == [None, container, container]
    assert events.filter(pl.col("line") == 3).select("pid", "process", "rss_bytes").row(0) == (267303, "python3", 1293204 * 1024)


def test_journald_rate_limiting_says_how_many_lines_of_which_unit_are_lost() -> None:
    # kubernetes/kubernetes#41435: journald on a COS node dropping docker's and kubelet's lines.
    events = _events("journal_journald_suppressed_rate_limit_cos_01.log")
    lost = [json.loads(attrs) for attrs in events["attrs"]]
    assert [(a["messages_lost"], a["lost_from"].split("/")[-1]) for a in lost] == [
        (23, "docker.service"), (17, "kubelet.service"), (21, "docker.service"), (22, "kubelet.service"),
    ]
    assert set(events.select("severity", "process", "pid").rows()) == {("warning", "systemd-journal", 27521)}


def test_journalctl_x_catalog_text_belongs_to_the_entry_above_it() -> None:
    # clearlinux/cloud-native-setup#127: `journalctl -xe` prints the catalog's explanation under an entry.
    events = _events("journal_x_catalog_lines_journald_restart_01.log")
    assert events.select("line", "n_lines", "pid").rows() == [(1, 8, 1), (9, 7, 167), (16, 7, 2141), (23, 2, 2141)]
    assert events["message"][1].startswith("Journal stopped\n-- Subject: The journal has been stopped")


def test_home_assistant_host_log_stamps_read_as_iso_with_milliseconds() -> None:
    # home-assistant/operating-system#4819: "2026-06-25 15:41:19.171 homeassistant systemd[1]: …".
    events = _events("journal_haos_space_millis_stamp_units_01.log")
    assert events.height == 11 and set(events["format"]) == {"syslog_iso"} and set(events["host"]) == {"homeassistant"}
    assert events["ts"][0] == datetime(2026, 6, 25, 15, 41, 19, 171000, tzinfo=UTC)
    assert events.filter(pl.col("line") == 2).select("process", "pid").row(0) == ("systemd-tmpfiles-clean.service", None)


def test_a_program_without_rules_names_its_own_level() -> None:
    # cybozu-go/cke PR #126 (etcd 3.3's capnslog "I |") and Home Assistant OS #2595 (the supervisor's "WARNING").
    etcd = _events("journal_cke_docker_journald_short_id_tag_etcd_01.log")
    assert set(etcd.filter(pl.col("process") == "c6953fe39bbf")["severity"]) == {"info"}
    supervisor = _events("journal_haos_docker_scope_oom_killer_unit_01.log").filter(pl.col("line") == 1)
    assert supervisor["severity"].to_list() == ["warning"]
    lines = [
        "Feb 06 01:02:04 node1 etcd[820]: 2019-02-06 01:02:04.123456 W | etcdserver: read-only range request took too long",
        "Feb 06 01:02:05 node1 kube-proxy[900]: E0206 01:02:05.123456     900 proxier.go:1234] Failed to sync iptables rules",
        "Feb 06 01:02:07 node1 myapp[1000]: ERROR: database connection lost",
        "Feb 06 01:02:08 node1 myapp[1000]: [WARN] retrying in 5s",
        "Feb 06 01:02:09 node1 myapp[1000]: Error rate is 0.1 % (a word in prose, not a level)",
        "Feb 06 01:02:10 node1 nv-hostengine[77]: 2024-05-01 12:00:00.000 ERROR [77:80] Failed to read from GPU 0",
    ]
    events = _lines_parsed(lines, "syslog")
    assert events["severity"].to_list() == ["warning", "error", "error", "warning", None, "error"]


_WEB = "c2bae9196988677a65583af8b768f08588ec86745c2cc429e59f734fa3f2e2cf"


def test_docker_health_and_exec_events_are_the_containers_not_syslog_lines() -> None:
    lines = [
        f"2024-05-01T12:00:30.210000000Z container health_status: unhealthy {_WEB} (image=nginx:1.25, name=web)",
        f"2024-05-01T12:00:30.100000000Z container exec_create: /bin/sh -c curl -f http://localhost/ || exit 1 {_WEB} (execID=9f1, image=nginx:1.25, name=web)",
        f"2024-05-01T12:00:31.000000000Z container exec_die {_WEB} (execID=9f1, exitCode=1, image=nginx:1.25, name=web)",
    ]
    events = _lines_parsed(lines, "docker-events.log")
    assert set(events["format"]) == {"docker_events"} and events["host"].to_list() == [None] * 3
    assert set(events["container_id"]) == {_WEB} and set(events["container"]) == {"web"}
    health = events.row(0, named=True)
    assert (health["severity"], json.loads(health["attrs"])["health"]) == ("warning", "unhealthy")
    # An exec's exit is not the container's.
    assert events.row(2, named=True)["exit_code"] is None


def test_podman_events_of_images_volumes_and_the_system_are_lines_of_their_own() -> None:
    # Podman prints these without attributes (libpod/events/events.go, ToHumanReadable).
    lines = [
        "2024-05-01 12:00:00.100 +0000 UTC image pull e7d92cdc71feacf90708cb59182d0df1b911f8ae022d29e8e95d75ca6a99776a docker.io/library/alpine:latest",
        f"2024-05-01 12:00:01.100 +0000 UTC container start {_WEB} (image=docker.io/library/alpine:latest, name=web)",
        "2024-05-01 12:00:32 +0000 UTC volume create myvol",
        "2024-05-01 12:00:33.5 +0000 UTC system refresh",
    ]
    events = _lines_parsed(lines, "podman-events.log")
    assert events["n_lines"].to_list() == [1] * 4 and set(events["ts_quality"]) == {"exact"}
    assert events["ts"][3] == datetime(2024, 5, 1, 12, 0, 33, 500000, tzinfo=UTC)


def test_docker_events_before_1_10_name_the_container_of_an_oom() -> None:
    # moby/moby issue #16074's shape, "<time> <id>: (from <image>) <event>" (the issue abbreviates the id).
    text = f"2015-12-07T15:17:51.593721048+01:00 {_WEB}: (from ubuntu) oom\n2015-12-07T15:17:51.700000000+01:00 {_WEB}: (from ubuntu) die\n"
    events = rca.parse_text(text, file="docker-events.log", reference_time=FIXED_MTIME)
    assert events.select("kind", "container_id").rows() == [("oom_kill", _WEB), ("log", _WEB)]
    assert json.loads(events["attrs"][0])["image"] == "ubuntu"


def test_a_docker_stop_that_sigterm_ended_is_the_runtimes_stop_too() -> None:
    lines = [
        f"2024-05-01T12:00:00.000000000Z container kill {_WEB} (image=x, name=web, signal=15)",
        f"2024-05-01T12:00:01.000000000Z container die {_WEB} (exitCode=143, image=x, name=web)",
        # A Windows container's exit code (0xC0000005) does not fit the column: unknown, not 0.
        f"2024-05-01T12:05:00.000000000Z container die {_WEB} (exitCode=3221225477, image=x, name=web)",
    ]
    events = _lines_parsed(lines, "docker-events.log")
    stopped = events.row(1, named=True)
    assert (stopped["kind"], stopped["severity"], stopped["exit_code"]) == ("log", "warning", 143)
    assert json.loads(stopped["attrs"])["signal"] == "SIGTERM"
    assert events.row(2, named=True)["exit_code"] is None


def test_docker_json_events_whose_labels_hold_braces_keep_their_exit_code() -> None:
    ports = '[{\\"name\\":\\"notebook-port\\",\\"containerPort\\":8888,\\"protocol\\":\\"TCP\\"}]'
    line = (
        f'{{"status":"die","id":"{_WEB}","from":"nb","Type":"container","Action":"die","Actor":{{"ID":"{_WEB}","Attributes":'
        f'{{"annotation.io.kubernetes.container.ports":"{ports}","exitCode":"137","image":"nb","io.kubernetes.pod.name":"jupyter-x",'
        f'"name":"k8s_notebook_jupyter-x_jhub_efa75591-6e89-11e9-bf85-001a4a16016d_0"}}}},"scope":"local","time":1556989545,"timeNano":1556989545011072877}}  '
    )
    died = rca.parse_text(line + "\n", file="docker-events.json", reference_time=FIXED_MTIME).row(0, named=True)
    assert (died["kind"], died["exit_code"], died["pod"], died["container"]) == ("process_killed", 137, "jupyter-x", "notebook")


def test_an_application_log_whose_lines_read_like_events_stays_the_applications() -> None:
    lines = [f"2024-05-01T12:{i // 60:02d}:{i % 60:02d}.123Z INFO worker {i} processed batch" for i in range(40)]
    lines[5::6] = [f"2024-05-01T12:00:{i:02d}.123Z node joined worker-{i} (10.0.0.{i})" for i in range(len(lines[5::6]))]
    lines[20] = "2024-05-01T12:00:20.123Z ERROR worker crashed: connection to database lost"
    events = _lines_parsed(lines, "controller.log")
    assert set(events["source"]) == {"pipeline"} and events.height == 40
    assert events.filter(pl.col("line") == 21)["severity"].to_list() == ["error"]


def test_a_capitalised_word_opening_a_message_is_no_level_unless_marked_as_one() -> None:
    messages = ["CRITICAL section entered by worker 3", "ERROR count for last hour: 0", "DEBUG mode enabled by config", "E1000 12:00:00 link down"]
    text = "".join(f"May  1 12:00:0{i} host myapp[1]: {message}\n" for i, message in enumerate(messages))
    assert rca.parse_text(text, file="syslog", reference_time=FIXED_MTIME)["severity"].to_list() == [None] * 4


def test_rsyslog_escaped_newlines_give_a_traceback_its_lines_back() -> None:
    # ceph_check's README: rsyslog wrote the Python traceback it logged as one line, each newline as "#012".
    events = _events("journal_rsyslog_escaped_newlines_traceback_01.log")
    assert events.height == 9 and set(events.select("host", "process", "pid").rows()) == {("rhel7", "ceph_check", None)}
    assert events["message"][0] == "INFO: ####################"
    traceback = events.row(8, named=True)
    assert (traceback["kind"], traceback["severity"], traceback["line"], traceback["n_lines"]) == ("traceback", "error", 9, 1)
    assert traceback["message"].splitlines()[:2] == ["ERROR: integer division or modulo by zero", "Traceback (most recent call last):"]
    assert json.loads(traceback["attrs"]) == {
        "exc_type": "ZeroDivisionError", "exc_message": "integer division or modulo by zero", "last_frame": "ceph_check.py:92 in check_keyring",
    }


def test_rsyslog_escaped_newlines_and_tabs_are_decoded_and_a_terminal_s_styling_dropped() -> None:
    text = "May  1 12:00:00 host myapp[7]: a#011b#012c #033[0m d#015\n"
    assert rca.parse_text(text, file="syslog", reference_time=FIXED_MTIME)["message"].to_list() == ["a\tb\nc  d"]


def test_rhel7_dockerd_current_lines_are_read_by_dockerds_rules() -> None:
    # A CentOS 7 Kubernetes node's syslog (a blog's paste): RHEL 7's docker package tags its daemon "dockerd-current".
    events = _events("journal_dockerd_current_rhel7_k8s_pull_error_cst_01.log")
    daemon = events.filter(pl.col("process") == "dockerd-current")
    assert daemon.select("line", "severity", "pid").rows() == [(5, "warning", 1164), (7, "error", 1164), (11, "error", 1164)]
    # Its stamps' +08:00 gives the year and the zone of every envelope of the file.
    assert set(events["ts"].dt.year()) == {2017} and events["ts"][0] == datetime(2017, 6, 12, 9, 2, 3, tzinfo=UTC)
    assert events.filter(pl.col("process") == "kubelet")["severity"].to_list() == ["error"] * 4


def test_a_message_opening_with_error_colon_is_an_error() -> None:
    # DCGM's nv-hostengine gives the journal no level: it names it first, "Error: Failed to initialize NVML".
    events = _events("journal_nv_hostengine_nvml_init_error_01.log")
    assert events.select("line", "process", "pid", "severity").rows() == [
        (1, "systemd", 1, None), (2, "nv-hostengine", 233256, "error"), (3, "nv-hostengine", 233256, "error"),
    ]
    assert set(events["host"]) == {"7420"}


@pytest.mark.parametrize(
    ("name", "entry_line", "note"),
    [
        ("journal_systemctl_status_journald_rotated_warning_01.log", 15, "Warning: Journal has been rotated since unit was started."),
        ("journal_systemctl_status_dockerd_current_hint_cst_01.log", 19, "Hint: Some lines were ellipsized, use -l to show in full."),
    ],
)
def test_a_note_of_systemctl_status_under_the_entries_is_no_line_of_the_last(name: str, entry_line: int, note: str) -> None:
    events = _events(name)
    last_entry, footer = events.row(-2, named=True), events.row(-1, named=True)
    assert (last_entry["line"], last_entry["n_lines"]) == (entry_line, 1) and "\n" not in last_entry["message"]
    assert (footer["line"], footer["n_lines"], footer["ts"], footer["process"]) == (entry_line + 1, 1, None, None)
    assert footer["message"].startswith(note)


def test_a_systemctl_status_header_dates_its_entries() -> None:
    # "Active: … since Wed 2021-11-10 13:48:36 UTC" is the only year the output has.
    events = _events("journal_systemctl_status_journald_rotated_warning_01.log").filter(pl.col("ts").is_not_null())
    assert events["ts"].to_list()[0] == datetime(2021, 11, 10, 13, 48, 36, tzinfo=UTC)
    assert set(events.select("host", "pid", "process").rows()) == {("vagrant", 415, "systemd-journald")}


def test_a_traceback_whose_every_line_has_the_envelope_is_one_traceback() -> None:
    # Ubuntu Forums, "Help debugging acpi bug" (2011): ubiquity's traceback, each of its lines under "ubiquity[4714]:".
    events = _events("journal_rsyslog_prefixed_traceback_ubiquity_01.log")
    assert events.select("line", "kind", "n_lines", "process", "pid").rows() == [
        (1, "log", 1, "ubiquity", 4714), (2, "traceback", 14, "ubiquity", 4714), (16, "log", 1, "ubiquity", 4714),
    ]
    traceback = events.row(1, named=True)
    assert (traceback["source"], traceback["severity"], traceback["host"]) == ("pipeline", "error", "ubuntu")
    assert json.loads(traceback["attrs"])["exc_type"] == "AttributeError"


def test_rsyslog5_last_message_repeated_counts_and_takes_the_repeated_lines_host() -> None:
    # Ubuntu Forums (2015): rsyslog 5.8.6 wrote "last message repeated N times" with an empty host.
    events = _events("journal_rsyslog5_last_message_repeated_empty_host_01.log")
    repeats = events.filter(pl.col("message").str.starts_with("last message repeated"))
    assert repeats.select("line", "host", "process", "pid").rows() == [
        (4, "fermmy-server", "ntop", 2298), (6, "fermmy-server", "ntop", 2298), (9, "fermmy-server", "ntop", 2298),
    ]
    assert [json.loads(attrs)["repeated"] for attrs in repeats["attrs"]] == [4, 5, 2]
    assert events.filter(pl.col("line") == 10)["process"].to_list() == ["rsyslogd"]


def test_k3s_logrus_lines_keep_their_level_and_zone() -> None:
    # k3s-io/k3s issue #1545: `journalctl -xe` of a k3s server that died at start (zh_CN months, the host at -07:00).
    events = _events("journal_k3s_logrus_fatal_raft_zh_pdt_01.log")
    k3s = events.filter(pl.col("process") == "k3s")
    assert k3s.select("line", "source", "severity", "pid", "ts_quality").rows() == [
        (7, "kubelet", "info", 5440, "exact"), (8, "kubelet", "critical", 5440, "exact"),
    ]
    assert k3s["ts"].to_list() == [datetime(2020, 3, 16, 10, 31, 9, tzinfo=UTC)] * 2
    exited = events.filter(pl.col("line") == 9).row(0, named=True)
    assert (exited["severity"], exited["exit_code"], exited["process"]) == ("error", 1, "k3s.service")
    assert events.filter(pl.col("process") == "systemd").select("line", "n_lines").rows() == [(1, 6), (10, 8), (18, 1), (19, 1)]


def test_containerd_stamps_give_a_syslog_its_zone_and_kubelet_keeps_its_klog_time() -> None:
    # A Kubernetes install guide's /var/log/syslog (2022): containerd's CNI failure at +08:00, then kubelet's klog lines about it.
    events = _events("journal_syslog_containerd_cni_sandbox_cst_01.log")
    assert events.select("line", "source", "process", "pid", "severity").rows() == [
        (1, "syslog", "containerd", 62104, "info"), (2, "syslog", "containerd", 62104, "error"),
        (3, "syslog", "run-netns-cni\\x2df682c24c\\x2db5d6\\x2d9ba2\\x2d2543\\x2d78324d41d347.mount", None, None),
        (4, "syslog", "run-netns-cni\\x2df682c24c\\x2db5d6\\x2d9ba2\\x2d2543\\x2d78324d41d347.mount", None, None),
        (5, "syslog", "containerd", 62104, "error"), *((line, "kubelet", "kubelet", 65352, "error") for line in range(6, 10)),
    ]
    assert events["ts"][0] == datetime(2022, 9, 4, 12, 4, 57, tzinfo=UTC)
    assert events["ts"][5] == datetime(2022, 9, 4, 12, 4, 57, 411790, tzinfo=UTC)
    failed = events.row(4, named=True)
    assert (failed["pod"], failed["namespace"], failed["pod_uid"]) == ("demoapp-55c5f88dcb-kl7mf", "default", "5dfc305b-d641-4d2c-8199-7655b7a1ba32")
    assert set(events["pod"][6:]) == {"demoapp-55c5f88dcb-kl7mf"}


@pytest.mark.parametrize(
    ("name", "program", "severities"),
    [
        # A blog post "Common operations on Bottlerocket" (2022): `journalctl -u kubelet.service`, host-ctr pulling the pause image.
        ("journal_bottlerocket_host_ctr_logrus_pause_pull_01.log", "host-ctr", ["info"] * 4),
        ("journal_k3s_logrus_fatal_raft_zh_pdt_01.log", "k3s", ["info", "critical"]),
    ],
)
def test_a_programs_logrus_level_is_its_lines_severity(name: str, program: str, severities: list[str]) -> None:
    assert _events(name).filter(pl.col("process") == program)["severity"].to_list() == severities


def test_runtime_lines_name_the_container_in_their_own_wordings() -> None:
    # containerd's "shim reaped" id=<id> and dockerd's API path / leading id (a CentOS 7 /var/log/messages, 2020): the container
    # whose start failed; the kind node's containerd quotes the id (kueue #9328); OpenShift's dockerd-current (kubernetes #55020).
    failed_start = "029ce88eb5e7ed97a7a52134c5ca26748e104d90cc3ba5434d2ef501b4d74b85"
    events = _events("journal_rsyslog_dockerd_api_start_oci_failed_cst_01.log")
    assert events.select("line", "process", "severity", "container_id").rows() == [
        (1, "containerd", "info", failed_start), (2, "dockerd", "error", None), (3, "dockerd", "error", None), (4, None, None, None),
        (5, "dockerd", "error", failed_start), (6, "dockerd", "error", failed_start), (7, "kubelet", "error", None),
    ]
    assert events["ts"][5] == datetime(2020, 6, 30, 16, 45, 31, tzinfo=UTC)
    kind = _events("journal_kind_containerd_pipe_stdout_start_failed_01.log")
    assert set(kind.select("severity", "container_id").rows()) == {("error", "00498b3fed0360310f38eeaa92cdbfc11ccd99d49a1b5ad9e04221df45c1e8d3")}
    openshift = _events("journal_dockerd_current_api_no_such_container_ocp_01.log")
    assert set(openshift["container_id"]) == {"59bc08ce35711b2812e908b311bf4574f9c7412a1534e40ababfe159c86eaf3a"}
    # A swarm node's dockerd writing no time= to the journal, its lines cut at the terminal's width (public-code index id 4000418077).
    swarm = _events("journal_dockerd_no_time_swarm_start_failed_truncated_01.log")
    resolved, started = "a8fb2e8227966d0e749225b1c2feddd188832e60614b1d579d55c33f0a555f9e", "438df95d9494edfe68b7078928d8c59554f43586eaa915306937c80386c041a8"
    assert swarm.select("severity", "container_id").rows() == [
        ("error", None), ("warning", None), ("error", resolved), ("error", None), ("error", started), ("error", started), ("info", None),
    ]


def test_crio_names_the_pod_sandbox_it_stops_as_a_sandbox() -> None:
    # cri-o #6699 (2023): after `systemctl restart crio` it stops a pod's sandbox and removes its container; the CRI request's
    # id=<uuid> is no container.
    events = _events("journal_crio_restart_stop_sandbox_remove_container_01.log").filter(pl.col("process") == "crio")
    sandbox, removed = "c826ce942387614e0910805bd1b9e26c7dc11140fc4ed6a5f0a69432e45e6f7f", "416eb6feb1891101c5bb8a1ed2d7d7b87e618ee9e6da8838955e9517c27ec437"
    assert events.select("container_id", "severity").rows() == [(sandbox, "info"), (sandbox, "info"), (removed, "info")]
    assert [json.loads(attrs or "{}").get("sandbox") for attrs in events["attrs"]] == [True, True, None]


def test_a_services_own_level_wins_over_the_journals_stdout_priority() -> None:
    # rcourtman/Pulse #1814 (2026): a service's stdout, each line a JSON logger's record opening with its level.
    assert _events("journal_reverse_json_logger_level_warn_ellipsized_01.log")["severity"].to_list() == ["warning", "warning"]
    # journald gives every line a service writes to stdout PRIORITY 6 (info): the level the line names wins, for a program
    # without rules of its own (logrus, klog, a JSON logger); an entry's explicit other PRIORITY stands.
    def entry(priority: int, message: str) -> str:
        return json.dumps({
            "__REALTIME_TIMESTAMP": "1678474432411076", "PRIORITY": str(priority), "SYSLOG_IDENTIFIER": "agent", "_PID": "1080",
            "_HOSTNAME": "gpu-node-1", "_TRANSPORT": "stdout", "MESSAGE": message,
        })

    lines = [
        entry(6, 'time="2023-03-10T18:53:52.411009960Z" level=error msg="collecting stats failed"'),
        entry(6, "E0310 18:53:52.411009    1080 agent.go:12] lost the device plugin socket"),
        entry(6, '{"level":"warn","msg":"slow scrape"}'),
        entry(6, "plain line"),
        entry(3, 'time="2023-03-10T18:53:52.411009960Z" level=info msg="written to stderr"'),
    ]
    events = _lines_parsed(lines, "journal.json")
    assert events["severity"].to_list() == ["error", "error", "warning", "info", "error"]


def test_a_gpu_pods_sandbox_without_the_nvidia_runtime_is_an_error_naming_the_pod() -> None:
    # NVIDIA/gpu-operator #432 (2022): containerd has no "nvidia" runtime configured for the GPU feature discovery pod.
    event = _events("journal_containerd_no_nvidia_runtime_sandbox_gpu_operator_01.log").row(0, named=True)
    assert (event["severity"], event["process"], event["pid"], event["host"]) == ("error", "containerd", 10237, "beck")
    assert (event["pod"], event["namespace"], event["pod_uid"]) == ("gpu-feature-discovery-qfjgk", "gpu-operator", "02c7d4ad-db02-4145-846b-616a94416008")
    # Its logrus stamp says +02:00, two hours before the envelope read in UTC: one line is too few to move the host's
    # times, and a time two hours off is no exact one.
    assert (event["ts"], event["ts_quality"]) == (datetime(2022, 11, 2, 18, 0, 58, tzinfo=UTC), "year_inferred")


def test_a_hostless_repeat_line_keeps_the_lines_that_go_on_its_message() -> None:
    # rsyslog 5 wrote the repeat with an empty host: the host it takes from the repeated line is its indented line's too.
    text = "Jan  5 06:43:10 h1 ntop[2298]: some message here\nJan  5 06:43:16  ntop[2298]: last message repeated 4 times\n    continuation text\n"
    events = rca.parse_text(text, file="messages", year=2026)
    assert events.select("line", "host", "n_lines").rows() == [(1, "h1", 1), (2, "h1", 2)]
    assert json.loads(events["attrs"][1])["repeated"] == 4


def test_a_docker_log_driver_entry_is_the_containers_line() -> None:
    # moby/moby#20443 (thaJeztah, 2017): `journalctl -o json CONTAINER_TAG=mysql1`, Docker's journald driver writing a mysql
    # container's stderr as PRIORITY 3 under dockerd's _PID and _COMM, no SYSLOG_IDENTIFIER: the line is the container's.
    event = _events("journal_json_docker_driver_priority3_mysql_container_01.log").row(0, named=True)
    assert (event["source"], event["format"], event["kind"], event["severity"]) == ("syslog", "journal_json", "log", "error")
    assert (event["process"], event["pid"], event["container"], event["host"]) == ("mysql1", None, "mysql1", "ubuntu-2gb-ams3-01")
    assert event["container_id"] == "141fbe360a8789eebfcf20674e16669c761a19906c1756461040f80a2d520335"
    assert (event["ts"], event["ts_quality"], event["n_lines"]) == (datetime(2017, 10, 11, 21, 47, 23, 429858, tzinfo=UTC), "exact", 1)


def test_a_log_drivers_stderr_priority_gives_way_to_the_lines_own_level() -> None:
    # Docker's and Podman's journald drivers give every stderr line PRIORITY 3 (moby#23645, podman#20728): a container's line that
    # names its own level keeps it; one that names none stays an error. An entry without the driver's fields keeps its PRIORITY 3.
    def entry(priority: int, message: str, **fields: str) -> str:
        return json.dumps({
            "__REALTIME_TIMESTAMP": "1700503387598231", "PRIORITY": str(priority), "SYSLOG_IDENTIFIER": "conmon", "_COMM": "conmon",
            "_PID": "4242", "_HOSTNAME": "gpu-node-1", "_TRANSPORT": "journal", "MESSAGE": message, **fields,
        })

    driver = {"CONTAINER_ID_FULL": "b3679130b68a0d76212e85c8547895597a8001c0c6ba5d8e6c85b00ac96260ea", "CONTAINER_NAME": "trainer"}
    lines = [
        entry(3, 'time="2023-11-20T18:03:07Z" level=info msg="serving"', **driver),
        entry(3, "W1120 18:03:07.000001       1 main.go:12] slow scrape", **driver),
        entry(3, "this is an error", **driver),
        entry(6, "ERROR: lost the device", **driver),
        entry(3, 'time="2023-11-20T18:03:07Z" level=info msg="a service\'s stderr"', SYSLOG_IDENTIFIER="agent", _COMM="agent"),
    ]
    events = _lines_parsed(lines, "journal.json")
    assert events.select("severity", "process", "pid", "container").rows() == [
        ("info", "trainer", None, "trainer"), ("warning", "trainer", None, "trainer"), ("error", "trainer", None, "trainer"),
        ("error", "trainer", None, "trainer"), ("error", "agent", 4242, None),
    ]


def test_a_log_drivers_pretty_record_names_its_container() -> None:
    # The same entry as `journalctl -o json-pretty` prints it (podman#20728's form): one record, the container's.
    record = [
        "{", '        "PRIORITY" : "3",', '        "__REALTIME_TIMESTAMP" : "1700503387598231",', '        "SYSLOG_IDENTIFIER" : "conmon",',
        '        "_COMM" : "conmon",', '        "_PID" : "4242",', '        "_HOSTNAME" : "gpu-node-1",',
        '        "CONTAINER_ID_FULL" : "b3679130b68a0d76212e85c8547895597a8001c0c6ba5d8e6c85b00ac96260ea",',
        '        "CONTAINER_NAME" : "trainer",', '        "MESSAGE" : "[INFO] epoch 3 done"', "}",
    ]
    event = _lines_parsed(record, "journal.json").row(0, named=True)
    assert (event["severity"], event["process"], event["pid"], event["container"], event["n_lines"]) == ("info", "trainer", None, "trainer", 11)
    assert event["container_id"] == "b3679130b68a0d76212e85c8547895597a8001c0c6ba5d8e6c85b00ac96260ea"


def test_syslogds_own_tagless_lines_are_lines_of_their_own() -> None:
    # Ubuntu Forums (charlesg3, 2007): sysklogd's "last message repeated N times" with the host and no program tag, also after
    # a dhclient line, which it must not go on.
    events = _events("journal_sysklogd_tagless_last_message_repeated_dhclient_01.log")
    assert events.select("line", "source", "process", "host", "n_lines", "ts_quality").rows() == [
        (line, "syslog", process, "bonham32", 1, "year_from_mtime")
        for line, process in enumerate(["syslogd", "syslogd", "dhclient", "dhclient", "syslogd", "syslogd"], start=1)
    ]
    assert [json.loads(attrs)["repeated"] for attrs in events.filter(pl.col("process") == "syslogd")["attrs"]] == [4, 2, 5, 4]
    assert events["ts"][4] == datetime(2026, 7, 30, 3, 39, 48, tzinfo=UTC)


def test_syslogds_exit_and_restart_lines_open_a_mixed_kernel_log() -> None:
    # Ubuntu Forums (pm124493, 2005): sysklogd 1.4.1's own lines ("exiting on signal 15", "syslogd 1.4.1#16ubuntu6: restart.",
    # a repeat) among the kernel's: each keeps its time and host.
    events = _events("journal_sysklogd_exiting_restart_kernel_repeat_01.log")
    assert events.select("line", "source", "process", "message").rows() == [
        (1, "syslog", "syslogd", "exiting on signal 15"), (2, "syslog", "syslogd", "syslogd 1.4.1#16ubuntu6: restart."),
        (3, "kernel", None, "Device sr0 not ready."), (4, "kernel", None, "Device sr0 not ready."),
        (5, "syslog", "syslogd", "last message repeated 2 times"),
        (6, "kernel", None, "cdrom: This disc doesn't have any tracks I recognize!"),
    ]
    assert events["ts"].to_list()[:2] == [datetime(2026, 10, 7, 7, 35, 18, tzinfo=UTC), datetime(2026, 10, 7, 7, 35, 19, tzinfo=UTC)]
    assert set(events["host"]) == {"localhost"}


def test_a_dockershim_nodes_log_driver_entries_name_their_pod_and_json_level() -> None:
    # Public-code index file 40633699883 (a journald forwarder's Go test data, 2019): Docker's journald driver on a Kubernetes node
    # (dockershim names "k8s_<container>_<pod>_<namespace>_<uid>_<attempt>", the tag the image); the second entry's stderr
    # PRIORITY 3 gives way to its logrus-JSON level, which sorts after "@time" and "host".
    events = _events("journal_json_docker_driver_k8s_dockershim_names_json_level_01.log")
    assert events.select("line", "severity", "container", "pod", "namespace", "pod_uid", "pid").rows() == [
        (1, "info", "content-public-read", "content-public-read-764898846b-vbq7d", "default", "16157552-5786-11e9-8de2-067a2aa9d532", None),
        (2, "info", "relations-api", "relations-api-f7f764695-h9d6f", "default", "1d72e448-5786-11e9-8de2-067a2aa9d532", None),
    ]
    assert events["process"][1] == "coco/relations-api@sha256:17c9e0533e744b8d3611705ac9654969f6cd1b4805f42dd6ebea6c65d124784e"
    assert events["container_id"][1] == "f665773e38e3311516d57ca5890aeee3484c2f1c0797b5b08769ef4e31bcb761"
    assert events["ts"][1] == datetime(2019, 4, 9, 11, 50, 39, 106726, tzinfo=UTC)


def test_a_dgx_syslog_of_a_host_engine_killed_by_segv_and_restarted() -> None:
    # NVIDIA/DCGM #155 (krono): nvidia-dcgm.service's nv-hostengine died of SIGSEGV and was restarted, the NVSwitch devices
    # reopened in the kernel's lines between systemd's and nv-hostengine's.
    events = _events("journal_syslog_dcgm_hostengine_segv_restart_nvswitch_01.log")
    died = events.row(1, named=True)
    assert (died["kind"], died["severity"], died["process"], died["exit_code"], died["pid"]) == ("log", "error", "nvidia-dcgm.service", 139, None)
    assert json.loads(died["attrs"]) == {"unit": "nvidia-dcgm.service", "signal": "SIGSEGV"}
    assert events.filter(pl.col("source") == "kernel")["line"].to_list() == [7, 8, 9, 10, 11, 12, 17]
    assert events.filter(pl.col("process") == "nv-hostengine").select("line", "pid", "message").rows() == [
        (13, None, "DCGM initialized"), (14, 1298239, "Started host engine version 3.3.5 using port number: 5555"),
    ]
    assert set(events["host"]) == {"gx01"} and events["n_lines"].to_list() == [1] * 17


def test_a_line_whose_envelope_gives_no_time_takes_the_runtimes_own_zoned_stamp() -> None:
    # deislabs/containerd-wasm-shims #169 (FerrazArthur): dockerd's lines in `journalctl -o short-monotonic`, seconds since a
    # boot of unknown time; each opens with logrus' zoned stamp, the moment dockerd wrote it. The seconds since boot are kept.
    events = _events("journal_monotonic_dockerd_logrus_stamp_wasm_shim_01.log")
    assert events["ts"].to_list()[:2] == [datetime(2023, 10, 27, 10, 37, 43, 703523, tzinfo=UTC), datetime(2023, 10, 27, 10, 37, 43, 706493, tzinfo=UTC)]
    assert set(events["ts_quality"]) == {"exact"} and set(events["severity"]) == {"debug"}
    assert events["ts_raw"][0] == "2023-10-27T07:37:43.703523766-03:00" and events["boot_seconds"][0] == 1123.12081
    # A program's tag alone ("dockerd[1471]: …" as a user cut it from a journal) gives no time either; podman's Go stamp opens its
    # events (about the container, not podman's process); a line of no stamp keeps its unknown time.
    tagged = _lines_parsed(
        [
            "Oct 27 07:37:40 host systemd[1]: Starting Docker Application Container Engine...",
            'dockerd[1471]: time="2023-10-27T07:37:43.706493849-03:00" level=error msg="Handler for POST /v1.43/containers/create returned error"',
            "podman[4227]: 2025-12-21 18:01:34.529303815 -0500 EST m=+11.707569919 container died 1c3b4c5d6e7f (image=alpine, name=x)",
            "containerd[12]: shim disconnected",
        ],
        "syslog",
    )
    assert tagged.select("line", "process", "pid", "ts", "ts_quality").rows()[1:] == [
        (2, "dockerd", 1471, datetime(2023, 10, 27, 10, 37, 43, 706493, tzinfo=UTC), "exact"),
        (3, None, None, datetime(2025, 12, 21, 23, 1, 34, 529303, tzinfo=UTC), "exact"),
        (4, "containerd", 12, None, "missing"),
    ]
