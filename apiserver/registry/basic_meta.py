"""Minimal metadata validation used until the full validation package is wired."""

from __future__ import annotations

import re
from typing import Any

from ..errors import FieldError, invalid, required
from ..resources import ResourceType

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def validate_metadata(res: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not name:
        return [required("metadata.name", "name or generateName is required")]
    if len(name) > 253 or not _SUBDOMAIN.match(name):
        return [invalid("metadata.name", name, SUBDOMAIN_MSG)]
    return []
