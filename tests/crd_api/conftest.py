"""Fixtures: a fresh cluster per test (`cluster`), with the Agent or Widget CRD applied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from mini_kube.machinery.refs import CUSTOMRESOURCEDEFINITIONS, NAMESPACES

from mini_kube.testing import MiniKube
from tests.crd_api.support import AGENT_CRD, WIDGET_CRD, Cluster


@pytest.fixture
def cluster(mini_kube: MiniKube, tmp_path: Path) -> Cluster:
    return Cluster(mini_kube, tmp_path / "kube-cache")


@pytest.fixture
def agents(cluster: Cluster) -> Cluster:
    """The reference's Agent CRD (established on create) and namespace demo."""
    cluster.client.create(CUSTOMRESOURCEDEFINITIONS, yaml.safe_load(AGENT_CRD))
    cluster.client.create(NAMESPACES, {"metadata": {"name": "demo"}})
    return cluster


@pytest.fixture
def widgets(cluster: Cluster) -> Cluster:
    """The Widget CRD: two versions, status and scale, a selectable field, CEL rules."""
    cluster.client.create(CUSTOMRESOURCEDEFINITIONS, yaml.safe_load(WIDGET_CRD))
    return cluster


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "state"
    path.mkdir()
    yield str(path)
