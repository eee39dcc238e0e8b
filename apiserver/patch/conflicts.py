"""The 409 a server-side apply answers when other managers own fields it would change."""

from __future__ import annotations

import json

from mini_kube.apiserver.patch.errors import PatchError
from mini_kube.apiserver.patch.fieldpath import path_string
from mini_kube.apiserver.patch.managed import UPDATE, ManagerKey

Conflict = tuple[ManagerKey, tuple[str, ...]]


def describe_manager(key: ManagerKey) -> str:
    """`"name"`, plus ` with subresource "x"` and, for Update entries, ` using <apiVersion>`."""
    manager, operation, api_version, subresource = key
    text = json.dumps(manager, ensure_ascii=False)
    if subresource:
        text += f" with subresource {json.dumps(subresource, ensure_ascii=False)}"
    if operation == UPDATE:
        text += f" using {api_version}"
    return text


def _identifier(key: ManagerKey) -> str:
    """Upstream's manager identifier JSON, whose string order groups the conflict message."""
    manager, operation, api_version, subresource = key
    ident = {"manager": manager, "operation": operation}
    if api_version:
        ident["apiVersion"] = api_version
    if subresource:
        ident["subresource"] = subresource
    return json.dumps(ident, separators=(",", ":"), ensure_ascii=False)


def conflict_error(conflicts: list[Conflict]) -> PatchError:
    """`Apply failed with N conflict(s): ...` with one FieldManagerConflict cause per field.

    Upstream lists causes in Go map order (random); here they are grouped by manager like the message.
    """
    conflicts = sorted(conflicts, key=lambda c: _identifier(c[0]))
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {describe_manager(key)}",
               "field": path_string(path)} for key, path in conflicts]
    if len(conflicts) == 1:
        key, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {describe_manager(key)}: {path_string(path)}"
    else:
        by_manager: dict[ManagerKey, list[tuple[str, ...]]] = {}
        for key, path in conflicts:
            by_manager.setdefault(key, []).append(path)
        lines = []
        for key in sorted(by_manager, key=_identifier):
            lines.append(f"conflicts with {describe_manager(key)}:")
            lines.extend(f"- {path_string(p)}" for p in by_manager[key])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return PatchError(409, "Conflict", message, {"causes": causes})
