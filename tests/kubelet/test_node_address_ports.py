"""A node's address from inside Pods, through real kubectl: the nodes' addresses are loopback ones (127.A.B.x),
which inside a Pod's own network namespace would be its own loopback; Pods route them to the cluster network,
where the node's NodePorts and its Pods' hostPorts answer (network/cluster.py, kubelet/hostports.py). A Pod
reaches NodeIP:NodePort over TCP and UDP, seen by kube-proxy from its own address (ClientIP affinity holds); a
hostNetwork Pod reaches hostPorts bound to 127.0.0.1 and to the node's address, TCP and UDP, and other Pods and
the machine reach those on the node's address; a deleted Pod's hostPort is closed."""

from __future__ import annotations

import json
import socket
import urllib.request

import pytest

from tests.helpers import kubectl

from .conftest import eventually, status_of

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"


def node_address(kube) -> str:
    return kubectl(kube, "get", "nodes", "-o",
                   'jsonpath={.items[0].status.addresses[?(@.type=="InternalIP")].address}').stdout.strip()


def shell(kube, ns: str, pod: str, script: str):
    return kubectl(kube, "-n", ns, "exec", pod, "--", "/bin/sh", "-c", script, check=False)


def answer(kube, ns: str, pod: str, script: str, timeout: float = 30.0) -> str:
    """What `script` prints in the Pod once it succeeds with some output."""
    done = eventually(lambda: (d := shell(kube, ns, pod, script)).returncode == 0 and d.stdout.strip() and d,
                      timeout=timeout, explain=lambda: str(shell(kube, ns, pod, script)))
    return done.stdout.strip()


def apply(kube, ns: str, body: dict) -> None:
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps(body))


def netexec_pod(name: str, *, labels: dict | None = None, args: list[str] | None = None,
                ports: list[dict] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": "agnhost", "image": AGNHOST,
                                     "args": ["netexec", *(args or ["--http-port=8080", "--udp-port=8081"])],
                                     "ports": ports or []}]}}


def ready_endpoints(kube, ns: str, service: str) -> int:
    slices = json.loads(kubectl(kube, "-n", ns, "get", "endpointslices", "-l", f"kubernetes.io/service-name={service}",
                                "-o", "json").stdout)["items"]
    return sum(1 for s in slices for e in s.get("endpoints") or () if (e.get("conditions") or {}).get("ready"))


def running(kube, ns: str, *names: str) -> None:
    for name in names:
        eventually(lambda n=name: status_of(kube, ns, n).get("phase") == "Running", timeout=60,
                   explain=lambda n=name: json.dumps(status_of(kube, ns, n)))


def test_a_pod_reaches_a_node_port_on_the_node_address(process_cluster, process_namespace) -> None:
    kube, ns = process_cluster, process_namespace
    for name in ("backend-a", "backend-b"):
        apply(kube, ns, netexec_pod(name, labels={"app": "backend"}))
    apply(kube, ns, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "backend"},
                     "spec": {"type": "NodePort", "selector": {"app": "backend"}, "sessionAffinity": "ClientIP",
                              "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080},
                                        {"name": "udp", "protocol": "UDP", "port": 81, "targetPort": 8081}]}})
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "client", "--", "pause")
    running(kube, ns, "backend-a", "backend-b", "client")
    address = node_address(kube)
    assert address.startswith("127."), address
    ports = json.loads(kubectl(kube, "-n", ns, "get", "service", "backend", "-o", "json").stdout)["spec"]["ports"]
    tcp, udp = (p["nodePort"] for p in ports)
    url = f"http://{address}:{tcp}"
    eventually(lambda: ready_endpoints(kube, ns, "backend") == 2, timeout=30)
    first = answer(kube, ns, "client", f"curl -s --connect-timeout 2 {url}/hostname")
    assert first in ("backend-a", "backend-b")
    script = f"for i in 1 2 3 4 5 6; do curl -s --connect-timeout 2 {url}/hostname; echo; done"
    assert answer(kube, ns, "client", script).split() == [first] * 6  # ClientIP affinity: the Pod's own address
    assert answer(kube, ns, "client", f"echo hostname | nc -u -w 2 {address} {udp}") in ("backend-a", "backend-b")
    own = shell(kube, ns, "client", "nc -z -w 2 127.0.0.1 8080")  # its own loopback is still its own
    assert own.returncode == 1, own


@pytest.mark.slow
def test_host_ports_on_localhost_and_the_node_address(process_cluster, process_namespace) -> None:
    kube, ns = process_cluster, process_namespace
    address = node_address(kube)
    port = 54323
    apply(kube, ns, netexec_pod("local", ports=[{"containerPort": 8080, "hostPort": port, "hostIP": "127.0.0.1"}]))
    apply(kube, ns, netexec_pod("tcp", ports=[{"containerPort": 8080, "hostPort": port, "hostIP": address}]))
    apply(kube, ns, netexec_pod("udp", args=["--http-port=8008", "--udp-port=8080"],
                                ports=[{"containerPort": 8080, "hostPort": port, "hostIP": address,
                                        "protocol": "UDP"}]))
    apply(kube, ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "host"},
                     "spec": {"hostNetwork": True, "containers": [{"name": "agnhost", "image": AGNHOST}]}})
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "client", "--", "pause")
    running(kube, ns, "local", "tcp", "udp", "host", "client")
    local = f"curl -s --connect-timeout 2 --interface {address} http://127.0.0.1:{port}/hostname"
    assert answer(kube, ns, "host", local) == "local"
    assert answer(kube, ns, "host", f"curl -s --connect-timeout 2 http://{address}:{port}/hostname") == "tcp"
    assert answer(kube, ns, "host", f"echo hostname | nc -u -w 2 {address} {port}") == "udp"
    assert answer(kube, ns, "client", f"curl -s --connect-timeout 2 http://{address}:{port}/hostname") == "tcp"
    assert answer(kube, ns, "client", f"echo hostname | nc -u -w 2 {address} {port}") == "udp"
    mine = shell(kube, ns, "client", f"curl -s --connect-timeout 2 http://127.0.0.1:{port}/hostname")
    assert mine.returncode != 0, mine  # 127.0.0.1 is the client's own: only the node's namespace has that port
    with urllib.request.urlopen(f"http://{address}:{port}/hostname", timeout=5) as reply:  # from the machine
        assert reply.read() == b"tcp"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.settimeout(5)
        udp.sendto(b"hostname", (address, port))
        assert udp.recv(100) == b"udp"
    kubectl(kube, "-n", ns, "delete", "pod", "tcp", "--grace-period=0", "--wait=true")
    eventually(lambda: shell(kube, ns, "host", f"curl -s --connect-timeout 2 http://{address}:{port}/").returncode == 7,
               timeout=30)  # curl's "could not connect": the port is closed with its Pod
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((address, port), timeout=5)
