"""Output kubectl builds from our answers: `get all` (the `all` category), `-o wide`, custom columns, jsonpath,
`-o name` and `kubectl events`."""

from __future__ import annotations

import json

from tests.kubectl.cli import Kubectl, deployment

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
