"""Server-side defaulting of built-in kinds, as a real 1.32 apiserver does it on create and update.

`apply_defaults("io.k8s.api.apps.v1.Deployment", obj)` fills `obj` in place, down through nested
definitions, lists and maps. Per definition it applies, in order: the fields Go always writes
(`go_shapes`), rules that must see the raw input (`default_rules.BEFORE`), the defaults stated in
upstream descriptions for the fields in `default_table`, then computed rules (`default_rules.AFTER`),
and then recurses. The per-definition plan is compiled once, on first use, and pruned to the
definitions that have something to default below them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from mini_kube.apiserver.schema import default_rules, go_shapes
from mini_kube.apiserver.schema.default_table import DESCRIBED_DEFAULTS
from mini_kube.apiserver.schema.definitions import definitions, references, resolve
from mini_kube.apiserver.schema.described import NO_DEFAULT, described_default

# Definitions whose integer fields are Go values, not pointers: 0 there means "unset".
ZERO_MEANS_UNSET = frozenset({"io.k8s.api.core.v1.Probe"})

_OBJ, _LIST, _MAP = "", "[]", "{}"


@dataclass(slots=True, eq=False)
class _Plan:
    shapes: tuple[tuple[str, Any], ...] = ()
    before: tuple[default_rules.Rule, ...] = ()
    described: tuple[tuple[tuple[str, ...], Any], ...] = ()
    after: tuple[default_rules.Rule, ...] = ()
    zero_unset: bool = False
    children: list[tuple[str, str, _Plan]] = field(default_factory=list)

    def has_own_work(self) -> bool:
        return bool(self.shapes or self.before or self.described or self.after)


def _definition_of(name: str, path: list[str]) -> str:
    """The definition that holds the last element of a dotted path inside `name`."""
    for prop in path:
        target = resolve(definitions()[name]["properties"][prop])
        name = next(n for n, s in definitions().items() if s is target)
    return name


def described_values(name: str) -> tuple[tuple[tuple[str, ...], Any], ...]:
    """The (path, value) defaults of one definition, read from upstream descriptions."""
    out = []
    for dotted in DESCRIBED_DEFAULTS.get(name, ()):
        path = dotted.split(".")
        value = described_default(_definition_of(name, path[:-1]), path[-1])
        if value is NO_DEFAULT:
            raise LookupError(f"upstream description of {name}.{dotted} states no default")
        out.append((tuple(path), value))
    return tuple(out)


def _own_plan(name: str) -> _Plan:
    return _Plan(
        shapes=go_shapes.always_written(name),
        before=default_rules.BEFORE.get(name, ()),
        described=described_values(name),
        after=default_rules.AFTER.get(name, ()),
        zero_unset=name in ZERO_MEANS_UNSET,
    )


_PLANS: dict[str, _Plan] = {}  # definitions with defaulting work somewhere below, children linked
_SETTLED: set[str] = set()  # definitions already decided (in _PLANS or known to need nothing)
_LOCK = threading.Lock()


def _plan(root: str) -> _Plan | None:
    """The plan of one definition, building only the part of the graph reachable from it (once)."""
    if root not in _SETTLED:
        with _LOCK:
            if root not in _SETTLED:
                _settle(root)
    return _PLANS.get(root)


def _settle(root: str) -> None:
    if root not in definitions():
        _SETTLED.add(root)
        return
    reach, queue = [root], [root]
    seen = {root}
    edges: dict[str, list[tuple[str, str, str]]] = {}
    while queue:
        name = queue.pop()
        edges[name] = references(name)
        for _, _, target in edges[name]:
            if target not in seen and target not in _SETTLED and target in definitions():
                seen.add(target)
                reach.append(target)
                queue.append(target)
    plans = {name: _own_plan(name) for name in reach}
    useful = {name for name, plan in plans.items() if plan.has_own_work()}

    def is_useful(target: str) -> bool:
        return target in useful or target in _PLANS

    changed = True
    while changed:
        changed = False
        for name in reach:
            if name not in useful and any(is_useful(target) for _, _, target in edges[name]):
                useful.add(name)
                changed = True
    for name in reach:
        if name in useful:
            plans[name].children = [(prop, container, plans.get(target) or _PLANS[target])
                                    for prop, container, target in edges[name] if is_useful(target)]
    for name in reach:
        if name in useful:
            _PLANS[name] = plans[name]
    _SETTLED.update(reach)


def _fresh(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _unset(value: Any, default: Any, zero_unset: bool) -> bool:
    if value is None:
        return True
    if value == "" and isinstance(default, str):  # Go string values: "" is unset
        return True
    return zero_unset and value == 0 and not isinstance(value, bool)


def _apply(plan: _Plan, obj: dict[str, Any]) -> None:
    for key, zero in plan.shapes:
        if obj.get(key) is None:
            obj[key] = _fresh(zero)
    for rule in plan.before:
        rule(obj)
    for path, value in plan.described:
        target: Any = obj
        for key in path[:-1]:
            nested = target.get(key)
            if nested is None:
                nested = target[key] = {}
            if not isinstance(nested, dict):
                break
            target = nested
        else:
            if _unset(target.get(path[-1]), value, plan.zero_unset):
                target[path[-1]] = _fresh(value)
    for rule in plan.after:
        rule(obj)
    for prop, container, child in plan.children:
        value = obj.get(prop)
        if value is None:
            continue
        if container == _OBJ:
            if isinstance(value, dict):
                _apply(child, value)
        elif container == _LIST:
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        _apply(child, item)
        elif isinstance(value, dict):
            for item in value.values():
                if isinstance(item, dict):
                    _apply(child, item)


def apply_defaults(definition_name: str, obj: dict[str, Any]) -> None:
    """Default `obj` (an object of upstream definition `definition_name`) in place.

    Unknown definitions (custom resources) are left alone. Values of the wrong type are skipped,
    not repaired: type errors are reported by `fields.type_errors`. Nested object metadata (pod
    templates) gets `creationTimestamp: null` like Go writes it; the top-level one is the server's.
    """
    plan = _plan(definition_name)
    if plan is None or not isinstance(obj, dict):
        return
    meta = obj.get("metadata")
    had_timestamp = isinstance(meta, dict) and "creationTimestamp" in meta
    _apply(plan, obj)
    meta = obj.get("metadata")
    if not had_timestamp and isinstance(meta, dict) and meta.get("creationTimestamp", "") is None:
        del meta["creationTimestamp"]
