"""Fuzz target: the sniffer (rca.sources.sniff and every source's own sniff) on arbitrary file heads."""

from __future__ import annotations

import math

import _harness

from rca import sources


def test_one_input(data: bytes) -> None:
    _, content = _harness.split(data)
    head = _harness.head(_harness.read_lines(content))
    source, score = sources.sniff(head)
    if not (math.isfinite(score) and 0.0 <= score <= 1.0) or (source is None) != (score == 0.0):
        raise AssertionError(f"sniff returned {source and source.name!r} with score {score!r}")
    for each in sources.all_sources():
        own = each.sniff(head)  # without the literal prefilter: every sniff must cope with any head
        if not (math.isfinite(own) and 0.0 <= own <= 1.0):
            raise AssertionError(f"{each.name}.sniff returned {own!r}")


if __name__ == "__main__":
    _harness.main(test_one_input)
