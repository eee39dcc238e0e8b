"""Client-side `kubectl apply`: the last-applied annotation, strategic merge of lists by their merge keys,
fields other writers added kept, and `--prune` by label."""

from __future__ import annotations

import json

from tests.kubectl.cli import Kubectl, configmap


def app(ns: str, image: str, env: dict[str, str], ports: list[int], volumes: bool = False) -> str:
    container = {"name": "main", "image": image, "env": [{"name": k, "value": v} for k, v in env.items()],
                 "ports": [{"containerPort": p} for p in ports]}
    spec: dict = {"containers": [container]}
    if volumes:
        container["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
        spec["volumes"] = [{"name": "data", "emptyDir": {}}]
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app", "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "app"}},
                 "template": {"metadata": {"labels": {"app": "app"}}, "spec": spec}}})


def containers(kc: Kubectl) -> list[dict]:
    return kc.json("get", "deploy", "app")["spec"]["template"]["spec"]["containers"]


def test_apply_merges_lists_by_merge_key_and_keeps_other_writers_fields(kc: Kubectl):
    ns = kc.namespace
    assert kc.out("apply", "-f", "-", input=app(ns, "busybox:1", {"A": "a", "B": "b"}, [80, 81])) \
        == "deployment.apps/app created"
    last = json.loads(kc.json("get", "deploy", "app")["metadata"]["annotations"][
        "kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "a"},
                                                                         {"name": "B", "value": "b"}]
    # Another writer adds a sidecar container and an env var to the main container.
    kc.run("patch", "deploy", "app", "-p", json.dumps({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "image": "envoy"}, {"name": "main", "env": [{"name": "C", "value": "c"}]}]}}}}))

    out = kc.out("apply", "-f", "-", input=app(ns, "busybox:2", {"A": "a2"}, [80, 82], volumes=True))
    assert out == "deployment.apps/app configured"
    got = {c["name"]: c for c in containers(kc)}
    assert list(got) == ["sidecar", "main"]  # upstream's element order: patch order, server-only kept in place
    assert got["sidecar"]["image"] == "envoy"
    main = got["main"]
    assert main["image"] == "busybox:2"
    # env merged by name: C (not ours) kept, B (dropped from the file) removed, A changed.
    assert main["env"] == [{"name": "C", "value": "c"}, {"name": "A", "value": "a2"}]
    # ports merged by containerPort: 81 removed, 82 added, defaults (protocol) filled in by the server.
    assert main["ports"] == [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 82, "protocol": "TCP"}]
    assert main["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert kc.json("get", "deploy", "app")["spec"]["template"]["spec"]["volumes"] == [
        {"name": "data", "emptyDir": {}}]

    # With server-only list items (the sidecar, env C) kubectl's three-way diff always sends a patch of
    # `$setElementOrder` directives, so it says "configured" against any cluster; the server writes nothing.
    before = kc.json("get", "deploy", "app")["metadata"]["resourceVersion"]
    assert kc.out("apply", "-f", "-", input=app(ns, "busybox:2", {"A": "a2"}, [80, 82], volumes=True)) \
        == "deployment.apps/app configured"
    assert kc.json("get", "deploy", "app")["metadata"]["resourceVersion"] == before
    # Dropping the volumes from the file removes them (they are in the last-applied configuration).
    kc.run("apply", "-f", "-", input=app(ns, "busybox:2", {"A": "a2"}, [80, 82]))
    spec = kc.json("get", "deploy", "app")["spec"]["template"]["spec"]
    assert "volumes" not in spec and "volumeMounts" not in spec["containers"][1]


def test_apply_adopts_an_object_created_without_the_annotation(kc: Kubectl):
    kc.run("create", "configmap", "settings", "--from-literal=mode=a")
    done = kc.run("apply", "-f", "-", input=configmap(kc.namespace, mode="b"))
    assert done.stdout == "configmap/settings configured\n"
    assert done.stderr == (
        "Warning: resource configmaps/settings is missing the kubectl.kubernetes.io/last-applied-configuration "
        "annotation which is required by kubectl apply. kubectl apply should only be used on resources created "
        "declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be "
        "patched automatically.\n")
    assert "kubectl.kubernetes.io/last-applied-configuration" in kc.json("get", "cm", "settings")["metadata"][
        "annotations"]


def test_apply_prune_deletes_labelled_objects_missing_from_the_files(kc: Kubectl):
    ns = kc.namespace
    both = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        json.loads(configmap(ns, "p1", {"set": "p"}, a="1")), json.loads(configmap(ns, "p2", {"set": "p"}, a="2"))]})
    kc.run("create", "configmap", "unlabelled", "--from-literal=a=b")
    allow = "--prune-allowlist=core/v1/ConfigMap"
    assert kc.out("apply", "--prune", "-l", "set=p", allow, "-f", "-", input=both).splitlines() == [
        "configmap/p1 created", "configmap/p2 created"]
    done, requests = kc.requests("apply", "--prune", "-l", "set=p", allow, "-f", "-",
                                 input=configmap(ns, "p1", {"set": "p"}, a="1"))
    assert done.stdout.splitlines() == ["configmap/p1 unchanged", "configmap/p2 pruned"]
    listing = [r for r in requests if r.method == "GET" and r.path == f"/api/v1/namespaces/{ns}/configmaps"]
    assert [r.query.get("labelSelector") for r in listing] == ["set=p"]
    assert [(r.method, r.path, r.status) for r in requests if r.method == "DELETE"] == [
        ("DELETE", f"/api/v1/namespaces/{ns}/configmaps/p2", 200)]
    names = kc.out("get", "cm", "-o", "name").split()
    assert "configmap/p1" in names and "configmap/unlabelled" in names and "configmap/p2" not in names
