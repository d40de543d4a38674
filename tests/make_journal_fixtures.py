"""Build the binary journal fixtures of tests/data/journal with systemd's own writer (not run by the tests).

The entries are a GPU node's journal around a training pod's OOM kill: the kernel's messages of
``tests/data/kernel/dmesg_oom_6x_xid_01.log`` (each at its boot time, the boot at 07:43:16 UTC),
then containerd's and kubelet's lines about the killed container, and the stderr of a container that
Docker's journald log driver wrote (a CUDA OOM traceback), as ``journalctl -o export``
would print them (``reference/node_oom_xid.export``). ``systemd-journal-remote`` (Debian's
systemd-journal-remote package, systemd 252) writes that stream as journal files in the layouts
a node may hold (regular, compact; data compressed or not); ``journalctl --file … -o json`` of the first is
``reference/node_oom_xid.journalctl.json`` (a folder of its own: other sources' tests take every file one
level down for text of theirs, and this one is the journal's), what rca must read from each file too. Run from the repository
root: ``python tests/make_journal_fixtures.py``.
"""

from __future__ import annotations

import gzip
import os
import re
import struct
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).parent / "data" / "journal"
KERNEL = HERE.parent / "kernel" / "dmesg_oom_6x_xid_01.log"
BOOT = datetime(2024, 6, 14, 7, 43, 16, tzinfo=UTC)
BOOT_ID = "5f0d8a3c2b1e4f6a9c7d8e0b1a2c3d4e"
MACHINE_ID = "0b9d1e2f3a4c5b6d7e8f9a0b1c2d3e4f"
HOST = "gpu-worker-3"
POD_UID = "3f1c9a52-8d1e-4b7a-9c3e-2f5d6a7b8c9d"
CONTAINER = "7b41c2e9d0f38a5561c4e2b7a9d03f18e6c5b4a3928170f6e5d4c3b2a1908f7e"
# The kernel's printk level of a message, by its start (others: info).
LEVELS = (("Memory cgroup out of memory", 3), ("NVRM: Xid", 3), ("oom-kill:", 6), (" invoked oom-killer", 4))
DAEMONS = (
    (8124.120, "containerd", 1187, "containerd.service", 6,
     f'time="2024-06-14T09:58:40.120118517Z" level=info msg="TaskOOM event container_id:\\"{CONTAINER}\\""'),
    (8124.391, "kubelet", 2480, "kubelet.service", 6,
     f'I0614 09:58:40.391230    2480 generic.go:334] "Generic (PLEG): container finished" podID="{POD_UID}" containerID="{CONTAINER}" exitCode=137'),
    (8125.004, "kubelet", 2480, "kubelet.service", 6,
     f'E0614 09:58:41.004712    2480 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to \\"StartContainer\\" for \\"trainer\\" with CrashLoopBackOff: \\"back-off 10s restarting failed container=trainer pod=llama-ft-0_research({POD_UID})\\"" pod="research/llama-ft-0" podUID="{POD_UID}"'),
    # kubelet -v=3's status patch: over journald's 512-byte threshold, so its data object is stored compressed.
    (8125.122, "kubelet", 2480, "kubelet.service", 6,
     'I0614 09:58:41.122604    2480 status_manager.go:877] "Patch status for pod" pod="research/llama-ft-0" podUID="'
     + POD_UID + '" patch="{\\"metadata\\":{\\"uid\\":\\"' + POD_UID + '\\"},\\"status\\":{\\"$setElementOrder/conditions\\":'
     '[{\\"type\\":\\"PodReadyToStartContainers\\"},{\\"type\\":\\"Initialized\\"},{\\"type\\":\\"Ready\\"},'
     '{\\"type\\":\\"ContainersReady\\"},{\\"type\\":\\"PodScheduled\\"}],\\"conditions\\":[{\\"lastTransitionTime\\":'
     '\\"2024-06-14T09:58:41Z\\",\\"message\\":\\"containers with unready status: [trainer]\\",\\"reason\\":'
     '\\"ContainersNotReady\\",\\"status\\":\\"False\\",\\"type\\":\\"Ready\\"}],\\"containerStatuses\\":[{'
     '\\"containerID\\":\\"containerd://' + CONTAINER + '\\",\\"image\\":\\"nvcr.io/nvidia/pytorch:24.05-py3\\",'
     '\\"lastState\\":{\\"terminated\\":{\\"containerID\\":\\"containerd://' + CONTAINER + '\\",\\"exitCode\\":137,'
     '\\"finishedAt\\":\\"2024-06-14T09:58:39Z\\",\\"reason\\":\\"OOMKilled\\",\\"startedAt\\":\\"2024-06-14T08:01:12Z\\"}},'
     '\\"name\\":\\"trainer\\",\\"ready\\":false,\\"restartCount\\":1,\\"started\\":false,\\"state\\":{\\"waiting\\":'
     '{\\"message\\":\\"back-off 10s restarting failed container=trainer pod=llama-ft-0_research(' + POD_UID + ')\\",'
     '\\"reason\\":\\"CrashLoopBackOff\\"}}}]}}"'),
    (8136.310, "kubelet", 2480, "kubelet.service", 6,
     'I0614 09:58:52.310544    2480 kuberuntime_container.go:297] "Container of pod was OOMKilled, restarting" pod="research/llama-ft-0" containerName="trainer" reason="OOMKilled" exitCode=137'),
)
# A container run with Docker's journald log driver (the default of Fedora's and RHEL's Docker): its stderr lines.
DOCKER_ID = "e3a1c7b9d2f4061835a7c9e1b3d5f7092468ace0bdf13579ace02468bdf13579"
DOCKER_LINES = (
    (8119.874, "Traceback (most recent call last):"),
    (8119.875, '  File "/workspace/finetune.py", line 212, in <module>'),
    (8119.876, ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 GiB "
                "of which 1.06 GiB is free. Process 51234 has 78.03 GiB memory in use.")),
)
# Each file: its name, the layout (SYSTEMD_JOURNAL_COMPACT) and whether data objects past 512 bytes are compressed
# (with Zstandard, systemd 252's choice; XZ and LZ4, older and other builds' choices, are tested on payloads).
LAYOUTS = {
    "system.journal.gz": ("0", "yes"),
    "system-compact.journal.gz": ("1", "yes"),
    "system-uncompressed.journal.gz": ("1", "no"),
}


def kernel_entries() -> list[tuple[float, dict[str, str]]]:
    """The dmesg file's messages (a continuation line joins the message above it) at their boot times."""
    entries: list[tuple[float, dict[str, str]]] = []
    for line in KERNEL.read_text().splitlines():
        stamped = re.match(r"^\[ *([0-9]+\.[0-9]+)\] (.*)$", line)
        if stamped is None:
            entries[-1][1]["MESSAGE"] += "\n" + line.strip()
            continue
        seconds, message = float(stamped.group(1)), stamped.group(2)
        level = next((level for start, level in LEVELS if start in message), 6)
        entries.append((seconds, {"PRIORITY": str(level), "SYSLOG_FACILITY": "0", "SYSLOG_IDENTIFIER": "kernel",
                                  "_TRANSPORT": "kernel", "MESSAGE": message}))
    return entries


def container_entries() -> list[tuple[float, dict[str, str]]]:
    return [
        (seconds, {"PRIORITY": "3", "SYSLOG_IDENTIFIER": DOCKER_ID[:12], "_TRANSPORT": "journal", "CONTAINER_ID": DOCKER_ID[:12],
                   "CONTAINER_ID_FULL": DOCKER_ID, "CONTAINER_NAME": "finetune-7", "CONTAINER_TAG": DOCKER_ID[:12],
                   "IMAGE_NAME": "nvcr.io/nvidia/pytorch:24.05-py3", "_PID": "1187", "_COMM": "dockerd", "MESSAGE": message})
        for seconds, message in DOCKER_LINES
    ]


def daemon_entries() -> list[tuple[float, dict[str, str]]]:
    return [
        (seconds, {"PRIORITY": str(level), "SYSLOG_FACILITY": "3", "SYSLOG_IDENTIFIER": name, "_PID": str(pid), "_COMM": name,
                   "_SYSTEMD_UNIT": unit, "_TRANSPORT": "stdout", "MESSAGE": message})
        for seconds, name, pid, unit, level, message in DAEMONS
    ]


def export_stream() -> bytes:
    """The entries in journalctl's export format (a value holding a newline in its binary-safe form)."""
    out = bytearray()
    for seconds, fields in sorted(kernel_entries() + container_entries() + daemon_entries(), key=lambda entry: entry[0]):
        micros = round(seconds * 1_000_000)
        realtime = int(BOOT.timestamp()) * 1_000_000 + micros
        head = {"__REALTIME_TIMESTAMP": str(realtime), "__MONOTONIC_TIMESTAMP": str(micros), "_BOOT_ID": BOOT_ID,
                "_MACHINE_ID": MACHINE_ID, "_HOSTNAME": HOST}
        for name, value in {**head, **fields}.items():
            data = value.encode()
            out += name.encode() + b"\n" + struct.pack("<Q", len(data)) + data + b"\n" if b"\n" in data else f"{name}={value}\n".encode()
        out += b"\n"
    return bytes(out)


def main() -> None:
    stream = export_stream()
    (HERE / "reference" / "node_oom_xid.export").write_bytes(stream)
    with tempfile.TemporaryDirectory() as work:
        for name, (compact, compress) in LAYOUTS.items():
            journal = Path(work) / name.removesuffix(".gz")
            subprocess.run(["/lib/systemd/systemd-journal-remote", f"--output={journal}", f"--compress={compress}", "-"], input=stream,
                           check=True, env={**os.environ, "SYSTEMD_JOURNAL_COMPACT": compact})
            (HERE / name).write_bytes(gzip.compress(journal.read_bytes(), mtime=0))
            if name == "system.journal.gz":
                json_lines = subprocess.run(["journalctl", f"--file={journal}", "-o", "json", "--no-pager"], check=True,
                                            capture_output=True).stdout
                (HERE / "reference" / "node_oom_xid.journalctl.json").write_bytes(json_lines)


if __name__ == "__main__":
    main()
