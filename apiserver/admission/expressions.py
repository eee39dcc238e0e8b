"""CEL in admission (ValidatingAdmissionPolicy, matchConditions) on the engine and library the CRD rules use.

Expressions see `object`, `oldObject`, `request` (the AdmissionRequest without objects), `namespaceObject`,
`params` (only when the policy has a paramKind) and `variables.<name>` (the policy's composited variables,
evaluated in order). Compile failures read like cel-go's (`compilation failed: ERROR: <input>:1:5: ...`);
runtime failures like upstream's (`expression '<text>' resulted in error: no such key: x`).
`authorizer` compiles but has no runtime support.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..crd import cel_library
from ..crd.cel_common import blank_strings, compile_checked, issue, runtime_error
from ..crd.cel_engine import cel

if TYPE_CHECKING:
    import cel as cel_types

BASE_VARIABLES = frozenset({"object", "oldObject", "request", "namespaceObject", "authorizer", "variables"})
_VARIABLE_REF = re.compile(r"\bvariables\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)")


class EvaluationError(Exception):
    """An expression failed at run time (the text is upstream's wording)."""


@dataclass(slots=True)
class Expression:
    """One compiled expression: its program (None if it failed to compile) and what it needs."""

    source: str
    program: cel_types.Program | None = None
    error: str | None = None
    functions: dict[str, Callable[..., Any]] = field(default_factory=dict)
    needs: tuple[str, ...] = ()  # composited variables it references


def compile_expression(source: str, *, params: bool = False, variables: Iterable[str] = ()) -> Expression:
    """Compile against the admission variables (`params` only if declared, `variables.x` only if defined)."""
    program, problem = compile_checked(source, BASE_VARIABLES | {"params"} if params else BASE_VARIABLES)
    if program is None:
        return Expression(source, error=f"compilation failed: {problem}")
    defined, needs = set(variables), []
    for m in _VARIABLE_REF.finditer(blank_strings(source)):
        if m.group(1) not in defined:
            dot = source.index(".", m.start())
            return Expression(source, error=f"compilation failed: {issue(source, dot, f'undefined field {m.group(1)!r}')}")
        if m.group(1) not in needs:
            needs.append(m.group(1))
    return Expression(source, program, None, cel_library.needed(program.functions(), program.variables()),
                      tuple(needs))


class Activation:
    """The variables of one evaluation, with the composited `variables` evaluated on first use."""

    def __init__(self, values: dict[str, Any], composited: dict[str, Expression] | None = None) -> None:
        self.values = values
        self.composited = composited or {}
        self._done: dict[str, Any] = {}
        self._failed: dict[str, str] = {}
        self._context: cel_types.Context | None = None
        self._functions: dict[str, Callable[..., Any]] = {}

    def _ctx(self, functions: dict[str, Callable[..., Any]]) -> cel_types.Context:
        missing = {k: v for k, v in functions.items() if k not in self._functions}
        if self._context is None:
            self._context = cel().Context({**self.values, "variables": dict(self._done)}, functions)
            self._functions.update(functions)
        elif missing:
            for name, func in missing.items():
                self._context.add_function(name, func)
            self._functions.update(missing)
        return self._context

    def _variable(self, name: str) -> None:
        if name in self._done or name in self._failed:
            return
        expr = self.composited[name]
        try:
            self._done[name] = self.evaluate(expr)
        except EvaluationError as exc:
            self._failed[name] = str(exc)
        assert self._context is not None
        self._context.add_variable("variables", dict(self._done))

    def evaluate(self, expr: Expression) -> Any:
        """The expression's value; EvaluationError with upstream's wording when it fails."""
        if expr.program is None:
            raise EvaluationError(f"compilation error: {expr.error}")
        ctx = self._ctx(expr.functions)
        for name in expr.needs:
            self._variable(name)
            if name in self._failed:
                raise EvaluationError(self._failed[name])
        try:
            return expr.program.execute(ctx)
        except Exception as exc:  # the engine raises builtin exception types for CEL runtime errors
            text = str(exc)
            if isinstance(exc, TypeError) and text.startswith("No such overload"):
                text = "no such overload"
            else:
                text = runtime_error(exc)
            raise EvaluationError(f"expression '{expr.source}' resulted in error: {text}") from None
