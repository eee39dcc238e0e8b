"""AdmissionReview (admission.k8s.io/v1 and v1beta1): the request a webhook receives and what its answer means.

Mirrors k8s.io/apiserver/pkg/admission/plugin/webhook/request: the request carries the matched and the
requested kind/resource, the user, both objects (as the matched version sees them), dryRun and the operation's
options; a v1 answer must echo the request uid and be an admission.k8s.io/v1 AdmissionReview.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import StatusError
from ..registry.rest.scale import to_scale
from .chain import Attributes
from .matching import Match

REVIEW_VERSIONS = ("v1", "v1beta1")
OPTIONS_KIND = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions",
                "CONNECT": "ConnectOptions"}
LOOPBACK_USER = {"username": "system:apiserver", "groups": ["system:masters", "system:authenticated"]}


class InvalidResponse(Exception):
    """The webhook answered something that is not a valid AdmissionReview response."""


class UnsupportedPatch(InvalidResponse):
    """A patchType other than JSONPatch (reported without the invalid-response prefix, as upstream does)."""


@dataclass(slots=True)
class Response:
    allowed: bool
    patch: list[Any] | None = None
    status: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)


def user_info(user: Any) -> dict[str, Any]:
    """authentication.k8s.io/v1 UserInfo of the requester (in-process writes act as the loopback user)."""
    if user is None:
        return dict(LOOPBACK_USER)
    if hasattr(user, "to_api"):
        return user.to_api()
    out: dict[str, Any] = {"username": getattr(user, "name", "")}
    if getattr(user, "uid", ""):
        out["uid"] = user.uid
    if getattr(user, "groups", ()):
        out["groups"] = list(user.groups)
    if getattr(user, "extra", None):
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def operation_options(attrs: Attributes) -> dict[str, Any]:
    """The CreateOptions/UpdateOptions/DeleteOptions object of the request."""
    out: dict[str, Any] = {"kind": OPTIONS_KIND.get(attrs.operation, "CreateOptions"), "apiVersion": "meta.k8s.io/v1"}
    if attrs.dry_run:
        out["dryRun"] = ["All"]
    if attrs.operation in ("CREATE", "UPDATE") and attrs.options.field_manager:
        out["fieldManager"] = attrs.options.field_manager
    return out


def versioned_objects(attrs: Attributes, match: Match) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(object, oldObject) as the matched version sees them: a Scale for `scale`, else the apiVersion rewritten."""
    obj, old = attrs.obj, attrs.old
    if attrs.subresource == "scale":
        res = attrs.resource
        return (to_scale(res, obj) if obj is not None else None), (to_scale(res, old) if old is not None else None)
    group, version, _ = match.kind
    api_version = f"{group}/{version}" if group else version
    if obj is not None and obj.get("apiVersion") != api_version:
        obj = {**obj, "apiVersion": api_version}
    if old is not None and old.get("apiVersion") != api_version:
        old = {**old, "apiVersion": api_version}
    return obj, old


def _gvk(kind: tuple[str, str, str]) -> dict[str, str]:
    return {"group": kind[0], "version": kind[1], "kind": kind[2]}


def _gvr(resource: tuple[str, str, str]) -> dict[str, str]:
    return {"group": resource[0], "version": resource[1], "resource": resource[2]}


def admission_request(attrs: Attributes, match: Match, uid: str = "", *, objects: bool = True) -> dict[str, Any]:
    """The AdmissionRequest (with objects for webhooks; without them for CEL's `request`)."""
    res = attrs.resource
    req: dict[str, Any] = {}
    if uid:
        req["uid"] = uid
    req["kind"] = _gvk(match.kind)
    req["resource"] = _gvr(match.resource)
    if attrs.subresource:
        req["subResource"] = attrs.subresource
    req["requestKind"] = _gvk(attrs.kind)
    req["requestResource"] = _gvr((res.group, res.version, res.plural))
    if attrs.subresource:
        req["requestSubResource"] = attrs.subresource
    if attrs.name:
        req["name"] = attrs.name
    if attrs.request_namespace:
        req["namespace"] = attrs.request_namespace
    req["operation"] = attrs.operation
    req["userInfo"] = user_info(attrs.user)
    if objects:
        req["object"], req["oldObject"] = versioned_objects(attrs, match)
    req["dryRun"] = attrs.dry_run
    if attrs.operation != "CONNECT":  # a connect has no operation options
        req["options"] = operation_options(attrs)
    return req


def review(version: str, request: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "AdmissionReview", "apiVersion": f"admission.k8s.io/{version}", "request": request}


def pick_version(versions: list[str] | None) -> str | None:
    """The first AdmissionReview version the webhook accepts that we can send."""
    return next((v for v in versions or () if v in REVIEW_VERSIONS), None)


def _gvk_string(body: dict[str, Any]) -> str:
    group, _, version = str(body.get("apiVersion") or "").rpartition("/")
    return f"{group}/{version}, Kind={body.get('kind') or ''}"


def _patch(response: dict[str, Any]) -> list[Any] | None:
    raw = response.get("patch")
    if not raw:
        return None
    try:
        patch = orjson.loads(base64.b64decode(raw, validate=True))
    except (binascii.Error, ValueError, TypeError) as exc:
        raise InvalidResponse(f"invalid response.patch: {exc}") from None
    if not isinstance(patch, list):
        raise InvalidResponse("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    return patch


def verify(body: Any, uid: str, version: str, mutating: bool) -> Response:
    """Check a webhook's answer like upstream's VerifyAdmissionResponse; InvalidResponse says what is wrong."""
    if not isinstance(body, dict) or not isinstance(body.get("response"), dict):
        raise InvalidResponse("webhook response was absent")
    response = body["response"]
    if version == "v1":
        if response.get("uid") != uid:
            raise InvalidResponse(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
        if body.get("apiVersion") != "admission.k8s.io/v1" or body.get("kind") != "AdmissionReview":
            raise InvalidResponse("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, "
                                  f"got {_gvk_string(body)}")
    patch, patch_type = _patch(response) if mutating else None, response.get("patchType")
    if version == "v1" and mutating:
        if patch and patch_type is None:
            raise InvalidResponse("webhook returned response.patch but not response.patchType")
        if not patch and patch_type is not None and not response.get("patch"):
            raise InvalidResponse("webhook returned response.patchType but not response.patch")
        if patch_type == "":
            raise InvalidResponse('webhook returned invalid response.patchType of ""')
        if patch and patch_type != "JSONPatch":
            raise UnsupportedPatch(f'unsupported patch type "{patch_type}"')
    elif version == "v1" and (response.get("patch") or patch_type is not None):
        raise InvalidResponse("validating webhook may not return response.patch" if response.get("patch")
                              else "validating webhook may not return response.patchType")
    warnings = [w for w in response.get("warnings") or () if isinstance(w, str)]
    status = response.get("status") if isinstance(response.get("status"), dict) else None
    return Response(bool(response.get("allowed")), patch, status, warnings,
                    dict(response.get("auditAnnotations") or {}))


def denial(webhook: str, status: dict[str, Any] | None) -> StatusError:
    """The error a denying webhook's answer becomes (`admission webhook "x" denied the request: ...`)."""
    status = status or {}
    given = status.get("code")
    code = given if isinstance(given, int) and given >= 400 else 400
    message, reason = str(status.get("message") or ""), str(status.get("reason") or "")
    text = f'admission webhook "{webhook}" denied the request'
    if message:
        text += f": {message}"
    elif reason:
        text += f": {reason}"
    else:
        text += " without explanation"
    details = status.get("details") if isinstance(status.get("details"), dict) else None
    return StatusError(code, reason, text, details)
