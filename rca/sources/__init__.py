"""The source registry: one module per source format family, registered by explicit import.

Adding a format family is one new module that calls :func:`register`, one import line
below, its fixtures under ``tests/data/<name>/`` and its test module.
"""

from __future__ import annotations

from collections.abc import Sequence

from rca.errors import SourceError
from rca.sources._base import SOURCE_FAILURES, ParseContext, Parsed, Source, lines_frame

_REGISTRY: dict[str, Source] = {}


def register(source: Source) -> Source:
    """Add ``source`` to the registry; a second source with the same name is an error."""
    if source.name in _REGISTRY:
        raise SourceError(f"source {source.name!r} is registered twice")
    _REGISTRY[source.name] = source
    return source


def get(name: str) -> Source:
    """The source called ``name``; raises :class:`SourceError` listing the known names."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise SourceError(f"unknown format {name!r}; known formats: {known}") from None


def all_sources() -> list[Source]:
    """Registered sources in registration order (which breaks sniffing ties)."""
    return list(_REGISTRY.values())


def sniff(head: Sequence[str]) -> tuple[Source | None, float]:
    """The source most confident that ``head`` (a file's first non-blank lines) is its format."""
    joined = "\n".join(head)
    best: Source | None = None
    best_score = 0.0
    for source in _REGISTRY.values():
        if source.sniff_literals and not any(lit in joined for lit in source.sniff_literals):
            continue
        try:
            score = source.sniff(head)
        except SOURCE_FAILURES:
            continue  # a sniffer that cannot read the head does not claim it
        if score > best_score:
            best, best_score = source, score
    return best, best_score


def claim_by_name(path: str, head: Sequence[str]) -> tuple[Source | None, float]:
    """The source most confident that the file at ``path`` is its format by its name and head.

    For formats with nothing to sniff; the driver takes it only over a lower content score.
    """
    scored = [(source.claims_name(path, head), source) for source in _REGISTRY.values() if source.claims_name]
    score, best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
    return (best, score) if score > 0 else (None, 0.0)


def sniff_bytes(head: bytes) -> Source | None:
    """The binary source most confident that a file starting with ``head`` is its format."""
    scored = [(source.sniff_bytes(head), source) for source in _REGISTRY.values() if source.sniff_bytes]
    score, best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
    return best if score > 0 else None


# Registration order is sniffing priority on ties: specific formats before the catch-all.
from rca.sources import kernel, kubelet, k8s, nvidia_smi, cgroup, dcgm, torch_memory, syslog, pipeline  # noqa: E402,F401

__all__ = ["ParseContext", "Parsed", "Source", "all_sources", "get", "lines_frame", "register", "sniff"]
