"""Kernel log shapes found in public samples the fixtures did not have (helper-187).

A mail client wraps a long dmesg line at its left margin with no indent (the OOM killer's kill, reaper and task-table
lines); memory.oom.group's sweep kills tasks the ``oom-kill:`` summary does not name, in the memcg that hit its limit.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

import rca

REFERENCE = datetime(2026, 1, 1, tzinfo=UTC)


def _events(text: str, name: str = "dmesg_sample.log") -> pl.DataFrame:
    return rca.parse_text(text, file=name, reference_time=REFERENCE)


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).row(0, named=True)


MAIL_WRAPPED = """\
[  100.000001] [   4321]     0  4321  4726385  3349389 26939392
0             0 trainer
[  100.000002] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task=trainer,pid=4321,uid=0
[  100.000003] Out of memory: Killed process 4321 (trainer)
total-vm:18905540kB, anon-rss:2048kB, file-rss:0kB, shmem-rss:0kB,
UID:0 pgtables:26308kB oom_score_adj:0
[  100.500000] oom_reaper: reaped process 4321 (trainer), now
anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
"""


def test_a_kill_line_wrapped_at_the_margin_keeps_its_figures() -> None:
    kill = _row(_events(MAIL_WRAPPED), 4)
    assert (kill["kind"], kill["pid"], kill["process"]) == ("oom_kill", 4321, "trainer")
    assert kill["rss_bytes"] == 2048 * 1024
    assert kill["n_lines"] == 3


def test_a_task_row_cut_before_its_name_is_read_across_the_two_lines() -> None:
    row = _row(_events(MAIL_WRAPPED), 1)
    assert (row["pid"], row["process"], row["n_lines"]) == (4321, "trainer", 2)


def test_a_wrapped_reaper_line_is_one_info_event() -> None:
    reaper = _row(_events(MAIL_WRAPPED), 7)
    assert (reaper["kind"], reaper["severity"], reaper["pid"], reaper["n_lines"]) == ("log", "info", 4321, 2)


def test_an_unstamped_line_of_other_words_stays_a_line_of_its_own() -> None:
    text = "[  100.000003] Out of memory: Killed process 4321 (trainer) total-vm:1kB, anon-rss:4kB, file-rss:0kB\ntotal: 3 kills\n"
    events = _events(text)
    assert _row(events, 1)["rss_bytes"] == 4 * 1024
    assert _row(events, 2)["message"] == "total: 3 kills"


GROUP_SWEEP = """\
2026-09-02T09:08:50.880492+00:00 node1 kernel: app invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=934
2026-09-02T09:08:50.903135+00:00 node1 kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=c.scope,mems_allowed=0,oom_memcg=/pod.slice,task_memcg=/pod.slice/c.scope,task=app,pid=10,uid=0
2026-09-02T09:08:50.903136+00:00 node1 kernel: Memory cgroup out of memory: Killed process 10 (app) total-vm:8kB, anon-rss:4kB, file-rss:0kB
2026-09-02T09:08:50.903138+00:00 node1 kernel: Memory cgroup out of memory: Killed process 11 (tini) total-vm:8kB, anon-rss:0kB, file-rss:4kB
2026-09-02T09:08:50.903139+00:00 node1 kernel: Memory cgroup out of memory: Killed process 10 (app) total-vm:8kB, anon-rss:4kB, file-rss:0kB
"""


def test_a_group_sweep_kill_the_summary_does_not_name_is_in_the_limited_memcg() -> None:
    kills = _events(GROUP_SWEEP, "kern_sample.log").filter(pl.col("kind") == "oom_kill")
    assert kills.select("pid", "process", "cgroup").rows() == [(10, "app", "/pod.slice/c.scope"), (11, "tini", "/pod.slice")]


def test_a_global_oom_names_no_memcg_for_a_kill_it_does_not_summarize() -> None:
    text = GROUP_SWEEP.replace("CONSTRAINT_MEMCG", "CONSTRAINT_NONE").replace("oom_memcg=/pod.slice,", "global_oom,")
    kills = _events(text.replace("Memory cgroup out of memory", "Out of memory"), "kern_sample.log").filter(pl.col("kind") == "oom_kill")
    assert kills.filter(pl.col("pid") == 11)["cgroup"].to_list() == [None]
