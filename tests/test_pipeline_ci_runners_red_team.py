"""A CI job's runner, of a command the OOM killer ended: JS monorepo runners' prefixed "Killed", lerna's and yarn's reports.

Lines are quoted from public CI logs (tests/data/real_logs/SOURCES.md: cypress-io/cypress#23623, microsoft/vscode#185079,
commercetools/commercetools-docs-kit#1424, lerna/lerna#4085).
"""

from __future__ import annotations

import json

import pytest

import rca


def _only_event(line: str) -> dict:
    events = rca.parse_text(line + "\n", file="ci_job.log")
    assert events.height == 1
    return events.row(0, named=True)


@pytest.mark.parametrize(
    ("line", "step"),
    [
        ("@packages/net-stubbing: Killed", "@packages/net-stubbing"),
        ("[extensions-ci           ] Killed", "extensions-ci"),
        ("➤ YN0000: [@commercetools-website/frontend-studio]: Killed", "@commercetools-website/frontend-studio"),
        ("main: Killed", "main"),
    ],
)
def test_prefixed_killed_names_the_step(line: str, step: str) -> None:
    event = _only_event(line)
    assert event["kind"] == "process_killed"
    assert json.loads(event["attrs"]) == {"signal": "SIGKILL", "ci_step": step}


@pytest.mark.parametrize("line", ["Killed", "[05:07:35] Killed", "[ERROR] Killed"])
def test_a_time_or_level_before_killed_is_no_step(line: str) -> None:
    event = _only_event(line)
    assert event["kind"] == "process_killed"
    assert json.loads(event["attrs"]) == {"signal": "SIGKILL"}


def test_lerna_package_script_exit_code() -> None:
    event = _only_event("lerna ERR! yarn run build-prod exited 137 in '@packages/net-stubbing'")
    assert (event["kind"], event["exit_code"], event["severity"]) == ("process_killed", 137, "error")
    assert json.loads(event["attrs"])["signal"] == "SIGKILL"


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        ('error Command failed with signal "SIGKILL".', "SIGKILL"),
        ('[hygiene                 ] error Command failed with signal "SIGTERM".', "SIGTERM"),
    ],
)
def test_yarn_command_failed_with_signal(line: str, signal: str) -> None:
    event = _only_event(line)
    assert (event["kind"], event["severity"]) == ("process_killed", "error")
    assert json.loads(event["attrs"]) == {"signal": signal}


def test_yarn_ordinary_failure_is_no_kill() -> None:
    event = _only_event("error Command failed with exit code 1.")
    assert event["kind"] != "process_killed" or json.loads(event["attrs"]).get("signal") is None
    assert event["exit_code"] == 1
