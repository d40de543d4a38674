"""The source registry: one module per source format family, registered by explicit import.

Adding a format family is one new module that calls :func:`register`, one import line
below, its fixtures under ``tests/data/<name>/`` and its test module.
"""

from __future__ import annotations

from collections.abc import Sequence

from rca.errors import SourceError
from rca.sources._base import SOURCE_FAILURES, ParseContext, Parsed, Source, heads_frame, lines_frame

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
    return sniff_many([head])[0]


def sniff_many(heads: Sequence[Sequence[str]]) -> list[tuple[Source | None, float]]:
    """:func:`sniff` of each head; a source with ``sniff_heads`` reads all the heads it may claim in one call."""
    joined = ["\n".join(head) for head in heads]
    best: list[tuple[Source | None, float]] = [(None, 0.0)] * len(heads)
    for source in _REGISTRY.values():
        candidates = [n for n, text in enumerate(joined) if not source.sniff_literals or any(lit in text for lit in source.sniff_literals)]
        for number, score in zip(candidates, _scores(source, [heads[n] for n in candidates]), strict=True):
            if score > best[number][1]:
                best[number] = (source, score)
    return best


def _scores(source: Source, heads: list[Sequence[str]]) -> list[float]:
    if source.sniff_heads is not None and heads:
        try:
            found = source.sniff_heads(heads_frame(heads))
            return [found.get(number, 0.0) for number in range(len(heads))]
        except SOURCE_FAILURES:
            pass  # one head it cannot read must not cost the others their scores
    return [_score(source, head) for head in heads]


def _score(source: Source, head: Sequence[str]) -> float:
    try:
        return source.sniff(head)
    except SOURCE_FAILURES:
        return 0.0  # a sniffer that cannot read the head does not claim it


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
from rca.sources import grep_output, kernel, kubelet, k8s, nvidia_smi, cgroup, dcgm, torch_memory, syslog, journal_file, fabric_log, pipeline  # noqa: E402,F401

__all__ = ["ParseContext", "Parsed", "Source", "all_sources", "get", "lines_frame", "register", "sniff", "sniff_many"]
