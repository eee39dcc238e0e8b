"""The shape the brief asks for: the API server never imports the other components (they reach it only through
its HTTP API), and the packages import each other without cycles. Read from the source with `ast`, every
import counted, those inside functions too."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["apiserver", "store", "machinery", "client", "controllers", "scheduler", "agent_operator", "kubelet",
            "network", "proxy", "ccm", "clusterdns", "kubectl_lite"]
COMPOSITION = {"cli", "testing"}  # mini_kube/cli.py and mini_kube/testing/ put the components together


@functools.cache
def _imports(package: str) -> frozenset[str]:
    """The mini_kube packages (and composition modules) that `package` imports (each package read once a run)."""
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                parts = name.split(".")
                if parts[0] == "mini_kube" and len(parts) > 1 and parts[1] != package:
                    found.add(parts[1])
    return frozenset(found)


def test_the_api_server_imports_no_other_component():
    assert _imports("apiserver") <= {"store", "machinery"}


def test_no_package_imports_the_composition_root():
    for package in PACKAGES:
        assert not _imports(package) & COMPOSITION, package


def test_packages_import_each_other_without_cycles():
    graph = {package: _imports(package) & set(PACKAGES) for package in PACKAGES}
    done: set[str] = set()

    def visit(package: str, path: tuple[str, ...]) -> None:
        assert package not in path, " -> ".join((*path, package))
        if package in done:
            return
        for imported in graph[package]:
            visit(imported, (*path, package))
        done.add(package)

    for package in PACKAGES:
        visit(package, ())
