"""Watch semantics over HTTP: resourceVersion starts, selectors, bookmarks, initial events, timeouts, 410."""

from __future__ import annotations

import aiohttp
import orjson
from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import CONFIGMAPS

from tests.helpers import eventually

MARKER = "zz-end-of-watch"


def name_of(event: dict) -> str:
    obj = event["object"]
    return obj["rows"][0]["cells"][0] if obj.get("kind") == "Table" else obj["metadata"].get("name", "")


def watch_lines(kube, namespace: str, *, marker: dict | None = None, count: int = 0,
                headers: dict[str, str] | None = None, **params: str) -> list[dict]:
    """Open a watch and return its events: with `marker` (a ConfigMap's metadata), every event before the
    marker's ADDED, the marker being created once the server has answered (the watch is registered by then), so
    it comes after all that the watch owes and proves that nothing else came before it; else the first `count`;
    else all until the server ends the watch (which must happen within `kube.run`'s 30 s, or the test fails).
    This ends as soon as the events are in, not when the server ends the watch (timeoutSeconds is whole seconds)."""
    async def run() -> list[dict]:
        async with aiohttp.ClientSession() as session:
            url = f"{kube.url}{CONFIGMAPS.path(namespace)}"
            async with session.get(url, params={"watch": "1", "timeoutSeconds": "10", **params},
                                   headers=headers or {}) as response:
                assert response.status == 200
                if marker is not None:
                    async with session.post(url, json={"metadata": {"name": MARKER, **marker}}) as created:
                        assert created.status == 201, await created.text()
                events: list[dict] = []
                async for line in response.content:
                    if not line.strip():
                        continue
                    event = orjson.loads(line)
                    if marker is not None and event["type"] == "ADDED" and name_of(event) == MARKER:
                        return events
                    events.append(event)
                    if len(events) == count:
                        return events
        if marker is None and not count:
            return events
        raise AssertionError(f"the watch ended early, after {names(events)}")

    return kube.run(run())


def names(events: list[dict]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]


def test_watch_from_resource_version_replays_history(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    rv = client.list(CONFIGMAPS, kube_namespace)["metadata"]["resourceVersion"]
    client.create(CONFIGMAPS, {"metadata": {"name": "a"}, "data": {"v": "1"}}, kube_namespace)
    client.patch(CONFIGMAPS, "a", {"data": {"v": "2"}}, kube_namespace)
    client.delete(CONFIGMAPS, "a", kube_namespace)
    events = watch_lines(mini_kube_session, kube_namespace, marker={}, resourceVersion=rv)
    assert names(events) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert revisions == sorted(revisions) and revisions[0] > int(rv)


def test_watch_without_resource_version_starts_with_current_state(mini_kube_session, kube_namespace):
    mini_kube_session.client.create(CONFIGMAPS, {"metadata": {"name": "existing"}}, kube_namespace)
    events = watch_lines(mini_kube_session, kube_namespace, marker={})
    assert names(events) == [("ADDED", "existing")]


def test_label_selector_leaving_selection_is_deleted(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(CONFIGMAPS, {"metadata": {"name": "sel", "labels": {"tier": "web"}}}, kube_namespace)
    rv = client.list(CONFIGMAPS, kube_namespace)["metadata"]["resourceVersion"]
    client.patch(CONFIGMAPS, "sel", {"metadata": {"labels": {"tier": "db"}}}, kube_namespace)
    client.patch(CONFIGMAPS, "sel", {"metadata": {"labels": {"tier": "web"}}}, kube_namespace)
    events = watch_lines(mini_kube_session, kube_namespace, marker={"labels": {"tier": "web"}}, resourceVersion=rv,
                         labelSelector="tier=web")
    assert names(events) == [("DELETED", "sel"), ("ADDED", "sel")]


def test_send_initial_events_ends_with_bookmark(mini_kube_session, kube_namespace):
    mini_kube_session.client.create(CONFIGMAPS, {"metadata": {"name": "init"}}, kube_namespace)
    events = watch_lines(mini_kube_session, kube_namespace, count=2, sendInitialEvents="true",
                         resourceVersionMatch="NotOlderThan", allowWatchBookmarks="true")
    assert names(events)[0] == ("ADDED", "init")
    bookmark = events[1]
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"


def test_send_initial_events_requires_not_older_than(mini_kube_session, kube_namespace):
    from mini_kube.client import ApiError

    try:
        mini_kube_session.client.request("GET", CONFIGMAPS.path(kube_namespace),
                                         params={"watch": "1", "sendInitialEvents": "true"})
    except ApiError as err:
        assert err.status == 422
    else:
        raise AssertionError("expected 422")


def test_watch_from_compacted_revision_is_410():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, watch_history=2) as kube:
        client = kube.client
        client.create(CONFIGMAPS, {"metadata": {"name": "c"}}, "default")
        for i in range(5):
            client.patch(CONFIGMAPS, "c", {"data": {"i": str(i)}}, "default")
        kube.run(kube.server.store.compact(kube.server.store.revision))
        events = watch_lines(kube, "default", resourceVersion="2", timeoutSeconds="60")  # ends at the ERROR
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith("too old resource version: 2")


def test_watch_older_than_the_cache_reads_store_history():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, watch_history=2) as kube:
        client = kube.client
        rv = client.list(CONFIGMAPS, "default")["metadata"]["resourceVersion"]
        client.create(CONFIGMAPS, {"metadata": {"name": "h"}}, "default")
        for i in range(4):
            client.patch(CONFIGMAPS, "h", {"data": {"i": str(i)}}, "default")
        events = watch_lines(kube, "default", marker={}, resourceVersion=rv)
        assert names(events) == [("ADDED", "h")] + [("MODIFIED", "h")] * 4
        assert [e["object"].get("data", {}).get("i") for e in events[1:]] == ["0", "1", "2", "3"]


def test_watch_as_table_sends_one_row_tables(mini_kube_session, kube_namespace):
    """What `kubectl get -w` asks for: Table events, column definitions only in the first."""
    mini_kube_session.client.create(CONFIGMAPS, {"metadata": {"name": "tw1"}, "data": {"a": "1"}}, kube_namespace)
    mini_kube_session.client.create(CONFIGMAPS, {"metadata": {"name": "tw2"}}, kube_namespace)

    events = watch_lines(mini_kube_session, kube_namespace, marker={},
                         headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    assert [e["type"] for e in events] == ["ADDED", "ADDED"]
    first, second = (e["object"] for e in events)
    assert first["kind"] == "Table" and [c["name"] for c in first["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert first["rows"][0]["cells"][:2] == ["tw1", 1]
    assert second["columnDefinitions"] is None and second["rows"][0]["cells"][0] == "tw2"


def test_a_watch_whose_client_has_gone_is_ended():
    """A watch that gets no event to write notices its closed connection (aiohttp does not cancel its handler)
    and lets go of its handler and its cache registration, instead of holding them until its timeout."""
    import socket
    from urllib.parse import urlsplit

    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, scheduler=False) as kube:  # no watches but the test's
        reaper = kube.server.watch_reaper
        reaper.interval = 0.05
        url = urlsplit(kube.url)
        sockets = []
        for _ in range(3):
            sock = socket.create_connection((url.hostname, url.port), timeout=5)
            sock.sendall(f"GET {CONFIGMAPS.path('default')}?watch=1&fieldSelector=metadata.name%3Dnever HTTP/1.1\r\n"
                         f"Host: {url.netloc}\r\n\r\n".encode())
            assert sock.recv(4096).startswith(b"HTTP/1.1 200 OK")
            sockets.append(sock)
        assert len(reaper) == 3 and kube.run(_watchers_of(kube, CONFIGMAPS)) == 3
        kept = sockets.pop()
        for sock in sockets:
            sock.close()
        eventually(lambda: len(reaper) == 1)
        assert kube.run(_watchers_of(kube, CONFIGMAPS)) == 1  # the cache no longer feeds the ended watches
        kube.client.create(CONFIGMAPS, {"metadata": {"name": "never"}}, "default")  # the open one is still served
        assert b'"ADDED"' in kept.recv(65536)
        kept.close()
        eventually(lambda: len(reaper) == 0)


async def _watchers_of(kube, resource: ResourceRef) -> int:
    res = kube.server.resources.lookup(resource.group, resource.version, resource.plural)
    return len(kube.server.cache._watchers.get(res.key_prefix, ()))


def test_old_history_is_kept_as_bytes_and_still_served(monkeypatch):
    """Past the newest DECODED_EVENTS, history events hold their objects as bytes only (no dicts for the garbage
    collector to walk); a watch from an older revision still gets them, selectors judged on both versions."""
    import gc

    from mini_kube.apiserver.registry import cache as cache_module

    from mini_kube.testing import MiniKube

    monkeypatch.setattr(cache_module, "DECODED_EVENTS", 3)
    with MiniKube(controllers=False) as kube:
        client = kube.client
        rv = client.list(CONFIGMAPS, "default")["metadata"]["resourceVersion"]
        client.create(CONFIGMAPS, {"metadata": {"name": "sel", "labels": {"tier": "web"}}, "data": {"v": "0"}},
                      "default")
        client.patch(CONFIGMAPS, "sel", {"metadata": {"labels": {"tier": "db"}}}, "default")
        client.patch(CONFIGMAPS, "sel", {"metadata": {"labels": {"tier": "web"}}, "data": {"v": "2"}}, "default")
        client.delete(CONFIGMAPS, "sel", "default")
        for i in range(6):  # pushes the events above deep into the history
            client.create(CONFIGMAPS, {"metadata": {"name": f"other-{i}"}}, "default")
        history = list(kube.server.cache._history)
        decoded = [e for e in history if any(isinstance(r, dict) for r in gc.get_referents(e))]
        assert 0 < len(decoded) <= 3 and decoded == history[-len(decoded):]
        events = watch_lines(kube, "default", marker={"labels": {"tier": "web"}}, resourceVersion=rv,
                             labelSelector="tier=web")
    assert names(events) == [("ADDED", "sel"), ("DELETED", "sel"), ("ADDED", "sel"), ("DELETED", "sel")]
    assert [e["object"].get("data", {}).get("v") for e in events] == ["0", "0", "2", "2"]
