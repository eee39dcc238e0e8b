"""Validation of admissionregistration.k8s.io/v1 objects, so a bad configuration is refused and never stored.

Mirrors pkg/apis/admissionregistration/validation: webhook names are fully qualified and unique, each webhook
names exactly one of url (https, no query/fragment/user) or service, declares sideEffects (None or
NoneOnDryRun for new webhooks) and a known admissionReviewVersion, has sane rules and a 1-30 s timeout;
policies have matchConstraints with resourceRules, at least one validation, and CEL that compiles; bindings
name a policy and valid validationActions. `register()` adds these to the per-kind rule table.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mini_kube.machinery.names import is_dns1035_label, is_dns1123_subdomain, is_qualified_name

from ..validation.errs import FieldError, duplicate, forbidden, invalid, not_supported, required
from ..validation.meta import validate_label_selector
from .expressions import compile_expression

GROUP = "admissionregistration.k8s.io"
Obj = dict[str, Any]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
ALL_SIDE_EFFECTS = ["None", "NoneOnDryRun", "Some", "Unknown"]
NO_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
SCOPES = ["*", "Cluster", "Namespaced"]
ACTIONS = ["Audit", "Deny", "Warn"]
REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
URL_FORM = "; desired format: https://host[/path]"


def fully_qualified(path: str, name: str) -> list[FieldError]:
    if not name:
        return [required(path, "")]
    errs = is_dns1123_subdomain(name)
    if errs:
        return [invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def _wildcard_with_others(items: list[str]) -> bool:
    return len(items) > 1 and "*" in items


def validate_resources(resources: list[str], path: str, subresources: bool = True) -> list[FieldError]:
    errs = [] if resources else [required(path, "")]
    with_sub, sub_with_any = set(), set()
    single = double = plain = False
    for i, entry in enumerate(resources):
        if not entry:
            errs.append(required(f"{path}[{i}]", ""))
            continue
        if not subresources and "/" in entry:
            errs.append(invalid(f"{path}[{i}]", entry, "must not specify subresources"))
            continue
        double |= entry == "*/*"
        single |= entry == "*"
        res, slash, sub = entry.partition("/")
        if not slash:
            plain = entry != "*"
            continue
        if res in with_sub:
            errs.append(invalid(f"{path}[{i}]", entry, f"if '{res}/*' is present, must not specify {entry}"))
        if sub in sub_with_any:
            errs.append(invalid(f"{path}[{i}]", entry, f"if '*/{sub}' is present, must not specify {entry}"))
        if sub == "*":
            with_sub.add(res)
        if res == "*":
            sub_with_any.add(sub)
    if len(resources) > 1 and double:
        errs.append(invalid(path, resources, "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(invalid(path, resources, "if '*' is present, must not specify other resources without "
                                             "subresources"))
    return errs


def validate_rule(rule: Obj, path: str) -> list[FieldError]:
    """A RuleWithOperations (or NamedRuleWithOperations)."""
    errs: list[FieldError] = []
    operations = rule.get("operations") or []
    if not operations:
        errs.append(required(f"{path}.operations", ""))
    if _wildcard_with_others(operations):
        errs.append(invalid(f"{path}.operations", operations, "if '*' is present, must not specify other operations"))
    errs += [not_supported(f"{path}.operations[{i}]", op, OPERATIONS) for i, op in enumerate(operations)
             if op not in OPERATIONS]
    groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
    if not groups:
        errs.append(required(f"{path}.apiGroups", ""))
    if _wildcard_with_others(groups):
        errs.append(invalid(f"{path}.apiGroups", groups, "if '*' is present, must not specify other API groups"))
    if not versions:
        errs.append(required(f"{path}.apiVersions", ""))
    if _wildcard_with_others(versions):
        errs.append(invalid(f"{path}.apiVersions", versions, "if '*' is present, must not specify other API versions"))
    errs += [required(f"{path}.apiVersions[{i}]", "") for i, v in enumerate(versions) if not v]
    errs += validate_resources(rule.get("resources") or [], f"{path}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(not_supported(f"{path}.scope", scope, SCOPES))
    return errs


def validate_url(path: str, url: str) -> list[FieldError]:
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return [required(path, f"url must be a valid URL: {exc}{URL_FORM}")]
    errs = []
    if parts.scheme != "https":
        errs.append(invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + URL_FORM))
    if not parts.netloc:
        errs.append(invalid(path, "", "host must be specified" + URL_FORM))
    if "@" in parts.netloc:
        errs.append(invalid(path, parts.netloc.rpartition("@")[0], "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def validate_service(path: str, service: Obj) -> list[FieldError]:
    errs = []
    if not service.get("name"):
        errs.append(required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        errs.append(required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if url_path and url_path != "/" and not url_path.startswith("/"):
        errs.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
    return errs


def validate_client_config(path: str, config: Obj) -> list[FieldError]:
    if bool(config.get("url")) == bool(config.get("service")):
        return [required(path, "exactly one of url or service is required")]
    if config.get("url"):
        return validate_url(f"{path}.url", config["url"])
    return validate_service(f"{path}.service", config["service"])


def validate_conditions(conditions: list[Obj], path: str, params: bool = False,
                        variables: list[str] | None = None) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        at, name, expression = f"{path}[{i}]", condition.get("name") or "", (condition.get("expression") or "")
        if not expression.strip():
            errs.append(required(f"{at}.expression", ""))
        else:
            errs += _expression_errors(f"{at}.expression", expression, params, variables or [])
        if not name:
            errs.append(required(f"{at}.name", ""))
        else:
            errs += [invalid(f"{at}.name", name, msg) for msg in is_qualified_name(name)]
            if name in seen:
                errs.append(duplicate(f"{at}.name", name))
            seen.add(name)
    return errs


def _expression_errors(path: str, source: str, params: bool, variables: list[str]) -> list[FieldError]:
    compiled = compile_expression(source, params=params, variables=variables)
    return [invalid(path, source, compiled.error)] if compiled.error else []


def _review_versions(versions: list[str], path: str, strict: bool) -> list[FieldError]:
    if not versions:
        return [required(path, "must specify one of v1, v1beta1")]
    errs, seen = [], set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += [invalid(f"{path}[{i}]", version, msg) for msg in is_dns1035_label(version)]
    if strict and not seen & {"v1", "v1beta1"}:
        errs.append(invalid(path, versions, "must include at least one of v1, v1beta1"))
    return errs


def validate_webhook(hook: Obj, path: str, mutating: bool, side_effects: list[str]) -> list[FieldError]:
    errs = fully_qualified(f"{path}.name", hook.get("name") or "")
    for i, rule in enumerate(hook.get("rules") or ()):
        errs += validate_rule(rule, f"{path}.rules[{i}]")
    for key, allowed in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        if hook.get(key) is not None and hook[key] not in allowed:
            errs.append(not_supported(f"{path}.{key}", hook[key], allowed))
    effects = hook.get("sideEffects")
    if effects is None:
        errs.append(required(f"{path}.sideEffects", f"must specify one of {', '.join(side_effects)}"))
    elif effects not in side_effects:
        errs.append(not_supported(f"{path}.sideEffects", effects, side_effects))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or not 1 <= timeout <= 30):
        errs.append(invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds"))
    for key in ("namespaceSelector", "objectSelector"):
        errs += validate_label_selector(hook.get(key), f"{path}.{key}")
    if mutating and hook.get("reinvocationPolicy") not in (None, "Never", "IfNeeded"):
        errs.append(not_supported(f"{path}.reinvocationPolicy", hook["reinvocationPolicy"], ["IfNeeded", "Never"]))
    errs += validate_client_config(f"{path}.clientConfig", hook.get("clientConfig") or {})
    errs += validate_conditions(hook.get("matchConditions") or [], f"{path}.matchConditions")
    return errs


def _webhook_configuration(mutating: bool):  # noqa: ANN202 - (obj, old) -> errors
    def check(obj: Obj, old: Obj | None = None) -> list[FieldError]:
        old_hooks = (old or {}).get("webhooks") or []
        lenient = old is not None and any(h.get("sideEffects") not in NO_SIDE_EFFECTS for h in old_hooks)
        side_effects = ALL_SIDE_EFFECTS if lenient else NO_SIDE_EFFECTS
        errs: list[FieldError] = []
        names: set[str] = set()
        for i, hook in enumerate(obj.get("webhooks") or ()):
            path = f"webhooks[{i}]"
            errs += validate_webhook(hook, path, mutating, side_effects)
            errs += _review_versions(hook.get("admissionReviewVersions") or [], f"{path}.admissionReviewVersions",
                                     True)
            name = hook.get("name") or ""
            if name and name in names:
                errs.append(duplicate(f"{path}.name", name))
            names.add(name)
        return errs

    return check


def validate_match_resources(resources: Obj | None, path: str) -> list[FieldError]:
    if resources is None:
        return []
    errs: list[FieldError] = []
    policy = resources.get("matchPolicy")
    if policy is None:
        errs.append(required(f"{path}.matchPolicy", ""))
    elif policy not in MATCH_POLICIES:
        errs.append(not_supported(f"{path}.matchPolicy", policy, MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        if resources.get(key) is None:
            errs.append(required(f"{path}.{key}", ""))
        else:
            errs += validate_label_selector(resources[key], f"{path}.{key}")
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(resources.get(key) or ()):
            at = f"{path}.{key}[{i}]"
            names = rule.get("resourceNames") or []
            errs += [duplicate(f"{at}.resourceNames[{j}]", n) for j, n in enumerate(names) if n in names[:j]]
            errs += validate_rule(rule, at)
    return errs


def validate_policy(obj: Obj, old: Obj | None = None) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    failure = spec.get("failurePolicy")
    if failure is None:
        errs.append(required("spec.failurePolicy", ""))
    elif failure not in FAILURE_POLICIES:
        errs.append(not_supported("spec.failurePolicy", failure, FAILURE_POLICIES))
    kind = spec.get("paramKind")
    params = kind is not None
    if kind is not None:
        if not kind.get("apiVersion"):
            errs.append(required("spec.paramKind.apiVersion", ""))
        if not kind.get("kind"):
            errs.append(required("spec.paramKind.kind", ""))
    constraints = spec.get("matchConstraints")
    if constraints is None:
        errs.append(required("spec.matchConstraints", ""))
    else:
        errs += validate_match_resources(constraints, "spec.matchConstraints")
        if not constraints.get("resourceRules"):
            errs.append(required("spec.matchConstraints.resourceRules", ""))
    names: list[str] = []
    for i, variable in enumerate(spec.get("variables") or ()):
        at, name, expression = f"spec.variables[{i}]", variable.get("name") or "", variable.get("expression") or ""
        if not name.strip():
            errs.append(required(f"{at}.name", "name is not specified"))
        elif not name.isidentifier():
            errs.append(invalid(f"{at}.name", name, "name is not a valid CEL identifier"))
        if not expression.strip():
            errs.append(required(f"{at}.expression", "expression is not specified"))
        else:
            errs += _expression_errors(f"{at}.expression", expression, params, names)
        names.append(name)
    errs += validate_conditions(spec.get("matchConditions") or [], "spec.matchConditions", params, names)
    validations = spec.get("validations") or []
    if not validations and not spec.get("auditAnnotations"):
        message = "validations or auditAnnotations must contain at least one item"
        return [*errs, required("spec.validations", message), required("spec.auditAnnotations", message)]
    for i, validation in enumerate(validations):
        errs += _validation(validation, f"spec.validations[{i}]", params, names)
    return errs


def _validation(validation: Obj, path: str, params: bool, variables: list[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    expression = validation.get("expression") or ""
    if not expression.strip():
        errs.append(required(f"{path}.expression", "expression is not specified"))
    else:
        errs += _expression_errors(f"{path}.expression", expression, params, variables)
    message_expression = validation.get("messageExpression")
    if message_expression is not None and message_expression != "":
        if not message_expression.strip():
            errs.append(invalid(f"{path}.messageExpression", message_expression, "must be non-empty if specified"))
        else:
            errs += _expression_errors(f"{path}.messageExpression", message_expression, params, variables)
    message = validation.get("message")
    if message and not message.strip():
        errs.append(invalid(f"{path}.message", message, "message must be non-empty if specified"))
    elif message and "\n" in message.strip():
        errs.append(invalid(f"{path}.message", message, "message must not contain line breaks"))
    reason = validation.get("reason")
    if reason is not None and reason not in REASONS:
        errs.append(not_supported(f"{path}.reason", reason, REASONS))
    return errs


def validate_binding(obj: Obj, old: Obj | None = None) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    policy = spec.get("policyName") or ""
    if not policy:
        errs.append(required("spec.policyName", ""))
    else:
        errs += [invalid("spec.policyName", policy, msg) for msg in is_dns1123_subdomain(policy)]
    ref = spec.get("paramRef")
    if ref is not None:
        if ref.get("name") and ref.get("selector") is not None:
            errs.append(forbidden("spec.paramRef.name", "name and selector are mutually exclusive"))
        if ref.get("selector") is not None:
            errs += validate_label_selector(ref["selector"], "spec.paramRef.selector")
        if not ref.get("name") and ref.get("selector") is None:
            errs.append(required("spec.paramRef", "one of name or selector must be specified"))
        action = ref.get("parameterNotFoundAction")
        if not action:
            errs.append(required("spec.paramRef.parameterNotFoundAction", ""))
        elif action not in ("Allow", "Deny"):
            errs.append(not_supported("spec.paramRef.parameterNotFoundAction", action, ["Allow", "Deny"]))
    errs += validate_match_resources(spec.get("matchResources"), "spec.matchResouces")  # sic, upstream's path
    actions = spec.get("validationActions") or []
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in ACTIONS:
            errs.append(not_supported(f"spec.validationActions[{i}]", action, ACTIONS))
        if action in seen:
            errs.append(duplicate(f"spec.validationActions[{i}]", action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errs.append(invalid("spec.validationActions", actions, "must not contain both Deny and Warn (repeating the "
                            "same validation failure information in the API response and headers serves no purpose)"))
    if not seen:
        errs.append(required("spec.validationActions", "at least one validation action is required"))
    return errs


def register() -> None:
    """Add these kinds to the per-kind validation table (idempotent)."""
    from ..validation.kinds import RULES, Rules

    RULES.setdefault((GROUP, "ValidatingWebhookConfiguration"),
                     Rules(create=_webhook_configuration(False), update=_webhook_configuration(False)))
    RULES.setdefault((GROUP, "MutatingWebhookConfiguration"),
                     Rules(create=_webhook_configuration(True), update=_webhook_configuration(True)))
    RULES.setdefault((GROUP, "ValidatingAdmissionPolicy"), Rules(create=validate_policy, update=validate_policy))
    RULES.setdefault((GROUP, "ValidatingAdmissionPolicyBinding"),
                     Rules(create=validate_binding, update=validate_binding))
