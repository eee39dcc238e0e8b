"""The scale-out recipe (docs/scale-out.md, linked from the README) run as written (issue #25): its lines one at a time, as a user types them, with
only the etcd URL and the ports swapped for free ones (its own etcd, so the default prefix is the recipe's): the
first server runs the cluster-wide components once, the `--join` servers only the API server; through one TCP
address the cluster has one node, and a Deployment gets exactly its Pods."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.etcd.test_etcd_three_servers import RoundRobinBalancer, _free_port
from tests.etcd_support import EtcdServer
from tests.helpers import kubectl_binary

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


RECIPE = Path(__file__).resolve().parents[2] / "docs" / "scale-out.md"


def _recipe() -> list[str]:
    section = RECIPE.read_text()
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_readme_recipe_runs_as_written(tmp_path):
    lines = _recipe()
    assert lines[0].startswith("etcd ") and sum(line.startswith("mini-kube serve") for line in lines) == 3
    etcd = EtcdServer()
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home),  # `~` is the test's; `mini-kube` is this installation's
           "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    ports: dict[str, int] = {}
    servers: list[subprocess.Popen[str]] = []
    try:
        for line in lines[1:]:
            line = line.replace("http://127.0.0.1:2379", etcd.url)
            line = re.sub(r"--port (\d+)", lambda m: f"--port {ports.setdefault(m.group(1), _free_port())}", line)
            if line.startswith("mini-kube serve"):  # a server in the background: the next line once it is ready
                command = line.split("#")[0].strip().removesuffix("&")
                proc = subprocess.Popen(["bash", "-c", f"exec {command}"], env=env, text=True, cwd=tmp_path,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                servers.append(proc)
                ready = proc.stdout.readline()
                assert "ready at https://" in ready, (line, ready)
            else:
                done = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=30)
                assert done.returncode == 0, (line, done.stderr)
        first = home / "mk-a"
        with RoundRobinBalancer(list(ports.values())) as balancer:
            kubeconfig = tmp_path / "lb.kubeconfig"
            first_port = next(iter(ports.values()))
            kubeconfig.write_text((first / "kubeconfig").read_text().replace(f":{first_port}", f":{balancer.port}"))

            def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run([kubectl_binary(), "--kubeconfig", str(kubeconfig), *args],
                                      capture_output=True, text=True, timeout=60)

            nodes = [kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}").stdout for _ in range(3)]
            assert nodes == ["mini-kube"] * 3  # asked of each server: one node, not one per server
            assert kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2").returncode == 0
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                pods = json.loads(kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
                if len(pods) == 2:
                    break
                time.sleep(0.2)
            time.sleep(2)  # a second controller manager would have made more by now
            assert len(json.loads(kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]) == 2
            assert len(json.loads(kubectl("get", "rs", "-l", "app=web", "-o", "json").stdout)["items"]) == 1
    finally:
        for proc in servers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in servers:
            proc.wait(30)
        etcd.stop()
