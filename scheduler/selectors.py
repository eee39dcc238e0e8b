"""Label selectors (metav1.LabelSelector) and node selectors (v1.NodeSelector) as the scheduler evaluates them."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery import labels as labelselector


def label_selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A LabelSelector: None selects nothing, `{}` everything (as in affinity terms)."""
    return labelselector.matches(selector, labels)


def _number(text: str) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def requirement_matches(req: dict[str, Any], value: str | None) -> bool:
    """One NodeSelectorRequirement against the value of its key (None: the key is absent)."""
    op = req.get("operator")
    values: list[str] = req.get("values") or []
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(values) == 1:
        have, want = _number(value), _number(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def term_matches(term: dict[str, Any], name: str, labels: dict[str, str]) -> bool:
    """A NodeSelectorTerm: its matchExpressions (labels) and matchFields (metadata.name) all hold; an empty term
    matches nothing."""
    expressions, fields = term.get("matchExpressions") or (), term.get("matchFields") or ()
    if not expressions and not fields:
        return False
    if not all(requirement_matches(r, labels.get(r.get("key", ""))) for r in expressions):
        return False
    return all(requirement_matches(r, name if r.get("key") == "metadata.name" else None) for r in fields)


def node_selector_matches(selector: dict[str, Any], name: str, labels: dict[str, str]) -> bool:
    """A NodeSelector: any of its terms."""
    return any(term_matches(t, name, labels) for t in selector.get("nodeSelectorTerms") or ())
