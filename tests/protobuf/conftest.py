"""Shared fixtures for the protobuf codec tests: the reference vectors captured from a real kube-apiserver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "fixtures" / "reference" / "protobuf"


def vector_names() -> list[str]:
    """Names of the NAME.json + NAME.pb object pairs (watch streams excluded)."""
    return sorted(p.stem for p in VECTORS.glob("*.pb")
                  if not p.stem.startswith("watch") and p.with_suffix(".json").exists())


@pytest.fixture
def vectors() -> Path:
    """The reference vector directory."""
    return VECTORS


def load_pair(directory: Path, name: str) -> tuple[dict, bytes]:
    """(JSON twin parsed, protobuf bytes) of one vector."""
    return json.loads((directory / f"{name}.json").read_text()), (directory / f"{name}.pb").read_bytes()
