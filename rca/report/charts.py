"""The digest's charts: matplotlib figures rendered off-screen (Agg) to PNG bytes.

Figures are built with the object-oriented API (``matplotlib.figure.Figure``), never pyplot,
so drawing a chart changes no global state and needs no display. :func:`data_uri` turns the
bytes into what an ``<img src>`` embeds.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from datetime import date

from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

GIB = 1024**3
_DPI = 110


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG (no software tag, so the same chart gives the same bytes)."""
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` for embedding PNG bytes in HTML."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def daily_stacked(days: Sequence[date], counts: Mapping[str, Sequence[int]], *, title: str, legend_title: str) -> bytes:
    """Stacked bars, one per day: ``counts`` maps each group to its count per day (in ``days`` order)."""
    figure = Figure(figsize=(8.0, 3.4))
    axes = figure.add_subplot()
    cmap = colormaps["tab10" if len(counts) <= 10 else "tab20"]
    positions = list(range(len(days)))
    bottom = [0] * len(days)
    for index, (group, values) in enumerate(counts.items()):
        axes.bar(positions, values, bottom=bottom, label=group, color=cmap(index % cmap.N), edgecolor="white", linewidth=0.5)
        bottom = [b + v for b, v in zip(bottom, values)]
    axes.set_xticks(positions, [f"{day:%a %d %b}" for day in days], fontsize=8)
    axes.set_ylabel("incidents")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.set_title(title, fontsize=10)
    axes.spines[["top", "right"]].set_visible(False)
    if counts:
        axes.legend(title=legend_title, fontsize=7, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return png_bytes(figure)


def memory_curve(minutes: Sequence[float], used_bytes: Sequence[float], total_bytes: float | None, *, title: str) -> bytes:
    """GPU memory used (GiB) against minutes before the failure, the GPU's capacity dashed, the failure at 0."""
    figure = Figure(figsize=(4.6, 2.8))
    axes = figure.add_subplot()
    axes.plot(minutes, [value / GIB for value in used_bytes], color="#1f77b4", linewidth=1.4, marker=".", markersize=3)
    if total_bytes:
        axes.axhline(total_bytes / GIB, color="#7f7f7f", linestyle="--", linewidth=1, label="capacity")
        axes.legend(fontsize=7, frameon=False, loc="lower left")
    axes.axvline(0, color="#d62728", linewidth=1.2)
    axes.annotate("failure", xy=(0, 1), xycoords=("data", "axes fraction"), xytext=(-3, -3), textcoords="offset points",
                  ha="right", va="top", color="#d62728", fontsize=7)
    axes.set_xlabel("minutes relative to the failure", fontsize=8)
    axes.set_ylabel("GPU memory used (GiB)", fontsize=8)
    axes.tick_params(labelsize=7)
    axes.set_ylim(bottom=0)
    axes.set_title(title, fontsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    return png_bytes(figure)

