"""The client keeps a kubeconfig's credentials in memory: its CA, client certificate and key are never written to
the temp dir (#24, finding 11: ~135 key files were left there per `serve` start). A temp dir that cannot be
used at all still gives working clients, and a client made while one can leaves nothing in it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from mini_kube.client import ApiClient

from mini_kube.cli import client_for
from mini_kube.testing import MiniKube


@pytest.fixture(scope="module")
def secure_kube():
    with MiniKube(controllers=False, scheduler=False, insecure_http=False) as kube:
        yield kube


def _get_namespace(kube: MiniKube, client: ApiClient) -> str:
    async def go() -> str:
        async with client:
            return (await client.request("GET", "/api/v1/namespaces/default"))["metadata"]["name"]
    return kube.run(go())


def test_clients_work_with_no_usable_temp_dir(secure_kube, tmp_path, monkeypatch):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(not_a_dir))  # any file made in "the temp dir" fails
    assert "client-certificate-data" in Path(secure_kube.kubeconfig).read_text()
    assert _get_namespace(secure_kube, ApiClient.from_kubeconfig(secure_kube.kubeconfig)) == "default"
    assert _get_namespace(secure_kube, client_for(secure_kube.server)) == "default"


def test_clients_leave_nothing_in_the_temp_dir(secure_kube, tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    for _ in range(5):
        assert _get_namespace(secure_kube, ApiClient.from_kubeconfig(secure_kube.kubeconfig)) == "default"
        assert _get_namespace(secure_kube, client_for(secure_kube.server)) == "default"
    assert list(temp.iterdir()) == []
