"""The kubelet's own HTTP API, which the API server proxies to (as upstream's does on :10250): /healthz, /pods,
/containerLogs, /exec and /attach (WebSocket channel protocols), /portForward (WebSocket), /podProxy (HTTP, or
HTTPS unverified, to a Pod's port, for the API server's pods/proxy and services/proxy: the API server is not on the
Pod network), and HTTP CONNECT to a Pod or Service address (kubelet/tunnel.py: how the API server reaches webhooks).
Every request but /healthz carries the bearer token the kubelets share with the API server."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import fcntl
import functools
import hmac
import json
import os
import socket
import struct
import termios
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from mini_kube.machinery.times import parse_time
from mini_kube.network.namespaces import open_connection_in, socket_in

from . import channels, logs, tunnel
from .pod_worker import PodWorker
from .runtime.base import Runtime

CHUNK = 1 << 16  # bytes read at a time from a stream copied to a WebSocket channel


def _flag(request: web.Request, name: str, default: bool = False) -> bool:
    value = request.query.get(name)
    return default if value is None else value.lower() in ("1", "true", "yes")


def _log_reader(request: web.Request, path: str) -> logs.LogReader:
    """A reader of the log file `path` with the request's options (since, tail, limit, timestamps)."""
    since = None
    if request.query.get("sinceSeconds"):
        with contextlib.suppress(OverflowError):  # further back than datetime reaches: the whole log
            since = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=int(request.query["sinceSeconds"]))
    elif request.query.get("sinceTime"):
        since = parse_time(request.query["sinceTime"])
    tail = int(request.query["tailLines"]) if request.query.get("tailLines") else None
    limit = int(request.query["limitBytes"]) if request.query.get("limitBytes") else None
    return logs.LogReader(path, timestamps=_flag(request, "timestamps"), since=since, tail=tail, limit_bytes=limit)


def _bad(message: str, code: int = 400) -> web.Response:
    return web.Response(status=code, text=message + "\n")


def dial_error(exc: BaseException, address: str) -> str:
    """Why the Pod could not be reached, as Go's net package says it (`dial tcp IP:PORT: connect: connection
    refused`, `... i/o timeout`)."""
    cause = exc.os_error if isinstance(exc, aiohttp.ClientConnectorError) else exc
    if isinstance(cause, TimeoutError | asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return f"dial tcp {address}: i/o timeout"
    if isinstance(cause, OSError) and cause.errno:
        reason = os.strerror(cause.errno)  # asyncio words its own ("Connect call failed (...)")
        return f"dial tcp {address}: connect: {reason[0].lower()}{reason[1:]}"
    return f"{exc.__class__.__name__}: {exc}"


def _unreachable(exc: BaseException, address: str) -> web.Response:
    """The Pod could not be reached: the 503 Status upstream's proxy transport answers with, which the API
    server relays as it is."""
    message = f"error trying to reach service: {dial_error(exc, address)}"
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
              "reason": "ServiceUnavailable", "code": 503}
    return web.json_response(status, status=503)


class KubeletServer:
    """Serves the node's running Pods (`workers`, by uid, as the kubelet keeps them) through its `runtime`;
    `network_netns`: the cluster network's namespace, where Pod IPs are reached."""

    def __init__(self, workers: Mapping[str, PodWorker], runtime: Runtime, token: str,
                 network_netns: str | None = None) -> None:
        self.workers = workers
        self.runtime = runtime
        self.network_netns = network_netns
        self.token = token
        self.app = web.Application(middlewares=[self._auth], client_max_size=16 << 20)
        self.app.router.add_get("/healthz", self.healthz)
        self.app.router.add_get("/pods", self.pods)
        self.app.router.add_get("/containerLogs/{ns}/{pod}/{container}", self.container_logs)
        for verb in ("exec", "attach"):
            self.app.router.add_route("*", f"/{verb}/{{ns}}/{{pod}}/{{container}}", self.exec_or_attach)
        self.app.router.add_route("*", "/portForward/{ns}/{pod}", self.port_forward)
        self.app.router.add_route("*", "/podProxy/{ns}/{pod}/{port}/{path:.*}", self.pod_proxy)
        self.runner: web.AppRunner | None = None
        self.port = 0
        self.static_logs: dict[tuple[str, str, str], str] = {}  # mirror Pods' containers: their components' logs

    async def start(self, host: str, port: int) -> int:
        self.runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self.runner.setup()
        site = web.TCPSite(self.runner, host, port, reuse_address=True)
        await site.start()
        bound = self.runner.addresses  # the port the system chose when 0 was asked
        self.port = int(bound[0][1]) if bound else port
        return self.port

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.method == "CONNECT":  # the API server's way into the cluster network (kubelet/tunnel.py)
            given = request.headers.get("Proxy-Authorization", "").removeprefix("Bearer ").strip()
            if not given or not hmac.compare_digest(given, self.token):
                return web.Response(status=407, reason="Proxy Authentication Required")
            return await tunnel.connect(request, self.network_netns)
        if request.path != "/healthz":
            given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if not given or not hmac.compare_digest(given, self.token):
                return _bad("Unauthorized", 401)
        return await handler(request)

    # -- simple reads ------------------------------------------------------------------------------------------
    async def healthz(self, _: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def pods(self, _: web.Request) -> web.Response:
        items = [w.pod for w in self.workers.values()]
        return web.json_response({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items})

    def _worker(self, request: web.Request) -> PodWorker | None:
        ns, name = request.match_info["ns"], request.match_info["pod"]
        return next((w for w in self.workers.values() if w.namespace == ns and w.name == name), None)

    def _container(self, request: web.Request) -> tuple[PodWorker | None, Any]:
        """The Pod's worker and the record of the container the request names (None where there is none)."""
        worker = self._worker(request)
        return worker, worker.record(request.match_info["container"]) if worker else None

    # -- logs --------------------------------------------------------------------------------------------------
    async def container_logs(self, request: web.Request) -> web.StreamResponse:
        worker, record = self._container(request)
        name = request.match_info["container"]
        static = self.static_logs.get((request.match_info["ns"], request.match_info["pod"], name))
        if static is not None and worker is None:
            return await self._static_log(request, static)
        if worker is None or record is None:
            return _bad(f"container {name} is not found in pod {request.match_info['pod']}", 404)
        attempt = record.restart_count
        if _flag(request, "previous"):
            if attempt == 0:
                return _bad(f'previous terminated container "{name}" in pod "{worker.name}" not found')
            attempt -= 1
        path = worker.directory / "logs" / name / f"{attempt}.log"
        timestamps = _flag(request, "timestamps")
        reader = _log_reader(request, str(path))
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        chunks = reader.chunks()
        while (chunk := await asyncio.to_thread(next, chunks, b"")):
            await response.write(chunk)
        follow = _flag(request, "follow") and not _flag(request, "previous")
        if not follow:
            await response.write_eof()
            return response
        done = asyncio.Event()
        container = record.container

        async def watch_exit() -> None:
            if container is not None and record.running:
                await container.wait()
            done.set()

        watcher = asyncio.create_task(watch_exit())
        writer = container.log if container is not None else None
        try:
            async for chunk in logs.follow(str(path), writer, reader.end, timestamps=timestamps, done=done,
                                           inode=reader.inode):
                await response.write(chunk)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            watcher.cancel()
        return response

    async def _static_log(self, request: web.Request, path: str) -> web.StreamResponse:
        """A mirror Pod's log: its component's log file (never restarted: no previous one), followed until the
        client goes."""
        if _flag(request, "previous"):
            return _bad(f'previous terminated container "{request.match_info["container"]}" in pod '
                        f'"{request.match_info["pod"]}" not found')
        timestamps = _flag(request, "timestamps")
        reader = _log_reader(request, path)
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        chunks = reader.chunks()
        while (chunk := await asyncio.to_thread(next, chunks, b"")):
            await response.write(chunk)
        if _flag(request, "follow"):
            with contextlib.suppress(ConnectionResetError):
                async for chunk in logs.follow(path, None, reader.end, timestamps=timestamps, done=asyncio.Event(),
                                               inode=reader.inode):
                    await response.write(chunk)
        await response.write_eof()
        return response

    # -- exec and attach ---------------------------------------------------------------------------------------
    async def exec_or_attach(self, request: web.Request) -> web.StreamResponse:
        worker, record = self._container(request)
        name = request.match_info["container"]
        problem = (f'container not found ("{name}")' if worker is None or record is None or record.container is None
                   else f'container "{name}" is not running' if not record.running else "")
        if problem and request.headers.get("Upgrade", "").lower() != "websocket":
            return _bad(f"unable to upgrade connection: {problem}", 404 if "not found" in problem else 400)
        ws = web.WebSocketResponse(protocols=channels.EXEC_PROTOCOLS, max_msg_size=16 << 20, autoping=True)
        await ws.prepare(request)
        if problem:  # on the error channel, where the client shows it (a failed upgrade makes kubectl try SPDY)
            await _send_status(ws, channels.failure(f"unable to upgrade connection: {problem}"))
            await ws.close()
            return ws
        assert worker is not None and record is not None
        try:
            if request.path.startswith("/attach/"):
                await self._attach(ws, request, worker, record)
            else:
                await self._exec(ws, request, worker, record)
        finally:
            await ws.close()
        return ws

    async def _exec(self, ws: web.WebSocketResponse, request: web.Request, worker: PodWorker, record: Any) -> None:
        argv = request.query.getall("command", [])
        tty = _flag(request, "tty")
        runtime = self.runtime
        if not runtime.runs_processes:
            await _send_status(ws, channels.failure(
                f"the {runtime.name} runtime runs no processes: exec is not possible"))
            return
        await record.container.started()  # not into a container whose root is still being built
        master = -1
        try:
            if tty:
                master, slave = runtime.open_pty(record.container)  # the container's own, where it has one
                try:
                    proc = await runtime.exec(worker.sandbox, record.container, argv, tty=True, terminal=slave)
                finally:
                    os.close(slave)
            else:
                proc = await runtime.exec(worker.sandbox, record.container, argv, tty=False)
        except OSError as exc:
            if master >= 0:
                os.close(master)
            await _send_status(ws, channels.failure(str(exc)))
            return
        pumps: list[asyncio.Task[None]] = []
        if tty:
            pumps.append(asyncio.create_task(_pump(functools.partial(asyncio.to_thread, os.read, master, CHUNK), ws,
                                                   channels.STDOUT)))
        else:
            assert proc.stdout is not None and proc.stderr is not None
            pumps.append(asyncio.create_task(_pump(functools.partial(proc.stdout.read, CHUNK), ws, channels.STDOUT)))
            pumps.append(asyncio.create_task(_pump(functools.partial(proc.stderr.read, CHUNK), ws, channels.STDERR)))
        feeder = asyncio.create_task(self._feed(ws, proc, master))
        code = await proc.wait()
        await asyncio.wait(pumps, timeout=2)
        feeder.cancel()
        if master >= 0:
            with contextlib.suppress(OSError):
                os.close(master)
        status = channels.success() if code == 0 else channels.exit_status(argv, code if code >= 0 else 128 - code)
        with contextlib.suppress(ConnectionResetError):
            await _send_status(ws, status)

    async def _feed(self, ws: web.WebSocketResponse, proc: Any, master: int) -> None:
        """Client -> process: stdin, resize, close."""
        async for message in ws:
            payload = _payload(message)
            if not payload:
                continue
            channel, data = payload[0], payload[1:]
            if channel == channels.STDIN and data:
                if master >= 0:
                    await asyncio.get_running_loop().run_in_executor(None, os.write, master, data)
                elif proc.stdin is not None and not proc.stdin.is_closing():
                    proc.stdin.write(data)
                    with contextlib.suppress(ConnectionResetError):
                        await proc.stdin.drain()
            elif channel == channels.RESIZE and master >= 0:
                with contextlib.suppress(ValueError, KeyError, OSError):
                    size = json.loads(data)
                    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", size["Height"], size["Width"], 0, 0))
            elif channel == channels.CLOSE and data[:1] == bytes([channels.STDIN]):
                if proc.stdin is not None:
                    proc.stdin.close()
                elif master >= 0:
                    with contextlib.suppress(OSError):
                        os.write(master, b"\x04")
        if proc.returncode is None and proc.stdin is not None:
            proc.stdin.close()

    async def _attach(self, ws: web.WebSocketResponse, request: web.Request, worker: PodWorker, record: Any) -> None:
        """Follow the container's output from now on; stdin goes to the container's own stdin."""
        container = record.container
        log = container.log
        if log is None:
            await _send_status(ws, channels.failure("attach is not possible here"))
            return
        path = Path(log.path)
        done = asyncio.Event()

        async def feed() -> None:
            async for message in ws:
                payload = _payload(message)
                if payload[:1] == bytes([channels.STDIN]):
                    container.write_stdin(payload[1:])
                elif payload[:2] == bytes([channels.CLOSE, 0]):
                    container.close_stdin()
            done.set()

        async def exited() -> None:
            await container.wait()
            done.set()

        tasks = [asyncio.create_task(feed()), asyncio.create_task(exited())]
        start = path.stat().st_size if path.exists() else 0
        try:
            async for chunk in logs.follow(str(path), log, start, timestamps=False, done=done):
                await ws.send_bytes(channels.frame(channels.STDOUT, chunk))
        finally:
            for task in tasks:
                task.cancel()
        await _send_status(ws, channels.success())

    # -- port-forward and proxy --------------------------------------------------------------------------------
    async def _connect(self, worker: PodWorker, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to localhost:port inside the Pod's network namespace (as upstream's port-forward)."""
        return await open_connection_in(worker.sandbox.netns if worker.sandbox is not None else None, "127.0.0.1",
                                        port)

    async def port_forward(self, request: web.Request) -> web.StreamResponse:
        worker = self._worker(request)
        if worker is None:
            return _bad(f"pod {request.match_info['pod']} not found", 404)
        ws = web.WebSocketResponse(protocols=channels.PORT_FORWARD_PROTOCOLS, max_msg_size=16 << 20)
        await ws.prepare(request)
        if ws.ws_protocol in ("SPDY/3.1+portforward.k8s.io", "portforward.k8s.io"):
            from .spdy_forward import serve_spdy_port_forward

            await serve_spdy_port_forward(ws, lambda port: self._connect(worker, port))
            return ws
        ports = [int(p) for value in request.query.getall("ports", []) for p in value.split(",") if p]
        streams: dict[int, asyncio.StreamWriter] = {}
        pumps: list[asyncio.Task[None]] = []
        for index, port in enumerate(ports):
            prefix = struct.pack("<H", port)
            await ws.send_bytes(bytes([2 * index]) + prefix)
            await ws.send_bytes(bytes([2 * index + 1]) + prefix)
            try:
                reader, writer = await self._connect(worker, port)
            except OSError as exc:
                await ws.send_bytes(bytes([2 * index + 1]) + (
                    f"error forwarding port {port} to pod {worker.name}: {exc}").encode())
                continue
            streams[index] = writer
            pumps.append(asyncio.create_task(_pump(functools.partial(reader.read, CHUNK), ws, 2 * index)))

        async def close_when_forwarded() -> None:  # the Pod closed every connection: so does the stream, as upstream's
            await asyncio.gather(*pumps, return_exceptions=True)
            await ws.close()

        closer = asyncio.create_task(close_when_forwarded()) if pumps else None
        first: set[int] = set()
        async for message in ws:
            payload = _payload(message)
            if not payload:
                continue
            channel, data = payload[0], payload[1:]
            index = channel // 2
            if channel % 2 or index not in streams:
                continue
            if index not in first:  # a client's first frame on a channel may carry the port
                first.add(index)
                if len(data) >= 2 and struct.unpack("<H", data[:2])[0] == ports[index]:
                    data = data[2:]
            if data:
                streams[index].write(data)
                with contextlib.suppress(ConnectionResetError):
                    await streams[index].drain()
        for writer in streams.values():
            writer.close()
        for task in pumps:
            task.cancel()
        if closer is not None:
            closer.cancel()
        await ws.close()
        return ws

    async def pod_proxy(self, request: web.Request) -> web.StreamResponse:
        worker = self._worker(request)
        if worker is None or not worker.ip:
            return _bad(f"pod {request.match_info['pod']} not found", 404)
        scheme, _, number = request.match_info["port"].rpartition(":")  # [scheme:]port, as the API server names it
        if scheme not in ("", "http", "https") or not number.isdigit():
            return _bad(f"invalid port {request.match_info['port']!r}", 400)
        port = int(number)
        netns = self.network_netns

        def make_socket(addr_info: Any) -> socket.socket:
            return socket_in(netns, addr_info[0], addr_info[1])

        # https: TLS to the Pod with no verification of its certificate, as upstream's proxy transport dials it
        connector = aiohttp.TCPConnector(socket_factory=make_socket, force_close=True, ssl=False)
        target = f"{scheme or 'http'}://{worker.ip}:{port}/{request.match_info['path']}"
        headers = {k: v for k, v in request.headers.items() if k.lower() not in (
            "authorization", "host", "connection", "transfer-encoding", "content-length")}
        try:
            async with aiohttp.ClientSession(connector=connector) as session, session.request(
                    request.method, target, params=request.query, headers=headers, data=await request.read(),
                    allow_redirects=False, timeout=aiohttp.ClientTimeout(total=30)) as answer:
                body = await answer.read()
                out = {k: v for k, v in answer.headers.items() if k.lower() not in (
                    "transfer-encoding", "content-length", "connection", "content-encoding")}
                return web.Response(status=answer.status, body=body, headers=out)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            return _unreachable(exc, f"{worker.ip}:{port}")


def _payload(message: aiohttp.WSMessage) -> bytes:
    """A client message's channel byte and data: binary frames as sent, text frames (the official Python client
    sends str data so) as their UTF-8 bytes, as upstream's wsstream reads both; nothing for control frames."""
    if message.type == aiohttp.WSMsgType.BINARY:
        return bytes(message.data)
    if message.type == aiohttp.WSMsgType.TEXT:
        return message.data.encode()
    return b""


async def _pump(read: Callable[[], Awaitable[bytes]], ws: web.WebSocketResponse, channel: int) -> None:
    """Copy what `read` gives (a stream's reads, or a terminal's in a thread) to `channel` of `ws`, until the end."""
    while True:
        try:
            chunk = await read()
        except OSError:
            return
        if not chunk:
            return
        try:
            await ws.send_bytes(bytes([channel]) + chunk)
        except (ConnectionResetError, RuntimeError):
            return




async def _send_status(ws: web.WebSocketResponse, status: bytes) -> None:
    """The final Status on the error channel, as the negotiated protocol carries it (maybe not at all)."""
    message = channels.status_message(ws.ws_protocol or "", status)
    if message is not None:
        await ws.send_bytes(channels.frame(channels.ERROR, message))
