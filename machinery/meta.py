"""Object metadata accessors, as apimachinery's meta.Accessor reads a decoded object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object's metadata (an empty dict when it has none)."""
    found: dict[str, Any] = obj.get("metadata") or {}
    return found


def controller_ref(owner: dict[str, Any]) -> dict[str, Any]:
    """An ownerReference naming `owner` as the controller (metav1.NewControllerRef)."""
    return {"apiVersion": owner.get("apiVersion", ""), "kind": owner.get("kind", ""), "name": meta(owner)["name"],
            "uid": meta(owner)["uid"], "controller": True, "blockOwnerDeletion": True}
