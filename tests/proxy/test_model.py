"""What the proxy programs from a Service and its EndpointSlices: ports, endpoint conditions and upstream's
endpoint categories for the traffic policies; the balancer's round robin and affinity (no network)."""

from __future__ import annotations

from mini_kube.proxy.balancer import Balancer
from mini_kube.proxy.model import Endpoint, categorize, local_ready_count, service_ports, slice_endpoints


def svc(**spec) -> dict:
    base = {"type": "NodePort", "clusterIP": "10.0.0.20", "clusterIPs": ["10.0.0.20"],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP", "nodePort": 30080}]}
    return {"metadata": {"namespace": "ns", "name": "web"}, "spec": {**base, **spec}}


def slice_(*endpoints: dict, name: str = "http", port: int = 8080) -> dict:
    return {"addressType": "IPv4", "ports": [{"name": name, "port": port, "protocol": "TCP"}],
            "endpoints": list(endpoints)}


def ep(ip: str, node: str = "", **conditions) -> dict:
    found = {"addresses": [ip], "conditions": conditions}
    if node:
        found["nodeName"] = node
    return found


def test_ports_of_service_types():
    (port,) = service_ports(svc())
    assert (port.name, port.port, port.node_port, port.cluster_ips) == ("ns/web:http", 80, 30080, ("10.0.0.20",))
    assert service_ports(svc(type="ExternalName", externalName="x.example")) == []
    assert service_ports(svc(type="ClusterIP", clusterIP="None", clusterIPs=["None"])) == []  # headless
    (lb,) = service_ports(svc(type="LoadBalancer", externalTrafficPolicy="Local", healthCheckNodePort=31000,
                              sessionAffinity="ClientIP"))
    assert lb.external_local and lb.health_check_node_port == 31000 and lb.affinity_timeout == 10800
    (cluster,) = service_ports(svc(type="ClusterIP", externalTrafficPolicy="Local"))
    assert cluster.node_port == 0 and not cluster.external_local


def test_slice_endpoints_match_port_name_and_merge_duplicates():
    (port,) = service_ports(svc())
    slices = [slice_(ep("10.244.1.2"), ep("10.244.1.3", ready=False)),
              slice_(ep("10.244.1.3")),  # the same endpoint ready in another slice wins
              slice_(ep("10.244.1.9"), name="metrics")]
    assert slice_endpoints(slices, port) == [Endpoint("10.244.1.2", 8080), Endpoint("10.244.1.3", 8080)]


def test_terminating_fallback_and_local_policies():
    ready_remote = Endpoint("10.244.2.2", 80, node="b")
    term_local = Endpoint("10.244.1.2", 80, ready=False, serving=True, terminating=True, node="a")
    gone_local = Endpoint("10.244.1.3", 80, ready=False, serving=False, terminating=True, node="a")
    (port,) = service_ports(svc(externalTrafficPolicy="Local", type="LoadBalancer"))
    sets = categorize([ready_remote, term_local, gone_local], port, "a")
    assert sets.cluster == [ready_remote]  # ready ones only while any is ready
    assert sets.local == [term_local]  # no local ready one: the local serving-terminating one
    assert sets.external(port) == [term_local] and sets.internal(port) == [ready_remote]
    only_terminating = categorize([term_local, gone_local], port, "a")
    assert only_terminating.cluster == [term_local] and only_terminating.has_any
    (itp,) = service_ports(svc(type="ClusterIP", internalTrafficPolicy="Local"))
    sets = categorize([ready_remote], itp, "a")
    assert sets.internal(itp) == [] and sets.has_any  # endpoints exist, none here
    assert local_ready_count([[ready_remote, Endpoint("10.244.1.5", 80, node="a")]], "a") == 1


def test_balancer_round_robin_affinity_and_exclusion():
    a, b, c = (Endpoint(f"10.244.1.{i}", 80) for i in (1, 2, 3))
    now = [0.0]
    balancer = Balancer(clock=lambda: now[0])
    balancer.update([a, b, c], [a, b, c], 0)
    assert [balancer.pick("internal", "x") for _ in range(4)] == [a, b, c, a]
    assert balancer.pick("internal", "x", exclude=(b, c)) == a
    balancer.update([a, b, c], [a, b, c], 5)
    first = balancer.pick("external", "client")
    assert all(balancer.pick("external", "client") == first for _ in range(5))
    now[0] = 4.9
    assert balancer.pick("external", "client") == first  # renewed on use
    now[0] = 10.0
    assert balancer.pick("external", "client") != first  # expired
    balancer.update([c], [c], 5)
    assert balancer.pick("external", "client") == c  # the affine endpoint left the Service
