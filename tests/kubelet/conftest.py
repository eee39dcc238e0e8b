"""Clusters with real nodes: the process runtime (skipped, saying why, where namespaces cannot be made) and the
simulated runtime. Pods name their node in `spec.nodeName`, so these tests need no scheduler."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

import pytest
from mini_kube.client import ApiError, NotFound
from mini_kube.machinery.refs import PODS
from mini_kube.network.namespaces import can_make_namespaces

from tests import helpers

NODE = "mini-kube"
eventually = functools.partial(helpers.eventually, timeout=20.0, interval=0.05)


def process_cluster_or_skip():
    ok, why = can_make_namespaces()
    if not ok:
        pytest.skip(f"the process runtime needs network and mount namespaces: {why}")


def tls_dns_cluster() -> Iterator:
    """A module's own cluster: TLS, one process node and cluster DNS (its Pods reach Services by name). Use as
    `yield from tls_dns_cluster()` in a module-scoped fixture."""
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(insecure_http=False, nodes=1, node_runtime="process", dns=True) as cluster:
        yield cluster


@pytest.fixture(scope="package")
def process_cluster():
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    # crash-loop back-off in tenths of seconds, not tens; a missing ConfigMap looked for again sooner than 2 s
    with MiniKube(nodes=1, node_runtime="process", node_options={"backoff_base": 0.3, "config_retry": 0.2}) as kube:
        yield kube


@pytest.fixture(scope="module")
def kube(process_cluster):
    """A module's cluster: the package's process cluster, unless the module has a `kube` of its own."""
    return process_cluster


@pytest.fixture
def ns(kube) -> str:
    """A fresh namespace on the module's cluster."""
    return new_namespace(kube)


@pytest.fixture
def process_namespace(process_cluster) -> str:
    """A fresh namespace on the package's process cluster."""
    return new_namespace(process_cluster)


@pytest.fixture(scope="package")
def simulated_cluster():
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=2, node_runtime="simulated") as kube:
        yield kube


@pytest.fixture(scope="package")
def webhook_server():
    """A real TLS admission webhook server (tests/admission/hooks.py): tests make the API fail through it."""
    from tests.admission.hooks import WebhookServer

    server = WebhookServer().start()
    yield server
    server.stop()


@contextlib.contextmanager
def validating_webhook(kube, server, namespace: str, handler: Callable[[dict], dict], *, resources: tuple[str, ...],
                       operations: tuple[str, ...], **extra) -> Iterator[list[dict]]:
    """`handler` decides `operations` on `resources` in `namespace` (only) while the block runs; yields the
    reviews it received."""
    from tests.admission.hooks import VALIDATING, client_config, configuration, webhook

    name = f"kubelet-{namespace}"
    path = server.handle(name, handler)
    selector = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    kube.client.create(VALIDATING, configuration("ValidatingWebhookConfiguration", name, webhook(
        f"{name}.example.com", client_config(server, path), resources=resources, operations=operations,
        namespaceSelector=selector, **extra)))
    try:
        yield server.reviews[path]
    finally:
        kube.client.delete(VALIDATING, name)


def new_namespace(kube) -> str:
    return helpers.new_namespace(kube, "k")


def gone(kube, namespace: str, name: str) -> bool:
    """Whether the Pod is deleted for good (not merely terminating)."""
    try:
        kube.client.get(PODS, name, namespace)
    except NotFound:
        return True
    return False


def pod(name: str, *containers: dict, node: str = NODE, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": list(containers), **spec}}


def pod_log(kube, namespace: str, name: str, container: str | None = None) -> str:
    """The container's log as the API server gives it, read in-process ("" while it cannot be read): for waiting
    until something is logged (each `kubectl logs` in a polling loop is a process start, ~0.1 s of CPU); what
    kubectl shows is read once the wait is over."""
    try:
        return kube.client.request("GET", PODS.path(namespace, name, "log"),
                                   params={"container": container} if container else None) or ""
    except ApiError:
        return ""


def status_of(kube, namespace: str, name: str) -> dict:
    return kube.client.get(PODS, name, namespace).get("status") or {}


def container_state(kube, namespace: str, name: str, container: str | None = None) -> dict:
    for entry in status_of(kube, namespace, name).get("containerStatuses") or ():
        if container is None or entry["name"] == container:
            return entry
    return {}
