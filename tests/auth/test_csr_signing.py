"""A new user from a CertificateSigningRequest, as upstream's docs walk through it, with real kubectl: create the
CSR, `kubectl certificate approve`, and the csrsigning controller issues a certificate from the cluster CA that
the API server then accepts as that user (and its groups). A request for usages its signer may not issue fails."""

from __future__ import annotations

import base64
import json
import os
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from mini_kube.machinery.refs import CERTIFICATESIGNINGREQUESTS

from tests.helpers import eventually, kubectl, kubectl_binary


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    from mini_kube.testing import MiniKube

    with MiniKube(insecure_http=False, data_dir=str(tmp_path_factory.mktemp("data")),
                  controllers="csrsigning", scheduler=False) as kube:
        yield kube


def _request(user: str, group: str, usages: list[str]) -> tuple[ec.EllipticCurvePrivateKey, dict]:
    key = ec.generate_private_key(ec.SECP256R1())
    request = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, user), x509.NameAttribute(NameOID.ORGANIZATION_NAME, group)])
    ).sign(key, hashes.SHA256())
    return key, {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                 "metadata": {"name": user},
                 "spec": {"request": base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode(),
                          "signerName": "kubernetes.io/kube-apiserver-client", "expirationSeconds": 86400,
                          "usages": usages}}


def test_an_approved_request_becomes_a_working_client_certificate(secure, tmp_path):
    key, csr = _request("jane", "devs", ["client auth"])
    kubectl(secure, "create", "-f", "-", input=json.dumps(csr))
    assert not (secure.client.get(CERTIFICATESIGNINGREQUESTS, "jane").get("status") or {}).get("certificate")  # not before approval
    kubectl(secure, "certificate", "approve", "jane")
    issued = eventually(lambda: kubectl(secure, "get", "csr", "jane", "-o",
                                        "jsonpath={.status.certificate}").stdout)
    pem = base64.b64decode(issued)
    cert = x509.load_pem_x509_certificate(pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "jane"
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH]
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert 86400 <= lifetime.total_seconds() <= 86400 + 600
    (tmp_path / "jane.crt").write_bytes(pem)
    (tmp_path / "jane.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    config = kubectl(secure, "config", "view", "--raw", "--minify", "-o", "json").stdout
    cluster = json.loads(config)["clusters"][0]
    (tmp_path / "jane.kubeconfig").write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster],
        "users": [{"name": "jane", "user": {"client-certificate": str(tmp_path / "jane.crt"),
                                            "client-key": str(tmp_path / "jane.key")}}],
        "contexts": [{"name": "jane", "context": {"cluster": cluster["name"], "user": "jane"}}],
        "current-context": "jane"}))
    who = subprocess.run([kubectl_binary(), "auth", "whoami", "-o", "json"], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "KUBECONFIG": str(tmp_path / "jane.kubeconfig")})
    assert who.returncode == 0, who.stderr
    info = json.loads(who.stdout)["status"]["userInfo"]
    assert info["username"] == "jane" and "devs" in info["groups"]


def test_usages_the_signer_may_not_issue_fail_the_request(secure):
    _, csr = _request("mallory", "devs", ["client auth", "server auth"])
    kubectl(secure, "create", "-f", "-", input=json.dumps(csr))
    kubectl(secure, "certificate", "approve", "mallory")
    failed = eventually(lambda: [c for c in (secure.client.get(CERTIFICATESIGNINGREQUESTS, "mallory").get("status") or {}).get(
        "conditions") or () if c["type"] == "Failed"])
    assert failed[0]["reason"] == "SignerValidationFailure" and "server auth" in failed[0]["message"]
    assert not secure.client.get(CERTIFICATESIGNINGREQUESTS, "mallory")["status"].get("certificate")
