"""Watch semantics over HTTP: resourceVersion starts, selectors, bookmarks, initial events, timeouts, 410."""

from __future__ import annotations

import aiohttp
import orjson
from mini_kube.controllers.client import ResourceRef

CM = ResourceRef("", "v1", "configmaps")


def watch_lines(kube, namespace: str, **params: str) -> list[dict]:
    """Open a watch, return every event line received before the server ends it (timeoutSeconds)."""
    async def run() -> list[dict]:
        async with aiohttp.ClientSession() as session:
            url = f"{kube.url}{CM.path(namespace)}"
            async with session.get(url, params={"watch": "1", **params}) as response:
                assert response.status == 200
                return [orjson.loads(line) for line in (await response.read()).splitlines() if line.strip()]

    return kube.run(run())


def names(events: list[dict]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]


def test_watch_from_resource_version_replays_history(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    rv = client.list(CM, kube_namespace)["metadata"]["resourceVersion"]
    client.create(CM, {"metadata": {"name": "a"}, "data": {"v": "1"}}, kube_namespace)
    client.patch(CM, "a", {"data": {"v": "2"}}, kube_namespace)
    client.delete(CM, "a", kube_namespace)
    events = watch_lines(mini_kube_session, kube_namespace, resourceVersion=rv, timeoutSeconds="1")
    assert names(events) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert revisions == sorted(revisions) and revisions[0] > int(rv)


def test_watch_without_resource_version_starts_with_current_state(mini_kube_session, kube_namespace):
    mini_kube_session.client.create(CM, {"metadata": {"name": "existing"}}, kube_namespace)
    events = watch_lines(mini_kube_session, kube_namespace, timeoutSeconds="1")
    assert names(events) == [("ADDED", "existing")]


def test_label_selector_leaving_selection_is_deleted(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(CM, {"metadata": {"name": "sel", "labels": {"tier": "web"}}}, kube_namespace)
    rv = client.list(CM, kube_namespace)["metadata"]["resourceVersion"]
    client.patch(CM, "sel", {"metadata": {"labels": {"tier": "db"}}}, kube_namespace)
    client.patch(CM, "sel", {"metadata": {"labels": {"tier": "web"}}}, kube_namespace)
    events = watch_lines(mini_kube_session, kube_namespace, resourceVersion=rv, labelSelector="tier=web",
                         timeoutSeconds="1")
    assert names(events) == [("DELETED", "sel"), ("ADDED", "sel")]


def test_send_initial_events_ends_with_bookmark(mini_kube_session, kube_namespace):
    mini_kube_session.client.create(CM, {"metadata": {"name": "init"}}, kube_namespace)
    events = watch_lines(mini_kube_session, kube_namespace, sendInitialEvents="true",
                         resourceVersionMatch="NotOlderThan", allowWatchBookmarks="true", timeoutSeconds="1")
    assert names(events)[0] == ("ADDED", "init")
    bookmark = events[1]
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"


def test_send_initial_events_requires_not_older_than(mini_kube_session, kube_namespace):
    from mini_kube.controllers.client import ApiError

    try:
        mini_kube_session.client.request("GET", CM.path(kube_namespace),
                                         params={"watch": "1", "sendInitialEvents": "true"})
    except ApiError as err:
        assert err.status == 422
    else:
        raise AssertionError("expected 422")


def test_watch_from_compacted_revision_is_410():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, watch_history=2) as kube:
        client = kube.client
        client.create(CM, {"metadata": {"name": "c"}}, "default")
        for i in range(5):
            client.patch(CM, "c", {"data": {"i": str(i)}}, "default")
        kube.run(kube.server.store.compact(kube.server.store.revision))
        events = watch_lines(kube, "default", resourceVersion="2", timeoutSeconds="1")
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith("too old resource version: 2")


def test_watch_older_than_the_cache_reads_store_history():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, watch_history=2) as kube:
        client = kube.client
        rv = client.list(CM, "default")["metadata"]["resourceVersion"]
        client.create(CM, {"metadata": {"name": "h"}}, "default")
        for i in range(4):
            client.patch(CM, "h", {"data": {"i": str(i)}}, "default")
        events = watch_lines(kube, "default", resourceVersion=rv, timeoutSeconds="1")
        assert names(events) == [("ADDED", "h")] + [("MODIFIED", "h")] * 4
        assert [e["object"].get("data", {}).get("i") for e in events[1:]] == ["0", "1", "2", "3"]


def test_watch_as_table_sends_one_row_tables(mini_kube_session, kube_namespace):
    """What `kubectl get -w` asks for: Table events, column definitions only in the first."""
    mini_kube_session.client.create(CM, {"metadata": {"name": "tw1"}, "data": {"a": "1"}}, kube_namespace)
    mini_kube_session.client.create(CM, {"metadata": {"name": "tw2"}}, kube_namespace)

    async def run() -> list[dict]:
        async with aiohttp.ClientSession() as session, session.get(
                f"{mini_kube_session.url}{CM.path(kube_namespace)}",
                params={"watch": "1", "timeoutSeconds": "1"},
                headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}) as response:
            return [orjson.loads(line) for line in (await response.read()).splitlines() if line.strip()]

    events = mini_kube_session.run(run())
    assert [e["type"] for e in events] == ["ADDED", "ADDED"]
    first, second = (e["object"] for e in events)
    assert first["kind"] == "Table" and [c["name"] for c in first["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert first["rows"][0]["cells"][:2] == ["tw1", 1]
    assert second["columnDefinitions"] is None and second["rows"][0]["cells"][0] == "tw2"
