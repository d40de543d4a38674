"""node-problem-detector's reports: its klog status lines (bare, and in a node's journal) and its Node events.

An OOMKilling report read by the kubelet's klog rules is the kernel's kill (victim pid, process, anon-rss), a warning;
the Node its recorder names is the host of a bare line. In a journal the status quotes the kernel line beside it: it
stays a log, a warning with its reason and monitor in attrs. Its other problems (TaskHung, …) are warning logs.
"""

from __future__ import annotations

import json

from tests.conftest import event_on_line, parse_fixture, parse_log

_OOM_STATUS = (
    "I0908 00:14:14.101206 6905 log_monitor.go:160] New status generated: &{Source:kernel-monitor Events:[{Severity:warn "
    "Timestamp:2021-09-08 00:13:58.302819954 +0000 UTC m=-15.099678467 Reason:OOMKilling Message:Out of memory: Killed process 336 "
    "(chronyd) total-vm:85904kB, anon-rss:180kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:68kB oom_score_adj:0}] Conditions:[]}"
)
_HUNG_STATUS = (
    "I1210 09:07:48.142691  562992 log_monitor.go:160] New status generated: &{Source:kernel-monitor Events:[{Severity:warn "
    "Timestamp:2022-12-10 09:07:47.636272174 +0000 UTC m=+63284.134685121 Reason:TaskHung Message:INFO: task cifsd:981715 blocked "
    "for more than 604 seconds.}] Conditions:[]}"
)
_NODE_EVENT = (
    "I0624 18:49:43.983472    6018 event.go:218] Event(v1.ObjectReference{Kind:\"Node\", Namespace:\"\", Name:\"aks-nodepool1-31060421-vmss000002\", "
    "UID:\"aks-nodepool1-31060421-vmss000002\", APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}): type: 'Warning' reason: 'OOMKilling' "
    "Memory cgroup out of memory: Killed process 68061 (stress) total-vm:4195088kB, anon-rss:2884696kB, file-rss:288kB, shmem-rss:0kB, "
    "UID:0 pgtables:5696kB oom_score_adj:872"
)
# kube-controller-manager's event about a node it watches (kubernetes#57955): not that node's own line.
_NOT_READY = (
    "I0103 01:02:50.475405       1 event.go:218] Event(v1.ObjectReference{Kind:\"Node\", Namespace:\"\", Name:\"ae01.pek.prod.com\", "
    "UID:\"f739dd60-49d7-11e7-b36b-1866dae7138c\", APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}): type: 'Normal' reason: 'NodeNotReady' "
    "Node ae01.pek.prod.com status is now: NodeNotReady"
)


def test_bare_oomkilling_status_is_the_kill_as_a_warning() -> None:
    event = event_on_line(parse_log(_OOM_STATUS + "\n"), 1)
    assert (event["source"], event["kind"], event["severity"]) == ("kubelet", "oom_kill", "warning")
    assert (event["pid"], event["process"], event["rss_bytes"]) == (336, "chronyd", 180 * 1024)
    assert json.loads(event["attrs"])["reason"] == "OOMKilling"


def test_bare_status_of_another_problem_is_a_warning_log_with_its_reason() -> None:
    event = event_on_line(parse_log(_HUNG_STATUS + "\n"), 1)
    assert (event["kind"], event["severity"], event["pid"]) == ("log", "warning", 562992)
    assert json.loads(event["attrs"]) == {"caller": "log_monitor.go:160", "reason": "TaskHung", "source": "kernel-monitor"}


def test_recorded_node_oom_event_names_its_node_as_host() -> None:
    events = parse_log(_NODE_EVENT + "\n" + _NOT_READY + "\n")
    kill = event_on_line(events, 1)
    assert (kill["kind"], kill["severity"], kill["host"]) == ("oom_kill", "warning", "aks-nodepool1-31060421-vmss000002")
    assert (kill["pid"], kill["process"], kill["rss_bytes"]) == (68061, "stress", 2884696 * 1024)
    other = event_on_line(events, 2)
    assert (other["kind"], other["severity"], other["host"]) == ("log", "info", None)
    assert json.loads(other["attrs"])["object"] == "Node/ae01.pek.prod.com"


def test_journal_status_stays_a_log_beside_the_kernel_kill() -> None:
    events = parse_fixture("journal_aks_npd_oomkilling_oom_group_01.log")
    kill = event_on_line(events, 2)
    assert (kill["source"], kill["kind"], kill["pid"], kill["process"], kill["rss_bytes"]) == ("kernel", "oom_kill", 68061, "stress", 2953928704)
    status = event_on_line(events, 5)
    assert (status["source"], status["kind"], status["severity"]) == ("syslog", "log", "warning")
    assert (status["pid"], status["process"], status["host"]) == (6018, "node-problem-detector-startup.sh", "aks-nodepool1-31060421-vmss000002")
    assert json.loads(status["attrs"]) == {"reason": "OOMKilling", "source": "kernel-monitor"}


def test_journal_status_without_events_keeps_its_level() -> None:
    line = (
        "Jun 24 18:49:43 aks-nodepool1-31060421-vmss000002 node-problem-detector-startup.sh[6018]: I0624 18:49:43.983472    6018 "
        "log_monitor.go:159] New status generated: &{Source:kernel-monitor Events:[] Conditions:[]}\n"
    )
    event = event_on_line(parse_log(line), 1)
    assert (event["kind"], event["severity"], event["attrs"]) == ("log", "info", None)


def test_describe_node_task_hung_rows_are_warning_logs() -> None:
    events = parse_fixture("kubectl_describe_node_events_npd_taskhung_01.txt")
    assert events["line"].to_list() == [4, 5, 6, 7, 8, 9]
    assert set(events["kind"]) == {"log"} and set(events["severity"]) == {"warning"}
    first = event_on_line(events, 4)
    assert json.loads(first["attrs"]) == {"reason": "TaskHung", "event_type": "Warning", "age": "5m23s", "source": "kernel-monitor"}
