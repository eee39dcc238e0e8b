"""kubectl 1.32 sends protobuf bodies for its typed commands: every `create` generator against the real server."""

from __future__ import annotations

import json

import pytest

from tests.helpers import kubectl

GENERATORS = [
    ("configmap", ["configmap", "pb-cm", "--from-literal=a=b"], "configmap/pb-cm created"),
    ("secret", ["secret", "generic", "pb-secret", "--from-literal=k=v"], "secret/pb-secret created"),
    ("tls-less docker secret", ["secret", "docker-registry", "pb-reg", "--docker-server=r.example.com",
                                "--docker-username=u", "--docker-password=p"], "secret/pb-reg created"),
    ("serviceaccount", ["serviceaccount", "pb-sa"], "serviceaccount/pb-sa created"),
    ("deployment", ["deployment", "pb-deploy", "--image=nginx:1.27", "--replicas=2"],
     "deployment.apps/pb-deploy created"),
    ("service", ["service", "clusterip", "pb-svc", "--tcp=80:8080"], "service/pb-svc created"),
    ("nodeport", ["service", "nodeport", "pb-np", "--tcp=80:8080"], "service/pb-np created"),
    ("job", ["job", "pb-job", "--image=busybox"], "job.batch/pb-job created"),
    ("cronjob", ["cronjob", "pb-cron", "--image=busybox", "--schedule=*/5 * * * *"], "cronjob.batch/pb-cron created"),
    ("role", ["role", "pb-role", "--verb=get", "--resource=pods"], "role.rbac.authorization.k8s.io/pb-role created"),
    ("rolebinding", ["rolebinding", "pb-rb", "--role=pb-role", "--user=alice"],
     "rolebinding.rbac.authorization.k8s.io/pb-rb created"),
    ("quota", ["quota", "pb-quota", "--hard=pods=10"], "resourcequota/pb-quota created"),
    ("pdb", ["poddisruptionbudget", "pb-pdb", "--selector=app=x", "--min-available=1"],
     "poddisruptionbudget.policy/pb-pdb created"),
    ("ingress", ["ingress", "pb-ing", "--rule=example.com/=svc:80"], "ingress.networking.k8s.io/pb-ing created"),
]


@pytest.mark.parametrize(("label", "args", "expected"), GENERATORS, ids=[g[0] for g in GENERATORS])
def test_create_generators(mini_kube_session, kube_namespace, label, args, expected):
    out = kubectl(mini_kube_session, "create", *args, "-n", kube_namespace).stdout.strip()
    assert out == expected
    kind_name = expected.split()[0]
    got = json.loads(kubectl(mini_kube_session, "get", kind_name, "-n", kube_namespace, "-o", "json").stdout)
    assert got["metadata"]["namespace"] == kube_namespace and got["metadata"]["uid"]


def test_cluster_scoped_generators(mini_kube_session):
    assert kubectl(mini_kube_session, "create", "namespace", "pb-ns").stdout.strip() == "namespace/pb-ns created"
    out = kubectl(mini_kube_session, "create", "clusterrole", "pb-cr", "--verb=list", "--resource=nodes").stdout
    assert out.strip() == "clusterrole.rbac.authorization.k8s.io/pb-cr created"
    out = kubectl(mini_kube_session, "create", "clusterrolebinding", "pb-crb", "--clusterrole=pb-cr",
                  "--user=bob").stdout
    assert out.strip() == "clusterrolebinding.rbac.authorization.k8s.io/pb-crb created"
    out = kubectl(mini_kube_session, "create", "priorityclass", "pb-pc", "--value=1000").stdout
    assert out.strip() == "priorityclass.scheduling.k8s.io/pb-pc created"


def test_protobuf_reads_and_errors(mini_kube_session, kube_namespace):
    kubectl(mini_kube_session, "create", "configmap", "pb-desc", "--from-literal=x=y", "-n", kube_namespace)
    described = kubectl(mini_kube_session, "describe", "configmap", "pb-desc", "-n", kube_namespace).stdout
    assert "Name:" in described and "pb-desc" in described
    again = kubectl(mini_kube_session, "create", "configmap", "pb-desc", "-n", kube_namespace, check=False)
    assert again.returncode == 1 and 'configmaps "pb-desc" already exists' in again.stderr


def test_auth_can_i_uses_protobuf_review(mini_kube_session):
    out = kubectl(mini_kube_session, "auth", "can-i", "create", "pods")
    assert out.stdout.strip() == "yes"


def test_garbled_protobuf_body_is_400_and_stores_nothing(mini_kube_session, kube_namespace):
    from mini_kube.client import ApiError, ResourceRef

    cms = ResourceRef("", "v1", "configmaps")
    for body in (b"k8s\x00\x0a\x05garbage", b"not-protobuf-at-all", b"k8s\x00"):
        with pytest.raises(ApiError) as err:
            mini_kube_session.client.request("POST", cms.path(kube_namespace), body=body,
                                              content_type="application/vnd.kubernetes.protobuf")
        assert err.value.status == 400 and err.value.body["reason"] == "BadRequest"
    assert mini_kube_session.client.list(cms, kube_namespace)["items"] == []


def test_protobuf_get_list_and_watch_stream(mini_kube_session, kube_namespace):
    import aiohttp
    from mini_kube.apiserver.codecs import protobuf

    kubectl(mini_kube_session, "create", "configmap", "pb-w", "--from-literal=a=1", "-n", kube_namespace)
    base = f"{mini_kube_session.url}/api/v1/namespaces/{kube_namespace}/configmaps"

    async def fetch() -> tuple[dict, dict, list]:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/pb-w", headers={"Accept": protobuf.CONTENT_TYPE}) as r:
                assert r.headers["Content-Type"] == protobuf.CONTENT_TYPE
                one = protobuf.decode(await r.read())
            async with session.get(base, headers={"Accept": protobuf.CONTENT_TYPE}) as r:
                listed = protobuf.decode(await r.read())
            async with session.get(base, params={"watch": "1"}, headers={"Accept": protobuf.WATCH_CONTENT_TYPE}) as r:
                # answered: the watch is registered, so a ConfigMap made now comes after all that it owes
                async with session.post(base, json={"metadata": {"name": "zz-marker"}}) as made:
                    assert made.status == 201
                events = []
                while True:  # length-prefixed frames, up to the marker's
                    head = await r.content.readexactly(4)
                    events += protobuf.decode_watch_stream(head + await r.content.readexactly(
                        int.from_bytes(head, "big")))
                    if events[-1]["object"]["metadata"]["name"] == "zz-marker":
                        break
        return one, listed, events[:-1]

    one, listed, events = mini_kube_session.run(fetch())
    assert one["kind"] == "ConfigMap" and one["data"] == {"a": "1"}
    assert listed["kind"] == "ConfigMapList" and [i["metadata"]["name"] for i in listed["items"]] == ["pb-w"]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "pb-w")]
