"""kube-system/extension-apiserver-authentication: what an extension API server reads to authenticate the
requests it is sent (upstream's cluster-authentication-trust controller): the client CA, and the front-proxy
CA, allowed names and header names of requests the aggregator forwards."""

from __future__ import annotations

from typing import Any

import orjson

from ..auth.pki import FRONT_PROXY_CLIENT, Pki
from ..registry.generic import Registry, WriteOptions

NAMESPACE, NAME = "kube-system", "extension-apiserver-authentication"
USER_HEADERS, GROUP_HEADERS, EXTRA_PREFIXES = ["X-Remote-User"], ["X-Remote-Group"], ["X-Remote-Extra-"]


def configmap_data(pki: Pki) -> dict[str, str]:
    """The ConfigMap's data, as kube-apiserver writes it (lists as JSON)."""
    return {
        "client-ca-file": pki.ca_pem.decode(),
        "requestheader-allowed-names": orjson.dumps([FRONT_PROXY_CLIENT]).decode(),
        "requestheader-client-ca-file": pki.front_proxy_ca_path.read_text(),
        "requestheader-extra-headers-prefix": orjson.dumps(EXTRA_PREFIXES).decode(),
        "requestheader-group-headers": orjson.dumps(GROUP_HEADERS).decode(),
        "requestheader-username-headers": orjson.dumps(USER_HEADERS).decode(),
    }


async def publish(registry: Registry, pki: Pki) -> None:
    """Create or refresh the ConfigMap."""
    res = registry.resources.lookup("", "v1", "configmaps")
    assert res is not None
    data = configmap_data(pki)
    opts = WriteOptions(field_manager="kube-apiserver")
    current = registry.find(res, NAMESPACE, NAME)
    if current is None:
        await registry.create(res, NAMESPACE, {"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": NAME, "namespace": NAMESPACE}, "data": data}, opts)
    elif current.obj.get("data") != data:
        def refresh(obj: dict[str, Any]) -> dict[str, Any]:
            obj["data"] = data
            return obj

        await registry.guaranteed_update(res, NAMESPACE, NAME, refresh, opts)
