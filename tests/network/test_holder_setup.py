"""A namespace holder with a setup (network/namespaces.py Holder(setup=...)), as a Pod's sandbox is made: the
setup runs inside the new namespaces before the holder sleeps, `ready` returns once it has (the holder's word on
its stdout, awaited on the event loop), and a setup that fails is the holder's failure, saying why."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def namespaces_possible():
    from mini_kube.network.namespaces import can_make_namespaces

    possible, why = can_make_namespaces()
    if not possible:
        pytest.skip(f"namespaces cannot be made here: {why}")


def test_the_setup_has_run_in_the_namespaces_when_the_holder_is_ready() -> None:
    from mini_kube.network.namespaces import Holder

    async def made() -> Holder:
        holder = Holder(mount=True, uts=True, pid=True,
                        setup="printf %s set-up > /proc/sys/kernel/hostname && ip link set lo up")
        await holder.ready()
        return holder

    holder = asyncio.run(made())
    try:
        assert Path(f"/proc/{holder.pid}/task/{holder.pid}/children").read_text().split()  # its first process
        assert os.uname().nodename != "set-up"  # the host's own is untouched
        inside = subprocess.run(["nsenter", f"--uts=/proc/{holder.pid}/ns/uts", f"--net={holder.netns}", "sh", "-c",
                                 "hostname; ip -o link show lo"], capture_output=True, text=True, check=True).stdout
        assert inside.splitlines()[0] == "set-up" and "UP" in inside.splitlines()[1]
    finally:
        holder.close()


def test_a_setup_that_fails_is_the_holders_failure_saying_why() -> None:
    from mini_kube.network.namespaces import Holder

    async def made() -> None:
        holder = Holder(mount=True, setup="echo 'RTNETLINK answers: File exists' >&2; false")
        try:
            await holder.ready()
        finally:
            holder.close()

    with pytest.raises(OSError, match="cannot make a namespace: RTNETLINK answers: File exists"):
        asyncio.run(made())
