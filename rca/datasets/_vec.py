"""Columns of random values drawn from one :class:`random.Random`.

Bulk noise is built a column at a time, so the random draws are too: one ``randbytes``
call becomes a whole UInt64 column through a zero-copy Arrow buffer. Everything still
comes from the seeded generator, so the same seed gives the same bytes.
"""

from __future__ import annotations

import array
import random
from collections.abc import Sequence

import polars as pl
import pyarrow as pa

_MASK53 = float(1 << 53)


class Draw:
    """Vectorized draws from a seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def u64(self, n: int) -> pl.Series:
        """``n`` uniform unsigned 64-bit integers."""
        if n == 0:
            return pl.Series(values=[], dtype=pl.UInt64)
        buffer = pa.py_buffer(self.rng.randbytes(8 * n))
        return pl.from_arrow(pa.Array.from_buffers(pa.uint64(), n, [None, buffer]))  # type: ignore[return-value]

    def ints(self, n: int, low: int, high: int) -> pl.Series:
        """``n`` integers uniform in ``[low, high)`` (Int64)."""
        span = max(high - low, 1)
        return (self.u64(n) % span).cast(pl.Int64) + low

    def floats(self, n: int, low: float = 0.0, high: float = 1.0) -> pl.Series:
        """``n`` floats uniform in ``[low, high)``."""
        unit = (self.u64(n) // (1 << 11)).cast(pl.Float64) / _MASK53
        return unit * (high - low) + low

    def index(self, n: int, size: int) -> pl.Series:
        """``n`` positions into a pool of ``size`` items (UInt32, for ``gather``)."""
        return (self.u64(n) % max(size, 1)).cast(pl.UInt32)

    def pick(self, n: int, pool: Sequence[str] | pl.Series) -> pl.Series:
        """``n`` items drawn with replacement from ``pool``."""
        series = pool if isinstance(pool, pl.Series) else pl.Series(values=list(pool), dtype=pl.String)
        return series.gather(self.index(n, series.len()))

    def weighted(self, n: int, weights: Sequence[float]) -> pl.Series:
        """``n`` category numbers drawn with the given relative ``weights`` (UInt32)."""
        total = float(sum(weights))
        running, edges = 0.0, []
        for weight in weights:
            running += weight / total
            edges.append(running)
        edges[-1] = 1.0
        return (
            pl.Series(values=edges, dtype=pl.Float64).search_sorted(self.floats(n), side="right").cast(pl.UInt32).clip(0, len(weights) - 1)
        )

    def hex(self, n: int, digits: int) -> pl.Series:
        """``n`` lowercase hexadecimal strings of ``digits`` characters."""
        if n == 0:
            return pl.Series(values=[], dtype=pl.String)
        data = self.rng.randbytes((n * digits + 1) // 2).hex()[: n * digits].encode("ascii")
        offsets = array.array("i", range(0, (n + 1) * digits, digits)).tobytes()
        strings = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
        return pl.from_arrow(strings)  # type: ignore[return-value]

    def times(self, n: int, start_us: int, end_us: int) -> pl.Series:
        """``n`` sorted instants (µs since the epoch) uniform in ``[start_us, end_us)``."""
        return self.ints(n, start_us, end_us).sort()


def fixed(number: pl.Expr, decimals: int) -> pl.Expr:
    """A non-negative float printed with exactly ``decimals`` decimals ("%.2f"), vectorized."""
    scale = 10**decimals
    scaled = (number * scale).round(0).cast(pl.Int64)
    if decimals == 0:
        return scaled.cast(pl.String)
    return pl.format("{}.{}", (scaled // scale).cast(pl.String), (scaled % scale).cast(pl.String).str.zfill(decimals))
