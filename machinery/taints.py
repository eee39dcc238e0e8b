"""Taints and tolerations (v1.Toleration.ToleratesTaint and component-helpers' FindMatchingUntoleratedTaint), as
the scheduler and the DaemonSet controller judge them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """ToleratesTaint: an empty effect tolerates every effect, an empty key (with Exists) every key; Equal (the
    default operator) compares the values."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(taints: Iterable[Mapping[str, Any]], tolerations: Iterable[Mapping[str, Any]],
                      effects: Callable[[Mapping[str, Any]], bool]) -> Mapping[str, Any] | None:
    """The first taint (among those `effects` selects) that no toleration tolerates."""
    tolerations = list(tolerations)
    for taint in taints:
        if effects(taint) and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None
