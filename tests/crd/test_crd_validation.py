"""CRD validation: the apiserver's checks and messages (ValidateCustomResourceDefinition)."""

from __future__ import annotations

import copy
from typing import Any

from mini_kube.apiserver.crd.validation import crd_defaults, validate_crd


def errors(crd: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    crd_defaults(crd)
    return [str(e) for e in validate_crd(crd, old)]


def schema_of(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_reference_agent_crd_is_valid(agent_crd: dict[str, Any]) -> None:
    assert errors(agent_crd) == []


def test_name_must_be_plural_dot_group(agent_crd: dict[str, Any]) -> None:
    agent_crd["metadata"]["name"] = "agent.example.com"
    assert errors(agent_crd) == [
        'metadata.name: Invalid value: "agent.example.com": must be spec.names.plural+"."+spec.group']


def test_group_scope_and_names(agent_crd: dict[str, Any]) -> None:
    agent_crd["metadata"]["name"] = "agents.example"
    agent_crd["spec"]["group"] = "example"
    agent_crd["spec"]["scope"] = "Global"
    agent_crd["spec"]["names"]["shortNames"] = ["Ag"]
    agent_crd["spec"]["names"]["listKind"] = "Agent"
    assert errors(agent_crd) == [
        'spec.group: Invalid value: "example": should be a domain with at least one dot',
        'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        "spec.names.shortNames[0]: Invalid value: \"Ag\": a DNS-1035 label must consist of lower case alphanumeric "
        "characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. "
        "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.names.listKind: Invalid value: "Agent": kind and listKind may not be the same',
    ]


def test_missing_names_and_scope_are_required(agent_crd: dict[str, Any]) -> None:
    agent_crd["spec"]["names"] = {}
    del agent_crd["spec"]["scope"]
    errs = errors(agent_crd)
    assert "spec.scope: Required value" in errs
    assert [e for e in errs if e.startswith("spec.names")] == [
        "spec.names.plural: Required value", "spec.names.singular: Required value",
        "spec.names.kind: Required value", "spec.names.listKind: Required value"]


def test_exactly_one_storage_version(agent_crd: dict[str, Any]) -> None:
    agent_crd["spec"]["versions"][0]["storage"] = False
    errs = errors(agent_crd)
    assert len(errs) == 2
    assert errs[0].startswith("spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{"
                              'apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:false,')
    assert errs[0].endswith(": must have exactly one version marked as storage version")
    assert errs[1] == "status.storedVersions: Invalid value: []string(nil): must have at least one stored version"


def test_versions_unique_and_dns_labels(agent_crd: dict[str, Any]) -> None:
    second = copy.deepcopy(agent_crd["spec"]["versions"][0])
    second["storage"] = False
    agent_crd["spec"]["versions"].append(second)
    agent_crd["spec"]["versions"][0]["name"] = "V1"
    agent_crd["spec"]["versions"][1]["name"] = "V1"
    errs = errors(agent_crd)
    assert errs[0].startswith('spec.versions[0].name: Invalid value: "V1": a DNS-1035 label')
    assert any(e.endswith(": must contain unique version names") for e in errs)


def test_schema_is_required(agent_crd: dict[str, Any]) -> None:
    del agent_crd["spec"]["versions"][0]["schema"]
    assert errors(agent_crd) == ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]


def test_identical_schemas_are_reported_under_spec_validation(agent_crd: dict[str, Any]) -> None:
    schema_of(agent_crd)["properties"]["spec"]["properties"]["extra"] = {"description": "no type"}
    assert errors(agent_crd) == [
        "spec.validation.openAPIV3Schema.properties[spec].properties[extra].type: Required value: "
        "must not be empty for specified object fields"]


def test_differing_schemas_are_reported_per_version(agent_crd: dict[str, Any]) -> None:
    v2 = copy.deepcopy(agent_crd["spec"]["versions"][0])
    v2.update(name="v2", storage=False)
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["extra"] = {"type": "array"}
    agent_crd["spec"]["versions"].append(v2)
    assert errors(agent_crd) == [
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[extra].items: Required value: "
        "must be specified"]


def test_value_validations_must_be_backed_by_the_structure(crd_with_schema: Any) -> None:
    crd = crd_with_schema({"type": "object", "properties": {"spec": {"type": "object"}},
                           "anyOf": [{"properties": {"status": {"maxProperties": 1}}}]})
    assert errors(crd) == [
        "spec.validation.openAPIV3Schema.properties[status]: Required value: because it is defined in "
        "spec.validation.openAPIV3Schema.anyOf[0].properties[status]"]


def test_structural_rules(crd_with_schema: Any) -> None:
    crd = crd_with_schema({"type": "object", "additionalProperties": {"type": "string"}, "properties": {
        "spec": {"type": "object", "properties": {"a": {"type": "string"}},
                 "anyOf": [{"properties": {"b": {"type": "string"}}}]},
        "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
    }})
    assert errors(crd) == [
        "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
        "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name "
        "and generateName, but metadata is implicitly specified",
        "spec.validation.openAPIV3Schema.properties[spec].anyOf[0].properties[b].type: Forbidden: must be empty to "
        "be structural",
        # the OpenAPI checks run after the structural ones and add this one
        "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: additionalProperties and properties are "
        "mutual exclusive",
    ]


def test_openapi_subset_and_extensions(crd_with_schema: Any) -> None:
    crd = crd_with_schema({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
        "ref": {"type": "object", "$ref": "#/definitions/x"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                  "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
        "mode": {"type": "enumeration"},
    }}}})
    assert errors(crd) == [
        "spec.validation.openAPIV3Schema.properties[spec].properties[tags].uniqueItems: Forbidden: uniqueItems "
        "cannot be set to true since the runtime complexity becomes quadratic",
        "spec.validation.openAPIV3Schema.properties[spec].properties[ref].$ref: Forbidden: $ref is not supported",
        "spec.validation.openAPIV3Schema.properties[spec].properties[ports].items.properties[port].default: "
        "Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a "
        "required property",
        'spec.validation.openAPIV3Schema.properties[spec].properties[mode].type: Unsupported value: "enumeration": '
        'supported values: "array", "boolean", "integer", "number", "object", "string"',
    ]


def test_defaults_must_validate_and_be_pruned(crd_with_schema: Any) -> None:
    crd = crd_with_schema({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "minimum": 1, "default": 0},
        "config": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}},
    }}}})
    assert sorted(errors(crd)) == [
        "spec.validation.openAPIV3Schema.properties[spec].properties[config].default: Invalid value: "
        'map[string]interface {}{"a":"x", "b":1}: must not have unknown fields',
        "spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: 0:  in body "
        "should be greater than or equal to 1",
    ]


def test_default_forbidden_in_top_level_metadata(crd_with_schema: Any) -> None:
    crd = crd_with_schema({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}})
    assert "spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in " \
           "top-level metadata" in errors(crd)


def test_status_subresource_restricts_the_root(agent_crd: dict[str, Any]) -> None:
    schema_of(agent_crd)["anyOf"] = [{"required": ["spec"]}]
    errs = errors(agent_crd)
    assert errs[0].startswith("spec.validation.openAPIV3Schema: Invalid value: ")
    assert errs[0].endswith("fields are allowed at the root of the schema if the status subresource is enabled")


def test_validation_rules_are_checked(crd_with_schema: Any) -> None:
    crd = crd_with_schema({"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {
            "type": "string", "x-kubernetes-validations": [{"rule": "self != oldSelf"}]}}},
        "x-kubernetes-validations": [
            {"rule": "self.x >"},
            {"rule": "has(self.items)", "reason": "FieldValueBad"},
            {"rule": "undefinedVar > 1"},
            {"rule": "size(self.items) > 0", "optionalOldSelf": True},
            {"rule": "true", "fieldPath": ".nope"},
        ]}}})
    errs = errors(crd)
    base = "spec.validation.openAPIV3Schema.properties[spec]"
    assert errs[0] == (f'{base}.x-kubernetes-validations[1].reason: Unsupported value: "FieldValueBad": supported '
                       'values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"')
    assert errs[1] == f'{base}.x-kubernetes-validations[4].fieldPath: Invalid value: ".nope": fieldPath must be a valid path'
    # rules of a schema with errors are not compiled, those of its (valid) items are
    assert len(errs) == 3
    assert errs[2].endswith("oldSelf cannot be used on the uncorrelatable portion of the schema within "
                            f"{base}.properties[items]")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"][1]["reason"] = "FieldValueInvalid"
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"][4]["fieldPath"] = ".items"
    errs = errors(crd)
    assert errs[0] == (f"{base}.properties[items].items.x-kubernetes-validations[0].rule: Invalid value: "
                       '"self != oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within '
                       f"{base}.properties[items]")
    assert errs[1].startswith(f"{base}.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule"
                              '{Rule:"self.x >", ')
    assert "compilation failed: ERROR: <input>:1:9: Syntax error:" in errs[1]
    assert "undeclared reference to 'undefinedVar'" in errs[2]
    assert errs[3] == (f"{base}.x-kubernetes-validations[3].optionalOldSelf: Invalid value: true: may not be set if "
                       "oldSelf is not used in rule")


def test_printer_columns(agent_crd: dict[str, Any]) -> None:
    agent_crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "A", "type": "float", "jsonPath": "spec.a"},
        {"type": "string", "format": "quantity", "jsonPath": ".spec.a"},
        {"name": "C", "jsonPath": ".spec.c"},
    ]
    assert errors(agent_crd) == [
        'spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string',
        'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.a": must be a simple json path starting with .',
        "spec.additionalPrinterColumns[1].name: Required value",
        'spec.additionalPrinterColumns[1].format: Invalid value: "quantity": must be one of '
        "byte,date,date-time,double,float,int32,int64,password",
        "spec.additionalPrinterColumns[2].type: Required value: must be one of boolean,date,integer,number,string",
    ]


def test_scale_subresource_paths(agent_crd: dict[str, Any]) -> None:
    agent_crd["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": ".status.replicas", "statusReplicasPath": "", "labelSelectorPath": ".metadata.labels"}
    assert errors(agent_crd) == [
        'spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec',
        "spec.subresources.scale.statusReplicasPath: Required value",
        'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under '
        "either .spec or .status",
    ]


def test_selectable_fields(agent_crd: dict[str, Any]) -> None:
    agent_crd["spec"]["versions"][0]["selectableFields"] = [
        {"jsonPath": ".spec.model"}, {"jsonPath": ".spec.model"}, {"jsonPath": ".spec"}, {"jsonPath": ".spec.nope"},
        {"jsonPath": ".metadata.name"}]
    assert errors(agent_crd) == [
        'spec.selectableFields[1].jsonPath: Duplicate value: ".spec.model"',
        'spec.selectableFields[2].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or '
        "integer. Enum string fields and strings with formats are allowed.",
        'spec.selectableFields[3].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a '
        "valid field",
        'spec.selectableFields[4].jsonPath: Invalid value: ".metadata.name": is an invalid path: does not refer to '
        "a valid field",
    ]


def test_conversion(agent_crd: dict[str, Any]) -> None:
    agent_crd["spec"]["conversion"] = {"strategy": "Webhook"}
    assert errors(agent_crd) == [
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
        "spec.conversion.conversionReviewVersions: Required value"]
    agent_crd["spec"]["conversion"] = {"strategy": "None", "webhook": {"clientConfig": {"url": "https://x"}}}
    assert errors(agent_crd) == [
        "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook"]


def test_protected_groups_need_api_approval(crd_with_schema: Any) -> None:
    crd = crd_with_schema({"type": "object"})
    crd["spec"]["group"] = "things.k8s.io"
    crd["metadata"]["name"] = "widgets.things.k8s.io"
    assert errors(crd) == [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval '
        'annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111']
    crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": "unapproved, experimental"}
    assert errors(crd) == []


def test_update_keeps_group_plural_and_established_kind(agent_crd: dict[str, Any]) -> None:
    old = copy.deepcopy(agent_crd)
    crd_defaults(old)
    old["status"] = {"storedVersions": ["v1"], "conditions": [{"type": "Established", "status": "True"}]}
    new = copy.deepcopy(old)
    new["spec"]["names"]["kind"] = "Robot"
    new["spec"]["names"]["listKind"] = "RobotList"
    new["spec"]["scope"] = "Cluster"
    assert errors(new, old) == ['spec.scope: Invalid value: "Cluster": field is immutable',
                                'spec.names.kind: Invalid value: "Robot": field is immutable']


def test_stored_versions_must_stay_in_spec(agent_crd: dict[str, Any]) -> None:
    old = copy.deepcopy(agent_crd)
    crd_defaults(old)
    old["status"] = {"storedVersions": ["v1"]}
    new = copy.deepcopy(old)
    new["spec"]["versions"][0]["name"] = "v2"
    assert errors(new, old) == ['status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions']
