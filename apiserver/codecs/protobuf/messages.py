"""Load the generated message table (``messages.json``) and compile messages on first use."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .special import SPECIAL
from .wire import FIXED64, LEN, VARINT, key

STRING, BYTES, BOOL, INT32, INT64, DOUBLE, MESSAGE, SPECIAL_KIND, WRAPPER = range(9)
# JSON form of a field missing from the wire: omitted, null, zero struct/special, zero scalar, inline zero
ABSENT_SKIP, ABSENT_NULL, ABSENT_ZERO_MESSAGE, ABSENT_ZERO_SCALAR, ABSENT_INLINE = range(5)
_SCALARS = {"string": (STRING, LEN), "bytes": (BYTES, LEN), "bool": (BOOL, VARINT),
            "int32": (INT32, VARINT), "int64": (INT64, VARINT), "double": (DOUBLE, FIXED64)}
TABLE_PATH = Path(__file__).with_name("messages.json")
_API_VERSION_RE = re.compile(r"(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?\Z")


@dataclass(slots=True, eq=False)
class Field:
    """One compiled field: wire facts from generated.proto, JSON facts from the Go struct tags."""

    num: int
    name: str                 # JSON name ("" for an inline struct)
    kind: int                 # STRING ... WRAPPER, of the value (of a map's value for maps)
    wire: int                 # wire type of one occurrence (LEN for maps and packed input)
    tag: bytes                # encoded key
    repeated: bool
    is_map: bool
    omitempty: bool
    pointer: bool
    inline: bool
    message: Message | None   # for MESSAGE, SPECIAL_KIND and WRAPPER
    special: str | None       # special-type code (see special.py)
    map_value: Field | None = None  # for maps: the entry's value field (number 2)
    nilable: bool = False     # Go can hold nil here (pointer, slice, map, []byte): absent stays absent
    absent: int = ABSENT_SKIP  # what the JSON form shows when the field is not on the wire

    def nested(self) -> Message:
        """The message a MESSAGE, SPECIAL_KIND or WRAPPER field holds (a scalar field has none)."""
        if self.message is None:
            raise TypeError(f"field {self.name!r} holds a scalar, not a message")
        return self.message

    def entry_value(self) -> Field:
        """A map field's entry value field (number 2)."""
        if self.map_value is None:
            raise TypeError(f"field {self.name!r} is not a map")
        return self.map_value


@dataclass(slots=True, eq=False)
class Message:
    """A compiled message: fields in JSON order, by number, and in encoding (number) order."""

    name: str
    special: str | None = None
    wrapper: bool = False
    fields: tuple[Field, ...] = ()
    by_num: dict[int, Field] = field(default_factory=dict)
    enc_fields: tuple[Field, ...] = ()


class Table:
    """Message definitions plus the (apiVersion, kind) -> message registry."""

    def __init__(self, data: dict) -> None:
        self._raw: dict[str, list] = data["messages"]
        self._wrappers = set(data["wrappers"])
        self._kinds: dict[str, dict[str, str]] = data["kinds"]
        self._compiled: dict[str, Message] = {}
        self._lock = threading.Lock()
        self.source: dict = data.get("source", {})

    def message(self, name: str) -> Message:
        """The compiled message ``name`` (compiling it and what it references on first use)."""
        msg = self._compiled.get(name)
        if msg is not None:
            return msg
        with self._lock:  # publish a message only once everything it references is complete
            staging: dict[str, Message] = {}
            msg = self._build(name, staging)
            self._compiled.update(staging)
        return msg

    def _build(self, name: str, staging: dict[str, Message]) -> Message:
        msg = self._compiled.get(name) or staging.get(name)
        if msg is not None:
            return msg
        if name not in self._raw:
            raise KeyError(name)
        msg = Message(name, special=SPECIAL.get(name), wrapper=name in self._wrappers)
        staging[name] = msg  # before the fields: messages may be recursive
        fields = [self._field(row, staging) for row in self._raw[name]]
        msg.fields = tuple(fields)
        msg.by_num = {f.num: f for f in fields}
        msg.enc_fields = tuple(sorted(fields, key=lambda f: f.num))
        return msg

    def _field(self, row: list, staging: dict[str, Message]) -> Field:
        num, name, type_name, flags = row
        sub: Message | None = None
        special: str | None = None
        if type_name in _SCALARS:
            kind, wire = _SCALARS[type_name]
        else:
            sub = self._build(type_name, staging)
            wire = LEN
            special = sub.special
            kind = SPECIAL_KIND if special else WRAPPER if sub.wrapper else MESSAGE
        is_map = "m" in flags
        map_value = None
        if is_map:
            map_value = Field(num=2, name="", kind=kind, wire=wire, tag=key(2, wire), repeated=False,
                              is_map=False, omitempty=False, pointer=False, inline=False, message=sub,
                              special=special)
            wire = LEN
        f = Field(num=num, name=name, kind=kind, wire=wire, tag=key(num, wire), repeated="r" in flags,
                  is_map=is_map, omitempty="o" in flags, pointer="p" in flags, inline="i" in flags,
                  message=sub, special=special, map_value=map_value)
        f.nilable = f.repeated or is_map or f.pointer or kind in (BYTES, WRAPPER)
        if f.inline:
            f.absent = ABSENT_INLINE
        elif f.nilable:
            f.absent = ABSENT_SKIP if f.omitempty else ABSENT_NULL
        elif sub is not None:
            f.absent = ABSENT_ZERO_MESSAGE
        else:
            f.absent = ABSENT_SKIP if f.omitempty else ABSENT_ZERO_SCALAR
        return f

    def lookup(self, api_version: str, kind: str) -> Message | None:
        """The message registered for ``kind`` in ``api_version`` (meta kinds exist in every version)."""
        name = self._kinds.get(api_version, {}).get(kind)
        if name is None:
            name = self._kinds["*"].get(kind)
            if name is None or not _API_VERSION_RE.match(api_version):
                return None
        return self.message(name)

    def kinds(self) -> dict[str, dict[str, str]]:
        """A copy of the registry: apiVersion -> kind -> message name (``*``: every apiVersion)."""
        return {gv: dict(k) for gv, k in self._kinds.items()}


@cache
def table() -> Table:
    """The table loaded from ``messages.json`` (once per process)."""
    return Table(json.loads(TABLE_PATH.read_text()))
