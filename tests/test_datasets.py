"""The synthetic incident corpus: reproducible, complete, consistent across sources, real in shape."""

from __future__ import annotations

import csv
import gzip
import json
import os
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from rca.datasets import MODES, GenerateResult, generate, parse_size
from rca.datasets.__main__ import main
from rca.datasets._formats import ROW_SCHEMA, Style, format_lines
from rca.datasets._model import GPU_MODELS, PLATFORMS, US, Gpu, Host
from rca.datasets._plan import GPU_MODES
from rca.datasets._smi import GpuReading, ProcReading, table
from tests.conftest import fixture_path

SMALL = {"days": 1, "incidents_per_mode": 1, "size": "5MB"}
GT_COLUMNS = ["incident_key", "mode_id", "host", "start_utc", "end_utc", "pid", "pod", "namespace", "gpu_index", "explain_stage"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> GenerateResult:
    return generate(tmp_path_factory.mktemp("corpus"), seed=7, **SMALL)


def read_lines(path: Path) -> list[str]:
    if path.suffix != ".gz":
        return path.read_text(encoding="utf-8").split("\n")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read().split("\n")


def truth(result: GenerateResult) -> list[dict]:
    with (result.out / "ground_truth.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def evidence(result: GenerateResult) -> list[dict]:
    return [json.loads(line) for line in (result.out / "evidence.jsonl").read_text(encoding="utf-8").splitlines()]


def snapshot(root: Path) -> dict[str, tuple[bytes, float]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime) for p in sorted(root.rglob("*")) if p.is_file()}


# --- reproducibility -----------------------------------------------------------------------


def test_same_arguments_give_the_same_bytes(corpus: GenerateResult, tmp_path: Path) -> None:
    again = generate(tmp_path / "again", seed=7, **SMALL)
    assert snapshot(again.out) == snapshot(corpus.out)


def test_another_seed_gives_another_corpus(corpus: GenerateResult, tmp_path: Path) -> None:
    other = generate(tmp_path / "other", seed=8, **SMALL)
    assert truth(other) != truth(corpus)
    assert set(snapshot(other.out)) != set(snapshot(corpus.out))


# --- ground truth --------------------------------------------------------------------------


def test_every_mode_is_in_the_ground_truth(corpus: GenerateResult) -> None:
    rows = truth(corpus)
    assert list(rows[0]) == GT_COLUMNS
    assert sorted(r["mode_id"] for r in rows) == sorted(MODES)
    assert len({r["incident_key"] for r in rows}) == len(rows) == corpus.incidents == 18


def test_ground_truth_rows_name_real_hosts_pods_and_times(corpus: GenerateResult) -> None:
    hosts = {p.name for p in (corpus.out / "logs").iterdir()}
    window = (datetime(2026, 11, 23, tzinfo=UTC), datetime(2026, 11, 24, tzinfo=UTC))
    for row in truth(corpus):
        assert row["host"] in hosts
        start, end = (datetime.fromisoformat(row[k].replace("Z", "+00:00")) for k in ("start_utc", "end_utc"))
        assert window[0] <= start < end <= window[1]
        assert int(row["pid"]) > 0
        if row["mode_id"] != "host-memory-leak-process":
            assert row["pod"] and row["namespace"]
            assert (corpus.out / "logs" / row["host"] / "pods" / f"{row['namespace']}_{row['pod']}").is_dir()
        assert (row["gpu_index"] != "") == (row["mode_id"] in GPU_MODES)


def test_nccl_cascade_is_one_incident_rooted_at_the_first_failure(corpus: GenerateResult) -> None:
    row = next(r for r in truth(corpus) if r["mode_id"] == "nccl-timeout-cascade")
    rows = [e for e in evidence(corpus) if e["incident_key"] == row["incident_key"]]
    first = min(rows, key=lambda e: e["ts_utc"])
    timeouts = [e for e in rows if e["kind"] == "nccl_timeout"]
    assert first["host"] == row["host"] and first["kind"] in ("cuda_oom", "gpu_sample", "gpu_process")
    assert timeouts and {e["host"] for e in timeouts} - {row["host"]}
    assert min(e["ts_utc"] for e in timeouts) > next(e["ts_utc"] for e in rows if e["kind"] == "cuda_oom")


# --- evidence ----------------------------------------------------------------------------


def test_every_evidence_line_says_what_the_manifest_says(corpus: GenerateResult) -> None:
    """Each fact of an evidence entry is printed on its line, except in the kernel's OOM report, whose
    facts are spread over the report: the trigger's pid on the ``CPU:`` line below ``invoked oom-killer``,
    the victim's container and pod uid on the ``oom-kill:`` line above ``Killed process``."""
    cache: dict[str, list[str]] = {}
    for row in evidence(corpus):
        lines = cache.setdefault(row["file"], read_lines(corpus.out / row["file"]))
        text = lines[row["line"] - 1]
        if row["kind"] in ("oom_invoked", "oom_kill") and "oom_watcher" not in text:
            text = "\n".join(lines[max(row["line"] - 60, 0) : row["line"] + 1])
        for field in ("pid", "pod", "pci_bus", "xid", "exit_code"):
            if row[field] is not None:
                assert str(row[field]) in text, (row, text)
        for field in ("container_id", "pod_uid"):
            value = row[field]
            if value is not None:
                assert value in text or value.replace("-", "_") in text, (row, text)


def test_kernel_and_kubelet_name_the_same_pid_pod_and_container(corpus: GenerateResult) -> None:
    by_incident: dict[str, list[dict]] = defaultdict(list)
    for row in evidence(corpus):
        by_incident[row["incident_key"]].append(row)
    truth_by_key = {r["incident_key"]: r for r in truth(corpus)}
    checked = 0
    for key, rows in by_incident.items():
        kills = [r for r in rows if r["kind"] == "oom_kill" and r["container_id"]]
        kubelet = [r for r in rows if r["what"].startswith("kubelet") and r["container_id"]]
        if not kills:
            continue
        kill = kills[0]
        assert str(kill["pid"]) == truth_by_key[key]["pid"]
        watcher = [r for r in rows if r["what"].startswith("kubelet") and r["kind"] == "oom_kill"]
        assert watcher and watcher[0]["pid"] == kill["pid"]
        if kubelet:
            assert {r["container_id"] for r in kubelet} == {kill["container_id"]}
            pods = {r["pod"] for r in kubelet if r["pod"]}
            assert pods == {truth_by_key[key]["pod"]}
            checked += 1
    assert checked >= 3


def test_gpu_evidence_agrees_on_the_device(corpus: GenerateResult) -> None:
    for row in truth(corpus):
        if not row["gpu_index"]:
            continue
        rows = [e for e in evidence(corpus) if e["incident_key"] == row["incident_key"] and e["gpu_index"] is not None]
        assert rows and {e["gpu_index"] for e in rows} == {int(row["gpu_index"])}


def test_shaped_curves_lead_up_to_the_failure(corpus: GenerateResult) -> None:
    """An autograd leak climbs for many minutes before its CUDA OOM; the nvidia-smi samples show it."""
    row = next(r for r in truth(corpus) if r["mode_id"] == "gpu-memory-leak-autograd")
    samples = [e for e in evidence(corpus) if e["incident_key"] == row["incident_key"] and e["kind"] == "gpu_sample"]
    used = []
    for sample in sorted(samples, key=lambda e: e["ts_utc"]):
        text = read_lines(corpus.out / sample["file"])[sample["line"] - 1]
        header = read_lines(corpus.out / sample["file"])[0].split(", ")
        used.append(int(text.split(", ")[header.index("memory.used [MiB]")].split()[0]))
    assert len(used) == 2 and used[1] > used[0] * 1.2


# --- volume and layout ---------------------------------------------------------------------


def test_background_noise_is_at_least_95_percent(corpus: GenerateResult) -> None:
    assert corpus.noise_ratio >= 0.95
    assert len(evidence(corpus)) <= corpus.incident_lines


def test_size_is_within_15_percent(corpus: GenerateResult, tmp_path: Path) -> None:
    on_disk = sum(p.stat().st_size for p in corpus.out.rglob("*") if p.is_file())
    assert on_disk == corpus.bytes
    assert abs(on_disk - 5_000_000) <= 0.15 * 5_000_000
    smaller = generate(tmp_path / "two", seed=1, days=2, hosts=4, incidents_per_mode=1, size="2MB")
    assert abs(smaller.bytes - 2_000_000) <= 0.15 * 2_000_000


def test_rotated_and_gzipped_files_are_dated_by_their_content(corpus: GenerateResult) -> None:
    files = [p for p in (corpus.out / "logs").rglob("*") if p.is_file()]
    rotated = [p for p in files if re.search(r"\.log\.1$|syslog\.1$", p.name)]
    zipped = [p for p in files if p.suffix == ".gz"]
    assert rotated and zipped
    for path in zipped:
        assert read_lines(path)[0]
    for path in files:
        mtime = datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
        assert datetime(2026, 10, 1, tzinfo=UTC) < mtime < datetime(2026, 11, 25, tzinfo=UTC)
    kern = sorted((p for p in files if p.name.startswith(("kern.log", "kubelet.log"))), key=lambda p: p.stat().st_mtime)
    by_base: dict[tuple[Path, str], list[Path]] = defaultdict(list)
    for path in kern:
        by_base[(path.parent, path.name.split(".")[0])].append(path)
    for parts in by_base.values():
        names = [p.name for p in sorted(parts, key=lambda p: p.stat().st_mtime)]
        assert names[-1] in ("kern.log", "kubelet.log")


def test_hosts_log_in_different_formats(corpus: GenerateResult) -> None:
    kernel_files = {p.name.split(".")[0] for p in (corpus.out / "logs").glob("*/*") if p.name.startswith(("dmesg", "kern", "journalctl"))}
    assert {"dmesg", "dmesg-T", "kern", "journalctl-k"} <= kernel_files
    headers = {read_lines(p)[0] for p in (corpus.out / "logs").glob("*/gpu/nvidia-smi-query-*.csv")}
    assert len(headers) >= 2
    rows = [read_lines(p)[1] for p in (corpus.out / "logs").glob("*/gpu/nvidia-smi-query-*.csv")]
    assert any(" MiB" in r for r in rows) and any(" MiB" not in r for r in rows)
    styles = set()
    for path in (corpus.out / "logs").glob("*/pods/*/*.log"):
        first = read_lines(path)[0]
        styles.add("json" if first.startswith("{") else "text")
    assert styles == {"json", "text"}


# --- artifacts for the OOM walk: cgroup files, DCGM metrics, allocator snapshots --------------------


def _artifact_events(corpus: GenerateResult, pattern: str) -> pl.DataFrame:
    """Events of the artifact files matching ``pattern`` under logs/, read by the ingest driver's per-file task."""
    from rca import schema
    from rca.ingest import FileTask, IngestOptions, parse_file

    logs = corpus.out / "logs"
    frames = []
    for number, path in enumerate(sorted(logs.glob(pattern))):
        staging = corpus.out.parent / f"staging-{abs(hash(pattern))}-{number}"
        staging.mkdir(exist_ok=True)
        provenance = str(path.relative_to(logs))
        result = parse_file(FileTask(str(path), provenance, provenance.split("/")[0], str(staging), "r", IngestOptions()))
        assert result.manifest["status"] == "ok", result.manifest
        frames += [pl.read_parquet(staging / name) for name in result.new_parts]
    return pl.concat(frames) if frames else schema.empty(schema.EVENT_SCHEMA)


def _window(row: dict) -> tuple[datetime, datetime]:
    start, end = (datetime.fromisoformat(row[k].replace("Z", "+00:00")) for k in ("start_utc", "end_utc"))
    return start, end + timedelta(minutes=5)


def test_every_oom_mode_names_the_stage_that_explains_it(corpus: GenerateResult) -> None:
    stages = {r["mode_id"]: r["explain_stage"] for r in truth(corpus)}
    assert {mode for mode, stage in stages.items() if stage == "cgroup"} == {
        "container-memory-limit", "node-memory-overcommit", "eviction-memory-pressure", "sidecar-memory-contention",
        "dataloader-host-memory", "host-memory-leak-process"}
    assert {mode for mode, stage in stages.items() if stage == "gpu_processes"} == {
        "cuda-context-leak", "gpu-contention-shared-device", "kv-cache-growth"}
    assert {mode for mode, stage in stages.items() if stage == "allocator"} == {
        "cuda-oom-batch-too-large", "gpu-memory-fragmentation", "gpu-memory-leak-autograd", "lora-adapter-leak"}
    assert stages["nccl-timeout-cascade"] == stages["gpu-hardware-fault"] == stages["jvm-heap-metaspace"] == ""


def test_cgroup_files_show_the_limit_that_was_hit(corpus: GenerateResult) -> None:
    from rca.sources.cgroup import merge_readings

    readings = merge_readings(_artifact_events(corpus, "*/oom-snapshots/*/sys/fs/cgroup/**/memory.*"))
    kills = {e["incident_key"]: e for e in evidence(corpus) if e["kind"] == "oom_kill" and e["pod_uid"]}
    for row in truth(corpus):
        if row["explain_stage"] != "cgroup":
            continue
        start, end = _window(row)
        mine = readings.filter((pl.col("host") == row["host"]) & pl.col("ts").is_between(start, end))
        assert mine.height, row
        if row["mode_id"] in ("container-memory-limit", "dataloader-host-memory", "sidecar-memory-contention"):
            hit = mine.filter(pl.col("pod_uid") == kills[row["incident_key"]]["pod_uid"]).row(0, named=True)
            assert hit["peak_bytes"] == hit["mem_total_bytes"] and hit["oom_kill"] == 1, hit
            assert hit["oom"] == 1 if hit["cgroup_version"] == 2 else hit["failcnt"] > 0, hit  # v1 counts failed charges instead
            assert hit["mem_used_bytes"] > 0.99 * hit["mem_total_bytes"]
        elif row["mode_id"] == "node-memory-overcommit":
            victim = mine.filter(pl.col("pod_uid") == kills[row["incident_key"]]["pod_uid"]).row(0, named=True)
            assert victim["oom_kill"] == 1 and not victim["oom"] and not victim["failcnt"] and victim["peak_bytes"] < victim["mem_total_bytes"]
            assert mine.filter(pl.col("cgroup").str.starts_with("/kubepods") & pl.col("pod_uid").is_null()).height == 1
        elif row["mode_id"] == "host-memory-leak-process":
            assert mine["cgroup"].str.starts_with("/system.slice/").all() and mine["oom_kill"].to_list() == [1]
        else:
            assert mine["oom_kill"].fill_null(0).sum() == 0 and mine["cgroup"].str.starts_with("/kubepods").all()


def test_dcgm_exports_follow_the_gpu_of_every_gpu_stage_incident(corpus: GenerateResult) -> None:
    samples = _artifact_events(corpus, "*/prometheus/dcgm-*.json")
    for row in truth(corpus):
        if row["explain_stage"] not in ("gpu_processes", "allocator"):
            continue
        start, end = _window(row)
        series = samples.filter((pl.col("host") == row["host"]) & (pl.col("gpu_index") == int(row["gpu_index"])) & pl.col("ts").is_between(start, end))
        assert series.height >= 10 and set(series["pod"]) == {row["pod"]}, row
        assert series["mem_total_bytes"].n_unique() == 1 and series["mem_used_bytes"].max() > 0.9 * series["mem_total_bytes"][0], row


def test_the_scrape_at_a_shared_gpu_failure_shows_it_full_under_the_victims_name_alone(corpus: GenerateResult) -> None:
    """dcgm-exporter names the pods the kubelet allocated a GPU to; the intruder took it without asking, so only
    the device's fullness (and nvidia-smi's process list) give it away."""
    row = next(r for r in truth(corpus) if r["mode_id"] == "gpu-contention-shared-device")
    scraped = _artifact_events(corpus, f"{row['host']}/dcgm/metrics-*.txt")
    start, end = _window(row)
    assert set(scraped["ts_quality"]) == {"file_mtime"} and scraped["ts"].n_unique() == 1
    on_gpu = scraped.filter((pl.col("gpu_index") == int(row["gpu_index"])) & pl.col("ts").is_between(start, end)).row(0, named=True)
    assert on_gpu["pod"] == row["pod"] and on_gpu["mem_used_bytes"] > 0.95 * on_gpu["mem_total_bytes"]
    assert scraped.height == len({(r["gpu_index"], r["pod"]) for r in scraped.to_dicts()})


def test_allocator_snapshots_show_the_leak_the_fragmentation_and_the_big_request(corpus: GenerateResult) -> None:
    from rca import snapshots

    for row in truth(corpus):
        if row["explain_stage"] != "allocator":
            continue
        folder = corpus.out / "logs" / row["host"] / "pods" / f"{row['namespace']}_{row['pod']}" / "memory-snapshots"
        taken = sorted(folder.glob("rank*.pickle"))
        final = snapshots.summary(snapshots.read(taken[-1])).row(0, named=True)
        assert final["oom_events"] == 1 and final["requested_at_oom_bytes"] > final["device_free_at_oom_bytes"], row
        if row["mode_id"] in ("gpu-memory-leak-autograd", "lora-adapter-leak"):
            assert len(taken) == 2
            grown = snapshots.diff(taken[0], taken[1]).row(0, named=True)
            assert grown["frame"].endswith(("train_step", "from_local_checkpoint")) and grown["count_growth"] > 0, grown
        elif row["mode_id"] == "gpu-memory-fragmentation":
            assert final["largest_free_block_bytes"] < final["requested_at_oom_bytes"] <= final["inactive_split_bytes"], final
        else:
            assert final["requested_at_oom_bytes"] > final["inactive_split_bytes"] + final["device_free_at_oom_bytes"], final


# --- shapes copied from real captures --------------------------------------------------------


def _host(**changes: object) -> Host:
    gpu = Gpu(0, "GPU-00000000-0000-0000-0000-000000000000", "00000000:00:09.0", GPU_MODELS["H100"])
    base = dict(
        name="ubuntu-s-1vcpu-2gb-ams3-01",
        platform=PLATFORMS[1],
        gpus=[gpu],
        kernel="6.8.0-1015-aws #16-Ubuntu",
        driver="590.48.01",
        cuda="13.1",
        kubelet_version="v1.30.4",
        boot_us=0,
        memory_kib=0,
        kubelet_pid=12544,
        containerd_pid=900,
        kernel_style="dmesg_raw",
        kubelet_style="klog",
        kubelet_dialect="structured",
        cgroup="v1",
        smi_columns=(),
        smi_units=True,
    )
    base.update(changes)
    return Host(**base)  # type: ignore[arg-type]


def _row(ts: int, body: str, **fields: object) -> pl.DataFrame:
    values = {name: None for name in ROW_SCHEMA} | {"ts": ts, "sub": 0, "body": body, "raw": False, "inc": False} | fields
    return pl.DataFrame([values], schema=ROW_SCHEMA)


def _real_line(name: str, number: int = 0) -> str:
    return fixture_path(name).read_text(encoding="utf-8").split("\n")[number]


def test_default_table_is_byte_for_byte_the_real_layout() -> None:
    host = _host()
    ts = int(datetime(2026, 7, 14, 8, 12, 53, tzinfo=UTC).timestamp()) * US
    procs = [
        ProcReading(0, 11327, "/root/tools/memhog", 2566),
        ProcReading(0, 11328, "/root/tools/memhog", 1542),
        ProcReading(0, 11345, "./gpu_burn", 15690),
    ]
    rendered = table(ts, host, [GpuReading(host.gpus[0], 19818, 100, 59, 629)], procs)
    assert rendered == fixture_path("nvidia_smi_table_01.txt").read_text(encoding="utf-8").rstrip("\n").split("\n")


@pytest.mark.parametrize(
    ("style", "sample", "moment", "boot_seconds", "fields"),
    [
        ("kern_log", "kern_log_oom_cgroup_01.log", datetime(2026, 5, 15, 23, 9, 27, 500000, tzinfo=UTC), 514.682838, {}),
        ("dmesg_raw", "dmesg_oom_cgroup_01.log", datetime(2026, 5, 15, 23, 9, 27, tzinfo=UTC), 7063.247407, {}),
        ("dmesg_ctime", "dmesg_xid_119_ctime_01.log", datetime(2023, 3, 3, 4, 27, 8, tzinfo=UTC), 1.0, {}),
        (
            "klog",
            "kubelet_klog_eviction_01.log",
            datetime(2021, 12, 15, 19, 22, 27, 75748, tzinfo=UTC),
            1.0,
            {"level": "I", "src": "eviction_manager.go:243", "pid": 77158},
        ),
        (
            "journal",
            "kubelet_journal_eviction_01.log",
            datetime(2026, 5, 29, 8, 56, 39, 757341, tzinfo=UTC),
            1.0,
            {"level": "E", "src": "eviction_manager.go:557", "pid": 12544, "program": "kubelet"},
        ),
    ],
)
def test_envelopes_reproduce_real_lines(style: str, sample: str, moment: datetime, boot_seconds: float, fields: dict) -> None:
    real = _real_line(sample, 1 if style == "journal" else 0)
    ts = int(moment.timestamp() * US)
    host_name = real.split()[3] if style in ("kern_log", "journal") else "node"
    host = _host(name=host_name, boot_us=ts - round(boot_seconds * US))
    body = {
        "kern_log": real.split("] ", 1)[1],
        "dmesg_raw": real.split("] ", 1)[1],
        "dmesg_ctime": real.split("] ", 1)[1],
        "klog": real.split("] ", 1)[1],
        "journal": real.split("] ", 1)[1],
    }[style]
    line = format_lines(_row(ts, body, **fields), Style(style, host)).item()
    assert line == real


# --- interface -------------------------------------------------------------------------------


def test_sizes_parse_in_decimal_and_binary_units() -> None:
    assert parse_size("5MB") == 5_000_000
    assert parse_size("1GB") == 1_000_000_000
    assert parse_size("512MiB") == 512 * 2**20
    assert parse_size(1234) == 1234
    with pytest.raises(ValueError, match="size must look like"):
        parse_size("lots")


def test_too_many_incidents_for_the_window_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot fit"):
        generate(tmp_path, days=1, hosts=1, incidents_per_mode=10, size="1MB")


def test_command_line_writes_the_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "generate",
            "--out",
            str(tmp_path / "cli"),
            "--seed",
            "3",
            "--days",
            "1",
            "--hosts",
            "4",
            "--incidents-per-mode",
            "1",
            "--size",
            "2MB",
        ]
    )
    assert code == 0
    assert "18 incidents on 4 hosts" in capsys.readouterr().out
    assert (tmp_path / "cli" / "ground_truth.csv").exists() and (tmp_path / "cli" / "evidence.jsonl").exists()


# --- end to end: the parsers find what was injected -----------------------------------------


def _placeholder(module: str) -> bool:
    path = Path(__file__).parents[1] / "rca" / "sources" / f"{module}.py"
    return len(path.read_text(encoding="utf-8").splitlines()) < 5


@pytest.mark.skipif(
    any(_placeholder(m) for m in ("kernel", "kubelet", "nvidia_smi", "pipeline")), reason="a source module is still a placeholder"
)
def test_ingest_finds_every_injected_evidence_line(tmp_path: Path) -> None:
    from rca.ingest import ingest
    from rca.store import Store

    result = generate(tmp_path / "e2e", seed=11, days=1, hosts=4, incidents_per_mode=1, size="2MB")
    ingest(result.out / "logs", tmp_path / "store", workers=1)
    events = Store(tmp_path / "store").scan_events().select("file", "line", "n_lines", "kind", "pid", "pod", "gpu_index").collect()
    misses = []
    for row in evidence(result):
        provenance = row["file"].split("/", 1)[1]
        covering = events.filter(
            (pl.col("file") == provenance) & (pl.col("line") <= row["line"]) & (pl.col("line") + pl.col("n_lines").clip(1) > row["line"])
        )
        same_kind = covering.filter(pl.col("kind") == row["kind"])
        wanted = {f: row[f] for f in ("pid", "pod", "gpu_index") if row[f] is not None}
        found = any(all(event[f] == v for f, v in wanted.items()) for event in same_kind.iter_rows(named=True))
        if not found:
            misses.append(
                f"{row['mode_id']} / {row['what']}: {provenance}:{row['line']} expected {row['kind']} {wanted}, "
                f"parsed {covering.select('kind', *wanted).to_dicts()}"
            )
    assert not misses, f"{len(misses)} of {len(evidence(result))} evidence lines not parsed as injected:\n" + "\n".join(misses)
