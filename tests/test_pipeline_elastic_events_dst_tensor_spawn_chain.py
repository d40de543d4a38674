"""torchelastic's JSON worker-status events, TensorFlow's "Dst tensor is not initialized." and chained tracebacks
(torch.multiprocessing.spawn's child traceback, TensorFlow 1.x's "Caused by op … defined at:")."""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import fixture_path

_EVENT = (
    '{{"name": "torchelastic.worker.status.{state}", "source": "WORKER", "timestamp": 0, "metadata": {{"run_id": "none", '
    '"global_rank": {rank}, "group_rank": 0, "worker_id": "{pid}", "role": "default", "hostname": "{host}", "state": "{state}", '
    '"total_run_time": 20, "rdzv_backend": "static", "raw_error": "{{\\"message\\": \\"<NONE>\\"}}", "metadata": '
    '"{{\\"group_world_size\\": 1, \\"entry_point\\": \\"python\\", \\"local_rank\\": [{rank}], \\"role_rank\\": [{rank}], '
    '\\"role_world_size\\": [8]}}", "agent_restarts": 3}}}}'
)


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="x")


def _fixture(name: str) -> pl.DataFrame:
    return _parse(fixture_path(name).read_text())


def test_elastic_failed_event_names_worker_pid_rank_host_and_level() -> None:
    events = _fixture("pytorch_torchelastic_worker_status_json_events_01.log")
    failed, agent = events.row(0, named=True), events.row(1, named=True)
    assert (failed["kind"], failed["severity"], failed["pid"], failed["host"]) == ("log", "error", 28454, "ip-172-30-2-79")
    assert json.loads(failed["attrs"]) == {"rank": 1}
    # the agent's event names no worker: no pid, no rank
    assert (agent["severity"], agent["pid"], agent["host"], agent["attrs"]) == ("info", None, "ip-172-30-2-79", None)


def test_elastic_zero_timestamp_is_no_time() -> None:
    events = _fixture("pytorch_torchelastic_worker_status_json_failed_02.log")
    assert events["ts"].null_count() == events.height
    assert events["ts_raw"].null_count() == events.height
    assert set(events["ts_quality"]) == {"missing"}
    assert events["pid"].to_list() == [11376, 11377]


def test_json_line_with_zero_time_is_not_stamped() -> None:
    events = _parse('{"timestamp": 0, "level": "error", "message": "boom"}\n')
    row = events.row(0, named=True)
    assert (row["ts"], row["ts_raw"], row["ts_quality"], row["severity"]) == (None, None, "missing", "error")


@settings(max_examples=30, deadline=None)
@given(
    state=st.sampled_from(["FAILED", "SUCCEEDED", "UNHEALTHY", "HEALTHY"]),
    rank=st.integers(0, 4095),
    pid=st.integers(1, 4_194_304),
    host=st.from_regex(r"[a-z][a-z0-9.\-]{0,30}[a-z0-9]", fullmatch=True),
)
def test_elastic_event_fields_fuzzed(state: str, rank: int, pid: int, host: str) -> None:
    row = _parse(_EVENT.format(state=state, rank=rank, pid=pid, host=host) + "\n").row(0, named=True)
    level = {"FAILED": "error", "UNHEALTHY": "warning"}.get(state, "info")
    assert (row["pid"], row["host"], row["severity"], row["ts_raw"]) == (pid, host, level, None)
    assert json.loads(row["attrs"]) == {"rank": rank}


def test_dst_tensor_not_initialized_is_a_gpu_oom() -> None:
    events = _fixture("tf_internal_error_dst_tensor_bfc_allocator_01.log")
    oom = events.filter(pl.col("kind") == "cuda_oom").row(0, named=True)
    assert (oom["line"], oom["gpu_index"], oom["severity"]) == (2, 0, "error")
    assert json.loads(oom["attrs"])["exc_message"] == "Dst tensor is not initialized."


def test_tf1_caused_by_op_section_stays_with_its_traceback() -> None:
    events = _fixture("tf_internal_error_dst_tensor_caused_by_op_01.log")
    assert events.height == 1
    row = events.row(0, named=True)
    # TensorFlow 1.x's old device name: "/job:localhost/replica:0/task:0/gpu:0"
    assert (row["kind"], row["gpu_index"], row["n_lines"]) == ("cuda_oom", 0, 19)


def test_tf_executor_glog_line_and_traceback_both_name_the_oom() -> None:
    events = _fixture("tf_executor_glog_dst_tensor_not_initialized_01.log")
    assert events.filter(pl.col("kind") == "cuda_oom")["line"].to_list() == [1, 3]


def test_spawn_child_traceback_is_one_record_with_the_childs_exception() -> None:
    events = _fixture("pytorch_mp_spawn_process_raised_child_traceback_chain_01.log")
    record = events.filter(pl.col("line") == 8).row(0, named=True)
    attrs = json.loads(record["attrs"])
    assert (record["kind"], record["n_lines"], attrs["exc_type"]) == ("traceback", 33, "RuntimeError")
    assert attrs["last_frame"].endswith("torch/autograd/__init__.py:98 in backward")
    assert not events["message"].str.starts_with("-- Process 1 terminated").any()
