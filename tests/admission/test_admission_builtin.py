"""Built-in admission: ServiceAccount defaulting and checks, and the chain on delete and dry run."""

from __future__ import annotations

import json

import pytest
from mini_kube.client import ApiError
from mini_kube.machinery.refs import CONFIGMAPS, PODS, SERVICEACCOUNTS

from mini_kube.testing import MiniKube
from tests.admission.hooks import VALIDATING, allow, client_config, configuration, webhook
from tests.helpers import kubectl

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def pod(name: str, **spec: object) -> dict:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def test_pods_get_the_default_service_account_and_its_token(mini_kube):
    kubectl(mini_kube, "run", "first", "--image=nginx")
    first = mini_kube.client.get(PODS, "first", "default")["spec"]
    assert first["serviceAccountName"] == first["serviceAccount"] == "default"
    assert "volumes" not in first  # no `default` account yet (no token controller): nothing to mount
    mini_kube.client.create(SERVICEACCOUNTS, {"metadata": {"name": "default"}, "imagePullSecrets": [{"name": "reg"}]},
                            "default")
    kubectl(mini_kube, "run", "second", "--image=nginx")
    spec = mini_kube.client.get(PODS, "second", "default")["spec"]
    volume = spec["volumes"][0]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == len("kube-api-access-") + 5
    sources = volume["projected"]["sources"]
    assert sources[0] == {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
    assert sources[1]["configMap"]["name"] == "kube-root-ca.crt"
    assert sources[2]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"] == "metadata.namespace"
    assert volume["projected"]["defaultMode"] == 420
    assert spec["containers"][0]["volumeMounts"] == [{"name": volume["name"], "readOnly": True, "mountPath": MOUNT}]
    assert spec["imagePullSecrets"] == [{"name": "reg"}]


def test_automount_can_be_turned_off_by_account_or_pod(mini_kube):
    mini_kube.client.create(SERVICEACCOUNTS, {"metadata": {"name": "quiet"}, "automountServiceAccountToken": False},
                            "default")
    mini_kube.client.create(SERVICEACCOUNTS, {"metadata": {"name": "default"}}, "default")
    quiet = mini_kube.client.create(PODS, pod("q", serviceAccountName="quiet"), "default")["spec"]
    assert quiet["serviceAccountName"] == "quiet" and "volumes" not in quiet
    off = mini_kube.client.create(PODS, pod("o", automountServiceAccountToken=False), "default")["spec"]
    assert "volumes" not in off
    legacy = mini_kube.client.create(PODS, pod("l", serviceAccount="quiet"), "default")["spec"]
    assert legacy["serviceAccountName"] == "quiet"


def test_a_missing_service_account_is_refused_like_upstream(mini_kube):
    out = kubectl(mini_kube, "run", "p", "--image=nginx", "--overrides",
                  json.dumps({"spec": {"serviceAccountName": "robot"}}), check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == ('Error from server (Forbidden): pods "p" is forbidden: error looking up service '
                                  'account default/robot: serviceaccount "robot" not found')
    with pytest.raises(ApiError) as info:
        mini_kube.client.get(PODS, "p", "default")
    assert info.value.status == 404


def test_the_default_account_can_be_required():
    with MiniKube(controllers=False, require_default_service_account=True) as kube:
        with pytest.raises(ApiError) as info:
            kube.client.create(PODS, pod("p"), "default")
        assert info.value.status == 403
        assert info.value.body["message"] == ('pods "p" is forbidden: error looking up service account '
                                              'default/default: serviceaccount "default" not found')


def test_delete_and_dry_run_go_through_admission(mini_kube, webhook_server):
    path = webhook_server.handle("builtin-record", allow)
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "kept"}}, "default")
    mini_kube.client.create(VALIDATING, configuration("ValidatingWebhookConfiguration", "rec", webhook(
        "rec.example.com", client_config(webhook_server, path), operations=("DELETE",))))
    kubectl(mini_kube, "delete", "configmap", "kept", "--dry-run=server")
    assert mini_kube.client.get(CONFIGMAPS, "kept", "default")["metadata"]["name"] == "kept"
    request = webhook_server.reviews[path][-1]["request"]
    assert request["operation"] == "DELETE" and request["dryRun"] is True
    assert request["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]}
