"""Content negotiation: which representation a client accepts, and decoding request bodies."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from .. import errors
from . import limits

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
MAX_BODY = 3 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Target:
    """What to answer with: a media type and, for meta.k8s.io conversions, the `as=` kind."""

    media: str  # JSON, YAML or PROTOBUF
    as_kind: str = ""  # "", "Table", "PartialObjectMetadata", "PartialObjectMetadataList"
    version: str = ""
    stream: bool = False


def _params(part: str) -> tuple[str, dict[str, str]]:
    pieces = [p.strip() for p in part.split(";")]
    params = {}
    for piece in pieces[1:]:
        key, _, value = piece.partition("=")
        params[key.strip().lower()] = value.strip()
    return pieces[0].lower(), params


_ACCEPT_CACHE: dict[str, Target] = {}


def negotiate(accept: str | None, *, allow_protobuf: bool = True, tables: bool = True) -> Target:
    """Pick the first representation we can produce from an Accept header (406 if none). `tables`: the endpoint
    has a Table conversion (upstream's TableConvertor: stored kinds and their status and scale, not the
    request-only kinds nor the other subresources); without one an `as=Table` choice is passed over."""
    key = f"{accept}|{allow_protobuf}|{tables}"
    cached = _ACCEPT_CACHE.get(key)
    if cached is not None:
        return cached
    target = _negotiate(accept, allow_protobuf, tables)
    if len(_ACCEPT_CACHE) < 256:
        _ACCEPT_CACHE[key] = target
    return target


def _negotiate(accept: str | None, allow_protobuf: bool, tables: bool) -> Target:
    if not accept:
        return Target(JSON)
    for part in accept.split(","):
        media, params = _params(part)
        as_kind = params.get("as", "")
        if as_kind:
            if params.get("g") != "meta.k8s.io" or as_kind not in ("Table", "PartialObjectMetadata",
                                                                    "PartialObjectMetadataList"):
                continue
            if params.get("v") not in ("v1", "v1beta1") or (as_kind == "Table" and not tables):
                continue
            if media == JSON:
                return Target(JSON, as_kind, params["v"])
            if media == PROTOBUF and allow_protobuf:
                return Target(PROTOBUF, as_kind, params["v"])
            continue
        if media in (JSON, "application/*", "*/*", "application/json;stream=watch"):
            return Target(JSON)
        if media == YAML:
            return Target(YAML)
        if media == PROTOBUF and allow_protobuf:
            return Target(PROTOBUF, stream=params.get("stream") == "watch")
    raise errors.not_acceptable(PROTOBUF if allow_protobuf else "")


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def decode_body(body: bytes, content_type: str | None, kind_hint: str = "") -> Any:
    """Decode a JSON, YAML or protobuf request body into plain data (400/415 on bad input)."""
    media = media_type(content_type)
    if not body.strip():
        raise errors.bad_request("the body of the request was empty") if media != PROTOBUF else \
            errors.bad_request("empty protobuf body")
    if media in (JSON, "", "application/json-patch+json", "application/merge-patch+json",
                 "application/strategic-merge-patch+json"):
        try:
            decoded = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            if "recursion" in str(exc).lower() or "depth" in str(exc).lower():
                raise limits.too_deep() from None
            raise errors.bad_request(f"couldn't get version/kind; json parse error: {exc}") from None
        limits.check_depth(decoded)
        return decoded
    if media in (YAML, "application/apply-patch+yaml", "text/yaml", "application/x-yaml"):
        return decode_yaml(body)
    if media == PROTOBUF:
        from ..codecs import protobuf  # loaded on first use, not at start-up

        try:
            return protobuf.decode(body)
        except protobuf.ProtobufError as exc:
            raise errors.bad_request(f"unable to decode protobuf body: {exc}") from None
    raise errors.unsupported_media_type(content_type or "")


class _NotPlainJSON(ValueError):
    """A body that is JSON with a repeated key or a non-JSON constant: the YAML path words what it means."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _NotPlainJSON("repeated key")
    return mapping


def _no_constant(name: str) -> Any:
    raise _NotPlainJSON(name)


def plain_json(body: bytes | str) -> Any | None:
    """`body` decoded, when it is one JSON document without repeated keys (JSON is YAML, and this decodes it to
    the same value hundreds of times faster than a YAML parser: clients such as kubectl and controllers send
    apply patches as JSON); None for anything else."""
    if body.lstrip()[:1] not in (b"{", "{"):
        return None
    try:
        value = json.loads(body, object_pairs_hook=_unique, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # not JSON (or _NotPlainJSON): the YAML path decides
        return None
    limits.check_depth(value)
    return value


def decode_yaml(body: bytes) -> Any:
    fast = plain_json(body)
    if fast is not None:
        return fast
    limits.check_yaml(body)
    try:
        docs = list(yaml.safe_load_all(body))
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"error converting YAML to JSON: yaml: {exc}") from None
    docs = [d for d in docs if d is not None]
    if len(docs) != 1:
        raise errors.bad_request("the body must contain exactly one YAML document")
    try:  # normalise YAML-only types (timestamps, non-string keys) the way a JSON round trip would
        return orjson.loads(orjson.dumps(docs[0], default=str, option=orjson.OPT_NON_STR_KEYS))
    except TypeError as exc:
        raise errors.bad_request(f"error converting YAML to JSON: {exc}") from None
