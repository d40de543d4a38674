"""YAML for the knowledge base: safe loading that remembers where every value was written.

``yaml.safe_load`` forgets line numbers, so a validation error could only name the file.
:class:`_MarkedLoader` is a ``SafeLoader`` that builds dict and list subclasses carrying the
line of each key and item; :func:`locate` follows a pydantic error location through them to
the line an author has to fix. Duplicate keys, which ``safe_load`` silently resolves to the
last one, are reported instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, SequenceNode


class MarkedDict(dict):
    """A YAML mapping that knows its own line and the line of each of its keys."""

    line: int
    key_lines: dict[Any, int]


class MarkedList(list):
    """A YAML sequence that knows its own line and the line of each item."""

    line: int
    item_lines: list[int]


@dataclass
class LoadedYaml:
    """One parsed file: its data (``None`` when it could not be parsed) and its problems."""

    path: Path
    data: Any
    problems: list[tuple[int, str]] = field(default_factory=list)


class _MarkedLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences record lines (1-based) and duplicate keys."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicate_keys: list[tuple[int, str]] = []


def _construct_mapping(loader: _MarkedLoader, node: MappingNode) -> MarkedDict:
    loader.flatten_mapping(node)
    mapping = MarkedDict()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in mapping:
            loader.duplicate_keys.append((line, f"duplicate key {key!r} (first written on line {mapping.key_lines[key]})"))
            continue
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = line
    return mapping


def _construct_sequence(loader: _MarkedLoader, node: SequenceNode) -> MarkedList:
    items = MarkedList(loader.construct_object(child, deep=True) for child in node.value)
    items.line = node.start_mark.line + 1
    items.item_lines = [child.start_mark.line + 1 for child in node.value]
    return items


_MarkedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_MarkedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_marked(path: Path) -> LoadedYaml:
    """Parse one YAML file; a syntax error or an unreadable file becomes a problem, not an exception."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return LoadedYaml(path, None, [(1, f"cannot read the file: {err}")])
    loader = _MarkedLoader(text)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else 1
        return LoadedYaml(path, None, [(line, f"YAML syntax error: {err.problem or err.context}")])
    except yaml.YAMLError as err:
        return LoadedYaml(path, None, [(1, f"YAML error: {err}")])
    finally:
        loader.dispose()
    return LoadedYaml(path, data, list(loader.duplicate_keys))


def locate(data: Any, loc: Sequence[int | str]) -> int:
    """The line of the value at ``loc`` or, when the path stops early (a missing key), of the deepest container it reached."""
    line = getattr(data, "line", 1)
    node = data
    for part in loc:
        if isinstance(node, MarkedDict) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, MarkedList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
    return line


def dotted(loc: Sequence[int | str]) -> str:
    """``('signals', 2, 'when')`` → ``signals[2].when``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
