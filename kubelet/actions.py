"""The actions probes and lifecycle hooks share (upstream's ProbeHandler and LifecycleHandler): exec in the
container (CRI's ExecSync), httpGet and tcpSocket (grpc as TCP) against the Pod's address, and sleep. Probes and
hooks each word their results as upstream's prober and handler runner do."""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .runtime.base import Container, Runtime, Sandbox

# HTTPS probes and hooks: upstream's InsecureSkipVerify (no trust store loaded: nothing is verified against one)
INSECURE_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
INSECURE_TLS.check_hostname = False
INSECURE_TLS.verify_mode = ssl.CERT_NONE

Dialer = Callable[[str, int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]
"""A TCP connection to an address of the Pod network (from the node, or inside the cluster network)."""


@dataclass(frozen=True)
class Target:
    """A container as an action reaches it: through the runtime (exec) or the network (the Pod's address)."""

    runtime: Runtime
    sandbox: Sandbox | None
    container: Container | None  # None: not running
    spec: dict[str, Any]  # the container's spec, whose named ports an action may use
    host: str  # where a network action goes without a `host` of its own: the Pod's IP, else the node's address
    dial: Dialer


def container_port(value: Any, spec: dict[str, Any]) -> int:
    """An action's `port`: a number, or the name of one of the container's ports."""
    if isinstance(value, int) or str(value).isdigit():
        return int(value)
    for port in spec.get("ports") or ():
        if port.get("name") == value:
            return int(port["containerPort"])
    raise ValueError(f"port {value} not found")


def go_dial_error(exc: OSError) -> str:
    """A failed connection as Go's net package words it (`connect: connection refused`)."""
    if exc.errno is None:
        return str(exc) or type(exc).__name__
    text = os.strerror(exc.errno)
    return "connect: " + text[:1].lower() + text[1:]


def address(target: Target, action: dict[str, Any]) -> tuple[str, int]:
    """Where an httpGet or tcpSocket action connects (ValueError for a port the container does not name)."""
    return action.get("host") or target.host, container_port(action.get("port"), target.spec)


def url(action: dict[str, Any], host: str, port: int) -> str:
    return f"{(action.get('scheme') or 'HTTP').lower()}://{host}:{port}{action.get('path') or '/'}"


async def run_exec(target: Target, argv: list[str]) -> tuple[int, bytes]:
    """Run `argv` in the running container: its exit code and output (stdout then stderr)."""
    assert target.container is not None
    return await target.runtime.run(target.sandbox, target.container, argv)


async def connect(target: Target, host: str, port: int, action: dict[str, Any], *, http: bool) -> tuple[bool, str]:
    """A TCP connection, and for httpGet a GET whose status decides (200-399); the connection is closed however
    it ends (a timeout cancels it at any await). (success, why not)."""
    reader, writer = await target.dial(host, port)
    try:
        if not http:
            return True, ""
        if (action.get("scheme") or "HTTP").upper() == "HTTPS":  # as upstream's prober: TLS, nothing verified
            await writer.start_tls(INSECURE_TLS, server_hostname=host)
        path = action.get("path") or "/"
        headers = "".join(f"{h['name']}: {h['value']}\r\n" for h in action.get("httpHeaders") or ())
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: kube-probe/1.32\r\n"
                     f"Accept: */*\r\nConnection: close\r\n{headers}\r\n".encode())
        line = await reader.readline()
        parts = line.split()
        code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        return 200 <= code < 400, f"HTTP probe failed with statuscode: {code}"
    finally:
        writer.close()


async def sleep(action: dict[str, Any]) -> None:
    """The sleep action (`{"seconds": N}`)."""
    await asyncio.sleep(float(action.get("seconds") or 0))
