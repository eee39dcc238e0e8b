"""An image's root filesystem (issue #27): a mapped image's own root directory (read-only: the container's
writes are its own), as an overlay or, where overlayfs cannot take it, a copy; and the copy of stacked layers
honouring whiteouts and opaque directories as overlayfs does."""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mini_kube.kubelet.containerinit import copy_layers
from mini_kube.kubelet.imagestore.unpack import unpack

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, process_cluster_or_skip, status_of
from .image_archives import Entry, host_program_entries, layer_tar


def tree(root: Path) -> dict[str, str]:
    found = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory) / name
            relative = str(path.relative_to(root))
            found[relative] = (f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir()
                               else path.read_text())
    return found


def test_copied_layers_look_as_overlayfs_shows_them(tmp_path):
    lower, upper, root = tmp_path / "lower", tmp_path / "upper", tmp_path / "root"
    for directory in (lower, upper, root):
        directory.mkdir()
    unpack(io.BytesIO(layer_tar([Entry("etc/keep", b"1"), Entry("etc/gone", b"2"), Entry("var/old", b"3"),
                                 Entry("lib", link="usr/lib"), Entry("usr/lib/x", b"4")])), str(lower))
    unpack(io.BytesIO(layer_tar([Entry("etc/.wh.gone"), Entry("var/.wh..wh..opq"), Entry("var/new", b"5"),
                                 Entry("lib/y", b"6"), Entry("etc/keep", b"7")])), str(upper))
    copy_layers((str(upper), str(lower)), str(root))
    assert tree(root) == {"etc": "dir", "etc/keep": "7", "var": "dir", "var/new": "5", "lib": "dir", "lib/y": "6",
                          "usr": "dir", "usr/lib": "dir", "usr/lib/x": "4"}


@pytest.fixture(scope="module")
def roots(tmp_path_factory) -> Path:
    """Two copies of a small root (the host's dash and ls with their libraries), one at a path overlayfs's
    options cannot hold (a comma), and the image map naming them."""
    work = tmp_path_factory.mktemp("roots")
    for name in ("rootfs", "root,fs"):
        (work / name).mkdir()
        unpack(io.BytesIO(layer_tar(host_program_entries("dash", "ls") + [Entry("bin/sh", link="dash"),
                                                                        Entry("data/file", b"mine\n")])),
               str(work / name))
    (work / "hostile").mkdir()  # its /etc a chain of 41 links to a directory of the host's
    os.symlink("l1", work / "hostile" / "etc")
    for i in range(1, 41):
        os.symlink(f"l{i + 1}" if i < 40 else f"{work}/escaped", work / "hostile" / f"l{i}")
    (work / "escaped").mkdir()
    (work / "images.yaml").write_text('images:\n- image: rooted:overlay\n  root: rootfs\n  command: [/bin/sh, -c]\n'
                                      '- image: rooted:copy\n  root: "root,fs"\n  command: [/bin/sh, -c]\n'
                                      '  workingDir: /data\n- image: rooted:hostile\n  root: hostile\n'
                                      '  command: [/bin/sh]\n')
    return work


@pytest.fixture(scope="module")
def kube(roots) -> Iterator:
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=1, node_runtime="process", image_map=str(roots / "images.yaml")) as cluster:
        yield cluster


@pytest.mark.parametrize("image", ["rooted:overlay", "rooted:copy"])
def test_mapped_root_is_the_containers_and_stays_unchanged(kube, roots, image):
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "run", "r", f"--image={image}", "--restart=Never", "--",
            "ls /; echo changed > /data/file; echo new > /data/new; pwd")
    eventually(lambda: status_of(kube, ns, "r").get("phase") in ("Succeeded", "Failed"), timeout=60)
    logs = kubectl(kube, "-n", ns, "logs", "r").stdout.split()
    assert status_of(kube, ns, "r")["phase"] == "Succeeded", logs
    assert set(logs[:-1]) == {"bin", "data", "dev", "etc", "lib", "lib64", "proc", "sys", "var"}, logs
    assert logs[-1] == ("/data" if image == "rooted:copy" else "/")
    for name in ("rootfs", "root,fs"):  # the container's writes were its own
        assert (roots / name / "data" / "file").read_text() == "mine\n"
        assert not (roots / name / "data" / "new").exists()
    assert subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout.count(
        str(roots)) == 0  # nothing of it mounted on the host


def test_links_of_an_image_never_lead_the_runtime_out_of_its_root(kube, roots):
    """The container's /etc/hosts is made where the image's /etc leads: never on the host's disk."""
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "run", "h", "--image=rooted:hostile", "--restart=Never")
    eventually(lambda: status_of(kube, ns, "h").get("phase") in ("Succeeded", "Failed"), timeout=60)
    assert status_of(kube, ns, "h")["phase"] == "Failed"
    assert list((roots / "escaped").iterdir()) == []
