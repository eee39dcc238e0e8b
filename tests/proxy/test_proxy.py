"""The userspace kube-proxy end to end: Services and EndpointSlices written through the API (selectorless
Services whose endpoints are TCP/UDP servers this test runs on loopback addresses), traffic sent through the
node's NodePorts with real sockets: round robin, session affinity, refusal without endpoints, endpoint
removal with a connection in flight, half-close, UDP, traffic policies and the health-check node port, and
Services made with real kubectl."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from mini_kube.client import ApiClient, Connection
from mini_kube.machinery.refs import ENDPOINTSLICES, NODES, SECRETS, SERVICES
from mini_kube.proxy.server import ProxyServer

from tests.helpers import kubectl, new_namespace
from tests.proxy.support import (
    ClusterNetns,
    TcpBackend,
    UdpBackend,
    ask_name,
    endpoint,
    eventually,
    loopback_block,
    netns_skip_reason,
    refused,
    service_body,
    slice_body,
)

NODE = "node-a"


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="endpointslice") as kube:
        yield kube


@pytest.fixture(scope="module")
def block():
    return loopback_block()


@pytest.fixture(scope="module")
def netns():
    reason = netns_skip_reason()
    if reason:
        pytest.skip(reason)
    made = ClusterNetns()
    yield made
    made.close()


@pytest.fixture(scope="module")
def proxy(cluster, block, netns):
    client = ApiClient(Connection.from_kubeconfig(cluster.kubeconfig))
    server = ProxyServer(client, NODE, f"{block}.10", netns.path,
                         healthz_port=10256)
    cluster.run(server.start())
    yield server
    cluster.run(server.stop())
    cluster.run(client.close())


@pytest.fixture
def ns(cluster):
    return new_namespace(cluster, "p")


def node_port(cluster, ns: str, name: str) -> int:
    return cluster.client.get(SERVICES, name, ns)["spec"]["ports"][0]["nodePort"]


def publish(cluster, ns: str, service: str, endpoints: list[dict], port: int, protocol: str = "TCP",
            name: str | None = None) -> None:
    name = name or f"{service}-manual"
    body = slice_body(service, name, endpoints, port, protocol)
    try:
        current = cluster.client.get(ENDPOINTSLICES, name, ns)
    except Exception:
        cluster.client.create(ENDPOINTSLICES, body, ns)
        return
    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    cluster.client.replace(ENDPOINTSLICES, body, ns)


@pytest.fixture
def fleet(netns):
    """Backends on one port across several pod addresses in the cluster netns: fleet(count) -> [backend...]."""
    made: list = []

    def make(count: int, kind=TcpBackend, first: int = 21):
        sock_type = socket.SOCK_STREAM if kind is TcpBackend else socket.SOCK_DGRAM
        found = [kind("b0", f"10.244.1.{first}", 0, netns.socket(sock_type))]
        port = found[0].address[1]
        found += [kind(f"b{i}", f"10.244.1.{first + i}", port, netns.socket(sock_type)) for i in range(1, count)]
        made.extend(found)
        return found

    yield make
    for backend in made:
        backend.close()


def serve(cluster, ns: str, name: str, backends: list, *, protocol: str = "TCP", node: str | None = None,
          **spec) -> int:
    """A NodePort Service over `backends` (all on one port); returns its node port once it answers."""
    cluster.client.create(SERVICES, service_body(name, protocol=protocol, **spec), ns)
    if backends:
        publish(cluster, ns, name, [endpoint(b.address[0], node=node) for b in backends], backends[0].address[1],
                protocol)
    return node_port(cluster, ns, name)


def wait_listening(proxy, port: int, protocol: str = "TCP", present: bool = True) -> None:
    eventually(lambda: any(k[2] == port and k[3] == protocol for k in proxy.listeners()) == present)


def test_round_robin_over_three_backends(cluster, proxy, ns, fleet):
    backends = fleet(3)
    port = serve(cluster, ns, "rr", backends)
    wait_listening(proxy, port)
    names = [ask_name((proxy.node_ip, port)) for _ in range(9)]
    assert sorted(set(names)) == ["b0", "b1", "b2"]
    assert all(names.count(n) == 3 for n in ("b0", "b1", "b2")), names  # strictly in turn
    record = proxy.records[-1]
    assert record["service"] == f"{ns}/rr" and record["via"] == "NodePort" and record["endpoint"]


def test_session_affinity_client_ip_and_timeout(cluster, proxy, ns, fleet):
    backends = fleet(3)
    port = serve(cluster, ns, "sticky", backends, sessionAffinity="ClientIP",
                 sessionAffinityConfig={"clientIP": {"timeoutSeconds": 1}})
    wait_listening(proxy, port)
    names = {ask_name((proxy.node_ip, port)) for _ in range(6)}
    assert len(names) == 1, names
    first = names.pop()
    time.sleep(1.2)  # the record expires: round robin picks the next endpoint
    assert ask_name((proxy.node_ip, port)) != first


def test_no_endpoints_refused_at_once(cluster, proxy, ns, fleet):
    backends = fleet(1)
    port = serve(cluster, ns, "empty", backends)
    wait_listening(proxy, port)
    assert ask_name((proxy.node_ip, port)) == "b0"
    publish(cluster, ns, "empty", [], backends[0].address[1])
    wait_listening(proxy, port, present=False)
    # refused, or reset when it reached the listener's queue as the listener closed: at once, not a timeout
    with pytest.raises((ConnectionRefusedError, ConnectionResetError)):
        socket.create_connection((proxy.node_ip, port), timeout=2)
    publish(cluster, ns, "empty", [endpoint(backends[0].address[0])], backends[0].address[1])
    eventually(lambda: not refused((proxy.node_ip, port)))


def test_endpoint_removed_keeps_connection_in_flight(cluster, proxy, ns, fleet):
    backends = fleet(2)
    port = serve(cluster, ns, "inflight", backends)
    wait_listening(proxy, port)
    conn = socket.create_connection((proxy.node_ip, port), timeout=5)
    conn.sendall(b"hold\n")
    reader = conn.makefile("rb")
    held = reader.readline().decode().split()[1]
    other = next(b for b in backends if b.name != held)
    publish(cluster, ns, "inflight", [endpoint(other.address[0])], other.address[1])
    eventually(lambda: {ask_name((proxy.node_ip, port)) for _ in range(2)} == {other.name})
    conn.sendall(b"still there\n")  # the removed endpoint's connection still works
    assert reader.readline() == b"still there\n"
    conn.close()


def test_half_close_and_large_transfer(cluster, proxy, ns, fleet):
    backends = fleet(1)
    port = serve(cluster, ns, "half", backends)
    wait_listening(proxy, port)
    payload = bytes(range(256)) * 16384  # 4 MiB: more than the proxy buffers, so backpressure is exercised
    conn = socket.create_connection((proxy.node_ip, port), timeout=10)
    received = bytearray()

    def read() -> None:
        while chunk := conn.recv(1 << 20):
            received.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    conn.sendall(b"echo\n" + payload)
    conn.shutdown(socket.SHUT_WR)  # the backend sees EOF, still answers, then closes
    reader.join(20)
    assert bytes(received) == payload + f"done {len(payload)}\n".encode()
    conn.close()


def test_backpressure_bounds_what_the_proxy_holds(cluster, proxy, ns, fleet):
    backends = fleet(1)
    port = serve(cluster, ns, "slow", backends)
    wait_listening(proxy, port)
    conn = socket.create_connection((proxy.node_ip, port), timeout=10)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    conn.sendall(b"flood 268435456\n")  # 256 MiB to a client that does not read
    time.sleep(0.5)
    held = backends[0].flooded
    time.sleep(0.3)
    assert backends[0].flooded == held  # the backend is blocked: nothing moves while the client does not read
    assert held < 48 << 20, held  # socket buffers and one pipe, not the whole transfer
    got = 0
    while got < 4 << 20:  # reading again lets the transfer go on
        got += len(conn.recv(1 << 20))
    eventually(lambda: backends[0].flooded > held)
    conn.close()


def test_udp_round_robin_and_endpoint_removal(cluster, proxy, ns, fleet):
    backends = fleet(2, kind=UdpBackend)
    port = serve(cluster, ns, "dns", backends, protocol="UDP")
    wait_listening(proxy, port, "UDP")
    answers = set()
    for i in range(4):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            client.settimeout(2)
            client.sendto(f"q{i}".encode(), (proxy.node_ip, port))
            answers.add(client.recv(100).decode().split(":")[0])
    assert answers == {"b0", "b1"}
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.settimeout(2)
    client.connect((proxy.node_ip, port))
    client.send(b"x")
    name = client.recv(100).decode().split(":")[0]
    other = next(b for b in backends if b.name != name)
    publish(cluster, ns, "dns", [endpoint(other.address[0])], other.address[1], "UDP")
    client.settimeout(0.3)  # a reply in flight when the old session ends is lost, as UDP may lose it

    def moved() -> bool:
        client.send(b"y")
        try:
            return client.recv(100).decode().startswith(other.name)
        except TimeoutError:
            return False
    eventually(moved)  # the session to the removed endpoint ended: the same client goes to the other one
    client.close()


def test_terminating_endpoints_only_when_nothing_else(cluster, proxy, ns, fleet):
    backends = fleet(2)
    port = serve(cluster, ns, "term", [])
    ready, leaving = backends
    publish(cluster, ns, "term", [endpoint(ready.address[0]),
                                  endpoint(leaving.address[0], ready=False, serving=True, terminating=True)],
            ready.address[1])
    wait_listening(proxy, port)
    assert {ask_name((proxy.node_ip, port)) for _ in range(4)} == {"b0"}
    publish(cluster, ns, "term", [endpoint(ready.address[0], ready=False, serving=False),
                                  endpoint(leaving.address[0], ready=False, serving=True, terminating=True)],
            ready.address[1])
    eventually(lambda: {ask_name((proxy.node_ip, port)) for _ in range(2)} == {"b1"})


def test_external_traffic_policy_local_and_health_check(cluster, proxy, ns, fleet):
    backends = fleet(2)
    here, elsewhere = backends
    cluster.client.create(SERVICES, service_body("local", kind="LoadBalancer", externalTrafficPolicy="Local"), ns)
    publish(cluster, ns, "local", [endpoint(here.address[0], node=NODE), endpoint(elsewhere.address[0], node="b")],
            here.address[1])
    service = cluster.client.get(SERVICES, "local", ns)
    port, health = service["spec"]["ports"][0]["nodePort"], service["spec"]["healthCheckNodePort"]
    wait_listening(proxy, port)
    assert {ask_name((proxy.node_ip, port)) for _ in range(4)} == {"b0"}  # only this node's endpoint

    def check() -> tuple[int, dict, str]:
        try:
            with urllib.request.urlopen(f"http://{proxy.node_ip}:{health}/", timeout=2) as answer:
                return answer.status, json.loads(answer.read()), answer.headers["X-Load-Balancing-Endpoint-Weight"]
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read()), error.headers["X-Load-Balancing-Endpoint-Weight"]

    status, body, weight = eventually(check)
    assert (status, weight) == (200, "1")
    assert body == {"service": {"namespace": ns, "name": "local"}, "localEndpoints": 1, "serviceProxyHealthy": True}
    publish(cluster, ns, "local", [endpoint(elsewhere.address[0], node="b")], here.address[1])
    eventually(lambda: check()[0] == 503)
    assert check()[1]["localEndpoints"] == 0
    assert refused((proxy.node_ip, port))  # endpoints elsewhere only: this node refuses
    with urllib.request.urlopen(f"http://{proxy.node_ip}:10256/healthz", timeout=2) as answer:
        assert answer.status == 200 and json.loads(answer.read())["nodeEligible"] is True
    # the connection records: to an unauthenticated client the port serves health only (as upstream's 10256)
    url = f"http://{proxy.node_ip}:10256/connections"
    for headers in ({}, {"Authorization": "Bearer guess"}):
        with pytest.raises(urllib.error.HTTPError) as refused_records:
            urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=2)
        assert refused_records.value.code == 404 and refused_records.value.read() == b"404 page not found\n"
    token = base64.b64decode(cluster.client.get(SECRETS, "mini-kube-kubelet-api", "kube-system")["data"]["token"])
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token.decode()}"})
    with urllib.request.urlopen(request, timeout=2) as answer:
        last = [r for r in json.loads(answer.read()) if r["service"] == f"{ns}/local"][-1]
        assert last["via"] == "NodePort" and last["endpoint"] == f"{here.address[0]}:{here.address[1]}"


def test_deleted_service_closes_listeners(cluster, proxy, ns, fleet):
    backends = fleet(1)
    port = serve(cluster, ns, "gone", backends)
    wait_listening(proxy, port)
    cluster.client.delete(SERVICES, "gone", ns)
    wait_listening(proxy, port, present=False)
    assert refused((proxy.node_ip, port))


def test_kubectl_create_service_nodeport(cluster, proxy, ns, fleet):
    backends = fleet(2)
    target = backends[0].address[1]
    kubectl(cluster, "create", "service", "nodeport", "web", f"--tcp=8080:{target}", "-n", ns)
    port = node_port(cluster, ns, "web")
    publish(cluster, ns, "web", [endpoint(b.address[0]) for b in backends], target, name="web-pods")
    # the slice's port name must match the Service port's name kubectl gave it
    port_name = cluster.client.get(SERVICES, "web", ns)["spec"]["ports"][0].get("name", "")
    body = cluster.client.get(ENDPOINTSLICES, "web-pods", ns)
    body["ports"][0]["name"] = port_name
    cluster.client.replace(ENDPOINTSLICES, body, ns)
    wait_listening(proxy, port)
    assert {ask_name((proxy.node_ip, port)) for _ in range(4)} == {"b0", "b1"}
    kubectl(cluster, "delete", "service", "web", "-n", ns)
    wait_listening(proxy, port, present=False)


def test_kubectl_expose_deployment_nodeport(cluster, proxy, ns, fleet):
    backends = fleet(3, first=31)
    target = backends[0].address[1]
    kubectl(cluster, "create", "deployment", "api", "--image=nginx", "-n", ns)
    kubectl(cluster, "expose", "deployment", "api", "--type=NodePort", "--port=80", f"--target-port={target}",
            "-n", ns)
    port = node_port(cluster, ns, "api")
    publish(cluster, ns, "api", [endpoint(b.address[0]) for b in backends], target, name="api-pods")
    wait_listening(proxy, port)
    assert sorted(ask_name((proxy.node_ip, port)) for _ in range(6)) == ["b0", "b0", "b1", "b1", "b2", "b2"]


def test_cluster_ip_inside_the_cluster_netns(cluster, proxy, netns, ns, fleet):
    backends = fleet(2)
    cluster.client.create(SERVICES, service_body("inner", 8080, kind="ClusterIP"), ns)
    publish(cluster, ns, "inner", [endpoint(b.address[0]) for b in backends], backends[0].address[1])
    ip = cluster.client.get(SERVICES, "inner", ns)["spec"]["clusterIP"]
    eventually(lambda: ("internal", ip, 8080, "TCP") in proxy.listeners())
    names = [ask_name((ip, 8080), sock=netns.socket()) for _ in range(4)]
    assert sorted(names) == ["b0", "b0", "b1", "b1"]
    assert proxy.records[-1]["via"] == "ClusterIP"
    with pytest.raises(ConnectionRefusedError):  # nothing listens on the host for a ClusterIP
        socket.create_connection((proxy.node_ip, 8080), timeout=1)


def test_node_port_on_the_node_address_inside_the_cluster_netns(cluster, proxy, netns, ns, fleet):
    """Pods route the nodes' loopback addresses to the cluster network: the NodePort answers there on the node's
    address too, with the same balancer (ClientIP affinity sticks), and goes with its Service."""
    backends = fleet(2)
    port = serve(cluster, ns, "inward", backends, sessionAffinity="ClientIP")
    eventually(lambda: ("external-in-cluster", proxy.node_ip, port, "TCP") in proxy.listeners())
    names = {ask_name((proxy.node_ip, port), sock=netns.socket()) for _ in range(4)}
    assert len(names) == 1, names
    assert proxy.records[-1]["via"] == "NodePort"
    cluster.client.delete(SERVICES, "inward", ns)
    eventually(lambda: ("external-in-cluster", proxy.node_ip, port, "TCP") not in proxy.listeners())
    with pytest.raises(ConnectionRefusedError):
        ask_name((proxy.node_ip, port), sock=netns.socket())


def test_internal_traffic_policy_local(cluster, proxy, netns, ns, fleet):
    """ClusterIP traffic goes to endpoints on the client's node, which its address tells (the Node's pod
    CIDR): all nodes' pods share the cluster network, so any node's proxy may accept the connection."""
    here, elsewhere = fleet(2)
    if not any(n["metadata"]["name"] == "node-b" for n in cluster.client.list(NODES)["items"]):
        cluster.client.create(NODES, {"metadata": {"name": "node-b"}, "spec": {"podCIDR": "10.244.2.0/24",
                                                                               "podCIDRs": ["10.244.2.0/24"]}})
    cluster.client.create(SERVICES, service_body("itp", 8081, kind="NodePort", internalTrafficPolicy="Local"), ns)
    publish(cluster, ns, "itp", [endpoint(here.address[0], node=NODE), endpoint(elsewhere.address[0], node="node-b")],
            here.address[1])
    service = cluster.client.get(SERVICES, "itp", ns)
    ip, node_port_number = service["spec"]["clusterIP"], service["spec"]["ports"][0]["nodePort"]
    eventually(lambda: ("internal", ip, 8081, "TCP") in proxy.listeners())
    wait_listening(proxy, node_port_number)

    def from_node_b() -> socket.socket:
        sock = netns.socket()
        sock.bind(("10.244.2.5", 0))  # a pod address of node-b
        return sock

    assert {ask_name((ip, 8081), sock=netns.socket()) for _ in range(4)} == {"b0"}  # this node's endpoint
    assert {ask_name((ip, 8081), sock=from_node_b()) for _ in range(4)} == {"b1"}  # node-b's endpoint
    assert {ask_name((proxy.node_ip, node_port_number)) for _ in range(4)} == {"b0", "b1"}  # external: cluster
    publish(cluster, ns, "itp", [endpoint(elsewhere.address[0], node="node-b")], here.address[1])
    eventually(lambda: refused((ip, 8081), sock=netns.socket()))  # no endpoint on this node: reset at once
    assert ask_name((ip, 8081), sock=from_node_b()) == "b1"


def test_udp_cluster_ip(cluster, proxy, netns, ns, fleet):
    backends = fleet(1, kind=UdpBackend)
    cluster.client.create(SERVICES, service_body("dns", 53, kind="ClusterIP", protocol="UDP"), ns)
    publish(cluster, ns, "dns", [endpoint(backends[0].address[0])], backends[0].address[1], "UDP")
    ip = cluster.client.get(SERVICES, "dns", ns)["spec"]["clusterIP"]
    eventually(lambda: ("internal", ip, 53, "UDP") in proxy.listeners())
    with netns.socket(socket.SOCK_DGRAM) as client:
        client.settimeout(2)
        client.sendto(b"query", (ip, 53))
        assert client.recv(100) == b"b0:query"


def test_mini_kube_proxy_command(cluster, netns, ns, fleet, block):
    """`mini-kube proxy --node N --kubeconfig F` as its own process: the Node's InternalIP, a NodePort."""
    import subprocess
    import sys

    address = f"{block}.11"
    cluster.client.create(NODES, {"metadata": {"name": "node-cli"}})
    cluster.client.patch(NODES, "node-cli", {"status": {"addresses": [{"type": "InternalIP", "address": address}]}},
                         subresource="status")
    backends = fleet(1, first=41)
    port = serve(cluster, ns, "cli", backends)
    command = [sys.executable, "-m", "mini_kube.cli", "proxy", "--node", "node-cli", "--kubeconfig",
               cluster.kubeconfig, "--netns", netns.path, "--healthz-port", "0"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert "ready" in proc.stdout.readline()
        assert ask_name((address, port)) == "b0"
    finally:
        proc.terminate()
        proc.wait(10)
    assert proc.returncode == 0


def test_proxies_of_several_nodes_share_the_cluster_network(cluster, ns, block):
    """One proxy per node, all in one cluster network: a ClusterIP is served by the one that bound it first, the
    others serve their own NodePorts and take the ClusterIP over when its proxy stops."""
    shared = ClusterNetns()
    client = ApiClient(Connection.from_kubeconfig(cluster.kubeconfig))
    first = ProxyServer(client, "n1", f"{block}.31", shared.path, healthz_port=0)
    second = ProxyServer(client, "n2", f"{block}.32", shared.path, healthz_port=0)
    backend = TcpBackend("only", "10.244.1.50", 0, shared.socket())
    try:
        cluster.run(first.start())
        cluster.run(second.start())
        port = serve(cluster, ns, "shared", [backend])
        ip = cluster.client.get(SERVICES, "shared", ns)["spec"]["clusterIP"]
        key = ("internal", ip, 80, "TCP")
        eventually(lambda: (key in first.listeners()) != (key in second.listeners()))
        owner, other = (first, second) if key in first.listeners() else (second, first)
        assert ask_name((ip, 80), sock=shared.socket()) == "only"
        assert ask_name((owner.node_ip, port)) == ask_name((other.node_ip, port)) == "only"
        cluster.run(owner.stop())
        eventually(lambda: key in other.listeners(), timeout=5)
        assert ask_name((ip, 80), sock=shared.socket()) == "only"
    finally:
        for proxy in (first, second):
            cluster.run(proxy.stop())
        cluster.run(client.close())
        backend.close()
        shared.close()


def test_kubernetes_service_reaches_the_api_server(cluster, proxy, netns):
    """From the cluster network, the `kubernetes` Service's ClusterIP reaches the API server (on loopback, so
    no EndpointSlice can name it: the proxy forwards to the server it talks to itself)."""
    ip = cluster.client.get(SERVICES, "kubernetes", "default")["spec"]["clusterIP"]
    eventually(lambda: ("internal", ip, 443, "TCP") in proxy.listeners())
    with netns.socket() as sock:
        sock.settimeout(5)
        sock.connect((ip, 443))
        sock.sendall(b"GET /version HTTP/1.0\r\nHost: kubernetes\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.") and b"gitVersion" in answer
