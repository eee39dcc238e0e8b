"""Image archives built by the tests themselves: layers as tar streams of (path, content) entries, written as
`docker save` writes them (manifest.json) or as an OCI image layout; and a small shell image made of the host's
`dash`, coreutils and the libraries they link (found with ldd)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Entry:
    """One entry of a layer: a file (`data`), directory (`directory`), symlink or hard link (`link`/`hard`),
    or a device node (`device`, for tests that must see one refused)."""

    path: str
    data: bytes = b""
    mode: int = 0o644
    directory: bool = False
    link: str = ""
    hard: str = ""
    device: bool = False
    uid: int = 0
    gid: int = 0


def layer_tar(entries: list[Entry]) -> bytes:
    """The uncompressed tar stream of a layer."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.path)
            info.mode, info.uid, info.gid, info.mtime = entry.mode, entry.uid, entry.gid, 1_700_000_000
            if entry.directory:
                info.type = tarfile.DIRTYPE
            elif entry.link:
                info.type, info.linkname = tarfile.SYMTYPE, entry.link
            elif entry.hard:
                info.type, info.linkname = tarfile.LNKTYPE, entry.hard
            elif entry.device:
                info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
            else:
                info.size = len(entry.data)
                tar.addfile(info, io.BytesIO(entry.data))
                continue
            tar.addfile(info)
    return out.getvalue()


def sha256(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def image_config(layers: list[bytes], **config: object) -> bytes:
    """An image config (Entrypoint, Cmd, Env, WorkingDir, User, ExposedPorts as given) over these layers."""
    return json.dumps({"architecture": "amd64", "os": "linux", "created": "2026-11-28T00:00:00Z",
                       "config": config, "rootfs": {"type": "layers", "diff_ids": [sha256(t) for t in layers]}},
                      sort_keys=True).encode()


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 1_700_000_000
    tar.addfile(info, io.BytesIO(data))


def docker_archive(path: Path, layers: list[bytes], config: bytes, tags: list[str]) -> Path:
    """A `docker save` archive (legacy layout: <id>/layer.tar, <id>.json)."""
    with tarfile.open(path, "w") as tar:
        config_name = f"{hashlib.sha256(config).hexdigest()}.json"
        _add(tar, config_name, config)
        names = []
        for layer in layers:
            name = f"{hashlib.sha256(layer).hexdigest()}/layer.tar"
            _add(tar, name, layer)
            names.append(name)
        _add(tar, "manifest.json", json.dumps([{"Config": config_name, "RepoTags": tags, "Layers": names}]).encode())
    return path


def oci_archive(path: Path, layers: list[bytes], config: bytes, name: str = "", compress: bool = True) -> Path:
    """An OCI image layout in a tar, gzip-compressed layers, the name in the index's annotations."""
    blobs = {}
    descriptors = []
    for layer in layers:
        blob = gzip.compress(layer, mtime=0) if compress else layer
        blobs[sha256(blob)] = blob
        descriptors.append({"mediaType": "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if compress else ""),
                            "digest": sha256(blob), "size": len(blob)})
    blobs[sha256(config)] = config
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                      "digest": sha256(config), "size": len(config)},
                           "layers": descriptors}).encode()
    blobs[sha256(manifest)] = manifest
    annotations = {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}
    index = {"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                                                "digest": sha256(manifest), "size": len(manifest),
                                                **({"annotations": annotations} if name else {})}]}
    with tarfile.open(path, "w") as tar:
        _add(tar, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        _add(tar, "index.json", json.dumps(index).encode())
        for digest, blob in blobs.items():
            _add(tar, f"blobs/sha256/{digest[7:]}", blob)
    return path


def host_program_entries(*programs: str) -> list[Entry]:
    """The host's programs and every library they link (ldd), at their own paths, plus the links to them
    (/lib64 -> usr/lib64 and the like are followed: the files go where the loader looks)."""
    wanted: dict[str, str] = {}
    for program in programs:
        found = shutil.which(program)
        assert found, f"the host has no {program}"
        wanted[f"bin/{program}"] = os.path.realpath(found)
        out = subprocess.run(["ldd", found], capture_output=True, text=True).stdout
        for library in re.findall(r"(/\S+) \(0x", out):
            wanted[library.lstrip("/")] = os.path.realpath(library)
    entries: list[Entry] = []
    directories: set[str] = set()
    for inside, real in sorted(wanted.items()):
        parts = inside.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            directory = "/".join(parts[:depth])
            if directory not in directories:
                directories.add(directory)
                entries.append(Entry(directory, directory=True, mode=0o755))
        entries.append(Entry(inside, Path(real).read_bytes(), mode=0o755))
    return entries


def shell_image_layers() -> list[bytes]:
    """Two layers: the host's dash (as /bin/sh), cat, ls and id with their libraries, an /etc of the image's
    own (root and `app`, uid 1000) with a file the second layer deletes (a whiteout); then /app."""
    base = host_program_entries("dash", "cat", "ls", "id")
    base += [Entry("bin/sh", link="dash"),
             Entry("etc", directory=True, mode=0o755),
             Entry("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/app:/bin/sh\n"),
             Entry("etc/group", b"root:x:0:\napp:x:1000:\n"),
             Entry("etc/removed.txt", b"deleted by the upper layer\n"),
             Entry("tmp", directory=True, mode=0o1777)]
    app = [Entry("app", directory=True, mode=0o755), Entry("app/hello.txt", b"hello from the image\n"),
           Entry("app/shell", link="/bin/sh"),  # absolute: followed inside the container's root
           Entry("etc/.wh.removed.txt")]
    return [layer_tar(base), layer_tar(app)]
