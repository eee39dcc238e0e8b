"""Fixtures of the admission tests: one real TLS webhook server per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.admission.hooks import WebhookServer


@pytest.fixture(scope="session")
def webhook_server() -> Iterator[WebhookServer]:
    server = WebhookServer().start()
    yield server
    server.stop()
