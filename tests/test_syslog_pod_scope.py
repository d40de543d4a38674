"""A node's own syslog about its pods: a static pod's uid (32 hex digits, the kubelet's hash of its manifest) names its
pod as an RFC 4122 uid does, in systemd's slices and mount units and in the runtimes' paths; CRI-O names the pod whose
sandbox it runs."""

from __future__ import annotations

import polars as pl
import pytest

import rca
from tests.conftest import FIXED_MTIME

STATIC_UID = "3f5f1a2b9c8d4e7f6a5b4c3d2e1f0a9b"
POD_UID = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
CONTAINER_ID = "7f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a6f7e8d9c0b1a2f3e"
SANDBOX_ID = "337b3f3c6d63749cd0091d92e825729e9f818f74c626d58fe72978d0c2ea3320"
ENVELOPE = "Jun  1 10:00:00 node1 "


def _one(line: str) -> dict:
    events = rca.parse_text(ENVELOPE + line + "\n", file="messages", reference_time=FIXED_MTIME)
    assert events.height == 1
    return events.row(0, named=True)


@pytest.mark.parametrize(
    ("line", "uid"),
    [
        (f"systemd[1]: Created slice libcontainer container kubepods-burstable-pod{STATIC_UID}.slice.", STATIC_UID),
        (
            f"systemd[1]: Removed slice kubepods-besteffort-pod{STATIC_UID}.slice - libcontainer container kubepods-besteffort-pod{STATIC_UID}.slice.",
            STATIC_UID,
        ),
        (f"systemd[1]: Created slice libcontainer container kubepods-burstable-pod{POD_UID.replace('-', '_')}.slice.", POD_UID),
        # A pod's volume, mounted by the kubelet: systemd's escaped path ("\x2d" for "-").
        (
            "systemd[1]: var-lib-kubelet-pods-"
            + POD_UID.replace("-", "\\x2d")
            + "-volumes-kubernetes.io\\x7eprojected-kube\\x2dapi\\x2daccess\\x2dh2d9l.mount: Deactivated successfully.",
            POD_UID,
        ),
        (f"systemd[1]: var-lib-kubelet-pods-{STATIC_UID}-volumes-kubernetes.io\\x7esecret-certs.mount: Succeeded.", STATIC_UID),
        (
            f"systemd-oomd[840]: Killed /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{STATIC_UID}.slice due to memory used "
            "(8000000000) / total (8200000000) and swap used (900000000) / total (1000000000) being more than 90.00%",
            STATIC_UID,
        ),
    ],
)
def test_systemd_names_the_pod_of_a_slice_or_a_volume_mount(line: str, uid: str) -> None:
    assert _one(line)["pod_uid"] == uid


def test_a_static_pods_log_path_names_its_pod() -> None:
    event = _one(
        'containerd[800]: time="2024-06-01T10:00:04.1Z" level=info msg="Finish redirecting stream \\"stdout\\" to log file '
        f'\\"/var/log/pods/kube-system_etcd-node1_{STATIC_UID}/etcd/0.log\\""'
    )
    assert (event["pod"], event["namespace"], event["pod_uid"], event["container"]) == ("etcd-node1", "kube-system", STATIC_UID, "etcd")


@pytest.mark.parametrize("uid", [STATIC_UID, POD_UID])
def test_a_runtime_line_naming_a_pods_directory_names_its_uid(uid: str) -> None:
    event = _one(
        'containerd[800]: time="2024-06-01T10:00:05.1Z" level=error msg="CreateContainer within sandbox failed" error="failed to create '
        f'containerd task: OCI runtime create failed: error mounting \\"/var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~secret/certs\\" to rootfs"'
    )
    assert (event["pod_uid"], event["severity"]) == (uid, "error")


def test_crio_names_a_static_pods_network_by_its_uid() -> None:
    event = _one(
        'crio[1234]: time="2024-06-01 10:00:04.1Z" level=info msg="Got pod network &{Name:etcd-node1 Namespace:kube-system '
        f'ID:{SANDBOX_ID} UID:{STATIC_UID} NetNS:/var/run/netns/x Networks:[] RuntimeConfig:map[] Aliases:map[]}}"'
    )
    assert (event["pod"], event["namespace"], event["pod_uid"]) == ("etcd-node1", "kube-system", STATIC_UID)


@pytest.mark.parametrize(
    "message",
    [
        'msg="Running pod sandbox: kube-system/nvidia-device-plugin-daemonset-x7k2p/POD" id=0be966e9',
        f'msg="Ran pod sandbox {SANDBOX_ID} with infra container: kube-system/nvidia-device-plugin-daemonset-x7k2p/POD"',
    ],
)
def test_crio_names_the_pod_whose_sandbox_it_runs(message: str) -> None:
    event = _one(f'crio[1234]: time="2024-06-01 10:00:05.1Z" level=info {message}')
    # The sandbox's infra container ("POD") is none of the pod's containers.
    assert (event["pod"], event["namespace"], event["container"]) == ("nvidia-device-plugin-daemonset-x7k2p", "kube-system", None)


def test_crio_and_conmon_tell_of_a_pods_container_and_its_killed_exit() -> None:
    lines = [
        f'crio[1234]: time="2024-06-01 10:00:00.1Z" level=info msg="Removed container {CONTAINER_ID}: '
        'kube-system/nvidia-device-plugin-daemonset-x7k2p/nvidia-device-plugin" id=0bd5e1b4 name=/runtime.v1.RuntimeService/RemoveContainer',
        "conmon[5678]: conmon 7f3e4d5c6b7a8f9e0d1c <ninfo>: container 12345 exited with status 137",
    ]
    text = "".join(ENVELOPE + line + "\n" for line in lines)
    events = rca.parse_text(text, file="messages", reference_time=FIXED_MTIME).sort("line")
    removed, exited = events.row(0, named=True), events.row(1, named=True)
    assert (removed["pod"], removed["namespace"], removed["container"], removed["container_id"]) == (
        "nvidia-device-plugin-daemonset-x7k2p",
        "kube-system",
        "nvidia-device-plugin",
        CONTAINER_ID,
    )
    assert (exited["kind"], exited["severity"], exited["pid"], exited["exit_code"]) == ("process_killed", "error", 12345, 137)
    assert events.filter(pl.col("kind") == "process_killed").height == 1


def test_the_kernels_oom_kill_in_a_static_pods_memcg_names_its_uid() -> None:
    # one uid pattern for every source that reads a memory cgroup path (kernel, kubelet, cgroup, systemd)
    static = "3f5f1a2b9c8d4e7f6a5b4c3d2e1f0a9b"
    events = rca.parse_text(
        "[ 5.000100] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=abc,mems_allowed=0,"
        f"oom_memcg=/kubepods/burstable/pod{static},task_memcg=/kubepods/burstable/pod{static}/"
        f"{'0123456789abcdef' * 4},task=python,pid=4242,uid=0\n"
        "[ 5.000200] Memory cgroup out of memory: Killed process 4242 (python) total-vm:100kB, anon-rss:50kB, file-rss:0kB,"
        " shmem-rss:0kB, UID:0 pgtables:4kB oom_score_adj:999\n",
        file="dmesg.log",
    )
    assert events.filter(pl.col("kind") == "oom_kill").select("pid", "pod_uid").rows() == [(4242, static)]
