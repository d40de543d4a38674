"""Signals on synthetic curves and hand-made incidents: growth, shape, period, fragmentation, sharing, host OOM."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rca.correlate import correlate
from rca.ingest import parse_text
from rca.signals import growth_shape, oscillation_period
from tests.conftest import at, event_frame

GIB = 1024**3
TOTAL = 80 * GIB


def curve(used, util=None, step: float = 5, gpu: int = 0) -> list[dict]:
    """GPU samples ending at the anchor (t=0), one per ``step`` seconds."""
    n = len(used)
    return [
        {"ts": at(-(n - 1 - i) * step), "kind": "gpu_sample", "source": "nvidia_smi", "file": "node-a/smi.csv", "line": 10_000 + i,
         "gpu_index": gpu, "mem_used_bytes": int(used[i]), "mem_total_bytes": TOTAL, "gpu_util_pct": None if util is None else float(util[i])}
        for i in range(n)
    ]


def oom(**extra) -> dict:
    return {"ts": at(0), "kind": "cuda_oom", "source": "pipeline", "file": "node-a/train.log", "line": 1, "gpu_index": 0, "pid": 4242, **extra}


def only(events: pl.DataFrame) -> dict:
    (row,) = correlate(events).incidents.to_dicts()
    return row


# --- pure functions on synthetic curves ---------------------------------------------------


t = np.arange(0, 900, 5.0)


def test_linear_leak_is_a_steady_leak() -> None:
    assert growth_shape(t, 20 * GIB + 20e6 * t, TOTAL) == "steady_leak"


def test_step_is_a_single_step() -> None:
    assert growth_shape(t, np.where(t < 600, 20 * GIB, 70 * GIB) + np.random.default_rng(0).normal(0, 5e6, len(t)), TOTAL) == "single_step"


def test_sawtooth_is_a_sawtooth() -> None:
    assert growth_shape(t, 30 * GIB + (t % 150) / 150 * 30 * GIB, TOTAL) == "sawtooth"


def test_noise_is_flat_and_a_staircase_is_a_leak() -> None:
    assert growth_shape(t, 30 * GIB + np.random.default_rng(1).normal(0, 20e6, len(t)), TOTAL) == "flat"
    assert growth_shape(t, 20 * GIB + (t // 180) * 6 * GIB, TOTAL) == "steady_leak"
    assert growth_shape(t[:2], t[:2], TOTAL) is None


def test_utilization_cycle_period_from_autocorrelation() -> None:
    busy = np.where((t % 83) < 60, 97.0, 4.0) + np.random.default_rng(2).normal(0, 2, len(t))
    assert oscillation_period(t, busy) == pytest.approx(83, abs=2)
    fine = np.arange(0, 900, 1.0)
    assert oscillation_period(fine, 50 + 40 * np.sin(2 * np.pi * fine / 83)) == pytest.approx(83, abs=0.5)


def test_no_period_in_a_steady_or_random_series() -> None:
    assert oscillation_period(t, np.full(len(t), 95.0)) is None
    assert oscillation_period(t, np.random.default_rng(3).uniform(0, 100, len(t))) is None


# --- signals through correlate -------------------------------------------------------------


def test_growth_rate_and_sustained_seconds_of_a_leak() -> None:
    row = only(event_frame(*curve(20 * GIB + 20e6 * t), oom()))
    assert row["gpu_mem_growth_bytes_per_s"] == pytest.approx(20e6, rel=1e-6)
    assert row["gpu_mem_growth_sustained_s"] == pytest.approx(895.0)
    assert row["gpu_mem_growth_shape"] == "steady_leak"
    last = 20 * GIB + 20e6 * t[-1]
    assert row["gpu_mem_peak_pct"] == pytest.approx(last / TOTAL * 100)
    assert row["gpu_mem_headroom_bytes"] == TOTAL - int(last)


def dcgm(used, pods=("trainer-0",), step: float = 5) -> list[dict]:
    """DCGM exporter samples of GPU 0 ending at the anchor: the device's figures repeated in each pod's series."""
    n = len(used)
    return [
        {"ts": at(-(n - 1 - i) * step), "kind": "gpu_sample", "source": "dcgm", "file": "node-a/dcgm.prom", "line": 1 + i * len(pods) + j,
         "gpu_index": 0, "pod": pod, "mem_used_bytes": int(used[i]), "mem_total_bytes": TOTAL}
        for i in range(n) for j, pod in enumerate(pods)
    ]


def test_dcgm_samples_give_the_growth_when_nvidia_smi_has_none() -> None:
    row = only(event_frame(*dcgm(20 * GIB + 20e6 * t, pods=("trainer-0", "notebook-3")), oom()))
    assert row["gpu_mem_growth_bytes_per_s"] == pytest.approx(20e6, rel=1e-6)
    assert row["gpu_mem_growth_sustained_s"] == pytest.approx(895.0)
    assert (row["gpu_mem_growth_shape"], row["gpu_pods"]) == ("steady_leak", 2)


def test_nvidia_smi_samples_win_over_dcgm_ones() -> None:
    row = only(event_frame(*curve(np.full(len(t), 30 * GIB)), *dcgm(20 * GIB + 20e6 * t), oom()))
    assert row["gpu_mem_growth_shape"] == "flat" and abs(row["gpu_mem_growth_bytes_per_s"]) < 1.0


def test_a_sudden_step_is_not_a_sustained_growth() -> None:
    row = only(event_frame(*curve(np.where(t < 800, 20 * GIB, 75 * GIB)), oom()))
    assert row["gpu_mem_growth_shape"] == "single_step"
    assert row["gpu_mem_growth_sustained_s"] == pytest.approx(5.0)  # one sample interval, under the 10 s alert


def test_utilization_period_of_the_incident_gpu_only() -> None:
    busy = np.where((t % 83) < 50, 95.0, 5.0)
    other = [{**sample, "gpu_index": 1, "line": sample["line"] + 5000, "gpu_util_pct": 50.0 + (i % 2) * 40}
             for i, sample in enumerate(curve(np.full(len(t), GIB), util=busy))]
    row = only(event_frame(*curve(np.full(len(t), 30 * GIB), util=busy), *other, oom()))
    assert row["gpu_util_period_s"] == pytest.approx(83, abs=2)
    assert row["gpu_mem_growth_shape"] == "flat"


def test_fragmentation_and_request_from_a_real_cuda_oom_message() -> None:
    events = parse_text(
        "2026-11-30 12:00:00,000 ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 1.06 GiB is free. Process 4242 has 78.09 GiB memory in use. Of the allocated memory 70.50 GiB is "
        "allocated by PyTorch, and 6.25 GiB is reserved by PyTorch but unallocated.\n",
        file="node-a/train.log", host="node-a", format="pipeline",
    )
    row = only(events)
    assert row["reserved_unallocated_bytes"] == round(6.25 * GIB)
    assert row["reserved_unallocated_frac"] == pytest.approx(6.25 / (70.50 + 6.25))
    assert row["requested_bytes"] == 2 * GIB and row["free_bytes"] == round(1.06 * GIB)
    assert row["requested_over_free"] == pytest.approx(2 / 1.06, rel=1e-3)
    assert row["gpu_mem_peak_pct"] is None  # no samples: null, not zero


def test_memory_freed_by_the_crash_itself_is_not_part_of_the_curve() -> None:
    freed = [*curve(20 * GIB + 20e6 * t)[:-1], {**curve([1 * 2**20])[0], "ts": at(-5), "line": 9999}]
    row = only(event_frame(*freed, oom()))
    assert row["gpu_mem_growth_shape"] == "steady_leak"
    assert row["gpu_mem_headroom_bytes"] == TOTAL - int(20 * GIB + 20e6 * t[-2])


@pytest.mark.parametrize("own_pid", [4242, None])
def test_processes_pods_and_stale_memory_on_the_gpu(own_pid: int | None) -> None:
    apps = [
        {"ts": at(-60), "kind": "gpu_process", "source": "nvidia_smi", "file": "node-a/apps.csv", "line": n, "gpu_uuid": "GPU-0",
         "pid": pid, "mem_used_bytes": mib * 2**20}
        for n, (pid, mib) in enumerate([(4242, 50_000), (5151, 20_000), (6161, 9_000)], 1)
    ] + [{"ts": at(-60), "kind": "gpu_process", "source": "nvidia_smi", "file": "node-a/apps.csv", "line": 9, "gpu_uuid": "GPU-1",
          "pid": 7171, "mem_used_bytes": 2**30}]
    events = event_frame(
        {"ts": at(-300), "kind": "gpu_sample", "source": "nvidia_smi", "file": "node-a/smi.csv", "line": 1, "gpu_index": 0, "gpu_uuid": "GPU-0",
         "mem_used_bytes": 79 * GIB, "mem_total_bytes": TOTAL},
        *apps,
        # pid 5151 still logs (another pod's trainer); 6161 is a leftover context nobody hears from
        {"ts": at(-30), "kind": "log", "source": "pipeline", "file": "node-a/other.log", "line": 1, "pid": 5151, "pod": "other-0"},
        {"ts": at(-3000), "kind": "oom_kill", "source": "kernel", "file": "node-a/kern.log", "line": 1, "pid": 4242, "pod": "trainer-0"},
        oom(gpu_index=0, pid=own_pid),  # without a pid, the biggest holder is taken for the job itself
    )
    incidents = correlate(events).incidents.filter(pl.col("anchor_kind") == "cuda_oom")
    row = incidents.row(0, named=True)
    assert (row["gpu_processes"], row["gpu_pods"], row["stale_gpu_bytes"]) == (3, 2, 9_000 * 2**20)


def test_host_oom_rss_limit_constraint_and_grower() -> None:
    kern = parse_text(
        "Nov 30 12:00:01 node-a kernel: [ 7063.100000] python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=986\n"
        "Nov 30 12:00:01 node-a kernel: [ 7063.100100] memory: usage 4194304kB, limit 4194304kB, failcnt 1234\n"
        "Nov 30 12:00:01 node-a kernel: [ 7063.100300] Memory cgroup out of memory: Killed process 4242 (python) total-vm:8000000kB, "
        "anon-rss:4000000kB, file-rss:100kB, shmem-rss:0kB, UID:0 pgtables:9000kB oom_score_adj:986\n",
        file="node-a/kern.log", host="node-a", year=2026, format="kernel",
    )
    rss = event_frame(*[
        {"ts": at(-600 + 60 * i), "kind": "log", "source": "pipeline", "file": "node-a/mon.log", "line": 1 + 2 * i + j, "pid": pid, "rss_bytes": size}
        for i in range(10) for j, (pid, size) in enumerate([(4242, GIB), (777, GIB + i * 600 * 2**20)])
    ])
    row = only(pl.concat([kern, rss]))
    assert (row["killed_rss_bytes"], row["cgroup_limit_bytes"]) == (4_000_000 * 1024, 4 * GIB)
    assert row["rss_over_limit"] == pytest.approx(4_000_000 / 4_194_304)
    assert row["oom_constraint"] == "memcg"
    assert row["victim_was_grower"] is False  # pid 777 grew; 4242 was killed


def test_restart_count_and_runtime_marker_from_the_evidence() -> None:
    events = event_frame(
        {"ts": at(-60), "kind": "log", "source": "k8s", "pod": "api-0", "attrs": {"restarts": 4}},
        {"ts": at(0), "kind": "log", "source": "pipeline", "pod": "api-0", "attrs": {"oom": "go_runtime"}, "message": "fatal error: runtime: out of memory"},
    )
    row = only(events)
    assert (row["restart_count"], row["runtime_oom"], row["anchor_kind"]) == (4, "go_runtime", "log")
