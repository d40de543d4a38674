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
