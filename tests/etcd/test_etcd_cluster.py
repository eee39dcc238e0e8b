"""Several API servers on one etcd: what is written through one is read and watched through the others,
allocations never collide, and a server killed under load loses no acknowledged write."""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mini_kube.client import ApiError
from mini_kube.machinery.refs import CONFIGMAPS, SERVICES

from mini_kube.testing import MiniKube
from tests.helpers import kubectl

_prefixes = itertools.count()


@pytest.fixture
def two_servers(etcd_server):
    """Two API servers on one etcd prefix, with small service IP and node port ranges (so that allocations
    made through both would collide without claims)."""
    prefix = f"/cluster-{next(_prefixes)}-{time.monotonic_ns()}"
    config = {"etcd_servers": [etcd_server.url], "etcd_prefix": prefix, "controllers": False,
              "service_cidr": "10.0.0.0/26", "node_port_range": (30000, 30049)}
    with MiniKube(**config) as a, MiniKube(**config) as b:
        yield a, b


def test_write_through_one_read_and_watched_through_the_other(two_servers):
    a, b = two_servers
    watcher = subprocess.Popen(["kubectl", "--kubeconfig", b.kubeconfig, "get", "cm", "-w", "-o", "name", "-v=6"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for log in watcher.stderr:  # the watch is open once its request is answered (-v=6 logs it then)
            if "watch=true" in log:
                break
        else:
            raise AssertionError("kubectl get -w ended before it watched")
        kubectl(a, "create", "configmap", "shared", "--from-literal=k=v")
        created = json.loads(kubectl(a, "get", "cm", "shared", "-o", "json").stdout)
        seen = json.loads(kubectl(b, "get", "cm", "shared", "-o", "json").stdout)
        assert seen["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        assert seen["data"] == {"k": "v"}
        line = ""
        deadline = time.monotonic() + 10
        while "shared" not in line and time.monotonic() < deadline:
            line = watcher.stdout.readline()
        assert line.strip() == "configmap/shared"
        kubectl(b, "delete", "cm", "shared")
        assert kubectl(a, "get", "cm", "shared", check=False).returncode == 1
    finally:
        watcher.kill()
        watcher.wait()


def test_list_at_a_revision_written_elsewhere_waits_for_it(two_servers):
    a, b = two_servers
    made = a.client.create(CONFIGMAPS, {"metadata": {"name": "rv"}}, namespace="default")
    listed = b.client.list(CONFIGMAPS, "default", resourceVersion=made["metadata"]["resourceVersion"])
    assert "rv" in [i["metadata"]["name"] for i in listed["items"]]
    assert int(listed["metadata"]["resourceVersion"]) >= int(made["metadata"]["resourceVersion"])


def test_concurrent_service_creates_through_both_never_share_an_allocation(two_servers):
    a, b = two_servers

    def create(kube: MiniKube, i: int) -> dict:
        return kube.client.create(SERVICES, {"metadata": {"name": f"s{i}"}, "spec": {
            "type": "NodePort", "ports": [{"port": 80}], "selector": {"app": "x"}}}, namespace="default")

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        made = list(pool.map(lambda i: create(a if i % 2 else b, i), range(40)))
    ips = [s["spec"]["clusterIP"] for s in made]
    ports = [s["spec"]["ports"][0]["nodePort"] for s in made]
    assert len(set(ips)) == 40 and len(set(ports)) == 40
    taken = made[0]["spec"]["clusterIP"]
    with pytest.raises(ApiError) as refused:
        (b if made[0]["metadata"]["name"] == "s0" else a).client.create(SERVICES, {
            "metadata": {"name": "dup"}, "spec": {"clusterIP": taken, "ports": [{"port": 80}]}}, namespace="default")
    assert refused.value.status == 422 and "provided IP is already allocated" in str(refused.value)


@pytest.mark.slow
def test_quota_charged_through_both_servers_never_overshoots(two_servers):
    """A quota with room for 10 ConfigMaps, 40 creates racing through both servers (the official client): each
    server charges with a compare-and-swap on the quota's status, so at most 10 are admitted and the status
    counts exactly those (a create whose charge kept losing is refused, never admitted uncounted)."""
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config
    from kubernetes.client.rest import ApiException

    apis = []
    for kube in two_servers:
        configuration = k8s.Configuration()
        k8s_config.load_kube_config(config_file=kube.kubeconfig, client_configuration=configuration)
        configuration.connection_pool_maxsize = 16
        apis.append(k8s.CoreV1Api(k8s.ApiClient(configuration)))
    a = apis[0]
    a.create_namespace({"metadata": {"name": "quota"}})
    a.create_namespaced_resource_quota("quota", {"metadata": {"name": "q"}, "spec": {"hard": {"configmaps": "10"}}})
    quota = a.read_namespaced_resource_quota("q", "quota")  # no controller here: the status is set by hand
    quota.status = {"hard": {"configmaps": "10"}, "used": {"configmaps": "0"}}
    a.replace_namespaced_resource_quota_status("q", "quota", quota)

    def create(i: int) -> int:
        try:
            apis[i % 2].create_namespaced_config_map("quota", {"metadata": {"name": f"c{i}"}})
            return 201
        except ApiException as exc:
            return exc.status

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(create, range(40)))
    admitted = codes.count(201)
    assert set(codes) <= {201, 403, 409} and 0 < admitted <= 10, codes
    assert len(a.list_namespaced_config_map("quota").items) == admitted
    assert a.read_namespaced_resource_quota("q", "quota").status.used == {"configmaps": str(admitted)}
    for api in apis:
        api.api_client.close()


def test_custom_resources_served_by_every_server(two_servers):
    a, b = two_servers
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    kubectl(a, "apply", "-f", "-", input=json.dumps(crd))
    kubectl(b, "wait", "--for=condition=established", "crd/widgets.example.com", "--timeout=10s")
    kubectl(b, "apply", "-f", "-", input=json.dumps({"apiVersion": "example.com/v1", "kind": "Widget",
                                                   "metadata": {"name": "w1", "namespace": "default"}}))
    assert kubectl(a, "get", "widgets", "-o", "name").stdout == "widget.example.com/w1\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(etcd_url: str, prefix: str, tmp: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--etcd-servers", etcd_url,
                             "--etcd-prefix", prefix, "--insecure-http", "--port", str(port), "--data-dir",
                             str(tmp), "--no-controllers", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    assert "ready" in proc.stdout.readline()
    return proc, f"http://127.0.0.1:{port}"


@pytest.mark.slow
def test_kill_9_under_load_loses_no_acknowledged_write(etcd_server, tmp_path):
    import urllib.request

    prefix = f"/kill-{time.monotonic_ns()}"
    victim, victim_url = _serve(etcd_server.url, prefix, tmp_path / "a")
    survivor, survivor_url = _serve(etcd_server.url, prefix, tmp_path / "b", "--join")
    acknowledged: list[str] = []

    def write(i: int) -> None:
        body = json.dumps({"metadata": {"name": f"w{i}"}, "data": {"i": str(i)}}).encode()
        request = urllib.request.Request(f"{victim_url}/api/v1/namespaces/default/configmaps", data=body,
                                         headers={"Content-Type": "application/json"}, method="POST")
        try:
            urllib.request.urlopen(request, timeout=5).read()
            acknowledged.append(f"w{i}")
        except OSError:
            pass

    try:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(write, i) for i in range(400)]
            while len(acknowledged) < 50:
                time.sleep(0.005)
            victim.send_signal(signal.SIGKILL)
            concurrent.futures.wait(futures)
        listed = json.loads(urllib.request.urlopen(f"{survivor_url}/api/v1/namespaces/default/configmaps").read())
        stored = {i["metadata"]["name"] for i in listed["items"]}
        assert len(acknowledged) >= 50
        assert set(acknowledged) <= stored
    finally:
        for proc in (victim, survivor):
            proc.kill()
            proc.wait()
