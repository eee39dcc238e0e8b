"""The Agent operator end to end, as a user runs it: real kubectl applies the shipped manifests
(deploy/agent-operator/) to a TLS cluster with RBAC, and `mini-kube operator` runs as its own process with
the token of its ServiceAccount, so it does its job with exactly the shipped permissions.

Journey: runtime + agent -> children with owner references -> Ready (pods made Ready by a stand-in kubelet) ->
the runtime's image changes: the Deployment rolls -> a deleted Deployment is restored -> `kubectl scale agent`
-> the Agent is deleted: its children are gone. RBAC: `kubectl auth can-i --as` the operator's ServiceAccount."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest
import yaml
from mini_kube.machinery.refs import NAMESPACES

from tests.controllers.test_workloads import StandInKubelet, eventually
from tests.helpers import kubectl

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "agent-operator"
EXAMPLES = DEPLOY / "examples"
SA = "system:serviceaccount:agent-operator:agent-operator"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A TLS cluster with RBAC, the operator installed with kubectl and running as its ServiceAccount."""
    from mini_kube.testing import MiniKube

    tmp = tmp_path_factory.mktemp("agent-e2e")
    with MiniKube(insecure_http=False, data_dir=str(tmp / "data"),
                  controllers="garbagecollector,deployment,replicaset,serviceaccount") as kube:
        applied = kubectl(kube, "apply", "-f", str(DEPLOY)).stdout
        assert "customresourcedefinition.apiextensions.k8s.io/agents.mini-kube.dev created" in applied
        assert "clusterrole.rbac.authorization.k8s.io/agent-operator created" in applied
        kubectl(kube, "wait", "--for=condition=Established", "crd/agents.mini-kube.dev",
                "crd/servingruntimes.mini-kube.dev", "crd/clusterservingruntimes.mini-kube.dev", "--timeout=20s")
        token = kubectl(kube, "-n", "agent-operator", "create", "token", "agent-operator").stdout.strip()
        config = yaml.safe_load(Path(kube.kubeconfig).read_text())
        config["users"][0]["user"] = {"token": token}
        operator_config = tmp / "operator.kubeconfig"
        operator_config.write_text(yaml.safe_dump(config))
        log = (tmp / "operator.log").open("w")
        proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "operator", "--kubeconfig",
                                 str(operator_config), "--leader-elect", "--leader-elect-namespace", "agent-operator",
                                 "--health-address", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=log, text=True,
                                env={**os.environ, "POD_NAME": "operator-e2e"})
        try:
            line = proc.stdout.readline()
            assert "/status" in line, (tmp / "operator.log").read_text()
            kube.status_url = line.split()[-1]
            eventually(lambda: json.loads(urllib.request.urlopen(kube.status_url, timeout=5).read())["synced"])
            kube.operator_log = tmp / "operator.log"
            yield kube
        finally:
            proc.terminate()
            proc.wait(10)
            log.close()
        text = (tmp / "operator.log").read_text()
        assert "Forbidden" not in text, text  # the operator logs every write it was refused


@pytest.fixture
def ns(cluster):
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    cluster.client.create(NAMESPACES, {"metadata": {"name": name}})
    return name


def get_json(kube, *args: str) -> dict:
    return json.loads(kubectl(kube, *args, "-o", "json").stdout)


@pytest.mark.slow
def test_the_operator_holds_its_lease_as_its_service_account(cluster):
    status = json.loads(urllib.request.urlopen(cluster.status_url, timeout=5).read())
    assert status["leader"] is True and status["identity"] == "operator-e2e"
    lease = get_json(cluster, "-n", "agent-operator", "get", "lease", "agent-operator")
    assert lease["spec"]["holderIdentity"] == "operator-e2e"


@pytest.mark.slow
def test_agent_journey(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", str(EXAMPLES / "runtime.yaml"), "-f", str(EXAMPLES / "agent-minimal.yaml"))
    # children appear, owned by the Agent, with the runtime's fields
    agent = eventually(lambda: (a := get_json(kube, "-n", ns, "get", "agent", "hello")).get("status") and a)
    for kind, name in (("deployment", "hello"), ("service", "hello"), ("configmap", "hello-config")):
        child = eventually(lambda k=kind, n=name: kubectl(kube, "-n", ns, "get", k, n, "-o", "json", check=False))
        [ref] = json.loads(child.stdout)["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == ("Agent", "hello",
                                                                              agent["metadata"]["uid"], True)
    d = get_json(kube, "-n", ns, "get", "deployment", "hello")
    [c] = d["spec"]["template"]["spec"]["containers"]
    assert c["image"] == "mini-kube/mini-kube:0.1.0" and c["command"] == ["python3", "-m", "mini_kube.agent_operator.server"]
    assert c["ports"][0]["containerPort"] == 8080 and c["readinessProbe"]["httpGet"]["port"] == "http"
    with StandInKubelet(kube, ns):
        kubectl(kube, "-n", ns, "wait", "--for=condition=Ready", "agent/hello", "--timeout=30s")
        table = kubectl(kube, "-n", ns, "get", "agents").stdout.splitlines()
        assert table[0].split() == ["NAME", "RUNTIME", "READY", "ENDPOINT", "AGE"]
        assert table[1].split()[:4] == ["hello", "python-agent", "True", f"http://hello.{ns}.svc.cluster.local:80"]
        assert "agent.mini-kube.dev/hello" in kubectl(kube, "-n", ns, "get", "all", "-o", "name").stdout

        # the runtime's image changes: the Deployment rolls to a second ReplicaSet
        kubectl(kube, "-n", ns, "patch", "servingruntime", "python-agent", "--type=merge",
                "-p", '{"spec":{"image":"python:3.13-slim"}}')
        eventually(lambda: get_json(kube, "-n", ns, "get", "deployment", "hello")["spec"]["template"]["spec"][
            "containers"][0]["image"] == "python:3.13-slim")
        kubectl(kube, "-n", ns, "rollout", "status", "deployment/hello", "--timeout=30s")
        history = kubectl(kube, "-n", ns, "rollout", "history", "deployment/hello").stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
        kubectl(kube, "-n", ns, "wait", "--for=condition=Ready", "agent/hello", "--timeout=30s")

        # a deleted Deployment is restored
        uid = get_json(kube, "-n", ns, "get", "deployment", "hello")["metadata"]["uid"]
        kubectl(kube, "-n", ns, "delete", "deployment", "hello")
        eventually(lambda: (r := kubectl(kube, "-n", ns, "get", "deployment", "hello", "-o", "json", check=False))
                   .returncode == 0 and json.loads(r.stdout)["metadata"]["uid"] != uid)

        # the scale subresource
        scaled = kubectl(kube, "-n", ns, "scale", "agent", "hello", "--replicas=2").stdout.strip()
        assert scaled == "agent.mini-kube.dev/hello scaled"
        eventually(lambda: get_json(kube, "-n", ns, "get", "deployment", "hello")["spec"]["replicas"] == 2)
        eventually(lambda: get_json(kube, "-n", ns, "get", "agent", "hello")["status"].get("readyReplicas") == 2)

    events = kubectl(kube, "-n", ns, "get", "events", "--field-selector", "involvedObject.kind=Agent").stdout
    assert "Created" in events and "Deployment hello" in events

    # the Agent is deleted: garbage collection removes its children
    kubectl(kube, "-n", ns, "delete", "agent", "hello")
    eventually(lambda: "No resources found" in kubectl(kube, "-n", ns, "get", "deployment,service,configmap",
                                                       "-l", "mini-kube.dev/agent=hello").stderr)


def test_full_example_merges_config_and_asks_for_a_load_balancer(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", str(EXAMPLES / "runtime.yaml"), "-f", str(EXAMPLES / "agent-full.yaml"))
    cm = eventually(lambda: (r := kubectl(kube, "-n", ns, "get", "configmap", "support-config", "-o", "json",
                                          check=False)).returncode == 0 and json.loads(r.stdout))
    assert cm["data"] == {"model": "small", "greeting": "welcome to support", "language": "en",
                          "escalation": "humans@example.com"}
    svc = eventually(lambda: (r := kubectl(kube, "-n", ns, "get", "service", "support", "-o", "json",
                                           check=False)).returncode == 0 and json.loads(r.stdout))
    assert svc["spec"]["type"] == "LoadBalancer" and svc["spec"]["ports"][0]["port"] == 80
    d = eventually(lambda: (r := kubectl(kube, "-n", ns, "get", "deployment", "support", "-o", "json",
                                         check=False)).returncode == 0 and json.loads(r.stdout))
    [c] = d["spec"]["template"]["spec"]["containers"]
    assert d["spec"]["replicas"] == 2 and {"name": "LOG_LEVEL", "value": "debug"} in c["env"]
    assert c["resources"]["requests"] == {"cpu": "100m", "memory": "64Mi"}


@pytest.mark.parametrize(("verb", "resource", "namespace", "allowed"), [
    ("watch", "agents.mini-kube.dev", "-A", True),
    ("patch", "agents.mini-kube.dev --subresource=status", "default", True),
    ("list", "clusterservingruntimes.mini-kube.dev", "", True),
    ("create", "deployments.apps", "default", True),
    ("patch", "services", "team-a", True),
    ("watch", "configmaps", "-A", True),
    ("create", "events", "team-b", True),
    ("update", "leases.coordination.k8s.io/agent-operator", "agent-operator", True),
    ("get", "secrets", "kube-system", False),
    ("list", "secrets", "agent-operator", False),
    ("get", "secrets", "default", False),
    ("delete", "deployments.apps", "default", False),
    ("patch", "agents.mini-kube.dev", "default", False),
    ("create", "pods", "default", False),
    ("update", "leases.coordination.k8s.io/kube-controller-manager", "kube-system", False),
])
def test_operator_rbac_is_least_privilege(cluster, verb, resource, namespace, allowed):
    args = ["auth", "can-i", verb, *resource.split(), f"--as={SA}"]
    args += ["-A"] if namespace == "-A" else (["-n", namespace] if namespace else [])
    result = kubectl(cluster, *args, check=False)
    assert result.stdout.strip() == ("yes" if allowed else "no"), (args, result.stdout, result.stderr)
