"""Read the default value a field's upstream description states ("Defaults to 1.", "Default is TCP.").

Upstream definitions carry no `default` keyword, but their descriptions name the value the apiserver
fills in. `described_default` turns that sentence into a JSON value of the field's type. It is only
asked about fields the apiserver is known to default (see `default_table.py`): many descriptions state
defaults that a client or the kubelet applies, never the server.
"""

from __future__ import annotations

import re
from typing import Any

from mini_kube.apiserver.schema.definitions import REF_PREFIX, definitions

NO_DEFAULT: Any = object()

_QUOTED = r"\"([^\"]*)\"|`([^`]*)`|'([^']*)'"
_UNIT_WORDS = r"seconds?|hours?|minutes?|pod"
# Phrases that introduce a default, most specific first; each captures the value text.
_PATTERNS = [
    re.compile(r"[Dd]efault(?:s| value)? (?:to|is) (?:the )?empty\b"),  # {} or ""
    re.compile(rf"(?:{_QUOTED}) \(default\)"),
    re.compile(rf"[Tt]he default (?:value|policy)(?:,| is| of) (?:{_QUOTED})"),
    re.compile(rf"[Dd]efault(?:s| value)? (?:to|is) (?:{_QUOTED}|([^\s,;()]+(?: (?:{_UNIT_WORDS}))?))"),
    re.compile(rf"[Dd]efaulted to (?:{_QUOTED}|(\S+))"),
    re.compile(rf"(?:will be set to|[Vv]alue of) (?:{_QUOTED}|(\w+))(?: is implied)?"),
]
_UNITS = {"second": 1, "seconds": 1, "minute": 60, "minutes": 60, "hour": 3600, "hours": 3600, "pod": 1}


def property_schema(definition: str, prop: str) -> dict[str, Any]:
    """One property's schema inside a definition (KeyError if either is unknown)."""
    return definitions()[definition]["properties"][prop]


def _kinds(schema: dict[str, Any]) -> set[str]:
    """The JSON types a property accepts: from `type`, or the referenced definition's."""
    ref = schema.get("$ref")
    if ref:
        target = definitions()[ref.removeprefix(REF_PREFIX)]
        if "oneOf" in target:  # IntOrString, Quantity
            return {t for alt in target["oneOf"] for t in _as_list(alt.get("type"))} - {"null"}
        return set(_as_list(target.get("type", "object"))) - {"null"}
    return set(_as_list(schema.get("type"))) - {"null"}


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _coerce(text: str, kinds: set[str]) -> Any:
    """Turn the stated value into the field's JSON type (octal modes, "600s", "1 hour", "25%")."""
    text = text.strip().rstrip(".")
    number, _, unit = text.partition(" ")
    if "integer" in kinds or "number" in kinds:
        digits = number.removesuffix("s")
        if digits.isdigit():
            value = int(digits, 8) if len(digits) > 1 and digits.startswith("0") else int(digits)
            return value * _UNITS.get(unit, 1)
        if unit in _UNITS and number.isdigit():
            return int(number) * _UNITS[unit]
    if "boolean" in kinds and text in ("true", "false"):
        return text == "true"
    if "string" in kinds:
        return text
    return NO_DEFAULT


def parse_default(description: str, kinds: set[str]) -> Any:
    """The default a description states, as a value of one of `kinds`, or NO_DEFAULT."""
    for pattern in _PATTERNS:
        for match in pattern.finditer(description):
            if not match.groups():
                if "object" in kinds:
                    return {}
                if "string" in kinds:
                    return ""
                continue
            text = next((g for g in match.groups() if g is not None), None)
            if text is None:
                continue
            value = _coerce(text, kinds)
            if value is not NO_DEFAULT:
                return value
    return NO_DEFAULT


def described_default(definition: str, prop: str) -> Any:
    """The default that upstream's description of `definition.prop` states, or NO_DEFAULT."""
    schema = property_schema(definition, prop)
    return parse_default(schema.get("description", ""), _kinds(schema))
