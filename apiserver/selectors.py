"""The `labelSelector` and `fieldSelector` parameters: label selectors are machinery.labels' (a bad one answered
as a 400), field selectors are parsed here against each kind's field labels, once, and matched per object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mini_kube.machinery.labels import Selector, SelectorError

from .errors import bad_request


def parse_label_selector(text: str | None) -> Selector:
    """The `labelSelector` parameter parsed (machinery.labels); a bad one is a 400 with upstream's message."""
    try:
        return Selector.parse(text)
    except SelectorError as exc:
        raise bad_request(str(exc)) from None


FieldGetter = Callable[[dict[str, Any]], str]


def _path_getter(path: str) -> FieldGetter:
    parts = path.split(".")
    zero = GO_ZERO_VALUES.get(path, "")

    def get(obj: dict[str, Any]) -> str:
        value: Any = obj
        for part in parts:
            if not isinstance(value, dict):
                return zero
            value = value.get(part)
            if value is None:
                return zero
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


# Field selectors each built-in kind supports besides metadata.name and metadata.namespace (upstream's
# per-kind GetAttrs / AddFieldLabelConversionFunc).
FIELD_LABELS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
            "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"),
    "Event": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
              "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
              "reason", "reportingComponent", "source", "type"),
    "Secret": ("type",),
    "Namespace": ("status.phase",),
    "Node": ("spec.unschedulable",),
    "ReplicaSet": ("status.replicas",),
    "ReplicationController": ("status.replicas",),
    "Job": ("status.successful",),
    "CertificateSigningRequest": ("spec.signerName",),
}


# An omitted field reads as its Go zero value, as upstream's GetAttrs formats the typed field
# (strconv.FormatBool / Itoa): an unset `spec.unschedulable` matches `spec.unschedulable=false`.
GO_ZERO_VALUES = {"spec.unschedulable": "false", "spec.hostNetwork": "false", "status.replicas": "0",
                  "status.successful": "0"}


def _event_source(event: dict[str, Any]) -> str:
    """A core Event's `source` field label: its source.component, else its reportingComponent (an Event written
    through events.k8s.io has only the latter), as upstream's event ToSelectableFields."""
    source = event.get("source")
    component = source.get("component") if isinstance(source, dict) else None
    return str(component or event.get("reportingComponent") or "")


# events.k8s.io/v1 Events are stored in the core shape: their field labels map onto the core ones
# (AddFieldLabelConversionsForEvent in pkg/apis/events/v1).
EVENTS_V1_FIELDS = {
    "metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace", "reason": "reason",
    "type": "type", "reportingController": "reportingComponent",
    **{f"regarding.{key}": f"involvedObject.{key}"
       for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
}


def _field_terms(text: str) -> list[str]:
    """fields.splitTerms: split on commas not escaped with a backslash (the backslash stays in the term)."""
    terms, start, escaped = [], 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _field_term(text: str, term: str) -> tuple[str, str, str]:
    """fields.splitTerm: the first operator (`!=`, `==`, `=`) splits the term; nothing is trimmed."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")


def _unescape_field_value(value: str) -> str:
    """fields.UnescapeValue: `\\\\`, `\\,` and `\\=` are literal; a bare `,` or `=`, or another escape, is a 400."""
    out, escaped = [], False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise bad_request(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    field: str
    op: str  # "=" or "!="
    value: str
    getter: FieldGetter


class FieldSelector:
    """A parsed field selector (`a=b,c!=d`), validated against the kind's supported field labels."""

    def __init__(self, requirements: tuple[FieldRequirement, ...]) -> None:
        self.requirements = requirements

    @classmethod
    def parse(cls, text: str | None, kind: str, extra_fields: tuple[str, ...] = (), group: str = "") -> FieldSelector:
        if not text:
            return cls(())
        # extra_fields: a CRD's selectableFields, JSONPaths (`.spec.color`) selected as `spec.color`
        supported = {"metadata.name", "metadata.namespace", *FIELD_LABELS.get(kind, ()),
                     *(f.removeprefix(".") for f in extra_fields)}
        aliases = EVENTS_V1_FIELDS if (group, kind) == ("events.k8s.io", "Event") else None
        if aliases is not None:
            supported = set(aliases)
        reqs = []
        for part in _field_terms(text):
            if not part:
                continue
            field, op, value = _field_term(text, part)
            if field not in supported:
                raise bad_request(f'field label not supported: {field}')
            getter = _path_getter(aliases[field] if aliases is not None else field)
            if kind == "Event" and field == "source" and aliases is None:
                getter = _event_source
            reqs.append(FieldRequirement(field, "!=" if op == "!=" else "=", _unescape_field_value(value), getter))
        return cls(tuple(reqs))

    @property
    def empty(self) -> bool:
        return not self.requirements

    @property
    def reads_object(self) -> bool:
        """Whether a requirement reads more than the object's name and namespace (which every version shares)."""
        return any(req.field not in ("metadata.name", "metadata.namespace") for req in self.requirements)

    def matches(self, obj: dict[str, Any]) -> bool:
        for req in self.requirements:
            actual = req.getter(obj)
            if (actual == req.value) != (req.op == "="):
                return False
        return True

    def single_name(self) -> str | None:
        """The name if the selector is exactly `metadata.name=X` (lets a list or watch address one key)."""
        if len(self.requirements) == 1 and self.requirements[0].field == "metadata.name" \
                and self.requirements[0].op == "=":
            return self.requirements[0].value
        return None
