"""One compiled version schema of a CRD: pruning, defaulting and validation of its custom resources.

Build a `VersionSchema` once per served version (`VersionSchema.for_version(crd, "v1")`) and reuse it on
every write. The apiserver's order, which callers should keep:

    unknown = vs.prune(obj)          # on decode; `unknown` feeds fieldValidation=Strict/Warn
    vs.apply_defaults(obj)           # on decode (and on reads from storage)
    errors = vs.validate(obj, old)   # in the strategy, after admission; old=None on create
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.crd import gofmt, listtype, objectmeta
from mini_kube.apiserver.crd.cel_validation import CelValidator
from mini_kube.apiserver.crd.defaulting import apply_defaults, deep_copy
from mini_kube.apiserver.crd.openapi_validation import OpenAPIValidator
from mini_kube.apiserver.crd.pruning import Pruner
from mini_kube.apiserver.crd.structural import MISSING, Node, compile_schema
from mini_kube.apiserver.errors import FieldError

_BLOCKING = frozenset({"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany",
                       "FieldValueTypeInvalid"})
BLOCKED_RULES = ("some validation rules were not checked because the object was invalid; correct the existing "
                 "errors to complete validation")


def version_entry(crd: dict[str, Any], version: str) -> dict[str, Any]:
    """The `spec.versions[]` entry named `version` (KeyError if the CRD has none)."""
    for entry in (crd.get("spec") or {}).get("versions") or ():
        if entry.get("name") == version:
            return entry
    raise KeyError(version)


def _nested(obj: dict[str, Any], json_path: str, want: type) -> tuple[Any, str | None]:
    """unstructured.NestedInt64/NestedString at `.a.b`: (value or None when absent, error text)."""
    fields = json_path.removeprefix(".").split(".")
    value: Any = obj
    for i, name in enumerate(fields):
        if value is None:
            return None, None
        if not isinstance(value, dict):
            return None, (f".{'.'.join(fields[:i + 1])} accessor error: {gofmt.go_plain(value)} is of the type "
                          f"{gofmt.go_type(value)}, expected map[string]interface{{}}")
        if name not in value:
            return None, None
        value = value[name]
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        expected = "int64" if want is int else "string"
        return None, (f".{'.'.join(fields)} accessor error: {gofmt.go_plain(value)} is of the type {gofmt.go_type(value)}, "
                      f"expected {expected}")
    return value, None


def _replicas_errors(obj: dict[str, Any], path: str) -> list[FieldError]:
    value, err = _nested(obj, path, int)
    if err is not None:
        return [gofmt.invalid(path, 0, err)]
    if value is None:
        return []
    if value < 0:
        return [gofmt.invalid(path, value, "should be a non-negative integer")]
    if value > 2**31 - 1:
        return [gofmt.invalid(path, value, f"should be less than or equal to {2**31 - 1}")]
    return []


def scale_spec_errors(obj: dict[str, Any], scale: dict[str, Any] | None) -> list[FieldError]:
    """ValidateScaleSpec: the value at specReplicasPath is a non-negative int32."""
    if not scale or not scale.get("specReplicasPath"):
        return []
    return _replicas_errors(obj, scale["specReplicasPath"])


def scale_status_errors(obj: dict[str, Any], scale: dict[str, Any] | None) -> list[FieldError]:
    """ValidateScaleStatus: statusReplicasPath an int32 >= 0, labelSelectorPath a string."""
    if not scale:
        return []
    errs = _replicas_errors(obj, scale["statusReplicasPath"]) if scale.get("statusReplicasPath") else []
    if scale.get("labelSelectorPath"):
        _, err = _nested(obj, scale["labelSelectorPath"], str)
        if err is not None:
            errs.append(gofmt.invalid(scale["labelSelectorPath"], "", err))
    return errs


def blocking(errors: list[FieldError]) -> bool:
    """Whether schema errors keep CEL rules from running (hasBlockingErr)."""
    return any(e.type in _BLOCKING for e in errors)


class VersionSchema:
    """The compiled schema of one CRD version and everything that runs off it."""

    def __init__(self, schema: dict[str, Any] | None, *, group: str = "", version: str = "", kind: str = "",
                 scale: dict[str, Any] | None = None) -> None:
        self.node: Node = compile_schema(schema)
        self.group, self.version, self.kind = group, version, kind
        self.scale = scale
        self.openapi = OpenAPIValidator(self.node)
        status = self.node.properties.get("status")
        self.status_openapi = OpenAPIValidator(status, root="status") if status is not None else None
        self.cel = CelValidator(self.node)
        self.pruner = Pruner(self.node)

    @classmethod
    def for_version(cls, crd: dict[str, Any], version: str) -> VersionSchema:
        """Compile the schema of `version` of `crd` (a CRD as stored, with defaults applied)."""
        entry = version_entry(crd, version)
        spec = crd.get("spec") or {}
        return cls(((entry.get("schema") or {}).get("openAPIV3Schema")), group=spec.get("group", ""),
                   version=version, kind=(spec.get("names") or {}).get("kind", ""),
                   scale=(entry.get("subresources") or {}).get("scale"))

    # --- decoding ------------------------------------------------------------------------------------

    def prune(self, obj: dict[str, Any]) -> list[str]:
        """Drop unknown fields in place; the dropped paths, for strict field validation."""
        return self.pruner.prune(obj)

    def apply_defaults(self, obj: dict[str, Any]) -> None:
        """Fill in schema defaults in place."""
        apply_defaults(obj, self.node)

    def decode(self, obj: dict[str, Any]) -> list[str]:
        """What decoding does: prune, then default (in place); the pruned paths."""
        unknown = self.pruner.prune(obj)
        apply_defaults(obj, self.node)
        return unknown

    def convert(self, obj: dict[str, Any]) -> dict[str, Any]:
        """`conversion: None` to this version, in place: apiVersion rewritten, then pruned to this schema.

        Reads: prune + default with the stored version's schema, then `convert` to the requested version.
        Writes: decode in the request's version, validate, then `convert` to the storage version.
        """
        if self.group and self.version:
            obj["apiVersion"] = f"{self.group}/{self.version}"
        self.pruner.prune(obj)
        return obj

    def unknown_fields(self, obj: dict[str, Any]) -> list[str]:
        """The paths `prune` would drop, leaving `obj` untouched."""
        return self.pruner.prune(deep_copy(obj))

    # --- validation ----------------------------------------------------------------------------------

    def type_meta_errors(self, obj: dict[str, Any]) -> list[FieldError]:
        """`kind` and `apiVersion` must name this version."""
        if not self.kind:
            return []
        errs = []
        if obj.get("kind") != self.kind:
            errs.append(gofmt.invalid("kind", obj.get("kind", ""), f"must be {self.kind}"))
        api_version = f"{self.group}/{self.version}"
        if obj.get("apiVersion") != api_version:
            errs.append(gofmt.invalid("apiVersion", obj.get("apiVersion", ""), f"must be {api_version}"))
        return errs

    def validate(self, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
        """All errors of a create (`old` None) or update of `obj`, in the apiserver's order."""
        errs = self.type_meta_errors(obj)
        if errs:
            return errs
        errs = self.openapi.validate(obj, MISSING if old is None else old)
        errs += scale_spec_errors(obj, self.scale)
        errs += scale_status_errors(obj, self.scale)
        errs += objectmeta.validate_embedded(self.node, obj)
        if old is None or not listtype.validate(self.node, old):
            errs += listtype.validate(self.node, obj)
        return self._with_rules(errs, obj, old)

    def validate_status(self, obj: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        """Errors of an update through the status subresource (status checked against its own schema)."""
        errs = self.type_meta_errors(obj)
        if errs:
            return errs
        if "status" in obj and self.status_openapi is not None:
            errs = self.status_openapi.validate(obj["status"], old.get("status", MISSING))
        errs += scale_status_errors(obj, self.scale)
        new_list_errs = listtype.validate(self.node, obj)
        if new_list_errs and not listtype.validate(self.node, old):
            errs += new_list_errs
        return self._with_rules(errs, obj, old)

    def _with_rules(self, errs: list[FieldError], obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        if not self.cel.has_rules:
            return errs
        if blocking(errs):
            return [*errs, gofmt.invalid("<nil>", None, BLOCKED_RULES)]
        return errs + self.cel.validate(obj, MISSING if old is None else old)


def replicas(obj: dict[str, Any], json_path: str) -> int | None:
    """The integer at a scale path (None when absent or not an integer)."""
    value, err = _nested(obj, json_path, int)
    return None if err is not None else value
