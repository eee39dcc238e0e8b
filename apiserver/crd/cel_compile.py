"""Compile `x-kubernetes-validations` rules once, with cel-go's wording for what fails to compile."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mini_kube.apiserver.crd import cel_library
from mini_kube.apiserver.crd.cel_common import MACRO, blank_strings, compile_checked, issue
from mini_kube.apiserver.crd.fieldpath import valid_field_path
from mini_kube.apiserver.crd.structural import Node

if TYPE_CHECKING:
    import cel as cel_types

SCOPED_VARS = frozenset({"self", "oldSelf"})


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
    program: cel_types.Program | None = None
    message_program: cel_types.Program | None = None
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


_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                       "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                       "void", "while"})
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EXPAND = re.compile(r"__|[-./]|[^a-zA-Z0-9\-./_]")
_EXPANSIONS = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def escape(name: str) -> str | None:
    """The CEL identifier of a property name (`foo-bar` -> `foo__dash__bar`); None when it has none."""
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return f"__{name}__"
    if _PLAIN.match(name) and "__" not in name:
        return name
    ok = True

    def repl(m: re.Match[str]) -> str:
        nonlocal ok
        text = m.group(0)
        if text not in _EXPANSIONS:
            ok = False
            return ""
        return _EXPANSIONS[text]

    escaped = _EXPAND.sub(repl, name)
    return escaped if ok else None


_SELECTION = re.compile(r"\b(self|oldSelf)((?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)+)")
_SEGMENT = re.compile(r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)")
_META = Node(type="object", properties={"name": Node(type="string"), "generateName": Node(type="string")})
_STRING_NODE = Node(type="string")


def _undefined_field(source: str, node: Node, resource: bool) -> str | None:
    """cel-go's `undefined field` check for `self.a.b` chains against the schema (None when all resolve)."""
    text = blank_strings(source)
    for match in _SELECTION.finditer(text):
        current: Node | None = node
        for seg in _SEGMENT.finditer(match.group(2)):
            end = match.start(2) + seg.end()
            if text[end:].lstrip().startswith("("):
                break  # a method call: not a field
            if current is None or current.type != "object" or current.preserve_unknown:
                break  # dynamic, a map of anything, or not an object: nothing to check
            fields = {escape(k): v for k, v in current.properties.items()}
            if (current is node and resource) or current.embedded:
                fields.update({"apiVersion": _STRING_NODE, "kind": _STRING_NODE, "metadata": _META})
            name = seg.group(1)
            if name in fields:
                current = fields[name]
            elif current.additional is not None or (current.has_additional and current.additional_allowed):
                current = current.additional
            elif current.properties or (resource and current is node) or current.embedded:
                dot = match.start(2) + seg.start() + seg.group(0).index(".")
                return issue(source, dot, f"undefined field '{name}'")
            else:
                break
    return None


def compile_expression(source: str, node: Node | None = None,
                       resource: bool = False) -> tuple[cel_types.Program | None, str | None]:
    """Parse one expression (and check its `self` fields against `node`); on failure the cel-go issue text."""
    program, problem = compile_checked(source, SCOPED_VARS)
    if program is None:
        return None, problem
    if node is not None and (problem := _undefined_field(source, node, resource)) is not None:
        return None, problem
    return program, None


def compile_rule(raw: dict[str, Any], node: Node, resource: bool = False) -> CompiledRule:
    """Compile one rule of `node`'s x-kubernetes-validations (`resource`: node is a resource root)."""
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
    program, problem = compile_expression(rule, node, resource)
    if program is None:
        compiled.error = f"compilation failed: {problem}"
        return compiled
    compiled.program = program
    variables = program.variables()
    compiled.uses_old_self = "oldSelf" in variables
    compiled.functions = cel_library.needed(program.functions(), variables)
    compiled.macros = len(MACRO.findall(rule))
    if compiled.message_expression.strip():
        msg_program, msg_issue = compile_expression(compiled.message_expression, node, resource)
        if msg_program is None:
            compiled.message_error = f"messageExpression compilation failed: {msg_issue}"
        else:
            compiled.message_program = msg_program
            compiled.functions.update(cel_library.needed(msg_program.functions(), msg_program.variables()))
    return compiled
