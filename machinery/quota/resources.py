"""Resource lists (name -> quantity) and their arithmetic, as upstream's quota/v1 resources.go.

Sums keep apimachinery's notation rules: adding to a zero takes the other's format (`0` + `252Mi` is `252Mi`),
otherwise the first operand's format stays; a result prints in canonical form (`Quantity.String()`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from mini_kube.machinery.quantity import SUMS, Quantity, parse_quantity

ResourceList = dict[str, Quantity]
ZERO = Quantity(Decimal(0), "DecimalSI")


def quantity(value: int | str) -> Quantity:
    """A quantity from an integer (DecimalSI, as resource.NewQuantity) or quantity text."""
    if isinstance(value, int):
        return Quantity(Decimal(value), "DecimalSI")
    parsed = parse_quantity(value)
    return parsed if parsed is not None else ZERO


def parse_list(values: Mapping[str, Any] | None) -> ResourceList:
    """A stored ResourceList (quantity texts) as quantities; unreadable entries are left out."""
    result: ResourceList = {}
    for name, text in (values or {}).items():
        parsed = parse_quantity(text) if text is not None else None
        if parsed is not None:
            result[name] = parsed
    return result


def to_json(values: ResourceList) -> dict[str, str]:
    """The ResourceList as the API writes it: canonical quantity texts, names sorted as Go's maps marshal."""
    return {name: str(values[name]) for name in sorted(values)}


def add_quantity(a: Quantity, b: Quantity) -> Quantity:
    """Quantity.Add: the sum, in a's format unless a is zero."""
    fmt = b.format if a.value == 0 else a.format
    return Quantity(SUMS.add(a.value, b.value), fmt)


def sub_quantity(a: Quantity, b: Quantity) -> Quantity:
    """Quantity.Sub: the difference, in a's format unless a is zero."""
    fmt = b.format if a.value == 0 else a.format
    return Quantity(SUMS.subtract(a.value, b.value), fmt)


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    result = {name: add_quantity(value, b[name]) if name in b else value for name, value in a.items()}
    result.update({name: value for name, value in b.items() if name not in result})
    return result


def subtract_non_negative(a: ResourceList, b: ResourceList) -> ResourceList:
    """a - b per name, never below zero; names only in b count as zero (SubtractWithNonNegativeResult)."""
    result: ResourceList = {}
    for name, value in a.items():
        diff = sub_quantity(value, b[name]) if name in b else value
        result[name] = diff if diff.value > 0 else ZERO
    result.update({name: ZERO for name in b if name not in result})
    return result


def maximum(a: ResourceList, b: ResourceList) -> ResourceList:
    """The larger quantity per name (resourcehelper's maxResourceList: b's wins only when strictly larger)."""
    result = dict(a)
    for name, value in b.items():
        if name not in result or value.value > result[name].value:
            result[name] = value
    return result


def mask(values: ResourceList, names: Iterable[str]) -> ResourceList:
    keep = set(names)
    return {name: value for name, value in values.items() if name in keep}


def equals(a: ResourceList, b: ResourceList) -> bool:
    return a.keys() == b.keys() and all(a[name].value == b[name].value for name in a)


def less_than_or_equal(a: ResourceList, b: ResourceList) -> tuple[bool, list[str]]:
    """Whether every name of b present in a is at most b's value; the names that are not."""
    exceeded = [name for name, limit in b.items() if name in a and a[name].value > limit.value]
    return not exceeded, exceeded


def remove_zeros(values: ResourceList) -> ResourceList:
    return {name: value for name, value in values.items() if value.value != 0}


def negative(values: ResourceList) -> list[str]:
    return [name for name, value in values.items() if value.value < 0]


def pretty(values: ResourceList) -> str:
    """`name=quantity` pairs sorted by name, as the quota errors print them."""
    return ",".join(f"{name}={values[name]}" for name in sorted(values))


def intersection(a: Iterable[str], b: Iterable[str]) -> list[str]:
    others = set(b)
    return sorted({name for name in a if name in others})
