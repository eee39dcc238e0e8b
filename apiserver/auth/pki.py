"""The cluster's PKI: a CA, the serving certificate, the admin client certificate and the
service-account signing key, created once in the data dir and reused on restart.

Also the kubeconfig that carries them and the server's TLS context (client certs requested, not required).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from mini_kube.apiserver import kubeconfig
from mini_kube.apiserver.auth.user import SYSTEM_MASTERS
from mini_kube.apiserver.kubeconfig import pem_data
from mini_kube.machinery import times

ADMIN_USER = "kubernetes-admin"
FRONT_PROXY_CLIENT = "front-proxy-client"  # the aggregator's client certificate's CN (requestheader-allowed-names)
CA_DAYS = 3650
LEAF_DAYS = 365
RENEW_BEFORE = dt.timedelta(days=30)
CLUSTER_DNS_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                     "kubernetes.default.svc.cluster.local")
WILDCARD_ADDRESSES = {"", "0.0.0.0", "::", "[::]"}

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


@dataclass(slots=True)
class Pki:
    """Loaded PKI material and where it lives on disk."""

    dir: Path
    ca_cert: x509.Certificate
    ca_key: ec.EllipticCurvePrivateKey
    sa_key: PrivateKey  # P-256 (ES256 tokens); RSA (RS256) in a data dir made before they were ECDSA

    @property
    def ca_path(self) -> Path:
        return self.dir / "ca.crt"

    @property
    def serving_cert_path(self) -> Path:
        return self.dir / "apiserver.crt"

    @property
    def serving_key_path(self) -> Path:
        return self.dir / "apiserver.key"

    @property
    def admin_cert_path(self) -> Path:
        return self.dir / "admin.crt"

    @property
    def admin_key_path(self) -> Path:
        return self.dir / "admin.key"

    @property
    def front_proxy_ca_path(self) -> Path:
        """The CA of the aggregator's proxy client (extension API servers trust its X-Remote-* headers)."""
        return self.dir / "front-proxy-ca.crt"

    @property
    def front_proxy_client_cert_path(self) -> Path:
        return self.dir / "front-proxy-client.crt"

    @property
    def front_proxy_client_key_path(self) -> Path:
        return self.dir / "front-proxy-client.key"

    @property
    def ca_pem(self) -> bytes:
        return self.ca_cert.public_bytes(serialization.Encoding.PEM)

    @property
    def admin_cert_pem(self) -> bytes:
        return self.admin_cert_path.read_bytes()

    @property
    def admin_key_pem(self) -> bytes:
        return self.admin_key_path.read_bytes()

    def serving_cert(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.serving_cert_path.read_bytes())


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write atomically with the given file mode (0600 for keys)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def _key_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _name(common_name: str, organizations: Iterable[str] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name([*attrs, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _new_ca(common_name: str = "mini-kube-ca") -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(common_name)
    now = times.now()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def _san_entries(hosts: Iterable[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    seen: set[str] = set()
    for host in hosts:
        host = host.strip("[]")
        if host in seen:
            continue
        seen.add(host)
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def serving_hosts(hosts: Iterable[str]) -> list[str]:
    """The SANs a serving certificate needs: the given addresses, localhost, loopback, cluster names."""
    out = []
    for host in hosts:
        if host in WILDCARD_ADDRESSES:
            out.append(socket.gethostname())
        else:
            out.append(host.strip("[]"))
    return [*out, "127.0.0.1", "::1", *CLUSTER_DNS_NAMES]


def issue_cert(ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, common_name: str, *,
               organizations: Iterable[str] = (), hosts: Iterable[str] = (), server: bool = False,
               days: int = LEAF_DAYS) -> tuple[bytes, bytes]:
    """Sign a new leaf certificate; return (cert PEM, key PEM)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = times.now()
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (x509.CertificateBuilder().subject_name(_name(common_name, organizations))
               .issuer_name(ca_cert.subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=False,
                                            crl_sign=False, content_commitment=False, data_encipherment=False,
                                            key_agreement=False, encipher_only=False, decipher_only=False),
                              critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                              critical=False))
    sans = _san_entries(hosts)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return _cert_pem(builder.sign(ca_key, hashes.SHA256())), _key_pem(key)


def issue_client_cert(pki: Pki, user: str, groups: Iterable[str] = (), days: int = LEAF_DAYS) -> tuple[bytes, bytes]:
    """A client certificate for `user` (CN) in `groups` (O), signed by the cluster CA."""
    return issue_cert(pki.ca_cert, pki.ca_key, user, organizations=groups, days=days)


def _load_cert(path: Path) -> x509.Certificate | None:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None


def _load_key(path: Path) -> PrivateKey | None:
    """A key this server wrote to its own private data dir: an RSA key's consistency checks (tens of
    milliseconds, for keys from elsewhere) are skipped, as cryptography allows for keys known to be good."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None,
                                                 unsafe_skip_rsa_key_validation=True)
    except (OSError, ValueError, TypeError):
        return None
    return key if isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) else None


def _fresh(cert: x509.Certificate | None, ca: x509.Certificate) -> bool:
    """Signed by `ca` and not about to expire."""
    if cert is None or cert.issuer != ca.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return cert.not_valid_after_utc - RENEW_BEFORE > times.now()


def _covers(cert: x509.Certificate, hosts: Iterable[str]) -> bool:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have = {str(v) for v in san.get_values_for_type(x509.IPAddress)} | set(san.get_values_for_type(x509.DNSName))
    return all(str(g.value) in have for g in _san_entries(hosts))


def ensure_pki(data_dir: Path, hosts: list[str]) -> Pki:
    """Create (or load and reuse) the CA, serving and admin certificates and the SA key under data_dir/pki."""
    pki_dir = Path(data_dir) / "pki"
    pki_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(pki_dir, 0o700)
    ca_cert, ca_key = _load_cert(pki_dir / "ca.crt"), _load_key(pki_dir / "ca.key")
    renewed_ca = False
    if (ca_cert is None or not isinstance(ca_key, ec.EllipticCurvePrivateKey)
            or ca_cert.not_valid_after_utc - RENEW_BEFORE <= times.now()
            or ca_cert.public_key() != ca_key.public_key()):
        ca_cert, ca_key = _new_ca()
        _write(pki_dir / "ca.key", _key_pem(ca_key), 0o600)
        _write(pki_dir / "ca.crt", _cert_pem(ca_cert), 0o644)
        renewed_ca = True
    sa_key = _load_key(pki_dir / "sa.key")
    if sa_key is None:  # ECDSA, as kubeadm's ECDSA-P256: an RSA key takes tens of milliseconds to make
        sa_key = ec.generate_private_key(ec.SECP256R1())
        _write(pki_dir / "sa.key", _key_pem(sa_key), 0o600)
        _write(pki_dir / "sa.pub", sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo), 0o644)
    pki = Pki(pki_dir, ca_cert, ca_key, sa_key)
    sans = serving_hosts(hosts)
    serving = _load_cert(pki.serving_cert_path)
    if renewed_ca or serving is None or not _fresh(serving, ca_cert) or not _covers(serving, sans) or \
            _load_key(pki.serving_key_path) is None:
        cert_pem, key_pem = issue_cert(ca_cert, ca_key, "kube-apiserver", hosts=sans, server=True)
        _write(pki.serving_key_path, key_pem, 0o600)
        _write(pki.serving_cert_path, cert_pem, 0o644)
    if renewed_ca or not _fresh(_load_cert(pki.admin_cert_path), ca_cert) or _load_key(pki.admin_key_path) is None:
        cert_pem, key_pem = issue_client_cert(pki, ADMIN_USER, [SYSTEM_MASTERS])
        _write(pki.admin_key_path, key_pem, 0o600)
        _write(pki.admin_cert_path, cert_pem, 0o644)
    _ensure_front_proxy(pki)
    return pki


def _ensure_front_proxy(pki: Pki) -> None:
    """The front-proxy CA (its own: a cluster client certificate must not pass for the aggregator) and the
    aggregator's client certificate, CN front-proxy-client, as kubeadm makes them."""
    ca_cert, ca_key = _load_cert(pki.front_proxy_ca_path), _load_key(pki.dir / "front-proxy-ca.key")
    renewed = False
    if ca_cert is None or not isinstance(ca_key, ec.EllipticCurvePrivateKey) \
            or ca_cert.not_valid_after_utc - RENEW_BEFORE <= times.now() or ca_cert.public_key() != ca_key.public_key():
        ca_cert, ca_key = _new_ca("front-proxy-ca")
        _write(pki.dir / "front-proxy-ca.key", _key_pem(ca_key), 0o600)
        _write(pki.front_proxy_ca_path, _cert_pem(ca_cert), 0o644)
        renewed = True
    if renewed or not _fresh(_load_cert(pki.front_proxy_client_cert_path), ca_cert) \
            or _load_key(pki.front_proxy_client_key_path) is None:
        cert_pem, key_pem = issue_cert(ca_cert, ca_key, FRONT_PROXY_CLIENT)
        _write(pki.front_proxy_client_key_path, key_pem, 0o600)
        _write(pki.front_proxy_client_cert_path, cert_pem, 0o644)


def kubeconfig_yaml(server_url: str, pki: Pki | None, *, name: str = "mini-kube",
                    client_cert_pem: bytes | None = None, client_key_pem: bytes | None = None,
                    token: str | None = None, namespace: str | None = None) -> str:
    """A kubeconfig with cluster, context and user all named `name`; admin credentials by default."""
    user: dict[str, str] = {}
    if token is not None:
        user["token"] = token
    elif client_cert_pem is not None and client_key_pem is not None:
        user = {"client-certificate-data": pem_data(client_cert_pem), "client-key-data": pem_data(client_key_pem)}
    elif pki is not None:
        user = {"client-certificate-data": pem_data(pki.admin_cert_pem), "client-key-data": pem_data(pki.admin_key_pem)}
    ca = pki.ca_pem if pki is not None and server_url.startswith("https://") else None
    return kubeconfig.kubeconfig_text(server_url, name=name, ca_pem=ca, user=user, namespace=namespace)


def server_ssl_context(pki: Pki) -> ssl.SSLContext:
    """TLS for the API server: serves the serving cert, asks for (but does not require) a CA-signed client cert."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(pki.serving_cert_path, pki.serving_key_path)
    ctx.load_verify_locations(cadata=pki.ca_pem.decode())
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx
