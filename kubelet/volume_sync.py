"""A running Pod's ConfigMap, Secret, downward API and projected volumes kept up to date, as the kubelet's periodic
sync does (its syncFrequency, one minute upstream): a changed ConfigMap or Secret, one created or deleted when the
volume says `optional`, and the Pod's changed labels or annotations (sooner: at once after the Pod's update) reach
the files, written atomically (atomic_writer.py). A volume that cannot be made now keeps its files and is reported
(FailedMount). A projected service-account token is asked for again only once 80% of its lifetime has passed, as
upstream's token manager renews it, not at every sync."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .env import Getter
from .volumes import REFRESHED, TokenRequester, VolumeError, refresh_volumes

RENEW_AT = 0.8  # of a token's lifetime
DEFAULT_EXPIRATION = 3607


class TokenCache:
    """Tokens for projected serviceAccountToken sources, each kept until 80% of its lifetime has passed."""

    def __init__(self, request: Callable[[dict[str, Any], dict[str, Any]], Awaitable[str]]) -> None:
        self.request = request
        self.tokens: dict[tuple[str, str, int], tuple[str, float]] = {}

    async def __call__(self, pod: dict[str, Any], source: dict[str, Any]) -> str:
        lifetime = int(source.get("expirationSeconds") or DEFAULT_EXPIRATION)
        key = (source.get("path", ""), source.get("audience") or "", lifetime)
        kept = self.tokens.get(key)
        if kept is not None and kept[0] and time.monotonic() - kept[1] < RENEW_AT * lifetime:
            return kept[0]
        token = await self.request(pod, source)
        self.tokens[key] = (token, time.monotonic())
        return token


def refreshable(pod: dict[str, Any]) -> bool:
    """Whether the Pod has a volume the sync keeps up to date."""
    return any(kind in volume for volume in (pod.get("spec") or {}).get("volumes") or () for kind in REFRESHED)


class VolumeSync:
    """The sync of one Pod's volumes, while `alive()` says the Pod runs."""

    def __init__(self, pod: Callable[[], dict[str, Any]], directory: Path, get: Getter, token: TokenRequester,
                 memory: tuple[str, str] | None, allocatable: dict[str, str], interval: float,
                 failed: Callable[[VolumeError], None], alive: Callable[[], bool]) -> None:
        self.pod, self.directory, self.get, self.token = pod, directory, get, token
        self.memory, self.allocatable, self.interval = memory, allocatable, interval
        self.failed, self.alive = failed, alive
        self._poked = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if refreshable(self.pod()):
            meta = self.pod()["metadata"]
            self.task = asyncio.create_task(self._run(), name=f"volumes {meta['namespace']}/{meta['name']}")

    def poke(self) -> None:
        """The Pod's metadata changed: sync now rather than at the next period."""
        self._poked.set()

    async def _run(self) -> None:
        while self.alive():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._poked.wait(), self.interval)
            self._poked.clear()
            if not self.alive():
                return
            for error in await refresh_volumes(self.pod(), self.directory, self.get, self.token, self.memory,
                                               self.allocatable):
                self.failed(error)
