"""Views over correlated events: swimlane timelines and exports for other tools.

A timeline frame has one row per event with its aligned time, its lane (the source, and
the host when several are shown), its role in the incident (anchor / evidence / context,
null for an event outside any incident) and its time relative to the reference moment
(the incident's first anchor, or the start of the window asked for).

:func:`swimlanes` draws such a frame for a terminal; :func:`timesketch` shapes it the way
Timesketch imports JSONL / CSV (``message``, ``datetime``, ``timestamp_desc``, then any
attributes).
"""

from __future__ import annotations

from datetime import datetime

import polars as pl
from rich.console import Group
from rich.text import Text

from rca import align
from rca.correlate import prepared
from rca.errors import InputError
from rca.messages import headline
from rca.redact import Redaction, redacted_store
from rca.store import Store

TIMELINE_SCHEMA: dict[str, pl.DataType] = {
    "ts": pl.Datetime("us", "UTC"),
    "rel_s": pl.Float64(),
    "lane": pl.String(),
    "role": pl.String(),
    "host": pl.String(),
    "source": pl.String(),
    "kind": pl.String(),
    "severity": pl.String(),
    "message": pl.String(),
    "file": pl.String(),
    "line": pl.Int64(),
    "event_id": pl.String(),
    "ts_quality": pl.String(),
    "incident_id": pl.String(),
}

_ROLE_RANK = {"anchor": 0, "evidence": 1, "context": 2}
_MARKS = {"anchor": ("▲", "bold red"), "evidence": ("●", "cyan"), "context": ("○", "yellow"), None: ("·", "dim")}
_ROUTINE = ("log", "gpu_sample", "gpu_process")
_LIST_ROWS = 40
_PRECISE_SPAN_S = 10.0  # under this span, relative times keep their fraction of a second (+00:00.250)


def incident_timeline(store: Store, incident_id: str) -> pl.DataFrame:
    """The linked events of one incident, relative to its first anchor."""
    incident = store.incidents().filter(pl.col("incident_id") == incident_id)
    if incident.height == 0:
        raise InputError(f"no incident {incident_id!r} in {store.path}; 'rca incidents' lists them")
    links = store.incident_events().filter(pl.col("incident_id") == incident_id)
    details = store.scan_events().filter(pl.col("event_id").is_in(links["event_id"].implode())).select(
        "event_id", "severity", "message", "file", "line"
    ).collect()
    frame = links.join(details, on="event_id", how="left")
    return _shape(frame, incident["start"][0])


def window_timeline(store: Store, host: str, since: datetime, until: datetime) -> pl.DataFrame:
    """Every event of ``host`` between ``since`` and ``until`` (aligned times), with its incident role if any."""
    scan = store.scan_events().filter(pl.col("host") == host)
    events = prepared(scan).join(scan.select("event_id", "message"), on="event_id").collect()
    aligned = align.align_clocks(events).events.filter(pl.col("ts").is_between(since, until))
    links = store.incident_events().filter(pl.col("host") == host).select("event_id", "incident_id", "role")
    best = links.with_columns(rank=pl.col("role").replace_strict(_ROLE_RANK, return_dtype=pl.Int32)).sort("rank").unique("event_id", keep="first")
    return _shape(aligned.join(best.drop("rank"), on="event_id", how="left"), since)


def export_frame(store: Store, incident_id: str | None = None, *, redact: Redaction | None = None) -> pl.DataFrame:
    """Linked events of every incident (or of one) with their roles and incident facts, by time.

    With ``redact`` (see :mod:`rca.redact`) the text is masked, for an export meant to be shared.
    """
    store = redacted_store(store, redact)
    links = store.incident_events()
    if incident_id is not None:
        links = links.filter(pl.col("incident_id") == incident_id)
    incidents = store.incidents().select("incident_id", "anchor_kind", incident_host="host", incident_start="start")
    details = store.scan_events().filter(pl.col("event_id").is_in(links["event_id"].implode())).select(
        "event_id", "severity", "message", "file", "line", "pid", "pod", "namespace", "container", "gpu_index"
    ).collect()
    return links.join(details, on="event_id", how="left").join(incidents, on="incident_id", how="left").sort("ts", "event_id", nulls_last=True)


def filter_incidents(incidents: pl.DataFrame, *, host: str | None = None, since: datetime | None = None,
                     until: datetime | None = None, kind: str | None = None) -> pl.DataFrame:
    """Incidents involving ``host``, starting in [since, until), anchored on ``kind``; all when not given."""
    keep = pl.lit(True)
    if host is not None:
        keep &= pl.col("hosts").list.contains(host)
    if since is not None:
        keep &= pl.col("start") >= since
    if until is not None:
        keep &= pl.col("start") < until
    if kind is not None:
        keep &= pl.col("anchor_kind") == kind
    return incidents.filter(keep)


def flat_times(frame: pl.DataFrame) -> pl.DataFrame:
    """Datetimes as ISO 8601 text (``...Z``), for CSV readers that do not guess zones."""
    return frame.with_columns(pl.col(pl.Datetime).dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"))


def timesketch(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` in Timesketch's import shape; events without a time are left out (Timesketch needs one)."""
    desc = (
        pl.when(pl.col("ts_quality") == "boot_aligned").then(pl.lit("Kernel time (boot-aligned)"))
        .when(pl.col("ts_quality").is_in(["year_inferred", "year_from_mtime"])).then(pl.lit("Event time (year inferred)"))
        .otherwise(pl.lit("Event time"))
    )
    attributes = [c for c in frame.columns if c not in ("message", "ts")]
    return frame.filter(pl.col("ts").is_not_null()).select(
        pl.col("message").fill_null(""),
        pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%S%.6f+00:00").alias("datetime"),
        pl.col("ts").dt.epoch("us").alias("timestamp"),
        desc.alias("timestamp_desc"),
        *[pl.col(c) for c in attributes],
    )


def _shape(frame: pl.DataFrame, reference: datetime | None) -> pl.DataFrame:
    many_hosts = frame["host"].n_unique() > 1
    lane = pl.format("{} {}", "host", "source") if many_hosts else pl.col("source")
    ref = pl.lit(reference, pl.Datetime("us", "UTC")) if reference is not None else pl.col("ts").min()
    shaped = frame.with_columns(
        lane=lane.fill_null("?"),
        rel_s=(pl.col("ts") - ref).dt.total_microseconds() / 1e6,
        **{c: pl.lit(None, dtype) for c, dtype in TIMELINE_SCHEMA.items() if c not in frame.columns and c not in ("lane", "rel_s")},
    )
    return shaped.select([pl.col(c).cast(dtype) for c, dtype in TIMELINE_SCHEMA.items()]).sort("ts", "event_id", nulls_last=True)


def relative(seconds: float | None, *, precise: bool = False) -> str:
    """``-03:12``, ``+00:05``, ``-1:02:03``; ``?`` for an unknown time; ``precise``: milliseconds too (``+00:00.250``)."""
    if seconds is None:
        return "?"
    sign = "-" if seconds < 0 else "+"
    if precise:
        millis = int(round(abs(seconds) * 1000))
        whole, fraction = divmod(millis, 1000)
    else:
        whole, fraction = int(round(abs(seconds))), None
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{sign}{hours}:{minutes:02d}:{secs:02d}" if hours else f"{sign}{minutes:02d}:{secs:02d}"
    return text if fraction is None else f"{text}.{fraction:03d}"


def duration(seconds: float | None) -> str:
    """A length of time as a reader says it: ``450 ms``, ``9 s``, ``4 min 30 s``, ``2 h 05 min``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = abs(seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min" + (f" {secs:02d} s" if secs else "")
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def swimlanes(frame: pl.DataFrame, *, width: int = 100, title: str = "") -> Group:
    """A terminal swimlane drawing of a timeline frame, ``width`` characters wide: one lane per source, anchors in red."""
    timed = frame.filter(pl.col("rel_s").is_not_null())
    if timed.height == 0:  # the drawing needs times; the list of what was linked does not
        lines = [Text(title, style="bold")] if title else []
        lines.append(Text("no linked event has a time, so there is nothing to draw; the linked events:", style="dim"))
        return Group(*lines, *_key_events(frame, width - 58, precise=False))
    lo, hi = float(timed["rel_s"].min()), float(timed["rel_s"].max())
    precise = hi - lo < _PRECISE_SPAN_S
    span = max(hi - lo, 1e-6)
    lanes = sorted(timed["lane"].unique().to_list())
    label_width = max(len(lane) for lane in lanes) + 1
    total = width
    width = max(total - label_width, 20)
    cells = timed.with_columns(
        col=((pl.col("rel_s") - lo) / span * (width - 1)).round().cast(pl.Int64),
        rank=pl.col("role").replace_strict(_ROLE_RANK, default=3, return_dtype=pl.Int32),
    ).group_by("lane", "col").agg(pl.col("role").sort_by("rank").first())
    lines: list[Text] = [Text(title, style="bold")] if title else []
    lines.append(_axis(lo, hi, width, label_width, precise=precise))
    for lane in lanes:
        row = [(" ", "")] * width
        for col, role in cells.filter(pl.col("lane") == lane).select("col", "role").iter_rows():
            row[col] = _MARKS.get(role, _MARKS[None])
        text = Text(lane.ljust(label_width), style="bold")
        for char, style in row:
            text.append(char, style=style)
        lines.append(text)
    lines.append(Text(f"{'':{label_width}}▲ anchor  ● evidence  ○ context  · other", style="dim"))
    lines.extend(_key_events(frame, total - 58, precise=precise))
    untimed = frame.height - timed.height
    if untimed:
        lines.append(Text(f"{untimed} linked events have no time (kept, not drawn)", style="dim"))
    return Group(*lines)


def _axis(lo: float, hi: float, width: int, label_width: int, *, precise: bool = False) -> Text:
    marks = [" "] * width
    for position in (0, width // 2, width - 1) if hi > lo else (0,):  # one moment: one label
        label = relative(lo + (hi - lo) * position / max(width - 1, 1), precise=precise)
        start = min(max(position - len(label) // 2, 0), width - len(label))
        marks[start : start + len(label)] = list(label)
    return Text(" " * label_width + "".join(marks), style="dim")


def _key_events(frame: pl.DataFrame, width: int, *, precise: bool = False) -> list[Text]:
    """The anchors and the non-routine events as a list under the lanes, each by its :func:`headline`."""
    loud = pl.col("severity").is_in(["warning", "error", "critical"]).fill_null(False)
    key = frame.filter((pl.col("role") == "anchor") | ~pl.col("kind").is_in(_ROUTINE) | loud).with_columns(shown=headline("message"))
    rows: list[Text] = []
    for rel_s, lane, role, kind, shown in key.head(_LIST_ROWS).select("rel_s", "lane", "role", "kind", "shown").iter_rows():
        style = "bold red" if role == "anchor" else ""
        rows.append(Text(f"{relative(rel_s, precise=precise):>10}  {lane:<14} {role or '-':<8} {kind:<20} {shown[: max(width, 20)]}",
                         style=style))
    if key.height > _LIST_ROWS:
        rows.append(Text(f"… {key.height - _LIST_ROWS} more", style="dim"))
    return rows
