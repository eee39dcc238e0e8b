"""Bounds on what one request body may cost, checked before the body is built into objects.

- Nesting: at most MAX_DEPTH levels of objects and lists in any body (JSON, YAML, patches, custom resources).
  Every stored object is serialized with orjson, whose encoder stops at 255 levels; 128 levels is far beyond
  any real Kubernetes object and leaves room for the server's own wrapping (watch events, lists, Tables).
- YAML aliases: a document may not expand, through aliases, to more than MAX_ALIAS_EXPANSION nodes beyond its
  own (the 481-byte "billion laughs" body expands to 10^8); upstream rejects excessive aliasing the same way.
- Sizes in general: request bodies are at most 3 MiB (negotiation.MAX_BODY), JSON patch copies at most that
  much in total (patch.json_patch).
The checks walk parser events or decoded values iteratively, so hostile depth costs no recursion.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from .. import errors

MAX_DEPTH = 128
MAX_ALIAS_EXPANSION = 100_000

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def too_deep() -> errors.StatusError:
    return errors.bad_request(f"the request body is nested more than {MAX_DEPTH} levels deep")


def check_yaml(body: bytes | str) -> None:
    """Refuse YAML that nests too deeply or aliases too much, from the event stream (nothing is built)."""
    depth = 0
    sizes: list[int] = []  # nodes in each open collection so far
    anchors: dict[str, int] = {}
    anchored: list[str | None] = []
    expanded = 0
    try:
        for event in yaml.parse(body, Loader=_Loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise too_deep()
                sizes.append(1)
                anchored.append(event.anchor)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                size = sizes.pop()
                anchor = anchored.pop()
                if anchor:
                    anchors[anchor] = size
                if sizes:
                    sizes[-1] += size
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor:
                    anchors[event.anchor] = 1
                if sizes:
                    sizes[-1] += 1
            elif isinstance(event, yaml.AliasEvent):
                grown = anchors.get(event.anchor, 1)
                expanded += grown
                if expanded > MAX_ALIAS_EXPANSION:
                    raise errors.bad_request("error converting YAML to JSON: yaml: document contains excessive "
                                             "aliasing")
                if sizes:
                    sizes[-1] += grown
    except yaml.YAMLError as exc:
        if "depth" in str(exc) or "nesting" in str(exc):  # libyaml's own limit, deeper than ours
            raise too_deep() from None
        return  # malformed: the decoder reports it in its own words


def check_depth(value: Any) -> None:
    """Refuse a decoded value nested more than MAX_DEPTH levels (iteratively)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth >= MAX_DEPTH:
            raise too_deep()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def bounded_size(value: Any, limit: int) -> int:
    """The JSON size of `value`, counted only until it passes `limit` (then a number above it)."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        node = stack.pop()
        if isinstance(node, dict):
            total += 2 + sum(len(k) + 4 for k in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            total += 2 + len(node)
            stack.extend(node)
        elif isinstance(node, str):
            total += len(node) + 2
        else:
            total += 5
    return total
