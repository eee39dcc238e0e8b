"""The security pieces installed into a real API server (`apiserver.auth.secure`), driven by real kubectl
and curl over TLS: whoami, 401/403 wording, RBAC grants, service-account tokens, escalation, can-i."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mini_kube.apiserver.auth.pki import Pki, kubeconfig_yaml

from mini_kube.testing import MiniKube

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None or shutil.which("curl") is None,
                                reason="needs kubectl and curl")
REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "reference" / "http"


class Cluster:
    def __init__(self, kube: MiniKube, tmp: Path) -> None:
        self.kube = kube
        self.pki: Pki = kube.server.security.pki
        self.alice = tmp / "alice.kubeconfig"
        self.alice.write_text(kubeconfig_yaml(kube.url, self.pki, token="alice-token"))

    def kubectl(self, *args: str, as_alice: bool = False, check: bool = True) -> subprocess.CompletedProcess[str]:
        config = str(self.alice) if as_alice else self.kube.kubeconfig
        result = subprocess.run(["kubectl", "--kubeconfig", config, *args], capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr}")
        return result

    def curl_text(self, path: str, *headers: str) -> str:
        args = ["curl", "-sS", "--cacert", str(self.pki.ca_path)]
        for h in headers:
            args += ["-H", h]
        return subprocess.run([*args, self.kube.url + path], capture_output=True, text=True, timeout=30,
                              check=True).stdout

    def curl(self, path: str, *headers: str) -> dict:
        return json.loads(self.curl_text(path, *headers))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("secure")
    (tmp / "tokens.csv").write_text('alice-token,alice,uid-alice,"devs"\n')
    kube = MiniKube(data_dir=str(tmp / "data"), insecure_http=False, controllers=False,
                    token_auth_file=str(tmp / "tokens.csv"))
    with kube:
        cluster = Cluster(kube, tmp)
        _stand_in_for_missing_defaults(cluster, tmp)
        yield cluster


def _stand_in_for_missing_defaults(cluster: Cluster, tmp: Path) -> None:
    """While the registry refuses `system:*` RBAC names, grant discovery and self-reviews under another name."""
    names = cluster.kubectl("get", "clusterroles", "-o", "name").stdout.split()
    if "clusterrole.rbac.authorization.k8s.io/system:basic-user" in names:
        return
    manifest = tmp / "basics.json"
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "test-basics"},
         "rules": [{"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
                   {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
                   {"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/openapi/*",
                                                          "/version"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "test-basics"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "test-basics"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]}]}))
    cluster.kubectl("create", "--validate=false", "-f", str(manifest))


def test_serves_tls_and_admin_is_whoami(cluster: Cluster) -> None:
    assert cluster.kube.url.startswith("https://")
    out = json.loads(cluster.kubectl("auth", "whoami", "-o", "json").stdout)
    assert out["status"]["userInfo"] == {"username": "kubernetes-admin",
                                         "groups": ["system:masters", "system:authenticated"]}


def test_anonymous_and_bad_tokens(cluster: Cluster) -> None:
    assert cluster.curl("/api") == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'forbidden: User "system:anonymous" cannot get path "/api"', "reason": "Forbidden",
        "details": {}, "code": 403}
    anon = cluster.curl("/api/v1/namespaces")
    assert anon == json.loads((REFERENCE / "anonymous-403.body").read_text())
    unauth = cluster.curl("/api/v1/namespaces", "Authorization: Bearer not-a-token")
    assert unauth == json.loads((REFERENCE / "unauth-401.body").read_text())
    assert unauth["code"] == 401


def test_rbac_grant_and_forbidden_wording(cluster: Cluster) -> None:
    cluster.kubectl("create", "namespace", "raw")
    denied = cluster.kubectl("get", "configmaps", "-n", "raw", as_alice=True, check=False)
    assert denied.returncode == 1
    assert ('configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the '
            'namespace "raw"') in denied.stderr
    body = cluster.curl("/api/v1/namespaces/raw/configmaps", "Authorization: Bearer alice-token")
    assert body == json.loads((REFERENCE / "forbidden-403.body").read_text())
    cluster.kubectl("create", "role", "cm-reader", "-n", "raw", "--verb=get,list", "--resource=configmaps")
    cluster.kubectl("create", "rolebinding", "alice-cm", "-n", "raw", "--role=cm-reader", "--user=alice")
    assert cluster.kubectl("get", "configmaps", "-n", "raw", as_alice=True).returncode == 0


def test_can_i_with_impersonation(cluster: Cluster) -> None:
    cluster.kubectl("create", "namespace", "imp")
    cluster.kubectl("create", "rolebinding", "alice-edit", "-n", "imp", "--clusterrole=cluster-admin", "--user=alice")
    yes = cluster.kubectl("auth", "can-i", "delete", "secrets", "-n", "imp", "--as", "alice")
    assert yes.stdout.strip() == "yes"
    no = cluster.kubectl("auth", "can-i", "delete", "secrets", "-n", "default", "--as", "alice", check=False)
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    listing = cluster.kubectl("auth", "can-i", "--list", "-n", "imp", "--as", "alice").stdout
    assert "*.*" in listing


def test_service_account_token_lifecycle(cluster: Cluster) -> None:
    cluster.kubectl("create", "namespace", "sa")
    cluster.kubectl("create", "serviceaccount", "robot", "-n", "sa")
    token = cluster.kubectl("create", "token", "robot", "-n", "sa").stdout.strip()
    body = cluster.curl("/api/v1/namespaces/sa/pods", f"Authorization: Bearer {token}")
    assert body["message"] == ('pods is forbidden: User "system:serviceaccount:sa:robot" cannot list resource "pods" '
                               'in API group "" in the namespace "sa"')
    cluster.kubectl("create", "rolebinding", "robot-view", "-n", "sa", "--clusterrole=cluster-admin",
                    "--serviceaccount=sa:robot")
    assert cluster.curl("/api/v1/namespaces/sa/pods", f"Authorization: Bearer {token}")["kind"] == "PodList"
    cluster.kubectl("delete", "serviceaccount", "robot", "-n", "sa")
    assert cluster.curl("/api/v1/namespaces/sa/pods", f"Authorization: Bearer {token}")["code"] == 401


def test_escalation_is_refused_through_the_api(cluster: Cluster) -> None:
    cluster.kubectl("create", "namespace", "esc")
    cluster.kubectl("create", "role", "rbac-writer", "-n", "esc", "--verb=create,get",
                    "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io")
    cluster.kubectl("create", "rolebinding", "alice-rbac", "-n", "esc", "--role=rbac-writer", "--user=alice")
    big = cluster.kubectl("create", "role", "big", "-n", "esc", "--verb=*", "--resource=secrets", as_alice=True,
                          check=False)
    assert big.returncode == 1
    assert ('roles.rbac.authorization.k8s.io "big" is forbidden: user "alice" (groups=["devs" '
            '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
            '{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}') in big.stderr
    grab = cluster.kubectl("create", "rolebinding", "grab", "-n", "esc", "--clusterrole=cluster-admin",
                           "--user=alice", as_alice=True, check=False)
    assert "is attempting to grant RBAC permissions not currently held" in grab.stderr
    ok = cluster.kubectl("create", "rolebinding", "share", "-n", "esc", "--role=rbac-writer", "--user=bob",
                         as_alice=True, check=False)
    assert ok.returncode == 0, ok.stderr


def test_default_policy_is_served(cluster: Cluster) -> None:
    names = cluster.kubectl("get", "clusterroles", "-o", "name").stdout.split()
    assert "clusterrole.rbac.authorization.k8s.io/system:basic-user" in names
    assert cluster.curl_text("/healthz") == "ok"  # anonymous, allowed by system:public-info-viewer
    no = cluster.kubectl("auth", "can-i", "create", "pods", as_alice=True, check=False)
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    view = json.loads(cluster.kubectl("get", "clusterrole", "view", "-o", "json").stdout)
    assert view["rules"]
