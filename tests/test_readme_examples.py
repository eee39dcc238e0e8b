"""Every example in the README runs (issue #10 item 17): the Python blocks as a test module with the installed
pytest plugin, the set-up commands as CI and `mini-kube serve` run them, the scale-out recipe through its test."""

from __future__ import annotations

import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall((ROOT / "README.md").read_text()) if lang == language]


def test_python_examples_run_as_a_test_module(tmp_path):
    module = tmp_path / "test_readme_example.py"
    fixture_example, outside_example = _blocks("python")
    module.write_text(fixture_example + "\n\ndef test_outside_pytest():\n" +
                      "".join(f"    {line}\n" for line in outside_example.splitlines()))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           str(module)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin:" + str(Path(sys.executable).parent), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout[-3000:]
    assert "3 passed" in done.stdout


def test_set_up_commands_are_what_ci_and_serve_run(tmp_path):
    serve, tests = (block.strip() for block in _blocks("sh")[:2])
    assert tests.splitlines()[-1] in (ROOT / ".ci" / "run").read_text()
    command = shlex.split(serve.split("&&")[-1].strip())
    assert command[:2] == [".venv/bin/mini-kube", "serve"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", *command[1:], "--data-dir", str(tmp_path),
                             "--port", str(port)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert "ready at https://" in proc.stdout.readline()
        assert (tmp_path / "kubeconfig").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def test_scale_out_recipe_has_its_test():
    recipe = _blocks("sh")[2]
    assert "--etcd-servers" in recipe and "cp -r" in recipe and "--join" in recipe
    assert (ROOT / "tests" / "etcd" / "test_readme_scale_out.py").exists()  # runs the recipe's lines as written
