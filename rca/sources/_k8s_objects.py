"""Kubernetes object documents: ``kubectl get events|pods -o json`` and ``-o yaml``; container runtimes' inspect documents.

A document is decoded whole (one ``json`` / ``yaml`` call per document); each item of a
List becomes one record whose lines are located from the decoder's offsets, so the
accounting still covers every input line. Events give one row each; a Pod gives a row for
an eviction and one per OOM-killed container state (the first row of an item carries its
lines, the others ``n_lines=0``); a workload that failed as a whole (a Job's, or a training job's, condition Failed
"True", also in a pasted ``status:``) gives an error row; any other object gives one ``log`` row.

What a node's runtime says of one container is a document too: ``crictl inspect`` (its
``status``: ``CONTAINER_EXITED``, ``exitCode``, ``reason: OOMKilled``, ``finishedAt``, the pod in
its ``io.kubernetes.*`` labels) and ``docker inspect`` / ``podman inspect`` (a list of containers,
each with its ``State``: ``OOMKilled``, ``ExitCode``, ``FinishedAt``). A container the kernel
killed for memory is ``container_oomkilled``; one killed by a SIGKILL otherwise (exit 137) is
``process_killed``; any other a ``log`` row with its state.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
import textwrap
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from typing import Any

import polars as pl
import yaml

from rca import timeutil
from rca.sources._base import ParseContext, Parsed, attrs_json
from rca.sources._kube import (
    EVICTION_MESSAGE,
    admission_devices,
    devices_lost,
    devices_lost_message,
    event_kind,
    eviction_fields,
    insufficient_resource,
    insufficient_resources,
    oom_victim,
    raised_severity,
    scheduling_counts,
    storage_attrs,
)

_YAML_START = re.compile(r"^(?:-? ?apiVersion: \S|kind: (?:List|Pod|PodList|Event|EventList)\s*$|items:\s*$)")
JSON_MARKERS = ('"apiVersion"', '"kind"', '"involvedObject"', '"containerStatuses"', '"OOMKilled":', '"state": "CONTAINER_')
_ZERO_TIME = "0001-01-01T00:00:00Z"  # Go's zero time: Docker's FinishedAt of a container still running

_ROW_SCHEMA = {
    "line": pl.Int64,
    "n_lines": pl.Int32,
    "format": pl.String,
    "object": pl.String,
    "kind": pl.String,
    "reason": pl.String,
    "message": pl.String,
    "type": pl.String,
    "when": pl.String,
    "name": pl.String,
    "pod": pl.String,
    "namespace": pl.String,
    "pod_uid": pl.String,
    "node_object": pl.String,
    "host": pl.String,
    "container": pl.String,
    "container_id": pl.String,
    "exit_code": pl.Int64,
    "count": pl.Int64,
    "started": pl.String,
    "state_field": pl.String,
    "component": pl.String,
    "severity": pl.String,
    "resource": pl.String,
    "capacity": pl.Int64,
    "allocatable": pl.Int64,
}

_SEVERITY_BY_TYPE = {"Normal": "info", "Warning": "warning"}


def looks_like_document(head: Sequence[str]) -> bool:
    """Whether the head opens a Kubernetes JSON or YAML document."""
    if not head:
        return False
    json_marker = any(marker in line for line in head for marker in JSON_MARKERS)
    return opens_document(head[0], json_marker=json_marker, yaml_kind=any(re.match(r"^\s*-? ?kind: ", line) for line in head))


def opens_document(first: str, *, json_marker: bool, yaml_kind: bool) -> bool:
    """Whether a head whose first line is ``first`` opens a JSON document (a line of it names a Kubernetes key,
    ``json_marker``) or a YAML one (a line of it is a ``kind:``, ``yaml_kind``)."""
    if first.lstrip().startswith(("{", "[")):
        return json_marker
    return bool(_YAML_START.match(first)) and yaml_kind


def parse_documents(lines: pl.DataFrame, ctx: ParseContext) -> Parsed | None:
    """Rows of the documents in ``lines``; None when the lines are not clean documents."""
    head = lines["text"].head(60).to_list()
    if not looks_like_document(head):
        return None
    texts = lines["text"].to_list()
    spans = _json_items(texts) if head[0].lstrip().startswith(("{", "[")) else _yaml_items(texts)
    if spans is None:
        return None
    line_numbers = lines["line"].to_list()
    rows: list[dict[str, Any]] = []
    covered = 0
    for item, first, last, fmt in spans:
        item_rows = _rows_for(item, fmt) or [_other_row(item, fmt)]
        for i, row in enumerate(item_rows):
            row.update(line=line_numbers[first], n_lines=last - first + 1 if i == 0 else 0)
        covered += last - first + 1
        rows.extend(item_rows)
    skipped = {"document envelope": lines.height - covered} if lines.height > covered else {}
    return Parsed(events=_events(pl.DataFrame(rows, schema=_ROW_SCHEMA), ctx), skipped=skipped)


# A pasted piece of a pod's status (`-o yaml | grep -A8 lastState`, a JSON excerpt), its elided lines ("...")
# dropped: the container state keys that open it, and a terminated state inside.
STATUS_FRAGMENT_KEY = r'^\s*"?(?:status|containerStatuses|initContainerStatuses|lastState|state)"?:\s*\{?\s*$'
STATUS_FRAGMENT_TERMINATED = r'^\s*"?terminated"?:\s*\{?\s*$'
# Or the pod-level fields of an evicted pod's status (`-o yaml | grep -A8 message`): its reason, and its phase.
STATUS_FRAGMENT_EVICTED = r'^\s*"?reason"?:\s*"?Evicted"?,?\s*$'
STATUS_FRAGMENT_PHASE = r'^\s*"?phase"?:\s*"?[A-Z][a-z]+"?,?\s*$'
# Or those of a pod the kubelet rejected at admission (phase Failed, reason UnexpectedAdmissionError, OutOfnvidia.com/gpu, …).
STATUS_FRAGMENT_FAILED = r'^\s*"?phase"?:\s*"?Failed"?,?\s*$'
STATUS_FRAGMENT_REASON = r'^\s*"?reason"?:\s*"?[A-Z][0-9A-Za-z./_-]*"?,?\s*$'
# Or a workload's status with a condition of type Failed (a Job's `-o yaml | grep -A10 status`): what failed it, its reason.
STATUS_FRAGMENT_FAILED_CONDITION = r'^\s*-?\s*"?type"?:\s*"?Failed"?,?\s*$'
# Or a node's status (`get node -o yaml | grep -A20 status`, `-o json | jq .status`): its capacity and allocatable.
STATUS_FRAGMENT_CAPACITY = r'^\s*"?capacity"?:\s*\{?\s*$'
STATUS_FRAGMENT_ALLOCATABLE = r'^\s*"?allocatable"?:\s*\{?\s*$'
# Or one container state's own fields (`yq '.status.containerStatuses[0].lastState.terminated'`, `jq` of the same): no
# key above them, but an exit code, a reason and a time of the state's, every line one of those fields.
STATE_FIELDS_EXIT_CODE = r'^\s*"?exitCode"?:\s*-?[0-9]+,?\s*$'
STATE_FIELDS_TIME = r'^\s*"?(?:finishedAt|startedAt)"?:\s*["\']?[0-9]{4}-[0-9]{2}-[0-9]{2}T'
STATE_FIELDS_LINE = r'^\s*(?:"?(?:terminated|containerID|exitCode|finishedAt|message|reason|signal|startedAt)"?:|[{}],?\s*$)'
_ELISION = r"^\s*(?:\.\.\.|…)\s*$"
_STATE_KEYS = ("state", "lastState")


def parse_status_fragment(lines: pl.DataFrame, ctx: ParseContext) -> Parsed | None:
    """Rows of a pasted piece of a pod status (YAML, or JSON members without their braces); None when
    the text does not decode as one. Its rows are those of a pod holding that status, all on its
    first line (a fragment keeps no offsets worth mapping back)."""
    texts = lines["text"]
    kept = texts.filter(~texts.str.contains(_ELISION))
    failed = kept.str.contains(STATUS_FRAGMENT_REASON).any() and (
        kept.str.contains(STATUS_FRAGMENT_FAILED).any() or kept.str.contains(STATUS_FRAGMENT_FAILED_CONDITION).any()
    )
    node = kept.str.contains(STATUS_FRAGMENT_CAPACITY).any() and kept.str.contains(STATUS_FRAGMENT_ALLOCATABLE).any()
    state = kept.str.contains(STATE_FIELDS_EXIT_CODE).any()
    if not (kept.str.contains(STATUS_FRAGMENT_TERMINATED).any() or kept.str.contains(STATUS_FRAGMENT_EVICTED).any() or failed or node or state):
        return None
    text = "\n".join(kept.to_list())
    value = _json_fragment(text) if text.lstrip().startswith('"') else _yaml_fragment(text)
    if node and isinstance(value, dict):
        return _node_fragment(value if "status" in value else {"status": value}, lines, ctx)
    pod = _status_as_pod(value)
    workload = _failed_workload_row(value if isinstance(value, dict) and "status" in value else {"status": value}, "workload_fragment")
    if pod is None and workload is None:
        return None
    rows = [workload] if pod is None else _pod_rows(pod, "pod_fragment", every_termination=True) or [_other_row(pod, "pod_fragment")]
    for i, row in enumerate(rows):
        row.update(line=lines["line"][0], n_lines=lines.height if i == 0 else 0)
    return Parsed(events=_events(pl.DataFrame(rows, schema=_ROW_SCHEMA), ctx))


def may_hold_fragment(text: pl.Expr) -> pl.Expr:
    """Whether lines (an aggregate of their ``text``) may hold a pasted status or runtime state: what
    :func:`parse_status_fragment` and :func:`parse_runtime_state_fragment` look for before they decode the text (no
    elided line matches any of it). Lines without it are neither."""

    def found(pattern: str) -> pl.Expr:
        return text.str.contains(pattern).any()

    status = found(STATUS_FRAGMENT_TERMINATED) | found(STATUS_FRAGMENT_EVICTED) | found(STATE_FIELDS_EXIT_CODE)
    failed = found(STATUS_FRAGMENT_REASON) & (found(STATUS_FRAGMENT_FAILED) | found(STATUS_FRAGMENT_FAILED_CONDITION))
    node = found(STATUS_FRAGMENT_CAPACITY) & found(STATUS_FRAGMENT_ALLOCATABLE)
    runtime = found(RUNTIME_STATE_KEY) & found(RUNTIME_EXIT_CODE)
    return status | failed | node | runtime


def _node_fragment(value: dict[str, Any], lines: pl.DataFrame, ctx: ParseContext) -> Parsed | None:
    """Rows of a pasted node status, all on its first line as a pod fragment's are; None when it is no node's."""
    if not _node_status(value):
        return None
    rows = _node_rows(value, "node_fragment") or [{**_other_row(value, "node_fragment"), "object": "Node", "message": "Node status"}]
    for i, row in enumerate(rows):
        row.update(line=lines["line"][0], n_lines=lines.height if i == 0 else 0)
    return Parsed(events=_events(pl.DataFrame(rows, schema=_ROW_SCHEMA), ctx))


# A pasted ``"State": {…}`` of ``docker inspect`` / ``podman inspect`` (the rest of the document cut).
RUNTIME_STATE_KEY = r'^\s*"State":\s*\{\s*$'
RUNTIME_EXIT_CODE = r'^\s*"ExitCode":\s*-?[0-9]+,?\s*$'


def parse_runtime_state_fragment(lines: pl.DataFrame, ctx: ParseContext) -> Parsed | None:
    """The row of a pasted container ``State`` of a runtime's inspect; None when the text is not one."""
    texts = lines["text"]
    if not (texts.str.contains(RUNTIME_STATE_KEY).any() and texts.str.contains(RUNTIME_EXIT_CODE).any()):
        return None
    value = _json_fragment("\n".join(texts.to_list()))
    if not _runtime_state(value):
        return None
    row = {**_container_row(value, "container_fragment"), "line": lines["line"][0], "n_lines": lines.height}
    return Parsed(events=_events(pl.DataFrame([row], schema=_ROW_SCHEMA), ctx))


def _json_fragment(text: str) -> Any:
    try:
        return json.loads("{" + text.strip().rstrip(",") + "}")
    except (json.JSONDecodeError, RecursionError):
        return None


def _yaml_fragment(text: str) -> Any:
    try:
        loader = _NoAliasLoader(textwrap.dedent(text))
    except yaml.YAMLError:
        return None
    try:
        return loader.get_single_data()
    except (yaml.YAMLError, RecursionError):
        return None
    finally:
        loader.dispose()


def _status_as_pod(value: Any) -> dict[str, Any] | None:
    """The fragment as the pod it came from: a status (its container statuses, or an evicted pod's own fields),
    its container statuses, or one container's states."""
    if not isinstance(value, dict):
        return None
    status = value.get("status") if isinstance(value.get("status"), dict) else value
    if any(key in status for key in _STATE_KEYS):
        status = {"containerStatuses": [status]}
    elif _bare_terminated(status):
        # A container state with neither its container nor which of its states it was: the state stands for the container.
        status = {"containerStatuses": [{"terminated": _get(status, "terminated") or status}]}
    for key in ("initContainerStatuses", "containerStatuses"):
        # An elision can leave a single container's fields without their list item.
        if isinstance(status.get(key), dict):
            status = {**status, key: [status[key]]}
    has_containers = any(isinstance(status.get(key), list) for key in ("initContainerStatuses", "containerStatuses"))
    if not has_containers and status.get("reason") != "Evicted" and not _rejected(status):
        return None
    return {"status": status}


def _bare_terminated(value: dict[str, Any]) -> bool:
    """Whether a fragment is a terminated container state's fields alone, or under their ``terminated`` key only."""
    fields = _get(value, "terminated") if set(value) == {"terminated"} else value
    return "exitCode" in fields and any(key in fields for key in ("reason", "finishedAt", "startedAt"))


def _rejected(status: dict[str, Any]) -> bool:
    """Whether a pod status is that of a pod that failed as a whole for a reason other than an eviction: the kubelet's
    admission refused it (UnexpectedAdmissionError, OutOfnvidia.com/gpu, …) or its node went away."""
    return status.get("phase") == "Failed" and isinstance(status.get("reason"), str) and status.get("reason") != "Evicted"


def _json_items(texts: list[str]) -> list[tuple[Any, int, int, str]] | None:
    """(item, first row, last row, format) for each item of each JSON value in the text."""
    text = "\n".join(texts)
    starts = (pl.Series(texts, dtype=pl.String).str.len_chars().cast(pl.Int64) + 1).cum_sum().shift(1, fill_value=0).to_list()

    def row_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    decoder = json.JSONDecoder()
    spans: list[tuple[Any, int, int, str]] = []
    pos = _skip_space(text, 0)
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            return None
        for item, item_start, item_end in _json_list_items(decoder, text, value, pos, end):
            watched = _watched(item)
            spans.append((watched, row_of(item_start), row_of(item_end - 1), _format(watched, "json")))
        pos = _skip_space(text, end)
    return spans


def _json_list_items(decoder: json.JSONDecoder, text: str, value: Any, start: int, end: int) -> Iterator[tuple[Any, int, int]]:
    items = value.get("items") if isinstance(value, dict) else value if isinstance(value, list) else None
    if not isinstance(items, list) or not items:
        yield value, start, end
        return
    opening = text.find("[", start) if isinstance(value, list) else _items_array(text, start, end)
    offsets = _array_offsets(decoder, text, opening) if opening >= 0 else []
    if len(offsets) != len(items):
        yield value, start, end
        return
    yield from ((item, s, e) for item, (s, e) in zip(items, offsets, strict=True))


def _items_array(text: str, start: int, end: int) -> int:
    found = re.compile(r'"items"\s*:\s*\[').search(text, start, end)
    return found.end() - 1 if found else -1


def _array_offsets(decoder: json.JSONDecoder, text: str, opening: int) -> list[tuple[int, int]]:
    offsets = []
    pos = _skip_space(text, opening + 1)
    while pos < len(text) and text[pos] != "]":
        try:
            _, end = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            return []
        offsets.append((pos, end))
        pos = _skip_space(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_space(text, pos + 1)
    return offsets


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


class _NoAliasLoader(yaml.SafeLoader):
    """A SafeLoader that refuses aliases: kubectl never writes them, and a few lines of nested
    aliases (a "billion laughs" document) expand to billions of nodes once an object is walked."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases are not allowed in a Kubernetes object", self.peek_event().start_mark)
        return super().compose_node(parent, index)


def _yaml_items(texts: list[str]) -> list[tuple[Any, int, int, str]] | None:
    """(item, first row, last row, format) for each item of each YAML document."""
    separators = pl.Series(texts, dtype=pl.String).str.contains(r"^---\s*$").arg_true().to_list()
    bounds = [-1, *separators, len(texts)]
    spans: list[tuple[Any, int, int, str]] = []
    for before, after in itertools.pairwise(bounds):
        first, last = before + 1, after - 1
        if first > last:
            continue
        try:
            # The reader rejects control characters as it is built, before any parsing.
            loader = _NoAliasLoader("\n".join(texts[first : last + 1]))
        except yaml.YAMLError:
            return None
        try:
            value = loader.get_single_data()
        except (yaml.YAMLError, RecursionError):
            return None
        finally:
            loader.dispose()
        spans.extend(_yaml_list_items(value, texts, first, last))
    return spans


def _yaml_list_items(value: Any, texts: list[str], first: int, last: int) -> list[tuple[Any, int, int, str]]:
    items = value.get("items") if isinstance(value, dict) else value
    if not isinstance(items, list) or not items:
        return [(value, first, last, _format(value, "yaml"))]
    if isinstance(value, dict):
        rows = pl.Series(texts[first : last + 1], dtype=pl.String)
        items_at = rows.str.contains(r"^\s*items:\s*$").arg_true()
        if items_at.len() == 0:
            return [(value, first, last, _format(value, "yaml"))]
        items_row = first + items_at[0]
        indent = len(texts[items_row]) - len(texts[items_row].lstrip(" "))
    else:
        # A bare sequence: the items of `-o yaml` pasted without their List, dashes at the left edge.
        items_row, indent = first - 1, 0
    block = pl.Series(texts[items_row + 1 : last + 1], dtype=pl.String)
    stripped = block.str.strip_chars_start(" ")
    indents = block.str.len_chars() - stripped.str.len_chars()
    dash = stripped.str.starts_with("- ")
    outside = ((indents <= indent) & ~dash).arg_true()
    end = items_row + 1 + (outside[0] if outside.len() else block.len())
    item_rows = [items_row + 1 + k for k in (dash & (indents == indent)).arg_true().to_list() if items_row + 1 + k < end]
    if len(item_rows) != len(items):
        return [(value, first, last, _format(value, "yaml"))]
    ends = [*item_rows[1:], end]
    return [(item, s, e - 1, _format(item, "yaml")) for item, s, e in zip(items, item_rows, ends, strict=True)]


_WATCH_TYPES = {"ADDED", "MODIFIED", "DELETED"}


def _watched(item: Any) -> Any:
    """The object a watch stream wraps: ``kubectl get --watch --output-watch-events`` prints
    ``{"type": "ADDED", "object": {…}}``, eventrouter ``{"verb": "ADDED", "event": {…}}``."""
    if not isinstance(item, dict):
        return item
    if item.get("type") in _WATCH_TYPES and isinstance(item.get("object"), dict):
        return item["object"]
    if "verb" in item and isinstance(item.get("event"), dict):
        return item["event"]
    return item


def _format(item: Any, syntax: str) -> str:
    kind = item.get("kind") if isinstance(item, dict) else None
    if kind == "Event" or (isinstance(item, dict) and ("involvedObject" in item or "regarding" in item)):
        return f"event_{syntax}"
    if _runtime_state(item):
        return f"container_{syntax}"
    return (
        f"pod_{syntax}" if kind == "Pod" or (isinstance(item, dict) and "containerStatuses" in _get(item, "status")) else f"object_{syntax}"
    )


def _rows_for(item: Any, fmt: str) -> list[dict[str, Any]]:
    if fmt.startswith("event_"):
        return [_event_row(item, fmt)]
    if fmt.startswith("container_"):
        return [_container_row(item, fmt)]
    if fmt.startswith("pod_"):
        return _pod_rows(item, fmt)
    if _node_status(item):
        return _node_rows(item, fmt)
    workload = _failed_workload_row(item, fmt)
    return [workload] if workload else []


def _node_status(item: Any) -> bool:
    """Whether an item is a Node (``kubectl get node -o yaml|json``, an item of ``get nodes``), or a pasted status of
    one (``status:`` with its ``capacity`` and ``allocatable``)."""
    status = _get(item, "status")
    if isinstance(item, dict) and item.get("kind") == "Node":
        return True
    return bool(_get(status, "capacity")) and bool(_get(status, "allocatable"))


def _node_rows(item: Any, fmt: str) -> list[dict[str, Any]]:
    """A warning row per resource of a node that lost devices (:func:`~rca.sources._kube.devices_lost`, the rule
    ``describe node``'s blocks are read with): its status counts fewer allocatable than its capacity, or no GPU. The
    node is its name, or in a pasted status its Hostname address."""
    status = _get(item, "status")
    capacity, allocatable = _get(status, "capacity"), _get(status, "allocatable")
    counts = [(str(name), _int(capacity.get(name)), _int(allocatable.get(name))) for name in dict.fromkeys([*capacity, *allocatable])]
    frame = pl.DataFrame(counts, schema={"resource": pl.String, "capacity": pl.Int64, "allocatable": pl.Int64}, orient="row")
    resource, cap, alloc = pl.col("resource"), pl.col("capacity"), pl.col("allocatable")
    lost = frame.filter(devices_lost(resource, cap, alloc)).with_columns(message=devices_lost_message(resource, cap, alloc))
    addresses = status.get("addresses") if isinstance(status.get("addresses"), list) else []
    hostname = next((a.get("address") for a in addresses if isinstance(a, dict) and a.get("type") == "Hostname"), None)
    node = _text(_get(item, "metadata").get("name")) or _text(hostname)
    base = {"format": fmt, "object": "Node", "kind": "log", "severity": "warning", "name": node, "node_object": node}
    return [{**base, **row} for row in lost.to_dicts()]


def _failed_workload_row(item: Any, fmt: str) -> dict[str, Any] | None:
    """The row of a workload that failed as a whole, else None: a Job (BackoffLimitExceeded, DeadlineExceeded,
    PodFailurePolicy, …) and the batch CRDs built like it (Kubeflow's training jobs, JobSet) say so with a condition
    of type Failed and status "True", its reason and message what failed it (1.31+ writes a FailureTarget first)."""
    conditions = _get(item, "status").get("conditions")
    listed = conditions if isinstance(conditions, list) else []
    failed = next((c for c in listed if isinstance(c, dict) and c.get("type") == "Failed" and str(c.get("status")) == "True"), None)
    if failed is None:
        return None
    metadata = _get(item, "metadata")
    return {
        "format": fmt,
        "object": _text(item.get("kind")),
        "kind": "log",
        "severity": "error",
        "reason": _text(failed.get("reason")),
        "message": _text(failed.get("message")),
        "when": _text(failed.get("lastTransitionTime") or failed.get("lastProbeTime")),
        "started": _text(_get(item, "status").get("startTime")),
        "name": _text(metadata.get("name")),
        "namespace": _text(metadata.get("namespace")),
    }


def _event_row(event: dict[str, Any], fmt: str) -> dict[str, Any]:
    """A core/v1 Event's row, or an events.k8s.io/v1 one's: that API names the object ``regarding``, its text
    ``note``, and keeps the core fields as ``deprecatedCount`` / ``deprecatedLastTimestamp`` / ``deprecatedSource``."""
    involved = _get(event, "involvedObject") or _get(event, "regarding")
    source = _get(event, "source") or _get(event, "deprecatedSource")
    series = _get(event, "series")
    metadata = _get(event, "metadata")
    object_kind = _text(involved.get("kind"))
    return {
        "format": fmt,
        "object": "Event",
        "kind": None,
        "reason": _text(event.get("reason")),
        "message": _text(event.get("message") or event.get("note")),
        "type": _text(event.get("type")),
        "when": _text(
            event.get("lastTimestamp")
            or event.get("deprecatedLastTimestamp")
            or series.get("lastObservedTime")
            or event.get("eventTime")
            or event.get("firstTimestamp")
            or event.get("deprecatedFirstTimestamp")
            or metadata.get("creationTimestamp")
        ),
        "pod": _text(involved.get("name")) if object_kind == "Pod" else None,
        "namespace": _text(involved.get("namespace") or metadata.get("namespace")),
        "pod_uid": _text(involved.get("uid")) if object_kind == "Pod" else None,
        "node_object": _text(involved.get("name")) if object_kind == "Node" else None,
        "host": _text(source.get("host") or event.get("reportingInstance")),
        "container": _first_match(r"containers\{([^}]+)\}", _text(involved.get("fieldPath"))),
        "count": _int(event.get("count") or series.get("count") or event.get("deprecatedCount")),
        "component": _text(source.get("component") or event.get("reportingComponent") or event.get("reportingController")),
    }


def _pod_rows(pod: dict[str, Any], fmt: str, *, every_termination: bool = False) -> list[dict[str, Any]]:
    """Rows of a Pod: its eviction, its OOM-killed container states (every terminated state with
    ``every_termination``, the others as ``log`` rows: a fragment holds nothing else to show)."""
    metadata, spec, status = _get(pod, "metadata"), _get(pod, "spec"), _get(pod, "status")
    base = {
        "format": fmt,
        "object": "Pod",
        "pod": _text(metadata.get("name")),
        "namespace": _text(metadata.get("namespace")),
        "pod_uid": _text(metadata.get("uid")),
        "host": _text(spec.get("nodeName")),
    }
    rows = []
    message = _text(status.get("message")) or ""
    if status.get("reason") == "Evicted" or EVICTION_MESSAGE in message:
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        # When the kubelet evicted the pod: its DisruptionTarget condition's transition (1.26+ adds it as it evicts);
        # before that, its Ready condition's turn to False, which the kubelet writes as it kills the pod's containers.
        disruption = next((c for c in conditions if c.get("type") == "DisruptionTarget"), {})
        unready = next((c for c in conditions if c.get("type") == "Ready" and str(c.get("status")) == "False"), {})
        rows.append(
            {
                **base,
                "kind": "eviction",
                # An evicted pod (phase Failed) is over, as describe pod's Status and a pods row's Evicted say (errors);
                # an eviction still under way is the warning its event is.
                "severity": "error" if status.get("phase") == "Failed" else "warning",
                "reason": _text(status.get("reason")),
                "message": message or None,
                "when": _text(disruption.get("lastTransitionTime") or unready.get("lastTransitionTime")),
                "started": _text(status.get("startTime")),
            }
        )
    elif _rejected(status):
        # The pod never ran or will not again: an error, whatever its containers show.
        rows.append(
            {
                **base,
                "kind": "log",
                "severity": "error",
                "reason": _text(status.get("reason")),
                "message": message or None,
                "started": _text(status.get("startTime")),
            }
        )
    for container in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        if not isinstance(container, dict):
            continue
        # A bare state (:func:`_status_as_pod`) is the container's with no field to name (None).
        for field in ("state", "lastState", None):
            terminated = _get(container if field is None else _get(container, field), "terminated")
            oom = terminated.get("reason") == "OOMKilled"
            if not terminated or not (oom or every_termination):
                continue
            name = " ".join(str(part) for part in ("container", container.get("name"), field) if part)
            rows.append(
                {
                    **base,
                    "kind": "container_oomkilled" if oom else "log",
                    # A container the kernel killed for memory is an error, in every source.
                    "severity": "error" if oom else None,
                    "reason": _text(terminated.get("reason")),
                    "message": _text(terminated.get("message"))
                    or f"{name} terminated: {terminated.get('reason')}, exit code {terminated.get('exitCode')}",
                    "when": _text(terminated.get("finishedAt") or terminated.get("startedAt")),
                    "started": _text(terminated.get("startedAt")),
                    "container": _text(container.get("name")),
                    "container_id": _first_match(  # the runtime's scheme cut: docker://, containerd://, cri-o:// (a hyphen)
                        r"^(?:[a-z-]+://)?(.+)$", _text(terminated.get("containerID") or container.get("containerID"))
                    ),
                    "exit_code": _int(terminated.get("exitCode")),
                    "state_field": field,
                }
            )
    return rows


def _runtime_state(item: Any) -> dict[str, Any]:
    """A runtime inspect document's container state (crictl's ``status``, Docker's and Podman's ``State``), else {}."""
    crictl = _get(item, "status")
    if str(crictl.get("state", "")).startswith("CONTAINER_"):
        return crictl
    docker = _get(item, "State")
    return docker if "OOMKilled" in docker or "ExitCode" in docker else {}


def _container_row(item: dict[str, Any], fmt: str) -> dict[str, Any]:
    """The row of one container a runtime inspected: its end, what ended it, and the pod its labels name."""
    state = _runtime_state(item)
    crictl = "exitCode" in state or "state" in state
    labels = _get(state, "labels") if crictl else _get(_get(item, "Config"), "Labels")
    code = _int(state.get("exitCode") if crictl else state.get("ExitCode"))
    reason = _text(state.get("reason")) if crictl else ("OOMKilled" if state.get("OOMKilled") is True else _text(state.get("Error")) or None)
    finished = _text(state.get("finishedAt") if crictl else state.get("FinishedAt"))
    name = _text(labels.get("io.kubernetes.container.name")) or _text(_get(state, "metadata").get("name")) or (_text(item.get("Name")) or "").lstrip("/") or None
    status = _text(state.get("state") if crictl else state.get("Status"))
    oom = reason == "OOMKilled"
    return {
        "format": fmt,
        "object": "Container",
        "kind": "container_oomkilled" if oom else "process_killed" if code == 137 else "log",
        "severity": "error" if oom else None,
        "reason": reason,
        "message": " ".join(part for part in ("container", name, f"{status}:", f"{reason or 'no reason given'},", f"exit code {code}") if part),
        "when": None if finished in (None, "", _ZERO_TIME) else finished,
        "started": _text(state.get("startedAt") if crictl else state.get("StartedAt")),
        "pod": _text(labels.get("io.kubernetes.pod.name")),
        "namespace": _text(labels.get("io.kubernetes.pod.namespace")),
        "pod_uid": _text(labels.get("io.kubernetes.pod.uid")),
        "container": name,
        "container_id": _text(state.get("id") if crictl else item.get("Id")),
        "exit_code": code,
    }


def _other_row(item: Any, fmt: str) -> dict[str, Any]:
    metadata = _get(item, "metadata")
    kind = _text(item.get("kind")) if isinstance(item, dict) else type(item).__name__
    name = "/".join(part for part in (_text(metadata.get("namespace")), _text(metadata.get("name"))) if part)
    phase = _text(_get(item, "status").get("phase"))
    summary = " ".join(part for part in (kind, name, f"phase={phase}" if phase else None) if part)
    return {
        "format": fmt,
        "object": kind,
        "kind": "log",
        "message": summary or json.dumps(item, default=str)[:200],
        "pod": _text(metadata.get("name")) if kind == "Pod" else None,
        "namespace": _text(metadata.get("namespace")),
    }


def _events(rows: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    message = pl.col("message").fill_null("")
    evicted = eviction_fields(message)
    victim = oom_victim(message)
    devices = admission_devices(message)
    is_event = pl.col("object") == "Event"
    kind = pl.when(is_event).then(event_kind(pl.col("reason").fill_null(""), message)).otherwise(pl.col("kind"))
    ts = timeutil.iso_to_utc(pl.col("when"), ctx.tz)
    return (
        rows.with_columns(kind=kind, ts=ts, insufficient=insufficient_resources(message))
        .select(
            "line",
            "n_lines",
            "kind",
            "ts",
            "format",
            "namespace",
            "pod_uid",
            "container_id",
            "exit_code",
            message=pl.coalesce("message", "reason", "object"),
            ts_raw="when",
            ts_quality=pl.when(pl.col("ts").is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("missing")),
            severity=pl.coalesce(
                "severity",
                pl.when(is_event).then(raised_severity(pl.col("reason"), message)),
                pl.col("type").replace_strict(_SEVERITY_BY_TYPE, default=None),
            ),
            host=pl.coalesce("node_object", "host"),
            pod="pod",
            container=pl.coalesce(pl.col("container"), pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("container"))),
            pid=pl.when(pl.col("kind") == "oom_kill").then(victim.struct.field("pid")),
            process=pl.when(pl.col("kind") == "oom_kill").then(victim.struct.field("process")),
            rss_bytes=pl.when(pl.col("kind") == "oom_kill").then(victim.struct.field("rss_bytes")),
            mem_used_bytes=pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("used_bytes")),
            mem_requested_bytes=pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("requested_bytes")),
            attrs=attrs_json(
                {
                    "object": pl.col("object"),
                    "name": pl.col("name"),
                    "reason": pl.col("reason"),
                    "event_type": pl.col("type"),
                    "count": pl.col("count"),
                    "component": pl.col("component"),
                    "started": pl.col("started"),
                    "state_field": pl.col("state_field"),
                    # A FailedScheduling event (or an Unschedulable PodScheduled condition): the resource no node had enough of.
                    "resource": pl.coalesce(
                        pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("resource")),
                        pl.col("resource"),
                        devices.struct.field("resource"),
                        insufficient_resource(pl.col("insufficient")),
                    ),
                    "insufficient_resources": pl.col("insufficient"),
                    **scheduling_counts(message),
                    # A pod the kubelet rejected for want of devices: how many it asked for and how many there were.
                    "devices_requested": devices.struct.field("requested"),
                    "devices_available": devices.struct.field("available"),
                    "threshold_bytes": pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("threshold_bytes")),
                    "available_bytes": pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("available_bytes")),
                    **storage_attrs(evicted, pl.col("kind") == "eviction"),
                    # A node's resource that lost devices: the figures describe node's rows carry too.
                    "capacity": pl.col("capacity"),
                    "allocatable": pl.col("allocatable"),
                    "unavailable": pl.col("capacity") - pl.col("allocatable"),
                }
            ),
        )
        .with_columns(pl.col("exit_code").cast(pl.Int32, strict=False))
    )


def _get(mapping: Any, key: str) -> dict[str, Any]:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def _int(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if -(2**63) <= number < 2**63 else None


def _first_match(pattern: str, text: str | None) -> str | None:
    found = re.search(pattern, text) if text else None
    return found.group(1) if found else None
