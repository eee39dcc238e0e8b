"""The end-to-end suites that pass on SQLite pass on etcd: the REST and watch semantics and the kubectl scenario,
run again with every test cluster on etcd (MINI_KUBE_TEST_ETCD_SERVERS)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


ROOT = Path(__file__).resolve().parents[2]
SUITES = ["tests/apiserver/test_rest_semantics.py", "tests/apiserver/test_watch_semantics.py",
          "tests/apiserver/test_python_clients.py", "tests/kubectl/test_kubectl_scenario.py"]


def test_suites_pass_on_etcd(etcd_server):
    env = {**os.environ, "MINI_KUBE_TEST_ETCD_SERVERS": etcd_server.url}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", *SUITES], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]
