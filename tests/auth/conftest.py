"""Shared fixtures for the auth tests: one PKI per session (key generation is the slow part)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mini_kube.apiserver.auth.pki import Pki, ensure_pki


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return ensure_pki(Path(tmp_path_factory.mktemp("data")), ["127.0.0.1"])
