"""The operator as a user installs it, on a cluster whose pods really run (skipped where namespaces cannot be
made): `kubectl apply -f deploy/agent-operator/` runs the operator in-cluster (its Deployment's two pods, in-cluster
config, its ServiceAccount's RBAC, leader election). Then the full example from outside, through real sockets
(seed 000 for an Agent): request -> the load balancer -> the Service -> an agent pod (the default runtime's
program as a process in its own network and mount namespaces, its config mounted from the ConfigMap the operator
made), which answers with its config; a config change rolls the pods and the answers follow. The leader's pod
pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


deleted: another replica takes the Lease over and acts."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import DEPLOYMENTS, EVENTS, LEASES, PODS, REPLICASETS

from tests.controllers.test_workloads import eventually
from tests.helpers import kubectl
from tests.timeline import Timeline

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "agent-operator"
EXAMPLES = DEPLOY / "examples"
AGENTS = ResourceRef("mini-kube.dev", "v1alpha1", "agents")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A TLS cluster with RBAC, a node running pods as processes, and a cloud controller manager; the operator is
    installed with `kubectl apply -f deploy/agent-operator/` and runs in-cluster, as its Deployment's pods."""
    from mini_kube.network.namespaces import can_make_namespaces

    from mini_kube.testing import MiniKube

    possible, why = can_make_namespaces()
    if not possible:
        pytest.skip(f"agent pods need network and mount namespaces: {why}")
    data = tmp_path_factory.mktemp("journey") / "data"
    with MiniKube(insecure_http=False, data_dir=str(data), nodes=1, node_runtime="process",
                  ccm={"health_interval": 0.2, "status_port": 0}) as kube:
        # as the README says, byte for byte: the image mini-kube/mini-kube is this installation (this venv)
        kubectl(kube, "apply", "-f", f"{DEPLOY}/")
        kubectl(kube, "-n", "agent-operator", "rollout", "status", "deployment/agent-operator", "--timeout=60s")
        yield kube


def _ready(obj: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or ())


def _pods(kube, namespace: str, selector: str) -> list[tuple]:
    return sorted((p["metadata"]["name"], p["spec"].get("nodeName"), (p.get("status") or {}).get("phase"),
                   "ready" if _ready(p) else "not ready", "deleting" if p["metadata"].get("deletionTimestamp") else "")
                  for p in kube.client.list(PODS, namespace, labelSelector=selector)["items"])


def agent_chain(kube, name: str) -> Timeline:
    """The links from an Agent to its Pods, and the operator that acts on them, sampled while a test waits."""
    def agent() -> tuple:
        a = kube.client.get(AGENTS, name, "default")
        status = a.get("status") or {}
        ready = next((c for c in status.get("conditions") or () if c.get("type") == "Ready"), {})
        return (f"generation {a['metadata'].get('generation')} replicas {a['spec'].get('replicas')}",
                f"observed {status.get('observedGeneration')} replicas {status.get('replicas')} ready "
                f"{status.get('readyReplicas')}", ready.get("reason"), ready.get("message"))

    def deployment() -> tuple:
        d = kube.client.get(DEPLOYMENTS, name, "default")
        status = d.get("status") or {}
        return (f"generation {d['metadata'].get('generation')} replicas {d['spec'].get('replicas')}",
                f"observed {status.get('observedGeneration')} replicas {status.get('replicas')} updated "
                f"{status.get('updatedReplicas')} ready {status.get('readyReplicas')} available "
                f"{status.get('availableReplicas')}")

    def replicasets() -> list[tuple]:
        return sorted((r["metadata"]["name"], f"replicas {r['spec'].get('replicas')}",
                       f"status {(r.get('status') or {}).get('replicas')}/{(r.get('status') or {}).get('readyReplicas')}")
                      for r in kube.client.list(REPLICASETS, "default", labelSelector=f"mini-kube.dev/agent={name}")[
                          "items"])

    return Timeline({
        "lease holder": lambda: kube.client.get(LEASES, "agent-operator", "agent-operator")["spec"].get(
            "holderIdentity"),
        "operator pods": lambda: _pods(kube, "agent-operator", "app.kubernetes.io/name=agent-operator"),
        "agent": agent, "deployment": deployment, "replicasets": replicasets,
        "pods": lambda: _pods(kube, "default", f"mini-kube.dev/agent={name}")})


def explain(kube, timeline: Timeline) -> str:
    """The timeline, the namespace's latest events and the acting operator's last log lines."""
    events = sorted(kube.client.list(EVENTS, "default")["items"], key=lambda e: e.get("lastTimestamp") or "")[-25:]
    lines = [timeline.report(), "events:"] + [
        f"  {e.get('lastTimestamp')} {e['involvedObject'].get('kind')}/{e['involvedObject'].get('name')} "
        f"{e.get('reason')}: {e.get('message')}" for e in events]
    leader = kube.client.get(LEASES, "agent-operator", "agent-operator")["spec"].get("holderIdentity")
    if leader:
        logs = kubectl(kube, "-n", "agent-operator", "logs", leader, "--tail=30", check=False)
        lines += [f"logs of {leader}:", logs.stdout + logs.stderr]
    return "\n".join(lines)


def answer(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _try(url: str) -> dict | None:
    try:
        return answer(url)
    except OSError:
        return None


@pytest.mark.slow
def test_the_full_example_answers_through_the_load_balancer(cluster):
    kube = cluster
    kubectl(kube, "apply", "-f", str(EXAMPLES / "runtime.yaml"))
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


@pytest.mark.slow
def test_the_standby_takes_over_when_the_leader_goes(cluster):
    kube = cluster
    kubectl(kube, "apply", "-f", str(EXAMPLES / "runtime.yaml"))
    kubectl(kube, "apply", "-f", str(EXAMPLES / "agent-minimal.yaml"))
    kubectl(kube, "wait", "--for=condition=Ready", "agent/hello", "--timeout=60s")
    holder = lambda: kube.client.get(LEASES, "agent-operator", "agent-operator")["spec"].get(  # noqa: E731
        "holderIdentity")  # polled in-process: kubectl acts, it need not run for every look
    leader = holder()
    pods = kubectl(kube, "-n", "agent-operator", "get", "pods", "-o", "name").stdout.split()
    assert f"pod/{leader}" in pods and len(pods) == 2
    with agent_chain(kube, "hello") as timeline:  # a wait that times out tells which link stalled
        kubectl(kube, "-n", "agent-operator", "delete", "pod", leader)
        successor = eventually(lambda: (h := holder()) and h != leader and h, timeout=30,
                               explain=lambda: explain(kube, timeline))
        # the standby, or the replacement pod if it campaigned first (the old leader released the Lease on SIGTERM)
        live = kubectl(kube, "-n", "agent-operator", "get", "pods", "-o", "name").stdout.split()
        assert f"pod/{successor}" in live and f"pod/{leader}" not in live
        kubectl(kube, "scale", "agent", "hello", "--replicas=2")
        eventually(lambda: (kube.client.get(AGENTS, "hello", "default").get("status") or {}).get("readyReplicas") == 2,
                   timeout=60, explain=lambda: explain(kube, timeline))
    # from inside the cluster: an agent pod asks the Service at its ClusterIP
    ip = kubectl(kube, "get", "service", "hello", "-o", "jsonpath={.spec.clusterIP}").stdout
    pod = kubectl(kube, "get", "pods", "-l", "mini-kube.dev/agent=hello", "-o", "jsonpath={.items[0].metadata.name}"
                  ).stdout
    script = f"import urllib.request; print(urllib.request.urlopen('http://{ip}:80/', timeout=5).read().decode())"
    body = json.loads(kubectl(kube, "exec", pod, "--", "python3", "-c", script).stdout)
    assert body["agent"] == "hello" and body["config"] == {}
