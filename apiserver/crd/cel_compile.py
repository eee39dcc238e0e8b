"""Compile `x-kubernetes-validations` rules once, with cel-go's wording for what fails to compile."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cel

from apiserver.crd import cel_library
from apiserver.crd.fieldpath import valid_field_path
from apiserver.crd.structural import Node

_MACRO = re.compile(r"\.\s*(all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)")
_PARSE_PREFIX = re.compile(r"^Failed to parse expression .*?: (ERROR: )", re.S)
SCOPED_VARS = frozenset({"self", "oldSelf"})
TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "dyn"})


@dataclass(slots=True)
class CompiledRule:
    """One rule, ready to run: its program(s), what it needs and how its failure is reported."""

    source: dict[str, Any]
    rule: str
    message: str = ""
    message_expression: str = ""
    reason: str | None = None
    field_path: str = ""
    optional_old_self: bool = False
    program: cel.Program | None = None
    message_program: cel.Program | None = None
    uses_old_self: bool = False
    functions: dict[str, Callable[..., Any]] = field(default_factory=dict)
    macros: int = 0
    error: str | None = None
    message_error: str | None = None

    @property
    def error_string(self) -> str:
        """What errors name the rule by: its message if set, else its text."""
        return self.message.strip() or self.rule.strip()

    @property
    def default_message(self) -> str:
        return self.message.strip() if self.message else f"failed rule: {self.error_string}"


def _position(source: str, offset: int) -> str:
    line = source.count("\n", 0, offset) + 1
    col = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return f"<input>:{line}:{col}"


def _issue(source: str, offset: int, message: str) -> str:
    """One cel-go style issue: position, message and the source line with a caret."""
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    text = source[line_start:line_end if line_end >= 0 else len(source)]
    caret = "." * (offset - line_start) + "^"
    return f"ERROR: {_position(source, offset)}: {message}\n | {text}\n | {caret}"


def _parse_error(exc: Exception) -> str:
    text = _PARSE_PREFIX.sub(r"\1", str(exc))
    return "\n".join(" " + line if line.startswith("| ") else line for line in text.splitlines())


def compile_expression(source: str) -> tuple[cel.Program | None, str | None]:
    """Parse one expression; on failure the cel-go style issue text."""
    try:
        program = cel.compile(source)
    except Exception as exc:  # the engine raises ValueError on syntax errors
        return None, _parse_error(exc)
    bound = {m.group(2) for m in _MACRO.finditer(source)}
    for name in program.variables():
        if name not in SCOPED_VARS and name not in bound and name not in cel_library.NAMESPACES \
                and name not in TYPE_NAMES:
            m = re.search(rf"\b{re.escape(name)}\b", source)
            return None, _issue(source, m.start() if m else 0, f"undeclared reference to '{name}' (in container '')")
    for name in cel_library.unknown(program.functions()):
        m = re.search(rf"\b{re.escape(name)}\s*\(", source)
        return None, _issue(source, m.start() if m else 0, f"undeclared reference to '{name}' (in container '')")
    return program, None


def compile_rule(raw: dict[str, Any], node: Node) -> CompiledRule:
    """Compile one rule of `node`'s x-kubernetes-validations."""
    rule = raw.get("rule") or ""
    compiled = CompiledRule(
        source=raw, rule=rule, message=raw.get("message") or "",
        message_expression=raw.get("messageExpression") or "", reason=raw.get("reason"),
        optional_old_self=bool(raw.get("optionalOldSelf")))
    if raw.get("fieldPath"):
        try:
            compiled.field_path = valid_field_path(raw["fieldPath"], node)[0]
        except ValueError:
            compiled.field_path = ""
    if not rule.strip():
        return compiled
    program, issue = compile_expression(rule)
    if program is None:
        compiled.error = f"compilation failed: {issue}"
        return compiled
    compiled.program = program
    variables = program.variables()
    compiled.uses_old_self = "oldSelf" in variables
    compiled.functions = cel_library.needed(program.functions(), variables)
    compiled.macros = len(_MACRO.findall(rule))
    if compiled.message_expression.strip():
        msg_program, msg_issue = compile_expression(compiled.message_expression)
        if msg_program is None:
            compiled.message_error = f"messageExpression compilation failed: {msg_issue}"
        else:
            compiled.message_program = msg_program
            compiled.functions.update(cel_library.needed(msg_program.functions(), msg_program.variables()))
    return compiled
