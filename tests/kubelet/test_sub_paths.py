"""Volume subPaths as upstream's kubelet makes them: subPathExpr expanded with the container's environment,
the directory made in the volume; an absolute or '..' result, or a variable with no value, keeps the container
waiting with CreateContainerConfigError (and a Pod whose annotation supplies the value later then starts).
The API refuses a subPath or subPathExpr that is absolute or climbs out, and both together."""

from __future__ import annotations

import json

import pytest
from mini_kube.machinery.refs import PODS

from tests.helpers import kubectl

from .conftest import container_state, eventually, pod, status_of


def _pod(name: str, command: list[str], env: list[dict], sub_path_expr: str) -> dict:
    main = {"name": "main", "image": "busybox", "command": command, "env": env,
            "volumeMounts": [{"name": "work", "mountPath": "/sub", "subPathExpr": sub_path_expr},
                             {"name": "work", "mountPath": "/whole"}]}
    return pod(name, main, restartPolicy="Never", volumes=[{"name": "work", "emptyDir": {}}])


def _waiting(kube, ns: str, name: str) -> dict:
    return eventually(lambda: container_state(kube, ns, name).get("state", {}).get("waiting", {}).get("reason")
                      == "CreateContainerConfigError" and container_state(kube, ns, name)["state"]["waiting"])


def test_sub_path_expr_is_expanded_from_the_environment(kube, ns):
    env = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    kube.client.create(PODS, _pod("expanded", ["sh", "-c", "echo hi > /sub/f; cat /whole/expanded/f"], env,
                                  "$(POD_NAME)"), ns)
    eventually(lambda: status_of(kube, ns, "expanded").get("phase") == "Succeeded", timeout=30)
    assert kubectl(kube, "-n", ns, "logs", "expanded").stdout == "hi\n"


@pytest.mark.parametrize(("value", "message"), [
    ("/tmp", "error SubPath `/tmp` must not be an absolute path"),
    ("..", "unable to provision SubPath `..`: must not contain '..'"),
])
def test_a_sub_path_expr_leaving_the_volume_is_a_config_error(kube, ns, value, message):
    kube.client.create(PODS, _pod("out", ["true"], [{"name": "P", "value": value}], "$(P)"), ns)
    assert _waiting(kube, ns, "out")["message"] == message
    assert status_of(kube, ns, "out")["phase"] == "Pending"


def test_a_missing_value_waits_until_the_annotation_supplies_it(kube, ns):
    env = [{"name": "SUB", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['sub']"}}}]
    kube.client.create(PODS, _pod("later", ["sh", "-c", "sleep 300"], env, "$(SUB)/x"), ns)
    assert _waiting(kube, ns, "later")["message"] == "missing value for SUB"
    kubectl(kube, "-n", ns, "annotate", "pod", "later", "sub=here")
    eventually(lambda: status_of(kube, ns, "later").get("phase") == "Running", timeout=30)
    kubectl(kube, "-n", ns, "exec", "later", "--", "test", "-d", "/whole/here/x")


def test_the_api_refuses_sub_paths_leaving_the_volume(kube, ns):
    body = _pod("bad", ["true"], [], "$(X)")
    mounts = body["spec"]["containers"][0]["volumeMounts"]
    mounts[0]["subPath"] = "/abs"
    mounts[1]["subPathExpr"] = "a/../.."
    result = kubectl(kube, "-n", ns, "create", "-f", "-", check=False, input=json.dumps(body))
    assert result.returncode == 1
    for line in ('spec.containers[0].volumeMounts.subPath: Invalid value: "/abs": must be a relative path',
                 'spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(X)": subPathExpr and subPath '
                 'are mutually exclusive',
                 'spec.containers[0].volumeMounts.subPathExpr: Invalid value: "a/../..": must not contain \'..\''):
        assert line in result.stderr, result.stderr
