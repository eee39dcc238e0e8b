"""The container init's supervisor moves the command's process into the container's cgroups while that process
builds the container's root (kubelet/containerinit.py): through the `cgroup.procs` files it opened before the
fork, since the child's pivot_root, in the mount namespace the two share, takes the host's paths away from both
(a supervisor that opened them after found them gone: `error during container init: cgroup ...: No such file or
directory`). The child execs the command only on the supervisor's word that it is in them."""

from __future__ import annotations

import os
from pathlib import Path

from mini_kube.kubelet import containerinit


def procs_files(tmp_path: Path) -> list[Path]:
    files = [tmp_path / "host" / controller / "pod" / "c" / "cgroup.procs" for controller in ("memory", "cpu")]
    for path in files:
        path.parent.mkdir(parents=True)
        path.write_text("")
    return files


def told(opened: list, child: int) -> bytes:
    said, tell = os.pipe()
    containerinit.join_for(child, opened, tell)
    try:
        return os.read(said, 4096)
    finally:
        os.close(said)


def test_the_command_is_moved_through_the_files_opened_before_its_root_replaced_the_hosts(tmp_path):
    files = procs_files(tmp_path)
    opened = containerinit.open_cgroups([str(p) for p in files])
    (tmp_path / "host").rename(tmp_path / "gone")  # as the child's pivot_root: the paths lead nowhere now
    assert told(opened, 4321) == containerinit.JOINED
    assert [(tmp_path / "gone" / p.relative_to(tmp_path / "host")).read_text() for p in files] == ["4321", "4321"]


def test_a_cgroup_that_cannot_be_joined_is_what_the_child_is_told(tmp_path):
    files = procs_files(tmp_path)
    opened = containerinit.open_cgroups([str(files[0]), str(tmp_path / "missing" / "cgroup.procs")])
    said = told(opened, 4321)
    assert said == f"cgroup {tmp_path / 'missing'}: No such file or directory".encode()
    assert files[0].read_text() == "4321"
