"""Controllers: Deployment, ReplicaSet, StatefulSet, DaemonSet, ReplicationController (Jobs: `batch`).

Selectors must be non-empty and select the pod template's labels; replicas and counters are non-negative;
strategies and restart policies take their upstream values.
"""

from __future__ import annotations

import re
from typing import Any

from mini_kube.apiserver.validation.errs import (
    NEGATIVE,
    FieldError,
    forbidden,
    invalid,
    nonnegative,
    not_supported,
    raw,
    required,
)
from mini_kube.apiserver.validation.meta import (
    selector_is_empty,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from mini_kube.apiserver.validation.pods import validate_pod_template_spec
from mini_kube.machinery.labels import matches as selector_matches
from mini_kube.machinery.names import is_valid_percent

Obj = dict[str, Any]
NO_MATCH = "`selector` does not match template `labels`"
_PERCENT = re.compile(r"^[0-9]+%$")


def template_labels(template: Obj | None) -> dict[str, str]:
    """The labels of a Pod template."""
    return ((template or {}).get("metadata") or {}).get("labels") or {}


def _restart_policy(template: Obj | None) -> str:
    """The template's restartPolicy, `Always` when omitted (pod defaulting)."""
    return ((template or {}).get("spec") or {}).get("restartPolicy") or "Always"


def _go_int_or_string(value: Any) -> str:
    if isinstance(value, str):
        return f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"{value}"}}'
    return f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}'


def int_or_percent(value: Any, path: str) -> list[FieldError]:
    """ValidatePositiveIntOrPercent."""
    if isinstance(value, str):
        return [raw("FieldValueInvalid", path, _go_int_or_string(value), msg) for msg in is_valid_percent(value)]
    if isinstance(value, int) and value < 0:
        return [invalid(path, value, NEGATIVE)]
    return []


def _int_value(value: Any) -> int:
    """getIntOrPercentValue: a percentage's number, or the integer."""
    if isinstance(value, str):
        return int(value[:-1]) if _PERCENT.match(value) else 0
    return value if isinstance(value, int) else 0


def at_most_100(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, str) and _PERCENT.match(value) and int(value[:-1]) > 100:
        return [raw("FieldValueInvalid", path, _go_int_or_string(value), "must not be greater than 100%")]
    return []


def _selector(spec: Obj, path: str, kind: str) -> tuple[list[FieldError], bool]:
    """Required, valid and non-empty; returns errors and whether the selector could be used for matching."""
    selector = spec.get("selector")
    if selector is None:
        return [required(f"{path}.selector")], True  # a nil selector selects nothing: the template mismatches too
    errs = validate_label_selector(selector, f"{path}.selector")
    if selector_is_empty(selector):
        errs.append(raw("FieldValueInvalid", f"{path}.selector", go_label_selector(selector),
                        f"empty selector is invalid for {kind}"))
    return errs, not errs


def go_label_selector(selector: Obj) -> str:
    """A label selector as Go prints a v1.LabelSelector with %v (in upstream's messages)."""
    labels = selector.get("matchLabels")
    shown = "map[string]string(nil)" if labels is None else \
        "map[string]string{" + ", ".join(f'"{k}":"{labels[k]}"' for k in sorted(labels)) + "}"
    return f"v1.LabelSelector{{MatchLabels:{shown}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}}"


def _template_for_replicas(spec: Obj, path: str, usable: bool, kind: str) -> list[FieldError]:
    """ValidatePodTemplateSpecForReplicaSet: labels match, the pod template is valid, restartPolicy Always."""
    template = spec.get("template")
    at = f"{path}.template"
    if template is None:
        return [required(at)]
    errs: list[FieldError] = []
    selector = spec.get("selector")
    if usable and (selector is None or not selector_is_empty(selector)) and not selector_matches(selector,
                                                                                                template_labels(template)):
        errs.append(invalid(f"{at}.metadata.labels", template_labels(template), NO_MATCH))
    errs += validate_pod_template_spec(template, at)
    if _restart_policy(template) != "Always":
        errs.append(not_supported(f"{at}.spec.restartPolicy", _restart_policy(template), ("Always",)))
    if (template.get("spec") or {}).get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(f"{at}.spec.activeDeadlineSeconds", f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


def validate_replica_set(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs = nonnegative("spec.replicas", spec.get("replicas")) + nonnegative("spec.minReadySeconds",
                                                                            spec.get("minReadySeconds"))
    found, usable = _selector(spec, "spec", "deployment")
    return errs + found + _template_for_replicas(spec, "spec", usable, "ReplicaSet")


def _deployment_strategy(strategy: Obj | None) -> list[FieldError]:
    if strategy is None:
        return []
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    path = "spec.strategy"
    if kind == "Recreate":
        if rolling is not None:
            return [forbidden(f"{path}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if kind == "RollingUpdate":
        if rolling is None:
            return []
        at = f"{path}.rollingUpdate"
        unavailable, surge = rolling.get("maxUnavailable", "25%"), rolling.get("maxSurge", "25%")
        errs = int_or_percent(unavailable, f"{at}.maxUnavailable") + int_or_percent(surge, f"{at}.maxSurge")
        if _int_value(unavailable) == 0 and _int_value(surge) == 0:
            errs.append(raw("FieldValueInvalid", f"{at}.maxUnavailable", _go_int_or_string(unavailable),
                            "may not be 0 when `maxSurge` is 0"))
        return errs + at_most_100(unavailable, f"{at}.maxUnavailable")
    if kind is None:
        return []
    return [raw("FieldValueNotSupported", path, f'apps.DeploymentStrategy{{Type:"{kind}", RollingUpdate:(*apps.'
                                                 'RollingUpdateDeployment)(nil)}: supported values: "Recreate", '
                                                 '"RollingUpdate"')]


def validate_deployment(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs = nonnegative("spec.replicas", spec.get("replicas"))
    found, usable = _selector(spec, "spec", "deployment")
    errs += found + _template_for_replicas(spec, "spec", usable, "ReplicaSet")
    errs += _deployment_strategy(spec.get("strategy"))
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    errs += nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if deadline is not None:
        errs += nonnegative("spec.progressDeadlineSeconds", deadline)
        if deadline <= (spec.get("minReadySeconds") or 0):
            errs.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return errs


def validate_stateful_set(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    policy = spec.get("podManagementPolicy")
    if policy == "":
        errs.append(required("spec.podManagementPolicy"))
    elif policy is not None and policy not in ("OrderedReady", "Parallel"):
        errs.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    strategy: Obj = spec.get("updateStrategy") or {}
    kind = strategy.get("type")
    if kind == "OnDelete" and strategy.get("rollingUpdate") is not None:
        partition = strategy["rollingUpdate"].get("partition") or 0
        shown = f"apps.RollingUpdateStatefulSetStrategy{{Partition:{partition}, MaxUnavailable:(*intstr.IntOrString)(nil)}}"
        errs.append(raw("FieldValueInvalid", "spec.updateStrategy.rollingUpdate", shown,
                        "only allowed for updateStrategy 'RollingUpdate'"))
    elif kind == "RollingUpdate" and strategy.get("rollingUpdate") is not None:
        errs += nonnegative("spec.updateStrategy.rollingUpdate.partition", strategy["rollingUpdate"].get("partition"))
    elif kind not in (None, "OnDelete", "RollingUpdate"):
        errs.append(raw("FieldValueInvalid", "spec.updateStrategy",
                        f'apps.StatefulSetUpdateStrategy{{Type:"{kind}", RollingUpdate:(*apps.'
                        'RollingUpdateStatefulSetStrategy)(nil)}', "must be 'RollingUpdate' or 'OnDelete'"))
    for key in ("whenDeleted", "whenScaled"):
        value = (spec.get("persistentVolumeClaimRetentionPolicy") or {}).get(key)
        if value is not None and value not in ("Retain", "Delete"):
            errs.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{key}", value, ("Retain", "Delete")))
    errs += nonnegative("spec.replicas", spec.get("replicas"))
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    if spec.get("ordinals") is not None:
        errs += nonnegative("spec.ordinals.start", spec["ordinals"].get("start"))
    found, usable = _selector(spec, "spec", "statefulset")
    errs += found
    template = spec.get("template") or {}
    if usable and not selector_matches(spec.get("selector"), template_labels(template)):
        errs.append(invalid("spec.template.metadata.labels", template_labels(template), NO_MATCH))
    meta = template.get("metadata") or {}
    errs += validate_labels(meta.get("labels"), "spec.template.labels")
    errs += validate_annotations(meta.get("annotations"), "spec.template.annotations")
    if _restart_policy(template) != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", _restart_policy(template), ("Always",)))
    if (template.get("spec") or {}).get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                              "activeDeadlineSeconds in StatefulSet is not Supported"))
    return errs


STATEFUL_SET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                        "minReadySeconds")


def validate_stateful_set_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_stateful_set(new)
    strip = {k: v for k, v in (new.get("spec") or {}).items() if k not in STATEFUL_SET_MUTABLE}
    before = {k: v for k, v in (old.get("spec") or {}).items() if k not in STATEFUL_SET_MUTABLE}
    if strip != before:
        errs.append(forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                                      "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                                      "'minReadySeconds' are forbidden"))
    return errs


def validate_daemon_set(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs = validate_label_selector(spec.get("selector"), "spec.selector")
    template = spec.get("template") or {}
    selector = spec.get("selector")
    if not errs and not selector_matches(selector, template_labels(template)):
        errs.append(invalid("spec.template.metadata.labels", template_labels(template), NO_MATCH))
    if selector is not None and selector_is_empty(selector):
        errs.append(raw("FieldValueInvalid", "spec.selector", go_label_selector(selector),
                        "empty selector is invalid for daemonset"))
    errs += validate_pod_template_spec(template, "spec.template")
    if _restart_policy(template) != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", _restart_policy(template), ("Always",)))
    if (template.get("spec") or {}).get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                              "activeDeadlineSeconds in DaemonSet is not Supported"))
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    errs += nonnegative("spec.templateGeneration", spec.get("templateGeneration"))
    strategy = spec.get("updateStrategy")
    if strategy is not None:
        kind = strategy.get("type")
        if kind == "RollingUpdate" and strategy.get("rollingUpdate") is not None:
            at = "spec.updateStrategy.rollingUpdate"
            rolling = strategy["rollingUpdate"]
            unavailable, surge = rolling.get("maxUnavailable", 1), rolling.get("maxSurge", 0)
            errs += int_or_percent(unavailable, f"{at}.maxUnavailable") + int_or_percent(surge, f"{at}.maxSurge")
            errs += at_most_100(unavailable, f"{at}.maxUnavailable") + at_most_100(surge, f"{at}.maxSurge")
            if _int_value(unavailable) and _int_value(surge):
                errs.append(raw("FieldValueInvalid", f"{at}.maxSurge", _go_int_or_string(surge),
                                "may not be set when maxUnavailable is non-zero"))
            elif not _int_value(unavailable) and not _int_value(surge):
                errs.append(required(f"{at}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
        elif kind not in (None, "RollingUpdate", "OnDelete"):
            errs.append(raw("FieldValueNotSupported", "spec.updateStrategy",
                            f'apps.DaemonSetUpdateStrategy{{Type:"{kind}", RollingUpdate:(*apps.'
                            'RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"'))
    errs += nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    return errs


def validate_replication_controller(obj: Obj) -> list[FieldError]:
    """RC selectors are plain label maps; omitted, defaulting copies the template's labels."""
    spec = obj.get("spec") or {}
    template = spec.get("template")
    selector = spec.get("selector")
    if selector is None:
        selector = template_labels(template)
    errs = nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    if not selector:
        errs.append(required("spec.selector"))
    errs += nonnegative("spec.replicas", spec.get("replicas"))
    if template is None:
        return errs + [required("spec.template")]
    labels = template_labels(template)
    if selector and any(labels.get(k) != v for k, v in selector.items()):
        errs.append(invalid("spec.template.metadata.labels", labels, NO_MATCH))
    errs += validate_pod_template_spec(template, "spec.template")
    if _restart_policy(template) != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", _restart_policy(template), ("Always",)))
    if (template.get("spec") or {}).get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                              "activeDeadlineSeconds in ReplicationController is not Supported"))
    return errs

