"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (v1): CEL validations run in-process.

Mirrors k8s.io/apiserver/pkg/admission/plugin/policy/validating: a policy whose matchConstraints match the
request is evaluated once per binding that matches (and once per parameter object its paramRef selects);
a failed validation acts as the binding's validationActions say: Deny refuses the request
(`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>`,
with the validation's reason, Invalid by default), Warn adds a Warning header, Audit is recorded nowhere yet.
Expressions that fail at run time, and bindings that cannot be configured, deny unless failurePolicy is Ignore.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from mini_kube.machinery.labels import matches as selector_matches

from ..errors import StatusError
from ..registry.reader import ObjectReader
from . import review
from .chain import AdmissionPlugin, Attributes
from .expressions import Activation, EvaluationError, Expression, compile_expression
from .matching import (
    ADMISSION_GROUP,
    Match,
    is_exempt,
    match_rules,
    namespace_object,
    namespace_selected,
    object_selected,
)
from .sources import CollectionWatch, Compiled

log = logging.getLogger("mini-kube.admission")
REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}
MAX_MESSAGE_BYTES = 5000
NAMESPACE_META = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                  "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers")


class ConfigError(Exception):
    """A policy or binding that cannot be applied to this request."""


@dataclass(slots=True)
class Validation:
    expression: Expression
    message: str = ""
    message_expression: Expression | None = None
    reason: str = ""


@dataclass(slots=True)
class Policy:
    """One compiled ValidatingAdmissionPolicy and the bindings that name it."""

    name: str
    spec: dict[str, Any]
    variables: dict[str, Expression] = field(default_factory=dict)
    conditions: list[Expression] = field(default_factory=list)
    validations: list[Validation] = field(default_factory=list)
    bindings: list[dict[str, Any]] = field(default_factory=list)

    @property
    def fails_closed(self) -> bool:
        return self.spec.get("failurePolicy") != "Ignore"


@dataclass(slots=True)
class Decision:
    message: str
    reason: str = ""
    binding: str | None = None


def compile_policy(obj: dict[str, Any]) -> Policy:
    spec = obj.get("spec") or {}
    params = spec.get("paramKind") is not None
    policy = Policy(obj["metadata"].get("name", ""), spec)
    for variable in spec.get("variables") or ():
        policy.variables[variable.get("name", "")] = compile_expression(
            variable.get("expression", ""), params=params, variables=list(policy.variables))
    names = list(policy.variables)
    policy.conditions = [compile_expression(c.get("expression", ""), params=params, variables=names)
                         for c in spec.get("matchConditions") or ()]
    for v in spec.get("validations") or ():
        message_expression = v.get("messageExpression")
        policy.validations.append(Validation(
            compile_expression(v.get("expression", ""), params=params, variables=names), v.get("message") or "",
            compile_expression(message_expression, params=params, variables=names) if message_expression else None,
            v.get("reason") or ""))
    return policy


def compile_policies(policies: list[dict[str, Any]], bindings: list[dict[str, Any]]) -> list[Policy]:
    compiled = {p.name: p for p in (compile_policy(obj) for obj in policies)}
    for binding in sorted(bindings, key=lambda b: b["metadata"].get("name", "")):
        policy = compiled.get((binding.get("spec") or {}).get("policyName", ""))
        if policy is not None:
            policy.bindings.append(binding)
    return [compiled[name] for name in sorted(compiled)]


def match_resources(resources: dict[str, Any], attrs: Attributes) -> Match | None:
    """MatchResources (policy matchConstraints or binding matchResources) against the request."""
    policy = resources.get("matchPolicy") or "Exact"
    if match_rules(resources.get("excludeResourceRules"), policy, attrs, named=True) is not None:
        return None
    rules = resources.get("resourceRules")
    if rules:
        match = match_rules(rules, policy, attrs, named=True)
    else:
        res = attrs.resource
        match = Match((res.group, res.version, res.plural), attrs.kind)
    if match is None:
        return None
    if not namespace_selected(resources.get("namespaceSelector"), attrs):
        return None
    obj, old = review.versioned_objects(attrs, match)
    return match if object_selected(resources.get("objectSelector"), obj, old) else None


def _param_kind_text(kind: dict[str, Any]) -> str:
    group, _, version = str(kind.get("apiVersion") or "").rpartition("/")
    return f"{group}/{version}, Kind={kind.get('kind') or ''}"


def collect_params(registry: ObjectReader, policy: Policy, binding: dict[str, Any],
                   attrs: Attributes) -> list[dict[str, Any] | None]:
    """The parameter objects one binding selects ([None] when the policy takes no parameters)."""
    kind, ref = policy.spec.get("paramKind"), (binding.get("spec") or {}).get("paramRef")
    if kind is None or ref is None:
        return [None]
    group, _, version = str(kind.get("apiVersion") or "").rpartition("/")
    res = registry.resources.by_kind(group, version, kind.get("kind") or "")
    if res is None:
        raise ConfigError(f"failed to configure policy: failed to find resource referenced by paramKind: "
                          f"'{_param_kind_text(kind)}'")
    namespace = None
    if res.namespaced:
        namespace = ref.get("namespace") or attrs.request_namespace
        if not namespace:
            raise ConfigError("failed to configure binding: cannot use namespaced paramRef in policy binding that "
                              "matches cluster-scoped resources")
    elif ref.get("namespace"):
        raise ConfigError("failed to configure binding: paramRef.namespace must not be provided for a "
                          "cluster-scoped `paramKind`")
    if ref.get("name"):
        entry = registry.find(res, namespace, ref["name"])
        params = [entry.obj] if entry is not None else []
    elif ref.get("selector") is not None:
        params = [e.obj for e in registry.cache.list(res.key_prefix, namespace)
                  if selector_matches(ref["selector"], (e.obj.get("metadata") or {}).get("labels"))]
    else:
        raise ConfigError("failed to configure binding: one of name or selector must be provided")
    if not params and ref.get("parameterNotFoundAction") == "Deny":
        raise ConfigError("failed to configure binding: no params found for policy binding with `Deny` "
                          "parameterNotFoundAction")
    return list(params)


def _namespace_view(attrs: Attributes) -> dict[str, Any] | None:
    res = attrs.resource
    if not attrs.request_namespace or (res.group == "" and res.plural == "namespaces"):
        return None
    namespace = namespace_object(attrs)
    if namespace is None:
        return None
    meta = namespace.get("metadata") or {}
    return {"metadata": {k: meta[k] for k in NAMESPACE_META if k in meta},
            "spec": namespace.get("spec") or {}, "status": namespace.get("status") or {}}


def _message(activation: Activation, validation: Validation) -> str:
    if validation.message_expression is not None:
        try:
            value = activation.evaluate(validation.message_expression)
        except EvaluationError:
            value = None
        if isinstance(value, str):
            text = value.strip()
            if text and "\n" not in text and len(text.encode()) <= MAX_MESSAGE_BYTES:
                return text
    if validation.message.strip():
        return validation.message.strip()
    return f"failed expression: {validation.expression.source.strip()}"


def evaluate(policy: Policy, attrs: Attributes, match: Match, param: dict[str, Any] | None,
             namespace: dict[str, Any] | None) -> list[Decision]:
    """The failed validations (and, failing closed, the errors) of one policy/binding/param evaluation."""
    obj, old = review.versioned_objects(attrs, match)
    activation = Activation({"object": obj, "oldObject": old, "params": param, "namespaceObject": namespace,
                             "authorizer": None, "request": review.admission_request(attrs, match, objects=False)},
                            policy.variables)
    errors: list[str] = []
    for condition in policy.conditions:
        try:
            if activation.evaluate(condition) is False:
                return []
        except EvaluationError as exc:
            errors.append(str(exc))
    if errors:
        text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        return [Decision(text)] if policy.fails_closed else []
    decisions = []
    for validation in policy.validations:
        try:
            result = activation.evaluate(validation.expression)
        except EvaluationError as exc:
            if policy.fails_closed:
                decisions.append(Decision(str(exc)))
            continue
        if result is not True:
            decisions.append(Decision(_message(activation, validation), validation.reason or "Invalid"))
    return decisions


def denied(attrs: Attributes, policy: str, decision: Decision) -> StatusError:
    """The Status a denying policy produces (admission.NewForbidden with the validation's reason and code)."""
    if decision.binding is not None:
        text = f"ValidatingAdmissionPolicy '{policy}' with binding '{decision.binding}' denied request: " \
               f"{decision.message}"
    else:
        text = f"ValidatingAdmissionPolicy '{policy}' denied request: {decision.message}"
    res = attrs.resource
    name = attrs.name
    message = f'{res.group_resource} "{name}" is forbidden: {text}' if name else \
        f"{res.group_resource} is forbidden: {text}"
    reason = decision.reason or "Invalid"
    details: dict[str, Any] = {"name": name} if name else {}
    if res.group:
        details["group"] = res.group
    details["kind"] = res.plural
    details["causes"] = [{"message": text}]
    return StatusError(REASON_CODES.get(reason, 422), reason, message, details)


class ValidatingAdmissionPolicyPlugin(AdmissionPlugin):
    name = "ValidatingAdmissionPolicy"

    def __init__(self, registry: ObjectReader) -> None:
        self.registry = registry
        policies = registry.resources.lookup(ADMISSION_GROUP, "v1", "validatingadmissionpolicies")
        bindings = registry.resources.lookup(ADMISSION_GROUP, "v1", "validatingadmissionpolicybindings")
        assert policies is not None and bindings is not None
        watches = [CollectionWatch(registry.cache, policies.key_prefix),
                   CollectionWatch(registry.cache, bindings.key_prefix)]
        self.policies = Compiled(watches, lambda: compile_policies(watches[0].objects(), watches[1].objects()))

    def handles(self, attrs: Attributes) -> bool:
        return attrs.operation in self.operations and not is_exempt(attrs)

    async def validate(self, attrs: Attributes) -> None:
        policies = self.policies.get()
        if not policies:
            return
        denials: list[tuple[str, Decision]] = []
        for policy in policies:
            if not policy.bindings:
                continue
            try:
                match = match_resources(policy.spec.get("matchConstraints") or {}, attrs)
            except StatusError as exc:
                if policy.fails_closed:
                    denials.append((policy.name, Decision(f"failed to configure policy: {exc.message}")))
                continue
            if match is not None:
                self._bindings(policy, match, attrs, denials)
        if denials:
            raise denied(attrs, *denials[0])

    def _bindings(self, policy: Policy, match: Match, attrs: Attributes, denials: list[tuple[str, Decision]]) -> None:
        namespace: Any = False  # looked up once, on first use
        for binding in policy.bindings:
            spec, name = binding.get("spec") or {}, binding["metadata"].get("name", "")
            try:
                if spec.get("matchResources") is not None and match_resources(spec["matchResources"], attrs) is None:
                    continue
                params = collect_params(self.registry, policy, binding, attrs)
            except (ConfigError, StatusError) as exc:
                if policy.fails_closed:
                    text = exc.message if isinstance(exc, StatusError) else str(exc)
                    on_policy = text.startswith("failed to configure policy")
                    denials.append((policy.name, Decision(text, binding=None if on_policy else name)))
                continue
            if namespace is False:
                namespace = _namespace_view(attrs)
            actions = spec.get("validationActions") or ()
            for param in params:
                for decision in evaluate(policy, attrs, match, param, namespace):
                    decision.binding = name
                    if "Deny" in actions:
                        denials.append((policy.name, decision))
                    if "Warn" in actions:
                        attrs.options.warnings.append(f"Validation failed for ValidatingAdmissionPolicy "
                                                      f"'{policy.name}' with binding '{name}': {decision.message}")
                    if "Audit" in actions:
                        log.info("ValidatingAdmissionPolicy %s binding %s: %s", policy.name, name, decision.message)
