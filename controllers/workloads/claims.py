"""Claiming objects for a controller, as upstream's ControllerRefManager does: the owner keeps what it controls
and still selects, releases what it controls but no longer selects (its controller reference removed), and
adopts selected orphans (its controller reference added). Every write is a compare-and-swap on the version seen;
a lost race leaves the object to the next reconcile, or with `adopt_retries` is read again and retried while it
is still an adoptable orphan."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from mini_kube.client import ApiClient, Conflict, NotFound, ResourceRef
from mini_kube.machinery.meta import controller_ref, meta

from .common import controller_of

Check = Callable[[dict[str, Any]], bool]


async def patch_meta(client: ApiClient, ref: ResourceRef, obj: dict[str, Any], changes: dict[str, Any]) -> Any:
    """Merge `changes` into obj's metadata at the version seen (None when it changed or went meanwhile)."""
    with contextlib.suppress(NotFound, Conflict):
        return await client.patch(ref, meta(obj)["name"], {"metadata": {
            **changes, "resourceVersion": meta(obj)["resourceVersion"]}}, meta(obj)["namespace"])
    return None


async def _adopt(client: ApiClient, ref: ResourceRef, owner: dict[str, Any], obj: dict[str, Any],
                 selects: Check, adoptable: Check, retries: int) -> dict[str, Any] | None:
    for attempt in range(retries):
        refs = list(meta(obj).get("ownerReferences") or ()) + [controller_ref(owner)]
        adopted = await patch_meta(client, ref, obj, {"ownerReferences": refs})
        if adopted is not None or attempt == retries - 1:
            return adopted
        try:  # a concurrent write (the scheduler's status update, say): read again
            obj = await client.get(ref, meta(obj)["name"], meta(obj)["namespace"])
        except NotFound:
            return None
        if controller_of(obj) is not None or not adoptable(obj) or not selects(obj):
            return None
    return None


async def claim(client: ApiClient, ref: ResourceRef, owner: dict[str, Any], objects: list[dict[str, Any]], *,
                selects: Check, adoptable: Check = lambda _: True, release: bool = True,
                adopt_retries: int = 1) -> list[dict[str, Any]]:
    """The objects `owner` controls after claiming (adopted ones as written)."""
    uid = meta(owner)["uid"]
    deleting = bool(meta(owner).get("deletionTimestamp"))
    mine = []
    for obj in objects:
        controller = controller_of(obj)
        if controller is not None and controller.get("uid") == uid:
            if selects(obj):
                mine.append(obj)
            elif release:
                refs = [r for r in meta(obj).get("ownerReferences") or () if r.get("uid") != uid]
                await patch_meta(client, ref, obj, {"ownerReferences": refs or None})
        elif controller is None and not deleting and selects(obj) and adoptable(obj):
            adopted = await _adopt(client, ref, owner, obj, selects, adoptable, adopt_retries)
            if adopted is not None:
                mine.append(adopted)
    return mine
