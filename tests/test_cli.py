"""The CLI through typer's test runner: options documented, summary printed, exit codes right."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import rca
from rca.cli import app

runner = CliRunner()


def test_help_documents_every_ingest_option() -> None:
    result = runner.invoke(app, ["ingest", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--store", "--format", "--host", "--tz", "--year", "--boot-time", "--workers", "--json", "--window", "--no-correlate"):
        assert option in result.output


def test_ingest_prints_json_summary(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "node-7"
    logs.mkdir(parents=True)
    (logs / "train.log").write_text(
        "2026-11-30 10:00:00,000 INFO step 10 loss 1.25\n"
        "2026-11-30 10:00:05,000 ERROR DataLoader worker (pid 4242) is killed by signal: Killed.\n"
    )
    result = runner.invoke(app, ["ingest", str(tmp_path / "logs"), "--store", str(tmp_path / "store"), "--json", "--workers", "1"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["events"] == 2 and summary["hosts"] == ["node-7"] and summary["oom_class_events"] == 1
    assert summary["files_without_host"] == 0
    assert summary["time_range"] == ["2026-11-30T10:00:00+00:00", "2026-11-30T10:00:05+00:00"]
    killed = rca.open_store(tmp_path / "store").events().filter(kind="dataloader_killed")
    assert killed["pid"].to_list() == [4242]
    assert summary["correlation"]["incidents"] == 1
    incident = rca.open_store(tmp_path / "store").incidents().row(0, named=True)
    assert (incident["host"], incident["anchor_kind"], incident["pid"]) == ("node-7", "dataloader_killed", 4242)


def test_human_summary_names_problem_files(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "ok.log").write_text("2026-11-30T10:00:00Z hello\n")
    (logs / "blob.bin").write_bytes(b"\x00" * 64)
    result = runner.invoke(app, ["ingest", str(logs), "--store", str(tmp_path / "store"), "--workers", "1"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "files with problems" in result.output and "blob.bin" in result.output and "binary" in result.output


def test_human_summary_ends_with_what_to_run_on_the_latest_incident(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "train.log").write_text(
        "2026-11-30 10:00:05,000 ERROR DataLoader worker (pid 4242) is killed by signal: Killed.\n"
        "2026-11-30 11:00:05,000 ERROR DataLoader worker (pid 5151) is killed by signal: Killed.\n"
    )
    result = runner.invoke(app, ["ingest", str(logs), "--store", str(tmp_path / "store"), "--workers", "1"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    latest = rca.open_store(tmp_path / "store").incidents().filter(pid=5151)["incident_id"].item()
    assert "file(s) name no host" in result.output
    assert f"rca explain {latest} --store {tmp_path / 'store'} walks the latest (dataloader_killed)" in result.output


def test_missing_folder_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", str(tmp_path / "absent"), "--store", str(tmp_path / "store")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_nothing_readable_exits_1(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "blob.bin").write_bytes(b"\x00" * 64)
    result = runner.invoke(app, ["ingest", str(logs), "--store", str(tmp_path / "store"), "--workers", "1"])
    assert result.exit_code == 1


def test_unknown_format_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("x\n")
    result = runner.invoke(app, ["ingest", str(tmp_path / "a.log"), "--store", str(tmp_path / "store"), "--format", "nope"])
    assert result.exit_code == 2 and "unknown format 'nope'" in result.output


def test_kb_commands() -> None:
    validated = runner.invoke(app, ["kb", "validate"])
    assert validated.exit_code == 0 and "valid (18 entries)" in validated.output
    shown = runner.invoke(app, ["kb", "show", "gpu-hardware-fault"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "Xid" in shown.output
    missing = runner.invoke(app, ["kb", "show", "no-such-mode"])
    assert missing.exit_code == 2


def test_piped_incident_table_keeps_whole_ids_and_times(tmp_path: Path) -> None:
    # Piped (no terminal, no COLUMNS), rich would squeeze the table into 80 columns and cut the ids the next command needs.
    logs = tmp_path / "logs" / "gpu-node-with-a-long-name-07.us-central1-a.c.ml-training-prod.internal"
    logs.mkdir(parents=True)
    (logs / "train.log").write_text(
        "2026-11-30 10:00:05,000 ERROR DataLoader worker (pid 4242) is killed by signal: Killed.\n"
        "2026-11-30 11:00:05,000 ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity "
        "of 79.15 GiB of which 1.06 GiB is free.\n"
    )
    store = tmp_path / "store"
    assert runner.invoke(app, ["ingest", str(tmp_path / "logs"), "--store", str(store), "--workers", "1"]).exit_code == 0
    for narrow in ({"COLUMNS": None}, {"COLUMNS": "60"}):
        result = runner.invoke(app, ["incidents", "--store", str(store)], env=narrow)
        assert result.exit_code == 0, result.output
        for incident in rca.open_store(store).incidents()["incident_id"]:
            assert incident in result.output
        assert "2026-11-30 10:00:05" in result.output
    latest = rca.open_store(store).incidents().sort("start")["incident_id"][-1]
    drawn = runner.invoke(app, ["timeline", latest, "--store", str(store)], env={"COLUMNS": None})
    assert "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" in drawn.output


def test_ingest_names_a_host_whose_stamps_state_another_zone_and_the_command_that_fixes_it(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "gpu-eu-1"
    logs.mkdir(parents=True)
    (logs / "journal.log").write_text("2026-12-01T03:17:05+0100 gpu-eu-1 systemd[1]: Started Session 5 of User root.\n")
    (logs / "kern.log").write_text("Dec  1 03:18:01 gpu-eu-1 kernel: Memory cgroup out of memory: Killed process 63214 (python)\n")
    result = runner.invoke(app, ["ingest", str(tmp_path / "logs"), "--store", str(tmp_path / "store"), "--workers", "1"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "gpu-eu-1 states its zone as UTC+01:00 (1 stamp(s) in gpu-eu-1/journal.log…) but 1 times in 1 file(s) (gpu-eu-1/kern.log…)" in result.output
    assert f"run rca ingest {tmp_path / 'logs'} --tz +01:00 (files read at another --tz are read again)" in result.output


def _ingest(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / "logs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "logs" / name).write_text(text)
    store = tmp_path / "store"
    result = runner.invoke(app, ["ingest", str(tmp_path / "logs"), "--store", str(store), "--workers", "1"])
    assert result.exit_code == 0, result.output
    return store


OOM_REPORT = """\
2026-12-04T18:04:46,836254+00:00 pt_data_worker invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
2026-12-04T18:04:46,836270+00:00 CPU: 0 UID: 0 PID: 575 Comm: pt_data_worker Tainted: G           O        6.18.44 #1
2026-12-04T18:04:46,836277+00:00 Call Trace:
2026-12-04T18:04:46,836279+00:00  <TASK>
2026-12-04T18:04:46,836280+00:00  dump_stack_lvl+0x5d/0x80
2026-12-04T18:04:46,836281+00:00  oom_kill_process+0xfe/0x210
2026-12-04T18:04:46,836282+00:00  </TASK>
2026-12-04T18:04:46,836300+00:00 memory: usage 4194304kB, limit 4194304kB, failcnt 5708
2026-12-04T18:04:46,836400+00:00 Tasks state (memory values in pages):
2026-12-04T18:04:46,836401+00:00 [  pid  ]   uid  tgid total_vm      rss rss_anon rss_file rss_shmem pgtables_bytes swapents oom_score_adj name
2026-12-04T18:04:46,836500+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=train-job,mems_allowed=0,oom_memcg=/train-job,task_memcg=/train-job,task=pt_data_worker,pid=575,uid=0
2026-12-04T18:04:46,836546+00:00 Memory cgroup out of memory: Killed process 575 (pt_data_worker) total-vm:19341204kB, anon-rss:2244092kB, file-rss:79312kB, shmem-rss:128kB, UID:0 pgtables:5176kB oom_score_adj:0
"""


def test_timeline_lists_an_oom_report_by_its_first_line_and_sub_second_times_with_milliseconds(tmp_path: Path) -> None:
    # The OOM killer's report is one event; its last line is a stack frame or the process table's header, which says nothing.
    store = _ingest(tmp_path, {"gpu-b/dmesg_iso.txt": OOM_REPORT})
    incident = rca.open_store(store).incidents()["incident_id"].item()
    drawn = runner.invoke(app, ["timeline", incident, "--store", str(store)], env={"COLUMNS": "220"})
    assert drawn.exit_code == 0, drawn.output
    assert "oom_invoked          pt_data_worker invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)" in drawn.output
    assert "[  pid  ]" not in drawn.output and "uid  tgid" not in drawn.output
    # the whole incident lasts 0.3 ms: whole seconds would label every row and the axis +00:00
    assert "+00:00.000  kernel" in drawn.output


def test_timeline_of_an_incident_without_times_still_lists_its_events(tmp_path: Path) -> None:
    describe = (
        "Name:           treetracker-pgpool-598947fd8f-vzvkq\nNamespace:      pgpool\nPriority:       0\n"
        "Node:           cloud-services-node-pool-8ld4g/\nLabels:         app=treetracker-pgpool\n"
        "Status:         Failed\nReason:         Evicted\n"
        "Message:        The node was low on resource: memory. Container treetracker-pgpool was using 1275700Ki, which exceeds its request of 0.\n"
        "IP:\nControlled By:  ReplicaSet/treetracker-pgpool-598947fd8f\n"
    )
    store = _ingest(tmp_path, {"gpu-d/kubectl_describe_pod_evicted.txt": describe})
    incidents = rca.open_store(store).incidents()
    assert incidents["start"].to_list() == [None]
    drawn = runner.invoke(app, ["timeline", incidents["incident_id"].item(), "--store", str(store)], env={"COLUMNS": "220"})
    assert drawn.exit_code == 0, drawn.output
    assert "no linked event has a time" in drawn.output
    assert "?  k8s            anchor   eviction             Message: The node was low on resource: memory." in drawn.output
    assert "Controlled By" not in drawn.output


def test_incident_signals_read_as_words_with_the_span_as_a_duration(tmp_path: Path) -> None:
    xids = "".join(f"Mar  3 04:{27 + minute}:08 node-a kernel: NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, "
                   "Timeout waiting for RPC from GSP!\n" for minute in (0, 2, 4))
    xids += "Mar  3 04:31:38 node-a kernel: NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout waiting for RPC from GSP!\n"
    nccl = ("2026-06-26 06:24:44,100 [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE) "
            "ran for 600000 milliseconds before timing out.\n"
            "2026-06-26 06:24:46,100 [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE) "
            "ran for 600000 milliseconds before timing out.\n")
    store = _ingest(tmp_path, {"node-a/kern.log": xids, "gpu-e/train.log": nccl})
    listed = runner.invoke(app, ["incidents", "--store", str(store)], env={"COLUMNS": "250"})
    assert listed.exit_code == 0, listed.output
    rows = [line.split("│")[1:-1] for line in listed.output.splitlines() if line.startswith("│ inc-")]
    signals = {row[3].strip(): row[-1][1:].rstrip() for row in rows}  # columns: incident, start, host, kind, …, signals
    # no signal but a span: the cell starts with the span, not with a blank; spans in words, not as "+04:30" offsets
    assert signals == {"xid": "xid 119 span 4 min 30 s", "nccl_timeout": "span 2 s"}
