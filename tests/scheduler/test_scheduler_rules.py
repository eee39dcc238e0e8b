"""More of the default profile, Pods applied with real kubectl: host ports, the Pod count, several missing
resources on one node, preferred node affinity, required pod affinity, and what a new neighbour changes."""

from __future__ import annotations

import json
import time

import pytest

from tests.helpers import kubectl
from tests.scheduler.support import (
    CONTROLLERS,
    QUICK_RETRIES,
    add_node,
    eventually,
    final_deletes,
    placement,
    unschedulable_message,
)


@pytest.fixture
def kube():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=CONTROLLERS, scheduler=QUICK_RETRIES) as cluster, final_deletes(cluster):
        yield cluster


def apply(kube, name: str, labels: dict | None = None, container: dict | None = None, **spec) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
           "spec": {"containers": [{"name": "c", "image": "nginx", **(container or {})}], **spec}}
    kubectl(kube, "apply", "-f", "-", input=json.dumps(pod))


def test_host_ports_are_claimed_per_node(kube):
    add_node(kube, "n1")
    add_node(kube, "n2")
    port = {"ports": [{"containerPort": 80, "hostPort": 8080}]}
    for name in ("p1", "p2", "p3"):
        apply(kube, name, container=port)
    apply(kube, "udp", container={"ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "UDP"}]})
    where = eventually(lambda: (p := placement(kube, "default")) and sum(1 for n in p.values() if n) == 3 and p)
    assert {where["p1"], where["p2"], where["p3"]} - {None} == {"n1", "n2"} and where["udp"]
    left = next(name for name in ("p1", "p2", "p3") if where[name] is None)
    assert unschedulable_message(kube, "default", left) == (
        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: 0/2 "
        "nodes are available: 2 No preemption victims found for incoming pod.")


def test_pod_count_and_several_missing_resources(kube):
    add_node(kube, "tiny", pods="1", cpu="1", memory="1Gi")
    apply(kube, "first")
    eventually(lambda: placement(kube, "default").get("first") == "tiny")
    apply(kube, "second", container={"resources": {"requests": {"cpu": "2", "memory": "2Gi",
                                                                  "ephemeral-storage": "1Ti"}}})
    assert unschedulable_message(kube, "default", "second") == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient ephemeral-storage, 1 Insufficient memory, "
        "1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_preferred_node_affinity_wins_the_score(kube):
    for name in ("n1", "n2", "n3"):
        add_node(kube, name, labels={"tier": "gold"} if name == "n2" else {})
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 80, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}}]}}
    for i in range(3):
        apply(kube, f"p{i}", affinity=preferred)
    eventually(lambda: (p := placement(kube, "default")) and len(p) == 3 and set(p.values()) == {"n2"})


def test_required_pod_affinity_follows_its_peer(kube):
    for name in ("n1", "n2", "n3"):
        add_node(kube, name)
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    apply(kube, "follower", affinity=affinity)
    assert unschedulable_message(kube, "default", "follower") == (
        "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.")
    apply(kube, "db", labels={"app": "db"})
    db = eventually(lambda: placement(kube, "default").get("db"))
    eventually(lambda: placement(kube, "default").get("follower") == db)
    apply(kube, "self", labels={"app": "web"}, affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    eventually(lambda: placement(kube, "default").get("self"))  # the first of a group that wants itself


def test_existing_pods_anti_affinity_keeps_newcomers_away(kube):
    add_node(kube, "n1")
    apply(kube, "loner", labels={"app": "loner"}, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "noisy"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    eventually(lambda: placement(kube, "default").get("loner") == "n1")
    apply(kube, "noisy", labels={"app": "noisy"})
    assert unschedulable_message(kube, "default", "noisy") == (
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules. preemption: 0/1 "
        "nodes are available: 1 No preemption victims found for incoming pod.")
    kubectl(kube, "delete", "pod", "loner")
    eventually(lambda: placement(kube, "default").get("noisy") == "n1")


@pytest.mark.slow
def test_higher_priority_pods_are_placed_first(kube):
    three_cpu = {"resources": {"requests": {"cpu": "3"}}}
    for name, priority in (("low", 0), ("high", 100), ("mid", 10)):
        kubectl(kube, "create", "priorityclass", name, f"--value={priority}")
        apply(kube, name, container=three_cpu, priorityClassName=name)
    for name in ("low", "high", "mid"):
        assert unschedulable_message(kube, "default", name) == "no nodes available to schedule pods"
    time.sleep(0.5)  # their back-offs (0.1 s, 0.2 s if retried) are over: a new node lets them all try at once
    add_node(kube, "only")
    eventually(lambda: placement(kube, "default").get("high") == "only")
    assert placement(kube, "default")["low"] is None and placement(kube, "default")["mid"] is None
