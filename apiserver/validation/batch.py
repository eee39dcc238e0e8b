"""batch/v1: Jobs and CronJobs (upstream's pkg/apis/batch/validation).

A Job's counters are non-negative; Indexed Jobs need completions and bound parallelism and failed indexes;
backoffLimitPerIndex, maxFailedIndexes and successPolicy need Indexed; the pod template restarts OnFailure or
Never (Never only, with a podFailurePolicy). Selector, completion mode, completions (unless scaled with
parallelism), the template and the per-index and success policies are fixed once created.
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.validation.errs import (
    IMMUTABLE,
    FieldError,
    invalid,
    nonnegative,
    not_supported,
    raw,
    required,
)
from mini_kube.apiserver.validation.jobpolicy import (
    go_pod_failure_policy,
    go_success_policy,
    validate_pod_failure_policy,
    validate_success_policy,
)
from mini_kube.apiserver.validation.meta import (
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from mini_kube.apiserver.validation.pods import validate_pod_template_spec
from mini_kube.apiserver.validation.workloads import NO_MATCH, go_label_selector, template_labels
from mini_kube.machinery.labels import matches as selector_matches
from mini_kube.machinery.names import is_dns1123_label

Obj = dict[str, Any]
MAX_INDEXED_PARALLELISM = 100_000
MAX_FAILED_INDEXES = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
HIGH_COMPLETIONS_PARALLELISM = 10_000
HIGH_COMPLETIONS_MAX_FAILED = 10_000
REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
RESTART_POLICIES = ("OnFailure", "Never")


def _counters(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
                "backoffLimitPerIndex"):
        errs += nonnegative(f"{path}.{key}", spec.get(key))
    if spec.get("maxFailedIndexes") is not None:
        errs += nonnegative(f"{path}.maxFailedIndexes", spec["maxFailedIndexes"])
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    return errs


def _indexed(spec: Obj, path: str) -> list[FieldError]:
    """What the completion mode asks of completions, parallelism and the per-index limits."""
    mode = spec.get("completionMode")
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    per_index, max_failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    errs: list[FieldError] = []
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(not_supported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed")))
    if mode == "Indexed":
        if completions is None:
            errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
        if parallelism is not None and parallelism > MAX_INDEXED_PARALLELISM:
            errs.append(invalid(f"{path}.parallelism", parallelism, f"must be less than or equal to "
                                                                    f"{MAX_INDEXED_PARALLELISM} when completion mode is Indexed"))
        if completions is not None and max_failed is not None and max_failed > completions:
            errs.append(invalid(f"{path}.maxFailedIndexes", max_failed, "must be less than or equal to completions"))
        if max_failed is not None and max_failed > MAX_FAILED_INDEXES:
            errs.append(invalid(f"{path}.maxFailedIndexes", max_failed,
                                f"must be less than or equal to {MAX_FAILED_INDEXES}"))
        if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and per_index is not None:
            errs += _high_completions(spec, path)
    elif mode in (None, "NonIndexed"):
        for key, value in (("backoffLimitPerIndex", per_index), ("maxFailedIndexes", max_failed)):
            if value is not None:
                errs.append(invalid(f"{path}.{key}", value, "requires indexed completion mode"))
    return errs


def _high_completions(spec: Obj, path: str) -> list[FieldError]:
    """More than 100,000 completions with a per-index back-off: maxFailedIndexes and parallelism are capped."""
    tail = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    parallelism, max_failed = spec.get("parallelism"), spec.get("maxFailedIndexes")
    errs: list[FieldError] = []
    if max_failed is None:
        errs.append(required(f"{path}.maxFailedIndexes", f"must be specified when completions is above "
                                                         f"{COMPLETIONS_SOFT_LIMIT}"))
    if parallelism is not None and parallelism > HIGH_COMPLETIONS_PARALLELISM:
        errs.append(invalid(f"{path}.parallelism", parallelism,
                            f"must be less than or equal to {HIGH_COMPLETIONS_PARALLELISM} {tail}"))
    if max_failed is not None and max_failed > HIGH_COMPLETIONS_MAX_FAILED:
        errs.append(invalid(f"{path}.maxFailedIndexes", max_failed,
                            f"must be less than or equal to {HIGH_COMPLETIONS_MAX_FAILED} {tail}"))
    return errs


def _policies(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.get("podFailurePolicy") is not None:
        errs += validate_pod_failure_policy(spec, f"{path}.podFailurePolicy")
    if spec.get("successPolicy") is not None:
        if spec.get("completionMode") != "Indexed":
            errs.append(raw("FieldValueInvalid", f"{path}.successPolicy", go_success_policy(spec["successPolicy"]),
                            "requires indexed completion mode"))
        else:
            errs += validate_success_policy(spec, f"{path}.successPolicy")
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        if spec.get("podFailurePolicy") is not None:
            if replacement != "Failed":
                errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, ("Failed",)))
        elif replacement not in REPLACEMENT_POLICIES:
            errs.append(not_supported(f"{path}.podReplacementPolicy", replacement, REPLACEMENT_POLICIES))
    return errs


def _restart_policy(spec: Obj, path: str) -> list[FieldError]:
    policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") or ""
    at = f"{path}.template.spec.restartPolicy"
    if policy in ("Always", ""):
        return [required(at, 'valid values: "OnFailure", "Never"')]
    if policy not in RESTART_POLICIES:
        return [not_supported(at, policy, RESTART_POLICIES)]
    if spec.get("podFailurePolicy") is not None and policy != "Never":
        return [invalid(at, policy, 'only "Never" is supported when podFailurePolicy is specified')]
    return []


def job_spec(spec: Obj, path: str) -> list[FieldError]:
    """validateJobSpec: what a Job and a CronJob's job template share."""
    errs = _counters(spec, path) + _indexed(spec, path) + _policies(spec, path)
    errs += validate_pod_template_spec(spec.get("template") or {}, f"{path}.template")
    return errs + _restart_policy(spec, path)


def validate_job(obj: Obj) -> list[FieldError]:
    """ValidateJob. The server generates the selector unless `manualSelector`, so only then is it required."""
    spec = obj.get("spec") or {}
    errs = job_spec(spec, "spec")
    selector = spec.get("selector")
    if selector is None:
        if spec.get("manualSelector"):
            errs.append(required("spec.selector"))
    else:
        found = validate_label_selector(selector, "spec.selector")
        errs += found
        if not found and not selector_matches(selector, template_labels(spec.get("template"))):
            errs.append(invalid("spec.template.metadata.labels", template_labels(spec.get("template")), NO_MATCH))
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and completions is not None and completions > 0:
        name = (obj.get("metadata") or {}).get("name") or ""
        hostname = f"{name}-{completions - 1}"  # the last index's Pod hostname must be a DNS label
        if is_dns1123_label(hostname):
            errs.append(invalid("metadata.name", name,
                                f"will not able to create pod with invalid DNS label: {hostname}"))
    return errs


def _immutable(field: str, new: Any, old: Any, render: Any = None) -> list[FieldError]:
    if new == old:
        return []
    if render is not None and new is not None:
        return [raw("FieldValueInvalid", field, render(new), IMMUTABLE)]
    return [invalid(field, new, IMMUTABLE)]


def validate_job_update(new: Obj, old: Obj) -> list[FieldError]:
    """ValidateJobSpecUpdate: completions change only with parallelism (Indexed); the rest below is fixed."""
    errs = validate_job(new)
    spec, before = new.get("spec") or {}, old.get("spec") or {}
    elastic = spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")
    if spec.get("completions") != before.get("completions") and not elastic:
        errs.append(invalid("spec.completions", spec.get("completions"), IMMUTABLE))
    if spec.get("selector") != before.get("selector"):
        errs.append(raw("FieldValueInvalid", "spec.selector", go_label_selector(spec.get("selector") or {}), IMMUTABLE))
    if spec.get("template") != before.get("template"):
        errs.append(raw("FieldValueInvalid", "spec.template", "core.PodTemplateSpec{...}", IMMUTABLE))
    errs += _immutable("spec.completionMode", spec.get("completionMode"), before.get("completionMode"))
    errs += _immutable("spec.podFailurePolicy", spec.get("podFailurePolicy"), before.get("podFailurePolicy"),
                       go_pod_failure_policy)
    errs += _immutable("spec.backoffLimitPerIndex", spec.get("backoffLimitPerIndex"),
                       before.get("backoffLimitPerIndex"))
    errs += _immutable("spec.managedBy", spec.get("managedBy"), before.get("managedBy"))
    errs += _immutable("spec.successPolicy", spec.get("successPolicy"), before.get("successPolicy"),
                       go_success_policy)
    return errs


_CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


def _schedule(schedule: str) -> list[FieldError]:
    if not schedule:
        return [required("spec.schedule")]
    if "TZ" in schedule:
        return [invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")]
    if schedule.startswith("@"):
        if schedule in _CRON_MACROS or schedule.startswith("@every "):
            return []
        return [invalid("spec.schedule", schedule, f"unrecognized descriptor: {schedule}")]
    fields = schedule.split()
    if len(fields) != 5:
        return [invalid("spec.schedule", schedule, f"expected exactly 5 fields, found {len(fields)}: "
                                                   f"[{' '.join(fields)}]")]
    return []


def _known_zone(zone: str) -> bool:
    import zoneinfo  # loaded with the first CronJob that names a time zone

    try:
        zoneinfo.ZoneInfo(zone)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        return False
    return zone != ""


def validate_cron_job(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    name = (obj.get("metadata") or {}).get("name") or ""
    errs: list[FieldError] = []
    if len(name) > 52:
        errs.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    errs += _schedule(spec.get("schedule") or "")
    zone = spec.get("timeZone")
    if zone is not None and not _known_zone(zone):
        errs.append(invalid("spec.timeZone", zone, f"unknown time zone {zone}"))
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in ("Allow", "Forbid", "Replace"):
        errs.append(not_supported("spec.concurrencyPolicy", policy, ("Allow", "Forbid", "Replace")))
    for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs += nonnegative(f"spec.{key}", spec.get(key))
    job_template = spec.get("jobTemplate") or {}
    template_spec = job_template.get("spec") or {}
    meta = job_template.get("metadata") or {}
    errs += validate_labels(meta.get("labels"), "spec.jobTemplate.metadata.labels")
    errs += validate_annotations(meta.get("annotations"), "spec.jobTemplate.metadata.annotations")
    errs += job_spec(template_spec, "spec.jobTemplate.spec")
    if template_spec.get("selector") is not None:
        errs.append(raw("FieldValueInvalid", "spec.jobTemplate.spec.selector", go_label_selector(template_spec["selector"]),
                        "`selector` will be auto-generated"))
    if template_spec.get("manualSelector"):
        errs.append(not_supported("spec.jobTemplate.spec.manualSelector", True, ("nil", "false")))
    return errs
