"""`MiniKube`: start and stop a throw-away API server in a background thread."""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from mini_kube.apiserver.kubeconfig import write_kubeconfig
from mini_kube.apiserver.server import ApiServer, ServerConfig
from mini_kube.client import ApiClient, Connection, ResourceRef

T = TypeVar("T")
ETCD_ENV = "MINI_KUBE_TEST_ETCD_SERVERS"
"""When set (comma-separated etcd URLs), every MiniKube without its own store runs on etcd, a fresh prefix each."""


async def _cancel_remaining() -> None:
    """Cancel whatever still runs on the cluster's loop (client sessions, streams) before it closes."""
    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class SyncClient:
    """Blocking façade over ApiClient: each call runs on the cluster's own event loop."""

    def __init__(self, client: ApiClient, loop: asyncio.AbstractEventLoop) -> None:
        self.async_client = client
        self._loop = loop

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._run(self.async_client.request(method, path, **kwargs))

    def get(self, ref: ResourceRef, name: str, namespace: str | None = None, subresource: str = "") -> Any:
        return self._run(self.async_client.get(ref, name, namespace, subresource))

    def list(self, ref: ResourceRef, namespace: str | None = None, **params: str) -> Any:
        return self._run(self.async_client.list(ref, namespace, **params))

    def create(self, ref: ResourceRef, obj: dict[str, Any], namespace: str | None = None, **params: str) -> Any:
        return self._run(self.async_client.create(ref, obj, namespace, **params))

    def replace(self, ref: ResourceRef, obj: dict[str, Any], namespace: str | None = None,
                subresource: str = "") -> Any:
        return self._run(self.async_client.replace(ref, obj, namespace, subresource))

    def patch(self, ref: ResourceRef, name: str, patch: Any, namespace: str | None = None, **kwargs: Any) -> Any:
        return self._run(self.async_client.patch(ref, name, patch, namespace, **kwargs))

    def delete(self, ref: ResourceRef, name: str, namespace: str | None = None,
               body: dict[str, Any] | None = None) -> Any:
        return self._run(self.async_client.delete(ref, name, namespace, body))


class MiniKube:
    """A hermetic cluster; a context manager. `.url`, `.kubeconfig`, `.client`, `.server`; with `nodes=K`, K
    in-process nodes (`.nodes.kubelets`) whose pods run as processes (`node_runtime="process"`), on a timeline
    (`"simulated"`), or as processes where namespaces can be made (`"auto"`); `image_map` and `image_store`
    are the nodes' --image-map and --image-store."""

    def __init__(self, *, data_dir: str = ":memory:", insecure_http: bool = True, controllers: bool | str = True,
                 scheduler: bool | dict[str, Any] = True, ccm: bool | dict[str, Any] = False, dns: bool | dict[str, Any] = False,
                 nodes: int = 0, node_runtime: str = "auto",
                 controller_options: dict[str, dict[str, Any]] | None = None,
                 node_options: dict[str, Any] | None = None, image_map: str | dict[str, Any] | None = None,
                 image_store: str | None = None, **config: Any) -> None:
        self.controllers = controllers
        self.scheduler = scheduler
        self.controller_options = controller_options  # per controller, e.g. {"nodelifecycle": {...}}
        self.node_count = nodes  # in-process nodes (kubelet + kube-proxy each)
        self.node_runtime = node_runtime  # auto | process | simulated
        self.node_options = node_options or {}  # KubeletConfig fields, e.g. {"renew_interval": 0.5}
        if image_map:  # the nodes' --image-map: a file, or its YAML parsed (paths relative to the working dir)
            self.node_options.setdefault("image_map", image_map)
        if image_store:  # where `mini-kube image load --data-dir D` put images: D/images
            self.node_options.setdefault("image_store", image_store)
        self.nodes: Any = None
        self.ccm_options = ccm  # True or CloudControllerManager options: run the cloud-controller-manager
        self.ccm: Any = None
        self.dns_options = dns  # True or ClusterDNS options (host_address, port, ...): run the cluster DNS
        self.dns: Any = None
        if os.environ.get(ETCD_ENV) and "etcd_servers" not in config:  # run a test suite on etcd
            config["etcd_servers"] = os.environ[ETCD_ENV].split(",")
            config["etcd_prefix"] = f"/mini-kube-test-{uuid.uuid4().hex[:12]}"
        self.config = ServerConfig(address="127.0.0.1", port=0, data_dir=data_dir, insecure_http=insecure_http,
                                   **config)
        self.server = ApiServer(self.config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mini-kube", daemon=True)
        self._tmp = tempfile.TemporaryDirectory(prefix="mini-kube-")
        self.kubeconfig = str(Path(self._tmp.name) / "kubeconfig")
        self.client: SyncClient = None  # type: ignore[assignment]

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        """Run a coroutine on the cluster's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self) -> MiniKube:
        self._thread.start()
        self.run(self.server.start())
        write_kubeconfig(self.kubeconfig, self.server.admin_kubeconfig())
        if self.controllers:
            from mini_kube.cli import start_controllers

            self.run(start_controllers(self.server, "*" if self.controllers is True else self.controllers,
                                       self.controller_options))
        if self.scheduler:
            from mini_kube.cli import start_scheduler

            self.run(start_scheduler(self.server, **(self.scheduler if isinstance(self.scheduler, dict) else {})))
        if self.node_count:
            from mini_kube.cli import start_nodes

            self.nodes = self.run(start_nodes(self.server, self.node_count, runtime=self.node_runtime,
                                                 kubelet_options=self.node_options))
        if self.ccm_options:
            from mini_kube.cli import start_ccm

            self.ccm = self.run(start_ccm(self.server, **(self.ccm_options if isinstance(self.ccm_options, dict)
                                                          else {})))
        if self.dns_options:
            from mini_kube.cli import start_dns

            self.dns = self.run(start_dns(self.server, **(self.dns_options if isinstance(self.dns_options, dict)
                                                          else {})))
        self.client = SyncClient(ApiClient(Connection.from_kubeconfig(self.kubeconfig)), self._loop)
        return self

    def stop(self) -> None:
        if self.client is not None:
            self.run(self.client.async_client.close())
        self.run(self.server.stop())
        self.run(_cancel_remaining())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()
        self._tmp.cleanup()

    def __enter__(self) -> MiniKube:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
