"""The rule grammar of the knowledge base: one test on one incident column, as a polars expression.

A rule's ``when`` maps incident columns to tests (see knowledge_base/README.md). Every column
has a kind that decides which operators make sense on it; :func:`match_problems` checks a test
against that kind when the knowledge base is validated, and :func:`condition` turns it into a
boolean expression over the whole incident frame. An expression never yields null: a column
that is absent, a null value or a value of the wrong type all read as "not satisfied", so a
rule never matches on missing evidence.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

Scalar = StrictBool | StrictInt | StrictFloat | StrictStr
Number = StrictInt | StrictFloat
ColumnKind = Literal["text", "number", "flag", "marker", "text_list", "int_list"]

COLUMN_KINDS: dict[str, ColumnKind] = {
    # identity and evidence (rca.schema.INCIDENT_SCHEMA)
    "anchor_kind": "text",
    "signature": "text",
    "host": "text",
    "process": "text",
    "pod": "text",
    "namespace": "text",
    "container": "text",
    "gpu_uuid": "text",
    "hosts": "text_list",
    "sources": "text_list",
    "kinds": "text_list",
    "pid": "number",
    "gpu_index": "number",
    "n_anchors": "number",
    "n_events": "number",
    # signals (rca.signals)
    "gpu_mem_peak_pct": "number",
    "gpu_mem_headroom_bytes": "number",
    "gpu_mem_growth_bytes_per_s": "number",
    "gpu_mem_growth_sustained_s": "number",
    "gpu_mem_growth_shape": "text",
    "gpu_util_period_s": "number",
    "reserved_unallocated_bytes": "number",
    "reserved_unallocated_frac": "number",
    "requested_bytes": "number",
    "free_bytes": "number",
    "requested_over_free": "number",
    "gpu_processes": "number",
    "gpu_pods": "number",
    "stale_gpu_bytes": "number",
    "killed_rss_bytes": "number",
    "cgroup_limit_bytes": "number",
    "cgroup_peak_bytes": "number",
    "cgroup_peak_over_limit": "number",
    "cgroup_oom_kills": "number",
    "rss_over_limit": "number",
    "oom_constraint": "text",
    "snapshot_growth_site": "text",
    "snapshot_growth_bytes": "number",
    "victim_was_grower": "flag",
    "xid_codes": "int_list",
    "restart_count": "number",
    "runtime_oom": "text",
    "jvm_marker": "marker",
    "go_marker": "marker",
}
"""Incident columns a rule may test, and how their values are read. Extend it when the
correlation stage adds a signal."""

COLUMN_ALIASES: dict[str, str] = {
    "growth_shape": "gpu_mem_growth_shape",
    "gpu_headroom_bytes": "gpu_mem_headroom_bytes",
    "gpu_mem_growth_bps": "gpu_mem_growth_bytes_per_s",
    "gpu_growth_sustained_s": "gpu_mem_growth_sustained_s",
    "requested_vs_free": "requested_over_free",
    "gpu_sharing_processes": "gpu_processes",
    "gpu_sharing_pods": "gpu_pods",
    "rss_vs_limit": "rss_over_limit",
}
"""Other names of the same signals: a rule may use either name, and a test reads whichever
of the two the incidents frame has."""


def canonical(column: str) -> str:
    """The column's name in COLUMN_KINDS (an alias resolved)."""
    return COLUMN_ALIASES.get(column, column)


def _candidates(column: str) -> list[str]:
    name = canonical(column)
    return [name, *(alias for alias, target in COLUMN_ALIASES.items() if target == name)]


_OPERATORS: dict[ColumnKind, frozenset[str]] = {
    "text": frozenset({"eq", "ne", "in", "not_in", "regex", "not_regex", "present"}),
    "number": frozenset({"eq", "ne", "in", "not_in", "gt", "ge", "lt", "le", "between", "present"}),
    "flag": frozenset({"eq", "present"}),
    "marker": frozenset({"eq", "ne", "in", "regex", "not_regex", "present"}),
    "text_list": frozenset({"eq", "in", "any", "all", "none", "not_in", "len_ge", "len_le", "present"}),
    "int_list": frozenset({"eq", "in", "any", "all", "none", "not_in", "len_ge", "len_le", "present"}),
}
_VALUE_OPERATORS = ("eq", "ne", "in", "not_in", "any", "all", "none")
_VALUE_TYPES: dict[ColumnKind, tuple[type, ...]] = {
    "text": (str,),
    "number": (int, float),
    "flag": (bool,),
    "marker": (str, bool),
    "text_list": (str,),
    "int_list": (int,),
}
_TYPE_NAMES = {int: "integer", float: "number", str: "text", bool: "true/false"}
_TRUTHY_TEXT = ("true", "yes", "1")
_FALSY_TEXT = ("", "false", "no", "0", "none", "null")


class ColumnRef(BaseModel):
    """Another numeric column as the bound of a comparison: ``{ge: {column: requested_bytes}}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    column: StrictStr

    def __str__(self) -> str:
        return self.column


Bound = Number | ColumnRef


class Match(BaseModel):
    """The tests on one column, all of which must hold. A bare scalar means ``eq``, a bare list ``in``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eq: Scalar | None = None
    ne: Scalar | None = None
    in_: list[Scalar] | None = Field(default=None, alias="in")
    not_in: list[Scalar] | None = None
    gt: Bound | None = None
    ge: Bound | None = None
    lt: Bound | None = None
    le: Bound | None = None
    between: tuple[Number, Number] | None = None
    regex: StrictStr | None = None
    not_regex: StrictStr | None = None
    any: list[Scalar] | None = None
    all: list[Scalar] | None = None
    none: list[Scalar] | None = None
    len_ge: StrictInt | None = None
    len_le: StrictInt | None = None
    present: StrictBool | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return data
        if isinstance(data, list):
            return {"in": data}
        return {"eq": data}

    def operators(self) -> dict[str, Any]:
        """The operators set on this test, by their YAML names, in declaration order."""
        return {("in" if name == "in_" else name): value for name, value in self if value is not None}


def match_problems(column: str, match: Match) -> list[tuple[tuple[str, ...], str]]:
    """What is wrong with testing ``column`` this way: (location below the column, message) pairs."""
    kind = COLUMN_KINDS.get(canonical(column))
    if kind is None:
        close = difflib.get_close_matches(column, [*COLUMN_KINDS, *COLUMN_ALIASES], n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        return [((), f"unknown incident column {column!r} ({hint}the columns are listed in knowledge_base/README.md)")]
    operators = match.operators()
    if not operators:
        return [((), f"{column}: the test sets no operator")]
    problems: list[tuple[tuple[str, ...], str]] = []
    for name, value in operators.items():
        if name not in _OPERATORS[kind]:
            allowed = ", ".join(sorted(_OPERATORS[kind]))
            problems.append(((name,), f"{name!r} does not apply to {column} (a {kind} column; use one of {allowed})"))
        elif name in _VALUE_OPERATORS:
            problems += [((name,), message) for message in _value_problems(column, kind, value)]
        elif name in ("regex", "not_regex"):
            error = regex_error(value)
            if error:
                problems.append(((name,), f"regex does not compile: {error}"))
        elif isinstance(value, ColumnRef) and COLUMN_KINDS.get(canonical(value.column)) != "number":
            problems.append(((name, "column"), f"{value.column!r} is not a numeric incident column, so {column} cannot be compared with it"))
    if match.between is not None and match.between[0] > match.between[1]:
        problems.append((("between",), "between needs [low, high] with low <= high"))
    return problems


def _value_problems(column: str, kind: ColumnKind, value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value]
    wanted = _VALUE_TYPES[kind]
    wrong = [item for item in values if not isinstance(item, wanted) or (isinstance(item, bool) and bool not in wanted)]
    if not values:
        return ["the list of values is empty"]
    if wrong:
        names = "number" if wanted == (int, float) else " or ".join(_TYPE_NAMES[t] for t in wanted)
        return [f"{column} holds {names} values, not {wrong[0]!r}"]
    return []


def regex_error(pattern: str) -> str | None:
    """Why ``pattern`` does not compile in polars' (Rust) regex engine, or None when it does."""
    try:
        pl.select(pl.lit("").str.contains(_case_insensitive(pattern)))
    except pl.exceptions.PolarsError as err:
        reason = re.search(r"^error: (.+)$", str(err), re.MULTILINE)
        return reason.group(1) if reason else str(err).strip().splitlines()[0]
    return None


def _case_insensitive(pattern: str) -> str:
    return f"(?i){pattern}"


def condition(column: str, match: Match, schema: pl.Schema) -> pl.Expr:
    """Whether each incident passes every test of ``match`` on ``column`` (or on its alias); never null."""
    present = [name for name in _candidates(column) if name in schema]
    if not present:
        return pl.repeat(False, pl.len())
    kind = COLUMN_KINDS[canonical(column)]
    dtype = schema[present[0]]
    operators = {name: _operand(value, schema) if isinstance(value, ColumnRef) else value for name, value in match.operators().items()}
    tests = [_test(kind, dtype, pl.col(present[0]), name, value) for name, value in operators.items()]
    return pl.all_horizontal(tests).fill_null(False)


def _operand(reference: ColumnRef, schema: pl.Schema) -> pl.Expr:
    """The referenced column as numbers, or nulls (so the comparison fails) when the frame lacks it."""
    present = [name for name in _candidates(reference.column) if name in schema]
    return pl.col(present[0]).cast(pl.Float64, strict=False) if present else pl.lit(None, dtype=pl.Float64)


def _test(kind: ColumnKind, dtype: pl.DataType, column: pl.Expr, name: str, value: Any) -> pl.Expr:
    if kind in ("text_list", "int_list"):
        return _list_test(_as_list(kind, column, dtype), name, value)
    if name == "present":
        present = _present(kind, dtype, column)
        return present if value else ~present
    if kind == "number":
        return _number_test(column if dtype.is_numeric() else column.cast(pl.Float64, strict=False), name, value)
    if kind == "flag":
        return _flag(dtype, column) == value
    if kind == "marker" and isinstance(value, bool):
        return _present(kind, dtype, column) == value
    return _text_test(column if dtype == pl.String else column.cast(pl.String, strict=False), name, value)


def _number_test(column: pl.Expr, name: str, value: Any) -> pl.Expr:
    if name == "between":
        return column.is_between(value[0], value[1])
    if name in ("in", "not_in"):
        found = column.cast(pl.Float64, strict=False).is_in([float(item) for item in value])
        return found if name == "in" else ~found
    comparisons = {"eq": column.__eq__, "ne": column.__ne__, "gt": column.__gt__, "ge": column.__ge__, "lt": column.__lt__, "le": column.__le__}
    return comparisons[name](value)


def _text_test(column: pl.Expr, name: str, value: Any) -> pl.Expr:
    if name == "eq":
        return column == value
    if name == "ne":
        return column != value
    if name == "in":
        return column.is_in(value)
    if name == "not_in":
        return ~column.is_in(value) & column.is_not_null()
    matched = column.str.contains(_case_insensitive(value))
    return matched if name == "regex" else ~matched


def _as_list(kind: ColumnKind, column: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """The column as a list of the kind's element type, whatever shape it arrived in."""
    element = pl.Int64 if kind == "int_list" else pl.String
    listed = column if isinstance(dtype, pl.List) else pl.concat_list([column])
    return listed.cast(pl.List(element), strict=False)


def _list_test(column: pl.Expr, name: str, value: Any) -> pl.Expr:
    if name == "present":
        present = column.is_not_null() & (column.list.len() > 0).fill_null(False)
        return present if value else ~present
    if name == "len_ge":
        return column.list.len() >= value
    if name == "len_le":
        return column.list.len() <= value
    values = value if isinstance(value, list) else [value]
    hits = column.list.eval(pl.element().is_in(values))
    if name in ("eq", "in", "any"):
        return hits.list.any()
    if name == "all":
        return pl.all_horizontal([column.list.contains(item) for item in values])
    return ~hits.list.any() & column.is_not_null()


def _present(kind: ColumnKind, dtype: pl.DataType, column: pl.Expr) -> pl.Expr:
    if kind == "marker":
        return _marker(dtype, column)
    if dtype == pl.String:
        return column.is_not_null() & (column.str.len_chars() > 0).fill_null(False)
    return column.is_not_null()


def _flag(dtype: pl.DataType, column: pl.Expr) -> pl.Expr:
    if dtype == pl.Boolean:
        return column
    if dtype.is_numeric():
        return column != 0
    return column.cast(pl.String, strict=False).str.to_lowercase().is_in(_TRUTHY_TEXT)


def _marker(dtype: pl.DataType, column: pl.Expr) -> pl.Expr:
    """Markers may arrive as a flag, a count or a name ("heap", "metaspace"); any real value counts."""
    if dtype == pl.Boolean:
        return column.fill_null(False)
    if dtype.is_numeric():
        return (column != 0).fill_null(False)
    if isinstance(dtype, pl.List):
        return (column.list.len() > 0).fill_null(False)
    text = column.cast(pl.String, strict=False).str.strip_chars().str.to_lowercase()
    return text.is_not_null() & ~text.is_in(_FALSY_TEXT).fill_null(True)


def describe(column: str, match: Match) -> str:
    """A short human reading of one column's tests, used to label rules that have no name."""
    kind = COLUMN_KINDS.get(canonical(column), "text")
    listy = kind in ("text_list", "int_list")
    parts = []
    for name, value in match.operators().items():
        shown = "{" + ", ".join(map(str, value)) + "}" if isinstance(value, list) else value
        if name == "present":
            parts.append(f"{column} {'present' if value else 'absent'}")
        elif name == "regex":
            parts.append(f"{column} ~ /{value}/")
        elif name == "not_regex":
            parts.append(f"{column} !~ /{value}/")
        elif name == "between":
            parts.append(f"{value[0]} <= {column} <= {value[1]}")
        elif listy and name in ("eq", "in", "any"):
            parts.append(f"{column} has {'any of ' if isinstance(value, list) else ''}{shown}")
        else:
            symbol = {"eq": "=", "ne": "!=", "in": "in", "not_in": "not in", "gt": ">", "ge": ">=", "lt": "<", "le": "<=",
                      "all": "has all of", "none": "has none of", "len_ge": "count >=", "len_le": "count <="}[name]
            parts.append(f"{column} {symbol} {shown}")
    return " and ".join(parts)
