"""Cluster IP and node port claims for API servers that share one store (etcd).

One server's in-flight reservations cannot see another server's, so on a shared store every allocated value is
also claimed with a create-if-absent key (as upstream's IPAddress objects do). A claim whose Service does not
hold the value STALE_SECONDS after it was made (a crash between claim and write, or a later change) is stale
and taken over; a younger one may belong to a write still in flight on another server.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import orjson
from mini_kube.store import KeyExistsError, StoreError

PREFIX = "/mini-kube.dev/allocations/"
STALE_SECONDS = 60.0


def claim_key(kind: str, value: str | int) -> str:
    return f"{PREFIX}{kind}/{value}"


def _holders(ctx: Any, kind: str, value: str | int) -> set[str]:
    """UIDs of stored Services that hold `value` (a cluster IP or a node port)."""
    found = set()
    for entry in ctx.registry.cache.list(ctx.resource.key_prefix):
        spec = entry.obj.get("spec") or {}
        held = spec.get("clusterIPs") or () if kind == "ip" else [p.get("nodePort") for p in spec.get("ports") or ()]
        if value in held:
            found.add(entry.obj["metadata"].get("uid", ""))
    return found


async def claim(ctx: Any, kind: str, value: str | int, uid: str) -> bool:
    """Claim `value` for the Service `uid`; False when another Service holds it."""
    store = ctx.registry.store
    key = claim_key(kind, value)
    for _ in range(3):
        try:
            await store.create(key, orjson.dumps({"uid": uid, "time": time.time()}))
            return True
        except KeyExistsError as exc:
            existing = orjson.loads(exc.current.value)
            if existing.get("uid") == uid:
                return True
            await store.sync()
            if existing.get("uid") in _holders(ctx, kind, value) or \
                    time.time() - existing.get("time", 0) < STALE_SECONDS:
                return False
            with contextlib.suppress(StoreError):  # stale: its Service is gone or moved on
                await store.delete(key, expected_mod_revision=exc.current.mod_revision)
    return False


def release_if_unused(ctx: Any, kind: str, value: str | int) -> None:
    """After a write: drop the claim unless the stored Service now holds the value (the write failed)."""
    if _holders(ctx, kind, value):
        return

    async def drop() -> None:
        with contextlib.suppress(StoreError):
            await ctx.registry.store.delete(claim_key(kind, value))

    asyncio.get_running_loop().create_task(drop())


async def release(ctx: Any, spec: dict[str, Any]) -> None:
    """A deleted Service's claims."""
    values = [("ip", ip) for ip in spec.get("clusterIPs") or () if ip != "None"]
    values += [("port", p["nodePort"]) for p in spec.get("ports") or () if p.get("nodePort")]
    for kind, value in values:
        with contextlib.suppress(StoreError):
            await ctx.registry.store.delete(claim_key(kind, value))
