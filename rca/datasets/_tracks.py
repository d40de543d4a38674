"""Piecewise-linear curves over time: GPU memory per device, used memory per host.

A curve is a list of breakpoints; background pods lay down plateaus and incidents cut a
window out and put their own shape in (a ramp, a step, a sawtooth, a staircase). Samples
are read off the curve for whole columns of timestamps with one as-of join.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl


@dataclass
class Track:
    """Breakpoints ``(t_us, value, util)``; between two of them the curve is a straight line."""

    points: list[tuple[int, float, float]] = field(default_factory=list)

    def add(self, points: Sequence[tuple[int, float, float]]) -> None:
        self.points.extend(points)
        self.points.sort(key=lambda p: p[0])

    def cut(self, start: int, end: int, points: Sequence[tuple[int, float, float]]) -> None:
        """Replace everything in ``[start, end]`` by ``points``."""
        kept = [p for p in self.points if p[0] < start or p[0] > end]
        self.points = sorted(kept + list(points), key=lambda p: p[0])

    def around(self, start: int, end: int) -> list[tuple[int, float, float]]:
        """The breakpoints that shape the curve over ``[start, end]`` (one on each side included)."""
        low = max(bisect.bisect_right(self.points, (start, math.inf, math.inf)) - 1, 0)
        high = bisect.bisect_left(self.points, (end, -math.inf, -math.inf)) + 1
        return self.points[low:high]

    def value_at(self, ts: int) -> tuple[float, float]:
        """The (value, util) at one instant."""
        if not self.points:
            return 0.0, 0.0
        position = bisect.bisect_right(self.points, (ts, math.inf, math.inf))
        if position == 0:
            return self.points[0][1], self.points[0][2]
        t0, v0, u0 = self.points[position - 1]
        if position == len(self.points):
            return v0, u0
        t1, v1, u1 = self.points[position]
        frac = (ts - t0) / (t1 - t0)
        return v0 + (v1 - v0) * frac, u0 + (u1 - u0) * frac


def evaluate(samples: pl.DataFrame, tracks: dict[int, Track], key: str) -> pl.DataFrame:
    """Add ``value`` and ``util`` columns to ``samples`` (columns ``ts`` and ``key``) from ``tracks``."""
    if samples.height == 0:
        return samples.with_columns(value=pl.lit(0.0), util=pl.lit(0.0))
    first, last = int(samples["ts"].min()), int(samples["ts"].max())  # type: ignore[arg-type]
    rows = [(k, t, v, u) for k, track in tracks.items() for t, v, u in track.around(first, last)]
    points = pl.DataFrame(rows, schema={key: pl.Int64, "t": pl.Int64, "v": pl.Float64, "u": pl.Float64}, orient="row").sort(key, "t")
    nexts = [pl.col(name).shift(-1).over(key).alias(f"{name}_next") for name in ("t", "v", "u")]
    points = points.with_columns(nexts).sort("t")
    in_order = samples["ts"].is_sorted()
    left = samples if in_order else samples.with_row_index("_order").sort("ts")
    if len(tracks) == 1:
        joined = left.join_asof(points.drop(key), left_on="ts", right_on="t", strategy="backward", check_sortedness=False)
    else:
        joined = left.join_asof(points, left_on="ts", right_on="t", by=key, strategy="backward", check_sortedness=False)
    span = (pl.col("t_next") - pl.col("t")).cast(pl.Float64)
    frac = pl.when(pl.col("t_next").is_null() | (span <= 0)).then(0.0).otherwise((pl.col("ts") - pl.col("t")).cast(pl.Float64) / span)
    joined = joined.with_columns(
        value=(pl.col("v") + (pl.col("v_next").fill_null(pl.col("v")) - pl.col("v")) * frac).fill_null(0.0),
        util=(pl.col("u") + (pl.col("u_next").fill_null(pl.col("u")) - pl.col("u")) * frac).fill_null(0.0),
    ).drop("t", "v", "u", "t_next", "v_next", "u_next")
    return joined if in_order else joined.sort("_order").drop("_order")
