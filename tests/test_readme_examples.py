"""Every example in the README runs as written (issue #10 item 17, issue #25): the fixture example as a test
module and the script outside pytest, the set-up commands as CI and `mini-kube serve` run them, and the first
kubectl session and the Agent operator quick start line by line against the set-up command's `mini-kube serve`,
in a network namespace of their own (so its default port, 6443, and `localhost:8081` are free, whatever else
runs on the machine), with a fresh HOME and a PATH without the venv: as a newcomer types them."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
MARK = "::readme-line::"


def _blocks(language: str, section: str = "") -> list[str]:
    text = README.read_text()
    if section:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return [body for lang, body in BLOCK.findall(text) if lang == language]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_python_examples_run_as_written(tmp_path):
    """In a directory with the checkout's pytest settings (pyproject.toml), as the README has them run."""
    fixture_example, outside_example = _blocks("python")
    (tmp_path / "pyproject.toml").symlink_to(ROOT / "pyproject.toml")
    (tmp_path / "test_example.py").write_text(fixture_example)
    (tmp_path / "outside.py").write_text(outside_example)
    env = {"PATH": "/usr/bin:/bin:" + str(Path(sys.executable).parent), "PYTHONPATH": str(ROOT),
           "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "pytest", "test_example.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=env)  # `.venv/bin/pytest test_example.py`
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 passed" in done.stdout
    done = subprocess.run([sys.executable, "outside.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("["), done.stdout


def test_the_test_command_is_what_ci_runs():
    serve, tests = (block.strip() for block in _blocks("sh", "Set-up: two commands"))
    printed = subprocess.run([str(ROOT / ".ci" / "run"), "--print"], capture_output=True, text=True, timeout=30)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.strip() == tests  # the README's block is the only copy; .ci/run runs it
    build_ash = ".venv/bin/python -m mini_kube.build_ash"  # busybox's ash, for the busybox and alpine images
    assert tests.startswith(f"python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && {build_ash} && "
                            ".venv/bin/pytest")
    assert serve.startswith(f"python3 -m venv .venv && .venv/bin/pip install -e . && {build_ash} && ")


def _serve_command() -> list[str]:
    serve = _blocks("sh", "Set-up: two commands")[0].strip()
    command = shlex.split(serve.split("&&")[-1].strip())
    assert command == [".venv/bin/mini-kube", "serve"]
    return command


@pytest.mark.slow
def test_the_serve_command_serves(tmp_path):
    command = _serve_command()
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", *command[1:], "--data-dir", str(tmp_path),
                             "--port", str(_free_port())], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert "ready at https://" in proc.stdout.readline()
        assert (tmp_path / "kubeconfig").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def test_scale_out_recipe_has_its_test():
    recipe = (ROOT / "docs" / "scale-out.md").read_text()
    assert "--etcd-servers" in recipe and "cp -r" in recipe and "--join" in recipe
    assert "tests/etcd/test_readme_scale_out.py" in README.read_text()
    assert (ROOT / "tests" / "etcd" / "test_readme_scale_out.py").exists()  # runs the recipe's lines as written


def _checkout(tmp_path: Path) -> Path:
    """A directory laid out as the README's reader has it: the checkout's `deploy/` and a `.venv` (this
    interpreter's environment, in which mini-kube is installed)."""
    checkout = tmp_path / "checkout"
    (checkout / ".venv" / "bin").mkdir(parents=True)
    (checkout / "deploy").symlink_to(ROOT / "deploy")
    script = Path(sys.executable).parent / "mini-kube"
    wrapper = checkout / ".venv" / "bin" / "mini-kube"
    if script.exists():
        wrapper.symlink_to(script)
    else:
        wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m mini_kube.cli \"$@\"\n")
        wrapper.chmod(0o755)
    return checkout


class Newcomer:
    """`mini-kube serve` as the set-up command runs it, in a network namespace of its own, and a shell that runs
    README blocks in that namespace, one line after the other, recording each line's output and exit status."""

    def __init__(self, tmp_path: Path) -> None:
        self.checkout = _checkout(tmp_path)
        home = tmp_path / "home"
        home.mkdir()
        self.env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
        serve = " ".join(_serve_command())
        self.log = (tmp_path / "serve.log").open("w")
        self.server = subprocess.Popen(["unshare", "--net", "--", "bash", "-c", f"ip link set lo up && exec {serve}"],
                                       cwd=self.checkout, env=self.env, stdout=subprocess.PIPE, stderr=self.log,
                                       text=True)
        ready = self.server.stdout.readline()
        if "ready at https://127.0.0.1:6443" not in ready:
            self.close()
            raise AssertionError(f"serve did not start: {ready!r}\n{Path(self.log.name).read_text()[-3000:]}")

    def run(self, block: str, timeout: float = 300) -> list[tuple[str, int, str]]:
        """Each command line of `block` (comments and blank lines skipped), its exit status and its output."""
        lines = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        script = "".join(f"echo {MARK}{i}\n{line}\necho {MARK}status $?\n" for i, line in enumerate(lines))
        proc = subprocess.Popen(["nsenter", f"--net=/proc/{self.server.pid}/ns/net", "--", "bash", "-c", script],
                                cwd=self.checkout, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
        finally:
            with contextlib.suppress(ProcessLookupError):  # what a failed block left in the background
                os.killpg(proc.pid, signal.SIGKILL)
        results = []
        for chunk in output.split(f"{MARK}")[1:]:
            head, _, body = chunk.partition("\n")
            if head.startswith("status "):
                index, text = results[-1][0], results[-1][2]
                results[-1] = (index, int(head.split()[1]), text)
            else:
                results.append((lines[int(head)], -1, body))
        if results and results[-1][1] == -1 or len(results) < len(lines):
            raise AssertionError(f"the block stopped after {len(results)} of {len(lines)} lines:\n{output[-3000:]}")
        return results

    def close(self) -> None:
        if self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait(10)
        self.log.close()


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory):
    from mini_kube.network.namespaces import can_make_namespaces

    possible, why = can_make_namespaces()
    if not possible:
        pytest.skip(f"the walkthroughs run Pods as processes, in a network namespace of their own: {why}")
    reader = Newcomer(tmp_path_factory.mktemp("newcomer"))
    yield reader
    reader.close()


def _by_command(results: list[tuple[str, int, str]]) -> dict[str, str]:
    failed = [(line, status, output) for line, status, output in results if status != 0]
    assert not failed, "\n".join(f"$ {line}\n(exit {status})\n{output}" for line, status, output in failed)
    return {line.split("#")[0].strip() if not line.startswith("LB=") else line: output
            for line, _, output in results}


@pytest.mark.slow
def test_the_first_kubectl_session_runs_as_written(newcomer):
    out = _by_command(newcomer.run(_blocks("sh", "A first session with kubectl")[0]))
    assert re.search(r"^mini-kube\s+Ready", out["kubectl get nodes"], re.M), out["kubectl get nodes"]
    assert 'deployment "web" successfully rolled out' in out["kubectl rollout status deployment/web"]
    pods = set(re.findall(r"^(web-\S+)\s+1/1\s+Running", out["kubectl get pods -o wide"], re.M))
    assert len(pods) == 2, out["kubectl get pods -o wide"]
    answers = next(text for line, text in out.items() if line.startswith("for i in"))
    assert set(answers.split()) == pods, answers  # both Pods answer through the load balancer
    trace = next(text for line, text in out.items() if "mini-kube trace" in line)
    assert re.search(r"^load balancer\s+127\.", trace, re.M) and re.search(r"^answer\s+HTTP/1.1 200 OK: web-",
                                                                           trace, re.M), trace
    exec_out = next(text for line, text in out.items() if line.startswith("kubectl exec"))
    assert re.fullmatch(r"hello from web-\S+\n", exec_out), exec_out
    forwarded = next(text for line, text in out.items() if line.startswith("curl -s --retry"))
    assert forwarded.strip().splitlines()[-1] in pods, forwarded


@pytest.mark.slow
def test_the_agent_operator_quick_start_runs_as_written(newcomer):
    out = _by_command(newcomer.run(_blocks("sh", "The Agent operator in five minutes")[0]))
    agents = out["kubectl get agents"]
    assert re.search(r"^hello\s+python-agent\s+True", agents, re.M), agents
    assert re.search(r"^support\s+python-agent\s+True", agents, re.M), agents
    answer = json.loads(next(text for line, text in out.items() if line.startswith("curl -s")))
    assert (answer["agent"], answer["config"]["greeting"]) == ("support", "welcome to support"), answer
    assert "successfully rolled out" in out["kubectl rollout status deployment/support"]
