"""The stand-in program of image-less containers (kubelet/standin.py) on SIGTERM: it drains like a web server
with a short preStop sleep, so a request already on its way while the Pod's endpoint is being removed is still
answered. Run in a network namespace of its own (the host's namespace listens on loopback only)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from mini_kube.kubelet import standin
from mini_kube.network.namespaces import can_make_namespaces, socket_in

REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


@pytest.fixture
def standin_netns():
    """A stand-in serving on port 8080 in a new network namespace: (process, its namespace's path)."""
    ok, why = can_make_namespaces()
    if not ok:
        pytest.skip(f"needs a network namespace: {why}")
    proc = subprocess.Popen(["unshare", "--net", "--", "sh", "-c", f"ip link set lo up && exec {sys.executable} "
                             f"-I -S {standin.__file__} 8080"], stdout=subprocess.PIPE, text=True,
                            env={"HOSTNAME": "drainer", "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert proc.stdout is not None and proc.stdout.readline().startswith("drainer: serving")
    yield proc, f"/proc/{proc.pid}/ns/net"
    proc.kill()
    proc.wait()


def connect(netns: str) -> socket.socket:
    sock = socket_in(netns)
    sock.settimeout(5)
    sock.connect(("127.0.0.1", 8080))
    return sock


def answer(sock: socket.socket) -> bytes:
    sock.sendall(REQUEST)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    sock.close()
    return b"".join(chunks)


def test_connections_open_or_coming_at_sigterm_are_answered_then_it_exits_0(standin_netns):
    proc, netns = standin_netns
    waiting = connect(netns)  # accepted, its request not sent yet
    time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.05)
    late = connect(netns)  # a connection the proxy made just as the Pod was told to stop
    for sock in (waiting, late):
        assert answer(sock).split(b"\r\n")[0] == b"HTTP/1.1 200 OK"
    assert proc.wait(timeout=standin.DRAIN_MAX + 5) == 0
