"""The three-stage OOM walk (rca.explain) on small hand-made incidents, and ``rca explain`` through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import rca
from rca import evaluate, signals
from rca.cli import app
from rca.correlate import correlate, correlate_store
from rca.errors import InputError
from rca.messages import headline_of
from rca.explain import STAGES, Frames, explain, runtime_label
from rca.ingest import IngestOptions, parse_text
from tests.conftest import DATA, at, event_frame
from tests.test_report import build_report_stores

GIB = 1024**3
MIB = 1024**2
POD_UID = "1b2c3d4e-0000-4000-8000-000000000001"
CONTAINER_ID = "a" * 64
CGROUP = f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{POD_UID.replace('-', '_')}.slice/cri-containerd-{CONTAINER_ID}.scope"


def walk(events: pl.DataFrame, kind: str | None = None):
    """Correlate ``events`` and explain the incident (the one anchored on ``kind`` when several)."""
    result = correlate(events)
    incidents = result.incidents if kind is None else result.incidents.filter(pl.col("anchor_kind") == kind)
    (incident_id,) = incidents["incident_id"].to_list()
    return explain(Frames(events, result.incidents, result.links), incident_id)


def cgroup_file(name: str, message: str, line: int = 1, **fields) -> dict:
    """One cgroup memory file's event, as rca.sources.cgroup writes it: one per file, ts = the file's mtime."""
    attrs = {"cgroup_version": 2, "cgroup_file": name, **fields.pop("attrs", {})}
    return {"ts": at(3600), "ts_quality": "file_mtime", "kind": "cgroup_memory", "source": "cgroup", "format": "cgroup_v2",
            "file": f"node-a/sys/fs/cgroup{CGROUP}/{name}", "line": line, "cgroup": CGROUP, "pod_uid": POD_UID,
            "container_id": CONTAINER_ID, "attrs": attrs, "message": f"{name}: {message}", **fields}


def killed_container(**extra) -> dict:
    return {"ts": at(0), "kind": "container_oomkilled", "source": "kubelet", "file": "node-a/kubelet.log", "line": 7, "pod": "trainer-0",
            "namespace": "ml", "container": "trainer", "pod_uid": POD_UID, "container_id": CONTAINER_ID, "exit_code": 137,
            "message": 'I1130 12:00:04 "Container exited" pod="ml/trainer-0" exitCode=137 reason="OOMKilled"', **extra}


def cuda_oom(message: str, **extra) -> dict:
    """A CUDA OOM anchor parsed from a real training-log line (the pipeline source reads the allocator figures)."""
    parsed = parse_text(f"2026-11-30 12:00:00,000 ERROR {message}\n", file="node-a/train.log", host="node-a", format="pipeline")
    row = parsed.filter(pl.col("kind") == "cuda_oom").row(0, named=True)
    return {**{k: v for k, v in row.items() if v is not None}, "pid": 4242, **extra}


FRAGMENTED = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.79 GiB. GPU 1 has a total capacity of 79.45 GiB of which "
              "80.00 MiB is free. Including non-PyTorch memory, this process has 79.37 GiB memory in use. Of the allocated memory 68.13 GiB "
              "is allocated by PyTorch, and 10.41 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
              "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
FULL = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which "
        "1.06 GiB is free. Including non-PyTorch memory, this process has 78.09 GiB memory in use. Of the allocated memory 77.50 GiB is "
        "allocated by PyTorch, and 250.00 MiB is reserved by PyTorch but unallocated.")


# --- stage 1: the cgroup ---------------------------------------------------------------------


def test_container_at_its_cgroup_limit_from_the_cgroup_files() -> None:
    events = event_frame(
        killed_container(),
        cgroup_file("memory.peak", str(16 * GIB - 4096), attrs={"peak_bytes": 16 * GIB - 4096}),
        cgroup_file("memory.max", str(16 * GIB), mem_total_bytes=16 * GIB, attrs={"unlimited": False}),
        cgroup_file("memory.current", str(2 * GIB), mem_used_bytes=2 * GIB),
        cgroup_file("memory.events", "low 0, high 0, max 812, oom 3, oom_kill 1", line=1,
                    attrs={"events.low": 0, "events.high": 0, "max_events": 812, "oom": 3, "oom_kill": 1}),
        {"kind": "log", "source": "k8s", "format": "describe", "file": "node-a/describe.txt", "line": 35, "pod": "trainer-0",
         "namespace": "ml", "container": "trainer", "ts_quality": "missing",
         "message": "    Restart Count:  1\n    Limits:\n      cpu:     8\n      memory:  16Gi\n    Requests:\n      memory:     8Gi\n    Environment:  <none>"},
    )
    explanation = walk(events)
    stage = explanation.stage("cgroup")
    assert (stage.verdict, stage.explains, explanation.deciding_stage) == ("limit_hit", True, "cgroup")
    figures = {k: stage.figures[k] for k in ("cgroup", "peak_bytes", "limit_bytes", "oom_events", "oom_kills", "cgroup_folders")}
    assert figures == {"cgroup": CGROUP, "peak_bytes": 16 * GIB - 4096, "limit_bytes": 16 * GIB, "oom_events": 3, "oom_kills": 1, "cgroup_folders": 1}
    assert stage.figures["peak_over_limit"] == pytest.approx(1.0, abs=1e-6)
    assert (stage.figures["pod_memory_limit_bytes"], stage.figures["pod_memory_request_bytes"]) == (16 * GIB, 8 * GIB)
    locations = [line.location for line in stage.evidence]
    assert f"node-a/sys/fs/cgroup{CGROUP}/memory.events:1" in locations and "node-a/describe.txt:35" in locations
    assert stage.summary == f"yes: {CGROUP} peaked at 16.0 GiB, 100% of its 16.0 GiB limit; memory.events counts 1 OOM kill(s)"
    assert explanation.kb_id == "container-memory-limit" and explanation.kb_basis == "rules"
    assert explanation.checklist[0].check.startswith("kubectl") and len(explanation.checklist) >= 3


V1_POD = "5e8b2a91-4c7d-4f3e-9b1a-2d6c8e0f4a17"
V1_CONTAINER = "9d2e4b6a8c0f1e3d5b7a9c1e3f5d7b9a1c3e5f7d9b1a3c5e7f9d1b3a5c7e9f1d"


def test_cgroup_v1_files_of_a_support_bundle_through_ingest(tmp_path: Path) -> None:
    """The cgroup source's own v1 fixture (memory.oom_control, max_usage_in_bytes, failcnt) next to the kubelet's OOMKilled line."""
    logs = tmp_path / "logs"
    shutil.copytree(DATA / "cgroup" / "gpu-node-03", logs / "gpu-node-03")
    (logs / "gpu-node-03" / "kubelet.log").write_text(
        'I1130 12:00:04.000000    2345 kuberuntime_container.go:779] "Container exited" pod="ml/trainer-0" '
        f'podUID="{V1_POD}" containerName="trainer" containerID="containerd://{V1_CONTAINER}" exitCode=137 reason="OOMKilled"\n'
    )
    rca.ingest(logs, tmp_path / "store", IngestOptions(year=2026), workers=1)
    store = rca.open_store(tmp_path / "store")
    correlate_store(store)
    (incident_id,) = store.incidents()["incident_id"].to_list()
    stage = explain(store, incident_id).stage("cgroup")
    assert (stage.verdict, stage.figures["cgroup_version"], stage.figures["oom_kills"], stage.figures["failcnt"]) == ("limit_hit", 1, 1, 48213)
    assert (stage.figures["peak_bytes"], stage.figures["limit_bytes"]) == (16 * GIB, 16 * GIB)
    assert any(line.location.endswith(f"{V1_CONTAINER}/memory.oom_control:1") for line in stage.evidence)
    assert store.incidents()["cgroup_oom_kills"].to_list() == [1]


def test_cgroup_below_its_limit_rules_the_stage_out_and_the_signals_say_so() -> None:
    events = event_frame(
        cuda_oom(FULL, gpu_index=0, pod_uid=POD_UID),
        cgroup_file("memory.peak", str(6 * GIB), attrs={"peak_bytes": 6 * GIB}),
        cgroup_file("memory.max", str(16 * GIB), mem_total_bytes=16 * GIB, attrs={"unlimited": False}),
        cgroup_file("memory.events", "max 0, oom 0, oom_kill 0", attrs={"max_events": 0, "oom": 0, "oom_kill": 0}),
    )
    incident = correlate(events).incidents.row(0, named=True)
    assert (incident["cgroup_peak_bytes"], incident["cgroup_limit_bytes"], incident["cgroup_oom_kills"]) == (6 * GIB, 16 * GIB, 0)
    assert incident["cgroup_peak_over_limit"] == pytest.approx(6 / 16)
    explanation = walk(events)
    assert (explanation.stage("cgroup").verdict, explanation.stage("cgroup").explains) == ("below_limit", False)
    assert explanation.deciding_stage == "allocator" and explanation.stage("allocator").verdict == "live_tensors"


KERNEL_MEMCG_OOM = (
    "Nov 30 12:00:01 node-a kernel: [ 7063.100000] python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=986\n"
    "Nov 30 12:00:01 node-a kernel: [ 7063.100100] memory: usage 4194304kB, limit 4194304kB, failcnt 1234\n"
    "Nov 30 12:00:01 node-a kernel: [ 7063.100200] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-"
    f"{CONTAINER_ID}.scope,mems_allowed=0,oom_memcg={CGROUP},task_memcg={CGROUP},task=python,pid=4242,uid=0\n"
    "Nov 30 12:00:01 node-a kernel: [ 7063.100300] Memory cgroup out of memory: Killed process 4242 (python) total-vm:8000000kB, "
    "anon-rss:4000000kB, file-rss:100kB, shmem-rss:0kB, UID:0 pgtables:9000kB oom_score_adj:986\n"
)


def test_kernel_memcg_oom_without_cgroup_files() -> None:
    events = parse_text(KERNEL_MEMCG_OOM, file="node-a/kern.log", host="node-a", year=2026, format="kernel")
    explanation = walk(events)
    stage = explanation.stage("cgroup")
    assert (stage.verdict, explanation.deciding_stage) == ("limit_hit", "cgroup")
    expected = {"constraint": "memcg", "cgroup": CGROUP, "usage_bytes": 4 * GIB, "limit_bytes": 4 * GIB, "anon_rss_bytes": 4_000_000 * 1024,
                "failcnt": 1234, "oom_kills": 1}
    assert {k: stage.figures[k] for k in expected} == expected
    assert stage.figures["anon_rss_over_limit"] == pytest.approx(4_000_000 / 4_194_304)
    kill_line = events.filter(pl.col("kind") == "oom_kill")["line"][0]
    assert [line.location for line in stage.evidence] == [f"node-a/kern.log:{kill_line}"]
    assert "memory-cgroup OOM killer killed pid 4242 (python)" in stage.summary
    assert explanation.kb_id == "container-memory-limit"


@pytest.mark.parametrize(("exit_code", "told"), [(137, "(exit 137)"), (0, "(exit 0: a process in it was killed, its main process then exited cleanly)")])
def test_kubelet_oomkilled_alone_gives_the_exit_code_it_read(exit_code: int, told: str) -> None:
    # OOMKilled with exit 0 is real (kubernetes/kubernetes #131530): the report must not turn it into 137.
    explanation = walk(event_frame(killed_container(exit_code=exit_code)))
    stage = explanation.stage("cgroup")
    assert (stage.verdict, stage.figures["exit_code"]) == ("limit_hit", exit_code)
    assert stage.summary.startswith(f"yes: Kubernetes reports trainer OOMKilled {told}: ")
    assert explanation.kb_id == "container-memory-limit"


def test_kubelet_system_oom_event_alone_is_the_node_running_out() -> None:
    # `kubectl describe node` copied without the node's dmesg: kubelet's SystemOOM event is the only account of the kill.
    events = parse_text(
        "Events:\n  Type     Reason     Age   From     Message\n  ----     ------     ----  ----     -------\n"
        "  Warning  SystemOOM  12m   kubelet  System OOM encountered, victim process: python, pid: 4242\n",
        file="node-a/describe-node.txt", host="node-a", format="k8s",
    )
    explanation = walk(events)
    stage = explanation.stage("cgroup")
    assert (stage.verdict, stage.figures["constraint"], explanation.deciding_stage) == ("node_exhausted", "system", "cgroup")
    assert stage.summary == "no, the node ran out: the kernel's system OOM killer killed pid 4242 (python), as k8s reports it, not a cgroup limit"
    assert explanation.kb_id == "node-memory-overcommit"


def test_a_runtime_that_ran_out_itself_is_named_when_no_stage_has_evidence() -> None:
    events = parse_text("2026-11-30 12:00:00 fatal error: runtime: out of memory\n", file="node-a/proxy.log", host="node-a", format="pipeline")
    explanation = walk(events)
    assert (explanation.runtime_oom, explanation.deciding_stage) == ("go_runtime", None)
    assert explanation.reason.endswith("; the failure is the Go runtime's own account of running out of memory")
    assert [runtime_label(name) for name in ("jvm_heap", "slurm_cgroup")] == ["the JVM heap", "the Slurm cgroup"]


def test_global_oom_is_the_node_running_out() -> None:
    events = parse_text(
        "Nov 30 12:00:01 node-a kernel: [ 7063.100300] Out of memory: Killed process 777 (java) total-vm:9000000kB, anon-rss:7000000kB, "
        "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:9000kB oom_score_adj:0\n",
        file="node-a/kern.log", host="node-a", year=2026, format="kernel",
    )
    explanation = walk(events)
    assert (explanation.stage("cgroup").verdict, explanation.stage("cgroup").figures["constraint"]) == ("node_exhausted", "system")
    assert explanation.deciding_stage == "cgroup"


# --- stage 2: the GPU's processes ----------------------------------------------------------------


def gpu_snapshot(holders: list[tuple[int, int]], seconds: float = -30) -> list[dict]:
    """One nvidia-smi sample of GPU 0 and its compute-apps rows: (pid, MiB) each."""
    sample = {"ts": at(seconds), "kind": "gpu_sample", "source": "nvidia_smi", "file": "node-a/smi.csv", "line": 2, "gpu_index": 0,
              "gpu_uuid": "GPU-0", "mem_used_bytes": sum(mib for _, mib in holders) * MIB, "mem_total_bytes": 80 * GIB}
    apps = [{"ts": at(seconds), "kind": "gpu_process", "source": "nvidia_smi", "file": "node-a/apps.csv", "line": 2 + n, "gpu_uuid": "GPU-0",
             "pid": pid, "process": "python", "mem_used_bytes": mib * MIB, "message": f"{pid}, python, {mib} MiB"}
            for n, (pid, mib) in enumerate(holders)]
    return [sample, *apps]


def test_gpu_shared_with_a_stale_process() -> None:
    events = event_frame(
        *gpu_snapshot([(4242, 50_000), (6161, 20_000)]),
        {"ts": at(-60), "kind": "log", "source": "pipeline", "file": "node-a/train.log", "line": 1, "pid": 4242, "message": "step 99"},
        cuda_oom(FULL.replace("77.50 GiB is allocated", "48.80 GiB is allocated"), gpu_index=0),
    )
    explanation = walk(events)
    stage = explanation.stage("gpu_processes")
    assert (stage.verdict, stage.explains, explanation.deciding_stage) == ("stale_holders", True, "gpu_processes")
    expected = {"processes": 2, "own_pid": 4242, "own_bytes": 50_000 * MIB, "other_bytes": 20_000 * MIB, "stale_bytes": 20_000 * MIB,
                "stale_processes": 1, "need_bytes": 2 * GIB}
    assert {k: stage.figures[k] for k in expected} == expected
    assert [(line.location, line.text) for line in stage.evidence] == [
        ("node-a/apps.csv:2", "pid 4242 (python) holds 50000 MiB, the job"),
        ("node-a/apps.csv:3", "pid 6161 (python) holds 20000 MiB, stale: logs nothing"),
    ]
    assert explanation.stage("cgroup").verdict == "no_data"
    assert explanation.stage("allocator").verdict == "outside_allocator"  # 48.8 of 79.15 GiB: the rest was not the job's allocator


def test_the_job_alone_on_its_gpu_leaves_the_allocator_to_decide() -> None:
    events = event_frame(*gpu_snapshot([(4242, 79_000), (5151, 300)]), cuda_oom(FULL, gpu_index=0),
                   {"ts": at(-20), "kind": "log", "source": "pipeline", "file": "node-a/exporter.log", "line": 1, "pid": 5151})
    explanation = walk(events)
    assert (explanation.stage("gpu_processes").verdict, explanation.stage("gpu_processes").figures["other_bytes"]) == ("sole_holder", 300 * MIB)
    assert (explanation.deciding_stage, explanation.stage("allocator").verdict) == ("allocator", "live_tensors")


def test_dcgm_samples_of_another_pod_on_the_gpu_mean_it_is_shared() -> None:
    samples = [{"ts": at(-30 + n), "kind": "gpu_sample", "source": "dcgm", "file": "node-a/dcgm.prom", "line": 1 + n, "gpu_index": 0,
                "pod": pod, "namespace": "ml", "mem_used_bytes": 79 * GIB, "mem_total_bytes": 80 * GIB, "gpu_util_pct": 99.0}
               for n, pod in enumerate(["trainer-0", "notebook-7"])]
    events = event_frame(*samples, cuda_oom(FULL, gpu_index=0, pod="trainer-0", namespace="ml"))
    incident = correlate(events).incidents.row(0, named=True)
    assert incident["gpu_pods"] == 2
    explanation = walk(events)
    stage = explanation.stage("gpu_processes")
    assert (stage.verdict, stage.figures["dcgm_pods"], explanation.deciding_stage) == ("shared", 2, "gpu_processes")
    assert "notebook-7" in stage.summary and "node-a/dcgm.prom:2" in [line.location for line in stage.evidence]


def test_processes_listed_by_the_cuda_oom_message() -> None:
    listed = FULL.replace("Including non-PyTorch memory, this process has 78.09 GiB memory in use.",
                          "Process 5555 has 30.00 GiB memory in use. Including non-PyTorch memory, this process has 47.00 GiB memory in use.")
    explanation = walk(event_frame(cuda_oom(listed, gpu_index=0)))
    stage = explanation.stage("gpu_processes")
    assert (stage.verdict, stage.figures["other_bytes"], stage.figures["own_bytes"]) == ("shared", 30 * GIB, 47 * GIB)
    assert explanation.deciding_stage == "gpu_processes"


# --- stage 3: the PyTorch allocator ----------------------------------------------------------------


def test_cuda_oom_from_fragmentation() -> None:
    explanation = walk(event_frame(cuda_oom(FRAGMENTED, gpu_index=1)))
    stage = explanation.stage("allocator")
    assert (stage.verdict, stage.explains, explanation.deciding_stage) == ("fragmentation", True, "allocator")
    assert stage.figures["reserved_unallocated_bytes"] == pytest.approx(10.41 * GIB, rel=1e-3)
    assert stage.figures["allocated_bytes"] == pytest.approx(68.13 * GIB, rel=1e-3)
    assert stage.figures["reserved_unallocated_frac"] == pytest.approx(10.41 / (10.41 + 68.13), rel=1e-3)
    assert stage.figures["requested_bytes"] == pytest.approx(7.79 * GIB, rel=1e-3)
    assert [line.location for line in stage.evidence] == ["node-a/train.log:1"]
    assert explanation.kb_id == "gpu-memory-fragmentation"


def snapshot(seconds: float, line: int, sites: list[tuple[str, int, int]]) -> dict:
    """A memory_snapshot event of GPU 0 as rca.sources.torch_memory writes it: allocated in mem_used, reserved in mem_total."""
    allocated = sum(size for _, size, _ in sites)
    top = [{"frame": site, "bytes": size, "count": count} for site, size, count in sorted(sites, key=lambda s: -s[1])]
    return {"ts": at(seconds), "kind": "memory_snapshot", "source": "torch_memory", "format": "pickle", "file": f"node-a/snap-{line}.pickle",
            "line": 1, "gpu_index": 0, "mem_used_bytes": allocated, "mem_total_bytes": allocated + GIB,
            "attrs": {"snapshot_format": "pickle", "segments": 40, "active_bytes": allocated, "fragmentation": 0.02, "top_sites": top}}


def test_leak_seen_in_two_snapshots() -> None:
    retriever = "retriever.py:88 in embed"
    events = event_frame(
        snapshot(-1800, 1, [(retriever, 1 * GIB, 25), ("model.py:40 in __init__", 20 * GIB, 300)]),
        snapshot(-60, 2, [(retriever, 9 * GIB, 225), ("model.py:40 in __init__", 20 * GIB, 300), ("loss.py:12 in forward", 64 * MIB, 2)]),
        cuda_oom(FULL, gpu_index=0),
    )
    explanation = walk(events)
    stage = explanation.stage("allocator")
    assert (stage.verdict, explanation.deciding_stage, stage.figures["snapshots"]) == ("leak", "allocator", 2)
    assert stage.figures["site_growth"][0] == {"frame": retriever, "bytes_before": GIB, "bytes_after": 9 * GIB, "bytes_growth": 8 * GIB,
                                               "count_before": 25, "count_after": 225}
    assert [site["frame"] for site in stage.figures["site_growth"]] == [retriever, "loss.py:12 in forward"]
    assert stage.figures["allocated_growth_bytes"] == 8 * GIB + 64 * MIB
    assert {"node-a/snap-1.pickle:1", "node-a/snap-2.pickle:1"} <= {line.location for line in stage.evidence}
    assert stage.summary.startswith(f"a leak: {retriever} grew by 8.0 GiB (25 → 225 blocks)")
    incident = correlate(events).incidents.row(0, named=True)
    assert (incident["snapshot_growth_site"], incident["snapshot_growth_bytes"]) == (retriever, 8 * GIB)


def test_leak_between_two_real_snapshot_pickles_through_ingest(tmp_path: Path) -> None:
    """The torch_memory source's own fixtures: a retriever that keeps 44 MB per request, dumped after 10 and after 25 requests."""
    logs = tmp_path / "logs" / "node-a"
    (logs / "snapshots").mkdir(parents=True)
    for name in ("leak_after_10_requests.pickle", "leak_after_25_requests.pickle"):
        shutil.copy(DATA / "torch_memory" / "snapshots" / name, logs / "snapshots" / name)
    (logs / "train.log").write_text(f"2025-11-30 10:54:30,000 ERROR {FULL}\n")
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    store = rca.open_store(tmp_path / "store")
    correlate_store(store)
    (incident_id,) = store.incidents()["incident_id"].to_list()
    stage = explain(store, incident_id).stage("allocator")
    assert (stage.verdict, stage.figures["snapshots"]) == ("leak", 2)
    assert stage.figures["site_growth"][0] == {"frame": "retriever.py:88:embed_query", "bytes_before": 440401920, "bytes_after": 1101004800,
                                               "bytes_growth": 660602880, "count_before": 10, "count_after": 25}
    assert stage.figures["allocated_growth_bytes"] == 5395972096 - 4735369216


def test_site_growth_between_the_first_and_the_last_snapshot() -> None:
    def taken(seconds: float, sites: list[dict]) -> dict:
        return {"incident_id": "inc-a", "ts": at(seconds), "event_id": f"s{seconds}", "attrs": json.dumps({"top_sites": sites})}

    snapshots = pl.DataFrame([
        taken(-600, [{"frame": "a", "bytes": 10, "count": 1}, {"frame": "gone", "bytes": 50, "count": 5}]),
        taken(-300, [{"frame": "a", "bytes": 99, "count": 9}]),  # neither the first nor the last
        taken(-60, [{"frame": "a", "bytes": 30, "count": 3}, {"frame": "new", "bytes": 5, "count": 1}]),
    ])
    assert signals.site_growth(snapshots).to_dicts() == [
        {"incident_id": "inc-a", "frame": "a", "bytes_before": 10, "bytes_after": 30, "bytes_growth": 20, "count_before": 1, "count_after": 3},
        {"incident_id": "inc-a", "frame": "new", "bytes_before": 0, "bytes_after": 5, "bytes_growth": 5, "count_before": 0, "count_after": 1},
    ]
    assert signals.site_growth(snapshots.head(1)).is_empty()


# --- what is missing, what decides ------------------------------------------------------------------


def test_stages_without_evidence_say_what_to_collect_next_time() -> None:
    explanation = walk(event_frame(cuda_oom(FULL, gpu_index=0, pod="trainer-0", namespace="ml")))
    cgroup, gpu = explanation.stage("cgroup"), explanation.stage("gpu_processes")
    assert (cgroup.verdict, gpu.verdict) == ("no_data", "no_data")
    assert cgroup.missing.startswith("no cgroup files for pod ml/trainer-0: collect memory.peak, memory.max, memory.events")
    assert "nvidia-smi --query-compute-apps" in gpu.missing and "GPU 0 of node-a" in gpu.missing
    assert explanation.stage("allocator").missing is None
    host_oom = walk(parse_text(KERNEL_MEMCG_OOM, file="node-a/kern.log", host="node-a", year=2026, format="kernel"))
    assert host_oom.stage("gpu_processes").summary == "the incident names no GPU"
    assert "torch.cuda.memory._dump_snapshot()" in host_oom.stage("allocator").missing


def test_a_gpu_fault_is_decided_by_no_stage() -> None:
    events = event_frame({"ts": at(0), "kind": "xid", "source": "kernel", "xid": 79, "gpu_index": 0, "severity": "critical",
                    "message": "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus."},
                   *gpu_snapshot([(4242, 70_000)], seconds=-120))
    explanation = walk(events)
    assert explanation.deciding_stage is None and explanation.reason == "the failure is a GPU fault (Xid 79), not memory running out"
    assert explanation.kb_id == "gpu-hardware-fault"


def test_to_dict_is_plain_json(tmp_path: Path) -> None:
    explanation = walk(event_frame(cuda_oom(FRAGMENTED, gpu_index=1)))
    data = json.loads(json.dumps(explanation.to_dict()))
    assert [stage["name"] for stage in data["stages"]] == list(STAGES)
    assert data["deciding_stage"] == "allocator" and data["start"] == "2026-11-30T12:00:00+00:00"
    assert data["stages"][2]["evidence"][0]["location"] == "node-a/train.log:1"
    assert set(data["checklist"][0]) == {"check", "expect", "fix"}


def test_unknown_incident_is_an_input_error() -> None:
    events = event_frame(cuda_oom(FULL, gpu_index=0))
    result = correlate(events)
    with pytest.raises(InputError, match="no incident 'inc-nope'"):
        explain(Frames(events, result.incidents, result.links), "inc-nope")


# --- a generated corpus -------------------------------------------------------------------------------

# Where the walk's documented rule and the generator's EXPLAIN_STAGES differ: a vLLM engine alone on its GPU is no
# stage-2 answer (no other process held what it needed), and its CUDA OOM shows PyTorch holding nearly all of it.
WALK_DIFFERS_FROM_TRUTH = {"kv-cache-growth": "allocator"}


def test_on_a_generated_corpus_every_incident_with_the_data_gets_its_stage_and_mode(tmp_path_factory: pytest.TempPathFactory) -> None:
    stores = build_report_stores(tmp_path_factory)
    store = rca.open_store(stores.clustered)
    truth_csv = stores.plain.parent / "corpus" / "ground_truth.csv"
    truth = evaluate.load_truth(truth_csv).with_columns(explain_stage=pl.read_csv(truth_csv, infer_schema=False)["explain_stage"])
    incidents = store.incidents()
    pairs = evaluate.match(incidents, truth)
    expected, walked = {}, {}
    for truth_row, incident_row in pairs.iter_rows():
        wanted = truth.row(truth_row, named=True)
        if not wanted["explain_stage"]:
            continue  # the generator gives no stage its data (Xid faults, runtime OOMs, shm, NCCL cascades)
        explanation = explain(store, incidents["incident_id"][incident_row])
        expected[wanted["incident_key"]] = (WALK_DIFFERS_FROM_TRUTH.get(wanted["mode_id"], wanted["explain_stage"]), wanted["mode_id"])
        walked[wanted["incident_key"]] = (explanation.deciding_stage, explanation.kb_id)
    assert len(expected) == truth.filter(pl.col("explain_stage").is_not_null()).height == 13
    assert walked == expected


# --- the CLI ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("explain") / "store"
    rca.ingest(DATA / "correlate" / "one_failure", path, IngestOptions(year=2026), workers=1)
    correlate_store(rca.open_store(path))
    return path


def test_cli_json(store: Path) -> None:
    incident_id = rca.open_store(store).incidents()["incident_id"][0]
    result = CliRunner().invoke(app, ["explain", incident_id, "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["incident_id"] == incident_id and data["deciding_stage"] == "cgroup"
    verdicts = {stage["name"]: stage["verdict"] for stage in data["stages"]}
    # the kernel killed the container at its memcg limit; the CUDA OOM's cache was 8 % unallocated, more than its 2 GiB request
    assert verdicts == {"cgroup": "limit_hit", "gpu_processes": "sole_holder", "allocator": "fragmentation"}
    cgroup = data["stages"][0]
    assert (cgroup["figures"]["limit_bytes"], cgroup["figures"]["constraint"]) == (4 * GIB, "memcg")
    assert cgroup["evidence"][0]["location"].endswith("kern.log:5")
    assert data["kb_basis"] == "rules" and data["kb_title"] and data["checklist"][0]["check"]


def test_cli_panels(store: Path) -> None:
    incident_id = rca.open_store(store).incidents()["incident_id"][0]
    result = CliRunner().invoke(app, ["explain", incident_id, "--store", str(store)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    kb_id = json.loads(CliRunner().invoke(app, ["explain", incident_id, "--store", str(store), "--json"]).stdout)["kb_id"]
    for text in ("1. cgroup", "2. gpu_processes", "3. allocator", "limit_hit", "node-a/kern.log:5", "node-a/apps.csv:2", "decided by cgroup: yes",
                 kb_id, "Checklist"):
        assert text in result.stdout, text


def test_cli_unknown_incident(store: Path) -> None:
    result = CliRunner().invoke(app, ["explain", "inc-nope", "--store", str(store)])
    assert result.exit_code == 2 and "no incident 'inc-nope'" in result.output


def test_evidence_of_an_oom_report_is_its_headline_not_its_last_line(tmp_path: Path) -> None:
    # The kernel's OOM report is one multi-line event whose last line is a stack frame; kubectl describe's ends in "Controlled By:".
    logs = tmp_path / "logs" / "gpu-d"
    logs.mkdir(parents=True)
    shutil.copy(DATA / "kernel" / "dmesg_oom_cgroup_01.log", logs / "dmesg.log")
    shutil.copy(DATA / "k8s" / "kubectl_describe_pod_evicted_01.txt", logs / "describe.txt")
    rca.ingest(tmp_path / "logs", tmp_path / "store")
    store = rca.open_store(tmp_path / "store")
    correlate_store(store)
    texts = {}
    for incident_id in store.incidents()["incident_id"]:
        for stage in explain(store, incident_id).stages:
            texts.update({f"{line.kind}:{line.line}": line.text for line in stage.evidence})
    assert any(text.startswith("Memory cgroup out of memory: Killed process 63214 (uwsgi)") for text in texts.values()), texts
    assert texts["eviction:1"].startswith("Message: The node was low on resource: memory. Container treetracker-pgpool was using"), texts
    assert not any(text.startswith(("handle_mm_fault", "Controlled By")) for text in texts.values()), texts


@pytest.mark.parametrize("message,shown", [
    ("uwsgi invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0\nCall Trace:\n dump_stack+0x66/0x8b\n handle_mm_fault+0xca/0x200",
     "uwsgi invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0"),
    ("Traceback (most recent call last):\n  File \"train.py\", line 10, in <module>\n    loss.backward()\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."),
    ("RuntimeError: DataLoader worker (pid 575) is killed by signal: Killed.\nThe above exception was the direct cause of the following "
     "exception:\nTraceback (most recent call last):\n  File \"t.py\", line 27, in <module>\n    for batch in loader:\n"
     "RuntimeError: DataLoader worker (pid(s) 575) exited unexpectedly", "RuntimeError: DataLoader worker (pid(s) 575) exited unexpectedly"),
    # a traceback cut before its exception: what raised it, not a frame's code
    ("EngineCore hit an exception: Traceback (most recent call last):\n  File \"core.py\", line 249, in __init__\n"
     "    super().__init__(vllm_config)", "EngineCore hit an exception: Traceback (most recent call last):"),
    ("State:          Terminated\n  Reason:       OOMKilled\n  Exit Code:    0\n  Finished:     Tue, 29 Apr 2025 14:10:51 +0800",
     "Reason: OOMKilled"),
    ("Memory cgroup out of memory: Killed process 575 (pt_data_worker)", "Memory cgroup out of memory: Killed process 575 (pt_data_worker)"),
    (None, ""),
])
def test_headline_is_the_line_a_reader_needs(message: str | None, shown: str) -> None:
    assert headline_of(message) == shown


@pytest.mark.parametrize("name,value,shown", [
    ("gpu_mem_peak_pct", 91.552734375, "91.6%"),
    ("gpu_mem_headroom_bytes", 7256145920, "6.8 GiB"),
    ("gpu_mem_growth_bytes_per_s", 104857600.0, "+104.9 MB/s"),
    ("gpu_mem_growth_sustained_s", 50.0, "50 s"),
    ("gpu_util_period_s", 270.0, "4 min 30 s"),
    ("reserved_unallocated_frac", 0.08143322475570032, "8.1%"),
    ("rss_over_limit", 0.95367431640625, "95.4%"),
    ("requested_over_free", 1.8867924535595977, "1.89× the free memory"),
    ("xid_codes", [13, 109], "13, 109"),
    ("gpu_processes", 1, "1"),
    ("oom_constraint", "memcg", "memcg"),
])
def test_format_figure_reads_an_incident_signal_as_words(name: str, value, shown: str) -> None:
    from rca.explain import format_figure

    assert format_figure(name, value) == shown
