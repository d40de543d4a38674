"""Postmortem and weekly-review notebooks: executed with papermill, converted to HTML with nbconvert.

The notebooks live in the repository's ``notebooks/`` folder, committed without outputs;
each has a cell tagged ``parameters`` (``store`` and ``incident_id`` / ``week``) that papermill
overrides. They run in the ``python3`` kernel, which ipykernel's kernel spec starts with the
interpreter running this code (its ``python`` argv is replaced by ``sys.executable``), so the
notebook sees the same ``rca`` as the caller.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rca.errors import InputError, ReportError
from rca.redact import Redaction
from rca.report._window import resolve_window
from rca.store import Store, open_store

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
POSTMORTEM = "postmortem.ipynb"
WEEKLY_REVIEW = "weekly_review.ipynb"
KERNEL = "python3"
CELL_TIMEOUT_S = 600
# nbconvert's lab page loads require.js, MathJax and Mermaid from a CDN; the notebooks need none of them.
_OFFLINE_TEMPLATE = "rca_offline.html.j2"
_OFFLINE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


@dataclass(frozen=True)
class NotebookRun:
    """The executed notebook, and its HTML conversion when one was asked for."""

    notebook: Path
    html: Path | None


def run_postmortem(store: Store | str | os.PathLike[str], incident_id: str, out: str | os.PathLike[str] | None = None, *,
                   html: bool = False, kernel_name: str = KERNEL, redact: Redaction | None = None) -> NotebookRun:
    """Run ``notebooks/postmortem.ipynb`` for one incident; ``out`` defaults to ``postmortem-<incident_id>.ipynb``.

    With ``redact`` the notebook reads every table masked (see :mod:`rca.redact`) and its
    outputs are masked once more, for a notebook meant to be shared.
    """
    opened = store if isinstance(store, Store) else open_store(store)
    if opened.incidents().filter(pl.col("incident_id") == incident_id).is_empty():
        raise InputError(f"no incident {incident_id!r} in {opened.path}; 'rca incidents' lists them")
    target = _notebook_path(out, f"postmortem-{incident_id}.ipynb")
    _run(POSTMORTEM, target, {"store": _address(opened), "incident_id": incident_id}, kernel_name, redact)
    return NotebookRun(target, notebook_html(target) if html else None)


def _notebook_path(out: str | os.PathLike[str] | None, name: str) -> Path:
    """``out`` when it names a notebook; ``name`` inside it when it is a folder (one that exists, or a name without a
    suffix, as the digest's ``--out`` is); ``name`` here when there is no ``out``."""
    if out is None:
        return Path(name)
    path = Path(out)
    return path / name if path.is_dir() or not path.suffix else path


def _address(store: Store) -> str:
    """The store as the notebook's kernel, in its own working folder, finds it: an absolute path, or the URL."""
    return str(store.path.resolve()) if isinstance(store.path, Path) else store.path


def run_weekly_review(store: Store | str | os.PathLike[str], week: str | None = None, out: str | os.PathLike[str] | None = None, *,
                      html: bool = False, kernel_name: str = KERNEL, redact: Redaction | None = None) -> NotebookRun:
    """Run ``notebooks/weekly_review.ipynb`` for ``week`` (default: the last 7 days of data); ``redact`` as for :func:`run_postmortem`."""
    opened = store if isinstance(store, Store) else open_store(store)
    window = resolve_window(opened, week=week)
    target = _notebook_path(out, f"weekly-review-{window.label}.ipynb")
    _run(WEEKLY_REVIEW, target, {"store": _address(opened), "week": week}, kernel_name, redact)
    return NotebookRun(target, notebook_html(target) if html else None)


def _run(name: str, target: Path, parameters: dict[str, Any], kernel_name: str, redact: Redaction | None) -> None:
    if redact is None:
        execute(name, target, parameters, kernel_name=kernel_name)
        return
    try:
        execute(name, target, {**parameters, "redact_rules": redact.as_parameters()}, kernel_name=kernel_name)
    finally:
        if target.exists():  # a failed run keeps its partial notebook: that copy is masked too
            mask_outputs(target, redact)


def mask_outputs(notebook: str | os.PathLike[str], redact: Redaction) -> None:
    """Mask the text of every output of an executed notebook in place (streams, text results, errors).

    Images cannot be masked after the fact; the notebooks draw them from the masked tables.
    """
    import nbformat

    path = Path(notebook)
    document = nbformat.read(path, as_version=4)
    slots: list[tuple[Any, Any]] = []  # (container, key) of every text to mask
    for cell in document.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                slots.append((output, "text"))
            elif output.output_type == "error":
                slots.append((output, "evalue"))
                slots.extend((output.traceback, index) for index in range(len(output.traceback)))
            else:
                slots.extend((output.data, mime) for mime, value in output.get("data", {}).items() if isinstance(value, str) and _is_text(mime))
    masked = redact.texts([container[key] for container, key in slots])
    for (container, key), text in zip(slots, masked, strict=True):
        container[key] = text
    nbformat.write(document, path)


def _is_text(mime: str) -> bool:
    return mime.startswith("text/") or mime == "image/svg+xml"


def execute(name: str, out: Path, parameters: dict[str, Any], *, kernel_name: str = KERNEL) -> Path:
    """Execute the notebook ``name`` from :data:`NOTEBOOKS` with ``parameters`` into ``out``.

    Raises :class:`ReportError` when the notebook is missing or a cell fails; the output
    notebook is still written then, up to and including the failing cell.
    """
    import papermill

    source = NOTEBOOKS / name
    if not source.exists():
        raise ReportError(f"{source} is missing: the report notebooks ship with the rca source tree (notebooks/)")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(str(source), str(out), parameters=parameters, kernel_name=kernel_name, language="python",
                                   progress_bar=False, log_output=False, execution_timeout=CELL_TIMEOUT_S)
    except papermill.PapermillExecutionError as err:
        raise ReportError(f"{name} failed in cell {err.exec_count}: {err.ename}: {err.evalue} (see {out})") from None
    return out


def notebook_html(notebook: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Convert an executed notebook to HTML next to it (or at ``out``): figures embedded, no scripts fetched from a CDN."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    source = Path(notebook)
    target = Path(out) if out is not None else source.with_suffix(".html")
    exporter = HTMLExporter(embed_images=True, extra_loaders=[DictLoader({_OFFLINE_TEMPLATE: _OFFLINE})], template_file=_OFFLINE_TEMPLATE)
    body, _ = exporter.from_filename(str(source))
    target.write_text(body, encoding="utf-8")
    return target
