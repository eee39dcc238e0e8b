"""The README's scale-out set-up: three `mini-kube serve` processes on one etcd, sharing one PKI, behind one
L4 (TCP) address; kubectl works through it over HTTPS, and keeps working when one server is stopped."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from tests.helpers import kubectl_binary

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RoundRobinBalancer:
    """A minimal TCP balancer (what HAProxy `mode tcp` does): each connection to the next live backend."""

    def __init__(self, backends: list[int]) -> None:
        self.backends = backends
        self.port = _free_port()
        self._next = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(len(self.backends)):
            port = self.backends[self._next % len(self.backends)]
            self._next += 1
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue  # a stopped server: the next one
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
            return
        writer.close()

    def __enter__(self) -> RoundRobinBalancer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(asyncio.start_server(self._handle, "127.0.0.1", self.port),
                                         self._loop).result(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def _serve(data: Path, port: int, etcd: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data), "--port",
                             str(port), "--etcd-servers", etcd, "--etcd-prefix", f"/three-{port}-cluster",
                             "--no-controllers"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert "ready at https://" in proc.stdout.readline()
    return proc


def test_three_servers_behind_one_tcp_address(etcd_server, tmp_path: Path):
    ports = [_free_port() for _ in range(3)]
    prefix_port = ports[0]
    first = tmp_path / "a"
    servers = [_serve(first, prefix_port, etcd_server.url)]
    try:
        for name, port in zip("bc", ports[1:], strict=True):  # both start at once
            shutil.copytree(first / "pki", tmp_path / name / "pki")  # one CA and service-account key for all
            servers.append(subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--join", "--data-dir",
                                             str(tmp_path / name), "--port", str(port), "--etcd-servers",
                                             etcd_server.url, "--etcd-prefix", f"/three-{prefix_port}-cluster"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                            text=True))
        for proc in servers[1:]:
            assert "ready at https://" in proc.stdout.readline()
        with RoundRobinBalancer(ports) as balancer:
            kubeconfig = tmp_path / "lb.kubeconfig"
            kubeconfig.write_text((first / "kubeconfig").read_text().replace(f":{prefix_port}", f":{balancer.port}"))

            def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run([kubectl_binary(), "--kubeconfig", str(kubeconfig), *args],
                                      capture_output=True, text=True, timeout=60)

            for i in range(6):  # every server answers some of these
                assert kubectl("create", "configmap", f"c{i}", "--from-literal=i=1").returncode == 0
            assert kubectl("get", "cm", "-o", "name").stdout.count("configmap/c") == 6
            assert kubectl("create", "serviceaccount", "robot").returncode == 0
            token = kubectl("create", "token", "robot").stdout.strip()
            config = yaml.safe_load(kubeconfig.read_text())
            config["users"][0]["user"] = {"token": token}
            robot = tmp_path / "robot.kubeconfig"
            robot.write_text(yaml.safe_dump(config))
            for _ in range(3):  # a token one server signed is accepted by every server
                who = subprocess.run([kubectl_binary(), "--kubeconfig", str(robot), "auth", "whoami", "-o",
                                      "jsonpath={.status.userInfo.username}"], capture_output=True, text=True)
                assert who.stdout == "system:serviceaccount:default:robot", who.stderr
            servers[0].send_signal(signal.SIGTERM)
            servers[0].wait(15)
            for _ in range(3):
                listed = kubectl("get", "cm", "-o", "name")
                assert listed.returncode == 0 and listed.stdout.count("configmap/c") == 6, listed.stderr
    finally:
        live = [proc for proc in servers if proc.poll() is None]
        for proc in live:
            proc.send_signal(signal.SIGTERM)
        for proc in live:
            proc.wait(15)
