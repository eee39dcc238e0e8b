"""A custom resource's selectableFields are its version's: a field selector on a version the objects are not
stored in reads them converted (here by a real conversion webhook), for lists, watches and collection deletes,
through the official client (upstream filters each version's objects after decoding them into that version)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from mini_kube.machinery.refs import CUSTOMRESOURCEDEFINITIONS

from mini_kube.testing import MiniKube
from tests.admission.hooks import WebhookServer
from tests.crd_api.support import eventually

GROUP, PLURAL = "routes.example.com", "backends"


def convert(obj: dict[str, Any], api_version: str) -> dict[str, Any]:
    """v1 holds `address: host:port`; v2 holds `host` and `port`."""
    out = {k: v for k, v in obj.items() if k not in ("address", "host", "port")}
    out["apiVersion"] = api_version
    if api_version.endswith("/v2"):
        host, _, port = str(obj.get("address", "")).partition(":")
        out.update({"host": host} | ({"port": port} if port else {}))
    else:
        out["address"] = f"{obj.get('host', '')}:{obj['port']}" if obj.get("port") else obj.get("host", "")
    return out


def review(request: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {
        "uid": request["uid"], "result": {"status": "Success"},
        "convertedObjects": [convert(o, request["desiredAPIVersion"]) for o in request["objects"]]}}


def version(name: str, storage: bool, fields: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "served": True, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": fields}},
            "selectableFields": [{"jsonPath": f".{field}"} for field in fields]}


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[MiniKube, kubernetes.client.CustomObjectsApi]]:
    hooks = WebhookServer().start()
    hooks.handle("convert", review)
    try:
        with MiniKube() as kube:
            kube.client.create(CUSTOMRESOURCEDEFINITIONS, {
                "metadata": {"name": f"{PLURAL}.{GROUP}"},
                "spec": {"group": GROUP, "scope": "Namespaced",
                         "names": {"plural": PLURAL, "singular": "backend", "kind": "Backend"},
                         "versions": [version("v1", True, {"address": {"type": "string"}}),
                                      version("v2", False, {"host": {"type": "string"},
                                                            "port": {"type": "string"}})],
                         "conversion": {"strategy": "Webhook", "webhook": {
                             "conversionReviewVersions": ["v1"],
                             "clientConfig": {"url": hooks.url("convert"), "caBundle": hooks.ca_bundle}}}}})
            api_client = kubernetes.config.new_client_from_config(config_file=kube.kubeconfig)
            api = kubernetes.client.CustomObjectsApi(api_client)
            eventually(lambda: _served(api), timeout=10)
            yield kube, api
            api_client.close()
    finally:
        hooks.stop()


def _served(api: kubernetes.client.CustomObjectsApi) -> bool:
    try:
        api.list_namespaced_custom_object(GROUP, "v2", "default", PLURAL)
        return True
    except kubernetes.client.ApiException:
        return False


def _names(api, version: str, selector: str) -> list[str]:
    listed = api.list_namespaced_custom_object(GROUP, version, "default", PLURAL, field_selector=selector)
    return sorted(item["metadata"]["name"] for item in listed["items"])


def test_lists_watches_and_deletes_select_on_the_requested_versions_fields(cluster) -> None:
    kube, api = cluster
    seen: list[tuple[str, str]] = []
    rv = api.list_namespaced_custom_object(GROUP, "v2", "default", PLURAL)["metadata"]["resourceVersion"]

    def watch() -> None:
        stream = kubernetes.watch.Watch().stream(api.list_namespaced_custom_object, GROUP, "v2", "default",
                                                 PLURAL, field_selector="host=a", resource_version=rv,
                                                 timeout_seconds=10)
        for event in stream:
            seen.append((event["type"], event["object"]["metadata"]["name"]))
            if len(seen) == 4:
                break

    watcher = threading.Thread(target=watch)
    watcher.start()
    for name, spec in (("a80", {"host": "a", "port": "80"}), ("a81", {"host": "a", "port": "81"}),
                       ("b", {"host": "b"})):
        api.create_namespaced_custom_object(GROUP, "v2", "default", PLURAL, {
            "apiVersion": f"{GROUP}/v2", "kind": "Backend", "metadata": {"name": name}, **spec})
    assert api.get_namespaced_custom_object(GROUP, "v1", "default", PLURAL, "a80")["address"] == "a:80"
    assert _names(api, "v2", "host=a") == ["a80", "a81"]
    assert _names(api, "v2", "host=a,port=80") == ["a80"]
    assert _names(api, "v2", "host!=a") == ["b"]
    assert _names(api, "v1", "address=a:81") == ["a81"]
    with pytest.raises(kubernetes.client.ApiException) as info:
        _names(api, "v1", "host=a")  # v1 has no such field
    assert info.value.status == 400 and "field label not supported: host" in info.value.body
    moved = api.get_namespaced_custom_object(GROUP, "v2", "default", PLURAL, "a81")
    api.replace_namespaced_custom_object(GROUP, "v2", "default", PLURAL, "a81", {**moved, "host": "c"})
    api.delete_collection_namespaced_custom_object(GROUP, "v2", "default", PLURAL, field_selector="port=80")
    assert _names(api, "v2", "host=a") == []
    assert _names(api, "v1", "metadata.namespace=default") == ["a81", "b"]
    watcher.join(15)
    assert seen == [("ADDED", "a80"), ("ADDED", "a81"), ("DELETED", "a81"), ("DELETED", "a80")]
