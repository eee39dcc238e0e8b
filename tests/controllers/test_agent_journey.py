"""The full example from outside the cluster, through real sockets (seed 000 for an Agent): request -> the load
balancer -> the Service -> an agent pod (the default runtime's program as a process in its own network and
mount namespaces, its config mounted from the ConfigMap the operator made), which answers with its config.
A config change rolls the pods and the answers follow. Skipped where namespaces cannot be made."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import pytest
from mini_kube.controllers.agent.operator import Operator
from mini_kube.controllers.client import ApiClient, ResourceRef

from tests.controllers.test_workloads import eventually
from tests.helpers import kubectl

EXAMPLES = Path(__file__).resolve().parents[2] / "deploy" / "agent-operator" / "examples"
CRDS = EXAMPLES.parent / "00-crds.yaml"


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.apiserver.testing import MiniKube
    from mini_kube.network.namespaces import can_make_namespaces

    possible, why = can_make_namespaces()
    if not possible:
        pytest.skip(f"agent pods need network and mount namespaces: {why}")
    with MiniKube(nodes=1, node_runtime="process", ccm={"health_interval": 0.2, "status_port": 0}) as kube:
        kubectl(kube, "apply", "-f", str(CRDS))
        kubectl(kube, "wait", "--for=condition=Established", "crd/agents.mini-kube.dev", "--timeout=20s")
        operator = Operator(ApiClient.from_kubeconfig(kube.kubeconfig))
        kube.run(operator.start())
        yield kube
        kube.run(operator.stop())


def answer(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _try(url: str) -> dict | None:
    try:
        return answer(url)
    except OSError:
        return None


def test_the_full_example_answers_through_the_load_balancer(cluster):
    kube = cluster
    kubectl(kube, "apply", "-f", str(EXAMPLES / "runtime.yaml"))
    # the node's python3 need not have mini-kube installed: run the agent server with this interpreter
    patch = [{"op": "replace", "path": "/spec/command/0", "value": sys.executable}]
    kubectl(kube, "patch", "servingruntime", "python-agent", "--type=json", "-p", json.dumps(patch))
    kubectl(kube, "apply", "-f", str(EXAMPLES / "agent-full.yaml"))
    kubectl(kube, "wait", "--for=condition=Ready", "agent/support", "--timeout=60s")
    url = eventually(lambda: kube.client.get(ResourceRef("mini-kube.dev", "v1alpha1", "agents"), "support",
                                             "default")["status"]["endpoint"].get("externalURL"))
    assert url.startswith("http://127.")
    pods = {p["metadata"]["name"] for p in json.loads(kubectl(kube, "get", "pods", "-l", "mini-kube.dev/agent=support",
                                                              "-o", "json").stdout)["items"]}
    assert len(pods) == 2
    eventually(lambda: _try(url + "/"))  # the load balancer's health checks find the node
    seen = set()
    for _ in range(20):
        body = answer(url + "/")
        assert (body["agent"], body["namespace"], body["runtime"]) == ("support", "default", "python-agent")
        assert body["config"] == {"model": "small", "greeting": "welcome to support", "language": "en",
                                  "escalation": "humans@example.com"}
        seen.add(body["pod"])
    assert seen == pods  # both replicas answer behind the load balancer
    wide = kubectl(kube, "get", "agent", "support", "-o", "wide").stdout.splitlines()
    assert wide[1].split()[2] == "True" and url in wide[1]

    # a config change rolls the pods; the answers follow
    kubectl(kube, "patch", "agent", "support", "--type=merge", "-p", '{"spec":{"config":{"greeting":"hi again"}}}')
    eventually(lambda: ((_try(url + "/") or {}).get("config") or {}).get("greeting") == "hi again", timeout=60)
    kubectl(kube, "rollout", "status", "deployment/support", "--timeout=60s")
    assert all(answer(url + "/")["config"]["greeting"] == "hi again" for _ in range(10))
    kubectl(kube, "delete", "-f", str(EXAMPLES / "agent-full.yaml"))
    eventually(lambda: "No resources found" in kubectl(kube, "get", "deployment,service", "-l",
                                                       "mini-kube.dev/agent=support").stderr)

