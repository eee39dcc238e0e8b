"""ConfigMap and Secret: key syntax, total size, per-type required keys, immutability."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from mini_kube.apiserver.validation.errs import (
    IMMUTABLE,
    FieldError,
    each,
    forbidden,
    invalid,
    required,
    too_long,
)
from mini_kube.machinery.names import is_config_map_key

Obj = dict[str, Any]
MAX_SIZE = 1024 * 1024
IMMUTABLE_SET = "field is immutable when `immutable` is set"
REDACTED = "<secret contents redacted>"


def _decoded(value: Any) -> bytes:
    """A base64 `data` value as bytes (undecodable input counts as its raw text)."""
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value.encode()


def validate_config_map(obj: Obj) -> list[FieldError]:
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    errs: list[FieldError] = []
    total = 0
    for key, value in data.items():
        errs += each(f"data[{key}]", key, is_config_map_key(key))
        if key in binary:
            errs.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(value or "").encode())
    for key, value in binary.items():
        errs += each(f"binaryData[{key}]", key, is_config_map_key(key))
        total += len(_decoded(value))
    if total > MAX_SIZE:
        errs.append(too_long("", MAX_SIZE))
    return errs


def validate_config_map_update(new: Obj, old: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    if old.get("immutable"):
        if not new.get("immutable"):
            errs.append(forbidden("immutable", IMMUTABLE_SET))
        if (new.get("data") or {}) != (old.get("data") or {}):
            errs.append(forbidden("data", IMMUTABLE_SET))
        if (new.get("binaryData") or {}) != (old.get("binaryData") or {}):
            errs.append(forbidden("binaryData", IMMUTABLE_SET))
    return errs + validate_config_map(new)


def _secret_data(obj: Obj) -> dict[str, bytes]:
    """`data` merged with `stringData` (the conversion to the internal type does the same)."""
    merged = {key: _decoded(value) for key, value in (obj.get("data") or {}).items()}
    merged.update({key: str(value).encode() for key, value in (obj.get("stringData") or {}).items()})
    return merged


def _json_error(blob: bytes) -> str | None:
    try:
        parsed = json.loads(blob)
    except (ValueError, UnicodeDecodeError) as exc:
        return f"invalid character in JSON: {exc}"
    return None if isinstance(parsed, dict) else "json: cannot unmarshal into Go value of type map[string]interface {}"


def _secret_type(kind: str, data: dict[str, bytes], annotations: dict[str, str]) -> list[FieldError]:
    if kind == "kubernetes.io/service-account-token":
        if not annotations.get("kubernetes.io/service-account.name"):
            return [required("metadata.annotations[kubernetes.io/service-account.name]")]
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            return [required(f"data[{key}]")]
        problem = _json_error(data[key])
        if problem:
            return [invalid(f"data[{key}]", REDACTED, problem)]
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [required("data[username]"), required("data[password]")]
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            return [required("data[ssh-privatekey]")]
    elif kind == "kubernetes.io/tls":
        return [required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
    return []


def validate_secret(obj: Obj) -> list[FieldError]:
    data = _secret_data(obj)
    errs: list[FieldError] = []
    for key in data:
        errs += each(f"data[{key}]", key, is_config_map_key(key))
    if sum(len(v) for v in data.values()) > MAX_SIZE:
        errs.append(too_long("data", MAX_SIZE))
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return errs + _secret_type(obj.get("type") or "Opaque", data, annotations)


def validate_secret_update(new: Obj, old: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    if (new.get("type") or "Opaque") != (old.get("type") or "Opaque"):
        errs.append(invalid("type", new.get("type") or "Opaque", IMMUTABLE))
    if old.get("immutable"):
        if not new.get("immutable"):
            errs.append(forbidden("immutable", IMMUTABLE_SET))
        if _secret_data(new) != _secret_data(old):
            errs.append(forbidden("data", IMMUTABLE_SET))
    return errs + validate_secret(new)
