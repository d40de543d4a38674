"""A container the NVIDIA hook kept from starting, as `kubectl describe pod` shows it: a state's Message holding a newline
(kubectl prints its rest at column 0, then the state's next fields at their indent), and CRI-O's wording of the hook's
failure in a Failed event. The inline texts are synthetic, in kubectl's layout; the two fixtures are real."""

from __future__ import annotations

import json

import polars as pl

import rca
from tests.conftest import FIXED_MTIME, parse_fixture

HOOK_CAUSE = "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown"
MESSAGE_HEAD = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start "
    "container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , "
    "stderr: Auto-detected mode as 'legacy'"
)
POD_HEAD = (
    "Name:         train-0\nNamespace:    ml\nStatus:       Running\nContainers:\n  trainer:\n"
    "    Image:          nvcr.io/nvidia/pytorch:24.01-py3\n"
)


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="kubectl_describe_pod.txt", reference_time=FIXED_MTIME).sort("line")


def _row(events: pl.DataFrame, line: int) -> dict:
    rows = events.filter(pl.col("line") == line).to_dicts()
    assert len(rows) == 1, rows
    return rows[0]


def test_real_start_error_keeps_its_exit_code_and_the_message_rest() -> None:
    events = parse_fixture("kubectl_describe_container_last_state_start_error_message_newline_nvml_mismatch_01.txt").sort("line")
    assert events["line"].to_list() == [1, 8, 9, 11, 12, 14]
    last = _row(events, 14)
    assert (last["format"], last["n_lines"], last["severity"], last["exit_code"], last["container"]) == (
        "describe_state",
        6,
        "error",
        128,
        "toolkit-validation",
    )
    assert last["message"].splitlines()[2:] == [
        f"      Message:   {MESSAGE_HEAD}",
        HOOK_CAUSE,
        "      Exit Code:    128",
        "      Started:      Thu, 01 Jan 1970 04:00:00 +0400",
    ]
    assert json.loads(last["attrs"]) == {
        "state_field": "Last State",
        "state": "Terminated",
        "reason": "StartError",
        "started": "Thu, 01 Jan 1970 04:00:00 +0400",
    }


def test_several_column_0_lines_of_a_message_then_the_next_state() -> None:
    text = POD_HEAD + (
        "    State:          Waiting\n      Reason:       RunContainerError\n      Message:      first part\nsecond part\nthird part\n"
        f"    Last State:     Terminated\n      Reason:       StartError\n      Message:      {MESSAGE_HEAD}\n{HOOK_CAUSE}\n"
        "      Exit Code:    128\n      Started:      Thu, 01 Jan 1970 00:00:00 +0000\n"
        "      Finished:     Fri, 02 Jan 2026 03:04:05 +0000\n    Ready:          False\n    Restart Count:  3\n"
    )
    events = _parse(text)
    waiting, last = _row(events, 7), _row(events, 12)
    assert (waiting["n_lines"], waiting["container"], json.loads(waiting["attrs"])["reason"]) == (5, "trainer", "RunContainerError")
    assert waiting["message"].splitlines()[-2:] == ["second part", "third part"]
    assert (last["n_lines"], last["exit_code"], last["severity"], last["container"], last["ts"].isoformat()) == (
        7,
        128,
        "error",
        "trainer",
        "2026-01-02T03:04:05+00:00",
    )
    assert HOOK_CAUSE in last["message"].splitlines()
    # The container's own fields after the state are not the state's.
    assert _row(events, 19)["message"] == "    Ready:          False\n    Restart Count:  3"


def test_a_section_at_column_0_after_a_message_still_ends_the_state() -> None:
    for section in ("Events:", "Volumes:"):
        text = POD_HEAD + (
            "    Last State:     Terminated\n      Reason:       Error\n      Message:      boom\n"
            f"{section}\n      Exit Code:    1\n"
        )
        events = _parse(text)
        state = _row(events, 7)
        assert (state["n_lines"], state["exit_code"], state["message"].splitlines()[-1]) == (3, None, "      Message:      boom"), section
        assert _row(events, 10)["message"].startswith(section), section


def test_a_column_0_line_not_followed_by_the_state_fields_is_not_the_message() -> None:
    text = POD_HEAD + (
        "    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n      Message:      boom\n"
        "some other text\n    Ready:          False\n"
    )
    events = _parse(text)
    state = _row(events, 7)
    assert (state["n_lines"], state["exit_code"]) == (4, 1)
    assert "some other text" not in state["message"]


def test_a_column_0_line_after_a_field_other_than_the_message_is_not_joined() -> None:
    text = POD_HEAD + "    Last State:     Terminated\n      Reason:       Error\nsome other text\n      Exit Code:    1\n"
    state = _row(_parse(text), 7)
    assert (state["n_lines"], state["exit_code"]) == (2, None)


def test_real_crio_hook_failure_is_an_error() -> None:
    events = parse_fixture("kubectl_describe_events_crio_failed_error_executing_hook_exit1_01.txt").sort("line")
    assert events.select("line", "severity").rows() == [(1, "error"), (2, "info"), (3, "warning")]
    assert json.loads(_row(events, 1)["attrs"])["count"] == 4


def _failed_row(message: str) -> str:
    head = "Events:\n  Type     Reason  Age   From     Message\n  ----     ------  ----  ----     -------\n"
    return head + f"  Warning  Failed  2m    kubelet  {message}\n"


def test_hook_failures_in_either_runtime_wording_are_errors_and_an_oom_killed_init_stays_a_warning() -> None:
    wanted = {
        "Error: container create failed: error executing hook `/usr/local/nvidia/toolkit/nvidia-cdi-hook` (exit code: 1)": "error",
        "Error: runc create failed: unable to start container process: error during container init: error running hook #0: "
        "error running hook: exit status 1, stdout: , stderr: " + HOOK_CAUSE: "error",
        "Error: container create failed: runc create failed: container init was OOM-killed (memory limit too low?)": "warning",
    }
    for message, severity in wanted.items():
        row = _row(_parse(_failed_row(message)), 4)
        assert (row["message"], row["severity"]) == (message, severity)
