"""Shared fixtures: where test data lives and how to find a fixture file by name."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

# Copied logs get a fixed mtime so year inference in tests never depends on the checkout date.
FIXED_MTIME = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def fixture_path(name: str) -> Path:
    """The fixture file called ``name`` anywhere under tests/data (each real sample lives in its source's folder)."""
    matches = sorted(p for p in DATA.rglob(name) if p.is_file())
    if not matches:
        raise FileNotFoundError(f"no fixture named {name} under {DATA}")
    return matches[0]


@pytest.fixture
def data_dir() -> Path:
    return DATA
