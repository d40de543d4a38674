"""Scoring the pipeline against a corpus with known answers (``rca eval``).

Found incidents are matched to ground-truth incidents one-to-one: same root host, time
spans overlapping within a tolerance, pairs chosen by the assignment that minimises the
total distance between start times (Hungarian algorithm). On the matched pairs it scores
the knowledge-base mapping and the clustering; columns a stage has not produced yet are
reported as missing rather than scored as wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

TRUTH_SCHEMA = {
    "incident_key": pl.String(),
    "mode_id": pl.String(),
    "host": pl.String(),
    "start_utc": pl.Datetime("us", "UTC"),
    "end_utc": pl.Datetime("us", "UTC"),
    "pid": pl.Int64(),
    "pod": pl.String(),
    "namespace": pl.String(),
    "gpu_index": pl.Int32(),
}

_UNMATCHED = 1e18


@dataclass
class EvalReport:
    """The scores of one store against one ground truth."""

    truth: int
    found: int
    matched: int
    recall: float
    precision: float
    kb_top1_accuracy: float | None = None
    ari: float | None = None
    nmi: float | None = None
    missing_columns: list[str] = field(default_factory=list)
    per_mode: list[dict] = field(default_factory=list)
    unmatched_truth: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def load_truth(path: str | Path) -> pl.DataFrame:
    """Read a generator's ``ground_truth.csv`` into typed columns."""
    raw = pl.read_csv(path, infer_schema=False)
    return raw.select(
        pl.col("incident_key"),
        pl.col("mode_id"),
        pl.col("host"),
        pl.col("start_utc").str.to_datetime(time_unit="us", time_zone="UTC"),
        pl.col("end_utc").str.to_datetime(time_unit="us", time_zone="UTC"),
        pl.col("pid").cast(pl.Int64, strict=False),
        pl.col("pod").replace("", None),
        pl.col("namespace").replace("", None),
        pl.col("gpu_index").cast(pl.Int32, strict=False),
    )


def match(incidents: pl.DataFrame, truth: pl.DataFrame, tolerance_s: float = 120.0) -> pl.DataFrame:
    """Pairs (truth row index, incident row index) of the one-to-one matching."""
    if incidents.height == 0 or truth.height == 0:
        return pl.DataFrame(schema={"truth_row": pl.Int64, "incident_row": pl.Int64})
    tol = pl.duration(microseconds=int(tolerance_s * 1e6))
    pairs = (
        truth.with_row_index("truth_row")
        .select("truth_row", "host", "start_utc", "end_utc")
        .join(incidents.with_row_index("incident_row").select("incident_row", "host", "start", "end"), on="host")
        .filter((pl.col("start") <= pl.col("end_utc") + tol) & (pl.col("end") >= pl.col("start_utc") - tol))
        .with_columns(distance=(pl.col("start") - pl.col("start_utc")).dt.total_microseconds().abs().cast(pl.Float64))
    )
    cost = np.full((truth.height, incidents.height), _UNMATCHED)
    cost[pairs["truth_row"].to_numpy(), pairs["incident_row"].to_numpy()] = pairs["distance"].to_numpy()
    rows, cols = linear_sum_assignment(cost)
    keep = cost[rows, cols] < _UNMATCHED
    return pl.DataFrame({"truth_row": rows[keep].astype(np.int64), "incident_row": cols[keep].astype(np.int64)})


def score(incidents: pl.DataFrame, truth: pl.DataFrame, tolerance_s: float = 120.0) -> EvalReport:
    """Recall and precision of incidents; KB accuracy, ARI and NMI where those columns exist."""
    pairs = match(incidents, truth, tolerance_s)
    report = EvalReport(
        truth=truth.height,
        found=incidents.height,
        matched=pairs.height,
        recall=pairs.height / truth.height if truth.height else 1.0,
        precision=pairs.height / incidents.height if incidents.height else 1.0,
        missing_columns=[c for c in ("failure_mode", "kb_id") if c not in incidents.columns],
    )
    joined = _joined(incidents, truth, pairs)
    if "kb_id" in incidents.columns and joined.height:
        report.kb_top1_accuracy = float((joined["kb_id"] == joined["mode_id"]).fill_null(False).mean())
    if "failure_mode" in incidents.columns and joined.height:
        labels = joined["failure_mode"].cast(pl.String).fill_null("none").to_list()
        report.ari = float(adjusted_rand_score(joined["mode_id"].to_list(), labels))
        report.nmi = float(normalized_mutual_info_score(joined["mode_id"].to_list(), labels))
    report.per_mode = _per_mode(truth, joined)
    matched_keys = set(joined["incident_key"].to_list()) if joined.height else set()
    report.unmatched_truth = sorted(set(truth["incident_key"].to_list()) - matched_keys)
    return report


def _joined(incidents: pl.DataFrame, truth: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    wanted = [c for c in ("incident_id", "failure_mode", "kb_id") if c in incidents.columns]
    found = incidents.with_row_index("incident_row").select("incident_row", *wanted)
    return (
        pairs.join(truth.with_row_index("truth_row").select("truth_row", "incident_key", "mode_id").with_columns(pl.col("truth_row").cast(pl.Int64)), on="truth_row")
        .join(found.with_columns(pl.col("incident_row").cast(pl.Int64)), on="incident_row")
    )


def _per_mode(truth: pl.DataFrame, joined: pl.DataFrame) -> list[dict]:
    totals = truth.group_by("mode_id").len("truth")
    if joined.height:
        kb_hit = (pl.col("kb_id") == pl.col("mode_id")).fill_null(False).sum() if "kb_id" in joined.columns else pl.lit(None)
        found = joined.group_by("mode_id").agg(pl.len().alias("matched"), kb_hit.alias("kb_correct"))
    else:
        found = pl.DataFrame(schema={"mode_id": pl.String, "matched": pl.UInt32, "kb_correct": pl.UInt32})
    table = totals.join(found, on="mode_id", how="left").with_columns(
        pl.col("matched").fill_null(0),
        recall=(pl.col("matched").fill_null(0) / pl.col("truth")),
    )
    return table.sort("mode_id").to_dicts()
