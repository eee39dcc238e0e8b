"""Validation of a CRD's `openAPIV3Schema` (validateCustomResourceDefinitionValidation), upstream's wording.

Checks, in upstream order: the root with a status subresource, structurality, the defaults (valid,
pruned), the OpenAPI subset Kubernetes accepts (no $ref, patternProperties, uniqueItems...), the
x-kubernetes-* extensions, and the x-kubernetes-validations rules (which must compile).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mini_kube.apiserver.crd import gofmt, objectmeta
from mini_kube.apiserver.crd.cel_compile import compile_rule
from mini_kube.apiserver.crd.cel_validation import CelValidator
from mini_kube.apiserver.crd.defaulting import deep_copy
from mini_kube.apiserver.crd.fieldpath import valid_field_path
from mini_kube.apiserver.crd.openapi_validation import OpenAPIValidator
from mini_kube.apiserver.crd.pruning import prune_value
from mini_kube.apiserver.crd.structural import MISSING, compile_schema
from mini_kube.apiserver.crd.structural_checks import validate_structural
from mini_kube.apiserver.errors import FieldError
from mini_kube.apiserver.gofmt import go_ptr

OPENAPI_V3_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
ALLOWED_AT_ROOT_WITH_STATUS = [
    "Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum", "Minimum", "ExclusiveMinimum",
    "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems", "UniqueItems", "MultipleOf", "Required", "Items",
    "Properties", "ExternalDocs", "Example", "XPreserveUnknownFields", "XValidations"]
_ROOT_KEYS_WITH_STATUS = {
    "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "required", "items",
    "properties", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations"}
SUPPORTED_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
META_FIELDS = ("metadata", "kind", "apiVersion")


def go_rule(rule: dict[str, Any]) -> str:
    """`%#v` of an apiextensions.ValidationRule (pointer addresses are made up)."""
    return ("apiextensions.ValidationRule{"
            f"Rule:{gofmt.go_quote(rule.get('rule') or '')}, Message:{gofmt.go_quote(rule.get('message') or '')}, "
            f"MessageExpression:{gofmt.go_quote(rule.get('messageExpression') or '')}, "
            f"Reason:{go_ptr('apiextensions.FieldValueErrorReason', rule.get('reason'))}, "
            f"FieldPath:{gofmt.go_quote(rule.get('fieldPath') or '')}, "
            f"OptionalOldSelf:{go_ptr('bool', rule.get('optionalOldSelf'))}}}")


@dataclass(frozen=True, slots=True)
class _Ctx:
    """specStandardValidatorV3's state while walking the schema."""

    allow_defaults: bool = True
    disallow_reason: str = ""
    inside_resource_meta: bool = False
    uncorrelatable: str | None = None

    def forbid_defaults(self, reason: str) -> _Ctx:
        return replace(self, allow_defaults=False, disallow_reason=reason)

    def forbid_old_self(self, path: str) -> _Ctx:
        return self if self.uncorrelatable is not None else replace(self, uncorrelatable=path)


class _Errors:
    __slots__ = ("schema", "cel")

    def __init__(self) -> None:
        self.schema: list[FieldError] = []
        self.cel: list[FieldError] = []

    def extend(self, other: _Errors) -> None:
        self.schema += other.schema
        self.cel += other.cel


def validation_errors(block: dict[str, Any] | None, path: str, status_enabled: bool) -> list[FieldError]:
    """Errors of one `schema:` block (`path` is `spec.validation` or `spec.versions[i].schema`)."""
    errs: list[FieldError] = []
    schema = (block or {}).get("openAPIV3Schema")
    if not isinstance(schema, dict):
        return errs
    root = f"{path}.openAPIV3Schema"
    if status_enabled:
        if schema.get("type") not in (None, "", "object"):
            errs.append(gofmt.invalid(f"{root}.type", schema["type"], 'only "object" is allowed as the type at the '
                                                                      "root of the schema if the status subresource is enabled"))
        elif any(k not in _ROOT_KEYS_WITH_STATUS and v not in (None, False, "", [], {}) for k, v in schema.items()):
            errs.append(gofmt.invalid_raw(
                root, "apiextensions.JSONSchemaProps{...}",
                f"only [{' '.join(ALLOWED_AT_ROOT_WITH_STATUS)}] fields are allowed at the root of the schema if the "
                "status subresource is enabled"))
    if schema.get("nullable"):
        errs.append(gofmt.forbidden(f"{root}.nullable", "nullable cannot be true at the root"))
    structural_init: list[FieldError] = []
    structural_ok = False
    if isinstance(schema.get("items"), list):
        structural_init.append(gofmt.invalid(root, "", "OpenAPIV3Schema 'items' must be a schema, but is an array"))
    elif structural := validate_structural(schema, root):
        errs += structural
    elif defaults := default_errors(schema, root):
        errs += defaults
    else:
        structural_ok = True
    result = _openapi(schema, root, _Ctx(), True, structural_ok)
    errs += result.schema + result.cel
    if not errs:
        errs += structural_init
    return errs


def _openapi(s: Any, path: str, ctx: _Ctx, is_root: bool, cel_ok: bool) -> _Errors:
    out = _Errors()
    if not isinstance(s, dict):
        return out
    out.schema += _standard(s, path, ctx)
    if s.get("uniqueItems"):
        out.schema.append(gofmt.forbidden(f"{path}.uniqueItems",
                                          "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
    additional = s.get("additionalProperties")
    if additional is not None:
        if s.get("properties") and (additional is False or isinstance(additional, dict)):
            out.schema.append(gofmt.forbidden(f"{path}.additionalProperties",
                                              "additionalProperties and properties are mutual exclusive"))
        sub_ctx = ctx.forbid_defaults("inside additionalProperties applying to object metadata") \
            if ctx.inside_resource_meta else ctx
        out.extend(_openapi(additional, f"{path}.additionalProperties", sub_ctx, False, cel_ok))
    for name, sub in (s.get("properties") or {}).items():
        sub_ctx = ctx
        if s.get("x-kubernetes-map-type") not in (None, "granular", "atomic"):
            sub_ctx = sub_ctx.forbid_old_self(path)
        if (is_root or s.get("x-kubernetes-embedded-resource")) and name in META_FIELDS:
            sub_ctx = replace(sub_ctx, inside_resource_meta=True)
            if is_root:
                sub_ctx = sub_ctx.forbid_defaults(f"in top-level {name}")
        out.extend(_openapi(sub, f"{path}.properties[{name}]", sub_ctx, False, cel_ok))
    out.extend(_openapi(s.get("not"), f"{path}.not", ctx, False, False))
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, sub in enumerate(s.get(junctor) or ()):
            out.extend(_openapi(sub, f"{path}.{junctor}[{i}]", ctx, False, False))
    for name, sub in (s.get("definitions") or {}).items():
        out.extend(_openapi(sub, f"{path}.definitions[{name}]", ctx, False, False))
    items = s.get("items")
    if items is not None:
        sub_ctx = ctx if s.get("x-kubernetes-list-type") == "map" else ctx.forbid_old_self(path)
        if isinstance(items, dict):
            out.extend(_openapi(items, f"{path}.items", sub_ctx, False, cel_ok))
        else:
            for i, sub in enumerate(items):
                out.extend(_openapi(sub, f"{path}.items[{i}]", sub_ctx, False, cel_ok))
    for name, dep in (s.get("dependencies") or {}).items():
        if isinstance(dep, dict):
            out.extend(_openapi(dep, f"{path}.dependencies[{name}]", ctx, False, False))
    out.schema += _extensions(s, path)
    out.schema += _map_list_keys(s, path)
    if s.get("x-kubernetes-validations"):
        out.schema += _rule_shapes(s, path)
        if not out.schema and cel_ok:
            out.cel += _rule_compilation(s, path, ctx, is_root or bool(s.get("x-kubernetes-embedded-resource")))
    return out


def _standard(s: dict[str, Any], path: str, ctx: _Ctx) -> list[FieldError]:
    """specStandardValidatorV3.validate: the OpenAPI subset Kubernetes accepts."""
    errs = []
    stype = s.get("type") or ""
    if stype and stype not in OPENAPI_V3_TYPES:
        errs.append(gofmt.not_supported(f"{path}.type", stype, OPENAPI_V3_TYPES))
    if "default" in s and s["default"] is not None and not ctx.allow_defaults:
        detail = "must not be set" + (f" {ctx.disallow_reason}" if ctx.disallow_reason else "")
        errs.append(gofmt.forbidden(f"{path}.default", detail))
    for key, detail in (("id", "id is not supported"), ("additionalItems", "additionalItems is not supported"),
                        ("patternProperties", "patternProperties is not supported"),
                        ("definitions", "definitions is not supported"),
                        ("dependencies", "dependencies is not supported"), ("$ref", "$ref is not supported")):
        if s.get(key) not in (None, "", {}):
            errs.append(gofmt.forbidden(f"{path}.{key}", detail))
    if stype == "null":
        errs.append(gofmt.forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(s.get("items"), list) and s["items"]:
        errs.append(gofmt.forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if ctx.inside_resource_meta and s.get("x-kubernetes-embedded-resource"):
        errs.append(gofmt.forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))
    return errs


def _extensions(s: dict[str, Any], path: str) -> list[FieldError]:
    errs = []
    stype = s.get("type") or ""
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(gofmt.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None and stype != "object":
        errs.append(gofmt.required(f"{path}.type", "must be object if x-kubernetes-map-type is specified") if not stype
                    else gofmt.invalid(f"{path}.type", stype, "must be object if x-kubernetes-map-type is specified"))
    if map_type is not None and map_type not in ("atomic", "granular"):
        errs.append(gofmt.not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
    list_type = s.get("x-kubernetes-list-type")
    items = s.get("items") if isinstance(s.get("items"), dict) else None
    if list_type is not None and stype != "array":
        errs.append(gofmt.required(f"{path}.type", "must be array if x-kubernetes-list-type is specified") if not stype
                    else gofmt.invalid(f"{path}.type", stype, "must be array if x-kubernetes-list-type is specified"))
    elif list_type == "set" and items is not None:
        if items.get("type") == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
            errs.append(gofmt.invalid(f"{path}.items.x-kubernetes-list-type", items["x-kubernetes-list-type"],
                                      "must be atomic as item of a list with x-kubernetes-list-type=set"))
        if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            errs.append(gofmt.invalid(f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-list-type"),
                                      "must be atomic as item of a list with x-kubernetes-list-type=set"))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(gofmt.not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys:
        if list_type is None:
            errs.append(gofmt.required(f"{path}.x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is non-empty"))
        elif list_type != "map":
            errs.append(gofmt.invalid(f"{path}.x-kubernetes-list-type", list_type,
                                      "must be map if x-kubernetes-list-map-keys is non-empty"))
    if list_type == "map":
        if not keys:
            errs.append(gofmt.required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
        if "items" not in s:
            errs.append(gofmt.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        elif items is None:
            errs.append(gofmt.invalid(f"{path}.items", s["items"], "must only have a single schema if x-kubernetes-list-type is map"))
        elif items.get("type") != "object":
            errs.append(gofmt.invalid(f"{path}.items.type", items.get("type", ""),
                                      "must be object if parent array's x-kubernetes-list-type is map"))
        else:
            seen: set[str] = set()
            props = items.get("properties") or {}
            for key in keys:
                if key in props:
                    if props[key].get("type") in ("array", "object"):
                        errs.append(gofmt.invalid(f"{path}.items.properties[{key}].type", items.get("type", ""),
                                                  "must be a scalar type if parent array's x-kubernetes-list-type is map"))
                else:
                    errs.append(gofmt.invalid(f"{path}.x-kubernetes-list-map-keys", keys,
                                              "entries must all be names of item properties"))
                if key in seen:
                    errs.append(gofmt.invalid(f"{path}.x-kubernetes-list-map-keys", keys,
                                              "must not contain duplicate entries"))
                seen.add(key)
    return errs


def _map_list_keys(s: dict[str, Any], path: str) -> list[FieldError]:
    """validateMapListKeysMapSet: set/map items not nullable; map keys required or defaulted, not nullable."""
    items = s.get("items")
    list_type = s.get("x-kubernetes-list-type")
    if not isinstance(items, dict) or list_type not in ("set", "map"):
        return []
    errs = []
    if items.get("nullable"):
        errs.append(gofmt.forbidden(f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is {list_type}"))
    if list_type == "map":
        required = set(items.get("required") or ())
        for key in s.get("x-kubernetes-list-map-keys") or ():
            prop = (items.get("properties") or {}).get(key)
            if prop is None:
                continue
            if key not in required and prop.get("default") is None:
                errs.append(gofmt.required(f"{path}.items.properties[{key}].default",
                                           "this property is in x-kubernetes-list-map-keys, so it must have a default "
                                           "or be a required property"))
            if prop.get("nullable"):
                errs.append(gofmt.forbidden(f"{path}.items.properties[{key}].nullable",
                                            "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
    return errs


def _rule_shapes(s: dict[str, Any], path: str) -> list[FieldError]:
    """The shape of each x-kubernetes-validations entry (before compiling it)."""
    errs = []
    node = None
    for i, rule in enumerate(s.get("x-kubernetes-validations") or ()):
        rpath = f"{path}.x-kubernetes-validations[{i}]"
        text, message = rule.get("rule") or "", rule.get("message") or ""
        if not text.strip():
            errs.append(gofmt.required(f"{rpath}.rule", "rule is not specified"))
        elif message and not message.strip():
            errs.append(gofmt.invalid(f"{rpath}.message", message, "message must be non-empty if specified"))
        elif "\n" in message.strip() or "\r" in message.strip():
            errs.append(gofmt.invalid(f"{rpath}.message", message, "message must not contain line breaks"))
        elif ("\n" in text.strip() or "\r" in text.strip()) and not message.strip():
            errs.append(gofmt.required(f"{rpath}.message", "message must be specified if rule contains line breaks"))
        expression = rule.get("messageExpression") or ""
        if expression and not expression.strip():
            errs.append(gofmt.required(f"{rpath}.messageExpression", "messageExpression must be non-empty if specified"))
        reason = rule.get("reason")
        if reason is not None and reason not in SUPPORTED_REASONS:
            errs.append(gofmt.not_supported(f"{rpath}.reason", reason, SUPPORTED_REASONS))
        field_path = rule.get("fieldPath") or ""
        if field_path and not field_path.strip():
            errs.append(gofmt.invalid(f"{rpath}.fieldPath", field_path, "fieldPath must be non-empty if specified"))
        if "\n" in field_path or "\r" in field_path:
            errs.append(gofmt.invalid(f"{rpath}.fieldPath", field_path, "fieldPath must not contain line breaks"))
        if field_path:
            node = node or compile_schema(s)
            try:
                valid_field_path(field_path, node)
            except ValueError:
                errs.append(gofmt.invalid(f"{rpath}.fieldPath", field_path, "fieldPath must be a valid path"))
    return errs


def _rule_compilation(s: dict[str, Any], path: str, ctx: _Ctx, resource: bool) -> list[FieldError]:
    errs = []
    node = compile_schema(s)
    for i, raw in enumerate(s.get("x-kubernetes-validations") or ()):
        rpath = f"{path}.x-kubernetes-validations[{i}]"
        compiled = compile_rule(raw, node, resource)
        if compiled.error:
            errs.append(gofmt.invalid_raw(f"{rpath}.rule", go_rule(raw), compiled.error))
        if compiled.message_error:
            errs.append(gofmt.invalid_raw(f"{rpath}.messageExpression", go_rule(raw), compiled.message_error))
        if compiled.error:
            continue
        if compiled.uses_old_self:
            if ctx.uncorrelatable is not None:
                errs.append(gofmt.invalid(f"{rpath}.rule", raw.get("rule"), "oldSelf cannot be used on the "
                                          f"uncorrelatable portion of the schema within {ctx.uncorrelatable}"))
        elif raw.get("optionalOldSelf") is not None:
            errs.append(gofmt.invalid(f"{rpath}.optionalOldSelf", raw["optionalOldSelf"],
                                      "may not be set if oldSelf is not used in rule"))
    return errs


def default_errors(schema: dict[str, Any], path: str) -> list[FieldError]:
    """ValidateDefaults: every default validates against its schema and has no unknown fields."""
    return _defaults(schema, path, True, False)


def _defaults(s: Any, path: str, resource_root: bool, inside_meta: bool) -> list[FieldError]:
    if not isinstance(s, dict):
        return []
    errs: list[FieldError] = []
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if embedded:
        inside_meta = False
    resource = resource_root or embedded
    default = s.get("default", MISSING)
    if default is not MISSING and default is not None:
        node = compile_schema(s)
        dpath = f"{path}.default"
        pruned = deep_copy(default)
        prune_value(pruned, node, embedded)
        if not inside_meta and pruned != default:
            errs.append(gofmt.invalid(dpath, default, "must not have unknown fields"))
        elif embedded and isinstance(default, dict) and (meta_errs := objectmeta.embedded_resource_errors(default, dpath)):
            errs += meta_errs
        elif schema_errs := OpenAPIValidator(node, root=dpath).validate(default):
            errs += schema_errs
        else:
            rules = CelValidator(node, resource_root=resource)
            if rules.has_rules:
                cel_errs = rules.validate(default, default, path=dpath, ratchet=False)
                errs += cel_errs or rules.validate(default, path=dpath)
    if isinstance(s.get("items"), dict):
        errs += _defaults(s["items"], f"{path}.items", False, inside_meta)
    for name, sub in (s.get("properties") or {}).items():
        sub_inside = inside_meta or (resource and name in META_FIELDS)
        errs += _defaults(sub, f"{path}.properties[{name}]", False, sub_inside)
    return errs
