"""A kernel log pasted with a viewer's line numbers, indented by a tab, or with its host blanked out, read as the log itself."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

import rca
from rca import sources
from rca.sources import lines_frame
from rca.sources._grep import without_line_numbers
from tests.conftest import fixture_path

REFERENCE = datetime(2024, 12, 31, tzinfo=UTC)
NUMBERED_SAMPLE = "kern_log_numbered_blank_host_memcg_oom_docker_3_13_01.log"
CGROUP = "/kubepods.slice/pod1.slice/cri-containerd-abc.scope"
KERN_OOM = [
    "Dec  1 03:17:05 node1 kernel: [123456.789012] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
    "Dec  1 03:17:05 node1 kernel: [123456.789100] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-abc.scope,"
    f"mems_allowed=0,oom_memcg=/kubepods.slice/pod1.slice,task_memcg={CGROUP},task=python,pid=4242,uid=0",
    "Dec  1 03:17:05 node1 kernel: [123456.789200] Memory cgroup out of memory: Killed process 4242 (python) total-vm:12345678kB,"
    " anon-rss:8388608kB, file-rss:1024kB, shmem-rss:0kB, UID:0 pgtables:20000kB oom_score_adj:0",
]
DMESG_OOM = [line.split("kernel: ", 1)[1] for line in KERN_OOM]
OOM_FIELDS = ["kind", "pid", "process", "rss_bytes", "cgroup", "host", "ts"]


def _parse(text: str, reference: datetime = REFERENCE) -> pl.DataFrame:
    return rca.parse_text(text, file="pasted.txt", reference_time=reference)


def _oom_events(events: pl.DataFrame) -> list[tuple]:
    return events.filter(pl.col("kind").is_in(["oom_invoked", "oom_kill"])).select(OOM_FIELDS).rows()


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


@pytest.mark.parametrize(
    "number",
    [lambda n: f"{n:6d}\t", lambda n: f"{n} ", lambda n: f"{n}   "],
    ids=["cat_n_tab", "one_space", "spaces"],
)
@pytest.mark.parametrize("lines", [KERN_OOM, DMESG_OOM], ids=["kern_log", "dmesg"])
def test_line_numbers_before_a_kernel_log_are_peeled(number, lines: list[str]) -> None:
    numbered = _parse("".join(f"{number(166233 + n)}{line}\n" for n, line in enumerate(lines)))
    assert set(numbered["source"]) == {"kernel"}
    assert _oom_events(numbered) == _oom_events(_parse(_text(lines)))
    kill = numbered.filter(kind="oom_kill").row(0, named=True)
    assert (kill["pid"], kill["process"], kill["rss_bytes"], kill["cgroup"]) == (4242, "python", 8388608 * 1024, CGROUP)


@pytest.mark.parametrize("lines", [KERN_OOM, DMESG_OOM], ids=["kern_log", "dmesg"])
def test_a_tab_indent_every_line_shares_is_peeled(lines: list[str]) -> None:
    indented = _parse("".join(f"\t{line}\n" for line in lines))
    assert _oom_events(indented) == _oom_events(_parse(_text(lines)))
    assert indented.filter(kind="oom_kill")["pid"].to_list() == [4242]


def test_a_blanked_host_is_no_host() -> None:
    blanked = _parse(_text([line.replace(" node1 ", "   ") for line in KERN_OOM]))
    clean = _parse(_text(KERN_OOM))
    assert blanked["host"].is_null().all()
    assert _oom_events(blanked) == [(*row[:5], None, row[6]) for row in _oom_events(clean)]


@pytest.mark.parametrize(
    "lines",
    [
        [f"{1700000000 + n} worker-{n} step {n} loss 0.5" for n in range(6)],  # an epoch stamp: ten digits
        [f"{n % 2}: [rank{n % 2}] step {n}" for n in range(6)],  # srun --label
        [f"12:34:5{n} step {n} done" for n in range(6)],  # a time of day
        [f"{3 - n % 3} kernel: [  12.{n}] eth0: link up" for n in range(6)],  # numbers that do not rise
    ],
    ids=["epoch", "srun_label", "time", "not_rising"],
)
def test_a_log_whose_lines_open_with_a_number_keeps_it(lines: list[str]) -> None:
    framed = lines_frame(_text(lines))
    assert without_line_numbers(framed)["text"].to_list() == lines
    assert set(_parse(_text(lines))["source"]) == {"pipeline"}


def test_the_numbered_real_kern_log_reads_as_its_clean_lines() -> None:
    text = fixture_path(NUMBERED_SAMPLE).read_text(encoding="utf-8")
    head = text.splitlines()[:60]
    assert sources.sniff(head)[0].name == "grep_output"
    reference = datetime(2018, 4, 30, tzinfo=UTC)
    numbered = _parse(text, reference)
    assert set(numbered["source"]) == {"kernel"}
    when = datetime(2018, 4, 18, 0, 37, 34, tzinfo=UTC)
    cgroup = "/docker/de9d91dd8ee42dfd5e7465045afacea550ffb67315755584adbf8ff515eb0809"
    assert _oom_events(numbered) == [
        ("oom_invoked", 12983, "exe", None, None, None, when),
        ("oom_kill", 12417, "python", 1794532 * 1024, cgroup, None, when),
    ]
    clean = _parse("".join(line.split(" ", 1)[1] + "\n" for line in text.splitlines()), reference)
    assert numbered.equals(clean)
