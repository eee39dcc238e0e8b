"""CRD conversion by webhook (`spec.conversion.strategy: Webhook`), as upstream's webhookConverter does it.

Objects are sent in one ConversionReview (apiextensions.k8s.io/v1 or v1beta1, the first of
`conversionReviewVersions` we speak) to the CRD's `conversion.webhook.clientConfig`; the answer must carry the
request's uid, a `Success` result and one object per object sent, each in the desired apiVersion and of the same
kind. Of a converted object's metadata only labels and annotations are taken; the rest stays as it was.

Reads are synchronous (a strategy's `read`), webhooks are not: the request paths call the strategy's
`prepare_reads` first, which converts what needs converting (every request asks the webhook again, as upstream's
does) and leaves the results here, in a bounded cache keyed by the object's uid, resourceVersion and target
version; `read` then takes them from there. A read nobody prepared is a 500, never an unconverted object.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import StatusError, internal_error

REVIEW_VERSIONS = ("v1", "v1beta1")
TIMEOUT = 30  # seconds: upstream's conversion webhook timeout
CACHE_SIZE = 4096

Post = Callable[[dict[str, Any], dict[str, Any], int], Awaitable[Any]]


class ConversionFailed(Exception):
    """The webhook could not convert; the text follows `conversion webhook for <gvk> failed: `."""


def _key(obj: dict[str, Any], api_version: str) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("uid", "")), str(meta.get("resourceVersion", "")), api_version


def _gvk(api_version: str, kind: str) -> str:
    return f"{api_version}, Kind={kind}"


def restore_metadata(original: dict[str, Any], converted: dict[str, Any]) -> dict[str, Any]:
    """The converted object with the original's metadata, but for its labels and annotations."""
    meta = dict(original.get("metadata") or {})
    given = converted.get("metadata")
    new_meta: dict[str, Any] = given if isinstance(given, dict) else {}
    for key in ("labels", "annotations"):
        if new_meta.get(key):
            meta[key] = new_meta[key]
        else:
            meta.pop(key, None)
    converted["metadata"] = meta
    return converted


class WebhookConverter:
    """Calls conversion webhooks through `post` (the API server's webhook client) and remembers the results."""

    def __init__(self, post: Post, failure: type[Exception]) -> None:
        self.post = post
        self.failure = failure  # what `post` raises when the call fails
        self.cache: OrderedDict[tuple[str, str, str], dict[str, Any]] = OrderedDict()

    def cached(self, obj: dict[str, Any], api_version: str) -> dict[str, Any] | None:
        return self.cache.get(_key(obj, api_version))

    def remember(self, obj: dict[str, Any], api_version: str, converted: dict[str, Any]) -> None:
        """Keep `obj` (a stored object) as converted to `api_version`."""
        key = _key(obj, api_version)
        if not key[0] or not key[1]:
            return  # not a stored object: nothing would find it again
        self.cache[key] = converted
        self.cache.move_to_end(key)
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    async def convert(self, crd: dict[str, Any], objs: list[dict[str, Any]], api_version: str
                      ) -> list[dict[str, Any]]:
        """`objs` in `api_version` (those already in it untouched); a StatusError (500) when the webhook fails."""
        todo = [o for o in objs if o.get("apiVersion") != api_version]
        if not todo:
            return objs
        kind = (((crd.get("spec") or {}).get("names")) or {}).get("kind", "")
        try:
            converted = await self._call(crd, todo, api_version)
        except ConversionFailed as exc:
            source = str(todo[0].get("apiVersion", ""))
            raise internal_error(f"conversion webhook for {_gvk(source, kind)} failed: {exc}") from None
        by_id = {id(o): c for o, c in zip(todo, converted, strict=True)}
        return [by_id.get(id(o), o) for o in objs]

    async def _call(self, crd: dict[str, Any], objs: list[dict[str, Any]], api_version: str
                    ) -> list[dict[str, Any]]:
        webhook = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
        version = next((v for v in webhook.get("conversionReviewVersions") or () if v in REVIEW_VERSIONS), None)
        if version is None:
            raise ConversionFailed("no supported conversion review versions")
        uid = str(uuid.uuid4())
        review = {"kind": "ConversionReview", "apiVersion": f"apiextensions.k8s.io/{version}",
                  "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objs}}
        try:
            answer = await self.post(webhook.get("clientConfig") or {}, review, TIMEOUT)
        except self.failure as exc:
            raise ConversionFailed(str(exc).removeprefix("failed to call webhook: ")) from None
        return self._verify(answer, uid, objs, api_version)

    @staticmethod
    def _verify(answer: Any, uid: str, objs: list[dict[str, Any]], api_version: str) -> list[dict[str, Any]]:
        response = answer.get("response") if isinstance(answer, dict) else None
        if not isinstance(response, dict):
            raise ConversionFailed("no response provided")
        if response.get("uid") != uid:
            raise ConversionFailed(f"expected response.uid={uid}, got {response.get('uid', '')}")
        given = response.get("result")
        result: dict[str, Any] = given if isinstance(given, dict) else {}
        if result.get("status") != "Success":
            raise ConversionFailed(str(result.get("message") or "conversion failed"))
        converted = response.get("convertedObjects") or []
        if not isinstance(converted, list) or len(converted) != len(objs):
            raise ConversionFailed(f"expected {len(objs)} converted objects, got "
                                   f"{len(converted) if isinstance(converted, list) else 0}")
        out = []
        for i, (original, new) in enumerate(zip(objs, converted, strict=True)):
            if not isinstance(new, dict):
                raise ConversionFailed(f"invalid converted object at index {i}")
            if new.get("apiVersion") != api_version:
                raise ConversionFailed(f"invalid converted object at index {i}: invalid apiVersion "
                                       f"{new.get('apiVersion', '')!r}, expected {api_version!r}")
            if new.get("kind") != original.get("kind"):
                raise ConversionFailed(f"invalid converted object at index {i}: invalid kind "
                                       f"{new.get('kind', '')!r}, expected {original.get('kind', '')!r}")
            out.append(restore_metadata(original, new))
        return out


def not_prepared(api_version: str, kind: str) -> StatusError:
    """A read of an object that no request path converted first (a bug: every read path prepares)."""
    return internal_error(f"conversion webhook for {_gvk(api_version, kind)} failed: the object was not converted "
                          "before it was read")
