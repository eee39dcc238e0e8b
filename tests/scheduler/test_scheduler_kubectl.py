"""The scheduler through real kubectl: Deployments spread over the nodes, nodeSelector, taints and tolerations,
resource requests with upstream's FailedScheduling wording, pod anti-affinity, cordoned nodes, Pods of another
scheduler left alone, and Pods placed when a node appears or changes."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from mini_kube.machinery.refs import PODS

from tests.helpers import kubectl
from tests.scheduler.support import (
    CONTROLLERS,
    QUICK_RETRIES,
    add_node,
    events_for,
    eventually,
    final_deletes,
    placement,
    scheduled_condition,
    unschedulable_message,
)


@pytest.fixture
def kube():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=CONTROLLERS, scheduler=QUICK_RETRIES) as cluster, final_deletes(cluster):
        yield cluster


@pytest.fixture
def three(kube):
    for name in ("node-a", "node-b", "node-c"):
        add_node(kube, name)
    return kube


def _pod(name: str, **spec) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "c", "image": "nginx", **spec.pop("container", {})}],
                                **spec}})


def _cpu(amount: str) -> dict:
    return {"resources": {"requests": {"cpu": amount}}}


def test_deployment_spreads_over_three_nodes(three):
    kubectl(three, "create", "deployment", "web", "--image=nginx", "--replicas=6")
    where = eventually(lambda: (p := placement(three, "default")) and len(p) == 6 and all(p.values()) and p)
    assert Counter(where.values()) == {"node-a": 2, "node-b": 2, "node-c": 2}
    wide = kubectl(three, "get", "pods", "-o", "wide").stdout
    assert [line.split()[6] for line in wide.splitlines()[1:]].count("node-c") == 2  # the NODE column
    name = next(iter(where))
    described = kubectl(three, "describe", "pod", name).stdout
    assert f"Successfully assigned default/{name} to {where[name]}" in described
    assert "default-scheduler" in described


def test_node_selector_and_a_node_labelled_later(three):
    kubectl(three, "label", "node", "node-b", "disk=ssd")
    kubectl(three, "apply", "-f", "-", input=_pod("ssd", nodeSelector={"disk": "ssd"}))
    kubectl(three, "apply", "-f", "-", input=_pod("nvme", nodeSelector={"disk": "nvme"}))
    eventually(lambda: placement(three, "default").get("ssd") == "node-b")
    assert unschedulable_message(three, "default", "nvme") == (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.")
    assert scheduled_condition(three, "default", "nvme")["reason"] == "Unschedulable"
    kubectl(three, "label", "node", "node-c", "disk=nvme")
    eventually(lambda: placement(three, "default").get("nvme") == "node-c")
    assert scheduled_condition(three, "default", "nvme")["status"] == "True"


def test_required_node_affinity_match_expressions_and_fields(three):
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node-a"]}],
         "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a", "node-c"]}]}]}}}
    kubectl(three, "apply", "-f", "-", input=_pod("picky", affinity=affinity))
    eventually(lambda: placement(three, "default").get("picky") == "node-c")


def test_taints_and_tolerations(three):
    kubectl(three, "taint", "nodes", "node-a", "dedicated=gpu:NoSchedule")
    kubectl(three, "taint", "nodes", "node-b", "dedicated=gpu:NoSchedule")
    kubectl(three, "create", "deployment", "plain", "--image=nginx", "--replicas=3")
    where = eventually(lambda: (p := placement(three, "default")) and len(p) == 3 and all(p.values()) and p)
    assert set(where.values()) == {"node-c"}
    tolerant = _pod("tolerant", nodeSelector={"kubernetes.io/hostname": "node-a"}, tolerations=[
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}])
    kubectl(three, "apply", "-f", "-", input=tolerant)
    eventually(lambda: placement(three, "default").get("tolerant") == "node-a")
    kubectl(three, "taint", "nodes", "node-c", "dedicated=gpu:NoSchedule")
    kubectl(three, "apply", "-f", "-", input=_pod("intolerant"))
    assert unschedulable_message(three, "default", "intolerant") == (
        "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.")
    kubectl(three, "taint", "nodes", "node-b", "dedicated=gpu:NoSchedule-")
    eventually(lambda: placement(three, "default").get("intolerant") == "node-b")


def test_insufficient_cpu_message_is_upstreams(three):
    kubectl(three, "taint", "nodes", "node-a", "k=v:NoSchedule")
    kubectl(three, "apply", "-f", "-", input=_pod("hungry", container=_cpu("5")))
    expected = ("0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. preemption: "
                "0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims "
                "found for incoming pod.")
    assert unschedulable_message(three, "default", "hungry") == expected
    event = eventually(lambda: events_for(three, "default", "hungry", "FailedScheduling"))[0]
    assert event["type"] == "Warning" and event["message"] == expected
    assert event["source"]["component"] == "default-scheduler"
    described = kubectl(three, "describe", "pod", "hungry").stdout
    assert "FailedScheduling" in described and "2 Insufficient cpu" in described
    pending = json.loads(kubectl(three, "get", "pod", "hungry", "-o", "json").stdout)
    assert pending["status"]["phase"] == "Pending" and "nodeName" not in pending["spec"]


def test_requests_add_up_across_a_burst(three):
    """12 Pods of 1 cpu on 3 nodes of 4 cpu: all fit, none overcommits; the 13th does not fit."""
    manifest = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "busy"}, "spec": {
        "replicas": 13, "selector": {"matchLabels": {"app": "busy"}}, "template": {
            "metadata": {"labels": {"app": "busy"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", **_cpu("1")}]}}}}
    kubectl(three, "apply", "-f", "-", input=json.dumps(manifest))
    where = eventually(lambda: (p := placement(three, "default")) and len(p) == 13 and
                       sum(1 for n in p.values() if n) == 12 and p)
    assert Counter(n for n in where.values() if n) == {"node-a": 4, "node-b": 4, "node-c": 4}
    left = next(name for name, node in where.items() if node is None)
    assert unschedulable_message(three, "default", left) == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims "
        "found for incoming pod.")
    kubectl(three, "scale", "deployment", "busy", "--replicas=14")
    add_node(three, "node-d", cpu="2")  # room for two more
    where = eventually(lambda: (p := placement(three, "default")) and len(p) == 14 and all(p.values()) and p)
    assert where[left] == "node-d" and Counter(where.values())["node-d"] == 2


def test_pod_anti_affinity_on_hostname(three):
    manifest = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "solo"}, "spec": {
        "replicas": 4, "selector": {"matchLabels": {"app": "solo"}}, "template": {
            "metadata": {"labels": {"app": "solo"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], "affinity": {"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"app": "solo"}},
                    "topologyKey": "kubernetes.io/hostname"}]}}}}}}
    kubectl(three, "apply", "-f", "-", input=json.dumps(manifest))
    where = eventually(lambda: (p := placement(three, "default")) and len(p) == 4 and
                       sum(1 for n in p.values() if n) == 3 and p)
    assert sorted(n for n in where.values() if n) == ["node-a", "node-b", "node-c"]
    left = next(name for name, node in where.items() if node is None)
    assert unschedulable_message(three, "default", left) == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are "
        "available: 3 No preemption victims found for incoming pod.")
    add_node(three, "node-d")
    eventually(lambda: placement(three, "default").get(left) == "node-d")


def test_cordoned_node_takes_no_new_pods(three):
    kubectl(three, "cordon", "node-a")
    kubectl(three, "create", "deployment", "web", "--image=nginx", "--replicas=4")
    where = eventually(lambda: (p := placement(three, "default")) and len(p) == 4 and all(p.values()) and p)
    assert "node-a" not in where.values()
    kubectl(three, "apply", "-f", "-", input=_pod("pinned", nodeSelector={"kubernetes.io/hostname": "node-a"}))
    assert unschedulable_message(three, "default", "pinned") == (
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    kubectl(three, "uncordon", "node-a")
    eventually(lambda: placement(three, "default").get("pinned") == "node-a")


def test_pods_of_another_scheduler_are_left_alone(three):
    kubectl(three, "apply", "-f", "-", input=_pod("theirs", schedulerName="my-scheduler"))
    kubectl(three, "apply", "-f", "-", input=_pod("ours"))
    eventually(lambda: placement(three, "default").get("ours"))
    kubectl(three, "create", "deployment", "more", "--image=nginx", "--replicas=3")
    eventually(lambda: sum(1 for n in placement(three, "default").values() if n) == 4)
    assert placement(three, "default")["theirs"] is None
    assert scheduled_condition(three, "default", "theirs") is None
    assert not events_for(three, "default", "theirs", "FailedScheduling")


def test_pod_waits_for_a_node_to_appear(kube):
    kubectl(kube, "apply", "-f", "-", input=_pod("early"))
    assert unschedulable_message(kube, "default", "early") == "no nodes available to schedule pods"
    add_node(kube, "late", ready=False)
    not_ready = ("0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. "
                 "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    eventually(lambda: scheduled_condition(kube, "default", "early")["message"] == not_ready)
    add_node(kube, "ready")
    eventually(lambda: placement(kube, "default").get("early") == "ready")
    assert scheduled_condition(kube, "default", "early")["status"] == "True"


@pytest.mark.slow
def test_higher_priority_pod_preempts_a_lower_one(kube):
    add_node(kube, "small", cpu="2")
    kubectl(kube, "apply", "-f", "-", input=_pod("low", container=_cpu("1500m")))
    eventually(lambda: placement(kube, "default").get("low") == "small")
    kubectl(kube, "create", "priorityclass", "high", "--value=1000")
    kubectl(kube, "create", "priorityclass", "high-never", "--value=1000", "--preemption-policy=Never")
    kubectl(kube, "apply", "-f", "-", input=_pod("never", container=_cpu("1"), priorityClassName="high-never"))
    assert unschedulable_message(kube, "default", "never") == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.")
    kubectl(kube, "delete", "pod", "never")
    kubectl(kube, "apply", "-f", "-", input=_pod("high", container=_cpu("1"), priorityClassName="high"))
    eventually(lambda: "low" not in placement(kube, "default"))
    assert eventually(lambda: events_for(kube, "default", "low", "Preempted"))[0]["message"].endswith(
        "on node small")
    # the room is kept for the nominated Pod: a newcomer of lower priority does not take it meanwhile
    kubectl(kube, "apply", "-f", "-", input=_pod("sneaky", container=_cpu("1500m")))
    eventually(lambda: placement(kube, "default").get("high") == "small")
    assert unschedulable_message(kube, "default", "sneaky").startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert placement(kube, "default")["sneaky"] is None


@pytest.mark.slow
def test_a_preemptor_waits_for_its_terminating_victim(kube):
    """A victim that takes its time to go (a finalizer holds it) is not preempted again: the preemptor, tried
    again meanwhile, waits for it, and takes its room once it is gone."""
    add_node(kube, "small", cpu="2")
    kubectl(kube, "create", "priorityclass", "high", "--value=1000")
    held = json.loads(_pod("low", container=_cpu("1500m")))
    held["metadata"]["finalizers"] = ["example.com/hold"]
    kubectl(kube, "apply", "-f", "-", input=json.dumps(held))
    eventually(lambda: placement(kube, "default").get("low") == "small")
    kubectl(kube, "apply", "-f", "-", input=_pod("high", container=_cpu("1"), priorityClassName="high"))
    eventually(lambda: kube.client.get(PODS, "low", "default")["metadata"].get("deletionTimestamp"))
    add_node(kube, "tiny", cpu="500m")  # a new node: the preemptor is tried again, and fits nowhere yet
    assert eventually(lambda: scheduled_condition(kube, "default", "high")["message"].endswith(
        "preemption: not eligible due to a terminating pod on the nominated node."))
    assert len(events_for(kube, "default", "low", "Preempted")) == 1
    kubectl(kube, "patch", "pod", "low", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    eventually(lambda: placement(kube, "default").get("high") == "small")
