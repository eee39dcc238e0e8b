"""`wait --for=condition=C[=V] | delete | create | jsonpath='{...}'=V`: poll until every object matches."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from mini_kube.machinery.status import ApiError

from ..printing import type_name
from ..session import Session, Target, UsageError

POLL_SECONDS = 0.05


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("wait", parents=[common], help="Wait for a condition on one or many resources")
    p.add_argument("words", nargs="+")
    p.add_argument("--for", dest="condition", required=True)
    p.add_argument("--timeout", default="30s")
    p.add_argument("-l", "--selector", default="")
    p.add_argument("--all", action="store_true")
    p.set_defaults(run=run)


def _seconds(text: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for unit in ("ms", "s", "m", "h"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float(text)


def _condition_check(spec: str) -> Any:
    """A predicate obj -> bool for `--for`, or the strings "delete" / "create"."""
    if spec in ("delete", "create"):
        return spec
    if spec.startswith("condition="):
        name, _, want = spec[len("condition="):].partition("=")
        want = want or "True"

        def has_condition(obj: dict[str, Any]) -> bool:
            for cond in (obj.get("status") or {}).get("conditions") or ():
                if cond.get("type", "").lower() == name.lower():
                    return str(cond.get("status", "")).lower() == want.lower()
            return False
        return has_condition
    if spec.startswith("jsonpath="):
        from ..jsonpath import evaluate

        expr = spec[len("jsonpath="):]
        path, sep, want = expr.rpartition("=") if expr.rstrip().endswith(("'", '"')) or "}=" in expr else (
            expr, "", "")
        path = path.strip("'\"").strip("{}")
        want = want.strip("'\"")

        def matches(obj: dict[str, Any]) -> bool:
            values = evaluate(obj, path)
            if not sep:
                return bool(values)
            return any(str(v).lower() == want.lower() if isinstance(v, bool) else str(v) == want for v in values)
        return matches
    raise UsageError(f"unrecognized condition: \"{spec}\"")


def _fetch(session: Session, target: Target) -> dict[str, Any] | None:
    try:
        return session.request("GET", target.resource.path(target.namespace, target.name))
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise


def _expand(session: Session, targets: list[Target]) -> list[Target]:
    out: list[Target] = []
    for target in targets:
        if target.name:
            out.append(target)
            continue
        listed = session.request("GET", target.resource.path(target.namespace),
                                 params={"labelSelector": session.args.selector})
        out.extend(Target(target.resource, i["metadata"]["name"], target.namespace) for i in listed.get("items") or ())
    if not out:
        raise UsageError("no matching resources found")
    return out


def run(session: Session) -> int:
    args = session.args
    check = _condition_check(args.condition)
    deadline = time.monotonic() + _seconds(args.timeout)
    targets = session.targets(args.words)
    if check != "create":
        targets = _expand(session, targets)
    for target in targets:
        res = target.resource
        label = f"{type_name(res.kind, res.group)}/{target.name}"
        while True:
            obj = _fetch(session, target)
            done = (obj is None) if check == "delete" else (obj is not None and (check == "create" or check(obj)))
            if done:
                print(f"{label} condition met")
                break
            if time.monotonic() >= deadline:
                what = f"{res.qualified}/{target.name}"
                print(f"error: timed out waiting for the condition on {what}", file=sys.stderr)
                return 1
            time.sleep(POLL_SECONDS)
    return 0
