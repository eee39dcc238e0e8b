"""In-cluster config from a Pod (issue #14): the `kubernetes` Service (ClusterIP 10.0.0.1:443, and its DNS name)
reaches the API server through kube-proxy, the serving certificate is valid for both, and a Pod using its
mounted service-account token gets exactly what RBAC grants its ServiceAccount."""

from __future__ import annotations

import pytest

from tests.helpers import kubectl

from .conftest import eventually, status_of, tls_dns_cluster

SCRIPT = """
import json, os, ssl, urllib.error, urllib.request
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
ctx = ssl.create_default_context(cafile=sa + "/ca.crt")
auth = {"Authorization": "Bearer " + open(sa + "/token").read()}
ns = open(sa + "/namespace").read()
def get(url):
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=auth), context=ctx).status
    except urllib.error.HTTPError as exc:
        return exc.code
host = os.environ["KUBERNETES_SERVICE_HOST"] + ":" + os.environ["KUBERNETES_SERVICE_PORT"]
print(host, get(f"https://{host}/api/v1/namespaces/{ns}/pods"),
      get(f"https://kubernetes.default.svc/api/v1/namespaces/{ns}/pods"),
      get("https://kubernetes.default.svc/api/v1/namespaces/kube-system/secrets"))
"""


@pytest.fixture(scope="module")
def kube():
    yield from tls_dns_cluster()


@pytest.mark.slow
def test_a_pod_calls_the_api_with_its_service_account(kube):
    kubectl(kube, "create", "namespace", "inside")
    kubectl(kube, "-n", "inside", "create", "rolebinding", "view", "--clusterrole=view",
            "--serviceaccount=inside:default")
    kubectl(kube, "-n", "inside", "run", "client", "--image=python", "--restart=Never", "--", "python3", "-c", SCRIPT)
    eventually(lambda: status_of(kube, "inside", "client").get("phase") == "Succeeded", timeout=60)
    # the namespace's pods: allowed by the RoleBinding, by IP and by name; kube-system's Secrets: forbidden
    assert kubectl(kube, "-n", "inside", "logs", "client").stdout.split() == ["10.0.0.1:443", "200", "200", "403"]


DIAL_ENDPOINT = """
import ssl, sys, urllib.request
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
ctx = ssl.create_default_context(cafile=sa + "/ca.crt")
ctx.check_hostname = False  # the serving certificate names the ClusterIP and DNS names, not the gateway
auth = {"Authorization": "Bearer " + open(sa + "/token").read()}
print(urllib.request.urlopen(urllib.request.Request(f"https://{sys.argv[1]}/api", headers=auth), context=ctx).status)
"""


def test_the_kubernetes_endpoints_name_an_address_pods_reach_the_api_server_at(kube):
    """`default/kubernetes` Endpoints and EndpointSlice name one non-loopback address and the API server's port
    (named https), the same in both, and a Pod reaches the API server there."""
    import json

    endpoints = json.loads(kubectl(kube, "get", "endpoints", "kubernetes", "-o", "json").stdout)
    (subset,) = endpoints["subsets"]
    (address,) = subset["addresses"]
    (port,) = subset["ports"]
    assert port["name"] == "https" and port["protocol"] == "TCP" and not address["ip"].startswith("127.")
    slices = json.loads(kubectl(kube, "get", "endpointslices", "-l", "kubernetes.io/service-name=kubernetes",
                                "-o", "json").stdout)["items"]
    assert [(s["addressType"], s["endpoints"][0]["addresses"], s["ports"]) for s in slices] == [
        ("IPv4", [address["ip"]], [{"name": "https", "port": port["port"], "protocol": "TCP"}])]
    kubectl(kube, "create", "namespace", "dial")
    kubectl(kube, "-n", "dial", "run", "client", "--image=python", "--restart=Never", "--", "python3", "-c",
            DIAL_ENDPOINT, f"{address['ip']}:{port['port']}")
    eventually(lambda: status_of(kube, "dial", "client").get("phase") in ("Succeeded", "Failed"), timeout=60)
    assert kubectl(kube, "-n", "dial", "logs", "client").stdout.split() == ["200"]
