"""events.k8s.io/v1 Events share the core/v1 Events' storage, as upstream: they are stored in the core shape
and converted on the way in and out (regarding <-> involvedObject, note <-> message, deprecated* <-> the core
timestamps, count and source, reportingController <-> reportingComponent)."""

from __future__ import annotations

from typing import Any

from ...resources import ResourceType
from ..strategy import Strategy, WriteContext

CORE_API_VERSION = "v1"
EVENTS_API_VERSION = "events.k8s.io/v1"
# events.k8s.io/v1 field -> core/v1 field, where the names differ
RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
TO_EVENTS = {core: events for events, core in RENAMED.items()}


def _rename(obj: dict[str, Any], names: dict[str, str], api_version: str) -> dict[str, Any]:
    out = {names.get(key, key): value for key, value in obj.items()}
    out["apiVersion"] = api_version
    return out


def to_core(obj: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in the core/v1 shape."""
    return _rename(obj, RENAMED, CORE_API_VERSION)


def to_events(obj: dict[str, Any]) -> dict[str, Any]:
    """A core/v1 Event in the events.k8s.io/v1 shape."""
    converted = _rename(obj, TO_EVENTS, EVENTS_API_VERSION)
    if isinstance(converted.get("deprecatedSource"), dict) and not converted["deprecatedSource"]:
        del converted["deprecatedSource"]
    return converted


def convert(res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """A stored Event (either shape) as `res` serves it."""
    if obj.get("apiVersion") == res.api_version:
        return obj
    return to_events(obj) if res.group == "events.k8s.io" else to_core(obj)


class EventsV1Strategy(Strategy):
    """Writes through events.k8s.io/v1 are validated in that shape and stored in the core shape."""

    def read(self, res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        return convert(res, obj)

    async def before_write(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any] | None) -> None:
        core = to_core(new)
        new.clear()
        new.update(core)
