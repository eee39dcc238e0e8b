"""The README's throw-away state, `mini-kube serve --data-dir :memory:`: it writes the kubeconfig that kubectl
then uses (`~/.mini-kube/kubeconfig`, or --kubeconfig), and after the server exits nothing of it is left on disk
but that file (no CA key in the temp dir)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import kubectl_binary

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


README = Path(__file__).resolve().parents[1] / "README.md"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_memory_state_writes_the_kubeconfig_and_leaves_nothing_else(tmp_path):
    command = shlex.split(re.search(r"Throw-away state: `(mini-kube serve [^`]*)`", README.read_text()).group(1))
    assert command == ["mini-kube", "serve", "--data-dir", ":memory:"]
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(temp)}
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", *command[1:], "--port", str(_free_port())],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        line = proc.stdout.readline()
        kubeconfig = home / ".mini-kube" / "kubeconfig"
        assert f"kubeconfig: {kubeconfig}" in line, line
        got = subprocess.run([kubectl_binary(), "--kubeconfig", str(kubeconfig), "get", "ns", "kube-system", "-o",
                              "name"], capture_output=True, text=True, timeout=60)
        assert got.stdout == "namespace/kube-system\n", got.stderr
        assert _files(temp)  # while it runs, its CA and nodes live here
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert _files(temp) == set()
    assert _files(home) == {".mini-kube", ".mini-kube/kubeconfig"}


def test_a_signal_while_it_starts_still_leaves_nothing(tmp_path):
    """SIGTERM as soon as the throw-away CA exists (before the port opens): the server finishes starting, stops
    and removes it, rather than dying with its CA key left in the temp dir."""
    import time

    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(temp)}
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", ":memory:", "--port",
                             str(_free_port()), "--dns-port", "0", "--nodes", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while not any(name.startswith("mini-kube-pki-") for name in os.listdir(temp)):
            assert proc.poll() is None and time.monotonic() < deadline, "no throw-away PKI was made"
            time.sleep(0.001)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
    assert code == 0
    assert _files(temp) == set()


def test_what_a_killed_server_left_goes_at_the_next_start(tmp_path):
    """SIGKILL leaves a `:memory:` server no time to clean up: its CA key, component logs and node files stay in
    the temp dir, until the next throw-away server starts and removes what no live server holds."""
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(temp)}

    def serve() -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", ":memory:", "--port",
                                 str(_free_port()), "--dns-port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        assert "ready at https://" in proc.stdout.readline()
        return proc

    killed = serve()
    left = set(os.listdir(temp))
    assert {name.rsplit("-", 1)[0] for name in left} == {"mini-kube-pki", "mini-kube-logs", "mini-kube-nodes"}
    killed.kill()
    killed.wait(30)
    assert set(os.listdir(temp)) == left  # nothing cleaned up: the CA key is still there
    second = serve()
    try:
        now = set(os.listdir(temp))
        assert not now & left, sorted(now)
        assert len(now) == 3
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(30) == 0
    assert _files(temp) == set()


def test_an_abandoned_directory_with_a_mount_beneath_is_left_alone(tmp_path, monkeypatch):
    """Removing a directory with something mounted beneath could reach into what is mounted: it stays until
    that is unmounted."""
    import tempfile

    from mini_kube.machinery.tempdirs import LOCK_FILE, remove_abandoned

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    abandoned = tmp_path / "mini-kube-test-abc"
    (abandoned / "volume").mkdir(parents=True)
    (abandoned / LOCK_FILE).touch()  # a lock file no process holds: its maker is gone
    mounted = subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(abandoned / "volume")], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount here: {mounted.stderr!r}")
    try:
        assert remove_abandoned("mini-kube-test-") == []
        assert abandoned.exists()
    finally:
        subprocess.run(["umount", str(abandoned / "volume")], check=True)
    assert remove_abandoned("mini-kube-test-") == [abandoned]
    assert not abandoned.exists()
