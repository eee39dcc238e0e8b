"""Load a YAML request body as the apiserver does, noting repeated keys instead of losing them.

The apiserver converts YAML to JSON with go-yaml, which reports a repeated key as
`line 5: key "name" already set in map` (the line of the second occurrence); the later value wins.
Timestamps stay strings and keys become strings, as in the JSON the apiserver decodes.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """A safe loader that records duplicate mapping keys."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.duplicates: list[str] = []


def _mapping(loader: _Loader, node: yaml.MappingNode) -> dict[str, Any]:
    loader.flatten_mapping(node)
    mapping: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        key = key if isinstance(key, str) else json.dumps(key)
        if key in mapping:
            loader.duplicates.append(f"line {key_node.start_mark.line + 1}: key {json.dumps(key)} already set in map")
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_Loader.add_constructor("tag:yaml.org,2002:map", _mapping)


def load_yaml(data: bytes | str) -> tuple[Any, list[str]]:
    """The one document in `data` and its duplicate-key messages (yaml.YAMLError if malformed)."""
    from mini_kube.apiserver.http.limits import check_yaml

    check_yaml(data)
    loader = _Loader(data)
    try:
        return loader.get_single_data(), loader.duplicates
    finally:
        loader.dispose()
