"""A container's root as kubelet/containerinit.py builds it: its /tmp is its own, except for the host directories
the kubelet keeps visible there (mini-kube and its interpreter, when installed under /tmp, as in a checkout
there: the stand-in images run from them)."""

from __future__ import annotations

import marshal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from mini_kube.kubelet.runtime import process

from .conftest import process_cluster_or_skip


@pytest.fixture
def host_tmp_dirs():
    """Two directories in the host's /tmp, each with a file: one to keep, one that must stay hidden."""
    made = [Path("/tmp") / f"mk-root-{uuid.uuid4().hex}" for _ in range(2)]
    for path in made:
        path.mkdir()
        (path / "file").write_text(path.name)
    yield made
    for path in made:
        (path / "file").unlink()
        path.rmdir()


def run_container(tmp_path: Path, argv: list[str], keep: list[str],
                  hide: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    spec = {"root": str(tmp_path / "root"), "scratch": str(tmp_path / "scratch"), "argv": argv,
            "env": {"PATH": "/usr/bin:/bin"}, "keep": keep, "hide": list(hide)}
    for key in ("root", "scratch"):
        Path(spec[key]).mkdir()
    (tmp_path / "spec").write_bytes(marshal.dumps(spec))
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "--", sys.executable, "-I", "-S",
                           str(process.INIT), str(tmp_path / "spec")], capture_output=True, text=True,
                          timeout=30)


def test_kept_directories_stay_visible_and_read_only_under_the_containers_tmp(tmp_path, host_tmp_dirs):
    process_cluster_or_skip()
    kept, hidden = host_tmp_dirs
    script = (f"cat {kept}/file; echo; test -e {hidden}/file && echo hidden-seen; "
              f"touch {kept}/new 2>/dev/null && echo written; touch /tmp/own && echo tmp-writable")
    done = run_container(tmp_path, ["sh", "-c", script], keep=[str(kept), "/not/under/tmp"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [kept.name, "tmp-writable"]
    assert not (kept / "new").exists()


def test_the_kubelet_keeps_its_interpreter_and_its_own_code():
    root = str(Path(process.__file__).resolve().parents[2])  # the directory holding the mini-kube packages
    assert root in process.KEEP
    assert any(Path(sys.prefix).resolve() == Path(k) for k in process.KEEP)


def test_a_hidden_directory_inside_a_kept_one_is_empty_and_the_hosts_root_is_gone(tmp_path, host_tmp_dirs):
    """The server's data dir (or a node's root dir) inside mini-kube's installation stays out of sight, and
    after pivot_root nothing of the host's root is left to climb back to (a chroot would leave it)."""
    process_cluster_or_skip()
    kept, _ = host_tmp_dirs
    secret = kept / "data"
    secret.mkdir()
    (secret / "ca.key").write_text("key")
    try:
        script = (f"cat {kept}/file; echo; ls -A {secret} | grep -c .; "
                  "cat /proc/self/mountinfo | awk '$5 == \"/\" {print $4}'")
        done = run_container(tmp_path, ["sh", "-c", script], keep=[str(kept)], hide=(str(secret),))
        assert done.returncode == 0, done.stderr
        lines = done.stdout.split()
        assert lines[:2] == [kept.name, "0"]
        assert lines[2:] == [str(tmp_path / "root")]  # the root mount is the container's own directory
    finally:
        (secret / "ca.key").unlink()
        secret.rmdir()
