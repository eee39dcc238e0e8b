"""mini-kube's packages do not collide with a user's own (issue #10 item 18): a project with its own
`controllers` and `store` packages runs tests with the mini_kube fixtures and client."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_TEST = '''
import controllers
import store
from mini_kube.client import ResourceRef


def test_cluster_and_own_packages(mini_kube):
    assert controllers.MINE and store.MINE
    mini_kube.client.create(ResourceRef("", "v1", "configmaps"), {"metadata": {"name": "x"}}, namespace="default")
    import sys
    assert not [m for m in sys.modules if m.split(".")[0] == "apiserver"]
'''


@pytest.mark.slow
def test_a_project_with_its_own_controllers_package(tmp_path: Path):
    for name in ("controllers", "store"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("MINE = True\n")
    (tmp_path / "test_project.py").write_text(PROJECT_TEST)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_project.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_the_installed_scripts_use_the_mini_kube_names():
    scripts = Path(sys.executable).parent
    for script in ("mini-kube", "kubectl-lite"):
        if (scripts / script).exists():
            assert "mini_kube." in (scripts / script).read_text()
