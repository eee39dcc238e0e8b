"""Commands that write: `apply` (server-side), `create -f`, `delete`, `patch`, `label`, `annotate`, `scale`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from mini_kube.machinery.status import ApiError

from ..discovery import Resource
from ..printing import type_name
from ..session import Session, Target, UsageError

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    apply = sub.add_parser("apply", parents=[common], help="Apply a configuration (server-side apply)")
    _files(apply, required=True)
    apply.add_argument("--force-conflicts", action="store_true")
    apply.add_argument("--field-manager", default="kubectl")
    apply.add_argument("--server-side", action="store_true", help="accepted; apply is always server-side")
    apply.add_argument("--prune", action="store_true")
    apply.add_argument("-l", "--selector", default="")
    apply.set_defaults(run=run_apply)

    create = sub.add_parser("create", parents=[common], help="Create resources from files")
    _files(create, required=True)
    create.add_argument("--field-manager", default="kubectl-create")
    create.set_defaults(run=run_create)

    delete = sub.add_parser("delete", parents=[common], help="Delete resources")
    delete.add_argument("words", nargs="*")
    _files(delete)
    delete.add_argument("-l", "--selector", default="")
    delete.add_argument("--all", action="store_true")
    delete.add_argument("--cascade", default="background", choices=["background", "foreground", "orphan"])
    delete.add_argument("--wait", default="true", choices=["true", "false"])
    delete.add_argument("--ignore-not-found", action="store_true")
    delete.add_argument("--grace-period", type=int, default=-1)
    delete.add_argument("--timeout", default="60s")
    delete.set_defaults(run=run_delete)

    patch = sub.add_parser("patch", parents=[common], help="Update fields of a resource")
    patch.add_argument("words", nargs="+")
    patch.add_argument("-p", "--patch", required=True)
    patch.add_argument("--type", default="strategic", choices=["strategic", "merge", "json"])
    patch.add_argument("--subresource", default="")
    patch.add_argument("--dry-run", default="none")
    patch.set_defaults(run=run_patch)

    for verb, field in (("label", "labels"), ("annotate", "annotations")):
        p = sub.add_parser(verb, parents=[common], help=f"Update the {field} of a resource")
        p.add_argument("words", nargs="+")
        p.add_argument("--overwrite", action="store_true")
        p.add_argument("--dry-run", default="none")
        p.set_defaults(run=run_metadata, field=field, verb=verb)

    scale = sub.add_parser("scale", parents=[common], help="Set a new size for a scalable resource")
    scale.add_argument("words", nargs="+")
    scale.add_argument("--replicas", type=int, required=True)
    scale.add_argument("--current-replicas", type=int, default=-1)
    scale.add_argument("--dry-run", default="none")
    scale.set_defaults(run=run_scale)


def _files(parser: argparse.ArgumentParser, required: bool = False) -> None:
    parser.add_argument("-f", "--filename", action="append", default=[], required=required)
    parser.add_argument("-R", "--recursive", action="store_true")
    parser.add_argument("--dry-run", default="none", choices=["none", "server", "client"])
    parser.add_argument("-o", "--output", default="")


# -- manifests ----------------------------------------------------------------------------------------------------
def _manifest_files(path: Path, recursive: bool) -> list[Path]:
    if path.is_dir():
        pattern = "**/*" if recursive else "*"
        return sorted(p for p in path.glob(pattern) if p.suffix in MANIFEST_SUFFIXES and p.is_file())
    if not path.exists():
        raise UsageError(f"the path \"{path}\" does not exist")
    return [path]


def read_manifests(sources: list[str], recursive: bool) -> list[dict[str, Any]]:
    """Every object in files, directories or stdin (`-`), multi-document YAML and `kind: List` expanded."""
    return [doc for _, doc in read_sources(sources, recursive)]


def read_sources(sources: list[str], recursive: bool) -> list[tuple[str, dict[str, Any]]]:
    """(where it came from, object) for every object in the given files, directories or stdin."""
    import yaml

    texts: list[tuple[str, str]] = []
    for source in sources:
        if source == "-":
            texts.append(("STDIN", sys.stdin.read()))
        else:
            texts.extend((str(p), p.read_text()) for p in _manifest_files(Path(source), recursive))
    docs: list[tuple[str, dict[str, Any]]] = []
    for name, text in texts:
        try:
            loaded = list(yaml.safe_load_all(text))
        except yaml.YAMLError as exc:
            raise UsageError(f"error parsing {name}: {exc}") from exc
        for doc in loaded:
            if not doc:
                continue
            if not isinstance(doc, dict) or "kind" not in doc:
                raise UsageError(f"error validating \"{name}\": error validating data: kind not set")
            items = doc.get("items") or [] if doc["kind"].endswith("List") and "items" in doc else [doc]
            docs.extend((name, item) for item in items)
    if not docs:
        raise UsageError("no objects passed to apply")
    return docs


def _resource_for(session: Session, obj: dict[str, Any]) -> Resource:
    api_version = obj.get("apiVersion", "")
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    kind = obj.get("kind", "")
    for res in session.discovery.resources():
        if res.kind == kind and res.group == group:
            return res
    res = session.discovery.find(f"{kind}.{group}" if group else kind)
    if res.kind != kind:
        raise UsageError(f"resource mapping not found for name: \"{obj.get('metadata', {}).get('name', '')}\" "
                         f"namespace: \"\" from \"\": no matches for kind \"{kind}\" in version \"{api_version}\"")
    return res


def _obj_namespace(session: Session, res: Resource, obj: dict[str, Any]) -> str | None:
    if not res.namespaced:
        return None
    given = (obj.get("metadata") or {}).get("namespace")
    explicit = getattr(session.args, "namespace", None)
    if given and explicit and given != explicit:
        raise UsageError(f"the namespace from the provided object \"{given}\" does not match the namespace "
                         f"\"{explicit}\". You must pass '--namespace={given}' to perform this operation.")
    return given or session.namespace


def _label(res: Resource, name: str) -> str:
    return f"{type_name(res.kind, res.group)}/{name}"


def _dry(session: Session) -> tuple[dict[str, str], str]:
    mode = getattr(session.args, "dry_run", "none")
    if mode == "server":
        return {"dryRun": "All"}, " (server dry run)"
    if mode == "client":
        return {}, " (dry run)"
    return {}, ""


def _progress(index: int, total: int) -> None:
    if total > 1 and sys.stderr.isatty():
        sys.stderr.write(f"\r[{index}/{total}] applying...")
        sys.stderr.flush()


# -- apply / create -------------------------------------------------------------------------------------------------
def run_apply(session: Session) -> int:
    args = session.args
    docs = read_manifests(args.filename, args.recursive)
    params, suffix = _dry(session)
    applied: list[tuple[Resource, str | None, str]] = []
    for index, obj in enumerate(docs, 1):
        _progress(index, len(docs))
        res = _resource_for(session, obj)
        namespace = _obj_namespace(session, res, obj)
        name = obj["metadata"]["name"]
        if args.dry_run != "client":
            session.request("PATCH", res.path(namespace, name), body=json.dumps(obj),
                            content_type="application/apply-patch+yaml",
                            params={**params, "fieldManager": args.field_manager,
                                    "force": "true" if args.force_conflicts else None})
        applied.append((res, namespace, name))
        print(f"{_label(res, name)} serverside-applied{suffix}")
    if len(docs) > 1 and sys.stderr.isatty():
        sys.stderr.write("\r" + " " * 40 + "\r")
    if args.prune:
        _prune(session, applied, params, suffix)
    return 0


def _prune(session: Session, applied: list[tuple[Resource, str | None, str]], params: dict[str, str],
           suffix: str) -> None:
    """Delete objects of the applied types that match `-l` but were not in the files."""
    if not session.args.selector:
        raise UsageError("all resources selected for prune without explicitly passing --all. To prune all "
                         "resources, pass the --all flag. If you did not mean to prune all resources, specify "
                         "a label selector")
    kept = {(res, ns, name) for res, ns, name in applied}
    for res, namespace in {(res, ns) for res, ns, _ in applied}:
        listed = session.request("GET", res.path(namespace), params={"labelSelector": session.args.selector})
        for item in listed.get("items") or ():
            name = item["metadata"]["name"]
            if (res, namespace, name) not in kept:
                session.request("DELETE", res.path(namespace, name), params=params)
                print(f"{_label(res, name)} pruned{suffix}")


def run_create(session: Session) -> int:
    args = session.args
    params, suffix = _dry(session)
    failed = 0
    for source, obj in read_sources(args.filename, args.recursive):
        res = _resource_for(session, obj)
        namespace = _obj_namespace(session, res, obj)
        try:
            if args.dry_run != "client":
                session.request("POST", res.path(namespace), body=obj,
                                params={**params, "fieldManager": args.field_manager})
        except ApiError as exc:
            reason = exc.reason or "Unknown"
            print(f"Error from server ({reason}): error when creating \"{source}\": {exc.body.get('message')}",
                  file=sys.stderr)
            failed = 1
            continue
        print(f"{_label(res, obj['metadata']['name'])} created{suffix}")
    return failed


# -- delete ---------------------------------------------------------------------------------------------------------
def _delete_targets(session: Session) -> list[Target]:
    args = session.args
    if args.filename:
        targets = []
        for obj in read_manifests(args.filename, args.recursive):
            res = _resource_for(session, obj)
            targets.append(Target(res, obj["metadata"]["name"], _obj_namespace(session, res, obj)))
        return targets
    targets = session.targets(args.words)
    if any(t.name is None for t in targets) and not (args.selector or args.all):
        raise UsageError("resource(s) were provided, but no name was specified")
    expanded: list[Target] = []
    for target in targets:
        if target.name is not None:
            expanded.append(target)
            continue
        listed = session.request("GET", target.resource.path(target.namespace),
                                 params={"labelSelector": args.selector})
        expanded.extend(Target(target.resource, item["metadata"]["name"], target.namespace)
                        for item in listed.get("items") or ())
    return expanded


def run_delete(session: Session) -> int:
    args = session.args
    params, suffix = _dry(session)
    options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1",
                               "propagationPolicy": args.cascade.capitalize()}
    if args.grace_period >= 0:
        options["gracePeriodSeconds"] = args.grace_period
    if params:
        options["dryRun"] = ["All"]
    targets = _delete_targets(session)
    if not targets:
        print("No resources found", file=sys.stderr)
        return 0
    deleted: list[tuple[Target, str]] = []
    status = 0
    for target in targets:
        res = target.resource
        try:
            gone = session.request("DELETE", res.path(target.namespace, target.name), body=options)
        except ApiError as exc:
            if exc.status == 404 and args.ignore_not_found:
                continue
            from ..session import print_error

            status = print_error(exc)
            continue
        print(f"{type_name(res.kind, res.group) if res.group else res.kind.lower()} \"{target.name}\" "
              f"deleted{suffix}")
        uid = ((gone or {}).get("metadata") or {}).get("uid") if isinstance(gone, dict) else None
        deleted.append((target, uid or ""))
    if args.wait == "true" and not params:
        _wait_gone(session, deleted, _seconds(args.timeout))
    return status


def _seconds(text: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return float(text[:-1]) * units[text[-1]] if text and text[-1] in units else float(text or 0)


def _wait_gone(session: Session, deleted: list[tuple[Target, str]], timeout: float) -> None:
    """Wait until each deleted object is gone (or replaced by a new one of the same name), as kubectl does."""
    deadline = time.monotonic() + timeout
    for target, uid in deleted:
        while time.monotonic() < deadline:
            try:
                obj = session.request("GET", target.resource.path(target.namespace, target.name))
            except ApiError as exc:
                if exc.status == 404:
                    break
                raise
            if uid and obj["metadata"].get("uid") != uid:
                break
            time.sleep(0.05)


# -- patch / label / annotate / scale -------------------------------------------------------------------------------
PATCH_TYPES = {"strategic": "application/strategic-merge-patch+json", "merge": "application/merge-patch+json",
               "json": "application/json-patch+json"}


def run_patch(session: Session) -> int:
    args = session.args
    params, suffix = _dry(session)
    for target in session.named_targets(session.args.words):
        res = target.resource
        before = session.request("GET", res.path(target.namespace, target.name))
        after = session.request("PATCH", res.path(target.namespace, target.name, args.subresource),
                                body=args.patch.encode(), content_type=PATCH_TYPES[args.type],
                                params={**params, "fieldManager": "kubectl-patch"})
        same = before.get("metadata", {}).get("resourceVersion") == after.get("metadata", {}).get("resourceVersion")
        print(f"{_label(res, target.name or '')} {'patched (no change)' if same else 'patched'}{suffix}")
    return 0


def _metadata_changes(words: list[str]) -> tuple[list[str], dict[str, str | None]]:
    """Split `TYPE NAME k=v k2-` into the target words and the changes (None removes)."""
    targets: list[str] = []
    changes: dict[str, str | None] = {}
    for word in words:
        if "=" in word:
            key, _, value = word.partition("=")
            changes[key] = value
        elif word.endswith("-") and len(targets) >= 1 and ("/" in targets[0] or len(targets) >= 2):
            changes[word[:-1]] = None
        else:
            targets.append(word)
    if not changes:
        raise UsageError("at least one label update is required")
    return targets, changes


def run_metadata(session: Session) -> int:
    args = session.args
    words, changes = _metadata_changes(args.words)
    args.words = words
    params, suffix = _dry(session)
    past = {"labels": "labeled", "annotations": "annotated"}[args.field]
    for target in session.named_targets(session.args.words):
        res = target.resource
        current = session.request("GET", res.path(target.namespace, target.name))
        existing = (current.get("metadata") or {}).get(args.field) or {}
        for key, value in changes.items():
            if value is not None and key in existing and existing[key] != value and not args.overwrite:
                raise UsageError(f"'{key}' already has a value ({existing[key]}), and --overwrite is false")
        patch = {"metadata": {args.field: changes, "resourceVersion": current["metadata"]["resourceVersion"]}}
        after = session.request("PATCH", res.path(target.namespace, target.name), body=patch,
                                content_type=PATCH_TYPES["merge"],
                                params={**params, "fieldManager": f"kubectl-{args.verb}"})
        unchanged = (after.get("metadata") or {}).get(args.field) == existing or not existing and not (
            (after.get("metadata") or {}).get(args.field))
        if not unchanged and all(v is None for v in changes.values()) and args.verb == "label":
            past = "unlabeled"
        print(f"{_label(res, target.name or '')} {'not ' + past if unchanged else past}{suffix}")
    return 0


def run_scale(session: Session) -> int:
    args = session.args
    params, suffix = _dry(session)
    for target in session.named_targets(session.args.words):
        res = target.resource
        path = res.path(target.namespace, target.name, "scale")
        if args.current_replicas >= 0:
            current = session.request("GET", path)
            if (current.get("spec") or {}).get("replicas", 0) != args.current_replicas:
                raise UsageError(f"Expected replicas to be {args.current_replicas}, was "
                                 f"{(current.get('spec') or {}).get('replicas', 0)}")
        session.request("PATCH", path, body={"spec": {"replicas": args.replicas}},
                        content_type=PATCH_TYPES["merge"], params=params)
        print(f"{_label(res, target.name or '')} scaled{suffix}")
    return 0
