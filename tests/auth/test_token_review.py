"""TokenReview (authentication.k8s.io/v1), as webhook token authenticators and clients such as kr8s's `whoami`
use it: a token checked as if it came in a request, answered in `status`, never stored."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from mini_kube.testing import MiniKube

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
AUDIENCE = "https://kubernetes.default.svc.cluster.local"


@pytest.fixture(scope="module")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniKube]:
    tmp = tmp_path_factory.mktemp("tokenreview")
    (tmp / "tokens.csv").write_text('alice-token,alice,uid-alice,"devs"\n')
    cluster = MiniKube(data_dir=str(tmp / "data"), insecure_http=False, controllers=False,
                       token_auth_file=str(tmp / "tokens.csv"))
    with cluster:
        yield cluster


def kubectl(kube: MiniKube, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["kubectl", "--kubeconfig", kube.kubeconfig, *args], input=input, capture_output=True,
                          text=True, timeout=60)


def review(kube: MiniKube, token: str, audiences: list[str] | None = None) -> dict:
    spec: dict = {"token": token, **({"audiences": audiences} if audiences else {})}
    done = kubectl(kube, "create", "-o", "json", "-f", "-", input=json.dumps(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_service_account_and_static_tokens(kube: MiniKube) -> None:
    assert kubectl(kube, "create", "serviceaccount", "robot").returncode == 0
    token = kubectl(kube, "create", "token", "robot").stdout.strip()
    answer = review(kube, token)
    assert answer["kind"] == "TokenReview" and answer["spec"]["token"] == token
    status = answer["status"]
    assert status["authenticated"] is True and status["audiences"] == [AUDIENCE]
    user = status["user"]
    assert user["username"] == "system:serviceaccount:default:robot"
    assert user["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    assert user["uid"] == json.loads(kubectl(kube, "get", "sa", "robot", "-o", "json").stdout)["metadata"]["uid"]
    assert review(kube, "alice-token")["status"]["user"] == {
        "username": "alice", "uid": "uid-alice", "groups": ["devs", "system:authenticated"]}
    # not kept: a review is computed, never stored
    assert "tokenreviews" not in kubectl(kube, "api-resources", "--verbs=list", "-o", "name").stdout


def test_tokens_that_do_not_authenticate(kube: MiniKube) -> None:
    assert review(kube, "not-a-token")["status"] == {"authenticated": False, "error": "invalid bearer token",
                                                     "user": {}}
    kubectl(kube, "create", "serviceaccount", "other")
    token = kubectl(kube, "create", "token", "other", "--audience=https://elsewhere.example").stdout.strip()
    assert review(kube, token)["status"]["authenticated"] is False
    token = kubectl(kube, "create", "token", "other").stdout.strip()
    assert review(kube, token, ["https://elsewhere.example"])["status"]["authenticated"] is False
    refused = kubectl(kube, "create", "-f", "-", input=json.dumps(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}}))
    assert refused.returncode == 1
    assert "token is required for TokenReview in authentication" in refused.stderr


def test_token_requests_for_missing_accounts_and_bad_bodies(kube: MiniKube) -> None:
    """serviceaccounts/token (registry/rest/tokens.py): a missing service account is a 404 before the body is
    read; a body that is not a TokenRequest object is a 400."""
    missing = kubectl(kube, "create", "token", "nobody")
    assert missing.returncode == 1 and 'serviceaccounts "nobody" not found' in missing.stderr
    path = "/api/v1/namespaces/default/serviceaccounts/{}/token"
    missing = kubectl(kube, "create", "--raw", path.format("nobody"), "-f", "-", input="[]")
    assert missing.returncode == 1 and "NotFound" in missing.stderr
    kubectl(kube, "create", "serviceaccount", "bodies")
    refused = kubectl(kube, "create", "--raw", path.format("bodies"), "-f", "-", input="[]")
    assert refused.returncode == 1 and "BadRequest" in refused.stderr
    issued = kubectl(kube, "create", "--raw", path.format("bodies"), "-f", "-", input=json.dumps(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}))
    assert issued.returncode == 0 and json.loads(issued.stdout)["status"]["token"]
