"""The CEL engine, loaded on first use.

Importing the `cel` package also imports its command-line tool (and prompt_toolkit): about 0.2 s that a server
which has not yet met a CEL expression should not pay at start-up.
"""

from __future__ import annotations

import functools
from types import ModuleType


@functools.cache
def cel() -> ModuleType:
    """The `cel` module (common-expression-language)."""
    import cel as engine

    return engine


def stdlib() -> ModuleType:
    """The engine's Python-side standard library (string and set extensions)."""
    return cel().stdlib
