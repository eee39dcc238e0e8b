"""Run `x-kubernetes-validations` rules over an object, worded as the apiserver reports them.

Rules are compiled once per schema. `self` is the value at the rule's schema node (at the root also
`apiVersion`, `kind` and `metadata.name`/`generateName`), with property names escaped as Kubernetes
does and `date`/`date-time`/`duration`/`byte` strings as CEL timestamps, durations and bytes. Transition
rules (those using `oldSelf`) run only on update where the old value can be correlated (same map key,
same list-map key), unless `optionalOldSelf` is set. Errors of rules on values unchanged by an update
are dropped (ratcheting).
"""

from __future__ import annotations

import base64
import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mini_kube.apiserver.crd import gofmt
from mini_kube.apiserver.crd.cel_common import runtime_error
from mini_kube.apiserver.crd.cel_compile import CompiledRule, compile_rule, escape
from mini_kube.apiserver.crd.cel_engine import cel
from mini_kube.apiserver.crd.listtype import map_key, map_list_index
from mini_kube.apiserver.crd.openapi_validation import strict_equal
from mini_kube.apiserver.crd.structural import MISSING, Node
from mini_kube.apiserver.errors import FieldError
from mini_kube.machinery.duration import DurationError, parse_go_duration
from mini_kube.machinery.times import parse_time

if TYPE_CHECKING:
    import cel as cel_types

RUNTIME_COST_BUDGET = 10_000_000  # per object, as celconfig.RuntimeCELCostBudget
PER_CALL_LIMIT = 1_000_000  # per rule evaluation, as celconfig.PerCallLimit
MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024

_SPECIAL_FORMATS = frozenset({"date", "date-time", "duration", "byte"})


def _parse_duration(text: str) -> datetime.timedelta | None:
    try:
        return datetime.timedelta(microseconds=parse_go_duration(text) / 1000)
    except DurationError:
        return None


def _special(value: str, fmt: str) -> Any:
    try:
        if fmt == "byte":
            return base64.b64decode(value)
        if fmt == "duration":
            return _parse_duration(value) or value
        if fmt == "date":
            return datetime.datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=datetime.UTC)
        return parse_time(value) or value
    except ValueError:
        return value


def _needs_conversion(node: Node | None, memo: dict[int, bool]) -> bool:
    if node is None:
        return False
    key = id(node)
    if key not in memo:
        memo[key] = False
        memo[key] = (node.embedded or (node.type == "string" and node.format in _SPECIAL_FORMATS)
                     or node.type == "number"
                     or any(escape(k) != k for k in node.properties)
                     or any(_needs_conversion(c, memo) for c in node.properties.values())
                     or _needs_conversion(node.items, memo) or _needs_conversion(node.additional, memo))
    return memo[key]


class _Converter:
    """Turns JSON values into the values CEL sees, for one schema tree."""

    def __init__(self, root: Node) -> None:
        self.memo: dict[int, bool] = {}
        _needs_conversion(root, self.memo)

    def to_cel(self, value: Any, node: Node | None, resource: bool = False) -> Any:
        if node is None or value is None:
            return value
        if not resource and not self.memo.get(id(node), True):
            return value
        if isinstance(value, dict):
            if node.additional is not None and not node.properties:
                return {k: self.to_cel(v, node.additional, node.additional.embedded) for k, v in value.items()}
            out = {}
            meta_root = resource or node.embedded
            for k, v in value.items():
                if meta_root and k == "metadata" and isinstance(v, dict):
                    out[k] = {m: v[m] for m in ("name", "generateName") if m in v}
                    continue
                name = escape(k)
                if name is not None:
                    sub = node.properties.get(k)
                    out[name] = self.to_cel(v, sub, sub.embedded) if sub is not None else v
            return out
        if isinstance(value, list):
            return [self.to_cel(v, node.items, node.items.embedded if node.items else False) for v in value]
        if isinstance(value, str) and node.format in _SPECIAL_FORMATS:
            return _special(value, node.format)
        if node.type == "number" and type(value) is int:
            return float(value)  # a number field is a CEL double, even when written as 1
        if node.type == "integer" and type(value) is float and value.is_integer():
            return int(value)
        return value


@dataclass(eq=False, slots=True)
class _CelNode:
    schema: Node
    resource: bool
    rules: list[CompiledRule] = field(default_factory=list)
    functions: dict[str, Any] = field(default_factory=dict)
    uses_old_self: bool = False
    props: dict[str, _CelNode] = field(default_factory=dict)
    additional: _CelNode | None = None
    items: _CelNode | None = None


def _build(node: Node, resource: bool) -> _CelNode | None:
    if not node.has_rules:
        return None
    cnode = _CelNode(node, resource)
    cnode.rules = [compile_rule(r, node, resource) for r in node.rules]
    for rule in cnode.rules:
        cnode.functions.update(rule.functions)
        cnode.uses_old_self |= rule.uses_old_self
    for k, sub in node.properties.items():
        child = _build(sub, sub.embedded)
        if child is not None:
            cnode.props[k] = child
    if node.additional is not None:
        cnode.additional = _build(node.additional, node.additional.embedded)
    if node.items is not None:
        cnode.items = _build(node.items, node.items.embedded)
    return cnode


class _Run:
    """The state of one validation: errors and the remaining cost budget."""

    __slots__ = ("budget", "errs", "converter")

    def __init__(self, budget: int, converter: _Converter) -> None:
        self.errs: list[FieldError] = []
        self.budget = budget
        self.converter = converter


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _size(value: Any) -> int:
    return len(value) if isinstance(value, dict | list | str) else 1


class CelValidator:
    """The compiled rules of one schema tree; `validate(obj, old)` runs them."""

    def __init__(self, node: Node, resource_root: bool = True) -> None:
        self.root = _build(node, resource_root)
        self.converter = _Converter(node)

    @property
    def has_rules(self) -> bool:
        return self.root is not None

    def compile_errors(self) -> list[tuple[Node, int, CompiledRule]]:
        """Rules that failed to compile: (schema node, rule index, compiled rule)."""
        found: list[tuple[Node, int, CompiledRule]] = []

        def walk(c: _CelNode | None) -> None:
            if c is None:
                return
            found.extend((c.schema, i, r) for i, r in enumerate(c.rules) if r.error or r.message_error)
            for sub in (*c.props.values(), c.additional, c.items):
                walk(sub)
        walk(self.root)
        return found

    def validate(self, obj: Any, old: Any = MISSING, path: str = "", budget: int = RUNTIME_COST_BUDGET,
                 ratchet: bool = True) -> list[FieldError]:
        """Field errors of the rules over `obj` (an update when `old` is given; `ratchet` tolerates
        failures of unchanged values)."""
        if self.root is None:
            return []
        run = _Run(budget, self.converter)
        anchor = _Anchor(obj, old) if old is not MISSING and ratchet else None
        _validate(self.root, obj, old, path, run, anchor)
        return run.errs


class _Anchor:
    """The nearest value correlated with its old value; rule failures under it ratchet if it is unchanged."""

    __slots__ = ("new", "old", "_equal")

    def __init__(self, new: Any, old: Any) -> None:
        self.new, self.old = new, old
        self._equal: bool | None = None

    def unchanged(self) -> bool:
        if self._equal is None:
            self._equal = strict_equal(self.new, self.old)
        return self._equal


def _validate(c: _CelNode, obj: Any, old: Any, path: str, run: _Run, anchor: _Anchor | None) -> None:
    if obj is None or run.budget < 0:
        return
    if c.rules:
        _expressions(c, obj, old, path, run, anchor)
        if run.budget < 0:
            return
    if isinstance(obj, dict):
        old_map = old if isinstance(old, dict) and c.schema.map_type in ("", "granular", "atomic") else None
        if c.additional is not None:
            for k, v in obj.items():
                old_v = old_map.get(k, MISSING) if old_map is not None else MISSING
                sub_anchor = _Anchor(v, old_v) if old_v is not MISSING and anchor is not None else anchor
                _validate(c.additional, v, old_v, f"{path}[{k}]", run, sub_anchor)
                if run.budget < 0:
                    return
        for k, sub in c.props.items():
            if k in obj:
                old_v = old_map.get(k, MISSING) if old_map is not None else MISSING
                sub_anchor = _Anchor(obj[k], old_v) if old_v is not MISSING and anchor is not None else anchor
                _validate(sub, obj[k], old_v, _child(path, k), run, sub_anchor)
                if run.budget < 0:
                    return
    elif isinstance(obj, list) and c.items is not None:
        index = map_list_index(c.schema, old) if c.schema.list_type == "map" and isinstance(old, list) else None
        for i, item in enumerate(obj):
            old_item = index.get(map_key(c.schema, item), MISSING) if index is not None else MISSING
            sub_anchor = _Anchor(item, old_item) if old_item is not MISSING and anchor is not None else anchor
            _validate(c.items, item, old_item, f"{path}[{i}]", run, sub_anchor)
            if run.budget < 0:
                return


def _expressions(c: _CelNode, obj: Any, old: Any, path: str, run: _Run, anchor: _Anchor | None) -> None:
    schema = c.schema
    type_name = schema.type
    field_path = path if path else "<nil>"
    if run.budget <= 0:
        run.errs.append(gofmt.invalid(field_path, type_name, "validation failed due to running out of cost budget, "
                                                             "no further validation rules will be run"))
        run.budget = -1
        return
    has_old = old is not MISSING and old is not None
    self_value = run.converter.to_cel(obj, schema, c.resource)
    variables: dict[str, Any] = {"self": self_value}
    old_value = run.converter.to_cel(old, schema, c.resource) if has_old and c.uses_old_self else None
    if has_old and c.uses_old_self:
        variables["oldSelf"] = old_value
    context = cel().Context(variables, c.functions)
    optional_context = None
    for rule in c.rules:
        if rule.error:
            run.errs.append(gofmt.invalid(field_path, type_name, f"rule compile error: {rule.error}"))
            continue
        if rule.program is None:
            continue
        ctx = context
        if rule.uses_old_self and not has_old and not rule.optional_old_self:
            continue  # transition rules need an old value
        if rule.optional_old_self:
            if optional_context is None:
                wrapped = cel().OptionalValue.of(old_value) if has_old else cel().OptionalValue.none()
                optional_context = cel().Context({"self": self_value, "oldSelf": wrapped}, c.functions)
            ctx = optional_context
        cost = 1 + rule.macros * _size(obj)
        if cost > PER_CALL_LIMIT:
            run.errs.append(gofmt.invalid(field_path, type_name,
                                          "'operation cancelled: actual cost limit exceeded': no further validation "
                                          f"rules will be run due to call cost exceeds limit for rule: {rule.error_string}"))
            run.budget = -1
            return
        if cost > run.budget:
            run.errs.append(gofmt.invalid(field_path, type_name, "validation failed due to running out of cost budget, "
                                                                 "no further validation rules will be run"))
            run.budget = -1
            return
        run.budget -= cost
        try:
            result = rule.program.execute(ctx)
        except Exception as exc:  # the engine raises builtin exception types for CEL runtime errors
            text = str(exc)
            if isinstance(exc, TypeError) and text.startswith("No such overload"):
                run.errs.append(gofmt.invalid(
                    field_path, type_name, "'no such overload': call arguments did not match a supported operator, "
                                           f"function or macro signature for rule: {rule.error_string}"))
            else:
                run.errs.append(gofmt.invalid(field_path, type_name,
                                              f"{runtime_error(exc)} evaluating rule: {rule.error_string}"))
            continue
        if result is True:
            continue
        if result is not False:
            run.errs.append(gofmt.invalid(field_path, type_name,
                                          "rule compile error: cel expression must evaluate to a bool"))
            continue
        if not rule.uses_old_self and anchor is not None and anchor.unchanged():
            continue  # ratcheting: the value did not change, the failure is only a warning
        error_path = _child(path, rule.field_path) if rule.field_path else field_path
        detail = _message(rule, ctx) if rule.message_program is not None else rule.default_message
        run.errs.append(_error_for_reason(rule.reason, error_path, type_name, detail))


def _message(rule: CompiledRule, ctx: cel_types.Context) -> str:
    try:
        value = rule.message_program.execute(ctx)  # type: ignore[union-attr]
    except Exception:  # a failing messageExpression falls back to the message
        return rule.default_message
    if not isinstance(value, str):
        return rule.default_message
    text = value.strip()
    if not text or "\n" in text or len(text.encode()) > MAX_MESSAGE_EXPRESSION_BYTES:
        return rule.default_message
    return text


def _error_for_reason(reason: str | None, path: str, type_name: str, detail: str) -> FieldError:
    if reason == "FieldValueForbidden":
        return gofmt.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return gofmt.required(path, detail)
    if reason == "FieldValueDuplicate":
        return gofmt.duplicate(path, type_name)
    return gofmt.invalid(path, type_name, detail)
