"""Writing kubeconfigs that real kubectl and client libraries use as they are (reading them is\nmachinery.kubeconfig's)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's when PyYAML has it: ten times as fast

def kubeconfig_text(server_url: str, *, name: str = "mini-kube", ca_pem: bytes | None = None,
                    user: dict[str, str] | None = None, namespace: str | None = None) -> str:
    """A kubeconfig whose cluster, context and user are all named `name`: the server (and its CA when given),
    the user's credentials (kubeconfig keys: `token`, `client-certificate-data`, ...), the context's namespace."""
    cluster = {"server": server_url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = pem_data(ca_pem)
    context = {"cluster": name, "user": name, **({"namespace": namespace} if namespace else {})}
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "contexts": [{"name": name, "context": context}],
        "current-context": name,
        "preferences": {},
        "users": [{"name": name, "user": user or {}}],
    }
    return yaml.dump(config, Dumper=SAFE_DUMPER, sort_keys=False)


def pem_data(pem: bytes) -> str:
    """PEM bytes as a kubeconfig's `*-data` fields carry them (base64)."""
    return base64.b64encode(pem).decode("ascii")


def write_kubeconfig(path: str, text: str) -> str:
    """Write a kubeconfig (`text`, e.g. the server's `admin_kubeconfig()`) to `path` (0600); return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(text)
    os.chmod(tmp, 0o600)
    tmp.replace(target)
    return str(target)
