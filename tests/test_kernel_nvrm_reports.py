"""The NVIDIA driver's reports in the kernel log, and arm64's oops heads: what each event names.

The driver prints one incident as several printks: the Xid, then "GPU <bus>: GPU has fallen off the bus.", the serial
number, the crash-dump notice. Each stays an event of its own (as an x86 "BUG: …" head and its oops do), every one with the
GPU's bus; a printk of several "NVRM: " lines is one event whether dmesg indents its lines or a syslog daemon writes each
with the record's stamp. The real samples are in tests/data/kernel (see SOURCES.md).
"""

from __future__ import annotations

import polars as pl

import rca
from tests.conftest import DATA, FIXED_MTIME

UUID_3B = "GPU-2a1b3c4d-1111-2222-3333-444455556666"


def _parse(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="inline", format="kernel", reference_time=FIXED_MTIME)


def _fixture(name: str) -> pl.DataFrame:
    return rca.parse_text((DATA / "kernel" / name).read_text(encoding="utf-8"), file=name, reference_time=FIXED_MTIME)


def test_xids_name_the_task_from_pid_and_name_unless_unknown() -> None:
    events = _parse(
        "[ 1300.000001] NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0):"
        " Out Of Range Address\n"
        "[ 1301.000002] NVRM: Xid (PCI:0000:3b:00): 31, pid=1234, name=python3, Ch 0000000a, intr 10000000. MMU Fault: ENGINE"
        " GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f2b_c0000000. Fault is of type FAULT_PDE ACCESS_TYPE_READ\n"
        "[ 1302.000003] NVRM: Xid (PCI:0000:3b:00): 43, pid=1234, name=python3, Ch 00000008\n"
        "[ 1303.000004] NVRM: Xid (PCI:0000:3b:00): 45, pid='<unknown>', name=<unknown>, Ch 00000008\n"
    )
    assert events.select("kind", "xid", "pid", "process", "pci_bus", "n_lines").rows() == [
        ("xid", 13, 1234, "python3", "0000:3b:00", 1),
        ("xid", 31, 1234, "python3", "0000:3b:00", 1),
        ("xid", 43, 1234, "python3", "0000:3b:00", 1),
        ("xid", 45, None, None, "0000:3b:00", 1),
    ]


def test_fallen_off_the_bus_follow_ups_are_rows_of_their_own_with_the_gpu() -> None:
    events = _parse(
        f"[ 1234.567890] NVRM: GPU at PCI:0000:3b:00: {UUID_3B}\n"
        "[ 1234.567892] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
        "[ 1234.567893] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n"
        "[ 1234.567894] NVRM: GPU 0000:3b:00.0: GPU serial number is 1652923018111.\n"
        "[ 1234.567895] NVRM: A GPU crash dump has been created. If possible, please run\n"
        "               NVRM: nvidia-bug-report.sh as root to collect this data before\n"
        "               NVRM: the NVIDIA kernel module is unloaded.\n"
    )
    assert events.select("kind", "xid", "severity", "n_lines", "pci_bus", "gpu_uuid").rows() == [
        ("log", None, None, 1, "0000:3b:00", UUID_3B),
        ("xid", 79, "critical", 1, "0000:3b:00", UUID_3B),
        ("log", None, "critical", 1, "0000:3b:00.0", UUID_3B),
        ("log", None, None, 1, "0000:3b:00.0", UUID_3B),
        # the notice names no GPU: the one named just before it
        ("log", None, "error", 3, "0000:3b:00.0", UUID_3B),
    ]


def test_a_crash_dump_notice_right_after_the_xid_takes_the_xids_bus() -> None:
    events = _parse(
        "[  100.000001] NVRM: Xid (PCI:0000:86:00): 79, GPU has fallen off the bus.\n"
        "[  100.000002] NVRM: A GPU crash dump has been created. If possible, please run\n"
        "               NVRM: nvidia-bug-report.sh as root to collect this data before\n"
        "               NVRM: the NVIDIA kernel module is unloaded.\n"
    )
    assert events.select("kind", "n_lines", "pci_bus").rows() == [("xid", 1, "0000:86:00"), ("log", 3, "0000:86:00")]


def test_a_notice_far_from_any_gpu_line_names_no_bus() -> None:
    events = _parse(
        "[  100.000001] NVRM: Xid (PCI:0000:86:00): 79, GPU has fallen off the bus.\n"
        "[  101.000001] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n"
        "[  101.000002] usb 1-1: New USB device found, idVendor=0bda, idProduct=8153\n"
        "[  101.000003] usb 1-1: Product: USB 10/100/1000 LAN\n"
        "[  102.000001] NVRM: A GPU crash dump has been created. If possible, please run\n"
    )
    assert events["pci_bus"].to_list() == ["0000:86:00", None, None, None, None]


def test_a_syslog_files_lines_of_one_nvrm_printk_are_one_event() -> None:
    # rsyslog writes each line of the record as a line of its own, every one with the record's stamp
    events = _fixture("kern_log_xid79_two_gpus_pid_crash_dump_k80_01.log")
    assert events.select("line", "kind", "n_lines", "pid", "process", "pci_bus").rows() == [
        (1, "log", 1, None, None, "0000:05:00"),
        (2, "log", 1, None, None, "0000:05:00"),
        (3, "xid", 1, 1173, None, "0000:05:00"),
        (4, "log", 1, None, None, "0000:05:00.0"),
        (5, "log", 1, None, None, "0000:05:00.0"),
        (6, "log", 3, None, None, "0000:05:00.0"),
        (9, "log", 1, None, None, "0000:06:00"),
        (10, "log", 1, None, None, "0000:06:00"),
        (11, "xid", 1, 1173, None, "0000:06:00"),
        (12, "log", 1, None, None, "0000:06:00.0"),
        (13, "log", 1, None, None, "0000:06:00.0"),
    ]
    assert events.filter(pl.col("kind") == "xid")["gpu_uuid"].to_list() == [
        "GPU-97363126-e553-8dd4-9ad8-56844b42694a",
        "GPU-86d7b114-cfa7-c7bb-97c7-e76781232889",
    ]


def test_syslog_nvrm_lines_of_different_stamps_stay_apart() -> None:
    events = _parse(
        "Jan 16 14:04:39 pyrite kernel: [44643.002806] NVRM: GPU 0000:05:00.0: GPU has fallen off the bus.\n"
        "Jan 16 14:04:39 pyrite kernel: [44643.002828] NVRM: GPU 0000:05:00.0: GPU serial number is 0325015054694.\n"
        "Jan 16 14:04:39 pyrite kernel: [44643.002828] NVRM: Xid (PCI:0000:05:00): 79, pid=1173, GPU has fallen off the bus.\n"
    )
    # an Xid is a printk of its own even where it shares the line before's stamp
    assert events.select("kind", "n_lines").rows() == [("log", 1), ("log", 1), ("xid", 1)]


def test_the_uuid_named_for_a_bus_is_its_xids_and_no_other_gpus() -> None:
    events = _fixture("dmesg_xid31_62_45_gpu_at_uuid_chia_plotter_01.log")
    xids = events.filter(pl.col("kind") == "xid")
    assert xids["gpu_uuid"].unique().to_list() == ["GPU-760d0170-b7c5-6817-9414-6cc7112645de"]
    assert xids.select("xid", "pid", "process").head(3).rows() == [(31, 13332, "cuda_plot_k32_v"), (62, None, None), (45, None, None)]
    other = _parse(
        f"[  10.000001] NVRM: GPU at PCI:0000:3b:00: {UUID_3B}\n"
        "[  10.000002] NVRM: Xid (PCI:0000:86:00): 48, pid=77, name=python, An uncorrectable double bit error (DBE) has been detected\n"
    )
    assert other.select("pci_bus", "gpu_uuid").rows() == [("0000:3b:00", UUID_3B), ("0000:86:00", None)]


def test_an_arm64_fault_head_names_the_task_of_its_oops() -> None:
    events = _parse(
        "[  334.686773] Unable to handle kernel paging request at virtual address ffff2c91ac905000\n"
        "[  334.694703] Mem abort info:\n"
        "[  334.697486]   ESR = 0x0000000096000004\n"
        "[  334.740734] Internal error: Oops: 96000004 [#1] PREEMPT SMP\n"
        "[  334.772217] CPU: 2 PID: 1234 Comm: python3 Not tainted 6.0.0 #4\n"
    )
    assert events.select("n_lines", "severity", "pid", "process").rows() == [
        (3, "critical", 1234, "python3"),
        (2, "critical", 1234, "python3"),
    ]
    old = _fixture("dmesg_arm64_oops_null_deref_xorg_odroid_n1_01.log")
    # 4.4's "pgd = …" and "[00000000] *pgd=…" join the head, "PC is at" / "LR is at" the oops
    assert old.select("line", "n_lines", "pid", "process").rows() == [(1, 3, 1834, "Xorg"), (4, 7, 1834, "Xorg")]


def test_an_arm64_fault_head_before_another_report_names_no_task() -> None:
    events = _parse(
        "[   10.000001] Unable to handle kernel NULL pointer dereference at virtual address 0000000000000010\n"
        "[   10.000002] Kernel panic - not syncing: Fatal exception\n"
        "[   10.000003] Internal error: Oops: 96000004 [#1] SMP\n"
        "[   10.000004] CPU: 2 PID: 1234 Comm: python3 Not tainted 6.0.0 #4\n"
    )
    assert events.select("pid", "process").rows() == [(None, None), (None, None), (1234, "python3")]
