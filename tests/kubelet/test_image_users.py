"""Users and groups as the image and containerd make them (issue #24), through real kubectl as a namespace admin:
the groups the image's /etc/group gives the user join `supplementalGroups` (not under `supplementalGroupsPolicy:
Strict`), an image's USER is whom it runs as, and a set-user-ID root program takes effect unless
`allowPrivilegeEscalation: false` sets no_new_privs. The images are the conformance suite's: agnhost (its
user-defined-in-image, uid 1000, is in group-defined-in-image, 50000), nonroot (USER 1234) and nonewprivs
(`nnp` prints the effective uid of a set-user-ID root program)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import kubectl

from .conftest import eventually, process_cluster_or_skip
from .test_isolation import Tenant

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"
NONROOT = "registry.k8s.io/e2e-test-images/nonroot:1.4"
NONEWPRIVS = "registry.k8s.io/e2e-test-images/nonewprivs:1.3"


@pytest.fixture(scope="module")
def kube(tmp_path_factory):
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(insecure_http=False, nodes=1, node_runtime="process",
                  node_options={"backoff_base": 0.3, "config_retry": 0.3}) as kube:
        yield kube


@pytest.fixture
def tenant(kube, tmp_path):
    return Tenant(kube, tmp_path)


def pod(tenant: Tenant, name: str, image: str, *, command: list[str] | None = None, security: dict | None = None,
        pod_security: dict | None = None) -> None:
    container = {"name": "main", "image": image, **({"command": command} if command else {}),
                 **({"securityContext": security} if security else {})}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                     "securityContext": pod_security or {}, "containers": [container]}}
    tenant.kubectl("apply", "-f", "-", input=json.dumps(body))


def output(tenant: Tenant, name: str) -> str:
    eventually(lambda: tenant.pod(name)["status"].get("phase") == "Succeeded", timeout=60)
    return tenant.kubectl("logs", name).stdout.strip()


@pytest.mark.slow
def test_the_images_groups_of_the_user_join_supplemental_groups_unless_strict(tenant):
    groups = {"runAsUser": 1000, "supplementalGroups": [60000]}
    pod(tenant, "merge", AGNHOST, command=["sh", "-c", "id -G; id -un; sleep 300"], pod_security=groups)
    pod(tenant, "strict", AGNHOST, command=["id", "-G"],
        pod_security={**groups, "supplementalGroupsPolicy": "Strict"})
    pod(tenant, "busybox", "busybox", command=["id", "-G"], pod_security=groups)
    assert output(tenant, "strict") == "1000 60000"
    assert output(tenant, "busybox").split()[-1] == "60000"
    tenant.running("merge")
    log = eventually(lambda: tenant.kubectl("logs", "merge").stdout.split())
    assert log == ["1000", "50000", "60000", "user-defined-in-image"]
    assert tenant.kubectl("exec", "merge", "--", "id", "-G").stdout.strip() == "1000 50000 60000"
    # as a node whose runtime supports supplementalGroupsPolicy reports it, and each container's identity
    assert tenant.pod("merge")["status"]["containerStatuses"][0]["user"] == {
        "linux": {"uid": 1000, "gid": 1000, "supplementalGroups": [1000, 50000, 60000]}}
    assert tenant.pod("strict")["status"]["containerStatuses"][0]["user"]["linux"]["supplementalGroups"] == [
        1000, 60000]
    node = json.loads(kubectl(tenant.kube, "get", "node", tenant.pod("merge")["spec"]["nodeName"], "-o", "json").stdout)
    assert node["status"]["features"] == {"supplementalGroupsPolicy": True}


def test_an_images_user_is_whom_it_runs_as(tenant):
    pod(tenant, "implicit", NONROOT, command=["id", "-u"], security={"runAsNonRoot": True})
    pod(tenant, "explicit", NONROOT, command=["id", "-u"], security={"runAsUser": 2000})
    assert output(tenant, "implicit") == "1234"
    assert output(tenant, "explicit") == "2000"


@pytest.mark.slow
def test_set_user_id_takes_effect_unless_allow_privilege_escalation_is_false(tenant):
    pod(tenant, "escalation-unset", NONEWPRIVS, security={"runAsUser": 1000})
    pod(tenant, "escalation-true", NONEWPRIVS, security={"runAsUser": 1000, "allowPrivilegeEscalation": True})
    pod(tenant, "escalation-false", NONEWPRIVS, security={"runAsUser": 1000, "allowPrivilegeEscalation": False})
    assert output(tenant, "escalation-unset") == "Effective uid: 0"
    assert output(tenant, "escalation-true") == "Effective uid: 0"
    assert output(tenant, "escalation-false") == "Effective uid: 1000"
