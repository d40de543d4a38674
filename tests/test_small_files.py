"""Small files read together (rca._small_files) give what reading each alone gives."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rca
from rca import _small_files, schema, sources
from rca.ingest import FileTask, IngestOptions, Previous
from rca.sources._base import ParseContext, Parsed, parse_apart
from tests.conftest import DATA, fail_parsing_on, fixture_path
from tests.test_real_logs import EXPECTED, SAMPLE_NAMES

PER_RUN_COLUMNS = ("run_id", "parts")


def _ingest(root: Path, store: Path, **how: object) -> tuple[pl.DataFrame, pl.DataFrame]:
    rca.ingest(root, store, **how)
    opened = rca.open_store(store)
    return opened.events().sort("event_id"), opened.manifest().drop(*PER_RUN_COLUMNS).sort("path")


def _alone(root: Path, store: Path, monkeypatch: pytest.MonkeyPatch, **how: object) -> tuple[pl.DataFrame, pl.DataFrame]:
    with monkeypatch.context() as patch:
        patch.setattr(_small_files, "SMALL_FILE_BYTES", -1)  # no file is small: each is read alone
        return _ingest(root, store, workers=1, **how)


def _stamp(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


# Every tenth fixture (by path) is also read alone: reading each alone costs a parse per file (a third of them took
# 37 s of the suite), and it is what reading together must equal. What the others give is checked elsewhere: the real
# samples' expected events in tests/test_real_logs.py's flat folder, the other fixtures by their sources' tests.
ALONE_STRIDE = 10


def _fixtures() -> list[Path]:
    return sorted(p for p in DATA.rglob("*") if p.is_file())


def _copy_fixtures(root: Path, numbered: list[tuple[int, Path]]) -> Path:
    """The fixtures on two hosts, with mtimes in three different years, each by its number in the whole list."""
    for number, path in numbered:
        host = root / f"node-{number % 2}" / path.parent.name
        host.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, host / path.name)
        _stamp(host / path.name, datetime(2023 + number % 3, 6, 1, tzinfo=UTC))
    return root


@pytest.fixture(scope="module")
def fixtures_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every fixture of every source, on two hosts, with mtimes in three different years."""
    return _copy_fixtures(tmp_path_factory.mktemp("small") / "logs", list(enumerate(_fixtures())))


@pytest.fixture(scope="module")
def read_together(fixtures_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, pl.DataFrame, list[int]]:
    """The serial ingest of the folder, and the number of files of each parse of files together."""
    calls: list[int] = []
    parse_together = _small_files._parse_together
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_small_files, "_parse_together", lambda reads, writer: calls.append(len(reads)) or parse_together(reads, writer))
        return *_ingest(fixtures_folder, tmp_path_factory.mktemp("together") / "store", workers=1), calls


def test_a_folder_of_every_fixture_reads_the_same_together_and_alone(
    read_together: tuple[pl.DataFrame, pl.DataFrame, list[int]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sampled = list(enumerate(_fixtures()))[::ALONE_STRIDE]
    alone, alone_files = _alone(_copy_fixtures(tmp_path / "logs", sampled), tmp_path / "alone", monkeypatch)
    together, together_files, _ = read_together
    assert_frame_equal(together.filter(pl.col("file").is_in(alone_files["path"].implode())), alone)
    assert_frame_equal(together_files.filter(pl.col("path").is_in(alone_files["path"].implode())), alone_files)
    assert {f"node-{number % 2}/{path.parent.name}/{path.name}" for number, path in sampled} <= set(alone_files["path"])
    assert alone_files.filter(pl.col("source") == "pipeline").height >= 20


def test_every_expected_fact_of_the_real_samples_is_in_the_folder_read_together(
    read_together: tuple[pl.DataFrame, pl.DataFrame, list[int]],
) -> None:
    # The folder decides an event's host here (test_real_logs reads the host a line names) and its path the file; a file
    # read whole (a JSON document) counts as one line, so its event covers one.
    events, files, _ = read_together
    by_name = events.with_columns(name=pl.col("file").str.split("/").list.last()).partition_by("name", as_dict=True)
    read_whole = set(files.filter(pl.col("lines") == 1)["path"].str.split("/").list.last())
    missing = []
    for row in EXPECTED:
        ignored = {"file", "host", *(["n_lines"] if row["file"] in read_whole else [])}
        wanted = {column: value for column, value in row.items() if column not in ignored}
        events = by_name.get((row["file"],), pl.DataFrame())
        if events.is_empty() or events.filter(*[pl.col(column) == value for column, value in wanted.items()]).is_empty():
            missing.append(row)
    assert missing == []


def test_the_files_are_parsed_together_and_worker_processes_read_the_same_groups(
    fixtures_folder: Path, read_together: tuple[pl.DataFrame, pl.DataFrame, list[int]], tmp_path: Path
) -> None:
    serial, serial_files, calls = read_together
    assert max(calls) >= 10  # the pipeline fixtures of a host, in one parse
    parallel, parallel_files = _ingest(fixtures_folder, tmp_path / "parallel", workers=2)
    assert_frame_equal(serial, parallel)
    assert_frame_equal(serial_files, parallel_files)


def test_every_real_sample_ingests_ok_reconciled_and_on_its_folder_s_host(read_together: tuple[pl.DataFrame, pl.DataFrame, list[int]]) -> None:
    events, files, _ = read_together
    samples = files.filter(pl.col("path").str.split("/").list.last().is_in(SAMPLE_NAMES))
    assert samples.height == len(SAMPLE_NAMES)
    assert samples.filter(pl.col("status") != "ok").select("path", "status", "error").to_dicts() == []
    # A source that reads its host from the content (a DCGM scrape's Hostname label) names it over the folder.
    content_hosted = [source.name for source in sources.all_sources() if source.host_in_content]
    sample_events = events.filter(pl.col("file").is_in(samples["path"].to_list()) & ~pl.col("source").is_in(content_hosted))
    assert sample_events.height > 0
    assert sample_events.filter(pl.col("host") != pl.col("file").str.extract("^(node-[01])/")).height == 0
    assert events["event_id"].n_unique() == events.height


def test_every_fixture_s_lines_are_accounted_for_and_its_events_keep_the_schema_s_vocabulary(
    read_together: tuple[pl.DataFrame, pl.DataFrame, list[int]],
) -> None:
    # Each line an event covers, merged into one or skipped with a reason (the sources' own tests check the same of
    # arbitrary and spliced text, parsed by that source alone).
    events, files, _ = read_together
    balance = pl.col("events") - pl.col("derived_events") + pl.col("merged_lines") + pl.col("skipped_lines") - pl.col("lines")
    assert files.filter(balance != 0).select("path").to_series().to_list() == []
    assert set(events["kind"]) <= set(schema.KINDS) and set(events["severity"].drop_nulls()) <= set(schema.SEVERITIES)
    assert set(events["ts_quality"]) <= set(schema.TS_QUALITIES)
    assert all(isinstance(json.loads(attrs), dict) for attrs in events["attrs"].drop_nulls().unique())


def _count_reads_alone(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files read alone after all (as a list that fills while patched)."""
    alone: list[str] = []
    parse_each = _small_files._parse_each
    monkeypatch.setattr(_small_files, "_parse_each", lambda reads, writer: alone.extend(r.task.provenance for r in reads) or parse_each(reads, writer))
    return alone


# Files whose joined parse once failed or could not tell whose skipped lines were whose, and were read one by one:
# kernel files of mixed dmesg and syslog lines and `dmesg --json` ones, pipeline logs with blank envelopes, terminal
# control codes and cut lines.
TOGETHER_NOW = {
    "kernel": [
        "dmesg_hung_task_khugepaged_mixed_rfc3339_cloud_hypervisor_01.log", "journalctl_k_bugreport_grep_mixed_dmesg_01.log",
        "dmesg_json_jq_c_records_01.log", "dmesg_json_kmsg_caller_levels_util_linux_01.log", "dmesg_T_oom_ecs_al2_task_in_nr_pmds_01.log",
    ],
    "pipeline": [
        "ci_gitlab_job_killed_137.log", "nccl_terminate_interleaved_what_wrapped_140_01.log", "pytorch_dataloader_killed_01.log",
        "docker_json_file_python_traceback_01.log",
    ],
}


@pytest.mark.parametrize("source", sorted(TOGETHER_NOW))
def test_files_whose_lines_a_parse_skips_for_several_reasons_are_still_parsed_together(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "logs" / "n1"
    folder.mkdir(parents=True)
    for number, name in enumerate(TOGETHER_NOW[source]):
        shutil.copy(fixture_path(name), folder / f"{source}-{number}.log")  # one name's shape: one group
    calls: list[int] = []
    parse_together = _small_files._parse_together
    monkeypatch.setattr(_small_files, "_parse_together", lambda reads, writer: calls.append(len(reads)) or parse_together(reads, writer))
    read_alone = _count_reads_alone(monkeypatch)
    together, together_files = _ingest(tmp_path / "logs", tmp_path / "together", workers=1)
    monkeypatch.undo()
    assert (calls, read_alone) == ([len(TOGETHER_NOW[source])], [])
    assert set(together_files["source"]) == {source}
    alone, alone_files = _alone(tmp_path / "logs", tmp_path / "alone", monkeypatch)
    assert_frame_equal(together, alone)
    assert_frame_equal(together_files, alone_files)


VLLM = "INFO {stamp} llm_engine.py:447] # GPU blocks: 1000, # CPU blocks: 512\n"


def test_a_yearless_time_takes_its_own_file_s_year_and_rollover(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    # a.log runs over New Year; b.log (dated 2025 too) starts in January: alone, it stays in 2025.
    (root / "a.log").write_text("2025-12-31 22:00:00,000 INFO start\n" + VLLM.format(stamp="12-31 23:59:58") + VLLM.format(stamp="01-01 00:00:03"))
    (root / "b.log").write_text("2025-01-01 00:00:00,000 INFO start\n" + VLLM.format(stamp="01-01 00:00:05"))
    (root / "c.log").write_text(VLLM.format(stamp="03-01 10:00:00"))  # no year: its mtime's
    _stamp(root / "c.log", datetime(2024, 6, 1, tzinfo=UTC))
    read_alone = _count_reads_alone(monkeypatch)
    together, together_files = _ingest(tmp_path / "logs", tmp_path / "together", workers=1)
    monkeypatch.undo()
    assert read_alone == []  # one parse, each file with its own year
    alone, alone_files = _alone(tmp_path / "logs", tmp_path / "alone", monkeypatch)
    assert_frame_equal(together, alone)
    assert_frame_equal(together_files, alone_files)
    vllm = together.filter(pl.col("ts_raw").str.contains("-")).sort("file", "line")
    assert [(row["file"], row["ts"].year) for row in vllm.iter_rows(named=True) if row["ts_quality"] != "exact"] == [
        ("n1/a.log", 2025), ("n1/a.log", 2026), ("n1/b.log", 2025), ("n1/c.log", 2024),
    ]


# Each file's last lines would carry meaning into the next file's first lines if a batch let them:
# an OOM block's summary onto a kill line, a GPU UUID onto an Xid on the same bus, a frame onto an
# unstamped line, a klog record onto an indented line, a journal's JSON framing onto text.
KERNEL_ENDS_IN_A_BLOCK = """\
[  100.000000] python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
[  100.000001] CPU: 3 PID: 4242 Comm: python Not tainted 5.15.0-91-generic #101-Ubuntu
[  100.000002] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=abc,mems_allowed=0,oom_memcg=/kubepods/pod1,task_memcg=/kubepods/pod1/c1,task=python,pid=4242,uid=0
[  100.100000] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, GPU has fallen off the bus.
"""
KERNEL_STARTS_MID_DUMP = """\
  ? __die+0x20/0x70
[  200.000000] Memory cgroup out of memory: Killed process 4242 (python) total-vm:1000kB, anon-rss:500kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0
[  200.500000] NVRM: GPU at PCI:0000:3b:00: GPU-11111111-2222-3333-4444-555555555555
[  201.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, GPU has fallen off the bus.
"""
SYSLOG_TEXT = "Dec 31 23:59:58 node-1 systemd[1]: Started containerd.\nDec 31 23:59:59 node-1 containerd[5]: loading plugin\n"
SYSLOG_JSON = "".join(
    json.dumps({"__REALTIME_TIMESTAMP": f"176454720{n}000000", "_HOSTNAME": "node-2", "SYSLOG_IDENTIFIER": "containerd", "_PID": "5",
                "MESSAGE": f"event {n}", "PRIORITY": "6", "_TRANSPORT": "syslog"}) + "\n"
    for n in range(3)
)
SYSLOG_STARTS_UNFRAMED = "    at the tail of a message\nJan  1 00:00:01 node-1 containerd[5]: next\n"
# A header indented after its stamp is also a dump line: alone, the dump lines below it join it.
KERNEL_STARTS_WITH_A_HEADER = """\
[  200.000000]  python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
[  200.000001] CPU: 3 PID: 4242 Comm: python Not tainted 5.15.0-91-generic #101-Ubuntu
[  200.000002] Hardware name: Amazon EC2 p4d.24xlarge/, BIOS 1.0 10/16/2017
[  200.100000] something else
"""
KLOG_END = 'I1201 03:17:05.123456    2345 kubelet.go:2404] "SyncLoop (probe)" probe="readiness" pod="ml/trainer-0"\n'
KLOG_STARTS_INDENTED = '    goroutine 1 [running]:\nI1201 03:17:06.000000    2345 kubelet.go:2404] "SyncLoop (probe)" probe="readiness" pod="ml/trainer-1"\n'


def _together_as_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **how: object
) -> tuple[list[list[str]], pl.DataFrame, pl.DataFrame]:
    """Ingest ``tmp_path/logs`` with its small files read together, none falling back to being read alone,
    and check that reading each file alone gives the same; each parse together's sources, the events, the manifest."""
    calls: list[list[str]] = []
    parse_together = _small_files._parse_together
    monkeypatch.setattr(_small_files, "_parse_together", lambda reads, writer: calls.append([r.source.name for r in reads]) or parse_together(reads, writer))
    read_alone = _count_reads_alone(monkeypatch)
    together, together_files = _ingest(tmp_path / "logs", tmp_path / "together", workers=1, **how)
    monkeypatch.undo()
    assert read_alone == []
    alone, alone_files = _alone(tmp_path / "logs", tmp_path / "alone", monkeypatch, **how)
    assert_frame_equal(together, alone)
    assert_frame_equal(together_files, alone_files)
    return calls, together, together_files


@pytest.mark.parametrize("files", [
    {"dmesg-a.log": KERNEL_ENDS_IN_A_BLOCK, "dmesg-b.log": KERNEL_STARTS_MID_DUMP},
    {"dmesg-a.log": KERNEL_ENDS_IN_A_BLOCK, "dmesg-b.log": KERNEL_STARTS_WITH_A_HEADER},
    {"syslog-a": SYSLOG_TEXT, "syslog-b.json": SYSLOG_JSON, "syslog-c": SYSLOG_STARTS_UNFRAMED},
    {"kubelet-a.log": KLOG_END + KLOG_END, "kubelet-b.log": KLOG_STARTS_INDENTED},
], ids=["kernel", "kernel-header-first", "syslog", "kubelet"])
def test_files_read_together_take_nothing_from_each_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
        _stamp(root / name, datetime(2026, 1, 2, tzinfo=UTC))
    calls, _, _ = _together_as_alone(tmp_path, monkeypatch)
    assert len(calls) == 1 and len(calls[0]) == len(files)


def test_cgroup_files_are_read_together_each_with_its_own_name_folder_and_mtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(DATA / "cgroup", tmp_path / "logs")
    files = sorted(p for p in (tmp_path / "logs").rglob("*") if p.is_file())
    for number, path in enumerate(files):
        _stamp(path, datetime(2026, 3, 1 + number, tzinfo=UTC))
    calls, together, _ = _together_as_alone(tmp_path, monkeypatch)
    assert calls == [["cgroup"] * len(files)]
    readings = together.filter(pl.col("kind") == "cgroup_memory")
    assert readings.height == len(files)
    assert readings.select(pl.col("ts").dt.day().n_unique()).item() == len(files)
    assert readings.select(pl.col("cgroup").n_unique()).item() == 4  # two folders on one host, one on each other


def test_nvidia_smi_files_are_read_together_and_a_csv_header_stops_at_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    header = "timestamp, index, memory.used [MiB], memory.total [MiB]"
    row = "2026/11/27 01:45:{:02d}.730, 0, {} MiB, 81559 MiB"
    (root / "a-query.csv").write_text("\n".join([header, row.format(1, 70000), row.format(2, 71000)]) + "\n")
    # Rows of the same shape with no header of their own (read as nvidia-smi by --format): a header in
    # another file says nothing of them.
    (root / "b-rows.csv").write_text("\n".join([row.format(3, 72000), row.format(4, 73000)]) + "\n")
    shutil.copy(DATA / "nvidia_smi" / "query_gpu_nounits_reordered.csv", root / "c-query.csv")
    calls, together, _ = _together_as_alone(tmp_path, monkeypatch, options=IngestOptions(format="nvidia_smi"))
    assert calls == [["nvidia_smi"] * 3]
    kinds = together.filter(pl.col("file").str.ends_with("-rows.csv")).select("kind").to_series().to_list()
    assert kinds == ["log", "log"]
    samples = together.filter(pl.col("file") == "n1/a-query.csv", pl.col("kind") == "gpu_sample")
    assert samples["mem_used_bytes"].to_list() == [70000 * 2**20, 71000 * 2**20]


def test_nvidia_smi_tables_read_together_count_each_file_s_headers_and_borders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    for name in ("nvidia_smi_table_01.txt", "table_two_snapshots.txt", "nvidia_smi_query_gpu_allfields_01.csv"):
        shutil.copy(DATA / "nvidia_smi" / name, root / name)
    _, _, together_files = _together_as_alone(tmp_path, monkeypatch)
    skipped = {row["path"]: json.loads(row["skipped_reasons"]) for row in together_files.iter_rows(named=True)}
    assert set(skipped["n1/table_two_snapshots.txt"]) >= {"header", "table border"}
    assert skipped["n1/nvidia_smi_table_01.txt"]["table border"] > 0


def test_a_parse_that_fails_together_keeps_each_file_s_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    for name in ("nccl_timeout_01.log", "java_service_oom.log", "pytorch_cuda_oom_new_01.log"):
        shutil.copy(DATA / "pipeline" / name, root / name)
    fail_parsing_on(monkeypatch, "pipeline", "OutOfMemoryError", RuntimeError("cannot read this"))
    events, files = _ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    status = dict(files.select("path", "status").iter_rows())
    assert status == {"n1/java_service_oom.log": "warning", "n1/nccl_timeout_01.log": "ok", "n1/pytorch_cuda_oom_new_01.log": "warning"}
    kept = events.filter(pl.col("file") == "n1/java_service_oom.log")
    assert (kept["format"] == "unparsed").all() and kept.height == len((root / "java_service_oom.log").read_text().strip().splitlines())
    assert events.filter(pl.col("file") == "n1/nccl_timeout_01.log", pl.col("kind") == "nccl_timeout").height >= 1


def test_one_file_a_parse_together_fails_on_sends_only_a_few_files_to_be_parsed_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    for number in range(12):
        shutil.copy(DATA / "pipeline" / ("nccl_timeout_01.log" if number % 2 else "pytorch_cuda_oom_new_01.log"), root / f"train-{number}.log")
    poisoned = root / "train-7.log"
    poisoned.write_text(poisoned.read_text() + "POISON\n")
    fail_parsing_on(monkeypatch, "pipeline", "POISON", RuntimeError("cannot read this"))
    read_alone = _count_reads_alone(monkeypatch)
    together, together_files = _ingest(tmp_path / "logs", tmp_path / "together", workers=1)
    # 12 files -> 6 + 6 (the six without it read together) -> 3 + 3: three files read one by one, not twelve
    assert len(read_alone) == 3 and "n1/train-7.log" in read_alone
    assert dict(together_files.select("path", "status").iter_rows())["n1/train-7.log"] == "warning"
    assert together_files.filter(pl.col("status") == "ok").height == 11
    alone, alone_files = _alone(tmp_path / "logs", tmp_path / "alone", monkeypatch)
    assert_frame_equal(together, alone)
    assert_frame_equal(together_files, alone_files)


def test_a_parser_failing_on_one_file_of_a_group_keeps_that_file_s_lines_and_parses_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kubelet reads one file at a time, even in a group; the files are finished together, a failure stays with its file."""
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    for name in ("kubelet_structured_oom_eviction.log", "kubelet_klog_memory_pressure_01.log"):
        shutil.copy(DATA / "kubelet" / name, root / name)
    poisoned = root / "kubelet_klog_memory_pressure_01.log"
    poisoned.write_text(poisoned.read_text() + 'I1201 03:20:00.000000    2345 kubelet.go:2404] "POISON"\n')
    fail_parsing_on(monkeypatch, "kubelet", "POISON", ValueError("cannot read this"))
    events, files = _ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    rows = {row["path"]: row for row in files.iter_rows(named=True)}
    failed, fine = rows["n1/kubelet_klog_memory_pressure_01.log"], rows["n1/kubelet_structured_oom_eviction.log"]
    assert failed["status"] == "warning" and "the kubelet parser failed on lines" in failed["error"]
    assert fine["status"] == "ok" and fine["unparsed_lines"] < fine["events"]
    kept = events.filter(pl.col("file") == "n1/kubelet_klog_memory_pressure_01.log")
    assert (kept["format"] == "unparsed").all() and kept.height == len(poisoned.read_text().strip().splitlines())
    assert events.filter(pl.col("file") == "n1/kubelet_structured_oom_eviction.log", pl.col("kind") == "eviction").height == 6


def test_a_column_of_the_wrong_type_from_a_parse_together_fails_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "logs" / "n1"
    root.mkdir(parents=True)
    (root / "dmesg-a.log").write_text(KERNEL_ENDS_IN_A_BLOCK)
    (root / "dmesg-b.log").write_text(KERNEL_STARTS_MID_DUMP.replace("? __die", "? __die POISON"))
    real = rca.sources.get("kernel")

    def ill_typed(lines: pl.DataFrame, ctx: rca.sources.ParseContext) -> rca.sources.Parsed:
        parsed = real.parse(lines, ctx)
        if lines["text"].str.contains("POISON", literal=True).any():  # a pid no integer column can hold
            return dataclasses.replace(parsed, events=parsed.events.with_columns(pid=pl.lit("not a pid")))
        return parsed

    monkeypatch.setitem(rca.sources._REGISTRY, "kernel", dataclasses.replace(real, parse=ill_typed))
    events, files = _ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    status = dict(files.select("path", "status").iter_rows())
    assert status == {"n1/dmesg-a.log": "ok", "n1/dmesg-b.log": "warning"}
    assert (events.filter(pl.col("file") == "n1/dmesg-b.log")["format"] == "unparsed").all()
    assert events.filter(pl.col("file") == "n1/dmesg-a.log", pl.col("kind") == "xid").height == 1


def test_units_cut_runs_of_small_new_files_by_count_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    def task(name: str, previous: bool = False, read_otherwise: bool = False) -> FileTask:
        read = Previous(10, None, None, 1, (), {}, read_otherwise=read_otherwise) if previous else None
        return dataclasses.replace(_TASK, path=name, provenance=name, previous=read)

    monkeypatch.setattr(_small_files, "GROUP_FILES", 3)
    monkeypatch.setattr(_small_files, "GROUP_BYTES", 25)
    tasks = [task(name, previous=name == "d") for name in "ab.cdefgh"]
    sizes = [10, 10, _small_files.SMALL_FILE_BYTES + 1, 10, 10, 10, 10, 10, 10]
    # Files read before (unchanged, grown or rewritten since) group like new ones; bytes cut c d | e f | g h.
    assert _small_files.units(tasks, sizes) == [(0, 1), (2,), (3, 4), (5, 6), (7, 8)]
    assert _small_files.units(tasks[:1] * 4, [1] * 4) == [(0, 1, 2), (3,)]  # count cuts
    again = [task(name, previous=True, read_otherwise=True) for name in "xyz"]
    assert _small_files.units(again, [10, 10, 10]) == [(0, 1), (2,)]


def test_units_group_files_named_alike_across_hosts_and_rotations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_small_files, "GROUP_FILES", 2)
    names = [
        "h1/kubelet.log", "h1/pods/a/trainer.log", "h2/kubelet.log.1", "h2/pods/b/trainer.log",
        "h3/gpu/nvidia-smi-query-20261125-215434.csv", "h4/gpu/nvidia-smi-query-20261123-083425.csv.gz",
    ]
    tasks = [dataclasses.replace(_TASK, path=name, provenance=name) for name in names]
    assert _small_files.units(tasks, [10] * len(tasks)) == [(0, 2), (1, 3), (4, 5)]


_TASK = FileTask("x", "x", None, "", "run", IngestOptions())


def _pod_logs(root: Path, count: int, steps: int = 3) -> list[Path]:
    """``count`` small pipeline logs of one host, all on one day, of ``steps`` lines each."""
    folder = root / "n1" / "pods"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(count):
        path = folder / f"job-{number}.log"
        path.write_text("".join(f"2026-11-27 01:45:{second % 60:02d},000 INFO step {number}.{second} loss 0.5\n" for second in range(steps)))
        paths.append(path)
    return paths


def _part_files(store: Path) -> set[str]:
    return {str(path.relative_to(store / "events")) for path in (store / "events").rglob("*.parquet")}


def test_small_files_read_together_share_their_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _pod_logs(tmp_path / "logs", 12)
    together, together_files = _ingest(tmp_path / "logs", tmp_path / "together", workers=1)
    listed = rca.open_store(tmp_path / "together").manifest()["parts"].explode().unique().to_list()
    assert len(listed) == 1 and _part_files(tmp_path / "together") == set(listed)  # one (day, host): one part for all twelve
    alone, alone_files = _alone(tmp_path / "logs", tmp_path / "alone", monkeypatch)
    assert len(_part_files(tmp_path / "alone")) == 12
    assert_frame_equal(together, alone)
    assert_frame_equal(together_files, alone_files)


# A file that grew past the window its seam is checked in has its new lines read alone; a smaller one is read again whole.
_PAST_THE_SEAM_WINDOW = 1600


@pytest.mark.parametrize(("change", "grown"), [("rewritten", None), ("appended", "2026-11-27 01:46:00,000 INFO appended\n"),
                                               ("grown", "  File \"train.py\", line 9, in <module>\n")])
def test_a_file_read_again_keeps_the_events_of_the_files_it_shared_parts_with(tmp_path: Path, change: str, grown: str | None) -> None:
    paths = _pod_logs(tmp_path / "logs", 6, steps=_PAST_THE_SEAM_WINDOW)
    if grown and grown.startswith(" "):  # the last copy cut a traceback, whose rest this one brings: the file is read whole
        paths[2].write_text(paths[2].read_text() + "Traceback (most recent call last):\n")
    store = tmp_path / "store"
    _ingest(tmp_path / "logs", store, workers=1)
    shared = _part_files(store)
    if grown is None:
        paths[2].write_text("2026-11-28 09:00:00,000 ERROR rewritten\n")
    else:
        with paths[2].open("a") as handle:
            handle.write(grown)
    report = rca.ingest(tmp_path / "logs", store, workers=1)
    assert report.changes == {change: 1, "unchanged": 5}
    events, files = _ingest(tmp_path / "logs", store, workers=1)  # a third run changes nothing
    fresh, fresh_files = _ingest(tmp_path / "logs", tmp_path / "fresh", workers=1)
    assert_frame_equal(events, fresh)
    assert_frame_equal(files, fresh_files)
    listed = set(rca.open_store(store).manifest()["parts"].explode().drop_nulls().to_list())
    assert _part_files(store) == listed  # nothing orphaned, nothing missing
    assert (listed & shared) == (shared if change == "appended" else set())


def test_a_part_copied_twice_keeps_one_copy_suffix(tmp_path: Path) -> None:
    paths = _pod_logs(tmp_path / "logs", 4)
    store = tmp_path / "store"
    _ingest(tmp_path / "logs", store, workers=1)
    for number in (0, 1):
        paths[number].write_text(f"2026-11-28 09:00:0{number},000 ERROR rewritten {number}\n")
        _ingest(tmp_path / "logs", store, workers=1)
    names = [Path(name).stem for name in rca.open_store(store).manifest()["parts"].explode().unique().to_list()]
    assert all(name.count("~") <= 1 for name in names)
    assert rca.open_store(store).events().filter(pl.col("message").str.contains("step")).height == 2 * 3


def test_a_file_of_a_group_that_cannot_be_read_any_more_leaves_no_events_behind(tmp_path: Path) -> None:
    paths = _pod_logs(tmp_path / "logs", 3)
    store = tmp_path / "store"
    _ingest(tmp_path / "logs", store, workers=1)
    content = paths[0].read_text()
    paths[0].unlink()
    paths[0].symlink_to(tmp_path / "gone")  # dangling: the planner marks it unreadable
    events, files = _ingest(tmp_path / "logs", store, workers=1)
    row = files.filter(pl.col("path") == "n1/pods/job-0.log").row(0, named=True)
    assert (row["status"], row["events"]) == ("skipped", 0)
    assert events.filter(pl.col("file") == "n1/pods/job-0.log").height == 0
    assert events.filter(pl.col("file") == "n1/pods/job-1.log").height == 3
    paths[0].unlink()
    paths[0].write_text(content)
    events, _ = _ingest(tmp_path / "logs", store, workers=1)
    assert events.filter(pl.col("file") == "n1/pods/job-0.log").height == 3  # read again once, not twice
    assert _part_files(store) == set(rca.open_store(store).manifest()["parts"].explode().drop_nulls().to_list())


def test_files_parsed_apart_from_their_batch_each_read_with_their_own_name_time_and_year() -> None:
    times = [datetime(2026, month, 1, tzinfo=UTC) for month in (1, 2, 3)]
    lines = pl.DataFrame({"line": [1, 2, 3, 4, 5], "text": ["a1", "a2", "b1", "c1", "c2"], "batch_file": [0, 0, 1, 2, 2]},
                         schema={"line": pl.Int64, "text": pl.String, "batch_file": pl.Int32})
    ctx = ParseContext(
        file="a.log", year=2024, reference_time=times[0], files=tuple(zip(("a.log", "b.log", "c.log"), times, strict=True)),
        file_years=((2024, "year_inferred", None), (None, "year_from_mtime", times[1]), (2023, "year_inferred", None)),
    )
    seen: list[tuple] = []

    def kept(lines: pl.DataFrame, reason: str, counts: dict | None = None) -> Parsed:
        return Parsed(events=lines.select("line", message="text"), skipped={reason: 1}, skipped_by_file=counts)

    def alone(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
        seen.append((lines["text"].to_list(), ctx.file, ctx.reference_time, ctx.year, ctx.reference_quality if ctx.year is None else ctx.year_quality))
        return kept(lines, "blank")

    parsed = parse_apart(lines, ctx, [0], lambda lines, ctx: kept(lines, "comment", {0: {"comment": 1}}), alone)
    assert seen == [(["b1"], "b.log", times[1], None, "year_from_mtime"), (["c1", "c2"], "c.log", times[2], 2023, "year_inferred")]
    assert parsed.events["line"].to_list() == [1, 2, 3, 4, 5]
    assert (parsed.skipped, parsed.skipped_by_file) == ({"comment": 1, "blank": 2}, {0: {"comment": 1}, 1: {"blank": 1}, 2: {"blank": 1}})
