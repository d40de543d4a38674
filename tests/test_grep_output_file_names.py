"""grep's prefix where the file's name has no log suffix: `grep -rn oom /var/log/` of syslog, messages-20240101, syslog.2.gz.

The prefix is peeled (and the kernel reads the lines under it) whatever the path, with or without logrotate's suffix;
a line whose own text has a colon near its start ("kernel: …", a loader's "/usr/bin/python: error …") keeps it.
"""

from __future__ import annotations

import functools

from datetime import UTC, datetime

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.sources import lines_frame
from rca.sources._grep import without_grep_prefix
from tests.conftest import fixture_path

REFERENCE = datetime(2024, 12, 31, tzinfo=UTC)
KERN_OOM = [
    "Dec  1 03:17:05 node1 kernel: [123456.789012] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
    "Dec  1 03:17:05 node1 kernel: [123456.789100] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
    "global_oom,task_memcg=/user.slice,task=python,pid=4242,uid=0",
    "Dec  1 03:17:05 node1 kernel: [123456.789200] Out of memory: Killed process 4242 (python) total-vm:12345678kB,"
    " anon-rss:8388608kB, file-rss:1024kB, shmem-rss:0kB, UID:0 pgtables:20000kB oom_score_adj:0",
]
SYSTEM_LOGS = ["syslog", "messages", "kern", "dmesg", "daemon", "auth", "secure", "cron"]
ROTATIONS = ["", ".1", ".12", "-20240101", "-2024010112", ".gz", ".2.gz", "-20240101.gz", ".1.xz"]


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="pasted.txt", reference_time=REFERENCE)


def _grepped(lines: list[str], path: str, numbered: bool, first: int = 1230) -> str:
    return "".join(f"{path}:{first + n}:{line}\n" if numbered else f"{path}:{line}\n" for n, line in enumerate(lines))


def _kill(events: pl.DataFrame) -> tuple:
    return events.filter(kind="oom_kill").select("source", "pid", "process", "host").row(0)


@functools.cache
def _block_alone() -> pl.DataFrame:
    return _parse("\n".join(KERN_OOM) + "\n")


@pytest.mark.parametrize(
    ("path", "numbered"),
    [
        ("/var/log/syslog", True),
        ("/var/log/messages-20240101", True),
        # zgrep -n over logrotate's `dateformat -%Y-%m-%d-%s` files (without -n, "messages-2024-…" reads as grep's context line
        # "FILE-NUMBER-text", as grep's own output is ambiguous there)
        ("messages-2024-04-02-1712016061.gz", True),
        ("/var/log/kern.log.1", False),
        ("/var/log/syslog.2.gz", False),
        ("journal/node1/kern", True),
        ("syslog", False),
    ],
)
def test_grep_of_var_log_reads_the_kernels_oom_kill(path: str, numbered: bool) -> None:
    grepped = _parse(_grepped(KERN_OOM, path, numbered))
    assert _kill(grepped) == ("kernel", 4242, "python", "node1")
    assert grepped.equals(_block_alone())


def test_grep_rn_with_context_over_a_rotated_and_a_live_syslog() -> None:
    text = (
        "/var/log/messages-20240101-87-Dec  1 03:17:04 node1 kernel: [123456.700000] eth0: link up\n"
        + _grepped(KERN_OOM[:2], "/var/log/messages-20240101", numbered=True, first=88)
        + "--\n"
        + _grepped(KERN_OOM[2:], "/var/log/messages", numbered=True, first=12)
    )
    grepped = _parse(text)
    assert set(grepped["source"]) == {"kernel"}
    assert grepped.filter(kind="oom_kill").select("line", "pid", "process").rows() == [(5, 4242, "python")]


@pytest.mark.parametrize(
    "lines",
    [
        ["kernel: foo", "kernel: bar"],  # a program's name and its message, no file
        ["I1201 03:17:05.100000    5711 eviction_manager.go:123] eviction manager: attempting to reclaim memory"],
        ["2024-01-01T03:17:05Z node1 kernel: Out of memory: Killed process 4242 (python)"],
        ["/usr/bin/python: error while loading shared libraries: libcudart.so.11.0: cannot open shared object file: No such file"],
        ["libcudart.so.11.0: cannot open shared object file: No such file or directory"],
        ["INFO:root:step 1", "WARNING:tensorflow:step 2"],
        # a source location, a compiler's and a linter's lines, a Bazel target, an image: paths, no grep's
        ["/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: out of memory"],
        ["rca/foo.py:12: error: Incompatible types", "rca/foo.py:30: error: Missing return"],
        ["./main.go:12:5: undefined: x", "./main.go:14:2: undefined: y"],
        ["//tensorflow/core/kernels:matmul_op_test   FAILED in 3.1s", "//tensorflow/core/kernels:conv_ops_test   PASSED in 9.2s"],
        ["nvcr.io/nvidia/pytorch:24.01-py3", "nvcr.io/nvidia/tritonserver:24.01-py3"],
    ],
)
def test_a_line_whose_own_text_has_a_colon_keeps_it(lines: list[str]) -> None:
    assert without_grep_prefix(lines_frame("\n".join(lines) + "\n"))["text"].to_list() == lines


@pytest.mark.parametrize(
    ("name", "pid", "process", "host", "anon_rss_kb"),
    [
        ("syslog_grep_r_oom_killed_python3_ubuntu_01.log", 2190495, "python3", "ubuntu-20-04LTS", 302008),
        ("syslog_grep_r_rotated_killed_procon_aliyun_01.log", 17909, "procon", "iZuf66b59tpzdaxbchl3d4Z", 4543100),
    ],
)
def test_verbatim_grep_r_of_var_log_is_the_kernels_oom_kill(name: str, pid: int, process: str, host: str, anon_rss_kb: int) -> None:
    text = fixture_path(name).read_text()
    assert sources.sniff(text.splitlines())[0].name == "grep_output"
    events = _parse(text)
    assert _kill(events) == ("kernel", pid, process, host)
    assert events.filter(kind="oom_kill")["rss_bytes"].to_list() == [anon_rss_kb * 1024]


_SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)
_BASE = st.from_regex(r"[a-z][a-z0-9_-]{0,6}[a-z]", fullmatch=True)
_FOLDER = st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join).flatmap(lambda d: st.sampled_from([f"/{d}/", f"{d}/", f"./{d}/"]))


@st.composite
def _paths(draw: st.DrawFn) -> str:
    """A file's path as grep prints it: a log's name (a .log-like suffix), a name with a rotation suffix, or one of
    syslog's own files, in a folder or not (any other bare word or path is the line's own text)."""
    folder = draw(st.one_of(st.just(""), _FOLDER))
    shape = draw(st.sampled_from(["suffixed", "rotated", "system"]))
    if shape == "system":
        names = SYSTEM_LOGS if folder else ["syslog", "messages", "dmesg"]
        return f"{folder}{draw(st.sampled_from(names))}{draw(st.sampled_from(ROTATIONS))}"
    suffix = draw(st.sampled_from([".log", ".txt", ".out"])) if shape == "suffixed" else ""
    rotation = draw(st.sampled_from(ROTATIONS if suffix else ROTATIONS[1:]))
    return f"{folder}{draw(_BASE)}{suffix}{rotation}"


@settings(max_examples=6, deadline=None)
@given(path=_paths(), numbered=st.booleans())
def test_any_path_before_a_kernel_oom_block_yields_the_blocks_events(path: str, numbered: bool) -> None:
    assert _parse(_grepped(KERN_OOM, path, numbered)).equals(_block_alone())
