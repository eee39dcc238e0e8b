"""Downward API volumes (plain and projected) as upstream's kubelet writes them: resource values in `divisor`
units, a zero divisor counting as 1, and a limit the container does not set read as the node's allocatable."""

from __future__ import annotations

import math

import pytest
from mini_kube.machinery.quantity import decimal_value
from mini_kube.machinery.refs import NODES, PODS

from tests.helpers import kubectl

from .conftest import NODE, eventually, pod, status_of


def _item(path: str, resource: str, divisor: str) -> dict:
    return {"path": path, "resourceFieldRef": {"containerName": "main", "resource": resource, "divisor": divisor}}


def _succeeded_logs(kube, ns: str, name: str) -> str:
    eventually(lambda: status_of(kube, ns, name).get("phase") in ("Succeeded", "Failed"), timeout=30)
    assert status_of(kube, ns, name)["phase"] == "Succeeded"
    return kubectl(kube, "-n", ns, "logs", name).stdout


@pytest.mark.parametrize("projected", [False, True])
def test_resource_values_with_zero_divisors_and_allocatable_defaults(kube, ns, projected):
    items = [_item("cpu_limit", "limits.cpu", "0"), _item("cpu_request", "requests.cpu", "1m"),
             _item("memory_limit", "limits.memory", "0"), _item("memory_request", "requests.memory", "1Mi")]
    source = {"items": items, "defaultMode": 0o400}
    volume = {"name": "podinfo", **({"projected": {"sources": [{"downwardAPI": source}]}} if projected
                                    else {"downwardAPI": source})}
    main = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "250m", "memory": "32Mi"}},
            "command": ["sh", "-c", "for f in cpu_limit cpu_request memory_limit memory_request; do "
                                    "cat /etc/podinfo/$f; echo; done"],
            "volumeMounts": [{"name": "podinfo", "mountPath": "/etc/podinfo"}]}
    kube.client.create(PODS, pod("info", main, restartPolicy="Never", volumes=[volume]), ns)
    allocatable = kube.client.get(NODES, NODE)["status"]["allocatable"]
    cpu = math.ceil(decimal_value(allocatable["cpu"]))
    memory = math.ceil(decimal_value(allocatable["memory"]))
    assert _succeeded_logs(kube, ns, "info").split() == [str(cpu), "250", str(memory), "32"]


def test_fractions_are_rounded_up(kube, ns):
    """A 1250m CPU limit is 2 CPUs, 1 byte over 64Mi is 65Mi, in files and in environment variables alike (a limit
    big enough for the shell: the cgroup enforces it)."""
    items = [_item("cpu_limit", "limits.cpu", "1"), _item("memory_limit", "limits.memory", "1Mi")]
    main = {"name": "main", "image": "busybox",
            "resources": {"limits": {"cpu": "1250m", "memory": "67108865"}},
            "env": [{"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
            "command": ["sh", "-c", "cat /etc/podinfo/cpu_limit; echo; cat /etc/podinfo/memory_limit; echo; echo $CPU"],
            "volumeMounts": [{"name": "podinfo", "mountPath": "/etc/podinfo"}]}
    kube.client.create(PODS, pod("round", main, restartPolicy="Never",
                                 volumes=[{"name": "podinfo", "downwardAPI": {"items": items}}]), ns)
    assert _succeeded_logs(kube, ns, "round").split() == ["2", "65", "2"]
