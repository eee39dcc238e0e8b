"""kr8s (a third-party client, from PyPI through the `test` extra) against a cluster whose Pods are real
processes: a Pod created, Ready, exec'd into (output, stderr, exit codes), its logs read, its port
forwarded with kr8s's PortForward (to the Pod and through a Service), tolerations added, deleted gracefully;
`whoami` with a service-account token (TokenReview). Skipped only where network namespaces cannot be made."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import kr8s
import kr8s.asyncio
import pytest
import yaml
from kr8s.asyncio.objects import Namespace, Pod, Service
from mini_kube.network.namespaces import can_make_namespaces

from tests.helpers import kubectl


@pytest.fixture(scope="module")
def kube():
    ok, why = can_make_namespaces()
    if not ok:
        pytest.skip(f"the process runtime needs network and mount namespaces: {why}")
    from mini_kube.testing import MiniKube

    with MiniKube(insecure_http=False, nodes=1, node_runtime="process",
                  controllers="namespace,serviceaccount,root-ca-cert-publisher") as cluster:
        yield cluster


async def namespace(api) -> str:
    name = f"kr8s-{uuid.uuid4().hex[:6]}"
    await (await Namespace({"metadata": {"name": name}}, api=api)).create()
    return name


def web_pod(namespace: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": namespace,
                                                            "labels": {"app": "web"}},
            "spec": {"terminationGracePeriodSeconds": 5, "containers": [{
                "name": "nginx", "image": "nginx:latest", "ports": [{"containerPort": 80}],
                "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 1}}]}}


@pytest.mark.slow
async def test_a_pod_through_kr8s(kube):
    api = await kr8s.asyncio.api(kubeconfig=kube.kubeconfig)
    ns = await namespace(api)
    pod = await Pod(web_pod(ns), api=api)
    await pod.create()
    await pod.wait("condition=Ready", timeout=30)
    assert await pod.ready() and pod.status.podIP

    done = await pod.exec(["sh", "-c", "echo out; echo err >&2; hostname"])
    assert (done.stdout, done.stderr, done.returncode) == (b"out\nweb\n", b"err\n", 0)
    with pytest.raises(kr8s.ExecError, match="exit code 3"):
        await pod.exec(["sh", "-c", "exit 3"])
    assert (await pod.exec(["sh", "-c", "exit 3"], check=False)).returncode == 3

    # nginx serves its document root, as the image's server would
    await pod.exec(["sh", "-c", "echo hello > /usr/share/nginx/html/hello.txt"])
    async with pod.portforward(80, local_port=free_port()) as port, httpx.AsyncClient(timeout=10) as http:
        assert (await http.get(f"http://127.0.0.1:{port}/hello.txt")).text == "hello\n"
        assert (await http.get(f"http://127.0.0.1:{port}/missing")).status_code == 404
        assert "<title>Welcome to nginx!</title>" in (await http.get(f"http://127.0.0.1:{port}/")).text
    logs = [line async for line in pod.logs()]
    assert any('"GET /hello.txt HTTP/1.1" 200' in line for line in logs)
    assert [line async for line in pod.logs(tail_lines=1)] == logs[-1:]

    # tolerations: kr8s appends to the ones every Pod gets by default
    await pod.tolerate("example.com/maintenance", operator="Exists", effect="NoExecute", toleration_seconds=60)
    await pod.refresh()
    assert [t["key"] for t in pod.spec.tolerations] == [
        "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "example.com/maintenance"]

    # deleted gracefully: terminating first, then gone once the kubelet has stopped it
    await pod.delete()
    await pod.refresh()
    assert pod.metadata.deletionGracePeriodSeconds == 5
    await pod.wait("delete", timeout=30)
    assert not await pod.exists()


def free_port() -> int:
    """A port the kernel says is free (kr8s's own random pick can land on one held in TIME_WAIT here)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_port_forward_through_a_service(kube):
    api = await kr8s.asyncio.api(kubeconfig=kube.kubeconfig)
    ns = await namespace(api)
    await (await Pod(web_pod(ns), api=api)).create()
    service = await Service({"metadata": {"name": "front", "namespace": ns}, "spec": {
        "selector": {"app": "web"}, "ports": [{"port": 8080, "targetPort": 80}]}}, api=api)
    await service.create()
    pod = await Pod.get("web", namespace=ns, api=api)
    await pod.wait("condition=Ready", timeout=30)
    assert [p.name for p in await service.ready_pods()] == ["web"]
    for _ in range(2):  # started and stopped in the background, twice
        forward = service.portforward(80, local_port=free_port())
        port = await forward.start()
        async with httpx.AsyncClient(timeout=10) as http:
            for _ in range(20):  # kr8s returns the port before its listener is up
                try:
                    answer = await http.get(f"http://127.0.0.1:{port}/")
                    break
                except httpx.ConnectError:
                    await asyncio.sleep(0.05)
            assert "<title>Welcome to nginx!</title>" in answer.text
        await forward.stop()


async def test_whoami_with_a_service_account_token(kube, tmp_path: Path):
    kubectl(kube, "create", "serviceaccount", "robot")
    kubectl(kube, "create", "clusterrolebinding", "robot-reviews", "--clusterrole=system:auth-delegator",
            "--serviceaccount=default:robot")  # TokenReview is not for everyone
    token = kubectl(kube, "create", "token", "robot").stdout.strip()
    config = yaml.safe_load(Path(kube.kubeconfig).read_text())
    config["users"] = [{"name": "robot", "user": {"token": token}}]
    config["contexts"][0]["context"]["user"] = "robot"
    path = tmp_path / "robot.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    api = await kr8s.asyncio.api(kubeconfig=str(path))
    assert await api.whoami() == "system:serviceaccount:default:robot"
