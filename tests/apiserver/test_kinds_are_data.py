"""A kind is data: each built-in row carries its strategy, validator and printer, the generic registry never
names a kind, subresources are registry-level REST objects, and admission reaches them without the HTTP layer.
Read from the source with `ast` (no server)."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

from mini_kube.apiserver.registry.kinds import BuiltinPrinter, builtin_resources
from mini_kube.apiserver.registry.strategy import Strategy
from mini_kube.apiserver.resources import builtin_rows
from mini_kube.apiserver.validation.kinds import RULES, Rules

APISERVER = Path(__file__).resolve().parents[2] / "apiserver"
GENERIC = ["registry/generic.py", "registry/cache.py", "registry/deletion.py", "registry/strategy.py",
           "registry/validating.py", "registry/defaulting.py", "registry/setup.py", "registry/fieldschema.py",
           "registry/rest/__init__.py", "registry/rest/status.py", "registry/rest/scale.py",
           "handlers/subresources.py", "http/tables.py", "crd/serving.py"]
# the Scale these read and write is autoscaling/v1's (a subresource's kind, not a branch on the resource's)
SPEAKS = {module: {"autoscaling"} for module in ("registry/rest/scale.py", "handlers/subresources.py")}


def _strings(path: Path) -> set[str]:
    return {node.value for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def _imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, relative ones resolved against the apiserver package (function-level too)."""
    package = path.relative_to(APISERVER).parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join((*base, node.module)) if node.module else ".".join(base)
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names)
            elif node.module:
                found.add(node.module.removeprefix("mini_kube.apiserver."))
        elif isinstance(node, ast.Import):
            found.update(alias.name.removeprefix("mini_kube.apiserver.") for alias in node.names)
    return found


def test_the_generic_registry_names_no_kind():
    rows = builtin_rows()
    names = {r.kind for r in rows} | {r.plural for r in rows} | {r.group for r in rows if r.group}
    names |= {"Namespace", "namespaces"}
    for module in GENERIC:
        named = _strings(APISERVER / module) & names - SPEAKS.get(module, set())
        assert not named, f"{module} names kinds: {sorted(named)}"


def test_every_builtin_row_carries_its_strategy_validator_and_printer():
    rows = builtin_resources()
    for row in rows:
        assert isinstance(row.strategy, Strategy), row.group_resource
        assert isinstance(row.validator, Rules), row.group_resource
        assert isinstance(row.printer, BuiltinPrinter), row.group_resource
    by_key = {(r.group, r.version, r.plural): r for r in rows}
    namespaces, pods = by_key[("", "v1", "namespaces")], by_key[("", "v1", "pods")]
    assert namespaces.strategy.waits_for_finalization({}) and not pods.strategy.waits_for_finalization({})
    assert pods.strategy.returns_deleted_object and not namespaces.strategy.returns_deleted_object
    deployments = by_key[("apps", "v1", "deployments")]
    assert deployments.strategy.generation and "labels" not in deployments.strategy.status_metadata
    assert by_key[("", "v1", "configmaps")].validator is RULES[("", "ConfigMap")]
    # both versions of HorizontalPodAutoscalers share one strategy (one storage), each server its own
    assert by_key[("autoscaling", "v1", "horizontalpodautoscalers")].strategy is \
        by_key[("autoscaling", "v2", "horizontalpodautoscalers")].strategy
    assert builtin_resources()[0].strategy is not rows[0].strategy


def test_a_builtin_row_prints_with_its_kinds_printer():
    rows = {r.plural: r for r in builtin_resources()}
    now = datetime.now(UTC)
    pods = rows["pods"].printer.table([], now)
    assert [c["name"] for c in pods["columnDefinitions"]][:4] == ["Name", "Ready", "Status", "Restarts"]
    assert pods["rows"] == []
    roles = rows["roles"].printer.table([], now)  # no printer of its own: the default one, rows null when empty
    assert [c["name"] for c in roles["columnDefinitions"]] == ["Name", "Created At"]
    assert roles["rows"] is None


def test_subresources_are_registry_rest_objects_that_handlers_only_call():
    for name in ("eviction", "binding", "scale", "status"):
        assert (APISERVER / "registry" / "rest" / f"{name}.py").exists(), name
    for handler in ("pod_eviction", "pod_binding", "subresources"):
        imported = _imported_modules(APISERVER / "handlers" / f"{handler}.py")
        assert any(m.startswith("registry.rest") for m in imported), handler
        assert "registry.generic.Registry" not in imported, handler


def test_admission_and_the_registry_never_import_handlers():
    for package in ("admission", "registry"):
        for path in (APISERVER / package).rglob("*.py"):
            imported = _imported_modules(path)
            assert not any(m.startswith("handlers") for m in imported), f"{path.name} imports {sorted(imported)}"
