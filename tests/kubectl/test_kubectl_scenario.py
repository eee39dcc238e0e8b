"""The everyday kubectl loop on a Deployment and a ConfigMap: apply, re-apply, change, diff, edit, scale, wait,
describe and delete, checked line by line against what kubectl prints for a real cluster."""

from __future__ import annotations

import json

import pytest

from tests.kubectl.cli import Kubectl, configmap, deployment, diff_changes, editor

AVAILABLE = {"status": {"conditions": [{
    "type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
    "message": "Deployment has minimum availability.",
    "lastUpdateTime": "2026-11-22T02:00:00Z", "lastTransitionTime": "2026-11-22T02:00:00Z"}]}}


@pytest.mark.slow
def test_deployment_apply_diff_edit_scale_wait_delete(kc: Kubectl, tmp_path):
    ns = kc.namespace
    assert kc.out("apply", "-f", "-", input=deployment(ns, replicas=1)) == "deployment.apps/web created"
    assert kc.out("apply", "-f", "-", input=deployment(ns, replicas=1)) == "deployment.apps/web unchanged"
    assert kc.out("apply", "-f", "-", input=deployment(ns, replicas=2)) == "deployment.apps/web configured"
    assert kc.out("scale", "deploy/web", "--replicas=3") == "deployment.apps/web scaled"

    # The reference capture's `kubectl diff -f deploy-diff.yaml` at this point, hunk for hunk.
    diff = kc.run("diff", "-f", "-", input=deployment(ns, replicas=2, image="nginx:1.28"), check=False)
    assert diff.returncode == 1, diff.stderr
    assert diff_changes(diff.stdout) == [
        "-  generation: 3", "+  generation: 4",
        "-  replicas: 3", "+  replicas: 2",
        "-      - image: nginx:1.27", "+      - image: nginx:1.28"]
    assert diff.stdout.startswith("diff -u -N ") and "apps.v1.Deployment." + ns + ".web" in diff.stdout
    same = kc.run("diff", "-f", "-", input=deployment(ns, replicas=3), check=False)
    assert (same.returncode, same.stdout) == (0, "")
    assert kc.json("get", "deploy", "web")["spec"]["replicas"] == 3  # diff is a dry run

    assert kc.out("edit", "deploy/web", env=editor(tmp_path, "s/image: nginx:1.27/image: nginx:1.29/")) \
        == "deployment.apps/web edited"
    unchanged = kc.run("edit", "deploy/web", env=editor(tmp_path))
    assert unchanged.stdout + unchanged.stderr == "Edit cancelled, no changes made.\n"
    live = kc.json("get", "deploy", "web")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"
    assert live["metadata"]["generation"] == 4 and live["status"] == {}

    assert kc.out("wait", "--for=jsonpath={.spec.replicas}=3", "deploy/web", "--timeout=10s") \
        == "deployment.apps/web condition met"
    waiting = kc.start_watching("wait", "--for=condition=Available", "deploy/web", "--timeout=20s")
    kc.run("patch", "deploy/web", "--subresource=status", "--type=merge", "-p", json.dumps(AVAILABLE))
    assert kc.finish(waiting)[:2] == (0, "deployment.apps/web condition met\n")
    timeout = kc.run("wait", "--for=condition=Progressing", "deploy/web", "--timeout=200ms", check=False)
    assert timeout.returncode == 1
    assert timeout.stderr.strip() == "error: timed out waiting for the condition on deployments/web"

    waiting = kc.start_watching("wait", "--for=delete", "deploy/web", "--timeout=20s")
    assert kc.out("delete", "-f", "-", input=deployment(ns)) == 'deployment.apps "web" deleted'
    assert kc.finish(waiting)[:2] == (0, "deployment.apps/web condition met\n")
    gone = kc.run("get", "deploy", "web", check=False)
    assert gone.stderr.strip() == 'Error from server (NotFound): deployments.apps "web" not found'


@pytest.mark.slow
def test_configmap_apply_diff_edit_wait_delete(kc: Kubectl, tmp_path):
    ns = kc.namespace
    assert kc.out("apply", "-f", "-", input=configmap(ns, mode="a")) == "configmap/settings created"
    assert kc.out("apply", "-f", "-", input=configmap(ns, mode="a")) == "configmap/settings unchanged"
    assert kc.out("apply", "-f", "-", input=configmap(ns, mode="b", extra="1")) == "configmap/settings configured"
    diff = kc.run("diff", "-f", "-", input=configmap(ns, mode="c"), check=False)
    assert diff.returncode == 1
    changes = diff_changes(diff.stdout)
    assert "-  extra: \"1\"" in changes and "-  mode: b" in changes and "+  mode: c" in changes
    assert kc.json("get", "cm", "settings")["data"] == {"mode": "b", "extra": "1"}

    assert kc.out("edit", "cm/settings", env=editor(tmp_path, "s/mode: b/mode: edited/")) \
        == "configmap/settings edited"
    assert kc.out("wait", "--for=jsonpath={.data.mode}=edited", "cm/settings", "--timeout=10s") \
        == "configmap/settings condition met"
    waiting = kc.start_watching("wait", "--for=jsonpath={.data.mode}=later", "cm/settings", "--timeout=20s")
    assert kc.out("patch", "cm/settings", "-p", '{"data":{"mode":"later"}}') == "configmap/settings patched"
    assert kc.finish(waiting)[:2] == (0, "configmap/settings condition met\n")

    # Re-applying the file after the edit: the three-way merge puts back only what the file says.
    assert kc.out("apply", "-f", "-", input=configmap(ns, mode="b")) == "configmap/settings configured"
    assert kc.json("get", "cm", "settings")["data"] == {"mode": "b"}
    assert kc.out("delete", "cm", "settings") == 'configmap "settings" deleted'
    assert kc.run("get", "cm", "settings", check=False).returncode == 1


def test_describe_lists_events_about_the_object(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "-f", "-", input=deployment(ns, replicas=1))
    uid = kc.json("get", "deploy", "web")["metadata"]["uid"]
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": ns},
             "involvedObject": {"kind": "Deployment", "name": "web", "namespace": ns, "uid": uid,
                                "apiVersion": "apps/v1"},
             "reason": "ScalingReplicaSet", "message": "Scaled up replica set web-5d7f to 1", "type": "Normal",
             "source": {"component": "deployment-controller"}, "count": 1,
             "firstTimestamp": "2026-11-22T02:00:00Z", "lastTimestamp": "2026-11-22T02:00:00Z"}
    other = {**event, "metadata": {"name": "other.1", "namespace": ns},
             "involvedObject": {**event["involvedObject"], "name": "other", "uid": "0"}}
    kc.run("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [event, other]}))

    done, requests = kc.requests("describe", "deploy", "web")
    lines = done.stdout.splitlines()
    assert lines[:2] == ["Name:                   web", f"Namespace:              {ns}"]
    assert "Replicas:               1 desired | 0 updated | 0 total | 0 available | 0 unavailable" in lines
    assert "StrategyType:           RollingUpdate" in lines
    assert "RollingUpdateStrategy:  25% max unavailable, 25% max surge" in lines
    events = lines[lines.index("Events:"):]
    assert events[1].split() == ["Type", "Reason", "Age", "From", "Message"]
    assert events[3].split()[:3] == ["Normal", "ScalingReplicaSet", events[3].split()[2]]
    assert events[3].endswith("deployment-controller  Scaled up replica set web-5d7f to 1")
    assert len(events) == 4  # the other object's event is not listed
    selector = next(r.query["fieldSelector"] for r in requests if r.path.endswith("/events"))
    assert sorted(selector.split(",")) == [  # kubectl builds it from a Go map: any order
        "involvedObject.kind=Deployment", "involvedObject.name=web", f"involvedObject.namespace={ns}",
        f"involvedObject.uid={uid}"]

    kc.run("create", "configmap", "plain", "--from-literal=a=b")
    assert kc.run("describe", "cm", "plain").stdout == (
        f"Name:         plain\nNamespace:    {ns}\nLabels:       <none>\nAnnotations:  <none>\n\n"
        "Data\n====\na:\n----\nb\n\n\nBinaryData\n====\n\nEvents:  <none>\n")


def test_edit_rejected_by_validation_keeps_the_object(kc: Kubectl, tmp_path):
    kc.run("apply", "-f", "-", input=deployment(kc.namespace, replicas=1))
    done = kc.run("edit", "deploy/web", env=editor(tmp_path, "s/^  replicas: .*/  replicas: -1/"), check=False)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0] == 'error: deployments.apps "web" is invalid'
    assert lines[1].startswith('A copy of your changes has been stored to "') and lines[2:] == [
        "error: Edit cancelled, no valid changes were saved."]
    assert kc.json("get", "deploy", "web")["spec"]["replicas"] == 1
