"""kubectl-lite's other commands against real kubectl on the same server: writes, describe, explain, config,
wait, rollout, discovery and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from mini_kube.client import ResourceRef

from tests.helpers import kubectl_binary


def _cm(name: str, **labels: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels},
                       "data": {"k": "v"}})


@pytest.mark.slow
def test_apply_create_and_delete_messages_match_kubectl(pair, tmp_path: Path):
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "a.yaml").write_text(_cm("lite-a", app="x"))
    (folder / "b.yaml").write_text(_cm("lite-b", app="x"))
    (folder / "ignored.txt").write_text("not a manifest")
    applied = pair.lite("apply", "-f", str(folder))
    assert applied.stdout == "configmap/lite-a serverside-applied\nconfigmap/lite-b serverside-applied\n"
    real = pair.kubectl("apply", "--server-side", "-f", str(folder))
    assert real.stdout == applied.stdout  # the same objects again: kubectl says the same
    dry = pair.lite("apply", "-f", "-", "--dry-run=server", input=_cm("lite-dry"))
    assert dry.stdout == "configmap/lite-dry serverside-applied (server dry run)\n"
    assert pair.lite("get", "cm", "lite-dry").returncode == 1
    created = pair.lite("create", "-f", "-", input=_cm("lite-c"))
    assert created.stdout == "configmap/lite-c created\n"
    again = pair.lite("create", "-f", "-", input=_cm("lite-c"))
    assert (again.returncode, again.stderr) == (1, pair.kubectl("create", "-f", "-", input=_cm("lite-c")).stderr)
    deleted = pair.lite("delete", "cm", "-l", "app=x")
    assert deleted.stdout == 'configmap "lite-a" deleted\nconfigmap "lite-b" deleted\n'
    both = pair.lite("delete", "cm", "lite-c", "lite-missing")
    assert (both.returncode, both.stdout) == (1, 'configmap "lite-c" deleted\n')
    assert both.stderr == pair.kubectl("delete", "cm", "lite-missing").stderr
    pair.same("delete", "cm", "lite-missing", "--ignore-not-found")


def test_prune_deletes_what_the_files_no_longer_have(pair):
    both = _cm("keep", set="p") + "\n---\n" + _cm("drop", set="p")
    assert pair.lite("apply", "-f", "-", input=both).returncode == 0
    pruned = pair.lite("apply", "-f", "-", "--prune", "-l", "set=p", input=_cm("keep", set="p"))
    assert pruned.stdout == "configmap/keep serverside-applied\nconfigmap/drop pruned\n"


@pytest.mark.slow
def test_patch_label_annotate_scale_match_kubectl(pair):
    for name in ("one", "two"):
        assert pair.kubectl("create", "configmap", name, "--from-literal=a=b").returncode == 0
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                       "template": {"metadata": {"labels": {"a": "b"}},
                                    "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    assert pair.kubectl("create", "-f", "-", input=json.dumps(deploy)).returncode == 0
    for tool, name in ((pair.lite, "one"), (pair.kubectl, "two")):
        assert tool("patch", "cm", name, "-p", '{"data":{"x":"y"}}').stdout == f"configmap/{name} patched\n"
        assert tool("patch", "cm", name, "--type", "merge", "-p", '{"data":{"x":"y"}}').stdout == (
            f"configmap/{name} patched (no change)\n")
        assert tool("label", "cm", name, "tier=web").stdout == f"configmap/{name} labeled\n"
        assert tool("annotate", "cm", name, "note=hi").stdout == f"configmap/{name} annotated\n"
        assert tool("label", "cm", name, "tier-").stdout == f"configmap/{name} unlabeled\n"
    refused = pair.lite("label", "cm", "one", "note=1", "note2=2")
    assert refused.returncode == 0
    clash = pair.lite("label", "cm", "one", "note=other")
    assert clash.returncode == 1 and "--overwrite is false" in clash.stderr
    assert pair.lite("scale", "deploy", "d", "--replicas=3").stdout == "deployment.apps/d scaled\n"
    assert json.loads(pair.kubectl("get", "deploy", "d", "-o", "json").stdout)["spec"]["replicas"] == 3
    one = json.loads(pair.kubectl("get", "cm", "one", "-o", "json").stdout)
    assert one["data"]["x"] == "y" and one["metadata"]["annotations"]["note"] == "hi"


@pytest.mark.slow
def test_describe_and_explain_match_kubectl(pair):
    # one key: kubectl prints a ConfigMap's data in Go's random map order
    assert pair.kubectl("create", "configmap", "d1", "--from-literal=a=b").returncode == 0
    assert pair.kubectl("label", "cm", "d1", "k=v").returncode == 0
    pair.same("describe", "cm", "d1")
    pair.same("describe", "ns", pair.namespace, namespaced=False)
    pair.same("explain", "configmap", namespaced=False)
    pair.same("explain", "deployment", namespaced=False)
    pair.same("explain", "deployment.spec.replicas", namespaced=False)
    pair.same("explain", "deployment.spec.template", namespaced=False)


@pytest.mark.slow
def test_discovery_commands_match_kubectl(pair):
    pair.same("api-resources", namespaced=False)
    pair.same("api-resources", "--namespaced=false", namespaced=False)
    pair.same("api-resources", "-o", "name", namespaced=False)
    pair.same("api-versions", namespaced=False)
    pair.same("auth", "can-i", "create", "configmaps")
    pair.same("auth", "can-i", "get", "/healthz", namespaced=False)
    assert pair.lite("version").stdout.splitlines()[1].startswith("Server Version: v1.")


@pytest.mark.slow
def test_config_commands_merge_kubeconfig_files_like_kubectl(pair, tmp_path: Path):
    base = yaml.safe_load(Path(pair.kubeconfig).read_text())
    extra = {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "other", "cluster": {"server": "http://127.0.0.1:1"}}],
             "users": [{"name": "other", "user": {"token": "secret-token"}}],
             "contexts": [{"name": "other", "context": {"cluster": "other", "user": "other", "namespace": "x"}}],
             "current-context": "other"}
    first, second = tmp_path / "first", tmp_path / "second"
    first.write_text(yaml.safe_dump(base))
    second.write_text(yaml.safe_dump(extra))
    env = {"KUBECONFIG": f"{first}:{second}"}

    def run(tool: list[str], *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*tool, *args], capture_output=True, text=True,
                              env={**os.environ, **env, "KUBECTL_LITE_CACHE_DIR": str(pair.cache)})

    lite, real = [sys.executable, "-m", "mini_kube.kubectl_lite.cli"], [kubectl_binary()]
    for args in (("config", "get-contexts"), ("config", "current-context"), ("config", "view")):
        assert run(lite, *args).stdout == run(real, *args).stdout, args
    assert run(lite, "config", "use-context", "other").stdout == 'Switched to context "other".\n'
    assert yaml.safe_load(first.read_text())["current-context"] == "other"
    assert run(real, "config", "current-context").stdout == "other\n"
    refused = run(lite, "get", "cm")
    assert refused.returncode == 1 and "refused" in refused.stderr


def test_wait_for_condition_jsonpath_and_delete(pair):
    assert pair.kubectl("create", "configmap", "w1", "--from-literal=phase=ready").returncode == 0
    met = pair.lite("wait", "cm/w1", "--for=jsonpath={.data.phase}=ready", "--timeout=5s")
    assert met.stdout == "configmap/w1 condition met\n"
    late = pair.lite("wait", "cm/w1", "--for=jsonpath={.data.phase}=other", "--timeout=300ms")
    assert (late.returncode, late.stderr) == (1, "error: timed out waiting for the condition on configmaps/w1\n")
    assert pair.kubectl("delete", "cm", "w1", "--wait=false").returncode == 0
    assert pair.lite("wait", "cm/w1", "--for=delete", "--timeout=5s").returncode == 0


@pytest.mark.slow
def test_rollout_pause_resume_restart_and_status(pair, mini_kube_session):
    deploy = textwrap.dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: r}
        spec:
          replicas: 1
          selector: {matchLabels: {a: r}}
          template: {metadata: {labels: {a: r}}, spec: {containers: [{name: c, image: i}]}}
    """)
    assert pair.kubectl("apply", "-f", "-", input=deploy).returncode == 0
    assert pair.lite("rollout", "pause", "deploy/r").stdout == "deployment.apps/r paused\n"
    assert pair.lite("rollout", "resume", "deploy/r").stdout == "deployment.apps/r resumed\n"
    assert pair.lite("rollout", "restart", "deploy/r").stdout == "deployment.apps/r restarted\n"
    current = json.loads(pair.kubectl("get", "deploy", "r", "-o", "json").stdout)
    assert "kubectl.kubernetes.io/restartedAt" in current["spec"]["template"]["metadata"]["annotations"]
    status = {"observedGeneration": current["metadata"]["generation"], "replicas": 1, "updatedReplicas": 1,
              "readyReplicas": 1, "availableReplicas": 1}
    deployments = ResourceRef("apps", "v1", "deployments")
    mini_kube_session.client.patch(deployments, "r", {"status": status}, pair.namespace, subresource="status")
    done = pair.lite("rollout", "status", "deploy/r", "--timeout=10s")
    assert done.stdout.splitlines()[-1] == 'deployment "r" successfully rolled out'
