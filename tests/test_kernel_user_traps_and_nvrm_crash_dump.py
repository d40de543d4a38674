"""The kernel's reports of a user process's trap, and the NVIDIA driver's crash-dump notice."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

import rca
from tests.conftest import DATA


def _events(text: str) -> list[dict]:
    return rca.parse_text(text, file="x").to_dicts()


def test_trap_names_what_trapped_and_the_library() -> None:
    text = (DATA / "kernel" / "dmesg_traps_gpf_libamdhip64_python_strix_halo_01.log").read_text()
    events = _events(text)
    assert len(events) == 8
    first = events[0]
    assert (first["pid"], first["process"], first["severity"], first["n_lines"]) == (3097, "python", "error", 1)
    assert json.loads(first["attrs"]) == {"trap": "general protection fault", "fault_in": "libamdhip64.so.7.2.70201"}
    assert [event["pid"] for event in events] == [3097, 3267, 3411, 3559, 3703, 3848, 3992, 4144]


def test_trap_invalid_opcode_in_a_kern_log_line() -> None:
    # the /var/log/syslog line a polars-bio FAQ quotes (host, "kernel:" and message), a syslog stamp put before it
    line = ("polars-bio-intel kernel: [ 1611.175045] traps: python[8844] trap invalid opcode ip:709d3ec253cc sp:7ffcc28754e8 "
            "error:0 in polars_bio.abi3.so[709d36533000+9aab000]\n")
    (event,) = _events("Oct  1 10:00:00 " + line)
    assert (event["pid"], event["process"], event["severity"]) == (8844, "python", "error")
    assert json.loads(event["attrs"]) == {"trap": "trap invalid opcode", "fault_in": "polars_bio.abi3.so"}


def test_segfault_keeps_its_library_and_address() -> None:
    text = (DATA / "kernel" / "kern_log_segfault_null_ip_01.log").read_text()
    event = _events(text)[0]
    assert json.loads(event["attrs"]) == {"fault_address": "0", "fault_in": "thp_memscale"}


def test_nvrm_crash_dump_notice_is_an_error() -> None:
    text = (DATA / "kernel" / "dmesg_oom_6x_xid_01.log").read_text()
    (event,) = [e for e in _events(text) if "crash dump has been created" in e["message"]]
    assert (event["severity"], event["n_lines"]) == ("error", 3)


_NAME = st.from_regex(r"[a-z][a-z0-9_.]{0,14}", fullmatch=True)
_LIB = st.from_regex(r"lib[a-z0-9_]{1,12}\.so(?:\.[0-9]{1,3}){0,3}", fullmatch=True)


@given(name=_NAME, pid=st.integers(1, 4_194_304), what=st.sampled_from(
    ["general protection fault", "general protection", "trap invalid opcode", "trap divide error", "trap int3"]), lib=_LIB,
    ip=st.integers(0, 2**47), boot=st.integers(0, 10**6))
def test_any_trap_line_yields_its_fields(name: str, pid: int, what: str, lib: str, ip: int, boot: int) -> None:
    line = f"[{boot:>5}.000001] traps: {name}[{pid}] {what} ip:{ip:x} sp:7ffd00000000 error:0 in {lib}[{ip:x},7f0000000000+1000]\n"
    (event,) = _events(line)
    assert (event["pid"], event["process"], event["severity"]) == (pid, name, "error")
    assert json.loads(event["attrs"]) == {"trap": what, "fault_in": lib}
