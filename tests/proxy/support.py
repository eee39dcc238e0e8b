"""Test backends for the proxy (small TCP and UDP servers on loopback addresses, each answering with its
name), Service and EndpointSlice builders, and a cluster network namespace for ClusterIP tests."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import threading
from typing import Any

from tests.helpers import eventually  # noqa: F401 - the proxy tests import it from here


def loopback_block() -> str:
    """A random 127.A.B block, as a cluster gets."""
    return f"127.{random.randint(100, 250)}.{random.randint(0, 255)}"


class TcpBackend:
    """A threaded TCP server on ip:port. The first line a client sends is a command:
    `name` (answer the name, close), `echo` (echo until EOF, then `done <bytes>`, close),
    `hold` (answer `held <name>`, then echo lines until EOF), `flood <n>` (send n bytes, counting them in
    `flooded` as they leave)."""

    def __init__(self, name: str, ip: str, port: int = 0, sock: socket.socket | None = None) -> None:
        self.name = name
        self.sock = sock or socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((ip, port))
        self.sock.listen(128)
        self.address = self.sock.getsockname()
        self.accepted = 0
        self.flooded = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            stream = conn.makefile("rwb", buffering=0)
            command = stream.readline().strip()
            if command == b"name":
                conn.sendall(self.name.encode() + b"\n")
            elif command == b"echo":
                total = 0
                while data := conn.recv(65536):
                    total += len(data)
                    conn.sendall(data)
                conn.sendall(f"done {total}\n".encode())
            elif command.startswith(b"flood "):
                left = int(command.split()[1])
                block = bytes(65536)
                while left > 0:
                    sent = conn.send(block[:left])
                    self.flooded += sent
                    left -= sent
            elif command == b"hold":
                conn.sendall(f"held {self.name}\n".encode())
                while line := stream.readline():
                    conn.sendall(line)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


class UdpBackend:
    """Answers every datagram with `<name>:<datagram>`."""

    def __init__(self, name: str, ip: str, port: int = 0, sock: socket.socket | None = None) -> None:
        self.name = name
        self.sock = sock or socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((ip, port))
        self.address = self.sock.getsockname()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                data, peer = self.sock.recvfrom(65535)
                self.sock.sendto(self.name.encode() + b":" + data, peer)
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()


def endpoint(ip: str, *, ready: bool = True, serving: bool | None = None, terminating: bool = False,
             node: str | None = None) -> dict[str, Any]:
    conditions = {"ready": ready, "serving": ready if serving is None else serving, "terminating": terminating}
    found: dict[str, Any] = {"addresses": [ip], "conditions": conditions}
    if node:
        found["nodeName"] = node
    return found


def slice_body(service: str, name: str, endpoints: list[dict[str, Any]], port: int, protocol: str = "TCP",
               port_name: str = "") -> dict[str, Any]:
    """An EndpointSlice of a selectorless Service (written by hand, not by the controller)."""
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "labels": {"kubernetes.io/service-name": service}},
            "addressType": "IPv4", "endpoints": endpoints,
            "ports": [{"name": port_name, "port": port, "protocol": protocol}]}


def service_body(name: str, port: int = 80, *, kind: str = "NodePort", protocol: str = "TCP",
                 **spec: Any) -> dict[str, Any]:
    """A selectorless Service."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"type": kind, "ports": [{"port": port, "protocol": protocol}], **spec}}


def ask_name(address: tuple[str, int], timeout: float = 5.0, sock: socket.socket | None = None) -> str:
    """Connect through the proxy, ask the backend's name."""
    conn = sock or socket.socket()
    conn.settimeout(timeout)
    with conn:
        conn.connect(address)
        conn.sendall(b"name\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(100)
            if not chunk:
                break
            data += chunk
        return data.decode().strip()


def refused(address: tuple[str, int], sock: socket.socket | None = None) -> bool:
    """The connection is refused or reset at once (no endpoint)."""
    conn = sock or socket.socket()
    conn.settimeout(2)
    with conn:
        try:
            conn.connect(address)
            conn.sendall(b"name\n")
            return conn.recv(100) == b""
        except (ConnectionRefusedError, ConnectionResetError):
            return True


# -- a cluster network namespace, as the network package makes one -------------------------------------------
class ClusterNetns:
    """A network namespace held by a child process, with lo up and the service CIDR routed locally, as the
    cluster network's; the pod range is local too, so that test backends can bind any pod address in it."""

    def __init__(self, service_cidr: str = "10.0.0.0/24", pod_cidr: str = "10.244.0.0/16") -> None:
        script = (f"ip link set lo up && ip route add local {service_cidr} dev lo && "
                  f"ip route add local {pod_cidr} dev lo && echo ready && exec sleep 3600")
        self.proc = subprocess.Popen(["unshare", "--net", "--", "sh", "-c", script], stdout=subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == b"ready"
        self.path = f"/proc/{self.proc.pid}/ns/net"

    def socket(self, kind: int = socket.SOCK_STREAM) -> socket.socket:
        from mini_kube.network.namespaces import socket_in

        return socket_in(self.path, socket.AF_INET, kind)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def netns_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "making a network namespace needs root"
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "unshare and ip are needed to make a network namespace"
    return None
