"""The type checker runs with the tests (and so in CI): mypy over the whole package, strict on the bottom layers
(machinery, client), configured in pyproject.toml. The source tree's top-level folders are installed as
subpackages of mini_kube (setup.py), so mypy reads them through a tree of links named as they are installed;
its cache (.mypy_cache) keeps a second run to a few seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ["apiserver", "store", "machinery", "client", "controllers", "scheduler", "agent_operator", "proxy", "ccm",
           "clusterdns", "kubectl_lite", "network", "kubelet"]
CACHE = ROOT / ".mypy_cache"


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)


def _installed_layout() -> Path:
    """CACHE/src/mini_kube: links to mini_kube's own files and to each top-level folder (a stable path, so the
    cache stays valid between runs)."""
    package = CACHE / "src" / "mini_kube"
    package.mkdir(parents=True, exist_ok=True)
    wanted = {path.name: path for path in (ROOT / "mini_kube").iterdir() if path.name != "__pycache__"}
    wanted.update({folder: ROOT / folder for folder in FOLDERS})
    for stale in package.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    for name, target in wanted.items():
        _link(package / name, target)
    return package.parent


def test_mypy_finds_no_type_errors():
    src = _installed_layout()
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(CACHE),
         "--python-executable", sys.executable, "-p", "mini_kube"],
        cwd=src, env={**os.environ, "MYPYPATH": str(src)}, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
