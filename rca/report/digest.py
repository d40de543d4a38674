"""The weekly incident digest: one Markdown file and one self-contained HTML page per window.

:func:`build_digest` reads the store (never the raw logs) and renders both; :func:`write_digest`
writes them as ``digest-<label>.md`` and ``digest-<label>.html``, where the label is the ISO
week (``2026-W48``) or ``SINCE_UNTIL`` for another range. The default window is the 7 days
ending with the day of the store's newest event, so a digest of old logs covers those logs.

Log text is escaped in both outputs: the HTML template is rendered with autoescaping, the
Markdown one with :mod:`rca.report._markdown`'s escaping applied to every value. The page
embeds its charts as base64 PNG and carries a Content-Security-Policy that forbids scripts
and any fetch, so it needs no network and runs nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from rca.kb import KnowledgeBase, load_kb
from rca.redact import Redaction, redacted_store
from rca.report import charts
from rca.report._facts import Facts, gather
from rca.report._markdown import code, fenced, finalize
from rca.report._window import Window, resolve_window
from rca.store import Store, open_store
from rca.timeline import duration

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class Digest:
    """A rendered digest: its window, the facts it shows, and the two documents."""

    window: Window
    facts: Facts
    markdown: str
    html: str


def build_digest(store: Store | str | os.PathLike[str], *, week: str | None = None, since: datetime | date | None = None,
                 until: datetime | date | None = None, kb: KnowledgeBase | str | Path | None = None,
                 redact: Redaction | None = None) -> Digest:
    """The digest of ``week`` (``2026-W48``), of ``[since, until)``, or of the last 7 days of data.

    With ``redact`` (see :mod:`rca.redact`) every value read from the store is masked first, for a
    digest meant to be shared; the store keeps the originals.
    """
    opened = redacted_store(store if isinstance(store, Store) else open_store(store), redact)
    knowledge = kb if isinstance(kb, KnowledgeBase) else load_kb(kb)
    window = resolve_window(opened, week=week, since=since, until=until)
    facts = gather(opened, window, knowledge)
    images = _charts(facts)
    context = {"facts": facts, "window": window, "previous": facts.previous, "images": images}
    markdown = _environment(html=False).get_template("digest.md.j2").render(context)
    html = _environment(html=True).get_template("digest.html.j2").render(context)
    return Digest(window, facts, markdown, html)


def write_digest(store: Store | str | os.PathLike[str], out_dir: str | os.PathLike[str] = ".", **options: Any) -> tuple[Path, Path]:
    """Build the digest (``options`` as for :func:`build_digest`) and write it; returns the Markdown and HTML paths."""
    digest = build_digest(store, **options)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / f"digest-{digest.window.label}.md", folder / f"digest-{digest.window.label}.html"
    for path, text in zip(paths, (digest.markdown, digest.html)):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return paths


def _charts(facts: Facts) -> dict[str, Any]:
    """Data URIs of the daily chart and of each curve that has samples (keyed by group)."""
    legend = "failure mode" if facts.clustered else "anchor kind"
    daily = None
    if facts.incidents:
        labels = {row["group"]: _legend_label(row) for row in facts.groups}
        png = charts.daily_stacked(facts.days, {labels[group]: counts for group, counts in facts.daily.items()},
                                   title=f"incidents per day by {legend}", legend_title=legend)
        daily = charts.data_uri(png)
    curves = {}
    for curve in facts.curves:
        if curve["samples"]:
            title = f"{curve['group']}: {curve['incident_id']} on {curve['host']} GPU {curve['gpu']}"
            curves[curve["group"]] = charts.data_uri(charts.memory_curve(curve["minutes"], curve["used"], curve["total"], title=title))
    return {"daily": daily, "curves": curves}


def _legend_label(row: dict[str, Any]) -> str:
    entry = row.get("kb_id")
    return f"{row['group']} ({entry})" if entry else row["group"]


def _environment(*, html: bool) -> Environment:
    common = {"loader": FileSystemLoader(TEMPLATES), "undefined": StrictUndefined, "trim_blocks": True, "lstrip_blocks": True}
    if html:
        env = Environment(autoescape=True, **common)
    else:
        env = Environment(autoescape=False, finalize=finalize, keep_trailing_newline=True, **common)
        env.filters.update(code=code, fenced=fenced)
    env.filters.update(when=when, delta=delta, gib=gib, rate=rate, pct=pct, score=score, listing=listing, gpu=gpu_name, pod=pod_name,
                       plural=plural, before=before)
    return env


# --- formatting filters (shared by both templates) ---------------------------------------------------


def when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M}" if moment is not None else "no time"


def delta(change: int) -> str:
    return f"+{change}" if change > 0 else (f"−{-change}" if change < 0 else "±0")


def gib(value: float | None) -> str:
    return "?" if value is None else f"{value / charts.GIB:.1f} GiB"


def rate(bytes_per_s: float | None) -> str:
    return "?" if bytes_per_s is None else f"{bytes_per_s / 1e6:+.1f} MB/s"


def pct(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}%"


def score(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def before(minutes: float | None) -> str:
    """Where a curve's first sample lies: ``from the 4 min 30 s before it``, ``at the failure``."""
    if minutes is None or minutes >= 0:
        return "at the failure"
    return f"from the {duration(-minutes * 60)} before it"


def listing(values: list[Any] | None) -> str:
    return ", ".join(str(value) for value in values or [])


def gpu_name(row: dict[str, Any]) -> str:
    which = f"GPU {row['gpu_index']}" if row.get("gpu_index") is not None else "GPU"
    return f"{row['host']} {which}" + (f" ({row['gpu_uuid']})" if row.get("gpu_uuid") else "")


def pod_name(row: dict[str, Any]) -> str:
    return f"{row['namespace']}/{row['pod']}" if row.get("namespace") else str(row["pod"])
