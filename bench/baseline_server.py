"""Baseline for the API benchmark: bare aiohttp + aiosqlite doing ConfigMap create/get/list, no API semantics."""

from __future__ import annotations

import sys

import aiosqlite
import orjson
from aiohttp import web


async def make_app(path: str) -> web.Application:
    db = await aiosqlite.connect(path)
    await db.execute("PRAGMA journal_mode=WAL")
    await db.execute("PRAGMA synchronous=NORMAL")
    await db.execute("CREATE TABLE IF NOT EXISTS kv (ns TEXT, name TEXT, value BLOB, PRIMARY KEY (ns, name))")
    await db.commit()

    async def create(request: web.Request) -> web.Response:
        body = await request.read()
        obj = orjson.loads(body)
        ns = request.match_info["ns"]
        await db.execute("INSERT INTO kv VALUES (?, ?, ?)", (ns, obj["metadata"]["name"], body))
        await db.commit()
        return web.Response(body=body, status=201, content_type="application/json")

    async def get(request: web.Request) -> web.Response:
        async with db.execute("SELECT value FROM kv WHERE ns=? AND name=?",
                              (request.match_info["ns"], request.match_info["name"])) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise web.HTTPNotFound()
        return web.Response(body=row[0], content_type="application/json")

    async def list_(request: web.Request) -> web.Response:
        async with db.execute("SELECT value FROM kv WHERE ns=? ORDER BY name", (request.match_info["ns"],)) as cur:
            rows = await cur.fetchall()
        body = b'{"kind":"ConfigMapList","items":[' + b",".join(r[0] for r in rows) + b"]}"
        return web.Response(body=body, content_type="application/json")

    async def ready(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def close(app: web.Application) -> None:
        await db.close()

    app = web.Application()
    app.on_cleanup.append(close)
    app.router.add_post("/api/v1/namespaces/{ns}/configmaps", create)
    app.router.add_get("/api/v1/namespaces/{ns}/configmaps/{name}", get)
    app.router.add_get("/api/v1/namespaces/{ns}/configmaps", list_)
    app.router.add_get("/readyz", ready)
    return app


if __name__ == "__main__":
    web.run_app(make_app(sys.argv[1]), host="127.0.0.1", port=int(sys.argv[2]), access_log=None, print=None,
                shutdown_timeout=0.5)
