"""Admission and conversion webhooks served by Pods behind Services, as a cluster runs them: agnhost's `webhook`
and `crd-conversion-webhook` in Pods with their serving certificate from a Secret; the API server, which is not
on the Pod network, reaches them through a kubelet's CONNECT tunnel into the cluster network. Driven with real
kubectl."""

from __future__ import annotations

import base64
import json
import time
import uuid

import pytest
from cryptography.hazmat.primitives import serialization
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import CUSTOMRESOURCEDEFINITIONS, PODS

from tests.admission.hooks import MUTATING, VALIDATING, make_ca, make_serving_cert
from tests.helpers import kubectl

from .conftest import eventually, new_namespace

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"
CERTS = "/webhook.local.config/certificates"
POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  containers:
  - name: server
    image: {image}
    args: [{subcommand}, --tls-cert-file={certs}/tls.crt, --tls-private-key-file={certs}/tls.key, -v=4, --port=8443]
    ports: [{{containerPort: 8443}}]
    readinessProbe: {{httpGet: {{scheme: HTTPS, port: 8443, path: /readyz}}, periodSeconds: 1}}
    volumeMounts: [{{name: certs, mountPath: {certs}, readOnly: true}}]
  volumes: [{{name: certs, secret: {{secretName: {name}-certs}}}}]
---
apiVersion: v1
kind: Service
metadata: {{name: {name}}}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 443, targetPort: 8443}}]
"""


def serve(kube, namespace: str, name: str, subcommand: str) -> str:
    """Run agnhost `subcommand` in a Pod behind Service `name` with a certificate for `name.namespace.svc`;
    the CA bundle that trusts it, once the Pod is Ready and the Service has its endpoint."""
    ca, ca_key = make_ca()
    cert, key = make_serving_cert(ca, ca_key, (f"{name}.{namespace}.svc",))
    kubectl(kube, "-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{name}-certs"},
        "data": {"tls.crt": base64.b64encode(cert).decode(), "tls.key": base64.b64encode(key).decode()}}))
    kubectl(kube, "-n", namespace, "create", "-f", "-", input=POD.format(
        name=name, image=AGNHOST, subcommand=subcommand, certs=CERTS))
    kubectl(kube, "-n", namespace, "wait", "--for=condition=Ready", f"pod/{name}", "--timeout=60s")
    eventually(lambda: kubectl(kube, "-n", namespace, "get", "endpoints", name, "-o",
                               "jsonpath={.subsets[0].addresses[0].ip}").stdout.strip() != "", timeout=30)
    return base64.b64encode(ca.public_bytes(serialization.Encoding.PEM)).decode()


def hook(name: str, namespace: str, service: str, ca: str, path: str, rules: list[dict], **extra) -> dict:
    return {"name": name, "rules": rules, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "clientConfig": {"caBundle": ca, "service": {"namespace": namespace, "name": service, "path": path,
                                                          "port": 443}}, **extra}


def configmaps(*operations: str) -> list[dict]:
    return [{"operations": list(operations), "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]


def register(kube, ref: ResourceRef, kind: str, name: str, *hooks: dict) -> None:
    kube.client.create(ref, {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                             "metadata": {"name": name}, "webhooks": list(hooks)})


@pytest.fixture(scope="module")
def webhook_pod(process_cluster):
    """A namespace whose Pod `hooks` runs agnhost webhook behind Service `hooks`: (namespace, CA bundle)."""
    namespace = new_namespace(process_cluster)
    return namespace, serve(process_cluster, namespace, "hooks", "webhook")


def test_validating_and_mutating_webhooks_in_a_pod_deny_and_mutate(process_cluster, webhook_pod) -> None:
    kube, (ns, ca) = process_cluster, webhook_pod
    register(kube, VALIDATING, "ValidatingWebhookConfiguration", f"deny-{ns}",
             hook("deny.webhooks.example.com", ns, "hooks", ca, "/configmaps", configmaps("CREATE", "UPDATE")))
    register(kube, MUTATING, "MutatingWebhookConfiguration", f"mutate-{ns}",
             hook("stage-1.webhooks.example.com", ns, "hooks", ca, "/mutating-configmaps", configmaps("CREATE")),
             hook("stage-2.webhooks.example.com", ns, "hooks", ca, "/mutating-configmaps", configmaps("CREATE")))
    try:
        refused = kubectl(kube, "-n", ns, "create", "configmap", "bad", "--from-literal=webhook-e2e-test="
                          "webhook-disallow", check=False)
        assert refused.returncode == 1
        assert 'admission webhook "deny.webhooks.example.com" denied the request' in refused.stderr
        kubectl(kube, "-n", ns, "create", "configmap", "good", "--from-literal=mutation-start=yes")
        data = json.loads(kubectl(kube, "-n", ns, "get", "configmap", "good", "-o", "jsonpath={.data}").stdout)
        assert data == {"mutation-start": "yes", "mutation-stage-1": "yes", "mutation-stage-2": "yes"}
    finally:
        kube.client.delete(VALIDATING, f"deny-{ns}")
        kube.client.delete(MUTATING, f"mutate-{ns}")


@pytest.mark.parametrize(("policy", "timeout", "allowed"), [("Fail", 1, False), ("Ignore", 1, True),
                                                              ("Fail", 10, True)])
def test_timeout_and_failure_policy_of_a_slow_webhook_in_a_pod(process_cluster, webhook_pod, policy, timeout,
                                                                allowed) -> None:
    """agnhost's /always-allow-delay-5s answers after 5 s: with timeoutSeconds 1 the call gives up after 1 s
    (refused when the policy is Fail, let through when it is Ignore); with 10 it is answered and allowed."""
    kube, (ns, ca) = process_cluster, webhook_pod
    name = f"slow-{policy.lower()}-{timeout}-{ns}"
    register(kube, VALIDATING, "ValidatingWebhookConfiguration", name,
             hook("slow.webhooks.example.com", ns, "hooks", ca, "/always-allow-delay-5s", configmaps("CREATE"),
                  timeoutSeconds=timeout, failurePolicy=policy))
    try:
        started = time.monotonic()
        out = kubectl(kube, "-n", ns, "create", "configmap", name, check=False)
        took = time.monotonic() - started
        if allowed:
            assert out.returncode == 0, out.stderr
        else:
            assert out.returncode == 1
            assert ('failed calling webhook "slow.webhooks.example.com": failed to call webhook: Post '
                    f'"https://hooks.{ns}.svc:443/always-allow-delay-5s?timeout=1s": context deadline exceeded'
                    in out.stderr), out.stderr
        assert took < 4.5 if timeout == 1 else took >= 5
    finally:
        kube.client.delete(VALIDATING, name)


def test_connect_admission_refuses_kubectl_attach(process_cluster, webhook_pod) -> None:
    """pods/attach is admitted as a CONNECT (its object a PodAttachOptions): a webhook for it refuses
    `kubectl attach`, while exec, which it does not match, still runs."""
    kube, (ns, ca) = process_cluster, webhook_pod
    rules = [{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/attach"]}]
    register(kube, VALIDATING, "ValidatingWebhookConfiguration", f"attach-{ns}",
             hook("no-attach.webhooks.example.com", ns, "hooks", ca, "/always-deny", rules))
    try:
        out = kubectl(kube, "-n", ns, "attach", "hooks", "-i", "-c", "server", check=False)
        assert out.returncode == 1
        assert ('admission webhook "no-attach.webhooks.example.com" denied the request: this webhook denies all '
                "requests") in out.stderr
        assert kubectl(kube, "-n", ns, "exec", "hooks", "--", "echo", "hi").stdout == "hi\n"
    finally:
        kube.client.delete(VALIDATING, f"attach-{ns}")


def conversion_crd(plural: str, namespace: str, ca: str) -> dict:
    def version(name: str, storage: bool, fields: tuple[str, ...]) -> dict:
        return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {f: {"type": "string"} for f in fields}}}}

    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural[:-1], "kind": plural[:-1].capitalize(),
                               "listKind": plural[:-1].capitalize() + "List"},
                     "versions": [version("v1", True, ("hostPort",)), version("v2", False, ("host", "port"))],
                     "conversion": {"strategy": "Webhook", "webhook": {
                         "conversionReviewVersions": ["v1", "v1beta1"],
                         "clientConfig": {"caBundle": ca, "service": {"namespace": namespace, "name": "converter",
                                                                      "path": "/crdconvert", "port": 443}}}}}}


@pytest.mark.slow
def test_crd_conversion_webhook_in_a_pod_converts_between_versions(process_cluster) -> None:
    kube, ns = process_cluster, new_namespace(process_cluster)
    ca = serve(kube, ns, "converter", "crd-conversion-webhook")
    plural = f"conv{uuid.uuid4().hex[:8]}s"
    kube.client.create(CUSTOMRESOURCEDEFINITIONS, conversion_crd(plural, ns, ca))
    kind = plural[:-1].capitalize()
    try:
        eventually(lambda: kubectl(kube, "get", plural, "-A", check=False).returncode == 0, timeout=20)
        kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps({
            "apiVersion": "stable.example.com/v1", "kind": kind, "metadata": {"name": "one"},
            "hostPort": "localhost:8080"}))
        kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps({  # written in v2, stored in v1
            "apiVersion": "stable.example.com/v2", "kind": kind, "metadata": {"name": "two"},
            "host": "example.com", "port": "80"}))
        v2 = json.loads(kubectl(kube, "-n", ns, "get", f"{plural}.v2.stable.example.com", "-o", "json").stdout)
        assert [(o["apiVersion"], o["metadata"]["name"], o.get("host"), o.get("port"), o.get("hostPort"))
                for o in v2["items"]] == [("stable.example.com/v2", "one", "localhost", "8080", None),
                                          ("stable.example.com/v2", "two", "example.com", "80", None)]
        one = json.loads(kubectl(kube, "-n", ns, "get", f"{plural}.v1.stable.example.com", "two", "-o",
                                 "json").stdout)
        assert (one["apiVersion"], one["hostPort"], "host" in one) == ("stable.example.com/v1", "example.com:80",
                                                                      False)
        watched = kubectl(kube, "get", "--raw", f"/apis/stable.example.com/v2/namespaces/{ns}/{plural}"
                          "?watch=1&timeoutSeconds=1").stdout
        events = [json.loads(line) for line in watched.splitlines() if line.strip()]
        assert [(e["type"], e["object"]["apiVersion"], e["object"].get("host")) for e in events] == [
            ("ADDED", "stable.example.com/v2", "localhost"), ("ADDED", "stable.example.com/v2", "example.com")]
        kube.client.delete(PODS, "converter", ns, body={"gracePeriodSeconds": 0})
        eventually(lambda: kubectl(kube, "-n", ns, "get", "endpoints", "converter", "-o",
                                   "jsonpath={.subsets}").stdout.strip() == "", timeout=30)
        with pytest.raises(ApiError) as info:
            kube.client.get(ResourceRef("stable.example.com", "v2", plural), "one", ns)
        assert info.value.status == 500
        assert info.value.body["message"].startswith(
            f"Internal error occurred: conversion webhook for stable.example.com/v1, Kind={kind} failed: Post "
            f'"https://converter.{ns}.svc:443/crdconvert?timeout=30s": ')
    finally:
        kube.client.delete(CUSTOMRESOURCEDEFINITIONS, f"{plural}.stable.example.com")
