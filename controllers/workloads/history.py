"""ControllerRevisions, as the StatefulSet and DaemonSet controllers keep them (and `kubectl rollout
history|undo` reads them): a revision's `data` is the owner's `spec.template` as a strategic merge patch that
replaces it, written as Go's `json.Marshal` writes it (sorted keys, compact, HTML-escaped), so kubectl can tell
byte for byte whether a revision matches the current template."""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

from mini_kube.client import ApiClient, NotFound
from mini_kube.machinery.meta import controller_ref, meta
from mini_kube.machinery.refs import CONTROLLERREVISIONS

from .claims import claim
from .common import SAFE_ALPHABET, selector_matches

HASH_LABEL = "controller.kubernetes.io/hash"  # StatefulSet revisions
REVISION_HASH = "controller-revision-hash"  # DaemonSet revisions and the Pods of both


def go_json(value: Any) -> bytes:
    """`value` as Go's json.Marshal writes a map[string]interface{}: keys sorted, compact, <>& escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text.encode()


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def template_patch(owner: dict[str, Any]) -> dict[str, Any]:
    """The revision data of `owner`: `{"spec": {"template": {..., "$patch": "replace"}}}`, keys sorted."""
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return _sorted({"spec": {"template": template}})


def same_data(revision: dict[str, Any], data: dict[str, Any]) -> bool:
    return go_json(revision.get("data")) == go_json(data)


def template_of(revision: dict[str, Any]) -> dict[str, Any]:
    """The Pod template a revision restores (its patch without the directive)."""
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def fnv1_32(data: bytes) -> int:
    """FNV-1 (not 1a), 32 bits, as Go's hash/fnv New32."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value * 0x01000193) & 0xFFFFFFFF) ^ byte
    return value


def safe_encode(text: str) -> str:
    """apimachinery's rand.SafeEncodeString: each byte mapped onto an alphabet without vowels or look-alikes."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


def revision_hash(data: dict[str, Any], collisions: int | None) -> str:
    """history.HashControllerRevision: FNV-1 of the data bytes and the collision count."""
    raw = go_json(data) + (str(collisions).encode() if collisions is not None else b"")
    return safe_encode(str(fnv1_32(raw)))


def revision_number(revision: dict[str, Any]) -> int:
    return int(revision.get("revision") or 0)


def sort_revisions(revisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Oldest first: by revision number, then creation time, then name (history.SortControllerRevisions)."""
    return sorted(revisions, key=lambda r: (revision_number(r), meta(r).get("creationTimestamp") or "",
                                            meta(r).get("name", "")))


def revision_name(owner: str, digest: str) -> str:
    return f"{owner[:223]}-{digest}"


async def claim_revisions(client: ApiClient, owner: dict[str, Any],
                          revisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The owner's revisions: those it controls (and still selects) plus matching orphans, which it adopts."""
    selector = (owner.get("spec") or {}).get("selector")
    return await claim(client, CONTROLLERREVISIONS, owner, revisions, release=False,
                       selects=lambda rev: selector_matches(selector, meta(rev).get("labels")))


def new_revision(owner: dict[str, Any], name: str, labels: dict[str, str], data: dict[str, Any],
                 number: int) -> dict[str, Any]:
    """A ControllerRevision body owned by `owner`, carrying the owner's annotations (as upstream copies them)."""
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": name, "labels": labels,
                         "annotations": dict(meta(owner).get("annotations") or {}) or None,
                         "ownerReferences": [controller_ref(owner)]},
            "data": data, "revision": number}


async def set_revision_number(client: ApiClient, revision: dict[str, Any], number: int) -> dict[str, Any]:
    """Move an existing revision to the top of the history (a rollback to it)."""
    return await client.patch(CONTROLLERREVISIONS, meta(revision)["name"], {"revision": number}, meta(revision)["namespace"])


async def delete_revision(client: ApiClient, revision: dict[str, Any]) -> None:
    with contextlib.suppress(NotFound):
        await client.delete(CONTROLLERREVISIONS, meta(revision)["name"], meta(revision)["namespace"])
