"""Two rca processes on one store: the second writer waits for the lock (bounded) or is refused with a clear message,
and readers only ever see a committed state."""

from __future__ import annotations

import select
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rca
from rca.cli import app
from rca.errors import StoreError, StoreLockedError
from rca.store import Store

DATA = Path(__file__).resolve().parents[1] / "data"
KERNEL_LOG = (DATA / "kernel" / "dmesg_oom_cgroup_01.log").read_bytes()
KUBELET_LOG = (DATA / "kubelet" / "kubelet_klog_eviction_01.log").read_bytes()

# Holds the store's lock until its stdin closes: a stand-in for a long ingest in another process.
HOLD_LOCK = textwrap.dedent("""\
    import sys
    from rca.store import Store
    with Store(sys.argv[1]).writing():
        print("locked", flush=True)
        sys.stdin.read()
    """)


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    (tmp_path / "logs" / "gpu-node-1").mkdir(parents=True)
    (tmp_path / "logs" / "gpu-node-1" / "dmesg.log").write_bytes(KERNEL_LOG)
    return tmp_path / "logs"


@pytest.fixture
def holder(tmp_path: Path):
    """Another process holding the store's lock; it lets go when the test closes its stdin."""
    process = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(tmp_path / "store")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "locked\n"
    yield process
    if process.poll() is None:
        process.stdin.close()
        process.wait(timeout=30)


def test_a_second_writer_is_refused_at_once_naming_the_holder(logs: Path, tmp_path: Path, holder: subprocess.Popen) -> None:
    with pytest.raises(StoreLockedError, match=rf"is being written by rca pid {holder.pid}; wait for it to finish"):
        rca.ingest(logs, tmp_path / "store", workers=1)
    assert not (tmp_path / "store" / "store.json").exists()  # the refused run wrote nothing


def test_the_cli_refusal_is_a_message_and_exit_code_2(logs: Path, tmp_path: Path, holder: subprocess.Popen) -> None:
    result = CliRunner().invoke(app, ["ingest", str(logs), "--store", str(tmp_path / "store"), "--workers", "1", "--no-correlate"])
    assert result.exit_code == 2
    assert f"is being written by rca pid {holder.pid}" in result.output and "Traceback" not in result.output


def test_a_waiting_writer_gives_up_after_its_timeout(logs: Path, tmp_path: Path, holder: subprocess.Popen) -> None:
    with pytest.raises(StoreLockedError, match=rf"still being written by rca pid {holder.pid} after waiting 0.3 s"):
        rca.ingest(logs, tmp_path / "store", workers=1, lock_wait=0.3)


def test_a_waiting_writer_proceeds_once_the_lock_is_released(logs: Path, tmp_path: Path, holder: subprocess.Popen) -> None:
    waiter = subprocess.Popen([sys.executable, "-m", "rca", "ingest", str(logs), "--store", str(tmp_path / "store"), "--workers", "1",
                               "--no-correlate", "--wait", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([waiter.stderr], [], [], 120)
    assert ready, "the waiting writer said nothing"
    notice = waiter.stderr.readline()
    assert f"waiting up to 120 s for the lock on {tmp_path / 'store'}: it is being written by rca pid {holder.pid}" in notice
    holder.stdin.close()
    holder.wait(timeout=30)
    _, err = waiter.communicate(timeout=120)
    assert waiter.returncode == 0, err
    assert rca.open_store(tmp_path / "store").events().height == rca.parse_text(KERNEL_LOG.decode(), format="kernel").height


def test_the_lock_is_released_when_its_holder_is_killed(logs: Path, tmp_path: Path, holder: subprocess.Popen) -> None:
    holder.kill()
    holder.wait(timeout=30)
    report = rca.ingest(logs, tmp_path / "store", workers=1)
    assert report.changes == {"new": 1}


# A writer that rewrites one file back and forth between two contents, committing after each change.
REWRITER = textwrap.dedent("""\
    import sys
    from pathlib import Path
    import rca
    logs, store, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    contents = [Path(sys.argv[4]).read_bytes(), Path(sys.argv[5]).read_bytes()]
    for round_number in range(rounds):
        (logs / "gpu-node-2" / "rotating.log").write_bytes(contents[round_number % 2])
        rca.ingest(logs, store, workers=1)
    """)


def test_readers_see_only_committed_states_while_a_writer_rewrites(logs: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    (logs / "gpu-node-2").mkdir()
    first, second = tmp_path / "a.log", tmp_path / "b.log"
    first.write_bytes(KERNEL_LOG)
    second.write_bytes(KUBELET_LOG)
    base = rca.ingest(logs, store, workers=1).summary["events"]
    committed = {base, base + _events_of(first), base + _events_of(second)}
    assert len(committed) == 3
    writer = subprocess.Popen([sys.executable, "-c", REWRITER, str(logs), str(store), "8", str(first), str(second)],
                              stderr=subprocess.PIPE, text=True)
    seen, problems = [], []
    while writer.poll() is None:
        try:
            opened = rca.open_store(store)
            seen.append((opened.events().height, int(opened.manifest()["events"].sum())))
        except Exception as err:  # noqa: BLE001 (any failure to read is what this test looks for)
            problems.append(f"{type(err).__name__}: {err}")
    assert writer.returncode == 0, writer.stderr.read()
    assert problems == []
    assert len(seen) > 8
    # Each read is one committed state: the events' count, and the manifest's (read a moment later, maybe of the next commit).
    assert {count for pair in seen for count in pair} <= committed


def _events_of(path: Path) -> int:
    return rca.parse_text(path.read_text(encoding="utf-8"), file=path.name).height


def test_a_read_that_meets_a_part_a_later_commit_deleted_reads_the_new_state(logs: Path, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    rca.ingest(logs, store, workers=1)
    stale_parts = Store(store).part_paths()  # what a reader listed just before the next commit
    (logs / "gpu-node-1" / "dmesg.log").write_bytes(KUBELET_LOG)  # rewritten: the next commit deletes its old parts
    rca.ingest(logs, store, workers=1)
    committed = rca.open_store(store).events()
    listings = iter([stale_parts])
    current = Store.part_paths
    monkeypatch.setattr(Store, "part_paths", lambda self: next(listings, None) or current(self))
    assert rca.open_store(store).events().equals(committed)


def test_a_listed_part_that_is_gone_for_good_is_reported_as_damage(logs: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    rca.ingest(logs, store, workers=1)
    Path(Store(store).part_paths()[0]).unlink()
    with pytest.raises(StoreError, match="is damaged: an event part its manifest lists is missing"):
        rca.open_store(store).events()
