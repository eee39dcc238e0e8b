"""PKI: generated once with the right names and modes, reused on restart, carried by the kubeconfig."""

from __future__ import annotations

import base64
import ipaddress
import stat
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from mini_kube.apiserver.auth.pki import (
    ADMIN_USER,
    ensure_pki,
    issue_client_cert,
    kubeconfig_yaml,
    server_ssl_context,
)


def _sans(cert: x509.Certificate) -> tuple[set[str], set[str]]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return set(san.get_values_for_type(x509.DNSName)), {str(i) for i in san.get_values_for_type(x509.IPAddress)}


def test_first_start_creates_ca_serving_admin_and_sa_key(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, ["10.1.2.3", "node1.example"])
    files = {p.name for p in (tmp_path / "pki").iterdir()}
    assert files == {"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.crt", "admin.key",
                     "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key", "front-proxy-client.crt",
                     "front-proxy-client.key"}
    for key in ("ca.key", "apiserver.key", "admin.key", "sa.key", "front-proxy-ca.key", "front-proxy-client.key"):
        assert stat.S_IMODE((tmp_path / "pki" / key).stat().st_mode) == 0o600
    dns, ips = _sans(pki.serving_cert())
    assert {"localhost", "node1.example", "kubernetes.default.svc"} <= dns
    assert {"10.1.2.3", "127.0.0.1"} <= ips
    pki.serving_cert().verify_directly_issued_by(pki.ca_cert)

    admin = x509.load_pem_x509_certificate(pki.admin_cert_pem)
    assert admin.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == ADMIN_USER
    assert [a.value for a in admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["system:masters"]
    eku = admin.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.CLIENT_AUTH in eku
    ca = pki.ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    assert ca.ca


def test_restart_reuses_everything(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path, ["127.0.0.1"])
    before = {p.name: p.read_bytes() for p in (tmp_path / "pki").iterdir()}
    second = ensure_pki(tmp_path, ["127.0.0.1"])
    after = {p.name: p.read_bytes() for p in (tmp_path / "pki").iterdir()}
    assert before == after
    assert second.ca_cert == first.ca_cert


def test_new_address_reissues_only_the_serving_cert(tmp_path: Path) -> None:
    ensure_pki(tmp_path, ["127.0.0.1"])
    before = {p.name: p.read_bytes() for p in (tmp_path / "pki").iterdir()}
    pki = ensure_pki(tmp_path, ["192.168.7.7"])
    after = {p.name: p.read_bytes() for p in (tmp_path / "pki").iterdir()}
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"apiserver.crt", "apiserver.key"}
    assert ipaddress.ip_address("192.168.7.7") in pki.serving_cert().extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.IPAddress)


def test_kubeconfig_embeds_ca_and_admin_credentials(pki) -> None:
    config = yaml.safe_load(kubeconfig_yaml("https://127.0.0.1:6443", pki))
    assert config["current-context"] == "mini-kube"
    assert config["contexts"] == [{"name": "mini-kube", "context": {"cluster": "mini-kube", "user": "mini-kube"}}]
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(cluster["certificate-authority-data"]) == pki.ca_pem
    user = config["users"][0]["user"]
    assert base64.b64decode(user["client-certificate-data"]) == pki.admin_cert_pem
    assert base64.b64decode(user["client-key-data"]) == pki.admin_key_pem


def test_kubeconfig_for_a_token_user_and_plain_http(pki) -> None:
    config = yaml.safe_load(kubeconfig_yaml("http://127.0.0.1:8080", pki, token="abc", namespace="dev"))
    assert "certificate-authority-data" not in config["clusters"][0]["cluster"]
    assert config["users"][0]["user"] == {"token": "abc"}
    assert config["contexts"][0]["context"]["namespace"] == "dev"


def test_client_certs_carry_user_and_groups(pki) -> None:
    cert_pem, _ = issue_client_cert(pki, "jane", ["devs", "ops"])
    cert = x509.load_pem_x509_certificate(cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "jane"
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["devs", "ops"]


def test_ssl_context_requests_but_does_not_require_client_certs(pki) -> None:
    import ssl

    ctx = server_ssl_context(pki)
    assert ctx.verify_mode == ssl.CERT_OPTIONAL
    assert ctx.minimum_version >= ssl.TLSVersion.TLSv1_2
