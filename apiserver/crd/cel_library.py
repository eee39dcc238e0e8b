"""The Kubernetes CEL libraries that the CEL engine lacks natively, as Python functions.

The engine (the `common-expression-language` package) implements the CEL core; Kubernetes adds the
strings extension, list functions (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex
`find`/`findAll`, sets, quantities and URLs. CEL treats `x.f(a)` as `f(x, a)`, so each is registered as a
plain function. Quantities and URLs travel as tagged strings (the engine carries no opaque values);
equal quantities have equal tags, so `==` works on them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from mini_kube.apiserver.crd.cel_engine import stdlib
from mini_kube.machinery.quantity import decimal_value

_QTAG = "\x00quantity:"
_UTAG = "\x00url:"


# --- strings and lists -------------------------------------------------------------------------------

def _index_of(target: Any, item: Any, offset: int = 0) -> int:
    if isinstance(target, str):
        return stdlib().index_of(target, item, offset)
    return next((i for i, x in enumerate(target) if x == item and type(x) is type(item)), -1)


def _last_index_of(target: Any, item: Any, *offset: int) -> int:
    if isinstance(target, str):
        return stdlib().last_index_of(target, item, *offset)
    return next((i for i in range(len(target) - 1, -1, -1) if target[i] == item), -1)


def _is_sorted(items: list[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _reverse(value: Any) -> Any:
    return value[::-1]


def _format(template: str, args: list[Any]) -> str:
    """`"%s-%d".format([a, b])` for the common verbs (%s %d %f %e %x %o %b %v)."""
    values = iter(args)

    def repl(m: re.Match[str]) -> str:
        verb = m.group(2)
        if verb == "%":
            return "%"
        value = next(values)
        if verb == "s" or verb == "v":
            return _quantity_or_url_str(value) if isinstance(value, str) else _cel_str(value)
        if verb == "d":
            return str(int(value))
        if verb in "fe":
            precision = int(m.group(1)[1:]) if m.group(1) else 6
            return f"{float(value):.{precision}{verb}}"
        return format(int(value) if not isinstance(value, str) else int.from_bytes(value.encode()),
                      {"x": "x", "X": "X", "o": "o", "b": "b"}[verb])

    return re.sub(r"%(\.\d+)?([sdfevxXob%])", repl, template)


def _cel_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(_cel_str(v) for v in value) + "]"
    return str(value)


def _find(s: str, pattern: str) -> str:
    m = re.search(pattern, s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in re.finditer(pattern, s)]
    return found if limit < 0 else found[:limit]


# --- quantities --------------------------------------------------------------------------------------

def _tag(value: Decimal) -> str:
    return _QTAG + format(value.normalize(), "f")


def _q(value: Any) -> Decimal:
    if isinstance(value, str) and value.startswith(_QTAG):
        return Decimal(value[len(_QTAG):])
    if isinstance(value, int | float):
        return Decimal(value)
    raise TypeError("no such overload")


def _quantity(text: str) -> str:
    return _tag(decimal_value(text))


def _is_quantity(text: str) -> bool:
    try:
        decimal_value(text)
        return True
    except ValueError:
        return False


def _compare(a: Any, b: Any) -> int:
    x, y = _q(a), _q(b)
    return (x > y) - (x < y)


def _as_integer(a: Any) -> int:
    value = _q(a)
    if value != value.to_integral_value() or abs(value) >= 2**63:
        raise ValueError("cannot convert value to integer")
    return int(value)


def _quantity_or_url_str(value: str) -> str:
    if value.startswith(_QTAG):
        return value[len(_QTAG):]
    if value.startswith(_UTAG):
        return value[len(_UTAG):]
    return value


# --- URLs --------------------------------------------------------------------------------------------

def _url(text: str) -> str:
    parts = urlsplit(text)
    if not (parts.scheme or text.startswith("/")):
        raise ValueError(f"URL is invalid: {text}")
    return _UTAG + text


def _is_url(text: str) -> bool:
    try:
        _url(text)
        return True
    except ValueError:
        return False


def _url_part(getter: Callable[[Any], Any]) -> Callable[[str], Any]:
    def part(value: str) -> Any:
        return getter(urlsplit(_quantity_or_url_str(value)))
    return part


@functools.cache
def functions() -> dict[str, Callable[..., Any]]:
    """Every library function by name (built on first use, with the engine)."""
    lib = stdlib()
    return {
        **{k: v for k, v in lib.EXTENSIONS["strings"].items() if k != "reverse"},
        "reverse": _reverse,
        "bool": lib.bool_,
        "format": _format,
        "indexOf": _index_of,
        "lastIndexOf": _last_index_of,
        "isSorted": _is_sorted,
        "sum": lib.sum_,
        "min": lib.min_,
        "max": lib.max_,
        "find": _find,
        "findAll": _find_all,
        **lib.EXTENSIONS["sets"],
        "quantity": _quantity,
        "isQuantity": _is_quantity,
        "sign": lambda a: _compare(a, 0),
        "isGreaterThan": lambda a, b: _compare(a, b) > 0,
        "isLessThan": lambda a, b: _compare(a, b) < 0,
        "compareTo": _compare,
        "add": lambda a, b: _tag(_q(a) + _q(b)),
        "sub": lambda a, b: _tag(_q(a) - _q(b)),
        "isInteger": lambda a: _q(a) == _q(a).to_integral_value() and abs(_q(a)) < 2**63,
        "asInteger": _as_integer,
        "asApproximateFloat": lambda a: float(_q(a)),
        "url": _url,
        "isURL": _is_url,
        "getScheme": _url_part(lambda p: p.scheme),
        "getHost": _url_part(lambda p: p.netloc.rpartition("@")[2]),
        "getHostname": _url_part(lambda p: p.hostname or ""),
        "getPort": _url_part(lambda p: str(p.port) if p.port else ""),
        "getEscapedPath": _url_part(lambda p: p.path),
        "getQuery": _url_part(lambda p: {k: v for k, v in (x.split("=", 1) for x in p.query.split("&") if "=" in x)}),
    }

# Functions and operators the engine implements itself (anything else a rule calls must be in functions()).
NATIVE = frozenset({
    "size", "int", "uint", "double", "string", "bytes", "timestamp", "duration", "dyn", "type",
    "matches", "contains", "startsWith", "endsWith", "has", "getFullYear", "getMonth", "getDate",
    "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours", "getMinutes", "getSeconds",
    "getMilliseconds", "hasValue", "value", "orValue", "or", "of", "none", "ofNonZeroValue",
})
NAMESPACES = frozenset({"sets", "strings", "optional"})
_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def needed(function_names: list[str], variables: list[str]) -> dict[str, Callable[..., Any]]:
    """The library functions a compiled program references (namespaced ones by their namespace)."""
    library = functions()
    found = {n: library[n] for n in function_names if n in library}
    for name, func in library.items():
        namespace, dot, _ = name.partition(".")
        if dot and namespace in variables:
            found[name] = func
    return found


def unknown(function_names: list[str]) -> list[str]:
    """Functions a program calls that neither the engine nor the library defines."""
    library = functions()
    return [n for n in function_names
            if _IDENT.match(n) and n not in library and n not in NATIVE
            and not any(f.endswith("." + n) for f in library)]
