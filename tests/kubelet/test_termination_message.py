"""Termination messages (upstream's kubelet): the file at a container's terminationMessagePath is its own and
writable by any user; what it holds at exit is the terminated state's message, or with FallbackToLogsOnError and a
failure, the end of its logs. Through real kubectl."""

from __future__ import annotations

import json

import pytest

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, status_of

BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"


def terminated(kube, ns: str, name: str, script: str, **container) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"restartPolicy": "Never",
           "containers": [{"name": "c", "image": BUSYBOX, "command": ["/bin/sh", "-c"], "args": [script],
                           **container}]}}
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps(pod))
    eventually(lambda: status_of(kube, ns, name).get("phase") in ("Succeeded", "Failed"), timeout=30)
    return status_of(kube, ns, name)["containerStatuses"][0]["state"]["terminated"]


@pytest.mark.parametrize(("script", "container", "code", "message"), [
    ("/bin/echo -n DONE > /dev/termination-log", {"securityContext": {"runAsUser": 0}}, 0, "DONE"),
    ("/bin/echo -n DONE > /dev/termination-custom-log",
     {"terminationMessagePath": "/dev/termination-custom-log", "securityContext": {"runAsUser": 1000}}, 0, "DONE"),
    ("/bin/echo -n DONE; /bin/false", {"terminationMessagePolicy": "FallbackToLogsOnError"}, 1, "DONE"),
    ("/bin/echo -n DONE; /bin/true", {"terminationMessagePolicy": "FallbackToLogsOnError"}, 0, None),
    ("/bin/echo -n OK > /dev/termination-log; /bin/echo -n DONE; /bin/false",
     {"terminationMessagePolicy": "FallbackToLogsOnError"}, 1, "OK"),
])
def test_the_terminated_state_carries_the_termination_message(process_cluster, script, container, code, message):
    ns = new_namespace(process_cluster)
    state = terminated(process_cluster, ns, "t", script, **container)
    assert state["exitCode"] == code and state.get("message") == message, state
