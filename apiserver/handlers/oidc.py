"""Service-account issuer discovery (upstream's ServiceAccountIssuerDiscovery): the OpenID Connect provider
configuration at `/.well-known/openid-configuration` and the key set at `/openid/v1/jwks`, so anyone can check a
service-account token with a stock OIDC library. Access is RBAC's: the bootstrap ClusterRole
`system:service-account-issuer-discovery` is bound to every service account.

The configuration's `jwks_uri` is the key set's path under the issuer's own URL (a Pod reaches the API server
there: `https://kubernetes.default.svc.cluster.local` by default), as upstream's is under its external address."""

from __future__ import annotations

import orjson
from aiohttp import web

from ..auth.sa_token import ServiceAccountTokens
from ..http.responses import HEADERS

CONFIGURATION_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
PATHS = (CONFIGURATION_PATH, JWKS_PATH)
CACHE_CONTROL = "public, max-age=3600"  # upstream's: the keys change only when the server's do


def configuration(tokens: ServiceAccountTokens) -> dict[str, object]:
    """The provider configuration document, with upstream's fields and order."""
    return {
        "issuer": tokens.issuer,
        "jwks_uri": tokens.issuer.rstrip("/") + JWKS_PATH,
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": tokens.algorithms(),
    }


def respond(tokens: ServiceAccountTokens, path: str) -> web.Response:
    """The answer at one of PATHS."""
    if path == CONFIGURATION_PATH:
        body, content_type = configuration(tokens), "application/json"
    else:
        body, content_type = {"keys": tokens.public_jwks()}, "application/jwk-set+json"
    return web.Response(body=orjson.dumps(body), headers={
        **HEADERS, "Content-Type": content_type, "Cache-Control": CACHE_CONTROL})
