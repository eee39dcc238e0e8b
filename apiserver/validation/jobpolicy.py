"""The policies of an Indexed or failing Job, checked as upstream's batch validation checks them:
`podFailurePolicy` rules, `successPolicy` rules and the index interval strings ("0-2,5") they and the status use.

Go renders a policy that is a bad value with `%#v` (`batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{...}}`);
`go_success_policy` and `go_pod_failure_policy` print them alike, with a made-up address for set pointers.
"""

from __future__ import annotations

import re
from typing import Any

from mini_kube.apiserver.gofmt import go_ptr, go_quote
from mini_kube.apiserver.validation.errs import (
    FieldError,
    duplicate,
    each,
    invalid,
    nonnegative,
    not_supported,
    raw,
    required,
    too_long,
    too_many,
)
from mini_kube.machinery.names import is_qualified_name

Obj = dict[str, Any]

ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
OPERATORS = ("In", "NotIn")
CONDITION_STATUSES = ("False", "True", "Unknown")
MAX_POD_FAILURE_RULES = 20
MAX_EXIT_CODES = 255
MAX_CONDITION_PATTERNS = 20
MAX_SUCCESS_RULES = 20
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
_INTEGER = re.compile(r"[+-]?[0-9]+")  # what strconv.Atoi reads


def _go_list(values: list[str]) -> str:
    """`%q` of a []string: `["a" "b"]`."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def _go_int32s(values: list[int] | None) -> str:
    if values is None:
        return "[]int32(nil)"
    return "[]int32{" + ", ".join(str(v) for v in values) + "}"


# -- index intervals ------------------------------------------------------------------------------------------
def _interval(text: str, completions: int) -> tuple[int, int]:
    """parseIndexInterval: "3" or "3-5", both ends below `completions`; ValueError with upstream's words."""
    limits = text.split("-")
    if len(limits) > 2:
        raise ValueError(f"the fragment {go_quote(text)} violates the requirement that an index interval can have "
                         "at most two parts separated by '-'")
    first = _index(limits[0], completions)
    if len(limits) == 1:
        return first, first
    last = _index(limits[1], completions)
    if first >= last:
        raise ValueError(f"non-increasing order, previous: {first}, current: {last}")
    return first, last


def _index(text: str, completions: int) -> int:
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"cannot convert string to integer for index: {go_quote(text)}")
    value = int(text)
    if value >= completions:
        raise ValueError(f"too large index: {go_quote(text)}")
    return value


def count_indexes(text: str, completions: int) -> int:
    """validateIndexesFormat: how many indexes an interval string names (ValueError when malformed)."""
    if not text:
        return 0
    total, last = 0, None
    for part in text.split(","):
        first, end = _interval(part, completions)
        if last is not None and last >= first:
            raise ValueError(f"non-increasing order, previous: {last}, current: {first}")
        total += end - first + 1
        last = end
    return total


# -- podFailurePolicy -----------------------------------------------------------------------------------------
def validate_pod_failure_policy(spec: Obj, path: str) -> list[FieldError]:
    """validatePodFailurePolicy: at most 20 rules, each with one known action and exactly one requirement."""
    policy = spec.get("podFailurePolicy") or {}
    rules = policy.get("rules") or []
    errs: list[FieldError] = []
    if len(rules) > MAX_POD_FAILURE_RULES:
        errs.append(too_many(f"{path}.rules", len(rules), MAX_POD_FAILURE_RULES))
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    names = {c.get("name") for c in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or [])}
    for i, rule in enumerate(rules):
        errs += _failure_rule(spec, rule or {}, f"{path}.rules[{i}]", names)
    return errs


def _failure_rule(spec: Obj, rule: Obj, path: str, names: set[Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    action = rule.get("action") or ""
    if not action:
        errs.append(required(f"{path}.action", f"valid values: {_go_list(list(ACTIONS))}"))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(invalid(f"{path}.action", action, "requires the backoffLimitPerIndex to be set"))
    elif action not in ACTIONS:
        errs.append(not_supported(f"{path}.action", action, ACTIONS))
    exit_codes, patterns = rule.get("onExitCodes"), rule.get("onPodConditions") or []
    if exit_codes is not None:
        errs += _exit_codes(exit_codes, f"{path}.onExitCodes", names)
    if patterns:
        errs += _pod_conditions(patterns, f"{path}.onPodConditions")
    if exit_codes is not None and patterns:
        errs.append(FieldError("FieldValueInvalid", path,
                               "specifying both OnExitCodes and OnPodConditions is not supported"))
    if exit_codes is None and not patterns:
        errs.append(FieldError("FieldValueInvalid", path,
                               "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _pod_conditions(patterns: list[Obj], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(patterns) > MAX_CONDITION_PATTERNS:
        errs.append(too_many(path, len(patterns), MAX_CONDITION_PATTERNS))
    for j, pattern in enumerate(patterns):
        kind, status = str((pattern or {}).get("type") or ""), (pattern or {}).get("status") or ""
        errs += each(f"{path}[{j}].type", kind, is_qualified_name(kind))
        if not status:
            errs.append(required(f"{path}[{j}].status", f"valid values: {_go_list(list(CONDITION_STATUSES))}"))
        elif status not in CONDITION_STATUSES:
            errs.append(not_supported(f"{path}[{j}].status", status, CONDITION_STATUSES))
    return errs


def _exit_codes(requirement: Obj, path: str, names: set[Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    operator = requirement.get("operator") or ""
    if not operator:
        errs.append(required(f"{path}.operator", f"valid values: {_go_list(list(OPERATORS))}"))
    elif operator not in OPERATORS:
        errs.append(not_supported(f"{path}.operator", operator, OPERATORS))
    container = requirement.get("containerName")
    if container is not None and container not in names:
        errs.append(invalid(f"{path}.containerName", container,
                            "must be one of the container or initContainer names in the pod template"))
    values = requirement.get("values")
    if not values:
        errs.append(raw("FieldValueInvalid", f"{path}.values", _go_int32s(values), "at least one value is required"))
    elif len(values) > MAX_EXIT_CODES:
        errs.append(too_many(f"{path}.values", len(values), MAX_EXIT_CODES))
    seen: set[int] = set()
    for j, value in enumerate(values or ()):
        if operator == "In" and value == 0:
            errs.append(invalid(f"{path}.values[{j}]", value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(duplicate(f"{path}.values[{j}]", value))
        seen.add(value)
    if any(a > b for a, b in zip(values or (), (values or ())[1:], strict=False)):
        errs.append(raw("FieldValueInvalid", f"{path}.values", _go_int32s(values), "must be ordered"))
    return errs


# -- successPolicy --------------------------------------------------------------------------------------------
def validate_success_policy(spec: Obj, path: str) -> list[FieldError]:
    """validateSuccessPolicy (the Job is Indexed, so completions is set)."""
    rules = (spec.get("successPolicy") or {}).get("rules") or []
    errs: list[FieldError] = []
    if not rules:
        errs.append(required(f"{path}.rules", "at least one rules must be specified when the successPolicy is "
                                              "specified"))
    if len(rules) > MAX_SUCCESS_RULES:
        errs.append(too_many(f"{path}.rules", len(rules), MAX_SUCCESS_RULES))
    completions = int(spec.get("completions") or 0)
    for i, rule in enumerate(rules):
        errs += _success_rule(rule or {}, completions, f"{path}.rules[{i}]")
    return errs


def _success_rule(rule: Obj, completions: int, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
    if indexes is None and count is None:
        errs.append(required(path, "at least one of succeededCount or succeededIndexes must be specified"))
    total = 0
    if indexes is not None:
        if len(indexes) > MAX_SUCCEEDED_INDEXES_LENGTH:
            errs.append(too_long(f"{path}.succeededIndexes", MAX_SUCCEEDED_INDEXES_LENGTH))
        try:
            total = count_indexes(indexes, completions)
        except ValueError as e:
            errs.append(invalid(f"{path}.succeededIndexes", indexes, f"error parsing succeededIndexes: {e}"))
    if count is not None:
        at = f"{path}.succeededCount"
        errs += nonnegative(at, count)
        if count > completions:
            errs.append(invalid(at, count, f"must be less than or equal to {completions} (the number of specified "
                                           "completions)"))
        if indexes is not None and count > total:
            errs.append(invalid(at, count, f"must be less than or equal to {total} (the number of indexes in the "
                                           "specified succeededIndexes field)"))
    return errs


# -- Go's %#v of the policies ---------------------------------------------------------------------------------
def go_success_policy(policy: Obj) -> str:
    rules = policy.get("rules")
    items = "(nil)" if rules is None else "{" + ", ".join(
        "batch.SuccessPolicyRule{SucceededIndexes:" + go_ptr("string", (r or {}).get("succeededIndexes")) +
        ", SucceededCount:" + go_ptr("int32", (r or {}).get("succeededCount")) + "}" for r in rules) + "}"
    return f"batch.SuccessPolicy{{Rules:[]batch.SuccessPolicyRule{items}}}"


def go_pod_failure_policy(policy: Obj) -> str:
    rules = policy.get("rules")
    items = "(nil)" if rules is None else "{" + ", ".join(_go_failure_rule(r or {}) for r in rules) + "}"
    return f"batch.PodFailurePolicy{{Rules:[]batch.PodFailurePolicyRule{items}}}"


def _go_failure_rule(rule: Obj) -> str:
    patterns = rule.get("onPodConditions")
    kind = "batch.PodFailurePolicyOnPodConditionsPattern"
    shown = f"[]{kind}(nil)" if patterns is None else f"[]{kind}{{" + ", ".join(
        f"{kind}{{Type:{go_quote(str((p or {}).get('type') or ''))}, Status:{go_quote(str((p or {}).get('status') or ''))}}}"
        for p in patterns) + "}"
    return (f"batch.PodFailurePolicyRule{{Action:{go_quote(str(rule.get('action') or ''))}, "
            f"OnExitCodes:{go_ptr('batch.PodFailurePolicyOnExitCodesRequirement', rule.get('onExitCodes'))}, "
            f"OnPodConditions:{shown}}}")
