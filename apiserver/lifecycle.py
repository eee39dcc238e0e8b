"""What runs beside the server and what must happen when it stops: background tasks and stop hooks, in the
order they were added (upstream's post-start and pre-shutdown hooks)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

StopHook = Callable[[], Awaitable[None]]


class Lifecycle:
    """Background tasks (cancelled first on stop) and stop hooks (then run in order)."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[Any]] = []
        self.stop_hooks: list[StopHook] = []

    def spawn(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run `work` until the server stops."""
        task = asyncio.create_task(work, name=name)
        self.tasks.append(task)
        return task

    def on_stop(self, hook: StopHook, *, first: bool = False) -> None:
        """Call `hook` when the server stops (before the others when `first`)."""
        if first:
            self.stop_hooks.insert(0, hook)
        else:
            self.stop_hooks.append(hook)

    async def stop(self) -> None:
        """Cancel the tasks, wait for them, then run the stop hooks."""
        tasks, self.tasks = self.tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        hooks, self.stop_hooks = self.stop_hooks, []
        for hook in hooks:
            await hook()
