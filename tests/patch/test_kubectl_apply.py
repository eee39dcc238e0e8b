"""Real kubectl against a mini-kube server: client-side apply, server-side apply conflicts and forcing."""

from __future__ import annotations

import json

import yaml

from tests.helpers import kubectl

DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}, labels: {{app: web}}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: nginx
        image: {image}
        ports: [{{containerPort: 80}}]
"""


def configmap(ns: str, **data: str) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "shared", "namespace": ns}, "data": data})


def get(kube, ns: str, kind: str, name: str) -> dict:
    return json.loads(kubectl(kube, "get", kind, name, "-n", ns, "-o", "json", "--show-managed-fields").stdout)


def test_client_side_apply_then_reapply(mini_kube_session, kube_namespace):
    ns = kube_namespace
    out = kubectl(mini_kube_session, "apply", "-f", "-", input=DEPLOY.format(ns=ns, replicas=2, image="nginx:1.27"))
    assert out.stdout.strip() == "deployment.apps/web created"
    out = kubectl(mini_kube_session, "apply", "-f", "-", input=DEPLOY.format(ns=ns, replicas=2, image="nginx:1.27"))
    assert out.stdout.strip() == "deployment.apps/web unchanged"
    out = kubectl(mini_kube_session, "apply", "-f", "-", input=DEPLOY.format(ns=ns, replicas=3, image="nginx:1.28"))
    assert out.stdout.strip() == "deployment.apps/web configured"
    obj = get(mini_kube_session, ns, "deployment", "web")
    assert obj["spec"]["replicas"] == 3
    containers = obj["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("nginx", "nginx:1.28")]
    last = json.loads(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 3


def test_server_side_apply_conflict_between_two_field_managers(mini_kube_session, kube_namespace):
    ns = kube_namespace
    first = kubectl(mini_kube_session, "apply", "--server-side", "--field-manager=team-a", "-f", "-",
                    input=configmap(ns, k="a", only_a="1"))
    assert first.stdout.strip() == "configmap/shared serverside-applied"
    clash = kubectl(mini_kube_session, "apply", "--server-side", "--field-manager=team-b", "-f", "-",
                    input=configmap(ns, k="b"), check=False)
    assert clash.returncode == 1
    assert 'conflict with "team-a": .data.k' in clash.stderr
    assert "--force-conflicts" in clash.stderr
    obj = get(mini_kube_session, ns, "configmap", "shared")
    assert obj["data"] == {"k": "a", "only_a": "1"}


def test_force_conflicts_moves_ownership(mini_kube_session, kube_namespace):
    ns = kube_namespace
    kubectl(mini_kube_session, "apply", "--server-side", "--field-manager=team-a", "-f", "-",
            input=configmap(ns, k="a", only_a="1"))
    kubectl(mini_kube_session, "apply", "--server-side", "--field-manager=team-b", "--force-conflicts", "-f", "-",
            input=configmap(ns, k="b"))
    obj = get(mini_kube_session, ns, "configmap", "shared")
    assert obj["data"] == {"k": "b", "only_a": "1"}
    owned = {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}
    assert owned["team-a"] == {"f:data": {"f:only_a": {}}}
    assert owned["team-b"] == {"f:data": {"f:k": {}}}
    # team-a dropping its last field from its configuration prunes it; team-b's value stays.
    kubectl(mini_kube_session, "apply", "--server-side", "--field-manager=team-a", "-f", "-",
            input=configmap(ns))
    assert get(mini_kube_session, ns, "configmap", "shared").get("data") == {"k": "b"}




def test_managed_fields_after_create_patch_label_match_the_real_server(mini_kube_session, kube_namespace):
    ns = ["-n", kube_namespace]
    kubectl(mini_kube_session, "create", "configmap", "c1", "--from-literal=a=b", *ns)
    kubectl(mini_kube_session, "patch", "cm", "c1", "-p", '{"data":{"x":"y"}}', *ns)
    kubectl(mini_kube_session, "label", "cm", "c1", "k=v", *ns)
    obj = get(mini_kube_session, kube_namespace, "configmap", "c1")
    owned = {e["manager"]: (e["operation"], e["fieldsV1"]) for e in obj["metadata"]["managedFields"]}
    assert owned == {
        "kubectl-create": ("Update", {"f:data": {".": {}, "f:a": {}}}),
        "kubectl-patch": ("Update", {"f:data": {"f:x": {}}}),
        "kubectl-label": ("Update", {"f:metadata": {"f:labels": {".": {}, "f:k": {}}}}),
    }


def test_server_side_apply_over_kubectl_create_conflicts_with_the_creator(mini_kube_session, kube_namespace):
    ns = kube_namespace
    kubectl(mini_kube_session, "create", "configmap", "shared", "--from-literal=k=a", "-n", ns)
    clash = kubectl(mini_kube_session, "apply", "--server-side", "-f", "-", input=configmap(ns, k="b"),
                    check=False)
    assert clash.returncode == 1
    assert 'conflict with "kubectl-create" using v1: .data.k' in clash.stderr
