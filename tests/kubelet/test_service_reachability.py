"""Reaching Services and Pods the ways the conformance suite does, through real kubectl: `nc` in the images that
have it (agnhost's netcat-openbsd, busybox's applet), from inside a Pod to a Service's name and cluster IP over
TCP and UDP; and the API server's pods/ and services/proxy, which rewrite an HTML page's links to go through the
proxy again and reach TLS ports with an `https:` scheme prefix."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, status_of, tls_dns_cluster

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"
BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"
LINK = '<a href="/rewriteme">test</a>'


@pytest.fixture(scope="module")
def kube() -> Iterator:
    yield from tls_dns_cluster()


def running(kube, ns: str, name: str) -> None:
    eventually(lambda: status_of(kube, ns, name).get("phase") == "Running", timeout=60,
               explain=lambda: json.dumps(status_of(kube, ns, name)))


def shell(kube, ns: str, pod: str, script: str):
    """`kubectl exec POD -- /bin/sh -x -c SCRIPT`, as the suite's RunHostCmd runs it."""
    return kubectl(kube, "-n", ns, "exec", pod, "--", "/bin/sh", "-x", "-c", script, check=False)


@pytest.mark.slow
def test_nc_reaches_a_service_over_tcp_and_udp_from_agnhost_and_busybox(kube) -> None:
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "--labels=app=echo", "echo", "--",
            "netexec", "--http-port=80", "--udp-port=80")
    kubectl(kube, "-n", ns, "create", "service", "clusterip", "echo", "--tcp=80:80")
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "echo-udp"},
        "spec": {"selector": {"app": "echo"}, "ports": [{"protocol": "UDP", "port": 80, "targetPort": 80}]}}))
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "agnhost", "--", "pause")
    kubectl(kube, "-n", ns, "run", f"--image={BUSYBOX}", "busybox", "--", "sleep", "3600")
    for name in ("echo", "agnhost", "busybox"):
        running(kube, ns, name)
    cluster_ip = kubectl(kube, "-n", ns, "get", "service", "echo", "-o", "jsonpath={.spec.clusterIP}").stdout
    for client in ("agnhost", "busybox"):
        for target in ("echo", cluster_ip):
            done = eventually(lambda t=target, c=client: (d := shell(kube, ns, c, f"echo hostName | nc -v -t -w 2 {t} 80"))
                              .returncode == 0 and d, timeout=30,
                              explain=lambda t=target, c=client: str(shell(kube, ns, c, f"echo hostName | nc -v -t -w 2 {t} 80")))
            assert done.stdout.startswith("HTTP/1.1 400 Bad Request"), done  # netexec's answer to a bad request
            assert f"Connection to {target}" in done.stderr and "port [tcp/http] succeeded!" in done.stderr, done
        udp = eventually(lambda c=client: (d := shell(kube, ns, c, "echo hostName | nc -v -u -w 2 echo-udp 80"))
                         .stdout and d, timeout=30)
        assert udp.returncode == 0 and udp.stdout == "echo", udp  # netexec's UDP hostName answer
    refused = shell(kube, ns, "agnhost", f"nc -v -z -w 2 {cluster_ip} 81")
    assert refused.returncode == 1 and f"connect to {cluster_ip} port 81 (tcp) failed" in refused.stderr, refused
    scanned = shell(kube, ns, "busybox", "nc -z -w 2 echo 80")
    assert scanned.returncode == 0 and scanned.stdout == "", scanned


def test_pod_and_service_proxy_rewrite_links_and_reach_tls_ports(kube) -> None:
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "porter", "labels": {"app": "porter"}},
        "spec": {"containers": [{
            "name": "porter", "image": AGNHOST, "command": ["/agnhost", "porter"],
            "ports": [{"containerPort": 1080}, {"name": "tlsdest", "containerPort": 460}],
            "env": [{"name": "SERVE_PORT_1080", "value": LINK}, {"name": "SERVE_PORT_160", "value": "foo"},
                    {"name": "SERVE_TLS_PORT_443", "value": '<a href="/tlsrewriteme">test</a>'},
                    {"name": "SERVE_TLS_PORT_460", "value": "tls baz"}]}]}}))
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "porter"},
        "spec": {"selector": {"app": "porter"}, "ports": [
            {"name": "plain", "port": 80, "targetPort": 160},
            {"name": "tls", "port": 443, "targetPort": "tlsdest"}]}}))
    running(kube, ns, "porter")
    pods = f"/api/v1/namespaces/{ns}/pods"

    def get(path: str) -> str:
        done = kubectl(kube, "get", "--raw", path, check=False)
        return done.stdout if done.returncode == 0 else ""

    for name in ("porter", "porter:1080", "http:porter:1080"):
        assert eventually(lambda n=name: get(f"{pods}/{n}/proxy/"), timeout=30) == \
            f'<a href="{pods}/{name}/proxy/rewriteme">test</a>'
    assert get(f"{pods}/porter:160/proxy/") == "foo"  # not HTML: as the Pod wrote it
    assert get(f"{pods}/https:porter:443/proxy/") == f'<a href="{pods}/https:porter:443/proxy/tlsrewriteme">test</a>'
    assert get(f"{pods}/https:porter:460/proxy/") == "tls baz"
    services = f"/api/v1/namespaces/{ns}/services"
    assert eventually(lambda: get(f"{services}/https:porter:tls/proxy/"), timeout=30) == "tls baz"
    assert get(f"{services}/porter:plain/proxy/") == "foo"
    ip = status_of(kube, ns, "porter")["podIP"]
    closed = kubectl(kube, "get", "--raw", f"{pods}/porter:81/proxy/", check=False)
    assert closed.returncode == 1 and closed.stderr.strip() == "Error from server (ServiceUnavailable): error trying to " \
        f"reach service: dial tcp {ip}:81: connect: connection refused", closed.stderr
    bad = kubectl(kube, "get", "--raw", f"{pods}/ftp:porter:160/proxy/", check=False)
    assert bad.returncode == 1 and "(BadRequest)" in bad.stderr and "invalid pod request" in bad.stderr and \
        "ftp:porter:160" in bad.stderr, bad.stderr


def test_proxy_roots_take_every_method_and_redirect_a_bare_get(kube) -> None:
    """The official client's connect calls on pods/ and services/proxy with no path: DELETE, OPTIONS, PATCH, POST
    and PUT reach the Pod (porter --json-response says which method came); GET and HEAD of the bare root are 301
    to it with its slash."""
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config

    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "porter", "labels": {"app": "json"}},
        "spec": {"containers": [{"name": "porter", "image": AGNHOST, "command": ["/agnhost", "porter", "--json-response"],
                                 "env": [{"name": "SERVE_PORT_80", "value": "foo"}]}]}}))
    kubectl(kube, "-n", ns, "create", "service", "clusterip", "json", "--tcp=80:80")  # selects app=json
    running(kube, ns, "porter")
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(config_file=kube.kubeconfig, client_configuration=configuration)
    with k8s.ApiClient(configuration) as api:
        core = k8s.CoreV1Api(api)
        for method in ("delete", "options", "patch", "post", "put"):
            for call, name in ((f"connect_{method}_namespaced_pod_proxy", "porter"),
                               (f"connect_{method}_namespaced_service_proxy", "json")):
                answer = eventually(lambda c=call, n=name: _answer(getattr(core, c), n, ns), timeout=30)
                assert answer == {"Method": method.upper(), "Body": "foo"}, (call, answer)
        for method in ("GET", "HEAD"):
            for path in (f"/api/v1/namespaces/{ns}/pods/porter/proxy", f"/api/v1/namespaces/{ns}/services/json/proxy"):
                # the kubeconfig's credentials are the pool's client certificate
                answer = api.rest_client.pool_manager.request(method, configuration.host + path + "?a=b",
                                                             redirect=False)
                assert answer.status == 301 and answer.headers["Location"] == f"{path}/?a=b", (method, path)


def _answer(call, name: str, ns: str):  # noqa: ANN001, ANN202 - a client method; whatever the JSON holds
    """The JSON the Pod answered a connect call with (None while the call fails)."""
    from kubernetes.client.rest import ApiException

    try:
        return json.loads(call(name, ns, _preload_content=False).data)
    except (ApiException, ValueError):
        return None
