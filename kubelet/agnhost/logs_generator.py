"""`agnhost logs-generator`: `--log-lines-total` (`-t`) klog lines spread evenly over `--run-duration` (`-d`),
each `ID METHOD /api/v1/namespaces/NS/pods/NAME STATUS`, on stderr as klog writes them."""

from __future__ import annotations

import os
import random
import sys
import time

from .flags import Duration, Flag, parse_or_exit

FLAGS = {"log-lines-total": Flag(int, 0, "t"), "run-duration": Flag(Duration, 0.0, "d")}
METHODS = ["GET", "POST", "PUT"]
NAMESPACES = ["kube-system", "default", "ns"]
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand's alphabet
SOURCE = "logs_generator.go:67"


def klog(severity: str, message: str) -> None:
    """One klog line: `I1128 06:34:10.123456    4242 logs_generator.go:67] message`."""
    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
    sys.stderr.write(f"{severity}{stamp} {os.getpid():7d} {SOURCE}] {message}\n")
    sys.stderr.flush()


def log_line(line_id: int) -> str:
    """`0 GET /api/v1/namespaces/ns/pods/x7k 404`."""
    name = "".join(random.choice(ALPHANUMS) for _ in range(random.randint(3, 4)))
    return (f"{line_id} {random.choice(METHODS)} /api/v1/namespaces/{random.choice(NAMESPACES)}/pods/{name} "
            f"{random.randint(200, 599)}")


def main(argv: list[str]) -> int:
    """Write the lines evenly, then exit 0; a bad total or duration is klog's fatal line and exit 255."""
    opts = parse_or_exit("logs-generator", FLAGS, argv)
    total, duration = opts["log_lines_total"], opts["run_duration"]
    if total <= 0:
        klog("F", f"Invalid total number of lines: {total}")
        return 255
    if duration <= 0:
        klog("F", "Invalid duration: 0s")
        return 255
    delay, start = duration / total, time.monotonic()
    for line_id in range(total):
        klog("I", log_line(line_id))
        time.sleep(max(0.0, start + (line_id + 1) * delay - time.monotonic()))
    return 0
