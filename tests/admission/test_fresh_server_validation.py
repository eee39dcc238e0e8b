"""The webhook and policy configurations are validated by the first server a process starts, too: their rules
used to be added to the validation table after the built-in rows had taken theirs, so only servers started
later in the same process (as in most tests) refused a bad configuration."""

from __future__ import annotations

import subprocess
import sys
import time
from types import SimpleNamespace

from tests.helpers import kubectl

BAD = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: bad-condition}
webhooks:
- name: bad.example.com
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  clientConfig: {url: "https://127.0.0.1:9/x"}
  sideEffects: None
  admissionReviewVersions: [v1]
  matchConditions: [{name: bad, expression: "... [] bad expression"}]
"""


def test_a_fresh_server_refuses_a_match_condition_that_does_not_compile(tmp_path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    server = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", ":memory:", "--port",
                               "0", "--kubeconfig", str(kubeconfig), "--nodes", "0", "--no-controllers",
                               "--no-scheduler", "--no-ccm", "--no-dns"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kube = SimpleNamespace(kubeconfig=str(kubeconfig))
    try:
        deadline = time.monotonic() + 60
        while not (kubeconfig.exists() and kubectl(kube, "get", "--raw", "/readyz", check=False).returncode == 0):
            assert time.monotonic() < deadline and server.poll() is None, "the server did not start"
            time.sleep(0.2)
        out = kubectl(kube, "create", "-f", "-", input=BAD, check=False)
        assert out.returncode == 1
        assert "webhooks[0].matchConditions[0].expression: Invalid value: " in out.stderr
        assert "compilation failed" in out.stderr
    finally:
        server.terminate()
        server.wait(30)
