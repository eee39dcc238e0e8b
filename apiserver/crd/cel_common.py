"""What CEL in CRD rules and in admission (policies, matchConditions) share: compiling with cel-go's checks
and wording for what fails (`ERROR: <input>:1:5: ...` with the source line and a caret), and upstream's
wording for runtime errors.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mini_kube.apiserver.crd import cel_library
from mini_kube.apiserver.crd.cel_engine import cel

if TYPE_CHECKING:
    import cel as cel_types

MACRO = re.compile(r"\.\s*(all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)")
TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "dyn"})
_PARSE_PREFIX = re.compile(r"^Failed to parse expression .*?: (ERROR: )", re.S)
_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def _position(source: str, offset: int) -> str:
    line = source.count("\n", 0, offset) + 1
    col = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return f"<input>:{line}:{col}"


def issue(source: str, offset: int, message: str) -> str:
    """One cel-go style issue: position, message and the source line with a caret."""
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    text = source[line_start:line_end if line_end >= 0 else len(source)]
    caret = "." * (offset - line_start) + "^"
    return f"ERROR: {_position(source, offset)}: {message}\n | {text}\n | {caret}"


def parse_error(exc: Exception) -> str:
    """The engine's syntax error as cel-go's issue text."""
    text = _PARSE_PREFIX.sub(r"\1", str(exc))
    return "\n".join(" " + line if line.startswith("| ") else line for line in text.splitlines())


def runtime_error(exc: Exception) -> str:
    """An evaluation failure in cel-go's words (`no such key: x`, `division by zero`, ...)."""
    if isinstance(exc, KeyError):
        return f"no such key: {exc.args[0] if exc.args else ''}"
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    if isinstance(exc, OverflowError):
        return "integer overflow"
    return str(exc)


def blank_strings(source: str) -> str:
    """The source with string literals blanked out (offsets kept), so scans for names skip them."""
    return _STRING.sub(lambda m: " " * len(m.group(0)), source)


def compile_checked(source: str, variables: frozenset[str]) -> tuple[cel_types.Program | None, str | None]:
    """Parse `source` and check its references: only `variables`, macro-bound names, the library's
    namespaces and type names, and the library's functions. On failure (None, the cel-go issue text)."""
    try:
        program = cel().compile(source)
    except Exception as exc:  # the engine raises ValueError on syntax errors
        return None, parse_error(exc)
    bound = {m.group(2) for m in MACRO.finditer(source)}
    for name in program.variables():
        if name not in variables and name not in bound and name not in cel_library.NAMESPACES \
                and name not in TYPE_NAMES:
            m = re.search(rf"\b{re.escape(name)}\b", source)
            return None, issue(source, m.start() if m else 0, f"undeclared reference to '{name}' (in container '')")
    for name in cel_library.unknown(program.functions()):
        m = re.search(rf"\b{re.escape(name)}\s*\(", source)
        return None, issue(source, m.start() if m else 0, f"undeclared reference to '{name}' (in container '')")
    return program, None
