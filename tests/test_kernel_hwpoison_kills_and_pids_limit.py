"""Two kernel lines that name what failed: the task sent SIGBUS for touching a poisoned memory page (its pid and name,
from "comm:pid" in each wording), and the cgroup whose pids.max refused a fork (its path, and so the pod and container)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from tests.conftest import DATA

_WORDINGS = (
    "MCE: Killing {comm}:{pid} due to hardware memory corruption fault at 7f3a2c000000",  # the faulting task (x86, arm64)
    "Memory failure: 0x3710b3: Sending SIGBUS to {comm}:{pid} due to hardware memory corruption",  # 5.2+
    "Memory failure: 0x1840200: Killing {comm}:{pid} due to hardware memory corruption",  # 4.x, before 5.2
    "MCE 0x1840200: Killing {comm}:{pid} early due to hardware memory corruption",  # 3.x, action optional
    "Memory failure: 0x1840200: forcibly killing {comm}:{pid} because of failure to unmap corrupted page",
    "Memory error may not recovered: 0x3710b3: Sending SIGBUS to {comm}:{pid} due to hardware memory corruption",  # 5.8-5.10 mce
)


def _events(text: str) -> list[dict]:
    return rca.parse_text(text, file="x").to_dicts()


def test_each_wording_names_the_task() -> None:
    lines = [f"[  812.{index:06d}] " + wording.format(comm="pt_main_thread", pid=48213 + index) for index, wording in enumerate(_WORDINGS)]
    events = _events("\n".join(lines) + "\n")
    assert [(event["kind"], event["severity"], event["pid"], event["process"]) for event in events] == [
        ("log", "error", 48213 + index, "pt_main_thread") for index in range(len(_WORDINGS))
    ]


def test_comm_with_a_colon_keeps_it() -> None:
    # a kworker's comm holds a colon: the pid is the number after the last one
    (event,) = _events("[  9.000001] " + _WORDINGS[4].format(comm="kworker/3:1", pid=211) + "\n")
    assert (event["pid"], event["process"]) == (211, "kworker/3:1")


def test_the_memory_error_lines_around_it_name_no_task() -> None:
    text = (DATA / "kernel" / "dmesg_memory_failure_sigbus_einj_mem_uc_01.log").read_text()
    events = _events(text)
    assert [(event["pid"], event["process"]) for event in events] == [
        (None, None),
        (None, None),
        (None, None),
        (361438, "einj_mem_uc"),
        (None, None),
    ]
    assert {event["severity"] for event in events} == {"error"}


def test_a_kern_log_line_keeps_its_host_and_stamp() -> None:
    text = (DATA / "kernel" / "kern_log_mce_killing_hwpoison_fault_uffd_01.log").read_text()
    events = _events(text)
    assert {(event["host"], event["pid"], event["process"]) for event in events} == {("defiant", 1321817, "uffd-unit-tests")}
    assert [event["boot_seconds"] for event in events] == [77187.055103, 77187.055132, 77187.05516, 77187.055189]


@settings(max_examples=5, deadline=None)
@given(
    tasks=st.lists(
        st.tuples(
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_./: -]{0,14}[A-Za-z0-9_]", fullmatch=True),
            st.integers(min_value=1, max_value=4_194_304),
            st.sampled_from(_WORDINGS),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_any_comm_and_pid_come_back_as_printed(tasks: list[tuple[str, int, str]]) -> None:
    text = "".join(f"[  100.{row:06d}] " + wording.format(comm=comm, pid=pid) + "\n" for row, (comm, pid, wording) in enumerate(tasks))
    assert [(event["pid"], event["process"]) for event in _events(text)] == [(pid, comm) for comm, pid, _ in tasks]


def test_fork_rejected_names_the_pod_and_container_of_the_cgroup() -> None:
    text = (DATA / "kernel" / "dmesg_xTL_cgroup_fork_rejected_pids_kubepods_calico_01.log").read_text()
    first, second = _events(text)
    assert first["cgroup"] == (
        "/kubepods/burstable/pod22612ffb-4523-4958-b6dd-a80bd35fd325/8e8c5f52932538520f5b8042a2b602c1c5a07805ee073f1892ad27b0d818b584"
    )
    assert (first["pod_uid"], first["container_id"][:12], first["severity"]) == (
        "22612ffb-4523-4958-b6dd-a80bd35fd325",
        "8e8c5f529325",
        "info",
    )
    assert (second["pod_uid"], second["container_id"][:12]) == ("d06203b5-9e78-4247-b80c-43ffaea99318", "52177669439a")


def test_fork_rejected_in_a_systemd_slice_keeps_the_path_and_names_no_pod() -> None:
    # a cgroup v2 systemd-driver kubelet's path: the pod uid spelled with underscores, the container in its cri scope
    pod_path = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod6d779773_df17_4b29_a7ab_bdef87a2e7e8.slice"
    text = (
        "[Wed Sep 30 03:58:46 2020] cgroup: fork rejected by pids controller in /system.slice/icinga2.service\n"
        f"[Wed Sep 30 03:58:47 2020] cgroup: fork rejected by pids controller in {pod_path}/cri-containerd-{'d7' * 32}.scope\n"
    )
    service, pod = _events(text)
    assert (service["cgroup"], service["pod_uid"], service["container_id"]) == ("/system.slice/icinga2.service", None, None)
    assert (pod["pod_uid"], pod["container_id"]) == ("6d779773-df17-4b29-a7ab-bdef87a2e7e8", "d7" * 32)
