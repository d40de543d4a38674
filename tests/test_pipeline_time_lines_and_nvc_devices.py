"""Pipeline source: a time on a line of its own above its message (an events list copied out of a UI), kubelet's admission
failure for want of a healthy device, and nvidia-container-cli's klog-shaped debug log: its pid, and its device listing."""

from __future__ import annotations

from datetime import UTC, datetime

import rca
from rca import sources
from rca.sources import pipeline
from rca.sources._base import ParseContext

REFERENCE = datetime(2024, 6, 1, tzinfo=UTC)
ALLOCATE = "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices amd.com/gpu, which is unexpected"


def _events(text: str) -> list[dict]:
    return list(rca.parse_text(text, file="x.log", reference_time=REFERENCE, format="pipeline").sort("line").iter_rows(named=True))


def _skipped(text: str) -> dict[str, int]:
    ctx = ParseContext(file="x.log", host=None, tz=None, year=None, reference_time=REFERENCE, boot_time=None)
    return pipeline.parse(sources.lines_frame(text), ctx).skipped


def test_a_stamp_alone_times_the_message_below_it_and_holds_its_line() -> None:
    text = f"2024-03-14 14:22:04\n{ALLOCATE}\n2024-03-14 14:22:03\nSuccessfully assigned ix-homarr/homarr-1 to ix-truenas\n"
    events = _events(text)
    got = [(e["line"], e["n_lines"], e["ts"], e["ts_quality"], e["severity"], e["message"]) for e in events]
    assert got == [
        (1, 2, datetime(2024, 3, 14, 14, 22, 4, tzinfo=UTC), "exact", "error", ALLOCATE),
        (3, 2, datetime(2024, 3, 14, 14, 22, 3, tzinfo=UTC), "exact", None, "Successfully assigned ix-homarr/homarr-1 to ix-truenas"),
    ]
    assert events[0]["attrs"] == '{"resource":"amd.com/gpu"}'
    assert _skipped(text) == {}


def test_a_stamp_alone_above_a_timed_line_or_a_blank_one_stays_an_empty_line() -> None:
    text = "2024-03-14 14:22:04\n2024-03-14 14:22:05 worker started\n2024-03-14 14:22:06\n\nworker ready\n"
    events = _events(text)
    got = [(e["line"], e["n_lines"], e["ts"], e["message"]) for e in events]
    assert got == [(2, 1, datetime(2024, 3, 14, 14, 22, 5, tzinfo=UTC), "worker started"), (5, 1, None, "worker ready")]
    # (the empty line is counted with the lines of control codes alone, as before)
    assert _skipped(text) == {"terminal control codes": 1, "blank": 2}


def test_the_admission_failure_is_an_error_with_its_resource_alone_too() -> None:
    line = "Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices gpu.intel.com/i915, which is unexpected"
    event = _events(f"{line}\n")[0]
    assert (event["kind"], event["severity"], event["attrs"]) == ("log", "error", '{"resource":"gpu.intel.com/i915"}')


def test_libnvidia_container_klog_lines_give_their_pid_other_klog_lines_do_not() -> None:
    text = (
        "I0418 18:12:58.648174 217303 nvc.c:376] initializing library context (version=1.9.0, build=5e135c17d6dbae861ec343e9a8d3a0d2af758a4f)\n"
        "I0226 06:26:25.359763 78809 nvc_info.c:490] requesting device information with ''\n"
        "I0418 18:12:58.648300 217303 server.go:376] serving\n"
    )
    assert [(e["format"], e["severity"], e["pid"]) for e in _events(text)] == [("klog", "info", 217303), ("klog", "info", 78809), ("klog", "info", None)]


def test_a_listed_device_ties_its_node_index_to_its_uuid_and_bus() -> None:
    text = (
        "I0226 06:26:25.366457 78809 nvc_info.c:520] listing device /dev/nvidia0 (GPU-03bb5927-ceaa-4166-ff1e-1d58a8cbf883 at 00000000:05:00.0)\n"
        "I0531 20:31:21.570879 23192 nvc_info.c:623] listing device /dev/nvidia7 (GPU-a664610b-dc7d-1a19-30cd-2424a8f6f77e at 00000000:db:00.0)\n"
    )
    got = [(e["kind"], e["pid"], e["gpu_index"], e["gpu_uuid"], e["pci_bus"], e["attrs"]) for e in _events(text)]
    assert got == [
        ("log", 78809, 0, "GPU-03bb5927-ceaa-4166-ff1e-1d58a8cbf883", "00000000:05:00.0", None),
        ("log", 23192, 7, "GPU-a664610b-dc7d-1a19-30cd-2424a8f6f77e", "00000000:db:00.0", None),
    ]
