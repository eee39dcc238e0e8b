"""Fixtures for the store tests: the SQLite store (in memory and on disk) and the etcd store."""

from __future__ import annotations

import itertools

import pytest
from mini_kube.store import Store
from mini_kube.store.etcd_store import EtcdStore

_prefixes = itertools.count()


@pytest.fixture
async def store():
    s = await Store.open(":memory:", compact_interval=0)
    yield s
    await s.close()


@pytest.fixture
async def file_store(tmp_path):
    s = await Store.open(str(tmp_path / "store.db"), compact_interval=0)
    yield s
    await s.close()


@pytest.fixture(params=["memory", "file", "etcd"])
async def any_store(request, tmp_path):
    """Each backend; the etcd one on a fresh key prefix of a shared etcd (its revisions are etcd's)."""
    if request.param == "etcd":
        etcd = request.getfixturevalue("etcd_server")
        s = await EtcdStore.open([etcd.url], prefix=f"/test-{next(_prefixes)}", compact_interval=0)
    else:
        s = await Store.open(":memory:" if request.param == "memory" else str(tmp_path / "store.db"),
                             compact_interval=0)
    yield s
    await s.close()
