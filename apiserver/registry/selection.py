"""Which stored objects a list, watch or collection delete selects. Labels and most field labels read the stored
object; a custom resource's selectableFields are those of the version the request names, so they read the
object as that version serves it (converted first, by webhook when the CRD converts so), as upstream's
per-version storage filters custom resources after decoding them into the request's version."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mini_kube.machinery.labels import Selector

from ..crd.serving import served
from ..resources import ResourceType
from ..selectors import FieldSelector
from .cache import Entry

View = Callable[[dict[str, Any]], dict[str, Any]]


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    return obj


def converts_for_fields(res: ResourceType, fields: FieldSelector) -> bool:
    """Whether `fields` must read objects of `res` as the request's version serves them."""
    return res.crd is not None and fields.reads_object


def field_view(res: ResourceType, fields: FieldSelector) -> View:
    """What `fields` reads of a stored object: itself, or a custom resource as its version serves it (after
    `prepare`)."""
    if converts_for_fields(res, fields):
        return lambda obj: served(res, obj)
    return stored


async def prepare(res: ResourceType, fields: FieldSelector, objs: Iterable[dict[str, Any] | None]) -> None:
    """Convert by webhook what `field_view` will read (nothing unless the resource converts so)."""
    strategy = res.strategy
    if converts_for_fields(res, fields) and strategy is not None and strategy.converts_on_read:
        await strategy.prepare_reads(res, [obj for obj in objs if obj is not None])


async def select(res: ResourceType, entries: list[Entry], labels: Selector, fields: FieldSelector) -> list[Entry]:
    """The entries both selectors match."""
    chosen = entries if labels.empty else [
        e for e in entries if labels.matches((e.obj.get("metadata") or {}).get("labels"))]
    if fields.empty:
        return chosen
    if not converts_for_fields(res, fields):  # built-in kinds: the stored object, nothing to convert
        return [e for e in chosen if fields.matches(e.obj)]
    await prepare(res, fields, [e.obj for e in chosen])
    return [e for e in chosen if fields.matches(served(res, e.obj))]
