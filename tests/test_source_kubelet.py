"""The kubelet source: bare klog, journald-wrapped klog and structured klog.

Real samples (tests/data/kubelet/kubelet_*_01.log, from kubernetes/kubernetes and
kubernetes/minikube issues) are checked against the facts in SOURCES.md; the hand-made
fixtures follow kubelet's own log calls (eviction_manager.go, status_manager.go,
generic.go, oom_watcher_linux.go) for the structured-logging era.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.sources import _syslog, kubelet
from rca.sources._base import ParseContext, lines_frame
from rca.sources._kube import quantity_bytes
from tests.conftest import DATA, attrs_of, head_lines, sniffed

FOLDER = DATA / "kubelet"
KI = 1024


def _text(name: str) -> str:
    return (FOLDER / name).read_text(encoding="utf-8")


def _events(name: str, **kwargs: object) -> pl.DataFrame:
    return rca.parse_text(_text(name), file=name, **kwargs)


def _assert_accounted(text: str, ctx: ParseContext | None = None) -> None:
    lines = lines_frame(text)
    content = lines.filter(pl.col("text").str.strip_chars() != "")
    if content.height == 0:
        return
    parsed = kubelet.parse(content, ctx or ParseContext(file="t"))
    covered = int(parsed.events["n_lines"].sum()) if parsed.events.height else 0
    assert covered + sum(parsed.skipped.values()) == content.height


# --- real samples -------------------------------------------------------------------------


def test_k3s_disk_pressure_evicts_no_pod_and_names_the_critical_one_in_attrs_only() -> None:
    events = _events("kubelet_journal_k3s_critical_pod_not_evicted_01.log")
    evictions = events.filter(pl.col("kind") == "eviction")
    assert [a["eviction_stage"] for a in attrs_of(evictions)] == ["reclaim_attempt", "must_evict", "ranked", "critical_pod_skipped"]
    assert evictions["pod"].to_list() == [None] * 4
    assert attrs_of(evictions)[3]["critical_pod"] == "flux-system/kustomize-controller-6b7bfd984d-r8m6z"
    assert {a.get("resource") for a in attrs_of(evictions)[:2]} == {"ephemeral-storage"}


def test_journal_eviction_ranks_four_static_pods_and_skips_the_critical_one() -> None:
    events = _events("kubelet_journal_eviction_01.log", year=2019)
    assert events["host"].unique().to_list() == ["arch-srv01"]
    assert events["pid"].unique().to_list() == [12544]
    assert events["kind"].to_list() == ["eviction"] * 4
    stages = [a["eviction_stage"] for a in attrs_of(events)]
    assert stages == ["ranked", "critical_pod_skipped", "reclaim_attempt", "must_evict"]
    ranked = attrs_of(events)[0]
    assert ranked["ranked_pods"] == [
        "kube-system/kube-scheduler-minikube",
        "kube-system/etcd-minikube",
        "kube-system/kube-apiserver-minikube",
        "kube-system/kube-controller-manager-minikube",
    ]
    assert ranked["pod_uids"][0] == "9b290132363a92652555896288ca3f88"
    assert events["pod"][0] is None  # ranked candidates are not evicted pods
    critical = events.row(1, named=True)
    # A critical pod is one the manager may not evict: named in attrs, not as the pod evicted.
    assert (critical["pod"], critical["namespace"], critical["pod_uid"]) == (None, None, None)
    assert attrs_of(events)[1]["critical_pod"] == "kube-system/kube-scheduler-minikube"
    assert critical["severity"] == "error"
    assert critical["ts_raw"] == "0529 08:56:39.757341"
    assert {a.get("resource") for a in attrs_of(events)[2:]} == {"ephemeral-storage"}
    # klog stamps are kept as written, not sorted: line 3 is earlier than line 2.
    assert events["ts"][2] < events["ts"][1]
    assert events["ts"][0] == datetime(2019, 5, 29, 8, 56, 39, 757322, tzinfo=UTC)


def test_russian_journal_month_and_admission_rejection() -> None:
    events = _events("kubelet_journal_eviction_ru_01.log", year=2018)
    assert events.height == 2
    assert events["ts"].to_list() == [
        datetime(2018, 1, 20, 0, 20, 7, 544864, tzinfo=UTC),
        datetime(2018, 1, 20, 0, 20, 7, 726836, tzinfo=UTC),
    ]
    assert events["host"].unique().to_list() == ["o1.home"]
    assert events["pid"].unique().to_list() == [32406]
    rejected, reclaim = events.row(0, named=True), events.row(1, named=True)
    assert rejected["kind"] == "eviction"
    assert (rejected["pod"], rejected["namespace"], rejected["pod_uid"]) == (
        "kube-proxy-bbrr6",
        "kube-system",
        "860629c4-fd5e-11e7-880c-6c626d3ed96f",
    )
    assert attrs_of(events)[0]["eviction_stage"] == "admission_rejected"
    assert attrs_of(events)[0]["conditions"] == ["MemoryPressure"]
    assert reclaim["kind"] == "eviction" and attrs_of(events)[1]["resource"] == "memory"


def test_klog_observations_take_the_year_from_the_embedded_go_time() -> None:
    events = _events("kubelet_klog_eviction_01.log")
    assert events.height == 6
    assert events["kind"].unique().to_list() == ["log"]
    assert events["ts"][0] == datetime(2021, 12, 15, 19, 22, 27, 75748, tzinfo=UTC)
    assert events["ts_quality"].unique().to_list() == ["year_inferred"]
    assert events["pid"].unique().to_list() == [77158]
    by_signal = {a["signal"]: a for a in attrs_of(events) if "signal" in a}
    assert by_signal["memory.available"]["available_bytes"] == 60489772 * KI
    assert by_signal["memory.available"]["capacity_bytes"] == 65973468 * KI
    assert by_signal["allocatableMemory.available"]["available_bytes"] == 56829960 * KI
    assert by_signal["nodefs.available"]["capacity_bytes"] == 204700 * KI * KI
    assert by_signal["nodefs.inodesFree"]["available_count"] == 104732769
    assert by_signal["nodefs.inodesFree"]["capacity_count"] == 104857600
    assert by_signal["imagefs.available"]["available_bytes"] == 138094628 * KI
    assert by_signal["memory.available"]["observed_at"] == "2021-12-15 19:22:27.083065473 +0800"


def test_memory_pressure_keeps_the_negative_observation() -> None:
    events = _events("kubelet_klog_memory_pressure_01.log")
    assert events["kind"].to_list() == ["memory_pressure"] * 3
    assert events["pid"].unique().to_list() == [104204]
    thresholds = attrs_of(events)[:2]
    assert all(a["signal"] == "memory.available" for a in thresholds)
    assert all(a["threshold_bytes"] == 100 * KI * KI for a in thresholds)
    assert all(a["observed_bytes"] == -2097758044639028 * KI for a in thresholds)
    assert attrs_of(events)[2]["conditions"] == ["MemoryPressure"]
    # No year anywhere and no reference time: the time stays unknown rather than guessed.
    assert events["ts"].null_count() == 3
    assert events["ts_quality"].unique().to_list() == ["missing"]
    assert events["ts_raw"][0] == "0913 15:20:47.884880"


def test_yearless_klog_uses_the_file_mtime_year() -> None:
    events = _events("kubelet_klog_memory_pressure_01.log", reference_time=datetime(2017, 9, 20, tzinfo=UTC))
    assert events["ts"][2] == datetime(2017, 9, 13, 15, 20, 47, 884896, tzinfo=UTC)
    assert events["ts_quality"].unique().to_list() == ["year_from_mtime"]


def test_klog_time_is_read_in_the_context_zone() -> None:
    events = _events("kubelet_klog_eviction_01.log", tz="Asia/Shanghai")
    assert events["ts"][0] == datetime(2021, 12, 15, 11, 22, 27, 75748, tzinfo=UTC)


def test_snap_kubelet_daemon_journal_tag_is_the_kubelet() -> None:
    """Charmed Kubernetes' snap tags its kubelet's journal lines "kubelet.daemon": the klog header is peeled."""
    events = _events("kubelet_journal_snap_kubelet_daemon_pleg_not_healthy_01.log")
    assert set(events["source"]) == {"kubelet"}
    assert set(events["process"]) == {"kubelet.daemon"}
    assert set(events["pid"]) == {32157}
    assert events["message"][0] == "Starting kubelet main sync loop."
    assert events.filter(pl.col("line") == 2)["severity"].to_list() == ["error"]
    pleg = events.filter(pl.col("line") == 3).row(0, named=True)
    assert pleg["message"].startswith("skipping pod synchronization - [container runtime is down PLEG is not healthy")
    assert pleg["severity"] == "info"


def test_microk8s_kubelet_journal_tag_before_kubelite_is_the_kubelet() -> None:
    line = (
        'Jun 24 10:20:40 k1 microk8s.daemon-kubelet[14529]: E0624 10:20:40.197006   14529 pod_workers.go:190] Error syncing pod '
        '4b4728cd-4620-11e9-9bf4-d409029b649b ("web-0_shop(4b4728cd-4620-11e9-9bf4-d409029b649b)"), skipping: failed to "StartContainer" '
        'for "web" with CrashLoopBackOff: "Back-off 5m0s restarting failed container=web pod=web-0_shop(4b4728cd-4620-11e9-9bf4-d409029b649b)"'
    )
    row = rca.parse_text(line + "\n", file="t.log", reference_time=datetime(2019, 7, 1, tzinfo=UTC)).row(0, named=True)
    assert (row["source"], row["process"], row["pid"], row["severity"]) == ("kubelet", "microk8s.daemon-kubelet", 14529, "error")
    assert (row["pod"], row["namespace"], row["container"]) == ("web-0", "shop", "web")


def test_snap_control_plane_daemons_journal_tags_are_read_as_klog() -> None:
    """MicroK8s before kubelite ran the scheduler and the controller manager as daemons of their own ("microk8s.daemon-scheduler",
    "microk8s.daemon-controller-manager"): their journal is sniffed as klog, its header is peeled, its letter the severity, its stamp the time."""
    events = _events("kubelet_journal_microk8s_daemon_scheduler_reflector_list_failed_01.log", reference_time=datetime(2019, 4, 10, tzinfo=UTC))
    assert sources.sniff(head_lines(FOLDER / "kubelet_journal_microk8s_daemon_scheduler_reflector_list_failed_01.log"))[0].name == "kubelet"
    scheduler = events.filter(pl.col("process") == "microk8s.daemon-scheduler")
    assert scheduler["line"].to_list() == [3, 4]
    assert set(scheduler["source"]) == {"kubelet"} and set(scheduler["pid"]) == {1454} and set(scheduler["severity"]) == {"error"}
    assert scheduler["ts"][0] == datetime(2019, 4, 3, 9, 39, 57, 121024, tzinfo=UTC)
    assert scheduler["message"][1].startswith("k8s.io/client-go/informers/factory.go:133: Failed to list *v1.Node:")
    manager = _events("kubelet_journal_microk8s_daemon_controller_manager_update_lock_01.log", reference_time=datetime(2022, 9, 6, tzinfo=UTC))
    assert set(manager["process"]) == {"microk8s.daemon-controller-manager"} and set(manager["severity"]) == {"error"}
    assert manager["message"][0].startswith("Failed to update lock: Put ")
    assert manager["ts"][2] == datetime(2022, 9, 5, 8, 0, 13, 416798, tzinfo=UTC)


def test_charmed_kubernetes_component_snap_tags_are_read_as_klog() -> None:
    lines = "".join(
        f"Jun 17 11:24:08 juju-8761cc-5 {tag}[17003]: W0617 11:24:08.123456   17003 leaderelection.go:330] error retrieving resource lock\n"
        for tag in ("kube-controller-manager.daemon", "kube-scheduler.daemon", "kube-apiserver.daemon", "kube-proxy.daemon")
    )
    events = rca.parse_text(lines, file="t.log", reference_time=datetime(2024, 6, 18, tzinfo=UTC))
    assert set(events["source"]) == {"kubelet"} and set(events["severity"]) == {"warning"}
    assert set(events["message"]) == {"error retrieving resource lock"}


def test_sync_error_names_the_container_that_failed_to_start() -> None:
    """`failed to "StartContainer" for "x" with ImagePullBackOff` names the container no other field of the line does."""
    events = _events("kubelet_journal_sync_error_start_container_image_pull_backoff_01.log")
    assert events.height == 4
    assert set(events["container"]) == {"modeldb-backend"}
    assert set(events["pod"]) == {"modeldb-backend-54f88cf869-xbnz4"}
    assert set(events["namespace"]) == {"kubeflow"}
    assert set(events["severity"]) == {"error"}


def test_structured_sync_error_names_the_container_in_its_escaped_err() -> None:
    line = (
        'Jul 23 22:57:43 xdlinux kubelet[197244]: E0723 22:57:43.256904  197244 pod_workers.go:1301] "Error syncing pod, skipping" '
        'err="failed to \\"StartContainer\\" for \\"redis\\" with ImagePullBackOff: \\"Back-off pulling image \\\\\\"redis:alpine\\\\\\"\\"" '
        'pod="default/redis" podUID="c21adea0-dbfc-4936-bce2-8db56b48d4fb"'
    )
    row = rca.parse_text(line + "\n", file="t.log", reference_time=datetime(2025, 8, 1, tzinfo=UTC)).row(0, named=True)
    assert (row["pod"], row["namespace"], row["container"], row["severity"]) == ("redis", "default", "redis", "error")
    # The pod's sandbox ("POD") is no container of its spec.
    sandbox = line.replace('\\"redis\\" with', '\\"POD\\" with')
    assert rca.parse_text(sandbox + "\n", file="t.log", reference_time=datetime(2025, 8, 1, tzinfo=UTC))["container"][0] is None


# --- hand-made: structured klog --------------------------------------------------------------


def test_structured_eviction_sequence() -> None:
    events = _events("kubelet_structured_oom_eviction.log")
    evictions = events.filter(pl.col("kind") == "eviction")
    stages = [a["eviction_stage"] for a in attrs_of(evictions)]
    assert stages == ["reclaim_attempt", "must_evict", "ranked", "evicting", "evicted", "cleanup_wait"]
    evicting = evictions.row(3, named=True)
    assert (evicting["pod"], evicting["namespace"], evicting["pod_uid"], evicting["container"]) == (
        "trainer-7d9f8c6b5-x2x9q",
        "ml",
        "6f1c2a8e-3b4d-4e5f-9a6b-7c8d9e0f1a2b",
        "trainer",
    )
    assert evicting["mem_used_bytes"] == 14395616 * KI
    assert evicting["mem_requested_bytes"] == 8 * KI**3
    evicting_attrs = attrs_of(evictions)[3]
    assert (evicting_attrs["resource"], evicting_attrs["threshold_bytes"], evicting_attrs["available_bytes"]) == (
        "memory",
        750 * KI * KI,
        225800 * KI,
    )
    assert attrs_of(evictions)[2]["ranked_pods"][0] == "ml/trainer-7d9f8c6b5-x2x9q"
    assert evictions["pod"][2] is None
    assert attrs_of(evictions)[5]["evicted_pods"] == ["ml/trainer-7d9f8c6b5-x2x9q"]
    assert evictions["ts"][0] == datetime(2024, 6, 14, 10, 2, 11, 402117, tzinfo=UTC)


def test_structured_memory_pressure_and_threshold() -> None:
    pressure = _events("kubelet_structured_oom_eviction.log").filter(pl.col("kind") == "memory_pressure")
    assert pressure.height == 2
    condition, threshold = attrs_of(pressure)
    assert condition["conditions"] == ["MemoryPressure"]
    assert (threshold["signal"], threshold["threshold_bytes"], threshold["observed_bytes"]) == (
        "memory.available",
        750 * KI * KI,
        225800 * KI,
    )


def test_container_oomkilled_from_status_patch_and_exit_137() -> None:
    oom = _events("kubelet_structured_oom_eviction.log").filter(pl.col("kind") == "container_oomkilled")
    assert oom["line"].to_list() == [3, 5]
    finished, patched = oom.row(0, named=True), oom.row(1, named=True)
    container_id = "9f3e1b2c4d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c"
    assert (finished["exit_code"], finished["container_id"], finished["pod_uid"]) == (
        137,
        container_id,
        "0b7d4c55-8e2f-4a61-9c3e-5f2a1d7b8c90",
    )
    assert attrs_of(oom)[0]["oom_evidence"] == "exit_code_137"
    assert (patched["pod"], patched["namespace"], patched["container"], patched["container_id"], patched["exit_code"]) == (
        "data-loader-6c8b7f9d4-k7p2m",
        "ml",
        "loader",
        container_id,
        137,
    )
    assert attrs_of(oom)[1]["oom_evidence"] == "reason_oomkilled"


def test_system_oom_names_the_victim_and_other_lines_stay_logs() -> None:
    events = _events("kubelet_structured_oom_eviction.log")
    system = events.filter(pl.col("kind") == "oom_kill").row(0, named=True)
    assert (system["pid"], system["process"], system["cgroup"]) == (31337, "python3", "/")
    logs = events.filter(pl.col("kind") == "log")
    probe = logs.row(0, named=True)
    assert (probe["pod"], probe["namespace"], probe["container"], probe["severity"]) == (
        "data-loader-6c8b7f9d4-k7p2m",
        "ml",
        "loader",
        "info",
    )
    pleg = logs.filter(pl.col("message").str.contains("SyncLoop (PLEG)", literal=True))
    assert pleg.height == 2
    assert {a["pleg_event"] for a in attrs_of(pleg)} == {"ContainerDied"}
    assert logs.filter(pl.col("severity") == "error")["pod"].to_list() == ["data-loader-6c8b7f9d4-k7p2m"]
    assert events["process"].filter(events["kind"] != "oom_kill").unique().to_list() == ["kubelet"]


def test_multi_line_structured_value_is_one_record() -> None:
    text = (
        'I0614 10:00:00.000001    2480 kubelet.go:1] "Pod config" config=<\n'
        "\tline one\n"
        "\tline two\n"
        " >\n"
        'I0614 10:00:00.000002    2480 kubelet.go:2] "next"\n'
    )
    events = rca.parse_text(text, format="kubelet", year=2024)
    assert events["n_lines"].to_list() == [4, 1]
    assert events["message"][0] == '"Pod config" config=<\n\tline one\n\tline two\n >'


# --- hand-made: journald ---------------------------------------------------------------------


def test_kubelet_rules_are_registered_with_the_syslog_framer() -> None:
    text = (
        "Jun 14 10:02:11 node-7 kubelet[2480]: I0614 10:02:11.402117    2480 eviction_manager.go:366] "
        '"Eviction manager: attempting to reclaim" resourceName="memory"\n'
        "Jun 14 10:02:11 node-7 systemd[1]: Started Session 12 of user core.\n"
    )
    ctx = ParseContext(file="syslog", year=2024)
    events = _syslog.dispatch(_syslog.frame_text(lines_frame(text), ctx), ctx)
    assert events["source"].to_list() == ["kubelet", None]
    assert events["kind"].to_list() == ["eviction", "log"]
    assert events["pid"][0] == 2480 and events["host"][0] == "node-7"


def test_journal_json_falls_back_to_the_journal_clock_without_a_year() -> None:
    events = _events("kubelet_journal_json.log")
    assert events["kind"].to_list() == ["eviction"] * 3
    assert events["ts"][0] == datetime(2024, 6, 14, 10, 2, 11, 402117, tzinfo=UTC)
    assert events["ts_quality"][0] == "exact"
    assert events["host"][1] == "gpu-worker-3"
    assert events["mem_used_bytes"][1] == 14395616 * KI
    with_year = _events("kubelet_journal_json.log", year=2024)
    assert with_year["ts_raw"][0] == "0614 10:02:11.402117"


# --- quantities ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quantity", "expected"),
    [
        ("1275700Ki", 1275700 * KI),
        ("15Gi", 15 * KI**3),
        ("100Mi", 100 * KI**2),
        ("-2097758044639028Ki", -2097758044639028 * KI),
        ("1.5Gi", 3 * KI**3 // 2),
        ("100M", 100_000_000),
        ("2K", 2000),
        ("0", 0),
        ("104732769", 104732769),
        ("99999999999999999999Ei", None),
        ("N/A", None),
    ],
)
def test_quantity_bytes(quantity: str, expected: int | None) -> None:
    assert pl.select(quantity_bytes(pl.lit(quantity))).item() == expected


# --- sniffing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(FOLDER.iterdir()), ids=lambda p: p.name)
def test_every_kubelet_fixture_is_sniffed_as_kubelet(path: Path) -> None:
    source, _ = sniffed(path)
    # grep's output of a kubelet log is the grep_output source's, which hands the lines under the prefix to kubelet
    assert source is not None and source.name == ("grep_output" if path.name.startswith("kubelet_grep_") else "kubelet")


# Mixed syslog files hold kubelet lines too, and so do the GPU operator's pipeline logs whose wrapper scripts run a klog
# component (a klog warning among logrus lines): the kubelet scores those above 0, below their own source (test_real_logs).
_HOLD_KLOG_LINES = {"gpu_operator_k8s_driver_manager_unquoted_msg_01.log", "gpu_operator_mig_manager_klog_logrus_wrapper_01.log"}
OTHERS = sorted(
    p for p in DATA.glob("*/*") if p.is_file() and p.parent.name not in ("kubelet", "real_logs", "syslog") and p.name not in _HOLD_KLOG_LINES
)


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_fixtures_are_not_kubelet(path: Path) -> None:
    assert kubelet.sniff(head_lines(path)) == 0.0


def test_glog_from_cpp_is_not_kubelet() -> None:
    assert (
        kubelet.sniff(["I0626 06:24:44.159123 12345 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout"])
        == 0.0
    )


# --- robustness -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(FOLDER.iterdir()), ids=lambda p: p.name)
def test_accounting_on_fixtures(path: Path) -> None:
    _assert_accounted(path.read_text(encoding="utf-8"), ParseContext(file=path.name, year=2024))


REAL_LINES = [line for path in sorted(FOLDER.iterdir()) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    _assert_accounted(text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(REAL_LINES), min_size=1, max_size=12), st.integers(0, 200), st.text(max_size=20))
def test_spliced_real_lines_never_raise(lines: list[str], cut: int, junk: str) -> None:
    spliced = [line[:cut] + junk if i % 3 == 1 else line for i, line in enumerate(lines)]
    _assert_accounted("\n".join(spliced), ParseContext(file="t", year=2024, tz="Europe/Moscow"))


def test_pre_structured_eviction_lines() -> None:
    text = (
        "I0122 10:15:01.100000    1201 eviction_manager.go:343] eviction manager: must evict pod(s) to reclaim memory\n"
        "I0122 10:15:01.200000    1201 eviction_manager.go:360] eviction manager: pods ranked for eviction: "
        "memhog-5b6b8c7d9-qx2lt_default(3c1b2a4d-5e6f-11e8-9a7b-080027c1d2e3), "
        "kube-proxy-x7k2p_kube-system(4d2c3b5e-5e6f-11e8-9a7b-080027c1d2e3)\n"
        "I0122 10:15:03.300000    1201 eviction_manager.go:157] eviction manager: pod memhog-5b6b8c7d9-qx2lt_default"
        "(3c1b2a4d-5e6f-11e8-9a7b-080027c1d2e3) is evicted successfully\n"
        "I0122 10:15:03.300100    1201 eviction_manager.go:181] eviction manager: pods memhog-5b6b8c7d9-qx2lt_default"
        "(3c1b2a4d-5e6f-11e8-9a7b-080027c1d2e3) evicted, waiting for pod to be cleaned up\n"
    )
    events = rca.parse_text(text, year=2018)
    assert events["kind"].to_list() == ["eviction"] * 4
    attrs = attrs_of(events)
    assert [a["eviction_stage"] for a in attrs] == ["must_evict", "ranked", "evicted", "cleanup_wait"]
    assert attrs[1]["ranked_pods"] == ["default/memhog-5b6b8c7d9-qx2lt", "kube-system/kube-proxy-x7k2p"]
    assert attrs[3]["evicted_pods"] == ["default/memhog-5b6b8c7d9-qx2lt"]
    evicted = events.row(2, named=True)
    assert (evicted["pod"], evicted["namespace"], evicted["pod_uid"]) == (
        "memhog-5b6b8c7d9-qx2lt",
        "default",
        "3c1b2a4d-5e6f-11e8-9a7b-080027c1d2e3",
    )


def test_event_recorder_lines_carry_the_events_kind() -> None:
    text = (
        'I1123 09:57:01.935292    3215 event.go:389] "Event occurred" object="batch/embed-backfill-28494591-j8bhs" fieldPath="" '
        'kind="Pod" apiVersion="v1" type="Warning" reason="Evicted" message="The node was low on resource: memory. '
        "Threshold quantity: 750Mi, available: 574771Ki. Container worker was using 106003699Ki, request is 8Gi, "
        'has larger consumption of memory. "\n'
        'I1124 06:55:39.605898    1256 event.go:389] "Event occurred" object="ip-10-0-240-15" fieldPath="" kind="Node" '
        'apiVersion="" type="Warning" reason="SystemOOM" message="System OOM encountered, victim process: python3, pid: 2366646"\n'
        'I1124 06:55:41.101380    1256 event.go:389] "Event occurred" object="ip-10-0-240-15" fieldPath="" kind="Node" '
        'apiVersion="" type="Normal" reason="NodeHasInsufficientMemory" message="Node ip-10-0-240-15 status is now: NodeHasInsufficientMemory"\n'
    )
    events = rca.parse_text(text, year=2026)
    assert events["kind"].to_list() == ["eviction", "oom_kill", "memory_pressure"]
    evicted = events.row(0, named=True)
    assert (evicted["pod"], evicted["namespace"], evicted["container"]) == ("embed-backfill-28494591-j8bhs", "batch", "worker")
    assert (evicted["mem_used_bytes"], evicted["mem_requested_bytes"]) == (106003699 * 1024, 8 * 1024**3)
    assert (events["pid"][1], events["process"][1]) == (2366646, "python3")


def test_a_liveness_kill_on_aks_names_pod_container_and_container_id() -> None:
    """1.29-style structured klog: the container id also comes as containerStatusID={"Type":…,"ID":…}."""
    events = _events("kubelet_journal_liveness_kill_aks_2025_01.log", year=2025)
    assert events["kind"].unique().to_list() == ["log"]
    message = events.filter(pl.col("message").str.starts_with('"Message for Container of pod"'))
    assert message.select("pod", "namespace", "container", "container_id", "host", "pid").rows() == [
        ("liveness-exec", "default", "liveness", "05657a9c673d612aedd955a65136ccca36b82ba987831de7844cdc0238f1d707", "aks-nodepool1-29985679-vmss00000A", 4052)
    ]
    assert message["ts"][0] == datetime(2025, 5, 16, 18, 34, 49, 885576, tzinfo=UTC)


def test_ranked_then_evicted_successfully_in_a_2025_journal() -> None:
    events = _events("kubelet_journal_eviction_ranked_evicted_successfully_01.log", year=2025)
    assert events["kind"].to_list() == ["eviction", "eviction"]
    ranked, evicted = attrs_of(events)
    assert ranked["ranked_pods"][0] == "sre/infras-logstash-d484d57fc-rkx95"
    assert evicted["eviction_stage"] == "evicted"
    assert events.select("pod", "namespace").rows() == [(None, None), ("infras-logstash-d484d57fc-rkx95", "sre")]


def test_a_sys_oom_event_printed_with_plain_v_names_its_victim() -> None:
    """Before structured logging the kubelet logged Infof("Got sys oom event: %v", event): fields without names."""
    line = (
        "Jan 05 15:19:27 gpu-node-2 kubelet[1702]: I0105 15:19:27.102394    1702 oom_watcher_linux.go:71] "
        "Got sys oom event: &{11207 stress 2024-01-05 15:19:27.098 +0000 UTC / / CONSTRAINT_NONE}\n"
    )
    kill = rca.parse_text(line, file="kubelet.log", year=2024).row(0, named=True)
    assert (kill["kind"], kill["pid"], kill["process"], kill["host"]) == ("oom_kill", 11207, "stress", "gpu-node-2")


def test_node_problem_detector_status_carries_the_kernel_kill() -> None:
    """node-problem-detector's klog "New status generated" quotes the kernel's kill line under its OOMKilling reason."""
    kill = _events("kubelet_klog_npd_status_oomkilling_01.log", year=2021).row(0, named=True)
    assert (kill["kind"], kill["pid"], kill["process"], kill["rss_bytes"]) == ("oom_kill", 336, "chronyd", 180 * 1024)
    assert kill["ts"] == datetime(2021, 9, 8, 0, 14, 14, 101206, tzinfo=UTC)


def test_a_system_oom_event_line_still_names_its_victim() -> None:
    line = (
        'I0614 10:00:01.000001    2480 event.go:294] "Event occurred" object="gpu-node-7" kind="Node" apiVersion="v1" '
        'type="Warning" reason="SystemOOM" message="System OOM encountered, victim process: python, pid: 4242"\n'
    )
    kill = rca.parse_text(line, file="kubelet.log", year=2024).row(0, named=True)
    assert (kill["kind"], kill["pid"], kill["process"], kill["rss_bytes"]) == ("oom_kill", 4242, "python", None)


def test_the_device_plugin_xid_line_is_an_xid_of_its_gpu() -> None:
    """NVIDIA's device plugin logs klog: the NVML Xid that takes a GPU out of the node, then the resource it leaves."""
    events = _events("kubelet_klog_device_plugin_xid48_unhealthy_01.log", year=2026)
    # A double-bit ECC error: the Xid catalog's severity and names, as the kernel's report of it gets. The plugin only
    # reports it: the faulting process is not the plugin (its pid is attrs' reporter_pid).
    assert events.select("kind", "xid", "gpu_uuid", "severity", "process", "pid").rows() == [
        ("xid", 48, "GPU-455e672a", "critical", None, None),
        ("log", None, "GPU-455e672a", "info", None, 1),
    ]
    assert attrs_of(events)[0]["xid_name"] == "ROBUST_CHANNEL_GPU_ECC_DBE"
    assert events["ts"][0] == datetime(2026, 8, 10, 15, 36, 5, 551834, tzinfo=UTC)
    assert [a.get("resource") for a in attrs_of(events)] == [None, "nvidia.com/gpu"]


def test_a_device_plugin_xid_with_a_full_uuid() -> None:
    """`kubectl logs` of the plugin: bare klog, its MIG lines before the Xid one."""
    text = (
        "I0302 11:04:19.010101       1 health.go:160] Event for mig device MIG-0d5e2b1c-6a7f-5e8d-9c0b-1a2b3c4d5e6f (gi=3, ci=0)\n"
        "I0302 11:04:19.010203       1 health.go:169] "
        "XidCriticalError: Xid=79 on Device=MIG-0d5e2b1c-6a7f-5e8d-9c0b-1a2b3c4d5e6f; marking device as unhealthy.\n"
    )
    events = rca.parse_text(text, file="plugin.log", year=2025)
    assert events.select("kind", "xid", "gpu_uuid").rows() == [
        ("log", None, None),
        ("xid", 79, "MIG-0d5e2b1c-6a7f-5e8d-9c0b-1a2b3c4d5e6f"),
    ]


def test_json_format_lines_in_a_journal_take_the_epoch_stamp() -> None:
    """kubelet --logging-format=json: "ts" is epoch milliseconds, exact where the journal's stamp has no year."""
    events = _events("kubelet_journal_json_format_kops_01.log")
    assert events.select("line", "host", "pid", "severity", "ts_quality").rows() == [
        (1, "ip-172-20-59-66", 5656, "info", "exact"),
        (3, "ip-172-20-59-66", 5656, "info", "exact"),
        (5, "ip-172-20-59-66", 5656, "info", "exact"),
    ]
    assert events["ts"][0] == datetime(2022, 6, 18, 19, 42, 16, 241710, tzinfo=UTC)
    assert events["container_id"][0] == "9beafc9454c36cf07dec1793128629f2a80bb43ac65aac400458f44d398032a8"
    assert attrs_of(events)[1]["caller"] == "kubelet/kubelet.go:2102"
    assert events["message"][2] == '"SyncLoop ADD" source="api" pods=["dev/nettools"]'


def test_bare_json_format_lines_are_kubelet_and_errors_have_no_v() -> None:
    text = (
        '{"ts":1635266764792.703,"caller":"topologymanager/scope.go:110","msg":"RemoveContainer","v":0,'
        '"containerID":"0194fac91ac1d3949497f6912f3c7e73a062c3bf29b6d3da05557d4db2f8482b"}\n'
        '{"ts":1635266751595.943,"caller":"kubelet/kubelet.go:1703","msg":"Failed creating a mirror pod for",'
        '"pod":"kube-system/kube-controller-manager-talos-dev-qemu-master-1","err":"pods \\"kube-controller-manager-talos-dev-qemu-master-1\\" already exists"}\n'
    )
    events = rca.parse_text(text, file="kubelet.log")
    assert set(events["source"]) == {"kubelet"}
    assert events.select("severity", "format", "pod", "namespace").rows() == [
        ("info", "klog_json", None, None),
        ("error", "klog_json", "kube-controller-manager-talos-dev-qemu-master-1", "kube-system"),
    ]
    assert events["ts"][1] == datetime(2021, 10, 26, 16, 45, 51, 595943, tzinfo=UTC)


def test_json_format_eviction_and_container_exit_read_like_the_text_format() -> None:
    """The JSON format writes klog.KObj as {"name","namespace"} and numbers bare; the rules see "ns/name" and exitCode=137."""
    text = (
        '{"ts":1718359331402.117,"caller":"eviction/eviction_manager.go:366","msg":"Eviction manager: attempting to reclaim",'
        '"v":0,"resourceName":"memory"}\n'
        '{"ts":1718359331402.99,"caller":"eviction/eviction_manager.go:612","msg":"Evicting pod","v":0,'
        '"pod":{"name":"trainer-7d9f8c6b5-x2x9q","namespace":"ml"},"podUID":"6f1c2a8e-3b4d-4e5f-9a6b-7c8d9e0f1a2b",'
        '"message":"The node was low on resource: memory. Threshold quantity: 100Mi, available: 87608Ki. '
        'Container trainer was using 14395616Ki, request is 8Gi, has larger consumption of memory. "}\n'
        '{"ts":1718359335.5,"caller":"pleg/generic.go:334","msg":"Generic (PLEG): container finished","v":0,'
        '"podID":"6f1c2a8e-3b4d-4e5f-9a6b-7c8d9e0f1a2b","containerID":"4c2f0e1d9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d","exitCode":137}\n'
    )
    events = rca.parse_text(text, file="kubelet.log")
    assert events.select("kind", "pod", "namespace", "container", "mem_used_bytes", "exit_code").rows() == [
        ("eviction", None, None, None, None, None),
        ("eviction", "trainer-7d9f8c6b5-x2x9q", "ml", "trainer", 14395616 * KI, None),
        ("container_oomkilled", None, None, None, None, 137),
    ]
    assert attrs_of(events)[0]["resource"] == "memory"
    # A "ts" in seconds (the KEP's examples) is read as seconds.
    assert events["ts"][2] == datetime(2024, 6, 14, 10, 2, 15, 500000, tzinfo=UTC)


def test_klog_stamps_in_a_journal_take_the_zone_its_banner_names() -> None:
    # journalctl printed the kubelet's local clock; its banner says +0430, so 09:28:14 there is 04:58:14 UTC.
    events = _events("kubelet_journal_banner_0430_eviction_minikube_01.log")
    reclaim = events.filter(pl.col("line") == 3).row(0, named=True)
    assert reclaim["kind"] == "eviction"
    assert reclaim["ts"] == datetime(2019, 4, 12, 4, 58, 14, 744599, tzinfo=UTC)
    assert (reclaim["host"], reclaim["pid"], reclaim["severity"]) == ("Ahmadreza", 14260, "warning")
    ranked = attrs_of(events.filter(pl.col("line") == 7))[0]
    assert ranked["eviction_stage"] == "ranked"
    assert ranked["ranked_pods"][0] == "kube-system/kube-scheduler-minikube"


def test_a_zone_abbreviation_banner_shifts_the_klog_stamp_but_not_its_sub_seconds() -> None:
    events = _events("kubelet_journal_banner_pdt_network_not_ready_01.log")
    row = events.filter(pl.col("line") == 3).row(0, named=True)
    # 22:26:30.150357 PDT (UTC-7) is 05:26:30.150357 UTC the next day.
    assert (row["ts"].month, row["ts"].day, row["ts"].hour, row["ts"].minute) == (4, 17, 5, 26)
    assert row["ts"].microsecond == 150357
    assert (row["kind"], row["severity"], row["pid"]) == ("log", "error", 10125)


def test_a_klog_stamp_a_moment_before_its_envelope_is_not_shifted() -> None:
    text = "Mar 03 10:00:00 node1 kubelet[42]: I0303 09:59:59.990000      42 eviction_manager.go:366] \"Eviction manager: attempting to reclaim\" resourceName=\"memory\"\n"
    row = rca.parse_text(text, file="k.log", reference_time=datetime(2024, 3, 4, tzinfo=UTC)).row(0, named=True)
    assert row["ts"] == datetime(2024, 3, 3, 9, 59, 59, 990000, tzinfo=UTC)


def test_kuberuntime_container_key_names_the_container() -> None:
    events = _events("kubelet_journal_microk8s_kubelite_panic_stacktrace_01.log", reference_time=datetime(2026, 1, 7, tzinfo=UTC))
    first = events.filter(pl.col("line") == 1).row(0, named=True)
    assert (first["pod"], first["namespace"], first["container"]) == ("coredns-849d8b6fc-cvblm", "kube-system", "coredns")
    assert (first["host"], first["pid"], first["process"], first["severity"]) == ("debian", 28396, "microk8s.daemon-kubelite", "error")
    # The panic's stacktrace=< block (indented journal lines) stays with its record.
    panic = events.filter(pl.col("line") == 2).row(0, named=True)
    assert panic["n_lines"] == 4
    assert "goroutine 7576 [running]:" in panic["message"]


def test_a_container_value_that_is_not_a_name_is_not_taken() -> None:
    text = 'I0105 10:00:00.000000    1 kubelet.go:1] "SyncLoop" container=&Container{Name:kube-proxy,Image:k8s.gcr.io/kube-proxy}\n'
    assert rca.parse_text(text, file="k.log", reference_time=datetime(2024, 1, 6, tzinfo=UTC))["container"].to_list() == [None]


def test_talosctl_node_prefix_on_json_lines_is_the_host() -> None:
    name = "kubelet_talosctl_logs_json_node_prefix_01.log"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "kubelet"
    events = _events(name)
    first = events.filter(pl.col("line") == 1).row(0, named=True)
    assert first["host"] == "10.200.1.3"
    assert first["ts"] == datetime(2025, 7, 21, 18, 8, 51, 919762, tzinfo=UTC)
    assert (first["severity"], first["format"]) == ("info", "klog_json")
    assert first["message"].startswith('"Kubelet version" kubeletVersion="v1.32.4"')
    assert events["host"].to_list() == ["10.200.1.3"] * 8


def test_a_klog_stamp_minutes_behind_a_stalled_journal_is_not_taken_for_a_zone() -> None:
    text = "Mar 03 10:08:00 node1 kubelet[42]: I0303 10:00:00.000000      42 eviction_manager.go:366] \"Eviction manager: attempting to reclaim\" resourceName=\"memory\"\n"
    row = rca.parse_text(text, file="k.log", reference_time=datetime(2024, 3, 4, tzinfo=UTC)).row(0, named=True)
    assert row["ts"] == datetime(2024, 3, 3, 10, 0, tzinfo=UTC)


def test_volcano_scheduler_evicting_a_preempted_pod_names_it() -> None:
    events = _events("kubelet_klog_volcano_scheduler_evicting_preempted_01.log")
    evicted = events.filter(pl.col("kind") == "eviction").row(0, named=True)
    assert (evicted["line"], evicted["pod"], evicted["namespace"], evicted["pid"]) == (1, "job-b-test-2", "default", 8)
    # "Deleted pod <default/job-b-test-5> from cache.": the pod in angle brackets.
    assert events.filter(pl.col("line") == 5)["pod"].to_list() == ["job-b-test-5"]
    # "Updating pod condition for default/job-c-test-4": no pod reference of that shape.
    assert events.filter(pl.col("line") == 2)["pod"].to_list() == [None]


def test_volcano_job_controller_request_names_the_pod_and_the_job_namespace() -> None:
    events = _events("kubelet_klog_volcano_controller_pod_evicted_request_01.log", reference_time=datetime(2025, 12, 20, tzinfo=UTC))
    row = events.filter(pl.col("line") == 1).row(0, named=True)
    assert (row["pod"], row["namespace"], row["kind"]) == ("vjtest-task0-1", "default", "log")
    assert row["ts"] == datetime(2025, 12, 15, 12, 28, 18, 432174, tzinfo=UTC)


def test_device_plugin_xid_on_a_redacted_uuid_keeps_the_xid() -> None:
    text = (
        "I0810 15:36:05.551834 1 health.go:169] XidCriticalError: Xid=94 on Device=GPU-XX-X-X-XX-XX; marking device as unhealthy.\n"
        "I0810 15:36:05.552532 1 server.go:278] 'nvidia.com/gpu' device marked unhealthy: GPU-XX-X-X-XX-XX\n"
    )
    events = rca.parse_text(text, file="plugin.log", reference_time=datetime(2026, 12, 1, tzinfo=UTC))
    xid, unhealthy = events.row(0, named=True), events.row(1, named=True)
    assert (xid["kind"], xid["xid"], xid["gpu_uuid"], xid["process"]) == ("xid", 94, None, None)
    assert attrs_of(events)[1]["resource"] == "nvidia.com/gpu"
    assert (unhealthy["process"], attrs_of(events)[1]["health"]) == (None, "unhealthy")


def test_a_pod_list_of_one_pod_names_it() -> None:
    # kkamji's notes on pods evicted for DiskPressure (public-code index id 31213554873): kubelet 1.3x journal.
    events = _events("kubelet_journal_image_gc_failed_disk_kill_01.log", year=2025)
    assert events.select("pod", "namespace").row(2) == ("image-converter-backend-8bc77f4c4-v8w7m", "image-converter")
    kill = events.row(3, named=True)
    assert (kill["pod_uid"], kill["container"], kill["container_id"]) == (
        "1e53a7ad-acc8-4bb3-b6b4-af1b06bfd435", "backend", "c6a5c9ea95e7674f67a4cccab573f533ac148039033b3b845a32607fb305b363"
    )
    assert events["severity"][1] == "error"
    assert events["ts"][0] == datetime(2025, 6, 18, 0, 0, 14, 229011, tzinfo=UTC)
    assert events["exit_code"][8] == 0
    # The volume manager names the pod by its uid: pod "<uid>" (UID: "<uid>"), quotes escaped or not.
    assert events["pod_uid"].to_list()[5:7] == ["1e53a7ad-acc8-4bb3-b6b4-af1b06bfd435"] * 2
    # A list of several pods names none of them.
    line = 'Oct 24 06:38:11 m hyperkube[1]: I1024 06:38:11.983026  1 kubelet.go:2141] "SyncLoop ADD" source="api" pods=[a/b c/d]\n'
    assert rca.parse_text(line, year=2022)["pod"][0] is None


def test_crash_loop_lines_name_the_pod_its_back_off_and_the_removed_container() -> None:
    # kubernetes/minikube issue #11110: a 1.20 kubelet's pod worker and topology manager during a crash loop.
    events = _events("kubelet_journal_crashloop_topology_remove_container_01.log", reference_time=datetime(2021, 5, 1, tzinfo=UTC))
    loop, removed = events.row(0, named=True), events.row(1, named=True)
    assert (loop["pod"], loop["namespace"], loop["container"]) == (
        "kube-controller-manager-host-11-1-1-131", "kube-system", "kube-controller-manager",
    )
    assert (loop["pod_uid"], loop["severity"], attrs_of(events)[0]["back_off"]) == ("fee973aa24e6d51c26e210ab99143c53", "error", "5m0s")
    # "[topologymanager] RemoveContainer - Container ID: <id>" names the container the loop left behind.
    assert removed["container_id"] == "5175a141dcd57d969df30790cc8fe790c9de02113e56a55ff1021de6850f5bc3"
    assert set(events["kind"]) == {"log"}


def test_structured_crash_loop_keeps_the_pod_of_its_err_and_its_back_off() -> None:
    # kubernetes/kubernetes issue #102715: 1.21 structured klog, the err= value quoting the pod's nested quotes.
    events = _events("kubelet_journal_structured_crashloop_remove_container_01.log", reference_time=datetime(2021, 7, 1, tzinfo=UTC))
    loops = events.filter(pl.col("line") != 2)
    assert set(loops["pod"]) == {"kube-apiserver-ip-xx-xx-xx-176"} and set(loops["container"]) == {"kube-apiserver"}
    assert set(loops["pod_uid"]) == {"e2c7b04fddb2a572ab8a8dd014822a9f"}
    assert {attrs["back_off"] for attrs in attrs_of(loops)} == {"5m0s"}
    assert events.filter(pl.col("line") == 2)["container_id"].to_list() == ["7b2376930da10cc0b28466001052992f93dfb3ad8436a21e78374881d4a99a6d"]
    assert events["ts"][0] == datetime(2021, 6, 9, 12, 8, 4, 652117, tzinfo=UTC)


def test_pleg_container_died_of_an_evicted_pod_names_its_pod_uid_and_container_id() -> None:
    # An AKS node's /var/log/syslog (public notes on exit codes): the eviction manager ranks, stops, and evicts default/nginx.
    events = _events("kubelet_journal_aks_evicted_pleg_container_died_01.log", year=2023)
    container = "4296b9e2377fddb0e7e42d20223c36771268cb7a1828315331405b66f0030add"
    uid = "27aff94d-e0d9-43d1-84d6-9ab000aa57e2"
    assert events.select("kind", "namespace", "pod", "pod_uid", "container", "container_id").rows() == [
        ("eviction", None, None, None, None, None),
        ("log", "default", "nginx", uid, "nginx", container),
        ("log", "default", "nginx", uid, None, container),
        ("eviction", "default", "nginx", None, None, None),
    ]
    stages = [json.loads(attrs).get("eviction_stage") for attrs in events["attrs"]]
    assert stages == ["ranked", None, None, "evicted"]
    assert json.loads(events["attrs"][2])["pleg_event"] == "ContainerDied"
    assert events["ts"][2] == datetime(2023, 10, 12, 19, 34, 45, 357018, tzinfo=UTC)


def test_cadvisor_oom_event_names_the_killed_tasks_cgroup_pod_and_container() -> None:
    # cAdvisor's Infof("Created an OOM event in container %q at %v") in the kubelet (kubernetes issue #53669 quotes its head):
    # a memory cgroup of the OOM (cgroupfs layout) names the pod and container; the root ("/") names none.
    container = "25a38b5b8d556d7983d975577f5ac75ebbcfb4b269e6deaa0a0440c1ffc969ca"
    cgroup = f"/kubepods/burstable/pod5931aa75-4603-4e65-b552-7c71cf55cfb5/{container}"
    events = rca.parse_text(
        f'Oct 10 17:41:58 node kubelet[4991]: I1010 17:41:57.858757    4991 manager.go:1126] Created an OOM event in container "{cgroup}" '
        "at 2017-10-10 17:41:57.840391563 +0000 UTC\n"
        'Oct 10 17:41:58 node kubelet[4991]: I1010 17:41:57.858812    4991 manager.go:1126] Created an OOM event in container "/" '
        "at 2017-10-10 17:41:57.840391563 +0000 UTC\n",
        year=2017,
    )
    assert events.select("source", "cgroup", "pod_uid", "container_id").rows() == [
        ("kubelet", cgroup, "5931aa75-4603-4e65-b552-7c71cf55cfb5", container),
        ("kubelet", "/", None, None),
    ]


def test_a_klog_stamp_in_an_envelope_of_full_date_and_zone_is_exact() -> None:
    # journalctl -o short-iso: the envelope states the year and the zone the klog stamp leaves out.
    text = (
        '2024-01-15T10:23:46.000321+0000 gpu-node-3 kubelet[2345]: I0115 10:23:46.000000    2345 kubelet.go:2457] "SyncLoop (PLEG): '
        'event for pod" pod="ml/trainer-0" event={"ID":"0b4c","Type":"ContainerDied","Data":"4296b9e2c1d8"}\n'
        # journald wrote the next line ten minutes late: the klog stamp stays, its year inferred as before.
        "2024-01-15T10:33:47.000000+0000 gpu-node-3 kubelet[2345]: I0115 10:23:47.000000    2345 kubelet.go:2457] \"SyncLoop (probe)\"\n"
    )
    events = rca.parse_text(text, file="kubelet.log", reference_time=datetime(2026, 12, 1, tzinfo=UTC))
    assert events.select("ts", "ts_quality", "pod").rows() == [
        (datetime(2024, 1, 15, 10, 23, 46, tzinfo=UTC), "exact", "trainer-0"),
        (datetime(2024, 1, 15, 10, 23, 47, tzinfo=UTC), "year_inferred", None),
    ]


def test_a_klog_stamp_in_a_journal_json_export_takes_the_entrys_year_and_zone() -> None:
    # journalctl -o json: the entry's time is exact (UTC); the kubelet's stamp is the node's local clock (here UTC+8), without
    # a year, and the file's own year is unknown.
    entries = [
        json.dumps({
            "__REALTIME_TIMESTAMP": str(1704437000123456 + second * 1_000_000), "_HOSTNAME": "node-a", "SYSLOG_IDENTIFIER": "kubenswrapper",
            "_PID": "2301", "PRIORITY": "6",
            "MESSAGE": f'I0105 14:43:{20 + second}.123456    2301 kubelet.go:2000] "SyncLoop ADD" source="api" pods=["ns/p{second}"]',
        })
        for second in range(3)
    ]
    events = rca.parse_text("\n".join(entries) + "\n", file="journal.json", reference_time=datetime(2026, 12, 1, tzinfo=UTC))
    assert events.select("source", "ts_quality", "pod").rows() == [("kubelet", "exact", f"p{second}") for second in range(3)]
    assert events["ts"][0] == datetime(2024, 1, 5, 6, 43, 20, 123456, tzinfo=UTC)


def test_the_event_recorders_field_path_names_the_container() -> None:
    events = _events("kubelet_journal_kind_grace_period_override_container_exited_01.log")
    container_id = "0782dd0d297258a8f747621ef2b2e349c72bbede25c0d2740eb3eea125d0dbd7"
    rows = events.filter(pl.col("line").is_in([4, 5, 6, 14])).select("line", "kind", "pod", "namespace", "container", "container_id").rows()
    assert rows == [
        (4, "log", "lws-1", "lws-e2e-thznm", "c", container_id),
        (5, "log", "lws-1", "lws-e2e-thznm", "c", container_id),
        (6, "log", "lws-1", "lws-e2e-thznm", "c", None),  # "Event occurred" … fieldPath="spec.containers{c}"
        (14, "log", "lws-1", "lws-e2e-thznm", "c", container_id),  # "Container exited normally"
    ]
    assert events["host"].unique().to_list() == ["kind-worker"]
    assert events["pid"].unique().to_list() == [202]
    legacy = (
        'I0222 21:48:12.045321    3709 server.go:691] Event(v1.ObjectReference{Kind:"Pod", Namespace:"ns", Name:"p", UID:"17eed503", '
        'APIVersion:"v1", ResourceVersion:"111", FieldPath:"spec.initContainers{init}"}): type: \'Normal\' reason: \'Killing\' Stopping\n'
    )
    assert rca.parse_text(legacy, file="kubelet.log", year=2017)["container"].to_list() == ["init"]


def test_fields_a_pager_chopped_name_nothing() -> None:
    # `systemctl status kubelet` (OpenShift's hyperkube): journal lines that less chopped at the terminal's width with ">".
    events = _events("kubelet_journal_hyperkube_chopped_fields_ocp_01.log")
    assert events["host"].unique().to_list() == ["master2.ocp4.example.com"]
    assert events["process"].unique().to_list() == ["hyperkube"]
    # containerID="37a3…bf8c> and pod="openshift-marketplace/cert> are cut: no container id, no pod.
    cut = events.filter(pl.col("line").is_in([1, 2, 5]))
    assert cut[["pod", "namespace", "container_id"]].null_count().row(0) == (3, 3, 3)
    assert events.filter(pl.col("line") == 3).select("pod", "namespace").row(0) == ("redhat-marketplace-t2g47", "openshift-marketplace")
    # A whole value may end with ">" after its "<".
    whole = 'I1024 06:38:11.949063  110225 kubelet.go:1] "Pod done" pod="ns/p" err=<nil>\n'
    assert rca.parse_text(whole, file="kubelet.log", year=2022)["pod"].to_list() == ["p"]


def test_a_zh_cn_journal_month_and_old_eviction_lines() -> None:
    # journalctl in a zh_CN locale prints the month as "10月"; kubelet 1.7's eviction manager lines.
    events = _events("kubelet_journal_zh_cn_month_eviction_nodefs_01.log", reference_time=datetime(2017, 12, 1, tzinfo=UTC))
    assert events["ts"][0] == datetime(2017, 10, 16, 9, 50, 55, 56703, tzinfo=UTC)
    assert events.select("kind", "severity", "pid").rows() == [
        ("eviction", "warning", 17144),
        ("eviction", "info", 17144),
        ("log", "error", 17144),  # thresholds met but no pod to evict: nothing evicted
        ("eviction", "warning", 12844),
        ("eviction", "warning", 12844),
    ]
    assert events.filter(pl.col("line") >= 4).select("pod", "namespace", "pod_uid").rows() == [
        ("weave-net-3svfg", "kube-system", "e5a5d474-b214-11e7-a98b-0650cc001a5b"),
        ("kube-proxy-d9lk0", "kube-system", "e5ff8fde-b214-11e7-a98b-0650cc001a5b"),
    ]
    assert [a.get("eviction_stage") for a in attrs_of(events)] == ["reclaim_attempt", "must_evict", None, "admission_rejected", "admission_rejected"]


def test_a_json_line_of_a_named_logger() -> None:
    # --logging-format=json writes a named logger's name between "ts" and "caller" (component-base's encoder keys).
    line = (
        '{"ts":1700000000323.4,"logger":"kubelet","caller":"kuberuntime/kuberuntime_container.go:809","msg":"Killing container with '
        'a grace period","v":0,"pod":{"name":"pod-1","namespace":"kube-system"},"containerName":"c","gracePeriod":30}\n'
    )
    assert sources.sniff(line.splitlines())[0].name == "kubelet"
    (row,) = rca.parse_text(line, file="kubelet.json").to_dicts()
    assert (row["format"], row["severity"], row["pod"], row["namespace"], row["container"]) == ("klog_json", "info", "pod-1", "kube-system", "c")
    assert row["ts"] == datetime(2023, 11, 14, 22, 13, 20, 323400, tzinfo=UTC)


def test_a_syslog_level_word_before_the_klog_header() -> None:
    """kubernetes #138446: StarlingX's syslog-ng template writes the syslog level ("info") before the klog header."""
    events = _events("kubelet_syslog_iso_level_word_topology_hints_01.log")
    assert events.select("severity", "pid", "host", "pod", "namespace", "container").rows() == [
        ("info", 3788611, "controller-0", "device-plugin-demo-f5d7d886c-4z6sw", "default", None),
        ("info", 3788611, "controller-0", "device-plugin-demo-f5d7d886c-4z6sw", "default", None),
        ("info", 3788611, "controller-0", "device-plugin-demo-f5d7d886c-4z6sw", "default", "init-device-check"),
        ("info", 3788611, "controller-0", "device-plugin-demo-f5d7d886c-4z6sw", "default", "app-container"),
    ]
    assert events["ts"][0] == datetime(2026, 4, 19, 3, 0, 55, 440611, tzinfo=UTC)
    assert events["message"][0] == '"Receiving a new pod" pod="default/device-plugin-demo-f5d7d886c-4z6sw"'
    assert [a["caller"] for a in attrs_of(events)] == ["config.go:398", "kubelet.go:2415", "scope_container.go:75", "scope_container.go:75"]


def test_a_recorded_warning_event_with_a_placeholder_object() -> None:
    """kubernetes #124345: "Event occurred" … type="Warning" reason="UnexpectedAdmissionError", the pod redacted."""
    events = _events("kubelet_klog_event_occurred_unexpected_admission_placeholder_pod_01.log")
    assert events.select("line", "kind", "severity", "pod", "namespace").rows() == [
        (1, "log", "warning", None, None),  # logged at I: the event it records is a Warning
        (3, "log", "info", None, None),
    ]
    assert attrs_of(events)[0]["reason"] == "UnexpectedAdmissionError"


def test_the_device_plugin_stream_ending() -> None:
    """volcano-sh/devices #59: the kubelet loses the vGPU plugin's ListAndWatch stream, then cannot reconnect."""
    events = _events("kubelet_journal_device_plugin_list_and_watch_ended_01.log", reference_time=datetime(2024, 4, 1, tzinfo=UTC))
    assert events.select("kind", "severity", "host", "pid", "process").rows() == [
        ("log", "error", "dell-63", 1067, "kubelet"),
        ("log", "warning", "dell-63", 1067, "kubelet"),
    ]
    assert events["ts"][0] == datetime(2024, 3, 19, 14, 31, 9, 987111, tzinfo=UTC)


def test_openshift_kubenswrapper_lines_are_the_kubelets() -> None:
    # A blog post on an OpenShift 4.16 node gone NotReady: `journalctl -u kubelet.service`, the kubelet tagged kubenswrapper.
    events = _events("kubelet_journal_openshift_kubenswrapper_tls_bootstrap_01.log")
    assert set(events.select("source", "host", "pid", "process").rows()) == {("kubelet", "worker2.ocp4.demo.com", 1562807, "kubenswrapper")}
    assert events["severity"].to_list() == ["info"] * 5 + ["error", "info"]
    # The klog stamp's microseconds, not the envelope's whole second.
    assert events["ts"][0] == datetime(2024, 8, 27, 6, 51, 56, 776626, tzinfo=UTC)
    assert json.loads(events["attrs"][5])["caller"] == "transport.go:123"


def test_openshift_node_logs_send_kubenswrapper_lines_to_the_kubelet_rules() -> None:
    # An OpenShift cheat sheet: `oc adm node-logs master01 -u kubelet` (short-precise), systemd's lines before the kubelet's.
    events = rca.parse_text((DATA / "syslog" / "journal_openshift_kubenswrapper_pod_status_01.log").read_text(), file="node-logs")
    assert events.select("line", "source", "pod", "namespace").rows() == [
        (1, "syslog", None, None), (2, "syslog", None, None), (3, "syslog", None, None), (4, "syslog", None, None),
        (5, "kubelet", "etcd-master01", "openshift-etcd"), (6, "kubelet", "kube-apiserver-master01", "openshift-kube-apiserver"),
    ]
    assert events["ts"][4] == datetime(2023, 3, 9, 16, 58, 52, 132866, tzinfo=UTC)


def test_cri_labels_name_the_container_log_managers_pod() -> None:
    """kubernetes #138523: the container log manager's labels={"io.kubernetes.pod.name":…} name pod, namespace, uid, container."""
    events = _events("kubelet_journal_cri_labels_topology_admission_check_01.log", reference_time=datetime(2026, 5, 1, tzinfo=UTC))
    assert events.select("line", "pod", "namespace", "pod_uid", "container", "container_id").rows()[0] == (
        1, "aws-guardduty-agent-g7l8s", "amazon-guardduty", "154e03f1-4c95-4eb6-9eab-320f18ef93ca", "aws-guardduty-agent",
        "7316099a05a447ee58fc60405fe005cdf43dbdf3ea5e20e77a944abb392fc9b8",
    )
    assert events.select("pod", "namespace").rows()[1:] == [("gu", "default")] * 3
    assert set(events.select("source", "host", "pid", "severity").rows()) == {
        ("kubelet", "ip-10-7-15-134.us-west-2.compute.internal", 2439609, "info")
    }
    assert events["ts"][3] == datetime(2026, 4, 28, 17, 4, 51, 535164, tzinfo=UTC)


def test_an_elided_klog_header_keeps_the_eviction_facts() -> None:
    """A blog's `journalctl -xeu kubelet` excerpt, each klog header cut to "...": the eviction sequence, no time."""
    events = _events("kubelet_klog_elided_header_ephemeral_storage_eviction_01.log")
    assert set(events["source"]) == {"kubelet"}
    assert events["ts"].null_count() == events.height and set(events["ts_quality"]) == {"missing"}
    assert events["severity"].null_count() == events.height and events["pid"].null_count() == events.height
    evictions = events.filter(pl.col("kind") == "eviction")
    assert evictions.select("line", "pod", "namespace").rows() == [
        (1, None, None), (5, None, None), (6, None, None), (7, "mysql", "default"), (8, "mysql", "default"),
    ]
    stages = [attrs["eviction_stage"] for attrs in attrs_of(evictions)]
    assert stages == ["reclaim_attempt", "must_evict", "ranked", "evicted", "cleanup_wait"]
    assert attrs_of(evictions)[0]["resource"] == "ephemeral-storage"
    assert attrs_of(events)[1]["caller"] == "container_gc.go:85"


def test_controller_managers_job_backoff_limit_event_is_an_error_naming_the_job() -> None:
    """kubernetes #96038: kube-controller-manager's klog of a Job's BackoffLimitExceeded (an info line of a Warning
    event): an error, in the Job's namespace, the Job in attrs; no pod."""
    events = _events("kubelet_klog_controller_manager_event_job_backoff_limit_01.log", year=2020)
    assert events.select("line", "source", "format", "kind", "severity", "pid", "pod", "namespace").rows() == [
        (1, "kubelet", "klog", "log", "error", 12, None, "test-9dedmf-11")
    ]
    assert events["ts"][0] == datetime(2020, 10, 30, 1, 8, 14, 634565, tzinfo=UTC)
    attrs = attrs_of(events)[0]
    assert (attrs["reason"], attrs["object"]) == ("BackoffLimitExceeded", "Job/big-job-0")


def test_gke_pleg_container_finished_with_an_unquoted_pod_id() -> None:
    """A GKE node's `journalctl -u kubelet` (1.26-era): the PLEG's "container finished" names the pod by its unquoted
    podID and the container by its id, with exit code 0; the PLEG events name pod, namespace, uid and container id."""
    events = _events("kubelet_journal_gke_pleg_container_finished_unquoted_pod_id_01.log", year=2023)
    assert events.height == 10
    assert events["kind"].unique().to_list() == ["log"]
    assert events["severity"].to_list() == ["info", "info", "error", *["info"] * 7]
    finished = events.row(5, named=True)
    assert (finished["pod_uid"], finished["container_id"], finished["exit_code"], finished["pid"]) == (
        "7eaba53e-63d2-4906-9a16-ff315c3337fd", "7baae34a275025ee9803614c912ba1916f452fcd6569e835e556566e79a52357", 0, 2264,
    )
    died = events.row(6, named=True)
    assert (died["pod"], died["namespace"]) == ("kube-multus-ds-kk2r8", "kube-system")
    assert died["host"] == "gke-my-first-cluster-1-default-pool-c0a2ad16-0bvz"
    assert attrs_of(events)[6]["pleg_event"] == "ContainerDied"
    assert finished["ts"] == datetime(2023, 5, 2, 8, 56, 9, 232422, tzinfo=UTC)


def test_bare_klog_of_kube_scheduler_is_its_process() -> None:
    """kube-scheduler's own klog (a HAMi issue's paste): its scheduling-cycle callers (scheduling_queue.go, schedule_one.go)
    name the component for every line of the file, the unscheduled GPU pod's line included."""
    events = _events("kubelet_klog_kube_scheduler_unable_to_schedule_gpu_memory_01.log", year=2025)
    assert events["process"].unique().to_list() == ["kube-scheduler"]
    assert events["source"].unique().to_list() == ["kubelet"]
    unable = events.filter(pl.col("line") == 6).row(0, named=True)
    assert (unable["pod"], unable["namespace"], unable["pid"], unable["severity"]) == ("qwen2-5-0-5b-5d6b69597d-5bpm5", "privatemodel", 1, "info")
    assert unable["ts"] == datetime(2025, 5, 22, 10, 38, 34, 889025, tzinfo=UTC)


def test_bare_klog_of_kube_controller_manager_is_its_process() -> None:
    """The node controller of 2016 (nodecontroller.go) evicting a node's pods: kube-controller-manager's lines, not the
    kubelet's, and no pod eviction (the node's pods are named nowhere)."""
    events = _events("kubelet_klog_controller_manager_nodecontroller_evicting_pods_01.log", year=2016)
    assert events.select("line", "process", "pid", "kind").rows() == [(n, "kube-controller-manager", 6, "log") for n in (1, 2, 3, 4)]
    assert events["ts"][0] == datetime(2016, 2, 11, 7, 53, 26, 351661, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "process"),
    [
        # Volcano's controllers have a job_controller.go and a garbagecollector.go of their own, their lines unstructured.
        ("I1215 12:28:18.432174       1 job_controller.go:356] Try to handle request <Queue: , Job: default/vj>\n", "kubelet"),
        ("I1215 12:28:18.472913       1 garbagecollector.go:128] Updating job default/vjtest\n", "kubelet"),
        ('I0111 13:30:07.068169       1 job_controller.go:516] "enqueueing job" key="default/job1"\n', "kube-controller-manager"),
        ('{"ts":1700000000000.1,"caller":"scheduler/schedule_one.go:98","msg":"Attempting to schedule pod","v":3}\n', "kube-scheduler"),
    ],
)
def test_bare_klog_component_is_read_from_its_callers(text: str, process: str) -> None:
    events = rca.parse_text(text, file="component.log", reference_time=datetime(2026, 12, 1, tzinfo=UTC))
    assert events["process"].to_list() == [process]


def test_journal_lines_of_kube_scheduler_are_klog() -> None:
    """A journal line of kube-scheduler is klog as the kubelet's are: its process stays the journal's program, its pid the klog thread."""
    text = "Jun 12 17:02:06 k8s kube-scheduler[6154]: I0612 17:02:06.544109    6154 leaderelection.go:247] lock is held by k8s-node\n"
    row = rca.parse_text(text, file="messages", reference_time=datetime(2017, 7, 1, tzinfo=UTC)).row(0, named=True)
    assert (row["process"], row["pid"], row["severity"], row["host"]) == ("kube-scheduler", 6154, "info", "k8s")
