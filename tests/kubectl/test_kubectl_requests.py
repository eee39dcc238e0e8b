"""The HTTP conversation kubectl 1.32 has with us, request by request, is the one it has with kube-apiserver 1.32:
aggregated discovery only, OpenAPI v3 per group-version, Table and protobuf negotiation, and each verb's
fieldManager / fieldValidation / dryRun parameters and patch types."""

from __future__ import annotations

import pytest

from tests.kubectl.cli import Kubectl, Request, configmap, deployment

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


AGGREGATED = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTOBUF_OR_JSON = "application/vnd.kubernetes.protobuf,application/json"
DISCOVERY = [("GET /api?timeout=32s", 200, AGGREGATED, "", AGGREGATED_V2),
             ("GET /apis?timeout=32s", 200, AGGREGATED, "", AGGREGATED_V2)]


def openapi(group_version: str) -> list[tuple]:
    return [("GET /openapi/v3?timeout=32s", 200, "application/json, */*", "", "text/plain; charset=utf-8"),
            (f"GET /openapi/v3/{group_version}?hash=…&timeout=32s", 200, JSON, "", JSON)]


def rows(requests: list[Request]) -> list[tuple]:
    """(method path?query, status, Accept, Content-Type, response Content-Type); hashes and uids elided."""
    out = []
    for r in requests:
        query = dict(r.query)
        if "hash" in query:
            query["hash"] = "…"
        if "fieldSelector" in query:  # kubectl builds describe's selector from a Go map: any order
            query["fieldSelector"] = ",".join(sorted(t if ".uid=" not in t else t.split("=")[0] + "=UID"
                                                     for t in query["fieldSelector"].split(",")))
        text = "&".join(f"{k}={v}" for k, v in sorted(query.items()))
        out.append((f"{r.method} {r.path}{'?' + text if text else ''}", r.status, r.accept, r.content_type,
                    r.response_type))
    return out


def test_reference_commands_make_the_same_requests(kc: Kubectl):
    ns = kc.namespace
    api, apps = f"/api/v1/namespaces/{ns}", f"/apis/apps/v1/namespaces/{ns}"

    _, got = kc.verbose("create", "configmap", "c1", "--from-literal=a=b")
    assert rows(got) == [(f"POST {api}/configmaps?fieldManager=kubectl-create&fieldValidation=Strict", 201,
                          PROTOBUF_OR_JSON, PROTOBUF, PROTOBUF)]

    _, got = kc.verbose("apply", "-f", "-", input=deployment(ns, replicas=1))
    assert rows(got) == openapi("apis/apps/v1") + DISCOVERY + [
        (f"GET {apps}/deployments/web", 404, JSON, "", JSON),
        (f"GET {api}", 200, JSON, "", JSON),
        (f"POST {apps}/deployments?fieldManager=kubectl-client-side-apply&fieldValidation=Strict", 201, JSON,
         JSON, JSON)]

    _, got = kc.verbose("get", "deploy")
    assert rows(got) == DISCOVERY + [(f"GET {apps}/deployments?limit=500", 200, TABLE, "", JSON)]

    _, got = kc.verbose("apply", "-f", "-", input=deployment(ns, replicas=2))
    assert rows(got) == openapi("apis/apps/v1") + DISCOVERY + [
        (f"GET {apps}/deployments/web", 200, JSON, "", JSON),
        (f"PATCH {apps}/deployments/web?fieldManager=kubectl-client-side-apply&fieldValidation=Strict", 200, JSON,
         "application/strategic-merge-patch+json", JSON)]

    _, got = kc.verbose("apply", "--server-side", "-f", "-", input=configmap(ns, "ssa1", owner="ssa", k="v"))
    assert rows(got) == openapi("api/v1") + DISCOVERY + [
        (f"PATCH {api}/configmaps/ssa1?fieldManager=kubectl&fieldValidation=Strict&force=false", 201, JSON,
         "application/apply-patch+yaml", JSON)]

    for args, manager, patch_type in ((("patch", "cm", "c1", "-p", '{"data":{"x":"y"}}'), "kubectl-patch",
                                       "application/strategic-merge-patch+json"),
                                      (("label", "cm", "c1", "k=v"), "kubectl-label", "application/merge-patch+json")):
        _, got = kc.verbose(*args)
        assert rows(got) == DISCOVERY + [
            (f"GET {api}/configmaps/c1", 200, JSON, "", JSON),
            (f"PATCH {api}/configmaps/c1?fieldManager={manager}", 200, JSON, patch_type, JSON)]

    _, got = kc.verbose("scale", "deploy/web", "--replicas=3")
    assert rows(got) == DISCOVERY + [
        (f"GET {apps}/deployments/web", 200, JSON, "", JSON),
        (f"PATCH {apps}/deployments/web/scale", 200, "application/json, */*", "application/merge-patch+json", JSON)]

    _, got = kc.verbose("describe", "cm", "c1")
    events = (f"involvedObject.kind=ConfigMap,involvedObject.name=c1,involvedObject.namespace={ns},"
              "involvedObject.uid=UID")
    assert rows(got) == DISCOVERY + [
        (f"GET {api}/configmaps/c1", 200, JSON, "", JSON),
        (f"GET {api}/configmaps/c1", 200, PROTOBUF_OR_JSON, "", PROTOBUF),
        (f"GET {api}/events?fieldSelector={events}&limit=500", 200, PROTOBUF_OR_JSON, "", PROTOBUF)]

    _, got = kc.verbose("explain", "deployment.spec.replicas")
    assert rows(got) == DISCOVERY + openapi("apis/apps/v1")

    done, got = kc.verbose("diff", "-f", "-", input=deployment(ns, replicas=2, image="nginx:1.28"), check=False)
    assert done.returncode == 1
    assert rows(got) == DISCOVERY + [(f"GET {apps}/deployments/web", 200, JSON, "", JSON)] + openapi(
        "apis/apps/v1") + [(f"PATCH {apps}/deployments/web?dryRun=All&fieldManager=kubectl-client-side-apply", 200,
                            JSON, "application/strategic-merge-patch+json", JSON)]

    _, got = kc.verbose("delete", "cm", "c1", "--dry-run=server")
    assert rows(got) == DISCOVERY + [(f"DELETE {api}/configmaps/c1", 200, JSON, JSON, JSON)]
