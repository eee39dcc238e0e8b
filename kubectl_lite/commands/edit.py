"""`edit`: the object as YAML in $KUBE_EDITOR / $EDITOR, written back with an update that fails on a
conflicting change (the resourceVersion is kept), as kubectl's edit does."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from typing import Any

from ..printing import to_yaml, type_name, without_managed_fields
from ..session import Session, UsageError


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("edit", parents=[common], help="Edit a resource on the server")
    p.add_argument("words", nargs="+")
    p.add_argument("--subresource", default="")
    p.set_defaults(run=run)


def run(session: Session) -> int:
    import yaml

    targets = session.targets(session.args.words)
    editor = os.environ.get("KUBE_EDITOR") or os.environ.get("EDITOR") or "vi"
    for target in targets:
        if not target.name:
            raise UsageError("edit needs a resource name")
        res = target.resource
        path = res.path(target.namespace, target.name, session.args.subresource)
        original = without_managed_fields(session.request("GET", path))
        text = to_yaml(original)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="kubectl-lite-edit-", delete=False) as handle:
            handle.write(text)
        try:
            subprocess.run([*shlex.split(editor), handle.name], check=True)
            with open(handle.name) as edited_file:
                edited_text = edited_file.read()
        finally:
            os.unlink(handle.name)
        label = f"{type_name(res.kind, res.group)}/{target.name}"
        edited = yaml.safe_load(edited_text)
        if edited == original:
            print("Edit cancelled, no changes made.", file=sys.stderr)
            continue
        session.request("PUT", path, body=edited, params={"fieldManager": "kubectl-edit"})
        print(f"{label} edited")
    return 0
