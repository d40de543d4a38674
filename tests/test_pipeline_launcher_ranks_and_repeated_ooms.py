"""torchrun's local-rank tag, one CUDA OOM told three times, NCCL's remote-peer error (synthetic lines)."""

from __future__ import annotations

import json

from tests.conftest import parse_log

_OOM = (
    "CUDA out of memory. Tried to allocate 2.32 GiB. GPU 0 has a total capacity of 63.59 GiB of which 242.31 MiB is free. "
    "Of the allocated memory 61.08 GiB is allocated by PyTorch."
)


def _events(text: str) -> list[dict]:
    return parse_log(text).sort("line").to_dicts()


def test_default_tag_is_the_local_rank_and_rank_tag_the_global_one() -> None:
    both, alone = _events(
        "[default1]:[rank9]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 9] NCCL watchdog thread terminated with exception: boom\n"
        "[default0]:step 10 done\n"
    )
    assert json.loads(both["attrs"]) == {"rank": 9, "local_rank": 1}
    assert json.loads(alone["attrs"]) == {"local_rank": 0}
    assert alone["message"] == "step 10 done"


def test_one_oom_told_three_times_by_one_process_is_one_cuda_oom() -> None:
    events = _events(
        f"[default0]:WARNING:megatron.core.utils:{_OOM}\n"
        "[default0]:[rank0]: Traceback (most recent call last):\n"
        f"[default0]:[rank0]: torch.OutOfMemoryError: {_OOM}\n"
        f"[default0]:['Traceback (most recent call last):\\n', 'torch.OutOfMemoryError: {_OOM}\\n']\n"
    )
    assert [(e["line"], e["kind"]) for e in events] == [(1, "log"), (2, "cuda_oom"), (4, "traceback")]
    assert events[1]["mem_requested_bytes"] == 2491081032 and events[0]["mem_requested_bytes"] is None


def test_the_same_oom_on_two_local_ranks_stays_two_failures() -> None:
    events = _events(f"[default0]:WARNING:megatron.core.utils:{_OOM}\n[default1]:WARNING:megatron.core.utils:{_OOM}\n")
    assert [e["kind"] for e in events] == ["cuda_oom", "cuda_oom"]


def test_nccl_remote_error_is_read_as_the_other_nccl_errors() -> None:
    (remote,) = _events("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n")
    (system,) = _events("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")
    assert (remote["kind"], remote["severity"], json.loads(remote["attrs"])) == ("log", "error", {"cuda_error": "ncclRemoteError"})
    assert (system["kind"], json.loads(system["attrs"])) == ("log", {"cuda_error": "ncclSystemError"})


def test_an_oom_of_another_rank_between_two_tellings_stays_its_own_failure() -> None:
    events = _events(
        f"[default0]:WARNING:megatron.core.utils:{_OOM}\n"
        f"[default1]:WARNING:megatron.core.utils:{_OOM}\n"
        f"[default0]:[rank0]: torch.OutOfMemoryError: {_OOM}\n"
    )
    assert [(e["line"], e["kind"]) for e in events] == [(1, "log"), (2, "cuda_oom"), (3, "cuda_oom")]
