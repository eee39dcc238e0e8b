"""What the CRD API tests share: the reference's manifests (restated), more CRDs, and a kubectl wrapper.

`Cluster.kubectl(...)` uses a private discovery cache, so no cached discovery from another cluster (ports
are reused) can hide a resource that came or went.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_kube.testing import MiniKube
from tests.helpers import kubectl

AGENT_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: agents.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: agents
    singular: agent
    kind: Agent
    listKind: AgentList
    shortNames: [ag]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - {name: Model, type: string, jsonPath: .spec.model}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [model]
            properties:
              model: {type: string, enum: [small, medium, large]}
              replicas: {type: integer, minimum: 1, maximum: 10, default: 1}
              prompt: {type: string, maxLength: 200}
          status:
            type: object
            properties:
              phase: {type: string}
"""

AGENT = """\
apiVersion: example.com/v1
kind: Agent
metadata:
  name: a1
  namespace: demo
spec:
  model: small
  prompt: hello
"""

AGENT_BAD = """\
apiVersion: example.com/v1
kind: Agent
metadata:
  name: bad1
  namespace: demo
spec:
  model: huge
  replicas: 50
  unknownField: 1
"""

AGENT_BAD_SCHEMA = """\
apiVersion: example.com/v1
kind: Agent
metadata:
  name: bad2
  namespace: demo
spec:
  model: huge
  replicas: 50
  prompt: 42
"""

# Two served versions (v1 stored), status and scale subresources, a selectable field, CEL rules.
WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.io
spec:
  group: test.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [shop]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas,
              labelSelectorPath: .status.selector}
    selectableFields: [{jsonPath: .spec.color}]
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Size, type: number, jsonPath: .spec.size, priority: 1}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= 5 || self.color == 'red'"
              messageExpression: "'too many replicas for ' + self.color"
            - rule: "!has(oldSelf.color) || self.color == oldSelf.color"
              message: color is immutable
            properties:
              color: {type: string, default: blue}
              replicas: {type: integer, default: 1}
              size: {type: number}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
              phase: {type: string}
  - name: v1beta1
    served: true
    storage: false
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              replicas: {type: integer}
              legacy: {type: string, default: old}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"""


class Cluster:
    """A hermetic server and kubectl with its own discovery cache."""

    def __init__(self, kube: MiniKube, cache_dir: Path) -> None:
        self.kube = kube
        self.client = kube.client
        self.cache_dir = cache_dir

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        return kubectl(self.kube, f"--cache-dir={self.cache_dir}", *args, input=input, check=check)

    def forget_discovery(self) -> None:
        """Drop kubectl's cached discovery (kubectl trusts it for hours, as with any server)."""
        shutil.rmtree(self.cache_dir, ignore_errors=True)

    def apply(self, manifest: str) -> str:
        return self.kubectl("apply", "-f", "-", input=manifest).stdout

    def get(self, path: str) -> tuple[int, Any]:
        """GET a raw API path: (status, decoded body)."""
        from mini_kube.client import ApiError

        try:
            return 200, self.client.request("GET", path)
        except ApiError as exc:
            return exc.status, exc.body


def eventually(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    """Poll `check` until it returns something truthy (or fail)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            assert result, f"condition not met within {timeout}s"
            return result
        time.sleep(0.02)
