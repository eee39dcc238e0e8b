"""The cluster DNS, asked with dnspython over UDP and TCP on its host loopback listener; Services made with
real kubectl, Pods given IPs and readiness by a stand-in kubelet (status writes), EndpointSlices by the real
controller."""

from __future__ import annotations

import random
import subprocess
import sys

import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdatatype
import dns.reversename
import pytest
from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import PODS, SERVICES

from tests.helpers import eventually, kubectl, new_namespace

BLOCK = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}"


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="endpointslice", dns={"host_address": f"{BLOCK}.2", "port": 0, "discover": False},
                  ccm={"lb_pool": f"{BLOCK}.100-199", "health_interval": 0.1}) as kube:
        kube.run(kube.dns.ready.wait())
        yield kube


@pytest.fixture
def namespace(cluster):
    return new_namespace(cluster, "dns")


def ask(cluster, name: str, rdtype: str = "A", *, tcp: bool = False) -> dns.message.Message:
    query = dns.message.make_query(name, rdtype)
    send = dns.query.tcp if tcp else dns.query.udp
    return send(query, f"{BLOCK}.2", port=cluster.dns.host_port, timeout=2)


def addresses(response: dns.message.Message) -> set[str]:
    return {r.to_text() for rrset in response.answer for r in rrset
            if rrset.rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA)}


def pod(cluster, ns: str, name: str, ip: str, *, labels: dict, ready: bool = True, hostname: str = "",
        subdomain: str = "") -> None:
    spec: dict = {"containers": [{"name": "c", "image": "nginx"}]}
    if hostname:
        spec["hostname"] = hostname
    if subdomain:
        spec["subdomain"] = subdomain
    cluster.client.create(PODS, {"metadata": {"name": name, "labels": labels}, "spec": spec}, ns)
    status = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "conditions": [
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    cluster.client.patch(PODS, name, {"status": status}, ns, subresource="status")


def test_kube_dns_service(cluster):
    svc = cluster.client.get(SERVICES, "kube-dns", "kube-system")
    assert svc["spec"]["clusterIP"] == "10.0.0.10"
    assert [(p["name"], p["port"], p["protocol"]) for p in svc["spec"]["ports"]] == [
        ("dns", 53, "UDP"), ("dns-tcp", 53, "TCP"), ("metrics", 9153, "TCP")]
    out = kubectl(cluster, "-n", "kube-system", "get", "service", "kube-dns").stdout
    assert "10.0.0.10" in out and "53/UDP,53/TCP,9153/TCP" in out
    answer = ask(cluster, "kube-dns.kube-system.svc.cluster.local")
    assert addresses(answer) == {"10.0.0.10"}


def test_cluster_ip_service_a_srv_ptr_and_negative_answers(cluster, namespace):
    kubectl(cluster, "-n", namespace, "create", "service", "clusterip", "web", "--tcp=80:8080")
    ip = cluster.client.get(SERVICES, "web", namespace)["spec"]["clusterIP"]
    name = f"web.{namespace}.svc.cluster.local"
    answer = eventually(lambda: ask(cluster, name).answer and ask(cluster, name))
    assert answer.rcode() == dns.rcode.NOERROR and answer.flags & dns.flags.AA
    assert addresses(answer) == {ip} and answer.answer[0].ttl == 30
    assert addresses(ask(cluster, name.upper(), tcp=True)) == {ip}  # TCP, and names are case-insensitive

    srv = ask(cluster, f"_80-8080._tcp.{name}", "SRV")
    assert [r.to_text() for r in srv.answer[0]] == [f"0 100 80 {name}."]
    assert {r.to_text() for r in srv.additional[0]} == {ip}

    ptr = ask(cluster, dns.reversename.from_address(ip).to_text(), "PTR")
    assert [r.to_text() for r in ptr.answer[0]] == [f"{name}."]

    nodata = ask(cluster, name, "AAAA")
    assert nodata.rcode() == dns.rcode.NOERROR and not nodata.answer
    assert nodata.authority[0].rdtype == dns.rdatatype.SOA and nodata.authority[0].name.to_text() == "cluster.local."
    missing = ask(cluster, f"nothere.{namespace}.svc.cluster.local")
    assert missing.rcode() == dns.rcode.NXDOMAIN and missing.authority[0].rdtype == dns.rdatatype.SOA
    assert ask(cluster, f"_nope._tcp.{name}", "SRV").rcode() == dns.rcode.NXDOMAIN
    assert ask(cluster, f"{namespace}.svc.cluster.local").rcode() == dns.rcode.NOERROR
    assert ask(cluster, "no-such-namespace.svc.cluster.local").rcode() == dns.rcode.NXDOMAIN
    assert ask(cluster, "example.com").rcode() == dns.rcode.REFUSED
    txt = ask(cluster, "dns-version.cluster.local", "TXT")
    assert txt.answer[0][0].to_text() == '"1.1.0"'

    # deleted: gone from DNS at once
    kubectl(cluster, "-n", namespace, "delete", "service", "web")
    eventually(lambda: ask(cluster, name).rcode() == dns.rcode.NXDOMAIN, timeout=2)


def test_headless_service_pods_and_hostnames(cluster, namespace):
    cluster.client.create(SERVICES, {"metadata": {"name": "db"}, "spec": {
        "clusterIP": "None", "selector": {"app": "db"}, "ports": [{"name": "pg", "port": 5432}]}}, namespace)
    pod(cluster, namespace, "db-0", "10.244.1.5", labels={"app": "db"}, hostname="db-0", subdomain="db")
    pod(cluster, namespace, "db-1", "10.244.2.6", labels={"app": "db"})
    pod(cluster, namespace, "db-2", "10.244.3.7", labels={"app": "db"}, ready=False)
    name = f"db.{namespace}.svc.cluster.local"
    eventually(lambda: addresses(ask(cluster, name)) == {"10.244.1.5", "10.244.2.6"})
    assert addresses(ask(cluster, f"db-0.{name}")) == {"10.244.1.5"}
    assert addresses(ask(cluster, f"10-244-2-6.{name}")) == {"10.244.2.6"}
    assert ask(cluster, f"10-244-3-7.{name}").rcode() == dns.rcode.NXDOMAIN  # not ready
    srv = ask(cluster, f"_pg._tcp.{name}", "SRV")
    assert sorted(r.to_text() for r in srv.answer[0]) == [f"0 50 5432 10-244-2-6.{name}.", f"0 50 5432 db-0.{name}."]
    ptr = ask(cluster, dns.reversename.from_address("10.244.1.5").to_text(), "PTR")
    assert [r.to_text() for r in ptr.answer[0]] == [f"db-0.{name}."]
    # the Pod record, by address with dashes, in the Pod's own namespace only
    assert addresses(ask(cluster, f"10-244-3-7.{namespace}.pod.cluster.local")) == {"10.244.3.7"}
    assert ask(cluster, "10-244-3-7.default.pod.cluster.local").rcode() == dns.rcode.NXDOMAIN
    assert ask(cluster, f"10-9-9-9.{namespace}.pod.cluster.local").rcode() == dns.rcode.NXDOMAIN
    # a Pod becoming ready joins the answer
    cluster.client.patch(PODS, "db-2", {"status": {"conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:01Z"}]}}, namespace,
        subresource="status")
    eventually(lambda: addresses(ask(cluster, name)) == {"10.244.1.5", "10.244.2.6", "10.244.3.7"})


def test_large_answers_are_truncated_over_udp_and_whole_over_tcp(cluster, namespace):
    cluster.client.create(SERVICES, {"metadata": {"name": "many"}, "spec": {
        "clusterIP": "None", "selector": {"app": "many"}, "ports": [{"port": 80}]}}, namespace)
    for i in range(40):
        pod(cluster, namespace, f"m-{i}", f"10.244.50.{i + 1}", labels={"app": "many"})
    name = f"many.{namespace}.svc.cluster.local"
    eventually(lambda: len(addresses(ask(cluster, name, tcp=True))) == 40)
    udp = dns.query.udp(dns.message.make_query(name, "A"), f"{BLOCK}.2", port=cluster.dns.host_port, timeout=2,
                        ignore_trailing=True)
    assert udp.flags & dns.flags.TC and not udp.answer


def test_external_name_is_a_cname(cluster, namespace):
    kubectl(cluster, "-n", namespace, "create", "service", "externalname", "ext", "--external-name=db.example.com")
    answer = eventually(lambda: ask(cluster, f"ext.{namespace}.svc.cluster.local").answer and
                        ask(cluster, f"ext.{namespace}.svc.cluster.local"))
    assert answer.answer[0].rdtype == dns.rdatatype.CNAME and answer.answer[0][0].to_text() == "db.example.com."


def test_load_balancer_name_resolves_and_answers(cluster, namespace):
    """The seed's journey from the outside: a DNS lookup of the load balancer's name, then a connection."""
    import asyncio
    import socket

    kubectl(cluster, "-n", namespace, "create", "deployment", "web", "--image=traefik/whoami")
    kubectl(cluster, "-n", namespace, "expose", "deployment", "web", "--port=8080", "--type=LoadBalancer")
    svc = cluster.client.get(SERVICES, "web", namespace)
    node_port = svc["spec"]["ports"][0]["nodePort"]
    kubectl(cluster, "create", "-f", "-", input=(
        '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-' + namespace + '"}}'))
    cluster.client.patch(ResourceRef("", "v1", "nodes", namespaced=False), f"n-{namespace}", {"status": {
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z",
                        "lastHeartbeatTime": "2024-01-01T00:00:00Z"}],
        "addresses": [{"type": "InternalIP", "address": f"{BLOCK}.10"}]}}, subresource="status")

    async def node_server():
        async def answer(reader, writer):
            writer.write(b"hello from the node port")
            await writer.drain()
            writer.close()
        return await asyncio.start_server(answer, f"{BLOCK}.10", node_port)
    server = cluster.run(node_server())
    try:
        hostname = f"web.{namespace}.lb.mini-kube.local"
        ips = eventually(lambda: addresses(ask(cluster, hostname)))
        svc_ip = cluster.client.get(SERVICES, "web", namespace)["status"]["loadBalancer"]["ingress"][0]["ip"]
        assert ips == {svc_ip}

        def fetch():
            try:
                with socket.create_connection((svc_ip, 8080), timeout=2) as sock:
                    return sock.recv(100)
            except OSError:
                return b""
        assert eventually(fetch) == b"hello from the node port"
        assert ask(cluster, f"other.{namespace}.lb.mini-kube.local").rcode() == dns.rcode.NXDOMAIN
    finally:
        cluster.run(_close(server))


async def _close(server) -> None:
    server.close()


def test_metrics_count_answers(cluster):
    import urllib.request

    ask(cluster, "missing.default.svc.cluster.local")
    port = cluster.dns._metrics[0].sockets[0].getsockname()[1]
    text = urllib.request.urlopen(f"http://{BLOCK}.2:{port}/metrics", timeout=5).read().decode()
    assert 'coredns_dns_responses_total{server="dns://:53",rcode="NXDOMAIN"}' in text


def test_dns_as_its_own_process():
    from mini_kube.testing import MiniKube

    block = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}"
    with MiniKube(controllers=False) as kube:
        proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "dns", "--kubeconfig",
                                 kube.kubeconfig, "--address", f"{block}.2", "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            assert line.startswith(f"mini-kube cluster DNS on {block}.2:"), line + proc.stderr.read()
            port = int(line.split(":")[1].split()[0])
            answer = dns.query.tcp(dns.message.make_query("kube-dns.kube-system.svc.cluster.local", "A"),
                                   f"{block}.2", port=port, timeout=2)
            assert addresses(answer) == {"10.0.0.10"}
        finally:
            proc.terminate()
            proc.wait(10)



def test_dns_inside_the_cluster_network():
    """Where Pods ask: the kube-dns ClusterIP, port 53, inside the cluster network namespace (found through
    the ConfigMap kube-system/mini-kube-network, as `mini-kube serve` sets it up)."""
    import asyncio
    import socket

    from mini_kube.network.cluster import ClusterNetwork
    from mini_kube.network.namespaces import can_make_namespaces, socket_in

    from mini_kube.cli import start_dns
    from mini_kube.testing import MiniKube

    possible, why = can_make_namespaces()
    if not possible:
        pytest.skip(f"network namespaces cannot be made here: {why}")
    with MiniKube(controllers=False) as kube:
        network = kube.run(ClusterNetwork.ensure(kube.client.async_client, service_cidr="10.0.0.0/24"))
        try:
            server = kube.run(start_dns(kube.server, port=0))
            kube.run(asyncio.wait_for(server.ready.wait(), 10))
            assert server.netns_listening and server.host_address == f"{network.loopback_block}.2"
            query = dns.message.make_query("kube-dns.kube-system.svc.cluster.local", "A")
            with socket_in(network.netns, socket.AF_INET, socket.SOCK_DGRAM) as sock:
                assert addresses(dns.query.udp(query, "10.0.0.10", timeout=2, sock=sock)) == {"10.0.0.10"}
            with socket_in(network.netns, socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.settimeout(2)
                sock.connect(("10.0.0.10", 53))
                assert addresses(dns.query.tcp(query, "10.0.0.10", timeout=2, sock=sock)) == {"10.0.0.10"}
            # and the host listener on the cluster's loopback block
            answer = dns.query.udp(query, server.host_address, port=server.host_port, timeout=2)
            assert addresses(answer) == {"10.0.0.10"}
            # nothing of it was added to the host's own namespace
            host_addresses = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
            assert "10.0.0.10" not in host_addresses and "10.244.0.1" not in host_addresses
        finally:
            network.close()


def test_a_non_utf8_label_is_nxdomain(cluster):
    """CoreDNS answers NXDOMAIN for a name no object can have; on main the query got no answer at all."""
    name = dns.name.Name([b"\xff\xfe", b"default", b"svc", b"cluster", b"local", b""])
    response = dns.query.udp(dns.message.make_query(name, "A"), f"{BLOCK}.2", port=cluster.dns.host_port,
                             timeout=2)
    assert response.rcode() == dns.rcode.NXDOMAIN and not response.answer


def test_the_answer_cache_is_bounded_in_bytes_and_keeps_no_formerr(cluster, monkeypatch):
    """Distinct queries fill the cache only up to CACHE_BYTES (on main: 10,000 answers of any size, 9,000
    65 KB queries cost 336 MiB), and malformed queries (FORMERR) are not kept at all."""
    import socket

    from mini_kube.clusterdns import server as dns_server

    handler = cluster.dns.server.handler
    monkeypatch.setattr(dns_server, "CACHE_BYTES", 30_000)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(2)
    try:
        for index in range(60):  # malformed: a header that promises a question, then junk
            sock.sendto(index.to_bytes(2, "big") + b"\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + b"\xc0" * (
                index + 20), (f"{BLOCK}.2", cluster.dns.host_port))
            assert sock.recv(512)[3] & 0xF == dns.rcode.FORMERR
        for index in range(120):  # ~230-byte questions, each new
            long = "x" * 60
            response = ask(cluster, f"q{index}.{long}.{long}.{long}.default.svc.cluster.local")
            assert response.rcode() == dns.rcode.NXDOMAIN
            entries, size = handler.cached
            assert size <= 30_000, (entries, size)
        assert 0 < entries < 120
        assert ask(cluster, "kube-dns.kube-system.svc.cluster.local").answer  # still answering
    finally:
        sock.close()
