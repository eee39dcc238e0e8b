"""A Service's load-balancer status, as upstream's ValidateServiceStatusUpdate and service strategy keep it:
ingress points only on a LoadBalancer Service (through `/status`), ipMode defaulted to VIP and checked, and
cleared when the Service stops being a LoadBalancer."""

from __future__ import annotations

import json

from tests.helpers import kubectl

FORBIDDEN = ("status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'")


def _status_patch(kube, name: str, ingress: list[dict], check: bool = True):
    patch = json.dumps({"status": {"loadBalancer": {"ingress": ingress}}})
    return kubectl(kube, "patch", "service", name, "--subresource=status", "--type=merge", "-p", patch,
                   "-o", "json", check=check)


def _load_balancer(kube, name: str) -> dict:
    svc = json.loads(kubectl(kube, "get", "service", name, "-o", "json").stdout)
    return svc["status"]["loadBalancer"]


def test_a_load_balancer_status_needs_a_load_balancer_service(mini_kube):
    kubectl(mini_kube, "create", "service", "clusterip", "plain", "--tcp=80")
    refused = _status_patch(mini_kube, "plain", [{"ip": "203.0.113.7"}], check=False)
    assert refused.returncode == 1
    assert 'The Service "plain" is invalid: ' + FORBIDDEN in refused.stderr
    assert _load_balancer(mini_kube, "plain") == {}
    # a spec update is not checked against it (upstream validates the status only through /status)
    kubectl(mini_kube, "label", "service", "plain", "tier=web")


def test_a_load_balancer_services_ingress_is_defaulted_checked_and_dropped_with_the_type(mini_kube):
    kubectl(mini_kube, "create", "service", "loadbalancer", "edge", "--tcp=80")
    written = json.loads(_status_patch(mini_kube, "edge", [{"ip": "203.0.113.7"}]).stdout)
    assert written["status"]["loadBalancer"] == {"ingress": [{"ip": "203.0.113.7", "ipMode": "VIP"}]}
    bad = _status_patch(mini_kube, "edge", [{"ip": "not-an-ip", "ipMode": "Proxy"}, {"hostname": "1.2.3.4"},
                                            {"hostname": "lb.example.com", "ipMode": "VIP"}], check=False)
    assert bad.returncode == 1
    for line in ('status.loadBalancer.ingress[0].ip: Invalid value: "not-an-ip": must be a valid IP address, '
                 "(e.g. 10.9.8.7 or 2001:db8::ffff)",
                 'status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an '
                 "IP address",
                 "status.loadBalancer.ingress[2].ipMode: Forbidden: may not be specified when `ip` is not set"):
        assert line in bad.stderr
    kubectl(mini_kube, "patch", "service", "edge", "--type=merge", "-p", '{"spec":{"type":"ClusterIP"}}')
    assert _load_balancer(mini_kube, "edge") == {}
