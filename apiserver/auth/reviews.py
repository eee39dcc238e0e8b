"""Answers of the review APIs: SelfSubjectReview (`kubectl auth whoami`), Self/Local/SubjectAccessReview
(`kubectl auth can-i`) and SelfSubjectRulesReview (`kubectl auth can-i --list`).

Each takes the POSTed object (a dict) and returns the object to send back with its `status` filled in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Protocol

from mini_kube.apiserver.auth.rbac import Attributes, AttributesLike, Decision, Rule, aggregate_errors
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.errors import FieldError, StatusError, bad_request, invalid
from mini_kube.machinery import times
from mini_kube.machinery.times import format_time

AUTHZ_GROUP = "authorization.k8s.io"
AUTHZ_VERSION = f"{AUTHZ_GROUP}/v1"
AUTHN_VERSION = "authentication.k8s.io/v1"


class Authorizer(Protocol):
    def authorize(self, user: UserInfo, attrs: AttributesLike) -> Decision: ...
    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]: ...


def self_subject_review(user: UserInfo, now: dt.datetime | None = None) -> dict[str, Any]:
    """authentication.k8s.io/v1 SelfSubjectReview: who the server thinks you are."""
    return {"kind": "SelfSubjectReview", "apiVersion": AUTHN_VERSION,
            "metadata": {"creationTimestamp": format_time(now or times.now())}, "status": {"userInfo": user.to_api()}}


def _invalid(kind: str, errors: list[FieldError]) -> StatusError:
    """`NewInvalid(authorization.Kind(kind), "", errs)`."""
    summary = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    causes = [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]
    return StatusError(422, "Invalid", f'{kind}.{AUTHZ_GROUP} "" is invalid: {summary}',
                       {"group": AUTHZ_GROUP, "kind": kind, "causes": causes})


def _spec_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    has_res, has_non = spec.get("resourceAttributes") is not None, spec.get("nonResourceAttributes") is not None
    if has_res and has_non:
        return [invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                        "cannot be specified in combination with resourceAttributes")]
    if not has_res and not has_non:
        return [invalid("spec.resourceAttributes", "null",
                        "exactly one of nonResourceAttributes or resourceAttributes must be specified")]
    return []


def attributes_from_spec(spec: Mapping[str, Any]) -> Attributes:
    """ResourceAttributesFrom / NonResourceAttributesFrom."""
    res = spec.get("resourceAttributes")
    if res is not None:
        return Attributes(res.get("verb", ""), res.get("group", ""), res.get("resource", ""),
                          res.get("subresource", ""), res.get("namespace", ""), res.get("name", ""),
                          api_version=res.get("version", ""))
    non = spec.get("nonResourceAttributes") or {}
    return Attributes(non.get("verb", ""), is_resource=False, path=non.get("path", ""))


def access_status(decision: Decision) -> dict[str, Any]:
    """SubjectAccessReviewStatus with Go's omitempty."""
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.denied:
        status["denied"] = True
    if decision.reason:
        status["reason"] = decision.reason
    if decision.error:
        status["evaluationError"] = decision.error
    return status


def _answer(body: Mapping[str, Any], kind: str, status: dict[str, Any]) -> dict[str, Any]:
    metadata = dict(body.get("metadata") or {})
    metadata.setdefault("creationTimestamp", None)
    return {"kind": kind, "apiVersion": AUTHZ_VERSION, "metadata": metadata, "spec": dict(body.get("spec") or {}),
            "status": status}


def self_subject_access_review(body: Mapping[str, Any], user: UserInfo, authorizer: Authorizer) -> dict[str, Any]:
    """Can *I* do this? Checked as the requesting (possibly impersonated) user."""
    spec = body.get("spec") or {}
    errors = _spec_errors(spec)
    if errors:
        raise _invalid("SelfSubjectAccessReview", errors)
    decision = authorizer.authorize(user, attributes_from_spec(spec))
    return _answer(body, "SelfSubjectAccessReview", access_status(decision))


def _subject(spec: Mapping[str, Any]) -> UserInfo:
    extra = {k: tuple(v or ()) for k, v in (spec.get("extra") or {}).items()}
    return UserInfo(spec.get("user", ""), spec.get("uid", ""), tuple(spec.get("groups") or ()), extra)


def subject_access_review(body: Mapping[str, Any], authorizer: Authorizer) -> dict[str, Any]:
    """Can user/groups in `spec` do this? The groups are taken as given (nothing added)."""
    spec = body.get("spec") or {}
    errors = _spec_errors(spec)
    if not spec.get("user") and not spec.get("groups"):
        errors.append(invalid("spec.user", spec.get("user", ""), "at least one of user or group must be specified"))
    if errors:
        raise _invalid("SubjectAccessReview", errors)
    decision = authorizer.authorize(_subject(spec), attributes_from_spec(spec))
    return _answer(body, "SubjectAccessReview", access_status(decision))


def local_subject_access_review(body: Mapping[str, Any], namespace: str, authorizer: Authorizer) -> dict[str, Any]:
    """A SubjectAccessReview confined to the namespace of the request URL."""
    if not namespace:
        raise bad_request(f"namespace is required on this type: {namespace}")
    metadata = dict(body.get("metadata") or {})
    metadata.setdefault("namespace", namespace)
    spec = body.get("spec") or {}
    errors = _spec_errors(spec)
    if not spec.get("user") and not spec.get("groups"):
        errors.append(invalid("spec.user", spec.get("user", ""), "at least one of user or group must be specified"))
    res = spec.get("resourceAttributes")
    if res is not None and res.get("namespace", "") != metadata["namespace"]:
        errors.append(invalid("spec.resourceAttributes.namespace", res.get("namespace", ""),
                              "must match metadata.namespace"))
    if spec.get("nonResourceAttributes") is not None:
        errors.append(invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                              "disallowed on this kind of request"))
    if errors:
        raise _invalid("LocalSubjectAccessReview", errors)
    if metadata["namespace"] != namespace:
        raise bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    decision = authorizer.authorize(_subject(spec), attributes_from_spec(spec))
    return _answer({**body, "metadata": metadata}, "LocalSubjectAccessReview", access_status(decision))


def rule_infos(rules: list[Rule]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split policy rules into SSRR resourceRules and nonResourceRules."""
    resource_rules: list[dict[str, Any]] = []
    non_resource_rules: list[dict[str, Any]] = []
    for r in rules:
        if r.get("resources"):
            out: dict[str, Any] = {"verbs": list(r.get("verbs") or [])}
            if r.get("apiGroups"):
                out["apiGroups"] = list(r["apiGroups"])
            out["resources"] = list(r["resources"])
            if r.get("resourceNames"):
                out["resourceNames"] = list(r["resourceNames"])
            resource_rules.append(out)
        if r.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": list(r.get("verbs") or []), "nonResourceURLs": list(r["nonResourceURLs"])})
    return resource_rules, non_resource_rules


def self_subject_rules_review(body: Mapping[str, Any], user: UserInfo, authorizer: Authorizer) -> dict[str, Any]:
    """Everything I may do in `spec.namespace` (as far as RBAC can enumerate it)."""
    namespace = (body.get("spec") or {}).get("namespace", "")
    if not namespace:
        raise bad_request("no namespace on request")
    rules, errors = authorizer.rules_for(user, namespace)
    resource_rules, non_resource_rules = rule_infos(rules)
    status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                              "incomplete": False}
    if errors:
        status["evaluationError"] = aggregate_errors(errors)
    return {"kind": "SelfSubjectRulesReview", "apiVersion": AUTHZ_VERSION, "metadata": {"creationTimestamp": None},
            "spec": {}, "status": status}
