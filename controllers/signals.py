"""Waiting for a component process's end: SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import signal


async def until_signalled() -> None:
    """Wait for SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
