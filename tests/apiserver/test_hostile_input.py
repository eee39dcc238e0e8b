"""Hostile input found by a sweep of the API server: each gets a clear 4xx Status and changes nothing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest


def _send(kube, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
          ) -> tuple[int, dict]:
    request = urllib.request.Request(kube.url + path, data=body, method=method, headers={
        "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_corrupt_compressed_body_is_a_bad_request(mini_kube_session, kube_namespace, encoding):
    path = f"/api/v1/namespaces/{kube_namespace}/configmaps"
    status, answer = _send(mini_kube_session, "POST", path, b"\x1f\x8b not compressed at all",
                           {"Content-Encoding": encoding})
    assert (status, answer["kind"], answer["reason"]) == (400, "Status", "BadRequest"), answer
    assert f"Can not decode content-encoding: {encoding}" in answer["message"]
    assert _send(mini_kube_session, "GET", path)[1]["items"] == []
