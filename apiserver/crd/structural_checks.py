"""Whether a CRD schema is structural (ValidateStructural), with the apiserver's messages.

A structural schema specifies a non-empty type for every field, keeps value validations (anyOf, allOf,
oneOf, not) free of types, defaults, descriptions and extensions, only describes fields there that
the structural part specifies too, and restricts `metadata` at the root to name and generateName.
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.crd import gofmt
from mini_kube.apiserver.crd.structural import go_regexp
from mini_kube.apiserver.errors import FieldError

ROOT, ITEM, FIELD = "root", "item", "field"
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]


def _prop(path: str, name: str) -> str:
    return f"{path}.properties[{name}]"


def validate_structural(schema: dict[str, Any], path: str) -> list[FieldError]:
    """All structural errors of `schema` (at `path`), sorted by their text as upstream does."""
    errs = _invariants(schema, ROOT, path)
    errs += _completeness(schema, path)
    return sorted(errs, key=str)


def _is_int_or_string_any_of(s: dict[str, Any]) -> bool:
    return s.get("anyOf") == _INT_OR_STRING_ANY_OF


def _is_int_or_string_all_of(s: dict[str, Any]) -> bool:
    all_of = s.get("allOf") or []
    return bool(all_of) and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF


def _invariants(s: dict[str, Any] | None, level: str, path: str) -> list[FieldError]:
    if not isinstance(s, dict):
        return []
    errs: list[FieldError] = []
    stype = s.get("type") or ""
    items = s.get("items")
    if stype == "array" and items is None:
        errs.append(gofmt.required(f"{path}.items", "must be specified"))
    if isinstance(items, dict):
        errs += _invariants(items, ITEM, f"{path}.items")
    properties = s.get("properties") or {}
    for name, sub in properties.items():
        errs += _invariants(sub, FIELD, _prop(path, name))
    additional = s.get("additionalProperties")
    if additional is not None:
        if level == ROOT:
            errs.append(gofmt.forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(additional, dict):
            errs += _invariants(additional, FIELD, f"{path}.additionalProperties")
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if int_or_string and preserve:
        errs.append(gofmt.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True,
                                  "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        errs.append(gofmt.invalid(f"{path}.x-kubernetes-embedded-resource", True,
                                  "must be false if x-kubernetes-int-or-string is true"))
    errs += _value_validation(s, _is_int_or_string_any_of(s), _is_int_or_string_all_of(s), path)
    if embedded and stype != "object":
        if not stype:
            errs.append(gofmt.required(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true"))
        else:
            errs.append(gofmt.invalid(f"{path}.type", stype, "must be object if x-kubernetes-embedded-resource is true"))
    elif not stype and not int_or_string and not preserve:
        where = {ROOT: "at the root", ITEM: "for specified array items", FIELD: "for specified object fields"}[level]
        errs.append(gofmt.required(f"{path}.type", f"must not be empty {where}"))
    if embedded and additional is not None:
        errs.append(gofmt.forbidden(f"{path}.additionalProperties",
                                    "must not be used if x-kubernetes-embedded-resource is set"))
    if level == ROOT and stype and stype != "object":
        errs.append(gofmt.invalid(f"{path}.type", stype, "must be object at the root"))
    check_metadata = level == ROOT or embedded
    for meta_field in ("kind", "apiVersion"):
        sub = properties.get(meta_field)
        if check_metadata and isinstance(sub, dict) and sub.get("type", "") != "string":
            errs.append(gofmt.invalid(f"{_prop(path, meta_field)}.type", sub.get("type", ""), "must be string"))
    metadata = properties.get("metadata")
    if isinstance(metadata, dict):
        errs += _metadata(metadata, check_metadata, level, _prop(path, "metadata"))
    if embedded and not preserve and not properties:
        errs.append(gofmt.required(f"{path}.properties", "must not be empty if x-kubernetes-embedded-resource is "
                                                         "true without x-kubernetes-preserve-unknown-fields"))
    return errs


def _metadata(s: dict[str, Any], check: bool, level: str, path: str) -> list[FieldError]:
    errs = []
    if check and s.get("type", "") != "object":
        errs.append(gofmt.invalid(f"{path}.type", s.get("type", ""), "must be object"))
    if level == ROOT:
        rest = {k: v for k, v in s.items() if k not in ("type", "default")}
        props = rest.pop("properties", None) or {}
        if set(props) - {"name", "generateName"} or rest:
            errs.append(gofmt.forbidden(path, "must not specify anything other than name and generateName, but "
                                              "metadata is implicitly specified"))
    return errs


def _value_validation(s: dict[str, Any], skip_any_of: bool, skip_first_all_of_any_of: bool,
                      path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not skip_any_of:
        for i, sub in enumerate(s.get("anyOf") or ()):
            errs += _nested(sub, False, f"{path}.anyOf[{i}]")
    for i, sub in enumerate(s.get("allOf") or ()):
        errs += _nested(sub, skip_first_all_of_any_of and i == 0, f"{path}.allOf[{i}]")
    for i, sub in enumerate(s.get("oneOf") or ()):
        errs += _nested(sub, False, f"{path}.oneOf[{i}]")
    if isinstance(s.get("not"), dict):
        errs += _nested(s["not"], False, f"{path}.not")
    pattern = s.get("pattern")
    if pattern and go_regexp(pattern) is None:
        errs.append(gofmt.invalid(f"{path}.pattern", pattern,
                                  f"must be a valid regular expression, but isn't: error parsing regexp: {pattern}"))
    return errs


_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def _nested(v: Any, skip_any_of: bool, path: str) -> list[FieldError]:
    """A value validation under a logical junctor: no types, defaults, descriptions or extensions."""
    if not isinstance(v, dict):
        return []
    errs = _value_validation(v, skip_any_of, False, path)
    if isinstance(v.get("items"), dict):
        errs += _nested(v["items"], False, f"{path}.items")
    for name, sub in (v.get("properties") or {}).items():
        errs += _nested(sub, False, _prop(path, name))
    for key, detail in _NESTED_FORBIDDEN:
        value = v.get(key)
        if value not in (None, False, "", [], ()):
            errs.append(gofmt.forbidden(f"{path}.{key}", detail))
    if "metadata" in (v.get("properties") or {}):
        errs.append(gofmt.forbidden(_prop(path, "metadata"), "must not be specified in a nested context"))
    return errs


def _completeness(s: dict[str, Any], path: str) -> list[FieldError]:
    return _value_completeness(s, s, path, path)


def _value_completeness(v: dict[str, Any], s: dict[str, Any] | None, s_path: str, v_path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if isinstance(v.get("not"), dict):
        errs += _nested_completeness(v["not"], s, s_path, f"{v_path}.not")
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(v.get(junctor) or ()):
            if isinstance(sub, dict):
                errs += _nested_completeness(sub, s, s_path, f"{v_path}.{junctor}[{i}]")
    return errs


def _nested_completeness(v: dict[str, Any], s: dict[str, Any] | None, s_path: str, v_path: str) -> list[FieldError]:
    if s is None:
        return [gofmt.required(s_path, f"because it is defined in {v_path}")]
    errs = _value_completeness(v, s, s_path, v_path)
    if isinstance(v.get("items"), dict):
        items = s.get("items") if isinstance(s.get("items"), dict) else None
        errs += _nested_completeness(v["items"], items, f"{s_path}.items", f"{v_path}.items")
    s_props = s.get("properties") or {}
    for name, sub in (v.get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        if name not in s_props:
            errs.append(gofmt.required(_prop(s_path, name), f"because it is defined in {_prop(v_path, name)}"))
        else:
            errs += _nested_completeness(sub, s_props[name], _prop(s_path, name), _prop(v_path, name))
    return errs
