"""Kernel lines that name more than was read: the task a poisoned page's SIGBUS could not be sent to, the status and the
source line of the NVIDIA driver's failed internal checks, and the NVRM lines around an Xid (the GPU's UUID, its bus)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import DATA

_COMM = st.from_regex(r"[a-z][a-z0-9_\-]{0,14}", fullmatch=True)


def _events(text: str, file: str = "dmesg_x.log") -> list[dict]:
    return rca.parse_text(text, file=file).to_dicts()


def _attrs(event: dict) -> dict:
    return json.loads(event["attrs"] or "{}")


def _stamped(bodies: list[str]) -> str:
    """The bodies as raw dmesg lines a microsecond apart."""
    return "".join(f"[  812.{index:06d}] {body}\n" for index, body in enumerate(bodies))


_UNSENT = st.tuples(st.sampled_from(["MCE", "Memory failure"]), _COMM, st.integers(1, 4_194_304), st.integers(1, 133))


# each example parses several lines at once: a parse costs far more than a line
@settings(max_examples=5, deadline=None)
@given(unsent=st.lists(_UNSENT, min_size=1, max_size=4))
def test_a_signal_not_sent_names_its_task(unsent: list[tuple[str, str, int, int]]) -> None:
    events = _events(_stamped([f"{prefix}: Error sending signal to {comm}:{pid}: -{errno}" for prefix, comm, pid, errno in unsent]))
    assert [(e["kind"], e["severity"], e["pid"], e["process"]) for e in events] == [
        ("log", "error", pid, comm) for _, comm, pid, _ in unsent
    ]


def test_the_recovery_line_of_a_page_names_no_task() -> None:
    # the page's outcome line names no task: none is borrowed from the kill line before it
    text = (
        "[ 5001.000000] Memory failure: 0x2345678: Killing python:4321 due to hardware memory corruption\n"
        "[ 5001.000100] Memory failure: 0x2345678: recovery action for dirty LRU page: Recovered\n"
    )
    assert [(event["pid"], event["process"]) for event in _events(text)] == [(4321, "python"), (None, None)]


_CHECK = st.tuples(
    st.sampled_from(["", "GPU0 ", "GPU3 "]),
    st.sampled_from(
        ["nvAssertOkFailedNoLog: Assertion failed", "nvCheckOkFailedNoLog: Check failed", "nvAssertOkFailed: Assertion failed"]
    ),
    st.from_regex(r"NV_ERR_[A-Z][A-Z_]{2,20}", fullmatch=True),
    st.from_regex(r"[a-z_]{3,12}\.c:[1-9][0-9]{0,4}", fullmatch=True),
)


@settings(max_examples=5, deadline=None)
@given(checks=st.lists(_CHECK, min_size=1, max_size=4))
def test_a_failed_check_names_its_status_and_source_line(checks: list[tuple[str, str, str, str]]) -> None:
    events = _events(_stamped([
        f"NVRM: {gpu}{check}: Call timed out [{status}] (0x00000065) returned from pRmApi->Control(pRmApi) @ {where}"
        for gpu, check, status, where in checks
    ]))
    assert [(e["severity"], _attrs(e).get("nvrm_status"), _attrs(e).get("nvrm_failed_at")) for e in events] == [
        ("error", status, where) for _, _, status, where in checks
    ]


def test_an_assertion_without_a_status_names_none() -> None:
    # an asserted expression ("(status == NV_OK) || …") is no status the check returned
    line = "Jun 12 16:31:50 host kernel: NVRM: nvAssertFailedNoLog: Assertion failed: (status == NV_OK) || (status == NV_ERR_GPU_IN_FULLCHIP_RESET) @ rs_server.c:1375\n"
    (event,) = _events(line, file="kern.log")
    assert "nvrm_status" not in _attrs(event)


def test_real_gsp_memory_failure_names_each_check() -> None:
    name = "dmesg_nvcheckokfailednolog_gsp_no_memory_rminitadapter_0x62_01.log"
    events = _events((DATA / "kernel" / name).read_text(), file=name)
    checks = [
        (event["line"], _attrs(event).get("nvrm_status"), _attrs(event).get("nvrm_failed_at"))
        for event in events
        if "nvrm_status" in _attrs(event)
    ]
    assert checks == [
        (1, "NV_ERR_NO_MEMORY", "kernel_gsp.c:4502"),
        (10, "NV_ERR_NO_MEMORY", "mem_desc.c:1353"),
        (11, "NV_ERR_NO_MEMORY", "kernel_gsp.c:4615"),
    ]
    (init,) = [event for event in events if event["line"] == 4]
    assert (init["pci_bus"], _attrs(init)["rm_init_error"]) == ("0000:01:00.0", "0x62:0x51:1941")


def test_the_nvrm_lines_around_an_xid_name_the_gpu() -> None:
    text = (
        "[  100.000001] NVRM: GPU at PCI:0000:3b:00: GPU-1a2b3c4d-1111-2222-3333-444455556666\n"
        "[  100.000003] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
        "[  200.000001] NVRM: Xid (PCI:0000:86:00): 94, pid=12345, name=python3, Contained: CE User Channel (0x2). RST: No, D-RST: No\n"
        "[  200.000002] NVRM: Xid (PCI:0000:86:00): 95, pid=12346, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No\n"
        "[  300.000001] NVRM: Xid (PCI:0000:af:00): 119, pid=2222, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU1 GSP!"
        " Expected function 76 (GSP_RM_CONTROL) (0x2080014b 0x5).\n"
        "[  400.000001] NVRM: Xid (PCI:0000:d8:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)\n"
    )
    xids = [(e["xid"], e["pci_bus"], e["gpu_uuid"], e["pid"], e["process"], e["severity"]) for e in _events(text) if e["kind"] == "xid"]
    assert xids == [
        (79, "0000:3b:00", "GPU-1a2b3c4d-1111-2222-3333-444455556666", None, None, "critical"),
        (94, "0000:86:00", None, 12345, "python3", "error"),
        (95, "0000:86:00", None, 12346, "python3", "critical"),
        (119, "0000:af:00", None, 2222, "nvidia-smi", "critical"),
        (154, "0000:d8:00", None, None, None, "critical"),
    ]
