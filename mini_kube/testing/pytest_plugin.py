"""pytest fixtures (registered through the `pytest11` entry point as `mini_kube`).

- `mini_kube`: a fresh hermetic cluster for one test.
- `mini_kube_session`: one cluster shared by a whole session.
- `kube_namespace`: a new namespace on the session cluster for one test, deleted afterwards.

`--mini-kube-image-map FILE` (or the ini option `mini_kube_image_map`) gives the clusters' nodes an image map,
as `mini-kube serve --image-map FILE` does.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from mini_kube.client import ApiError
from mini_kube.machinery.refs import NAMESPACES

from .cluster import MiniKube


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--mini-kube-image-map", default=None, metavar="FILE",
                     help="the mini-kube fixtures' nodes map images to local commands as this file says")
    parser.addini("mini_kube_image_map", "the mini-kube fixtures' image map file (as --mini-kube-image-map)")


def image_map(config: pytest.Config) -> str | None:
    """The image map the fixtures' clusters use, if any."""
    return config.getoption("--mini-kube-image-map") or config.getini("mini_kube_image_map") or None


@pytest.fixture
def mini_kube(request: pytest.FixtureRequest) -> Iterator[MiniKube]:
    with MiniKube(image_map=image_map(request.config)) as kube:
        yield kube


@pytest.fixture(scope="session")
def mini_kube_session(request: pytest.FixtureRequest) -> Iterator[MiniKube]:
    with MiniKube(image_map=image_map(request.config)) as kube:
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
