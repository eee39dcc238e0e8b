"""HTTP and TCP probes cancelled by their timeout close their sockets themselves, at once: before, the dial's
socket was left to the garbage collector (a ResourceWarning), open for as long as anything held the timeout's
exception. Real probes of a real Pod's worker, against an address no one answers (the connect stays pending)
and a server that accepts but never answers (the HTTP request waits)."""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import warnings
from pathlib import Path

import pytest
from mini_kube.machinery.refs import PODS
from mini_kube.network.namespaces import open_connection_in

from .conftest import NODE, eventually, new_namespace, pod, status_of

SILENT = "import socket, time; s = socket.socket(); s.bind(('0.0.0.0', 8080)); s.listen(128); time.sleep(1e6)"
SYN_SENT = "02"


def pending_connects(netns: str, host: str, port: int) -> int:
    """Sockets of the namespace still trying to connect to host:port (the kernel's own table)."""
    wanted = f"{int.from_bytes(ipaddress.ip_address(host).packed, 'little'):08X}:{port:04X}"
    lines = Path(netns.replace("/ns/net", "/net/tcp")).read_text().splitlines()[1:]
    return sum(1 for line in lines if line.split()[2] == wanted and line.split()[3] == SYN_SENT)


def nobody(kubelet) -> str:
    """An address of the node's Pod network that no Pod has: a connect to it stays pending."""
    return str(ipaddress.ip_network(kubelet.config.pod_cidr)[-2])


def test_timed_out_probes_close_their_sockets(process_cluster):
    kube = process_cluster
    ns = new_namespace(kube)
    kube.client.create(PODS, pod("silent", {"name": "main", "image": "busybox", "command": ["python3", "-c", SILENT]}),
                       ns)
    eventually(lambda: status_of(kube, ns, "silent").get("phase") == "Running")
    kubelet = next(k for k in kube.nodes.kubelets if k.name == NODE)
    worker = next(w for w in list(kubelet.workers.values()) if w.namespace == ns and w.name == "silent")
    spec = worker.specs["main"]
    eventually(lambda: kube.run(worker.probes.check(spec, {"tcpSocket": {"port": 8080}}))[0])  # listening
    probes = [{"tcpSocket": {"host": nobody(kubelet), "port": 80}, "timeoutSeconds": 1},
              {"httpGet": {"host": nobody(kubelet), "port": 80}, "timeoutSeconds": 1},
              {"httpGet": {"port": 8080}, "timeoutSeconds": 1}]

    async def probe_all() -> list[tuple[bool, str]]:
        results = await asyncio.gather(*(worker.probes.check(spec, p) for p in probes * 10))
        gc.collect()  # a socket nobody closed is finalized now, with its ResourceWarning
        await asyncio.sleep(0)
        return results

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        results = kube.run(probe_all(), timeout=30)
    far, deadline = f"{nobody(kubelet)}:80", "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    assert {r for r in results} == {(False, f"dial tcp {far}: i/o timeout"), (False, f'Get "http://{far}/": {deadline}'),
                                    (False, f'Get "http://{worker.ip}:8080/": {deadline}')}
    unclosed = [str(w.message) for w in caught if "unclosed" in str(w.message) and "socket" in str(w.message)]
    assert unclosed == []
    assert pending_connects(kubelet.network_netns, nobody(kubelet), 80) == 0


def test_a_cancelled_dial_closes_its_socket(process_cluster):
    """Whoever keeps the timeout's exception (a logger, a test) does not keep the socket open with it."""
    kube = process_cluster
    kubelet = next(k for k in kube.nodes.kubelets if k.name == NODE)
    netns, host = kubelet.network_netns, nobody(kubelet)

    async def dial_and_give_up() -> pytest.ExceptionInfo:
        with pytest.raises(TimeoutError) as caught:
            await asyncio.wait_for(open_connection_in(netns, host, 81), 0.2)
        return caught

    kept = [kube.run(dial_and_give_up(), timeout=10) for _ in range(5)]
    assert pending_connects(netns, host, 81) == 0
    assert len(kept) == 5
