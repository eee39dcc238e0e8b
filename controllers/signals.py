"""Waiting for a component process's end: SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import signal


def stop_signals() -> asyncio.Event:
    """An event that SIGINT or SIGTERM sets from now on (a process that must clean up on its way out installs it
    before it makes anything: a signal that came before would end it on the spot)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


async def until_signalled() -> None:
    """Wait for SIGINT or SIGTERM."""
    await stop_signals().wait()
