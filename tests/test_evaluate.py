"""The scorer: one-to-one matching by host and time, and the metrics computed on it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from rca.evaluate import TRUTH_SCHEMA, load_truth, match, score

T0 = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def _truth(rows: list[tuple[str, str, str, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"incident_key": key, "mode_id": mode, "host": host, "start_utc": T0 + timedelta(minutes=m), "end_utc": T0 + timedelta(minutes=m, seconds=30),
             "pid": None, "pod": None, "namespace": None, "gpu_index": None}
            for key, mode, host, m in rows
        ],
        schema=TRUTH_SCHEMA,
    )


def _incidents(rows: list[tuple[str, str, int]], **extra: list) -> pl.DataFrame:
    frame = pl.DataFrame(
        {
            "incident_id": [r[0] for r in rows],
            "host": [r[1] for r in rows],
            "start": [T0 + timedelta(minutes=r[2]) for r in rows],
            "end": [T0 + timedelta(minutes=r[2], seconds=40) for r in rows],
        }
    )
    return frame.with_columns(**{k: pl.Series(v) for k, v in extra.items()})


def test_matching_is_one_to_one_and_respects_host() -> None:
    truth = _truth([("t1", "container-memory-limit", "h1", 0), ("t2", "shm-exhaustion", "h1", 1), ("t3", "gpu-hardware-fault", "h2", 0)])
    incidents = _incidents([("a", "h1", 0), ("b", "h2", 60), ("c", "h3", 0)])
    pairs = match(incidents, truth)
    assert pairs.rows() == [(0, 0)]
    report = score(incidents, truth)
    assert (report.truth, report.found, report.matched) == (3, 3, 1)
    assert report.recall == pytest.approx(1 / 3) and report.precision == pytest.approx(1 / 3)
    assert report.missing_columns == ["failure_mode", "kb_id"] and report.ari is None
    assert report.unmatched_truth == ["t2", "t3"]


def test_kb_accuracy_ari_and_nmi_on_matched_pairs() -> None:
    truth = _truth([("t1", "m-a", "h1", 0), ("t2", "m-a", "h1", 10), ("t3", "m-b", "h1", 20), ("t4", "m-b", "h1", 30)])
    incidents = _incidents(
        [("a", "h1", 0), ("b", "h1", 10), ("c", "h1", 20), ("d", "h1", 30)],
        failure_mode=["7", "7", "9", "9"],
        kb_id=["m-a", "m-a", "m-b", "m-a"],
    )
    report = score(incidents, truth)
    assert report.recall == 1.0 and report.precision == 1.0
    assert report.kb_top1_accuracy == pytest.approx(0.75)
    assert report.ari == pytest.approx(1.0) and report.nmi == pytest.approx(1.0)
    per_mode = {row["mode_id"]: row for row in report.per_mode}
    assert per_mode["m-b"]["kb_correct"] == 1 and per_mode["m-a"]["recall"] == 1.0


def test_load_truth_reads_generator_csv(tmp_path) -> None:
    path = tmp_path / "ground_truth.csv"
    path.write_text(
        "incident_key,mode_id,host,start_utc,end_utc,pid,pod,namespace,gpu_index\n"
        "inc-001,cuda-oom-batch-too-large,gpu-a,2026-11-24T10:00:00Z,2026-11-24T10:00:30Z,4242,train-0,ml,3\n"
        "inc-002,node-memory-overcommit,gpu-b,2026-11-24T11:00:00Z,2026-11-24T11:00:05Z,,,,\n"
    )
    truth = load_truth(path)
    assert truth.schema == pl.Schema(TRUTH_SCHEMA)
    assert truth.row(0, named=True)["gpu_index"] == 3 and truth.row(1, named=True)["pod"] is None
