"""`agnhost inclusterclient`: every `--poll-interval` seconds (30) call the API server's /healthz with the Pod's
in-cluster configuration, logging (klog's format) a salted hash of each request's Authorization header, so a test
sees the token rotate, and `status=failed` when the call fails; as upstream's."""

from __future__ import annotations

import base64
import hashlib
import os
import sys
import time
from datetime import datetime

from .flags import Flag, parse_or_exit
from .incluster import ConfigError, InCluster, RequestError
from .serving import log

FLAGS = {"poll-interval": Flag(int, 30)}
SOURCE = "main.go"  # where upstream's lines come from (klog names the file and line)


def klog(severity: str, line: int, message: str) -> None:
    """One klog line: `I1128 08:07:51.123456       7 main.go:61] message`."""
    now = datetime.now()
    sys.stderr.write(f"{severity}{now:%m%d %H:%M:%S.%f} {os.getpid():7d} {SOURCE}:{line}] {message}\n")
    sys.stderr.flush()


def authz_hash(header: str) -> str:
    """What upstream logs of a header: unpadded URL-safe base64 of sha256("salt|" + header)."""
    return base64.urlsafe_b64encode(hashlib.sha256(f"salt|{header}".encode()).digest()).decode().rstrip("=")


def main(argv: list[str]) -> int:
    """Poll /healthz forever."""
    opts = parse_or_exit("inclusterclient", FLAGS, argv)
    klog("I", 61, "started")
    try:
        client = InCluster.load()
    except ConfigError as error:
        log(f"err: {error}")
        return 1
    interval = opts["poll_interval"]
    if interval <= 0:  # time.Tick of a non-positive duration is nil: waiting on it blocks forever
        while True:
            time.sleep(3600)
    while True:
        time.sleep(interval)
        klog("I", 79, "calling /healthz")
        header = client.authorization()
        if header:
            klog("I", 96, f"authz_header={authz_hash(header)}")
        else:
            klog("E", 98, "authz_header=<empty>")
        try:
            client.get("/healthz")
        except RequestError as error:
            klog("E", 82, "status=failed")
            klog("E", 83, f"error checking /healthz: {error}\n{error.body.decode(errors='replace')}\n")
