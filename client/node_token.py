"""The control plane's bearer token towards node-side components: Secret kube-system/mini-kube-kubelet-api.

The API server shows it to the kubelets; kube-proxy's and the cloud-controller-manager's connection records are
served only to requests bearing it. Reading it takes the right to read Secrets in kube-system, so only cluster
admins (and the components, which run with admin credentials) can; `mini-kube trace` reads it through the API.
"""

from __future__ import annotations

import base64
import hmac
import secrets

from mini_kube.machinery.refs import SECRETS

from .rest import AlreadyExists, ApiClient, ApiError, NotFound

NAMESPACE, NAME = "kube-system", "mini-kube-kubelet-api"


async def node_token(client: ApiClient, *, create: bool = False) -> str | None:
    """The token (made and stored first when `create` and there is none yet); None when it cannot be read."""
    try:
        found = await client.get(SECRETS, NAME, NAMESPACE)
        return base64.b64decode(found["data"]["token"]).decode()
    except NotFound:
        if not create:
            return None
    except (ApiError, KeyError, ValueError):
        return None
    token = secrets.token_urlsafe(32)
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": NAME, "namespace": NAMESPACE},
            "type": "Opaque", "data": {"token": base64.b64encode(token.encode()).decode()}}
    try:
        await client.create(SECRETS, body, NAMESPACE)
        return token
    except AlreadyExists:
        return await node_token(client)
    except ApiError:
        return None


def bears(authorization: str | None, token: str | None) -> bool:
    """Whether an Authorization header carries `token` (never when there is no token)."""
    given = (authorization or "").removeprefix("Bearer ").strip()
    return bool(token) and bool(given) and hmac.compare_digest(given, token or "")
