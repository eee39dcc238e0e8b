"""x-kubernetes-validations: CEL rules over custom resources, worded as the apiserver reports failures."""

from __future__ import annotations

from typing import Any

import pytest
from mini_kube.apiserver.crd.cel_compile import compile_rule, escape
from mini_kube.apiserver.crd.cel_validation import CelValidator
from mini_kube.apiserver.crd.schema_validation import VersionSchema
from mini_kube.apiserver.crd.structural import compile_schema

SPEC = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer"}, "minReplicas": {"type": "integer"}, "name": {"type": "string"},
        "mode": {"type": "string"}, "x-y": {"type": "string"}, "ratio": {"type": "number"},
        "created": {"type": "string", "format": "date-time"}, "timeout": {"type": "string", "format": "duration"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "memory": {"x-kubernetes-int-or-string": True},
    },
}


def check(rules: list[dict[str, Any]], spec: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    schema = {"type": "object", "properties": {"spec": {**SPEC, "x-kubernetes-validations": rules}}}
    vs = VersionSchema(schema)
    return [str(e) for e in vs.validate({"spec": spec}, None if old is None else {"spec": old})]


def test_failed_rule_uses_message_or_rule_text() -> None:
    assert check([{"rule": "self.replicas >= self.minReplicas"}], {"replicas": 1, "minReplicas": 2}) == [
        'spec: Invalid value: "object": failed rule: self.replicas >= self.minReplicas']
    assert check([{"rule": "self.replicas >= self.minReplicas", "message": " too few replicas "}],
                 {"replicas": 1, "minReplicas": 2}) == ['spec: Invalid value: "object": too few replicas']
    assert check([{"rule": "self.replicas >= self.minReplicas"}], {"replicas": 3, "minReplicas": 2}) == []


def test_message_expression() -> None:
    rule = {"rule": "self.replicas <= 10", "message": "static",
            "messageExpression": "'replicas ' + string(self.replicas) + ' exceeds 10'"}
    assert check([rule], {"replicas": 11}) == ['spec: Invalid value: "object": replicas 11 exceeds 10']
    rule["messageExpression"] = "self.nope"  # failing message expressions fall back to the message
    assert check([rule], {"replicas": 11}) == ['spec: Invalid value: "object": static']
    rule["messageExpression"] = "'  '"  # so do empty ones
    assert check([rule], {"replicas": 11}) == ['spec: Invalid value: "object": static']


@pytest.mark.parametrize(("reason", "expected"), [
    ("FieldValueForbidden", "spec.name: Forbidden: name must start with a"),
    ("FieldValueRequired", "spec.name: Required value: name must start with a"),
    ("FieldValueDuplicate", 'spec.name: Duplicate value: "object"'),
    ("FieldValueInvalid", 'spec.name: Invalid value: "object": name must start with a'),
])
def test_reason_and_field_path(reason: str, expected: str) -> None:
    rule = {"rule": "self.name.startsWith('a')", "message": "name must start with a", "fieldPath": ".name",
            "reason": reason}
    assert check([rule], {"name": "bob"}) == [expected]


def test_rules_on_scalars_and_items_report_their_type_and_index() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"tags": {
        "type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() <= 3"}]}}}}}}
    vs = VersionSchema(schema)
    assert [str(e) for e in vs.validate({"spec": {"tags": ["ok", "toolong"]}})] == [
        'spec.tags[1]: Invalid value: "string": failed rule: self.size() <= 3']


def test_root_rules_see_type_meta_and_metadata_name() -> None:
    schema = {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.metadata.name.startsWith(self.kind.lowerAscii())", "message": "name must start with the kind"}]}
    vs = VersionSchema(schema)
    obj = {"apiVersion": "x.io/v1", "kind": "Widget", "metadata": {"name": "gadget-1", "labels": {"a": "b"}}}
    assert [str(e) for e in vs.validate(obj)] == ['<nil>: Invalid value: "object": name must start with the kind']


def test_undefined_fields_do_not_compile() -> None:
    node = compile_schema({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"},
                                                  "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                                  "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                                  "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                                                               "properties": {"spec": {"type": "object"}}}}}}})
    root_ok = ("self.metadata.name != '' && self.spec.labels.app == 'x' && self.spec.raw.any.thing && "
               "self.spec.replicas > 0 && self.spec.template.metadata.name != ''")
    assert compile_rule({"rule": root_ok}, node, resource=True).error is None
    assert compile_rule({"rule": "'self.nope' != self.kind"}, node, resource=True).error is None  # strings are skipped
    error = compile_rule({"rule": "has(self.metadata.labels)"}, node, resource=True).error
    assert error == ("compilation failed: ERROR: <input>:1:18: undefined field 'labels'\n"
                     " | has(self.metadata.labels)\n | .................^")
    assert "undefined field 'replica'" in (compile_rule({"rule": "self.spec.replica > 1"}, node, True).error or "")


def test_transition_rules_run_on_update_only() -> None:
    rule = {"rule": "self.replicas >= oldSelf.replicas", "message": "cannot scale down"}
    assert check([rule], {"replicas": 1}) == []  # create: no oldSelf, the rule is skipped
    assert check([rule], {"replicas": 1}, old={"replicas": 2}) == ['spec: Invalid value: "object": cannot scale down']
    assert check([rule], {"replicas": 3}, old={"replicas": 2}) == []


def test_immutable_field_rule() -> None:
    rule = {"rule": "self == oldSelf", "message": "mode is immutable"}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "mode": {"type": "string", "x-kubernetes-validations": [rule]}}}}}
    vs = VersionSchema(schema)
    assert vs.validate({"spec": {"mode": "a"}}) == []
    assert [str(e) for e in vs.validate({"spec": {"mode": "b"}}, {"spec": {"mode": "a"}})] == [
        'spec.mode: Invalid value: "string": mode is immutable']
    assert vs.validate({"spec": {"mode": "b"}}, {"spec": {}}) == []  # no old value for mode: skipped


def test_optional_old_self_runs_on_create_too() -> None:
    rule = {"rule": "!oldSelf.hasValue() || self.replicas >= oldSelf.value().replicas",
            "optionalOldSelf": True, "message": "cannot scale down"}
    assert check([rule], {"replicas": 1}) == []
    assert check([rule], {"replicas": 1}, old={"replicas": 2}) == ['spec: Invalid value: "object": cannot scale down']
    first_create = {"rule": "oldSelf.hasValue() || self.replicas == 1", "optionalOldSelf": True,
                    "message": "start with one replica"}
    assert check([first_create], {"replicas": 2}) == ['spec: Invalid value: "object": start with one replica']


def test_map_list_items_correlate_by_key() -> None:
    items = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
             "x-kubernetes-validations": [{"rule": "self.size >= oldSelf.size", "message": "cannot shrink"}]}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"disks": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": items}}}}}
    vs = VersionSchema(schema)
    old = {"spec": {"disks": [{"name": "a", "size": 5}, {"name": "b", "size": 5}]}}
    new = {"spec": {"disks": [{"name": "b", "size": 4}, {"name": "a", "size": 6}, {"name": "c", "size": 1}]}}
    assert [str(e) for e in vs.validate(new, old)] == ['spec.disks[0]: Invalid value: "object": cannot shrink']


def test_unchanged_values_ratchet() -> None:
    rule = {"rule": "self.replicas <= 5", "message": "too many"}
    assert check([rule], {"replicas": 9}, old={"replicas": 9}) == []
    assert check([rule], {"replicas": 9, "name": "x"}, old={"replicas": 9}) == ['spec: Invalid value: "object": too many']


def test_schema_errors_block_rules() -> None:
    rule = {"rule": "self.replicas > 0"}
    assert check([rule], {"replicas": "many"}) == [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; '
        "correct the existing errors to complete validation"]


def test_runtime_errors() -> None:
    assert check([{"rule": "self.replicas > 0"}], {}) == [
        'spec: Invalid value: "object": no such key: replicas evaluating rule: self.replicas > 0']
    assert check([{"rule": "self.memory > 5"}], {"memory": "5Gi"}) == [
        "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, "
        "function or macro signature for rule: self.memory > 5"]


def test_escaped_property_names_and_special_formats() -> None:
    assert check([{"rule": "self.x__dash__y == 'ok'"}], {"x-y": "ok"}) == []
    assert check([{"rule": "self.created > timestamp('2024-01-01T00:00:00Z')"}], {"created": "2025-06-01T00:00:00Z"}) == []
    assert check([{"rule": "self.timeout <= duration('1h')"}], {"timeout": "90m"}) == [
        "spec: Invalid value: \"object\": failed rule: self.timeout <= duration('1h')"]
    assert [escape(n) for n in ("namespace", "a.b", "a__b", "a-b/c", "1a", "a b")] == [
        "__namespace__", "a__dot__b", "a__underscores__b", "a__dash__b__slash__c", None, None]


@pytest.mark.parametrize("rule", [
    "self.name.startsWith('ab') && self.name.endsWith('yz') && self.name.contains('m')",
    "self.name.matches('^[a-z]+$')",
    "self.name.lowerAscii() == 'abmyz' && self.name.upperAscii() == 'ABMYZ'",
    "self.name.split('m') == ['ab', 'yz'] && ['a', 'b'].join('-') == 'a-b'",
    "self.name.indexOf('m') == 2 && self.name.substring(0, 2) == 'ab' && self.name.replace('m', '') == 'abyz'",
    "self.tags.all(t, t.size() < 5) && self.tags.exists(t, t == 'b') && self.tags.exists_one(t, t == 'a')",
    "self.tags.filter(t, t != 'a').map(t, t + '!') == ['b!']",
    "self.tags.isSorted() && size(self.tags) == 2 && self.tags.indexOf('b') == 1",
    "[1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [3, 1].max() == 3",
    "'%s has %d tags'.format([self.name, size(self.tags)]) == 'abmyz has 2 tags'",
    "quantity('1Gi').isGreaterThan(quantity('512Mi')) && quantity('1Gi') == quantity('1024Mi')",
    "isQuantity('500m') && !isQuantity('five') && quantity('1.5').asApproximateFloat() == 1.5",
    "self.name.find('[my]+') == 'my' && 'a1b22'.findAll('[0-9]+') == ['1', '22']",
    "has(self.name) && !has(self.mode)",
    "self.ratio + 0.5 == 1.5",  # a number field written as 1 is a double
    "type(self.replicas) == int && self.replicas + 1 == 4",
])
def test_kubernetes_cel_library(rule: str) -> None:
    assert check([{"rule": rule}], {"name": "abmyz", "tags": ["a", "b"], "replicas": 3, "ratio": 1}) == []


def test_compile_errors_are_reported_at_runtime_too() -> None:
    validator = CelValidator(compile_schema({"type": "object", "x-kubernetes-validations": [{"rule": "self.a ||"}]}))
    errs = [str(e) for e in validator.validate({"a": True}, path="spec")]
    assert len(errs) == 1 and errs[0].startswith('spec: Invalid value: "object": rule compile error: compilation failed:')
    assert validator.compile_errors()[0][1] == 0


def test_cost_budget_stops_evaluation() -> None:
    validator = CelValidator(compile_schema({"type": "object", "x-kubernetes-validations": [
        {"rule": "self.items.all(i, i >= 0)"}, {"rule": "true"}],
        "properties": {"items": {"type": "array", "items": {"type": "integer"}}}}))
    errs = [str(e) for e in validator.validate({"items": [1, 2, 3]}, path="spec", budget=2)]
    assert errs == ['spec: Invalid value: "object": validation failed due to running out of cost budget, no further '
                    "validation rules will be run"]
