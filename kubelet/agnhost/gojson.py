"""JSON as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped, other text as UTF-8; compact
unless indented (json.MarshalIndent's layout is Python's with the same indent)."""

from __future__ import annotations

import json
from typing import Any

ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def marshal(value: Any, indent: str | None = None) -> str:
    """json.Marshal (or MarshalIndent with prefix "" and `indent`); these characters only occur in strings."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, separators=None if indent else (",", ":"))
    for char, escaped in ESCAPES.items():
        text = text.replace(char, escaped)
    return text
