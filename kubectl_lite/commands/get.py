"""`get`: server-side Tables (as kubectl asks for them), or objects as YAML, JSON, names or JSONPath; `-w`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mini_kube.machinery.status import ApiError

from ..printing import (
    TABLE_ACCEPT,
    as_list,
    table_rows,
    tabulate,
    to_json,
    to_yaml,
    type_name,
    without_managed_fields,
)
from ..session import Session, Target, UsageError


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("get", parents=[common], help="Display one or many resources")
    p.add_argument("words", nargs="*")
    p.add_argument("-o", "--output", default="")
    p.add_argument("-l", "--selector", default="")
    p.add_argument("--field-selector", default="")
    p.add_argument("-w", "--watch", action="store_true")
    p.add_argument("--watch-only", action="store_true")
    p.add_argument("--chunk-size", type=int, default=500)
    p.add_argument("--no-headers", action="store_true")
    p.add_argument("--show-labels", action="store_true")
    p.add_argument("-L", "--label-columns", action="append", default=[])
    p.add_argument("--ignore-not-found", action="store_true")
    p.add_argument("-f", "--filename", action="append", default=[])
    p.add_argument("--subresource", default="")
    p.add_argument("--show-managed-fields", action="store_true")
    p.set_defaults(run=run)


def _with_type(obj: dict[str, Any], target: Target) -> dict[str, Any]:
    """Items of typed lists come without kind/apiVersion; kubectl prints them with."""
    return {"apiVersion": target.resource.group_version, "kind": target.resource.kind, **obj}


def _list_all(session: Session, target: Target, params: dict[str, Any], accept: str) -> dict[str, Any]:
    """A whole collection, read in `--chunk-size` pages; Tables' rows are joined."""
    chunk = session.args.chunk_size
    merged: dict[str, Any] | None = None
    token = ""
    while True:
        page = session.request("GET", target.resource.path(target.namespace), accept=accept,
                               params={**params, "limit": chunk or None, "continue": token or None})
        if merged is None:
            merged = page
        else:
            key = "rows" if page.get("kind") == "Table" else "items"
            merged.setdefault(key, []).extend(page.get(key) or [])
        token = ((page.get("metadata") or {}).get("continue")) or ""
        if not token or not chunk:
            return merged


def _objects(session: Session, targets: list[Target], params: dict[str, Any]) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for target in targets:
        if target.name:
            try:
                obj = session.request("GET", target.resource.path(target.namespace, target.name,
                                                                  session.args.subresource))
            except ApiError as exc:
                if exc.status == 404 and session.args.ignore_not_found:
                    continue
                raise
            objects.append(obj)
        else:
            listed = _list_all(session, target, params, "application/json")
            objects.extend(_with_type(item, target) for item in listed.get("items") or ())
    return objects


def _print_objects(session: Session, objects: list[dict[str, Any]], single: bool) -> None:
    output = session.args.output
    if output == "name":
        for obj in objects:
            api_version = obj.get("apiVersion", "")
            group = api_version.split("/")[0] if "/" in api_version else ""
            sys.stdout.write(f"{type_name(obj.get('kind', ''), group)}/{obj['metadata']['name']}\n")
        return
    if not session.args.show_managed_fields:
        objects = [without_managed_fields(o) for o in objects]
    doc = objects[0] if single and len(objects) == 1 else as_list(objects)
    if output == "yaml":
        sys.stdout.write(to_yaml(doc))
    elif output == "json":
        sys.stdout.write(to_json(doc))
    elif output.startswith("jsonpath="):
        from ..jsonpath import render

        sys.stdout.write(render(output.split("=", 1)[1].strip("'"), doc))
    else:
        raise UsageError(f"unable to match a printer suitable for the output format \"{output}\", allowed "
                         "formats are: json,jsonpath,name,wide,yaml")


def _no_resources(session: Session, targets: list[Target]) -> None:
    if session.all_namespaces or not any(t.resource.namespaced for t in targets):
        print("No resources found", file=sys.stderr)
    else:
        print(f"No resources found in {session.namespace} namespace.", file=sys.stderr)


def _print_tables(session: Session, targets: list[Target], params: dict[str, Any]) -> int:
    args = session.args
    several_types = len({t.resource for t in targets}) > 1
    blocks: list[str] = []
    pending: dict[Any, list[list[str]]] = {}
    for target in targets:
        if target.name:
            try:
                table = session.request("GET", target.resource.path(target.namespace, target.name,
                                                                    args.subresource), accept=TABLE_ACCEPT)
            except ApiError as exc:
                if exc.status == 404 and args.ignore_not_found:
                    continue
                raise
        else:
            table = _list_all(session, target, params, TABLE_ACCEPT)
        prefix = type_name(target.resource.kind, target.resource.group) + "/" if several_types else ""
        rows = table_rows(table, wide=args.output == "wide", name_prefix=prefix,
                          namespace_column=session.all_namespaces and target.resource.namespaced,
                          label_columns=_label_columns(args), show_labels=args.show_labels)
        if len(rows) < 2:
            continue
        if target.resource in pending:
            pending[target.resource].extend(rows[1:])
        else:
            pending[target.resource] = rows
    for rows in pending.values():
        text = tabulate(rows)  # widths count the header even when it is not printed, as kubectl's do
        blocks.append(text.split("\n", 1)[1] if args.no_headers else text)
    if not blocks:
        if not (args.ignore_not_found and all(t.name for t in targets)):
            _no_resources(session, targets)
        return 0
    sys.stdout.write("\n".join(blocks))
    return 0


def _label_columns(args: argparse.Namespace) -> list[str]:
    return [c for value in args.label_columns for c in value.split(",") if c]


def _watch(session: Session, target: Target, params: dict[str, Any]) -> int:
    """Print the table, then one row per watch event, as `kubectl get -w` does."""
    args = session.args
    wide = args.output == "wide"
    namespace_column = session.all_namespaces and target.resource.namespaced
    if target.name:
        params = {**params, "fieldSelector": f"metadata.name={target.name}"}
    listed = _list_all(session, target, params, TABLE_ACCEPT)
    widths: list[int] | None = None
    first = table_rows(listed, wide=wide, namespace_column=namespace_column, headers=not args.no_headers)
    if not args.watch_only and len(first) > (0 if args.no_headers else 1):
        text = tabulate(first)
        sys.stdout.write(text)
        widths = [len(c) for c in text.splitlines()[0].split("   ")] if text else None
    sys.stdout.flush()
    rv = (listed.get("metadata") or {}).get("resourceVersion", "")
    columns = listed.get("columnDefinitions")
    query = {**params, "watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true"}
    for line in session.transport.stream_lines(target.resource.path(target.namespace), query, TABLE_ACCEPT):
        event = json.loads(line)
        if event.get("type") in ("BOOKMARK", "ERROR"):
            continue
        table = event.get("object") or {}
        table.setdefault("columnDefinitions", columns)
        columns = table.get("columnDefinitions") or columns
        for row in table_rows(table, wide=wide, namespace_column=namespace_column, headers=False):
            cells = [c.ljust(widths[i]) if widths and i < len(widths) and i < len(row) - 1 else c
                     for i, c in enumerate(row)]
            sys.stdout.write("   ".join(cells).rstrip() + "\n")
        sys.stdout.flush()
    return 0


def run(session: Session) -> int:
    args = session.args
    if args.filename:
        from .mutate import read_manifests

        words = [f"{d['kind']}/{d['metadata']['name']}" for d in read_manifests(args.filename, False)]
    else:
        words = args.words
    targets = session.targets(words)
    params = {"labelSelector": args.selector, "fieldSelector": args.field_selector}
    if args.watch or args.watch_only:
        return _watch(session, targets[0], params)
    if args.output in ("", "wide"):
        return _print_tables(session, targets, params)
    objects = _objects(session, targets, params)
    single = len(targets) == 1 and targets[0].name is not None
    if not objects and not single and args.output == "name":
        _no_resources(session, targets)
        return 0
    _print_objects(session, objects, single)
    return 0
