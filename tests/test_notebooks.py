"""The postmortem and weekly-review notebooks: committed clean, executed by papermill on a generated store."""

from __future__ import annotations

import html
import re
import shutil
import sys
from pathlib import Path

import nbformat
import polars as pl
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from test_report import ReportStores, build_report_stores

import rca
import rca.explain
from rca.errors import InputError, ReportError
from rca.report import NOTEBOOKS, run_postmortem, run_weekly_review
from rca.report.postmortem import POSTMORTEM, WEEKLY_REVIEW, execute

# Modules the notebooks may import: the public API and the plotting / data stack, nothing private.
ALLOWED_IMPORTS = {"rca", "rca.kb", "rca.schema", "rca.signals", "rca.embed", "rca.explain", "rca.redact", "polars", "numpy", "matplotlib.pyplot", "IPython.display",
                   "sklearn.decomposition", "datetime"}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> ReportStores:
    return build_report_stores(tmp_path_factory)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def _outputs(path: Path) -> tuple[list[dict], dict[str, list[dict]]]:
    """Every output of an executed notebook, and the outputs by cell id."""
    notebook = nbformat.read(path, as_version=4)
    by_cell = {cell.id: cell.get("outputs", []) for cell in notebook.cells if cell.cell_type == "code"}
    return [output for outputs in by_cell.values() for output in outputs], by_cell


def _images(outputs: list[dict]) -> int:
    return sum("image/png" in output.get("data", {}) for output in outputs)


def _text(outputs: list[dict]) -> str:
    return "".join(output.get("text", "") for output in outputs if output.get("output_type") == "stream")


def _assert_clean_run(outputs: list[dict]) -> None:
    errors = [f"{output['ename']}: {output['evalue']}" for output in outputs if output.get("output_type") == "error"]
    warnings = [output["text"] for output in outputs if output.get("name") == "stderr"]
    assert not errors and not warnings, errors + warnings


def _gpu_incident(store: Path) -> str:
    """The incident with the most linked nvidia-smi samples."""
    links = rca.open_store(store).incident_events().filter(pl.col("kind") == "gpu_sample")
    return links.group_by("incident_id").len().sort(["len", "incident_id"], descending=[True, False])["incident_id"][0]


def test_python3_kernel_runs_this_interpreter() -> None:
    spec = KernelSpecManager().get_kernel_spec("python3")
    # jupyter_client starts a spec whose argv[0] is plain "python" with sys.executable.
    assert spec.argv[0] in ("python", "python3", sys.executable)
    assert spec.language == "python"


@pytest.mark.parametrize("name,parameters", [(POSTMORTEM, {"store", "incident_id", "redact_rules"}), (WEEKLY_REVIEW, {"store", "week", "redact_rules"})])
def test_notebooks_are_committed_without_outputs_and_use_the_public_api(name: str, parameters: set[str]) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(notebook)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code_cells)
    tagged = [cell for cell in code_cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert set(re.findall(r"^(\w+) =", tagged[0].source, re.MULTILINE)) == parameters
    source = "\n".join(cell.source for cell in code_cells)
    imported = set(re.findall(r"^\s*(?:from|import) ([\w.]+)", source, re.MULTILINE))
    assert imported <= ALLOWED_IMPORTS, imported - ALLOWED_IMPORTS
    assert "rca.open_store(store)" in source and "read_parquet" not in source and ".parquet" not in source
    assert notebook.metadata.kernelspec.name == "python3"


def test_postmortem_of_a_gpu_incident_draws_the_timeline_and_the_gpu_curves(stores: ReportStores, tmp_path: Path) -> None:
    incident_id = _gpu_incident(stores.clustered)
    result = run_postmortem(stores.clustered, incident_id, tmp_path / "postmortem.ipynb", html=True)
    outputs, by_cell = _outputs(result.notebook)
    _assert_clean_run(outputs)
    assert _images(by_cell["timeline"]) == 1 and _images(by_cell["gpu"]) == 1 and _images(outputs) == 2
    assert f"incident {incident_id}" in _text(by_cell["setup"])
    assert any("text/html" in output.get("data", {}) for output in by_cell["evidence"])
    _assert_readable_summary_and_evidence(stores.clustered, incident_id, by_cell)
    kb_id = rca.open_store(stores.clustered).incidents().filter(pl.col("incident_id") == incident_id)["kb_id"][0]
    markdown = "".join(output["data"].get("text/markdown", "") for output in by_cell["kb"] if "data" in output)
    assert (f"`{kb_id}`" in markdown) if kb_id != "unknown" else ("Best rule match" in markdown or "no entry" in _text(by_cell["kb"]))
    assert "other incidents with failure_mode" in _text(by_cell["similar"])
    walk = rca.explain.explain(rca.open_store(stores.clustered), incident_id)
    shown = _text(by_cell["explain"])
    assert all(f"{number}. {name}: " in shown for number, name in enumerate(rca.explain.STAGES, 1))
    assert f"knowledge-base entry {kb_id} (matched by rca cluster)" in shown
    assert all(f"   {stage.verdict}: {stage.summary}" in shown for stage in walk.stages)
    page = result.html.read_text()
    assert result.html.suffix == ".html" and len(re.findall(r'<img[^>]*src="data:image/png;base64,', page)) == 2
    assert "<script" not in page  # nothing fetched from a CDN: the page works offline


def _html_cells(outputs: list[dict]) -> list[str]:
    """The cell texts of every HTML table among ``outputs``."""
    pages = "".join(output["data"]["text/html"] for output in outputs if "text/html" in output.get("data", {}))
    return [html.unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", pages, re.S)]


def _assert_readable_summary_and_evidence(store: Path, incident_id: str, by_cell: dict[str, list[dict]]) -> None:
    """Signals in units (GiB, %, MB/s), not raw bytes and 17-digit floats; evidence rows without NaN and whole messages."""
    incident = rca.open_store(store).incidents().filter(pl.col("incident_id") == incident_id).row(0, named=True)
    summary = _html_cells(by_cell["summary"])
    assert not [cell for cell in summary if re.fullmatch(r"-?\d+\.\d{5,}|\d{7,}", cell)], summary
    if incident["gpu_mem_peak_pct"] is not None:
        assert f"{incident['gpu_mem_peak_pct']:.1f}%" in summary
    if incident["gpu_mem_headroom_bytes"] is not None:
        assert rca.explain.size(incident["gpu_mem_headroom_bytes"]) in summary
    evidence = _html_cells(by_cell["evidence"])
    assert "NaN" not in evidence and "nan" not in evidence and "None" not in evidence
    assert not any(cell.endswith("...") for cell in evidence)  # pandas' 50-character cut is gone
    anchors = rca.open_store(store).incident_events().filter((pl.col("incident_id") == incident_id) & (pl.col("role") == "anchor"))
    messages = rca.open_store(store).events().filter(pl.col("event_id").is_in(anchors["event_id"].implode()))["message"]
    assert any(rca.explain.headline_of(message)[:200] in evidence for message in messages)


def test_postmortem_before_clustering_shows_the_best_rule_match(stores: ReportStores, tmp_path: Path) -> None:
    incidents = rca.open_store(stores.plain).incidents()
    incident_id = incidents.filter(pl.col("anchor_kind") == "oom_kill").sort("start")["incident_id"][0]
    # --out as a folder, as the digest's is: the notebook gets its default name inside it.
    result = run_postmortem(stores.plain, incident_id, tmp_path / "postmortems")
    assert result.notebook == tmp_path / "postmortems" / f"postmortem-{incident_id}.ipynb"
    outputs, by_cell = _outputs(result.notebook)
    _assert_clean_run(outputs)
    assert result.html is None
    assert _images(by_cell["timeline"]) == 1 and _images(by_cell["gpu"]) == 0
    assert "no GPU samples are linked" in _text(by_cell["gpu"])
    markdown = "".join(output["data"].get("text/markdown", "") for output in by_cell["kb"] if "data" in output)
    assert "Best rule match" in markdown and "## Checklist" in markdown
    assert "other incidents with anchor_kind = oom_kill" in _text(by_cell["similar"])
    walk = rca.explain.explain(rca.open_store(stores.plain), incident_id)
    shown = _text(by_cell["explain"])
    assert f"1. cgroup: {walk.stage('cgroup').question}" in shown and f"{walk.stage('cgroup').verdict}: " in shown
    assert "3. allocator" in shown and "next time: no allocator figures (a PyTorch CUDA OOM message, a memory snapshot)" in shown
    assert "(best rule match, not clustered yet)" in shown


PROJECTIONS = [("clustered", "signature embeddings (hashing-256)"), ("plain", "numeric signals (standardised)")]


@pytest.mark.parametrize("variant,basis", PROJECTIONS)
def test_weekly_review_draws_modes_over_time_a_projection_and_the_heat_map(stores: ReportStores, tmp_path: Path, variant: str,
                                                                           basis: str) -> None:
    store = getattr(stores, variant)
    result = run_weekly_review(store, out=tmp_path / "weekly.ipynb")
    outputs, by_cell = _outputs(result.notebook)
    _assert_clean_run(outputs)
    assert [_images(by_cell[cell]) for cell in ("over-time", "projection", "heatmap")] == [1, 1, 1]
    assert basis in _text(by_cell["projection"])
    incidents = rca.open_store(store).incidents()
    window = rca.report.resolve_window(rca.open_store(store))
    in_week = incidents.filter((pl.col("start") >= window.since) & (pl.col("start") < window.until)).height
    assert _text(by_cell["setup"]).startswith(f"{in_week} incidents from {window.since:%Y-%m-%d} to {window.until:%Y-%m-%d}")


def test_weekly_review_of_an_empty_week_runs_and_says_so(stores: ReportStores, tmp_path: Path) -> None:
    result = run_weekly_review(stores.plain, "2031-W10", tmp_path / "empty.ipynb")
    outputs, by_cell = _outputs(result.notebook)
    _assert_clean_run(outputs)
    assert _text(by_cell["setup"]).startswith("0 incidents")
    assert "no incidents in these two weeks" in _text(by_cell["over-time"]) and "no incidents this week" in _text(by_cell["heatmap"])


def test_unknown_incident_is_refused_before_running(stores: ReportStores, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no incident 'inc-nope'"):
        run_postmortem(stores.plain, "inc-nope", tmp_path / "x.ipynb")
    assert not (tmp_path / "x.ipynb").exists()


def test_a_failing_cell_is_a_report_error_and_the_partial_notebook_is_kept(stores: ReportStores, tmp_path: Path) -> None:
    target = tmp_path / "failed.ipynb"
    with pytest.raises(ReportError, match="ValueError: no incident 'inc-nope'"):
        execute(POSTMORTEM, target, {"store": str(stores.plain), "incident_id": "inc-nope"})
    assert target.exists()


def test_postmortem_of_an_incident_without_a_time_says_so_in_words(stores: ReportStores, tmp_path: Path) -> None:
    store_path = tmp_path / "store"
    shutil.copytree(stores.clustered, store_path)
    incidents = pl.read_parquet(store_path / "incidents.parquet")
    incident_id = incidents.sort("start")["incident_id"][0]  # its events keep their times: the evidence table has minutes
    incidents.with_columns(start=pl.when(pl.col("incident_id") == incident_id).then(None).otherwise("start"),
                           end=pl.when(pl.col("incident_id") == incident_id).then(None).otherwise("end")
                           ).write_parquet(store_path / "incidents.parquet")
    result = run_postmortem(store_path, incident_id, tmp_path / "untimed.ipynb")
    outputs, by_cell = _outputs(result.notebook)
    _assert_clean_run(outputs)
    summary = _html_cells(by_cell["summary"])
    assert summary.count("unknown (no wall time on its lines)") == 2 and "None" not in summary
    for cell in ("evidence", "similar"):
        assert not {"nan", "NaN", "NaT", "None"} & set(_html_cells(by_cell[cell])), cell


def test_postmortem_with_redact_runs_cleanly_and_leaves_nothing_to_mask(stores: ReportStores, tmp_path: Path) -> None:
    from rca.redact import Redaction

    result = run_postmortem(stores.clustered, _gpu_incident(stores.clustered), tmp_path / "shared.ipynb", redact=Redaction())
    outputs, _ = _outputs(result.notebook)
    _assert_clean_run(outputs)
    assert _images(outputs) == 2
    texts = [output.get("text", "") for output in outputs] + [value for output in outputs for mime, value in output.get("data", {}).items()
                                                             if mime.startswith("text/")]
    assert Redaction().texts(texts) == texts
