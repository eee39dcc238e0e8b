"""CertificateSigningRequest rules (upstream's validateCertificateSigningRequest), with the exact messages."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mini_kube.apiserver.validation import validate_all


def _request() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")])).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


REQUEST = _request()
SPEC = {"request": REQUEST, "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}


def errors(spec: dict, status: dict | None = None, old: dict | None = None) -> list[str]:
    obj = {"metadata": {"name": "alice", "resourceVersion": "1"}, "spec": spec, **({"status": status} if status else {})}
    return [str(e) for e in validate_all("CertificateSigningRequest", "certificates.k8s.io", obj, old)]


@pytest.mark.parametrize(("spec", "expected"), [
    (SPEC, []),
    ({**SPEC, "signerName": None}, ["spec.signerName: Required value"]),
    ({**SPEC, "signerName": "my-signer"}, [
        "spec.signerName: Invalid value: \"my-signer\": must be a fully qualified domain and path of the form "
        "'example.com/signer-name'"]),
    ({**SPEC, "signerName": "example/signer"}, [
        'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots']),
    ({**SPEC, "signerName": "kubernetes.io/legacy-unknown"}, [
        'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via '
        "this API version"]),
    ({**SPEC, "usages": None}, ["spec.usages: Required value"]),
    ({**SPEC, "usages": ["client auth", "fly", "client auth"]}, [
        'spec.usages[1]: Unsupported value: "fly": supported values: "any", "cert sign", "client auth", '
        '"code signing", "content commitment", "crl sign", "data encipherment", "decipher only", '
        '"digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", '
        '"ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", '
        '"s/mime", "server auth", "signing", "timestamping"',
        'spec.usages[2]: Duplicate value: "client auth"']),
    ({**SPEC, "expirationSeconds": 60}, [
        "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)"]),
    ({**SPEC, "request": base64.b64encode(b"hi").decode()}, [
        "spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST"]),
    ({**SPEC, "request": None}, [
        "spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST"]),
])
def test_signing_requests(spec, expected):
    """These had no rules: any signerName, usage or request body was stored."""
    assert errors(spec) == expected


def test_conditions_and_tolerated_old_values():
    both = {"conditions": [{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "False"}]}
    assert errors(SPEC, both) == [
        'status.conditions[1].status: Unsupported value: "False": supported values: "True"',
        'status.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive']
    legacy = {**SPEC, "signerName": "kubernetes.io/legacy-unknown", "usages": ["fly"]}
    old = {"metadata": {"name": "alice", "resourceVersion": "1"}, "spec": legacy}
    assert errors(legacy, old={**old}) == []
