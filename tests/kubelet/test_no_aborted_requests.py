"""A kubelet never abandons a request half way: when a Pod's delete event arrives while its final delete or a
status write is still waiting for the API server's answer, the request runs to its end (a real kube-apiserver
logs each abandoned one as "Timeout or abort while handling"; issue #28 saw 120-150 per 1,000-Pod scale-down).

A TCP relay between one simulated node and the API server counts connections the node closed while a request
on them had no answer yet. It holds the answers to DELETE requests back a little, as a real API server's watch
often delivers the DELETED event before the DELETE's own response."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import urlsplit

import pytest
from mini_kube.client import ApiClient, Connection

from .conftest import PODS, eventually, new_namespace

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


NODE = "relayed-node"


class CountingRelay:
    """Relays TCP to `target`; counts connections the client closed with a request unanswered; answers to
    DELETE requests are held back `delete_delay` seconds."""

    def __init__(self, target_host: str, target_port: int, delete_delay: float = 0.3) -> None:
        self.target = (target_host, target_port)
        self.delete_delay = delete_delay
        self.aborted = 0
        self.requests = 0
        self.request_lines: list[bytes] = []  # "PATCH /api/v1/... HTTP/1.1" of every request relayed
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        waiting = [False]  # a request went up and no byte of its answer came back yet
        method = [b""]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, request: bool) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    if request and not waiting[0]:
                        self.requests += 1
                        method[0] = data.split(b" ", 1)[0]
                        self.request_lines.append(data.split(b"\r\n", 1)[0])
                    if not request and waiting[0] and method[0] == b"DELETE":
                        await asyncio.sleep(self.delete_delay)
                    waiting[0] = request
                    dst.write(data)
                    await dst.drain()

        down = asyncio.ensure_future(pipe(reader, up_writer, True))
        up = asyncio.ensure_future(pipe(up_reader, writer, False))
        await asyncio.wait({down, up}, return_when=asyncio.FIRST_COMPLETED)
        if down.done() and waiting[0]:
            self.aborted += 1
        for task in (down, up):
            task.cancel()
        for w in (writer, up_writer):
            w.close()


def relayed_node(kube, name: str, first_index: int) -> tuple[CountingRelay, Any]:
    """A simulated node whose requests go through a CountingRelay."""
    from mini_kube.node import start_in_process

    url = urlsplit(kube.url)
    relay = CountingRelay(url.hostname or "127.0.0.1", url.port or 80)
    kube.run(relay.start())
    relayed = f"http://127.0.0.1:{relay.port}"
    node = kube.run(start_in_process(lambda: ApiClient(Connection(relayed)), [name], runtime="simulated",
                                     proxy=False, first_index=first_index))
    return relay, node


def test_deleted_pods_leave_no_request_aborted(simulated_cluster, tmp_path):
    kube = simulated_cluster
    ns = new_namespace(kube)
    relay, node = relayed_node(kube, NODE, 7)
    try:
        names = [f"p{i}" for i in range(40)]
        for name in names:
            kube.client.create(PODS, {"metadata": {"name": name}, "spec": {
                "nodeName": NODE, "terminationGracePeriodSeconds": 5,
                "containers": [{"name": "c", "image": "busybox"}]}}, ns)
        eventually(lambda: all((p.get("status") or {}).get("phase") == "Running"
                               for p in kube.client.list(PODS, ns)["items"]) and len(names))
        for name in names:
            kube.client.delete(PODS, name, ns)
        eventually(lambda: not kube.client.list(PODS, ns)["items"])
        eventually(lambda: not node.kubelets[0].workers)  # every delete event reached the node
        kube.run(asyncio.sleep(0.3))  # the relay sees a connection closed by an abort within a few loop turns
        assert relay.requests > 80  # status writes and final deletes went through the relay
        assert relay.aborted == 0
    finally:
        kube.run(node.stop())
        kube.run(relay.stop())


def test_a_deleted_pod_gets_one_status_write(simulated_cluster):
    """While its containers stop, a terminating Pod's status is written once, with their exits and its final
    phase (as upstream's pod worker, busy killing the Pod, writes it), not once per container exit and again."""
    kube = simulated_cluster
    ns = new_namespace(kube)
    relay, node = relayed_node(kube, "status-once-node", 8)
    try:
        names = [f"s{i}" for i in range(10)]
        for name in names:
            kube.client.create(PODS, {"metadata": {"name": name}, "spec": {
                "nodeName": "status-once-node", "terminationGracePeriodSeconds": 5,
                "containers": [{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]}}, ns)

        def ready(pod: dict) -> bool:
            return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or ())
        eventually(lambda: all(ready(p) for p in kube.client.list(PODS, ns)["items"]))
        kube.run(asyncio.sleep(0.5))  # any status write still on its way lands before the count starts
        before = len(relay.request_lines)
        for name in names:
            kube.client.delete(PODS, name, ns)
        eventually(lambda: not kube.client.list(PODS, ns)["items"])
        status_writes = [line for line in relay.request_lines[before:]
                         if line.startswith(b"PATCH ") and b"/status " in line]
        assert len(status_writes) == len(names), status_writes
    finally:
        kube.run(node.stop())
        kube.run(relay.stop())
