"""What real clients broke on (issue #10, items 1-4): watches resumed from a resourceVersion stay inside their
collection and namespace; Go's zero values are served; DELETE answers the object where upstream does; Status
bodies are Go's bytes."""

from __future__ import annotations

import urllib.error
import urllib.request

import kubernetes
import orjson
import pytest
from mini_kube.machinery.refs import CONFIGMAPS, NAMESPACES, SECRETS


@pytest.fixture
def api(mini_kube_session):
    client = kubernetes.config.new_client_from_config(config_file=mini_kube_session.kubeconfig)
    yield client
    client.close()


def _raw(kube, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(kube.url + path, data=body, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_resumed_watch_replays_only_its_own_collection_and_namespace(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    rv = client.list(SECRETS, kube_namespace)["metadata"]["resourceVersion"]
    client.create(CONFIGMAPS, {"metadata": {"name": "foreign"}}, kube_namespace)
    client.create(SECRETS, {"metadata": {"name": "elsewhere"}}, "default")
    client.create(NAMESPACES, {"metadata": {"name": f"{kube_namespace}-x"}})
    client.create(SECRETS, {"metadata": {"name": "mine"}}, kube_namespace)
    url = f"{mini_kube_session.url}/api/v1/namespaces/{kube_namespace}/secrets?watch=1&resourceVersion={rv}"
    events = []
    with urllib.request.urlopen(url, timeout=30) as response:  # answered: the watch is registered
        assert response.status == 200
        client.create(SECRETS, {"metadata": {"name": "marker"}}, kube_namespace)  # after all it owes
        while (event := orjson.loads(response.readline()))["object"]["metadata"]["name"] != "marker":
            events.append(event)
    assert [(e["type"], e["object"]["kind"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "Secret", "mine")]
    client.delete(NAMESPACES, f"{kube_namespace}-x")


def test_official_client_reads_workloads_with_go_zero_values(api, kube_namespace):
    apps = kubernetes.client.AppsV1Api(api)
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    selector = {"matchLabels": {"a": "b"}}
    rs = apps.create_namespaced_replica_set(kube_namespace, {"metadata": {"name": "rs"}, "spec": {
        "selector": selector, "template": template}})
    assert rs.status.replicas == 0
    sts = apps.create_namespaced_stateful_set(kube_namespace, {"metadata": {"name": "sts"}, "spec": {
        "selector": selector, "template": template, "serviceName": "s"}})
    assert (sts.status.replicas, sts.status.available_replicas) == (0, 0)
    ds = apps.create_namespaced_daemon_set(kube_namespace, {"metadata": {"name": "ds"}, "spec": {
        "selector": selector, "template": template}})
    assert (ds.status.current_number_scheduled, ds.status.number_ready) == (0, 0)
    core = kubernetes.client.CoreV1Api(api)
    rc = core.create_namespaced_replication_controller(kube_namespace, {"metadata": {"name": "rc"}, "spec": {
        "selector": {"a": "b"}, "template": template}})
    assert rc.status.replicas == 0
    hpa = kubernetes.client.AutoscalingV2Api(api).create_namespaced_horizontal_pod_autoscaler(
        kube_namespace, {"metadata": {"name": "h"}, "spec": {"maxReplicas": 3, "scaleTargetRef": {
            "kind": "Deployment", "name": "d", "apiVersion": "apps/v1"}}})
    assert hpa.status.desired_replicas == 0
    assert [i.metadata.name for i in apps.list_namespaced_replica_set(kube_namespace).items] == ["rs"]
    assert apps.read_namespaced_daemon_set("ds", kube_namespace).status.number_misscheduled == 0


def test_delete_answers_the_object_where_upstream_does(api, kube_namespace):
    core = kubernetes.client.CoreV1Api(api)
    core.create_namespaced_service_account(kube_namespace, {"metadata": {"name": "sa"}})
    gone = core.delete_namespaced_service_account("sa", kube_namespace)
    assert isinstance(gone, kubernetes.client.V1ServiceAccount) and gone.metadata.name == "sa"
    core.create_namespaced_service(kube_namespace, {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}})
    svc = core.delete_namespaced_service("svc", kube_namespace)
    assert isinstance(svc, kubernetes.client.V1Service) and svc.spec.cluster_ip
    core.create_namespaced_pod(kube_namespace, {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "i"}]}})
    pod = core.delete_namespaced_pod("p", kube_namespace, grace_period_seconds=0)
    assert isinstance(pod, kubernetes.client.V1Pod) and pod.metadata.name == "p"
    core.create_namespaced_config_map(kube_namespace, {"metadata": {"name": "cm"}})
    status = core.delete_namespaced_config_map("cm", kube_namespace)  # a Status (the client leaves it a dict)
    assert (status["kind"], status["status"]) == ("Status", "Success")


def test_status_bodies_are_gos_bytes(mini_kube_session, kube_namespace):
    status, body = _raw(mini_kube_session, "GET", f"/api/v1/namespaces/{kube_namespace}/configmaps/none")
    assert status == 404 and body.endswith(b"}\n")
    assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps '
                    b'\\"none\\" not found","reason":"NotFound","details":{"name":"none","kind":"configmaps"},'
                    b'"code":404}\n')
    _raw(mini_kube_session, "POST", f"/apis/apps/v1/namespaces/{kube_namespace}/deployments",
         b'{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":'
         b'{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}')
    status, body = _raw(mini_kube_session, "DELETE", f"/apis/apps/v1/namespaces/{kube_namespace}/deployments/d")
    assert status == 200 and body.endswith(b"}\n")
    assert list(orjson.loads(body)["details"]) == ["name", "group", "kind", "uid"]


def test_status_details_of_grouped_resources_keep_gos_field_order(mini_kube_session, kube_namespace):
    """metav1.StatusDetails is written name, group, kind, uid, causes: the group of a grouped resource comes
    before its kind in every error Status, not after it."""
    status, body = _raw(mini_kube_session, "GET", f"/apis/apps/v1/namespaces/{kube_namespace}/deployments/none")
    assert status == 404
    assert b'"details":{"name":"none","group":"apps","kind":"deployments"},"code":404}\n' in body
    manifest = b'{"metadata":{"name":"twice"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role",' \
               b'"name":"r"},"subjects":[]}'
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{kube_namespace}/rolebindings"
    _raw(mini_kube_session, "POST", path, manifest)
    status, body = _raw(mini_kube_session, "POST", path, manifest)
    assert status == 409
    assert list(orjson.loads(body)["details"]) == ["name", "group", "kind"]


def test_struct_valued_status_fields_are_written_as_go_writes_them(mini_kube_session):
    """A Node created bare is served with the NodeStatus structs Go always writes (daemonEndpoints,
    nodeInfo) and their non-omitempty zero fields, as a real apiserver answers."""
    name = "zero-values-node"
    status, body = _raw(mini_kube_session, "POST", "/api/v1/nodes", b'{"metadata":{"name":"%s"}}' % name.encode())
    assert status == 201
    try:
        node_status = orjson.loads(_raw(mini_kube_session, "GET", f"/api/v1/nodes/{name}")[1])["status"]
        assert node_status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
        assert node_status["nodeInfo"]["kubeletVersion"] == "" and len(node_status["nodeInfo"]) == 10
    finally:
        _raw(mini_kube_session, "DELETE", f"/api/v1/nodes/{name}")


def test_new_volumes_and_claims_are_pending(api, kube_namespace):
    """Upstream serves a new PersistentVolume as Pending since a transition time, and a new claim as Pending
    (defaulted after its status is reset), never an empty status."""
    core = kubernetes.client.CoreV1Api(api)
    claim = core.create_namespaced_persistent_volume_claim(kube_namespace, {"metadata": {"name": "claim"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    assert claim.status.phase == "Pending"
    name = f"{kube_namespace}-pv"
    volume = core.create_persistent_volume({"metadata": {"name": name}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/srv"}}})
    try:
        assert volume.status.phase == "Pending" and volume.status.last_phase_transition_time is not None
    finally:
        core.delete_persistent_volume(name)
