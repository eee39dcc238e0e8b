"""Managed fields on an ordinary write: the cost of recording who owns what when one key of a 10-key ConfigMap
changes, as a ratio to deep-copying the same object (the least any write does with it), in one run.

    .venv/bin/python bench/managed_fields_bench.py
"""

from __future__ import annotations

import copy
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.apiserver.patch import SchemaNode, update_managed_fields  # noqa: E402

T1, T2 = "2026-11-22T02:08:47Z", "2026-11-22T02:08:48Z"
RUNS = 5000


def main() -> None:
    schema = SchemaNode.for_builtin("io.k8s.api.core.v1.ConfigMap")
    created = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "c1", "namespace": "demo", "uid": "u-1", "resourceVersion": "1",
                            "creationTimestamp": T1}, "data": {f"k{i}": "v" for i in range(10)}}
    old = update_managed_fields(None, created, "creator", api_version="v1", now=T1, schema=schema)
    new = {**old, "metadata": {**old["metadata"], "resourceVersion": "2"}, "data": {**old["data"], "k3": "w"}}
    write = min(timeit.repeat(lambda: update_managed_fields(old, new, "writer", api_version="v1", now=T2,
                                                            schema=schema), number=RUNS, repeat=3)) / RUNS
    baseline = min(timeit.repeat(lambda: copy.deepcopy(new), number=RUNS, repeat=3)) / RUNS
    print(f"managed fields, one key of ten changed: {write * 1e6:.1f} us per write, "
          f"{write / baseline:.2f}x a deep copy of the object ({baseline * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
