"""Fixtures for kubectl-lite: run it and real kubectl side by side against the same cluster and namespace."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import kubectl_binary

AGE = re.compile(r"(?<=\s)(\d+[smhd])+(?=\s|$)")


def normalise(text: str) -> str:
    """Output with AGE cells blanked (the only difference allowed between the two tools)."""
    return AGE.sub("<age>", text)


@dataclass
class Pair:
    """kubectl-lite and kubectl bound to one kubeconfig and namespace."""

    kubeconfig: str
    namespace: str
    cache: Path

    def lite(self, *args: str, input: str | None = None, env: dict[str, str] | None = None,
             namespaced: bool = True) -> subprocess.CompletedProcess[str]:
        ns = ["-n", self.namespace] if namespaced else []
        return subprocess.run([sys.executable, "-m", "mini_kube.kubectl_lite.cli", "--kubeconfig", self.kubeconfig, *ns,
                               *args], capture_output=True, text=True, input=input, timeout=60,
                              env={**os.environ, "KUBECTL_LITE_CACHE_DIR": str(self.cache), **(env or {})})

    def kubectl(self, *args: str, input: str | None = None, env: dict[str, str] | None = None,
                namespaced: bool = True) -> subprocess.CompletedProcess[str]:
        ns = ["-n", self.namespace] if namespaced else []
        return subprocess.run([kubectl_binary(), "--kubeconfig", self.kubeconfig, *ns, *args], capture_output=True,
                              text=True, input=input, timeout=60, env={**os.environ, **(env or {})})

    def same(self, *args: str, namespaced: bool = True) -> str:
        """Run both; assert equal stdout (AGE aside), stderr and exit code; return kubectl-lite's stdout."""
        lite, real = self.lite(*args, namespaced=namespaced), self.kubectl(*args, namespaced=namespaced)
        assert (lite.returncode, normalise(lite.stdout)) == (real.returncode, normalise(real.stdout)), (
            f"{args}\n--- kubectl-lite ({lite.returncode})\n{lite.stdout}{lite.stderr}\n--- kubectl "
            f"({real.returncode})\n{real.stdout}{real.stderr}")
        assert lite.stderr.strip() == real.stderr.strip(), (args, lite.stderr, real.stderr)
        return lite.stdout


@pytest.fixture
def pair(mini_kube_session, kube_namespace: str, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return Pair(mini_kube_session.kubeconfig, kube_namespace, tmp_path_factory.mktemp("lite-cache"))
