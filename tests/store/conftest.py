"""Fixtures for the store tests."""

from __future__ import annotations

import pytest

from store import Store


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


@pytest.fixture(params=["memory", "file"])
async def any_store(request, tmp_path):
    path = ":memory:" if request.param == "memory" else str(tmp_path / "store.db")
    s = await Store.open(path, compact_interval=0)
    yield s
    await s.close()
