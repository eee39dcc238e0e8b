"""client-go's rest.InClusterConfig for the agnhost subcommands that call the API server: its address from
KUBERNETES_SERVICE_HOST/PORT, the ServiceAccount's token (read again for every request, as a rotated token must
be) and CA from the mounted files; standard library only."""

from __future__ import annotations

import contextlib
import os
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass

ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_FILE = f"{ACCOUNT}/token"
CA_FILE = f"{ACCOUNT}/ca.crt"


class ConfigError(Exception):
    """No in-cluster configuration (rest.ErrNotInCluster and its kin)."""


class RequestError(Exception):
    """A request that failed: no answer, or a status other than 2xx (`body` holds what came back)."""

    def __init__(self, message: str, body: bytes = b"") -> None:
        super().__init__(message)
        self.body = body


@dataclass(frozen=True)
class InCluster:
    """Where the API server is and how to trust it."""

    host: str
    context: ssl.SSLContext

    @classmethod
    def load(cls) -> InCluster:
        """rest.InClusterConfig: ConfigError with client-go's words when the Pod has no such configuration."""
        host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "")
        if not host or not port:
            raise ConfigError("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                              "KUBERNETES_SERVICE_PORT must be defined")
        try:
            with open(TOKEN_FILE, encoding="utf-8"):
                pass
        except OSError as error:
            raise ConfigError(f"open {TOKEN_FILE}: {(error.strerror or '').lower()}") from None
        context = ssl.create_default_context()
        with contextlib.suppress(OSError, ssl.SSLError):  # client-go logs it, carrying on with the system's roots
            context.load_verify_locations(CA_FILE)
        address = f"[{host}]" if ":" in host else host
        return cls(f"https://{address}:{port}", context)

    @staticmethod
    def token() -> str:
        """The token as the file holds it now."""
        try:
            with open(TOKEN_FILE, encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError:
            return ""

    def authorization(self) -> str:
        """The Authorization header requests carry ("" without a token)."""
        token = self.token()
        return f"Bearer {token}" if token else ""

    def get(self, path: str, timeout: float = 30.0) -> bytes:
        """GET `path`: the body of a 2xx answer, else RequestError."""
        return self.fetch(self.host + path, timeout)

    def fetch(self, url: str, timeout: float = 30.0) -> bytes:
        """GET any URL with the in-cluster credentials and trust (client-go's transport sends the token to
        whatever host a request names): the body of a 2xx answer, else RequestError."""
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        if auth := self.authorization():
            request.add_header("Authorization", auth)
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.context) as answer:
                return bytes(answer.read())
        except urllib.error.HTTPError as error:
            body = error.read()
            raise RequestError(f"the server responded with the status code {error.code}", body) from None
        except (OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise RequestError(f'Get "{url}": {reason}') from None
