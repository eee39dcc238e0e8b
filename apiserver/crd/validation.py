"""CustomResourceDefinition (apiextensions.k8s.io/v1): defaults, validation and status, as upstream words them.

- `crd_defaults(crd)`: what the server fills in (singular, listKind, `conversion: {strategy: None}`,
  webhook service port).
- `validate_crd(crd, old=None)`: ValidateCustomResourceDefinition(Update). Schema, subresources,
  printer columns and selectable fields identical in every version are reported under `spec.validation`,
  `spec.subresources`, `spec.additionalPrinterColumns` and `spec.selectableFields`, because upstream
  validates the internal form, into which v1 hoists identical per-version fields.
- `crd_status(crd, others=(), now=None)`: status after the naming and establishing controllers ran:
  acceptedNames, storedVersions, conditions NamesAccepted and Established.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from mini_kube.apiserver.crd import dns, gofmt
from mini_kube.apiserver.crd.fieldpath import valid_field_path
from mini_kube.apiserver.crd.objectmeta import object_meta_errors
from mini_kube.apiserver.crd.schema_checks import validation_errors
from mini_kube.apiserver.crd.structural import compile_schema
from mini_kube.apiserver.errors import FieldError
from mini_kube.apiserver.gofmt import go_ptr, go_strings
from mini_kube.machinery.times import now_rfc3339

PRINTER_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
PRINTER_COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"]
MAX_SELECTABLE_FIELDS = 8
API_APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
ACCEPTED_REVIEW_VERSIONS = ["v1", "v1beta1"]


def crd_defaults(crd: dict[str, Any]) -> None:
    """SetDefaults_CustomResourceDefinition (spec part): fill in what the server defaults, in place."""
    spec = crd.setdefault("spec", {})
    names = spec.setdefault("names", {})
    if not names.get("singular") and names.get("kind") is not None:
        names["singular"] = names["kind"].lower()
    if not names.get("listKind") and names.get("kind"):
        names["listKind"] = names["kind"] + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    service = (((spec.get("conversion") or {}).get("webhook") or {}).get("clientConfig") or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


# --- helpers ---------------------------------------------------------------------------------------------

def _join(errs: list[str]) -> str:
    return ",".join(errs)


def _go_bool(value: Any) -> str:
    return "true" if value else "false"


def go_versions(versions: list[dict[str, Any]], hoisted: set[str]) -> str:
    """`%#v` of the internal []CustomResourceDefinitionVersion (pointer addresses are made up)."""
    def one(v: dict[str, Any]) -> str:
        schema = None if "schema" in hoisted else v.get("schema")
        subresources = None if "subresources" in hoisted else v.get("subresources")
        columns = None if "columns" in hoisted else v.get("additionalPrinterColumns")
        fields = None if "selectable" in hoisted else v.get("selectableFields")
        columns_text = "[]apiextensions.CustomResourceColumnDefinition(nil)" if not columns else \
            "[]apiextensions.CustomResourceColumnDefinition{...}"
        fields_text = "[]apiextensions.SelectableField(nil)" if not fields else "[]apiextensions.SelectableField{...}"
        return ("apiextensions.CustomResourceDefinitionVersion{"
                f"Name:{gofmt.go_quote(v.get('name') or '')}, Served:{_go_bool(v.get('served'))}, "
                f"Storage:{_go_bool(v.get('storage'))}, Deprecated:{_go_bool(v.get('deprecated'))}, "
                f"DeprecationWarning:{go_ptr('string', v.get('deprecationWarning'))}, "
                f"Schema:{go_ptr('apiextensions.CustomResourceValidation', schema)}, "
                f"Subresources:{go_ptr('apiextensions.CustomResourceSubresources', subresources)}, "
                f"AdditionalPrinterColumns:{columns_text}, SelectableFields:{fields_text}}}")
    return "[]apiextensions.CustomResourceDefinitionVersion{" + ", ".join(one(v) for v in versions) + "}"


def _hoisted(versions: list[dict[str, Any]]) -> set[str]:
    """Which per-version fields v1 moves to the internal top level (identical in every version)."""
    if not versions:
        return set()
    found = set()
    for key, label in (("schema", "schema"), ("subresources", "subresources"),
                       ("additionalPrinterColumns", "columns"), ("selectableFields", "selectable")):
        first = versions[0].get(key) or None
        if all((v.get(key) or None) == first for v in versions):
            found.add(label)
    return found


# --- names -----------------------------------------------------------------------------------------------

def names_errors(names: dict[str, Any], path: str) -> list[FieldError]:
    """ValidateCustomResourceDefinitionNames."""
    errs = []
    for key in ("plural", "singular"):
        value = names.get(key) or ""
        if value and (msgs := dns.dns1035_label(value)):
            errs.append(gofmt.invalid(f"{path}.{key}", value, _join(msgs)))
    for key in ("kind", "listKind"):
        value = names.get(key) or ""
        if value and (msgs := dns.dns1035_label(value.lower())):
            errs.append(gofmt.invalid(f"{path}.{key}", value, "may have mixed case, but should otherwise match: " + _join(msgs)))
    for i, short in enumerate(names.get("shortNames") or ()):
        if msgs := dns.dns1035_label(short):
            errs.append(gofmt.invalid(f"{path}.shortNames[{i}]", short, _join(msgs)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(gofmt.invalid(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same"))
    for i, category in enumerate(names.get("categories") or ()):
        if msgs := dns.dns1035_label(category):
            errs.append(gofmt.invalid(f"{path}.categories[{i}]", category, _join(msgs)))
    return errs


# --- per-version parts -----------------------------------------------------------------------------------

def _simple_json_path(value: str, path: str) -> list[FieldError]:
    if not value:
        return [gofmt.invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [gofmt.invalid(path, value, "must be a simple json path starting with .")]
    return []


def column_errors(col: dict[str, Any], path: str) -> list[FieldError]:
    """ValidateCustomResourceColumnDefinition."""
    errs = []
    if not col.get("name"):
        errs.append(gofmt.required(f"{path}.name"))
    kind = col.get("type") or ""
    detail = f"must be one of {','.join(PRINTER_COLUMN_TYPES)}"
    if not kind:
        errs.append(gofmt.required(f"{path}.type", detail))
    elif kind not in PRINTER_COLUMN_TYPES:
        errs.append(gofmt.invalid(f"{path}.type", kind, detail))
    fmt = col.get("format") or ""
    if fmt and fmt not in PRINTER_COLUMN_FORMATS:
        errs.append(gofmt.invalid(f"{path}.format", fmt, f"must be one of {','.join(PRINTER_COLUMN_FORMATS)}"))
    json_path = col.get("jsonPath") or ""
    if not json_path:
        errs.append(gofmt.required(f"{path}.JSONPath"))
    else:
        errs += _simple_json_path(json_path, f"{path}.JSONPath")
    return errs


def subresources_errors(subresources: dict[str, Any] | None, path: str) -> list[FieldError]:
    """ValidateCustomResourceDefinitionSubresources (the scale paths)."""
    scale = (subresources or {}).get("scale")
    if scale is None:
        return []
    errs = []
    for key, prefix in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
        value = scale.get(key) or ""
        if not value:
            errs.append(gofmt.required(f"{path}.scale.{key}"))
        elif simple := _simple_json_path(value, f"{path}.scale.{key}"):
            errs += simple
        elif not value.startswith(prefix):
            errs.append(gofmt.invalid(f"{path}.scale.{key}", value, f"should be a json path under {prefix[:-1]}"))
    selector = scale.get("labelSelectorPath") or ""
    if selector:
        if simple := _simple_json_path(selector, f"{path}.scale.labelSelectorPath"):
            errs += simple
        elif not selector.startswith((".spec.", ".status.")):
            errs.append(gofmt.invalid(f"{path}.scale.labelSelectorPath", selector,
                                      "should be a json path under either .spec or .status"))
    return errs


def selectable_fields_errors(fields: list[dict[str, Any]], schema: dict[str, Any] | None,
                             path: str) -> list[FieldError]:
    """ValidateCustomResourceSelectableFields: paths to string, boolean or integer fields, not in metadata."""
    if not isinstance(schema, dict):
        return [gofmt.invalid(path, "", "selectableFields may only be set when version.schema.openAPIV3Schema "
                                        "is not included")]
    node = compile_schema(schema)
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, selectable in enumerate(fields):
        json_path = selectable.get("jsonPath") or ""
        fpath = f"{path}[{i}].jsonPath"
        if not json_path:
            errs.append(gofmt.required(fpath))
            continue
        try:
            resolved, found = valid_field_path(json_path, node, allow_array=False)
        except ValueError as e:
            errs.append(gofmt.invalid(fpath, json_path, f"is an invalid path: {e}"))
            continue
        if resolved.split(".")[0].split("[")[0] == "metadata":
            errs.append(gofmt.invalid(fpath, json_path, "must not point to fields in metadata"))
        if found is None or found.type not in ("string", "boolean", "integer"):
            errs.append(gofmt.invalid(fpath, json_path, "must point to a field of type string, boolean or integer. "
                                                        "Enum string fields and strings with formats are allowed."))
        if resolved in seen:
            errs.append(gofmt.duplicate(fpath, json_path))
        seen.add(resolved)
    if len(seen) > MAX_SELECTABLE_FIELDS:
        errs.append(gofmt.too_many(path, len(seen), MAX_SELECTABLE_FIELDS))
    return errs


def _deprecation_errors(version: dict[str, Any], path: str) -> list[FieldError]:
    warning = version.get("deprecationWarning")
    if warning is None:
        return []
    if not version.get("deprecated"):
        return [gofmt.invalid(f"{path}.deprecationWarning", warning, "can only be set for deprecated versions")]
    errs = []
    if len(warning) > 256:
        errs.append(gofmt.invalid(f"{path}.deprecationWarning", warning, "must be <= 256 characters long"))
    if not warning:
        errs.append(gofmt.invalid(f"{path}.deprecationWarning", warning, "must not be an empty string"))
    for i, char in enumerate(warning):
        if not char.isprintable():
            errs.append(gofmt.invalid(f"{path}.deprecationWarning", warning,
                                      "must only contain printable UTF-8 characters; non-printable character "
                                      f"found at index {i}"))
            break
    return errs


# --- conversion ------------------------------------------------------------------------------------------

def conversion_errors(conversion: dict[str, Any] | None, path: str) -> list[FieldError]:
    """validateCustomResourceConversion (paths of the internal form: webhookClientConfig...)."""
    if conversion is None:
        return []
    errs = []
    strategy = conversion.get("strategy") or ""
    if not strategy:
        errs.append(gofmt.required(f"{path}.strategy"))
    elif strategy not in ("None", "Webhook"):
        errs.append(gofmt.not_supported(f"{path}.strategy", strategy, ["None", "Webhook"]))
    webhook = conversion.get("webhook") or {}
    client = webhook.get("clientConfig")
    review = webhook.get("conversionReviewVersions") or []
    cc_path = f"{path}.webhookClientConfig"
    if strategy == "Webhook":
        if client is None:
            errs.append(gofmt.required(cc_path, "required when strategy is set to Webhook"))
        elif (client.get("url") is None) == (client.get("service") is None):
            errs.append(gofmt.required(cc_path, "exactly one of url or service is required"))
        elif client.get("url") is not None:
            errs += _webhook_url_errors(client["url"], f"{cc_path}.url")
        else:
            errs += _webhook_service_errors(client["service"], f"{cc_path}.service")
        rpath = f"{path}.conversionReviewVersions"
        if not review:
            errs.append(gofmt.required(rpath))
        else:
            seen: set[str] = set()
            for i, version in enumerate(review):
                if version in seen:
                    errs.append(gofmt.invalid(f"{rpath}[{i}]", version, "duplicate version"))
                    continue
                seen.add(version)
                errs.extend(gofmt.invalid(f"{rpath}[{i}]", version, m) for m in dns.dns1035_label(version))
            if not seen & set(ACCEPTED_REVIEW_VERSIONS):
                errs.append(gofmt.invalid_raw(rpath, go_strings(review),
                                              f"must include at least one of {', '.join(ACCEPTED_REVIEW_VERSIONS)}"))
    else:
        if client is not None:
            errs.append(gofmt.forbidden(cc_path, "should not be set when strategy is not set to Webhook"))
        if review:
            errs.append(gofmt.forbidden(f"{path}.conversionReviewVersions",
                                        "should not be set when strategy is not set to Webhook"))
    return errs


def _webhook_url_errors(url: str, path: str) -> list[FieldError]:
    parts = urlsplit(url)
    errs = []
    if parts.scheme != "https":
        errs.append(gofmt.invalid(path, url, "'https' is the only allowed URL scheme"))
    if not parts.hostname:
        errs.append(gofmt.invalid(path, url, "host must be specified"))
    if parts.username or parts.password:
        errs.append(gofmt.invalid(path, url, "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(gofmt.invalid(path, url, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(gofmt.invalid(path, url, "query parameters are not permitted in the URL"))
    return errs


def _webhook_service_errors(service: dict[str, Any], path: str) -> list[FieldError]:
    errs = []
    if not service.get("name"):
        errs.append(gofmt.required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        errs.append(gofmt.required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port")
    if isinstance(port, int) and not 1 <= port <= 65535:
        errs.append(gofmt.invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    return errs


# --- the CRD ---------------------------------------------------------------------------------------------

def _protected(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))


def _approval_errors(crd: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    group = (crd.get("spec") or {}).get("group") or ""
    if not _protected(group):
        return []
    annotation = ((crd.get("metadata") or {}).get("annotations") or {}).get(API_APPROVAL_ANNOTATION, "")
    old_annotation = ((old or {}).get("metadata") or {}).get("annotations", {}).get(API_APPROVAL_ANNOTATION, "")
    if old is not None and _approval_state(old_annotation) == _approval_state(annotation):
        return []
    state = _approval_state(annotation)
    path = f"metadata.annotations[{API_APPROVAL_ANNOTATION}]"
    if state == "missing":
        return [gofmt.required(path, f'protected groups must have approval annotation "{API_APPROVAL_ANNOTATION}", '
                                     "see https://github.com/kubernetes/enhancements/pull/1111")]
    if state == "invalid":
        return [gofmt.invalid(path, annotation, f'protected groups must have approval annotation '
                                                f'"{API_APPROVAL_ANNOTATION}" with either a URL or a reason starting '
                                                'with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111')]
    return []


def _approval_state(annotation: str) -> str:
    if not annotation:
        return "missing"
    if annotation.startswith("unapproved"):
        return "bypassed"
    parts = urlsplit(annotation)
    return "approved" if parts.scheme and parts.netloc else "invalid"


def _stored_versions(crd: dict[str, Any], old: dict[str, Any] | None) -> list[str] | None:
    """The storedVersions the strategy computes: the old ones plus the current storage version."""
    stored = list(((old or {}).get("status") or {}).get("storedVersions") or [])
    for version in (crd.get("spec") or {}).get("versions") or ():
        if version.get("storage"):
            if version.get("name") not in stored:
                stored.append(version.get("name"))
            break
    return stored or None


def stored_versions_errors(stored: list[str] | None, versions: list[dict[str, Any]]) -> list[FieldError]:
    """ValidateCustomResourceDefinitionStoredVersions."""
    path = "status.storedVersions"
    if not stored:
        return [gofmt.invalid_raw(path, go_strings(stored), "must have at least one stored version")]
    errs = []
    remaining: dict[str | None, int] = {v: i for i, v in enumerate(stored)}
    for version in versions:
        name = version.get("name")
        if version.get("storage") and name not in remaining:
            errs.append(gofmt.invalid_raw(path, go_strings(stored), f"must have the storage version {name}"))
        remaining.pop(name, None)
    for name, i in remaining.items():
        errs.append(gofmt.invalid(f"{path}[{i}]", name, "must appear in spec.versions"))
    return errs


def validate_crd(crd: dict[str, Any], old: dict[str, Any] | None = None, *,
                 metadata: bool = True) -> list[FieldError]:
    """Validate a CRD on create (`old` None) or update; call `crd_defaults` first, as the server does.

    `metadata=False` leaves the generic ObjectMeta checks to the caller (the name must still be
    `<plural>.<group>`).
    """
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    meta = crd.get("metadata") or {}
    required_name = f"{names.get('plural', '')}.{group}"

    def name_fn(name: str, prefix: bool) -> list[str]:
        msgs = dns.dns1123_subdomain(name) if metadata else []
        if name != required_name:
            msgs.append('must be spec.names.plural+"."+spec.group')
        return msgs

    if metadata:
        errs = object_meta_errors(meta, "metadata", False, name_fn)
    else:
        errs = [gofmt.invalid("metadata.name", meta.get("name", ""), m) for m in name_fn(meta.get("name", ""), False)]
    errs += _spec_errors(spec)
    errs += names_errors((crd.get("status") or {}).get("acceptedNames") or {}, "status.acceptedNames")
    errs += stored_versions_errors(_stored_versions(crd, old), spec.get("versions") or [])
    errs += _approval_errors(crd, old)
    if spec.get("preserveUnknownFields") and not (old and (old.get("spec") or {}).get("preserveUnknownFields")):
        errs.append(gofmt.invalid("spec.preserveUnknownFields", True, "cannot set to true, set "
                                  "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
    if old is not None:
        errs += _update_errors(spec, old)
    return errs


def _spec_errors(spec: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    group = spec.get("group") or ""
    if not group:
        errs.append(gofmt.required("spec.group"))
    elif msgs := dns.dns1123_subdomain(group):
        errs.append(gofmt.invalid("spec.group", group, _join(msgs)))
    elif len(group.split(".")) < 2:
        errs.append(gofmt.invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope") or ""
    if not scope:
        errs.append(gofmt.required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(gofmt.not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))

    versions = spec.get("versions") or []
    hoisted = _hoisted(versions)
    top_schema = versions[0].get("schema") if versions and "schema" in hoisted else None
    if not (top_schema or {}).get("openAPIV3Schema"):
        for i, version in enumerate(versions):
            if not (version.get("schema") or {}).get("openAPIV3Schema"):
                errs.append(gofmt.required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required"))
    if spec.get("preserveUnknownFields") and any(_has_default(v.get("schema")) for v in versions):
        errs.append(gofmt.invalid("spec.preserveUnknownFields", True, "must be false in order to use defaults in the schema"))
    any_status = any((v.get("subresources") or {}).get("status") is not None for v in versions)
    storage_count = 0
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        vpath = f"spec.versions[{i}]"
        storage_count += bool(version.get("storage"))
        name = version.get("name") or ""
        unique &= name not in seen
        seen.add(name)
        if msgs := dns.dns1035_label(name):
            errs.append(gofmt.invalid(f"{vpath}.name", name, _join(msgs)))
        errs += _deprecation_errors(version, vpath)
        status_enabled = (version.get("subresources") or {}).get("status") is not None
        if "schema" not in hoisted:
            errs += validation_errors(version.get("schema"), f"{vpath}.schema", status_enabled)
        if "subresources" not in hoisted:
            errs += subresources_errors(version.get("subresources"), f"{vpath}.subresources")
        if "columns" not in hoisted:
            for j, col in enumerate(version.get("additionalPrinterColumns") or ()):
                errs += column_errors(col, f"{vpath}.additionalPrinterColumns[{j}]")
        if "selectable" not in hoisted and version.get("selectableFields"):
            errs += selectable_fields_errors(version["selectableFields"],
                                             (version.get("schema") or {}).get("openAPIV3Schema"),
                                             f"{vpath}.selectableFields")
    if not unique:
        errs.append(gofmt.invalid_raw("spec.versions", go_versions(versions, hoisted), "must contain unique version names"))
    if storage_count != 1:
        errs.append(gofmt.invalid_raw("spec.versions", go_versions(versions, hoisted),
                                      "must have exactly one version marked as storage version"))
    names = spec.get("names") or {}
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errs.append(gofmt.required(f"spec.names.{key}"))
    errs += names_errors(names, "spec.names")
    if versions:
        first = versions[0]
        if "schema" in hoisted:
            errs += validation_errors(first.get("schema"), "spec.validation", any_status)
        if "subresources" in hoisted:
            errs += subresources_errors(first.get("subresources"), "spec.subresources")
        if "columns" in hoisted:
            for j, col in enumerate(first.get("additionalPrinterColumns") or ()):
                errs += column_errors(col, f"spec.additionalPrinterColumns[{j}]")
        if "selectable" in hoisted and first.get("selectableFields"):
            schema = (first.get("schema") or {}).get("openAPIV3Schema")
            if schema is None:
                errs.append(gofmt.invalid("spec.selectableFields", "",
                                          "selectableFields may only be set when validations.schema is included"))
            else:
                errs += selectable_fields_errors(first["selectableFields"], schema, "spec.selectableFields")
    conversion = spec.get("conversion")
    if conversion and conversion.get("strategy") not in (None, "None") and spec.get("preserveUnknownFields"):
        errs.append(gofmt.invalid("spec.conversion.strategy", conversion["strategy"],
                                  "must be None if spec.preserveUnknownFields is true"))
    errs += conversion_errors(conversion, "spec.conversion")
    return errs


def _has_default(schema: Any) -> bool:
    if isinstance(schema, dict):
        return "default" in schema or any(_has_default(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_default(v) for v in schema)
    return False


def _established(crd: dict[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or ())


def _update_errors(spec: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """Immutable fields: group and plural always; scope and kind once the CRD is established."""
    old_spec = old.get("spec") or {}
    errs = []
    checks = [("spec.group", spec.get("group"), old_spec.get("group")),
              ("spec.names.plural", (spec.get("names") or {}).get("plural"), (old_spec.get("names") or {}).get("plural"))]
    if _established(old):
        checks[:0] = [("spec.scope", spec.get("scope"), old_spec.get("scope")),
                      ("spec.names.kind", (spec.get("names") or {}).get("kind"), (old_spec.get("names") or {}).get("kind"))]
    for path, new_value, old_value in checks:
        if new_value != old_value:
            errs.append(gofmt.invalid(path, new_value or "", "field is immutable"))
    return errs


# --- status ----------------------------------------------------------------------------------------------

def _set_condition(conditions: list[dict[str, Any]], new: dict[str, Any], now: str) -> None:
    for existing in conditions:
        if existing.get("type") == new["type"]:
            if existing.get("status") != new["status"] or not existing.get("lastTransitionTime"):
                existing["lastTransitionTime"] = now
            existing.update(status=new["status"], reason=new["reason"], message=new["message"])
            return
    conditions.append({"type": new["type"], "status": new["status"], "lastTransitionTime": now,
                       "reason": new["reason"], "message": new["message"]})


def crd_status(crd: dict[str, Any], others: Iterable[dict[str, Any]] = (), now: str | None = None) -> dict[str, Any]:
    """The status once the naming and establishing controllers have run (a new dict; `crd` is unchanged).

    `others` are the other CRDs; names already accepted by one of the same group conflict. Established
    becomes True as soon as the names are accepted (the server serves the API at once).
    """
    now = now or now_rfc3339()
    spec = crd.get("spec") or {}
    group = spec.get("group")
    requested = spec.get("names") or {}
    status = dict(crd.get("status") or {})
    accepted = dict(status.get("acceptedNames") or {})
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in others:
        if other is crd or (other.get("metadata") or {}).get("name") == (crd.get("metadata") or {}).get("name"):
            continue
        if (other.get("spec") or {}).get("group") != group:
            continue
        names = (other.get("status") or {}).get("acceptedNames") or {}
        resources.update(n for n in (names.get("plural"), names.get("singular"), *(names.get("shortNames") or ()))
                         if n)
        kinds.update(n for n in (names.get("kind"), names.get("listKind")) if n)

    condition = {"type": "NamesAccepted", "status": "Unknown", "reason": "", "message": ""}
    new_names = dict(accepted)

    def check(key: str, pool: set[str], reason: str) -> None:
        wanted = requested.get(key) or ""
        if wanted != (accepted.get(key) or "") and wanted in pool:
            condition.update(status="False", reason=reason, message=f'"{wanted}" is already in use')
        else:
            new_names[key] = wanted

    check("plural", resources, "PluralConflict")
    check("singular", resources, "SingularConflict")
    shorts = requested.get("shortNames") or []
    if shorts != (accepted.get("shortNames") or []):
        taken = [f'"{s}" is already in use' for s in shorts if s not in (accepted.get("shortNames") or []) and s in resources]
        if taken:
            condition.update(status="False", reason="ShortNamesConflict",
                             message=taken[0] if len(taken) == 1 else "[" + ", ".join(taken) + "]")
        else:
            new_names["shortNames"] = shorts
    check("kind", kinds, "KindConflict")
    check("listKind", kinds, "ListKindConflict")
    if requested.get("categories"):
        new_names["categories"] = requested["categories"]
    else:
        new_names.pop("categories", None)
    if not new_names.get("shortNames"):
        new_names.pop("shortNames", None)
    if condition["status"] == "Unknown":
        condition.update(status="True", reason="NoConflicts", message="no conflicts found")

    conditions = [dict(c) for c in status.get("conditions") or ()]
    _set_condition(conditions, condition, now)
    established: dict[str, Any]
    if condition["status"] == "True":
        established = {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                       "message": "the initial names have been accepted"}
    else:
        current = next((c for c in conditions if c.get("type") == "Established"), None)
        established = current or {
            "type": "Established", "status": "False", "reason": "NotAccepted", "message": "not all names are accepted"}
    _set_condition(conditions, established, now)
    order = {"NamesAccepted": 0, "Established": 1}
    conditions.sort(key=lambda c: order.get(c.get("type", ""), 2))
    accepted_names = {k: new_names[k] for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories")
                      if new_names.get(k)}
    return {"conditions": conditions, "acceptedNames": accepted_names,
            "storedVersions": _stored_versions(crd, crd) or []}
