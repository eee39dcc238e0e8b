"""ControllerRevision, as upstream's ValidateControllerRevision(Update) checks it: data is required and fixed once
written, and the revision number is not negative."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.errors import GoText
from mini_kube.apiserver.validation.errs import IMMUTABLE, FieldError, invalid, nonnegative, required

Obj = dict[str, Any]


def validate_controller_revision(obj: Obj) -> list[FieldError]:
    errs = [required("data", "data is mandatory")] if obj.get("data") is None else []
    return errs + nonnegative("revision", obj.get("revision"))


def validate_controller_revision_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = [] if new.get("data") == old.get("data") else [
        invalid("data", GoText("runtime.RawExtension{...}"), IMMUTABLE)]
    return errs + validate_controller_revision(new)
