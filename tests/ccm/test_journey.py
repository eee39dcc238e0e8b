"""The seed's journey from outside the cluster, through real sockets at every hop: a DNS lookup of the load
balancer's name, the load balancer, a node's NodePort (kube-proxy), a Pod (a process in its own network
namespace). Two in-process nodes run the Pods; the cloud-controller-manager and the cluster DNS find the
cluster network through its ConfigMap, as in `mini-kube serve`."""

from __future__ import annotations

import contextlib
import functools
import subprocess
import sys
import threading
import urllib.request

import dns.message
import dns.query
import pytest
from mini_kube.machinery.refs import PODS, SERVICES

from tests.helpers import eventually as _eventually
from tests.helpers import kubectl

eventually = functools.partial(_eventually, timeout=30.0, interval=0.05)


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.read().decode().strip()


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.network.namespaces import can_make_namespaces

    from mini_kube.testing import MiniKube

    possible, why = can_make_namespaces()
    if not possible:
        pytest.skip(f"Pods need network namespaces here: {why}")
    with MiniKube(nodes=2, node_runtime="process", ccm={"health_interval": 0.2, "status_port": 0},
                  dns={"port": 0}) as kube:
        kube.run(kube.dns.ready.wait())
        eventually(lambda: kube.ccm.status_address)
        yield kube


@pytest.mark.slow
def test_dns_load_balancer_node_port_pod(cluster):
    kubectl(cluster, "create", "deployment", "web", "--image=traefik/whoami", "--replicas=3")
    kubectl(cluster, "expose", "deployment", "web", "--port=8080", "--target-port=80", "--type=LoadBalancer")
    eventually(lambda: len(_ready_pods(cluster)) == 3)
    out = kubectl(cluster, "get", "service", "web", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}").stdout
    ip = out or eventually(lambda: kubectl(cluster, "get", "service", "web", "-o",
                                           "jsonpath={.status.loadBalancer.ingress[0].ip}").stdout)

    # 1. the name resolves (the host listener of the cluster DNS)
    query = dns.message.make_query("web.default.lb.mini-kube.local", "A")
    answer = dns.query.udp(query, cluster.dns.host_address, port=cluster.dns.host_port, timeout=2)
    assert [r.to_text() for r in answer.answer[0]] == [ip]

    # 2. answers come from all three Pods
    pods = {p["metadata"]["name"] for p in cluster.client.list(PODS, "default", labelSelector="app=web")["items"]}
    seen = eventually(lambda: _answers(ip, 30) if _answers(ip, 30) == pods else None)
    assert seen == pods

    # the same request, traced hop by hop from the components' own records (`mini-kube trace`)
    done = subprocess.run([sys.executable, "-m", "mini_kube.cli", "trace", "--kubeconfig", cluster.kubeconfig,
                           "--dns", f"{cluster.dns.host_address}:{cluster.dns.host_port}", "--ccm",
                           "{}:{}".format(*cluster.ccm.status_address), "http://web.default.lb.mini-kube.local:8080/"],
                          capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["dns", "client", "load", "kube-proxy", "pod", "answer"], \
        done.stdout + done.stderr
    pod_name = lines[4].split()[1].split("/")[1]
    assert lines[5].endswith(f"200 OK: {pod_name}")
    assert "(Service default/web)" in lines[2] and f"-> {ip}" in lines[0]

    # 3. a Pod deleted while requests flow: none fails while the Deployment replaces it
    failures: list[Exception] = []
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            try:
                get(f"http://{ip}:8080/")
            except Exception as exc:  # noqa: BLE001 - counted
                failures.append(exc)
    thread = threading.Thread(target=hammer)
    thread.start()
    try:
        deleted = sorted(pods)[0]
        kubectl(cluster, "delete", "pod", deleted, "--wait=false")
        # until the Pod is gone and its replacement is ready behind the load balancer
        eventually(lambda: deleted not in _names(cluster) and len(_ready_pods(cluster)) == 3,
                   explain=lambda: f"pods: {_names(cluster)}, ready: {_ready_pods(cluster)}, "
                                   f"the kubelets' pod workers: {_workers(cluster)}, "
                                   f"the Pods: {_states(cluster)}")
    finally:
        stop.set()
        thread.join(10)
    assert failures == []

    # 4. from inside a Pod: the Service's DNS name (resolv.conf -> the cluster DNS on 10.0.0.10) and its ClusterIP
    client_pod = next(p["metadata"]["name"] for p in cluster.client.list(PODS, "default", labelSelector="app=web")[
        "items"] if not p["metadata"].get("deletionTimestamp"))
    script = ("import socket, urllib.request; print(socket.gethostbyname('web.default')); "
              "print(urllib.request.urlopen('http://web.default:8080/', timeout=5).read().decode().strip())")
    out = kubectl(cluster, "exec", client_pod, "--", "python3", "-c", script).stdout.split()
    assert out[0] == cluster.client.get(SERVICES, "web", "default")["spec"]["clusterIP"]
    assert out[1].startswith("web-")

    # 5. scaled to zero: refused at once
    kubectl(cluster, "scale", "deployment", "web", "--replicas=0")
    try:  # each Pod is stopped by its kubelet (SIGTERM to the stand-in), then deleted
        eventually(lambda: not cluster.client.list(PODS, "default", labelSelector="app=web")["items"], timeout=60)
    except AssertionError:
        left = [(p["metadata"]["name"], p["metadata"].get("deletionTimestamp"), p["spec"].get("nodeName"),
                 (p.get("status") or {}).get("phase"), [c.get("state") for c in (p.get("status") or {}).get(
                     "containerStatuses") or ()]) for p in cluster.client.list(PODS, "default")["items"]]
        raise AssertionError(f"Pods left after scaling to zero: {left}\nthe kubelets' pod workers: "
                             f"{_workers(cluster)}") from None
    with pytest.raises(OSError) as refused:
        get(f"http://{ip}:8080/")
    reason = getattr(refused.value, "reason", refused.value)  # urllib wraps what the socket raised
    # refused or reset at once (urllib's RemoteDisconnected is a ConnectionResetError), not timed out
    assert isinstance(reason, (ConnectionResetError, ConnectionRefusedError, BrokenPipeError)), refused.value


def _names(kube) -> set[str]:
    return {p["metadata"]["name"] for p in kube.client.list(PODS, "default", labelSelector="app=web")["items"]}


def _ready_pods(kube) -> set[str]:
    """The Deployment's Ready Pods that are not being deleted."""
    return {p["metadata"]["name"] for p in kube.client.list(PODS, "default", labelSelector="app=web")["items"]
            if not p["metadata"].get("deletionTimestamp") and any(
                c["type"] == "Ready" and c["status"] == "True" for c in (p.get("status") or {}).get("conditions") or ())}


def _workers(kube) -> list[tuple]:
    """What each kubelet's pod workers are doing (for a Pod that does not go away), read on the cluster's loop."""
    async def snapshot() -> list[tuple]:
        return [(k.name, w.name, "terminating" if w.terminating else "running",
                 "finished" if w.finished.is_set() else "", "main done" if w._main.done() else "main running",
                 [(r.name, r.state) for r in w.containers]) for k in kube.nodes.kubelets for w in k.workers.values()]
    return kube.run(snapshot())


def _states(kube) -> list[tuple]:
    """Each of the Deployment's Pods: name, deletion time and status (for a Pod that does not go away)."""
    return [(p["metadata"]["name"], p["metadata"].get("deletionTimestamp"), p.get("status"))
            for p in kube.client.list(PODS, "default", labelSelector="app=web")["items"]]


def _answers(ip: str, count: int) -> set[str]:
    names = set()
    for _ in range(count):
        with contextlib.suppress(OSError):
            names.add(get(f"http://{ip}:8080/"))
    return names


def test_no_address_leaks_to_the_host(cluster):
    """The load balancer and the DNS listen on the loopback range; no cluster address is on the host."""
    host = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout
    assert cluster.dns.host_address.startswith("127.")
    assert all(lb.ip.startswith("127.") for lb in cluster.ccm.cloud.load_balancers.values())
    assert "10.0.0.10" not in host and "10.244." not in host
