"""Memory stays bounded (issue #10 item 14): the watch history by bytes, a slow watcher's backlog by bytes (it is
ended and re-watches, its backlog dropped rather than copied), and large lists are streamed in pieces."""

from __future__ import annotations

import urllib.request

import orjson
from mini_kube.apiserver.registry import cache as cache_module
from mini_kube.apiserver.registry.cache import ObjectCache
from mini_kube.machinery.refs import CONFIGMAPS
from mini_kube.store import Event, KeyValue

BIG = "x" * (256 << 10)


def _put(key: str, revision: int, payload: str) -> Event:
    value = b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"big"},"data":{"k":"' + payload.encode() + \
        b'"}}'
    return Event("PUT", KeyValue(key, value, 1, revision, revision), None)


def test_watch_history_is_bounded_by_bytes():
    cache = ObjectCache(history_events=1000, history_bytes=4 << 20)
    for revision in range(1, 101):  # 100 writes of a 256 KiB object: 25 MiB, of which 4 MiB are kept
        cache.apply([_put("/registry/core/configmaps/ns/big", revision, BIG)])
    assert cache._history_bytes <= 4 << 20
    assert cache.history_since(99) is not None and len(cache.history_since(99)) == 1
    assert cache.history_since(1) is None  # older: served from the store instead


def test_a_slow_watcher_is_ended_by_bytes_and_its_backlog_dropped(monkeypatch):
    monkeypatch.setattr(cache_module, "WATCHER_BYTES", 2 << 20)
    cache = ObjectCache()
    slow = cache.watch("/registry/core/configmaps/", None)
    for revision in range(1, 20):
        cache.apply([_put("/registry/core/configmaps/ns/big", revision, BIG)])
    assert slow.ended
    assert slow.queue.qsize() == 1 and slow.queue.get_nowait() is None


def test_large_lists_are_streamed(mini_kube_session, kube_namespace):
    for i in range(6):
        mini_kube_session.client.create(CONFIGMAPS, {"metadata": {"name": f"big-{i}"}, "data": {"k": BIG}},
                                        kube_namespace)
    with urllib.request.urlopen(f"{mini_kube_session.url}/api/v1/namespaces/{kube_namespace}/configmaps") as reply:
        assert reply.headers.get("Transfer-Encoding") == "chunked"
        listed = __import__("orjson").loads(reply.read())
    assert [i["metadata"]["name"] for i in listed["items"]] == [f"big-{i}" for i in range(6)]
    small = mini_kube_session.client.list(CONFIGMAPS, kube_namespace, limit="1")
    assert len(small["items"]) == 1 and small["metadata"]["continue"]


def test_a_node_watch_is_sent_only_its_nodes_pods():
    """A watch selecting spec.nodeName=<node> (a kubelet's) is sent the events of the Pods that are, or were
    until this event, on its node; the other nodes' Pods never reach its queue (upstream's trigger dispatch)."""
    from mini_kube.apiserver.registry.cache import Trigger

    def node_name(obj: dict) -> str:
        return (obj.get("spec") or {}).get("nodeName") or ""

    def pod(revision: int, node: str | None, created: bool) -> Event:
        spec = {"nodeName": node} if node else {}
        value = orjson.dumps({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns"},
                              "spec": spec})
        prev = None if created else KeyValue(PODS_KEY, b"{}", 1, revision - 1, 1)
        return Event("PUT", KeyValue(PODS_KEY, value, 1, revision, revision), prev)

    cache = ObjectCache()
    a = cache.watch("/registry/core/pods/", None, Trigger("spec.nodeName", "a", node_name))
    b = cache.watch("/registry/core/pods/", None, Trigger("spec.nodeName", "b", node_name))
    unscheduled = cache.watch("/registry/core/pods/", None, Trigger("spec.nodeName", "", node_name))
    everything = cache.watch("/registry/core/pods/", None)
    cache.apply([pod(1, None, True)])  # created, not yet bound
    cache.apply([pod(2, "a", False)])  # bound to a
    cache.apply([pod(3, "a", False)])  # a status write on a
    assert (a.queue.qsize(), b.queue.qsize(), unscheduled.queue.qsize(), everything.queue.qsize()) == (2, 0, 2, 3)
    cache.unwatch(a)
    cache.apply([pod(4, "a", False)])
    assert (a.queue.qsize(), everything.queue.qsize()) == (2, 4)


PODS_KEY = "/registry/core/pods/ns/p"
