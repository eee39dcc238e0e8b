"""A small async client for etcd v3 through etcd's own gRPC-gateway JSON API (`/v3/kv/*`, `/v3/watch`), on
aiohttp, which the project already uses: no gRPC stack to install or import.

Keys and values travel base64-encoded; int64 fields as JSON strings, as the gateway writes them. Several
endpoints are tried in turn when one does not answer.
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson


class EtcdError(Exception):
    """etcd refused or failed a request; ``code`` is the gRPC status code when it sent one."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class EtcdCompacted(EtcdError):
    """A read or watch asked for a revision etcd has compacted; ``compact_revision`` is etcd's."""

    def __init__(self, compact_revision: int) -> None:
        super().__init__(f"required revision has been compacted (compact revision {compact_revision})")
        self.compact_revision = compact_revision


class EtcdFutureRevision(EtcdError):
    """A read asked for a revision etcd has not reached."""


def b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def range_end(prefix: bytes) -> bytes:
    """The first key after every key starting with ``prefix`` (etcd's prefix range end)."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\0"  # every key


@dataclass(frozen=True, slots=True)
class TlsOptions:
    """Client TLS for etcd: a CA to verify it, and a client certificate it may ask for."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file and self.key_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context


class EtcdClient:
    """The handful of etcd v3 calls the store needs: range, txn, watch, compact, status."""

    def __init__(self, endpoints: list[str], tls: TlsOptions | None = None) -> None:
        if not endpoints:
            raise ValueError("at least one etcd endpoint is needed")
        self.endpoints = [e.rstrip("/") for e in endpoints]
        self._tls = tls
        self._session: aiohttp.ClientSession | None = None
        self._next = 0

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            ssl_context = self._tls.context() if self._tls else None
            connector = aiohttp.TCPConnector(limit=256, ssl=ssl_context or True)
            self._session = aiohttp.ClientSession(connector=connector,
                                                  timeout=aiohttp.ClientTimeout(total=None, sock_connect=5))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def call(self, path: str, body: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        """POST one request, moving on to the next endpoint when one cannot be reached (`timeout` s each)."""
        data = orjson.dumps(body)
        last: Exception | None = None
        for attempt in range(len(self.endpoints)):
            endpoint = self.endpoints[(self._next + attempt) % len(self.endpoints)]
            try:
                async with self.session.post(endpoint + path, data=data,
                                             timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                    raw = await response.read()
                    answer = orjson.loads(raw) if raw else {}
                    if response.status >= 400:
                        raise _error(answer, response.status)
                    return answer
            except (aiohttp.ClientConnectionError, TimeoutError) as exc:
                last = exc if str(exc) else TimeoutError(f"no answer within {timeout:g} s")
                self._next = (self._next + attempt + 1) % len(self.endpoints)
        raise EtcdError(f"no etcd endpoint answered: {last}")

    # -- KV ------------------------------------------------------------------------------------------------
    async def range(self, key: str, *, prefix: bool = False, start: str | None = None, end: bytes | None = None,
                    revision: int = 0, limit: int = 0, count_only: bool = False) -> dict[str, Any]:
        body: dict[str, Any] = {"key": b64(start if start is not None else key)}
        if prefix:
            body["range_end"] = b64(end if end is not None else range_end(key.encode()))
        if revision:
            body["revision"] = str(revision)
        if limit:
            body["limit"] = str(limit)
        if count_only:
            body["count_only"] = True
        return await self.call("/v3/kv/range", body)

    async def txn(self, compare: list[dict[str, Any]], success: list[dict[str, Any]],
                  failure: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return await self.call("/v3/kv/txn", {"compare": compare, "success": success, "failure": failure or []})

    async def compact(self, revision: int) -> None:
        await self.call("/v3/kv/compaction", {"revision": str(revision), "physical": False})

    async def current_revision(self) -> int:
        """etcd's revision now (a linearizable read of one key)."""
        answer = await self.call("/v3/kv/range", {"key": b64("\0"), "count_only": True})
        return int(answer["header"]["revision"])

    # -- watch ---------------------------------------------------------------------------------------------
    async def watch(self, prefix: str, start_revision: int, *, exact: bool = False,
                    progress_notify: bool = False) -> AsyncIterator[dict[str, Any]]:
        """The watch stream's results (each with ``header`` and ``events``) from ``start_revision`` on.

        Raises EtcdCompacted when the start is compacted (etcd cancels the watch with the compact revision).
        """
        request: dict[str, Any] = {"key": b64(prefix), "start_revision": str(max(1, start_revision)),
                                   "prev_kv": True, "progress_notify": progress_notify}
        if not exact:
            request["range_end"] = b64(range_end(prefix.encode()))
        endpoint = self.endpoints[self._next % len(self.endpoints)]
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=None)
        async with self.session.post(endpoint + "/v3/watch", data=orjson.dumps({"create_request": request}),
                                     timeout=timeout) as response:
            if response.status >= 400:
                raise _error(orjson.loads(await response.read() or b"{}"), response.status)
            buffer = b""
            async for chunk in response.content.iter_any():
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if not line.strip():
                        continue
                    message = orjson.loads(line)
                    if "error" in message:
                        raise _error(message["error"], 500)
                    result = message.get("result") or {}
                    if result.get("compact_revision") and result.get("canceled"):
                        raise EtcdCompacted(int(result["compact_revision"]))
                    if result.get("canceled"):
                        raise EtcdError(f"etcd cancelled the watch: {result.get('cancel_reason', '')}")
                    yield result


def _error(body: dict[str, Any], status: int) -> EtcdError:
    message = str(body.get("message") or body.get("error") or body)
    code = int(body.get("code") or 0)
    if "required revision has been compacted" in message:
        return EtcdCompacted(0)
    if "required revision is a future revision" in message:
        return EtcdFutureRevision(message, code)
    return EtcdError(f"etcd answered {status}: {message}", code)
