"""Output kubectl builds from our answers: `get all` (the `all` category), `-o wide`, custom columns, jsonpath,
`-o name` and `kubectl events`."""

from __future__ import annotations

import json

import pytest

from tests.kubectl.cli import Kubectl, deployment, editor

ALL_CATEGORY = ["api/v1/{ns}/pods", "api/v1/{ns}/replicationcontrollers", "api/v1/{ns}/services",
                "apis/apps/v1/{ns}/daemonsets", "apis/apps/v1/{ns}/deployments", "apis/apps/v1/{ns}/replicasets",
                "apis/apps/v1/{ns}/statefulsets", "apis/autoscaling/v2/{ns}/horizontalpodautoscalers",
                "apis/batch/v1/{ns}/cronjobs", "apis/batch/v1/{ns}/jobs"]


def test_get_all_lists_every_kind_in_the_all_category(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "-f", "-", input=deployment(ns, replicas=2))
    kc.run("create", "service", "clusterip", "web", "--tcp=80:80")
    kc.run("create", "configmap", "not-in-all", "--from-literal=a=b")
    done, requests = kc.requests("get", "all")
    paths = [r.path for r in requests if r.query.get("limit") == "500"]
    assert paths == ["/" + p.format(ns=f"namespaces/{ns}") for p in ALL_CATEGORY]
    blocks = [block.splitlines() for block in done.stdout.strip().split("\n\n")]
    assert [b[0].split()[:2] for b in blocks] == [["NAME", "TYPE"], ["NAME", "READY"]]
    assert blocks[0][1].split()[:2] == ["service/web", "ClusterIP"]
    assert blocks[1][1].split()[:4] == ["deployment.apps/web", "0/2", "0", "0"]
    assert "configmap" not in done.stdout
    empty = kc.run("get", "all", "-n", "kube-public", namespaced=False)
    assert (empty.stdout, empty.stderr) == ("", "No resources found in kube-public namespace.\n")


def test_wide_custom_columns_jsonpath_and_name(kc: Kubectl):
    ns = kc.namespace
    kc.run("apply", "-f", "-", input=deployment(ns, replicas=2))
    wide = kc.out("get", "deploy", "-o", "wide").splitlines()
    assert wide[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES",
                               "SELECTOR"]
    row = wide[1].split()
    assert row[:4] == ["web", "0/2", "0", "0"] and row[5:] == ["nginx", "nginx:1.27", "app=web"]
    kc.run("run", "box", "--image=busybox", "--labels=app=box")
    pod = kc.out("get", "pod", "box", "-o", "wide").splitlines()
    assert pod[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
                              "READINESS", "GATES"]
    assert pod[1].split()[:4] == ["box", "0/1", "Pending", "0"] and pod[1].split()[5:] == ["<none>"] * 4

    columns = kc.out("get", "deploy", "-o", "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas,"
                     "IMAGE:.spec.template.spec.containers[0].image,MISSING:.status.readyReplicas")
    assert [line.split() for line in columns.splitlines()] == [["NAME", "REPLICAS", "IMAGE", "MISSING"],
                                                              ["web", "2", "nginx:1.27", "<none>"]]
    assert kc.out("get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.spec.selector.matchLabels.app}") \
        == "2 web"
    ranged = kc.out("get", "deploy,pods", "-o",
                    'jsonpath={range .items[*]}{.kind}/{.metadata.name}{"\\n"}{end}')
    assert ranged.splitlines() == ["Deployment/web", "Pod/box"]
    assert kc.out("get", "deploy,pod", "-o", "name").splitlines() == ["deployment.apps/web", "pod/box"]
    assert kc.out("get", "deploy", "-l", "app=web", "-o", "name") == "deployment.apps/web"
    sorted_names = kc.out("get", "pod,deploy", "--sort-by=.metadata.name", "-o", "name")
    assert sorted_names.splitlines() == ["pod/box", "deployment.apps/web"]  # sorted per kind, kinds in order
    table = kc.out("get", "deploy", "--show-labels", "--no-headers").split()
    assert table[0] == "web" and table[-1] == "app=web"


def test_kubectl_events_lists_events_of_the_namespace(kc: Kubectl):
    ns = kc.namespace
    kc.run("run", "box", "--image=busybox")
    uid = kc.json("get", "pod", "box")["metadata"]["uid"]
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "box.1", "namespace": ns},
             "involvedObject": {"kind": "Pod", "name": "box", "namespace": ns, "uid": uid, "apiVersion": "v1"},
             "reason": "Scheduled", "message": f"Successfully assigned {ns}/box to node-1", "type": "Normal",
             "source": {"component": "default-scheduler"}, "count": 1,
             "firstTimestamp": "2026-11-22T02:00:00Z", "lastTimestamp": "2026-11-22T02:00:00Z"}
    kc.run("create", "-f", "-", input=json.dumps(event))
    lines = kc.out("events").splitlines()
    assert lines[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert lines[1].split()[1:4] == ["Normal", "Scheduled", "Pod/box"]
    assert kc.out("events", "--for", "pod/box").splitlines()[1] == lines[1]
    assert kc.run("events", "--for", "pod/other").stderr == f"No events found in {ns} namespace.\n"
    described = kc.out("describe", "pod", "box").splitlines()
    assert described[-1].split()[:2] == ["Normal", "Scheduled"]
    assert described[-1].endswith(f"default-scheduler  Successfully assigned {ns}/box to node-1")


def _objects(ns: str) -> list[dict]:
    """One object of most built-in kinds; cluster-scoped ones are named after the namespace."""
    template = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    selector = {"matchLabels": {"app": "x"}}
    return [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}, "stringData": {"a": "b"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa1"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"app": "x"}},
         "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc1"},
         "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}},
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q1"}, "spec": {"hard": {"pods": "10"}}},
        {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr1"},
         "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc1"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": ns},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp"}}},
        {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc1"},
         "spec": {"replicas": 1, "selector": {"app": "x"}, "template": template}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs1"},
         "spec": {"selector": selector, "template": template}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "sts1"},
         "spec": {"serviceName": "svc1", "selector": selector, "template": template}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds1"},
         "spec": {"selector": selector, "template": template}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j1"},
         "spec": {"template": {"spec": {"restartPolicy": "Never", **template["spec"]}}}},
        {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj1"},
         "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {
             "spec": {"restartPolicy": "Never", **template["spec"]}}}}}},
        {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h1"},
         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                  "minReplicas": 1, "maxReplicas": 3}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb1"},
         "spec": {"minAvailable": 1, "selector": selector}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i1"},
         "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
                  "backend": {"service": {"name": "svc1", "port": {"number": 80}}}}]}}]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np1"},
         "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r1"},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb1"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r1"},
         "subjects": [{"kind": "ServiceAccount", "name": "sa1", "namespace": ns}]},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": ns}, "value": 1000},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": ns},
         "provisioner": "example.com/p"},
        {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l1"},
         "spec": {"holderIdentity": "me"}},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "es1"},
         "addressType": "IPv4", "endpoints": [{"addresses": ["10.1.1.1"]}]},
    ]


@pytest.mark.slow
def test_describe_every_builtin_kind(kc: Kubectl):
    ns = kc.namespace
    objects = _objects(ns)
    listing = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    kc.run("apply", "-f", "-", input=listing)
    try:
        for obj in objects:
            kind = obj["kind"].lower() + ("." + obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else "")
            described = kc.run("describe", kind, obj["metadata"]["name"])
            assert described.stderr == "", (kind, described.stderr)
            first = described.stdout.split("\n")[0]
            assert first.startswith("Name:") and first.endswith(" " + obj["metadata"]["name"]), kind
        pod = kc.out("describe", "pod", "p1").splitlines()
        assert "QoS Class:        Burstable" in pod and pod[-1] == "Events:           <none>"
        assert "Min replicas:                                          1" in kc.out("describe", "hpa", "h1")
    finally:
        kc.run("delete", "pv,pc,sc", ns, namespaced=False, check=False)


def test_subresources_and_last_applied_views(kc: Kubectl, tmp_path):
    ns = kc.namespace
    waiting = kc.start("wait", "--for=create", "deploy/web", "--timeout=20s")
    kc.run("apply", "-f", "-", input=deployment(ns, replicas=2))
    assert kc.finish(waiting)[:2] == (0, "deployment.apps/web condition met\n")
    scale = kc.out("get", "deploy", "web", "--subresource=scale").splitlines()
    assert [line.split()[:3] for line in scale] == [["NAME", "DESIRED", "AVAILABLE"], ["web", "2", "0"]]
    assert scale[0].split()[3] == "AGE"
    assert kc.out("patch", "deploy", "web", "--subresource=scale", "--type=merge", "-p",
                  '{"spec":{"replicas":4}}') == "scale.autoscaling/web patched"
    assert kc.json("get", "deploy", "web", "--subresource=scale")["spec"] == {"replicas": 4}
    assert kc.out("get", "deploy", "web", "--subresource=status", "-o", "jsonpath={.status}") == "{}"

    last = kc.out("apply", "view-last-applied", "deploy/web", "-o", "json")
    assert json.loads(last)["spec"]["replicas"] == 2
    assert kc.out("apply", "edit-last-applied", "deploy/web",
                  env=editor(tmp_path, "s/replicas: 2/replicas: 5/")) == "deployment.apps/web edited"
    assert json.loads(kc.out("apply", "view-last-applied", "deploy/web", "-o", "json"))["spec"]["replicas"] == 5
    assert kc.out("replace", "--force", "-f", "-", input=deployment(ns, replicas=1)).splitlines() == [
        'deployment.apps "web" deleted', "deployment.apps/web replaced"]
