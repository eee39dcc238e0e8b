"""A running Pod's ConfigMap, Secret, downward API and projected volumes follow their sources, as the kubelet's
periodic sync keeps them (here every second): updates, keys removed, optional objects created and deleted, the
Pod's labels and annotations; each written atomically (upstream's `..data` layout). The projected
service-account token is not asked for again at each sync."""

from __future__ import annotations

import base64

import pytest
from mini_kube.machinery.refs import CONFIGMAPS, PODS, SECRETS

from tests.helpers import kubectl

from .conftest import eventually, pod, process_cluster_or_skip, status_of


@pytest.fixture(scope="module")
def kube():
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=1, node_runtime="process", node_options={"sync_frequency": 1.0}) as cluster:
        yield cluster



def _cat(kube, ns: str, path: str) -> str:
    result = kubectl(kube, "-n", ns, "exec", "p", "--", "sh", "-c", f"cat {path} 2>/dev/null || echo missing")
    return result.stdout


def _running_pod(kube, ns: str, volumes: list[dict], mounts: list[dict], labels: dict | None = None) -> None:
    spec = pod("p", {"name": "main", "image": "busybox", "command": ["sleep", "600"], "volumeMounts": mounts},
               volumes=volumes)
    spec["metadata"]["labels"] = labels or {}
    kube.client.create(PODS, spec, ns)
    eventually(lambda: status_of(kube, ns, "p").get("phase") == "Running", timeout=30)


def test_configmap_and_secret_updates_reach_the_files(kube, ns):
    kube.client.create(CONFIGMAPS, {"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}}, ns)
    kube.client.create(SECRETS, {"metadata": {"name": "sec"}, "data": {"s": base64.b64encode(b"x").decode()}}, ns)
    _running_pod(kube, ns, [{"name": "cfg", "configMap": {"name": "cfg"}},
                            {"name": "sec", "secret": {"secretName": "sec"}}],
                 [{"name": "cfg", "mountPath": "/cfg"}, {"name": "sec", "mountPath": "/sec"}])
    assert _cat(kube, ns, "/cfg/a") == "1"
    listing = kubectl(kube, "-n", ns, "exec", "p", "--", "ls", "-a", "/cfg").stdout.split()
    assert {"..data", "a", "b"} <= set(listing) and any(n.startswith("..20") for n in listing)
    kubectl(kube, "-n", ns, "patch", "configmap", "cfg", "--type=json",
            "-p", '[{"op": "replace", "path": "/data/a", "value": "changed"}, {"op": "remove", "path": "/data/b"}]')
    kubectl(kube, "-n", ns, "patch", "secret", "sec", "-p", '{"stringData": {"s": "y"}}')
    eventually(lambda: _cat(kube, ns, "/cfg/a") == "changed", timeout=15)
    assert _cat(kube, ns, "/cfg/b") == "missing\n"
    eventually(lambda: _cat(kube, ns, "/sec/s") == "y", timeout=15)


def test_optional_sources_come_and_go(kube, ns):
    _running_pod(kube, ns, [{"name": "opt", "projected": {"sources": [
        {"configMap": {"name": "later", "optional": True}}, {"secret": {"name": "later-s", "optional": True}}]}}],
        [{"name": "opt", "mountPath": "/opt"}])
    assert _cat(kube, ns, "/opt/k") == "missing\n"
    kube.client.create(CONFIGMAPS, {"metadata": {"name": "later"}, "data": {"k": "v"}}, ns)
    eventually(lambda: _cat(kube, ns, "/opt/k") == "v", timeout=15)
    kubectl(kube, "-n", ns, "delete", "configmap", "later")
    eventually(lambda: _cat(kube, ns, "/opt/k") == "missing\n", timeout=15)


def test_labels_and_annotations_reach_downward_api_files(kube, ns):
    items = [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
             {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}}]
    _running_pod(kube, ns, [{"name": "info", "downwardAPI": {"items": items}}],
                 [{"name": "info", "mountPath": "/info"}], labels={"k": "v1"})
    assert _cat(kube, ns, "/info/labels") == 'k="v1"'
    token = _cat(kube, ns, "/var/run/secrets/kubernetes.io/serviceaccount/token")
    kubectl(kube, "-n", ns, "label", "pod", "p", "k=v2", "--overwrite")
    kubectl(kube, "-n", ns, "annotate", "pod", "p", "note=hi")
    eventually(lambda: _cat(kube, ns, "/info/labels") == 'k="v2"', timeout=15)
    eventually(lambda: 'note="hi"' in _cat(kube, ns, "/info/annotations"), timeout=15)
    assert _cat(kube, ns, "/var/run/secrets/kubernetes.io/serviceaccount/token") == token  # synced, not renewed
