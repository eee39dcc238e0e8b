"""Object metadata rules (apimachinery's ValidateObjectMeta and ValidateObjectMetaUpdate, plus core's extras)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from mini_kube.apiserver.validation.errs import (
    IMMUTABLE,
    FieldError,
    each,
    forbidden,
    go_map,
    invalid,
    nonnegative,
    raw,
    required,
    too_long,
)
from mini_kube.machinery.names import (
    is_dns1123_label,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
)

NameValidator = Callable[[str, bool], list[str]]
ANNOTATIONS_LIMIT = 256 * 1024
STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_labels(labels: Mapping[str, Any] | None, path: str) -> list[FieldError]:
    """Label keys are qualified names, values valid label values."""
    errs: list[FieldError] = []
    for key, value in (labels or {}).items():
        errs += each(path, key, is_qualified_name(key))
        errs += each(path, value, is_valid_label_value(str(value)))
    return errs


def validate_annotations(annotations: Mapping[str, Any] | None, path: str) -> list[FieldError]:
    """Annotation keys are qualified names (case-insensitive); all of them together at most 256 KiB."""
    errs: list[FieldError] = []
    total = 0
    for key, value in (annotations or {}).items():
        errs += each(path, key, is_qualified_name(key.lower()))
        total += len(key.encode()) + len(str(value).encode())
    if total > ANNOTATIONS_LIMIT:
        errs.append(too_long(path, ANNOTATIONS_LIMIT))
    return errs


def validate_label_selector(selector: Mapping[str, Any] | None, path: str,
                            allow_invalid_values: bool = False) -> list[FieldError]:
    """metav1 LabelSelector: label syntax, operators and their values."""
    if selector is None:
        return []
    errs = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(selector.get("matchExpressions") or ()):
        at = f"{path}.matchExpressions[{i}]"
        op, values = expr.get("operator", ""), expr.get("values") or []
        if op in ("In", "NotIn") and not values:
            errs.append(required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(forbidden(f"{at}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        elif op not in SELECTOR_OPERATORS:
            errs.append(invalid(f"{at}.operator", op, "not a valid selector operator"))
        errs += each(f"{at}.key", expr.get("key", ""), is_qualified_name(expr.get("key", "")))
        if not allow_invalid_values:
            for j, value in enumerate(values):
                errs += each(f"{at}.values[{j}]", value, is_valid_label_value(value))
    return errs


def selector_is_empty(selector: Mapping[str, Any] | None) -> bool:
    return not (selector or {}).get("matchLabels") and not (selector or {}).get("matchExpressions")


def _owner_reference(ref: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    api_version, kind = ref.get("apiVersion", ""), ref.get("kind", "")
    group, _, version = api_version.rpartition("/") if api_version.count("/") <= 1 else ("", "", "")
    if not version:
        errs.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
    if not kind:
        errs.append(invalid(f"{path}.kind", kind, "kind must not be empty"))
    if not ref.get("name"):
        errs.append(invalid(f"{path}.name", ref.get("name", ""), "name must not be empty"))
    if not ref.get("uid"):
        errs.append(invalid(f"{path}.uid", ref.get("uid", ""), "uid must not be empty"))
    if (group, version, kind) == ("", "v1", "Event"):
        errs.append(raw("FieldValueInvalid", path, _go_owner(ref), "/v1, Kind=Event is disallowed from being an owner"))
    return errs


def _go_owner(ref: Mapping[str, Any]) -> str:
    return (f'v1.OwnerReference{{APIVersion:"{ref.get("apiVersion", "")}", Kind:"{ref.get("kind", "")}", '
            f'Name:"{ref.get("name", "")}", UID:"{ref.get("uid", "")}", Controller:(*bool)(nil), '
            f"BlockOwnerDeletion:(*bool)(nil)}}")


def validate_owner_references(refs: list[Mapping[str, Any]] | None, path: str) -> list[FieldError]:
    """Owner references are complete, never Events, and at most one is the controller."""
    errs: list[FieldError] = []
    controller = ""
    for ref in refs or ():
        errs += _owner_reference(ref, path)
        if ref.get("controller"):
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                listed = ", ".join(_go_owner(r) for r in refs or ())
                errs.append(raw("FieldValueInvalid", path, f"[]v1.OwnerReference{{{listed}}}",
                                "Only one reference can have Controller set to true. Found \"true\" in references "
                                f"for {controller} and {current}"))
            else:
                controller = current
    return errs


def validate_finalizers(finalizers: list[str] | None, path: str, kube: bool = True) -> list[FieldError]:
    """Finalizers are qualified names; built-in kinds also require a `/` unless the name is a standard one."""
    errs: list[FieldError] = []
    for finalizer in finalizers or ():
        errs += each(path, finalizer, is_qualified_name(finalizer))
    if "orphan" in (finalizers or ()) and "foregroundDeletion" in (finalizers or ()):
        errs.append(invalid(path, list(finalizers or ()), "finalizer orphan and foregroundDeletion cannot be both set"))
    if kube:
        for i, finalizer in enumerate(finalizers or ()):
            errs += kube_finalizer(finalizer, f"{path}[{i}]")
    return errs


def kube_finalizer(finalizer: str, path: str) -> list[FieldError]:
    if "/" not in finalizer and finalizer not in STANDARD_FINALIZERS:
        return [invalid(path, finalizer, "name is neither a standard finalizer name nor is it fully qualified")]
    return []


def _managed_fields(entries: list[Mapping[str, Any]] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, entry in enumerate(entries or ()):
        at = f"{path}[{i}]"
        if entry.get("operation") not in ("Apply", "Update"):
            errs.append(invalid(f"{at}.operation", entry.get("operation", ""), "must be `Apply` or `Update`"))
        if entry.get("fieldsType") and entry["fieldsType"] != "FieldsV1":
            errs.append(invalid(f"{at}.fieldsType", entry["fieldsType"], "must be `FieldsV1`"))
    return errs


def validate_object_meta(meta: Mapping[str, Any] | None, namespaced: bool, name_validator: NameValidator,
                         path: str = "metadata", kube: bool = True) -> list[FieldError]:
    """Metadata of a new object: name (or generateName), namespace, labels, annotations, owners, finalizers.

    `kube=True` adds core's rule for built-in kinds that finalizers without a `/` must be standard ones."""
    meta = meta or {}
    errs: list[FieldError] = []
    if meta.get("generateName"):
        errs += each(f"{path}.generateName", meta["generateName"], name_validator(meta["generateName"], True))
    name = meta.get("name") or ""
    if not name:
        errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        errs += each(f"{path}.name", name, name_validator(name, False))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(required(f"{path}.namespace"))
        else:
            errs += each(f"{path}.namespace", namespace, name_is_dns_label(namespace, False))
    elif namespace:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    errs += nonnegative(f"{path}.generation", meta.get("generation"))
    errs += validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    errs += validate_owner_references(meta.get("ownerReferences"), f"{path}.ownerReferences")
    errs += validate_finalizers(meta.get("finalizers"), f"{path}.finalizers", kube)
    errs += _managed_fields(meta.get("managedFields"), f"{path}.managedFields")
    return errs


def _go_time(value: str | None) -> str:
    """A timestamp as Go's time.Time.String() prints it (UTC)."""
    if not value:
        return "0001-01-01 00:00:00 +0000 UTC"
    try:
        return datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")
    except ValueError:
        return value


def _immutable(new: Mapping[str, Any], old: Mapping[str, Any], key: str, path: str) -> list[FieldError]:
    a, b = new.get(key), old.get(key)
    if (a or None) == (b or None):
        return []
    if key in ("creationTimestamp", "deletionTimestamp"):
        shown = "null" if key == "deletionTimestamp" and a is None else _go_time(a)
        return [raw("FieldValueInvalid", f"{path}.{key}", shown, IMMUTABLE)]
    return [invalid(f"{path}.{key}", a if a is not None else "" if key != "deletionGracePeriodSeconds" else None,
                    IMMUTABLE)]


def validate_object_meta_update(new: Mapping[str, Any] | None, old: Mapping[str, Any] | None,
                                path: str = "metadata", kube: bool = True) -> list[FieldError]:
    """Metadata of an update: identity fields are immutable, resourceVersion given, no new finalizers on delete."""
    new, old = new or {}, old or {}
    errs: list[FieldError] = []
    if old.get("deletionTimestamp"):
        extra = sorted(set(new.get("finalizers") or ()) - set(old.get("finalizers") or ()))
        if extra:
            shown = "[]string{" + ", ".join(f'"{f}"' for f in extra) + "}"
            errs.append(forbidden(f"{path}.finalizers",
                                  f"no new finalizers can be added if the object is being deleted, found new finalizers "
                                  f"{shown}"))
    if not new.get("resourceVersion"):
        errs.append(invalid(f"{path}.resourceVersion", new.get("resourceVersion") or "", "must be specified for an update"))
    if (new.get("generation") or 0) < (old.get("generation") or 0):
        errs.append(invalid(f"{path}.generation", new.get("generation") or 0, "must not be decremented"))
    for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        errs += _immutable(new, old, key, path)
    errs += validate_labels(new.get("labels"), f"{path}.labels")
    errs += validate_annotations(new.get("annotations"), f"{path}.annotations")
    errs += validate_owner_references(new.get("ownerReferences"), f"{path}.ownerReferences")
    errs += _managed_fields(new.get("managedFields"), f"{path}.managedFields")
    if kube:
        for i, finalizer in enumerate(new.get("finalizers") or ()):
            errs += kube_finalizer(finalizer, f"{path}.finalizers[{i}]")
    return errs


def validate_dns1123_label(value: str, path: str) -> list[FieldError]:
    return each(path, value, is_dns1123_label(value))


def validate_qualified_name(value: str, path: str) -> list[FieldError]:
    return each(path, value, is_qualified_name(value))


__all__ = ["validate_labels", "validate_annotations", "validate_label_selector", "validate_object_meta",
           "validate_object_meta_update", "validate_owner_references", "validate_finalizers",
           "go_map"]
