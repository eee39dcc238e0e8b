"""Cost of prune + default + validate of the reference Agent (run: python tests/crd/bench_agent.py)."""

from __future__ import annotations

import copy
import time

from mini_kube.apiserver.crd.schema_validation import VersionSchema
from mini_kube.apiserver.crd.validation import crd_defaults

CRD = {
    "metadata": {"name": "agents.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "agents", "singular": "agent", "kind": "Agent", "listKind": "AgentList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "required": ["model"], "properties": {
                                   "model": {"type": "string", "enum": ["small", "medium", "large"]},
                                   "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                                   "prompt": {"type": "string", "maxLength": 200}}},
                               "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}}}]}}
AGENT = {"apiVersion": "example.com/v1", "kind": "Agent",
         "metadata": {"name": "a1", "namespace": "demo",
                      "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
         "spec": {"model": "small", "prompt": "hello"}}
RULES = [{"rule": "self.replicas <= 5 || self.model != 'small'", "message": "small agents run at most 5 replicas"},
         {"rule": "!has(self.prompt) || self.prompt.size() > 0"}]


def measure(vs: VersionSchema, n: int = 20000) -> float:
    objs = [copy.deepcopy(AGENT) for _ in range(n)]
    start = time.perf_counter()
    for obj in objs:
        vs.prune(obj)
        vs.apply_defaults(obj)
        errs = vs.validate(obj)
        assert not errs, errs
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    crd_defaults(CRD)
    plain = VersionSchema.for_version(CRD, "v1")
    with_rules = copy.deepcopy(CRD)
    with_rules["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] = RULES
    rules = VersionSchema.for_version(with_rules, "v1")
    start = time.perf_counter()
    VersionSchema.for_version(with_rules, "v1")
    print(f"compile (with 2 rules): {(time.perf_counter() - start) * 1e6:.0f} us")
    for _ in range(2):
        print(f"prune+default+validate: {measure(plain):.1f} us/object; with 2 CEL rules: {measure(rules, 5000):.1f} us/object")


if __name__ == "__main__":
    main()
