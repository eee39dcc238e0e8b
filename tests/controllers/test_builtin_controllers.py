"""The housekeeping controllers end to end, through real kubectl: cascading deletes in all three modes, a new
namespace's ServiceAccount and CA ConfigMap, EndpointSlices and Endpoints following Pods."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import CONFIGMAPS, ENDPOINTS, ENDPOINTSLICES, PODS, SECRETS, SERVICES

from mini_kube.testing import MiniKube
from tests.helpers import kubectl


def eventually(check, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            if result:
                return result
        except (ApiError, AssertionError, KeyError, IndexError):
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def _owned(kube, namespace: str, owner: dict, names: list[str], block: bool = False) -> None:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"], **({"blockOwnerDeletion": True} if block else {})}
    for name in names:
        kube.client.create(SECRETS, {"metadata": {"name": name, "ownerReferences": [ref]}}, namespace)


def _exists(kube, ref: ResourceRef, name: str, namespace: str) -> bool:
    try:
        kube.client.get(ref, name, namespace)
        return True
    except ApiError as exc:
        if exc.status == 404:
            return False
        raise


@pytest.mark.parametrize("cascade", ["background", "foreground"])
def test_cascading_delete_removes_dependents(mini_kube_session, kube_namespace, cascade):
    kube, ns = mini_kube_session, kube_namespace
    owner = kube.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, ns)
    _owned(kube, ns, owner, ["d1", "d2"], block=cascade == "foreground")
    kubectl(kube, "-n", ns, "delete", "configmap", "owner", f"--cascade={cascade}", "--timeout=20s")
    if cascade == "foreground":  # kubectl waited for the owner, which goes only after its dependents
        assert not _exists(kube, SECRETS, "d1", ns) and not _exists(kube, SECRETS, "d2", ns)
    eventually(lambda: not _exists(kube, SECRETS, "d1", ns) and not _exists(kube, SECRETS, "d2", ns))
    assert not _exists(kube, CONFIGMAPS, "owner", ns)


def test_orphan_delete_keeps_dependents_without_the_reference(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    owner = kube.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, ns)
    _owned(kube, ns, owner, ["kept"])
    kubectl(kube, "-n", ns, "delete", "configmap", "owner", "--cascade=orphan", "--timeout=20s")
    assert not _exists(kube, CONFIGMAPS, "owner", ns)
    kept = kube.client.get(SECRETS, "kept", ns)
    assert not kept["metadata"].get("ownerReferences")


def test_an_owner_that_still_exists_keeps_its_dependents(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    live = kube.client.create(CONFIGMAPS, {"metadata": {"name": "live"}}, ns)
    gone_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "00000000-dead"}
    live_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "live", "uid": live["metadata"]["uid"]}
    kube.client.create(SECRETS, {"metadata": {"name": "two-owners", "ownerReferences": [live_ref, gone_ref]}}, ns)
    kube.client.create(SECRETS, {"metadata": {"name": "orphaned", "ownerReferences": [gone_ref]}}, ns)
    eventually(lambda: not _exists(kube, SECRETS, "orphaned", ns))
    eventually(lambda: kube.client.get(SECRETS, "two-owners", ns)["metadata"]["ownerReferences"] == [live_ref])


def test_foreground_waits_for_blocking_dependents_only_until_they_are_gone(mini_kube_session, kube_namespace):
    """A terminating dependent with blockOwnerDeletion (held by its own finalizer) keeps the owner; one without
    it is deleted and not waited for; the owner goes once the blocking one is gone."""
    kube, ns = mini_kube_session, kube_namespace
    owner = kube.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, ns)
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    kube.client.create(SECRETS, {"metadata": {"name": "held", "finalizers": ["example.com/hold"],
                                              "ownerReferences": [{**ref, "blockOwnerDeletion": True}]}}, ns)
    kube.client.create(SECRETS, {"metadata": {"name": "free", "finalizers": ["example.com/hold"],
                                              "ownerReferences": [ref]}}, ns)
    kubectl(kube, "-n", ns, "delete", "configmap", "owner", "--cascade=foreground", "--wait=false")
    eventually(lambda: kube.client.get(SECRETS, "held", ns)["metadata"].get("deletionTimestamp")
               and kube.client.get(SECRETS, "free", ns)["metadata"].get("deletionTimestamp"))
    kube.client.patch(SECRETS, "free", {"metadata": {"finalizers": None}}, ns)
    eventually(lambda: not _exists(kube, SECRETS, "free", ns))
    time.sleep(1)  # the GC's safety-net requeue (0.5 s) ran at least once: the owner still waits for "held"
    assert kube.client.get(CONFIGMAPS, "owner", ns)["metadata"]["finalizers"] == ["foregroundDeletion"]
    kube.client.patch(SECRETS, "held", {"metadata": {"finalizers": None}}, ns)
    eventually(lambda: not _exists(kube, CONFIGMAPS, "owner", ns))


def test_orphaning_many_dependents_keeps_them_all(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    owner = kube.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, ns)
    names = [f"kept-{i}" for i in range(20)]
    _owned(kube, ns, owner, names, block=True)
    kubectl(kube, "-n", ns, "delete", "configmap", "owner", "--cascade=orphan", "--timeout=20s")
    assert not _exists(kube, CONFIGMAPS, "owner", ns)
    for name in names:
        assert not kube.client.get(SECRETS, name, ns)["metadata"].get("ownerReferences")


def test_a_dependent_whose_references_change_to_a_gone_owner_is_deleted(mini_kube_session, kube_namespace):
    """Updates that keep the references change nothing; one that points the references at an owner that is
    gone makes the object garbage."""
    kube, ns = mini_kube_session, kube_namespace
    live = kube.client.create(CONFIGMAPS, {"metadata": {"name": "live"}}, ns)
    live_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "live", "uid": live["metadata"]["uid"]}
    kube.client.create(SECRETS, {"metadata": {"name": "dep", "ownerReferences": [live_ref]}}, ns)
    kube.client.patch(SECRETS, "dep", {"metadata": {"labels": {"touched": "yes"}}}, ns)
    time.sleep(0.5)
    assert _exists(kube, SECRETS, "dep", ns)
    gone_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "00000000-gone"}
    kube.client.patch(SECRETS, "dep", {"metadata": {"ownerReferences": [gone_ref]}}, ns)
    eventually(lambda: not _exists(kube, SECRETS, "dep", ns))


def test_a_new_namespace_gets_its_service_account_and_ca(tmp_path):
    with MiniKube(insecure_http=False, data_dir=str(tmp_path)) as kube:
        kubectl(kube, "create", "namespace", "fresh")
        eventually(lambda: kubectl(kube, "-n", "fresh", "get", "serviceaccount", "default", check=False)
                   .returncode == 0)
        ca = eventually(lambda: kube.client.get(CONFIGMAPS, "kube-root-ca.crt", "fresh")["data"]["ca.crt"])
        assert ca == (tmp_path / "pki" / "ca.crt").read_text()
        kubectl(kube, "-n", "fresh", "delete", "serviceaccount", "default")
        eventually(lambda: kube.client.get(ResourceRef("", "v1", "serviceaccounts"), "default", "fresh"))


def _pod(kube, ns: str, name: str, ip: str, ready: bool) -> None:
    kube.client.create(PODS, {"metadata": {"name": name, "labels": {"app": "web"}}, "spec": {"containers": [
        {"name": "c", "image": "nginx", "ports": [{"name": "http", "containerPort": 8080}]}]}}, ns)
    _set_status(kube, ns, name, ip, ready)


def _set_status(kube, ns: str, name: str, ip: str, ready: bool) -> None:
    status = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
              "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    kube.client.patch(PODS, name, {"status": status}, ns, subresource="status")


def _slice(kube, ns: str) -> dict:
    listed = kube.client.list(ENDPOINTSLICES, ns, labelSelector="kubernetes.io/service-name=web")["items"]
    assert len(listed) == 1
    return listed[0]


def test_endpoint_slices_and_endpoints_follow_pods(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    kube.client.create(SERVICES, {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [
        {"name": "http", "port": 80, "targetPort": "http"}]}}, ns)
    empty = eventually(lambda: _slice(kube, ns))
    assert not empty.get("endpoints") and empty["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] \
        == "endpointslice-controller.k8s.io"
    assert empty["metadata"]["ownerReferences"][0]["kind"] == "Service"
    _pod(kube, ns, "a", "10.244.0.5", ready=True)
    _pod(kube, ns, "b", "10.244.0.6", ready=False)

    def conditions():
        sl = _slice(kube, ns)
        return {e["addresses"][0]: e["conditions"]["ready"] for e in sl.get("endpoints") or ()} == {
            "10.244.0.5": True, "10.244.0.6": False} and sl
    found = eventually(conditions)
    assert found["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    endpoints = eventually(lambda: kube.client.get(ENDPOINTS, "web", ns)["subsets"])
    assert [a["ip"] for a in endpoints[0]["addresses"]] == ["10.244.0.5"]
    assert [a["ip"] for a in endpoints[0]["notReadyAddresses"]] == ["10.244.0.6"]
    assert endpoints[0]["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    _set_status(kube, ns, "b", "10.244.0.6", ready=True)
    eventually(lambda: all(e["conditions"]["ready"] for e in _slice(kube, ns)["endpoints"]))
    kube.client.delete(PODS, "a", ns)
    eventually(lambda: [e["addresses"][0] for e in _slice(kube, ns)["endpoints"]] == ["10.244.0.6"])
    described = kubectl(kube, "-n", ns, "get", "endpoints", "web", "-o", "json").stdout
    assert json.loads(described)["subsets"][0]["addresses"][0]["ip"] == "10.244.0.6"


def test_namespace_deletion_reports_its_conditions(mini_kube_session):
    kube = mini_kube_session
    namespaces = ResourceRef("", "v1", "namespaces", namespaced=False)
    held = f"held-{uuid.uuid4().hex[:8]}"  # its own name: a rerun in the shared cluster starts afresh
    kube.client.create(namespaces, {"metadata": {"name": held}})
    kube.client.create(CONFIGMAPS, {"metadata": {"name": "stuck", "finalizers": ["example.com/hold"]}}, held)
    kubectl(kube, "delete", "namespace", held, "--wait=false")

    def remaining():
        conditions = {c["type"]: c for c in kube.client.get(namespaces, held)["status"].get("conditions") or ()}
        return conditions.get("NamespaceContentRemaining", {}).get("status") == "True" and conditions
    conditions = eventually(remaining)
    assert conditions["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: configmaps. has 1 resource instances"
    assert conditions["NamespaceFinalizersRemaining"]["message"] == \
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    kube.client.patch(CONFIGMAPS, "stuck", {"metadata": {"finalizers": None}}, held)
    eventually(lambda: held not in [n["metadata"]["name"] for n in kube.client.list(namespaces)["items"]])


def test_endpoints_without_a_service_are_left_alone(mini_kube_session, kube_namespace):
    """Endpoints written by hand, with no Service, are the writer's (upstream mirrors them to EndpointSlices);
    those of a Service go with it, and one deleted under its Service comes back."""
    kube, ns = mini_kube_session, kube_namespace
    mine = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "by-hand"},
            "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}]}
    kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps(mine))
    kubectl(kube, "-n", ns, "label", "endpoints", "by-hand", "touched=yes")
    kube.client.create(SERVICES, {"metadata": {"name": "later"}, "spec": {"selector": {"app": "x"}, "ports": [
        {"port": 80}]}}, ns)
    eventually(lambda: _exists(kube, ENDPOINTS, "later", ns))  # the controller has seen everything before it
    assert kube.client.get(ENDPOINTS, "by-hand", ns)["subsets"][0]["addresses"][0]["ip"] == "10.1.2.3"
    kube.client.delete(ENDPOINTS, "later", ns)
    eventually(lambda: _exists(kube, ENDPOINTS, "later", ns))
    kube.client.delete(SERVICES, "later", ns)
    eventually(lambda: not _exists(kube, ENDPOINTS, "later", ns))
    assert _exists(kube, ENDPOINTS, "by-hand", ns)


def test_foreground_deletion_is_not_blocked_by_an_owner_cycle(mini_kube_session, kube_namespace):
    """Three objects each owning the next with blockOwnerDeletion: deleting one in foreground deletes all three
    (the collector makes the references of the one that closes the cycle non-blocking, as upstream's does)."""
    kube, ns = mini_kube_session, kube_namespace
    names = ["c1", "c2", "c3"]
    made = {name: kube.client.create(CONFIGMAPS, {"metadata": {"name": name}}, ns) for name in names}
    for name, owner in zip(names, names[-1:] + names[:-1], strict=True):
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": made[owner]["metadata"]["uid"],
               "blockOwnerDeletion": True}
        kube.client.patch(CONFIGMAPS, name, {"metadata": {"ownerReferences": [ref]}}, ns)
    kubectl(kube, "-n", ns, "delete", "configmap", "c1", "--cascade=foreground", "--wait=false")
    eventually(lambda: not any(_exists(kube, CONFIGMAPS, name, ns) for name in names), timeout=20)


def test_foreground_deletion_keeps_a_dependent_another_owner_holds(mini_kube_session, kube_namespace):
    """A dependent with a second, live owner is not deleted with the first: it loses the reference to the owner
    being deleted in foreground (which then goes), as upstream's collector does."""
    kube, ns = mini_kube_session, kube_namespace
    going = kube.client.create(CONFIGMAPS, {"metadata": {"name": "going"}}, ns)
    staying = kube.client.create(CONFIGMAPS, {"metadata": {"name": "staying"}}, ns)
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"], "uid": o["metadata"]["uid"],
             "blockOwnerDeletion": True} for o in (going, staying)]
    kube.client.create(SECRETS, {"metadata": {"name": "shared", "ownerReferences": refs}}, ns)
    kube.client.create(SECRETS, {"metadata": {"name": "only", "ownerReferences": refs[:1]}}, ns)
    kubectl(kube, "-n", ns, "delete", "configmap", "going", "--cascade=foreground", "--timeout=20s")
    eventually(lambda: not _exists(kube, SECRETS, "only", ns))
    assert kube.client.get(SECRETS, "shared", ns)["metadata"]["ownerReferences"] == refs[1:]


@pytest.mark.slow
def test_content_that_stays_is_looked_at_less_and_less_often(tmp_path):
    """Each look at a Terminating namespace is a deletecollection and a list of every namespaced resource: while
    a finalizer holds its content, the next look comes 0.2 s after the last, then twice as long each time (up to
    upstream's 8 s), not 0.2 s after each look for as long as the content stays. Once the content goes, the
    namespace goes. (The waits are read from the audit log between one look's last request and the next one's
    first, so a look's own time, long on a loaded machine, does not count.)"""
    from datetime import datetime

    log = tmp_path / "audit.log"
    namespaces = ResourceRef("", "v1", "namespaces", namespaced=False)
    with MiniKube(insecure_http=False, controllers="namespace", scheduler=False, audit_log=str(log)) as kube:
        kube.client.create(namespaces, {"metadata": {"name": "held"}})
        kube.client.create(CONFIGMAPS, {"metadata": {"name": "stuck", "finalizers": ["example.com/hold"]}}, "held")
        kube.client.delete(namespaces, "held")

        def waits() -> list[float]:
            events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
            sweep = [(e["verb"], e["objectRef"]["resource"], datetime.fromisoformat(e["requestReceivedTimestamp"]),
                      datetime.fromisoformat(e["stageTimestamp"])) for e in events
                     if e.get("userAgent") == "mini-kube-controllers" and e.get("verb") in ("deletecollection", "list")
                     and (e.get("objectRef") or {}).get("namespace") == "held"]
            if not sweep:
                return []
            first = sweep[0][1]  # each look goes through the resources in the same order
            starts = [received for verb, resource, received, _ in sweep if (verb, resource) == ("deletecollection", first)]
            if len(starts) < 2:
                return []
            last = [resource for verb, resource, received, _ in sweep if verb == "list" and received < starts[1]][-1]
            ends = [done for verb, resource, _, done in sweep if (verb, resource) == ("list", last)]
            return [(start - end).total_seconds() for end, start in zip(ends, starts[1:], strict=False)]

        # 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, less where a look ends after the time an earlier one asked for
        six = eventually(lambda: (found := waits())[5:] and found[:6], timeout=60)
        assert max(six) >= 1.5, six
        kube.client.patch(CONFIGMAPS, "stuck", {"metadata": {"finalizers": None}}, "held")
        eventually(lambda: "held" not in [n["metadata"]["name"] for n in kube.client.list(namespaces)["items"]],
                   timeout=20)


def test_a_namespace_whose_content_goes_at_once_is_finalized_after_one_look(tmp_path):
    """One look empties it (a deletecollection of each namespaced resource, a list only of those that had
    something: nothing is created in a Terminating namespace), then it is finalized with the namespace as the
    look's reported conditions left it: no conflict, and no look after (each was ~120 requests)."""
    log = tmp_path / "audit.log"
    namespaces = ResourceRef("", "v1", "namespaces", namespaced=False)
    with MiniKube(insecure_http=False, controllers="namespace", scheduler=False, audit_log=str(log)) as kube:
        kube.client.create(namespaces, {"metadata": {"name": "gone"}})
        kube.client.create(CONFIGMAPS, {"metadata": {"name": "c"}}, "gone")
        kube.client.delete(namespaces, "gone")

        def requests() -> list[tuple[str, str, int]]:
            events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
            mine = [(e["verb"], e.get("objectRef") or {}, e["responseStatus"]["code"]) for e in events
                    if e.get("userAgent") == "mini-kube-controllers"]
            return [(verb, f"{ref.get('resource')}/{ref.get('subresource', '')}", code) for verb, ref, code in mine
                    if ref.get("namespace", ref.get("name")) == "gone"]
        eventually(lambda: ("update", "namespaces/finalize", 200) in requests())
        time.sleep(1)  # a second look would start at once
        sent = requests()
        assert [r for r in sent if r[0] != "deletecollection"] == [
            ("list", "configmaps/", 200), ("patch", "namespaces/status", 200), ("update", "namespaces/finalize", 200)]
        assert len([r for r in sent if r == ("deletecollection", "configmaps/", 200)]) == 1
