"""Masking of secrets and personal data in outputs meant to be shared: digests, exports, notebooks.

The rules are data: an ordered list of :class:`Rule` (name, category, pattern, replacement),
applied in order with polars' ``str.replace_all`` to whole string columns, so masking a
table costs one regex pass per rule and column, not a Python call per value. Order matters
where patterns overlap: the password of a URL goes before e-mail addresses (``user:pw@host``
would otherwise read as an address), named key formats before the generic ``key=value`` rule.

The store keeps the originals. Redaction happens on the way out, through
:func:`redacted_store`: a read-only view of a store whose tables come back masked, which the
digest, the exports and the notebooks read instead of the store itself.

A rules file (``--redact-rules FILE``) switches categories off and adds rules::

    disable: [emails, ipv6]
    rules:
      - name: corp_hostname
        category: hostnames
        pattern: '\\b[a-z0-9-]+\\.corp\\.example\\.com\\b'
        replacement: '[redacted:host]'
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, NoReturn

import polars as pl
import yaml
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from rca.errors import RedactionError
from rca.store import Store


@dataclass(frozen=True)
class Rule:
    """One mask: every match of ``pattern`` (Rust regex syntax) becomes ``replacement`` (``$1``/``${name}`` refer to groups)."""

    name: str
    category: str
    pattern: str
    replacement: str


_HEX4 = "[0-9A-Fa-f]{1,4}"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_SECRET_KEY = r"[A-Za-z0-9_.-]*?(?:api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|secret|token|password|passwd)"

RULES: tuple[Rule, ...] = (
    Rule("url_password", "url_passwords", r"\b([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s]+:)[^@/?#\s]+@", "${1}[redacted:password]@"),
    Rule("authorization_header", "tokens", r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:basic|bearer|token|digest)\s+)?)[^\s\"',;\[\]]+",
         "${1}[redacted:token]"),
    Rule("bearer_token", "tokens", r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/-]{8,}=*", "${1}[redacted:token]"),
    Rule("jwt", "tokens", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "[redacted:jwt]"),
    Rule("aws_access_key_id", "api_keys", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", "[redacted:aws_key]"),
    Rule("github_token", "api_keys", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", "[redacted:github_token]"),
    Rule("huggingface_token", "api_keys", r"\bhf_[A-Za-z0-9]{30,}\b", "[redacted:hf_token]"),
    Rule("secret_assignment", "api_keys", rf"(?i)\b({_SECRET_KEY}[\"']?\s*[=:]\s*[\"']?)[^\s\"'&,;\[\]]+", "${1}[redacted:secret]"),
    Rule("email", "emails", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b", "[redacted:email]"),
    Rule("ipv4", "ipv4", rf"\b{_OCTET}(?:\.{_OCTET}){{3}}\b", "[redacted:ipv4]"),
    # Full form, or compressed with groups on both sides of "::" (a bare "c10::" or "std::" is C++, not an address).
    Rule("ipv6", "ipv6", rf"\b(?:{_HEX4}(?::{_HEX4}){{7}}|{_HEX4}(?::{_HEX4}){{0,6}}::{_HEX4}(?::{_HEX4}){{0,6}})\b", "[redacted:ipv6]"),
)
"""The built-in rules, in the order they are applied."""

CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(rule.category for rule in RULES))

# Columns that identify rows or hold fixed vocabularies: masking them would break joins and
# lookups, and they never hold log text.
KEY_COLUMNS = frozenset({
    "event_id", "incident_id", "template_id", "mode_id", "failure_mode", "medoid_incident", "kb_id", "file_key", "run_id",
    "source", "format", "kind", "severity", "ts_quality", "role", "status", "anchor_kind", "sha256", "parts",
})


@dataclass(frozen=True)
class Redaction:
    """The rules in force, applied in order."""

    rules: tuple[Rule, ...] = RULES

    def as_parameters(self) -> list[list[str]]:
        """The rules as JSON-able rows (name, category, pattern, replacement), e.g. for a notebook's parameters."""
        return [[rule.name, rule.category, rule.pattern, rule.replacement] for rule in self.rules]

    @classmethod
    def from_parameters(cls, rows: Iterable[Iterable[str]]) -> Redaction:
        """The redaction :meth:`as_parameters` wrote."""
        return cls(tuple(Rule(*row) for row in rows))

    def expression(self, column: str) -> pl.Expr:
        """``column`` (a string column) with every rule applied."""
        return _masked(pl.col(column), self.rules)

    def frame(self, frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
        """``frame`` with its text masked: string columns and lists of strings, except :data:`KEY_COLUMNS`."""
        masked = [self._column(name, dtype) for name, dtype in frame.collect_schema().items() if name not in KEY_COLUMNS]
        return frame.with_columns([m for m in masked if m is not None])

    def texts(self, values: Iterable[str]) -> list[str]:
        """Each of ``values`` masked (for text that is not in a table, such as a notebook's outputs)."""
        return pl.Series("text", list(values), dtype=pl.String).to_frame().select(self.expression("text"))["text"].to_list()

    def _column(self, name: str, dtype: pl.DataType) -> pl.Expr | None:
        if dtype == pl.String:
            return self.expression(name)
        if dtype == pl.List(pl.String):
            return pl.col(name).list.eval(_masked(pl.element(), self.rules))
        return None


def _masked(text: pl.Expr, rules: tuple[Rule, ...]) -> pl.Expr:
    for rule in rules:
        text = text.str.replace_all(rule.pattern, rule.replacement)
    return text


class _RuleEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Annotated[str, StringConstraints(min_length=1)]
    category: Annotated[str, StringConstraints(min_length=1)] = "custom"
    pattern: Annotated[str, StringConstraints(min_length=1)]
    replacement: str


class _RulesFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    disable: list[str] = []
    rules: list[_RuleEntry] = []


def redaction(rules_file: str | os.PathLike[str] | None = None, *, disable: Iterable[str] = ()) -> Redaction:
    """The built-in rules less the ``disable``\\ d categories, plus a rules file's own (see the module docstring).

    Raises :class:`RedactionError` for an unreadable or invalid file, an unknown category or a bad pattern.
    """
    off, extra = set(disable), ()
    if rules_file is not None:
        loaded = _load(Path(rules_file))
        off |= set(loaded.disable)
        extra = tuple(Rule(r.name, r.category, r.pattern, r.replacement) for r in loaded.rules)
    unknown = sorted(off - set(CATEGORIES) - {rule.category for rule in extra})
    if unknown:
        raise RedactionError(f"unknown redaction categor{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown)}; known: {', '.join(CATEGORIES)}")
    for rule in extra:
        _check_pattern(rule)
    return Redaction(tuple(rule for rule in (*RULES, *extra) if rule.category not in off))


def _load(path: Path) -> _RulesFile:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise RedactionError(f"cannot read the redaction rules {path}: {err.strerror or err}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise RedactionError(f"{path} is not valid YAML: {err}") from None
    try:
        return _RulesFile.model_validate(data if data is not None else {})
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'top level'}: {e['msg']}" for e in err.errors())
        raise RedactionError(f"{path}: {problems}") from None


def _check_pattern(rule: Rule) -> None:
    try:
        pl.select(pl.lit("probe").str.replace_all(rule.pattern, rule.replacement))
    except pl.exceptions.ComputeError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else "invalid pattern"
        raise RedactionError(f"redaction rule {rule.name!r}: {first}") from None


# --- the masked view of a store ----------------------------------------------------------------------------


class RedactedStore(Store):
    """A store whose tables read back masked; writing through it is refused (the store keeps the originals)."""

    def __init__(self, store: Store, redaction: Redaction) -> None:
        super().__init__(store.path)
        self.redaction = redaction

    def manifest(self) -> pl.DataFrame:
        return self.redaction.frame(super().manifest())

    def scan_events(self) -> pl.LazyFrame:
        return self.redaction.frame(super().scan_events())

    def incidents(self) -> pl.DataFrame:
        return self.redaction.frame(super().incidents())

    def incident_events(self) -> pl.DataFrame:
        return self.redaction.frame(super().incident_events())

    def failure_modes(self) -> pl.DataFrame:
        return self.redaction.frame(super().failure_modes())

    def correlation_report(self) -> dict:
        return _masked_json(super().correlation_report(), self.redaction)

    def writing(self, *_: object, **__: object) -> NoReturn:  # type: ignore[override]
        raise RedactionError(f"{self.path}: a redacted view is read-only; write through rca.open_store")


def _masked_json(value: object, redaction: Redaction) -> object:
    """Every string inside a JSON-like value masked (dict keys included)."""
    strings: list[str] = []

    def collect(node: object) -> None:
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            for key, item in node.items():
                collect(key)
                collect(item)
        elif isinstance(node, list):
            for item in node:
                collect(item)

    collect(value)
    masked = iter(redaction.texts(strings))

    def rebuild(node: object) -> object:
        if isinstance(node, str):
            return next(masked)
        if isinstance(node, dict):
            return {rebuild(key): rebuild(item) for key, item in node.items()}
        if isinstance(node, list):
            return [rebuild(item) for item in node]
        return node

    return rebuild(value)


def redacted_store(store: Store, redaction: Redaction | None) -> Store:
    """``store`` read through ``redaction``; ``store`` itself when there is none."""
    return store if redaction is None else RedactedStore(store, redaction)


def mask_text(text: str, redaction: Redaction = Redaction()) -> str:
    """One string masked (for tests and notebooks; tables go through :meth:`Redaction.frame`)."""
    return redaction.texts([text])[0]


__all__ = ["CATEGORIES", "KEY_COLUMNS", "RULES", "RedactedStore", "Redaction", "Rule", "mask_text", "redacted_store", "redaction"]
