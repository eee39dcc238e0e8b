"""EndpointSlice mirroring through real kubectl: an Endpoints written by hand for a Service without a selector
appears as EndpointSlices (one per address family and set of ports, ready and not-ready addresses, the
Endpoints' labels, owned by it), follows its updates, and goes with it; skip-mirror Endpoints and Services
with a selector are not mirrored."""

from __future__ import annotations

import functools
import json

import pytest
from mini_kube.machinery.refs import ENDPOINTSLICES

from tests.helpers import eventually as _eventually
from tests.helpers import kubectl, new_namespace

eventually = functools.partial(_eventually, timeout=20.0, interval=0.05)
MIRROR = "endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io"


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.testing import MiniKube

    with MiniKube(scheduler=False) as kube:
        yield kube


def slices(kube, ns: str, service: str) -> list[dict]:
    return kube.client.list(ENDPOINTSLICES, ns, labelSelector=f"kubernetes.io/service-name={service}")["items"]


def summary(kube, ns: str, service: str) -> list[tuple]:
    return sorted((s["addressType"], tuple((p.get("name"), p["port"]) for p in s["ports"]),
                   tuple((e["addresses"][0], e["conditions"]["ready"]) for e in s["endpoints"]))
                  for s in slices(kube, ns, service))


def endpoints(name: str, subsets: list[dict], labels: dict | None = None) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Endpoints",
                       "metadata": {"name": name, "labels": labels or {}}, "subsets": subsets})


def test_custom_endpoints_are_mirrored_through_create_update_and_delete(cluster):
    kube = cluster
    ns = new_namespace(kube, "mirror")
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "custom"},
        "spec": {"ports": [{"name": "web", "port": 80}]}}))
    kubectl(kube, "-n", ns, "create", "-f", "-", input=endpoints("custom", [{
        "addresses": [{"ip": "10.1.2.3"}], "notReadyAddresses": [{"ip": "10.1.2.4"}, {"ip": "fd00::5"}],
        "ports": [{"name": "web", "port": 8080}]}], {"team": "a"}))
    expected = [("IPv4", (("web", 8080),), (("10.1.2.3", True), ("10.1.2.4", False))),
                ("IPv6", (("web", 8080),), (("fd00::5", False),))]
    eventually(lambda: summary(kube, ns, "custom") == expected, explain=lambda: str(summary(kube, ns, "custom")))
    mirrored = slices(kube, ns, "custom")[0]
    assert mirrored["metadata"]["name"].startswith("custom-")
    assert mirrored["metadata"]["labels"] == {"team": "a", "kubernetes.io/service-name": "custom",
                                              "endpointslice.kubernetes.io/managed-by":
                                                  "endpointslicemirroring-controller.k8s.io"}
    owner = mirrored["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Endpoints", "custom", True)
    listed = kubectl(kube, "-n", ns, "get", "endpointslices", "-l", MIRROR, "-o", "name").stdout.split()
    assert len(listed) == 2

    kubectl(kube, "-n", ns, "replace", "-f", "-", input=endpoints("custom", [{
        "addresses": [{"ip": "10.2.3.4"}], "ports": [{"name": "web", "port": 8080}]}], {"team": "a"}))
    eventually(lambda: summary(kube, ns, "custom") == [("IPv4", (("web", 8080),), (("10.2.3.4", True),))],
               explain=lambda: str(summary(kube, ns, "custom")))

    kubectl(kube, "-n", ns, "delete", "endpoints", "custom")
    eventually(lambda: not slices(kube, ns, "custom"), explain=lambda: str(summary(kube, ns, "custom")))


def test_skip_mirror_and_services_with_selectors_are_not_mirrored(cluster):
    kube = cluster
    ns = new_namespace(kube, "mirror")
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "plain"}, "spec": {"ports": [{"port": 80}]}}))
    kubectl(kube, "-n", ns, "create", "-f", "-", input=endpoints(
        "plain", [{"addresses": [{"ip": "10.9.9.9"}], "ports": [{"port": 80}]}],
        {"endpointslice.kubernetes.io/skip-mirror": "true"}))
    kubectl(kube, "-n", ns, "create", "-f", "-", input=endpoints(
        "orphan", [{"addresses": [{"ip": "10.9.9.8"}], "ports": [{"port": 80}]}]))  # no Service at all
    kubectl(kube, "-n", ns, "label", "endpoints", "plain", "endpointslice.kubernetes.io/skip-mirror-")
    eventually(lambda: summary(kube, ns, "plain") == [("IPv4", (("", 80),), (("10.9.9.9", True),))],
               explain=lambda: str(summary(kube, ns, "plain")))
    assert slices(kube, ns, "orphan") == []
    kubectl(kube, "-n", ns, "patch", "service", "plain", "--type=merge", "-p", '{"spec": {"selector": {"app": "x"}}}')
    eventually(lambda: not [s for s in slices(kube, ns, "plain")
                            if s["metadata"]["labels"].get("endpointslice.kubernetes.io/managed-by")
                            == "endpointslicemirroring-controller.k8s.io"])
