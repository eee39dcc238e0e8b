"""kubectl's JSONPath templates (`-o jsonpath=...`, `wait --for=jsonpath=...`): text with `{expressions}`,
`{range ...}{end}` loops, quoted literals, and paths with fields, indexes, slices, `[*]`, `..name` and
`[?(@.field=="value")]` filters. Several results of one expression print separated by spaces, as kubectl's."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_TOKEN = re.compile(r"\{((?:[^{}\"]|\"(?:[^\"\\]|\\.)*\")*)\}")
_STEP = re.compile(r"\.\.([\w\-/]+|\*)|\.([\w\-/]+|\*)|\[([^\]]*)\]")
_FILTER = re.compile(r"^\?\(@((?:\.[\w\-/]+)*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+))?\)$")


class TemplateError(ValueError):
    """A template kubectl would refuse."""


def _literal(text: str) -> Any:
    text = text.strip()
    if text[:1] in "'\"":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _walk(value: Any, name: str) -> Iterator[Any]:
    if isinstance(value, dict):
        if name in value:
            yield value[name]
        for key in value:
            yield from _walk(value[key], name)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, name)


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    return list(value) if isinstance(value, list) else []


def _bracket(value: Any, body: str) -> Iterator[Any]:
    body = body.strip()
    if body == "*":
        yield from _children(value)
        return
    if match := _FILTER.match(body):
        path, op, right = match.groups()
        for item in _children(value):
            found = evaluate(item, path) if path else [item]
            if not found:
                continue
            if op is None or _compare(found[0], op, _literal(right)):
                yield item
        return
    if body[:1] in "'\"":
        for key in (k.strip()[1:-1] for k in body.split(",")):
            if isinstance(value, dict) and key in value:
                yield value[key]
        return
    if not isinstance(value, list):
        return
    if ":" in body:
        parts = [int(p) if p.strip() else None for p in body.split(":")]
        yield from value[slice(*parts)]
        return
    for index in body.split(","):
        i = int(index)
        if -len(value) <= i < len(value):
            yield value[i]


def _compare(left: Any, op: str, right: Any) -> bool:
    try:
        return {"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
                ">": left > right, ">=": left >= right}[op]
    except TypeError:
        return False


def evaluate(obj: Any, path: str) -> list[Any]:
    """Every value `path` (`.a.b[0]`, `..name`, `[?(@.x=="y")]`) selects in `obj`."""
    path = path.strip()
    if path in ("", "@", "$"):
        return [obj]
    path = path[1:] if path[0] in "@$" else path
    if not path.startswith((".", "[")):
        path = "." + path
    values = [obj]
    pos = 0
    while pos < len(path):
        match = _STEP.match(path, pos)
        if not match:
            raise TemplateError(f"unrecognized identifier in {path!r} at {pos}")
        recursive, field, bracket = match.groups()
        nxt: list[Any] = []
        for value in values:
            if recursive is not None:
                nxt.extend(_walk(value, recursive) if recursive != "*" else _children(value))
            elif field is not None:
                if field == "*":
                    nxt.extend(_children(value))
                elif isinstance(value, dict) and field in value:
                    nxt.append(value[field])
            else:
                nxt.extend(_bracket(value, bracket))
        values = nxt
        pos = match.end()
    return values


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _parse(template: str) -> list[tuple[str, str]]:
    """Template -> [(kind, text)] with kind "text", "expr", "range" or "end"."""
    parts: list[tuple[str, str]] = []
    pos = 0
    for match in _TOKEN.finditer(template):
        if match.start() > pos:
            parts.append(("text", template[pos:match.start()]))
        inner = match.group(1).strip()
        if inner.startswith("range "):
            parts.append(("range", inner[6:]))
        elif inner == "end":
            parts.append(("end", ""))
        else:
            parts.append(("expr", inner))
        pos = match.end()
    if pos < len(template):
        parts.append(("text", template[pos:]))
    return parts


def _render(parts: list[tuple[str, str]], obj: Any, out: list[str], allow_missing: bool) -> None:
    i = 0
    while i < len(parts):
        kind, text = parts[i]
        if kind == "text":
            out.append(text)
        elif kind == "expr":
            if text[:1] in "'\"":
                out.append(json.loads(text) if text[0] == '"' else text[1:-1])
            else:
                values = evaluate(obj, text)
                if not values and not allow_missing:
                    raise TemplateError(f"{text} is not found")
                out.append(" ".join(_text(v) for v in values))
        elif kind == "range":
            depth, j = 1, i + 1
            while j < len(parts) and depth:
                depth += {"range": 1, "end": -1}.get(parts[j][0], 0)
                j += 1
            if depth:
                raise TemplateError("not all ranges are ended")
            for item in evaluate(obj, text):
                _render(parts[i + 1:j - 1], item, out, allow_missing)
            i = j - 1
        i += 1


def render(template: str, obj: Any, allow_missing: bool = True) -> str:
    """Render a kubectl JSONPath template against `obj`."""
    out: list[str] = []
    _render(_parse(template), obj, out, allow_missing)
    return "".join(out)
