"""Objects in etcd through its JSON gateway (`/v3/kv/*`): one key per object, etcd's mod_revision as its
resourceVersion, creates and updates as compare-and-swap transactions."""

from __future__ import annotations

import base64
from typing import Any

import aiohttp
import orjson


class StorageError(Exception):
    """etcd did not answer, or refused."""


class Conflict(Exception):
    """The key exists (create) or changed (update)."""


def _b64(data: str | bytes) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def _prefix_end(prefix: str) -> str:
    raw = bytearray(prefix.encode())
    raw[-1] += 1
    return _b64(bytes(raw))


class Etcd:
    """The first of `endpoints` that answers (http://127.0.0.1:2379)."""

    def __init__(self, endpoints: list[str]) -> None:
        self.endpoints = endpoints
        self._session: aiohttp.ClientSession | None = None

    async def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        problem = "no etcd endpoints"
        for endpoint in self.endpoints:
            try:
                async with self._session.post(endpoint.rstrip("/") + path, data=orjson.dumps(body)) as answer:
                    data = orjson.loads(await answer.read())
                    if answer.status != 200:
                        raise StorageError(str(data.get("message") or data))
                    return data
            except (aiohttp.ClientError, TimeoutError, OSError, orjson.JSONDecodeError) as exc:
                problem = f"{endpoint}: {exc or type(exc).__name__}"
        raise StorageError(problem)

    async def healthy(self) -> bool:
        try:
            await self._call("/v3/kv/range", {"key": _b64("\0"), "count_only": True})
            return True
        except StorageError:
            return False

    @staticmethod
    def _decode(kv: dict[str, Any]) -> dict[str, Any]:
        obj = orjson.loads(base64.b64decode(kv["value"]))
        obj.setdefault("metadata", {})["resourceVersion"] = str(kv.get("mod_revision", "0"))
        return obj

    async def get(self, key: str) -> dict[str, Any] | None:
        kvs = (await self._call("/v3/kv/range", {"key": _b64(key)})).get("kvs") or []
        return self._decode(kvs[0]) if kvs else None

    async def list(self, prefix: str) -> tuple[list[dict[str, Any]], str]:
        """The objects under `prefix` and the revision they were read at."""
        answer = await self._call("/v3/kv/range", {"key": _b64(prefix), "range_end": _prefix_end(prefix)})
        return [self._decode(kv) for kv in answer.get("kvs") or []], str(answer["header"]["revision"])

    async def create(self, key: str, obj: dict[str, Any]) -> dict[str, Any]:
        return await self._write(key, obj, {"key": _b64(key), "target": "CREATE", "create_revision": "0"})

    async def update(self, key: str, obj: dict[str, Any], revision: str) -> dict[str, Any]:
        return await self._write(key, obj, {"key": _b64(key), "target": "MOD", "mod_revision": revision})

    async def _write(self, key: str, obj: dict[str, Any], compare: dict[str, Any]) -> dict[str, Any]:
        stored = {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}}
        answer = await self._call("/v3/kv/txn", {"compare": [{**compare, "result": "EQUAL"}], "success": [
            {"request_put": {"key": _b64(key), "value": _b64(orjson.dumps(stored))}}]})
        if not answer.get("succeeded"):
            raise Conflict(key)
        stored["metadata"]["resourceVersion"] = str(answer["header"]["revision"])
        return stored

    async def delete(self, key: str) -> bool:
        answer = await self._call("/v3/kv/deleterange", {"key": _b64(key)})
        return int(answer.get("deleted") or 0) > 0

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
