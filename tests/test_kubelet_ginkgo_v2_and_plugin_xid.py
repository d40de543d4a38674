"""kubelet source: Ginkgo v2 steps and failure reports, the e2e framework's level-less lines, the device plugin's Xid pid."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from rca import sources
from tests.conftest import parse_log

_REPORT = """\
  STEP: Creating a kubernetes client @ 04/28/26 08:05:49.396
  I0428 08:05:49.396512 4117 util.go:499] >>> kubeConfig: /workspace/.kube/config
  STEP: waiting for GPUs @ 04/28/26 08:05:50
  [FAILED] Timed out after 600.000s.
  Expected success, but got an error:
      nvidia GPUs not available on Node: "node-1"
  In [It] at: k8s.io/kubernetes/test/e2e/node/gpu.go:430 @ 04/28/26 08:15:49.513
"""


def _rows(text: str) -> list[dict]:
    return parse_log(text).select("line", "n_lines", "source", "format", "ts", "ts_raw", "severity", "pid", "message", "attrs").to_dicts()


def test_ginkgo_steps_and_report_are_timed_by_their_stamps() -> None:
    step, klog, second_step, report = _rows(_REPORT)
    assert (step["format"], step["severity"], step["message"]) == ("ginkgo_v2", "info", "STEP: Creating a kubernetes client")
    assert step["ts"] == datetime(2026, 4, 28, 8, 5, 49, 396000, tzinfo=UTC)
    # the klog line Ginkgo indented is a record of its own, with its klog header
    assert (klog["line"], klog["format"], klog["pid"], klog["message"]) == (2, "klog", 4117, ">>> kubeConfig: /workspace/.kube/config")
    # Ginkgo drops a stamp's zero milliseconds, dot and all
    assert (second_step["ts_raw"], second_step["ts"]) == ("04/28/26 08:05:50", datetime(2026, 4, 28, 8, 5, 50, tzinfo=UTC))
    assert (report["line"], report["n_lines"], report["severity"], report["source"]) == (4, 4, "error", "kubelet")
    assert report["ts"] == datetime(2026, 4, 28, 8, 15, 49, 513000, tzinfo=UTC)
    assert report["message"].startswith("[FAILED] Timed out after 600.000s.\n") and "@" not in report["message"]
    assert json.loads(report["attrs"]) == {"test_location": "k8s.io/kubernetes/test/e2e/node/gpu.go:430"}


def test_a_panicked_report_unindented_is_an_error() -> None:
    (report,) = _rows(
        "[PANICKED] Test Panicked\nruntime error: index out of range\nIn [It] at: /usr/local/go/src/runtime/panic.go:115 @ 01/22/24 10:00:01.5\n"
    )
    assert (report["n_lines"], report["severity"], report["ts"]) == (3, "error", datetime(2024, 1, 22, 10, 0, 1, 500000, tzinfo=UTC))
    assert json.loads(report["attrs"]) == {"test_location": "/usr/local/go/src/runtime/panic.go:115"}


def test_a_file_of_ginkgo_steps_alone_is_the_kubelets() -> None:
    source, _ = sources.sniff(["STEP: Creating a kubernetes client @ 04/28/26 08:05:49.396", "STEP: deleting pods @ 04/28/26 08:05:52.1"])
    assert source is not None and source.name == "kubelet"


def test_level_less_framework_lines_are_the_kubelets_only_beside_a_go_path() -> None:
    stamped = 'Nov 11 21:43:04.675: wait for pod "gpu-pod" to disappear'
    assert _rows(stamped + "\n")[0]["source"] != "kubelet"
    first = _rows(stamped + "\n/go/src/k8s.io/kubernetes/test/e2e/scheduling/nvidia-gpus.go:218\n")[0]
    assert (first["source"], first["format"], first["ts_raw"], first["message"]) == (
        "kubelet",
        "e2e_framework",
        "Nov 11 21:43:04.675",
        'wait for pod "gpu-pod" to disappear',
    )


_XID_JOURNAL = (
    "Jan  1 03:17:05 gpu-node-1 nvidia-device-plugin[{pid}]: I0101 03:17:05.123456    {pid} health.go:169] "
    "XidCriticalError: Xid={xid} on Device=GPU-aaaa1111-2222-3333-4444-555566667777; marking device as unhealthy.\n"
    "Jan  1 03:17:05 gpu-node-1 nvidia-device-plugin[{pid}]: I0101 03:17:05.123501    {pid} server.go:278] "
    "'nvidia.com/gpu' device marked unhealthy: GPU-aaaa1111-2222-3333-4444-555566667777\n"
)


@settings(max_examples=4, deadline=None)
@given(pid=st.integers(1, 4_194_304), xid=st.sampled_from([13, 31, 43, 48, 63, 74, 79, 94, 95, 119]))
def test_an_xid_names_no_process_of_the_plugin_that_reports_it(pid: int, xid: int) -> None:
    events = parse_log(_XID_JOURNAL.format(pid=pid, xid=xid))
    fault, unhealthy = events.select("kind", "xid", "pid", "attrs").to_dicts()
    assert (fault["kind"], fault["xid"], fault["pid"]) == ("xid", xid, None)
    assert json.loads(fault["attrs"])["reporter_pid"] == pid
    # the plugin's own line about the device is the plugin's: its pid stays
    assert (unhealthy["kind"], unhealthy["pid"]) == ("log", pid)
    assert "reporter_pid" not in json.loads(unhealthy["attrs"])


@settings(max_examples=4, deadline=None)
@given(
    moments=st.lists(st.datetimes(min_value=datetime(2022, 1, 1), max_value=datetime(2068, 12, 31)), min_size=1, max_size=4),
    failed=st.booleans(),
)
def test_a_ginkgo_stamp_is_read_to_the_millisecond(moments: list[datetime], failed: bool) -> None:
    """(%y reads 69-99 as 19xx: Ginkgo v2 came out in 2022.)"""
    moments = [moment.replace(microsecond=moment.microsecond // 1000 * 1000) for moment in moments]
    stamps = [moment.strftime("%m/%d/%y %H:%M:%S.") + f"{moment.microsecond // 1000:03d}" for moment in moments]
    one = "[FAILED] boom\nIn [It] at: e2e/node/gpu.go:1 @ {}\n" if failed else "STEP: a step @ {}\n"
    rows = _rows("".join(one.format(stamp) for stamp in stamps))
    assert [(row["ts"], row["ts_raw"], row["severity"]) for row in rows] == [
        (moment.replace(tzinfo=UTC), stamp, "error" if failed else "info") for moment, stamp in zip(moments, stamps, strict=True)
    ]
