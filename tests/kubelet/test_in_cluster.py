"""In-cluster config from a Pod (issue #14): the `kubernetes` Service (ClusterIP 10.0.0.1:443, and its DNS name)
reaches the API server through kube-proxy, the serving certificate is valid for both, and a Pod using its
mounted service-account token gets exactly what RBAC grants its ServiceAccount."""

from __future__ import annotations

import pytest

from tests.helpers import kubectl

from .conftest import eventually, process_cluster_or_skip, status_of

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
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(insecure_http=False, nodes=1, node_runtime="process", dns=True) as cluster:
        yield cluster


def test_a_pod_calls_the_api_with_its_service_account(kube):
    kubectl(kube, "create", "namespace", "inside")
    kubectl(kube, "-n", "inside", "create", "rolebinding", "view", "--clusterrole=view",
            "--serviceaccount=inside:default")
    kubectl(kube, "-n", "inside", "run", "client", "--image=python", "--restart=Never", "--", "python3", "-c", SCRIPT)
    eventually(lambda: status_of(kube, "inside", "client").get("phase") == "Succeeded", timeout=60)
    # the namespace's pods: allowed by the RoleBinding, by IP and by name; kube-system's Secrets: forbidden
    assert kubectl(kube, "-n", "inside", "logs", "client").stdout.split() == ["10.0.0.1:443", "200", "200", "403"]
