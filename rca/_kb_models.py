"""The knowledge base's data model: entries, rules, checklist steps, and the loaded collection.

Every model forbids unknown keys and is frozen, so a typo in a YAML file is a validation
error with its line (see :mod:`rca.kb`) and a loaded entry cannot be changed by accident.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, StringConstraints, field_validator, model_validator

from rca._kb_rules import Match, describe
from rca.errors import KnowledgeBaseError

Text = Annotated[StrictStr, StringConstraints(strip_whitespace=True, min_length=1)]
Identifier = Annotated[StrictStr, StringConstraints(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")]
Url = Annotated[StrictStr, StringConstraints(pattern=r"^https?://\S+$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Step(_Strict):
    """One checklist step: what to run or look at, what it shows when this is the cause, and the fix."""

    check: Text
    expect: Text | None = None
    fix: Text


class Checklist(_Strict):
    """A checklist shared by several entries (``knowledge_base/checklists/<id>.yaml``)."""

    id: Identifier
    title: Text
    steps: list[Step] = Field(min_length=1)


class Reference(_Strict):
    title: Text
    url: Url


Tests = Annotated[dict[StrictStr, Match], Field(min_length=1)]


class Rule(_Strict):
    """Tests on incident columns and the weight their match adds (or, negative, removes).

    ``when`` holds when all its tests hold; ``any`` lists alternative ``when`` mappings and
    holds when one of them does (the same evidence can show in different columns).
    """

    name: Text | None = None
    weight: StrictInt | StrictFloat
    required: StrictBool = False
    when: Tests | None = None
    any_: list[Tests] | None = Field(default=None, alias="any", min_length=1)

    @field_validator("weight")
    @classmethod
    def _nonzero(cls, weight: float) -> float:
        if weight == 0 or abs(weight) > 100:
            raise ValueError("weight must be non-zero and within [-100, 100]")
        return weight

    @model_validator(mode="after")
    def _well_formed(self) -> Rule:
        if (self.when is None) == (self.any_ is None):
            raise ValueError("a rule needs exactly one of 'when' (all tests hold) or 'any' (one of several 'when' mappings holds)")
        if self.required and self.weight < 0:
            raise ValueError("a required rule needs a positive weight (a negative rule already counts against the entry)")
        return self

    @property
    def alternatives(self) -> list[dict[str, Match]]:
        """The rule as alternatives of conjunctions: ``[when]``, or the ``any`` list."""
        return [self.when] if self.when is not None else list(self.any_ or [])

    @property
    def conditions(self) -> str:
        """The tests in words, e.g. ``kinds has cuda_oom and reserved_unallocated_frac >= 0.25``."""
        parts = [" and ".join(describe(column, match) for column, match in tests.items()) for tests in self.alternatives]
        return parts[0] if len(parts) == 1 else " or ".join(f"({part})" for part in parts)

    @property
    def label(self) -> str:
        return self.name or self.conditions


class Entry(_Strict):
    """One failure mode. ``checklist_ref`` steps come first, then the entry's own ``checklist``."""

    id: Identifier
    title: Text
    summary: Text
    symptoms: list[Text] = Field(min_length=1)
    signals: list[Rule] = Field(min_length=1)
    root_cause: Text
    checklist_ref: Identifier | None = None
    checklist: list[Step] = Field(default_factory=list)
    references: list[Reference] = Field(min_length=1)
    evidence: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _has_steps_and_evidence(self) -> Entry:
        if not self.checklist and self.checklist_ref is None:
            raise ValueError("needs checklist steps, a checklist_ref, or both")
        if not any(rule.weight > 0 for rule in self.signals):
            raise ValueError("needs at least one signal rule with a positive weight")
        return self


FIELD_NAMES = sorted({name.rstrip("_") for model in (Step, Checklist, Reference, Rule, Entry, Match) for name in model.model_fields})


@dataclass(frozen=True)
class KnowledgeBase:
    """The validated entries (by id, in file-name order) and shared checklists of one folder."""

    root: Path
    entries: dict[str, Entry]
    checklists: dict[str, Checklist]
    files: dict[str, Path] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries.values())

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.entries

    def __getitem__(self, entry_id: str) -> Entry:
        try:
            return self.entries[entry_id]
        except KeyError:
            close = difflib.get_close_matches(entry_id, self.entries, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise KnowledgeBaseError(f"no knowledge-base entry {entry_id!r}{hint}") from None

    @property
    def ids(self) -> list[str]:
        return list(self.entries)

    def checklist(self, entry_id: str) -> list[Step]:
        """The entry's full checklist: the shared steps of its ``checklist_ref``, then its own."""
        entry = self[entry_id]
        shared = self.checklists[entry.checklist_ref].steps if entry.checklist_ref else []
        return [*shared, *entry.checklist]

    def summary(self) -> pl.DataFrame:
        """One row per entry, for ``rca kb list``."""
        return pl.DataFrame(
            {
                "id": self.ids,
                "title": [entry.title for entry in self],
                "rules": [len(entry.signals) for entry in self],
                "steps": [len(self.checklist(entry.id)) for entry in self],
                "shared_checklist": [entry.checklist_ref for entry in self],
                "file": [str(self.files.get(entry.id, "")) for entry in self],
            },
            schema={"id": pl.String, "title": pl.String, "rules": pl.Int64, "steps": pl.Int64, "shared_checklist": pl.String, "file": pl.String},
        )

    def symptoms(self) -> pl.DataFrame:
        """(kb_id, text) for every symptom: what the embedding half of matching embeds."""
        pairs = [(entry.id, text) for entry in self for text in entry.symptoms]
        return pl.DataFrame(pairs, schema={"kb_id": pl.String, "text": pl.String}, orient="row")
