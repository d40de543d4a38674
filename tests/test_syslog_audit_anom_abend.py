"""journald's filing of an audit ANOM_ABEND record names the crashed process and its signal (rca.sources._audit)."""

from __future__ import annotations

from tests.conftest import parse_log

_ENVELOPE = "Aug 20 17:56:26 nezha audit[314359]: "
_FIELDS = 'auid=1000 uid=1000 gid=1000 ses=1 pid=314359 comm={comm} exe="/usr/local/bin/python3.12" sig={signal} res=1'


def _only_event(message: str) -> dict:
    events = parse_log(f"Aug 20 17:56:25 nezha systemd[1]: Started trainer.service.\n{_ENVELOPE}{message}\n")
    return events.filter(events["line"] == 2).to_dicts()[0]


def test_a_process_dead_of_a_signal_is_an_error_naming_it_and_its_signal() -> None:
    event = _only_event("ANOM_ABEND " + _FIELDS.format(comm='"python3"', signal=6))
    assert (event["severity"], event["pid"], event["process"], event["attrs"]) == ("error", 314359, "python3", '{"signal":6}')


def test_a_name_audit_would_not_print_is_read_from_its_hex() -> None:
    event = _only_event("ANOM_ABEND " + _FIELDS.format(comm="707974686F6E2033", signal=11))  # "python 3"
    assert (event["process"], event["severity"]) == ("python 3", "error")


def test_other_audit_records_stay_plain_lines_of_audit() -> None:
    event = _only_event('SERVICE_START pid=1 uid=0 auid=4294967295 ses=4294967295 msg=\'unit=trainer comm="systemd" res=success\'')
    assert (event["kind"], event["severity"], event["process"], event["attrs"]) == ("log", None, "audit", None)
