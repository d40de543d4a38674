"""grep's output of a kernel or kubelet log (``grep -n``, ``grep -rn``, ``grep -C``) read as that log, not as pipeline lines."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl

import rca
from rca import sources
from rca.sources import grep_output, lines_frame
from rca.sources._base import ParseContext

REFERENCE = datetime(2024, 12, 31, tzinfo=UTC)
KUBELET_SAMPLE = Path(__file__).parent / "data" / "kubelet" / "kubelet_grep_n_e2e_dump_events_oomkill_evicted_01.log"
POD_SLICE = "kubepods-burstable-pod1234abcd_5678_90ef_1234_567890abcdef.slice"
KERN_OOM = [
    "Dec  1 03:17:05 node1 kernel: [123456.789012] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
    "Dec  1 03:17:05 node1 kernel: [123456.789100] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-abc.scope,"
    f"mems_allowed=0,oom_memcg=/kubepods.slice/kubepods-burstable.slice/{POD_SLICE},"
    f"task_memcg=/kubepods.slice/kubepods-burstable.slice/{POD_SLICE}/cri-containerd-abc.scope,task=python,pid=4242,uid=0",
    "Dec  1 03:17:05 node1 kernel: [123456.789200] Memory cgroup out of memory: Killed process 4242 (python) total-vm:12345678kB,"
    " anon-rss:8388608kB, file-rss:1024kB, shmem-rss:0kB, UID:0 pgtables:20000kB oom_score_adj:0",
]


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="pasted.txt", reference_time=REFERENCE)


def _grep_n(lines: list[str], first: int, file: str = "") -> str:
    return "".join(f"{file}{first + n}:{line}\n" for n, line in enumerate(lines))


def test_grep_n_of_a_kern_log_oom_block_is_the_kernels_oom_kill() -> None:
    grepped = _parse(_grep_n(KERN_OOM, 1230, "/var/log/kern.log:"))
    kill = grepped.filter(kind="oom_kill").row(0, named=True)
    assert (kill["source"], kill["line"], kill["pid"], kill["process"], kill["rss_bytes"]) == ("kernel", 3, 4242, "python", 8388608 * 1024)
    assert kill["ts"] == datetime(2024, 12, 1, 3, 17, 5, tzinfo=UTC)
    assert kill["cgroup"] == f"/kubepods.slice/kubepods-burstable.slice/{POD_SLICE}/cri-containerd-abc.scope"
    assert grepped.filter(kind="oom_invoked")["process"].to_list() == ["python"]
    # every field as the log itself reads it
    assert grepped.equals(_parse("\n".join(KERN_OOM) + "\n"))


def test_grep_rn_over_two_files_with_context_reads_each_files_lines() -> None:
    text = (
        "/var/log/kern.log-1229-Dec  1 03:17:04 node1 kernel: [123456.700000] eth0: link up\n"
        + _grep_n(KERN_OOM[:1], 1230, "/var/log/kern.log:")
        + "--\n"
        + _grep_n(KERN_OOM[1:], 88, "/var/log/kern.log.1:")
    )
    grepped = _parse(text)
    assert set(grepped["source"]) == {"kernel"}
    assert grepped.filter(kind="oom_kill").select("line", "pid", "process").rows() == [(5, 4242, "python")]
    assert grepped["line"].to_list() == [1, 2, 4, 5]  # grep's separator is no line of the log


def test_kubelet_klog_eviction_under_bare_numbers() -> None:
    eviction = 'I0712 15:54:56.488170    5711 eviction_manager.go:627] "Eviction manager: pod is evicted successfully" pod="ml/trainer-0"'
    text = _grep_n(
        [
            'I0712 15:54:50.100000    5711 eviction_manager.go:369] "Eviction manager: attempting to reclaim" resourceName="memory"',
            eviction,
        ],
        41,
    )
    grepped = _parse(text)
    assert set(grepped["source"]) == {"kubelet"}
    evicted = grepped.filter(pl.col("kind") == "eviction", pl.col("pod").is_not_null()).row(0, named=True)
    assert (evicted["line"], evicted["pod"], evicted["namespace"], evicted["pid"]) == (2, "trainer-0", "ml", 5711)


def test_verbatim_grep_n_of_an_e2e_build_log_is_kubelets_eviction() -> None:
    # kubernetes/kubernetes#126053: grep -n of build-log.txt, klog lines indented by the e2e runner
    grepped = _parse(KUBELET_SAMPLE.read_text())
    assert set(grepped["source"]) == {"kubelet"}
    evicted = grepped.filter(kind="eviction").row(0, named=True)
    assert (evicted["line"], evicted["pod"], evicted["pid"]) == (4, "oomkill-nodeallocatable-pod", 5711)
    assert evicted["ts"] == datetime(2024, 7, 12, 15, 49, 58, tzinfo=UTC)


def test_grep_output_of_a_training_log_stays_the_pipelines() -> None:
    training = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "train.py", line 3, in <module>',
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory.",
    ]
    text = _grep_n(training, 120, "train.log:")
    assert sources.sniff(text.splitlines())[0].name == "pipeline"
    lines = lines_frame(text)
    ctx = ParseContext(file="train.log", reference_time=REFERENCE)
    handed_back = grep_output.parse(lines, ctx).events
    assert handed_back["source"].to_list() == ["pipeline"]  # named the pipeline's, as the driver would name them grep_output's
    assert handed_back.drop("source").equals(sources.get("pipeline").parse(lines, ctx).events)


def test_a_batch_of_small_files_reads_each_by_its_own_source() -> None:
    kern = lines_frame(_grep_n(KERN_OOM, 10, "kern.log:"))
    training = lines_frame(_grep_n(["[rank0]: step 1 loss 2.5", "[rank0]: step 2 loss 2.4"], 5))
    batch = pl.concat(
        [kern.with_columns(batch_file=pl.lit(0, pl.Int32)), training.with_columns(batch_file=pl.lit(1, pl.Int32), line=pl.col("line") + 3)]
    )
    ctx = ParseContext(file="kern.txt", reference_time=REFERENCE, files=(("kern.txt", REFERENCE), ("train.txt", REFERENCE)))
    parsed = grep_output.parse(batch, ctx)
    by_line = dict(parsed.events.select("line", "source").fill_null("pipeline").rows())
    assert [by_line.get(line) for line in (3, 4, 5)] == ["kernel", "pipeline", "pipeline"]
