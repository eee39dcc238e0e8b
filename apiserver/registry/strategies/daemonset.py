"""DaemonSets: the template generation, which apps/v1 serves as the `deprecated.daemonset.template.generation`
annotation (1 on create, one more each time the Pod template changes; a client cannot set it on update)."""

from __future__ import annotations

from typing import Any

from ..strategy import Strategy, WriteContext

ANNOTATION = "deprecated.daemonset.template.generation"


def _generation(obj: dict[str, Any]) -> int:
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION, "")
    return int(value) if str(value).isdigit() else 0


def _set(obj: dict[str, Any], generation: int) -> None:
    meta = obj.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), ANNOTATION: str(generation)}


class DaemonSetStrategy(Strategy):
    def prepare_for_create(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        super().prepare_for_create(ctx, obj)
        _set(obj, max(_generation(obj), 1))

    def prepare_for_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> None:
        super().prepare_for_update(ctx, new, old)
        if ctx.subresource:
            return
        generation = _generation(old)
        if (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
            generation += 1
        _set(new, max(generation, 1))
