"""The Kubernetes WebSocket channel protocols for exec, attach and port-forward (`v5.channel.k8s.io`,
`v4.channel.k8s.io`, `channel.k8s.io`; port-forward's `v4.channel.k8s.io` / `portforward.k8s.io`): every binary
message starts with its channel number (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; v5 adds 255 = close a
channel); the error channel carries the final Status."""

from __future__ import annotations

import json
from typing import Any

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
EXEC_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io",
                  "channel.k8s.io")
PORT_FORWARD_PROTOCOLS = ("SPDY/3.1+portforward.k8s.io", "v4.channel.k8s.io", "portforward.k8s.io")


def frame(channel: int, data: bytes) -> bytes:
    return bytes([channel]) + data


def success() -> bytes:
    return json.dumps({"metadata": {}, "status": "Success"}).encode()


def exit_status(argv: list[str], code: int) -> bytes:
    """The error-channel Status of a command that exited non-zero, as the kubelet words it."""
    status: dict[str, Any] = {
        "metadata": {}, "status": "Failure",
        "message": f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], "
                   f"exit code {code}",
        "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}
    return json.dumps(status).encode()


def status_message(protocol: str, status: bytes) -> bytes | None:
    """What the error channel carries of a final Status under `protocol`: v4 and v5 the Status as JSON; the older
    ones (channel.k8s.io, v2, v3) its message as text on failure and nothing on success, as upstream's
    v1WriteStatusFunc."""
    if protocol in ("v5.channel.k8s.io", "v4.channel.k8s.io"):
        return status
    decoded = json.loads(status)
    if decoded.get("status") == "Success":
        return None
    return str(decoded.get("message", "")).encode()


def failure(message: str) -> bytes:
    return json.dumps({"metadata": {}, "status": "Failure", "message": message, "reason": "InternalError",
                       "details": {"causes": [{"message": message}]}, "code": 500}).encode()
