"""`mini-kube serve` operations (issue #10 items 8, 15, 16): a private data dir, one server per data dir, and
one clear line with a non-zero exit for a busy port or an unusable data dir."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(data: Path, port: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data), "--port",
                             str(port), "--no-controllers", *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _started(proc: subprocess.Popen[str]) -> subprocess.Popen[str]:
    assert "ready at" in proc.stdout.readline()
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)


def _failure(proc: subprocess.Popen[str]) -> tuple[int, str]:
    started = time.monotonic()
    code = proc.wait(20)
    assert time.monotonic() - started < 20
    return code, proc.stderr.read()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_data_dir_is_private_and_fixed_on_start(tmp_path):
    data = tmp_path / "state"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    leftover = data / "notes.txt"  # world-readable, as older versions left their files
    leftover.write_text("x")
    os.chmod(leftover, 0o644)
    image_file = data / "images" / "layers" / "abc" / "bin" / "sh"  # a loaded image's: its modes are the image's
    image_file.parent.mkdir(parents=True)
    image_file.write_text("#!")
    os.chmod(image_file, 0o755)
    proc = _started(_serve(data, _free_port()))
    try:
        assert _mode(data) == 0o700
        assert _mode(data / "state.db") == 0o600
        assert _mode(leftover) == 0o600
        assert _mode(data / "pki" / "ca.key") == 0o600
        assert _mode(image_file) == 0o755 and _mode(image_file.parent) == 0o755
    finally:
        _stop(proc)


def test_a_second_server_on_one_data_dir_exits_before_touching_it(tmp_path):
    data = tmp_path / "state"
    first = _started(_serve(data, _free_port()))
    try:
        before = (data / "state.db").stat().st_mtime_ns
        code, err = _failure(_serve(data, _free_port()))
        assert code != 0
        assert err.strip().splitlines() == [
            f"mini-kube: data dir {data} is in use by another mini-kube server (pid {first.pid}); stop it or "
            "choose another --data-dir"]
        assert (data / "state.db").stat().st_mtime_ns == before
    finally:
        _stop(first)
    _stop(_started(_serve(data, _free_port())))  # free again once the first has stopped


def test_busy_port_is_one_line_and_an_exit(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, err = _failure(_serve(tmp_path / "state", port))
    assert code != 0
    assert err.strip().splitlines() == [f"mini-kube: cannot listen on 127.0.0.1:{port}: address already in use"]


def test_unusable_data_dirs_are_one_line_and_an_exit(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("")
    code, err = _failure(_serve(a_file, _free_port()))
    assert (code != 0, err.strip().splitlines()) == (True, [f"mini-kube: data dir {a_file} is not a directory"])
    code, err = _failure(_serve(a_file / "below", _free_port()))
    assert code != 0 and err.strip().splitlines() == [
        f"mini-kube: data dir {a_file / 'below'} cannot be used: Not a directory"]


def test_a_relative_data_dir_runs_pods(tmp_path):
    """`--data-dir c` (relative, as the conformance README has it): the nodes' root dirs are made absolute, so
    a Pod's sandbox mounts find them (every Pod stayed ContainerCreating: 'mount point does not exist')."""
    kubeconfig = tmp_path / "kc"
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", "c", "--kubeconfig",
                             str(kubeconfig), "--port", str(_free_port()), "--nodes", "1", "--no-ccm", "--no-dns"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _started(proc)
    try:
        kubectl = ["kubectl", "--kubeconfig", str(kubeconfig)]
        subprocess.run([*kubectl, "wait", "--for=condition=Ready", "node", "--all", "--timeout=60s"], check=True,
                       capture_output=True, timeout=90)
        subprocess.run([*kubectl, "run", "hello", "--image=busybox", "--restart=Never", "--", "sh", "-c",
                        "echo hello"], check=True, capture_output=True, timeout=60)
        done = subprocess.run([*kubectl, "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/hello",
                               "--timeout=60s"], capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        logs = subprocess.run([*kubectl, "logs", "hello"], capture_output=True, text=True, timeout=30)
        assert logs.stdout == "hello\n"
    finally:
        _stop(proc)
