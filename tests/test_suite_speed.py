"""The suite's own plumbing costs no idle time per test."""

from __future__ import annotations

import os
import socket

import pytest


def test_rerun_counts_reach_the_controller_without_waiting_for_delayed_acks(request: pytest.FixtureRequest) -> None:
    """pytest-rerunfailures' connection from a worker to the controller sends each request at once (TCP_NODELAY),
    rather than ~40 ms later when the controller's delayed ACK of the previous message arrives."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("runs in a pytest-xdist worker (the README's test command); without workers there is no connection")
    connection = request.config.failures_db.sock  # type: ignore[attr-defined]
    assert connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
