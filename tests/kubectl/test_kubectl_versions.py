"""Every kubectl on the machine (1.27 ... 1.33) through get, apply, explain, diff, scale, edit, wait and
server-side apply; old clients through OpenAPI v2 and through legacy (per group-version) discovery."""

from __future__ import annotations

import http.server
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from tests.kubectl.cli import Kubectl, configmap, deployment, diff_changes, editor

VERSIONS = ["1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33"]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.slow
def test_everyday_commands_with_each_kubectl(kc: Kubectl, version: str, tmp_path):
    k = kc.with_version(version)
    ns = k.namespace
    assert k.out("apply", "-f", "-", input=deployment(ns, replicas=1)) == "deployment.apps/web created"
    assert k.out("apply", "-f", "-", input=deployment(ns, replicas=1)) == "deployment.apps/web unchanged"
    assert k.out("apply", "-f", "-", input=deployment(ns, replicas=2)) == "deployment.apps/web configured"
    assert k.out("get", "deploy").splitlines()[1].split()[:2] == ["web", "0/2"]
    diff = k.run("diff", "-f", "-", input=deployment(ns, replicas=2, image="nginx:1.28"), check=False)
    assert diff.returncode == 1 and diff_changes(diff.stdout) == [
        "-  generation: 2", "+  generation: 3", "-      - image: nginx:1.27", "+      - image: nginx:1.28"]
    explained = k.out("explain", "deployment.spec.replicas")
    assert explained.splitlines()[:3] == ["GROUP:      apps", "KIND:       Deployment", "VERSION:    v1"]
    assert "FIELD: replicas <integer>" in explained
    assert k.out("scale", "deploy/web", "--replicas=3") == "deployment.apps/web scaled"
    assert k.out("edit", "deploy/web", env=editor(tmp_path, "s/nginx:1.27/nginx:1.29/")) \
        == "deployment.apps/web edited"
    assert k.out("wait", "--for=jsonpath={.spec.replicas}=3", "deploy/web", "--timeout=10s") \
        == "deployment.apps/web condition met"
    assert k.out("apply", "--server-side", "-f", "-", input=configmap(ns, k="v")) \
        == "configmap/settings serverside-applied"
    assert k.out("get", "all", "-o", "name") == "deployment.apps/web"
    bad = k.run("apply", "-f", "-", input=deployment(ns, name="typo").replace('"replicas"', '"replicaz"'),
                check=False)
    assert bad.stderr.strip().endswith('strict decoding error: unknown field "spec.replicaz"')
    assert k.out("delete", "deploy", "web", "--dry-run=server") == 'deployment.apps "web" deleted (server dry run)'
    assert k.out("delete", "deploy", "web") == 'deployment.apps "web" deleted'


@pytest.mark.parametrize("version", ["1.27", "1.28"])
def test_old_kubectl_explains_from_openapi_v2(kc: Kubectl, version: str):
    k = kc.with_version(version)
    done, requests = k.requests("explain", "deployment.spec.template.spec.containers.ports",
                                "--output=plaintext-openapiv2")
    assert [r.path for r in requests][:1] == ["/openapi/v2"]
    lines = done.stdout.splitlines()
    assert lines[:4] == ["KIND:     Deployment", "VERSION:  apps/v1", "", "RESOURCE: ports <[]Object>"]
    assert "   containerPort\t<integer> -required-" in lines


class _LegacyDiscoveryProxy(http.server.BaseHTTPRequestHandler):
    """Forwards to the cluster, answering `/api` and `/apis` only in the pre-aggregation (plain JSON) form."""

    upstream = ""

    def _forward(self) -> None:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        if self.path.split("?")[0] in ("/api", "/apis"):
            headers["Accept"] = "application/json"
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        request = urllib.request.Request(self.upstream + self.path, data=body, method=self.command, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                status, reply, answer = response.status, response.headers, response.read()
        except urllib.error.HTTPError as exc:
            status, reply, answer = exc.code, exc.headers, exc.read()
        self.send_response(status)
        for key, value in reply.items():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def legacy_proxy(mini_kube_session) -> Iterator[str]:
    handler = type("Handler", (_LegacyDiscoveryProxy,), {"upstream": mini_kube_session.url})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("version", ["1.27", "1.32"])
def test_kubectl_over_legacy_discovery(kc: Kubectl, legacy_proxy: str, version: str, tmp_path):
    k = kc.with_version(version)
    k.cache_dir = tmp_path / "cache"  # a fresh discovery cache: discovery must run through the proxy
    ns = k.namespace
    done, requests = k.requests("apply", "--server", legacy_proxy, "-f", "-", input=deployment(ns, replicas=1))
    assert done.stdout == "deployment.apps/web created\n"
    paths = [r.path for r in requests]
    assert "/api/v1" in paths and "/apis/apps/v1" in paths  # per group-version resource lists
    assert k.out("get", "deploy,cm", "--server", legacy_proxy, "-o", "name").splitlines()[0] == "deployment.apps/web"
    assert k.out("get", "deploy", "--server", legacy_proxy, "-o", "wide").splitlines()[1].split()[5:] == [
        "nginx", "nginx:1.27", "app=web"]
    assert k.out("api-resources", "--api-group=apps", "--server", legacy_proxy, "-o", "name").splitlines() == [
        "controllerrevisions.apps", "daemonsets.apps", "deployments.apps", "replicasets.apps", "statefulsets.apps"]
