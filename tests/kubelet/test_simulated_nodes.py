"""Nodes on the simulated runtime (issue #13): everything above the kubelet behaves as with real processes: a
Deployment rolled out with real kubectl reaches `successfully rolled out` with no manual step, Jobs complete,
nodes keep their Leases, and a stopped node's Pods are evicted and scheduled again elsewhere."""

from __future__ import annotations

import json

import pytest
from mini_kube.machinery.refs import LEASES, NODES, PODS

from tests.helpers import kubectl

from .conftest import eventually, new_namespace


@pytest.fixture(scope="module")
def kube():
    from mini_kube.testing import MiniKube

    options = {"nodelifecycle": {"grace_period": 2.0, "default_toleration": 1.0}}
    with MiniKube(nodes=3, node_runtime="simulated", controller_options=options,
                  node_options={"renew_interval": 0.5}) as cluster:
        yield cluster


def test_nodes_register_and_renew_their_leases(kube):
    nodes = json.loads(kubectl(kube, "get", "nodes", "-o", "json").stdout)["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == ["mini-kube-1", "mini-kube-2", "mini-kube-3"]
    for node in nodes:
        ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
        assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
        assert node["status"]["nodeInfo"]["containerRuntimeVersion"] == "simulated://0.1.0"
        assert node["spec"]["podCIDR"].startswith("10.244.")
        lease = kube.client.get(LEASES, node["metadata"]["name"], "kube-node-lease")
        assert lease["spec"]["holderIdentity"] == node["metadata"]["name"]
        assert lease["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]


def test_a_deployment_rolls_out_through_kubectl_with_no_manual_step(kube):
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=6")
    out = kubectl(kube, "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s").stdout
    assert 'deployment "web" successfully rolled out' in out
    pods = kube.client.list(PODS, ns)["items"]
    assert {p["spec"]["nodeName"] for p in pods} == {"mini-kube-1", "mini-kube-2", "mini-kube-3"}
    assert all(p["status"]["phase"] == "Running" and p["status"]["podIP"].startswith("10.244.") for p in pods)
    kubectl(kube, "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.27")
    out = kubectl(kube, "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s").stdout
    assert "successfully rolled out" in out


def test_a_job_completes(kube):
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "create", "job", "once", "--image=busybox", "--", "true")
    kubectl(kube, "-n", ns, "wait", "--for=condition=complete", "job/once", "--timeout=60s")
    pod = kube.client.list(PODS, ns)["items"][0]
    assert pod["status"]["phase"] == "Succeeded"


@pytest.mark.slow
def test_a_stopped_node_has_its_pods_evicted_and_rescheduled(kube):
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "create", "deployment", "app", "--image=nginx", "--replicas=3")
    short = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
              "tolerationSeconds": 1}]  # instead of the 300 s every Pod gets by default
    kubectl(kube, "-n", ns, "patch", "deployment", "app", "-p",
            json.dumps({"spec": {"template": {"spec": {"tolerations": short}}}}))
    kubectl(kube, "-n", ns, "rollout", "status", "deployment/app", "--timeout=60s")
    victim = kube.nodes.kubelets[2]
    on_victim = [p["metadata"]["name"] for p in kube.client.list(PODS, ns)["items"]
                 if p["spec"]["nodeName"] == victim.name]
    assert on_victim
    kube.run(victim.stop())  # the kubelet goes away: no more lease renewals
    eventually(lambda: next(c for c in kube.client.get(NODES, victim.name)["status"]["conditions"]
                            if c["type"] == "Ready")["status"] == "Unknown", timeout=30)

    def moved() -> bool:
        pods = [p for p in kube.client.list(PODS, ns)["items"] if not p["metadata"].get("deletionTimestamp")]
        return len(pods) == 3 and all(p["spec"].get("nodeName") not in (None, victim.name) and
                                      p["status"].get("phase") == "Running" for p in pods)

    eventually(moved, timeout=60)
    # evicted: terminating until their kubelet, gone, makes the final delete (or the Node is deleted)
    assert all(p["metadata"].get("deletionTimestamp") for p in kube.client.list(PODS, ns)["items"]
               if p["metadata"]["name"] in on_victim)
