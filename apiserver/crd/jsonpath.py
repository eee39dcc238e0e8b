"""The JSONPath subset of client-go's `jsonpath` that printer columns and selectable fields use.

Supported: `.field`, `['field']`, `[0]`, `[-1]`, slices `[1:3]`, `[*]`, `.*`, recursive `..field`, unions
`[0,2]` / `['a','b']`, and filters `[?(@.type=="Ready")]` (==, !=, <, <=, >, >= against string, number
or boolean literals, or `[?(@.x)]` for presence). Missing keys yield no result, as with
AllowMissingKeys(true). Compile once with `compile_path`, evaluate with `JSONPath.find(obj)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Step = Callable[[Any], Iterator[Any]]
_IDENT = re.compile(r"[A-Za-z0-9_\-/$]+")
_FILTER = re.compile(r"^\s*@((?:\.[A-Za-z0-9_\-/]+|\['[^']*'\])*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*$")


class JSONPathError(ValueError):
    """A path the parser does not accept."""


def _field(name: str) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, dict) and name in value:
            yield value[name]
    return step


def _wildcard(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from (value[k] for k in sorted(value))
    elif isinstance(value, list):
        yield from value


def _recursive(name: str | None) -> Step:
    def walk(value: Any) -> Iterator[Any]:
        if isinstance(value, dict):
            if name is None:
                yield value
            elif name in value:
                yield value[name]
            for k in sorted(value):
                yield from walk(value[k])
        elif isinstance(value, list):
            for item in value:
                yield from walk(item)
    return walk


def _index(indexes: list[int]) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, list):
            for i in indexes:
                if -len(value) <= i < len(value):
                    yield value[i]
    return step


def _slice(start: int | None, end: int | None, stride: int | None) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, list):
            yield from value[start:end:stride]
    return step


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError as e:
            raise JSONPathError(f"unrecognized filter literal {text}") from e


def _compare(left: Any, op: str, right: Any) -> bool:
    numeric = isinstance(left, int | float) and isinstance(right, int | float) \
        and not isinstance(left, bool) and not isinstance(right, bool)
    if op == "==":
        return left == right and (numeric or type(left) is type(right))
    if op == "!=":
        return not _compare(left, "==", right)
    if not numeric:
        return False
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _filter(expr: str) -> Step:
    m = _FILTER.match(expr)
    if not m:
        raise JSONPathError(f"unrecognized filter {expr}")
    sub = compile_path(m.group(1)) if m.group(1) else None
    op, literal = m.group(2), _literal(m.group(3)) if m.group(2) else None

    def step(value: Any) -> Iterator[Any]:
        items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
        for item in items:
            found = sub.find(item) if sub is not None else [item]
            if op is None:
                if found:
                    yield item
            elif found and _compare(found[0], op, literal):
                yield item
    return step


def _bracket(body: str) -> Step:
    body = body.strip()
    if body == "*":
        return _wildcard
    if body.startswith("?(") and body.endswith(")"):
        return _filter(body[2:-1])
    if body[:1] in "'\"":
        names = [p.strip()[1:-1] for p in re.findall(r"'[^']*'|\"[^\"]*\"", body)]
        steps = [_field(n) for n in names]
        return lambda value: (v for s in steps for v in s(value))
    if ":" in body:
        parts = [p.strip() for p in body.split(":")]
        nums = [int(p) if p else None for p in parts] + [None] * (3 - len(parts))
        return _slice(nums[0], nums[1], nums[2])
    try:
        return _index([int(p) for p in body.split(",")])
    except ValueError as e:
        raise JSONPathError(f"invalid array index {body}") from e


@dataclass(frozen=True, slots=True)
class JSONPath:
    """A compiled path; `find(obj)` returns every match in document order."""

    source: str
    steps: tuple[Step, ...]

    def find(self, obj: Any) -> list[Any]:
        values = [obj]
        for step in self.steps:
            values = [v for value in values for v in step(value)]
            if not values:
                break
        return values

    def first(self, obj: Any, default: Any = None) -> Any:
        found = self.find(obj)
        return found[0] if found else default


def compile_path(path: str) -> JSONPath:
    """Parse a path like `.status.conditions[?(@.type=="Ready")].status` (braces are optional)."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    steps: list[Step] = []
    i = 0
    while i < len(text):
        if text.startswith("..", i):
            i += 2
            m = _IDENT.match(text, i)
            if m:
                steps.append(_recursive(m.group(0)))
                i = m.end()
            else:
                steps.append(_recursive(None))
        elif text[i] == ".":
            i += 1
            if text.startswith("*", i):
                steps.append(_wildcard)
                i += 1
                continue
            m = _IDENT.match(text, i)
            if not m:
                if i >= len(text):
                    break
                raise JSONPathError(f"unrecognized character in action: {text[i]!r}")
            steps.append(_field(m.group(0)))
            i = m.end()
        elif text[i] == "[":
            depth, j = 0, i
            while j < len(text):
                if text[j] == "[":
                    depth += 1
                elif text[j] == "]":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= len(text):
                raise JSONPathError("unclosed array expect ]")
            steps.append(_bracket(text[i + 1:j]))
            i = j + 1
        elif text[i] == "@" and not steps:
            i += 1
        else:
            m = _IDENT.match(text, i)
            if not m:
                raise JSONPathError(f"unrecognized character in action: {text[i]!r}")
            steps.append(_field(m.group(0)))
            i = m.end()
    return JSONPath(path, tuple(steps))
