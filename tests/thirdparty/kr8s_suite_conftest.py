"""Run kr8s's own test suite against mini-kube: copy this file over the `conftest.py` at the root of a kr8s
checkout (it replaces the pytest-kind cluster fixture; kr8s's code is not part of mini-kube), then

    mini-kube serve --data-dir :memory: --kubeconfig /tmp/mk/kubeconfig --port 0 --nodes 1 &
    pip install -e ./kr8s pytest pytest-asyncio pytest-timeout pytest-rerunfailures trio lightkube \\
        kubernetes kubernetes-asyncio kubernetes-validate
    MK_KUBECONFIG=/tmp/mk/kubeconfig pytest kr8s -o addopts="" --timeout 60

kind always has Pods in kube-system (coredns, kube-proxy, the static control-plane Pods); mini-kube runs those
components in-process, so about 30 tests that expect some Pod to exist fail. `MK_SYSTEM_POD=1` stands one
pause Pod in kube-system to let them test what they mean to."""

from __future__ import annotations

import gc
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


class Cluster:
    """What kr8s's tests use of pytest-kind's KindCluster."""

    def __init__(self, kubeconfig: str) -> None:
        self.kubeconfig_path = Path(kubeconfig)
        self.kubectl_path = "kubectl"

    def kubectl(self, *args: str) -> str:
        return subprocess.check_output([self.kubectl_path, "--kubeconfig", str(self.kubeconfig_path), *args],
                                       text=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--keep-cluster", action="store_true")


@pytest.fixture
def ensure_gc() -> Iterator[None]:
    gc.collect()
    yield
    gc.collect()


@pytest.fixture(scope="session", autouse=True)
def k8s_cluster() -> Iterator[Cluster]:
    kubeconfig = os.environ["MK_KUBECONFIG"]
    os.environ["KUBECONFIG"] = kubeconfig
    cluster = Cluster(kubeconfig)
    if os.environ.get("MK_SYSTEM_POD"):
        subprocess.run([cluster.kubectl_path, "--kubeconfig", kubeconfig, "-n", "kube-system", "run",
                        "stand-in-system-pod", "--image=registry.k8s.io/pause:3.9"], capture_output=True)
    yield cluster
    del os.environ["KUBECONFIG"]
