"""Nothing in rca executes content from logs or bundles.

A static audit of the package's source (every call that can run code or build arbitrary
objects from data), then the same promise checked on hostile inputs: YAML tags that would
call ``os.system``, a pickle that would, and log text that is a script in a browser.
"""

from __future__ import annotations

import ast
import base64
import pickle
import re
from pathlib import Path

import pytest
from hostile_inputs import accounting, reconciles

import rca
from rca import sources
from rca.ingest import parse_lines
from rca.kb import validate_kb
from rca.sources import ParseContext, lines_frame

PACKAGE = Path(rca.__file__).parent
# The one module allowed to subclass pickle.Unpickler: the restricted unpickler (its find_class allows only listed globals).
RESTRICTED_UNPICKLER = PACKAGE / "_safe_pickle.py"

# Calls that run code or construct arbitrary objects from data, by their dotted name once imports are resolved.
UNSAFE_CALLS = {
    "eval", "exec", "compile", "__import__", "builtins.eval", "builtins.exec",
    "pickle.load", "pickle.loads", "pickle.Unpickler", "_pickle.load", "_pickle.loads", "cPickle.loads",
    "dill.load", "dill.loads", "cloudpickle.load", "cloudpickle.loads", "jsonpickle.decode", "marshal.load", "marshal.loads",
    "shelve.open", "pandas.read_pickle", "joblib.load",
    "yaml.load", "yaml.load_all", "yaml.unsafe_load", "yaml.unsafe_load_all", "yaml.full_load", "yaml.full_load_all",
    "os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
}
UNSAFE_YAML_LOADERS = {"yaml.Loader", "yaml.UnsafeLoader", "yaml.FullLoader", "yaml.CLoader", "yaml.CUnsafeLoader", "yaml.CFullLoader"}


def _imported_names(tree: ast.Module) -> dict[str, str]:
    """Local name → dotted name it stands for, from the module's imports."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.AST, names: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return names.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, names)
        return f"{base}.{node.attr}" if base else None
    return None


def _flag_is_true(call: ast.Call, name: str) -> bool:
    return any(k.arg == name and getattr(k.value, "value", None) is True for k in call.keywords)


def _findings(path: Path) -> list[str]:
    """Every unsafe use in one module, as ``file:line: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = _imported_names(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{path.parent.name}/{path.name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call):
            called = _dotted(node.func, names)
            if called in UNSAFE_CALLS:
                found.append(f"{where}: {called}(...)")
            if called == "torch.load" and not _flag_is_true(node, "weights_only"):
                found.append(f"{where}: torch.load without weights_only=True")
            if called == "numpy.load" and _flag_is_true(node, "allow_pickle"):
                found.append(f"{where}: numpy.load(..., allow_pickle=True)")
            if any(k.arg == "shell" and getattr(k.value, "value", None) is not False for k in node.keywords):
                found.append(f"{where}: {called}(..., shell=...)")
        elif isinstance(node, (ast.Attribute, ast.Name)) and _dotted(node, names) in UNSAFE_YAML_LOADERS:
            found.append(f"{where}: {_dotted(node, names)}")
        elif isinstance(node, ast.ClassDef) and path != RESTRICTED_UNPICKLER:
            bases = {_dotted(base, names) for base in node.bases}
            if bases & {"pickle.Unpickler", "_pickle.Unpickler"}:
                found.append(f"{where}: class {node.name} subclasses pickle.Unpickler outside {RESTRICTED_UNPICKLER.name}")
    return found


def _unsafe_uses() -> list[str]:
    return [finding for path in sorted(PACKAGE.rglob("*.py")) for finding in _findings(path)]


def test_rca_never_calls_code_running_loaders() -> None:
    assert _unsafe_uses() == []


def test_the_restricted_unpickler_allows_only_what_it_lists() -> None:
    if not RESTRICTED_UNPICKLER.exists():
        pytest.skip("no pickle-based source yet")
    tree = ast.parse(RESTRICTED_UNPICKLER.read_text(encoding="utf-8"))
    unpicklers = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                  and any(_dotted(base, _imported_names(tree)) in ("pickle.Unpickler", "_pickle.Unpickler") for base in node.bases)]
    assert unpicklers, "the restricted unpickler module defines no Unpickler subclass"
    for unpickler in unpicklers:
        assert "find_class" in {item.name for item in unpickler.body if isinstance(item, ast.FunctionDef)}, unpickler.name


@pytest.mark.parametrize("snippet,finding", [
    ("import yaml\nyaml.load(text)\n", "yaml.load(...)"),
    ("import yaml as y\ny.load(text, Loader=y.Loader)\n", "yaml.Loader"),
    ("from pickle import loads\nloads(blob)\n", "pickle.loads(...)"),
    ("import pickle\nclass U(pickle.Unpickler):\n    pass\n", "subclasses pickle.Unpickler"),
    ("x = eval(text)\n", "eval(...)"),
    ("import subprocess\nsubprocess.run(cmd, shell=True)\n", "shell="),
    ("import torch\ntorch.load(path)\n", "torch.load without weights_only=True"),
    ("import numpy\nnumpy.load(path, allow_pickle=True)\n", "allow_pickle=True"),
])
def test_the_audit_catches_each_unsafe_form(tmp_path: Path, snippet: str, finding: str) -> None:
    fake = tmp_path / "bad.py"
    fake.write_text(snippet)
    assert [line for line in _findings(fake) if finding in line]


def test_the_audit_leaves_polars_eval_and_safe_yaml_alone(tmp_path: Path) -> None:
    fake = tmp_path / "ok.py"
    fake.write_text("import re\nimport yaml\nimport polars as pl\nimport numpy as np\npl.col('a').list.eval(pl.element())\n"
                    "yaml.safe_load(text)\nre.compile('x')\nnp.load(path)\nclass L(yaml.SafeLoader):\n    pass\n")
    assert _findings(fake) == []


# --- hostile content ------------------------------------------------------------------------------------------


class _Touch:
    """Unpickling this runs ``open(marker, "w")``: a pickle payload that proves execution by leaving a file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


def test_yaml_tags_in_a_kubernetes_document_run_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "yaml-ran"
    document = f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: !!python/object/apply:os.system ['touch {marker}']\n"
    events, skipped = parse_lines(lines_frame(document), ParseContext(file="pod.yaml"), sources.get("k8s"))
    assert not marker.exists()
    assert reconciles(accounting(5, events, skipped))


def test_yaml_tags_in_the_knowledge_base_run_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "kb-ran"
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "evil.yaml").write_text(f"id: evil\ntitle: !!python/object/apply:os.system ['touch {marker}']\n")
    problems = validate_kb(tmp_path / "kb")
    assert not marker.exists()
    assert any("evil.yaml" in str(problem) for problem in problems)


@pytest.mark.parametrize("name", ["snapshot.pickle", "memory_snapshot.pkl", "trace.pt"])
def test_a_pickle_payload_among_the_logs_runs_nothing(tmp_path: Path, name: str) -> None:
    marker = tmp_path / "pickle-ran"
    logs = tmp_path / "logs" / "gpu-node-1"
    logs.mkdir(parents=True)
    (logs / name).write_bytes(pickle.dumps(_Touch(marker), protocol=4))
    (logs / f"{name}.b64").write_text(base64.b64encode(pickle.dumps(_Touch(marker))).decode() + "\n")
    report = rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    assert not marker.exists()
    assert report.files.height == 2


def test_log_text_is_inert_in_the_html_digest(tmp_path: Path) -> None:
    from rca.correlate import correlate_store
    from rca.report import build_digest

    logs = tmp_path / "logs" / "<img src=x onerror=alert(1)>"  # the host name, as the folder layout gives it, is shown everywhere
    logs.mkdir(parents=True)
    (logs / "train.log").write_text(
        "2026-11-30 10:00:05,001 ERROR train.py:88] step 9 failed:\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
        "of which 1.00 GiB is free.\n"
    )
    rca.ingest(tmp_path / "logs", tmp_path / "store", workers=1)
    correlate_store(rca.open_store(tmp_path / "store"))
    digest = build_digest(tmp_path / "store", week="2026-W49")
    assert "<img src=x" not in digest.html and "&lt;img src=x onerror=alert(1)&gt;" in digest.html
    # Markdown renderers pass raw HTML through, so outside code spans (which are literal) the digest backslash-escapes it.
    prose = re.sub(r"`[^`]*`", "", digest.markdown)
    assert re.search(r"(?<!\\)<img", prose) is None and "\\<img src=x onerror=alert(1)\\>" in prose
