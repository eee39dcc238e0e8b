"""Relative JSON paths into a schema (`.spec.replicas`, `['a.b']`) as CEL `fieldPath` and selectableFields use them."""

from __future__ import annotations

import re

from mini_kube.apiserver.crd.structural import Node

_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|[.\[\]]|[^.\[\]']+")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        char = m.group(0)[1]
        if char not in _ESCAPES:
            raise ValueError(f"invalid string literal: invalid escape char \\{char}")
        return _ESCAPES[char]
    return re.sub(r"\\.", repl, text)


def valid_field_path(json_path: str, node: Node, allow_array: bool = True) -> tuple[str, Node]:
    """Resolve `json_path` against `node`: the field path it names and its schema; ValueError if invalid."""
    tokens = _TOKEN.findall(json_path)
    path = ""
    i = 0

    def step(name: str, named: bool) -> None:
        nonlocal path, node
        if named:
            if name not in node.properties:
                raise ValueError("does not refer to a valid field")
            path = f"{path}.{name}" if path else name
            node = node.properties[name]
        else:
            path = f"{path}[{name}]"
            node = node.additional  # type: ignore[assignment]

    def kind() -> bool:
        if node.properties:
            return True
        if node.additional is not None:
            return False
        raise ValueError("does not refer to a valid field")

    while i < len(tokens):
        tok = tokens[i]
        if tok == "[":
            if not allow_array:
                raise ValueError("array notation is not allowed")
            if i + 1 >= len(tokens):
                raise ValueError("unexpected end of JSON path")
            lit = tokens[i + 1]
            if len(lit) < 2 or lit[0] != "'" or lit[-1] != "'":
                raise ValueError(f"expected single quoted string but got {lit}")
            step(_unescape(lit[1:-1]), kind())
            if i + 2 >= len(tokens):
                raise ValueError("unexpected end of JSON path")
            if tokens[i + 2] != "]":
                raise ValueError(f"expected ] but got {tokens[i + 2]}")
            i += 3
        elif tok == ".":
            if i + 1 >= len(tokens):
                raise ValueError("unexpected end of JSON path")
            step(tokens[i + 1], kind())
            i += 2
        else:
            raise ValueError(f"expected [ or . but got: {tok}")
    return path, node
