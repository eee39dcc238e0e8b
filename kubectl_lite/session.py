"""What every command needs, made on first use: the kubeconfig, the transport, discovery, the namespace."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from mini_kube.machinery.kubeconfig import Credentials, KubeConfig, resolve
from mini_kube.machinery.status import ApiError

from .discovery import Discovery, Resource
from .transport import Transport


class UsageError(Exception):
    """A command-line mistake: kubectl prints `error: ...` and exits 1."""


@dataclass
class Target:
    """One object or collection a command acts on."""

    resource: Resource
    name: str | None
    namespace: str | None


class Session:
    """Per-invocation state shared by the commands."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.verbosity = int(getattr(args, "v", 0) or 0)

    @cached_property
    def kubeconfig(self) -> KubeConfig:
        return KubeConfig.load(getattr(self.args, "kubeconfig", None))

    @cached_property
    def credentials(self) -> Credentials:
        return resolve(self.kubeconfig, getattr(self.args, "context", None), getattr(self.args, "namespace", None),
                       getattr(self.args, "server", None), getattr(self.args, "token", None))

    @cached_property
    def transport(self) -> Transport:
        timeout = getattr(self.args, "request_timeout", None)
        return Transport(self.credentials, verbosity=self.verbosity, timeout=float(timeout) if timeout else None)

    @cached_property
    def discovery(self) -> Discovery:
        return Discovery(self.transport, getattr(self.args, "cache_dir", None))

    @property
    def namespace(self) -> str:
        return self.credentials.namespace

    @property
    def all_namespaces(self) -> bool:
        return bool(getattr(self.args, "all_namespaces", False))

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.transport.request(method, path, **kwargs)

    def targets(self, words: list[str]) -> list[Target]:
        """`TYPE NAME...`, `TYPE/NAME ...` or `TYPE1,TYPE2` as kubectl accepts them."""
        if not words:
            raise UsageError("You must specify the type of resource to get. Use \"kubectl-lite api-resources\" "
                             "for a complete list of supported resources.")
        namespace = None if self.all_namespaces else self.namespace
        if "/" in words[0]:
            found = []
            for word in words:
                if "/" not in word:
                    raise UsageError("there is no need to specify a resource type as a separate argument when "
                                     "passing arguments in resource/name form (e.g. 'kubectl get "
                                     "resource/<resource_name>' instead of 'kubectl get resource "
                                     "resource/<resource_name>'")
                kind, _, name = word.partition("/")
                res = self.discovery.find(kind)
                found.append(Target(res, name, namespace if res.namespaced else None))
            return found
        kinds: list[Resource] = []
        for kind in words[0].split(","):
            kinds.extend(self.discovery.category(kind) if kind == "all" else [self.discovery.find(kind)])
        names = words[1:]
        if names and len(kinds) > 1:
            return [Target(res, name, namespace if res.namespaced else None) for res in kinds for name in names]
        if names:
            return [Target(kinds[0], name, namespace if kinds[0].namespaced else None) for name in names]
        return [Target(res, None, namespace if res.namespaced else None) for res in kinds]

    def named_targets(self, words: list[str],
                      missing: str = "resource(s) were provided, but no name was specified") -> list[Target]:
        """Like `targets`, for commands that act on named objects only."""
        found = self.targets(words)
        if any(t.name is None for t in found):
            raise UsageError(missing)
        return found


def print_error(exc: BaseException) -> int:
    """Print an error the way kubectl does and return its exit code."""
    if isinstance(exc, ApiError):
        message = exc.body.get("message") or f"status {exc.status}"
        reason = exc.reason or "Unknown"
        if exc.status == 401 and not exc.body.get("message"):
            message = "You must be logged in to the server (Unauthorized)"
            print(f"error: {message}", file=sys.stderr)
            return 1
        print(f"Error from server ({reason}): {message}", file=sys.stderr)
        return 1
    print(f"error: {exc}", file=sys.stderr)
    return 1
