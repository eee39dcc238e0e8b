"""The layering the architecture asks for, read from the source with `ast`, every import counted (module level,
inside functions, under TYPE_CHECKING, relative ones resolved):

- `machinery` (quantities, labels, times, refs, ...) imports nothing else of ours;
- `client` and `store` import only `machinery`; the API server only `store` and `machinery`;
- every component imports only `client`, the controller runtime (`controllers.reconciler`, `controllers.manager`,
  `controllers.signals`) and `machinery`, never another component; `network` (namespaces and relays) is the one
  node library the node components (kubelet, proxy, ccm, clusterdns) share, and it imports only `client` and
  `machinery`;
- nothing imports the composition root (`mini_kube/cli.py`, `mini_kube/testing/`);
- no import cycle between modules;
- no module uses another's private names (`from x import _y`, `x._y`)."""

from __future__ import annotations

import ast
import functools
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["apiserver", "store", "machinery", "client", "controllers", "scheduler", "agent_operator", "kubelet",
            "network", "proxy", "ccm", "clusterdns", "kubectl_lite"]
COMPONENTS = ["kubelet", "proxy", "ccm", "clusterdns", "network", "scheduler", "agent_operator", "kubectl_lite",
              "controllers"]
RUNTIME = {"mini_kube.controllers", "mini_kube.controllers.reconciler", "mini_kube.controllers.manager",
           "mini_kube.controllers.signals"}
NODE_COMPONENTS = {"kubelet", "proxy", "ccm", "clusterdns"}
COMPOSITION = {"mini_kube.cli", "mini_kube.testing"}


def _module_files() -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(("mini_kube", *(parts[:-1] if parts[-1] == "__init__" else parts))), path
    for path in sorted((ROOT / "mini_kube").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


@functools.cache
def _files() -> dict[str, Path]:
    return dict(_module_files())


@functools.cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the module's parse tree: each file is parsed and walked once for all the checks here (the
    walks were most of this file's CPU time)."""
    return tuple(ast.walk(ast.parse(path.read_text(), str(path))))


@pytest.fixture(scope="module", autouse=True)
def _parse_trees_for_this_module_only() -> Iterator[None]:
    """The parse trees (~1M objects, and no cycles among them) live while this module runs, without the cyclic
    garbage collector: as they grew it walked them in 7 full collections (2 s of CPU); left in the worker
    afterwards, they made each of its later full collections ~0.3 s longer. Released when the module is done."""
    gc.disable()
    try:
        yield
    finally:
        for cached in (_files, _nodes, _graph):
            cached.cache_clear()
        gc.enable()


def _imported(module: str, path: Path, files: dict[str, Path]) -> Iterator[str]:
    """The mini_kube modules `module` imports, anywhere in it: `from a import b` is a.b when b is a module of a,
    else a (whose __init__ runs for it); relative imports are made absolute."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _nodes(path):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in files)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                name = f"{base}.{alias.name}"
                if name in files:
                    yield name
                elif base in files:
                    yield base


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    """Module -> the mini_kube modules it imports."""
    files = _files()
    return {module: frozenset(_imported(module, path, files)) - {module} for module, path in files.items()}


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _outside(package: str) -> dict[str, set[str]]:
    """What the modules of `package` import from other packages: module -> imported modules."""
    return {module: {t for t in targets if _top(t) != package}
            for module, targets in _graph().items() if _top(module) == package and module.count(".") >= 1}


def _offending(package: str, allowed) -> list[str]:
    return sorted(f"{module} -> {target}" for module, targets in _outside(package).items()
                  for target in targets if not allowed(target))


def test_relative_imports_are_resolved():
    """kubectl_lite/discovery.py once imported `..controllers.refs`, a module that was gone: relative imports
    leaving a package count as any other."""
    assert _graph()["mini_kube.kubectl_lite.discovery"] >= {"mini_kube.machinery.refs"}


def test_machinery_imports_nothing_of_ours():
    assert _offending("machinery", lambda target: False) == []


@pytest.mark.parametrize(("package", "below"), [("client", {"machinery"}), ("store", {"machinery"}),
                                                ("apiserver", {"store", "machinery"})])
def test_lower_layers_import_only_the_layers_below(package, below):
    assert _offending(package, lambda target: _top(target) in below) == []


@pytest.mark.parametrize("component", COMPONENTS)
def test_components_import_only_client_runtime_and_machinery(component):
    def allowed(target: str) -> bool:
        if _top(target) in {"client", "machinery"} or target in RUNTIME:
            return True
        return _top(target) == "network" and component in NODE_COMPONENTS

    assert _offending(component, allowed) == []


def test_no_package_imports_the_composition_root():
    offending = sorted(f"{m} -> {t}" for m, targets in _graph().items() if _top(m) in PACKAGES
                       for t in targets if any(t == c or t.startswith(c + ".") for c in COMPOSITION))
    assert offending == []


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative, so a deep graph cannot overflow the recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_cycle_finder_finds_cycles():
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert _cycles(graph) == [["a", "b", "c"]]


KNOWN_CYCLES: dict[str, str] = {}  # each flips to XPASS, and fails, once its cycle is gone: then drop it


@pytest.mark.parametrize("package", [
    pytest.param(package, marks=pytest.mark.xfail(reason=KNOWN_CYCLES[package], strict=True))
    if package in KNOWN_CYCLES else package for package in PACKAGES])
def test_no_import_cycle_between_the_modules_of_a_package(package):
    assert [c for c in _cycles(_graph()) if all(_top(m) == package for m in c)] == []


def test_no_import_cycle_across_packages():
    assert [c for c in _cycles(_graph()) if len({_top(m) for m in c}) > 1] == []


def test_only_the_assembly_knows_the_api_server():
    """Handlers, auth, admission and the registry are given what they use, never the server object."""
    importers = {m for m, targets in _graph().items() if "mini_kube.apiserver.server" in targets and _top(m) == "apiserver"}
    assert importers <= {"mini_kube.apiserver.assemble"}


def test_no_untyped_extras_and_no_class_swaps():
    """No `config.extra` bag on the server's configuration, and no object's `__class__` replaced (aiohttp is used
    through its public classes)."""
    from mini_kube.apiserver.config import ServerConfig

    assert "extra" not in ServerConfig.__dataclass_fields__
    for module, path in _files().items():
        assert "config.extra" not in path.read_text(), module
        for node in _nodes(path):
            if isinstance(node, ast.Assign):
                assert not any(isinstance(t, ast.Attribute) and t.attr == "__class__" for t in node.targets), module


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def _borrowed_private_names(nodes: tuple[ast.AST, ...], filename: str) -> list[str]:
    """`from <ours> import _x` (relative or `mini_kube.`), and `<name>._x` on a name imported from one of our
    modules (`kubelet_proxy._get`, `mini_kube.network.namespaces._x`), in one file."""
    imported: set[str] = set()
    found: list[str] = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "mini_kube"):
            found += [f"{filename}:{node.lineno}: import {a.name}" for a in node.names if _private(a.name)]
            imported.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(alias.asname or "mini_kube" for alias in node.names if alias.name.startswith("mini_kube."))
    for node in nodes:
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in imported:
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_private_name_finder_finds_them():
    source = ("from .probes import _port, port\nfrom mini_kube.network import namespaces\nimport mini_kube.store.sql\n"
              "from os import _exit\n\nnamespaces._die(); mini_kube.store.sql._rows; namespaces.open(); self._own\n")
    assert sorted(_borrowed_private_names(tuple(ast.walk(ast.parse(source))), "m.py")) == [
        "m.py:1: import _port", "m.py:6: mini_kube.store.sql._rows", "m.py:6: namespaces._die"]


def test_no_module_uses_another_modules_private_names():
    borrowed = [found for path in _files().values()
                for found in _borrowed_private_names(_nodes(path), str(path.relative_to(ROOT)))]
    assert borrowed == []
