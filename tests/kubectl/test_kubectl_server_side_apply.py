"""`kubectl apply --server-side`: managedFields per manager, conflicts as kubectl prints them, `--force-conflicts`,
ownership by list-map keys, other writers recorded, and `kubectl diff --server-side`."""

from __future__ import annotations

import json

from tests.kubectl.cli import Kubectl, configmap, deployment, diff_changes

RESOLVE = """Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `--force-conflicts` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts
"""


def managers(kc: Kubectl, kind: str, name: str) -> dict[tuple[str, str, str], dict]:
    """managedFields as {(manager, operation, subresource): fieldsV1}."""
    obj = json.loads(kc.run("get", kind, name, "-o", "json", "--show-managed-fields").stdout)
    return {(e["manager"], e["operation"], e.get("subresource", "")): e["fieldsV1"]
            for e in obj["metadata"]["managedFields"]}


def test_server_side_apply_then_other_writers_each_get_an_entry(kc: Kubectl):
    ns = kc.namespace
    done, requests = kc.requests("apply", "--server-side", "-f", "-",
                                 input=configmap(ns, "ssa1", owner="server-side-apply", k="v"))
    assert done.stdout == "configmap/ssa1 serverside-applied\n"
    patch = [r for r in requests if r.method == "PATCH"]
    assert [(r.query, r.status) for r in patch] == [
        ({"fieldManager": "kubectl", "fieldValidation": "Strict", "force": "false"}, 201)]
    assert kc.out("apply", "--server-side", "-f", "-", input=configmap(ns, "ssa1", owner="server-side-apply",
                                                                       k="v")) \
        == "configmap/ssa1 serverside-applied"

    kc.run("patch", "cm", "ssa1", "-p", '{"data":{"x":"y"}}')
    kc.run("label", "cm", "ssa1", "k=v")
    live = kc.json("get", "cm", "ssa1")
    live["data"]["replaced"] = "1"
    kc.run("replace", "-f", "-", input=json.dumps(live))
    assert managers(kc, "cm", "ssa1") == {
        ("kubectl", "Apply", ""): {"f:data": {"f:k": {}, "f:owner": {}}},
        ("kubectl-patch", "Update", ""): {"f:data": {"f:x": {}}},
        ("kubectl-label", "Update", ""): {"f:metadata": {"f:labels": {".": {}, "f:k": {}}}},
        ("kubectl-replace", "Update", ""): {"f:data": {"f:replaced": {}}},
    }
    # Dropping a field from the applied configuration removes it, as nobody else owns it.
    kc.run("apply", "--server-side", "-f", "-", input=configmap(ns, "ssa1", owner="server-side-apply"))
    assert kc.json("get", "cm", "ssa1")["data"] == {"owner": "server-side-apply", "x": "y", "replaced": "1"}


def test_conflicts_between_two_field_managers_and_force(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "--server-side", "--field-manager=team-a", "-f", "-", input=configmap(ns, k="a", j="a"))
    clash = kc.run("apply", "--server-side", "--field-manager=team-b", "-f", "-",
                   input=configmap(ns, k="b", j="b", mine="b"), check=False)
    assert clash.returncode == 1
    assert clash.stdout == ""
    assert clash.stderr == ('error: Apply failed with 2 conflicts: conflicts with "team-a":\n- .data.j\n- .data.k\n'
                            + RESOLVE)
    one = kc.run("apply", "--server-side", "--field-manager=team-b", "-f", "-",
                 input=configmap(ns, k="b", j="a"), check=False)
    assert one.stderr.splitlines()[0] == 'error: Apply failed with 1 conflict: conflict with "team-a": .data.k'
    # Same value: co-ownership, no conflict.
    assert kc.out("apply", "--server-side", "--field-manager=team-b", "-f", "-",
                  input=configmap(ns, j="a")) == "configmap/settings serverside-applied"
    assert kc.json("get", "cm", "settings")["data"] == {"k": "a", "j": "a"}

    assert kc.out("apply", "--server-side", "--field-manager=team-b", "--force-conflicts", "-f", "-",
                  input=configmap(ns, k="b", j="a")) == "configmap/settings serverside-applied"
    assert kc.json("get", "cm", "settings")["data"] == {"k": "b", "j": "a"}
    assert managers(kc, "cm", "settings") == {
        ("team-a", "Apply", ""): {"f:data": {"f:j": {}}},
        ("team-b", "Apply", ""): {"f:data": {"f:j": {}, "f:k": {}}},
    }


def test_list_map_keys_share_a_list_between_managers(kc: Kubectl):
    ns = kc.namespace
    base = json.loads(deployment(ns, replicas=1))
    kc.run("apply", "--server-side", "--field-manager=base", "-f", "-", input=json.dumps(base))
    sidecar = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": ns},
               "spec": {"template": {"spec": {"containers": [{"name": "proxy", "image": "envoy:1"}]}}}}
    kc.run("apply", "--server-side", "--field-manager=mesh", "-f", "-", input=json.dumps(sidecar))
    names = [c["name"] for c in kc.json("get", "deploy", "web")["spec"]["template"]["spec"]["containers"]]
    assert names == ["nginx", "proxy"]
    owned = managers(kc, "deploy", "web")
    mesh = owned[("mesh", "Apply", "")]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert mesh == {'k:{"name":"proxy"}': {".": {}, "f:image": {}, "f:name": {}}}
    base_containers = owned[("base", "Apply", "")]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert list(base_containers) == ['k:{"name":"nginx"}']
    assert 'k:{"containerPort":80,"protocol":"TCP"}' in base_containers['k:{"name":"nginx"}']["f:ports"]
    # The base manager re-applying without the sidecar leaves it alone.
    kc.run("apply", "--server-side", "--field-manager=base", "-f", "-", input=json.dumps(base))
    assert len(kc.json("get", "deploy", "web")["spec"]["template"]["spec"]["containers"]) == 2


def test_scale_is_owned_through_the_scale_subresource(kc: Kubectl):
    ns = kc.namespace
    assert kc.out("apply", "--server-side", "-f", "-", input=deployment(ns, replicas=1)) \
        == "deployment.apps/web serverside-applied"
    done, requests = kc.requests("scale", "deploy/web", "--replicas=3")
    assert done.stdout == "deployment.apps/web scaled\n"
    assert [(r.method, r.path, r.query, r.status) for r in requests if r.method == "PATCH"] == [
        ("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/web/scale", {}, 200)]
    assert managers(kc, "deploy", "web")[("kubectl", "Update", "scale")] == {"f:spec": {"f:replicas": {}}}
    clash = kc.run("apply", "--server-side", "-f", "-", input=deployment(ns, replicas=1), check=False)
    assert clash.stderr.splitlines()[0] == (
        'error: Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: '
        ".spec.replicas")


def test_diff_server_side_is_a_dry_run_apply(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "--server-side", "-f", "-", input=deployment(ns, replicas=1))
    same = kc.run("diff", "--server-side", "-f", "-", input=deployment(ns, replicas=1), check=False)
    assert (same.returncode, same.stdout) == (0, "")
    diff, requests = kc.requests("diff", "--server-side", "-f", "-", input=deployment(ns, replicas=4), check=False)
    assert diff.returncode == 1
    assert diff_changes(diff.stdout) == ["-  generation: 1", "+  generation: 2", "-  replicas: 1", "+  replicas: 4"]
    assert [(r.method, r.query) for r in requests if r.method == "PATCH"] == [
        ("PATCH", {"dryRun": "All", "fieldManager": "kubectl", "force": "false"})]
    assert kc.json("get", "deploy", "web")["spec"]["replicas"] == 1


def test_server_side_apply_migrates_a_client_side_applied_object(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "-f", "-", input=deployment(ns, replicas=1))
    done, requests = kc.requests("apply", "--server-side", "-f", "-", input=deployment(ns, replicas=1))
    assert (done.stdout, done.stderr.count("Warning")) == ("deployment.apps/web serverside-applied\n", 0)
    # apply; keep the annotation (kubectl-last-applied); move ownership with a JSON patch; apply again.
    assert [r.query.get("fieldManager") for r in requests if r.method == "PATCH"] == [
        "kubectl", "kubectl-last-applied", "kubectl", "kubectl"]
    owned = managers(kc, "deploy", "web")
    assert set(owned) == {("kubectl-last-applied", "Apply", ""), ("kubectl", "Apply", "")}
    assert owned[("kubectl-last-applied", "Apply", "")] == {
        "f:metadata": {"f:annotations": {"f:kubectl.kubernetes.io/last-applied-configuration": {}}}}
    assert "f:replicas" in owned[("kubectl", "Apply", "")]["f:spec"]

    version = kc.json("get", "deploy", "web")["metadata"]["resourceVersion"]
    assert kc.out("apply", "--server-side", "-f", "-", input=deployment(ns, replicas=1)) \
        == "deployment.apps/web serverside-applied"
    assert kc.json("get", "deploy", "web")["metadata"]["resourceVersion"] == version  # nothing changed: no write
    kc.run("apply", "--server-side", "-f", "-", input=deployment(ns, replicas=3))
    last = json.loads(kc.json("get", "deploy", "web")["metadata"]["annotations"][
        "kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 3  # the server keeps kubectl's annotation current
