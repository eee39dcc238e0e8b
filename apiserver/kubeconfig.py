"""Writing a kubeconfig that real kubectl and client libraries use as it is."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def kubeconfig_dict(server_url: str, user: dict[str, Any] | None = None,
                    cluster_extra: dict[str, Any] | None = None) -> dict[str, Any]:
    cluster = {"server": server_url, **(cluster_extra or {})}
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": "mini-kube", "cluster": cluster}],
        "users": [{"name": "mini-kube", "user": user or {}}],
        "contexts": [{"name": "mini-kube", "context": {"cluster": "mini-kube", "user": "mini-kube",
                                                        "namespace": "default"}}],
        "current-context": "mini-kube",
    }


def write_kubeconfig(path: str, text: str) -> str:
    """Write a kubeconfig (`text`, e.g. the server's `admin_kubeconfig()`) to `path` (0600); return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(text)
    os.chmod(tmp, 0o600)
    tmp.replace(target)
    return str(target)
