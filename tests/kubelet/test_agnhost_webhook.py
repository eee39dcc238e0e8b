"""agnhost's `webhook` and `crd-conversion-webhook` answers, as upstream's handlers give them (no cluster: the
functions that turn a posted review into the answer, and the HTTPS server itself on a local port)."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
import urllib.request

from mini_kube.kubelet.agnhost import crd_conversion_webhook, webhook

from tests.admission.hooks import make_ca, make_serving_cert

from .conftest import eventually


def review(path_handler, request: dict, version: str = "admission.k8s.io/v1") -> dict:
    status, text = webhook.review_answer(json.dumps({"apiVersion": version, "kind": "AdmissionReview",
                                                     "request": {"uid": "u-1", **request}}).encode(),
                                         path_handler, "")
    assert status == 200, text
    return json.loads(text)


def patch_of(response: dict) -> list:
    assert response["patchType"] == "JSONPatch"
    return json.loads(base64.b64decode(response["patch"]))


CONFIGMAPS = {"group": "", "version": "v1", "resource": "configmaps"}


def test_add_label_patches_as_the_labels_require() -> None:
    first = review(webhook.add_label, {"object": {"metadata": {"name": "x"}}})["response"]
    assert patch_of(first) == [{"op": "add", "path": "/metadata/labels", "value": {"added-label": "yes"}}]
    other = review(webhook.add_label, {"object": {"metadata": {"labels": {"a": "b"}}}})["response"]
    assert patch_of(other) == [{"op": "add", "path": "/metadata/labels/added-label", "value": "yes"}]
    done = review(webhook.add_label, {"object": {"metadata": {"labels": {"added-label": "yes"}}}})["response"]
    assert done == {"uid": "u-1", "allowed": True}


def test_configmap_validator_refuses_with_a_reason_and_answers_in_the_review_version() -> None:
    answer = review(webhook.admit_configmaps, {"operation": "CREATE", "resource": CONFIGMAPS, "object": {
        "data": {"webhook-e2e-test": "webhook-disallow"}}}, version="admission.k8s.io/v1beta1")
    assert answer == {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1beta1", "response": {
        "uid": "u-1", "allowed": False, "status": {"metadata": {}, "reason": "the configmap contains unwanted key "
                                                                          "and value"}}}
    delete = review(webhook.admit_configmaps, {"operation": "DELETE", "resource": CONFIGMAPS, "oldObject": {
        "data": {"webhook-e2e-test": "webhook-nondeletable"}}})["response"]
    assert delete["allowed"] is False and "cannot be deleted" in delete["status"]["reason"]


def test_pod_mutation_adds_the_init_container_once() -> None:
    pods = {"group": "", "version": "v1", "resource": "pods"}
    pod = {"metadata": {"name": "webhook-to-be-mutated"}, "spec": {"containers": [{"name": "c"}]}}
    answer = review(webhook.mutate_pods, {"resource": pods, "object": pod})["response"]
    assert patch_of(answer)[0]["path"] == "/spec/initContainers"
    pod["spec"]["initContainers"] = [{"name": "webhook-added-init-container"}]
    assert "patch" not in review(webhook.mutate_pods, {"resource": pods, "object": pod})["response"]


def test_a_review_of_another_kind_is_a_400() -> None:
    status, text = webhook.review_answer(b'{"apiVersion": "v1", "kind": "Pod"}', webhook.always_deny, "")
    assert (status, text) == (400, "Unsupported group version kind: /v1, Kind=Pod")


def conversion(objects: list, desired: str) -> dict:
    status, kind, text = crd_conversion_webhook.answer(json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects}}).encode(),
        "application/json", "application/json")
    assert (status, kind) == (200, "application/json"), text
    return json.loads(text)["response"]


def test_conversion_splits_and_joins_host_port() -> None:
    v1 = {"apiVersion": "stable.example.com/v1", "kind": "E", "metadata": {"name": "a"}, "hostPort": "h:80"}
    response = conversion([v1], "stable.example.com/v2")
    assert response["uid"] == "c-1" and response["result"] == {"metadata": {}, "status": "Success"}
    assert response["convertedObjects"] == [{"apiVersion": "stable.example.com/v2", "kind": "E",
                                             "metadata": {"name": "a"}, "host": "h", "port": "80"}]
    back = conversion(response["convertedObjects"], "stable.example.com/v1")["convertedObjects"][0]
    assert back["hostPort"] == "h:80" and "host" not in back
    bad = conversion([{**v1, "hostPort": "nope"}], "stable.example.com/v2")
    assert bad["result"] == {"metadata": {}, "status": "Failure", "message": "invalid hostPort value `nope`"}
    assert bad["convertedObjects"] is None


def test_conversion_refuses_a_content_type_it_cannot_read() -> None:
    assert crd_conversion_webhook.answer(b"{}", "text/plain", "") == (400, "text",
                                                                       "invalid Content-Type header `text/plain`")


def test_webhook_serves_https_with_the_given_key_pair(tmp_path) -> None:
    ca, ca_key = make_ca()
    cert, key = make_serving_cert(ca, ca_key)
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    from cryptography.hazmat.primitives import serialization

    context = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    server = subprocess.Popen([sys.executable, "-m", "mini_kube.kubelet.agnhost", "webhook",
                               f"--tls-cert-file={tmp_path}/tls.crt", f"--tls-private-key-file={tmp_path}/tls.key",
                               "-v=4", "--port=0"], env={**os.environ, "AGNHOST_BIND_ADDRESS": "127.0.0.1"},
                              stderr=subprocess.PIPE)
    try:
        # --port=0: the kernel picks; find it from the process's listening socket
        def port() -> int:
            out = subprocess.run(["ss", "-Htlnp"], capture_output=True, text=True).stdout
            line = next((x for x in out.splitlines() if f"pid={server.pid}," in x), "")
            return int(line.split()[3].rpartition(":")[2]) if line else 0

        found = eventually(port, timeout=15)
        request = urllib.request.Request(f"https://localhost:{found}/always-deny", method="POST",
                                         headers={"Content-Type": "application/json"}, data=json.dumps({
                                             "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                             "request": {"uid": "x"}}).encode())
        with urllib.request.urlopen(request, context=context, timeout=10) as answer:
            assert json.loads(answer.read())["response"] == {
                "uid": "x", "allowed": False, "status": {"metadata": {}, "message": "this webhook denies all requests"}}
        with urllib.request.urlopen(f"https://localhost:{found}/readyz", context=context, timeout=10) as answer:
            assert answer.read() == b"ok"
    finally:
        server.kill()
        server.wait(10)
