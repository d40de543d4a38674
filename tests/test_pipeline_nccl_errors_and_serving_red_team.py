"""ProcessGroupNCCL's other spellings of an NCCL error, torchrun's tag of a named role, a serving engine's worker error
(synthetic lines in the shapes of public logs)."""

from __future__ import annotations

import json

import rca


def _events(text: str) -> list[dict]:
    return rca.parse_text(text, file="train.log").sort("line").to_dicts()


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


def test_watchdog_nccl_error_names_the_phrase_as_torch_check_does() -> None:
    checked, watchdog, got = _events(
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../c10d/NCCLUtils.hpp:268, remote process exited or "
        "there was a network error, NCCL version 2.21.5\n"
        "\n"
        "[rank0]:[E207 19:37:09.983600771 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group "
        "watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n"
        "\n"
        "[rank2]:[E ProcessGroupNCCL.cpp:577] [Rank 2] Got a NCCL error: unhandled system error\n"
    )
    assert _attrs(checked)["cuda_error"] == _attrs(watchdog)["cuda_error"] == "remote process exited or there was a network error"
    assert _attrs(got)["cuda_error"] == "unhandled system error"
    assert (watchdog["severity"], _attrs(watchdog)["rank"], _attrs(got)["rank"]) == ("error", 0, 2)


def test_result_code_alone_is_the_cuda_error() -> None:
    (event,) = _events("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n")
    assert _attrs(event)["cuda_error"] == "ncclRemoteError"


def test_what_last_error_introduces_stays_with_the_tagged_watchdog_line() -> None:
    (event,) = _events(
        "[rank5]:[E207 19:37:09.983600771 ProcessGroupNCCL.cpp:1895] [Rank 5] Process group watchdog thread terminated with "
        "exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n"
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
        "Last error:\n"
        "socketProgressOpt: Call to recv from 10.0.0.1<49901> failed : Broken pipe\n"
    )
    assert event["n_lines"] == 4 and event["message"].endswith("failed : Broken pipe")


def test_named_role_tag_worn_by_most_lines_is_torchruns() -> None:
    oom, step = _events(
        "[trainer0]:[rank0]: Traceback (most recent call last):\n"
        '[trainer0]:[rank0]:   File "/workspace/train.py", line 210, in <module>\n'
        "[trainer0]:[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
        "[trainer1]:step 10 done\n"
    )
    assert (oom["kind"], _attrs(oom)["rank"], _attrs(oom)["local_rank"]) == ("cuda_oom", 0, 0)
    assert (step["message"], _attrs(step)) == ("step 10 done", {"local_rank": 1})


def test_named_role_tag_on_few_lines_is_text_and_torch_rank_tag_stays_the_rank() -> None:
    tagged, _, _, ranked = _events("[note1]: looks like a tag\nplain line\nanother plain line\n[rank3]: hello\n")
    assert (tagged["message"], tagged["attrs"]) == ("[note1]: looks like a tag", None)
    assert (ranked["message"], _attrs(ranked)) == ("hello", {"rank": 3})


def test_default_role_tag_is_read_on_a_single_line() -> None:
    (event, _, _) = _events("[default2]:step 1\nplain line\nanother plain line\n")
    assert (event["message"], _attrs(event)) == ("step 1", {"local_rank": 2})


def test_vllm_worker_cuda_error_names_the_worker_and_the_error() -> None:
    (event,) = _events(
        "(Worker_PP0 pid=23220) ERROR 07-15 21:01:01 [multiproc_executor.py:1007] torch.AcceleratorError: CUDA error: "
        "an illegal memory access was encountered\n"
    )
    assert (event["process"], event["pid"], event["severity"]) == ("Worker_PP0", 23220, "error")
    assert _attrs(event)["cuda_error"] == "an illegal memory access was encountered"
