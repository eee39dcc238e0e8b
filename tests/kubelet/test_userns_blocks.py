"""The ID blocks of user-namespaced Pods (kubelet/userns.py), as upstream's allocator gives them (the first free
multiple of 65536 from 65536), disjoint across allocators (other nodes, other processes: a lock per block),
freed on release, and a crashed holder's files swept at the next first allocation."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

import pytest
from mini_kube.kubelet.userns import IdMapping, UserNamespaceError, UserNamespaces, host_supports

pytestmark = pytest.mark.skipif(not host_supports(), reason="this kernel cannot run user-namespaced Pods")


def test_blocks_are_the_first_free_multiples_of_65536_and_come_back(tmp_path):
    one, two = UserNamespaces(tmp_path), UserNamespaces(tmp_path)  # two nodes of one server
    assert one.allocate("a") == IdMapping(65536) and one.allocate("a") == IdMapping(65536)  # the Pod's own again
    assert two.allocate("b") == IdMapping(131072)  # held by the other allocator: skipped
    assert one.allocate("c") == IdMapping(196608)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["131072", "196608", "65536"]
    one.release("a")
    assert not (tmp_path / "65536").exists()
    assert two.allocate("d") == IdMapping(65536)  # the first free block again
    assert IdMapping(65536).line() == "0 65536 65536\n"
    one.release_all()
    two.release_all()
    assert list(tmp_path.iterdir()) == []


def test_another_process_holding_a_block_keeps_it(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(tmp_path / '65536')!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        (tmp_path / "196608").touch()  # a crashed process's block: no one holds it
        mine = UserNamespaces(tmp_path)
        assert mine.allocate("pod") == IdMapping(131072)  # the held one skipped
        assert (tmp_path / "65536").exists() and not (tmp_path / "196608").exists()  # the crashed one's swept
    finally:
        holder.kill()
        holder.wait()
    mine.release("pod")


def test_no_free_block_is_upstreams_error(tmp_path):
    small = UserNamespaces(tmp_path, blocks=1)
    small.allocate("first")
    with pytest.raises(UserNamespaceError, match="could not find an empty slot to allocate a user namespace"):
        small.allocate("second")
    fd = os.open(tmp_path / "65536", os.O_RDWR)
    with pytest.raises(BlockingIOError):  # held for as long as the Pod has it
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)
    small.release("first")
