"""Read-only commands about the server and the kubeconfig: `version`, `api-resources`, `api-versions`,
`auth can-i|whoami`, `config view|get-contexts|current-context|use-context`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..printing import tabulate, to_json, to_yaml
from ..session import Session, UsageError

CLIENT_VERSION = "v0.1.0+kubectl-lite"


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    version = sub.add_parser("version", parents=[common], help="Print the client and server version")
    version.add_argument("--client", action="store_true")
    version.add_argument("-o", "--output", default="")
    version.set_defaults(run=run_version)

    resources = sub.add_parser("api-resources", parents=[common], help="Print the supported API resources")
    resources.add_argument("-o", "--output", default="")
    resources.add_argument("--namespaced", default=None, choices=["true", "false"])
    resources.add_argument("--api-group", default=None)
    resources.add_argument("--no-headers", action="store_true")
    resources.set_defaults(run=run_api_resources)

    versions = sub.add_parser("api-versions", parents=[common], help="Print the supported API versions")
    versions.set_defaults(run=run_api_versions)

    auth = sub.add_parser("auth", parents=[common], help="Inspect authorization")
    auth_sub = auth.add_subparsers(dest="auth_command", required=True)
    can_i = auth_sub.add_parser("can-i", parents=[common])
    can_i.add_argument("verb")
    can_i.add_argument("resource")
    can_i.add_argument("name", nargs="?", default="")
    can_i.add_argument("--subresource", default="")
    can_i.add_argument("-q", "--quiet", action="store_true")
    can_i.set_defaults(run=run_can_i)
    whoami = auth_sub.add_parser("whoami", parents=[common])
    whoami.add_argument("-o", "--output", default="")
    whoami.set_defaults(run=run_whoami)

    config = sub.add_parser("config", parents=[common], help="Read or change kubeconfig files")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    view = config_sub.add_parser("view", parents=[common])
    view.add_argument("--raw", action="store_true")
    view.add_argument("--minify", action="store_true")
    view.add_argument("-o", "--output", default="yaml")
    view.set_defaults(run=run_config_view)
    config_sub.add_parser("get-contexts", parents=[common]).set_defaults(run=run_get_contexts)
    config_sub.add_parser("current-context", parents=[common]).set_defaults(run=run_current_context)
    use = config_sub.add_parser("use-context", parents=[common])
    use.add_argument("name")
    use.set_defaults(run=run_use_context)


def run_version(session: Session) -> int:
    info: dict[str, Any] = {"clientVersion": {"gitVersion": CLIENT_VERSION}}
    if not session.args.client:
        info["serverVersion"] = session.request("GET", "/version")
    if session.args.output in ("json", "yaml"):
        sys.stdout.write(to_json(info) if session.args.output == "json" else to_yaml(info))
        return 0
    print(f"Client Version: {CLIENT_VERSION}")
    if "serverVersion" in info:
        print(f"Server Version: {info['serverVersion'].get('gitVersion', '')}")
    return 0


def run_api_resources(session: Session) -> int:
    args = session.args
    rows = [] if args.no_headers else [["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]]
    if args.output == "wide" and rows:
        rows[0] += ["VERBS", "CATEGORIES"]
    groups: dict[str, list[Any]] = {}
    for res in session.discovery.resources():
        if args.namespaced is not None and res.namespaced != (args.namespaced == "true"):
            continue
        if args.api_group is not None and res.group != args.api_group:
            continue
        groups.setdefault(res.group, []).append(res)
    for _, group in sorted(groups.items(), key=lambda item: (item[0] != "", item[0])):
        for res in sorted(group, key=lambda r: r.plural):
            if args.output == "name":
                print(res.qualified)
                continue
            row = [res.plural, ",".join(res.short_names), res.group_version, str(res.namespaced).lower(), res.kind]
            if args.output == "wide":
                row += [",".join(res.verbs), ",".join(res.categories)]
            rows.append(row)
    if args.output != "name":
        sys.stdout.write(tabulate(rows))
    return 0


def run_api_versions(session: Session) -> int:
    session.discovery.resources()
    versions = sorted(f"{group}/{v}" if group else v
                      for group, vs in session.discovery.group_versions.items() for v in vs)
    sys.stdout.write("".join(v + "\n" for v in versions))
    return 0


def run_can_i(session: Session) -> int:
    args = session.args
    attributes: dict[str, Any] = {"verb": args.verb}
    if args.resource.startswith("/"):
        review_attrs: dict[str, Any] = {"nonResourceAttributes": {"path": args.resource, "verb": args.verb}}
    else:
        kind, _, name = args.resource.partition("/")
        res = session.discovery.find(kind)
        attributes.update(group=res.group, resource=res.plural, name=name or args.name,
                          subresource=args.subresource)
        if res.namespaced and not session.all_namespaces:
            attributes["namespace"] = session.namespace
        review_attrs = {"resourceAttributes": attributes}
    review = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "spec": review_attrs}
    answer = session.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review)
    allowed = bool((answer.get("status") or {}).get("allowed"))
    if not args.quiet:
        print("yes" if allowed else "no")
    return 0 if allowed else 1


def run_whoami(session: Session) -> int:
    review = {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1"}
    answer = session.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=review)
    if session.args.output in ("json", "yaml"):
        sys.stdout.write(to_json(answer) if session.args.output == "json" else to_yaml(answer))
        return 0
    user = (answer.get("status") or {}).get("userInfo") or {}
    rows = [["ATTRIBUTE", "VALUE"], ["Username", user.get("username", "")]]
    if user.get("uid"):
        rows.append(["UID", user["uid"]])
    if user.get("groups"):
        rows.append(["Groups", "[" + " ".join(user["groups"]) + "]"])
    sys.stdout.write(tabulate(rows))
    return 0


def _redacted(config: dict[str, Any]) -> dict[str, Any]:
    """What `config view` shows without --raw: secrets as DATA+OMITTED / REDACTED."""
    secret = {"client-certificate-data": "DATA+OMITTED", "client-key-data": "DATA+OMITTED",
              "certificate-authority-data": "DATA+OMITTED", "token": "REDACTED", "password": "REDACTED"}
    out = dict(config)
    for section, inner in (("clusters", "cluster"), ("users", "user")):
        items = []
        for entry in config.get(section) or ():
            body = {k: secret.get(k, v) for k, v in (entry.get(inner) or {}).items()}
            items.append({**entry, inner: body})
        out[section] = items
    return out


def run_config_view(session: Session) -> int:
    config = session.kubeconfig.as_dict()
    if session.args.minify:
        current = session.args.context or config["current-context"]
        ctx = session.kubeconfig.named("context", current) or {}
        config["contexts"] = [c for c in config["contexts"] if c.get("name") == current]
        config["clusters"] = [c for c in config["clusters"] if c.get("name") == ctx.get("cluster")]
        config["users"] = [u for u in config["users"] if u.get("name") == ctx.get("user")]
    if not session.args.raw:
        config = _redacted(config)
    sys.stdout.write(to_json(config) if session.args.output == "json" else to_yaml(config))
    return 0


def run_get_contexts(session: Session) -> int:
    config = session.kubeconfig
    rows = [["CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"]]
    for entry in config.contexts:
        ctx = entry.get("context") or {}
        rows.append(["*" if entry.get("name") == config.current_context else "", entry.get("name", ""),
                     ctx.get("cluster", ""), ctx.get("user", ""), ctx.get("namespace", "")])
    sys.stdout.write(tabulate(rows))
    return 0


def run_current_context(session: Session) -> int:
    if not session.kubeconfig.current_context:
        raise UsageError("current-context is not set")
    print(session.kubeconfig.current_context)
    return 0


def run_use_context(session: Session) -> int:
    session.kubeconfig.set_current_context(session.args.name)
    print(f"Switched to context \"{session.args.name}\".")
    return 0
