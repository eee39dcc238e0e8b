"""Shared fixtures for the protobuf codec tests: the reference vectors captured from a real kube-apiserver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO.parent / "shared" / "reference" / "protobuf"


def vector_names() -> list[str]:
    """Names of the NAME.json + NAME.pb object pairs (watch streams excluded)."""
    if not VECTORS.is_dir():
        return []
    return sorted(p.stem for p in VECTORS.glob("*.pb")
                  if not p.stem.startswith("watch") and p.with_suffix(".json").exists())


@pytest.fixture
def vectors() -> Path:
    """The reference vector directory, or skip when this checkout has no ../shared/reference."""
    if not VECTORS.is_dir():
        pytest.skip(f"reference vectors not present at {VECTORS}")
    return VECTORS


def load_pair(directory: Path, name: str) -> tuple[dict, bytes]:
    """(JSON twin parsed, protobuf bytes) of one vector."""
    return json.loads((directory / f"{name}.json").read_text()), (directory / f"{name}.pb").read_bytes()
