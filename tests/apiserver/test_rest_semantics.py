"""API semantics over plain HTTP: Status errors, compare-and-swap, resourceVersions, lists, deletion."""

from __future__ import annotations

import pytest
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import CONFIGMAPS, NAMESPACES, SERVICES


def error_of(call, *args, **kwargs) -> ApiError:
    with pytest.raises(ApiError) as info:
        call(*args, **kwargs)
    return info.value


def test_create_assigns_identity_and_revision(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    obj = client.create(CONFIGMAPS, {"metadata": {"name": "one"}, "data": {"k": "v"}}, kube_namespace)
    meta = obj["metadata"]
    assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1"
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z") and int(meta["resourceVersion"]) > 0
    assert list(meta)[:5] == ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"]
    again = client.get(CONFIGMAPS, "one", kube_namespace)
    assert again["metadata"]["resourceVersion"] == meta["resourceVersion"]


def test_generate_name(mini_kube_session, kube_namespace):
    obj = mini_kube_session.client.create(CONFIGMAPS, {"metadata": {"generateName": "gen-"}}, kube_namespace)
    assert obj["metadata"]["name"].startswith("gen-") and len(obj["metadata"]["name"]) == 9


def test_already_exists_is_409_with_details(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(CONFIGMAPS, {"metadata": {"name": "dup"}}, kube_namespace)
    err = error_of(client.create, CONFIGMAPS, {"metadata": {"name": "dup"}}, kube_namespace)
    assert err.status == 409
    assert err.body["reason"] == "AlreadyExists"
    assert err.body["message"] == 'configmaps "dup" already exists'
    assert err.body["details"] == {"name": "dup", "kind": "configmaps"}


def test_not_found_is_404(mini_kube_session, kube_namespace):
    err = error_of(mini_kube_session.client.get, CONFIGMAPS, "nope", kube_namespace)
    assert err.status == 404 and err.body["message"] == 'configmaps "nope" not found'
    assert err.body["kind"] == "Status" and err.body["status"] == "Failure"


def test_invalid_name_is_422_with_cause(mini_kube_session, kube_namespace):
    err = error_of(mini_kube_session.client.create, CONFIGMAPS, {"metadata": {"name": "Bad_Name"}}, kube_namespace)
    assert err.status == 422 and err.body["reason"] == "Invalid"
    assert err.body["message"].startswith('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
                                          "a lowercase RFC 1123 subdomain")
    assert err.body["details"]["causes"][0]["field"] == "metadata.name"
    assert err.body["details"]["causes"][0]["reason"] == "FieldValueInvalid"


def test_update_is_compare_and_swap(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    obj = client.create(CONFIGMAPS, {"metadata": {"name": "cas"}, "data": {"a": "1"}}, kube_namespace)
    stale = dict(obj)
    obj["data"] = {"a": "2"}
    updated = client.replace(CONFIGMAPS, obj, kube_namespace)
    assert int(updated["metadata"]["resourceVersion"]) > int(obj["metadata"]["resourceVersion"])
    stale["data"] = {"a": "3"}
    err = error_of(client.replace, CONFIGMAPS, stale, kube_namespace)
    assert err.status == 409 and err.body["reason"] == "Conflict"
    assert err.body["message"] == ('Operation cannot be fulfilled on configmaps "cas": the object has been modified; '
                                   "please apply your changes to the latest version and try again")
    assert client.get(CONFIGMAPS, "cas", kube_namespace)["data"] == {"a": "2"}


def test_malformed_and_oversize_bodies_change_nothing(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    path = CONFIGMAPS.path(kube_namespace)
    err = error_of(client.request, "POST", path, body=b"{not json")
    assert err.status == 400 and err.body["reason"] == "BadRequest"
    err = error_of(client.request, "POST", path, body=b"a: [", content_type="application/yaml")
    assert err.status == 400
    big = b'{"metadata":{"name":"big"},"data":{"x":"' + b"x" * (3 * 1024 * 1024) + b'"}}'
    err = error_of(client.request, "POST", path, body=big)
    assert err.status == 413 and err.body["reason"] == "RequestEntityTooLarge"
    err = error_of(client.request, "POST", path, body=b"<xml/>", content_type="text/xml")
    assert err.status == 415
    assert client.list(CONFIGMAPS, kube_namespace)["items"] == []


def test_yaml_body_is_accepted(mini_kube_session, kube_namespace):
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: b\n"
    obj = mini_kube_session.client.request("POST", CONFIGMAPS.path(kube_namespace), body=body,
                                           content_type="application/yaml")
    assert obj["data"] == {"a": "b"}


def test_list_chunking_is_a_consistent_snapshot(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    for i in range(5):
        client.create(CONFIGMAPS, {"metadata": {"name": f"item-{i}"}}, kube_namespace)
    first = client.list(CONFIGMAPS, kube_namespace, limit="2")
    assert [o["metadata"]["name"] for o in first["items"]] == ["item-0", "item-1"]
    assert first["metadata"]["remainingItemCount"] == 3
    client.create(CONFIGMAPS, {"metadata": {"name": "item-9"}}, kube_namespace)  # after the snapshot
    client.delete(CONFIGMAPS, "item-4", kube_namespace)
    names, remaining, token = [], [], first["metadata"]["continue"]
    while token:
        page = client.list(CONFIGMAPS, kube_namespace, limit="2", **{"continue": token})
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        names += [o["metadata"]["name"] for o in page["items"]]
        remaining.append(page["metadata"].get("remainingItemCount"))
        token = page["metadata"].get("continue")
    assert names == ["item-2", "item-3", "item-4"]
    assert remaining == [1, None]  # every page but the last says how many follow, as upstream's
    err = error_of(client.list, CONFIGMAPS, kube_namespace, **{"continue": "garbage"})
    assert err.status == 400


def test_list_at_exact_old_revision(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(CONFIGMAPS, {"metadata": {"name": "old"}}, kube_namespace)
    rv = client.list(CONFIGMAPS, kube_namespace)["metadata"]["resourceVersion"]
    client.create(CONFIGMAPS, {"metadata": {"name": "new"}}, kube_namespace)
    old = client.list(CONFIGMAPS, kube_namespace, resourceVersion=rv, resourceVersionMatch="Exact")
    assert [o["metadata"]["name"] for o in old["items"]] == ["old"]


def test_dry_run_stores_nothing(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    obj = client.create(CONFIGMAPS, {"metadata": {"name": "dry"}}, kube_namespace, dryRun="All")
    assert obj["metadata"]["name"] == "dry"
    assert error_of(client.get, CONFIGMAPS, "dry", kube_namespace).status == 404


def test_finalizers_hold_deletion_until_removed(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(CONFIGMAPS, {"metadata": {"name": "fin", "finalizers": ["example.com/hold"]}}, kube_namespace)
    marked = client.delete(CONFIGMAPS, "fin", kube_namespace)
    assert marked["metadata"]["deletionTimestamp"]
    assert client.get(CONFIGMAPS, "fin", kube_namespace)["metadata"]["finalizers"] == ["example.com/hold"]
    client.patch(CONFIGMAPS, "fin", {"metadata": {"finalizers": None}}, kube_namespace)
    assert error_of(client.get, CONFIGMAPS, "fin", kube_namespace).status == 404


def test_delete_preconditions(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(CONFIGMAPS, {"metadata": {"name": "pre"}}, kube_namespace)
    err = error_of(client.delete, CONFIGMAPS, "pre", kube_namespace, {"preconditions": {"uid": "not-the-uid"}})
    assert err.status == 409 and "Precondition failed: UID in precondition: not-the-uid" in err.body["message"]
    status = client.delete(CONFIGMAPS, "pre", kube_namespace)
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"]["name"] == "pre" and status["details"]["kind"] == "configmaps"


def test_service_cluster_ip_allocation(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    spec = {"ports": [{"port": 80}]}
    first = client.create(SERVICES, {"metadata": {"name": "s1"}, "spec": spec}, kube_namespace)
    ip = first["spec"]["clusterIP"]
    assert ip.startswith("10.0.0.") and first["spec"]["clusterIPs"] == [ip]
    err = error_of(client.create, SERVICES, {"metadata": {"name": "s2"}, "spec": {**spec, "clusterIP": ip}},
                   kube_namespace)
    assert err.status == 422
    assert err.body["message"] == (f'Service "s2" is invalid: spec.clusterIPs: Invalid value: []string{{"{ip}"}}: '
                                   f"failed to allocate IP {ip}: provided IP is already allocated")
    client.delete(SERVICES, "s1", kube_namespace)
    again = client.create(SERVICES, {"metadata": {"name": "s2"}, "spec": {**spec, "clusterIP": ip}}, kube_namespace)
    assert again["spec"]["clusterIP"] == ip


def test_node_port_allocation(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    svc = client.create(SERVICES, {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}},
                        kube_namespace)
    port = svc["spec"]["ports"][0]["nodePort"]
    assert 30000 <= port <= 32767
    err = error_of(client.create, SERVICES, {"metadata": {"name": "np2"}, "spec": {
        "type": "NodePort", "ports": [{"port": 80, "nodePort": port}]}}, kube_namespace)
    assert err.status == 422 and "provided port is already allocated" in err.body["message"]


def test_namespace_lifecycle_refuses_system_namespace_delete(mini_kube_session):
    err = error_of(mini_kube_session.client.delete, NAMESPACES, "default")
    assert err.status == 403 and err.body["reason"] == "Forbidden"


def test_status_subresource_writes_status_only_and_records_its_manager(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    deploy = ResourceRef("apps", "v1", "deployments")
    spec = {"replicas": 1, "selector": {"matchLabels": {"app": "s"}},
            "template": {"metadata": {"labels": {"app": "s"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    client.create(deploy, {"metadata": {"name": "st"}, "spec": spec}, kube_namespace)
    patched = client.patch(deploy, "st", {"status": {"replicas": 3}, "spec": {"replicas": 9}}, kube_namespace,
                           subresource="status", fieldManager="status-writer")
    assert patched["status"]["replicas"] == 3 and patched["spec"]["replicas"] == 1
    managers = {(m["manager"], m.get("subresource", "")) for m in patched["metadata"]["managedFields"]}
    assert ("status-writer", "status") in managers
    main = client.patch(deploy, "st", {"status": {"replicas": 7}}, kube_namespace)
    assert main["status"]["replicas"] == 3  # the main endpoint ignores status


def test_concurrent_status_updates_conflict_rather_than_fail(mini_kube_session, kube_namespace):
    """Writers racing with the same resourceVersion: one wins, the others get 409, never a 500."""
    import concurrent.futures

    from mini_kube.client import ApiError

    rss = ResourceRef("apps", "v1", "replicasets")
    template = {"metadata": {"labels": {"a": "race"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    current = mini_kube_session.client.create(rss, {"metadata": {"name": "race"}, "spec": {
        "replicas": 0, "selector": {"matchLabels": {"a": "race"}}, "template": template}}, kube_namespace)

    def write(i: int) -> int:  # every value is new, so no write is a no-op
        body = {**current, "status": {"replicas": i + 1, "observedGeneration": 1}}
        try:
            mini_kube_session.client.replace(rss, body, kube_namespace, subresource="status")
            return 200
        except ApiError as exc:
            return exc.status

    for round_ in range(5):
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            codes = list(pool.map(write, range(100 * round_, 100 * round_ + 32)))
        assert set(codes) <= {200, 409} and codes.count(200) <= 1, codes
        current = mini_kube_session.client.get(rss, "race", kube_namespace)
