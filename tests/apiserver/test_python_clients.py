"""The official `kubernetes` client and `kubernetes_asyncio` against a hermetic cluster: CRUD, list, watch."""

from __future__ import annotations

import threading

import kubernetes
import kubernetes_asyncio
import pytest


@pytest.fixture
def core_v1(mini_kube_session):
    api_client = kubernetes.config.new_client_from_config(config_file=mini_kube_session.kubeconfig)
    yield kubernetes.client.CoreV1Api(api_client)
    api_client.close()


def test_official_client_crud_and_list(core_v1, kube_namespace):
    body = kubernetes.client.V1ConfigMap(metadata=kubernetes.client.V1ObjectMeta(name="py", labels={"a": "1"}),
                                         data={"k": "v"})
    created = core_v1.create_namespaced_config_map(kube_namespace, body)
    assert created.metadata.uid and created.data == {"k": "v"}
    read = core_v1.read_namespaced_config_map("py", kube_namespace)
    assert read.metadata.resource_version == created.metadata.resource_version
    patched = core_v1.patch_namespaced_config_map("py", kube_namespace, {"data": {"k": "w"}})
    assert patched.data == {"k": "w"}
    listed = core_v1.list_namespaced_config_map(kube_namespace, label_selector="a=1")
    assert [i.metadata.name for i in listed.items] == ["py"]
    core_v1.delete_namespaced_config_map("py", kube_namespace)
    with pytest.raises(kubernetes.client.ApiException) as err:
        core_v1.read_namespaced_config_map("py", kube_namespace)
    assert err.value.status == 404


def test_official_client_watch(core_v1, kube_namespace):
    rv = core_v1.list_namespaced_config_map(kube_namespace).metadata.resource_version
    seen: list[tuple[str, str]] = []

    def watch() -> None:
        stream = kubernetes.watch.Watch().stream(core_v1.list_namespaced_config_map, kube_namespace,
                                                 resource_version=rv, timeout_seconds=5)
        for event in stream:
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 3:
                break

    thread = threading.Thread(target=watch)
    thread.start()
    body = kubernetes.client.V1ConfigMap(metadata=kubernetes.client.V1ObjectMeta(name="w"), data={"a": "1"})
    core_v1.create_namespaced_config_map(kube_namespace, body)
    core_v1.patch_namespaced_config_map("w", kube_namespace, {"data": {"a": "2"}})
    core_v1.delete_namespaced_config_map("w", kube_namespace)
    thread.join(10)
    assert seen == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


async def test_kubernetes_asyncio_crud_list_watch(mini_kube_session, kube_namespace):
    api_client = await kubernetes_asyncio.config.new_client_from_config(config_file=mini_kube_session.kubeconfig)
    async with api_client:
        core = kubernetes_asyncio.client.CoreV1Api(api_client)
        await core.create_namespaced_config_map(kube_namespace, {"metadata": {"name": "aio"}, "data": {"x": "1"}})
        listed = await core.list_namespaced_config_map(kube_namespace)
        assert [i.metadata.name for i in listed.items] == ["aio"]
        events = []
        watch = kubernetes_asyncio.watch.Watch()
        async for event in watch.stream(core.list_namespaced_config_map, kube_namespace, timeout_seconds=2):
            events.append((event["type"], event["object"].metadata.name))
            break
        assert events == [("ADDED", "aio")]
        await core.delete_namespaced_config_map("aio", kube_namespace)


def test_an_expired_continue_token_offers_an_inconsistent_continuation(mini_kube):
    """Once the store has compacted the first page's revision, its continue token is a 410 Expired whose Status
    carries a token going on from the same key at the latest revision (upstream's handleCompactedErrorForPaging);
    the rest of the list then comes at one new revision, with remainingItemCount counting from that key."""
    import json

    api_client = kubernetes.config.new_client_from_config(config_file=mini_kube.kubeconfig)
    core = kubernetes.client.CoreV1Api(api_client)
    template = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    try:
        for i in range(10):
            core.create_namespaced_pod_template("default", {"metadata": {"name": f"t-{i}"}, "template": template})
        first = core.list_namespaced_pod_template("default", limit=3)
        core.create_namespaced_pod_template("default", {"metadata": {"name": "t-9a"}, "template": template})
        store = mini_kube.server.store
        mini_kube.run(store.compact(store.revision))
        with pytest.raises(kubernetes.client.ApiException) as info:
            core.list_namespaced_pod_template("default", limit=3, _continue=first.metadata._continue)
        status = json.loads(info.value.body)
        assert info.value.status == 410 and status["reason"] == "Expired", status
        assert status["message"].startswith("The provided continue parameter is too old to display a consistent "
                                            "list result. You can start a new list without the continue parameter, "
                                            "or use the continue token in this response"), status
        token = status["metadata"]["continue"]
        names, versions, remaining = [], set(), []
        while token:
            page = core.list_namespaced_pod_template("default", limit=3, _continue=token)
            names += [item.metadata.name for item in page.items]
            versions.add(page.metadata.resource_version)
            remaining.append(page.metadata.remaining_item_count)
            token = page.metadata._continue
        assert names == ["t-3", "t-4", "t-5", "t-6", "t-7", "t-8", "t-9", "t-9a"]
        assert len(versions) == 1 and versions != {first.metadata.resource_version}
        assert remaining == [5, 2, None]
    finally:
        api_client.close()
