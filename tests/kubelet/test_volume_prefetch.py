"""A Pod's volumes' objects are asked for while its sandbox is made (kubelet/volumes.py warm_tokens with a
Prefetch): every ConfigMap and Secret its volumes name (projected sources too) and its service-account token, all
at once, each once; the first making of its volumes then writes what those answers held, without asking again."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from mini_kube.kubelet.volume_sync import TokenCache
from mini_kube.kubelet.volumes import Prefetch, make_volumes, warm_tokens

POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
       "spec": {"volumes": [
           {"name": "config", "configMap": {"name": "settings"}},
           {"name": "secret", "secret": {"secretName": "creds"}},
           {"name": "token", "projected": {"sources": [
               {"serviceAccountToken": {"path": "token"}},
               {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}]}}
OBJECTS = {("configmaps", "settings"): {"data": {"mode": "fast"}},
           ("secrets", "creds"): {"data": {"password": base64.b64encode(b"hunter2").decode()}},
           ("configmaps", "kube-root-ca.crt"): {"data": {"ca.crt": "CA"}}}


def test_the_volumes_objects_are_asked_for_once_ahead_and_written_from_those_answers(tmp_path):
    asked: list[tuple[str, str, str]] = []
    tokens: list[str] = []

    async def get(kind: str, namespace: str, name: str) -> dict | None:
        asked.append((kind, namespace, name))
        await asyncio.sleep(0.01)
        return OBJECTS.get((kind, name))

    async def request_token(pod: dict, source: dict) -> str:
        tokens.append(source["path"])
        return "a-token"

    async def start() -> dict[str, str]:
        prefetch, token = Prefetch(get), TokenCache(request_token)  # the token kept as the kubelet keeps it
        await warm_tokens(POD, token, prefetch)
        assert sorted(asked) == [("configmaps", "ns", "kube-root-ca.crt"), ("configmaps", "ns", "settings"),
                                 ("secrets", "ns", "creds")]
        return await make_volumes(POD, tmp_path, prefetch, token, tmp_path / "node")

    paths = asyncio.run(start())
    assert len(asked) == 3 and tokens == ["token"]
    assert (Path(paths["config"]) / "mode").read_text() == "fast"
    assert (Path(paths["secret"]) / "password").read_text() == "hunter2"
    assert (Path(paths["token"]) / "ca.crt").read_text() == "CA"
    assert (Path(paths["token"]) / "token").read_text() == "a-token"
