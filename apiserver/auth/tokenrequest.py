"""The `serviceaccounts/token` subresource (TokenRequest): what `kubectl create token` calls."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

from mini_kube.apiserver.auth.sa_token import BoundObject, ServiceAccountTokens
from mini_kube.apiserver.errors import FieldError, StatusError, bad_request, conflict, invalid, not_found
from mini_kube.apiserver.registry.reader import ObjectReader
from mini_kube.apiserver.schema import messages
from mini_kube.apiserver.schema.fields import type_errors
from mini_kube.machinery.times import format_time

DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
BINDABLE = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}

# (kind, namespace, name) -> the live object, or None
ObjectGetter = Callable[[str, str, str], Mapping[str, Any] | None]


def object_getter(objects: ObjectReader) -> ObjectGetter:
    """The live service accounts and the objects a token may be bound to, read through `objects`."""
    plurals = {"ServiceAccount": "serviceaccounts", **BINDABLE}

    def get(kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return objects.object("", "v1", plurals.get(kind, ""), namespace, name)

    return get


def _invalid(name: str, errors: list[FieldError]) -> StatusError:
    summary = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    causes = [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]
    return StatusError(422, "Invalid", f'TokenRequest.authentication.k8s.io "{name}" is invalid: {summary}',
                       {"name": name, "group": "authentication.k8s.io", "kind": "TokenRequest", "causes": causes})


def _bound(ref: Mapping[str, Any], sa_name: str, namespace: str,
           get_object: ObjectGetter | None) -> tuple[BoundObject, BoundObject | None]:
    """Resolve `spec.boundObjectRef` to the live object (and, for a scheduled pod, its node)."""
    kind, name, want_uid = ref.get("kind", ""), ref.get("name", ""), ref.get("uid", "")
    resource = BINDABLE[kind]
    obj = get_object(kind, "" if kind == "Node" else namespace, name) if get_object else None
    if obj is None:
        raise not_found(resource, name)
    meta = obj.get("metadata") or {}
    uid = meta.get("uid", "")
    if kind == "Pod" and (obj.get("spec") or {}).get("serviceAccountName", "default") != sa_name:
        raise bad_request(f'cannot bind token for serviceaccount "{sa_name}" to pod running with different '
                          "serviceaccount name.")
    if want_uid and uid != want_uid:
        raise conflict(kind, name, f"the UID in the bound object reference ({want_uid}) does not match the UID in "
                                   "record. The object might have been deleted and then recreated")
    node = None
    node_name = (obj.get("spec") or {}).get("nodeName", "") if kind == "Pod" else ""
    if node_name and get_object is not None:
        node_obj = get_object("Node", "", node_name)
        node = BoundObject("Node", node_name, ((node_obj or {}).get("metadata") or {}).get("uid", ""))
    return BoundObject(kind, name, uid), node


def check_body(body: Mapping[str, Any], name: str, namespace: str) -> None:
    """What upstream's decoder and TokenREST check before issuing: Go types (400 `TokenRequest in version "v1"
    cannot be handled as a TokenRequest: json: ...`), kind and apiVersion, and a name or namespace that, if
    given, is the service account's (422)."""
    problem = type_errors("io.k8s.api.authentication.v1.TokenRequest", body)
    if problem:
        raise messages.decode_error("TokenRequest", "v1", problem)
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if kind and kind != "TokenRequest":
        raise bad_request(f"the kind in the data ({kind}) does not match the expected kind (TokenRequest)")
    if api_version and api_version != "authentication.k8s.io/v1":
        raise bad_request(f"the API version in the data ({api_version}) does not match the expected API version "
                          "(authentication.k8s.io/v1)")
    meta = body.get("metadata") or {}
    if meta.get("name") and meta["name"] != name:
        raise _invalid(name, [invalid("metadata.name", meta["name"], "must match the service account name if "
                                                                      "specified")])
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise _invalid(name, [invalid("metadata.namespace", meta["namespace"], "must match the service account "
                                                                                "namespace if specified")])


def token_request(body: Mapping[str, Any], service_account: Mapping[str, Any], tokens: ServiceAccountTokens,
                  get_object: ObjectGetter | None = None, now: dt.datetime | None = None) -> dict[str, Any]:
    """Issue a token for `service_account` as asked by the TokenRequest `body`; return the answered object."""
    sa_meta = service_account.get("metadata") or {}
    name, namespace, sa_uid = sa_meta.get("name", ""), sa_meta.get("namespace", ""), sa_meta.get("uid", "")
    check_body(body, name, namespace)
    spec = dict(body.get("spec") or {})
    seconds = spec.get("expirationSeconds")
    seconds = DEFAULT_EXPIRATION if seconds is None else seconds
    errors: list[FieldError] = []
    if not isinstance(seconds, int) or seconds < MIN_EXPIRATION:
        errors.append(invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
    elif seconds > MAX_EXPIRATION:
        errors.append(invalid("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds"))
    ref = spec.get("boundObjectRef")
    if ref is not None and ref.get("kind") not in BINDABLE:
        errors.append(FieldError("FieldValueNotSupported", "spec.boundObjectRef.kind", "", ref.get("kind"), True,
                                 tuple(BINDABLE)))
    if errors:
        raise _invalid(name, errors)
    bound, node = _bound(ref, name, namespace, get_object) if ref is not None else (None, None)
    audiences = list(spec.get("audiences") or tokens.api_audiences)
    now = now or dt.datetime.now(dt.UTC)
    issued = tokens.issue_token(namespace, name, sa_uid, audiences=audiences, expiration_seconds=seconds,
                                bound=bound, node=node, now=now)
    metadata = {**(body.get("metadata") or {}), "name": name, "namespace": namespace,
                "creationTimestamp": format_time(now)}
    return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "metadata": metadata,
            "spec": {"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": ref},
            "status": {"token": issued.token, "expirationTimestamp": format_time(issued.expires_at)}}
