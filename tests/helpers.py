"""Shared test helpers: running real kubectl against a hermetic cluster."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")
REFERENCE = Path(__file__).resolve().parent / "fixtures" / "reference"
"""The real kube-apiserver's answers the tests compare with (the files they read, copied from the captures)."""


def kubectl_binary(version: str = "") -> str:
    found = shutil.which("kubectl")
    if not found:
        pytest.skip("kubectl is not installed")
    if not version:
        return found
    versioned = Path(os.path.realpath(found)).parent / f"kubectl.{version}"
    if not versioned.exists():
        pytest.skip(f"kubectl {version} is not installed")
    return str(versioned)


def kubectl(kube, *args: str, input: str | None = None, check: bool = True, version: str = "",
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run real kubectl against `kube` and return the finished process (stdout/stderr as text)."""
    command = [kubectl_binary(version), "--kubeconfig", kube.kubeconfig, *args]
    result = subprocess.run(command, input=input, capture_output=True, text=True, timeout=60,
                            env={**os.environ, **(env or {})})
    if check and result.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result


def reference_file(relative: str) -> Path:
    """A capture from the real kube-apiserver, carried in tests/fixtures/reference."""
    path = REFERENCE / relative
    assert path.is_file(), f"reference capture {relative} is missing from {REFERENCE}"
    return path


def eventually(check: Callable[[], T], timeout: float = 10.0, interval: float = 0.02,
               explain: Callable[[], str] | None = None) -> T:
    """Call `check` until it returns something true, and return that; fail the test after `timeout` seconds
    (with what `explain()` says, when given: the state that did not converge)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError("condition not met in time" + (f"\n{explain()}" if explain else ""))
        time.sleep(interval)


def new_namespace(kube, prefix: str = "t") -> str:
    """A fresh namespace `<prefix>-<8 hex>` in the cluster `kube`; its name."""
    from mini_kube.client import ResourceRef

    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    kube.client.create(ResourceRef("", "v1", "namespaces", namespaced=False), {"metadata": {"name": name}})
    return name
