"""The controller runtime against the real server: work queue semantics, informers (shared, indexed, resuming
after a server restart without re-listing), typed errors and server-side apply in the client."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import subprocess
import sys
import time

import pytest
from mini_kube.client import AlreadyExists, ApiClient, Connection, Gone, NotFound
from mini_kube.client.informer import Informer, SharedInformerFactory
from mini_kube.client.workqueue import RateLimiter, WorkQueue
from mini_kube.controllers.reconciler import Controller
from mini_kube.machinery.refs import CONFIGMAPS


async def test_queue_dedupes_and_never_hands_a_key_to_two_workers():
    queue = WorkQueue()
    for _ in range(3):
        queue.add("a")
    queue.add("b")
    assert len(queue) == 2
    key = await queue.get()
    assert key == "a"
    queue.add("a")  # in flight: processed again afterwards, not concurrently
    assert await queue.get() == "b"
    assert len(queue) == 0
    queue.done("b")
    queue.done("a")
    assert await asyncio.wait_for(queue.get(), 1) == "a"
    queue.add_after("c", 0.05)
    assert await asyncio.wait_for(queue.get(), 1) == "c"


async def test_a_key_waits_once_at_the_earlier_of_its_times():
    """As client-go's delaying queue: delayed adds of a key already waiting keep its earlier time and make no
    second pass (a controller asking to be called again from each of its passes made a chain per pass)."""
    queue = WorkQueue()
    for delay in (0.05, 0.05, 1.0):
        queue.add_after("k", delay)
    assert await asyncio.wait_for(queue.get(), 1) == "k"
    queue.done("k")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(queue.get(), 1.5)
    queue.add_after("j", 30)
    queue.add_after("j", 0.05)
    assert await asyncio.wait_for(queue.get(), 1) == "j"


def test_rate_limiter_backs_off_per_key_and_forgets():
    limiter = RateLimiter(base_delay=0.01, max_delay=1.0, qps=1000, burst=1000)
    delays = [limiter.when("k") for _ in range(8)]
    assert delays == sorted(delays) and delays[0] == pytest.approx(0.01) and delays[-1] == 1.0
    limiter.forget("k")
    assert limiter.when("k") == pytest.approx(0.01)


async def test_drain_waits_for_work_in_flight():
    queue = WorkQueue()
    queue.add("x")
    key = await queue.get()
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, queue.done, key)
    await queue.drain(2)
    queue.add("y")
    assert len(queue) == 0  # shut down: nothing new is taken


async def test_a_failed_reconcile_is_a_warning_naming_the_key_and_its_traceback_is_debug(caplog):
    class Failing(Controller):
        name = "failing"
        workers = 1

        async def reconcile(self, key: str) -> None:
            raise ValueError(f"no such thing as {key}")

    controller = Failing(ApiClient(Connection("http://127.0.0.1:9")))  # nothing is watched: no request made
    caplog.set_level(logging.DEBUG, logger="mini-kube.controller")
    await controller.start()
    controller.queue.add("ns/broken")
    for _ in range(100):
        if any(r.levelno == logging.WARNING for r in caplog.records):
            break
        await asyncio.sleep(0.01)
    await controller.stop()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and warnings[0].getMessage() == "failing: reconcile ns/broken failed: no such thing as ns/broken"
    assert warnings[0].exc_info is None
    assert any(r.levelno == logging.DEBUG and r.exc_info for r in caplog.records)


def test_informers_share_index_and_report_changes(mini_kube, tmp_path):
    async def scenario() -> None:
        client = ApiClient(Connection.from_kubeconfig(mini_kube.kubeconfig))
        factory = SharedInformerFactory(client)
        assert factory.informer(CONFIGMAPS) is factory.informer(CONFIGMAPS)
        informer = factory.informer(CONFIGMAPS)
        seen: list[tuple[str, str]] = []
        informer.add_handler(lambda event, old, new: seen.append((event, (new or old)["metadata"]["name"])))
        informer.add_index("tier", lambda o: ((o["metadata"].get("labels") or {}).get("tier", ""),))
        factory.start()
        await factory.wait_for_sync(5)
        await client.create(CONFIGMAPS, {"metadata": {"name": "one", "labels": {"tier": "web"}}}, "default")
        await client.apply(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"},
                                        "data": {"k": "v"}}, "default", field_manager="test")
        await client.delete(CONFIGMAPS, "one", "default")
        for _ in range(100):
            if ("delete", "one") in seen:
                break
            await asyncio.sleep(0.02)
        assert ("add", "one") in seen and ("update", "one") in seen and ("delete", "one") in seen
        assert informer.by_index("tier", "web") == [] and informer.get("default/one") is None
        with pytest.raises(NotFound):
            await client.get(CONFIGMAPS, "one", "default")
        await client.create(CONFIGMAPS, {"metadata": {"name": "two"}}, "default")
        with pytest.raises(AlreadyExists):
            await client.create(CONFIGMAPS, {"metadata": {"name": "two"}}, "default")
        await factory.stop()
        await client.close()

    mini_kube.run(scenario())


def test_informer_views_follow_their_objects(mini_kube):
    """A view is derived from each object as it is stored (also the objects already cached when it is added),
    follows updates and goes with the object."""
    async def scenario() -> None:
        client = ApiClient(Connection.from_kubeconfig(mini_kube.kubeconfig))
        informer = Informer(client, CONFIGMAPS, "default")
        await client.create(CONFIGMAPS, {"metadata": {"name": "early"}, "data": {"k": "1"}}, "default")
        informer.start()
        await asyncio.wait_for(informer.synced.wait(), 5)
        informer.add_view("k", lambda o: (o.get("data") or {}).get("k"))
        assert informer.view("k", "default/early") == "1"
        await client.create(CONFIGMAPS, {"metadata": {"name": "late"}, "data": {"k": "2"}}, "default")
        await client.patch(CONFIGMAPS, "early", {"data": {"k": "3"}}, "default")
        await client.delete(CONFIGMAPS, "late", "default")
        for _ in range(200):
            if informer.view("k", "default/early") == "3" and "default/late" not in informer.views("k"):
                break
            await asyncio.sleep(0.02)
        assert informer.views("k") == {"default/early": "3"}
        await informer.stop()
        await client.close()

    mini_kube.run(scenario())


def test_watch_from_a_compacted_revision_is_gone(mini_kube):
    async def scenario() -> None:
        client = ApiClient(Connection.from_kubeconfig(mini_kube.kubeconfig))
        for i in range(3):
            await client.create(CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, "default")
        store = mini_kube.server.store
        mini_kube.server.cache._history.clear()
        await store.compact(store.revision)
        informer = Informer(client, CONFIGMAPS, "default")
        informer.resource_version = "1"
        with pytest.raises(Gone):
            await informer._watch()
        await client.close()

    mini_kube.run(scenario())


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(data, port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data),
                             "--port", str(port), "--no-controllers"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert "ready at" in proc.stdout.readline()
    return proc


@pytest.mark.slow
async def test_a_watch_broken_by_a_server_restart_resumes_without_a_relist(tmp_path):
    port = _port()
    server = _serve(tmp_path, port)
    client = ApiClient.from_kubeconfig(tmp_path / "kubeconfig")
    informer = Informer(client, CONFIGMAPS, "default")
    try:
        informer.start()
        await asyncio.wait_for(informer.synced.wait(), 10)
        await client.create(CONFIGMAPS, {"metadata": {"name": "before"}}, "default")
        server.send_signal(signal.SIGTERM)
        server.wait(15)
        server = _serve(tmp_path, port)
        await client.create(CONFIGMAPS, {"metadata": {"name": "after"}}, "default")
        deadline = time.monotonic() + 15
        while informer.get("default/after") is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert informer.get("default/before") and informer.get("default/after")
        assert informer.lists == 1
    finally:
        await informer.stop()
        await client.close()
        server.send_signal(signal.SIGTERM)
        server.wait(15)


def test_event_recorder_writes_at_most_a_burst_of_events_per_object(mini_kube):
    """As client-go's spam filter: 25 events of one type about one object, then none until the budget refills
    (one per 5 minutes); another object, or another type, has its own budget."""
    from mini_kube.client.events import SPAM_BURST, EventRecorder
    from mini_kube.machinery.refs import EVENTS

    async def scenario() -> None:
        client = ApiClient(Connection.from_kubeconfig(mini_kube.kubeconfig))
        busy = await client.create(CONFIGMAPS, {"metadata": {"name": "busy"}}, "default")
        quiet = await client.create(CONFIGMAPS, {"metadata": {"name": "quiet"}}, "default")
        busy.update(kind="ConfigMap", apiVersion="v1")
        quiet.update(kind="ConfigMap", apiVersion="v1")
        recorder = EventRecorder(client, "spam-test")
        for i in range(SPAM_BURST + 15):
            recorder.event(busy, "Normal", "Made", f"made thing {i}")
        recorder.event(busy, "Warning", "Broke", "broke once")
        recorder.event(quiet, "Normal", "Made", "made one thing")
        await recorder.flush()
        events = (await client.list(EVENTS, "default"))["items"]
        mine = [e for e in events if e["source"]["component"] == "spam-test"]
        about_busy = [e for e in mine if e["involvedObject"]["name"] == "busy"]
        assert len([e for e in about_busy if e["type"] == "Normal"]) == SPAM_BURST
        assert [e["message"] for e in about_busy if e["type"] == "Warning"] == ["broke once"]
        assert [e["message"] for e in mine if e["involvedObject"]["name"] == "quiet"] == ["made one thing"]
        assert recorder.filtered == 15
        await recorder.close()
        await client.close()

    mini_kube.run(scenario())


class Key:
    """A queue key that can be watched for being freed."""


async def test_a_delayed_key_is_freed_by_reference_counting_once_handled():
    """A key queued after a delay and handled is freed at once with the cyclic garbage collector off: its timer
    is in no reference cycle (a server may freeze what survives a full collection: mini_kube/gc_policy.py)."""
    import gc
    import weakref

    queue = WorkQueue()
    gc.collect()
    gc.disable()
    try:
        key = Key()
        freed = weakref.ref(key)
        queue.add_after(key, 0.01)
        assert await asyncio.wait_for(queue.get(), 1) is key
        queue.done(key)
        queue.forget(key)
        del key
        await asyncio.sleep(0)
        assert freed() is None
    finally:
        gc.enable()
