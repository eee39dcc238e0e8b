"""Pods are deleted gracefully, as upstream: a Pod bound to a node gets deletionTimestamp (now + its grace
period) and deletionGracePeriodSeconds and stays, terminating, until its kubelet's final delete
(gracePeriodSeconds 0); a later delete may only shorten the period; unbound and finished Pods go at once.
Every Pod also gets upstream's default tolerations of the not-ready/unreachable taints (DefaultTolerationSeconds
admission). No kubelet runs here: the test plays its part."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from mini_kube.client import NotFound
from mini_kube.machinery.refs import PODS

from tests.helpers import kubectl

DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]


@pytest.fixture(scope="module")
def kube():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, scheduler=False) as cluster:
        yield cluster


def make(kube, name: str, **spec) -> dict:
    return kube.client.create(PODS, {"metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "nginx"}], **spec}}, "default")


def parse(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def gone(kube, name: str) -> bool:
    try:
        kube.client.get(PODS, name, "default")
    except NotFound:
        return True
    return False


def test_a_bound_pod_waits_for_its_kubelet(kube):
    make(kube, "bound", nodeName="node-1", terminationGracePeriodSeconds=20)
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    out = kubectl(kube, "delete", "pod", "bound", "--wait=false").stdout
    assert out == 'pod "bound" deleted\n'
    pod = kube.client.get(PODS, "bound", "default")
    meta = pod["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 20
    assert 19 <= (parse(meta["deletionTimestamp"]) - before).total_seconds() <= 22
    assert "Terminating" in kubectl(kube, "get", "pod", "bound").stdout
    # a status write (the kubelet reporting) does not end it
    kube.client.patch(PODS, "bound", {"status": {"phase": "Running"}}, "default", subresource="status")
    assert not gone(kube, "bound")
    # a longer period changes nothing; a shorter one moves the deadline earlier
    rv = kube.client.get(PODS, "bound", "default")["metadata"]["resourceVersion"]
    kube.client.delete(PODS, "bound", "default", body={"gracePeriodSeconds": 60})
    assert kube.client.get(PODS, "bound", "default")["metadata"]["resourceVersion"] == rv
    kube.client.delete(PODS, "bound", "default", body={"gracePeriodSeconds": 5})
    shortened = kube.client.get(PODS, "bound", "default")["metadata"]
    assert shortened["deletionGracePeriodSeconds"] == 5
    assert (parse(meta["deletionTimestamp"]) - parse(shortened["deletionTimestamp"])).total_seconds() == 15
    # the kubelet's final delete
    kube.client.delete(PODS, "bound", "default", body={"gracePeriodSeconds": 0,
                                                       "preconditions": {"uid": meta["uid"]}})
    assert gone(kube, "bound")


def test_unbound_finished_and_forced_pods_go_at_once(kube):
    make(kube, "unbound")
    kubectl(kube, "delete", "pod", "unbound", "--wait=false")
    assert gone(kube, "unbound")
    make(kube, "finished", nodeName="node-1")
    kube.client.patch(PODS, "finished", {"status": {"phase": "Succeeded"}}, "default", subresource="status")
    kubectl(kube, "delete", "pod", "finished", "--wait=false")
    assert gone(kube, "finished")
    make(kube, "forced", nodeName="node-1")
    result = kubectl(kube, "delete", "pod", "forced", "--grace-period=0", "--force")
    assert "Immediate deletion does not wait for confirmation" in result.stderr
    assert gone(kube, "forced")


def test_finalizers_and_a_grace_period(kube):
    kube.client.create(PODS, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "spec": {
        "nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}}, "default")
    kube.client.delete(PODS, "held", "default")
    assert kube.client.get(PODS, "held", "default")["metadata"]["deletionGracePeriodSeconds"] == 30
    kube.client.patch(PODS, "held", {"metadata": {"finalizers": None}}, "default")
    assert not gone(kube, "held")  # no finalizer left, but the grace period is the kubelet's to end
    kube.client.delete(PODS, "held", "default", body={"gracePeriodSeconds": 0})
    assert gone(kube, "held")
    # with a finalizer, even a zero period only marks it; the last finalizer's removal then deletes it
    kube.client.create(PODS, {"metadata": {"name": "held0", "finalizers": ["example.com/hold"]}, "spec": {
        "nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}}, "default")
    kube.client.delete(PODS, "held0", "default", body={"gracePeriodSeconds": 0})
    assert kube.client.get(PODS, "held0", "default")["metadata"]["deletionGracePeriodSeconds"] == 0
    kube.client.patch(PODS, "held0", {"metadata": {"finalizers": None}}, "default")
    assert gone(kube, "held0")


def test_pods_get_the_default_tolerations(kube):
    assert make(kube, "plain")["spec"]["tolerations"] == DEFAULT_TOLERATIONS
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
           "tolerationSeconds": 5}
    assert make(kube, "own", tolerations=[own])["spec"]["tolerations"] == [own, DEFAULT_TOLERATIONS[1]]
    everything = {"operator": "Exists"}
    assert make(kube, "everything", tolerations=[everything])["spec"]["tolerations"] == [everything]
    other = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    listed = json.loads(kubectl(kube, "run", "cli", "--image=nginx", "--dry-run=server", "-o", "json",
                                "--overrides", json.dumps({"spec": {"tolerations": [other]}})).stdout)
    assert listed["spec"]["tolerations"] == [other, *DEFAULT_TOLERATIONS]
