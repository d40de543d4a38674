"""Template ids: lines of the same shape share an id.

Masks are data: an ordered list of (name, pattern) applied to whole columns. Specific
shapes (GPU UUIDs, PCI bus ids, pod-hash suffixes) go before general ones (hex, numbers)
so a UUID is not half-eaten by the number mask. Ids are content hashes of the masked
text, so they are the same across runs, stores and machines.
"""

from __future__ import annotations

import hashlib

import polars as pl

MASKS: tuple[tuple[str, str], ...] = (
    ("GPU_UUID", r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"),
    ("UUID", r"\b[0-9a-fA-F]{8}[-_](?:[0-9a-fA-F]{4}[-_]){3}[0-9a-fA-F]{12}\b"),
    ("PCI", r"\b(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?\b"),
    ("CONTAINER_ID", r"\b[0-9a-f]{64}\b"),
    ("POD", r"\b([a-z0-9]+(?:-[a-z0-9]+)*)-[a-z0-9]{8,10}-[a-z0-9]{5}\b"),
    ("IP", r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"),
    ("PATH", r"(?:^|\s)(?:/[\w.\-@]+){2,}/?"),
    ("HEX", r"\b0x[0-9a-fA-F]+\b|\b[0-9a-fA-F]*\d[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\b"),
    ("NUM", r"[-+]?\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"),
)


def mask(messages: pl.Expr) -> pl.Expr:
    """The masked form of each message: variable parts replaced by ``<NAME>``."""
    masked = messages
    for name, pattern in MASKS:
        masked = masked.str.replace_all(pattern, f"<{name}>")
    return masked.str.replace_all(r"\s+", " ").str.strip_chars()


def _digest(template: str) -> str:
    return hashlib.blake2b(template.encode("utf-8"), digest_size=8).hexdigest()


def template_ids(messages: pl.Series) -> pl.Series:
    """Stable template id of each message; hashing runs once per distinct masked text."""
    masked = messages.to_frame("m").select(mask(pl.col("m")).fill_null("")).to_series()
    uniques = masked.unique()
    lookup = dict(zip(uniques.to_list(), (_digest(t) for t in uniques.to_list()), strict=True))
    return masked.replace_strict(lookup, return_dtype=pl.String).alias("template_id")
