"""ResourceQuota end to end, through real kubectl and the official Python client: the controller fills in
status.hard/status.used (object counts, compute resources, scopes), the admission plugin refuses what would
exceed a quota with upstream's 403 messages and charges what it admits (never past the limit, even when many
creates race), deleted objects give their usage back, and the kind validates as upstream's."""

from __future__ import annotations

import functools
import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException
from mini_kube.machinery.refs import RESOURCEQUOTAS

from tests.helpers import eventually as _eventually
from tests.helpers import kubectl, new_namespace

eventually = functools.partial(_eventually, timeout=20.0, interval=0.05)


@pytest.fixture(scope="module")
def cluster():
    """Every controller (the quota controller resyncing every 2 s), no scheduler or kubelet: Pods stay Pending."""
    from mini_kube.testing import MiniKube

    with MiniKube(scheduler=False, controller_options={"resourcequota": {"resync": 2.0}}) as kube:
        yield kube


@pytest.fixture(scope="module")
def core(cluster):
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(config_file=cluster.kubeconfig, client_configuration=configuration)
    configuration.connection_pool_maxsize = 32
    with k8s.ApiClient(configuration) as api:
        yield k8s.CoreV1Api(api)


def apply(kube, ns: str, manifest: str) -> None:
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest)


def used(kube, ns: str, name: str) -> dict[str, str]:
    return (kube.client.get(RESOURCEQUOTAS, name, ns).get("status") or {}).get("used") or {}


def wait_used(kube, ns: str, name: str, expected: dict[str, str]) -> None:
    eventually(lambda: all(used(kube, ns, name).get(k) == v for k, v in expected.items()),
               explain=lambda: f"used: {used(kube, ns, name)}, expected {expected}")


def pod(name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None, **spec) -> str:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": resources}], **spec}})


def test_status_counts_objects_and_compute_and_refuses_what_exceeds(cluster):
    kube = cluster
    ns = new_namespace(kube, "rq")
    apply(kube, ns, """
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec:
  hard: {pods: "2", requests.cpu: "1", requests.memory: 1Gi, limits.memory: 2Gi, configmaps: "3",
         count/secrets: "4", services: "5", services.nodeports: "1", services.loadbalancers: "0",
         resourcequotas: "2", count/replicasets.apps: "1"}
""")
    wait_used(kube, ns, "q", {"pods": "0", "requests.cpu": "0", "configmaps": "1", "count/secrets": "0",
                              "services": "0", "resourcequotas": "1", "count/replicasets.apps": "0"})
    status = kube.client.get(RESOURCEQUOTAS, "q", ns)["status"]
    assert status["hard"] == kube.client.get(RESOURCEQUOTAS, "q", ns)["spec"]["hard"]

    missing = kubectl(kube, "-n", ns, "apply", "-f", "-", input=pod("bare"), check=False)
    assert 'pods "bare" is forbidden: failed quota: q: must specify limits.memory for: app; requests.cpu for: ' \
           'app; requests.memory for: app' in missing.stderr
    apply(kube, ns, pod("a", {"cpu": "600m", "memory": "252Mi"}, {"memory": "300Mi"}))
    wait_used(kube, ns, "q", {"pods": "1", "requests.cpu": "600m", "requests.memory": "252Mi",
                              "limits.memory": "300Mi"})
    over = kubectl(kube, "-n", ns, "apply", "-f", "-", input=pod("b", {"cpu": "500m", "memory": "1Mi"},
                                                                    {"memory": "1Mi"}), check=False)
    assert over.returncode == 1
    assert 'Error from server (Forbidden): error when creating "STDIN": pods "b" is forbidden: exceeded quota: q, ' \
           'requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1' in over.stderr

    kubectl(kube, "-n", ns, "create", "service", "nodeport", "np", "--tcp=80")
    lb = kubectl(kube, "-n", ns, "create", "service", "loadbalancer", "lb", "--tcp=80", check=False)
    assert 'services "lb" is forbidden: exceeded quota: q, requested: services.loadbalancers=1,' \
           'services.nodeports=1, used: services.loadbalancers=0,services.nodeports=1, limited: ' \
           'services.loadbalancers=0,services.nodeports=1' in lb.stderr
    kubectl(kube, "-n", ns, "create", "configmap", "c1")
    kubectl(kube, "-n", ns, "create", "configmap", "c2")
    third = kubectl(kube, "-n", ns, "create", "configmap", "c3", check=False)
    assert 'configmaps "c3" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=3, ' \
           'limited: configmaps=3' in third.stderr
    kubectl(kube, "-n", ns, "create", "deployment", "d", "--image=x", "--replicas=0")
    wait_used(kube, ns, "q", {"count/replicasets.apps": "1", "configmaps": "3", "services": "1",
                              "services.nodeports": "1"})

    # deleting gives the usage back (the controller recalculates when what a quota counts goes away)
    kubectl(kube, "-n", ns, "delete", "pod", "a", "--grace-period=0", "--force")
    kubectl(kube, "-n", ns, "delete", "configmap", "c1", "c2")
    kubectl(kube, "-n", ns, "delete", "service", "np")
    wait_used(kube, ns, "q", {"pods": "0", "requests.cpu": "0", "requests.memory": "0", "limits.memory": "0",
                              "configmaps": "1", "services": "0", "services.nodeports": "0"})
    apply(kube, ns, pod("b", {"cpu": "500m", "memory": "1Mi"}, {"memory": "1Mi"}))
    described = kubectl(kube, "-n", ns, "describe", "quota", "q").stdout
    assert "requests.cpu            500m  1" in described


def test_a_quota_with_unknown_usage_refuses_until_calculated_and_dry_run_charges_nothing(cluster, core):
    kube = cluster
    ns = new_namespace(kube, "rq")
    apply(kube, ns, """
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec: {hard: {count/configmaps: "5"}}
""")
    wait_used(kube, ns, "q", {"count/configmaps": "1"})
    kubectl(kube, "-n", ns, "create", "configmap", "dry", "--dry-run=server")
    assert used(kube, ns, "q")["count/configmaps"] == "1"
    quota = kube.client.get(RESOURCEQUOTAS, "q", ns)
    quota["status"] = {"hard": quota["spec"]["hard"]}  # usage not known: the plugin cannot check
    kube.client.replace(RESOURCEQUOTAS, quota, ns, subresource="status")
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_config_map(ns, {"metadata": {"name": "x"}})
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"] == \
        'configmaps "x" is forbidden: status unknown for quota: q, resources: count/configmaps'
    wait_used(kube, ns, "q", {"count/configmaps": "1"})  # the periodic recalculation puts it back


def test_concurrent_creates_never_exceed_the_quota(cluster, core):
    kube = cluster
    ns = new_namespace(kube, "rq")
    apply(kube, ns, """
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec: {hard: {configmaps: "8"}}
""")
    wait_used(kube, ns, "q", {"configmaps": "1"})

    def create(i: int) -> int:
        try:
            core.create_namespaced_config_map(ns, {"metadata": {"name": f"c{i}"}})
            return 201
        except ApiException as exc:
            return exc.status

    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(create, range(30)))
    assert codes.count(201) == 7 and codes.count(403) == 23, codes
    assert len(core.list_namespaced_config_map(ns).items) == 8
    assert used(kube, ns, "q")["configmaps"] == "8"


def test_scopes_split_pods_by_qos_deadline_and_priority_class(cluster):
    kube = cluster
    ns = new_namespace(kube, "rq")
    kubectl(kube, "create", "priorityclass", f"{ns}-gold", "--value=1000")
    apply(kube, ns, f"""
apiVersion: v1
kind: List
items:
- {{apiVersion: v1, kind: ResourceQuota, metadata: {{name: best-effort}},
   spec: {{hard: {{pods: "5"}}, scopes: [BestEffort]}}}}
- {{apiVersion: v1, kind: ResourceQuota, metadata: {{name: not-best-effort}},
   spec: {{hard: {{pods: "5", requests.cpu: "2"}}, scopes: [NotBestEffort]}}}}
- {{apiVersion: v1, kind: ResourceQuota, metadata: {{name: terminating}},
   spec: {{hard: {{pods: "5"}}, scopeSelector: {{matchExpressions: [{{scopeName: Terminating, operator: Exists}}]}}}}}}
- {{apiVersion: v1, kind: ResourceQuota, metadata: {{name: gold}},
   spec: {{hard: {{pods: "1"}}, scopeSelector: {{matchExpressions: [{{scopeName: PriorityClass, operator: In,
     values: [{ns}-gold]}}]}}}}}}
""")
    for name in ("best-effort", "not-best-effort", "terminating", "gold"):
        wait_used(kube, ns, name, {"pods": "0"})
    apply(kube, ns, pod("be"))
    apply(kube, ns, pod("burst", {"cpu": "500m"}))
    apply(kube, ns, pod("deadline", activeDeadlineSeconds=60))
    apply(kube, ns, pod("g1", priorityClassName=f"{ns}-gold"))
    wait_used(kube, ns, "best-effort", {"pods": "3"})
    wait_used(kube, ns, "not-best-effort", {"pods": "1", "requests.cpu": "500m"})
    wait_used(kube, ns, "terminating", {"pods": "1"})
    wait_used(kube, ns, "gold", {"pods": "1"})
    second = kubectl(kube, "-n", ns, "apply", "-f", "-", input=pod("g2", priorityClassName=f"{ns}-gold"), check=False)
    assert 'pods "g2" is forbidden: exceeded quota: gold, requested: pods=1, used: pods=1, limited: pods=1' \
        in second.stderr
    kubectl(kube, "-n", ns, "delete", "pod", "be", "deadline", "--grace-period=0", "--force")
    wait_used(kube, ns, "best-effort", {"pods": "1"})
    wait_used(kube, ns, "terminating", {"pods": "0"})
    kubectl(kube, "delete", "priorityclass", f"{ns}-gold")


def test_status_writes_change_only_status_and_the_controller_resets_them(cluster):
    kube = cluster
    ns = new_namespace(kube, "rq")
    apply(kube, ns, """
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec: {hard: {cpu: 500m, memory: 500Mi}}
""")
    wait_used(kube, ns, "q", {"cpu": "0", "memory": "0"})
    patched = kubectl(kube, "-n", ns, "patch", "quota", "q", "--subresource=status", "--type=merge", "-o", "json",
                      "-p", '{"spec": {"hard": {"cpu": "9"}}, "status": {"hard": {"cpu": "2", "memory": "2Gi"}}}')
    body = json.loads(patched.stdout)
    assert body["spec"]["hard"] == {"cpu": "500m", "memory": "500Mi"}
    assert body["status"]["hard"] == {"cpu": "2", "memory": "2Gi"}
    eventually(lambda: kube.client.get(RESOURCEQUOTAS, "q", ns)["status"]["hard"] == {"cpu": "500m",
                                                                                       "memory": "500Mi"})


@pytest.mark.parametrize(("spec", "message"), [
    ({"hard": {"pods": "1.5"}}, 'spec.hard[pods]: Invalid value: "1500m": must be an integer'),
    ({"hard": {"widgets": "1"}}, 'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for '
                                 'quota'),
    ({"hard": {"cpu": "1"}, "scopes": ["BestEffort"]},
     'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource'),
    ({"hard": {"pods": "1"}, "scopes": ["Terminating", "NotTerminating"]},
     'spec.scopes: Invalid value: []core.ResourceQuotaScope{"Terminating", "NotTerminating"}: conflicting scopes'),
    ({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [{"scopeName": "BestEffort",
                                                                      "operator": "In", "values": ["x"]}]}},
     "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope is any of "
     "ResourceQuotaScopeTerminating"),
    ({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass",
                                                                      "operator": "In"}]}},
     "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is "
     "'In' or 'NotIn' for scope selector"),
])
def test_invalid_quotas_are_refused(cluster, spec, message):
    ns = new_namespace(cluster, "rq")
    manifest = json.dumps({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": spec})
    result = kubectl(cluster, "-n", ns, "create", "-f", "-", input=manifest, check=False)
    assert result.returncode == 1
    assert 'The ResourceQuota "q" is invalid' in result.stderr and message in result.stderr, result.stderr


def test_scopes_are_immutable(cluster):
    ns = new_namespace(cluster, "rq")
    apply(cluster, ns, """
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec: {hard: {pods: "1"}, scopes: [BestEffort]}
""")
    result = kubectl(cluster, "-n", ns, "patch", "quota", "q", "--type=merge", "-p",
                     '{"spec": {"scopes": ["NotBestEffort"]}}', check=False)
    assert 'spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotBestEffort"}: field is immutable' \
        in result.stderr


def test_a_pod_deleted_with_a_huge_grace_period_stays_charged():
    """A grace period that puts the deletion deadline past year 9999 (the API holds the deletion time at its last
    second: tests/apiserver/test_hostile_input.py) is a deadline not reached: the Pod stays charged. Adding it to
    the deletion time was an OverflowError in the quota controller's handler for every event of such a Pod."""
    import datetime as dt

    from mini_kube.machinery.quota import pods

    pod = {"metadata": {"deletionTimestamp": "9999-12-31T23:59:59Z", "deletionGracePeriodSeconds": 10**13},
           "status": {"phase": "Running"}}
    assert pods.charged(pod, dt.datetime.now(dt.UTC)) is True
    pod["metadata"].update(deletionTimestamp="2020-01-01T00:00:00Z", deletionGracePeriodSeconds=30)
    assert pods.charged(pod, dt.datetime.now(dt.UTC)) is False
