"""Small text formats shared by row printers: label maps, label selectors, lists that say `+ N more...`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mini_kube.machinery.labels import selector_string

NONE = "<none>"
UNSET = "<unset>"


def format_labels(labels: Mapping[str, str] | None) -> str:
    """`k=v,k2=v2` sorted by key, `<none>` when empty (labels.FormatLabels)."""
    if not labels:
        return NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_selector(selector: Mapping[str, Any] | None) -> str:
    """metav1.FormatLabelSelector: `<none>` when it selects everything or nothing, `<error>` if invalid."""
    text = selector_string(selector)
    if text is None:
        return "<error>"
    return text or NONE


def go_selector_struct(selector: Mapping[str, Any]) -> str:
    """A LabelSelector as Go's generated String() prints it (`&LabelSelector{MatchLabels:...}`)."""
    labels = selector.get("matchLabels") or {}
    label_text = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or ()
    )
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{label_text}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")


def with_more(items: list[str], total: int, limit: int = 3, empty: str = UNSET) -> str:
    """Join the first `limit` items, adding ` + N more...` (listWithMoreString)."""
    if total > limit:
        return f"{','.join(items[:limit])} + {total - limit} more..."
    return ",".join(items) or empty


def bool_text(value: bool | None) -> str:
    """printBoolPtr: `True`, `False` or `<unset>`."""
    if value is None:
        return UNSET
    return "True" if value else "False"


def int_or_string(value: Any) -> str:
    """intstr.IntOrString.String()."""
    return str(value) if not isinstance(value, bool) else str(int(value))


def container_cells(containers: Iterable[Mapping[str, Any]] | None) -> tuple[str, str]:
    """Names and images of containers, comma separated (layoutContainerCells)."""
    containers = list(containers or ())
    return (",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers))


def access_modes(modes: Iterable[str] | None) -> str:
    """Access modes abbreviated in upstream's fixed order (`RWO,ROX,RWX,RWOP`)."""
    present = set(modes or ())
    order = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
             ("ReadWriteOncePod", "RWOP"))
    return ",".join(short for mode, short in order if mode in present)


def dig(obj: Mapping[str, Any] | None, *path: str, default: Any = None) -> Any:
    """Follow keys through nested mappings; `default` when any step is missing or null."""
    for key in path:
        if not isinstance(obj, Mapping):
            return default
        obj = obj.get(key)
        if obj is None:
            return default
    return obj
