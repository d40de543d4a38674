"""Tracebacks whose frames lost their indentation (vLLM worker logs pasted flat) and SGLang's tensor-parallel rank."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_source_pipeline import _parse

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
    "GPU 0 has a total capacity of 79.25 GiB of which 1.00 GiB is free."
)
FLAT_TRACEBACK = [
    "Traceback (most recent call last):",
    'File "/x/vllm/executor/multiproc_worker_utils.py", line 233, in _run_worker_process',
    "output = run_method(worker, method, args, kwargs)",
    "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    'File "/x/vllm/worker/worker.py", line 40, in determine_num_available_blocks',
    'return torch.empty(n, device="cuda")',
    OOM,
]
V0_WORKER = "(VllmWorkerProcess pid=1234) ERROR 05-01 12:00:00 [multiproc_worker_utils.py:233] "


def _events(lines: list[str]) -> pl.DataFrame:
    return _parse("\n".join(lines) + "\n")[0]


def _attrs(row: dict) -> dict:
    return json.loads(row["attrs"]) if row["attrs"] else {}


@pytest.mark.parametrize(
    ("prefix", "rank"),
    [
        (V0_WORKER, None),
        ("(RayWorkerWrapper pid=1234, ip=10.0.0.5) ERROR 05-01 12:00:00 [worker_base.py:620] ", None),
        ("(VllmWorker rank=1 pid=1234) ", 1),
    ],
)
def test_flat_frames_behind_a_worker_prefix_fold_into_one_oom_traceback(prefix: str, rank: int | None) -> None:
    events = _events(["INFO 05-01 11:59:59 [api_server.py:100] Starting", *(prefix + line for line in FLAT_TRACEBACK)])
    assert events["line"].to_list() == [1, 2]
    oom = events.row(1, named=True)
    assert (oom["kind"], oom["pid"], oom["n_lines"], oom["gpu_index"]) == ("cuda_oom", 1234, 7, 0)
    assert _attrs(oom).get("rank") == rank
    assert _attrs(oom)["last_frame"] == "/x/vllm/worker/worker.py:40 in determine_num_available_blocks"


def test_bare_flat_traceback_folds_and_a_file_line_after_it_stays_its_own() -> None:
    events = _events([*FLAT_TRACEBACK, 'File "/etc/app.conf", line 3 is not valid'])
    assert events.select("line", "kind", "n_lines").rows() == [(1, "cuda_oom", 7), (8, "log", 1)]


def test_unindented_file_line_under_no_traceback_header_stays_a_line() -> None:
    lines = ["2025-05-01 12:00:00 INFO loading config", 'File "/etc/app.conf", line 3, in section', "value = 7"]
    events = _events(lines)
    assert events.select("line", "kind", "n_lines").rows() == [(1, "log", 1), (2, "log", 1), (3, "log", 1)]


def test_worker_log_cut_inside_a_flat_traceback_folds_from_its_first_line() -> None:
    events = _events([V0_WORKER + line for line in FLAT_TRACEBACK[3:]])
    assert events.select("line", "kind", "n_lines", "pid").rows() == [(1, "cuda_oom", 4, 1234)]


def test_sglang_tp_rank_is_the_rank_not_the_gpu() -> None:
    events = _events(
        [
            "[2025-05-01 12:00:00 TP3] Scheduler hit an exception: Traceback (most recent call last):",
            '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2353, in run_scheduler_process',
            "    scheduler.event_loop_overlap()",
            "RuntimeError: boom",
            "[2025-05-01 12:00:01 TP2] Load weight end. type=LlamaForCausalLM, avail mem=10.00 GB",
        ]
    )
    rows = events.select("line", "kind", "gpu_index", "attrs").to_dicts()
    assert [(r["line"], r["kind"], r["gpu_index"], _attrs(r)["rank"]) for r in rows] == [(1, "traceback", None, 3), (5, "log", None, 2)]


_FRAME = st.tuples(
    st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    st.integers(1, 9999),
    st.sampled_from(["", "return f(x)", "y = g(*args)"]),
    st.booleans(),
)


@settings(max_examples=10, deadline=None)
@given(frames=st.lists(_FRAME, min_size=1, max_size=5), prefix=st.sampled_from(["", V0_WORKER]), oom=st.booleans())
def test_any_flat_traceback_is_one_record_of_all_its_lines(frames: list[tuple[str, int, str, bool]], prefix: str, oom: bool) -> None:
    body = ["Traceback (most recent call last):"]
    for name, number, code, markers in frames:
        body.append(f'File "/src/{name}.py", line {number}, in {name}')
        body += [code, "^" * len(code)] if code and markers else [code] if code else []
    body.append(OOM if oom else "ValueError: bad value")
    events = _events([prefix + line for line in body])
    assert events.select("line", "kind", "n_lines").rows() == [(1, "cuda_oom" if oom else "traceback", len(body))]
