"""Label selectors (metav1.LabelSelector) evaluated against an object's labels, as upstream's
`LabelSelectorAsSelector` does: None selects nothing, an empty selector everything."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Whether `selector` selects an object with `labels`."""
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or ()
        present = key in labels
        if (op == "In" and (not present or labels[key] not in values)) or \
                (op == "NotIn" and present and labels[key] in values) or \
                (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return True
