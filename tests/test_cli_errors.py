"""`mini-kube`'s refusals are one `mini-kube: ...` line and exit code 1, never a traceback or a hang; a refused
`serve` creates nothing (no data dir, CA or store)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


def _mini_kube(*args: str) -> subprocess.CompletedProcess[str]:
    return _all([list(args)])[0]


def _all(commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Run the commands side by side (each start imports most of mini-kube); their results in order."""
    procs = [subprocess.Popen([sys.executable, "-m", "mini_kube.cli", *c], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in commands]
    done = []
    for command, proc in zip(commands, procs, strict=True):
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        done.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    return done


def test_a_missing_kubeconfig_is_one_line(tmp_path):
    commands = [["trace", "http://web.default.lb.mini-kube.local/"], ["controllers"], ["ccm"], ["dns"],
                ["proxy", "--node", "n1"], ["node", "--name", "n1"], ["scheduler"], ["operator"]]
    for done in _all([[*c, "--kubeconfig", str(tmp_path / "nope")] for c in commands]):
        assert (done.returncode, done.stderr.splitlines()) == (
            1, [f"mini-kube: cannot use kubeconfig {tmp_path / 'nope'}: No such file or directory"]), done.args


def test_a_kubeconfig_that_is_not_yaml_is_one_line(tmp_path):
    bad = tmp_path / "kubeconfig"
    bad.write_text("clusters: [\n")
    done = _mini_kube("dns", "--kubeconfig", str(bad))
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"mini-kube: cannot use kubeconfig {bad}: ")


REFUSED = [
    (["--port", "99999"], "--port 99999 is not a port: must be between 0 and 65535"),
    (["--port", "0", "--dns-port", "-1"], "--dns-port -1 is not a port: must be between 0 and 65535"),
    (["--port", "0", "--nodes", "-1"], "--nodes -1 must not be negative"),
    (["--port", "0", "--join"], "--join adds an API server to a cluster on a shared store: it needs --etcd-servers"),
    (["--port", "0", "--service-cluster-ip-range", "nope"],
     "--service-cluster-ip-range 'nope' is not a CIDR (e.g. 10.0.0.0/24)"),
    (["--port", "0", "--lb-pool", "10.0.0.1-5"],
     "--lb-pool 10.0.0.1-5: load balancer addresses must be in 127.0.0.0/8 (got 10.0.0.1)"),
]


def test_refused_serve_arguments_create_nothing(tmp_path):
    data = tmp_path / "data"
    for done, (_, message) in zip(_all([["serve", "--data-dir", str(data), *a] for a, _ in REFUSED]), REFUSED,
                                  strict=True):
        assert (done.returncode, done.stderr.splitlines()) == (1, [f"mini-kube: {message}"])
    assert not data.exists()


def test_a_busy_port_creates_nothing(tmp_path):
    data = tmp_path / "data"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _mini_kube("serve", "--data-dir", str(data), "--port", str(port))
    assert (done.returncode, done.stderr.splitlines()) == (
        1, [f"mini-kube: cannot listen on 127.0.0.1:{port}: address already in use"])
    assert not data.exists()


LOADED = """import sys
from mini_kube.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    print(exc.code, file=sys.stderr)
print(sorted(name for name in sys.modules if name.partition(".")[0] == "aiohttp" or name.startswith("mini_kube.client")
             or name.startswith("mini_kube.apiserver")))
"""


def test_a_refusal_loads_neither_the_client_nor_the_component(tmp_path):
    """A kubeconfig that cannot be used, or a refused `serve` argument, is said before the client (aiohttp and its
    TLS contexts), the API server or the component load: about 0.2 CPU-seconds rather than 0.5-0.6."""
    nope = str(tmp_path / "nope")
    commands = [["dns", "--kubeconfig", nope], ["controllers", "--kubeconfig", nope],
                ["operator", "--kubeconfig", nope], ["serve", "--data-dir", nope, "--port", "99999"]]
    procs = [subprocess.Popen([sys.executable, "-c", LOADED, *c], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for c in commands]
    for command, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate(timeout=60)
        assert err.startswith("mini-kube: ") and (command[0] == "serve" or f"cannot use kubeconfig {nope}" in err), err
        assert out.strip() == "[]", (command, out)
