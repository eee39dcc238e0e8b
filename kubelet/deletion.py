"""The kubelet's final delete of a Pod (grace period 0, once its containers are gone), retried with back-off
until it is done: upstream's status manager deletes a terminated Pod on every sync until the API server has
removed it, so an API error (a 500, a connection reset) never leaves the Pod Terminating."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp
from mini_kube.client import ApiClient, ApiError, Conflict, NotFound
from mini_kube.machinery.refs import PODS

from .inflight import to_the_end

log = logging.getLogger("mini-kube.kubelet")
FIRST_RETRY, MAX_RETRY = 0.2, 10.0  # seconds between attempts (doubling)


async def final_delete(client: ApiClient, pod: dict[str, Any]) -> None:
    """Delete `pod` (this uid only) with grace period 0; done when it succeeds or the Pod is gone (404, or the
    uid precondition failing: the name now belongs to another Pod)."""
    meta = pod["metadata"]
    delay = FIRST_RETRY
    while True:
        try:
            await to_the_end(client.delete(PODS, meta["name"], meta["namespace"], body={
                "gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}}))
            return
        except NotFound:
            return
        except (ApiError, aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:  # noqa: UP041
            if isinstance(exc, Conflict) and "Precondition failed: UID" in str(exc.body.get("message", "")):
                return  # the name now belongs to another Pod: ours is gone
            log.warning("pod %s/%s: final delete failed, again in %.1fs: %s", meta["namespace"], meta["name"],
                        delay, exc)
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_RETRY)
