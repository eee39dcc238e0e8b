"""Layers are unpacked safely (issue #27, part 3): nothing is written outside the layer's directory, whatever
the archive says (`..`, a path through a link, a hard link or relative link leaving the root), device nodes
are refused, setuid bits dropped, sizes bounded; absolute links are kept (they are read inside the container's
root) and whiteouts become overlayfs's. Also archives whose blobs do not match their digests are refused."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest
from mini_kube.kubelet.imagestore.store import ImageStore, StoreError
from mini_kube.kubelet.imagestore.unpack import LayerError, Limits, unpack

from .image_archives import Entry, docker_archive, image_config, layer_tar, oci_archive


def unpacked(tmp_path: Path, entries: list[Entry], limits: Limits | None = None, name: str = "layer") -> Path:
    root = tmp_path / name
    root.mkdir()
    unpack(io.BytesIO(layer_tar(entries)), str(root), limits)
    return root


@pytest.mark.parametrize("entries,error", [
    ([Entry("../escaped", b"x")], "a path leaving the layer"),
    ([Entry("a/../../escaped", b"x")], "a path leaving the layer"),
    ([Entry("etc", link="/etc"), Entry("etc/passwd", b"x")], "a path through a link"),
    ([Entry("up", link="../../.."), Entry("up/x", b"x")], "leaves the root"),
    ([Entry("x", hard="../../etc/passwd")], "a path leaving the layer"),
    ([Entry("x", hard="/etc/passwd")], "not a file of this layer"),
    ([Entry("null", device=True)], "device nodes"),
])
def test_entries_that_would_leave_the_layer_are_refused(tmp_path, entries, error):
    outside = tmp_path / "escaped"
    with pytest.raises(LayerError) as caught:
        unpacked(tmp_path, entries)
    assert error in str(caught.value)
    assert not outside.exists()


def test_links_whiteouts_and_modes(tmp_path):
    root = unpacked(tmp_path, [Entry("bin", directory=True, mode=0o755),
                               Entry("bin/busybox", b"\x7fELF", mode=0o4755),
                               Entry("bin/sh", link="/bin/busybox"),  # absolute: read inside the container
                               Entry("bin/ash", hard="bin/busybox"),
                               Entry("etc/.wh.gone"), Entry("var/.wh..wh..opq")])
    assert os.readlink(root / "bin" / "sh") == "/bin/busybox"
    assert stat.S_IMODE((root / "bin" / "busybox").stat().st_mode) == 0o755  # setuid dropped
    assert (root / "bin" / "ash").stat().st_ino == (root / "bin" / "busybox").stat().st_ino
    whiteout = (root / "etc" / "gone").lstat()
    assert stat.S_ISCHR(whiteout.st_mode) and whiteout.st_rdev == 0
    assert os.getxattr(root / "var", "trusted.overlay.opaque") == b"y"


def test_sizes_are_bounded(tmp_path):
    with pytest.raises(LayerError, match="bytes unpacked"):
        unpacked(tmp_path, [Entry("big", b"x" * 2000)], Limits(max_bytes=1000))
    with pytest.raises(LayerError, match="entries"):
        unpacked(tmp_path, [Entry(f"f{i}", b"") for i in range(5)], Limits(max_entries=3), name="many")


def test_blobs_must_match_their_digests(tmp_path):
    layer = layer_tar([Entry("a", b"a")])
    config = image_config([layer_tar([Entry("a", b"b")])])  # a config naming another layer's diffID
    store = ImageStore(tmp_path / "images")
    with pytest.raises(StoreError, match="the config says"):
        store.load(str(docker_archive(tmp_path / "bad.tar", [layer], config, ["bad:1"])))
    assert store.names() == {}
    assert [p.name for p in (tmp_path / "images" / "layers").iterdir()] == []  # nothing half-loaded
    nameless = oci_archive(tmp_path / "nameless.tar", [layer], image_config([layer]))
    with pytest.raises(StoreError, match="give one with --name"):
        store.load(str(nameless))
    assert store.load(str(nameless), name="named:1")[0][1] == ["docker.io/library/named:1"]


def test_docker_save_links_between_layer_copies(tmp_path):
    """`docker save` (before 25) writes a layer two images share once, the other copy a link to it."""
    import tarfile

    layer = layer_tar([Entry("a", b"a")])
    config = image_config([layer])
    plain = docker_archive(tmp_path / "plain.tar", [layer], config, ["x:1"])
    linked = tmp_path / "linked.tar"
    with tarfile.open(plain) as source, tarfile.open(linked, "w") as out:
        for member in source.getmembers():
            if member.name != "manifest.json":
                out.addfile(member, source.extractfile(member))
        link = tarfile.TarInfo("copy/layer.tar")
        link.type, link.linkname = tarfile.SYMTYPE, f"../{layer_path(layer)}"
        out.addfile(link)
        manifest = json.dumps([{"Config": config_path(config), "RepoTags": ["x:2"],
                                "Layers": ["copy/layer.tar"]}]).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(manifest)
        out.addfile(info, io.BytesIO(manifest))
    store = ImageStore(tmp_path / "images")
    assert store.load(str(linked))[0][1] == ["docker.io/library/x:2"]


def layer_path(layer: bytes) -> str:
    import hashlib

    return f"{hashlib.sha256(layer).hexdigest()}/layer.tar"


def config_path(config: bytes) -> str:
    import hashlib

    return f"{hashlib.sha256(config).hexdigest()}.json"
