"""CertificateSigningRequest, as upstream's validateCertificateSigningRequest checks it: a PEM CERTIFICATE REQUEST
with a valid signature, known and distinct usages, a signerName of the form `example.com/signer-name`, at least
ten minutes of expirationSeconds, and well-formed conditions. Updates tolerate what the stored object already had."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509
from mini_kube.apiserver.errors import GoText
from mini_kube.apiserver.gofmt import go_quote
from mini_kube.apiserver.validation.errs import (
    FieldError,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
)
from mini_kube.machinery.names import is_dns1123_label, is_dns1123_subdomain

Obj = dict[str, Any]
USAGES = tuple(sorted((
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement", "data encipherment",
    "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth", "client auth", "code signing",
    "email protection", "s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc")))
LEGACY_SIGNER = "kubernetes.io/legacy-unknown"
TRUE_ONLY = ("Approved", "Denied", "Failed")
SUBDOMAIN_MAX, LABEL_MAX = 253, 63
PEM_TYPE_ERROR = "PEM block type must be CERTIFICATE REQUEST"


def go_bytes(data: bytes) -> str:
    """A []byte as Go's %#v prints it."""
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


def _pem_block(data: bytes) -> tuple[str, bytes] | None:
    """The first PEM block (type, DER body) as encoding/pem finds it, None when there is none."""
    text = data.decode("latin-1")
    start = text.find("-----BEGIN ")
    while start != -1:
        head_end = text.find("-----", start + 11)
        if head_end == -1:
            return None
        kind = text[start + 11:head_end]
        footer = f"-----END {kind}-----"
        end = text.find(footer, head_end)
        if end != -1 and "\n" not in kind:
            body = "".join(line.strip() for line in text[head_end + 5:end].splitlines() if ":" not in line)
            try:
                return kind, base64.b64decode(body, validate=True)
            except (binascii.Error, ValueError):
                pass
        start = text.find("-----BEGIN ", start + 1)
    return None


def request_error(data: bytes) -> str | None:
    """Why a request is not a signed PKCS#10 CSR in PEM (certificates.ParseCSR and CheckSignature), else None."""
    block = _pem_block(data)
    if block is None or block[0] != "CERTIFICATE REQUEST":
        return PEM_TYPE_ERROR
    try:
        csr = x509.load_der_x509_csr(block[1])
    except ValueError:
        return "asn1: structure error: malformed certificate request"
    try:
        valid = csr.is_signature_valid
    except Exception:  # an algorithm the library cannot check
        return "x509: cannot verify signature: algorithm unimplemented"
    return None if valid else "x509: signature verification failure"


def validate_signer_name(name: str, path: str) -> list[FieldError]:
    """ValidateSignerName: `<domain>/<path>`, the domain of two or more DNS labels, the path of subdomains."""
    if not name:
        return [required(path)]
    segments = name.split("/")
    if len(segments) != 2:
        return [invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    domain, rest = segments
    errs = [too_long(path, SUBDOMAIN_MAX)] if len(domain) > SUBDOMAIN_MAX else []
    labels = domain.split(".")
    for label in labels:
        problems = is_dns1123_label(label)
        if problems:
            errs += [invalid(path, domain, f"validating label {go_quote(label)}: {p}") for p in problems]
            break
    if len(labels) < 2:
        errs.append(invalid(path, domain, "should be a domain with at least two segments separated by dots"))
    for label in rest.split("."):
        problems = is_dns1123_subdomain(label)
        if problems:
            errs += [invalid(path, rest, f"validating label {go_quote(label)}: {p}") for p in problems]
            break
    if len(name) > SUBDOMAIN_MAX * 2 + LABEL_MAX + 2:
        errs.append(too_long(path, SUBDOMAIN_MAX * 2 + LABEL_MAX + 2))
    return errs


def _conditions(conditions: list[Obj], old: Obj | None) -> list[FieldError]:
    before = ((old or {}).get("status") or {}).get("conditions") or []
    old_types = [c.get("type") or "" for c in before]
    allow_empty, allow_dupes = "" in old_types, len(set(old_types)) < len(old_types)
    allow_both = "Approved" in old_types and "Denied" in old_types
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, cond in enumerate(conditions):
        at = f"status.conditions[{i}]"
        kind, status = cond.get("type") or "", cond.get("status") or ""
        if not kind and not allow_empty:
            errs.append(required(f"{at}.type"))
        allowed = ("True",) if kind in TRUE_ONLY else ("False", "True", "Unknown")
        if not status:
            errs.append(required(f"{at}.status"))
        elif status not in allowed:
            errs.append(not_supported(f"{at}.status", status, allowed))
        if not allow_both and kind in ("Approved", "Denied") and ({"Approved", "Denied"} - {kind}) & seen:
            errs.append(invalid("status.conditions", kind, "Approved and Denied conditions are mutually exclusive"))
        if kind in seen and not allow_dupes:
            errs.append(duplicate(f"{at}.type", kind))
        seen.add(kind)
    return errs


def _decoded(value: Any) -> bytes:
    try:
        return base64.b64decode(value or "", validate=True)
    except (binascii.Error, ValueError, TypeError):
        return b""


def validate_csr(obj: Obj, old: Obj | None = None) -> list[FieldError]:
    spec = obj.get("spec") or {}
    old_spec = (old or {}).get("spec") or {}
    errs: list[FieldError] = []
    request = _decoded(spec.get("request"))
    problem = request_error(request)
    if problem:
        shown = "[]byte(nil)" if spec.get("request") is None else go_bytes(request)
        errs.append(invalid("spec.request", GoText(shown), problem))
    usages = spec.get("usages") or []
    old_usages = old_spec.get("usages") or []
    if not usages:
        errs.append(required("spec.usages"))
    if not any(u not in USAGES for u in old_usages):
        errs += [not_supported(f"spec.usages[{i}]", u, USAGES) for i, u in enumerate(usages) if u not in USAGES]
    if len(set(old_usages)) == len(old_usages):
        errs += [duplicate(f"spec.usages[{i}]", u) for i, u in enumerate(usages) if u in usages[:i]]
    signer = spec.get("signerName") or ""
    if signer == LEGACY_SIGNER and old_spec.get("signerName") != LEGACY_SIGNER:
        errs.append(invalid("spec.signerName", signer, "the legacy signerName is not allowed via this API version"))
    else:
        errs += validate_signer_name(signer, "spec.signerName")
    seconds = spec.get("expirationSeconds")
    if seconds is not None and seconds < 600:
        errs.append(invalid("spec.expirationSeconds", seconds,
                            "may not specify a duration less than 600 seconds (10 minutes)"))
    return errs + _conditions((obj.get("status") or {}).get("conditions") or [], old)


def validate_csr_update(new: Obj, old: Obj) -> list[FieldError]:
    return validate_csr(new, old)
