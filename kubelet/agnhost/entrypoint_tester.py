"""`agnhost entrypoint-tester`: print every argument the process was started with (Go's `fmt.Printf("%v\\n",
os.Args)`: `[/agnhost entrypoint-tester a b]`) and exit 0. The program name is `AGNHOST_ARGV0` (what the
container's command named: `/agnhost`, `/agnhost-2`), `/agnhost` by default."""

from __future__ import annotations

import os

ARGV0_ENV = "AGNHOST_ARGV0"


def main(argv: list[str]) -> int:
    """Print `[argv0 entrypoint-tester ARGS...]`."""
    args = [os.environ.get(ARGV0_ENV) or "/agnhost", "entrypoint-tester", *argv]
    print("[" + " ".join(args) + "]", flush=True)
    return 0
