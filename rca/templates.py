"""Template ids: lines of the same shape share an id.

A message's template is its text with the variable parts masked. Masks are data: the
ordered :data:`MASKS` list of (name, pattern) pairs, each applied to the whole column with
one ``str.replace_all``. Specific shapes go first, so a GPU UUID is not half-eaten by the
number mask nor a ``ctime`` date split into numbers. The typed masks for IPs, MACs, PCI bus
ids and hex match whole tokens only, so ``62.99.1.2.example.net`` is left whole for the
generic rules, which come last:

- ``USER``, ``PROCESS``, ``NAME``: names where real logs put them — ``session opened for
  user alice``, ``Killed process 4242 (python3)``, and the value of a key that names a
  thing (``user=alice``, ``rhost=db.example.org``, ``podName="web"``, ``Comm: uwsgi``).
- ``NUM``: any token that contains a digit is a variable (Drain's own heuristic). A token
  runs between whitespace, brackets, quotes, ``/,;:=|`` and runs of two or more dots, so
  ``core.2275``, ``3149468kB``, ``host8.example.net``, ``bglio78`` and ``CPU#0`` are masked
  whole, while the key in ``uid=0`` and the leader dots in ``fp cr update.....0`` stay.
- ``VALUE``: any other value after ``key=`` is masked unless it is a plain word.
  Identifiers (``signal=memory.available``) vary per line, while plain words
  (``reason=OOMKilled``, ``OpType=ALLREDUCE``, ``level=error``) say *which* event it is,
  so they stay part of the shape.
- ``EMPTY``, ``EMPTY_VALUE``: a free-standing ``()``, ``[]``, ``''`` and a bare ``key=``
  are values that printed empty (``printf("(%s)", "")``), so they mask like filled ones.

Masked text keeps typed placeholders (``<IP>``, ``<PATH>``…) for people to read. The id
hashes the *shape*, where every placeholder reads ``<*>``, so ``rhost=<IP>`` and
``rhost=<NAME>`` are one template.

Why no Drain-style clustering: merging two masked messages because they look alike makes
a line's id depend on which other lines were seen — arrival order, batch boundaries, what
else is in the store. Here an id is a pure function of the message text (blake2b of the
shape, never polars' ``hash()``, which changes across versions), so the same line gets the
same id in every run, batch and store. The rules above do the part of Drain's work that a
single line can decide alone; what only a neighbour could reveal (``chdir(pwd)`` next to
``chdir(/home/x)``) stays apart. Masking is vectorized and runs once per distinct message
with its digits zeroed (:func:`digits_to_zero`); Python runs once per distinct shape.
"""

from __future__ import annotations

import hashlib

import polars as pl
import pyarrow as pa

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_CLOCK = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?"
_HASH_CHARS = "[bcdfghjklmnpqrstvwxz0-9]"  # Kubernetes name suffixes; any digit, since masks never look at which
_TOKEN_CHAR = r"""[^\s./()\[\]{}<>'",;:=|]"""
_VALUE_CHAR = r"""[^\s()\[\]{}<>'",;|]"""
_ODD_CHAR = r"""[^\s()\[\]{}<>'",;|A-Za-z_-]"""  # in a value, a sign that it is not a plain word
# Keys (or key suffixes: rhost, podName, filename) whose value names a thing.
_NAME_KEYS = "user|name|host|node|pod|container|namespace|file|path|device|image|comm|task|process|exe|job|program|service|unit|volume"
_PLACEHOLDER = r"<[A-Z_]+>"


def _whole(pattern: str) -> str:
    """``pattern`` only where it is a whole token, not the head of ``62.99.1.2.example.net``."""
    return rf"(?P<pre>^|[^0-9A-Za-z_.\-])(?:{pattern})(?P<post>$|[^0-9A-Za-z_.\-]|\.(?:\s|$))"


MASKS: tuple[tuple[str, str], ...] = (
    (
        "DATETIME",
        rf"\b(?:{_WEEKDAY} {_MONTH} +[0-9]{{1,2}} {_CLOCK}(?: [A-Z]{{2,5}})? [0-9]{{4}}"
        rf"|{_WEEKDAY}, [0-9]{{1,2}} {_MONTH} [0-9]{{4}} {_CLOCK}(?: [+-][0-9]{{4}}| [A-Z]{{2,5}})?"
        rf"|(?:[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}|[0-9]{{4}}/[0-9]{{2}}/[0-9]{{2}})(?:[T ]{_CLOCK}(?:Z| ?[+-][0-9]{{2}}:?[0-9]{{2}})?)?"
        rf"|(?:{_MONTH} +[0-9]{{1,2}} )?{_CLOCK})\b",
    ),
    ("UUID", r"\b[0-9a-fA-F]{8}[-_](?:[0-9a-fA-F]{4}[-_]){3}[0-9a-fA-F]{12}\b"),
    ("URL", r"""\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>()\[\]]+"""),
    ("MAC", _whole(r"[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5,}")),
    ("PCI", _whole(r"(?:[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9])?|[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9])")),
    ("IP", _whole(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?::[0-9]{1,5})?")),
    ("PATH", r"""(?P<pre>^|[\s(\[{='"])(?:\.{1,2}|~)?/[^\s'"()\[\]{},;:<>]+"""),
    ("PROCESS", r"(?i)(?P<pre>\b(?:process|pid|task) [0-9]+ \()[^()\s]+(?P<post>\))"),
    ("POD", _whole(rf"[a-z0-9]+(?:-[a-z0-9]+)*-(?:{_HASH_CHARS}{{8,10}}-)?{_HASH_CHARS}{{5}}")),
    ("HEX", _whole(r"0[xX][0-9a-fA-F]+")),
    ("USER", r"""(?i)(?P<pre>\b(?:for|by|invalid|illegal) user )[^\s<>()\[\],;:'"=]+"""),
    ("NAME", rf"""(?i)(?P<pre>(?:{_NAME_KEYS})(?:=|: ))(?:"[^"]*"|'[^']*'|{_VALUE_CHAR}+)"""),
    ("NUM", rf"(?:{_TOKEN_CHAR}+\.)*{_TOKEN_CHAR}*[0-9]{_TOKEN_CHAR}*(?:\.{_TOKEN_CHAR}+)*"),
    ("VALUE", rf"(?P<pre>[0-9A-Za-z_]=){_VALUE_CHAR}*(?:{_ODD_CHAR}{_VALUE_CHAR}*[A-Za-z0-9]|[A-Za-z0-9]{_VALUE_CHAR}*{_ODD_CHAR}){_VALUE_CHAR}*"),
    ("EMPTY", r"""(?P<pre>(?:^| )[(\['"])(?P<post>[)\]'"])"""),
    ("EMPTY_VALUE", r"(?P<pre>[0-9A-Za-z_]=)(?P<post>[\s,;)\]}]|$)"),
)
"""Ordered (name, pattern). The match becomes ``<NAME>``; the text a pattern captures as
``pre`` or ``post`` is context, kept on either side of the placeholder."""


# Whitespace runs other than a lone space: replacing just these by one space is replacing
# every run, without touching the single spaces that are most of a message.
_WHITESPACE_RUN = r" ?(?:[^\S ]|\s{2,})\s*"

# Distinct messages are shaped in parallel slices of about this many rows.
_SLICE_ROWS = 20_000


def mask(messages: pl.Expr) -> pl.Expr:
    """The masked form of each message: variable parts replaced by ``<NAME>``."""
    masked = messages.str.replace_all(_WHITESPACE_RUN, " ").str.strip_chars()
    for name, pattern in MASKS:
        placeholder = f"${{pre}}<{name}>${{post}}" if "(?P<" in pattern else f"<{name}>"
        masked = masked.str.replace_all(pattern, placeholder)
    return masked


def shape(messages: pl.Expr) -> pl.Expr:
    """The text a template id hashes: the masked form with every placeholder as ``<*>``."""
    return mask(messages).str.replace_all(_PLACEHOLDER, "<*>")


def _shaped(distinct: pl.DataFrame) -> pl.DataFrame:
    """``distinct`` with its ``shape``; the masks run one after another, so slices of rows run in parallel."""
    slices = min(pl.thread_pool_size(), distinct.height // _SLICE_ROWS)
    if slices <= 1:
        return distinct.with_columns(shape=shape(pl.col("message")))
    size = -(-distinct.height // slices)
    parts = [distinct.lazy().slice(start, size).with_columns(shape=shape(pl.col("message"))) for start in range(0, distinct.height, size)]
    return pl.concat(pl.collect_all(parts))


def _digest(template: str) -> str:
    return hashlib.blake2b(template.encode("utf-8"), digest_size=8).hexdigest()


_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")


def digits_to_zero(messages: pl.Series) -> pl.Series:
    """``messages`` with every ASCII digit written as ``0``.

    Every digit ends up inside a placeholder (``NUM`` takes any token holding one), and
    the masks look at how many digits there are, never at which, so a message and its
    zeroed form have the same shape — and the zeroed forms of ``gpu 3 used 40506 MiB``
    and ``gpu 1 used 39122 MiB`` are one string, shaped once. The digits are rewritten in
    the Arrow data buffer in one C-speed pass: a regex replace of each digit costs 30×
    more than all the masks together.
    """
    array = messages.to_arrow().cast(pa.large_string())
    validity, offsets, data = array.buffers()
    zeroed = pa.py_buffer(data.to_pybytes().translate(_DIGITS_TO_ZERO)) if data is not None else data
    rebuilt = pa.LargeStringArray.from_buffers(len(array), offsets, zeroed, validity, array.null_count, array.offset)
    return pl.Series(messages.name, rebuilt, dtype=pl.String)


# Zeroed message -> template id, for the messages this process has shaped: logs repeat
# themselves across files and batches, and an id is a pure function of the zeroed message.
# Cleared when full, so a worker's memory stays bounded; read with one .get per message, so
# a thread that clears it under another costs that one a shaping, never an error.
_SHAPED_BEFORE: dict[str, str] = {}
_SHAPED_BEFORE_LIMIT = 200_000


def template_ids(messages: pl.Series) -> pl.Series:
    """Stable template id of each message, in input order (a null message counts as "")."""
    zeroed = digits_to_zero(messages.cast(pl.String).fill_null("")).to_frame("message")
    distinct = zeroed["message"].unique().to_list()
    known = {message: found for message in distinct if (found := _SHAPED_BEFORE.get(message)) is not None}
    new = [message for message in distinct if message not in known]
    if new:
        shaped = _shaped(pl.DataFrame({"message": new}, schema={"message": pl.String}))
        digests = {template: _digest(template) for template in shaped["shape"].unique().to_list()}
        fresh = dict(zip(new, (digests[template] for template in shaped["shape"].to_list()), strict=True))
        if len(_SHAPED_BEFORE) + len(fresh) > _SHAPED_BEFORE_LIMIT:
            _SHAPED_BEFORE.clear()
        if len(fresh) <= _SHAPED_BEFORE_LIMIT:
            _SHAPED_BEFORE.update(fresh)
        known.update(fresh)
    return zeroed["message"].replace_strict(known, return_dtype=pl.String).rename("template_id")
