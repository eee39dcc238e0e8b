"""Fixtures shared by several test folders."""

from __future__ import annotations

import pytest

from tests.etcd_support import EtcdServer


@pytest.fixture(scope="session")
def etcd_server():
    """One etcd for the session (from the test extras); each test uses its own key prefix."""
    server = EtcdServer()
    yield server
    server.stop()
