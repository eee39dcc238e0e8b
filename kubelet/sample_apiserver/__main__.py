"""`python -m mini_kube.kubelet.sample_apiserver --etcd-servers=URL --tls-cert-file=F --tls-private-key-file=F
[--secure-port=443]`: serve the wardle API (see the package's docstring) until stopped."""

from __future__ import annotations

import asyncio
import logging
import signal
import ssl
import sys
from typing import Any

from aiohttp import web

from ..agnhost.flags import Flag, parse_or_exit
from .delegation import Delegation
from .storage import Etcd, StorageError
from .wardle import GROUP, ApiError, Target, Wardle, discovery, json_response, parse_target, status_response

FLAGS = {"etcd-servers": Flag(str, ""), "tls-cert-file": Flag(str, ""), "tls-private-key-file": Flag(str, ""),
         "secure-port": Flag(int, 443), "bind-address": Flag(str, "0.0.0.0"), "audit-log-path": Flag(str, ""),
         "audit-log-maxage": Flag(int, 0), "audit-log-maxbackup": Flag(int, 0)}
HEALTH = ("/healthz", "/livez", "/readyz")


def forbidden(user: str, path: str, target: Target | None, attributes: dict[str, Any] | None, verb: str,
              reason: str) -> web.Response:
    """The 403 of the delegated authorizer, in upstream's words."""
    if target is None or attributes is None:
        message = f'forbidden: User "{user}" cannot {verb} path "{path}"'
    else:
        scope = f'in the namespace "{target.namespace}"' if target.namespace else "at the cluster scope"
        message = (f'{target.kind.plural}.{GROUP} is forbidden: User "{user}" cannot {attributes["verb"]} resource '
                   f'"{target.kind.plural}" in API group "{GROUP}" {scope}')
    return status_response(403, "Forbidden", message + (f": {reason}" if reason else ""))


class Server:
    def __init__(self, etcd: Etcd, delegation: Delegation) -> None:
        self.etcd = etcd
        self.delegation = delegation
        self.wardle = Wardle(etcd)

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        try:
            return await self._handle(request)
        except ApiError as exc:
            return status_response(exc.code, exc.reason, exc.message, exc.details)
        except StorageError as exc:
            return status_response(500, "InternalError", f"Internal error occurred: {exc}")

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        ssl_object = request.transport.get_extra_info("ssl_object") if request.transport else None
        peer = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        user = await self.delegation.authenticate(peer, request.headers)
        if user is None:
            return status_response(401, "Unauthorized", "Unauthorized")
        parts = path.strip("/").split("/") if path != "/" else []
        target = parse_target(parts[1:]) if parts[:1] == ["apis"] else None
        watch = request.query.get("watch") in ("1", "true")
        attributes = target.attributes(request.method, watch) if target is not None else None
        verb = request.method.lower()
        allowed, reason = await self.delegation.authorize(user, path, attributes, verb)
        if not allowed:
            return forbidden(user.name, path, target, attributes, verb, reason)
        if path in HEALTH:
            if path == "/readyz" and not await self.etcd.healthy():
                return web.Response(status=500, text="[-]etcd failed: reason withheld\nreadyz check failed\n")
            return web.Response(text="ok")
        if target is not None:
            if watch:
                raise ApiError(405, "MethodNotAllowed", "watch is not supported by this server")
            return await self.wardle.handle(request, target)
        if request.method == "GET" and parts[:1] == ["apis"]:
            doc = discovery(parts[1:])
            if doc is not None:
                return json_response(doc)
        if path == "/":
            return json_response({"paths": ["/apis", "/apis/wardle.example.com", "/apis/wardle.example.com/v1alpha1",
                                            "/apis/wardle.example.com/v1beta1", "/healthz", "/livez", "/readyz"]})
        return status_response(404, "NotFound", "the server could not find the requested resource")


async def serve(opts: dict[str, Any]) -> None:
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(opts["tls_cert_file"], opts["tls_private_key_file"])
    tls.verify_mode = ssl.CERT_OPTIONAL  # the CAs come from the cluster (delegation.py)
    delegation = Delegation(tls)
    etcd = Etcd([u for u in opts["etcd_servers"].split(",") if u])
    server = Server(etcd, delegation)
    follow = asyncio.get_running_loop().create_task(delegation.follow())
    runner = web.ServerRunner(web.Server(server.handle), handle_signals=False, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, opts["bind_address"], opts["secure_port"], ssl_context=tls).start()
    logging.getLogger("sample-apiserver").info("Serving securely on %s:%d", opts["bind_address"], opts["secure_port"])
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    follow.cancel()
    await runner.cleanup()
    await etcd.close()


def main(argv: list[str] | None = None) -> int:
    opts = parse_or_exit("sample-apiserver", FLAGS, sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname).1s %(asctime)s %(message)s", stream=sys.stderr)
    if not opts["tls_cert_file"] or not opts["tls_private_key_file"] or not opts["etcd_servers"]:
        print("Error: --etcd-servers, --tls-cert-file and --tls-private-key-file are required", file=sys.stderr)
        return 1
    asyncio.run(serve(opts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
