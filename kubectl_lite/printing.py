"""Output as kubectl prints it: server-side Tables padded like Go's tabwriter, YAML in Go's style, JSON with four
spaces, `kind.group/name` names and JSONPath templates."""

from __future__ import annotations

import json
from typing import Any

TABLE_ACCEPT = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                "g=meta.k8s.io,application/json")


def _cell(value: Any) -> str:
    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def tabulate(rows: list[list[str]]) -> str:
    """Columns padded to their widest cell plus three spaces (tabwriter with padding 3); no trailing pad."""
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(max(len(r) for r in rows))]
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[i] + 3) if i < len(row) - 1 else cell for i, cell in enumerate(row)]
        lines.append("".join(cells))
    return "\n".join(lines) + "\n"


def table_rows(table: dict[str, Any], *, wide: bool = False, namespace_column: bool = False,
               name_prefix: str = "", headers: bool = True, label_columns: list[str] | None = None,
               show_labels: bool = False) -> list[list[str]]:
    """A Table object as rows of strings (header first), with kubectl's column choices."""
    columns = table.get("columnDefinitions") or []
    shown = [i for i, col in enumerate(columns) if wide or not col.get("priority")]
    out: list[list[str]] = []
    if headers:
        header = [columns[i]["name"].upper() for i in shown]
        header = (["NAMESPACE"] if namespace_column else []) + header
        header += [c.split("/")[-1].upper() for c in label_columns or ()]
        out.append(header + (["LABELS"] if show_labels else []))
    for row in table.get("rows") or ():
        cells = row.get("cells") or []
        meta = ((row.get("object") or {}).get("metadata") or {})
        values = [_cell(cells[i]) if i < len(cells) else "" for i in shown]
        if values and name_prefix and columns and columns[shown[0]].get("name") == "Name":
            values[0] = name_prefix + values[0]
        labels = meta.get("labels") or {}
        values += [labels.get(c, "") for c in label_columns or ()]
        if show_labels:
            values.append(",".join(f"{k}={v}" for k, v in labels.items()) or "<none>")
        out.append(([meta.get("namespace", "")] if namespace_column else []) + values)
    return out


# -- YAML in Go's style (sigs.k8s.io/yaml -> yaml.v2) ----------------------------------------------------------
def _yaml_dumper() -> Any:
    import yaml

    class GoEmitter(yaml.SafeDumper):
        """Double quotes where quoting is needed (Go's choice) and literal blocks for multi-line strings."""

        def choose_scalar_style(self) -> str:
            style = super().choose_scalar_style()
            return '"' if style == "'" else style

        def represent_str(self, data: str) -> Any:
            if "\n" in data:
                return self.represent_scalar("tag:yaml.org,2002:str", data, style="|")
            return self.represent_scalar("tag:yaml.org,2002:str", data)

    GoEmitter.add_representer(str, GoEmitter.represent_str)
    return GoEmitter


def to_yaml(obj: Any) -> str:
    import yaml

    return yaml.dump(obj, Dumper=_yaml_dumper(), default_flow_style=False, sort_keys=True, width=1 << 30,
                     allow_unicode=True)


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=4, ensure_ascii=False, sort_keys=True) + "\n"


def without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """kubectl hides metadata.managedFields unless --show-managed-fields is given."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


def as_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    """What kubectl prints for several objects in YAML/JSON: a v1 List."""
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def type_name(kind: str, group: str) -> str:
    """`deployment.apps` / `configmap`: how kubectl names a type in `-o name` and multi-type tables."""
    return f"{kind.lower()}.{group}" if group else kind.lower()
