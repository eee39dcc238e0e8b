"""The conformance suite's sample API server, built in (kubelet/sample_apiserver/), with the etcd image beside it
in one Pod, as the aggregator test runs them: behind a Service and an APIService it becomes Available, and real
kubectl creates, lists and deletes wardle.example.com flunders through the aggregator, as a user it knows only by
the front-proxy headers, authorized by SubjectAccessReview."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives import serialization

from tests.admission.hooks import make_ca, make_serving_cert
from tests.helpers import kubectl

from .conftest import eventually, new_namespace, tls_dns_cluster

IMAGE = "registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2"
ETCD = "registry.k8s.io/etcd:3.5.16-0"


@pytest.fixture(scope="module")
def kube() -> Iterator:
    yield from tls_dns_cluster()


def _manifests(ns: str) -> list[dict]:
    ca, ca_key = make_ca("wardle-ca")
    cert, key = make_serving_cert(ca, ca_key, (f"sample-api.{ns}.svc",))
    ca_bundle = base64.b64encode(ca.public_bytes(serialization.Encoding.PEM)).decode()
    account = [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]
    etcd_url = "http://127.0.0.1:2379"
    return [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "certs", "namespace": ns},
         "data": {"tls.crt": base64.b64encode(cert).decode(), "tls.key": base64.b64encode(key).decode()}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": f"{ns}:auth-delegator"}, "subjects": account,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:auth-delegator"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": f"{ns}-auth-reader", "namespace": "kube-system"}, "subjects": account,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "extension-apiserver-authentication-reader"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "wardle", "namespace": ns,
                                                          "labels": {"apiserver": "true"}},
         "spec": {"containers": [
             {"name": "sample-apiserver", "image": IMAGE, "args": [
                 f"--etcd-servers={etcd_url}", "--tls-cert-file=/certs/tls.crt", "--tls-private-key-file=/certs/tls.key",
                 "--audit-log-path=-"],
              "volumeMounts": [{"name": "certs", "mountPath": "/certs", "readOnly": True}],
              "readinessProbe": {"httpGet": {"scheme": "HTTPS", "port": 443, "path": "/readyz"}, "periodSeconds": 1}},
             {"name": "etcd", "image": ETCD, "command": ["/usr/local/bin/etcd", "--listen-client-urls", etcd_url,
                                                         "--advertise-client-urls", etcd_url]}],
             "volumes": [{"name": "certs", "secret": {"secretName": "certs"}}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "sample-api", "namespace": ns},
         "spec": {"selector": {"apiserver": "true"}, "ports": [{"port": 7443, "targetPort": 443}]}},
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1alpha1.wardle.example.com"},
         "spec": {"group": "wardle.example.com", "version": "v1alpha1", "caBundle": ca_bundle,
                  "groupPriorityMinimum": 2000, "versionPriority": 200,
                  "service": {"namespace": ns, "name": "sample-api", "port": 7443}}},
    ]


@pytest.mark.slow
def test_flunders_are_served_through_the_aggregator(kube) -> None:
    ns = new_namespace(kube)
    for manifest in _manifests(ns):
        kubectl(kube, "apply", "-f", "-", input=json.dumps(manifest))

    def available() -> str:
        done = kubectl(kube, "get", "apiservice", "v1alpha1.wardle.example.com", "-o",
                       "jsonpath={.status.conditions[?(@.type=='Available')].message}", check=False)
        return done.stdout

    eventually(lambda: available() == "all checks passed", timeout=90, explain=lambda: available() + kubectl(
        kube, "-n", ns, "logs", "wardle", "-c", "sample-apiserver", check=False).stdout)
    flunder = {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
               "metadata": {"name": "f1", "labels": {"sample-label": "true"}}}
    created = kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps(flunder))
    assert created.stdout.strip() == "flunder.wardle.example.com/f1 created"
    listed = json.loads(kubectl(kube, "-n", ns, "get", "flunders", "-o", "json").stdout)
    assert [(i["metadata"]["name"], i["metadata"]["namespace"]) for i in listed["items"]] == [("f1", ns)]
    assert listed["items"][0]["metadata"]["uid"] and int(listed["items"][0]["metadata"]["resourceVersion"]) > 0
    denied = kubectl(kube, "-n", ns, "get", "flunders", f"--as=system:serviceaccount:{ns}:nobody", check=False)
    assert denied.returncode != 0
    assert (f'flunders.wardle.example.com is forbidden: User "system:serviceaccount:{ns}:nobody" cannot list resource '
            f'"flunders" in API group "wardle.example.com" in the namespace "{ns}"') in denied.stderr, denied.stderr
    kubectl(kube, "-n", ns, "delete", "flunder", "f1")
    assert json.loads(kubectl(kube, "-n", ns, "get", "flunders", "-o", "json").stdout)["items"] == []
    kubectl(kube, "delete", "apiservice", "v1alpha1.wardle.example.com")
