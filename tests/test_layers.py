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


# -- inside the API server: modules ---------------------------------------------------------------------------

def _module_names(package: str) -> dict[str, Path]:
    names = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _module_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of `package` it imports, every import counted (module level, inside functions and
    under TYPE_CHECKING). `from pkg import sub` is an import of the submodule, `from pkg import name` of pkg."""
    modules = _module_names(package)

    def resolve(name: str) -> str | None:
        parts = name.split(".")
        while parts and ".".join(parts) not in modules:
            parts.pop()
        return ".".join(parts) or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        here = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets |= {alias.name.removeprefix("mini_kube.") for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[:len(here.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                elif node.module and node.module.startswith("mini_kube."):
                    source = node.module.removeprefix("mini_kube.")
                else:
                    continue
                targets |= {f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names}
        graph[module] = {t for t in map(resolve, targets) if t and t != module}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph`, or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module):], module]
        if module in done:
            return None
        path.append(module)
        for imported in sorted(graph[module]):
            found = visit(imported)
            if found:
                return found
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        found = visit(module)
        if found:
            return found
    return None


def test_the_api_server_modules_import_each_other_without_cycles():
    cycle = _cycle(_module_graph("apiserver"))
    assert cycle is None, " -> ".join(cycle or ())


def test_the_cycle_check_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_only_the_server_and_its_assembly_know_the_server():
    """Handlers, auth, admission and the registry are given what they use, never the server object."""
    graph = _module_graph("apiserver")
    assert {m for m, imported in graph.items() if "apiserver.server" in imported} <= {"apiserver.assemble"}


def test_no_untyped_extras_and_no_class_swaps():
    """No `config.extra` bag on the server's configuration, and no object's `__class__` replaced (aiohttp is used
    through its public classes)."""
    from mini_kube.apiserver.config import ServerConfig

    assert "extra" not in ServerConfig.__dataclass_fields__
    for package in ("apiserver", "mini_kube"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text()
            assert "config.extra" not in text, path
            for node in ast.walk(ast.parse(text, str(path))):
                if isinstance(node, ast.Assign):
                    assert not any(isinstance(t, ast.Attribute) and t.attr == "__class__" for t in node.targets), path
