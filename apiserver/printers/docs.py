"""Column descriptions: the API doc string of a field, looked up like upstream's `SwaggerDoc()[field]`."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from mini_kube.apiserver.printers.legacy_docs import LEGACY_DOCS
from mini_kube.apiserver.schema.definitions import definitions

_PREFIX = {"meta/v1": "io.k8s.apimachinery.pkg.apis.meta.v1"}


@dataclass(frozen=True, slots=True)
class Doc:
    """A reference to a field's doc string: `group/version.Type.field` (`core/v1.PodStatus.podIP`)."""

    ref: str


def _definition_name(group_version: str, type_name: str) -> str:
    prefix = _PREFIX.get(group_version) or "io.k8s.api." + group_version.replace("/", ".")
    return f"{prefix}.{type_name}"


@functools.cache
def doc(ref: str) -> str:
    """The doc string a reference names; empty when upstream has none (as SwaggerDoc() gives "")."""
    if ref in LEGACY_DOCS:
        return LEGACY_DOCS[ref]
    group_version, type_name, field = ref.rsplit(".", 2)
    schema = definitions().get(_definition_name(group_version, type_name), {})
    return schema.get("properties", {}).get(field, {}).get("description", "")


def describe(description: str | Doc) -> str:
    """Resolve a column's description, literal or referenced."""
    return doc(description.ref) if isinstance(description, Doc) else description


NAME_DOC = Doc("meta/v1.ObjectMeta.name")
AGE_DOC = Doc("meta/v1.ObjectMeta.creationTimestamp")
