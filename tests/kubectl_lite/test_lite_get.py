"""kubectl-lite `get` prints what real kubectl prints for the same state (AGE aside)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import yaml

MANIFESTS = """
apiVersion: v1
kind: ConfigMap
metadata: {name: alpha, labels: {tier: web, app: demo}}
data: {a: "1", multi: "line one\\nline two\\n"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: beta, labels: {tier: db}}
data: {b: "true"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx, ports: [{containerPort: 80}]}]}
"""


def _seed(pair) -> None:
    done = pair.kubectl("apply", "-f", "-", input=MANIFESTS)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_tables_match_kubectl(pair):
    _seed(pair)
    pair.same("get", "configmaps")
    pair.same("get", "cm", "alpha")
    pair.same("get", "cm", "-o", "wide")
    pair.same("get", "cm", "-l", "tier=web")
    pair.same("get", "cm", "--show-labels")
    pair.same("get", "cm", "-L", "tier")
    pair.same("get", "cm,deploy")
    pair.same("get", "deploy", "web", "-o", "wide")
    assert [line.split()[0] for line in pair.lite("get", "cm", "--no-headers").stdout.splitlines()] == [
        "alpha", "beta"]
    pair.same("get", "cm", "--field-selector", "metadata.name=beta")
    pair.same("get", "cm", "--chunk-size", "1")
    pair.same("get", "ns", "default", namespaced=False)


@pytest.mark.slow
def test_objects_match_kubectl(pair):
    _seed(pair)
    pair.same("get", "cm", "alpha", "-o", "yaml")
    pair.same("get", "cm", "-o", "yaml")
    pair.same("get", "cm", "-o", "json")
    pair.same("get", "deploy", "web", "-o", "json")
    pair.same("get", "cm", "-o", "name")
    pair.same("get", "cm/alpha", "deploy/web", "-o", "name")
    pair.same("get", "cm", "-o", "jsonpath={.items[*].metadata.name}")
    pair.same("get", "cm", "-o", 'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.data}{"\\n"}{end}')
    pair.same("get", "cm", "alpha", "-o", "jsonpath={.metadata.labels.tier}")
    pair.same("get", "deploy", "-o", 'jsonpath={.items[?(@.metadata.name=="web")].spec.replicas}')


@pytest.mark.slow
def test_errors_and_empty_results_match_kubectl(pair):
    pair.same("get", "cm", "missing")
    pair.same("get", "nosuchkind")
    pair.same("get", "secrets")
    pair.same("get", "cm", "missing", "--ignore-not-found")
    lite = pair.lite("get", "secrets")
    assert lite.stderr.strip() == f"No resources found in {pair.namespace} namespace."


def test_watch_prints_the_table_then_changes(pair):
    _seed(pair)
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.kubectl_lite.cli", "--kubeconfig", pair.kubeconfig, "-n",
                             pair.namespace, "get", "cm", "-w"], stdout=subprocess.PIPE, text=True,
                            env={"KUBECTL_LITE_CACHE_DIR": str(pair.cache), "PATH": "/usr/bin:/bin"})
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[0].split() == ["NAME", "DATA", "AGE"]
        assert [line.split()[0] for line in lines[1:]] == ["alpha", "beta"]
        created = pair.kubectl("create", "configmap", "gamma", "--from-literal=x=y")
        assert created.returncode == 0
        deadline = time.monotonic() + 10
        line = ""
        while "gamma" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
        assert line.split()[:2] == ["gamma", "1"]
    finally:
        proc.kill()
        proc.wait()


def test_yaml_round_trips_as_kubectl_reads_it(pair):
    _seed(pair)
    doc = yaml.safe_load(pair.lite("get", "cm", "alpha", "-o", "yaml").stdout)
    assert doc["data"]["multi"] == "line one\nline two\n"
    listed = json.loads(pair.lite("get", "cm", "-o", "json").stdout)
    assert {i["kind"] for i in listed["items"]} == {"ConfigMap"}
