"""`agnhost pause`: print `Paused` and wait for a signal; SIGINT exits 1 and SIGTERM exits 2, as upstream's."""

from __future__ import annotations

import functools
import os
import signal
import sys

from .flags import parse_or_exit

EXIT_CODES = {signal.SIGINT: 1, signal.SIGTERM: 2}


def exit_with(code: int, _signum: int, _frame: object) -> None:
    """The signal handler: end at once with upstream's exit code for that signal."""
    os._exit(code)


def main(argv: list[str]) -> int:
    """Pause until SIGINT or SIGTERM."""
    parse_or_exit("pause", {}, argv)
    for signum, code in EXIT_CODES.items():
        signal.signal(signum, functools.partial(exit_with, code))
    print("Paused", flush=True)
    while True:
        signal.pause()
    return 0  # pragma: no cover - never reached


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
