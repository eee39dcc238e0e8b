"""The `approval` subresource of CertificateSigningRequests, through real kubectl: `kubectl certificate approve`
and `deny` set their condition (with its timestamps), and a write there changes nothing but the conditions."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mini_kube.client import ApiError
from mini_kube.machinery.refs import CERTIFICATESIGNINGREQUESTS

from tests.helpers import kubectl


def _csr(name: str) -> dict:
    key = ec.generate_private_key(ec.SECP256R1())
    request = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])).sign(key, hashes.SHA256())
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode(),
                     "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}}


def test_kubectl_certificate_approve_and_deny(mini_kube_session):
    kube = mini_kube_session
    for name in ("csr-approved", "csr-denied"):
        kubectl(kube, "create", "-f", "-", input=json.dumps(_csr(name)))
    out = kubectl(kube, "certificate", "approve", "csr-approved")
    assert out.stdout.strip() == "certificatesigningrequest.certificates.k8s.io/csr-approved approved"
    kubectl(kube, "certificate", "deny", "csr-denied")
    approved = kube.client.get(CERTIFICATESIGNINGREQUESTS, "csr-approved")["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"]) for c in approved] == [("Approved", "True", "KubectlApprove")]
    assert approved[0]["lastUpdateTime"] and approved[0]["lastTransitionTime"]
    denied = kube.client.get(CERTIFICATESIGNINGREQUESTS, "csr-denied")["status"]["conditions"]
    assert [(c["type"], c["reason"]) for c in denied] == [("Denied", "KubectlDeny")]
    listed = kubectl(kube, "get", "csr", "csr-approved", "csr-denied").stdout
    assert "Approved" in listed and "Denied" in listed
    # approving both ways at once is refused (kubectl itself will not try); a spec sent there is ignored
    denied_csr = kube.client.get(CERTIFICATESIGNINGREQUESTS, "csr-denied")
    denied_csr["status"]["conditions"].append({"type": "Approved", "status": "True", "reason": "Both"})
    with pytest.raises(ApiError) as both:
        kube.client.request("PUT", CERTIFICATESIGNINGREQUESTS.path(None, "csr-denied", "approval"), body=denied_csr)
    assert both.value.status == 422 and "Approved and Denied conditions are mutually exclusive" in str(both.value)
    current = kube.client.get(CERTIFICATESIGNINGREQUESTS, "csr-approved")
    changed = {**current, "spec": {**current["spec"], "usages": ["digital signature"]}}
    kube.client.request("PUT", CERTIFICATESIGNINGREQUESTS.path(None, "csr-approved", "approval"), body=changed)
    assert kube.client.get(CERTIFICATESIGNINGREQUESTS, "csr-approved")["spec"]["usages"] == ["client auth"]
