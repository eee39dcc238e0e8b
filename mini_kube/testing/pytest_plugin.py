"""pytest fixtures (registered through the `pytest11` entry point as `mini_kube`).

- `mini_kube`: a fresh hermetic cluster for one test.
- `mini_kube_session`: one cluster shared by a whole session.
- `kube_namespace`: a new namespace on the session cluster for one test, deleted afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from mini_kube.client import ApiError
from mini_kube.machinery.refs import NAMESPACES

from .cluster import MiniKube


@pytest.fixture
def mini_kube() -> Iterator[MiniKube]:
    with MiniKube() as kube:
        yield kube


@pytest.fixture(scope="session")
def mini_kube_session() -> Iterator[MiniKube]:
    with MiniKube() as kube:
        yield kube


@pytest.fixture
def kube_namespace(mini_kube_session: MiniKube) -> Iterator[str]:
    name = f"test-{uuid.uuid4().hex[:10]}"
    mini_kube_session.client.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    try:
        mini_kube_session.client.delete(NAMESPACES, name)
    except ApiError as exc:
        if exc.status != 404:
            raise
