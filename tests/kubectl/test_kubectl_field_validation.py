"""Field validation as kubectl drives it: `--validate=strict|warn|false` becomes `fieldValidation`, and unknown or
duplicated fields fail, warn or pass with the apiserver's words on create, patch and server-side apply."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.kubectl.cli import Kubectl, deployment


def typo(ns: str, name: str = "web") -> str:
    obj = json.loads(deployment(ns, name=name, replicas=1))
    obj["spec"]["replicaz"] = obj["spec"].pop("replicas")
    obj["spec"]["template"]["spec"]["containers"][0]["imagez"] = "x"
    return json.dumps(obj)


def test_create_with_unknown_fields_fails_warns_or_passes(kc: Kubectl):
    ns = kc.namespace
    strict, requests = kc.requests("apply", "-f", "-", input=typo(ns), check=False)
    assert strict.returncode == 1
    assert strict.stderr.splitlines()[-1] == (
        'Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be handled '
        'as a Deployment: strict decoding error: unknown field "spec.replicaz", unknown field '
        '"spec.template.spec.containers[0].imagez"')
    assert [r.query for r in requests if r.method == "POST"] == [
        {"fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"}]

    warn = kc.run("create", "--validate=warn", "-f", "-", input=typo(ns))
    assert warn.stdout == "deployment.apps/web created\n"
    assert warn.stderr == ('Warning: unknown field "spec.replicaz"\n'
                           'Warning: unknown field "spec.template.spec.containers[0].imagez"\n')
    kc.run("delete", "deploy", "web")

    ignore, requests = kc.requests("apply", "--validate=false", "-f", "-", input=typo(ns))
    assert ignore.stdout == "deployment.apps/web created\n"
    assert [r.query["fieldValidation"] for r in requests if r.method == "POST"] == ["Ignore"]
    stored = kc.json("get", "deploy", "web")
    assert "replicaz" not in stored["spec"] and stored["spec"]["replicas"] == 1  # dropped, then defaulted
    assert "imagez" not in stored["spec"]["template"]["spec"]["containers"][0]


def test_apply_to_an_existing_object_reports_the_patch(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "-f", "-", input=deployment(ns, replicas=1))
    strict = kc.run("apply", "-f", "-", input=typo(ns), check=False)
    assert strict.returncode == 1
    # 422 on the `patch` field, quoting the strategic patch as Go prints a map; kubectl shows Invalid errors so.
    message = strict.stderr.splitlines()[-1]
    assert message.startswith('The request is invalid: patch: Invalid value: "map[metadata:map[annotations:map[')
    assert message.endswith(' spec:map[replicas:<nil> replicaz:1 template:map[spec:map[$setElementOrder/containers:'
                            '[map[name:nginx]] containers:[map[imagez:x name:nginx]]]]]]": strict decoding error: '
                            'unknown field "spec.replicaz", unknown field "spec.template.spec.containers[0].imagez"')
    assert kc.json("get", "deploy", "web")["metadata"]["generation"] == 1

    warned = kc.run("patch", "deploy", "web", "--type=merge", "-p", '{"spec":{"replicaz":5}}')
    assert (warned.stdout, warned.stderr) == ("deployment.apps/web patched (no change)\n",
                                              'Warning: unknown field "spec.replicaz"\n')
    # kubectl patch has no --validate: a client asking for Strict on a merge patch gets the patched object quoted.
    request = urllib.request.Request(
        f"{kc.kube.url}/apis/apps/v1/namespaces/{ns}/deployments/web?fieldValidation=Strict", method="PATCH",
        data=b'{"spec":{"replicaz":5,"zz":1}}', headers={"Content-Type": "application/merge-patch+json"})
    with pytest.raises(urllib.error.HTTPError) as failed:
        urllib.request.urlopen(request, timeout=10)
    status = json.loads(failed.value.read())
    assert (status["code"], status["reason"], status["details"]["causes"][0]["field"]) == (422, "Invalid", "patch")
    assert status["message"].startswith(' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"apps/v1\\",')
    assert status["message"].endswith(
        '": strict decoding error: unknown field "spec.replicaz", unknown field "spec.zz"')


def test_server_side_apply_rejects_unknown_fields_in_the_typed_conversion(kc: Kubectl):
    ns = kc.namespace
    for validate in ("--validate=strict", "--validate=false"):
        done = kc.run("apply", "--server-side", validate, "-f", "-", input=typo(ns), check=False)
        assert done.returncode == 1
        assert done.stderr == (f"Error from server: failed to create typed patch object ({ns}/web; apps/v1, "
                               "Kind=Deployment): .spec.replicaz: field not declared in schema\n")
    assert kc.run("get", "deploy", "web", check=False).returncode == 1


def test_server_side_apply_rejects_values_of_the_wrong_type(kc: Kubectl):
    """YAML 1.1 reads `image: y` as true: the typed conversion refuses it (and a string replica count) as
    structured-merge-diff words it, and nothing is stored; a client-side apply fails in decoding, as upstream."""
    ns = kc.namespace
    wrong = json.loads(deployment(ns, name="typed", replicas=1))
    wrong["spec"]["template"]["spec"]["containers"][0]["image"] = True
    done = kc.run("apply", "--server-side", "-f", "-", input=json.dumps(wrong), check=False)
    assert done.returncode == 1
    assert done.stderr == (f"Error from server: failed to create typed patch object ({ns}/typed; apps/v1, "
                           'Kind=Deployment): .spec.template.spec.containers[name="nginx"].image: expected string, '
                           "got &value.valueUnstructured{Value:true}\n")
    wrong = json.loads(deployment(ns, name="typed", replicas=1))
    wrong["spec"]["replicas"] = "3"
    wrong["spec"]["paused"] = "yes"
    done = kc.run("apply", "--server-side", "-f", "-", input=json.dumps(wrong), check=False)
    assert ".spec.replicas: expected numeric (int or float), got string" in done.stderr
    assert ".spec.paused: expected boolean, got &{yes}" in done.stderr
    assert kc.run("get", "deploy", "typed", check=False).returncode == 1


def test_duplicated_fields_sent_raw(kc: Kubectl, tmp_path):
    """kubectl itself keeps the last of repeated keys; raw requests reach the server with them."""
    ns = kc.namespace
    body = tmp_path / "dup.json"
    body.write_text('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"},"data":{"k":"v"}}')
    path = f"/api/v1/namespaces/{ns}/configmaps"
    strict = kc.run("create", "--raw", f"{path}?fieldValidation=Strict", "-f", str(body), check=False,
                    namespaced=False)
    assert strict.stderr.strip() == ('Error from server (BadRequest): ConfigMap in version "v1" cannot be handled '
                                     'as a ConfigMap: strict decoding error: duplicate field "metadata.name"')
    warn = kc.run("create", "--raw", f"{path}?fieldValidation=Warn", "-f", str(body), namespaced=False)
    assert warn.stderr == 'Warning: duplicate field "metadata.name"\n'
    assert json.loads(warn.stdout)["metadata"]["name"] == "b"


def test_a_patch_is_checked_where_it_can_have_changed_the_object():
    """Work proportional to the change (issue #28): a merge or strategic patch of a built-in kind is checked on
    the top-level fields it names (a kubelet's status patch: the status, not the whole Pod, whose other fields
    were checked when written); a JSON patch, a top-level directive or a custom resource: the whole object."""
    from mini_kube.apiserver.handlers.patching import touched
    from mini_kube.apiserver.resources import builtin_rows

    pods = next(r for r in builtin_rows() if r.plural == "pods" and not r.group)
    patched = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}, "status": {"phase": "x"}}
    assert touched(pods, "merge", {"status": {"phase": "x"}}, patched) == {"status": {"phase": "x"}}
    assert touched(pods, "strategic", {"metadata": {"labels": None}, "spec": {}}, patched) == {
        "metadata": {"name": "p"}, "spec": {}}
    assert touched(pods, "strategic", {"$patch": "replace", "spec": {}}, patched) is None
    assert touched(pods, "json", [{"op": "add", "path": "/status/phase", "value": "x"}], patched) is None
