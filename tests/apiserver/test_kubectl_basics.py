"""Everyday kubectl commands against a real mini-kube server, checked by kubectl's own output."""

from __future__ import annotations

import json
import subprocess
import time

from tests.helpers import kubectl, kubectl_binary


def test_version_and_cluster_info(mini_kube_session):
    out = kubectl(mini_kube_session, "version", "-o", "json").stdout
    assert json.loads(out)["serverVersion"]["major"] == "1"
    info = kubectl(mini_kube_session, "cluster-info").stdout
    assert mini_kube_session.url in info


def test_system_namespaces_exist(mini_kube_session):
    out = kubectl(mini_kube_session, "get", "ns", "-o", "name").stdout.split()
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert f"namespace/{name}" in out


def test_api_resources_and_versions(mini_kube_session):
    out = kubectl(mini_kube_session, "api-resources").stdout
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "deploy" in lines["deployments"] and "apps/v1" in lines["deployments"]
    assert "cm" in lines["configmaps"]
    versions = kubectl(mini_kube_session, "api-versions").stdout.split()
    assert "v1" in versions and "apps/v1" in versions and "rbac.authorization.k8s.io/v1" in versions


def test_create_get_label_annotate_patch_delete_configmap(mini_kube_session, kube_namespace):
    ns = ["-n", kube_namespace]
    assert kubectl(mini_kube_session, "create", "configmap", "c1", "--from-literal=a=b", *ns).stdout.strip() \
        == "configmap/c1 created"
    got = json.loads(kubectl(mini_kube_session, "get", "cm", "c1", "-o", "json", *ns).stdout)
    assert got["data"] == {"a": "b"} and got["metadata"]["resourceVersion"]
    assert kubectl(mini_kube_session, "label", "cm", "c1", "k=v", *ns).stdout.strip() == "configmap/c1 labeled"
    assert kubectl(mini_kube_session, "annotate", "cm", "c1", "note=hi", *ns).stdout.strip() \
        == "configmap/c1 annotated"
    assert kubectl(mini_kube_session, "patch", "cm", "c1", "-p", '{"data":{"x":"y"}}', *ns).stdout.strip() \
        == "configmap/c1 patched"
    got = json.loads(kubectl(mini_kube_session, "get", "cm", "c1", "-o", "json", *ns).stdout)
    assert got["data"] == {"a": "b", "x": "y"}
    assert got["metadata"]["labels"] == {"k": "v"}
    assert got["metadata"]["annotations"] == {"note": "hi"}
    selected = kubectl(mini_kube_session, "get", "cm", "-l", "k in (v,w)", "-o", "name", *ns).stdout.split()
    assert selected == ["configmap/c1"]
    assert kubectl(mini_kube_session, "get", "cm", "-l", "k!=v", "-o", "name", *ns).stdout.split() == []
    by_field = kubectl(mini_kube_session, "get", "cm", "--field-selector", "metadata.name=c1", "-o", "name",
                       *ns).stdout.split()
    assert by_field == ["configmap/c1"]
    assert kubectl(mini_kube_session, "delete", "cm", "c1", *ns).stdout.strip() == 'configmap "c1" deleted'
    missing = kubectl(mini_kube_session, "get", "cm", "c1", *ns, check=False)
    assert missing.returncode == 1
    assert 'configmaps "c1" not found' in missing.stderr


def test_replace_with_stale_resource_version_conflicts(mini_kube_session, kube_namespace):
    ns = ["-n", kube_namespace]
    kubectl(mini_kube_session, "create", "configmap", "r1", "--from-literal=a=1", *ns)
    obj = json.loads(kubectl(mini_kube_session, "get", "cm", "r1", "-o", "json", *ns).stdout)
    obj["data"] = {"a": "2"}
    kubectl(mini_kube_session, "replace", "-f", "-", input=json.dumps(obj))
    obj["data"] = {"a": "3"}
    stale = kubectl(mini_kube_session, "replace", "-f", "-", input=json.dumps(obj), check=False)
    assert stale.returncode == 1
    assert "the object has been modified; please apply your changes to the latest version" in stale.stderr


def test_chunked_list_returns_everything(mini_kube_session, kube_namespace):
    for i in range(7):
        kubectl(mini_kube_session, "create", "configmap", f"chunk-{i}", "-n", kube_namespace)
    out = kubectl(mini_kube_session, "get", "cm", "-n", kube_namespace, "--chunk-size=2", "-o", "name").stdout
    names = sorted(line for line in out.split() if "chunk-" in line)
    assert names == [f"configmap/chunk-{i}" for i in range(7)]


def test_get_watch_sees_changes(mini_kube_session, kube_namespace):
    command = [kubectl_binary(), "--kubeconfig", mini_kube_session.kubeconfig, "get", "cm", "-n", kube_namespace,
               "-w", "-o", "name", "--request-timeout=10s"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        time.sleep(0.5)
        kubectl(mini_kube_session, "create", "configmap", "watched", "-n", kube_namespace)
        line = proc.stdout.readline().strip()
        proc.terminate()
    assert line == "configmap/watched"


def test_get_raw_and_namespace_errors(mini_kube_session):
    raw = json.loads(kubectl(mini_kube_session, "get", "--raw", "/api/v1/namespaces/default").stdout)
    assert raw["kind"] == "Namespace" and raw["status"]["phase"] == "Active"
    missing_ns = kubectl(mini_kube_session, "create", "configmap", "x", "-n", "no-such-ns", check=False)
    assert missing_ns.returncode == 1
    assert 'namespaces "no-such-ns" not found' in missing_ns.stderr


def test_delete_namespace_removes_its_content(mini_kube_session):
    kubectl(mini_kube_session, "create", "namespace", "doomed")
    kubectl(mini_kube_session, "create", "configmap", "inside", "-n", "doomed")
    out = kubectl(mini_kube_session, "delete", "namespace", "doomed", "--timeout=20s").stdout
    assert out.strip() == 'namespace "doomed" deleted'
    gone = kubectl(mini_kube_session, "get", "namespace", "doomed", check=False)
    assert gone.returncode == 1 and 'namespaces "doomed" not found' in gone.stderr
