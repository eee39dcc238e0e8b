"""`agnhost crd-conversion-webhook`: the CRD conversion webhook of the conformance suite (HTTPS on `--port`, 443).

`/crdconvert` answers a ConversionReview (apiextensions.k8s.io/v1 or v1beta1, in JSON or YAML as the
Content-Type says, the answer as Accept asks) converting the example `stable.example.com` resources between v1
(`hostPort: "host:port"`) and v2 (`host` and `port`); `/readyz` answers `ok`. Like upstream it needs an in-cluster
configuration to start (it makes a client it never uses) and exits when it has none."""

from __future__ import annotations

import json
import threading
from typing import Any

import yaml

from . import gojson
from .flags import Flag, parse_or_exit
from .incluster import ConfigError, InCluster
from .serving import GoHandler
from .tls_serving import fatal, klog, serve_tls, server_context

FLAGS = {"tls-cert-file": Flag(str, ""), "tls-private-key-file": Flag(str, ""), "port": Flag(int, 443),
         "v": Flag(int, 0, "v")}
REVIEW_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")
V1, V2 = "stable.example.com/v1", "stable.example.com/v2"
MEDIA = {("application", "json"): "json", ("application", "yaml"): "yaml"}


class Failure(Exception):
    """A conversion that failed: its message goes in the response's Failure status."""


def go_quote(text: str) -> str:
    """fmt's %q for the strings seen here."""
    return json.dumps(text, ensure_ascii=False)


def convert(obj: dict[str, Any], to_version: str) -> dict[str, Any]:
    """The example converter: v1's `hostPort` split into v2's `host` and `port`, and joined back."""
    from_version = obj.get("apiVersion", "")
    if to_version == from_version:
        raise Failure(f"conversion from a version to itself should not call the webhook: {to_version}")
    converted = json.loads(json.dumps(obj))
    if from_version == V1:
        if to_version != V2:
            raise Failure(f"unexpected conversion version {go_quote(to_version)}")
        if "hostPort" in converted:
            host_port = converted.pop("hostPort")
            parts = str(host_port).split(":")
            if len(parts) != 2:
                raise Failure(f"invalid hostPort value `{host_port}`")
            converted["host"], converted["port"] = parts
    elif from_version == V2:
        if to_version != V1:
            raise Failure(f"unexpected conversion version {go_quote(to_version)}")
        if "host" in converted or "port" in converted:
            host, port = converted.pop("host", ""), converted.pop("port", "")
            converted["hostPort"] = f"{host}:{port}"
    else:
        raise Failure(f"unexpected conversion version {go_quote(str(from_version))}")
    converted["apiVersion"] = to_version
    return converted


def review_response(request: dict[str, Any]) -> dict[str, Any]:
    """doConversion: every object converted, or the first failure as the result."""
    desired = str(request.get("desiredAPIVersion") or "")
    converted = []
    for obj in request.get("objects") or ():
        if not isinstance(obj, dict) or "kind" not in obj:
            return {"uid": request.get("uid", ""), "convertedObjects": None, "result": {
                "metadata": {}, "status": "Failure",
                "message": f"failed to unmarshall object ({json.dumps(obj)}) with error: Object 'Kind' is missing"}}
        try:
            converted.append(convert(obj, desired))
        except Failure as failure:
            klog("E", "framework.go:105", f"&Status{{Message:{failure},Status:Failure}}")
            return {"uid": request.get("uid", ""), "convertedObjects": None,
                    "result": {"metadata": {}, "status": "Failure", "message": str(failure)}}
    return {"uid": request.get("uid", ""), "convertedObjects": converted or None,
            "result": {"metadata": {}, "status": "Success"}}


def media_of(content_type: str) -> str | None:
    kind, _, sub = content_type.partition("/")
    return MEDIA.get((kind, sub)) if sub else None


def output_media(accept: str) -> str | None:
    """The first Accept clause a serializer matches (JSON when there is no Accept)."""
    if not accept:
        return "json"
    for clause in accept.split(","):
        kind, _, sub = clause.split(";")[0].strip().partition("/")
        for (known_kind, known_sub), media in MEDIA.items():
            if (kind, sub) == (known_kind, known_sub) or (kind == known_kind and sub == "*") or kind == sub == "*":
                return media
    return None


def answer(body: bytes, content_type: str, accept: str) -> tuple[int, str, str]:
    """Status, content type and body for one posted review."""
    media = media_of(content_type)
    if media is None:
        return 400, "text", f"invalid Content-Type header `{content_type}`"
    try:
        review = json.loads(body) if media == "json" else yaml.safe_load(body)
    except (ValueError, yaml.YAMLError) as error:
        return 400, "text", f"failed to deserialize body ({body.decode(errors='replace')}) with error {error}"
    if not isinstance(review, dict) or review.get("kind") != "ConversionReview" or \
            review.get("apiVersion") not in REVIEW_VERSIONS:
        kind = review.get("kind", "") if isinstance(review, dict) else ""
        version = review.get("apiVersion", "") if isinstance(review, dict) else ""
        return 400, "text", f"Unsupported group version kind: {version}, Kind={kind}"
    given = review.get("request")
    request: dict[str, Any] = given if isinstance(given, dict) else {}
    result = {"kind": "ConversionReview", "apiVersion": review["apiVersion"],
              "request": {"uid": "", "desiredAPIVersion": "", "objects": None},
              "response": review_response(request)}
    out = output_media(accept)
    if out is None:
        return 400, "text", f"invalid accept header `{accept}`"
    if out == "yaml":
        return 200, "application/yaml", yaml.safe_dump(result, sort_keys=True)
    return 200, "application/json", gojson.marshal(result) + "\n"


class Handler(GoHandler):
    def handle_request(self) -> None:
        path = self.path.partition("?")[0]
        if path == "/readyz":
            self.reply("ok")
            return
        if path != "/crdconvert":
            self.reply("404 page not found\n", 404, "text/plain; charset=utf-8", {"X-Content-Type-Options": "nosniff"})
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, content_type, text = answer(body, self.headers.get("Content-Type", ""),
                                            self.headers.get("Accept", ""))
        if content_type == "text":
            klog("E", "framework.go:130", text)
            self.reply(text + "\n", status, "text/plain; charset=utf-8", {"X-Content-Type-Options": "nosniff"})
            return
        self.reply(text, status, content_type)


def main(argv: list[str]) -> int:
    """Serve HTTPS until killed (exit 255 without an in-cluster configuration)."""
    opts = parse_or_exit("crd-conversion-webhook", FLAGS, argv)
    try:
        InCluster.load()
    except ConfigError as error:
        fatal("config.go:32", str(error))
    context = server_context(opts["tls_cert_file"], opts["tls_private_key_file"], "config.go:43")
    serve_tls(opts["port"], Handler, context)
    threading.Event().wait()
    return 0
