"""The package's regular expressions spell digit and word classes in ASCII.

Polars compiles a pattern again whenever it falls out of a small per-thread cache, which
a file's parse overflows, and Unicode ``\\d`` and ``\\w`` make that compile several times
slower: rewriting them as ``[0-9]`` and ``[0-9A-Za-z_]`` cut the CPU time of ingesting a
folder of small files by about a sixth, with the same events. This keeps them out.
"""

import io
import re
import tokenize
from pathlib import Path

import rca

UNICODE_CLASS = re.compile(r"(?<!\\)(?:\\\\)*\\[dwDW]")


def unicode_classes(path: Path) -> list[str]:
    """``path:line: literal`` for each raw string literal in ``path`` that uses \\d, \\w, \\D or \\W."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        prefix = re.match(r"[A-Za-z]*", token.string).group()
        if token.type == tokenize.STRING and "r" in prefix.lower() and UNICODE_CLASS.search(token.string):
            found.append(f"{path}:{token.start[0]}: {token.string[:80]}")
    return found


def test_package_patterns_use_ascii_digit_and_word_classes():
    package = Path(rca.__file__).parent
    offenders = [hit for path in sorted(package.rglob("*.py")) for hit in unicode_classes(path)]
    assert offenders == [], "use [0-9] / [0-9A-Za-z_] (see this test's docstring):\n" + "\n".join(offenders)


def test_the_check_sees_escapes():
    assert UNICODE_CLASS.search(r"pid=(\d+)")
    assert UNICODE_CLASS.search(r"[\w.-]+")
    assert not UNICODE_CLASS.search(r"C:\\data")
    assert UNICODE_CLASS.search(r"C:\\\d")
