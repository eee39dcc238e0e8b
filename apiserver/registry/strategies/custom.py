"""Custom resources: the CRD's schema prunes, defaults and validates; status and scale as the CRD declares.

A write is decoded (pruned, defaulted) and validated in the request's version, then converted to the
storage version before it is stored; the stored object is converted back to the request's version
before an update compares, validates or patches against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...crd import strategy as cr
from ...crd.conversion_webhook import WebhookConverter, not_prepared
from ...crd.defaulting import deep_copy
from ...crd.serving import convert_custom
from ...errors import FieldError, StatusError
from ...resources import ObjectSchema, ResourceType
from ...validation import validator_of
from ..strategy import Strategy, WriteContext

TERMINATING = "create not allowed while custom resource definition is terminating"


class CustomResourceStrategy(Strategy):
    """The strategy of one CRD's custom resources: `schemas` are its versions' compiled schemas (served or not:
    objects may be stored in any of them); each row carries its own version's as `object_schema`. `webhook`:
    the converter when the CRD converts by webhook (else versions convert as `conversion: None`)."""

    def __init__(self, schemas: Mapping[str, ObjectSchema], webhook: WebhookConverter | None = None) -> None:
        super().__init__(generation=True, status_metadata=(), unconditional_update=False)
        self.schemas = schemas
        self.webhook = webhook
        self.converts_on_read = webhook is not None

    def read(self, res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        if self.webhook is None or obj.get("apiVersion") == res.api_version:
            return convert_custom(res, obj, self.schemas)
        converted = self.webhook.cached(obj, res.api_version)
        if converted is None:
            raise not_prepared(res.api_version, res.kind)
        return deep_copy(converted)

    async def prepare_reads(self, res: ResourceType, objs: Iterable[dict[str, Any]]) -> None:
        """Convert by webhook the stored objects `read` will be asked for: each decoded (pruned, defaulted) in
        the version it is stored in, converted, then decoded in the requested version."""
        webhook = self.webhook
        if webhook is None or res.crd is None:
            return
        todo = [o for o in objs if o.get("apiVersion") != res.api_version]  # each request asks the webhook
        if not todo:
            return
        decoded = []
        for obj in todo:
            copy = deep_copy(obj)
            source = self.schemas.get(str(obj.get("apiVersion", "")).rpartition("/")[2])
            if source is not None:
                source.decode(copy)
            decoded.append(copy)
        converted = await webhook.convert(res.crd, decoded, res.api_version)
        for obj, new in zip(todo, converted, strict=True):
            if res.object_schema is not None:
                res.object_schema.decode(new)
            webhook.remember(obj, res.api_version, new)

    def default(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        schema = ctx.resource.object_schema
        if schema is not None:
            schema.decode(obj)

    def prepare_for_create(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        res = ctx.resource
        if ((res.crd or {}).get("metadata") or {}).get("deletionTimestamp"):
            raise StatusError(405, "MethodNotAllowed", TERMINATING,
                              {"group": res.group, "kind": res.plural})
        self.default(ctx, obj)  # again: mutating admission may have changed the object
        cr.prepare_for_create(obj, res.has_status)

    def prepare_for_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> None:
        self.default(ctx, new)
        if ctx.subresource == "status":
            result = cr.prepare_for_status_update(new, old)
            new.clear()
            new.update(result)
            return
        cr.prepare_for_update(new, old, ctx.resource.has_status)

    def validate_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        if ctx.subresource != "status":
            return super().validate_update(ctx, new, old)
        res = ctx.resource
        errs = validator_of(res).metadata_errors(new, old, res.namespaced)
        return errs + (res.object_schema.validate_status(new, old) if res.object_schema is not None else [])

    async def before_write(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any] | None) -> None:
        res = ctx.resource
        if res.version != res.storage_version:
            storage = self.schemas.get(res.storage_version)
            if self.webhook is not None and res.crd is not None:
                [converted] = await self.webhook.convert(res.crd, [new], f"{res.group}/{res.storage_version}")
                meta = new["metadata"]  # the same dict: the registry holds it
                meta.clear()
                meta.update(converted["metadata"])
                new.clear()
                new.update({**converted, "metadata": meta})
            if storage is not None:
                storage.convert(new)
