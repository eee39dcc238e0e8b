"""ObjectMeta and TypeMeta checks for embedded resources (`x-kubernetes-embedded-resource`) and CRDs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mini_kube.apiserver.crd import dns, gofmt
from mini_kube.apiserver.crd.structural import Node
from mini_kube.apiserver.errors import FieldError

NameFn = Callable[[str, bool], list[str]]
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def object_meta_errors(meta: dict[str, Any], path: str, requires_namespace: bool,
                       name_fn: NameFn) -> list[FieldError]:
    """ValidateObjectMetaAccessor: name/generateName, namespace, generation, labels, annotations, finalizers."""
    errs: list[FieldError] = []
    generate_name = meta.get("generateName") or ""
    if generate_name:
        errs.extend(gofmt.invalid(_child(path, "generateName"), generate_name, m)
                    for m in name_fn(generate_name, True))
    name = meta.get("name") or ""
    if not name:
        errs.append(gofmt.required(_child(path, "name"), "name or generateName is required"))
    else:
        errs.extend(gofmt.invalid(_child(path, "name"), name, m) for m in name_fn(name, False))
    namespace = meta.get("namespace") or ""
    if requires_namespace:
        if not namespace:
            errs.append(gofmt.required(_child(path, "namespace")))
        else:
            errs.extend(gofmt.invalid(_child(path, "namespace"), namespace, m) for m in dns.dns1123_label(namespace))
    elif namespace:
        errs.append(gofmt.forbidden(_child(path, "namespace"), "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(gofmt.invalid(_child(path, "generation"), generation, "must be greater than or equal to 0"))
    labels_path = _child(path, "labels")
    for key, value in (meta.get("labels") or {}).items():
        errs.extend(gofmt.invalid(labels_path, key, m) for m in dns.qualified_name(key))
        if isinstance(value, str):
            errs.extend(gofmt.invalid(labels_path, value, m) for m in dns.label_value(value))
    annotations = meta.get("annotations") or {}
    annotations_path = _child(path, "annotations")
    for key in annotations:
        errs.extend(gofmt.invalid(annotations_path, key, m) for m in dns.qualified_name(key.lower()))
    if sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str)) > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(gofmt.too_long(annotations_path, TOTAL_ANNOTATION_SIZE_LIMIT))
    finalizers = meta.get("finalizers") or []
    for finalizer in finalizers:
        if isinstance(finalizer, str):
            errs.extend(gofmt.invalid(_child(path, "finalizers"), finalizer, m) for m in dns.qualified_name(finalizer))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(gofmt.invalid(_child(path, "finalizers"), finalizers,
                                  "finalizer orphan and foregroundDeletion cannot be both set"))
    return errs


def _parse_group_version(text: str) -> str | None:
    """schema.ParseGroupVersion's error text, or None when `text` parses."""
    if text == "" or text == "/" or text.count("/") <= 1:
        return None
    return f"unexpected GroupVersion string: {text}"


def embedded_resource_errors(obj: dict[str, Any], path: str) -> list[FieldError]:
    """validateEmbeddedResource: apiVersion and kind present and well-formed, metadata valid."""
    errs: list[FieldError] = []
    if "apiVersion" not in obj:
        errs.append(gofmt.required(_child(path, "apiVersion")))
    if "kind" not in obj:
        errs.append(gofmt.required(_child(path, "kind")))
    for key, value in obj.items():
        sub = _child(path, key)
        if key == "apiVersion":
            if not isinstance(value, str):
                errs.append(gofmt.invalid(sub, value, "must be a string"))
            elif not value:
                errs.append(gofmt.invalid(sub, value, "must not be empty"))
            elif (msg := _parse_group_version(value)) is not None:
                errs.append(gofmt.invalid(sub, value, msg))
        elif key == "kind":
            if not isinstance(value, str):
                errs.append(gofmt.invalid(sub, value, "must be a string"))
            elif not value:
                errs.append(gofmt.invalid(sub, value, "must not be empty"))
            elif msgs := dns.dns1035_label(value.lower()):
                errs.append(gofmt.invalid(sub, value, "may have mixed case, but should otherwise match: " + ",".join(msgs)))
        elif key == "metadata" and isinstance(value, dict):
            meta = dict(value)
            meta["name"] = meta.get("name") or "fakename"
            errs.extend(object_meta_errors(meta, sub, bool(meta.get("namespace")), dns.path_segment_name))
    return errs


def validate_embedded(node: Node, obj: Any, path: str = "") -> list[FieldError]:
    """Errors of every embedded resource inside `obj` (not the root object itself)."""
    errs: list[FieldError] = []
    if node.has_embedded:
        _walk(node, obj, path, errs, True)
    return errs


def _walk(node: Node, obj: Any, path: str, errs: list[FieldError], root: bool) -> None:
    if isinstance(obj, dict):
        if node.embedded and not root:
            errs.extend(embedded_resource_errors(obj, path))
        for k, v in obj.items():
            prop = node.properties.get(k)
            if prop is not None:
                if prop.has_embedded:
                    _walk(prop, v, _child(path, k), errs, False)
            elif node.additional is not None and node.additional.has_embedded:
                _walk(node.additional, v, f"{path}[{k}]", errs, False)
    elif isinstance(obj, list) and node.items is not None and node.items.has_embedded:
        for i, v in enumerate(obj):
            _walk(node.items, v, f"{path}[{i}]", errs, False)
