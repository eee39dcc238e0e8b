"""Hermetic clusters for tests: an in-process API server on an ephemeral port with an in-memory store.

    with MiniKube() as kube:
        subprocess.run(["kubectl", "--kubeconfig", kube.kubeconfig, "get", "ns"])
        kube.client.create(CONFIGMAPS, {...}, namespace="default")

The server runs on its own event loop in a background thread, so sync code (kubectl, the official client)
and async code (kubernetes_asyncio, our ApiClient) can both use it. The pytest plugin in
`apiserver.testing.pytest_plugin` exposes it as fixtures.
"""

from __future__ import annotations

from .cluster import MiniKube, SyncClient

__all__ = ["MiniKube", "SyncClient"]
