"""`kubectl-lite describe pod` prints what real kubectl prints for the same Pod (ages aside): command and args,
ports, state, resources, probes, env and envFrom, mounts, volumes, conditions one to a line, QoS class,
node selectors, tolerations, then the Events table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.helpers import eventually, kubectl, kubectl_binary

AGE = re.compile(r"(?<=\s)(\d+[smhd])+(?=\s|$)")


def normalise(text: str) -> str:
    return AGE.sub("<age>", text)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d", "labels": {"app": "d", "tier": "x"},
                                                        "annotations": {"note": "described"}},
       "spec": {"terminationGracePeriodSeconds": 0, "containers": [
           {"name": "main", "image": "busybox", "command": ["sh", "-c", "sleep 1000"], "args": ["x"],
            "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 53, "protocol": "UDP"}],
            "env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "C", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}},
                    {"name": "D", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optional": True}}}],
            "envFrom": [{"configMapRef": {"name": "cm"}}, {"prefix": "S_", "secretRef": {"name": "s"}}],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
            "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 5},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"},
                             {"name": "cfg", "mountPath": "/cfg", "readOnly": True, "subPath": "k"}]},
           {"name": "side", "image": "nginx"}],
           "volumes": [{"name": "data", "emptyDir": {"medium": "Memory"}}, {"name": "cfg", "configMap": {"name": "cm"}},
                       {"name": "sec", "secret": {"secretName": "s"}},
                       {"name": "info", "downwardAPI": {"items": [{"path": "labels",
                                                                   "fieldRef": {"fieldPath": "metadata.labels"}}]}}],
           "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                           {"operator": "Exists"}]}}


@pytest.fixture(scope="module")
def kube():
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=1, node_runtime="simulated") as cluster:
        kubectl(cluster, "create", "configmap", "cm", "--from-literal=k=v")
        kubectl(cluster, "create", "secret", "generic", "s", "--from-literal=k=v")
        yield cluster


def _both(kube, *args: str) -> tuple[str, str]:
    lite = subprocess.run([sys.executable, "-m", "mini_kube.kubectl_lite.cli", "--kubeconfig", kube.kubeconfig, *args],
                          capture_output=True, text=True, timeout=60, env=os.environ)
    real = subprocess.run([kubectl_binary(), "--kubeconfig", kube.kubeconfig, *args], capture_output=True, text=True,
                          timeout=60)
    assert lite.returncode == real.returncode == 0, (lite.stderr, real.stderr)
    return lite.stdout, real.stdout


def _same(kube, *args: str) -> str:
    lite, real = _both(kube, *args)
    lite_head, _, lite_events = lite.partition("\nEvents:")
    real_head, _, real_events = real.partition("\nEvents:")
    assert lite_head == real_head, f"--- kubectl-lite\n{lite}\n--- kubectl\n{real}"
    # events with the same time may come in either order: the table's lines, ages blanked
    assert sorted(normalise(lite_events).splitlines()) == sorted(normalise(real_events).splitlines()), (lite, real)
    return lite


def test_a_running_pod_is_described_as_kubectl_describes_it(kube):
    kubectl(kube, "apply", "-f", "-", input=json.dumps({**POD, "spec": {**POD["spec"], "nodeName": "mini-kube"}}))
    eventually(lambda: json.loads(kubectl(kube, "get", "pod", "d", "-o", "json").stdout)["status"].get(
        "phase") == "Running")
    out = _same(kube, "describe", "pod", "d")
    assert "  PodReadyToStartContainers   True \n" in out and "    Command:\n      sh\n" in out


def test_a_pending_pod_with_init_containers(kube):
    pending = {**POD, "metadata": {**POD["metadata"], "name": "pending"},
               "spec": {**POD["spec"], "nodeSelector": {"disk": "ssd"},
                        "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}]}}
    kubectl(kube, "apply", "-f", "-", input=json.dumps(pending))
    eventually(lambda: json.loads(kubectl(kube, "get", "pod", "pending", "-o", "json").stdout)["status"].get(
        "conditions"), timeout=30)
    _same(kube, "describe", "pod", "pending")
    _same(kube, "describe", "pods", "-l", "app=d")
