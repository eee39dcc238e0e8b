"""The CSR signer ("csrsigning"), as kube-controller-manager's with `--cluster-signing-cert-file/-key-file`: an
approved CertificateSigningRequest for one of the built-in signers gets `status.certificate`, signed by the
cluster CA (the one the API server trusts for client certificates), valid for `spec.expirationSeconds` or a
year at most. A request the signer may not issue gets the Failed condition (SignerValidationFailure) instead.
Without the CA's files the controller does nothing."""

from __future__ import annotations

import base64
import datetime as dt
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import ExtendedKeyUsageOID
from mini_kube.client import ApiClient, Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.refs import CERTIFICATESIGNINGREQUESTS
from mini_kube.machinery.times import now_rfc3339

from ..reconciler import Controller
from ..workloads.jobutil import is_true

MAX_DURATION = dt.timedelta(days=365)  # upstream's --cluster-signing-duration default (8760h)
BACKDATE = dt.timedelta(minutes=5)  # upstream backdates by 5 minutes for clock skew
CLIENT_USAGES = {"client auth", "digital signature", "key encipherment"}
SERVING_USAGES = {"server auth", "digital signature", "key encipherment"}
SIGNERS = {  # signer name -> the usages it may issue (legacy-unknown: any)
    "kubernetes.io/kube-apiserver-client": CLIENT_USAGES,
    "kubernetes.io/kube-apiserver-client-kubelet": CLIENT_USAGES,
    "kubernetes.io/kubelet-serving": SERVING_USAGES,
    "kubernetes.io/legacy-unknown": None,
}
EKUS = {"client auth": ExtendedKeyUsageOID.CLIENT_AUTH, "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
        "code signing": ExtendedKeyUsageOID.CODE_SIGNING, "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
        "timestamping": ExtendedKeyUsageOID.TIME_STAMPING, "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING}


class CSRSigningController(Controller):
    name = "csrsigning"
    workers = 1

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *,
                 cert_file: str | Path | None = None, key_file: str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.ca_cert: x509.Certificate | None = None
        self.ca_key: Any = None
        if cert_file and key_file:
            self.ca_cert = x509.load_pem_x509_certificate(Path(cert_file).read_bytes())
            self.ca_key = serialization.load_pem_private_key(Path(key_file).read_bytes(), password=None)

    def setup(self) -> None:
        if self.ca_cert is not None:
            self.csrs = self.watch(CERTIFICATESIGNINGREQUESTS)

    async def reconcile(self, key: Any) -> None:
        csr = self.csrs.get(key)
        status = dict((csr or {}).get("status") or {})
        if (csr is None or not is_true(status, "Approved") or is_true(status, "Denied")
                or is_true(status, "Failed") or status.get("certificate")):
            return
        spec = csr.get("spec") or {}
        if spec.get("signerName") not in SIGNERS:
            return  # another signer's request
        allowed = SIGNERS[spec["signerName"]]
        usages = set(spec.get("usages") or ())
        if allowed is not None and not usages <= allowed:
            stamp = now_rfc3339()
            status["conditions"] = [*(status.get("conditions") or []), {
                "type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                "message": f"invalid usage for client certificate: {', '.join(sorted(usages - allowed))}",
                "lastUpdateTime": stamp, "lastTransitionTime": stamp}]
        else:
            status["certificate"] = base64.b64encode(self.sign(spec)).decode()
        try:
            await self.client.replace_status(CERTIFICATESIGNINGREQUESTS, {**csr, "status": status})
        except (Conflict, NotFound):
            return  # changed or gone meanwhile: the informer brings it back if there is more to do

    def sign(self, spec: dict[str, Any]) -> bytes:
        """The certificate for a CSR's spec (its subject, key and SANs; usages as key usage and EKUs), PEM."""
        assert self.ca_cert is not None
        request = x509.load_pem_x509_csr(base64.b64decode(spec["request"]))
        now = dt.datetime.now(dt.UTC)
        seconds = spec.get("expirationSeconds")
        duration = min(MAX_DURATION, dt.timedelta(seconds=seconds)) if seconds else MAX_DURATION
        not_after = min(now + duration, self.ca_cert.not_valid_after_utc)
        usages = set(spec.get("usages") or ())
        builder = (x509.CertificateBuilder().subject_name(request.subject).issuer_name(self.ca_cert.subject)
                   .public_key(request.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - BACKDATE).not_valid_after(not_after)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()),
                                  critical=False))
        if usages & {"digital signature", "key encipherment"}:
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature="digital signature" in usages, content_commitment=False,
                key_encipherment="key encipherment" in usages, data_encipherment=False, key_agreement=False,
                key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        ekus = [EKUS[u] for u in sorted(usages) if u in EKUS]
        if ekus:
            builder = builder.add_extension(x509.ExtendedKeyUsage(ekus), critical=False)
        try:
            sans = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
        except x509.ExtensionNotFound:
            pass
        return builder.sign(self.ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
