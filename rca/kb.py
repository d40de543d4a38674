"""The failure-mode knowledge base: validated YAML entries, and rule matching against incidents.

``knowledge_base/`` holds one YAML file per failure mode and ``knowledge_base/checklists/``
the checklists several modes share (the format and the rule grammar are documented in
knowledge_base/README.md). :func:`load_kb` reads and validates it; :func:`validate_kb` returns
every problem as ``file:line: message`` instead of raising.

Matching has two halves. :func:`rule_scores` is the rule half, computed here for every
(incident, entry) pair with one polars expression per rule. The embedding half — cosine
similarity between an incident (or a mode's centroid) and an entry's symptoms — comes from
the clustering stage; :func:`combine_scores` mixes the two and :func:`best_matches` picks
each incident's entry and confidence, or ``unknown`` below a threshold, for which
:func:`draft_yaml` writes a draft entry for a person to complete. :func:`explain_match` and
:func:`describe_entry` are what ``rca kb match`` and ``rca kb show`` print.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

import polars as pl
import yaml
from pydantic import ValidationError

from rca._kb_models import FIELD_NAMES, Checklist, Entry, KnowledgeBase, Reference, Rule, Step
from rca._kb_rules import COLUMN_KINDS, canonical, condition, match_problems
from rca._kb_yaml import dotted, load_marked, locate
from rca.errors import KnowledgeBaseError, SchemaError
from rca.schema import KINDS

__all__ = [
    "UNKNOWN",
    "Checklist",
    "Entry",
    "KnowledgeBase",
    "Reference",
    "Rule",
    "Step",
    "best_matches",
    "combine_scores",
    "default_kb_path",
    "describe_entry",
    "draft_entry",
    "draft_yaml",
    "explain_match",
    "load_kb",
    "rule_matches",
    "rule_scores",
    "validate_kb",
]

UNKNOWN = "unknown"
"""The kb_id of an incident or mode that no entry matches well enough."""

_Model = TypeVar("_Model", Entry, Checklist)


def default_kb_path() -> Path:
    """The bundled knowledge base: ``rca/knowledge_base`` when installed as package data, else ``<repo>/knowledge_base``."""
    here = Path(__file__).resolve().parent
    packaged = here / "knowledge_base"
    return packaged if packaged.is_dir() else here.parent / "knowledge_base"


def load_kb(path: str | Path | None = None) -> KnowledgeBase:
    """Read and validate a knowledge-base folder (default: the bundled one); raise with every error when it is not valid."""
    kb, errors = _read(Path(path) if path is not None else default_kb_path())
    if errors:
        shown = "\n".join(errors[:25]) + (f"\n… and {len(errors) - 25} more" if len(errors) > 25 else "")
        raise KnowledgeBaseError(f"the knowledge base {kb.root} has {len(errors)} error(s):\n{shown}")
    return kb


def validate_kb(path: str | Path | None = None) -> list[str]:
    """Every problem of a knowledge-base folder as ``file:line: where: message``, by file and line; empty when it is valid."""
    return _read(Path(path) if path is not None else default_kb_path())[1]


_Problem = tuple[str, int, str]
"""(file, line, message) of one validation error."""


def _read(root: Path) -> tuple[KnowledgeBase, list[str]]:
    if not root.is_dir():
        return KnowledgeBase(root, {}, {}), [f"{root}: not a folder"]
    problems: list[_Problem] = []
    checklist_files = sorted((root / "checklists").glob("*.y*ml"))
    checklists, _ = _read_models(checklist_files, Checklist, problems)
    entries, parsed = _read_models(sorted(root.glob("*.y*ml")), Entry, problems)
    if not parsed and not problems:
        problems.append((str(root), 0, "no knowledge-base entries (*.yaml) in this folder"))
    shared_ids = {path.stem for path in checklist_files}
    valid_files = {path for path, _ in entries.values()}
    for path, data in parsed:
        found = _entry_problems(data, shared_ids, validated=path in valid_files)
        problems += [(str(path), locate(data, loc), f"{dotted(loc)}: {message}") for loc, message in found]
    kb = KnowledgeBase(
        root,
        {entry.id: entry for _, entry in entries.values()},
        {checklist.id: checklist for _, checklist in checklists.values()},
        {entry.id: path for path, entry in entries.values()},
    )
    return kb, [f"{file}:{line}: {message}" if line else f"{file}: {message}" for file, line, message in sorted(problems, key=lambda p: (p[0], p[1]))]


def _read_models(files: list[Path], model: type[_Model], problems: list[_Problem]) -> tuple[dict[str, tuple[Path, _Model]], list[tuple[Path, Any]]]:
    """Parse and validate each file: the valid items by id, and every parsed mapping (valid or not) for further checks."""
    found: dict[str, tuple[Path, _Model]] = {}
    parsed: list[tuple[Path, Any]] = []
    for path in files:
        loaded = load_marked(path)
        problems += [(str(path), line, message) for line, message in loaded.problems]
        if loaded.data is None:
            if not loaded.problems:
                problems.append((str(path), 1, "the file is empty"))
            continue
        if not isinstance(loaded.data, dict):
            problems.append((str(path), getattr(loaded.data, "line", 1), "the top level must be a mapping of keys to values"))
            continue
        parsed.append((path, loaded.data))
        try:
            item = model.model_validate(loaded.data)
        except ValidationError as err:
            problems += [(str(path), line, message) for line, message in _pydantic_problems(loaded.data, err)]
            continue
        id_line = locate(loaded.data, ("id",))
        if item.id != path.stem:
            problems.append((str(path), id_line, f"id: {item.id!r} differs from the file name {path.name!r} (name the file {item.id}.yaml)"))
        if item.id in found:
            problems.append((str(path), id_line, f"id: duplicate id {item.id!r} (also in {found[item.id][0]})"))
            continue
        found[item.id] = (path, item)
    return found, parsed


def _entry_problems(data: Mapping[str, Any], shared_ids: set[str], *, validated: bool) -> list[tuple[tuple[int | str, ...], str]]:
    """What pydantic cannot see: a checklist_ref to no file, and tests that do not suit their column (rule by rule).

    The entry-wide checks of :class:`Entry` run only once its fields are valid; for an invalid
    entry the missing checklist is reported here, so that one pass lists everything to fix.
    """
    problems: list[tuple[tuple[int | str, ...], str]] = []
    if not validated and not data.get("checklist") and not data.get("checklist_ref"):
        problems.append((("checklist",), "needs checklist steps, a checklist_ref, or both"))
    ref = data.get("checklist_ref")
    if isinstance(ref, str) and ref not in shared_ids:
        known = ", ".join(sorted(shared_ids)) or "none"
        problems.append((("checklist_ref",), f"no shared checklist {ref!r} in checklists/ (known: {known})"))
    signals = data.get("signals")
    for index, raw in enumerate(signals if isinstance(signals, list) else []):
        try:
            rule = Rule.model_validate(raw)
        except ValidationError:
            continue
        places = [("when",)] if rule.when is not None else [("any", number) for number in range(len(rule.alternatives))]
        for place, tests in zip(places, rule.alternatives, strict=True):
            for column, match in tests.items():
                problems += [(("signals", index, *place, column, *sub), message) for sub, message in match_problems(column, match)]
    return problems


def _pydantic_problems(data: Any, err: ValidationError) -> list[tuple[int, str]]:
    """pydantic's errors as (line, "where: message"), one per location (a union reports one error per member type)."""
    messages: dict[tuple[int, str], str] = {}
    for problem in err.errors(include_url=False):
        loc = tuple(problem["loc"])
        if problem["type"] == "missing":
            text = f"missing required key {loc[-1]!r}"
            key = (locate(data, loc[:-1]), dotted(loc[:-1]) or "(top level)")
        elif problem["type"] == "extra_forbidden":
            close = difflib.get_close_matches(str(loc[-1]), FIELD_NAMES, n=2)
            text = f"unknown key {loc[-1]!r}" + (f" (did you mean {' or '.join(map(repr, close))}?)" if close else "")
            key = (locate(data, loc), dotted(loc))
        else:
            resolved = _resolved(data, loc)
            message = problem["msg"].removeprefix("Value error, ")
            text = message if resolved == loc else f"invalid value {problem['input']!r} ({message[0].lower()}{message[1:]})"
            key = (locate(data, loc), dotted(resolved) or "(top level)")
        messages.setdefault(key, text)
    return [(line, f"{where}: {text}") for (line, where), text in messages.items()]


def _resolved(data: Any, loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """The longest prefix of ``loc`` that names real keys and items (pydantic adds type tags for union members)."""
    node, depth = data, 0
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            break
        depth += 1
    return loc[:depth]


_MATCH_SCHEMA = {"incident_id": pl.String, "kb_id": pl.String, "rule": pl.String, "weight": pl.Float64, "required": pl.Boolean, "matched": pl.Boolean}
_SCORE_SCHEMA = {"incident_id": pl.String, "kb_id": pl.String, "rule_score": pl.Float64, "eligible": pl.Boolean, "matched_rules": pl.List(pl.String)}


def rule_matches(incidents: pl.DataFrame, kb: KnowledgeBase) -> pl.DataFrame:
    """Every rule of every entry against every incident: (incident_id, kb_id, rule, weight, required, matched).

    The long form of what :func:`rule_scores` sums, for explaining a match (``rca kb match``
    filters the incidents to one first). Columns the incidents lack make the rules that test
    them unsatisfied.
    """
    rules = _numbered_rules(kb)
    wide = _rule_columns(incidents, rules)
    if wide.is_empty():
        return pl.DataFrame(schema=_MATCH_SCHEMA)
    table = pl.DataFrame(
        {
            "_rule": [key for key, _, _ in rules],
            "_order": list(range(len(rules))),
            "kb_id": [kb_id for _, kb_id, _ in rules],
            "rule": [rule.label for _, _, rule in rules],
            "weight": [float(rule.weight) for _, _, rule in rules],
            "required": [rule.required for _, _, rule in rules],
        }
    )
    long = wide.unpivot(index=["incident_id", "_row"], variable_name="_rule", value_name="matched")
    return long.join(table, on="_rule").sort("_row", "_order").select(list(_MATCH_SCHEMA))


def rule_scores(incidents: pl.DataFrame, kb: KnowledgeBase) -> pl.DataFrame:
    """The rule half of matching: (incident_id, kb_id, rule_score, eligible, matched_rules) for every pair.

    ``rule_score`` = clip(Σ weights of matched rules / Σ positive weights of the entry, 0, 1),
    and 0 when a required rule did not match (``eligible`` is then false). ``matched_rules``
    lists the rules that held, each with its signed weight. Rows come in incident order, then
    knowledge-base order.
    """
    rules = _numbered_rules(kb)
    wide = _rule_columns(incidents, rules)
    if wide.is_empty():
        return pl.DataFrame(schema=_SCORE_SCHEMA)
    frames = []
    for order, entry in enumerate(kb):
        mine = [(key, rule) for key, kb_id, rule in rules if kb_id == entry.id]
        positive = sum(float(rule.weight) for _, rule in mine if rule.weight > 0)
        raw = pl.sum_horizontal([pl.when(pl.col(key)).then(float(rule.weight)).otherwise(0.0) for key, rule in mine])
        required = [pl.col(key) for key, rule in mine if rule.required]
        eligible = pl.all_horizontal(required) if required else pl.lit(True)
        keys = [key for key, _ in mine]
        scored = wide.select(
            "incident_id",
            "_row",
            *keys,
            _order=pl.lit(order),
            kb_id=pl.lit(entry.id),
            rule_score=pl.when(eligible).then((raw / positive).clip(0.0, 1.0)).otherwise(0.0),
            eligible=eligible,
        )
        frames.append(scored.join(_matched_labels(scored, mine), on=keys, how="left", maintain_order="left").drop(keys))
    return pl.concat(frames).sort("_row", "_order").select(list(_SCORE_SCHEMA)).cast(_SCORE_SCHEMA)


def _matched_labels(scored: pl.DataFrame, rules: list[tuple[str, Rule]]) -> pl.DataFrame:
    """The matched-rule labels of each distinct match pattern (incidents of one mode share a few), keyed by the rule columns."""
    keys = [key for key, _ in rules]
    shown = pl.DataFrame({"_rule": keys, "_rank": list(range(len(keys))), "label": [f"{rule.label} ({rule.weight:+g})" for _, rule in rules]})
    patterns = scored.select(keys).unique(maintain_order=True).with_row_index("_pattern")
    labels = (
        patterns.unpivot(index="_pattern", on=keys, variable_name="_rule", value_name="_hit")
        .filter(pl.col("_hit"))
        .join(shown, on="_rule")
        .sort("_pattern", "_rank")
        .group_by("_pattern", maintain_order=True)
        .agg(matched_rules=pl.col("label"))
    )
    return patterns.join(labels, on="_pattern", how="left").select(*keys, pl.col("matched_rules").fill_null(pl.lit([], dtype=pl.List(pl.String))))


def explain_match(incidents: pl.DataFrame, kb: KnowledgeBase, incident_id: str, *, top: int = 3) -> pl.DataFrame:
    """Why an incident matched: every rule of its ``top`` best entries, matched or not, best entry first.

    Columns: kb_id, rule_score, rule, weight, required, matched — what ``rca kb match``
    prints. Empty when the incident is not in ``incidents``.
    """
    one = incidents.filter(pl.col("incident_id").cast(pl.String) == incident_id)
    scores = rule_scores(one, kb).sort("rule_score", descending=True, maintain_order=True).head(top)
    rules = rule_matches(one, kb).drop("incident_id")
    ranked = scores.select("kb_id", "rule_score").with_row_index("_rank")
    return ranked.join(rules, on="kb_id", maintain_order="left").sort("_rank", maintain_order=True).drop("_rank")


def _numbered_rules(kb: KnowledgeBase) -> list[tuple[str, str, Rule]]:
    return [(f"_r{number}", kb_id, rule) for number, (kb_id, rule) in enumerate((entry.id, rule) for entry in kb for rule in entry.signals)]


def _rule_columns(incidents: pl.DataFrame, rules: list[tuple[str, str, Rule]]) -> pl.DataFrame:
    """incident_id, the row number, and one boolean column per rule: the only pass over the incidents."""
    if "incident_id" not in incidents.columns:
        raise SchemaError("rule matching needs an incident_id column")
    schema = incidents.schema
    return incidents.select(
        pl.col("incident_id").cast(pl.String),
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_row"),
        *[_rule_expr(rule, schema).alias(key) for key, _, rule in rules],
    )


def _rule_expr(rule: Rule, schema: pl.Schema) -> pl.Expr:
    return pl.any_horizontal([pl.all_horizontal([condition(column, match, schema) for column, match in tests.items()]) for tests in rule.alternatives])


def combine_scores(rules: pl.DataFrame, similarity: pl.DataFrame | None = None, *, rule_weight: float = 0.6) -> pl.DataFrame:
    """Mix the rule half with embedding similarity into one ``score`` per (incident, entry).

    ``similarity`` has (incident_id, kb_id, similarity), the cosine between the incident (or a
    mode's centroid, keyed by its id in ``incident_id``) and the entry's nearest symptom;
    negative cosines count as 0. score = rule_weight·rule_score + (1 − rule_weight)·similarity,
    and 0 for an entry whose required rules failed. Without similarity, score = rule_score.
    """
    if not 0.0 <= rule_weight <= 1.0:
        raise ValueError("rule_weight must be within [0, 1]")
    if similarity is None:
        joined = rules.with_columns(similarity=pl.lit(None, dtype=pl.Float64))
        mixed = pl.col("rule_score")
    else:
        joined = rules.join(similarity.select("incident_id", "kb_id", pl.col("similarity").cast(pl.Float64)), on=["incident_id", "kb_id"], how="left")
        mixed = rule_weight * pl.col("rule_score") + (1.0 - rule_weight) * pl.col("similarity").clip(0.0, 1.0).fill_null(0.0)
    return joined.with_columns(score=pl.when(pl.col("eligible")).then(mixed).otherwise(0.0))


def best_matches(scores: pl.DataFrame, *, threshold: float = 0.4) -> pl.DataFrame:
    """Each incident's best entry: (incident_id, kb_id, kb_confidence, runner_up, margin).

    ``kb_confidence`` is the best ``score`` (``rule_score`` when there is no ``score``
    column); below ``threshold`` the kb_id is :data:`UNKNOWN`. Ties go to the entry listed
    first in the knowledge base. ``margin`` is how far the runner-up trails.
    """
    score = "score" if "score" in scores.columns else "rule_score"
    ranked_ids = pl.col("kb_id").sort_by(score, descending=True, maintain_order=True)
    ranked_scores = pl.col(score).sort(descending=True)
    best = scores.group_by("incident_id", maintain_order=True).agg(
        best=ranked_ids.first(),
        kb_confidence=ranked_scores.first(),
        runner_up=ranked_ids.slice(1, 1).first(),
        runner_score=ranked_scores.slice(1, 1).first(),
    )
    return best.select(
        "incident_id",
        kb_id=pl.when(pl.col("kb_confidence") >= threshold).then(pl.col("best")).otherwise(pl.lit(UNKNOWN)),
        kb_confidence="kb_confidence",
        runner_up=pl.when(pl.col("runner_score") > 0).then(pl.col("runner_up")),
        margin=(pl.col("kb_confidence") - pl.col("runner_score").fill_null(0.0)),
    )


_DRAFT_SIGNALS = ("anchor_kind", "gpu_mem_growth_shape", "oom_constraint", "runtime_oom")
_EVIDENCE_KEYS = ("incident_id", "host", "hosts", "start", "end", "anchor_kind", "sources", "kinds", "n_events", "pid", "process", "pod", "namespace", "container", "gpu_index")


def draft_entry(incident: Mapping[str, Any]) -> dict[str, Any]:
    """A draft entry for an incident no entry matched: symptoms, rules and evidence from the incident, the rest for a person.

    The draft is deliberately incomplete — summary, root cause, checklist and references are
    empty — so ``rca kb validate`` on it lists exactly what is left to write.
    """
    incident_id = str(incident.get("incident_id", ""))
    anchor = str(incident.get("anchor_kind") or "incident")
    subject = incident.get("process") or incident.get("pod") or incident.get("host") or "unknown workload"
    digest = hashlib.blake2b(incident_id.encode(), digest_size=4).hexdigest()
    return {
        "id": f"draft-{re.sub(r'[^a-z0-9]+', '-', anchor.lower()).strip('-')}-{digest}",
        "title": f"Unclassified {anchor} in {subject}",
        "summary": "",
        "symptoms": _draft_symptoms(incident.get("signature")),
        "signals": _draft_rules(incident),
        "root_cause": "",
        "checklist": [],
        "references": [],
        "evidence": {key: _plain(value) for key, value in incident.items() if _keep_evidence(key, value)},
    }


def draft_yaml(incident: Mapping[str, Any]) -> str:
    """:func:`draft_entry` as YAML text, with a header saying what to complete."""
    draft = draft_entry(incident)
    header = (
        f"# Draft knowledge-base entry written by rca for incident {incident.get('incident_id', '?')}, which no entry matched.\n"
        "# Fill in summary, root_cause, checklist (check + fix per step) and references; adjust the rules;\n"
        "# rename the id and the file, then move it into the knowledge base. `rca kb validate` lists what is missing.\n"
    )
    return header + yaml.safe_dump(draft, sort_keys=False, allow_unicode=True, width=120)


def _draft_symptoms(signature: Any) -> list[str]:
    lines = [line.strip() for line in str(signature or "").splitlines() if line.strip()]
    return list(dict.fromkeys(lines))[:10] or ["(no signature text: describe what the logs showed)"]


def _draft_rules(incident: Mapping[str, Any]) -> list[dict[str, Any]]:
    named = {canonical(key): value for key, value in incident.items()}
    rules = [{"weight": 2, "when": {column: str(named[column])}} for column in _DRAFT_SIGNALS if named.get(column)]
    kinds = _draft_kinds(incident)
    if kinds:
        rules.append({"weight": 1, "any": [{"kinds": {"any": kinds}}, {"signature": {"regex": f"(^|\\n)({'|'.join(kinds)}):"}}]})
    xids = sorted({int(code) for code in incident.get("xid_codes") or [] if code is not None})
    if xids:
        rules.append({"weight": 2, "when": {"xid_codes": {"any": xids}}})
    return rules


def _draft_kinds(incident: Mapping[str, Any]) -> list[str]:
    """The incident's event kinds (other than plain logs): its kinds column, else the ``kind:`` prefixes of its signature lines."""
    listed = [str(kind) for kind in incident.get("kinds") or [] if kind is not None]
    prefixes = re.findall(r"^([a-z_]+):", str(incident.get("signature") or ""), re.MULTILINE)
    return sorted({kind for kind in (listed or prefixes) if kind in KINDS and kind != "log"})


def _keep_evidence(key: str, value: Any) -> bool:
    if value is None or key == "signature" or (isinstance(value, (list, str)) and not value):
        return False
    return key in _EVIDENCE_KEYS or canonical(key) in COLUMN_KINDS


def _plain(value: Any) -> Any:
    """A value YAML can write without python tags."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def describe_entry(kb: KnowledgeBase, entry_id: str) -> str:
    """An entry as Markdown, its checklist resolved: what ``rca kb show ID`` prints."""
    entry = kb[entry_id]
    lines = [f"# {entry.title} (`{entry.id}`)", "", entry.summary, "", "## Root cause", "", entry.root_cause, "", "## Symptoms", ""]
    lines += [f"- {symptom}" for symptom in entry.symptoms]
    lines += ["", "## Rules", ""]
    for rule in entry.signals:
        extra = ", required" if rule.required else ""
        lines.append(f"- {rule.label} (weight {rule.weight:+g}{extra})" + (f": `{rule.conditions}`" if rule.name else ""))
    shared = f" (the first steps come from the shared checklist `{entry.checklist_ref}`)" if entry.checklist_ref else ""
    lines += ["", f"## Checklist{shared}", ""]
    for number, step in enumerate(kb.checklist(entry_id), start=1):
        lines += _step_markdown(number, step)
    lines += ["## References", ""]
    lines += [f"- [{reference.title}]({reference.url})" for reference in entry.references]
    return "\n".join(lines) + "\n"


def _step_markdown(number: int, step: Step) -> list[str]:
    lines = [f"{number}. Check:", "", "   ```", *[f"   {line}" for line in step.check.splitlines()], "   ```", ""]
    if step.expect:
        lines += [f"   Expect: {step.expect}", ""]
    return [*lines, f"   Fix: {step.fix}", ""]
