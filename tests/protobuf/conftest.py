"""Shared fixtures for the protobuf codec tests: the reference vectors captured from a real kube-apiserver."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.protobuf.reference_vectors import VECTORS


@pytest.fixture
def vectors() -> Path:
    """The reference vector directory."""
    return VECTORS
