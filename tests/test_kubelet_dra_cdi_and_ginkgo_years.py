"""kubelet source: a year-less klog or e2e framework stamp among Ginkgo v2's dated lines takes their year; the kubelet's
DRA prepare, claim-state and CDI injection failures name what failed, the driver, the claim and the CDI devices."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import rca
from tests.conftest import fixture_path, parse_log


def _rows(text: str) -> list[dict]:
    return parse_log(text).select("line", "format", "ts", "ts_quality", "severity", "pod", "namespace", "message", "attrs").to_dicts()


def test_klog_line_inside_ginkgo_v2_output_takes_the_steps_year_not_the_mtimes() -> None:
    rows = _rows(fixture_path("kubelet_ginkgo_v2_steps_klog_yearless_csinode_2024_01.log").read_text())
    by_line = {row["line"]: row for row in rows}
    assert (by_line[4]["format"], by_line[4]["ts"], by_line[4]["ts_quality"]) == (
        "klog", datetime(2024, 9, 12, 11, 53, 5, 724978, tzinfo=UTC), "year_inferred",
    )
    assert by_line[4]["message"] == ">>> kubeConfig: /home/ii/.kube/config"
    assert (by_line[27]["ts"], by_line[27]["ts_quality"]) == (datetime(2024, 9, 12, 11, 53, 5, 919018, tzinfo=UTC), "year_inferred")
    assert (by_line[3]["format"], by_line[3]["ts_quality"]) == ("ginkgo_v2", "exact")


def test_indented_e2e_framework_line_is_its_own_record_in_the_steps_year() -> None:
    rows = _rows(fixture_path("kubelet_ginkgo_v2_steps_e2e_framework_indented_pv_2023_01.log").read_text())
    by_line = {row["line"]: row for row in rows}
    # each of the three Logf lines is a record of its own, not the continuation of the step above it
    assert len(rows) == 28
    assert by_line[3]["message"] == "STEP: Creating a kubernetes client"
    framework = by_line[4]
    assert (framework["format"], framework["severity"], framework["message"]) == ("e2e_framework", "info", ">>> kubeConfig: /home/ii/.kube/config")
    assert (framework["ts"], framework["ts_quality"]) == (datetime(2023, 7, 31, 13, 58, 14, 575000, tzinfo=UTC), "year_inferred")
    assert (by_line[21]["ts"], by_line[21]["message"]) == (datetime(2023, 7, 31, 13, 58, 16, 855000, tzinfo=UTC), "Creating a PV followed by a PVC")


def test_nearest_dated_line_decides_the_year_across_new_year() -> None:
    text = (
        "STEP: waiting @ 12/31/24 23:59:59.5\n"
        "  I1231 23:59:59.900000 7 util.go:1] before midnight\n"
        "STEP: still waiting @ 01/01/25 00:00:01.25\n"
        "  I0101 00:00:02.000000 7 util.go:1] after midnight\n"
    )
    rows = {row["line"]: row for row in _rows(text)}
    assert rows[2]["ts"] == datetime(2024, 12, 31, 23, 59, 59, 900000, tzinfo=UTC)
    assert rows[4]["ts"] == datetime(2025, 1, 1, 0, 0, 2, tzinfo=UTC)


def test_klog_file_without_dated_lines_keeps_its_mtime_year() -> None:
    (row,) = _rows("I0912 11:53:05.724978 286994 util.go:502] >>> kubeConfig: /root/.kube/config\n")
    assert (row["ts"], row["ts_quality"]) == (datetime(2026, 9, 12, 11, 53, 5, 724978, tzinfo=UTC), "year_from_mtime")


def test_dra_prepare_failure_names_the_unregistered_driver_and_the_claim_it_cannot_find() -> None:
    prepare, *claim_info = _rows(fixture_path("kubelet_journal_dra_prepare_driver_not_registered_compute_domain_01.log").read_text())
    assert (prepare["severity"], prepare["pod"], prepare["namespace"]) == ("error", "nccl-test-worker-0", "default")
    assert json.loads(prepare["attrs"]) == {
        "caller": "kuberuntime_manager.go:1323", "structured": True, "device_failure": "dra_prepare", "dra_driver": "compute-domain.nvidia.com",
    }
    assert len(claim_info) == 3
    assert json.loads(claim_info[0]["attrs"]) == {
        "caller": "container_manager_linux.go:1016", "structured": True, "device_failure": "dra_claim_info",
        "resource_claim": "nccl-test-worker-0-compute-domain-channel-h4lpr",
    }


def test_dra_prepare_failure_names_the_claim_of_its_namespace() -> None:
    (row,) = _rows(fixture_path("kubelet_journal_dra_prepare_claim_cdi_spec_file_1_29_01.log").read_text())
    assert (row["severity"], row["pod"], row["namespace"]) == ("error", "rdma-rc-6c5596fdb8-mf95q", "default")
    attrs = json.loads(row["attrs"])
    assert (attrs["device_failure"], attrs["resource_claim"]) == ("dra_prepare", "default/rdma-demo")
    assert "dra_driver" not in attrs


def test_dra_driver_missing_from_registered_plugins_and_claim_not_allowed() -> None:
    listed, allowed = _rows(
        'E0525 10:00:00.000000 1 kuberuntime_manager.go:1280] "Failed to prepare dynamic resources" err="failed to get gRPC client for driver '
        'dra-1411.k8s.io: plugin name dra-1411.k8s.io not found in the list of registered DRA plugins" pod="dra-1411/tester-1"\n'
        'E1228 20:39:07.524213 723 kuberuntime_manager.go:1217] "Failed to prepare dynamic resources" err="pod pod1(8221078e-5853-49ba-969c-'
        '04bb67c23c90) is not allowed to use resource claim pve-interfaces(6c61e511-d23c-411d-8774-1ab087ba807c)" pod="default/pod1"\n'
    )
    assert (listed["pod"], listed["namespace"], json.loads(listed["attrs"])["dra_driver"]) == ("tester-1", "dra-1411", "dra-1411.k8s.io")
    assert (allowed["pod"], json.loads(allowed["attrs"])["resource_claim"]) == ("pod1", "pve-interfaces")


def test_unresolvable_cdi_devices_in_the_runtimes_error() -> None:
    (row,) = _rows(fixture_path("kubelet_journal_cdi_unresolvable_devices_run_pod_sandbox_01.log").read_text())
    assert row["severity"] == "error"
    assert json.loads(row["attrs"]) == {
        "caller": "log.go:32", "structured": True, "device_failure": "cdi_injection", "cdi_devices": "nvidia.com/pgpu=vfio1",
    }


def test_a_claim_mentioned_by_an_unrelated_line_is_no_device_failure() -> None:
    (row,) = _rows('I0114 22:32:39.000000 14067 manager.go:1] "Prepared claim" for claim default/ok\n')
    assert json.loads(row["attrs"]) == {"caller": "manager.go:1", "structured": True}


def test_a_year_given_is_kept_whatever_the_files_dated_lines_say() -> None:
    text = (
        'I0912 11:53:05.724978 1234 kubelet.go:100] "Starting kubelet"\n'
        "STEP: a step of another run @ 09/12/19 11:53:06.000\n"
        'E0912 11:53:07.000000 1234 kubelet.go:101] "Error syncing pod"\n'
    )
    rows = {row["line"]: row for row in rca.parse_text(text, file="x.log", year=2024).to_dicts()}
    assert [rows[line]["ts"].year for line in (1, 3)] == [2024, 2024]
    assert rows[2]["ts"] == datetime(2019, 9, 12, 11, 53, 6, tzinfo=UTC)
