"""`--dry-run=server` for every writing verb: kubectl prints what would happen and nothing is stored."""

from __future__ import annotations

import json

import pytest

from tests.kubectl.cli import Kubectl, configmap, deployment


def snapshot(kc: Kubectl) -> dict[str, str]:
    """name -> resourceVersion of everything the verbs below could touch."""
    items = kc.json("get", "deploy,cm,svc,sa")["items"]
    return {f"{o['kind']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in items}


@pytest.mark.slow
def test_every_verb_with_server_dry_run_changes_nothing(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "-f", "-", input=deployment(ns, replicas=1))
    kc.run("create", "configmap", "settings", "--from-literal=a=b")
    before = snapshot(kc)
    dry = "--dry-run=server"
    changed = deployment(ns, replicas=5, image="nginx:2")
    expected = [
        (("create", "configmap", "new", "--from-literal=a=b"), "configmap/new created (server dry run)"),
        (("create", "-f", "-"), "deployment.apps/web2 created (server dry run)"),
        (("apply", "-f", "-"), "deployment.apps/web configured (server dry run)"),
        (("apply", "--server-side", "--force-conflicts", "-f", "-"),
         "deployment.apps/web serverside-applied (server dry run)"),
        (("replace", "-f", "-"), "deployment.apps/web replaced (server dry run)"),
        (("scale", "deploy/web", "--replicas=7"), "deployment.apps/web scaled (server dry run)"),
        (("label", "deploy/web", "tier=front"), "deployment.apps/web labeled (server dry run)"),
        (("annotate", "deploy/web", "note=x"), "deployment.apps/web annotated (server dry run)"),
        (("set", "image", "deploy/web", "nginx=nginx:3"), "deployment.apps/web image updated (server dry run)"),
        # kubectl's patch printer drops the dry-run suffix (it resets the operation); so does a real cluster.
        (("patch", "cm", "settings", "-p", '{"data":{"a":"c"}}'), "configmap/settings patched"),
        (("expose", "deploy/web", "--port=80"), "service/web exposed (server dry run)"),
        (("create", "serviceaccount", "robot"), "serviceaccount/robot created (server dry run)"),
        (("delete", "cm", "settings"), 'configmap "settings" deleted (server dry run)'),
        (("delete", "deploy", "web"), 'deployment.apps "web" deleted (server dry run)'),
    ]
    for args, line in expected:
        stdin = None
        if "-f" in args:
            stdin = changed if args[0] != "create" else deployment(ns, name="web2")
            if args[0] == "replace":
                live = kc.json("get", "deploy", "web")
                live["spec"]["replicas"] = 9
                stdin = json.dumps(live)
        assert kc.out(*args, dry, input=stdin) == line
    assert snapshot(kc) == before
    assert kc.json("get", "cm", "settings")["data"] == {"a": "b"}


def test_server_dry_run_delete_sends_dry_run_in_delete_options(kc: Kubectl):
    """kubectl puts dryRun in the DeleteOptions body, not the query: the server must honour both."""
    kc.run("create", "configmap", "keep", "--from-literal=a=b")
    done, requests = kc.requests("delete", "cm", "keep", "--dry-run=server")
    assert [(r.method, r.query) for r in requests if r.method == "DELETE"] == [("DELETE", {})]
    assert done.stdout == 'configmap "keep" deleted (server dry run)\n'
    assert kc.json("get", "cm", "keep")["data"] == {"a": "b"}
    assert kc.out("delete", "cm", "-l", "nothing=here", "--dry-run=server") == "No resources found"
    kc.run("label", "cm", "keep", "set=1")
    assert kc.out("delete", "cm", "-l", "set=1", "--dry-run=server") == 'configmap "keep" deleted (server dry run)'
    assert kc.json("get", "cm", "keep")["metadata"]["name"] == "keep"


def test_server_dry_run_namespace_delete_keeps_it_and_its_content(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "-f", "-", input=configmap(ns, a="1"))
    assert kc.out("delete", "ns", ns, "--dry-run=server", namespaced=False) \
        == f'namespace "{ns}" deleted (server dry run)'
    got = kc.json("get", "ns", ns)
    assert got["status"]["phase"] == "Active" and "deletionTimestamp" not in got["metadata"]
    assert kc.json("get", "cm", "settings")["data"] == {"a": "1"}


def test_diff_of_a_new_object_is_a_dry_run_create(kc: Kubectl):
    ns = kc.namespace
    diff, requests = kc.requests("diff", "-f", "-", input=deployment(ns, name="fresh"), check=False)
    assert diff.returncode == 1
    assert [(r.method, r.query, r.status) for r in requests if r.method == "POST"] == [
        ("POST", {"dryRun": "All", "fieldManager": "kubectl-client-side-apply"}, 201)]
    body = diff.stdout.splitlines()[4:]  # after `diff -u -N`, ---, +++ and the @@ line
    assert diff.stdout.splitlines()[3].startswith("@@ -0,0 +1,") and all(line[0] == "+" for line in body)
    added = [line[1:] for line in body]
    assert added[:4] == ["apiVersion: apps/v1", "kind: Deployment", "metadata:", added[3]]
    assert added[3].startswith("  creationTimestamp: ")  # the file as is: no last-applied annotation
    assert "  name: fresh" in added and "  generation: 1" in added and "status: {}" in added
    assert not any(line.startswith("  resourceVersion") for line in added)  # never stored: no version
    assert kc.run("get", "deploy", "fresh", check=False).returncode == 1
