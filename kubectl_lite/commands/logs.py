"""`logs` (`-f`, `-c`, `--tail`, `--previous`, `--timestamps`, `--since`, `-l`) and `exec` (WebSocket,
`v5.channel.k8s.io`, with the command's exit code)."""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import TYPE_CHECKING, Any

from mini_kube.machinery.status import ApiError

from ..session import Session, UsageError

if TYPE_CHECKING:
    from websockets.exceptions import InvalidStatus


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    logs = sub.add_parser("logs", parents=[common], help="Print the logs for a container in a pod")
    logs.add_argument("words", nargs="*")
    logs.add_argument("-c", "--container", default="")
    logs.add_argument("-f", "--follow", action="store_true")
    logs.add_argument("-p", "--previous", action="store_true")
    logs.add_argument("--tail", type=int, default=-1)
    logs.add_argument("--timestamps", action="store_true")
    logs.add_argument("--since", default="")
    logs.add_argument("-l", "--selector", default="")
    logs.set_defaults(run=run_logs)

    exe = sub.add_parser("exec", parents=[common], help="Execute a command in a container")
    exe.add_argument("pod")
    exe.add_argument("argv", nargs=argparse.REMAINDER)
    exe.add_argument("-c", "--container", default="")
    exe.add_argument("-i", "--stdin", action="store_true")
    exe.add_argument("-t", "--tty", action="store_true")
    exe.set_defaults(run=run_exec)


def _since_seconds(text: str) -> int | None:
    if not text:
        return None
    units = {"s": 1, "m": 60, "h": 3600}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def _pod_names(session: Session) -> list[str]:
    args = session.args
    if args.selector:
        listed = session.request("GET", f"/api/v1/namespaces/{session.namespace}/pods",
                                 params={"labelSelector": args.selector})
        return [p["metadata"]["name"] for p in listed.get("items") or ()]
    if not args.words:
        raise UsageError("expected POD or TYPE/NAME is a required argument for the logs command")
    name = args.words[0]
    return [name.split("/", 1)[1] if name.startswith(("pod/", "pods/", "po/")) else name]


def run_logs(session: Session) -> int:
    args = session.args
    container = args.container or (args.words[1] if len(args.words) > 1 else "")
    params = {"container": container or None, "follow": "true" if args.follow else None,
              "previous": "true" if args.previous else None,
              "tailLines": str(args.tail) if args.tail >= 0 else None,
              "timestamps": "true" if args.timestamps else None,
              "sinceSeconds": _since_seconds(args.since)}
    for pod in _pod_names(session):
        path = f"/api/v1/namespaces/{session.namespace}/pods/{pod}/log"
        if args.follow:
            for line in session.transport.stream_lines(path, params, accept="*/*"):
                sys.stdout.buffer.write(line)
                sys.stdout.flush()
        else:
            text = session.request("GET", path, params=params, accept="*/*")
            sys.stdout.write(text or "")
    return 0


def _exit_code(status: dict[str, Any]) -> int:
    if status.get("status") == "Success":
        return 0
    for cause in (status.get("details") or {}).get("causes") or ():
        if cause.get("reason") == "ExitCode":
            return int(cause.get("message", 1))
    print(f"error: {status.get('message', 'command failed')}", file=sys.stderr)
    return 1


EXEC_FLAGS = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS, exit_on_error=False)
EXEC_FLAGS.add_argument("-c", "--container")
EXEC_FLAGS.add_argument("-i", "--stdin", action="store_true")
EXEC_FLAGS.add_argument("-t", "--tty", action="store_true")
EXEC_FLAGS.add_argument("-n", "--namespace")


def exec_command(args: argparse.Namespace) -> list[str]:
    """The command after `--`; flags between the pod and `--` (`exec POD -c C -it -- cmd`, as kubectl takes them)
    are set on `args`."""
    words = list(args.argv)
    if "--" not in words:
        return words
    cut = words.index("--")
    try:
        flags, extra = EXEC_FLAGS.parse_known_args(words[:cut])
    except argparse.ArgumentError as exc:
        raise UsageError(str(exc)) from None
    if extra:
        raise UsageError(f"exec expects one pod name, then the command after --: unexpected {' '.join(extra)}")
    for key, value in vars(flags).items():
        setattr(args, key, value)
    return words[cut + 1:]


def _upgrade_error(exc: InvalidStatus) -> ApiError:
    """The API server's refusal of the exec upgrade (404 for a missing pod, 400 for a missing container) as the
    Status it sent."""
    response = exc.response
    try:
        body = json.loads(response.body or b"{}")
    except ValueError:
        body = {}
    if not isinstance(body, dict) or not body.get("message"):
        body = {"message": (response.body or b"").decode(errors="replace").strip() or
                f"unable to upgrade connection: {response.status_code} {response.reason_phrase}"}
    return ApiError(response.status_code, body)


def run_exec(session: Session) -> int:
    """Run a command in a container over the exec WebSocket; stdin (with -i) is sent as channel 0."""
    from urllib.parse import urlencode

    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect
    from websockets.typing import Subprotocol

    args = session.args
    argv = exec_command(args)
    if not argv:
        raise UsageError("you must specify at least one command for the container")
    query = [("command", word) for word in argv] + [("stdout", "true"), ("stderr", "true")]
    if args.stdin:
        query.append(("stdin", "true"))
    if args.tty:
        query.append(("tty", "true"))
    if args.container:
        query.append(("container", args.container))
    transport = session.transport
    scheme = "wss" if transport.scheme == "https" else "ws"
    url = (f"{scheme}://{transport.host}:{transport.port}{transport.prefix}/api/v1/namespaces/"
           f"{session.namespace}/pods/{args.pod}/exec?{urlencode(query)}")
    headers = transport.headers("*/*", None)
    headers.pop("Accept", None)
    ssl_context = transport.ssl_context() if scheme == "wss" else None
    try:
        ws = connect(url, subprotocols=[Subprotocol("v5.channel.k8s.io"), Subprotocol("v4.channel.k8s.io")],
                     additional_headers=headers, ssl=ssl_context, max_size=None, open_timeout=30)
    except InvalidStatus as exc:
        raise _upgrade_error(exc) from None
    with ws:
        return _stream(ws, stdin=args.stdin)


def _stream(ws: Any, *, stdin: bool) -> int:
    """Copy the exec channels to this process's stdout and stderr (and stdin in); the command's exit code."""
    import threading

    if stdin:
        def pump() -> None:
            source = sys.stdin.buffer
            read = source.read1 if isinstance(source, io.BufferedIOBase) else source.read
            for chunk in iter(lambda: read(32768), b""):
                ws.send(b"\x00" + chunk)
            if ws.subprotocol == "v5.channel.k8s.io":
                ws.send(b"\xff\x00")  # v5: close stdin
        threading.Thread(target=pump, daemon=True).start()
    code = 0
    for message in ws:
        data = message if isinstance(message, bytes) else message.encode()
        if not data:
            continue
        channel, payload = data[0], data[1:]
        if channel == 1:
            sys.stdout.buffer.write(payload)
            sys.stdout.flush()
        elif channel == 2:
            sys.stderr.buffer.write(payload)
            sys.stderr.flush()
        elif channel == 3 and payload:
            code = _exit_code(json.loads(payload))
    return code
