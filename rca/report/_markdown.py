"""Markdown escaping: log text shows as text, never as markup, HTML or a link.

The Markdown template's environment passes every ``{{ value }}`` through :func:`finalize`,
so escaping is the default and formatting is the template's own. Values that are already
Markdown (a code span, a fenced block) are :class:`Md` strings and pass through unchanged.
"""

from __future__ import annotations

import re
from typing import Any

# CommonMark lets a backslash escape any ASCII punctuation; these are the characters that can
# start markup inside a line: emphasis, code, links and images, raw HTML, entities, GFM table
# cells and strikethrough, headings. A value never starts a line, so list and block markers stay.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~&!])")
_NEWLINES = re.compile(r"\r\n|\r|\n")
_BACKTICKS = re.compile(r"`+")


class Md(str):
    """Text that is already Markdown: the template writes it as it is."""


def escape(value: Any) -> Md:
    """``value`` as Markdown text that renders as exactly its characters, on one line."""
    text = _NEWLINES.sub(" ⏎ ", str(value))
    return Md(_SPECIAL.sub(r"\\\1", text))


def finalize(value: Any) -> str:
    """The Markdown environment's ``finalize``: None is blank, :class:`Md` is kept, anything else escaped."""
    if value is None:
        return ""
    if isinstance(value, Md):
        return value
    return escape(value)


def code(value: Any) -> Md:
    """An inline code span holding ``value`` (one line), safe inside a GFM table cell."""
    text = _NEWLINES.sub(" ⏎ ", str(value))
    fence = "`" * (_longest_backtick_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    # GFM splits table cells on a pipe even inside a code span unless it is escaped.
    return Md(f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}")


def fenced(value: Any, indent: str = "") -> Md:
    """A fenced code block holding ``value`` verbatim (several lines), each line prefixed by ``indent``."""
    text = str(value).rstrip("\n")
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    lines = [fence, *text.splitlines(), fence]
    return Md("\n".join(f"{indent}{line}" for line in lines))


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)
