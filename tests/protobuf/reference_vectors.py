"""The reference vectors captured from a real kube-apiserver (tests/fixtures/reference/protobuf): where they are,
their names, one pair read. Imported by the protobuf tests as `tests.protobuf.reference_vectors`, not from their
conftest by its bare name, which is whichever conftest pytest imported last (`pytest tests/protobuf/X.py
tests/auth/Y.py` failed to collect)."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "fixtures" / "reference" / "protobuf"


def vector_names() -> list[str]:
    """Names of the NAME.json + NAME.pb object pairs (watch streams excluded)."""
    return sorted(p.stem for p in VECTORS.glob("*.pb")
                  if not p.stem.startswith("watch") and p.with_suffix(".json").exists())


def load_pair(directory: Path, name: str) -> tuple[dict, bytes]:
    """(JSON twin parsed, protobuf bytes) of one vector."""
    return json.loads((directory / f"{name}.json").read_text()), (directory / f"{name}.pb").read_bytes()
