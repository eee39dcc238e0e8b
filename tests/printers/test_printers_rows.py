"""Row cells of individual kinds, case by case (rules rewritten from upstream's printers)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from mini_kube.apiserver.printers import cells, columns, human_duration, table
from mini_kube.apiserver.registry.kinds import builtin_resources
from mini_kube.apiserver.resources import ResourceType
from mini_kube.machinery.quantity import canonical

NOW = datetime(2026, 1, 10, 12, 0, 0, tzinfo=UTC)
RES = {(r.group, r.version, r.kind): r for r in builtin_resources()}


def ago(seconds: float) -> str:
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str = "x", age: float = 30, **extra) -> dict:
    return {"name": name, "creationTimestamp": ago(age), **extra}


def row(group: str, version: str, kind: str, obj: dict) -> list:
    return cells(RES[group, version, kind], obj, NOW)


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (-1.5, "0s"), (-2, "<invalid>"), (5, "5s"), (119.9, "119s"), (120, "2m"), (123, "2m3s"),
    (599, "9m59s"), (600, "10m"), (179 * 60, "179m"), (3 * 3600, "3h"), (3 * 3600 + 240, "3h4m"), (8 * 3600, "8h"),
    (47 * 3600, "47h"), (48 * 3600, "2d"), (49 * 3600, "2d1h"), (8 * 86400, "8d"), (729 * 86400, "729d"),
    (730 * 86400, "2y"), (731 * 86400, "2y1d"), (8 * 365 * 86400, "8y"),
])
def test_human_duration(seconds, text):
    assert human_duration(seconds) == text


@pytest.mark.parametrize(("text", "canon"), [
    ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("0.5Gi", "512Mi"), ("1000m", "1"), ("1500m", "1500m"),
    ("1.5", "1500m"), ("2000", "2k"), ("1e3", "1e3"), ("100Gi", "100Gi"), ("512", "512"), ("0", "0"),
    ("0.1m", "100u"), ("5G", "5G"), ("1000k", "1M"), ("-3", "-3"), (None, "0"),
])
def test_quantities_print_canonically(text, canon):
    assert canonical(text) == canon


def test_missing_creation_time_prints_unknown():
    assert row("", "v1", "ConfigMap", {"metadata": {"name": "c"}}) == ["c", 0, "<unknown>"]


def test_configmap_counts_data_and_binary_data():
    assert row("", "v1", "ConfigMap", {"metadata": meta("c", 185), "data": {"a": "1"}, "binaryData": {"b": "AA=="}}) \
        == ["c", 2, "3m5s"]


def test_every_builtin_kind_has_one_cell_per_column():
    for resource in builtin_resources():
        defs = columns(resource)
        assert defs[0]["name"] in ("Name", "Last Seen")
        assert len(cells(resource, {"metadata": meta()}, NOW)) == len(defs), resource.kind
        for d in defs:
            assert d["type"] in ("string", "integer", "boolean", "date", "number")
            assert d["description"] or d["name"] == "Handler", (resource.kind, d["name"])


def _pod(phase="Running", statuses=(), init=(), init_statuses=(), **spec_extra) -> dict:
    containers = [{"name": s.get("name", f"c{i}"), "image": "img"} for i, s in enumerate(statuses)] or [
        {"name": "c0", "image": "img"}]
    return {"metadata": meta("p"), "spec": {"containers": containers, "initContainers": list(init), **spec_extra},
            "status": {"phase": phase, "containerStatuses": list(statuses), "initContainerStatuses": list(init_statuses),
                       "conditions": [{"type": "Initialized", "status": "True"}] if not init_statuses else []}}


RUNNING = {"state": {"running": {}}, "ready": True, "restartCount": 0}


@pytest.mark.parametrize(("pod", "ready", "status", "restarts"), [
    (_pod("Pending", [{"state": {"waiting": {"reason": "ContainerCreating"}}, "ready": False}]), "0/1",
     "ContainerCreating", "0"),
    (_pod("Running", [RUNNING]), "1/1", "Running", "0"),
    (_pod("Running", [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}, "restartCount": 4,
                       "lastState": {"terminated": {"finishedAt": ago(300), "exitCode": 1}}}]),
     "0/1", "CrashLoopBackOff", "4 (5m ago)"),
    (_pod("Running", [{"name": "a", "state": {"terminated": {"reason": "Completed"}}}, {"name": "b", **RUNNING}]),
     "1/2", "NotReady", "0"),
    (_pod("Failed", [{"state": {"terminated": {"exitCode": 137, "signal": 9}}}]), "0/1", "Signal:9", "0"),
    (_pod("Failed", [{"state": {"terminated": {"exitCode": 2}}}]), "0/1", "ExitCode:2", "0"),
    (_pod("Pending", [{"state": {"waiting": {"reason": "PodInitializing"}}}], init=[{"name": "i"}],
          init_statuses=[{"name": "i", "state": {"waiting": {"reason": "PodInitializing"}}}]), "0/1", "Init:0/1", "0"),
    (_pod("Pending", [{"state": {"waiting": {}}}], init=[{"name": "i"}],
          init_statuses=[{"name": "i", "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "restartCount": 2}]),
     "0/1", "Init:CrashLoopBackOff", "2"),
    (_pod("Pending", [{"state": {"waiting": {}}}], init=[{"name": "i"}],
          init_statuses=[{"name": "i", "state": {"terminated": {"exitCode": 3}}}]), "0/1", "Init:ExitCode:3", "0"),
    (_pod("Running", [RUNNING], init=[{"name": "side", "restartPolicy": "Always"}],
          init_statuses=[{"name": "side", "started": True, "ready": True, "state": {"running": {}}}]),
     "2/2", "Running", "0"),
])
def test_pod_ready_status_and_restarts(pod, ready, status, restarts):
    assert row("", "v1", "Pod", pod)[1:4] == [ready, status, restarts]


def test_pod_terminating_unknown_and_gated():
    pod = _pod("Running", [RUNNING])
    pod["metadata"]["deletionTimestamp"] = ago(1)
    assert row("", "v1", "Pod", pod)[2] == "Terminating"
    pod["status"]["reason"] = "NodeLost"
    assert row("", "v1", "Pod", pod)[2] == "Unknown"
    gated = _pod("Pending")
    gated["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
    assert row("", "v1", "Pod", gated)[2] == "SchedulingGated"


def test_pod_wide_cells():
    pod = _pod("Running", [RUNNING], nodeName="n1", readinessGates=[{"conditionType": "x"}, {"conditionType": "y"}])
    pod["status"].update(podIP="10.1.0.5", conditions=[{"type": "x", "status": "True"}])
    assert row("", "v1", "Pod", pod)[5:] == ["10.1.0.5", "n1", "<none>", "1/2"]
    assert row("", "v1", "Pod", _pod("Pending"))[5:] == ["<none>", "<none>", "<none>", "<none>"]


def test_finished_pod_rows_carry_a_completed_condition():
    pods = RES["", "v1", "Pod"]
    done = table(pods, [_pod("Succeeded"), _pod("Running")], NOW)
    assert done["rows"][0]["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                              "message": "The pod has completed successfully."}]
    assert "conditions" not in done["rows"][1]
    assert list(done["rows"][0]) == ["cells", "conditions", "object"]


def _svc(kind: str, **spec) -> dict:
    return {"metadata": meta("s"), "spec": {"type": kind, "clusterIPs": ["10.0.0.9"], **spec}, "status": {}}


@pytest.mark.parametrize(("svc", "external", "ports"), [
    (_svc("ClusterIP", ports=[{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]), "<none>",
     "80/TCP,53/UDP"),
    (_svc("ClusterIP", externalIPs=["1.2.3.4", "5.6.7.8"]), "1.2.3.4,5.6.7.8", "<none>"),
    (_svc("NodePort", ports=[{"port": 80, "nodePort": 30001, "protocol": "TCP"}]), "<none>", "80:30001/TCP"),
    (_svc("LoadBalancer"), "<pending>", "<none>"),
    ({**_svc("LoadBalancer"), "status": {"loadBalancer": {"ingress": [{"ip": "9.9.9.9"}, {"hostname": "lb.example"},
                                                                       {"ip": "9.9.9.9"}]}}},
     "9.9.9.9,lb.example", "<none>"),
    (_svc("ExternalName", externalName="db.example.com"), "db.example.com", "<none>"),
])
def test_service_external_ip_and_ports(svc, external, ports):
    assert row("", "v1", "Service", svc)[3:5] == [external, ports]


def test_headless_service_and_selector():
    svc = _svc("ClusterIP", clusterIPs=["None"], selector={"b": "2", "a": "1"})
    got = row("", "v1", "Service", svc)
    assert got[2] == "None" and got[6] == "a=1,b=2"


def test_endpoints_are_cut_after_three():
    ep = {"metadata": meta("e"), "subsets": [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(4)],
                                              "ports": [{"port": 8080}]}]}
    assert row("", "v1", "Endpoints", ep)[1] == "10.0.0.0:8080,10.0.0.1:8080,10.0.0.2:8080 + 1 more..."
    assert row("", "v1", "Endpoints", {"metadata": meta("e")})[1] == "<none>"


def test_endpoint_slice_ports_and_addresses():
    es = {"metadata": meta("s"), "addressType": "IPv4", "ports": [{"port": 80}, {"name": "x"}, {}],
          "endpoints": [{"addresses": ["10.0.0.1"]}]}
    assert row("discovery.k8s.io", "v1", "EndpointSlice", es)[1:4] == ["IPv4", "80,x,*", "10.0.0.1"]
    assert row("discovery.k8s.io", "v1", "EndpointSlice", {"metadata": meta()})[2:4] == ["<unset>", "<unset>"]


def test_selectors_in_wide_columns():
    rs = {"metadata": meta("r"), "spec": {"replicas": 3, "selector": {
        "matchLabels": {"app": "web"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["b", "a"]}, {"key": "canary", "operator": "DoesNotExist"}]},
        "template": {"spec": {"containers": [{"name": "a", "image": "i1"}, {"name": "b", "image": "i2"}]}}},
        "status": {"replicas": 2, "readyReplicas": 1}}
    assert row("apps", "v1", "ReplicaSet", rs) == ["r", 3, 2, 1, "30s", "a,b", "i1,i2",
                                                     "app=web,!canary,tier in (a,b)"]
    deploy = {"metadata": meta("d"), "spec": {"selector": {"matchLabels": {"app": "web"}}}, "status": {}}
    assert row("apps", "v1", "Deployment", deploy) == ["d", "0/1", 0, 0, "30s", "", "", "app=web"]
    deploy["spec"]["selector"] = {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}
    assert row("apps", "v1", "Deployment", deploy)[-1] == "<invalid>"


def test_daemon_set_and_stateful_set():
    ds = {"metadata": meta("d"), "spec": {"selector": {}, "template": {"spec": {"nodeSelector": {"os": "linux"}}}},
          "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 2, "numberReady": 1}}
    assert row("apps", "v1", "DaemonSet", ds) == ["d", 3, 2, 1, 0, 0, "os=linux", "30s", "", "", "<none>"]
    sts = {"metadata": meta("s"), "spec": {"replicas": 3}, "status": {"readyReplicas": 2}}
    assert row("apps", "v1", "StatefulSet", sts)[:2] == ["s", "2/3"]


@pytest.mark.parametrize(("spec", "status", "expected"), [
    ({"completions": 3}, {"succeeded": 1, "startTime": ago(90)}, ["Running", "1/3", "90s"]),
    ({"parallelism": 4}, {}, ["Running", "0/1 of 4", ""]),
    ({}, {"succeeded": 1, "startTime": ago(700), "completionTime": ago(100),
          "conditions": [{"type": "Complete", "status": "True"}]}, ["Complete", "1/1", "10m"]),
    ({}, {"conditions": [{"type": "Failed", "status": "True"}]}, ["Failed", "0/1", ""]),
    ({"suspend": True}, {"conditions": [{"type": "Suspended", "status": "True"}]}, ["Suspended", "0/1", ""]),
])
def test_job_status_completions_duration(spec, status, expected):
    job = {"metadata": meta("j"), "spec": spec, "status": status}
    assert row("batch", "v1", "Job", job)[1:4] == expected


def test_cron_job():
    cj = {"metadata": meta("c"), "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {}}}},
          "status": {"active": [{"name": "a"}], "lastScheduleTime": ago(65)}}
    assert row("batch", "v1", "CronJob", cj)[:7] == ["c", "*/5 * * * *", "<none>", "False", 1, "65s", "30s"]


def test_hpa_v2_and_v1_targets():
    hpa = {"metadata": meta("h"), "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5,
                                          "minReplicas": 2, "metrics": [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                        "averageValue": "1024Mi"}}},
        {"type": "Pods", "pods": {"target": {"averageValue": "10"}}}]},
        "status": {"currentReplicas": 3, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}}]}}
    assert row("autoscaling", "v2", "HorizontalPodAutoscaler", hpa)[1:6] == [
        "Deployment/web", "cpu: 42%/80%, memory: <unknown>/1Gi + 1 more...", "2", 5, 3]
    v1 = {"metadata": meta("h"), "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5,
                                         "targetCPUUtilizationPercentage": 50}, "status": {}}
    assert row("autoscaling", "v1", "HorizontalPodAutoscaler", v1)[2:4] == ["cpu: <unknown>/50%", "<unset>"]


def test_pdb_and_priority_class():
    pdb = {"metadata": meta("p"), "spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}}
    assert row("policy", "v1", "PodDisruptionBudget", pdb)[1:4] == ["50%", "N/A", 1]
    pc = {"metadata": meta("pc"), "value": 1000, "globalDefault": True, "preemptionPolicy": "Never"}
    assert row("scheduling.k8s.io", "v1", "PriorityClass", pc) == ["pc", 1000, True, "30s", "Never"]


def test_core_events_and_events_v1_print_alike():
    core = {"metadata": meta("e.1"), "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.x"},
            "reason": "Pulled", "message": " pulled \n", "type": "Normal", "source": {"component": "kubelet",
                                                                                      "host": "n1"},
            "firstTimestamp": ago(600), "lastTimestamp": ago(60), "count": 3}
    assert row("", "v1", "Event", core) == ["60s", "Normal", "Pulled", "pod/web-1", "spec.x", "kubelet, n1", "pulled",
                                            "10m", 3, "e.1"]
    v1 = {"metadata": meta("e.2"), "regarding": {"kind": "Node", "name": "n1"}, "note": "hi", "type": "Warning",
          "reason": "R", "eventTime": ago(6).replace("Z", ".500000Z"), "reportingController": "ctl",
          "reportingInstance": "ctl-1"}
    assert row("events.k8s.io", "v1", "Event", v1) == ["5s", "Warning", "R", "node/n1", "", "ctl, ctl-1", "hi", "5s",
                                                       1, "e.2"]


def test_node_status_roles_and_addresses():
    node = {"metadata": meta("n", labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "gpu"}),
            "spec": {"unschedulable": True},
            "status": {"conditions": [{"type": "Ready", "status": "False"}],
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.0"}}}
    assert row("", "v1", "Node", node) == ["n", "NotReady,SchedulingDisabled", "control-plane,gpu", "30s", "v1.32.0",
                                           "10.0.0.2", "<none>", "<unknown>", "<unknown>", "<unknown>"]
    assert row("", "v1", "Node", {"metadata": meta("m")})[1:3] == ["Unknown", "<none>"]


def test_volumes_and_claims():
    pv = {"metadata": meta("pv"), "spec": {"capacity": {"storage": "1024Mi"}, "accessModes": [
        "ReadWriteMany", "ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast",
        "claimRef": {"namespace": "ns", "name": "c"}}, "status": {"phase": "Bound"}}
    assert row("", "v1", "PersistentVolume", pv) == ["pv", "1Gi", "RWO,RWX", "Retain", "Bound", "ns/c", "fast",
                                                     "<unset>", "", "30s", "<unset>"]
    pvc = {"metadata": meta("c"), "spec": {"volumeName": "pv", "volumeMode": "Filesystem"},
           "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}}
    assert row("", "v1", "PersistentVolumeClaim", pvc) == ["c", "Bound", "pv", "1Gi", "RWO", "", "<unset>", "30s",
                                                           "Filesystem"]


def test_resource_quota_splits_requests_and_limits():
    quota = {"metadata": meta("q"), "status": {"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi"},
                                               "used": {"pods": "1", "requests.memory": "512Mi"}}}
    assert row("", "v1", "ResourceQuota", quota)[1:3] == ["pods: 1/10, requests.memory: 512Mi/1Gi", "limits.cpu: 0/2"]


def test_rbac_bindings_and_roles():
    rb = {"metadata": meta("rb"), "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [
        {"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"}, {"kind": "Group", "name": "devs"},
        {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]}
    assert row("rbac.authorization.k8s.io", "v1", "RoleBinding", rb) == [
        "rb", "ClusterRole/view", "30s", "alice, bob", "devs", "ns/sa"]
    role = RES["rbac.authorization.k8s.io", "v1", "Role"]
    assert [c["name"] for c in columns(role)] == ["Name", "Created At"]
    assert cells(role, {"metadata": meta("r")}, NOW) == ["r", ago(30)]


def test_storage_kinds():
    sc = {"metadata": meta("std", annotations={"storageclass.kubernetes.io/is-default-class": "true"}),
          "provisioner": "p"}
    assert row("storage.k8s.io", "v1", "StorageClass", sc) == ["std (default)", "p", "Delete", "Immediate", False,
                                                               "30s"]
    driver = {"metadata": meta("d"), "spec": {"tokenRequests": [{"audience": "a"}, {"audience": "b"}]}}
    assert row("storage.k8s.io", "v1", "CSIDriver", driver)[1:7] == [True, False, False, "a,b", False, "<none>"]
    cap = {"metadata": meta("c"), "storageClassName": "fast", "capacity": "2048Mi"}
    assert row("storage.k8s.io", "v1", "CSIStorageCapacity", cap) == ["c", "fast", "2Gi"]


def test_admission_and_networking_kinds():
    vap = {"metadata": meta("v"), "spec": {"validations": [{}, {}], "paramKind": {"apiVersion": "v1",
                                                                               "kind": "ConfigMap"}}}
    assert row("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", vap)[1:3] == [2, "v1/ConfigMap"]
    binding = {"metadata": meta("b"), "spec": {"policyName": "v", "paramRef": {"name": "p"}}}
    assert row("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding", binding)[1:3] == ["v", "*/p"]
    ing = {"metadata": meta("i"), "spec": {"rules": [{}, {"host": "a"}, {"host": "b"}, {"host": "c"}, {"host": "d"}],
                                          "tls": [{}]}}
    assert row("networking.k8s.io", "v1", "Ingress", ing)[1:5] == ["<none>", "a,b,c + 2 more...", "", "80, 443"]
    netpol = {"metadata": meta("n"), "spec": {"podSelector": {}}}
    assert row("networking.k8s.io", "v1", "NetworkPolicy", netpol)[1] == "<none>"


def test_table_object_modes_and_list_metadata():
    cm = RES["", "v1", "ConfigMap"]
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("c")}
    full = table(cm, [obj], NOW, include_object="Object", list_meta={"resourceVersion": "9", "continue": "abc",
                                                                     "remainingItemCount": 0})
    assert full["rows"][0]["object"] is obj
    assert full["metadata"] == {"resourceVersion": "9", "continue": "abc", "remainingItemCount": 0}
    assert table(cm, [obj], NOW, include_object="None")["rows"][0]["object"] is None
    assert table(cm, [], NOW)["rows"] == []
    assert table(RES["", "v1", "LimitRange"], [], NOW)["rows"] is None


def test_custom_resource_cells_are_typed():
    crd_columns = ({"name": "N", "type": "number", "jsonPath": ".spec.n"},
                   {"name": "B", "type": "boolean", "jsonPath": ".spec.b"},
                   {"name": "L", "type": "string", "jsonPath": ".spec.items"},
                   {"name": "F", "type": "string", "jsonPath": ".spec.items[1].x", "priority": 1},
                   {"name": "When", "type": "date", "jsonPath": ".status.at"})
    res = ResourceType("ex.com", "v1", "Thing", "things", True, crd={}, printer_columns=crd_columns)
    obj = {"metadata": meta("t"), "spec": {"n": 2, "b": "yes", "items": [{"x": 1}, {"x": "two"}]},
           "status": {"at": "not a time"}}
    assert cells(res, obj, NOW) == ["t", 2.0, None, '[{"x":1},{"x":"two"}]', "two", "<invalid>"]
    assert columns(res)[4]["priority"] == 1
    plain = ResourceType("ex.com", "v1", "Plain", "plains", True, crd={})
    assert [c["name"] for c in columns(plain)] == ["Name", "Age"]
    assert cells(plain, {"metadata": meta("p", 7200)}, NOW) == ["p", "120m"]


def test_a_table_of_two_thousand_configmaps():
    """(Its speed is bench/api_bench.py's to measure, not a test's.)"""
    cm = RES["", "v1", "ConfigMap"]
    objs = [{"metadata": meta(f"cm-{i}", i), "data": {"k": "v"}} for i in range(2000)]
    built = table(cm, objs, NOW)
    assert len(built["rows"]) == 2000 and built["rows"][-1]["cells"] == ["cm-1999", 1, "33m"]


def test_v1beta1_tables_name_their_version():
    got = table(RES["", "v1", "ConfigMap"], [{"metadata": meta("c")}], NOW, version="v1beta1")
    assert got["apiVersion"] == "meta.k8s.io/v1beta1"
    assert got["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
