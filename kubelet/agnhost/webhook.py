"""`agnhost webhook`: the admission webhook server the conformance suite deploys (HTTPS on `--port`, 443, with
the key pair of `--tls-cert-file` and `--tls-private-key-file`).

Each path answers an AdmissionReview (admission.k8s.io/v1 or v1beta1, echoed back in the version it came in)
as upstream's handler for it does: `/always-allow-delay-5s`, `/always-deny`, `/add-label`, `/pods`,
`/pods/attach`, `/mutating-pods`, `/mutating-pods-sidecar`, `/configmaps`, `/mutating-configmaps`,
`/custom-resource`, `/mutating-custom-resource` and `/crd`; `/readyz` answers `ok`. Mutations are JSON Patches
with the same operations; a handler that upstream leaves without an answer (a request for another resource at
`/configmaps`, a pod labelled `wait-forever` at `/pods`) closes the connection or never answers, as it does."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from . import gojson
from .flags import Flag, parse_or_exit
from .serving import GoHandler
from .tls_serving import klog, serve_tls, server_context

FLAGS = {"tls-cert-file": Flag(str, ""), "tls-private-key-file": Flag(str, ""), "port": Flag(int, 443),
         "sidecar-image": Flag(str, ""), "v": Flag(int, 0, "v")}
REVIEW_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
LABEL = "added-label"
TEST_KEY = "webhook-e2e-test"
INIT_CONTAINER = "webhook-added-init-container"
SIDECAR = "webhook-added-sidecar"

Response = dict[str, Any]


class NoAnswer(Exception):
    """Upstream's handler returned no response (its server then drops the connection)."""


def gvr(group: str, version: str, resource: str) -> dict[str, str]:
    return {"group": group, "version": version, "resource": resource}


def gvr_text(value: dict[str, str]) -> str:
    """metav1.GroupVersionResource's String()."""
    return (f"&GroupVersionResource{{Group:{value.get('group', '')},Version:{value.get('version', '')},"
            f"Resource:{value.get('resource', '')},}}")


def same_resource(request: dict[str, Any], expected: dict[str, str]) -> bool:
    resource = request.get("resource") or {}
    return all((resource.get(key) or "") == value for key, value in expected.items())


def error_response(message: str) -> Response:
    """toV1AdmissionResponse(err): not allowed, the error as the status message."""
    return {"allowed": False, "status": {"metadata": {}, "message": message}}


def with_patch(response: Response, operations: list[dict[str, Any]]) -> Response:
    response["patch"] = base64.b64encode(json.dumps(operations).encode()).decode()
    response["patchType"] = "JSONPatch"
    return response


def the_object(request: dict[str, Any], old_on_delete: bool = False) -> dict[str, Any]:
    """The request's object (its old object for a DELETE, where the handler reads that)."""
    key = "oldObject" if old_on_delete and request.get("operation") == "DELETE" else "object"
    value = request.get(key)
    return value if isinstance(value, dict) else {}


def string_map(value: Any, field: str) -> dict[str, str]:
    """A map[string]string field as encoding/json reads it (ValueError with its words for anything else)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"json: cannot unmarshal {type(value).__name__} into Go struct field {field} of type string")
    return value


def labels_of(obj: dict[str, Any]) -> dict[str, str]:
    return string_map((obj.get("metadata") or {}).get("labels"), ".metadata.labels")


def data_of(obj: dict[str, Any]) -> dict[str, str]:
    """`Data map[string]string` read case-insensitively, as encoding/json matches field names."""
    key = next((k for k in obj if k.lower() == "data"), None)
    return string_map(obj.get(key) if key else None, ".Data")


def always_allow_delay_5s(request: dict[str, Any], sidecar: str) -> Response:
    time.sleep(5)
    return {"allowed": True, "status": {"metadata": {}, "message": "this webhook allows all requests"}}


def always_deny(request: dict[str, Any], sidecar: str) -> Response:
    return {"allowed": False, "status": {"metadata": {}, "message": "this webhook denies all requests"}}


def add_label(request: dict[str, Any], sidecar: str) -> Response:
    try:
        labels = labels_of(the_object(request))
    except ValueError as error:
        return error_response(str(error))
    response: Response = {"allowed": True}
    if not labels:
        return with_patch(response, [{"op": "add", "path": "/metadata/labels", "value": {LABEL: "yes"}}])
    if LABEL not in labels:
        return with_patch(response, [{"op": "add", "path": f"/metadata/labels/{LABEL}", "value": "yes"}])
    if labels[LABEL] != "yes":
        return with_patch(response, [{"op": "replace", "path": f"/metadata/labels/{LABEL}", "value": "yes"}])
    return response


PODS = gvr("", "v1", "pods")
CONFIGMAPS = gvr("", "v1", "configmaps")


def admit_pods(request: dict[str, Any], sidecar: str) -> Response:
    if not same_resource(request, PODS):
        return error_response(f"expect resource to be {gvr_text(PODS)}")
    pod = the_object(request)
    try:
        labels = labels_of(pod)
    except ValueError as error:
        return error_response(str(error))
    reasons = []
    value = labels.get(TEST_KEY)
    if value == "webhook-disallow":
        reasons.append("the pod contains unwanted label; ")
    if value == "wait-forever":
        threading.Event().wait()  # upstream blocks forever: the caller's timeout decides
    for container in (pod.get("spec") or {}).get("containers") or ():
        if "webhook-disallow" in str((container or {}).get("name", "")):
            reasons.append("the pod contains unwanted container name; ")
    if reasons:
        return {"allowed": False, "status": {"metadata": {}, "message": "".join(reasons).strip()}}
    return {"allowed": True}


def deny_attaching(request: dict[str, Any], sidecar: str) -> Response:
    """Refuse `kubectl attach -i` to container1 of the pod `to-be-attached-pod`."""
    if request.get("name") != "to-be-attached-pod":
        return {"allowed": True}
    if not same_resource(request, PODS):
        return error_response(f"expect resource to be {gvr_text(PODS)}, got {gvr_text(request.get('resource') or {})}")
    if request.get("subResource") != "attach":
        return error_response(f"expect subresource to be attach, got {request.get('subResource', '')}")
    options = the_object(request)
    if not options.get("stdin") or options.get("container") != "container1":
        return {"allowed": True}
    return {"allowed": False, "status": {"metadata": {}, "message": "attaching to pod 'to-be-attached-pod' is not "
                                                                    "allowed"}}


def has_container(containers: Any, name: str) -> bool:
    return any(isinstance(c, dict) and c.get("name") == name for c in containers or ())


def patch_pod(request: dict[str, Any], wanted: Callable[[dict[str, Any]], bool],
              operations: list[dict[str, Any]]) -> Response:
    if not same_resource(request, PODS):
        raise NoAnswer
    response: Response = {"allowed": True}
    return with_patch(response, operations) if wanted(the_object(request)) else response


def mutate_pods(request: dict[str, Any], sidecar: str) -> Response:
    def wanted(pod: dict[str, Any]) -> bool:
        return ((pod.get("metadata") or {}).get("name") == "webhook-to-be-mutated"
                and not has_container((pod.get("spec") or {}).get("initContainers"), INIT_CONTAINER))

    init = {"image": "webhook-added-image", "name": INIT_CONTAINER, "resources": {}}
    return patch_pod(request, wanted, [{"op": "add", "path": "/spec/initContainers", "value": [init]}])


def mutate_pods_sidecar(request: dict[str, Any], sidecar: str) -> Response:
    if not sidecar:
        return {"allowed": False, "status": {"metadata": {}, "status": "Failure",
                                             "message": "No image specified by the sidecar-image parameter",
                                             "code": 500}}

    def wanted(pod: dict[str, Any]) -> bool:
        return not has_container((pod.get("spec") or {}).get("containers"), SIDECAR)

    container = {"image": sidecar, "name": SIDECAR, "resources": {}}
    return patch_pod(request, wanted, [{"op": "add", "path": "/spec/containers/-", "value": container}])


def admit_data(request: dict[str, Any], what: str) -> Response:
    """The configmap and custom resource validators: refuse `webhook-e2e-test: webhook-disallow` on create and
    update and `webhook-nondeletable` on delete (the reason says why)."""
    try:
        data = data_of(the_object(request, old_on_delete=True))
    except ValueError as error:
        return error_response(str(error))
    operation, value = request.get("operation"), data.get(TEST_KEY)
    response: Response = {"allowed": True}
    if value == "webhook-disallow" and operation in ("CREATE", "UPDATE"):
        unwanted = "contains unwanted key and value" if what == "configmap" else "contains unwanted data"
        response = {"allowed": False, "status": {"metadata": {}, "reason": f"the {what} {unwanted}"}}
    if value == "webhook-nondeletable" and operation == "DELETE":
        response = {"allowed": False, "status": {"metadata": {}, "reason": f"the {what} cannot be deleted because "
                                                                          "it contains unwanted key and value"}}
    return response


def mutate_data(request: dict[str, Any]) -> Response:
    """Two stages: `mutation-start: yes` adds `mutation-stage-1`, which in turn adds `mutation-stage-2`."""
    try:
        data = data_of(the_object(request))
    except ValueError as error:
        return error_response(str(error))
    response: Response = {"allowed": True}
    if data.get("mutation-stage-1") == "yes":
        return with_patch(response, [{"op": "add", "path": "/data/mutation-stage-2", "value": "yes"}])
    if data.get("mutation-start") == "yes":
        return with_patch(response, [{"op": "add", "path": "/data/mutation-stage-1", "value": "yes"}])
    return response


def admit_configmaps(request: dict[str, Any], sidecar: str) -> Response:
    if not same_resource(request, CONFIGMAPS):
        raise NoAnswer
    return admit_data(request, "configmap")


def mutate_configmaps(request: dict[str, Any], sidecar: str) -> Response:
    if not same_resource(request, CONFIGMAPS):
        raise NoAnswer
    return mutate_data(request)


def admit_custom_resource(request: dict[str, Any], sidecar: str) -> Response:
    return admit_data(request, "custom resource")


def mutate_custom_resource(request: dict[str, Any], sidecar: str) -> Response:
    return mutate_data(request)


def admit_crd(request: dict[str, Any], sidecar: str) -> Response:
    crds = [gvr("apiextensions.k8s.io", v, "customresourcedefinitions") for v in ("v1beta1", "v1")]
    if not any(same_resource(request, expected) for expected in crds):
        return error_response(f"expect resource to be one of [{gvr_text(crds[0])}, {gvr_text(crds[1])}] but got "
                              f"{gvr_text(request.get('resource') or {})}")
    try:
        labels = labels_of(the_object(request))
    except ValueError as error:
        return error_response(str(error))
    if labels.get(TEST_KEY) == "webhook-disallow":
        return {"allowed": False, "status": {"metadata": {}, "message": "the crd contains unwanted label"}}
    return {"allowed": True}


ROUTES: dict[str, Callable[[dict[str, Any], str], Response]] = {
    "/always-allow-delay-5s": always_allow_delay_5s, "/always-deny": always_deny, "/add-label": add_label,
    "/pods": admit_pods, "/pods/attach": deny_attaching, "/mutating-pods": mutate_pods,
    "/mutating-pods-sidecar": mutate_pods_sidecar, "/configmaps": admit_configmaps,
    "/mutating-configmaps": mutate_configmaps, "/custom-resource": admit_custom_resource,
    "/mutating-custom-resource": mutate_custom_resource, "/crd": admit_crd,
}


def review_answer(body: bytes, admit: Callable[[dict[str, Any], str], Response], sidecar: str) -> tuple[int, str]:
    """The status and body for one posted review (400 with upstream's words when it is not one)."""
    try:
        review = json.loads(body)
    except ValueError as error:
        return 400, f"Request could not be decoded: {error}"
    if not isinstance(review, dict):
        return 400, "Request could not be decoded: Object 'Kind' is missing in the request"
    api_version, kind = review.get("apiVersion", ""), review.get("kind", "")
    if kind != "AdmissionReview" or api_version not in REVIEW_VERSIONS:
        group, _, version = str(api_version).rpartition("/")
        return 400, f"Unsupported group version kind: {group}/{version}, Kind={kind}"
    given = review.get("request")
    request: dict[str, Any] = given if isinstance(given, dict) else {}
    response = {"uid": request.get("uid", ""), **admit(request, sidecar)}
    return 200, gojson.marshal({"kind": kind, "apiVersion": api_version, "response": response})


class Handler(GoHandler):
    """The webhook's ServeMux."""

    sidecar = ""

    def handle_request(self) -> None:
        path = self.path.partition("?")[0]
        if path == "/readyz":
            self.reply("ok")
            return
        admit = ROUTES.get(path)
        if admit is None:
            self.reply("404 page not found\n", 404, "text/plain; charset=utf-8", {"X-Content-Type-Options": "nosniff"})
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        content_type = self.headers.get("Content-Type", "")
        if content_type != "application/json":
            klog("E", "main.go:84", f"contentType={content_type}, expect application/json")
            self.reply(b"")
            return
        try:
            status, text = review_answer(body, admit, self.sidecar)
        except NoAnswer:
            klog("E", "main.go:123", "the handler gave no response")
            self.close_connection = True
            return
        if status != 200:
            klog("E", "main.go:94", text)
            self.reply(text + "\n", status, "text/plain; charset=utf-8", {"X-Content-Type-Options": "nosniff"})
            return
        self.reply(text, content_type="application/json")


def main(argv: list[str]) -> int:
    """Serve HTTPS until killed."""
    opts = parse_or_exit("webhook", FLAGS, argv)
    context = server_context(opts["tls_cert_file"], opts["tls_private_key_file"], "config.go:37")
    Handler.sidecar = opts["sidecar_image"]
    serve_tls(opts["port"], Handler, context)
    threading.Event().wait()
    return 0
