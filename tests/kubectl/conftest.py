"""Fixtures for the kubectl scenarios: the shared session cluster, a namespace per test, kubectl bound to both."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kubectl.cli import Kubectl


@pytest.fixture(scope="session")
def kubectl_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One discovery cache for the session cluster (kubectl refreshes it when a resource is missing)."""
    return tmp_path_factory.mktemp("kubectl") / "cache"


@pytest.fixture
def kc(mini_kube_session, kube_namespace: str, kubectl_cache: Path) -> Kubectl:
    """kubectl (the default version) against the session cluster, in this test's namespace."""
    return Kubectl(mini_kube_session, kube_namespace, kubectl_cache)
