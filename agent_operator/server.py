"""The default runtime's program: a small agent HTTP server that answers with its config.

    python -m mini_kube.agent_operator.server [--port 8080] [--host 0.0.0.0]

`GET /` answers JSON: the agent's name, namespace, runtime, pod (hostname) and config; `GET /healthz` answers ok
(the readiness probe). The config is read on every request from `$AGENT_CONFIG_DIR` (the mounted ConfigMap: one
file per key), else from the `AGENT_CONFIG_<key>` environment variables. Standard library only, so it starts fast
and runs wherever Python does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ENV_PREFIX = "AGENT_CONFIG_"


def read_config(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The agent's config: the files of AGENT_CONFIG_DIR (hidden ones, such as a volume's `..data`, skipped),
    else the AGENT_CONFIG_<key> environment variables."""
    env = os.environ if environ is None else environ
    folder = Path(env.get("AGENT_CONFIG_DIR") or "/etc/agent/config")
    if folder.is_dir():
        return {p.name: p.read_text(errors="replace") for p in sorted(folder.iterdir())
                if not p.name.startswith(".") and p.is_file()}
    return {k[len(ENV_PREFIX):]: v for k, v in sorted(env.items())
            if k.startswith(ENV_PREFIX) and k not in (ENV_PREFIX, "AGENT_CONFIG_DIR")}


def describe() -> dict[str, Any]:
    env = os.environ
    return {"agent": env.get("AGENT_NAME", ""), "namespace": env.get("AGENT_NAMESPACE", ""),
            "runtime": env.get("AGENT_RUNTIME", ""), "pod": env.get("HOSTNAME") or socket.gethostname(),
            "config": read_config()}


class Handler(BaseHTTPRequestHandler):
    server_version = "mini-kube-agent/0.1"

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook
        path = self.path.split("?", 1)[0]
        if path in ("/healthz", "/readyz"):
            self._send(200, b"ok", "text/plain")
        elif path == "/":
            self._send(200, json.dumps(describe(), indent=None).encode() + b"\n", "application/json")
        else:
            self._send(404, b"not found\n", "text/plain")

    def _send(self, code: int, body: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the http.server signature
        sys.stderr.write(f"{self.address_string()} {format % args}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agent-server", description="a small agent that answers with its config")
    parser.add_argument("--host", default=os.environ.get("AGENT_HOST", "0.0.0.0"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8080))
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"agent {os.environ.get('AGENT_NAME', '')} listening on {args.host}:{server.server_address[1]}",
          flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
