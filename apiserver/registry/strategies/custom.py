"""Custom resources: the CRD's schema prunes, defaults and validates; status and scale as the CRD declares.

A write is decoded (pruned, defaulted) and validated in the request's version, then converted to the
storage version before it is stored; the stored object is converted back to the request's version
before an update compares, validates or patches against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...crd import strategy as cr
from ...crd.serving import convert_custom
from ...errors import FieldError, StatusError
from ...resources import ObjectSchema, ResourceType
from ...validation import validator_of
from ..strategy import Strategy, WriteContext

TERMINATING = "create not allowed while custom resource definition is terminating"


class CustomResourceStrategy(Strategy):
    """The strategy of one CRD's custom resources: `schemas` are its versions' compiled schemas (served or not:
    objects may be stored in any of them); each row carries its own version's as `object_schema`."""

    def __init__(self, schemas: Mapping[str, ObjectSchema]) -> None:
        super().__init__(generation=True, status_metadata=(), unconditional_update=False)
        self.schemas = schemas

    def read(self, res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        return convert_custom(res, obj, self.schemas)

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
            if storage is not None:
                storage.convert(new)
