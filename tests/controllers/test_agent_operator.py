"""The Agent controller against the real in-process server (no mocks): children rendered from the Agent and its
runtime, owner references, config merged and hashed, runtime resolution and recovery, drift correction, writes
only when something changed, status from the Deployment's rollout, the runtime index, leader election."""

from __future__ import annotations

import contextlib
import time
import uuid
from pathlib import Path

import pytest
import yaml
from mini_kube.agent_operator import render
from mini_kube.agent_operator.api import AGENTS, API_VERSION, CLUSTER_SERVING_RUNTIMES, SERVING_RUNTIMES
from mini_kube.agent_operator.controller import BY_RUNTIME
from mini_kube.agent_operator.operator import Operator
from mini_kube.client import ApiClient, ApiError, ResourceRef
from mini_kube.machinery.refs import CONFIGMAPS, CUSTOMRESOURCEDEFINITIONS, DEPLOYMENTS, NAMESPACES, SERVICES

from tests.controllers.test_workloads import StandInKubelet, eventually
from tests.helpers import kubectl

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "agent-operator" / "00-crds.yaml"


def install_crds(kube) -> None:
    for doc in yaml.safe_load_all(CRDS.read_text()):
        kube.client.create(CUSTOMRESOURCEDEFINITIONS, doc)
    eventually(lambda: all(
        any(c["type"] == "Established" and c["status"] == "True" for c in
            (kube.client.get(CUSTOMRESOURCEDEFINITIONS, doc["metadata"]["name"]).get("status") or {}).get("conditions") or ())
        for doc in yaml.safe_load_all(CRDS.read_text())))


@pytest.fixture(scope="module")
def cluster():
    """A cluster with the controllers the operator relies on, its CRDs, and the operator running in-process."""
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="garbagecollector,deployment,replicaset") as kube:
        install_crds(kube)
        operator = Operator(ApiClient.from_kubeconfig(kube.kubeconfig))
        kube.run(operator.start())
        kube.operator = operator
        yield kube
        kube.run(operator.stop())


@pytest.fixture
def ns(cluster):
    name = f"ag-{uuid.uuid4().hex[:8]}"
    cluster.client.create(NAMESPACES, {"metadata": {"name": name}})
    return name


def runtime(name: str, image: str = "agents:1", **spec) -> dict:
    return {"apiVersion": API_VERSION, "kind": "ServingRuntime", "metadata": {"name": name},
            "spec": {"image": image, "command": ["python3", "-m", "mini_kube.agent_operator.server"], **spec}}


def agent(name: str, runtime_name: str, **spec) -> dict:
    return {"apiVersion": API_VERSION, "kind": "Agent", "metadata": {"name": name},
            "spec": {"runtime": runtime_name, **spec}}


def get(kube, ref, name, ns):
    with contextlib.suppress(ApiError):
        return kube.client.get(ref, name, ns)
    return None


def condition(obj: dict, kind: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == kind), {})


def test_children_are_rendered_from_agent_and_runtime(cluster, ns):
    kube = cluster
    kube.client.create(CONFIGMAPS, {"metadata": {"name": "base"}, "data": {"model": "small", "greeting": "hi"}}, ns)
    kube.client.create(SERVING_RUNTIMES, runtime("py", env=[{"name": "A", "value": "rt"}, {"name": "B", "value": "rt"}],
                                                 port=9000, replicas=2, resources={"requests": {"cpu": "100m"}},
                                                 readinessProbe={"httpGet": {"path": "/healthz", "port": "http"}}), ns)
    created = kube.client.create(AGENTS, agent("a1", "py", config={"greeting": "hello"}, configMapRef={"name": "base"},
                                               env=[{"name": "B", "value": "agent"}],
                                               resources={"limits": {"memory": "64Mi"}},
                                               service={"type": "NodePort", "port": 8080}), ns)
    d = eventually(lambda: get(kube, DEPLOYMENTS, "a1", ns))
    cm = kube.client.get(CONFIGMAPS, "a1-config", ns)
    svc = kube.client.get(SERVICES, "a1", ns)
    for child in (d, cm, svc):
        [ref] = child["metadata"]["ownerReferences"]
        assert ref == {"apiVersion": API_VERSION, "kind": "Agent", "name": "a1", "uid": created["metadata"]["uid"],
                       "controller": True, "blockOwnerDeletion": True}
        assert [m["manager"] for m in child["metadata"]["managedFields"]][0] == "agent-operator"
    assert cm["data"] == {"model": "small", "greeting": "hello"}
    assert d["spec"]["replicas"] == 2 and d["spec"]["selector"] == {"matchLabels": {"mini-kube.dev/agent": "a1"}}
    [c] = d["spec"]["template"]["spec"]["containers"]
    assert c["image"] == "agents:1" and c["command"][-1] == "mini_kube.agent_operator.server"
    assert c["ports"] == [{"name": "http", "containerPort": 9000, "protocol": "TCP"}]
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env["A"] == "rt" and env["B"] == "agent" and env["PORT"] == "9000" and env["AGENT_NAME"] == "a1"
    assert c["resources"] == {"requests": {"cpu": "100m"}, "limits": {"memory": "64Mi"}}
    assert c["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["volumeMounts"][0]["mountPath"] == "/etc/agent/config"
    assert d["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == "a1-config"
    assert svc["spec"]["type"] == "NodePort" and svc["spec"]["selector"] == {"mini-kube.dev/agent": "a1"}
    assert svc["spec"]["ports"][0]["port"] == 8080 and svc["spec"]["ports"][0]["targetPort"] == "http"
    status = eventually(lambda: kube.client.get(AGENTS, "a1", ns).get("status"))
    assert status["endpoint"] == {"url": f"http://a1.{ns}.svc.cluster.local:8080"}
    assert status["selector"] == "mini-kube.dev/agent=a1" and status["observedGeneration"] == 1
    assert condition(kube.client.get(AGENTS, "a1", ns), "RuntimeResolved")["message"] == "ServingRuntime py"


def test_config_changes_roll_the_pods(cluster, ns):
    kube = cluster
    kube.client.create(CONFIGMAPS, {"metadata": {"name": "base"}, "data": {"model": "small"}}, ns)
    kube.client.create(SERVING_RUNTIMES, runtime("py"), ns)
    kube.client.create(AGENTS, agent("a", "py", config={"k": "1"}, configMapRef={"name": "base"}), ns)
    first = eventually(lambda: get(kube, DEPLOYMENTS, "a", ns))
    hash_of = lambda d: d["spec"]["template"]["metadata"]["annotations"]["mini-kube.dev/config-hash"]  # noqa: E731
    kube.client.patch(AGENTS, "a", {"spec": {"config": {"k": "2"}}}, ns)
    second = eventually(lambda: (d := kube.client.get(DEPLOYMENTS, "a", ns)) and hash_of(d) != hash_of(first) and d)
    assert kube.client.get(CONFIGMAPS, "a-config", ns)["data"] == {"model": "small", "k": "2"}
    kube.client.patch(CONFIGMAPS, "base", {"data": {"model": "large"}}, ns)  # the referenced ConfigMap changes
    eventually(lambda: hash_of(kube.client.get(DEPLOYMENTS, "a", ns)) not in (hash_of(first), hash_of(second)))
    assert kube.client.get(CONFIGMAPS, "a-config", ns)["data"] == {"model": "large", "k": "2"}


def test_missing_runtime_then_recovery_and_cluster_fallback(cluster, ns):
    kube = cluster
    kube.client.create(AGENTS, agent("lost", "nowhere"), ns)
    a = eventually(lambda: (a := kube.client.get(AGENTS, "lost", ns)).get("status") and a)
    resolved = condition(a, "RuntimeResolved")
    assert (resolved["status"], resolved["reason"]) == ("False", "RuntimeNotFound")
    assert (condition(a, "Ready")["status"], condition(a, "Ready")["reason"]) == ("False", "RuntimeNotFound")
    assert get(kube, DEPLOYMENTS, "lost", ns) is None
    assert get(kube, SERVICES, "lost", ns) is not None  # the Service does not depend on the runtime
    eventually(lambda: any(e["reason"] == "RuntimeNotFound" and e["type"] == "Warning" for e in
                           kube.client.list(ResourceRef("", "v1", "events"), ns)["items"]))
    name = f"cluster-{ns}"
    kube.client.create(CLUSTER_SERVING_RUNTIMES, runtime(name, image="cluster:1") | {
        "kind": "ClusterServingRuntime"})
    try:
        kube.client.patch(AGENTS, "lost", {"spec": {"runtime": name}}, ns)
        d = eventually(lambda: get(kube, DEPLOYMENTS, "lost", ns))
        assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "cluster:1"
        assert condition(eventually(lambda: (a := kube.client.get(AGENTS, "lost", ns)) and condition(
            a, "RuntimeResolved").get("status") == "True" and a), "RuntimeResolved")["message"] == \
            f"ClusterServingRuntime {name}"
        kube.client.create(SERVING_RUNTIMES, runtime(name, image="local:1"), ns)  # the namespace's wins
        eventually(lambda: kube.client.get(DEPLOYMENTS, "lost", ns)["spec"]["template"]["spec"]["containers"][0][
            "image"] == "local:1")
    finally:
        kube.client.delete(CLUSTER_SERVING_RUNTIMES, name)


def test_drift_is_corrected_and_nothing_is_written_without_a_change(cluster, ns):
    kube, controller = cluster, cluster.operator.controller
    kube.client.create(SERVING_RUNTIMES, runtime("py"), ns)
    kube.client.create(AGENTS, agent("d", "py"), ns)
    eventually(lambda: get(kube, DEPLOYMENTS, "d", ns) and (kube.client.get(AGENTS, "d", ns).get("status")))
    time.sleep(0.3)
    versions = {ref: kube.client.get(ref, name, ns)["metadata"]["resourceVersion"]
                for ref, name in ((DEPLOYMENTS, "d"), (SERVICES, "d"), (CONFIGMAPS, "d-config"))}
    writes = controller.writes
    before = controller.reconciles
    kube.run(_enqueue(controller, f"{ns}/d"))
    eventually(lambda: controller.reconciles > before)
    time.sleep(0.2)
    assert {ref: kube.client.get(ref, name, ns)["metadata"]["resourceVersion"]
            for ref, name in ((DEPLOYMENTS, "d"), (SERVICES, "d"), (CONFIGMAPS, "d-config"))} == versions
    assert controller.writes == writes
    # a field someone else owns is theirs; a field the operator owns is restored
    kube.client.patch(DEPLOYMENTS, "d", {"metadata": {"labels": {"team": "x"}}}, ns)
    kube.client.patch(DEPLOYMENTS, "d", {"spec": {"template": {"spec": {"containers": [
        {"name": "agent", "image": "hand-edited"}]}}}}, ns, patch_type="application/strategic-merge-patch+json")
    eventually(lambda: kube.client.get(DEPLOYMENTS, "d", ns)["spec"]["template"]["spec"]["containers"][0][
        "image"] == "agents:1")
    assert kube.client.get(DEPLOYMENTS, "d", ns)["metadata"]["labels"]["team"] == "x"
    uid = kube.client.get(SERVICES, "d", ns)["metadata"]["uid"]
    kube.client.delete(SERVICES, "d", ns)
    eventually(lambda: (s := get(kube, SERVICES, "d", ns)) and s["metadata"]["uid"] != uid)


async def _enqueue(controller, key: str) -> None:
    controller.queue.add(key)


def test_status_follows_the_rollout_and_scale(cluster, ns):
    kube = cluster
    kube.client.create(SERVING_RUNTIMES, runtime("py"), ns)
    kube.client.create(AGENTS, agent("r", "py", replicas=2), ns)
    a = eventually(lambda: (a := kube.client.get(AGENTS, "r", ns)).get("status") and a)
    assert condition(a, "Ready")["status"] == "False"
    with StandInKubelet(kube, ns):
        a = eventually(lambda: (a := kube.client.get(AGENTS, "r", ns)) and condition(a, "Ready").get(
            "status") == "True" and a)
        assert (condition(a, "Ready")["reason"], condition(a, "Ready")["message"]) == ("Available",
                                                                                      "2/2 replicas ready")
        assert (condition(a, "Progressing")["status"], condition(a, "Progressing")["reason"]) == (
            "False", "RolloutComplete")
        assert a["status"]["readyReplicas"] == a["status"]["replicas"] == 2
        kube.client.patch(AGENTS, "r", {"spec": {"replicas": 3}}, ns, subresource="scale")
        eventually(lambda: kube.client.get(DEPLOYMENTS, "r", ns)["spec"]["replicas"] == 3)
        eventually(lambda: (kube.client.get(AGENTS, "r", ns)["status"].get("readyReplicas") == 3))


def test_load_balancer_address_becomes_the_external_endpoint(cluster, ns):
    kube = cluster
    kube.client.create(AGENTS, agent("lb", "none", service={"type": "LoadBalancer", "port": 8000}), ns)
    eventually(lambda: get(kube, SERVICES, "lb", ns))
    kube.client.patch(SERVICES, "lb", {"status": {"loadBalancer": {"ingress": [{"ip": "127.0.2.1"}]}}}, ns,
                      subresource="status")  # what a cloud controller manager does
    eventually(lambda: kube.client.get(AGENTS, "lb", ns).get("status", {}).get("endpoint", {}).get(
        "externalURL") == "http://127.0.2.1:8000")


def test_a_runtime_change_reaches_its_agents_through_the_index(cluster, ns):
    kube, controller = cluster, cluster.operator.controller
    for name in ("a", "b"):
        kube.client.create(SERVING_RUNTIMES, runtime(name), ns)
        for i in range(3):
            kube.client.create(AGENTS, agent(f"{name}{i}", name), ns)
    eventually(lambda: all(get(kube, DEPLOYMENTS, f"{n}{i}", ns) for n in "ab" for i in range(3)))
    assert controller.agents.index_keys(BY_RUNTIME, f"{ns}/a") == [f"{ns}/a0", f"{ns}/a1", f"{ns}/a2"]
    untouched = {i: kube.client.get(DEPLOYMENTS, f"b{i}", ns)["metadata"]["generation"] for i in range(3)}
    kube.client.patch(SERVING_RUNTIMES, "a", {"spec": {"image": "agents:2"}}, ns)
    eventually(lambda: all(kube.client.get(DEPLOYMENTS, f"a{i}", ns)["spec"]["template"]["spec"]["containers"][0][
        "image"] == "agents:2" for i in range(3)))
    assert all(kube.client.get(DEPLOYMENTS, f"b{i}", ns)["spec"]["template"]["spec"]["containers"][0]["image"]
               == "agents:1" for i in range(3))
    assert {i: kube.client.get(DEPLOYMENTS, f"b{i}", ns)["metadata"]["generation"] for i in range(3)} == \
        untouched


def test_deleting_the_agent_deletes_its_children(cluster, ns):
    kube = cluster
    kube.client.create(SERVING_RUNTIMES, runtime("py"), ns)
    kube.client.create(AGENTS, agent("gone", "py"), ns)
    eventually(lambda: get(kube, DEPLOYMENTS, "gone", ns))
    kube.client.delete(AGENTS, "gone", ns)
    eventually(lambda: not any(get(kube, ref, name, ns) for ref, name in
                               ((DEPLOYMENTS, "gone"), (SERVICES, "gone"), (CONFIGMAPS, "gone-config"))))


def test_schema_defaults_and_validation_rules(cluster, ns):
    kube = cluster
    created = kube.client.create(AGENTS, agent("v", "py"), ns)
    assert created["spec"]["service"] == {"type": "ClusterIP", "port": 80}
    bad = [({"replicas": -1}, "replicas must be at least 0"),
           ({"service": {"port": 70000}}, "port must be between 1 and 65535"),
           ({"service": {"type": "ClusterIP", "nodePort": 30001}}, "nodePort requires type NodePort or LoadBalancer"),
           ({"config": {"bad key": "x"}}, "config keys must consist of"),
           ({"service": {"type": "External"}}, "Unsupported value")]
    for spec, message in bad:
        with pytest.raises(ApiError) as failure:
            kube.client.create(AGENTS, agent(f"bad-{uuid.uuid4().hex[:6]}", "py", **spec), ns)
        assert failure.value.status == 422 and message in failure.value.body["message"], failure.value.body
    rt = kube.client.create(SERVING_RUNTIMES, runtime("defaults"), ns)
    assert (rt["spec"]["port"], rt["spec"]["replicas"]) == (8080, 1)
    with pytest.raises(ApiError):
        kube.client.create(SERVING_RUNTIMES, runtime("badport", port=0), ns)


def test_printer_columns_and_categories(cluster, ns):
    kube = cluster
    kube.client.create(SERVING_RUNTIMES, runtime("py"), ns)
    kube.client.create(AGENTS, agent("p", "py"), ns)
    eventually(lambda: kube.client.get(AGENTS, "p", ns).get("status"))
    table = kubectl(kube, "-n", ns, "get", "ag").stdout.splitlines()
    assert table[0].split() == ["NAME", "RUNTIME", "READY", "ENDPOINT", "AGE"]
    assert table[1].split()[:4] == ["p", "py", "False", f"http://p.{ns}.svc.cluster.local:80"]
    assert "agent.mini-kube.dev/p" in kubectl(kube, "-n", ns, "get", "all", "-o", "name").stdout
    assert "servingruntime.mini-kube.dev/py" in kubectl(kube, "-n", ns, "get", "mini-kube", "-o", "name").stdout


def test_render_is_applied_compares_intent():
    a = {"apiVersion": API_VERSION, "kind": "Agent", "metadata": {"name": "x", "namespace": "n", "uid": "u"},
         "spec": {"runtime": "r", "service": {"port": 80}}}
    desired = render.service(a)
    live = {**desired, "metadata": {**desired["metadata"], "resourceVersion": "5"},
            "spec": {**desired["spec"], "clusterIP": "10.0.0.9", "ports": [{**desired["spec"]["ports"][0],
                                                                          "nodePort": None}]}}
    assert render.is_applied(desired, live)
    changed = render.service({**a, "spec": {**a["spec"], "service": {"port": 81}}})
    assert not render.is_applied(changed, live)
    assert not render.is_applied(desired, None)


def test_only_the_leader_acts(cluster, ns):
    kube = cluster
    lease_ns = ns

    async def start_two() -> list[Operator]:
        ops = [Operator(ApiClient.from_kubeconfig(kube.kubeconfig), leader_elect=True, lease_namespace=lease_ns,
                        lease_duration=2, renew_deadline=1.5, retry_period=0.2) for _ in range(2)]
        for op in ops:
            op.identity = op.manager.elector.identity = f"op-{id(op)}"
            await op.start()
        return ops

    ops = kube.run(start_two())
    try:
        eventually(lambda: sum(op.manager.elector.leading.is_set() for op in ops) == 1)
        time.sleep(0.6)
        assert sum(op.manager.elector.leading.is_set() for op in ops) == 1
        leader = next(op for op in ops if op.manager.elector.leading.is_set())
        lease = kube.client.get(ResourceRef("coordination.k8s.io", "v1", "leases"), "agent-operator", lease_ns)
        assert lease["spec"]["holderIdentity"] == leader.identity
        kube.run(leader.stop())
        other = next(op for op in ops if op is not leader)
        eventually(lambda: other.manager.elector.leading.is_set(), timeout=10)
    finally:
        for op in ops:
            with contextlib.suppress(Exception):
                kube.run(op.stop())


@pytest.fixture
def bare_cluster():
    """The module's cluster less its always-acting operator: a test's own operator is the only writer."""
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="garbagecollector") as kube:
        install_crds(kube)
        yield kube


def test_a_leader_that_steps_down_stops_acting_before_it_gives_the_lease_up(bare_cluster):
    """The Lease is released only once the controllers have stopped: no write of the old leader lands after the
    release, when a successor may already act (the operator's own objects all have older resourceVersions)."""
    kube, ns = bare_cluster, "default"
    kube.client.create(SERVING_RUNTIMES, runtime("rt"), ns)
    op = Operator(ApiClient.from_kubeconfig(kube.kubeconfig), leader_elect=True, lease_namespace=ns,
                  lease_duration=2, renew_deadline=1.5, retry_period=0.2)
    kube.run(op.start())
    try:
        eventually(lambda: op.manager.elector.leading.is_set() and op.status()["synced"])
        for i in range(40):  # work still queued or under way when the leader is told to stop
            kube.client.create(AGENTS, agent(f"a{i}", "rt"), ns)
        eventually(lambda: op.controller.reconciles > 0, interval=0.001)
    finally:
        kube.run(op.stop())
    lease = kube.client.get(ResourceRef("coordination.k8s.io", "v1", "leases"), "agent-operator", ns)
    assert lease["spec"]["holderIdentity"] == ""
    released = int(lease["metadata"]["resourceVersion"])
    written = [(ref.plural, o["metadata"]["name"], int(o["metadata"]["resourceVersion"]))
               for ref in (CONFIGMAPS, SERVICES, AGENTS) for o in kube.client.list(ref, ns)["items"]
               if ref is not CONFIGMAPS or o["metadata"]["name"] != "kube-root-ca.crt"]
    assert written and [w for w in written if w[2] > released] == []


def test_agent_server_answers_with_its_config(tmp_path):
    import json
    import os
    import socket
    import subprocess
    import sys
    import urllib.request

    (tmp_path / "greeting").write_text("hello")
    (tmp_path / "..data").mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "AGENT_NAME": "a", "AGENT_NAMESPACE": "n", "AGENT_CONFIG_DIR": str(tmp_path), "PORT": str(port)}
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.agent_operator.server", "--host", "127.0.0.1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert b"listening" in proc.stdout.readline()
        body = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read())
        assert body["agent"] == "a" and body["namespace"] == "n" and body["config"] == {"greeting": "hello"}
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read() == b"ok"
        from mini_kube.agent_operator.server import read_config

        assert read_config({"AGENT_CONFIG_DIR": str(tmp_path / "none"), "AGENT_CONFIG_k": "v"}) == {"k": "v"}
        (tmp_path / "empty").mkdir()
        assert read_config({"AGENT_CONFIG_DIR": str(tmp_path / "empty"), "AGENT_CONFIG_k": "v"}) == {}
    finally:
        proc.terminate()
        assert proc.wait(5) == 0


def test_operator_status_endpoint(cluster):
    import json
    import urllib.request

    port = cluster.run(cluster.operator.serve_status("127.0.0.1", 0))
    status = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5).read())
    assert status["leader"] is True and status["synced"] is True and status["reconciles"] > 0
    assert urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5).read() == b"ok"
    cluster.run(cluster.operator._runner.cleanup())
    cluster.operator._runner = None


def test_a_child_that_cannot_be_applied_does_not_hold_back_the_others(cluster, ns):
    kube = cluster
    kube.client.create(SERVING_RUNTIMES, runtime("py"), ns)
    port = 30000 + int(uuid.uuid4().int % 2000)
    kube.client.create(AGENTS, agent("first", "py", service={"type": "NodePort", "nodePort": port}), ns)
    eventually(lambda: get(kube, SERVICES, "first", ns))
    kube.client.create(AGENTS, agent("second", "py", service={"type": "NodePort", "nodePort": port}), ns)
    a = eventually(lambda: (a := kube.client.get(AGENTS, "second", ns)) and condition(a, "Ready").get(
        "reason") == "ApplyFailed" and a)
    assert "provided port is already allocated" in condition(a, "Ready")["message"]
    assert get(kube, DEPLOYMENTS, "second", ns) is not None and get(kube, SERVICES, "second", ns) is None
    eventually(lambda: any(e["reason"] == "FailedApply" and e["involvedObject"]["name"] == "second" for e in
                           kube.client.list(ResourceRef("", "v1", "events"), ns)["items"]))
    kube.client.patch(AGENTS, "second", {"spec": {"service": {"nodePort": None}}}, ns)  # recovers
    eventually(lambda: get(kube, SERVICES, "second", ns))
