"""Running real kubectl against a hermetic cluster: one namespace, one kubectl version, parsed request logs."""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.helpers import kubectl, kubectl_binary

# `-v=6` request lines: kubectl <= 1.32 (`GET url 200 OK in 1 milliseconds`) and 1.33 (structured).
_PLAIN = re.compile(r"\] (GET|POST|PUT|PATCH|DELETE) (\S+) (\d{3}) ")
_STRUCTURED = re.compile(r'verb="(\w+)" url="([^"]+)" status="(\d{3})')


@dataclass(frozen=True)
class Request:
    """One HTTP request kubectl made, as its `-v=6` (or `-v=8`: with headers) log shows it."""

    method: str
    path: str
    query: dict[str, str]
    status: int
    accept: str = ""
    content_type: str = ""
    response_type: str = ""

    def __str__(self) -> str:
        query = "&".join(f"{k}={v}" for k, v in sorted(self.query.items()))
        return f"{self.method} {self.path}{'?' + query if query else ''} {self.status}"


def parse_requests(log: str) -> list[Request]:
    """The requests in a kubectl `-v=6` log, in order."""
    found = []
    for line in log.splitlines():
        match = _PLAIN.search(line) or _STRUCTURED.search(line)
        if match:
            method, url, status = match.groups()
            parts = urlsplit(url)
            found.append(Request(method, parts.path, dict(parse_qsl(parts.query, keep_blank_values=True)),
                                 int(status)))
    return found


_V8_REQUEST = re.compile(r"round_trippers.go:\d+\] (GET|POST|PUT|PATCH|DELETE) (\S+)$")
_V8_HEADER = re.compile(r"round_trippers.go:\d+\]     (Accept|Content-Type): (.*)$")


def parse_verbose(log: str) -> list[Request]:
    """The requests in a kubectl 1.32 `-v=8` log, with Accept, Content-Type and the response's Content-Type."""
    found: list[dict[str, Any]] = []
    response = False
    for line in log.splitlines():
        if match := _V8_REQUEST.search(line):
            parts = urlsplit(match.group(2))
            found.append({"method": match.group(1), "path": parts.path,
                          "query": dict(parse_qsl(parts.query, keep_blank_values=True)), "status": 0,
                          "accept": "", "content_type": "", "response_type": ""})
            response = False
        elif found and "Response Status: " in line:
            found[-1]["status"] = int(line.split("Response Status: ")[1].split()[0])
            response = True
        elif found and (match := _V8_HEADER.search(line)):
            key = {"Accept": "accept", "Content-Type": "response_type" if response else "content_type"}[match[1]]
            if not (response and match[1] == "Accept"):
                found[-1][key] = match[2].strip()
    return [Request(**r) for r in found]


class Kubectl:
    """kubectl bound to a cluster, a namespace and (optionally) a version; discovery cached in `cache_dir`."""

    def __init__(self, kube: Any, namespace: str, cache_dir: Path, version: str = "") -> None:
        self.kube = kube
        self.namespace = namespace
        self.cache_dir = cache_dir
        self.version = version

    def run(self, *args: str, input: str | None = None, check: bool = True,
            env: dict[str, str] | None = None, namespaced: bool = True) -> subprocess.CompletedProcess[str]:
        ns = ("-n", self.namespace) if namespaced else ()
        return kubectl(self.kube, *args, *ns, "--cache-dir", str(self.cache_dir), input=input, check=check,
                       version=self.version, env=env)

    def start(self, *args: str) -> subprocess.Popen[str]:
        """Start kubectl in the background (for `wait` and `--watch`); collect it with `finish`."""
        command = [kubectl_binary(self.version), "--kubeconfig", self.kube.kubeconfig, *args, "-n", self.namespace,
                   "--cache-dir", str(self.cache_dir)]
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def start_watching(self, *args: str) -> subprocess.Popen[str]:
        """`start`, returning once kubectl's watch is open (the server has answered it: `-v=6` logs the request
        then), so that a change made next reaches kubectl through the watch, not its first read."""
        process = self.start(*args, "-v=6")
        for line in process.stderr:
            if "watch=true" in line:
                return process
        raise AssertionError(f"kubectl {' '.join(args)} ended before it watched: {self.finish(process)}")

    @staticmethod
    def finish(process: subprocess.Popen[str], timeout: float = 30) -> tuple[int, str, str]:
        stdout, stderr = process.communicate(timeout=timeout)
        return process.returncode, stdout, stderr

    def out(self, *args: str, **kwargs: Any) -> str:
        """stdout without the trailing newline."""
        return self.run(*args, **kwargs).stdout.rstrip("\n")

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json").stdout)

    def requests(self, *args: str, **kwargs: Any) -> tuple[subprocess.CompletedProcess[str], list[Request]]:
        """Run at `-v=6` and return the process and the requests it made."""
        done = self.run(*args, "-v=6", **kwargs)
        return done, parse_requests(done.stderr)

    def verbose(self, *args: str, **kwargs: Any) -> tuple[subprocess.CompletedProcess[str], list[Request]]:
        """Run at `-v=8` with a fresh discovery cache; the requests carry their media types."""
        fresh = Kubectl(self.kube, self.namespace, Path(tempfile.mkdtemp(dir=self.cache_dir.parent)), self.version)
        done = fresh.run(*args, "-v=8", **kwargs)
        return done, parse_verbose(done.stderr)

    def with_version(self, version: str) -> Kubectl:
        return Kubectl(self.kube, self.namespace, self.cache_dir.parent / f"cache-{version}", version)


def editor(tmp_path: Path, *sed_expressions: str) -> dict[str, str]:
    """An environment whose EDITOR rewrites the edited file with `sed` (no expression: saves it unchanged)."""
    script = tmp_path / f"editor-{len(list(tmp_path.glob('editor-*')))}.sh"
    commands = "".join(f" -e '{expr}'" for expr in sed_expressions)
    script.write_text(f"#!/bin/sh\nsed -i{commands} \"$1\"\n" if sed_expressions else "#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    return {"EDITOR": str(script), "KUBE_EDITOR": str(script)}


def deployment(ns: str, name: str = "web", replicas: int = 2, image: str = "nginx:1.27",
               labels: dict[str, str] | None = None) -> str:
    """The reference captures' Deployment: one nginx container with port 80."""
    meta_labels = {"app": name, **(labels or {})}
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": meta_labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "nginx", "image": image,
                                                       "ports": [{"containerPort": 80}]}]}}}})


def configmap(ns: str, name: str = "settings", labels: dict[str, str] | None = None, **data: str) -> str:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})


def diff_changes(diff_output: str) -> list[str]:
    """The changed lines of a `kubectl diff` (no file headers, no hunk markers)."""
    return [line for line in diff_output.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
