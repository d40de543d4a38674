"""Fuzz target: the kernel parser on arbitrary bytes, read as the reader reads a file."""

from __future__ import annotations

import _harness


def test_one_input(data: bytes) -> None:
    _harness.check_parse("kernel", data)


if __name__ == "__main__":
    _harness.main(test_one_input)
