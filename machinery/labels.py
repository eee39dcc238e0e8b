"""Labels and their selectors, as apimachinery's pkg/labels and metav1's selector helpers: the selector string
(`a=b,c in (d,e),!f,g>3`) parsed once and matched per object; metav1.LabelSelector (`matchLabels`,
`matchExpressions`) matched as `LabelSelectorAsSelector` does (None selects nothing, an empty selector
everything) and printed as its selector string; v1.NodeSelector terms as the scheduler and the DaemonSet
controller evaluate them. Every requirement, whichever form it came in, is judged by `holds`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .names import is_qualified_name, is_valid_label_value

_KEY = r"(?:[a-z0-9A-Z](?:[-a-z0-9A-Z_.]*[a-z0-9A-Z])?/)?[a-z0-9A-Z](?:[-a-z0-9A-Z_.]*[a-z0-9A-Z])?"
_VALUE = r"(?:[a-z0-9A-Z](?:[-a-z0-9A-Z_.]*[a-z0-9A-Z])?)?"
_SET_RE = re.compile(rf"^\s*(!?)\s*({_KEY})\s*(?:(notin|in)\s*\(([^)]*)\)|(==|!=|=)\s*({_VALUE})\s*|(?:\s*))$")
_NUM_RE = re.compile(rf"^\s*({_KEY})\s*(>|<)\s*(-?\d+)\s*$")
# metav1.LabelSelectorRequirement and v1.NodeSelectorRequirement operators -> the selector string's
SELECTOR_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
NODE_OPERATORS = {**SELECTOR_OPERATORS, "Gt": "gt", "Lt": "lt"}
_STRING_FORMS = {"in": "{key} in ({values})", "notin": "{key} notin ({values})", "exists": "{key}", "!": "!{key}"}


class SelectorError(ValueError):
    """A selector string that does not parse; the message is upstream's (the API server answers it as a 400)."""


def holds(op: str, value: str | None, values: Sequence[str]) -> bool:
    """One requirement on a label's value (None: the object has no such label). `op` is the selector string's
    operator: "=", "!=", "in", "notin", "exists", "!" (does not exist), "gt", "lt" (one integer value)."""
    if op in ("=", "in"):
        return value is not None and value in values
    if op in ("!=", "notin"):
        return value is None or value not in values
    if op == "exists":
        return value is not None
    if op == "!":
        return value is None
    if op in ("gt", "lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if op == "gt" else have < want
    return False


@dataclass(frozen=True, slots=True)
class Requirement:
    """One term of a selector string."""

    key: str
    op: str  # as `holds` takes it
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return holds(self.op, labels.get(self.key), self.values)


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _requirement(part: str) -> Requirement:
    match = _SET_RE.match(part)
    if match:
        neg, key, set_op, set_values, eq_op, eq_value = match.groups()
        if neg and (set_op or eq_op):
            raise SelectorError(f"unable to parse requirement: {part.strip()!r}")
        if neg:
            return Requirement(key, "!")
        if set_op:
            return Requirement(key, set_op, tuple(v.strip() for v in set_values.split(",")))  # `()` holds ""
        if eq_op:
            return Requirement(key, "!=" if eq_op == "!=" else "=", (eq_value,))
        return Requirement(key, "exists")
    match = _NUM_RE.match(part)
    if match:
        key, op, number = match.groups()
        return Requirement(key, "gt" if op == ">" else "lt", (number,))
    raise SelectorError(f"unable to parse requirement: invalid label selector: {part.strip()!r}")


def _check(req: Requirement) -> None:
    """Keys must be qualified names and values label values, as upstream's selector parser checks."""
    problems = is_qualified_name(req.key)
    if problems:
        raise SelectorError(f'unable to parse requirement: <nil>: Invalid value: "{req.key}": {"; ".join(problems)}')
    if req.op in ("gt", "lt"):
        return
    for value in req.values:
        problems = is_valid_label_value(value)
        if problems:
            raise SelectorError(f'unable to parse requirement: <nil>: Invalid value: "{value}": '
                                f'{"; ".join(problems)}')


class Selector:
    """A parsed selector string; an empty one matches everything."""

    def __init__(self, requirements: tuple[Requirement, ...]) -> None:
        self.requirements = requirements

    @classmethod
    def parse(cls, text: str | None) -> Selector:
        """labels.Parse; SelectorError with upstream's message when `text` is not a selector."""
        if not text or not text.strip():
            return cls(())
        reqs = []
        for part in _split_top(text):
            if not part.strip():
                raise SelectorError("unable to parse requirement: found '', expected: identifier")
            reqs.append(_requirement(part))
        for req in reqs:
            _check(req)
        return cls(tuple(reqs))

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if not self.requirements:
            return True
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)


def matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Whether the metav1.LabelSelector `selector` selects an object with `labels` (an unknown operator is
    passed over, as validation refuses it before it is stored)."""
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        op = SELECTOR_OPERATORS.get(expr.get("operator", ""))
        if op is not None and not holds(op, labels.get(expr.get("key", "")), expr.get("values") or ()):
            return False
    return True


def selector_string(selector: Mapping[str, Any] | None) -> str | None:
    """A metav1.LabelSelector as its selector string (`LabelSelectorAsSelector(s).String()`: `a=b,c in (d,e),!f`,
    by key, set values sorted); "" for None; None when it is not a valid selector."""
    if selector is None:
        return ""
    parts: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        if is_qualified_name(key) or is_valid_label_value(str(value)):
            return None
        parts.append((key, f"{key}={value}"))
    for expr in selector.get("matchExpressions") or ():
        key, values = expr.get("key", ""), expr.get("values") or []
        op = SELECTOR_OPERATORS.get(expr.get("operator", ""))
        if op is None or is_qualified_name(key):
            return None
        if op in ("in", "notin"):
            if not values or any(is_valid_label_value(v) for v in values):
                return None
        elif values:
            return None
        parts.append((key, _STRING_FORMS[op].format(key=key, values=",".join(sorted(set(values))))))
    parts.sort(key=lambda part: part[0])
    return ",".join(text for _, text in parts)


def node_requirement_matches(req: Mapping[str, Any], value: str | None) -> bool:
    """One v1.NodeSelectorRequirement against the value of its key (None: the key is absent); an unknown
    operator matches nothing."""
    op = NODE_OPERATORS.get(req.get("operator", ""))
    return op is not None and holds(op, value, req.get("values") or ())


def node_term_matches(term: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    """A v1.NodeSelectorTerm against a node: its matchExpressions (labels) and matchFields (`metadata.name`) all
    hold; an empty term matches nothing."""
    expressions, fields = term.get("matchExpressions") or (), term.get("matchFields") or ()
    if not expressions and not fields:
        return False
    if not all(node_requirement_matches(r, labels.get(r.get("key", ""))) for r in expressions):
        return False
    return all(node_requirement_matches(r, name if r.get("key") == "metadata.name" else None) for r in fields)


def node_selector_matches(selector: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    """A v1.NodeSelector: any of its terms."""
    return any(node_term_matches(t, name, labels) for t in selector.get("nodeSelectorTerms") or ())
