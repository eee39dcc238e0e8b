"""Events about objects, as controllers record them: `kubectl describe` and `kubectl get events` show them.

A repeat of the same event (same object, type, reason and message) within AGGREGATION_WINDOW updates the
existing Event's count and lastTimestamp instead of creating another, as client-go's recorder does. As
client-go's EventSourceObjectSpamFilter, a recorder writes at most SPAM_BURST events of one type about one
object, then one more every 1/SPAM_QPS seconds; the rest are dropped (a ReplicaSet scaled by 1,000 writes 25
SuccessfulCreate events, not 1,000). Writing happens on a background task with a bounded queue: recording never
blocks a reconcile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from mini_kube.machinery.refs import EVENTS
from mini_kube.machinery.times import now_rfc3339

from .rest import ApiClient, ApiError

log = logging.getLogger("mini-kube.events")
AGGREGATION_WINDOW = 600.0
QUEUE_LIMIT = 1000
SPAM_BURST, SPAM_QPS = 25, 1 / 300  # client-go's defaultSpamBurst, defaultSpamQPS
SPAM_KEYS = 4096  # objects whose budgets are remembered (client-go's LRU size)


class EventRecorder:
    """`event(obj, type, reason, message)` for one component (`source.component`, `reportingComponent`); a
    `field_path` names the part of the object the event is about (`spec.containers{web}`), as the kubelet's
    container events do."""

    def __init__(self, client: ApiClient, component: str, host: str = "") -> None:
        self.client = client
        self.component = component
        self.host = host
        self._queue: asyncio.Queue[tuple[dict[str, Any], str, str, str, str]] = asyncio.Queue(QUEUE_LIMIT)
        self._seen: dict[tuple[str, str, str, str, str], tuple[str, str, int, float]] = {}
        self._stamp = 0  # the last event name's nanoseconds (names stay unique and ordered)
        self._task: asyncio.Task[None] | None = None
        self._budgets: dict[tuple[str, ...], tuple[float, float]] = {}  # spam key -> (tokens, when counted)
        self.dropped = 0
        self.filtered = 0  # events over an object's budget (the spam filter), not written

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str, field_path: str = "") -> None:
        """Record an event about `obj` (returns at once)."""
        if not self._allowed(obj, type_):
            self.filtered += 1
            return
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"events-{self.component}")
        try:
            self._queue.put_nowait((obj, type_, reason, message, field_path))
        except asyncio.QueueFull:
            self.dropped += 1

    def _allowed(self, obj: dict[str, Any], type_: str) -> bool:
        """Take a token from the budget of this object and event type (a token bucket of SPAM_BURST,
        refilled at SPAM_QPS)."""
        meta = obj.get("metadata") or {}
        key = (obj.get("kind", ""), meta.get("namespace") or "", meta.get("name") or "", meta.get("uid") or "",
               obj.get("apiVersion", ""), type_)
        now = time.monotonic()
        tokens, since = self._budgets.pop(key, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + (now - since) * SPAM_QPS)
        if len(self._budgets) >= SPAM_KEYS:
            del self._budgets[next(iter(self._budgets))]  # the least recently used
        self._budgets[key] = (tokens - 1, now) if tokens >= 1 else (tokens, now)
        return tokens >= 1

    async def flush(self) -> None:
        """Wait until every recorded event is written (tests, shutdown)."""
        await self._queue.join()

    async def close(self) -> None:
        if self._task is not None:
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError):  # noqa: UP041
                await asyncio.wait_for(self._queue.join(), 5)
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            item = await self._queue.get()
            try:
                await self._write(*item)
            except Exception as exc:  # an event is best effort
                log.debug("event not written: %s", exc)
            finally:
                self._queue.task_done()

    async def _write(self, obj: dict[str, Any], type_: str, reason: str, message: str, field_path: str) -> None:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        key = (meta.get("uid", ""), field_path, type_, reason, message)
        seen = self._seen.get(key)
        now = now_rfc3339()
        if seen is not None and time.monotonic() - seen[3] < AGGREGATION_WINDOW:
            name, ns, count, _ = seen
            try:
                await self.client.patch(EVENTS, name, {"count": count + 1, "lastTimestamp": now}, ns)
                self._seen[key] = (name, ns, count + 1, time.monotonic())
                return
            except ApiError:
                pass  # gone (expired or deleted): create a new one
        # `<object>.<hex unix nanoseconds>` as client-go names them: by name is by time, which is how `kubectl
        # describe` orders events that share a second
        self._stamp = max(time.time_ns(), self._stamp + 1)
        name = f"{meta.get('name', 'object')}.{self._stamp:x}"
        api_version = obj.get("apiVersion", "")
        event: dict[str, Any] = {
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {"kind": obj.get("kind", ""), "namespace": meta.get("namespace"),
                               "name": meta.get("name"), "uid": meta.get("uid"), "apiVersion": api_version,
                               "resourceVersion": meta.get("resourceVersion"), "fieldPath": field_path},
            "reason": reason, "message": message, "type": type_, "count": 1,
            "firstTimestamp": now, "lastTimestamp": now,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "reportingComponent": self.component, "reportingInstance": self.host,
        }
        event["involvedObject"] = {k: v for k, v in event["involvedObject"].items() if v}
        await self.client.create(EVENTS, event, namespace)
        if len(self._seen) > 10_000:
            self._seen.clear()
        self._seen[key] = (name, namespace, 1, time.monotonic())
