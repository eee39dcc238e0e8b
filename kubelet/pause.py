"""The pause image's program (registry.k8s.io/pause), as upstream's pause.c: it sleeps until SIGINT or SIGTERM
(then exits 0 saying so) and reaps every child that ends meanwhile (it is PID 1 of a shared PID namespace).
Standard library only: run as `python -I -S pause.py`."""

import os
import signal
import sys


def reap(_signum: int, _frame: object) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def stop(signum: int, _frame: object) -> None:
    sys.stderr.write(f"Shutting down, got signal: {signal.Signals(signum).name.removeprefix('SIG').title()}\n")
    sys.stderr.flush()
    os._exit(0)


def main() -> None:
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGCHLD, reap)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
